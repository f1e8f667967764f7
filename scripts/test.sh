#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine, in stages (each prints its time; the budget
# per stage is in docs/ci.md):
#   setup      Debian packages and npm (scripts/setup.sh --fuzz --cross: clang-19 for the asan tree)
#   fuzz       the libFuzzer targets build in the asan preset's tree (clang-19, ASan + UBSan; the
#              library once for both), and each target runs 5 s on its committed corpus
#   release    build, then the README's main command (scripts/demo.sh) and python/README.md's install
#              command (pip into a fresh venv, building from scratch) run as documented
#   aarch64    every library source compiles for aarch64 (no SSE2: the portable paths)
#   tests      ctest on the release build: unit, property, interop, CLI, Python, benchmark smoke runs
#   asan       the same tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang-19, the
#              tree the fuzz stage began), built with the portable copy path forced
#              (ZARRPP_PORTABLE), property tests at 30 cases, without the CLI scripts or the style
#              checks; ends the run with ctest's summary
# Locally: ZARRPP_SKIP_ASAN=1 and ZARRPP_SKIP_FUZZ=1 leave those stages out.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
run_start=$SECONDS
stage_start=$SECONDS
stage() {  # stage NAME: ends the previous stage (printing its time) and starts the next
  local now=$SECONDS
  [ -n "${stage_name:-}" ] && echo "== stage $stage_name: $((now - stage_start)) s (total $((now - run_start)) s)"
  stage_name=$1
  stage_start=$now
  echo "== stage $stage_name"
}

stage setup
if [ "${ZARRPP_SKIP_FUZZ:-0}" != "1" ] || [ "${ZARRPP_SKIP_ASAN:-0}" != "1" ]; then
  bash scripts/setup.sh --fuzz --cross  # clang-19: the fuzz targets and the sanitizer build
else
  bash scripts/setup.sh --cross
fi

if [ "${ZARRPP_SKIP_FUZZ:-0}" != "1" ]; then
  stage fuzz
  bash scripts/fuzz.sh 5
fi

stage release
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
bash tests/smoke/demo_smoke.sh
bash tests/smoke/pip_install_smoke.sh  # python/README.md's install command, from scratch

stage aarch64
bash scripts/compile_check_aarch64.sh build/release

stage tests
ctest --preset release -j "$jobs"

if [ "${ZARRPP_SKIP_ASAN:-0}" != "1" ]; then
  stage asan
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  echo "== the same tests under ASan + UBSan (build done after $((SECONDS - run_start)) s)"
  # Property tests run 30 random cases each here (100 in the release stage), and the CLI's
  # end-to-end script (many short processes over code the unit tests cover) only in the release
  # stage: the sanitizer stage is the slowest, and the 40-minute budget is shared (docs/ci.md).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 RC_PARAMS="max_success=30" \
    ctest --preset asan -j "$jobs" -E '^install\.|^cli\.end_to_end$|^cli\.safety_privileged$|^style\.'
fi
