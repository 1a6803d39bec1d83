#!/bin/sh
# The block-stack benchmark (docs/experiments.md §1): fureru vs ODE QuickStep vs ODE dWorldStep in one
# process, step time vs number of blocks; plots median step time vs N (log-log) per scene, one
# panel per dt, with the cases where the stack fell marked.
#
#   stack.sh [--build DIR] [--out DIR] [--csv FILE] [-- bench_stack options]
#       runs bench_stack (its options after --, e.g. -- --scenes column,pyramid,wall --n 3,6,13)
#       and writes OUT/stack.csv, OUT/stack.txt and OUT/stack_<scene>.png
#   stack.sh --plot-only --csv FILE [--out DIR]
#       plots an existing CSV (e.g. bench/results/<machine>-stack.csv)
# DIR defaults: --build ROOT/build-release (scripts/bench builds it; else ROOT/build), --out ROOT/out/experiments.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-release; [ -d "$build/bench" ] || build=$root/build; out=$root/out/experiments; csv=; plot_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    --plot-only) plot_only=1; shift; continue ;;
    esac
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    case $1 in
    --build) build=$2 ;; --out) out=$2 ;; --csv) csv=$2 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
done
mkdir -p "$out"
[ -n "$csv" ] || csv=$out/stack.csv
if [ $plot_only = 0 ]; then
    exe=$build/bench/stack/bench_stack
    [ -x "$exe" ] || { echo "no $exe: build it (ninja -C $build bench/stack/bench_stack)" >&2; exit 2; }
    {
        echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n) $(git -C "$root" rev-parse --short HEAD 2>/dev/null || true)"
        "$exe" --csv "$csv" "$@"
    } | tee "$out/stack.txt"
fi
command -v gnuplot >/dev/null || { echo "gnuplot not found: no plots" >&2; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# split: one file per scene, dt and engine (n, median_us, stands, at_rest)
awk -F, -v d="$tmp" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { f = d "/" $c["scene"] "_" $c["dt"] "_" $c["engine"] ".dat"
      print $c["n"], $c["median_us"], $c["stands"], $c["at_rest"] > f }' "$csv"
for scene in $(awk -F, 'NR > 1 { print $1 }' "$csv" | sort -u); do
    dts=$(awk -F, -v s="$scene" 'NR > 1 && $1 == s { print $3 }' "$csv" | sort -gr -u)
    np=$(echo "$dts" | wc -l)
    {
        echo "set terminal pngcairo size $((np * 640)),500 font 'DejaVu Sans,10'"
        echo "set output '$out/stack_$scene.png'"
        echo "set logscale xy; set grid; set key top left noenhanced"
        echo "set xlabel 'blocks'; set ylabel 'median time per step (µs)'"
        echo "set multiplot layout 1,$np title '$scene of 1×1×2 m blocks: fureru vs ODE 0.16 (filled: stands and at rest, open: stands but moving, ×: fell)'"
        for dt in $dts; do
            ms=$(awk -v d="$dt" 'BEGIN { printf "%g", d * 1000 }')
            echo "set title 'dt = $ms ms'"
            cmd=; sep=; k=0
            for e in fureru ode_quick ode_step; do
                f=$tmp/${scene}_${dt}_$e.dat
                [ -f "$f" ] || continue
                k=$((k + 1))
                cmd="$cmd$sep'$f' using 1:2 with lines lw 1.5 lc $k title '$e'"
                cmd="$cmd, '$f' using 1:((\$3 > 0 && \$4 > 0) ? \$2 : 1/0) with points pt 7 ps 1.2 lc $k notitle"
                cmd="$cmd, '$f' using 1:((\$3 > 0 && \$4 < 1) ? \$2 : 1/0) with points pt 6 ps 1.2 lc $k notitle"
                cmd="$cmd, '$f' using 1:(\$3 > 0 ? 1/0 : \$2) with points pt 2 ps 1.5 lc $k notitle"
                sep=", "
            done
            ref=$(awk -v f="$tmp/${scene}_${dt}_fureru.dat" 'BEGIN { if ((getline l < f) > 0) { split(l, a, " "); print a[2] / a[1] } else print 1 }')
            echo "plot $cmd, $ref*x with lines dt 3 lc rgb 'gray50' title '∝ N'"
        done
        echo "unset multiplot"
    } | gnuplot
    echo "plot: $out/stack_$scene.png"
done
