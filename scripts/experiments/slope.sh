#!/bin/sh
# Friction on a slope (docs/experiments.md §4): a block on a slope of angle θ (default atan 0.5 =
# 26.565°) with μ_s = μ_k = tan θ + dμ (it must stay, with no creep at all) and tan θ − dμ (it must
# slide with acceleration g(sin θ − μ cos θ)); fureru, ODE QuickStep and ODE dWorldStep side by
# side at each dt. Writes OUT/slope.csv (the summary), OUT/slope_trace_dt*.csv (x(t)),
# OUT/slope.txt (the report) and OUT/slope_dt*.png (x(t) of both cases, per dt).
#
#   slope.sh [--build DIR] [--out DIR] [--dt 0.005,0.001] [-- bench_friction slope options]
# e.g. slope.sh -- --theta-deg 30 --dmu 0.01
# DIR defaults: --build ROOT/build-release (scripts/bench builds it; else ROOT/build), --out ROOT/out/experiments.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-release; [ -d "$build/bench" ] || build=$root/build; out=$root/out/experiments; dts=0.005,0.001
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    esac
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    case $1 in
    --build) build=$2 ;; --out) out=$2 ;; --dt) dts=$2 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
done
exe=$build/bench/friction/bench_friction
[ -x "$exe" ] || { echo "no $exe: build it (ninja -C $build bench/friction/bench_friction)" >&2; exit 2; }
mkdir -p "$out"
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n) $(git -C "$root" rev-parse --short HEAD 2>/dev/null || true)"
    "$exe" slope --out "$out" --dt "$dts" "$@"
} | tee "$out/slope.txt"
command -v gnuplot >/dev/null || { echo "gnuplot not found: no plots" >&2; exit 0; }
# θ and the two μ from the summary (first rows are the μ_hi and μ_lo runs of the first engine)
theta=$(awk -F, 'NR == 2 { printf "%.3f", $3 }' "$out/slope.csv")
muhi=$(awk -F, 'NR == 2 { printf "%.4g", $4 }' "$out/slope.csv")
mulo=$(awk -F, 'NR == 3 { printf "%.4g", $4 }' "$out/slope.csv")
acc=$(awk -v th="$theta" -v mu="$mulo" 'BEGIN { t = th * 3.14159265358979 / 180; print 9.81 * (sin(t) - mu * cos(t)) }')
for dt in $(echo "$dts" | tr , ' '); do
    ms=$(awk -v d="$dt" 'BEGIN { printf "%g", d * 1000 }')
    f=$out/slope_trace_dt${ms}ms.csv
    cols=$(head -1 "$f" | tr , '\n' | grep '_hi$' | sed 's/_hi$//')
    hi=; lo=; sep=
    for c in $cols; do
        hi="$hi$sep'$f' using 1:(1000*column('${c}_hi')) with lines lw 1.5 title '$c' noenhanced"
        lo="$lo$sep'$f' using 1:(column('${c}_lo')) with lines lw 1.5 title '$c' noenhanced"
        sep=", "
    done
    gnuplot <<GP
set terminal pngcairo size 1400,480 font 'DejaVu Sans,10'
set output '$out/slope_dt${ms}ms.png'
set datafile separator ','
set multiplot layout 1,2 title 'block on a ${theta}° slope, dt = $ms ms (x: distance down the slope)'
set grid; set key top left; set xlabel 'time (s)'
set title 'μ = $muhi > tan θ: must not move (x in mm; a step in the first 0.1 s is the elastic set-up of the contact)'
set ylabel 'x (mm)'
plot $hi
set title 'μ = $mulo < tan θ: must slide'
set ylabel 'x (m)'
plot $lo, 0.5*$acc*x**2 with lines dt 2 lc rgb 'black' title 'exact ½ g(sin θ − μ cos θ) t²'
unset multiplot
GP
    echo "plot: $out/slope_dt${ms}ms.png"
done
