#!/bin/sh
# The cost of logging, in callgrind instructions (all threads; repeatable on a busy machine): each
# scene run --fast with and without --log; the difference is the logging. With a second fureru
# (e.g. a build of an older commit) the two are compared.
#   log-cost.sh FURERU SCENES_DIR [BASELINE_FURERU BASELINE_SCENES_DIR]
set -eu
[ $# -ge 2 ] || { sed -n '2,5p' "$0"; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
       awk '/refs:/ { gsub(",", "", $4); print $4 }'; }
measure() { # FURERU SCENES LABEL
    printf '%-10s %-12s %8s %14s %14s %10s %8s\n' "$LABEL" scene seconds "sim Ir" "logging Ir" "Ir/value" "log/sim"
    for spec in "stick-slip.yaml 10" "default.yaml 2" "column.yaml 2 --set bodies.block.repeat.count=50"; do
        set -- $spec
        scene=$1 dur=$2; shift 2
        a=$(ir "$FUR" run "$SC/$scene" --fast --headless --duration "$dur" "$@")
        b=$(ir "$FUR" run "$SC/$scene" --fast --headless --duration "$dur" --log "$tmp/x.csv" "$@")
        rows=$(($(wc -l < "$tmp/x.csv") - 1)); cols=$(head -1 "$tmp/x.csv" | tr , '\n' | wc -l)
        awk -v l="$LABEL" -v s="$scene" -v d="$dur" -v a="$a" -v b="$b" -v n=$((rows * cols)) 'BEGIN {
            printf "%-10s %-12s %8s %14d %14d %10.0f %8.2f\n", l, s, d, a, b - a, (b - a) / n, (b - a) / a }'
    done
}
FUR=$1 SC=$2 LABEL=this; measure
if [ $# -ge 4 ]; then FUR=$3 SC=$4 LABEL=baseline; measure; fi
