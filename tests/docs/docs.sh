#!/usr/bin/env bash
# Documentation that ships (TAP):
#  - `fureru --help`, the man page (docs/fureru.1) and README.md list the same commands and, for
#    run (and the robot options of run and check), mesh, analyse and sweep, the same options;
#  - everything the docs and the code cite is in the repository: Markdown links and the repository
#    paths named in README.md and docs/*.md exist, docs/NAME.md named anywhere exists, and nothing
#    points outside the repository (the project's reference folders).
set -u
FURERU=$1
ROOT=${FR_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

"$FURERU" --help >"$TMP/help" || bad "--help"
MAN=$ROOT/docs/fureru.1
README=$ROOT/README.md

# options of a section: help "NAME options..." up to a blank line; man ".SS NAME options" up to the
# next .SS/.SH; README "### NAME options" up to the next heading. One --option per line, sorted.
help_opts() { awk -v s="$1 options" 'index($0, s) == 1 { on = 1; next } on && /^$/ { on = 0 } on' "$TMP/help" |
  grep -o -- '--[a-z][a-z-]*' | sort -u; }
man_opts() { awk -v s=".SS $1 options" '$0 == s { on = 1; next } on && /^\.S[SH]/ { on = 0 } on' "$MAN" |
  sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | sort -u; }
readme_opts() { awk -v s="### $1 options" '$0 == s { on = 1; next } on && /^#/ { on = 0 } on && /^\|/' "$README" |
  grep -o -- '--[a-z][a-z-]*' | sort -u; }
for sec in run robot mesh analyse sweep; do
  help_opts $sec >"$TMP/h"; man_opts $sec >"$TMP/m"; readme_opts $sec >"$TMP/r"
  if [ -s "$TMP/h" ] && cmp -s "$TMP/h" "$TMP/m" && cmp -s "$TMP/h" "$TMP/r"; then
    ok "$sec options agree: $(tr '\n' ' ' <"$TMP/h")"
  else
    bad "$sec options differ"; paste "$TMP/h" "$TMP/m" "$TMP/r" | sed 's/^/#  help|man|README: /'
  fi
done
# the commands: `fureru WORD` forms in --help's usage, the man page's SYNOPSIS, README's command line
help_cmds() { awk '/^usage:/ { on = 1; next } on && /^$/ { on = 0 } on' "$TMP/help" |
  grep -o 'fureru [a-z][a-z-]*\( list\| calibrate\| --gather\)\?' | sort -u; }
man_cmds() { awk '/^\.SH SYNOPSIS/ { on = 1; next } on && /^\.SH/ { on = 0 } on' "$MAN" | sed 's/\\-/-/g' |
  awk '/^\.B fureru/ { sub(/^\.B /, ""); print }' | grep -o 'fureru [a-z][a-z-]*\( list\| calibrate\| --gather\)\?' | sort -u; }
readme_cmds() { awk '/^## Command line/ { on = 1; next } on && /^###/ { on = 0 } on' "$README" |
  grep -o 'fureru [a-z][a-z-]*\( list\| calibrate\| --gather\)\?' | sort -u; }
help_cmds >"$TMP/hc"; man_cmds >"$TMP/mc"; readme_cmds >"$TMP/rc"
if [ -s "$TMP/hc" ] && cmp -s "$TMP/hc" "$TMP/mc" && cmp -s "$TMP/hc" "$TMP/rc"; then
  ok "commands agree: $(tr '\n' ',' <"$TMP/hc")"
else
  bad "commands differ"; paste "$TMP/hc" "$TMP/mc" "$TMP/rc" | sed 's/^/#  help|man|README: /'
fi
# every option the program accepts is documented: each --option of --help is in the man page
for o in $(grep -o -- '--[a-z][a-z-]*' "$TMP/help" | sort -u); do
  sed 's/\\-/-/g' "$MAN" | grep -q -- "$o" || bad "$o is in --help, not in the man page"
done
ok "every option of --help is in the man page"

# citations
cd "$ROOT" || exit 1
missing=0
for f in README.md docs/*.md; do
  dir=$(dirname "$f")
  # Markdown links to files
  for t in $(grep -o '](\([^)#]*\)' "$f" | sed 's/^](//' | grep -v '^https\?:' | grep -v '^$'); do
    [ -e "$dir/$t" ] || { echo "# $f: link to $t: no such file"; missing=1; }
  done
  # repository paths in backticks or bare: src/..., docs/... (placeholders and globs skipped)
  # (a path starts a word: build-release/src/... and /usr/lib/... are not repository paths)
  for t in $(grep -o '\(^\|[ `(|]\)\(src\|include\|docs\|config\|scripts\|tests\|bench\|drivers\|examples\|lib\)/[A-Za-z0-9_./-]*' "$f" |
             sed 's/^[ `(|]//; s/[.,:;)]*$//' | sort -u); do
    case $t in *'*'*|*NAME*|*NNN*|*DIR*|*'<'*|*'{'*) continue ;; esac
    # a built executable counts when its source is there (bench/stack/bench_stack.c)
    [ -e "$t" ] || [ -e "$dir/$t" ] || [ -e "$t.c" ] || { echo "# $f: $t: no such path"; missing=1; }
  done
done
[ $missing = 0 ] && ok "links and repository paths in README.md and docs/ exist" || bad "docs cite missing files"
# docs/NAME.md named anywhere in the repository exists
bad_refs=$(git ls-files 2>/dev/null | grep -v '^tests/docs/' | xargs grep -o 'docs/[a-z-]*\.md' 2>/dev/null |
  sed 's/^[^:]*://' | sort -u | while read -r d; do [ -e "$d" ] || echo "$d"; done)
[ -z "$bad_refs" ] && ok "every docs/*.md named in the repository exists" || bad "missing docs: $bad_refs"
# nothing points at the project's reference folders outside the repository
outside=$(git ls-files 2>/dev/null | grep -v '^tests/docs/' | xargs grep -l -e '/work/' -e 'shared/reference' -e 'shared/seeds' 2>/dev/null)
[ -z "$outside" ] && ok "no file cites the reference folders outside the repository" || bad "cites outside files: $outside"

echo "1..$n"
exit $fail
