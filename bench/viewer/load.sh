#!/usr/bin/env bash
# The viewer's cost to the tick: `fureru run` of a scene in real time, alternately headless and
# with the viewer drawing at full rate (under an Xvfb of its own when there is no display: Mesa's software
# OpenGL, the heaviest case), ROUNDS times for SECONDS each, in one job. Reports the median
# wake-up and step p50/p99 of each and the p99 ratios (target: within 10 %, ratio <= 1.10).
# usage: load.sh FURERU SCENE [ROUNDS] [SECONDS] [RUN OPTIONS...] (e.g. --spin 900, given to both)
set -euo pipefail
FURERU=$1
SCENE=$2
ROUNDS=${3:-3}
SECS=${4:-10}
shift $(($# < 4 ? $# : 4))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
XVFB=""
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  command -v Xvfb >/dev/null || { echo "no display and no Xvfb"; exit 77; }
  # the X server is a process of its own: kept off the last CPU, the one the tick thread takes
  taskset -c 0-$(($(nproc) - 2 > 0 ? $(nproc) - 2 : 0)) Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$TMP/dpy" 2>/dev/null &
  XVFB=$!
  for _ in $(seq 1 100); do [ -s "$TMP/dpy" ] && break; sleep 0.05; done
  export DISPLAY=:$(cat "$TMP/dpy")
fi
trap 'rm -rf "$TMP"; [ -z "$XVFB" ] || kill "$XVFB" 2>/dev/null' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for r in $(seq 1 "$ROUNDS"); do
  "$FURERU" run "$SCENE" --device virtual --headless --duration "$SECS" "$@" >"$TMP/h$r.txt"
  awk '/wake-up latency/ {w50=$4; w99=$7} /step time/ {s50=$4; s99=$7} END {print w50, w99, s50, s99}' \
    "$TMP/h$r.txt" >>"$TMP/h"
  "$FURERU" run "$SCENE" --device virtual --duration "$SECS" "$@" >"$TMP/v$r.txt" 2>"$TMP/v$r.err" &
  pid=$!
  # the viewer stays open after the run; SIGINT closes it once the summary is out
  for _ in $(seq 1 $((SECS * 10 + 600))); do
    grep -q "run is over" "$TMP/v$r.err" 2>/dev/null && break
    sleep 0.1
  done
  kill -INT $pid 2>/dev/null || true
  wait $pid || true
  awk '/wake-up latency/ {w50=$4; w99=$7} /step time/ {s50=$4; s99=$7} END {print w50, w99, s50, s99}' \
    "$TMP/v$r.txt" >>"$TMP/v"
done
for f in h v; do
  for c in 1 2 3 4; do eval "${f}$c=$(cut -d' ' -f$c "$TMP/$f" | median)"; done
done
echo "tick timing, median of $ROUNDS rounds of ${SECS} s in real time (us):"
echo "  headless     wake-up p50 $h1 p99 $h2   step p50 $h3 p99 $h4"
echo "  with viewer  wake-up p50 $v1 p99 $v2   step p50 $v3 p99 $v4"
awk -v a="$v2" -v b="$h2" -v c="$v4" -v d="$h4" 'BEGIN {
  printf "  p99 ratios viewer/headless: wake-up %.2f, step %.2f (target <= 1.10)\n", a / b, c / d }'
grep -h "scheduling" "$TMP/v1.txt" || true
