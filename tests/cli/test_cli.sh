#!/usr/bin/env bash
# End-to-end tests of the zarrpp command-line tool: every subcommand, bad input, and .npy files
# exchanged with NumPy (/usr/bin/python3).
set -uo pipefail
Z=$1
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=tests/cli/expect.sh
. "$(dirname "$0")/expect.sh"

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
# --coords: the selection is in the domain's coordinates (here [-5, -2) x [0, 4)), not zero-based
expect_eq "$("$Z" get "$A" --coords "-5")" "[0 7 7 0]" "get --coords: a negative number is a coordinate"
expect_eq "$("$Z" get "$A" --coords "-4:-2, 0")" "[0 2]" "get --coords: a slice of coordinates"
expect_err "coordinate 0 is outside the domain .-5, -2) of dimension 0" "$Z" get "$A" --coords "0"
expect_err "slice bound -6 is outside the domain .-5, -2) of dimension 0" "$Z" get "$A" --coords "-6:-2"
expect_ok "$Z" set "$A" --coords "-3, 3" --value 8
expect_eq "$("$Z" get "$A" "2")" "[2 2 2 8]" "set --coords writes the coordinate's element"
expect_ok "$Z" get "$A" --coords "-5:-3" --out "$T/coords.npy"
expect_eq "$($PY -c "import numpy as np; print(np.load('$T/coords.npy')[:, 0].tolist())")" "[0, 0]" "get --coords --out"
expect_ok "$Z" set "$A" --coords "-5:-3" --from "$T/coords.npy"
expect_err "coordinate 9 is outside" "$Z" set "$A" --coords "9" --value 1

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
expect_eq "$("$Z" info "$E" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["chunks_total"], j["shards_total"], j["shards_stored"], "chunks_stored" in j)')" \
  "25 9 9 False" "info counts inner chunks as chunks and stored objects as shards (zarr-python 3's names)"
expect_eq "$("$Z" info "$E" | grep '^Shards stored')" "Shards stored : 9 / 9 (of 25 chunks)" "info's text names shards"

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
# codec defaults are the core registry's (zarr-python 3's), the same in every front end
expect_eq "$("$Z" info "$E" --json | $PY -c 'import json,sys; c=json.load(sys.stdin)["codecs"][0]["configuration"]["codecs"][1]["configuration"]; print(c["cname"], c["clevel"])')" \
  "zstd 5" "blosc's default compressor and level"
expect_ok "$Z" create "$T/auto.zarr" --shape 4 --chunks 2 --dtype int8 --compressor auto
expect_eq "$("$Z" info "$T/auto.zarr" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["codecs"][1])')" \
  "{'name': 'zstd', 'configuration': {'level': 0, 'checksum': False}}" "--compressor auto: zstd with its defaults"
expect_ok "$Z" copy "$E" "$T/f2.zarr" --compressor gzip
expect_eq "$("$Z" info "$T/f2.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin)["codecs"][0]["configuration"]; print(j["chunk_shape"], [c["name"] for c in j["codecs"]])')" \
  "[2, 2] ['bytes', 'gzip']" "re-encoding copy keeps the shards and replaces the compressor"
expect_err "'bytes' is not a compressor" "$Z" create "$T/bad.zarr" --shape 4 --chunks 2 --dtype int8 --compressor bytes

# copy --grid regular: for readers that know only `regular`; index 0 is the domain's start
expect_eq "$("$Z" copy "$E" "$T/r.zarr" --grid regular)" \
  "note: index 0 of $T/r.zarr is coordinate (-3, 0) of $E (its domain's start); every index moved by that much" \
  "copy --grid regular says where index 0 is"
grid_of() { "$Z" info "$1" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["chunk_grid"]["name"], j["domain"])'; }
expect_eq "$(grid_of "$T/r.zarr")" "regular [[0, 10], [0, 10]]" "copy --grid regular writes a regular grid from 0"
expect_eq "$("$Z" get "$T/r.zarr")" "$("$Z" get "$E")" "a regular copy holds the same elements"
# convert --grid: in place, zarr.json only, where no chunk moves
before=$(cat "$E/zarr.json")
expect_err "its domain starts at (-3, 0) (lower_bound).*copy --grid regular" "$Z" convert "$E" --grid regular
expect_eq "$(cat "$E/zarr.json")" "$before" "a refused convert --grid changes nothing"
expect_err "convert --grid changes SRC in place; to write a copy with another grid use 'zarrpp copy" "$Z" convert "$E" "$T/x.zarr" --grid regular
[ -e "$T/x.zarr" ] && bad "a refused convert --grid made DST" || ok
expect_err "it takes no --overwrite or --zarr-format" "$Z" convert "$E" --grid regular --zarr-format 3
chunks_before=$("$Z" ls "$T/r.zarr" | md5sum)
expect_eq "$("$Z" convert "$T/r.zarr" --grid regular_bounded)" "$T/r.zarr: chunk grid is now regular_bounded (zarr.json only; no chunk was moved)" "convert --grid regular_bounded"
expect_eq "$("$Z" convert "$T/r.zarr" --grid regular)" "$T/r.zarr: chunk grid is now regular (zarr.json only; no chunk was moved)" "convert --grid regular"
expect_eq "$("$Z" convert "$T/r.zarr" --grid regular)" "$T/r.zarr: already regular" "convert --grid regular twice"
expect_eq "$("$Z" ls "$T/r.zarr" | md5sum)" "$chunks_before" "convert --grid moves no chunk"
# growth in front undone: regular again
$PY -c "import numpy as np; np.save('$T/rows10.npy', np.full((3, 10), 9, dtype='uint16'))"
expect_ok "$Z" prepend "$T/r.zarr" --axis 0 --from "$T/rows10.npy"
expect_ok "$Z" resize "$T/r.zarr" --domain 0:10,0:10
expect_eq "$(grid_of "$T/r.zarr")" "regular [[0, 10], [0, 10]]" "a rolled-back prepend leaves a regular grid"
# reading a path that does not exist creates nothing
expect_err "no such directory" "$Z" info "$T/typo.zarr"
expect_err "no such directory" "$Z" get "$T/typo.zarr"
[ -e "$T/typo.zarr" ] && bad "info on a missing path made it" || ok

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
expect_eq "$("$Z" tree "$T/h")" "$T/h"$'\n├── grp\n│   └── arr (3,) uint8 bytes\n└── top (2, 2) float64 bytes -> gzip{"level":1}' "tree"

# bad input: one clear line on stderr, non-zero exit
expect_err "no such directory" "$Z" info "$T/missing"
expect_err "is a group, not an array" "$Z" info "$T/h"
expect_err "unknown data type 'int128'" "$Z" create "$T/x.zarr" --shape 2 --chunks 2 --dtype int128
expect_err "--shape" "$Z" create "$T/x.zarr" --shape 2,a --chunks 2 --dtype int8
expect_err "unknown codec 'lzma'" "$Z" create "$T/x.zarr" --shape 2 --chunks 2 --dtype int8 --compressor lzma
expect_err "already holds" "$Z" create "$A" --shape 2 --chunks 2 --dtype int8
expect_err "out of bounds" "$Z" get "$A" "5"
expect_err "step cannot be zero" "$Z" get "$A" "::0"
expect_err "cannot parse selection" "$Z" get "$A" "1:2:3:4"
expect_err "--value: 1.5 is not a valid int32 value (expected a JSON integer)" "$Z" set "$A" --value 1.5
expect_err "--value: 3.5 is not a valid int32" "$Z" set "$A" "0:1" --value 3.5
expect_err "axis 5" "$Z" prepend "$A" --axis 5 --from "$T/block.npy"
expect_err "not a .npy file" "$Z" prepend "$A" --axis 0 --from "$T/h/top/zarr.json"
expect_err "LO:HI" "$Z" resize "$A" --domain 3
expect_err "" "$Z" resize "$A" --shape 1 --domain 0:1
expect_err "" "$Z" frobnicate
echo '{"zarr_format": 2}' >"$T/broken.json"
mkdir -p "$T/broken.zarr" && cp "$T/broken.json" "$T/broken.zarr/zarr.json"
expect_err "zarr_format" "$Z" info "$T/broken.zarr"
"$Z" --help >/dev/null && ok || bad "--help"
for sub in create info show tree ls get set prepend append resize copy demo; do
  "$Z" "$sub" --help | grep -q "Usage" && ok || bad "$sub --help"
done
expect_ok "$Z" demo "$T/demo.zarr"
expect_eq "$(echo "$out" | grep -c " unchanged$")" "2" "demo shows both old chunks unchanged"
expect_err "not a directory" "$Z" demo "$T/h/../block.npy"

