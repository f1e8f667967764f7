#!/usr/bin/env bash
# Runs python/README.md's install command as documented (after scripts/setup.sh, which the CI has
# run): a fresh venv, `pip install --no-build-isolation .` building the extension from scratch
# (static libzarrpp, build/pip), then zarr-python's example with `import zarrpp as zarr` from
# outside the source tree, and pip's view of the package.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$(mktemp -d /tmp/zarrpp-pip-smoke.XXXXXX)
trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv/.venv"
(cd "$root" && "$venv/.venv/bin/pip" install --no-build-isolation -q .)
rm -rf "$root/python/zarrpp.egg-info"
out=$(cd "$venv" && "$venv/.venv/bin/python" "$root/python/examples/upstream_example.py")
if [ "$out" != $'(9, 4)\n((-3, 6), (0, 4))' ]; then
  echo "pip_install_smoke: the example printed: $out" >&2
  exit 1
fi
where=$(cd "$venv" && "$venv/.venv/bin/python" -c "import zarrpp; print(zarrpp.__file__)")
case "$where" in
  "$venv"/.venv/*) ;;
  *) echo "pip_install_smoke: zarrpp imported from $where, not the venv" >&2; exit 1 ;;
esac
shown=$("$venv/.venv/bin/pip" show zarrpp 2>&1 || true)  # captured: grep -q on a pipe would break it (pipefail)
grep -q '^Version: ' <<<"$shown" || { echo "pip_install_smoke: pip does not list zarrpp: $shown" >&2; exit 1; }
deps=$(ldd "$venv"/.venv/lib/python3*/site-packages/zarrpp/_zarrpp*.so)
if grep -q libzarrpp <<<"$deps"; then
  echo "pip_install_smoke: the installed module depends on a libzarrpp outside the package" >&2
  exit 1
fi
echo "pip_install_smoke: installed from scratch; the example ran with import zarrpp as zarr"
