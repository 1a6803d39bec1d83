#!/bin/sh
# Checks the stick-slip analysis (sawtooth.awk via stick-slip-analyze.sh) on synthetic signals with
# known answers: an ideal sawtooth (linear stick ramps at k·V, half-cosine slips), the same with
# noise, and a flat noisy force (no stick-slip). Exit status 0 when every check passes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# gen FILE NOISE FLAT: t,F at 1 kHz for 30 s. Peak P, trough R, stick TK (the rise R→P at k·V),
# slip TS (half cosine P→R). The first ramp rises from 0 at the same rate.
gen() {
    awk -v noise="$2" -v flat="$3" 'BEGIN {
        P = 5.886; R = 1.962; TS = 0.3; rate = 100 * 0.01; TK = (P - R) / rate
        dt = 0.001; seed = 12345; t1 = P / rate          # end of the first ramp
        print "time,force"
        for (i = 0; i <= 30000; i++) {
            t = i * dt
            if (flat) f = 5.85
            else if (t <= t1) f = rate * t
            else {
                u = t - t1; c = TK + TS; n = int(u / c); u -= n * c
                if (u < TS) f = R + (P - R) * (1 + cos(3.14159265358979 * u / TS)) / 2
                else f = R + rate * (u - TS)
            }
            seed = (seed * 1103515245 + 12345) % 2147483648    # deterministic noise in [-1, 1)
            f += noise * (2 * seed / 2147483648 - 1)
            printf "%.3f,%.9f\n", t, f
        }
    }' > "$1"
}

# check NAME VALUE EXPECTED TOL
check() {
    if awk -v x="$2" -v e="$3" -v tol="$4" 'BEGIN { exit !(x != "nan" && x != "" && (x - e) <= tol && (e - x) <= tol) }'; then
        printf 'ok    %-28s %s (expected %s ± %s)\n' "$1" "$2" "$3" "$4"
    else
        printf 'FAIL  %-28s %s (expected %s ± %s)\n' "$1" "$2" "$3" "$4"; fail=1
    fi
}

get() { sed -n "s/^$1=//p" "$2"; }

# 1. ideal sawtooth: values exact, times to one sample
gen "$tmp/ideal.csv" 0 0
"$here/stick-slip-analyze.sh" "$tmp/ideal.csv" force --t-col time --h 0.5 > "$tmp/ideal.out"
# first peak at 5.886 s, then every TK + TS = 4.224 s: 30 s hold peaks at 5.886 + 4.224 j, j <= 5
check "ideal: cycles" "$(get cycles "$tmp/ideal.out")" 6 0
check "ideal: troughs" "$(get troughs "$tmp/ideal.out")" 6 0
check "ideal: peak (N)" "$(get peak "$tmp/ideal.out")" 5.886 1e-6
check "ideal: trough (N)" "$(get trough "$tmp/ideal.out")" 1.962 1e-6
check "ideal: stick (s)" "$(get stick "$tmp/ideal.out")" 3.924 0.0015
check "ideal: slip (s)" "$(get slip "$tmp/ideal.out")" 0.3 0.0015
check "ideal: period (s)" "$(get period "$tmp/ideal.out")" 4.224 0.0015
check "ideal: first peak time (s)" "$(get peak_list "$tmp/ideal.out" | cut -d' ' -f1 | cut -d: -f1)" 5.886 0.0015
# the analysis script's formula column: k = 100, V = 0.01, m = 1, μ 0.6 / 0.4 give these numbers
check "formula: stick (s)" "$(awk '$1 == "stick" { print $3 }' "$tmp/ideal.out")" 3.924 1e-4
check "formula: trough (N)" "$(awk '$1 == "trough" { print $3 }' "$tmp/ideal.out")" 1.962 1e-4

# 2. the same with ±0.02 N noise: values within the noise, times within 20 ms
gen "$tmp/noisy.csv" 0.02 0
"$here/stick-slip-analyze.sh" "$tmp/noisy.csv" force --t-col time > "$tmp/noisy.out"
check "noisy: cycles" "$(get cycles "$tmp/noisy.out")" 6 0
check "noisy: peak (N)" "$(get peak "$tmp/noisy.out")" 5.886 0.02
check "noisy: trough (N)" "$(get trough "$tmp/noisy.out")" 1.962 0.02
check "noisy: stick (s)" "$(get stick "$tmp/noisy.out")" 3.924 0.02
check "noisy: slip (s)" "$(get slip "$tmp/noisy.out")" 0.3 0.02
check "noisy: period (s)" "$(get period "$tmp/noisy.out")" 4.224 0.02

# 3. a flat force with noise (what ODE gives): no cycles, mean and spread right
gen "$tmp/flat.csv" 0.05 1
"$here/stick-slip-analyze.sh" "$tmp/flat.csv" force --t-col time > "$tmp/flat.out"
check "flat: cycles" "$(get cycles "$tmp/flat.out")" 0 0
check "flat: mean (N)" "$(get mean "$tmp/flat.out")" 5.85 0.002
check "flat: sd (N) = 0.05/sqrt(3)" "$(get sd "$tmp/flat.out")" 0.028868 0.002

# 4. sign flip (a probe logging the force on the anchor)
awk -F, 'NR == 1 { print; next } { printf "%s,%.9f\n", $1, -$2 }' "$tmp/ideal.csv" > "$tmp/neg.csv"
"$here/stick-slip-analyze.sh" "$tmp/neg.csv" force --t-col time --sign -1 --h 0.5 > "$tmp/neg.out"
check "flipped: peak (N)" "$(get peak "$tmp/neg.out")" 5.886 1e-6

[ $fail -eq 0 ] && echo "all sawtooth checks passed" || echo "SOME SAWTOOTH CHECKS FAILED"
exit $fail