# ---- data safety: destructive operations are explicit and bounded ------------------------------------
S=$T/safety
mkdir -p "$S"
D=$S/d.zarr
expect_ok "$Z" create "$D" --shape 4,4 --chunks 2,2 --dtype int16
expect_ok "$Z" set "$D" --value 3
sum_d() { find "$1" -type f -print0 | sort -z | xargs -0 cat | md5sum; }
before=$(sum_d "$D")
expect_err "same node" "$Z" copy "$D" "$S/./d.zarr/" --chunks 1,1 --overwrite
expect_eq "$(sum_d "$D")" "$before" "copy onto itself changes nothing"
mkdir -p "$S/g" && expect_ok "$Z" create "$S/g/arr" --shape 2 --chunks 2 --dtype int8
expect_ok "$Z" set "$S/g/arr" --value 5
expect_err "overlap" "$Z" copy "$S/g/arr" "$S/g" --overwrite
expect_err "overlap" "$Z" copy "$S/g/arr" "$S/g/arr/inner"
expect_eq "$("$Z" get "$S/g/arr")" "[5 5]" "a refused copy leaves the source"
ln -s "$D" "$S/link.zarr"
expect_err "same node" "$Z" copy "$S/link.zarr" "$D" --overwrite
# overwrite deletes only the node's own keys
echo "my notes" >"$D/notes.txt" && mkdir -p "$D/c/keep" && echo x >"$D/c/keep/mine.txt"
expect_ok "$Z" create "$D" --shape 4,4 --chunks 4,4 --dtype int16 --overwrite
expect_eq "$(cat "$D/notes.txt" "$D/c/keep/mine.txt" | tr '\n' ' ')" "my notes x " "overwrite keeps files that are not the node's"
expect_eq "$("$Z" ls "$D")" "" "overwrite removed the old chunks"
expect_ok "$Z" set "$D" --value 2
expect_ok "$Z" copy "$D" "$S/copy.zarr" --chunks 2,2
expect_eq "$("$Z" ls "$S/copy.zarr" | wc -l)" "4" "copy writes every chunk"
# a copy from a corrupt source leaves the destination as it was
expect_ok "$Z" create "$S/crc.zarr" --shape 4,4 --chunks 2,2 --dtype int16 --crc32c
expect_ok "$Z" set "$S/crc.zarr" --value 9
printf 'garbage' | dd of="$S/crc.zarr/c/1/1" bs=1 seek=0 conv=notrunc 2>/dev/null
before=$(sum_d "$S/copy.zarr")
expect_err "c/1/1" "$Z" copy "$S/crc.zarr" "$S/copy.zarr" --overwrite
expect_eq "$(sum_d "$S/copy.zarr")" "$before" "a failed copy leaves the destination exactly as it was"
expect_err "c/1/1" "$Z" copy "$S/crc.zarr" "$S/fresh.zarr"
[ ! -e "$S/fresh.zarr" ] && ok || bad "a failed copy to a new place leaves nothing: $(find "$S/fresh.zarr")"
# a failed write changes nothing: the corrupt chunk is found before any chunk is rewritten
before=$(sum_d "$S/crc.zarr")
expect_err "c/1/1" "$Z" set "$S/crc.zarr" "0:4, 3" --value 99
expect_eq "$(sum_d "$S/crc.zarr")" "$before" "a failed set rewrote no chunk"
# demo never deletes what it did not create
mkdir -p "$S/busy" && echo keep >"$S/busy/file.txt"
expect_err "not empty" "$Z" demo "$S/busy"
expect_err "not empty" "$Z" demo "$D"
expect_eq "$(cat "$S/busy/file.txt")" "keep" "demo left the folder alone"
expect_ok "$Z" demo "$S/demo2.zarr"
expect_ok "$Z" demo "$S/demo2.zarr"
# a failed create leaves no folder
expect_err "chunks" "$Z" create "$S/new/deep/x.zarr" --shape 4 --chunks 0 --dtype int8
[ ! -e "$S/new" ] && ok || bad "a failed create left $S/new"
expect_err "4 GiB" "$Z" create "$S/huge.zarr" --shape 4294967296,4 --chunks 4294967296,4 --dtype int8
[ ! -e "$S/huge.zarr" ] && ok || bad "a refused create left its folder"
# no bookkeeping files in the user's folders
expect_ok "$Z" set "$D" "0, 0:3" --value 4
expect_eq "$(find "$S" -name '.zarrpp-*' ! -name '.zarrpp-demo' | wc -l)" "0" "no .zarrpp-lock/cas/tmp files left"

# ---- hostile files -----------------------------------------------------------------------------------
H=$S/hostile.zarr
expect_ok "$Z" create "$H" --shape 4 --chunks 2 --dtype int8
expect_ok "$Z" set "$H" --value 1
rm "$H/c/0" && mkfifo "$H/c/0"
expect_err "not a stored value" timeout 10 "$Z" get "$H"
rm "$H/c/0" && mkdir "$H/c/0"
expect_err "not a stored value" timeout 10 "$Z" get "$H"
mkdir -p "$S/fifo.zarr" && mkfifo "$S/fifo.zarr/zarr.json"
expect_err "not a stored value" timeout 10 "$Z" info "$S/fifo.zarr"
$PY -c "
import struct
h = b\"{'descr': '<i1', 'fortran_order': False, 'shape': (1073741824,), }\"
h += b' ' * (118 - len(h)) + b'\\n'
open('$S/liar.npy', 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h + b'xx')"
expect_err "header claims shape (1073741824,)" "$Z" set "$H" "0:2" --from "$S/liar.npy"

# ---- the CLI says exactly what happened ----------------------------------------------------------------
expect_err "timeout must be a number of seconds (0 or more, at most 1e7; got -1)" "$Z" --timeout -1 info "$H"
expect_err "connect_timeout must be a number of seconds (more than 0" "$Z" --connect-timeout 0 info "$H"
expect_err "stall_timeout must be a number of seconds" "$Z" --stall-timeout nan info "$H"
expect_err "'5s' is not a number" "$Z" --retry-window 5s info "$H"
expect_err "max_attempts must be a whole number from 1 to 1000 (got 0)" "$Z" --max-attempts 0 info "$H"
expect_ok "$Z" --timeout 5 --connect-timeout 2 --stall-timeout 3 --retry-window 0 --max-attempts 2 info "$H"
# Messages name what the user typed.
expect_err "unknown subcommand 'foo' (the subcommands are create, info" "$Z" foo
expect_err "unknown subcommand 'foo'" "$Z" --timeout 5 foo
expect_err "unknown data type 'x4' (zarrpp takes bool, int8" "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype x4
expect_err "is big-endian" "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype '>i4'
for spelling in i4 '<i4' int32; do
  expect_ok "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype "$spelling" --overwrite
  "$Z" info "$S/dt.zarr" | grep -q "int32" && ok || bad "--dtype $spelling is not int32"
done
expect_err "'info' is not a number" "$Z" --timeout info "$S/dt.zarr"
expect_err "data type 'O' (NumPy's object) is ambiguous" "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype O
expect_err "multiple of 8 bits" "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype r12
expect_ok "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype '>i1' --overwrite
"$Z" info "$S/dt.zarr" | grep -q "int8" && ok || bad "--dtype >i1 is not int8"
expect_ok "$Z" create "$S/dt.zarr" --shape 4 --chunks 2 --dtype '<f8' --overwrite
"$Z" info "$S/dt.zarr" | grep -q "float64" && ok || bad "--dtype <f8 is not float64"
expect_err "'$T/h' is a group, not an array" "$Z" info "$T/h"
expect_err "are the same node" "$Z" copy "$S/dt.zarr" "$S/dt.zarr"
expect_err "are the same node" "$Z" copy "$S/dt.zarr" "$S/dt.zarr" --overwrite
"$Z" info --help | grep -q "ARRAY TEXT REQUIRED *The array: its directory or URL" && ok || bad "info --help does not describe ARRAY"

# A stalled server (it accepts, then never answers) fails within the bounds given.
$PY -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)
open('$S/stall.port', 'w').write(str(s.getsockname()[1]))
conns = []
end = time.time() + 60
while time.time() < end:
    s.settimeout(1)
    try: conns.append(s.accept()[0])
    except OSError: pass
" &
STALL_PID=$!
for _ in $(seq 100); do [ -s "$S/stall.port" ] && break; sleep 0.1; done
t0=$(date +%s)
expect_err "retry_window passed without progress" timeout 30 "$Z" --stall-timeout 1 --retry-window 1.5 info "http://127.0.0.1:$(cat "$S/stall.port")/a.zarr"
[ $(($(date +%s) - t0)) -lt 10 ] && ok || bad "a stalled server took $(($(date +%s) - t0)) s to fail"
kill $STALL_PID 2>/dev/null; wait $STALL_PID 2>/dev/null
# Over HTTP (which cannot list): info says the stored counts are unknown, never a guess or an
# error; get reads with few requests in flight as with many.
$PY -u -m http.server 0 --bind 127.0.0.1 --directory "$S" > "$S/http.log" 2>&1 &
HTTP_PID=$!
for _ in $(seq 100); do grep -q "port" "$S/http.log" && break; sleep 0.1; done
HTTP_URL="http://127.0.0.1:$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$S/http.log" | head -1)"
"$Z" info "$HTTP_URL/dt.zarr" | grep -q "Chunks stored : unknown (the store cannot list its keys) / 2" && ok ||
  bad "info over HTTP does not say the stored chunks are unknown"
"$Z" info --json "$HTTP_URL/dt.zarr" | $PY -c "import json, sys; d = json.load(sys.stdin); assert d['chunks_stored'] is None and d['bytes_stored'] is None" && ok ||
  bad "info --json over HTTP does not give null stored counts"
