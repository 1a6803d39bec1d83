/*
 * Cost of formatting a log's doubles: CPU ns per value for printf("%.12g") (the logger before
 * fr_format_double), printf("%.17g") (round-trip with printf) and fr_format_double (shortest
 * round trip), on values like a log's: times (multiples of dt), positions, quaternion parts,
 * velocities and forces over many magnitudes. Thread CPU time, best of 5 passes.
 *   bench_format [N]   (default 1000000 values)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/base.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 88172645463325252ull;
static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (n < 1) return 2;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return 1;
    for (long i = 0; i < n; i++) {
        switch (i % 4) {
        case 0:
            v[i] = (double)(i / 4) * 0.001;
            break; /* t */
        case 1:
            v[i] = 2 * uniform() - 1;
            break; /* quaternion, pose */
        case 2:
            v[i] = (2 * uniform() - 1) * pow(10, -6 + 8 * uniform());
            break; /* velocities */
        default:
            v[i] = 9.81 * uniform() * 10;
            break; /* forces */
        }
    }
    char buf[64];
    size_t sink = 0;
    const char *names[3] = {"printf %.12g", "printf %.17g", "fr_format_double"};
    double best[3] = {1e30, 1e30, 1e30};
    for (int pass = 0; pass < 5; pass++) {
        for (int m = 0; m < 3; m++) {
            double t0 = cpu_now();
            for (long i = 0; i < n; i++) {
                int len = m == 0   ? snprintf(buf, sizeof buf, "%.12g", v[i])
                          : m == 1 ? snprintf(buf, sizeof buf, "%.17g", v[i])
                                   : fr_format_double(v[i], buf);
                sink += (size_t)len;
            }
            double dt = cpu_now() - t0;
            if (dt < best[m]) best[m] = dt;
        }
    }
    printf("# %ld values, CPU ns per value (best of 5), %zu bytes written\n", n, sink / 15);
    for (int m = 0; m < 3; m++)
        printf("%-18s %8.1f ns  (%.2fx the cost of fr_format_double)\n", names[m],
               1e9 * best[m] / (double)n, best[m] / best[2]);
    free(v);
    return 0;
}
