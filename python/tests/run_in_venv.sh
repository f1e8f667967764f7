#!/usr/bin/env bash
# ctest's python.* tests. `install` puts the package into a fresh venv the way python/README.md says
# (pip install --no-build-isolation, reusing this CMake build's module so nothing compiles twice);
# `run` runs pytest (on the given files, or the whole suite) against that installed package, not
# the build tree. ctest runs `install` once (python.venv) and several `run`s beside each other.
#   run_in_venv.sh SOURCE_DIR BUILD_DIR PYTHON install
#   run_in_venv.sh SOURCE_DIR BUILD_DIR PYTHON run [PYTEST_ARGUMENTS...]
# (a file name is one in python/tests; an absolute path is taken as it is)
set -euo pipefail
src=$1 build=$2 py=$3 mode=$4
shift 4
venv=$build/pytest-venv
if [ "$mode" = install ]; then
  rm -rf "$venv"
  "$py" -m venv --system-site-packages "$venv"
  ZARRPP_CMAKE_BUILD_DIR=$build "$venv/bin/pip" install --no-build-isolation --no-index --no-deps -q "$src"
  rm -rf "$src/python/zarrpp.egg-info"
  exit 0
fi
[ "$mode" = run ] || { echo "run_in_venv.sh: unknown mode '$mode' (install or run)" >&2; exit 2; }
[ -x "$venv/bin/python" ] || { echo "run_in_venv.sh: no venv at $venv: run the install mode first (ctest's python.venv)" >&2; exit 2; }
cd "$build"  # away from the source tree, whose python/zarrpp must not shadow the installed package
unset PYTHONPATH
export ZARRPP_TEST_VENV=$venv ZARRPP_SOURCE_DIR=$src ZARRPP_CLI=$build/zarrpp
args=() files=0
for a in "$@"; do
  case $a in -*) args+=("$a") ;; /*) args+=("$a") files=1 ;; *) args+=("$src/python/tests/$a") files=1 ;; esac
done
[ $files = 1 ] || args+=("$src/python/tests")
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "${args[@]}"
