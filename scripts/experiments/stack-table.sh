#!/bin/sh
# A bench_stack CSV as a compact Markdown table (one row per scene, dt and N): median step time of
# each engine, fureru's ratio to each ODE stepper, and each stack's state at the end of the run
# (S = stands and at rest, s = stands but still moving faster than 0.05 m/s, F = fell (k blocks),
# X = exploded, - = not run). A ratio is in parentheses when either of its two stacks fell: a fallen
# stack has fewer contacts, so its time says little.  Usage: stack-table.sh FILE.csv
set -eu
[ $# -eq 1 ] || { sed -n '2,5p' "$0"; exit 2; }
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{
    k = $c["scene"] SUBSEP $c["dt"] SUBSEP $c["n"]
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    e = $c["engine"]
    t[k, e] = $c["median_us"]
    st = $c["exploded"] ? "X" : (!$c["stands"] ? "F" $c["fallen"] : ($c["at_rest"] ? "S" : "s"))
    if ($c["cut"]) st = st " (cut)"
    s[k, e] = st
}
function fmt(x) { return x == "" ? "-" : (x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x)) }
function ratio(a, b, sa, sb) {
    if (a == "" || b == "" || b == 0) return "-"
    return (sa ~ /^[Ss]/ && sb ~ /^[Ss]/) ? sprintf("%.2f", a / b) : sprintf("(%.2f)", a / b)
}
END {
    print "| scene | dt ms | N | fureru µs | ODE quick µs | ODE step µs | fureru/quick | fureru/step | fureru | quick | step |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= nk; i++) {
        k = order[i]; split(k, p, SUBSEP)
        f = t[k, "fureru"]; q = t[k, "ode_quick"]; w = t[k, "ode_step"]
        printf "| %s | %g | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2] * 1000, p[3],
            fmt(f), fmt(q), fmt(w), ratio(f, q, s[k, "fureru"], s[k, "ode_quick"]),
            ratio(f, w, s[k, "fureru"], s[k, "ode_step"]),
            (s[k, "fureru"] == "" ? "-" : s[k, "fureru"]), (s[k, "ode_quick"] == "" ? "-" : s[k, "ode_quick"]),
            (s[k, "ode_step"] == "" ? "-" : s[k, "ode_step"])
    }
}' "$1"
