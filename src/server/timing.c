#include "timing.h"

static double quantile(const fri_hist *h, double q)
{
    if (h->count == 0) return 0.0;
    uint64_t want = (uint64_t)(q * (double)h->count);
    if (want >= h->count) want = h->count - 1;
    uint64_t seen = 0;
    for (int b = 0; b < FRI_HIST_BINS; b++) {
        seen += h->bins[b];
        if (seen > want) {
            double edge = (double)(b + 1) * 1e-6;
            double mx = (double)h->max_ns * 1e-9;
            return edge < mx ? edge : mx; /* never report above the true maximum */
        }
    }
    return (double)h->max_ns * 1e-9;
}

fr_timing fri_hist_summary(const fri_hist *h)
{
    fr_timing t = {0};
    t.count = h->count;
    if (!h->count) return t;
    t.p50 = quantile(h, 0.50);
    t.p99 = quantile(h, 0.99);
    t.p999 = quantile(h, 0.999);
    t.max = (double)h->max_ns * 1e-9;
    t.mean = h->sum_ns / (double)h->count * 1e-9;
    return t;
}
