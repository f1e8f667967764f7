#!/usr/bin/env bash
# Runs the README's main command, `bash scripts/demo.sh`, exactly as documented, and checks that the
# walkthrough shows what it promises: the new chunk c/-1/0, the old chunks unchanged byte for
# byte, the new domain, and the data read back.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(cd "$root" && bash scripts/demo.sh 2>&1) || { echo "$out" >&2; echo "demo_smoke: scripts/demo.sh failed" >&2; exit 1; }
missing=0
for want in "chunk grid 'regular'," "domain ((-3, 6), (0, 4))" "c/0/0    " "c/-1/0 is new" "[[2 2 2 2]" " [1 1 1 1]]" "Done: prepending wrote one new chunk"; do
  if ! grep -qF -- "$want" <<<"$out"; then
    echo "demo_smoke: the walkthrough does not show '$want'" >&2
    missing=1
  fi
done
if [ "$(grep -c ' unchanged$' <<<"$out")" -ne 2 ]; then
  echo "demo_smoke: expected both old chunks reported unchanged" >&2
  missing=1
fi
if [ "$missing" -ne 0 ]; then
  echo "$out" >&2
  exit 1
fi
echo "demo_smoke: scripts/demo.sh ran as the README says and showed every step"
