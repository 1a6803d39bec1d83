#!/bin/sh
# The stick-slip experiment (docs/experiments.md): peak, trough, stick, slip and period of the
# spring force against the formulas, and plots (PDF, SVG, PNG).
#
#   stick-slip.sh LOG.csv [--out DIR]
#       a log of `fureru run --log` (e.g. fureru run stick-slip --fast --log out/ss.csv): every
#       parameter comes from its sidecar LOG.csv.meta.yaml; this is `fureru analyse LOG.csv`
#       (report and plots beside the log, or in DIR; another run's plots are never overwritten)
#   stick-slip.sh --bench [--build DIR] [--out DIR] [--dt 0.005,0.001] [--mus 0.6] [--muk 0.4]
#                 [--k 100] [--v 0.01] [-- bench_friction options]
#       the same rig in fureru, ODE QuickStep and ODE dWorldStep side by side (bench_friction
#       stickslip; its block is 1 kg under g = 9.81), each engine analysed with the parameters
#       the benchmark ran with: OUT/stickslip_dt*.csv, .pdf/.svg/.png, OUT/stickslip.txt.
#       OUT defaults to a new folder ROOT/out/experiments/stick-slip-DATE-TIME.
# The fureru to use: $FURERU, else `fureru` on the PATH, else ROOT/build-release or ROOT/build.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

fureru_cmd() {
    if [ -n "${FURERU:-}" ]; then echo "$FURERU"; return; fi
    for f in "$root/build-release/src/server/fureru" "$root/build/src/server/fureru"; do
        [ -x "$f" ] && { echo "$f"; return; }
    done
    command -v fureru || { echo "no fureru: build it (scripts/run) or set FURERU" >&2; exit 2; }
}

case ${1:-} in
-h|--help|"") sed -n '2,17p' "$0"; exit 0 ;;
--bench) shift ;;
-*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
*) exec "$(fureru_cmd)" analyse "$@" ;;
esac

build=$root/build-release; [ -x "$build/bench/friction/bench_friction" ] || build=$root/build
out=; dts=0.005,0.001; k=100; v=0.01; mus=0.6; muk=0.4
m=1; g=9.81 # bench_friction's block and gravity (not options: the rig is fixed)
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    --m|--g) echo "$1: the benchmark's block is 1 kg under g = 9.81 (use fureru run for others)" >&2; exit 2 ;;
    esac
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    case $1 in
    --build) build=$2 ;; --out) out=$2 ;; --dt) dts=$2 ;; --k) k=$2 ;; --v) v=$2 ;;
    --mus) mus=$2 ;; --muk) muk=$2 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
done
[ -n "$out" ] || out=$root/out/experiments/stick-slip-$(date +%Y%m%d-%H%M%S)
[ ! -e "$out/stickslip.txt" ] || { echo "$out holds an earlier run: choose another --out" >&2; exit 2; }
mkdir -p "$out"
exe=$build/bench/friction/bench_friction
[ -x "$exe" ] || { echo "no $exe: build it (scripts/bench --list builds it)" >&2; exit 2; }
aopts="--m $m --k $k --v $v --mus $mus --muk $muk --g $g"
lines=$(awk -v m="$m" -v mus="$mus" -v muk="$muk" -v g="$g" 'BEGIN {
    printf "%.6g %.6g %.6g", mus * m * g, (2 * muk - mus) * m * g, muk * m * g }')
fpeak=$(echo "$lines" | cut -d' ' -f1); ftrough=$(echo "$lines" | cut -d' ' -f2); fkin=$(echo "$lines" | cut -d' ' -f3)

# plot BASE TITLE then "FILE|COLUMN|LABEL|PANEL" items (panel 1 fureru, 2 ODE): BASE.pdf/.svg/.png
plot() {
    base=$1; title=$2; shift 2
    command -v gnuplot >/dev/null || { echo "gnuplot not found: no plot" >&2; return 0; }
    {
        echo "set encoding utf8"
        echo "set datafile separator ','"
        for term in "pdfcairo size 24cm,9cm font 'DejaVu Sans,9'|pdf" \
                    "svg size 1300,480 dynamic font 'DejaVu Sans,12' background '#ffffff'|svg" \
                    "pngcairo size 1400,520 font 'DejaVu Sans,11'|png"; do
            echo "set terminal ${term%|*} enhanced"
            echo "set output '$base.${term#*|}'"
            echo "set multiplot layout 1,2 title '$title'"
            for p in 1 2; do
                cmd=; sep=
                for it in "$@"; do
                    f=${it%%|*}; r=${it#*|}; c=${r%%|*}; r=${r#*|}; l=${r%%|*}; pn=${r#*|}
                    [ "$pn" = $p ] || continue
                    cmd="$cmd$sep'$f' using (column('t')):(column('$c')) with lines lw 1.2 title 'spring force, $l'"
                    sep=", "
                done
                [ $p = 1 ] && echo "set title 'fureru'" || echo "set title 'ODE 0.16'"
                echo "set xlabel 'time (s)'; set ylabel 'spring force on the block (N)'; set grid"
                echo "set key inside right bottom vertical box opaque samplen 2 font ',8'"
                echo "set yrange [0:$(awk -v p="$fpeak" 'BEGIN { print 1.3 * p }')]"
                echo "plot $cmd, $fpeak with lines dt 2 lc rgb 'black' title 'theory peak μ_s m g = $fpeak N', $fkin with lines dt 3 lc rgb 'gray40' title 'kinetic friction μ_k m g = $fkin N', $ftrough with lines dt 4 lc rgb 'gray60' title 'theory trough (2μ_k − μ_s) m g = $ftrough N'"
            done
            echo "unset multiplot"
            echo "unset output"
        done
    } | gnuplot
    echo "plots: $base.pdf, $base.svg, $base.png"
}

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
    plot "$out/stickslip_dt${ms}ms" "Stick-slip, dt = $ms ms: m = $m kg, k = $k N/m, V = $v m/s, μ_s = $mus, μ_k = $muk" "$@"
done
