#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: set up, build and run ctest twice — the
# release build, then the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
# (set ZARRPP_SKIP_ASAN=1 to skip the second run locally). Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"
if [ "${ZARRPP_SKIP_ASAN:-0}" != "1" ]; then
  echo "== The same tests under ASan + UBSan"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -j "$jobs" -E '^install\.'
fi