[ "$("$Z" --max-in-flight 1 get "$HTTP_URL/dt.zarr")" = "$("$Z" get "$S/dt.zarr")" ] && ok || bad "get over HTTP with one request in flight differs"
expect_err "max_in_flight must be a whole number from 1 to 1024" "$Z" --max-in-flight 0 get "$HTTP_URL/dt.zarr"
kill $HTTP_PID 2>/dev/null; wait $HTTP_PID 2>/dev/null
expect_err "not an integer" "$Z" prepend "$H" --axis '' --from "$S/liar.npy"
expect_err "not an integer" "$Z" prepend "$H" --axis 1x --from "$S/liar.npy"
expect_err "out of range" "$Z" prepend "$H" --axis -2 --from "$S/liar.npy"
$PY -c "import numpy as np; np.save('$S/row.npy', np.full((1,), 7, dtype='int8')); np.save('$S/none.npy', np.zeros((0,), dtype='int8'))"
expect_ok "$Z" prepend "$H" --axis -1 --from "$S/row.npy"
expect_eq "$("$Z" get "$H" "0")" "7" "--axis -1 is the last axis"
R=$S/regular.zarr
expect_ok "$Z" create "$R" --shape 4 --chunks 2 --dtype int8
expect_ok "$Z" prepend "$R" --axis 0 --from "$S/none.npy"
expect_ok "$Z" append "$R" --axis 0 --from "$S/none.npy"
expect_eq "$($PY -c "import json; print(json.load(open('$R/zarr.json'))['chunk_grid']['name'])")" "regular" "zero rows keep the grid regular"
expect_err "\\\\n" "$Z" get "$R" $'1\n2'
expect_err "\\\\x1b" "$Z" info $'\x1b[31mred'
Z0=$S/zero.zarr
expect_ok "$Z" create "$Z0" --shape "" --chunks "" --dtype int8 2>/dev/null || expect_ok "$Z" create "$Z0" --shape "()" --chunks "()" --dtype int8
if [ -f "$Z0/zarr.json" ]; then
  expect_ok "$Z" set "$Z0" --value 3
  expect_eq "$("$Z" ls "$Z0")" "c" "ls lists a 0-d array's chunk"
  expect_eq "$("$Z" info "$Z0" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["chunks_stored"])')" "1" "info counts a 0-d array's chunk"
fi

# ---- concurrent processes lose nothing -----------------------------------------------------------------
$PY -c "import numpy as np; np.save('$S/p8.npy', np.full((1, 8), -1, dtype='int32'))"
for round in 1 2 3 4 5; do
  C=$S/race$round.zarr
  "$Z" create "$C" --shape 2,8 --chunks 8,8 --dtype int32 >/dev/null
  "$Z" resize "$C" --domain -4:2,0:8 >/dev/null   # rows -4..-1 share chunk -1 with what prepends add
  pids=()
  for w in 0 1 2 3 4 5; do "$Z" set "$C" "-6:-4, $w" --value $((w + 1)) & pids+=($!); done
  "$Z" prepend "$C" --axis 0 --from "$S/p8.npy" & pids+=($!)
  "$Z" prepend "$C" --axis 0 --from "$S/p8.npy" & pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || bad "a racing process failed (round $round)"; done
  expect_eq "$("$Z" get "$C" ":4")" "$(printf '[[-1 -1 -1 -1 -1 -1 -1 -1]\n [-1 -1 -1 -1 -1 -1 -1 -1]\n [ 1  2  3  4  5  6  0  0]\n [ 1  2  3  4  5  6  0  0]]')" "racing set and prepend lose nothing (round $round)"
done

# ---- Zarr v2: create, grow, refuse prepend, convert (in place and to another folder), strings ----
V=$T/v2
mkdir -p "$V"
expect_ok "$Z" create "$V/a.zarr" --shape 5,3 --chunks 2,2 --dtype int16 --zarr-format 2 --compressor zstd:2 --attrs '{"u": 1}'
[ -f "$V/a.zarr/.zarray" ] && [ ! -e "$V/a.zarr/zarr.json" ] && ok || bad "create --zarr-format 2 writes .zarray"
expect_eq "$("$Z" info --json "$V/a.zarr" | $PY -c 'import json,sys; d=json.load(sys.stdin); print(d["zarr_format"], d["v2_dtype"])')" "2 <i2" "info --json reports zarr_format 2"
expect_ok "$Z" set "$V/a.zarr" --value 4
$PY -c "import numpy as np; np.save('$V/row.npy', np.full((1, 3), 9, dtype='int16'))"
expect_ok "$Z" append "$V/a.zarr" --axis 0 --from "$V/row.npy"
[ -f "$V/a.zarr/2.0" ] && ok || bad "v2 chunk keys use '.'"
before=$(sum_d "$V/a.zarr")
expect_err "zarrpp convert" "$Z" prepend "$V/a.zarr" --axis 0 --from "$V/row.npy"
expect_eq "$(sum_d "$V/a.zarr")" "$before" "a refused prepend on v2 changes nothing"
expect_eq "$($PY -c "import zarr; z = zarr.open('$V/a.zarr', mode='r'); print(z.shape, int(z[:].sum()), z.attrs['u'])")" "(6, 3) 87 1" "zarr-python 2 reads what the CLI wrote"
cp -r "$V/a.zarr" "$V/b.zarr"
chunks_before=$(cd "$V/a.zarr" && find . -type f ! -name '.z*' -print0 | sort -z | xargs -0 md5sum)
expect_ok "$Z" convert "$V/a.zarr" --zarr-format 3
chunks_after=$(cd "$V/a.zarr" && find . -type f ! -name '.z*' ! -name zarr.json -print0 | sort -z | xargs -0 md5sum)
expect_eq "$chunks_after" "$chunks_before" "convert in place rewrites no chunk"
[ ! -e "$V/a.zarr/.zarray" ] && [ ! -e "$V/a.zarr/.zattrs" ] && ok || bad "convert removes .zarray/.zattrs"
expect_ok "$Z" prepend "$V/a.zarr" --axis 0 --from "$V/row.npy"
expect_eq "$("$Z" get "$V/a.zarr" "0")" "[9 9 9]" "a converted array prepends"
expect_ok "$Z" convert "$V/b.zarr" "$V/c.zarr"
expect_eq "$("$Z" get "$V/c.zarr" "5")" "[9 9 9]" "convert to another folder"
[ -f "$V/b.zarr/.zarray" ] && ok || bad "convert to another folder leaves the source as it was"
expect_err "overlaps" "$Z" convert "$V/b.zarr" "$V/b.zarr/inner"
# An interrupted conversion (zarr.json beside .zarray) opens as v3; info says so; convert finishes it.
cp -r "$V/b.zarr" "$V/d.zarr" && cp "$V/c.zarr/zarr.json" "$V/d.zarr/zarr.json"
"$Z" info "$V/d.zarr" | grep -q "interrupted conversion" && ok || bad "info names an interrupted conversion"
"$Z" convert "$V/d.zarr" | grep -q "finished an interrupted conversion" && ok || bad "convert finishes an interrupted conversion"
[ ! -e "$V/d.zarr/.zarray" ] && ok || bad "finishing removes .zarray"
# And back to v2: in place when the chunk keys are v2 keys (a converted array's), else into DST.
c_chunks=$(cd "$V/c.zarr" && find . -type f ! -name zarr.json -print0 | sort -z | xargs -0 md5sum)
expect_eq "$("$Z" convert "$V/c.zarr" --zarr-format 2 | tail -1)" "converted 1 node(s) to Zarr v2 in place; no chunk was read or rewritten" "convert --zarr-format 2 in place"
[ -f "$V/c.zarr/.zarray" ] && [ ! -e "$V/c.zarr/zarr.json" ] && ok || bad "convert --zarr-format 2 writes .zarray, removes zarr.json"
expect_eq "$(cd "$V/c.zarr" && find . -type f ! -name '.z*' -print0 | sort -z | xargs -0 md5sum)" "$c_chunks" "back to v2 rewrites no chunk"
expect_eq "$($PY -c "import zarr; z = zarr.open('$V/c.zarr', mode='r'); print(z.shape, z.attrs['u'], z[5].tolist())")" "(6, 3) 1 [9, 9, 9]" "zarr-python 2 reads an array converted back"
expect_ok "$Z" create "$V/n.zarr" --shape 4 --chunks 2 --dtype '<U2'
expect_ok "$Z" set "$V/n.zarr" --value ab
before=$(sum_d "$V/n.zarr")
expect_err "chunk keys (\"c/0\") are not v2 keys; convert it into another place" "$Z" convert "$V/n.zarr" --zarr-format 2
expect_eq "$(sum_d "$V/n.zarr")" "$before" "a refused conversion to v2 changes nothing"
expect_ok "$Z" convert "$V/n.zarr" "$V/n2.zarr" --zarr-format 2
expect_eq "$($PY -c "import zarr; z = zarr.open('$V/n2.zarr', mode='r'); print(z.dtype, z[:].tolist())")" "<U2 ['ab', 'ab', 'ab', 'ab']" "zarr-python 2 reads a v3 array converted into DST"
expect_ok "$Z" create "$V/sh.zarr" --shape 4 --chunks 2 --shards 4 --dtype int8
expect_err "sharding_indexed has no Zarr v2 form.*nothing was converted" "$Z" convert "$V/sh.zarr" "$V/sh2.zarr" --zarr-format 2
[ ! -e "$V/sh2.zarr" ] && ok || bad "a refused conversion into DST leaves no DST"
# A v2 group with an unreadable member still lists.
$PY -c "
import zarr, numpy as np, json
g = zarr.open_group('$V/g.zarr', mode='w'); g.create_dataset('ok', data=np.arange(3)); g.create_dataset('odd', data=np.arange(3))
m = json.load(open('$V/g.zarr/odd/.zarray')); m['compressor'] = {'id': 'zfpy'}; json.dump(m, open('$V/g.zarr/odd/.zarray', 'w'))"
"$Z" tree "$V/g.zarr" >"$T/tree" 2>&1 && grep -q "ok (3,) int64" "$T/tree" && grep -q "odd (unreadable: .*zfpy" "$T/tree" && ok || bad "tree lists past an unreadable member: $(cat "$T/tree")"
expect_err "compressor 'zfpy' is not supported" "$Z" info "$V/g.zarr/odd"
# Strings.
expect_ok "$Z" create "$V/s.zarr" --shape 4 --chunks 3 --dtype string --fill-value "n/a"
expect_ok "$Z" set "$V/s.zarr" "1:3" --value "héllo"
expect_eq "$("$Z" get "$V/s.zarr")" '["n/a","héllo","héllo","n/a"]' "string arrays print as JSON"
expect_err "cannot hold" "$Z" get "$V/s.zarr" --out "$V/s.npy"
expect_err "cannot hold" "$Z" append "$V/s.zarr" --axis 0 --from "$V/row.npy"
# A v2 object array whose fill value is zarr-python 2's default 0: missing elements print as 0,
# as zarr-python 2 reads them; a v2 bytes array states no fill value: they print as null.
$PY -c "
import zarr, numcodecs
z = zarr.open('$V/o.zarr', mode='w', shape=4, chunks=2, dtype=object, object_codec=numcodecs.VLenUTF8())
z[:1] = ['a']" 2>/dev/null
expect_eq "$("$Z" get "$V/o.zarr")" '["a","",0,0]' "missing elements of a v2 object array print as its fill value 0"
expect_ok "$Z" create "$V/b2.zarr" --shape 3 --chunks 2 --dtype bytes --zarr-format 2
expect_ok "$Z" set "$V/b2.zarr" "0" --value "x"
expect_eq "$("$Z" get "$V/b2.zarr")" '["b'"'"'x'"'"'","b'"'"''"'"'",null]' "missing elements of a v2 bytes array print as null"
# The regular_bounded conformance corpus: every array to refuse gets one error line from info and
# get; every array to read prints its domain and exact values (checked against the .npy).
CORPUS=$(cd "$(dirname "$0")/../../conformance/regular_bounded" && pwd)
for d in "$CORPUS"/refuse/*/; do
  expect_err "chunk_grid" "$Z" info "$d"
  expect_err "chunk_grid" "$Z" get "$d"
done
for d in "$CORPUS"/read/*/; do
  n=$(basename "$d")
  if "$Z" get "$d" --out "$T/corpus.npy" 2>"$T/err" && "$Z" info --json "$d" >"$T/info.json" 2>>"$T/err" &&
    $PY - "$CORPUS" "$n" "$T/corpus.npy" "$T/info.json" <<'PYEOF'
