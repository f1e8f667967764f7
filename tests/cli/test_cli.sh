#!/usr/bin/env bash
# End-to-end tests of the zarrpp command-line tool: every subcommand, bad input, and .npy files
# exchanged with NumPy (/usr/bin/python3).
set -uo pipefail
Z=$1
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# expect_ok CMD...: succeeds with empty stderr
expect_ok() {
  if out=$("$@" 2>"$T/err"); then
    [ -s "$T/err" ] && { bad "$* wrote to stderr: $(cat "$T/err")"; return; }
    ok
  else
    bad "$* failed: $(cat "$T/err")"
  fi
}
# expect_err PATTERN CMD...: fails with exactly one 'zarrpp: error:' line matching PATTERN
expect_err() {
  local pat=$1
  shift
  if "$@" >"$T/out" 2>"$T/err"; then
    bad "$* succeeded but should have failed"
    return
  fi
  if head -1 "$T/err" | grep -q "^zarrpp: error: .*$pat"; then ok; else bad "$*: stderr was: $(cat "$T/err")"; fi
}
expect_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: expected [$2], got [$1]"; fi; }

A=$T/a.zarr
expect_ok "$Z" create "$A" --shape 6,4 --chunks 4,4 --dtype int32
expect_eq "$(ls "$A")" "zarr.json" "create writes only zarr.json"
expect_ok "$Z" set "$A" --value 1
expect_eq "$("$Z" ls "$A")" $'c/0/0\nc/1/0' "ls after fill"
$PY -c "import numpy as np; np.save('$T/block.npy', np.full((3, 4), 2, dtype='int32'))"
expect_ok "$Z" prepend "$A" --axis 0 --from "$T/block.npy"
expect_eq "$("$Z" ls "$A")" $'c/-1/0\nc/0/0\nc/1/0' "ls after prepend"
info=$("$Z" info "$A" --json)
expect_eq "$(echo "$info" | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["shape"], j["domain"], j["data_type"], j["chunk_grid"]["name"], j["chunks"], j["chunks_total"], j["chunks_stored"], j["fill_value"], j["bytes_stored"] > 0)')" \
  "[9, 4] [[-3, 6], [0, 4]] int32 regular_bounded [4, 4] 3 3 0 True" "info --json"
expect_ok "$Z" info "$A"
expect_eq "$("$Z" get "file://$A" "-1")" "[1 1 1 1]" "a file:// URL works like the directory"
expect_eq "$("$Z" get "$A" "0:4, 0")" "[2 2 2 1]" "get a column"
expect_eq "$("$Z" get "$A" "-1")" "[1 1 1 1]" "get the last row"
expect_eq "$("$Z" get "$A" "[0,3,8], ::3")" $'[[2 2]\n [1 1]\n [1 1]]' "get orthogonal"
expect_eq "$("$Z" get "$A" "..., 1")" "[2 2 2 1 1 1 1 1 1]" "get with ellipsis"
expect_ok "$Z" get "$A" --out "$T/all.npy"
expect_eq "$($PY -c "import numpy as np; a=np.load('$T/all.npy'); print(a.dtype, a.shape, a[:3].tolist() == [[2]*4]*3, (a[3:] == 1).all())")" \
  "int32 (9, 4) True True" "NumPy loads what the CLI wrote"
expect_ok "$Z" append "$A" --axis 0 --from "$T/block.npy"
expect_ok "$Z" resize "$A" --domain -5:7,0:4
expect_eq "$("$Z" get "$A" ":, 0")" "[0 0 2 2 2 1 1 1 1 1 1 2]" "resize to a domain (no stale data)"
expect_ok "$Z" resize "$A" --shape 3,4
expect_eq "$("$Z" get "$A" ":, 0")" "[0 0 2]" "resize --shape keeps the lower bound"
expect_ok "$Z" set "$A" "0:2, 1:3" --value 7
expect_eq "$("$Z" get "$A" "0")" "[0 7 7 0]" "set a box"

