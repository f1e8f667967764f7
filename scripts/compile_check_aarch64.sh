#!/usr/bin/env bash
# Compiles every library source for aarch64 (Debian's g++-aarch64-linux-gnu) as far as a syntax
# check goes (-fsyntax-only: parsing, name lookup, templates instantiated, no code generated),
# which proves the code builds where there is no SSE2 (the portable paths: an x86 intrinsic is an
# undeclared name there). Headers of the libraries come from this machine's -dev packages; the
# few that live in the multiarch folder (curl, OpenSSL's configuration) are found after the cross
# compiler's own, both targets being LP64.
# Usage: bash scripts/compile_check_aarch64.sh [BUILD_DIR]   (BUILD_DIR holds the generated
# zarrpp/version.hpp; default build/release, configured if missing). -Wno-maybe-uninitialized:
# GCC 12 false positives on std::optional<std::string> (as in the sanitizer build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
cxx=aarch64-linux-gnu-g++
if ! command -v "$cxx" >/dev/null; then
  echo "compile_check_aarch64.sh: $cxx not found (bash scripts/setup.sh --cross installs it)" >&2
  exit 1
fi
[ -f "$build/include/zarrpp/version.hpp" ] || cmake --preset release >/dev/null
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Werror -Wno-restrict
       -Wno-stringop-overflow -Wno-maybe-uninitialized -Wno-psabi -Iinclude -I"$build/include" -isystem /usr/include/isa-l
       -idirafter /usr/include/x86_64-linux-gnu)
files=$(find src -name '*.cpp' | sort)
n=$(echo "$files" | wc -l)
start=$SECONDS
echo "$files" | xargs -P "$(nproc)" -I{} sh -c "$cxx ${flags[*]} {} || { echo 'aarch64: {} does not compile' >&2; exit 255; }"
echo "compile_check_aarch64: $n library sources compile for aarch64 ($($cxx -dumpversion)) in $((SECONDS - start)) s"
