#!/bin/sh
# Instructions per step of each engine on the same block stack, counted by callgrind (stable where
# wall time is noisy): `bench_stack --callgrind ENGINE` builds the scene, steps --warm-steps
# uncounted steps, then --steps steps inside bench_measured_steps(), the only function counted
# (--toggle-collect). Reports Ir per step, Ir per block per step, the ratio to ode_quick and the
# state of the stack after the run (a fallen stack has fewer contacts: compare standing ones).
#
#   callgrind-stack.sh [--build DIR] [--out DIR] [--scene column] [--n 50[,100,...]] [--dt 0.005]
#                      [--steps 200] [--warm-steps 100] [--engines fureru,ode_quick,ode_step]
#                      [--step-max-n 50] [-- more bench_stack options]
# dWorldStep (ode_step) is left out above --step-max-n blocks (it is slow under valgrind).
# Writes OUT/callgrind.<scene>-n<N>-dt<ms>.<engine>.out, appends rows to OUT/callgrind.csv and
# the table to OUT/callgrind.txt. DIR defaults: --build ROOT/build-release (scripts/bench builds it; else ROOT/build), --out ROOT/out/experiments.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-release; [ -d "$build/bench" ] || build=$root/build; out=$root/out/experiments; scene=column; ns=50; dt=0.005; steps=200; warm=100
engines=fureru,ode_quick,ode_step; stepmax=50
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    esac
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    case $1 in
    --build) build=$2 ;; --out) out=$2 ;; --scene) scene=$2 ;; --n) ns=$2 ;; --dt) dt=$2 ;;
    --steps) steps=$2 ;; --warm-steps) warm=$2 ;; --engines) engines=$2 ;; --step-max-n) stepmax=$2 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
done
exe=$build/bench/stack/bench_stack
[ -x "$exe" ] || { echo "no $exe: build it (ninja -C $build bench/stack/bench_stack)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 2; }
mkdir -p "$out"
ms=$(awk -v d="$dt" 'BEGIN { printf "%g", d * 1000 }')
res=$(mktemp)
trap 'rm -f "$res"' EXIT
[ -s "$out/callgrind.csv" ] || echo "date,commit,scene,n,dt,steps,warm_steps,engine,ir_per_step,ir_per_block_step,ratio_to_ode_quick,stands,top_drift_m" > "$out/callgrind.csv"
stamp=$(date -u +%Y-%m-%dT%H:%MZ); commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo -)
for n in $(echo "$ns" | tr , ' '); do
    for e in $(echo "$engines" | tr , ' '); do
        [ "$e" = ode_step ] && [ "$n" -gt "$stepmax" ] && continue
        f=$out/callgrind.$scene-n$n-dt${ms}ms.$e.out
        line=$(valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect=bench_measured_steps \
            "$exe" --callgrind "$e" --scenes "$scene" --n "$n" --dt "$dt" --steps "$steps" \
            --warm-steps "$warm" "$@" 2>/dev/null | grep '^callgrind' || true)
        ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f")
        [ -n "$ir" ] || ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f")
        st=$(echo "$line" | sed -n 's/.*stands=\([A-Za-z]*\).*/\1/p')
        dr=$(echo "$line" | sed -n 's/.*drift=\([-0-9.e]*\).*/\1/p')
        echo "$n $e $ir ${st:-?} ${dr:-nan}" >> "$res"
    done
done
{
    echo "# $stamp $(uname -n) $commit: $scene, dt = $ms ms, $steps counted steps after $warm uncounted"
    awk -v steps="$steps" -v csv="$out/callgrind.csv" -v pre="$stamp,$commit,$scene" -v dt="$dt" -v warm="$warm" '
        { n[NR] = $1; e[NR] = $2; ir[NR] = $3; st[NR] = $4; dr[NR] = $5; if ($2 == "ode_quick") ref[$1] = $3 }
        END {
            printf "%5s %-10s %14s %12s %11s %7s %8s\n", "n", "engine", "Ir/step", "Ir/blk/step", "÷ode_quick", "stands", "drift_m"
            for (i = 1; i <= NR; i++) {
                r = ref[n[i]] ? sprintf("%.3f", ir[i] / ref[n[i]]) : "-"
                printf "%5d %-10s %14.0f %12.0f %11s %7s %8s\n", n[i], e[i], ir[i] / steps, ir[i] / steps / n[i], r, st[i], dr[i]
                printf "%s,%d,%s,%d,%d,%s,%.0f,%.0f,%s,%s,%s\n", pre, n[i], dt, steps, warm, e[i], ir[i] / steps, ir[i] / steps / n[i], r, st[i], dr[i] >> csv
            }
        }' "$res"
} | tee -a "$out/callgrind.txt"