import json, sys, numpy as np
corpus, name, got, info = sys.argv[1:]
e = next(a for a in json.load(open(corpus + "/manifest.json"))["arrays"] if a["path"] == "read/" + name)
exp, out = np.load(corpus + "/" + e["values"]), np.load(got)
assert np.array_equal(out, exp, equal_nan=exp.dtype.kind == "f"), name
assert json.load(open(info))["domain"] == e["domain"], name
PYEOF
  then ok; else bad "corpus $n: $(cat "$T/err")"; fi
done

# .npy in and out in slabs (issue 22): tiny slabs cross chunk boundaries many times; every result
# must equal the whole read/write (one slab), for slices with steps, ints, ellipses, coordinates
# and a prepended (regular_bounded) array whose chunk boundaries sit off zero.
S=$T/slab.zarr
expect_ok "$Z" create "$S" --shape 23,7,5 --chunks 4,3,2 --dtype int16 --compressor none
$PY -c "
import numpy as np
np.save('$T/s0.npy', np.arange(23*7*5, dtype='int16').reshape(23, 7, 5))
np.save('$T/sp.npy', -np.arange(6*7*5, dtype='int16').reshape(6, 7, 5))"
expect_ok env ZARRPP_CLI_SLAB_BYTES=1 "$Z" set "$S" --from "$T/s0.npy"
expect_ok "$Z" prepend "$S" --axis 0 --from "$T/sp.npy"
for sel in "" "3:20" "1::3" "5, 1:6:2" "..., 2" "-9:" "2, 3" ":, 1:4" "0:29:5, ..., 1:"; do
  for bytes in 1 70 300 100000000; do
    expect_ok env ZARRPP_CLI_SLAB_BYTES=$bytes "$Z" get "$S" ${sel:+"$sel"} --out "$T/slab-$bytes.npy"
  done
  expect_eq "$($PY -c "
import numpy as np
a = [np.load('$T/slab-%d.npy' % b) for b in (1, 70, 300, 100000000)]
full = np.concatenate([np.load('$T/sp.npy'), np.load('$T/s0.npy')])
ref = eval('full[' + ('$sel' or ':') + ']')
print(all(x.shape == ref.shape and np.array_equal(x, ref) for x in a))")" "True" "get --out in slabs: [$sel]"
done
for sel in "-6:-1" "-6::2, 1" "10:17"; do
  expect_ok env ZARRPP_CLI_SLAB_BYTES=1 "$Z" get "$S" --coords "$sel" --out "$T/cs.npy"
  expect_eq "$($PY -c "
import numpy as np
full = np.concatenate([np.load('$T/sp.npy'), np.load('$T/s0.npy')])
sl = '$sel'.split(',')[0].split(':'); rest = '$sel'.split(',')[1:]
lo, hi = int(sl[0]) + 6, int(sl[1] or 23) + 6
step = int(sl[2]) if len(sl) > 2 and sl[2] else 1
ref = full[lo:hi:step]
if rest: ref = ref[:, int(rest[0])]
print(np.array_equal(np.load('$T/cs.npy'), ref))")" "True" "get --coords --out in slabs: [$sel]"
done
# set --from in slabs: the same array whatever the slab size, and only the selection changes.
$PY -c "
import numpy as np
np.save('$T/box.npy', (np.arange(13*7*5, dtype='int16').reshape(13, 7, 5) * 3 + 1))
np.save('$T/strided.npy', np.full((7, 3, 5), 9, dtype='int16'))"
for bytes in 1 100000000; do
  expect_ok env ZARRPP_CLI_SLAB_BYTES=$bytes "$Z" create "$T/ss-$bytes.zarr" --shape 23,7,5 --chunks 4,3,2 --dtype int16 --compressor zstd
  expect_ok env ZARRPP_CLI_SLAB_BYTES=$bytes "$Z" prepend "$T/ss-$bytes.zarr" --axis 0 --from "$T/sp.npy"
  expect_ok env ZARRPP_CLI_SLAB_BYTES=$bytes "$Z" set "$T/ss-$bytes.zarr" "3:16" --from "$T/box.npy"
  expect_ok env ZARRPP_CLI_SLAB_BYTES=$bytes "$Z" set "$T/ss-$bytes.zarr" --coords "-5:20:4, 1:6:2" --from "$T/strided.npy"
  expect_ok "$Z" get "$T/ss-$bytes.zarr" --out "$T/ss-$bytes.npy"
done
expect_eq "$($PY -c "
import numpy as np
ref = np.zeros((29, 7, 5), 'int16'); ref[:6] = np.load('$T/sp.npy')
ref[3:16] = np.load('$T/box.npy'); ref[1:26:4, 1:6:2] = 9
print(all(np.array_equal(np.load('$T/ss-%d.npy' % b), ref) for b in (1, 100000000)))")" "True" "set --from in slabs"
# Bad input is found before the first slab is written: a bool byte other than 0/1 in the last
# slab, a wrong shape, a wrong dtype, a truncated file.
expect_ok "$Z" create "$T/boolslab.zarr" --shape 40,3 --chunks 4,3 --dtype bool
$PY -c "
import numpy as np
np.save('$T/bool.npy', np.ones((40, 3), bool))
b = open('$T/bool.npy', 'rb').read(); open('$T/badbool.npy', 'wb').write(b[:-1] + bytes([7]))
open('$T/short.npy', 'wb').write(b[:-5])"
expect_err "bool data holds a byte other than 0 or 1" env ZARRPP_CLI_SLAB_BYTES=1 "$Z" set "$T/boolslab.zarr" --from "$T/badbool.npy"
expect_err "the file holds" env ZARRPP_CLI_SLAB_BYTES=1 "$Z" set "$T/boolslab.zarr" --from "$T/short.npy"
expect_eq "$("$Z" ls "$T/boolslab.zarr")" "" "a refused set --from wrote nothing"
expect_ok env ZARRPP_CLI_SLAB_BYTES=1 "$Z" set "$T/boolslab.zarr" --from "$T/bool.npy"
expect_eq "$("$Z" ls "$T/boolslab.zarr" | wc -l)" "10" "set --from bool in slabs"
# get --out replaces a file only when it is complete: a failed read leaves the old file as it was
# and no temporary file; an existing file keeps its permissions; a FIFO is written in place.
echo "old contents" >"$T/keep.npy"
chmod 640 "$T/keep.npy"
printf 'garbage' >"$S/c/0/0/0"
expect_err "" env ZARRPP_CLI_SLAB_BYTES=1 "$Z" get "$S" --out "$T/keep.npy"
expect_eq "$(cat "$T/keep.npy")" "old contents" "a failed get --out leaves the old file"
expect_eq "$(ls -A "$T" | grep -c zarrpp-tmp)" "0" "a failed get --out leaves no temporary file"
expect_ok "$Z" get "$T/boolslab.zarr" --out "$T/keep.npy"
expect_eq "$(stat -c %a "$T/keep.npy")" "640" "get --out keeps an existing file's permissions"
ln -s keep.npy "$T/link.npy"
expect_ok "$Z" get "$T/boolslab.zarr" "0:2" --out "$T/link.npy"
expect_eq "$([ -L "$T/link.npy" ] && $PY -c "import numpy as np; print(np.load('$T/keep.npy').shape)")" "(2, 3)" "get --out through a symbolic link writes its target"
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo.npy" &
expect_ok "$Z" get "$T/boolslab.zarr" --out "$T/fifo"
wait
expect_eq "$($PY -c "import numpy as np; print(np.load('$T/from-fifo.npy').all())")" "True" "get --out into a FIFO"

