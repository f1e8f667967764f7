# Shared by the CLI test scripts (sourced after they set T, the scratch folder): counters and the
# checks, each counting a pass or printing "FAIL: ..." and counting a failure.
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
  if [ "$(wc -l <"$T/err")" -eq 1 ] && head -1 "$T/err" | grep -q -- "^zarrpp: error: .*$pat"; then ok; else bad "$*: stderr was: $(cat "$T/err")"; fi
}
expect_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: expected [$2], got [$1]"; fi; }
