#!/usr/bin/env bash
# Wake-up latency of the fureru tick loop vs cyclictest, side by side in one job.
# Alternates cyclictest and `fureru run` (real time, SCHED_FIFO 80 + mlockall when permitted)
# ROUNDS times for SECONDS each and reports the median p50/p99 of each and the p99 ratio
# (target: fureru p99 <= 1.2 x cyclictest p99).
# usage: latency.sh FURERU SCENE [ROUNDS] [SECONDS]
set -euo pipefail
FURERU=$1
SCENE=$2
ROUNDS=${3:-3}
SECS=${4:-5}
LOOPS=$((SECS * 1000))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v cyclictest >/dev/null || { echo "cyclictest not found (Debian package rt-tests)"; exit 77; }

# percentile from a cyclictest histogram (lines "LAT COUNT", µs)
hist_pct() { awk -v q="$2" '/^[0-9]/ {c[$1+0]+=$2; n+=$2} END {want=q*n; s=0; for (i=0;i<100000;i++) if (i in c) {s+=c[i]; if (s>=want) {print i; exit}} print "overflow"}' "$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for r in $(seq 1 "$ROUNDS"); do
  cyclictest -m -p80 -i1000 -l "$LOOPS" -q -h 20000 > "$TMP/ct$r.txt" 2>/dev/null || true
  echo "$(hist_pct "$TMP/ct$r.txt" 0.5) $(hist_pct "$TMP/ct$r.txt" 0.99)" >> "$TMP/ct"
  "$FURERU" run "$SCENE" --headless --duration "$SECS" > "$TMP/fr$r.txt"
  awk '/wake-up latency/ {print $4, $7}' "$TMP/fr$r.txt" >> "$TMP/fr"
done
ct50=$(cut -d' ' -f1 "$TMP/ct" | median); ct99=$(cut -d' ' -f2 "$TMP/ct" | median)
fr50=$(cut -d' ' -f1 "$TMP/fr" | median); fr99=$(cut -d' ' -f2 "$TMP/fr" | median)
echo "wake-up latency, median of $ROUNDS rounds of ${SECS} s (us):"
echo "  cyclictest -m -p80 -i1000  p50 $ct50  p99 $ct99"
echo "  fureru run (1 kHz)         p50 $fr50  p99 $fr99"
awk -v a="$fr99" -v b="$ct99" 'BEGIN {printf "  p99 ratio fureru/cyclictest = %.2f (target <= 1.2)\n", a / b}'
grep -h "scheduling" "$TMP/fr1.txt" || true
