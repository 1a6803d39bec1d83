#!/bin/sh
# Stick-slip analysis of one force column of a CSV file against the exact piecewise solution of
# docs/experiments.md §2 (block of mass m, spring k, drive speed V, μ_s > μ_k; ω = sqrt(k/m),
# A = (μ_s − μ_k)·m·g, B = k·V/ω): peak and trough μ_k·m·g ± sqrt(A² + B²); the force falls from
# peak to trough in π/ω ("slip"); period = φ/ω + (μ_s·m·g − F_end)/(k·V), φ = 2π − 2·atan(Aω/(kV)),
# F_end = μ_k·m·g + A cos φ + B sin φ; "stick" (the rise) = period − π/ω. For V/ω ≪ A/k these are
# the short formulas peak μ_s·m·g, trough (2μ_k − μ_s)·m·g, stick 2(μ_s − μ_k)·m·g/(k·V).
# Works on bench_friction's CSV (columns t, fureru_F, ode_quick_F, ...) and on any log; a
# `fureru run` log is analysed from its sidecar alone by `fureru analyse LOG` (tests/lab checks
# that both give the same numbers).
#
#   stick-slip-analyze.sh CSV FORCE_COLUMN [--t-col t] [--m 1] [--k 100] [--v 0.01] [--mus 0.6]
#                         [--muk 0.4] [--g 9.81] [--h H] [--t-start 0] [--sign 1]
# --h: hysteresis of the detector, N (default a quarter of the formula's peak − trough);
# --sign -1 flips the column (a probe that logs the force on the anchor rather than on the block).
# Output: one line per quantity, "name measured formula error%", then the detector's raw lines.
# Exit status 0; 2 on bad input.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { sed -n '2,16p' "$0"; exit 2; }
csv=$1; fcol=$2; shift 2
tcol=t; m=1; k=100; v=0.01; mus=0.6; muk=0.4; g=9.81; h=; tstart=0; sign=1
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    case $1 in
    --t-col) tcol=$2 ;; --m) m=$2 ;; --k) k=$2 ;; --v) v=$2 ;; --mus) mus=$2 ;; --muk) muk=$2 ;;
    --g) g=$2 ;; --h) h=$2 ;; --t-start) tstart=$2 ;; --sign) sign=$2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
[ -r "$csv" ] || { echo "cannot read $csv" >&2; exit 2; }
formulas=$(awk -v m="$m" -v k="$k" -v v="$v" -v mus="$mus" -v muk="$muk" -v g="$g" 'BEGIN {
    pi = 3.14159265358979; om = sqrt(k / m); A = (mus - muk) * m * g; B = k * v / om
    R = sqrt(A * A + B * B); phi = 2 * pi - 2 * atan2(A / k * om, v)
    fend = muk * m * g + A * cos(phi) + B * sin(phi)
    period = phi / om + (mus * m * g - fend) / (k * v); slip = pi / om
    printf "%.9g %.9g %.9g %.9g %.9g\n", muk * m * g + R, muk * m * g - R, period - slip, slip,
        period }')
set -- $formulas
fpeak=$1; ftrough=$2; fstick=$3; fslip=$4; fperiod=$5
[ -n "$h" ] || h=$(awk -v a="$fpeak" -v b="$ftrough" 'BEGIN { printf "%.9g", 0.25 * (a - b) }')
# flip the sign of the column if asked, then detect
raw=$(awk -F, -v c="$fcol" -v s="$sign" 'NR == 1 { for (i = 1; i <= NF; i++) { n = $i; gsub(/^[ \t"]+|[ \t"\r]+$/, "", n); if (n == c) j = i } print; next }
    { if (j) { $j = s * $j } print }' OFS=, "$csv" |
    awk -F, -v tcol="$tcol" -v fcol="$fcol" -v h="$h" -v tstart="$tstart" -f "$here/sawtooth.awk")
get() { printf '%s\n' "$raw" | sed -n "s/^$1=//p"; }
printf '# %s column %s: m %s k %s V %s mu_s %s mu_k %s g %s, hysteresis %s N\n' "$csv" "$fcol" "$m" "$k" "$v" "$mus" "$muk" "$g" "$h"
printf '%-8s %12s %12s %9s\n' quantity measured formula error%
for q in peak trough stick slip period; do
    eval "f=\$f$q"
    awk -v q="$q" -v x="$(get $q)" -v f="$f" 'BEGIN {
        if (x == "nan" || x == "") printf "%-8s %12s %12.5g %9s\n", q, "none", f, "-"
        else printf "%-8s %12.5g %12.5g %9.2f\n", q, x, f, 100 * (x - f) / f }'
done
printf '%s\n' "$raw"
