#!/usr/bin/env bash
# The viewer's cost to the tick: `fureru run` of a scene in real time, alternately headless and
# with the viewer drawing at full rate (under an Xvfb of its own when there is no display: Mesa's software
# OpenGL, the heaviest case), ROUNDS times for SECONDS each, in one job. Reports the median
# wake-up and step p50/p99 of each (with the spread over the rounds) and the p99 ratios (target:
# within 10 %, ratio <= 1.10), also paired round by round; the interrupts the tick's CPU (the
# last) took per second, by kind,
# medians of the rounds; and where each thread of the viewer run was allowed to run and ran.
# With LOAD_CONTROL=1 each round also runs headless beside a busy loop (pure arithmetic, no memory
# traffic, no system calls) on the CPUs the viewer uses: what keeping those CPUs busy costs the
# tick by itself, whatever the work.
# usage: load.sh FURERU SCENE [ROUNDS] [SECONDS] [RUN OPTIONS...] (e.g. --spin 900, given to all)
set -euo pipefail
FURERU=$1
SCENE=$2
ROUNDS=${3:-3}
SECS=${4:-10}
shift $(($# < 4 ? $# : 4))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
NCPU=$(nproc)
XVFB=""
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  command -v Xvfb >/dev/null || { echo "no display and no Xvfb"; exit 77; }
  # the X server is a process of its own: kept off the last CPU, the one the tick thread takes
  taskset -c 0-$((NCPU - 2 > 0 ? NCPU - 2 : 0)) Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$TMP/dpy" 2>/dev/null &
  XVFB=$!
  for _ in $(seq 1 100); do [ -s "$TMP/dpy" ] && break; sleep 0.05; done
  export DISPLAY=:$(cat "$TMP/dpy")
fi
trap 'rm -rf "$TMP"; [ -z "$XVFB" ] || kill "$XVFB" 2>/dev/null' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
spread() { sort -n | awk '{a[NR]=$1} END {printf "%s-%s", a[1], a[NR]}'; }
# interrupts of the last CPU (the tick's) from /proc/interrupts: "kind count" lines, the
# devices' lines summed as "dev"
irqs() {
  awk -v col=$((NCPU + 1)) 'NR > 1 && NF >= col {
      k = $1; sub(":", "", k); v = $col
      if (k ~ /^[0-9]+$/) dev += v; else if (k ~ /^(LOC|RES|CAL|TLB|IWI|HYP)$/) print k, v
    } END { print "dev", dev }' /proc/interrupts
}
irqdiff() { # before after seconds -> "LOC n RES n ..." per second
  awk -v s="$3" 'NR == FNR { a[$1] = $2; next } { printf "%s %.0f\n", $1, ($2 - a[$1]) / s }' "$1" "$2"
}
# every thread of a process: id, name, scheduling policy, the CPUs it may use, the last it ran on
threads() {
  for t in /proc/"$1"/task/*; do
    [ -r "$t/stat" ] || continue
    read -r -a st <<<"$(sed 's/.*) //' "$t/stat")"
    printf "    %-8s %-16s policy %s  allowed %-6s last on CPU %s\n" "$(basename "$t")" \
      "$(cat "$t/comm")" "${st[38]}" "$(awk '/Cpus_allowed_list/ {print $2}' "$t/status")" "${st[36]}"
  done
}
stats() {
  awk '/wake-up latency/ {w50=$4; w99=$7} /step time/ {s50=$4; s99=$7}
       /other processes used/ {o=$0; sub(/.*other processes used /, "", o); sub(/ %.*/, "", o)}
       END {print w50, w99, s50, s99, o == "" ? "?" : o}' "$1"
}
for r in $(seq 1 "$ROUNDS"); do
  irqs >"$TMP/i0"
  "$FURERU" run "$SCENE" --device virtual --headless --duration "$SECS" "$@" >"$TMP/h$r.txt"
  irqs >"$TMP/i1"
  irqdiff "$TMP/i0" "$TMP/i1" "$SECS" >"$TMP/hi$r"
  stats "$TMP/h$r.txt" >>"$TMP/h"
  irqs >"$TMP/i0"
  "$FURERU" run "$SCENE" --device virtual --duration "$SECS" "$@" >"$TMP/v$r.txt" 2>"$TMP/v$r.err" &
  pid=$!
  # the viewer stays open after the run; SIGINT closes it once the summary is out
  for i in $(seq 1 $((SECS * 10 + 600))); do
    grep -q "run is over" "$TMP/v$r.err" 2>/dev/null && break
    [ "$r$i" != "1$((SECS * 5))" ] || threads $pid >"$TMP/threads"
    sleep 0.1
  done
  irqs >"$TMP/i1"
  irqdiff "$TMP/i0" "$TMP/i1" "$SECS" >"$TMP/vi$r"
  kill -INT $pid 2>/dev/null || true
  wait $pid || true
  stats "$TMP/v$r.txt" >>"$TMP/v"
  if [ "${LOAD_CONTROL:-0}" = 1 ]; then
    taskset -c 0-$((NCPU - 2 > 0 ? NCPU - 2 : 0)) bash -c 'while :; do :; done' &
    busy=$!
    irqs >"$TMP/i0"
    "$FURERU" run "$SCENE" --device virtual --headless --duration "$SECS" "$@" >"$TMP/c$r.txt"
    irqs >"$TMP/i1"
    kill $busy
    wait $busy 2>/dev/null || true
    irqdiff "$TMP/i0" "$TMP/i1" "$SECS" >"$TMP/ci$r"
    stats "$TMP/c$r.txt" >>"$TMP/c"
  fi
