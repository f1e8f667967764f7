#!/usr/bin/env bash
# Builds zarrpp-bench (release preset) and runs it: zarrpp writing and reading a 1 GiB uint16 array
# on the local file store against memcpy / POSIX I/O / raw codec limits and zarrita.js.
# Arguments go to zarrpp-bench, e.g.
#   bash scripts/bench.sh --scale 0.125 --layouts 64,shard --codecs none,zstd
#   bash scripts/bench.sh --no-peer --json bench.json
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target zarrpp-bench
if [[ ! " $* " =~ " --no-peer " && ! -d tests/interop/node_modules ]]; then
  npm ci --prefix tests/interop
fi
exec ./build/release/zarrpp-bench "$@"
