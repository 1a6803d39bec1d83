# Stick-slip analysis of one force column of a CSV file (header row with column names).
#   awk -F, -v tcol=t -v fcol=fureru_F -v h=0.98 [-v tstart=0] -f sawtooth.awk FILE.csv
# Hysteresis detector (the same as src/lab/sawtooth.c): rising, keep the running maximum;
# once the force has fallen h below it, that maximum is a peak (a slip starts). Falling, keep the
# running minimum; once the force has risen h above it, that minimum is a trough (sticking again).
#   stick = t(peak i+1) − t(trough i), slip = t(trough i) − t(peak i), period = t(peak i+1) − t(peak i)
# Prints key=value lines: cycles troughs peak trough stick slip period (medians over the cycles,
# "nan" when there are none), mean and sd (force over the second half of the analysed time),
# peak_min/peak_max/trough_min/trough_max, and peak_list= / trough_list= (time:value ...).

function median(a, n,    i, j, v, b) {
    if (n <= 0) return "nan"
    for (i = 1; i <= n; i++) b[i] = a[i]
    for (i = 2; i <= n; i++) {          # insertion sort (n is small)
        v = b[i]
        for (j = i - 1; j >= 1 && b[j] > v; j--) b[j + 1] = b[j]
        b[j + 1] = v
    }
    return (n % 2) ? b[(n + 1) / 2] : 0.5 * (b[n / 2] + b[n / 2 + 1])
}

function amin(a, n,    i, m) { if (n <= 0) return "nan"; m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
function amax(a, n,    i, m) { if (n <= 0) return "nan"; m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }

BEGIN {
    if (tcol == "") tcol = "t"
    if (fcol == "") { print "sawtooth.awk: set -v fcol=NAME" > "/dev/stderr"; exit 2 }
    if (h == "" || h + 0 <= 0) { print "sawtooth.awk: set -v h=HYSTERESIS (> 0)" > "/dev/stderr"; exit 2 }
    if (tstart == "") tstart = -1e300
    h += 0; tstart += 0
    ic = 0; jc = 0; np = 0; nt = 0; rising = 1; started = 0; ns = 0
}

NR == 1 {
    for (i = 1; i <= NF; i++) {
        name = $i; gsub(/^[ \t"]+|[ \t"\r]+$/, "", name)
        if (name == tcol) ic = i
        if (name == fcol) jc = i
    }
    if (!ic || !jc) {
        printf "sawtooth.awk: no column '%s' or '%s' in the header\n", tcol, fcol > "/dev/stderr"
        bad = 1; exit 2
    }
    next
}

{
    t = $ic + 0; f = $jc + 0
    if (t < tstart) next
    ns++; T[ns] = t; F[ns] = f
    if (!started) { started = 1; ext = f; text = t }
    if (rising) {
        if (f > ext) { ext = f; text = t }
        else if (f < ext - h) { np++; PV[np] = ext; PT[np] = text; rising = 0; ext = f; text = t }
    } else {
        if (f < ext) { ext = f; text = t }
        else if (f > ext + h) { nt++; TV[nt] = ext; TT[nt] = text; rising = 1; ext = f; text = t }
    }
}

END {
    if (bad) exit 2
    if (ns == 0) { print "sawtooth.awk: no samples" > "/dev/stderr"; exit 2 }
    # troughs alternate with peaks: trough i lies between peak i and peak i+1
    k = 0; for (i = 1; i <= nt && i + 1 <= np; i++) D[++k] = PT[i + 1] - TT[i]
    stick = median(D, k); delete D
    k = 0; for (i = 1; i <= nt && i <= np; i++) D[++k] = TT[i] - PT[i]
    slip = median(D, k); delete D
    k = 0; for (i = 1; i + 1 <= np; i++) D[++k] = PT[i + 1] - PT[i]
    period = median(D, k); delete D
    tmid = 0.5 * (T[1] + T[ns]); s = 0; m = 0
    for (i = 1; i <= ns; i++) if (T[i] >= tmid) { s += F[i]; m++ }
    mean = s / m; s2 = 0
    for (i = 1; i <= ns; i++) if (T[i] >= tmid) s2 += (F[i] - mean) ^ 2
    sd = m > 1 ? sqrt(s2 / (m - 1)) : "nan"
    printf "cycles=%d\ntroughs=%d\n", np, nt
    printf "peak=%s\ntrough=%s\nstick=%s\nslip=%s\nperiod=%s\n", median(PV, np), median(TV, nt), stick, slip, period
    printf "mean=%.6g\nsd=%.6g\n", mean, sd
    printf "peak_min=%s\npeak_max=%s\ntrough_min=%s\ntrough_max=%s\n", amin(PV, np), amax(PV, np), amin(TV, nt), amax(TV, nt)
    printf "peak_list="; for (i = 1; i <= np; i++) printf "%s%.6g:%.6g", (i > 1 ? " " : ""), PT[i], PV[i]; printf "\n"
    printf "trough_list="; for (i = 1; i <= nt; i++) printf "%s%.6g:%.6g", (i > 1 ? " " : ""), TT[i], TV[i]; printf "\n"
}
