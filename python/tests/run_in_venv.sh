#!/usr/bin/env bash
# ctest's python.pytest: installs the package into a fresh venv the way python/README.md says
# (pip install --no-build-isolation, reusing this CMake build's module so nothing compiles twice)
# and runs the whole pytest suite against the installed package, not the build tree.
#   run_in_venv.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src=$1 build=$2 py=$3
venv=$build/pytest-venv
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
ZARRPP_CMAKE_BUILD_DIR=$build "$venv/bin/pip" install --no-build-isolation --no-index --no-deps -q "$src"
rm -rf "$src/python/zarrpp.egg-info"
cd "$build"  # away from the source tree, whose python/zarrpp must not shadow the installed package
unset PYTHONPATH
export ZARRPP_TEST_VENV=$venv ZARRPP_SOURCE_DIR=$src ZARRPP_CLI=$build/zarrpp
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$src/python/tests"
