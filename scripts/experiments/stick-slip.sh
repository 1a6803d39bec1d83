#!/bin/sh
# The stick-slip experiment (seed paper Fig. 5–6; experiments.md §2): run it, report peak, trough,
# stick, slip and period against the formulas, and plot the spring force against time (PNG).
#
#   stick-slip.sh [--build DIR] [--out DIR] [--dt 0.005,0.001] [-- bench_friction options]
#       runs `bench_friction stickslip` (fureru, ODE QuickStep, ODE dWorldStep side by side),
#       analyses each engine's force column and plots fureru | ODE side by side per dt:
#       OUT/stickslip_dt*.csv, OUT/stickslip_dt*.png, OUT/stickslip.txt (the report)
#   stick-slip.sh --csv FILE --force-col NAME [--t-col t] [--out DIR] [analysis options]
#       analyses and plots one column of any CSV log, e.g. from
#       fureru run config/scenes/stick-slip.yaml --fast --headless --log run.csv
#       stick-slip.sh --csv run.csv --force-col pull.fx --v 0.05
# Analysis options (passed to stick-slip-analyze.sh): --m --k --v --mus --muk --g --h --t-start
# --sign. The defaults match bench_friction: m 1 kg, k 100 N/m, V 0.01 m/s, μ_s 0.6, μ_k 0.4.
# DIR defaults: --build ROOT/build, --out ROOT/out/experiments.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build; out=$root/out/experiments; dts=0.005,0.001; csv=; fcol=; tcol=t
m=1; k=100; v=0.01; mus=0.6; muk=0.4; g=9.81; extra=
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    esac
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    case $1 in
    --build) build=$2 ;; --out) out=$2 ;; --dt) dts=$2 ;; --csv) csv=$2 ;; --force-col) fcol=$2 ;;
    --t-col) tcol=$2 ;; --m) m=$2 ;; --k) k=$2 ;; --v) v=$2 ;; --mus) mus=$2 ;; --muk) muk=$2 ;;
    --g) g=$2 ;; --h|--t-start|--sign) extra="$extra $1 $2" ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
done
mkdir -p "$out"
aopts="--t-col $tcol --m $m --k $k --v $v --mus $mus --muk $muk --g $g$extra"
lines=$(awk -v m="$m" -v mus="$mus" -v muk="$muk" -v g="$g" 'BEGIN {
    printf "%.6g %.6g %.6g", mus * m * g, (2 * muk - mus) * m * g, muk * m * g }')
set -- "$@"
fpeak=$(echo "$lines" | cut -d' ' -f1); ftrough=$(echo "$lines" | cut -d' ' -f2); fkin=$(echo "$lines" | cut -d' ' -f3)

# plot PNG TITLE then "FILE|COLUMN|LABEL|PANEL" items (panel 1 or 2; one panel if all are 1)
plot() {
    png=$1; title=$2; shift 2
    command -v gnuplot >/dev/null || { echo "gnuplot not found: no $png" >&2; return 0; }
    npanel=1
    for it in "$@"; do [ "${it##*|}" = 2 ] && npanel=2; done
    {
        echo "set terminal pngcairo size $((npanel * 700)),480 font 'DejaVu Sans,10'"
        echo "set output '$png'"
        echo "set datafile separator ','"
        echo "set xlabel 'time (s)'; set ylabel 'spring force (N)'; set grid"
        echo "set key below horizontal"
        echo "set yrange [0:$(awk -v p="$fpeak" 'BEGIN { print 1.2 * p }')]"
        [ $npanel = 2 ] && echo "set multiplot layout 1,2 title '$title'"
        for p in 1 2; do
            cmd=; sep=
            for it in "$@"; do
                f=${it%%|*}; r=${it#*|}; c=${r%%|*}; r=${r#*|}; l=${r%%|*}; pn=${r#*|}
                [ "$pn" = $p ] || continue
                cmd="$cmd$sep'$f' using (column('$tcol')):(column('$c')) with lines lw 1.2 title '$l'"
                sep=", "
            done
            [ -n "$cmd" ] || continue
            [ $npanel = 1 ] && echo "set title '$title'"
            [ $npanel = 2 ] && { [ $p = 1 ] && echo "set title 'fureru'" || echo "set title 'ODE 0.16'"; }
            echo "plot $cmd, $fpeak with lines dt 2 lc rgb 'black' title 'μ_s m g', $fkin with lines dt 3 lc rgb 'gray40' title 'μ_k m g', $ftrough with lines dt 2 lc rgb 'gray60' title '(2μ_k − μ_s) m g'"
        done
        [ $npanel = 2 ] && echo "unset multiplot"
    } | gnuplot
    echo "plot: $png"
}

if [ -n "$csv" ]; then
    [ -n "$fcol" ] || { echo "--csv needs --force-col" >&2; exit 2; }
    # shellcheck disable=SC2086
    "$here/stick-slip-analyze.sh" "$csv" "$fcol" $aopts | sed -n '1,7p'
    base=$(basename "$csv" .csv)
    plot "$out/$base.png" "stick-slip: $base, column $fcol" "$csv|$fcol|$fcol|1"
    exit 0
fi

exe=$build/bench/friction/bench_friction
[ -x "$exe" ] || { echo "no $exe: build it (ninja -C $build bench/friction/bench_friction)" >&2; exit 2; }
report=$out/stickslip.txt
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n) $(git -C "$root" rev-parse --short HEAD 2>/dev/null || true)"
    "$exe" stickslip --out "$out" --dt "$dts" --mus "$mus" --muk "$muk" --k "$k" --v "$v" "$@"
    for dt in $(echo "$dts" | tr , ' '); do
        f=$out/stickslip_dt$(awk -v d="$dt" 'BEGIN { printf "%g", d * 1000 }')ms.csv
        for col in $(head -1 "$f" | tr , '\n' | grep '_F$'); do
            echo
            # shellcheck disable=SC2086
            "$here/stick-slip-analyze.sh" "$f" "$col" $aopts | sed -n '1,7p'
        done
    done
} | tee "$report"
for dt in $(echo "$dts" | tr , ' '); do
    ms=$(awk -v d="$dt" 'BEGIN { printf "%g", d * 1000 }')
    f=$out/stickslip_dt${ms}ms.csv
    items=
    for col in $(head -1 "$f" | tr , '\n' | grep '_F$'); do
        case $col in fureru_F) p=1; l=fureru ;; ode_quick_F) p=2; l='dWorldQuickStep' ;; ode_step_F) p=2; l='dWorldStep' ;; *) p=2; l=$col ;; esac
        set -- ${items:+"$@"} "$f|$col|$l|$p"
        items=1
    done
    plot "$out/stickslip_dt${ms}ms.png" "stick-slip, dt = $ms ms: k = $k N/m, V = $v m/s, μ_s = $mus, μ_k = $muk" "$@"
done
