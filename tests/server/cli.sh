#!/usr/bin/env bash
# The fureru command line, end to end: exit statuses, error locations, determinism, summary.
set -u
FURERU=$1
ROOT=${FR_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
expect_rc() { # expected-rc description command...
  local want=$1 what=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else bad "$what: exit $rc, expected $want"; cat "$TMP/err"; fi
}

expect_rc 0 "--help" "$FURERU" --help
expect_rc 0 "--version" "$FURERU" --version
grep -q "^fureru [0-9]" "$TMP/out" && ok "version printed" || bad "version printed"
expect_rc 2 "no arguments" "$FURERU"
expect_rc 2 "unknown command" "$FURERU" fly
expect_rc 2 "unknown option" "$FURERU" run "$ROOT/config/scenes/default.yaml" --warp
expect_rc 2 "missing scene file" "$FURERU" run "$TMP/none.yaml"
grep -q "none.yaml" "$TMP/err" && ok "missing file named" || bad "missing file named"
expect_rc 2 "bad --log-every" "$FURERU" run "$ROOT/config/scenes/default.yaml" --log-every 0
expect_rc 2 "bad --duration" "$FURERU" run "$ROOT/config/scenes/default.yaml" --duration -1
expect_rc 2 "bad --set" "$FURERU" check "$ROOT/config/scenes/default.yaml" --set world.dt=-1
grep -q -- "--set: error: field 'world.dt'" "$TMP/err" && ok "--set error located" || bad "--set error located"

# every malformed scene: exit 2 and FILE:LINE:COL plus the field
for f in "$ROOT"/tests/scene/bad/*.yaml; do
  read -r _ _ loc field < "$f"
  "$FURERU" check "$f" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ $rc -ne 2 ]; then bad "$(basename "$f"): exit $rc"; continue; fi
  if ! grep -qF "$f:$loc: error:" "$TMP/err"; then bad "$(basename "$f"): location $loc not in: $(cat "$TMP/err")"; continue; fi
  if [ "$field" != "-" ] && ! grep -qF "field '$field'" "$TMP/err"; then bad "$(basename "$f"): field $field not named"; continue; fi
  ok "$(basename "$f") rejected at $loc"
done

# shipped scenes validate
for f in "$ROOT"/config/scenes/*.yaml; do expect_rc 0 "check $(basename "$f")" "$FURERU" check "$f"; done

# run prints the summary; two --fast runs give byte-identical CSV
expect_rc 0 "run default --fast" "$FURERU" run "$ROOT/config/scenes/default.yaml" --fast --headless --duration 2 --log "$TMP/a.csv"
grep -q "ticks *2000" "$TMP/out" && grep -q "real-time factor" "$TMP/out" && grep -q "step time" "$TMP/out" \
  && ok "summary printed" || { bad "summary printed"; cat "$TMP/out"; }
expect_rc 0 "run default --fast again" "$FURERU" run "$ROOT/config/scenes/default.yaml" --fast --headless --duration 2 --log "$TMP/b.csv"
cmp -s "$TMP/a.csv" "$TMP/b.csv" && ok "--fast runs byte-identical" || bad "--fast runs differ"
[ "$(wc -l < "$TMP/a.csv")" -eq 2002 ] && ok "one row per tick plus header and t=0" || bad "row count $(wc -l < "$TMP/a.csv")"
expect_rc 0 "real-time run" "$FURERU" run "$ROOT/config/scenes/default.yaml" --headless --duration 0.2
grep -q "wake-up latency" "$TMP/out" && ok "real-time summary has latency" || bad "latency missing"
expect_rc 1 "unwritable log is a runtime failure" "$FURERU" run "$ROOT/config/scenes/default.yaml" --fast --duration 0.1 --log /nonexistent/dir/x.csv

echo "1..$n"
exit $fail
