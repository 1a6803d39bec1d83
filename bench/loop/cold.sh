#!/usr/bin/env bash
# Cold ticks: the real-time step time of a scene against the same work back to back (--fast),
# without and with --spin (the tick thread waits busy for the last US microseconds before each
# deadline instead of letting its CPU halt and other processes evict its caches). ROUNDS rounds of
# SECONDS each in one job; medians of the step p50 and the ratios to --fast (target <= 1.2).
# usage: cold.sh FURERU SCENE [ROUNDS] [SECONDS] [SPIN_US]
set -euo pipefail
FURERU=$1
SCENE=$2
ROUNDS=${3:-3}
SECS=${4:-5}
SPIN=${5:-850}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for r in $(seq 1 "$ROUNDS"); do
  "$FURERU" run "$SCENE" --device virtual --headless --fast --duration "$SECS" |
    awk '/step time/ {print $4}' >>"$TMP/fast"
  "$FURERU" run "$SCENE" --device virtual --headless --duration "$SECS" >"$TMP/rt$r.txt"
  awk '/step time/ {print $4}' "$TMP/rt$r.txt" >>"$TMP/rt"
  "$FURERU" run "$SCENE" --device virtual --headless --duration "$SECS" --spin "$SPIN" >"$TMP/sp$r.txt"
  awk '/step time/ {print $4}' "$TMP/sp$r.txt" >>"$TMP/sp"
done
f=$(median <"$TMP/fast"); r=$(median <"$TMP/rt"); s=$(median <"$TMP/sp")
echo "step p50, median of $ROUNDS rounds of ${SECS} s (us):"
echo "  --fast (back to back)       $f"
awk -v a="$r" -v b="$f" 'BEGIN {printf "  real time                   %s  (%.2f x --fast)\n", a, a / b}'
awk -v a="$s" -v b="$f" -v u="$SPIN" 'BEGIN {printf "  real time, --spin %s       %s  (%.2f x --fast; target <= 1.2)\n", u, a, a / b}'
grep -h "scheduling\|spin " "$TMP/rt1.txt" "$TMP/sp1.txt" || true
