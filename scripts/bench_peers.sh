#!/usr/bin/env bash
# zarrpp against the C++ peers z5 and libzarr (docs/benchmarks.md). Not part of CI: it needs their
# sources, which are never fetched by the build nor committed. Clone them by hand into a scratch
# folder outside this repository, at the commits the published table used:
#
#   mkdir -p ~/zarrpp-peers && cd ~/zarrpp-peers
#   git clone https://github.com/constantinpape/z5 && git -C z5 checkout d2f67b9
#   git clone https://github.com/kharchenkolab/libzarr && git -C libzarr checkout 18e538c
#
# then:  bash scripts/bench_peers.sh [PEERS_DIR (default ~/zarrpp-peers)] [--mib 512] [--rounds 5] [--runs 3] [--dir DIR]
#        (three runs by default: each prints its table, then a summary of medians with minimum and
#        maximum that flags rows too wide to trust; --only, --codecs, --threads, --verbose: see the program)
# (both are header-only: z5 with its zstd compressor, libzarr with LIBZARR_HAS_ZSTD; nothing else
# beyond scripts/setup.sh's packages is needed).
set -euo pipefail
cd "$(dirname "$0")/.."
peers=${HOME}/zarrpp-peers
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then peers=$1; shift; fi
peers=$(cd "$peers" 2>/dev/null && pwd) || { echo "bench_peers.sh: no folder '$peers' (see the comment at the top of this script)" >&2; exit 2; }
for p in z5 libzarr; do
  [ -d "$peers/$p/include" ] || { echo "bench_peers.sh: '$peers/$p' is not a $p source checkout" >&2; exit 2; }
  echo "$p: $(git -C "$peers/$p" log -1 --format='%h %cs %s' 2>/dev/null || echo 'not a git checkout')"
done
cmake --preset release -B build/peers -DZARRPP_BUILD_TESTS=OFF -DZARRPP_PEERS_DIR="$peers" >/dev/null
cmake --build build/peers --target zarrpp-bench-peers >/dev/null
./build/peers/zarrpp-bench-peers "$@"