# NumPy-written .npy: big-endian, Fortran order, version 2, every core dtype
$PY - "$T" <<'PY'
import sys, numpy as np
t = sys.argv[1]
a = np.arange(12, dtype='>i2').reshape(3, 4)
np.save(f'{t}/be.npy', a)
np.save(f'{t}/fort.npy', np.asfortranarray(np.arange(12, dtype='<f8').reshape(3, 4)))
from numpy.lib import format as fmt
with open(f'{t}/v2.npy', 'wb') as f:
    fmt.write_array(f, np.arange(12, dtype='<u4').reshape(3, 4), version=(2, 0))
with open(f'{t}/v3.npy', 'wb') as f:
    fmt.write_array(f, np.arange(12, dtype='<i8').reshape(3, 4), version=(3, 0))
np.save(f'{t}/wrongtype.npy', np.zeros((3, 4), dtype='float32'))
np.save(f'{t}/wrongshape.npy', np.zeros((3, 5), dtype='int16'))
PY
B=$T/b.zarr
expect_ok "$Z" create "$B" --shape 3,4 --chunks 2,2 --dtype int16 --compressor zstd:3 --crc32c
expect_ok "$Z" set "$B" --from "$T/be.npy"
expect_eq "$("$Z" get "$B" "2")" "[ 8  9 10 11]" "big-endian .npy in"
expect_err "data type" "$Z" set "$B" --from "$T/wrongtype.npy"
expect_err "broadcast" "$Z" set "$B" --from "$T/wrongshape.npy"
expect_err "dimension 1" "$Z" prepend "$B" --axis 0 --from "$T/wrongshape.npy"
for spec in "fort.npy float64" "v2.npy uint32" "v3.npy int64"; do
  set -- $spec
  C=$T/c-$2.zarr
  expect_ok "$Z" create "$C" --shape 3,4 --chunks 2,3 --dtype "$2" --compressor blosc:lz4:5:shuffle
  expect_ok "$Z" set "$C" --from "$T/$1"
  expect_ok "$Z" get "$C" --out "$T/out-$2.npy"
  expect_eq "$($PY -c "import numpy as np; print(np.array_equal(np.load('$T/out-$2.npy'), np.load('$T/$1')))")" "True" "$1 round trip"
done
for dt in bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 float32 float64 complex64 complex128; do
  D=$T/d-$dt.zarr
  expect_ok "$Z" create "$D" --shape 5 --chunks 2 --dtype "$dt" --compressor gzip:1
  $PY -c "import numpy as np; np.save('$T/v-$dt.npy', (np.arange(5) % 2).astype('$dt'))"
  expect_ok "$Z" set "$D" --from "$T/v-$dt.npy"
  expect_ok "$Z" get "$D" --out "$T/w-$dt.npy"
  expect_eq "$($PY -c "import numpy as np; a=np.load('$T/w-$dt.npy'); b=np.load('$T/v-$dt.npy'); print(a.dtype == b.dtype and np.array_equal(a, b))")" "True" "$dt via .npy"
done
expect_eq "$("$Z" get "$T/d-float32.zarr")" "[0. 1. 0. 1. 0.]" "float printing"
expect_eq "$("$Z" get "$T/d-bool.zarr")" "[False  True False  True False]" "bool printing"

# create options
E=$T/e.zarr
expect_ok "$Z" create "$E" --shape 10,10 --chunks 2,2 --shards 4,4 --dtype uint16 --fill-value 7 --lower-bound -3,0 \
  --dimension-names t,x --separator . --attrs '{"units": "m"}' --compressor blosc
expect_eq "$("$Z" info "$E" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["domain"], j["fill_value"], j["chunks"], j["shards"], j["dimension_names"], j["attributes"], j["codecs"][0]["name"])')" \
  "[[-3, 7], [0, 10]] 7 [2, 2] [4, 4] ['t', 'x'] {'units': 'm'} sharding_indexed" "create with every option"
expect_ok "$Z" set "$E" --value 3
expect_eq "$("$Z" ls "$E" | head -1)" "c.0.0" "dot separator; origin defaults to the lower bound"

# copy: re-chunk and re-encode, keeping the domain and the values
expect_ok "$Z" copy "$E" "$T/f.zarr" --chunks 5,5 --compressor zstd:1 --crc32c
expect_eq "$("$Z" info "$T/f.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["domain"], j["chunks"], [c["name"] for c in j["codecs"]])')" \
  "[[-3, 7], [0, 10]] [5, 5] ['bytes', 'zstd', 'crc32c']" "copy re-encodes"
