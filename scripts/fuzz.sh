#!/usr/bin/env bash
# Builds the libFuzzer targets (in the `asan` preset's tree: clang-19, ASan + UBSan; only the
# targets and the library, the tests of that tree are built by `cmake --build --preset asan`) and
# runs each for SECONDS (default 60) on its committed seed corpus (fuzz/corpus/<target>; new
# inputs go to build/asan/fuzz-work/corpus/<target>, the committed corpus is never changed).
# Prints one line per target with its executions; exits non-zero, with the end of the target's
# log, on any finding.
#   bash scripts/fuzz.sh 600    # the long run recorded in docs/reliability.md
#   bash scripts/fuzz.sh 5      # what the test command runs, to keep the targets building and running
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
bash scripts/setup.sh --fuzz
cmake --preset asan >/dev/null
targets=$(for seeds in fuzz/corpus/*/; do basename "$seeds"; done)
# shellcheck disable=SC2086 # one word per target
cmake --build --preset asan -j "$(nproc)" --target $targets
out=build/asan/fuzz-work
mkdir -p "$out/findings" "$out/logs"
status=0
for seeds in fuzz/corpus/*/; do
  t=$(basename "$seeds")
  bin=build/asan/fuzz/$t
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: fuzz/corpus/$t has no target $bin (add it to fuzz/CMakeLists.txt)" >&2
    exit 1
  fi
  work=$out/corpus/$t
  log=$out/logs/$t.log
  mkdir -p "$work"
  if "$bin" "$work" "$seeds" -max_total_time="$secs" -print_final_stats=1 \
      -artifact_prefix="$out/findings/$t-" -max_len=4096 -rss_limit_mb=2048 >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
    echo "$t: ${execs:-?} executions in $secs s, ${cov:-cov: ?}, peak RSS ${rss:-?} MB, no findings"
  else
    status=1
    echo "$t: FAILED (log: $log, inputs: $out/findings/$t-*)" >&2
    tail -40 "$log" >&2
  fi
done
exit $status
