#!/usr/bin/env bash
# Installs every Debian package zarrpp's build, tests and tools need. Idempotent: installs only
# what is missing, and runs apt-get update only then.
#   bash scripts/setup.sh          the build, the tests and the tools
#   bash scripts/setup.sh --fuzz   the same, plus clang-19 and libFuzzer (the asan preset: the
#                                  sanitizer build and the fuzz targets)
#   bash scripts/setup.sh --cross  the same, plus g++ for aarch64 (scripts/compile_check_aarch64.sh)
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libzstd-dev libblosc-dev libdeflate-dev libisal-dev liblz4-dev liblzma-dev libbz2-dev libzip-dev
  libcurl4-openssl-dev nginx-light libpng-dev librsvg2-bin
  libcli11-dev libgtest-dev librapidcheck-dev libssl-dev libexpat1-dev
  python3-numpy python3-numcodecs python3-zarr python3-xarray python3-dask python3-distributed pybind11-dev python3-dev python3-pytest python3-aiohttp python3-fsspec
  python3-hypothesis python3-tqdm
  python3-venv python3-pip python3-setuptools python3-wheel
  clang-format-19 clang-tidy-19 flake8 mypy
  doxygen python3-sphinx python3-myst-parser python3-breathe python3-markdown-it python3-mdit-py-plugins
)
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang-19 libfuzzer-19-dev libclang-rt-19-dev) ;;
    --cross) packages+=(g++-aarch64-linux-gnu) ;;
    *) echo "setup: unknown option '$arg' (use --fuzz, --cross)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  # Packages such as nginx-light try to start a system service when installed; the tests start
  # their own servers, so forbid service starts for the install (policy-rc.d, exit 101).
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    made_policy=1
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  [ "$made_policy" = 1 ] && $SUDO rm -f "$policy"
fi

# Interop tests (tests/test_interop.cpp) run zarrita.js, and the Azure tests Azurite (the Azure
# Storage emulator), both pinned in tests/interop/package-lock.json, with the machine's Node.js
# (>= 20) and npm. npm ci again only when the lock file is newer.
interop="$(cd "$(dirname "$0")/.." && pwd)/tests/interop"
if ! command -v npm >/dev/null; then
  echo "setup: npm not found; the interop tests need Node.js >= 20 and npm" >&2
elif [ ! -f "$interop/node_modules/.package-lock.json" ] || [ "$interop/package-lock.json" -nt "$interop/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in tests/interop"
  (cd "$interop" && npm ci --no-audit --no-fund --loglevel=error)
fi
