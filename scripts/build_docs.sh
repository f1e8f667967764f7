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
ZARRPP_SNIPPET_PYTHONPATH="$build/python:$meta" \
ZARRPP_BUILD_DIR="$build" ZARRPP_DOXYGEN_XML="$out/xml" PYTHONPATH="$build/python" \
  /usr/bin/python3 -m sphinx -W --keep-going -E -b html -d "$out/doctrees" "$src/docs" "$out/html"
echo "build_docs: the site is in $out/html (index.html)"
