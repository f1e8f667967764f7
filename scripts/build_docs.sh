#!/usr/bin/env bash
# Builds the documentation site (docs/) into BUILD/docs/html, running every snippet on it against
# the build in BUILD and checking that the reference covers every public name. Warnings are errors.
#   bash scripts/build_docs.sh build/release        then open build/release/docs/html/index.html
# Needs doxygen, python3-sphinx, python3-myst-parser and python3-breathe (scripts/setup.sh).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:?usage: build_docs.sh BUILD_DIR}" && pwd)"
for f in zarrpp libzarrpp.so python/zarrpp/__init__.py; do
  [ -e "$build/$f" ] || { echo "build_docs: $build/$f is missing: build first (cmake --build $1)" >&2; exit 1; }
done
out="$build/docs"
rm -rf "$out/xml" "$out/html" "$out/doctrees"
mkdir -p "$out"
# Doxygen reads include/zarrpp (paths in docs/Doxyfile are relative to the source folder).
(cd "$src" && { cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $out"; } | doxygen - >"$out/doxygen.log" 2>&1) || {
  cat "$out/doxygen.log" >&2
  exit 1
}
# The package's metadata beside the build tree's package, so Python finds its entry points (xarray's
# engine="zarrpp") as in an installed package: pyproject.toml's, written as pip would.
meta="$out/python-metadata"
rm -rf "$meta" && mkdir -p "$meta/zarrpp-0.dist-info"
/usr/bin/python3 - "$src/pyproject.toml" "$meta/zarrpp-0.dist-info" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
with open(f"{sys.argv[2]}/METADATA", "w") as f:
    f.write(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: 0\n")
with open(f"{sys.argv[2]}/entry_points.txt", "w") as f:
    for group, entries in project.get("entry-points", {}).items():
        f.write(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
PY
# The pictures the guides show, drawn by this build's CLI into the site's pictures/ folder (conf.py's
# html_extra_path): the walkthrough's chunk maps before and after its prepend, a sharded time
# series grown in front, and a slice of values; each SVG also as PNG (rsvg-convert).
extra="$out/extra"
pics="$extra/pictures"
rm -rf "$extra" && mkdir -p "$pics"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
z="$build/zarrpp"
"$z" demo "$work/demo.zarr" >/dev/null
cp "$work/demo.zarr/chunk-map-before.svg" "$work/demo.zarr/chunk-map-after.svg" "$pics/"
/usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
y, x = np.mgrid[0:240, 0:360]
np.save(f"{sys.argv[1]}/wave.npy", np.sin(x / 30.0) * np.cos(y / 25.0) + y / 240.0)
np.save(f"{sys.argv[1]}/early.npy", np.cos(np.mgrid[0:45, 0:360][1] / 30.0) - 1.0)
PY
"$z" create "$work/series.zarr" --shape 240,360 --chunks 30,40 --shards 60,120 --dtype float64 \
  --dimension-names time,station
"$z" --quiet set "$work/series.zarr" --from "$work/wave.npy"
"$z" --quiet prepend "$work/series.zarr" --axis 0 --from "$work/early.npy"
"$z" --quiet resize "$work/series.zarr" --domain -45:300,0:360
"$z" show "$work/series.zarr" --svg "$pics/sharded-series.svg"
"$z" show "$work/series.zarr" "::2, :" --svg "$pics/series-values.svg"
for f in "$pics"/*.svg; do rsvg-convert --background-color white -o "${f%.svg}.png" "$f"; done
ZARRPP_DOCS_EXTRA="$extra" ZARRPP_SNIPPET_PYTHONPATH="$build/python:$meta" \
ZARRPP_BUILD_DIR="$build" ZARRPP_DOXYGEN_XML="$out/xml" PYTHONPATH="$build/python" \
  /usr/bin/python3 -m sphinx -W --keep-going -E -b html -d "$out/doctrees" "$src/docs" "$out/html"
# Every picture a page names was drawn.
named=$(grep -oh 'src="[^"]*pictures/[^"]*"' -r "$out/html" --include='*.html' | sed 's|.*pictures/||; s|"$||' | sort -u)
[ -n "$named" ] || { echo "build_docs: no page shows a picture (docs/guide/growth.md should)" >&2; exit 1; }
for f in $named; do
  [ -s "$out/html/pictures/$f" ] || { echo "build_docs: a page shows pictures/$f, which was not drawn" >&2; exit 1; }
done
echo "build_docs: the site is in $out/html (index.html)"
