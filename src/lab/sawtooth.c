/* Stick-slip sawtooth analysis (see sawtooth.h). */
#include "sawtooth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fri_median_range(double *a, int n, double *lo, double *hi)
{
    if (n <= 0) {
        if (lo) *lo = NAN;
        if (hi) *hi = NAN;
        return NAN;
    }
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    if (lo) *lo = a[0];
    if (hi) *hi = a[n - 1];
    return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

void fri_sawtooth_analyze(const double *t, const double *f, int n, double h, double t_start,
                          fri_sawtooth_result *out, const fri_sawtooth_points *pts)
{
    double *pv = malloc(sizeof *pv * (size_t)(n + 1)), *pt = malloc(sizeof *pt * (size_t)(n + 1));
    double *tv = malloc(sizeof *tv * (size_t)(n + 1)), *tt = malloc(sizeof *tt * (size_t)(n + 1));
    double *d = malloc(sizeof *d * (size_t)(n + 1));
    int np = 0, nt = 0, rising = 1, started = 0;
    double ext = 0, text = 0, t0 = NAN, t1 = NAN;
    for (int i = 0; i < n; i++) {
        if (t[i] < t_start) continue;
        if (!started) {
            started = 1;
            t0 = t[i];
            ext = f[i];
            text = t[i];
        }
        if (rising) {
            if (f[i] > ext) {
                ext = f[i];
                text = t[i];
            } else if (f[i] < ext - h) {
                pv[np] = ext;
                pt[np++] = text;
                rising = 0;
                ext = f[i];
                text = t[i];
            }
        } else {
            if (f[i] < ext) {
                ext = f[i];
                text = t[i];
            } else if (f[i] > ext + h) {
                tv[nt] = ext;
                tt[nt++] = text;
                rising = 1;
                ext = f[i];
                text = t[i];
            }
        }
    }
    /* mean and spread over the second half */
    for (int i = 0; i < n; i++) t1 = t[i];
    double sum = 0, sum2 = 0;
    long nsum = 0;
    for (int i = 0; i < n; i++)
        if (t[i] >= t_start && t[i] >= 0.5 * (t0 + t1)) {
            sum += f[i];
            nsum++;
        }
    out->mean = nsum ? sum / (double)nsum : NAN;
    for (int i = 0; i < n; i++)
        if (t[i] >= t_start && t[i] >= 0.5 * (t0 + t1))
            sum2 += (f[i] - out->mean) * (f[i] - out->mean);
    out->sd = nsum > 1 ? sqrt(sum2 / (double)(nsum - 1)) : NAN;
    out->cycles = np;
    out->troughs = nt;
    if (pts) {
        if (pts->peak_t) memcpy(pts->peak_t, pt, sizeof *pt * (size_t)np);
        if (pts->peak_f) memcpy(pts->peak_f, pv, sizeof *pv * (size_t)np);
        if (pts->trough_t) memcpy(pts->trough_t, tt, sizeof *tt * (size_t)nt);
        if (pts->trough_f) memcpy(pts->trough_f, tv, sizeof *tv * (size_t)nt);
    }
    int k = 0;
    for (int i = 0; i < nt && i + 1 < np; i++) d[k++] = pt[i + 1] - tt[i];
    out->stick = fri_median_range(d, k, &out->lo[2], &out->hi[2]);
    k = 0;
    for (int i = 0; i < nt && i < np; i++) d[k++] = tt[i] - pt[i];
    out->slip = fri_median_range(d, k, &out->lo[3], &out->hi[3]);
    k = 0;
    for (int i = 0; i + 1 < np; i++) d[k++] = pt[i + 1] - pt[i];
    out->period = fri_median_range(d, k, &out->lo[4], &out->hi[4]);
    out->peak = fri_median_range(pv, np, &out->lo[0], &out->hi[0]);
    out->trough = fri_median_range(tv, nt, &out->lo[1], &out->hi[1]);
    free(pv);
    free(pt);
    free(tv);
    free(tt);
    free(d);
}