# Attributes as Python's json writes them (issue 30, item 5): NaN, infinities, a lone surrogate.
$PY -c "
import zarr
z = zarr.open('$T/nanattrs.zarr', mode='w', shape=(2,), dtype='f8')
z.attrs.update({'valid_range': [float('nan'), 1.0], 'inf': float('inf'), 'name': 'a\udcffb'})"
expect_ok "$Z" info "$T/nanattrs.zarr"
expect_eq "$(echo "$out" | grep -c 'Attributes.*NaN')" "1" "info prints NaN attributes"
expect_eq "$("$Z" info "$T/nanattrs.zarr" --json | $PY -c 'import json,sys,math; a=json.load(sys.stdin)["attributes"]; print(math.isnan(a["valid_range"][0]), a["inf"], a["name"] == "a\udcffb")')" "True inf True" "info --json gives the attributes as Python's json reads them"
expect_ok "$Z" set "$T/nanattrs.zarr" --value 2.5

# NumPy's fixed-width strings, dates and durations: created, printed as NumPy prints them, and
# read and written through .npy files in either byte order.
N="$T/numpy_types"
mkdir "$N"
$PY -c "
import numpy as np
np.save('$N/u.npy', np.array(['ab', 'h\u00e9llo'], dtype='>U5'))
np.save('$N/s.npy', np.array([b'a\x00b', b'xyz'], dtype='S3'))
np.save('$N/t.npy', np.array(['2020-01-02T03:04:05.678', 'NaT'], dtype='<M8[ms]'))
np.save('$N/d.npy', np.array([90, -1], dtype='>m8[10s]'))"
expect_ok "$Z" create "$N/u.zarr" --shape 3 --chunks 2 --dtype U5 --fill-value hi
expect_ok "$Z" set "$N/u.zarr" 1:3 --from "$N/u.npy"
expect_eq "$("$Z" get "$N/u.zarr")" "['hi' 'ab' 'héllo']" "U5 prints as NumPy prints it (text is not lined up)"
expect_ok "$Z" create "$N/s.zarr" --shape 2 --chunks 2 --dtype S3
expect_ok "$Z" set "$N/s.zarr" --from "$N/s.npy"
expect_eq "$("$Z" get "$N/s.zarr")" "[b'a\\x00b' b'xyz']" "S3 keeps inner NULs"
expect_ok "$Z" create "$N/t.zarr" --shape 3 --chunks 2 --dtype 'M8[ms]' --fill-value NaT
expect_ok "$Z" set "$N/t.zarr" 0:2 --from "$N/t.npy"
expect_eq "$("$Z" get "$N/t.zarr")" "['2020-01-02T03:04:05.678'                     'NaT'                     'NaT']" \
  "datetime64 prints as NumPy prints it"
expect_ok "$Z" create "$N/d.zarr" --shape 2 --chunks 2 --dtype 'm8[10s]'
expect_ok "$Z" set "$N/d.zarr" --from "$N/d.npy"
for k in u s t d; do
  expect_ok "$Z" get "$N/$k.zarr" --out "$N/$k.out.npy"
done
expect_eq "$($PY -c "
import numpy as np
u, s, t, d = (np.load('$N/%s.out.npy' % k) for k in 'ustd')
print(u.dtype.str, u.tolist(), s.dtype.str, s.tolist(), t.dtype.str, str(t[0]), np.isnat(t[1:]).all(), d.dtype.str, d.astype('i8').tolist())")" \
  "<U5 ['hi', 'ab', 'héllo'] |S3 [b'a\\x00b', b'xyz'] <M8[ms] 2020-01-02T03:04:05.678 True <m8[10s] [90, -1]" \
  ".npy round trip of U, S, datetime64 and timedelta64"
expect_eq "$("$Z" info "$N/t.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["data_type"], j["fill_value"])')" \
  "datetime64[ms] -9223372036854775808" "info names the type NumPy's way"
