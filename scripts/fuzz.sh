#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 60) with its committed seed corpus, and
# prints executions and coverage. Not part of the test suite. Usage: bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
bash scripts/setup.sh
if ! command -v clang++-19 >/dev/null || ! dpkg -s libclang-rt-19-dev >/dev/null 2>&1; then
  env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-19 libfuzzer-19-dev libclang-rt-19-dev
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
mkdir -p build/fuzz/findings
for t in fuzz_metadata fuzz_chunk_key fuzz_codecs fuzz_selection; do
  work=build/fuzz/corpus/$t
  mkdir -p "$work"
  echo "== $t ($secs s)"
  ./build/fuzz/fuzz/$t "$work" "fuzz/corpus/$t" -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix=build/fuzz/findings/$t- -max_len=4096 -rss_limit_mb=2048 2>&1 |
    grep -E "stat::number_of_executed_units|stat::peak_rss|cov:|ERROR|SUMMARY" | tail -4
done
