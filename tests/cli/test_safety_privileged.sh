#!/usr/bin/env bash
# Data safety cases that need what a plain test cannot make (issue 30): a bind mount of a node's
# folder, a folder another user cannot write, a full disk (a small tmpfs), and kills. Mounts are
# made inside `unshare -m`, so nothing outlives the test; the unwritable folder is tested as user
# 65534 (root's permission bits stop nothing). Where the machine refuses (no unshare, not root),
# the case prints why and is skipped, except under CI=true, where a skip fails.
set -uo pipefail
Z=$(realpath "$1")
PY=/usr/bin/python3
T=$(mktemp -d)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
export ZARRPP_LOCK_DIR=$T/locks
mkdir -m 1777 "$ZARRPP_LOCK_DIR"
# shellcheck source=tests/cli/expect.sh
. "$(dirname "$0")/expect.sh"
skip=0
skipped() {
  if [ "${CI:-}" = "true" ]; then bad "skipped under CI: $*"; else skip=$((skip + 1)); echo "SKIP: $*"; fi
}
can_unshare=1
unshare -m true 2>/dev/null || can_unshare=0
# in_ns CMD: runs a bash command in a mount namespace of its own (mounts vanish with it).
in_ns() { unshare -m --propagation private bash -c "$1"; }

# ---- 1. one node reached by two paths: a bind mount of the source -------------------------------
mkdir -p "$T/data" "$T/view"
"$Z" create "$T/data/a.zarr" --shape 8 --chunks 2 --dtype int32 && "$Z" set "$T/data/a.zarr" --value 5
$PY - "$T/data" <<'EOF'
import sys, zarr, numpy as np
z = zarr.open(sys.argv[1] + "/v2.zarr", mode="w", shape=(6,), chunks=(2,), dtype="i2")
z[:] = np.arange(6)
EOF
if [ $can_unshare = 1 ]; then
  in_ns "mount --bind '$T/data' '$T/view' && '$Z' copy '$T/data/a.zarr' '$T/view/a.zarr' --overwrite" >"$T/out" 2>"$T/err"
  rc=$?
  expect_eq "$rc:$(grep -c 'are the same node' "$T/err")" "1:1" "copy onto a bind mount of itself is refused ($(cat "$T/err"))"
  in_ns "mount --bind '$T/data' '$T/view' && '$Z' copy '$T/data/a.zarr' '$T/view/a.zarr/inner' --overwrite" >"$T/out" 2>"$T/err"
  expect_eq "$(grep -c 'destination lies inside the source' "$T/err")" "1" "copy into itself through a bind mount"
  in_ns "mount --bind '$T/data' '$T/view' && '$Z' convert '$T/data/v2.zarr' '$T/view/v2.zarr' --overwrite" >"$T/out" 2>"$T/err"
  expect_eq "$(grep -c 'overlaps the source' "$T/err")" "1" "convert onto a bind mount of its source ($(cat "$T/err"))"
  expect_eq "$("$Z" get "$T/data/a.zarr" ":")" "[5 5 5 5 5 5 5 5]" "the source is intact after the refused copy"
  expect_eq "$($PY -c "import zarr; print(zarr.open('$T/data/v2.zarr', mode='r')[:].tolist())")" "[0, 1, 2, 3, 4, 5]" \
    "the v2 source is intact after the refused convert"
else
  skipped "bind mounts: unshare -m is not allowed here"
fi

# ---- 2. failures part-way -----------------------------------------------------------------------
# create --overwrite where the node's folder cannot be written (its chunk folders can): refused
# before anything is deleted.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  B=$T/ro/b.zarr
  mkdir -p "$T/ro"
  "$Z" create "$B" --shape 4 --chunks 2 --dtype int32 && "$Z" set "$B" --value 3
  chown -R 65534:65534 "$T/ro"
  chmod 555 "$B"
  expect_err "nothing was deleted" as_nobody "$Z" create "$B" --shape 4 --chunks 2 --dtype int32 --overwrite
  expect_eq "$("$Z" get "$B" ":")" "[3 3 3 3]" "the old array is whole after the refused overwrite"
  chmod 755 "$B"
  # A chunk folder cannot be written: also refused before anything is deleted (every folder the
  # removal deletes in is probed first).
  chmod 555 "$B/c"
  expect_err "nothing was deleted" as_nobody "$Z" create "$B" --shape 4 --chunks 2 --dtype int32 --overwrite
  expect_eq "$("$Z" get "$B" ":")" "[3 3 3 3]" "the old array is whole after the refused overwrite (chunk folder)"
  chmod 755 "$B/c"
  as_nobody "$Z" create "$B" --shape 4 --chunks 2 --dtype int32 --overwrite
  expect_eq "$("$Z" info "$B" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["chunks_stored"])')" "0" \
    "the overwrite works once the folders can be written"