expect_eq "$("$Z" get "$T/f.zarr" "0")" "$("$Z" get "$E" "0")" "copy keeps the values"
expect_ok "$Z" copy "$B" "$T/g.zarr"
expect_eq "$("$Z" get "$T/g.zarr")" "$("$Z" get "$B")" "plain copy"
expect_err "already holds" "$Z" copy "$B" "$T/g.zarr"
expect_ok "$Z" copy "$B" "$T/g.zarr" --overwrite --chunks 1,1
expect_eq "$("$Z" get "$T/g.zarr")" "$("$Z" get "$B")" "copy with --overwrite and new chunks (keeps zstd+crc32c)"
expect_eq "$("$Z" info "$T/g.zarr" --json | $PY -c 'import json,sys; print([c["name"] for c in json.load(sys.stdin)["codecs"]])')" \
  "['bytes', 'zstd', 'crc32c']" "re-chunking copy keeps the compressor"

# tree
mkdir -p "$T/h"
$PY - "$T/h" <<'PY'
import json, os, sys
root = sys.argv[1]
def w(p, d):
    os.makedirs(os.path.join(root, p), exist_ok=True)
    json.dump(d, open(os.path.join(root, p, "zarr.json"), "w"))
w("", {"zarr_format": 3, "node_type": "group", "attributes": {}})
w("grp", {"zarr_format": 3, "node_type": "group", "attributes": {}})
PY
expect_ok "$Z" create "$T/h/grp/arr" --shape 3 --chunks 3 --dtype uint8
expect_ok "$Z" create "$T/h/top" --shape 2,2 --chunks 1,1 --dtype float64 --compressor gzip:1
expect_eq "$("$Z" tree "$T/h")" $'/\n├── grp\n│   └── arr (3,) uint8 bytes\n└── top (2, 2) float64 bytes -> gzip{"level":1}' "tree"

# bad input: one clear line on stderr, non-zero exit
expect_err "no such directory" "$Z" info "$T/missing"
expect_err "is a group, not an array" "$Z" info "$T/h"
expect_err "unknown or unsupported data type" "$Z" create "$T/x.zarr" --shape 2 --chunks 2 --dtype int128
expect_err "--shape" "$Z" create "$T/x.zarr" --shape 2,a --chunks 2 --dtype int8
expect_err "unknown codec 'lzma'" "$Z" create "$T/x.zarr" --shape 2 --chunks 2 --dtype int8 --compressor lzma
expect_err "already holds" "$Z" create "$A" --shape 2 --chunks 2 --dtype int8
expect_err "out of bounds" "$Z" get "$A" "5"
expect_err "step cannot be zero" "$Z" get "$A" "::0"
expect_err "cannot parse selection" "$Z" get "$A" "1:2:3:4"
expect_err "fill_value" "$Z" set "$A" --value 1.5
expect_err "axis 5" "$Z" prepend "$A" --axis 5 --from "$T/block.npy"
expect_err "not a .npy file" "$Z" prepend "$A" --axis 0 --from "$T/h/top/zarr.json"
expect_err "LO:HI" "$Z" resize "$A" --domain 3
expect_err "" "$Z" resize "$A" --shape 1 --domain 0:1
expect_err "" "$Z" frobnicate
echo '{"zarr_format": 2}' >"$T/broken.json"
mkdir -p "$T/broken.zarr" && cp "$T/broken.json" "$T/broken.zarr/zarr.json"
expect_err "zarr_format" "$Z" info "$T/broken.zarr"
"$Z" --help >/dev/null && ok || bad "--help"
for sub in create info tree ls get set prepend append resize copy demo; do
  "$Z" "$sub" --help | grep -q "Usage" && ok || bad "$sub --help"
done
expect_ok "$Z" demo "$T/demo.zarr"
expect_eq "$(echo "$out" | grep -c " unchanged$")" "2" "demo shows both old chunks unchanged"
expect_err "not a Zarr node" "$Z" demo "$T/h/../block.npy"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
