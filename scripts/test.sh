#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: set up, build (release), run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
ctest --preset release -j "$(nproc)"