expect_err "longer than 5 characters" "$Z" set "$N/u.zarr" 0 --value toolong
expect_err "data type mismatch" "$Z" set "$N/t.zarr" 0:2 --from "$N/u.npy"
expect_err "without a unit" "$Z" create "$N/g.zarr" --shape 2 --chunks 2 --dtype M8
expect_ok "$Z" create "$N/digits.zarr" --shape 2 --chunks 2 --dtype U3 --fill-value 123
expect_ok "$Z" set "$N/digits.zarr" 0 --value 45
expect_eq "$("$Z" get "$N/digits.zarr")" "['45' '123']" "U<n> values are text as typed, digits too"
$PY -c "
import numpy as np
np.save('$N/tricky.npy', np.array([\"it's\", 'say \"hi\"', 'tab\there', '\x7f\xa0\u00e9', '\u2028', 'a\\\\b'], dtype='U8'))
np.save('$N/trickyb.npy', np.array([b\"it's\", b'\xff\t\"', b'\x00x'], dtype='S4'))"
for k in tricky trickyb; do
  expect_ok "$Z" create "$N/$k.zarr" --shape "$($PY -c "import numpy as np; print(len(np.load('$N/$k.npy')))")" --chunks 4 \
    --dtype "$($PY -c "import numpy as np; print(np.load('$N/$k.npy').dtype.str)")"
  expect_ok "$Z" set "$N/$k.zarr" --from "$N/$k.npy"
  expect_eq "$("$Z" get "$N/$k.zarr")" "$($PY -c "import numpy as np; print(np.load('$N/$k.npy'))")" \
    "$k: quotes, escapes and non-printing characters as NumPy prints them"
done
expect_ok "$Z" create "$N/sv.zarr" --shape 2 --chunks 2 --dtype S4 --fill-value abcd
expect_ok "$Z" set "$N/sv.zarr" 0 --value test
expect_eq "$("$Z" get "$N/sv.zarr")" "[b'test' b'abcd']" "S<n> values are the bytes typed (not base64)"

# .npy headers (issue 30, item 5): NumPy is the oracle (tests/cli/npy_headers.py). Every header it
# refuses, and every header with a repeated key, is refused by set --from; the ones it reads are
# read as NumPy reads them. The probe array has the shape the old parser gave the repeated-shape
# header ((2,) then (4,) read as (2, 4)).
mkdir "$T/hdr"
$PY "$(dirname "$0")/npy_headers.py" "$T/hdr" >"$T/hdr/list" 2>"$T/hdr/oracle"
expect_eq "$(cat "$T/hdr/oracle")" "" "NumPy's verdicts on the header table are the expected ones"
expect_ok "$Z" create "$T/hdr/probe.zarr" --shape 2,4 --chunks 2,4 --dtype int32
while read -r verdict name shape; do
  f="$T/hdr/$verdict-$name.npy"
  if [ "$verdict" = ok ]; then
    [ "$shape" = "-" ] && continue
    expect_ok "$Z" create "$T/hdr/$name.zarr" --shape "${shape//x/,}" --chunks "${shape//x/,}" --dtype int32
    expect_ok "$Z" set "$T/hdr/$name.zarr" --from "$f"
    expect_ok "$Z" get "$T/hdr/$name.zarr" --out "$T/hdr/$name.out.npy"
    expect_eq "$($PY -c "import numpy as np; a, b = np.load('$f'), np.load('$T/hdr/$name.out.npy'); print(a.shape == b.shape and (a == b).all())")" "True" "header $name is read as NumPy reads it"
  else
    expect_err "\.npy: " "$Z" set "$T/hdr/probe.zarr" --from "$f"
  fi
done <"$T/hdr/list"
expect_eq "$(grep -c . "$T/hdr/list")" "33" "every header of the table was tried"

# Zip files (zarr-python's ZipStore): a path that is a regular file is one; the commands read it
# and write into it, the changes written into the archive when the command ends.
ZP="$T/zip"
mkdir "$ZP"
$PY -c "
import zarr, numpy as np
s = zarr.ZipStore('$ZP/z2.zip', mode='w'); z = zarr.open(store=s, mode='w', shape=(6,), chunks=(4,), dtype='<i4')
z[:] = np.arange(6); s.close()
np.save('$ZP/front.npy', np.array([7, 7], dtype='<i4'))"
expect_eq "$("$Z" get "$ZP/z2.zip")" "[0 1 2 3 4 5]" "a zip file zarr-python 2 wrote reads"
expect_ok "$Z" append "$ZP/z2.zip" --axis 0 --from "$ZP/front.npy"
expect_eq "$(ls -A "$ZP")" $'front.npy\nz2.zip' "nothing staged is left beside the archive"
expect_eq "$($PY -c "import zarr; print(zarr.open(store=zarr.ZipStore('$ZP/z2.zip', mode='r'), mode='r')[:])" 2>&1)" \
  "[0 1 2 3 4 5 7 7]" "zarr-python 2 reads the archive zarrpp grew"
expect_ok "$Z" convert "$ZP/z2.zip" --zarr-format 3
expect_ok "$Z" prepend "$ZP/z2.zip" --axis 0 --from "$ZP/front.npy"
expect_eq "$("$Z" get "$ZP/z2.zip")" "[7 7 0 1 2 3 4 5 7 7]" "converted to v3 and grown in front, in the zip file"
$PY -c "
import zarr, numpy as np
s = zarr.ZipStore('$ZP/g.zip', mode='w'); g = zarr.group(store=s)
g.create_dataset('g/a', data=np.arange(4, dtype='<i2')); s.close()
s = zarr.ZipStore('$ZP/big.zip', mode='w')
zarr.open(store=s, mode='w', shape=(4000,), chunks=(100,), dtype='<i4', compressor=None)[:] = np.arange(4000); s.close()"
expect_eq "$("$Z" get "$ZP/g.zip/g/a")" "[0 1 2 3]" "an array in a group of a zip file, by its path inside it"
cp "$ZP/big.zip" "$ZP/before.zip"
# The archive's new copy cannot be written (a file size limit): the command fails and says where
# its changes are; the archive is as it was.
expect_err "File too large.*kept in .*zarrpp-staged" \
  bash -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" append \"\$1\" --axis 0 --from \"\$2\"" "$Z" "$ZP/big.zip" "$ZP/front.npy"
expect_ok cmp "$ZP/big.zip" "$ZP/before.zip"
rm -rf "$ZP"/.big.zip.zarrpp-staged-*
printf 'not a zip' >"$ZP/bad.zip"
expect_err "cannot be read as a zip archive" "$Z" info "$ZP/bad.zip"
expect_eq "$(cat "$ZP/bad.zip")" "not a zip" "a file that is no zip archive is left as it was"

# A path ending in .zip that does not exist is a new zip file (as zarr-python opens it); readers open
# zip files read-only; a failed command leaves no zip file it made.
expect_ok "$Z" create "$ZP/new/n.zip/arr" --shape 4 --chunks 2 --dtype int16
expect_eq "$($PY -c "import zipfile; print(sorted(zipfile.ZipFile('$ZP/new/n.zip').namelist()))")" "['arr/zarr.json']" \
  "create makes a zip file for a new path ending in .zip (and the folder above it)"
expect_err "no such" "$Z" get "$ZP/none.zip"
expect_eq "$(ls -A "$ZP" | grep -c none)" "0" "reading a missing zip file creates nothing"
expect_err "chunks" "$Z" create "$ZP/made/m.zip" --shape 4 --chunks 0 --dtype int16
expect_eq "$(ls -A "$ZP" | grep -c made)" "0" "a failed create leaves neither the zip file nor its folder"
chmod 0444 "$ZP/new/n.zip"
expect_eq "$("$Z" get "$ZP/new/n.zip/arr")" "[0 0 0 0]" "a read-only zip file reads (no lock, nothing written)"
chmod 0644 "$ZP/new/n.zip"
$PY -c "
import zipfile
with zipfile.ZipFile('$ZP/lzma.zip', 'w', compression=zipfile.ZIP_LZMA) as z:
    z.writestr('zarr.json', '{\"zarr_format\": 3, \"node_type\": \"group\"}')"
expect_err "member 'zarr.json', compressed with LZMA (zip method 14)" "$Z" tree "$ZP/lzma.zip"

# A large zarr.json (a list of 10^7 zeros in the attributes, 20 MiB; deflated in a zip file, 20 KB):
# under an 800 MB address-space limit every command refuses it in one line, before building it
# (it used to die of an uncaught std::bad_alloc, thrown while a JSON document was torn down).
$PY -c "
import json, zipfile
doc = {'zarr_format': 3, 'node_type': 'array', 'shape': [2], 'data_type': 'int8',
       'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': [2]}},
       'chunk_key_encoding': {'name': 'default', 'configuration': {'separator': '/'}},
       'fill_value': 0, 'codecs': [{'name': 'bytes'}], 'attributes': {'big': [0] * 10**7}}
text = json.dumps(doc, separators=(',', ':'))
import os; os.makedirs('$ZP/big.zarr')
open('$ZP/big.zarr/zarr.json', 'w').write(text)
with zipfile.ZipFile('$ZP/big-attrs.zip', 'w', compression=zipfile.ZIP_DEFLATED) as z:
    z.writestr('zarr.json', text)"
for cmd in "get $ZP/big.zarr" "info $ZP/big.zarr" "ls $ZP/big.zarr" "tree $ZP/big.zarr" "set $ZP/big.zarr 0 --value 1" \
  "append $ZP/big.zarr --axis 0 --from $ZP/front.npy" "get $ZP/big-attrs.zip" "info $ZP/big-attrs.zip --json"; do
  # shellcheck disable=SC2086
  expect_err "out of memory: zarr.json of '/' is 20000[0-9]* bytes of JSON" bash -c 'ulimit -v 800000; exec "$@"' _ "$Z" $cmd
done
expect_eq "$("$Z" get "$ZP/big-attrs.zip")" "[0 0]" "with the memory it needs, the large document reads"
rm -rf "$ZP/big.zarr" "$ZP/big-attrs.zip"

# ---- a read over a million one-element chunks runs in the memory of its output --------------------
# The plan's tasks are made batch by batch (src/array/task_batches.hpp); held all at once they took
# about 300 bytes per chunk touched (311 MB here), over this limit. Release build only: the
# sanitizer stage leaves this script out, and an address-space limit cannot work under ASan.
OE=$T/one-element
expect_ok "$Z" create "$OE/a.zarr" --shape 1000000,1000000 --chunks 1,1 --dtype uint8
expect_ok "$Z" set "$OE/a.zarr" "0:2001:1000, 999000" --value 9
expect_ok bash -c 'ulimit -v 250000; exec "$@"' _ "$Z" get "$OE/a.zarr" "::1000,::1000" --out "$OE/x.npy"
expect_eq "$($PY -c "
import numpy as np
x = np.load('$OE/x.npy')
print(x.shape, int(x.sum()), x[0, 999], x[2, 999], x[3, 999])")" "(1000, 1000) 27 9 9 0" "the strided read over 10^6 chunks"
rm -rf "$OE"

# ---- outputs: checked, and never inside the array read ----
OU=$T/outputs
mkdir -p "$OU"
expect_ok "$Z" create "$OU/a.zarr" --shape 3 --chunks 2 --dtype int8
expect_ok "$Z" create "$OU/g.zip/arr" --shape 3 --chunks 2 --dtype int8
for cmd in "get $OU/a.zarr" "get $OU/a.zarr --out -" "info $OU/a.zarr" "info $OU/a.zarr --json" "tree $OU/a.zarr" \
  "show $OU/a.zarr --svg -" "--help" "get $OU/g.zip/arr"; do
  # shellcheck disable=SC2086
  expect_err "No space left on device" bash -c '"$@" >/dev/full' _ "$Z" $cmd
done
"$Z" get "$OU/a.zarr" --out - >"$OU/piped.npy"
expect_eq "$($PY -c "import numpy as np; print(np.load('$OU/piped.npy').tolist())")" "[0, 0, 0]" \
  "get --out - writes the .npy to standard output"
expect_eq "$(ls -A "$OU" | grep -cx -- -)" "0" "get --out - makes no file named -"
cp "$OU/a.zarr/zarr.json" "$OU/meta.before"
expect_err "inside the array" "$Z" get "$OU/a.zarr" --out "$OU/a.zarr/zarr.json"
expect_err "inside the array" "$Z" get "$OU/a.zarr" --out "$OU/a.zarr/x.npy"
expect_err "inside the array" "$Z" get "file://$OU/a.zarr" --out "$OU/a.zarr/x.npy"
ln -s "$OU/a.zarr" "$OU/alias"
expect_err "inside the array" "$Z" get "$OU/alias" --out "$OU/a.zarr/zarr.json"
ln -s "$OU/a.zarr/zarr.json" "$OU/link.npy"
expect_err "inside the array" "$Z" get "$OU/a.zarr" --out "$OU/link.npy"
expect_err "is the zip file" "$Z" get "$OU/g.zip/arr" --out "$OU/g.zip"
expect_err "is the zip file" "$Z" show "$OU/g.zip/arr" --svg "$OU/g.zip"
expect_ok "$Z" create "$OU/other.zarr" --shape 3 --chunks 2 --dtype int8
expect_err "a Zarr node's metadata" "$Z" get "$OU/a.zarr" --out "$OU/other.zarr/zarr.json"
# From the red-team: a new document beside a group, another array's chunk, standard output
# redirected into the array, /dev/stdout into a pipe, a PNG to a full disk.
$PY -c "import zarr; g = zarr.open_group('$OU/g2', mode='w'); g.zeros('a', shape=3, chunks=2); g.zeros('b', shape=3, chunks=2)"
expect_err "named as a Zarr node's metadata (.zattrs)" "$Z" get "$OU/g2/a" --out "$OU/g2/.zattrs"
expect_err "named as a Zarr node's metadata (zarr.json)" "$Z" get "$OU/g2/a" --out "$OU/g2/zarr.json"
expect_err "is inside the array $OU/g2/b" "$Z" get "$OU/g2/a" --out "$OU/g2/b/0"
expect_eq "$(ls -A "$OU/g2")" $'.zgroup\na\nb' "the group's folder is as it was"
expect_ok "$Z" create "$OU/c.zarr" --shape 3 --chunks 2 --dtype int8
expect_ok "$Z" set "$OU/c.zarr" 0 --value 5
cp "$OU/c.zarr/c/0" "$OU/chunk.before"
expect_err "standard output, $OU/c.zarr/c/0" bash -c '"$@" >> "$0"' "$OU/c.zarr/c/0" "$Z" get "$OU/c.zarr" --out -
expect_ok cmp "$OU/c.zarr/c/0" "$OU/chunk.before"
expect_eq "$("$Z" get "$OU/a.zarr" --out /dev/stdout | $PY -c "import io, sys, numpy as np; print(np.load(io.BytesIO(sys.stdin.buffer.read())).tolist())")" \
  "[0, 0, 0]" "get --out /dev/stdout into a pipe"
expect_err "g.zip is not a directory" "$Z" get "$OU/a.zarr" --out "$OU/g.zip/x.npy"
if command -v rsvg-convert >/dev/null; then
  expect_err "cannot write standard output: No space left on device" bash -c '"$@" >/dev/full' _ "$Z" show "$OU/a.zarr" --png -
fi
expect_err "the command itself completed" bash -c '"$@" >/dev/full' _ "$Z" convert "$OU/c.zarr" --grid regular_bounded
expect_ok cmp "$OU/a.zarr/zarr.json" "$OU/meta.before"
expect_eq "$("$Z" get "$OU/g.zip/arr")" "[0 0 0]" "the zip file is as it was"
rm -rf "$OU"

# ---- rectilinear grids: chunks (or shards) of sizes listed per dimension ----
RG="$T/rect"
mkdir -p "$RG"
expect_ok "$Z" create "$RG/r.zarr" --shape 60,100 --chunks '[[10,20,30],[[50,2]]]' --dtype int32
expect_eq "$("$Z" info "$RG/r.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["chunk_grid"], j["chunks"], j["chunks_total"])')" \
  "{'name': 'rectilinear', 'configuration': {'kind': 'inline', 'chunk_shapes': [[10, 20, 30], [[50, 2]]]}} [[10, 20, 30], [[50, 2]]] 6" \
  "create --chunks with per-dimension sizes writes a rectilinear grid; info shows the sizes"
expect_eq "$("$Z" create "$RG/even.zarr" --shape 3,4 --chunks '[[2,1],[4]]' --dtype int8)" \
  "note: --chunks lists the sizes of a regular grid: written as the regular grid of chunks (2, 4) (growth adds whole chunks of that size)" \
  "sizes of a regular grid make a regular grid, and create says so"
rm -rf "$RG/even.zarr"
expect_err "ZARRPP_PROGRESS_DELAY='soon': expected the seconds" env ZARRPP_PROGRESS_DELAY=soon "$Z" get "$RG/r.zarr" --out "$RG/e.npy"
expect_ok "$Z" set "$RG/r.zarr" "8:12, 49:51" --value 3
expect_eq "$("$Z" ls "$RG/r.zarr")" $'c/0/0\nc/0/1\nc/1/0\nc/1/1' "a write across chunk edges touches the four chunks"
expect_eq "$("$Z" get "$RG/r.zarr" "7:13, 50")" "[0 3 3 3 3 0]" "reads across the edge at row 10"
expect_ok "$Z" resize "$RG/r.zarr" --shape 75,100
expect_eq "$("$Z" info "$RG/r.zarr" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["chunks"][0])')" \
  "[10, 20, 30, 15]" "growing past the last size adds one chunk, as zarr-python"
expect_ok "$Z" copy "$RG/r.zarr" "$RG/c.zarr"
expect_eq "$("$Z" info "$RG/c.zarr" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["chunks"][0])')" \
  "[10, 20, 30, 15]" "a copy keeps the sizes"
printf '{"zarr_format":3,"node_type":"array","shape":[1000000000000,100],"data_type":"uint8","chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[[1,1000000000000]],100]}},"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]}' >"$RG/huge.json"
mkdir "$RG/huge.zarr" && mv "$RG/huge.json" "$RG/huge.zarr/zarr.json"
expect_eq "$("$Z" info "$RG/huge.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["chunks"], j["chunks_total"])')" \
  "[[[1, 1000000000000]], 100] 1000000000000" "a trillion chunks are one run in info"
rm -rf "$RG/huge.zarr"
expect_ok "$Z" copy "$RG/r.zarr" "$RG/c8.zarr" --chunks 8,8
expect_eq "$("$Z" info "$RG/c8.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["chunk_grid"]["name"], j["chunks"])')" \
  "regular [8, 8]" "a copy with --chunks has a regular grid of them"
expect_eq "$("$Z" get "$RG/c8.zarr" "7:13, 50")" "[0 3 3 3 3 0]" "and the same values"
rm -rf "$RG/c.zarr" "$RG/c8.zarr"
# growth in front: one chunk of exactly the rows (rectilinear_bounded), or --chunk-size pieces
$PY -c "import numpy as np; np.save('$RG/rows.npy', np.full((7, 100), 5, 'i4'))"
expect_ok "$Z" prepend "$RG/r.zarr" --axis 0 --from "$RG/rows.npy"
expect_eq "$("$Z" info "$RG/r.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); g=j["chunk_grid"]; print(g["name"], g["configuration"]["chunk_shapes"][0], g["configuration"]["first_chunk"], j["domain"])')" \
  "rectilinear_bounded [7, 10, 20, 30, 15] [-1, 0] [[-7, 75], [0, 100]]" "prepend adds one chunk of exactly 7 rows"