else
  skipped "unwritable folders: not root, or no setpriv"
fi

# A full disk: append, prepend and resize are not applied, and what they wrote goes again; get
# --out leaves no temporary, also when the disk is full before its header.
if [ $can_unshare = 1 ]; then
  mkdir -p "$T/small"
  in_ns "
    mount -t tmpfs -o size=1m tmpfs '$T/small' || exit 3
    C='$T/small/c.zarr'
    '$Z' create \"\$C\" --shape 4,256 --chunks 2,256 --dtype int32 --compressor none || exit 4
    '$Z' set \"\$C\" --value 1 || exit 4
    $PY -c \"import numpy as np; np.save('$T/rows.npy', np.full((1024, 256), 2, dtype='int32'))\"
    before=\$(ls -R \"\$C\" | md5sum)
    for op in append prepend; do
      '$Z' \$op \"\$C\" --axis 0 --from '$T/rows.npy' 2>'$T/err.'\$op
      echo \"\$op rc=\$? \$(grep -c 'not applied; the array is unchanged' '$T/err.'\$op) \$([ \"\$(ls -R \"\$C\" | md5sum)\" = \"\$before\" ] && echo same)\"
    done
    '$Z' resize \"\$C\" --shape 3,256 || exit 4
    dd if=/dev/zero of='$T/small/fill' bs=4k 2>/dev/null
    '$Z' resize \"\$C\" --shape 5,256 2>'$T/err.resize'
    echo \"resize rc=\$? \$(grep -c 'not applied; the array is unchanged' '$T/err.resize')\"
    '$Z' info \"\$C\" --json | $PY -c 'import json,sys; print(\"shape\", json.load(sys.stdin)[\"shape\"])'
    '$Z' get \"\$C\" ':' --out '$T/small/out.npy' 2>'$T/err.get'
    echo \"get rc=\$? \$(ls -A '$T/small' | grep -c zarrpp-tmp)\"
  " >"$T/full.out" 2>&1
  expect_eq "$(cat "$T/full.out")" "append rc=1 1 same
prepend rc=1 1 same
resize rc=1 1
shape [3, 256]
get rc=1 0" "a full disk ($(cat "$T"/err.* 2>/dev/null | head -5))"
else
  skipped "full disk: unshare -m is not allowed here"
fi

# A killed get --out: SIGTERM (timeout's default) leaves no temporary; SIGKILL's is swept by the
# next get --out of that file.
D=$T/big.zarr
"$Z" create "$D" --shape 2048,4096 --chunks 256,4096 --dtype float64 && "$Z" set "$D" --value 1.5
left=0
for delay in 0.05 0.1 0.15 0.2 0.3; do
  timeout -s TERM "$delay" "$Z" get "$D" ":" --out "$T/killed.npy" 2>/dev/null
  left=$((left + $(ls -A "$T" | grep -c 'killed.npy.zarrpp-tmp')))
done
expect_eq "$left" "0" "SIGTERM during get --out leaves no temporary"
for delay in 0.05 0.1 0.2; do timeout -s KILL "$delay" "$Z" get "$D" ":" --out "$T/killed.npy" 2>/dev/null; done
sleep 2  # timeout returns before a killed process with much memory has finished exiting
"$Z" get "$D" "0:2, 0:2" --out "$T/killed.npy"
expect_eq "$(ls -A "$T" | grep -c 'killed.npy.zarrpp-tmp')" "0" "the next get --out sweeps a killed writer's temporary"

# A killed copy --overwrite leaves the old node whole, the new one whole, or no node: never the
# old zarr.json over deleted chunks.
S=$T/src.zarr
"$Z" create "$S" --shape 2048,2048 --chunks 128,2048 --dtype int32 && "$Z" set "$S" --value 7
torn=0
for delay in 0.02 0.05 0.08 0.1 0.12 0.15 0.2 0.25 0.3 0.4; do
  rm -rf "$T/dst.zarr"
  "$Z" create "$T/dst.zarr" --shape 2048,2048 --chunks 128,2048 --dtype int32 && "$Z" set "$T/dst.zarr" --value 1
  timeout -s KILL "$delay" "$Z" copy "$S" "$T/dst.zarr" --overwrite >/dev/null 2>&1
  if [ -e "$T/dst.zarr/zarr.json" ]; then
    v=$("$Z" get "$T/dst.zarr" "::512, ::1024" 2>&1 | tr -d '[] \n')
    case "$v" in 11111111 | 77777777) ;; *) torn=$((torn + 1)); echo "torn after $delay s: $v" ;; esac
  fi
done
expect_eq "$torn" "0" "killed copy --overwrite never leaves a valid-looking wreck"

# ---- 3. hostile corners -------------------------------------------------------------------------
mkfifo "$T/fifo"
expect_err "is a FIFO, not a directory" timeout 10 "$Z" info "$T/fifo"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
