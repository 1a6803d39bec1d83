/* Fixed-size timing histograms: recording is O(1), allocation-free and lock-free (one writer). */
#ifndef FR_SERVER_TIMING_H
#define FR_SERVER_TIMING_H

#include <stdint.h>

#include "fureru/server.h"

enum { FRI_HIST_BINS = 20000 }; /* 1 µs bins up to 20 ms; later values land in the last bin */

typedef struct fri_hist {
    uint64_t bins[FRI_HIST_BINS];
    uint64_t count;
    uint64_t max_ns;
    double sum_ns;
} fri_hist;

static inline void fri_hist_add(fri_hist *h, int64_t ns)
{
    if (ns < 0) ns = 0;
    uint64_t b = (uint64_t)ns / 1000u;
    if (b >= FRI_HIST_BINS) b = FRI_HIST_BINS - 1;
    h->bins[b]++;
    h->count++;
    h->sum_ns += (double)ns;
    if ((uint64_t)ns > h->max_ns) h->max_ns = (uint64_t)ns;
}

/* Percentiles (upper edge of the bin holding the quantile), in seconds. */
fr_timing fri_hist_summary(const fri_hist *h);

#endif