expect_eq "$("$Z" ls "$RG/r.zarr")" $'c/-1/0\nc/-1/1\nc/0/0\nc/0/1\nc/1/0\nc/1/1' "the new chunks are c/-1/*"
expect_eq "$("$Z" get "$RG/r.zarr" "5:9, 50")" "[5 5 0 0]" "and read in front of the old rows"
$PY -c "import numpy as np; np.save('$RG/rows.npy', np.full((25, 100), 6, 'i4'))"
expect_ok "$Z" append "$RG/r.zarr" --axis 0 --from "$RG/rows.npy" --chunk-size 10
expect_eq "$("$Z" info "$RG/r.zarr" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["chunk_grid"]["configuration"]["chunk_shapes"][0])')" \
  "[7, 10, 20, 30, 15, 5, [10, 2]]" "append --chunk-size 10 of 25 rows: 5, 10, 10"
expect_err "chunks of dimension 0 differ in size" "$Z" convert "$RG/r.zarr" --grid regular_bounded
expect_err "chunk-size must be >= 1, got 0" "$Z" prepend "$RG/r.zarr" --axis 0 --from "$RG/rows.npy" --chunk-size 0
rm "$RG/rows.npy"
expect_ok "$Z" create "$RG/g.zarr" --shape 30 --chunks 10 --dtype int32
expect_eq "$("$Z" convert "$RG/g.zarr" --grid rectilinear_bounded)" \
  "$RG/g.zarr: chunk grid is now rectilinear_bounded (zarr.json only; no chunk was moved)" "convert --grid rectilinear_bounded"
expect_eq "$("$Z" convert "$RG/g.zarr" --grid regular)" "$RG/g.zarr: chunk grid is now regular (zarr.json only; no chunk was moved)" \
  "and back to regular"
rm -rf "$RG/g.zarr"
expect_err "add up to 30, short of its extent 60" "$Z" create "$RG/bad.zarr" --shape 60 --chunks '[[10,20]]' --dtype int32
expect_err "wholly past its extent" "$Z" create "$RG/bad.zarr" --shape 60 --chunks '[[10,50,5]]' --dtype int32
expect_eq "$(ls "$RG")" "r.zarr" "a refused create leaves nothing"
expect_ok "$Z" create "$RG/s.zarr" --shape 120,100 --chunks 10,10 --shards '[[60,40,20],50]' --dtype int16
expect_eq "$("$Z" info "$RG/s.zarr" --json | $PY -c 'import json,sys; j=json.load(sys.stdin); print(j["chunks"], j["shards"], j["shards_total"])')" \
  "[10, 10] [[60, 40, 20], [[50, 2]]] 6" "rectilinear shards of regular inner chunks"
expect_err "not divisible" "$Z" create "$RG/bad.zarr" --shape 60 --chunks 10 --shards '[[20,35,5]]' --dtype int32

# ---- the progress line of long work: on a terminal only, --progress / --quiet choose ---------------------
# `script` runs the command under a pseudo-terminal; ZARRPP_PROGRESS_DELAY=0 draws from the start
# (by default the line waits half a second, so quick work prints nothing).
PG=$T/progress
mkdir -p "$PG"
expect_ok "$Z" create "$PG/p.zarr" --shape 400,300 --chunks 100,100 --dtype float64
$PY -c "import numpy as np; np.save('$PG/d.npy', np.arange(120000, dtype='float64').reshape(400, 300))"
on_tty() { ZARRPP_PROGRESS_DELAY=0 script -qec "$*" /dev/null 2>&1 | tr '\r' '\n'; }
expect_eq "$(on_tty "$Z" set "$PG/p.zarr" --from "$PG/d.npy" | grep -c '^set  100%  937.5 KiB of 937.5 KiB  12 chunks  .*/s  done in')" \
  "1" "set --from on a terminal ends with a full progress line (12 chunks, the data's bytes)"
expect_eq "$(on_tty "$Z" get "$PG/p.zarr" "0:200" --out "$PG/o.npy" | grep -c '^get  100%  468.8 KiB of 468.8 KiB  6 chunks')" \
  "1" "get --out on a terminal: the selection's bytes and chunks"
expect_eq "$(on_tty "$Z" prepend "$PG/p.zarr" --axis 0 --from "$PG/d.npy" | grep -c '^prepend  100%  937.5 KiB of 937.5 KiB')" \
  "1" "prepend on a terminal"
expect_eq "$(on_tty "$Z" resize "$PG/p.zarr" --shape 100,300 | grep -c '^resize  21 chunks .* done in')" \
  "1" "resize that removes 21 chunks on a terminal"
expect_eq "$(on_tty "$Z" copy "$PG/p.zarr" "$PG/c.zarr" --grid regular | grep -c '^copy  100%  3/3 chunks')" "1" "copy on a terminal"
expect_eq "$(on_tty "$Z" convert "$PG/c.zarr" "$PG/v2.zarr" --zarr-format 2 | grep -c '^convert  .* 3 chunks')" \
  "1" "convert into another place on a terminal"
expect_eq "$(on_tty "$Z" set "$PG/p.zarr" --value 1 --quiet | grep -c 'set ')" "0" "--quiet: no line on a terminal"
expect_eq "$(on_tty "$Z" --quiet set "$PG/p.zarr" --value 1 | grep -c 'set ')" "0" "--quiet before the subcommand too"
"$Z" set "$PG/p.zarr" --value 2 >"$PG/out" 2>"$PG/err"
expect_eq "$(cat "$PG/out" "$PG/err")" "" "stderr not a terminal: no progress line (even with no delay)"
ZARRPP_PROGRESS_DELAY=0 "$Z" set "$PG/p.zarr" --value 2 2>"$PG/err"
expect_eq "$(cat "$PG/err")" "" "not a terminal, ZARRPP_PROGRESS_DELAY=0: still none"
"$Z" set "$PG/p.zarr" --value 3 --progress 2>"$PG/err"
expect_eq "$(tr '\r' '\n' <"$PG/err" | grep -c '^set  100%  234.4 KiB of 234.4 KiB  3 chunks')" "1" \
  "--progress draws the line into a file too, without terminal codes"
