#!/usr/bin/env bash
# The style the tools enforce (ctest runs the first three as style.*):
#   bash scripts/lint.sh format-check      every C++ file formatted as .clang-format says (names the others)
#   bash scripts/lint.sh python            flake8 (.flake8) on every Python file; mypy (python/mypy.ini) on the package;
#                                          no package function over 80 lines
#   bash scripts/lint.sh tidy BUILD [BASE] clang-tidy (.clang-tidy) on the C++ sources changed since BASE
#                                          (default: the last commit), with BUILD's compile_commands.json
#   bash scripts/lint.sh tidy-all BUILD    clang-tidy on every library, CLI and test source (tens of minutes;
#                                          not in CI)
#   bash scripts/lint.sh format            reformat every C++ file in place
# Tools: Debian's clang-format-19 and clang-tidy-19, flake8 and mypy (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-19}
CLANG_TIDY=${CLANG_TIDY:-clang-tidy-19}
PY=${PYTHON:-/usr/bin/python3}

cxx_files() { git ls-files '*.cpp' '*.hpp' '*.h' '*.cc'; }

# The translation units clang-tidy checks for a list of changed files: each changed .cpp, and for a
# changed header the .cpp beside it (its checks reach headers through HeaderFilterRegex).
units_for() {
  local build=$1
  shift
  for f in "$@"; do
    case "$f" in
      *.cpp) echo "$f" ;;
      *.hpp | *.h)
        local stem=${f%.*}
        stem=${stem#include/zarrpp/}
        for c in "src/$stem.cpp" "${f%.*}.cpp"; do [ -f "$c" ] && echo "$c"; done
        ;;
    esac
  done | sort -u | while read -r u; do
    grep -q "\"file\": \"$(pwd)/$u\"" "$build/compile_commands.json" && echo "$u"
  done
  return 0
}

tidy() {
  local build=$1
  shift
  [ -f "$build/compile_commands.json" ] || { echo "lint: $build/compile_commands.json not found (configure first)" >&2; exit 2; }
  if [ $# -eq 0 ]; then
    echo "lint: no C++ source changed; clang-tidy has nothing to check"
    return 0
  fi
  echo "lint: clang-tidy on $# file(s): $*"
  local jobs
  jobs=$(nproc)
  printf '%s\n' "$@" | xargs -P "$jobs" -n 1 "$CLANG_TIDY" -p "$build" --quiet --warnings-as-errors='*' \
    --extra-arg=-Wno-unknown-warning-option
}

case "${1:-}" in
  format)
    cxx_files | xargs "$CLANG_FORMAT" -i
    ;;
  format-check)
    bad=$(cxx_files | xargs -n 20 "$CLANG_FORMAT" --dry-run 2>&1 | grep -o '^[^:]*:[0-9]*:[0-9]*: warning' | cut -d: -f1 | sort -u || true)
    if [ -n "$bad" ]; then
      echo "lint: not formatted (run: bash scripts/lint.sh format):"
      echo "$bad" | sed 's/^/  /'
      exit 1
    fi
    echo "lint: $(cxx_files | wc -l) C++ files formatted"
    ;;
  python)
    git ls-files '*.py' | xargs "$PY" -m flake8
    echo "lint: flake8 clean on $(git ls-files '*.py' | wc -l) files"
    (cd python && "$PY" -m mypy --config-file mypy.ini zarrpp)
    # The package is glue: no function longer than 80 lines (signature and docstring included).
    "$PY" - python/zarrpp/*.py <<'PYEOF'
import ast, sys
long = [f"{path}:{node.lineno}: {node.name} is {node.end_lineno - node.lineno + 1} lines (at most 80)"
        for path in sys.argv[1:] for node in ast.walk(ast.parse(open(path).read()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80]
print("\n".join(long) or "lint: no Python function over 80 lines")
sys.exit(1 if long else 0)
PYEOF
    ;;
  tidy)
    build=${2:?usage: lint.sh tidy BUILD [BASE]}
    base=${3:-HEAD~1}
    if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
      echo "lint: no commit '$base' to compare with (a shallow clone?); clang-tidy checks nothing" >&2
      exit 0
    fi
    mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp' '*.hpp' '*.h')
    mapfile -t units < <(units_for "$build" "${changed[@]+"${changed[@]}"}")
    tidy "$build" "${units[@]+"${units[@]}"}"
    ;;
  tidy-all)
    build=${2:?usage: lint.sh tidy-all BUILD}
    mapfile -t units < <(units_for "$build" $(git ls-files 'src/*.cpp' 'tools/*.cpp' 'tests/*.cpp' 'python/src/*.cpp'))
    tidy "$build" "${units[@]}"
    ;;
  *)
    sed -n 2,10p "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