done
sets="h v"
[ "${LOAD_CONTROL:-0}" != 1 ] || sets="h v c"
for f in $sets; do
  for c in 1 2 3 4 5; do
    eval "${f}$c=$(cut -d' ' -f$c "$TMP/$f" | median)"
    eval "${f}r$c=$(cut -d' ' -f$c "$TMP/$f" | spread)"
  done
done
echo "tick timing, median of $ROUNDS rounds of ${SECS} s in real time (us; the rounds' range in brackets):"
echo "  headless     wake-up p50 $h1 [$hr1] p99 $h2 [$hr2]   step p50 $h3 [$hr3] p99 $h4 [$hr4]"
echo "  with viewer  wake-up p50 $v1 [$vr1] p99 $v2 [$vr2]   step p50 $v3 [$vr3] p99 $v4 [$vr4]"
[ "${LOAD_CONTROL:-0}" != 1 ] ||
  echo "  busy loop    wake-up p50 $c1 [$cr1] p99 $c2 [$cr2]   step p50 $c3 [$cr3] p99 $c4 [$cr4]   (headless, CPUs 0-$((NCPU - 2)) kept busy)"
awk -v a="$v2" -v b="$h2" -v c="$v4" -v d="$h4" 'BEGIN {
  printf "  p99 ratios viewer/headless: wake-up %.2f, step %.2f (target <= 1.10)\n", a / b, c / d }'
# paired: each round's viewer p99 over the headless p99 of the same round (the load of the shared
# machine drifts between rounds more than it does within one)
paste -d' ' "$TMP/h" "$TMP/v" | awk '{print $7 / $2, $9 / $4}' >"$TMP/pr"
echo "  paired p99 ratios (median of the rounds' viewer/headless, [range]): wake-up" \
  "$(cut -d' ' -f1 "$TMP/pr" | median) [$(cut -d' ' -f1 "$TMP/pr" | spread)], step" \
  "$(cut -d' ' -f2 "$TMP/pr" | median) [$(cut -d' ' -f2 "$TMP/pr" | spread)]"
grep -h "scheduling" "$TMP/v1.txt" || true
echo "  other processes' share of the tick's CPU, median: headless $h5 [$hr5] %, with viewer $v5 [$vr5] %${c5:+, busy loop $c5 [$cr5] %}"
grep -h "frames in" "$TMP/v"*.err | sed 's/^fureru: /  /' || true
printf "  interrupts on CPU %d per second, median (headless / with viewer%s):" $((NCPU - 1)) \
  "$([ "${LOAD_CONTROL:-0}" != 1 ] || echo " / busy loop")"
for k in LOC RES CAL TLB IWI HYP dev; do
  h=$(cat "$TMP"/hi* | awk -v k=$k '$1 == k {print $2}' | median)
  v=$(cat "$TMP"/vi* | awk -v k=$k '$1 == k {print $2}' | median)
  c=""
  [ "${LOAD_CONTROL:-0}" != 1 ] || c=/$(cat "$TMP"/ci* | awk -v k=$k '$1 == k {print $2}' | median)
  printf " %s %s/%s%s" "$k" "${h:-?}" "${v:-?}" "$c"
done
echo
if [ -s "$TMP/threads" ]; then
  echo "  the viewer run's threads halfway through round 1 (policy 0 other, 1 FIFO, 3 batch, 5 idle):"
  cat "$TMP/threads"
fi