expect_eq "$(grep -c $'\x1b' "$PG/err")" "0" "no escape codes when stderr is a file"
expect_eq "$(on_tty "$Z" set "$PG/p.zarr" --value 1 | grep -c '^set  100%')" "1" "on a terminal without flags"
expect_eq "$(script -qec "$Z set $PG/p.zarr --value 1" /dev/null | grep -c 'set ')" "0" \
  "on a terminal, work quicker than the default half-second delay prints nothing"
expect_eq "$(ZARRPP_PROGRESS_DELAY=0 script -qec "stty cols 30; $Z set $PG/p.zarr --value 1" /dev/null | tr '\r' '\n' |
  sed 's/\x1b\[K//' | awk 'length > 29' | wc -l)" "0" "on a 30-column terminal the line is cut to 29 (it would wrap)"
expect_err "not expected\|excludes" "$Z" set "$PG/p.zarr" --value 1 --progress --quiet
err=$(on_tty "$Z" set "$PG/p.zarr" --from "$PG/d.npy")
expect_eq "$(echo "$err" | grep -c '^zarrpp: error: ')" "1" "an error under the line starts a line of its own"
rm -rf "$PG"

# ---- show: the chunk map and a slice as SVG or PNG -----------------------------------------------------
SH=$T/show
mkdir -p "$SH"
expect_ok "$Z" create "$SH/a.zarr" --shape 6,4 --chunks 4,4 --dtype int32
expect_ok "$Z" set "$SH/a.zarr" --value 1
$PY -c "import numpy as np; np.save('$SH/b.npy', np.full((3, 4), 2, dtype='int32'))"
expect_ok "$Z" prepend "$SH/a.zarr" --axis 0 --from "$SH/b.npy"
# Cells by class, the keys labelled and the ticks, from the parsed SVG.
svg_facts() {
  $PY -c 'import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot(); ns = "{http://www.w3.org/2000/svg}"
cells = [e.get("class") for e in r.iter(ns + "rect") if e.get("class", "").startswith("cell")]
texts = lambda c: [e.text for e in r.iter(ns + "text") if e.get("class") == c]
print(len(cells), sum("stored" in c for c in cells), sum("edge" in c for c in cells), texts("key"), texts("tick"),
      len(list(r.iter(ns + "image"))))' "$1"
}
expect_ok "$Z" show "$SH/a.zarr" --svg "$SH/map.svg"
expect_eq "$(svg_facts "$SH/map.svg")" "3 3 2 ['c/-1/0', 'c/0/0', 'c/1/0'] ['0', '4', '-3', '6', '0'] 0" \
  "show --svg: the chunk map's cells, keys and ticks after a prepend"
expect_ok "$Z" show "$SH/a.zarr" --png "$SH/map.png"
png_size() { $PY -c 'import struct, sys; b = open(sys.argv[1], "rb").read(24)
print(b[:8] == b"\x89PNG\r\n\x1a\n", *struct.unpack(">II", b[16:24]))' "$1"; }
expect_eq "$(png_size "$SH/map.png" | cut -d' ' -f1)" "True" "show --png writes a PNG"
expect_ok "$Z" show "$SH/a.zarr" ":, 1:3" --png "$SH/slice.png" --svg "$SH/slice.svg"
expect_eq "$(svg_facts "$SH/slice.svg" | cut -d' ' -f1,2,3)" "0 0 0" "a slice image has no chunk cells"
expect_eq "$(svg_facts "$SH/slice.svg" | awk '{print $NF}')" "1" "a slice image holds one raster"
expect_eq "$("$Z" show "$SH/a.zarr" "-3:0, :" --coords --svg - | grep -c 'dim 0 \[-3 .. -1\]')" "1" \
  "show --coords --svg - prints the picture of a selection in coordinates"
expect_eq "$(ls -A "$SH" | grep -c zarrpp-tmp)" "0" "show leaves no temporaries"
# What it refuses, leaving the files there as they were.
cp "$SH/map.svg" "$SH/keep.svg"
expect_err "say where the picture goes" "$Z" show "$SH/a.zarr"
expect_err "a directory" "$Z" show "$SH/a.zarr" --png "$SH"
expect_err "does not exist" "$Z" show "$SH/a.zarr" --svg "$SH/no/such/dir/x.svg"
expect_err "same file" "$Z" show "$SH/a.zarr" --svg "$SH/x.png" --png "$SH/x.png"
expect_err "2 dimensions; this one has 1" "$Z" show "$SH/a.zarr" "0" --svg "$SH/keep.svg"
expect_err "index array" "$Z" show "$SH/a.zarr" "[0, 2], :" --svg "$SH/keep.svg"
expect_err "--coords applies to SELECTION" "$Z" show "$SH/a.zarr" --coords --svg "$SH/keep.svg"
expect_err "out of bounds\|outside" "$Z" show "$SH/a.zarr" "20, :" --svg "$SH/keep.svg"
expect_err "librsvg2-bin" env PATH=/nonexistent "$Z" show "$SH/a.zarr" --png "$SH/keep.svg"
expect_ok "$Z" create "$SH/s.zarr" --shape 2,2 --chunks 2,2 --dtype string
expect_err "real numbers" "$Z" show "$SH/s.zarr" ":, :" --svg "$SH/keep.svg"
expect_eq "$(cmp -s "$SH/map.svg" "$SH/keep.svg" && echo same)" "same" "refused shows left the file as it was"
expect_eq "$(ls -A "$SH" | grep -c zarrpp-tmp)" "0" "failed shows leave no temporaries"
# A link named as the output stays a link; the file it points to gets the picture.
ln -s keep.svg "$SH/link.svg"
expect_ok "$Z" show "$SH/a.zarr" ":, :" --svg "$SH/link.svg"
expect_eq "$([ -L "$SH/link.svg" ] && grep -c zarrpp-slice-image "$SH/keep.svg")" "1" "--svg through a link writes its target"
# A dangling link: its target is made, the link stays.
ln -s made-by-show.svg "$SH/dangling.svg"
expect_ok "$Z" show "$SH/a.zarr" --svg "$SH/dangling.svg"
expect_eq "$([ -L "$SH/dangling.svg" ] && grep -c zarrpp-chunk-map "$SH/made-by-show.svg")" "1" "a dangling link's target gets the picture"
# Never into the array it shows (its zarr.json would be replaced).
cp "$SH/a.zarr/zarr.json" "$SH/zarr.json.before"
expect_err "inside the array" "$Z" show "$SH/a.zarr" --svg "$SH/a.zarr/zarr.json"
expect_err "inside the array" "$Z" show "$SH/a.zarr" --png "$SH/a.zarr/c/x.png"
expect_eq "$(cmp -s "$SH/a.zarr/zarr.json" "$SH/zarr.json.before" && echo same)" "same" "the array's zarr.json is untouched"
# Standard output takes either form, not both at once.
expect_eq "$("$Z" show "$SH/a.zarr" --png - 2>/dev/null | head -c 4 | tail -c 3)" "PNG" "--png - writes the PNG to standard output"
expect_err "same output" "$Z" show "$SH/a.zarr" --png - --svg -
# Interrupted while rendering a large map: no temporary is left.
expect_ok "$Z" create "$SH/big.zarr" --shape 100000,100000 --chunks 10,10 --dtype uint8
"$Z" show "$SH/big.zarr" --max-cells 500 --size 4000 --png "$SH/big.png" 2>/dev/null &
sleep 1
kill -TERM $! 2>/dev/null
wait $! 2>/dev/null
expect_eq "$(ls -A "$SH" | grep -c zarrpp-tmp)" "0" "show killed while rendering leaves no temporary"
# The walkthrough writes its before-and-after chunk maps.
expect_ok "$Z" demo "$SH/demo.zarr"
expect_eq "$(svg_facts "$SH/demo.zarr/chunk-map-before.svg" | cut -d' ' -f1,2)" "2 2" "demo: the map before"
expect_eq "$(svg_facts "$SH/demo.zarr/chunk-map-after.svg" | cut -d' ' -f1,2)" "3 3" "demo: the map after"
rm -rf "$SH"

# ---- paths mean what the OS says (issue 68): ".." after a symbolic link goes up from its target
DD="$T/dotdot"
mkdir -p "$DD/real/deep"
ln -s real/deep "$DD/link"
expect_ok "$Z" create "$DD/b.zarr" --shape 2 --chunks 2 --dtype int8 --fill-value 5
expect_ok "$Z" create "$DD/real/b.zarr" --shape 2 --chunks 2 --dtype int8 --fill-value 3
expect_eq "$("$Z" get "$DD/link/../b.zarr")" "[3 3]" "link/../b.zarr is real/b.zarr, as for ls"
expect_ok "$Z" create "$DD/link/../b.zarr" --shape 1 --chunks 1 --dtype int8 --fill-value 4 --overwrite
expect_eq "$("$Z" get "$DD/b.zarr")" "[5 5]" "--overwrite through link/.. leaves ./b.zarr alone"
expect_eq "$("$Z" get "$DD/real/b.zarr")" "[4]" "--overwrite through link/.. replaces real/b.zarr"
expect_ok "$Z" create "$DD/link/../new.zip/a" --shape 1 --chunks 1 --dtype int8 --fill-value 6
expect_eq "$(cd "$DD" && ls real | tr '\n' ' ')" "b.zarr deep new.zip " "a new zip file through link/.. is made in real/"
expect_eq "$("$Z" get "$DD/real/new.zip/a")" "[6]" "and reads there"
expect_err "memory:// store lives only as long as its process" "$Z" create memory://x --shape 1 --chunks 1 --dtype int8
rm -rf "$DD"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
