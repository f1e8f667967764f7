#!/usr/bin/env bash
# The simulated object store, run for longer than CI's slice (docs/reliability.md, section 11):
#   bash scripts/simulate.sh [--minutes M] [--seed S] [--seconds T] [--actors A] [--rate R]
#                            [--time-scale K] [--variant full|no-conditional-delete|no-conditional]
#                            [--service s3|azure|both] [--zip]
# With --minutes: seeds S, S+1, ... (T seconds each, default 60) until M minutes have passed, odd
# seeds against S3's dialect, even ones Azure's (unless --service says otherwise).
# With --seed alone: that one seed (to replay a failing run). Builds build/release's zarrpp-sim
# first if it is missing or older than the sources. The last line is
# "N faults injected, M violations"; the exit status is 1 when a violation was found.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="" seed="" seconds=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --actors|--rate|--time-scale|--variant|--service) args+=("$1" "$2"); shift 2 ;;
    --quiet|--zip) args+=("$1"); shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "simulate.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ ! -d build/release ]]; then cmake --preset release >/dev/null; fi
cmake --build --preset release --target zarrpp-sim -j "$(nproc)" >/dev/null
sim=build/release/zarrpp-sim
if [[ -n "$minutes" ]]; then
  exec "$sim" --seed "${seed:-1}" --minutes "$minutes" --seconds "${seconds:-60}" --service both --quiet "${args[@]}"
fi
exec "$sim" --seed "${seed:-1}" --seeds 1 --seconds "${seconds:-60}" "${args[@]}"
