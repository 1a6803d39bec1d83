/*
 * Peaks and troughs of a stick-slip force signal, by a hysteresis detector (the same algorithm as
 * scripts/experiments/sawtooth.awk, which analyses CSV files from the benchmarks): rising, keep
 * the running maximum; once the force has fallen h below it, that maximum is a peak (a slip
 * started). Falling, keep the running minimum; once the force has risen h above it, that minimum
 * is a trough (the slip ended, sticking again). Then
 *   stick time = t(peak i+1) − t(trough i)   (the force climbs at k·V while the block sticks)
 *   slip time  = t(trough i) − t(peak i)
 *   period     = t(peak i+1) − t(peak i)
 * each reported as the median over the cycles. The first rise (from zero force) has no trough
 * before it and gives no stick time. Used by `fureru analyse` and bench/friction.
 */
#ifndef FR_LAB_SAWTOOTH_H
#define FR_LAB_SAWTOOTH_H

typedef struct fri_sawtooth_result {
    int cycles;    /* peaks found (slips) */
    int troughs;   /* troughs found */
    double peak;   /* N, median of the peaks (NaN when none) */
    double trough; /* N, median of the troughs */
    double stick;  /* s, median stick time */
    double slip;   /* s, median slip time */
    double period; /* s, median peak-to-peak time */
    /* the smallest and largest over the cycles of peak, trough, stick, slip, period (in that
     * order; NaN when none): a run whose cycles alternate shows here, not in the medians */
    double lo[5], hi[5];
    double mean; /* N, mean force over the second half of the analysed time */
    double sd;   /* N, its standard deviation (the sawtooth's spread, or the jitter without) */
} fri_sawtooth_result;

/* Where the peaks and troughs are (arrays of at least n entries, or NULL). */
typedef struct fri_sawtooth_points {
    double *peak_t, *peak_f;
    double *trough_t, *trough_f;
} fri_sawtooth_points;

/* Median of a[0..n) (reorders a), with its smallest and largest in *lo, *hi (each may be
 * NULL); NaN when n == 0. */
double fri_median_range(double *a, int n, double *lo, double *hi);

/* t, f: n samples; h > 0 the hysteresis in force units; samples with t < t_start are skipped. */
void fri_sawtooth_analyze(const double *t, const double *f, int n, double h, double t_start,
                          fri_sawtooth_result *out, const fri_sawtooth_points *pts);

#endif
