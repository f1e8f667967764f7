#!/usr/bin/env bash
# Runs one benchmark program once at a tiny size and checks that its table has every expected row,
# so the documented benchmark commands keep working (their full runs are separate commands).
#   bench_smoke.sh codecs|prepend|zarrpp|remote|dask|cli|python|network BUILD_DIR
set -euo pipefail
which=$1
build=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/zarrpp-bench-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT
out=$work/out.txt
missing=0
# Runs a benchmark program into $out; on failure shows everything it printed.
run() {
  local rc=0
  "$@" >"$out" 2>"$work/stderr.txt" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "bench_smoke $which: '$*' failed (exit $rc)" >&2
    cat "$out" "$work/stderr.txt" >&2
    exit 1
  fi
}
expect_row() {  # a table row starting with the given cells
  if ! grep -qF -- "$1" "$out"; then
    echo "bench_smoke $which: missing row '$1'" >&2
    missing=$((missing + 1))
  fi
}
case "$which" in
  codecs)
    run "$build/zarrpp-bench-codecs" 4096
    for data in smooth noisy; do
      for codec in "gzip 1" "zstd 1" "blosc lz4 shuffle" "crc32c"; do
        for op in encode decode; do expect_row "| $codec | $data | $op |"; done
      done
    done
    ;;
  prepend)
    run "$build/zarrpp-bench-prepend" --sizes 2,3 --prepends 1,10 "$work/arrays"
    expect_row "| chunks | data | rename every chunk file |"
    expect_row "| 8 | "
    expect_row "| 27 | "
    ;;
  zarrpp)
    # Every layout, codec, checksum setting and workload at 4 MiB, one thread, zarrita.js included.
    run "$build/zarrpp-bench" --shape 128,128,128 --threads 1 --data smooth --repeats 1 --peer-repeats 1 \
      --dir "$work" --peer-script "$root/tests/interop/bench_with_zarrita.mjs"
    for layout in "256³ chunks" "64³ chunks" "256³ shards of 64³"; do
      for codec in "none" "zstd 1" "blosc lz4 shuffle 5" "gzip 1"; do
        for crc in off on; do
          for w in write whole chunks boxes; do expect_row "| $layout | $codec | $crc | smooth | 1 | $w |"; done
        done
      done
    done
    expect_row "## Compression ratio"
    expect_row "## Targets"
    # zarrita.js ran: the whole-read rows carry its speed, not a dash.
    if ! grep -E '^\| 64³ chunks \| none \| off \| smooth \| 1 \| whole \|' "$out" | awk -F'|' '{exit !($12 ~ /[0-9]/)}'; then
      echo "bench_smoke zarrpp: zarrita.js did not run (no speed in the whole-read row)" >&2
      missing=$((missing + 1))
    fi
    ;;
  remote)
    run bash "$root/scripts/bench_remote.sh" --shape 256,128 "$work/file"
    for n in 1 2 8 16; do
      expect_row "| file | $n |"
      expect_row "| S3 (local moto server) | $n |"
    done
    ;;
  dask)
    # The cluster benchmark at 16 MiB, one round, against the build tree's package.
    PYTHONPATH="$build/python" run /usr/bin/python3 "$root/bench/bench_dask.py" --mib 16 --rounds 1
    expect_row "| sum | "
    expect_row "| store | "
    ;;
  cli)
    # set --from / get --out against cp at 8 MiB, one round (get's output is checked by the script).
    run /usr/bin/python3 "$root/bench/bench_cli.py" --zarrpp "$build/zarrpp" --mib 8 --rounds 1 --dir "$work"
    for c in "| cp data.npy |" "| zarrpp set |" "| zarrpp get |" "| get floor (scatter) |" "| get floor (preadv) |"; do
      expect_row "$c"
    done
    ;;
  python)
    # z[:] and z[:] = a against NumPy, zarr-python 2.13, zarrita.js and the C++ API at 8 MiB.
    PYTHONPATH="$build/python" run /usr/bin/python3 "$root/bench/bench_python.py" --mib 8 --rounds 1 --dir "$work" \
      --bench-fresh "$build/zarrpp-bench-fresh"
    for codec in none zstd-1; do
      for r in "| zarrpp z[:] (v3) | $codec |" "| zarrpp z[:] of zarr-python's v2 array | $codec |" "| zarr-python z[:] (v2) | $codec |" \
        "| zarrita.js get (v3) | $codec |" "| C++ Array::read() (same array) | $codec |" "| zarrpp z[:] = a | $codec |" \
        "| C++ Array::write | $codec |" "| zarr-python z[:] = a | $codec |"; do
        expect_row "$r"
      done
    done
    ;;
  network)
    # Reads over a 2 ms link (nginx, the latency proxy), whole writes to moto, and reads and writes on
    # Azurite, one round each.
    PYTHONPATH="$build/python" run /usr/bin/python3 "$root/bench/bench_network.py" --zarrpp "$build/zarrpp" \
      --proxy "$build/zarrpp-latency-proxy" --rtt 2 --rounds 1
    for kind in "v2" "v3" "v3 sharded"; do
      for op in whole part; do
        for r in cli 'c\+\+' python; do
          grep -qE "^ +2 $kind +$op +$r " "$out" || { echo "bench_smoke network: missing row $kind $op $r" >&2; missing=$((missing + 1)); }
        done
      done
      if [ "$kind" != v2 ]; then
        for r in cli python; do
          grep -qE "^ +2 $kind +write +$r " "$out" || { echo "bench_smoke network: missing row $kind write $r" >&2; missing=$((missing + 1)); }
        done
      fi
    done
    grep -qE "^ +2 v2 +whole +fsspec " "$out" || { echo "bench_smoke network: missing the fsspec row" >&2; missing=$((missing + 1)); }
    for kind in "az v3" "az v3 sharded"; do  # Azurite (tests/interop's npm packages)
      for op in whole part write; do
        for r in cli python; do
          grep -qE "^ +2 $kind +$op +$r " "$out" || { echo "bench_smoke network: missing row $kind $op $r" >&2; missing=$((missing + 1)); }
        done
      done
    done
    ;;
  *)
    echo "usage: bench_smoke.sh codecs|prepend|zarrpp|remote|dask|cli|python BUILD_DIR" >&2
    exit 2
    ;;
esac
if [ "$missing" -ne 0 ]; then
  echo "--- output of $which:" >&2
  cat "$out" "$work/stderr.txt" >&2
  exit 1
fi
echo "bench_smoke $which: every expected row present"
grep -m 8 '^|' "$out" || true  # (not '| head': a closed pipe would fail the script under pipefail)
