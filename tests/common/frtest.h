/* Shared helpers for fureru's Check test executables. */
#ifndef FRTEST_H
#define FRTEST_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* Run one suite with TAP-friendly settings (see tests/meson.build) and return the exit status. */
int frtest_run(Suite *s);
#define FRTEST_MAIN(suite_fn)                                                                      \
    int main(void)                                                                                 \
    {                                                                                              \
        return frtest_run(suite_fn());                                                             \
    }

/* Absolute path of a file in the source tree (FR_SOURCE_ROOT/rel), in a static buffer that
 * holds up to 8 paths in rotation. */
const char *frtest_path(const char *rel);

/*
 * Malformed inputs: every file in dir whose name starts with prefix and ends with suffix names on
 * its first line where it must be rejected: "... expect: LINE:COL FIELD [FILE]" (any comment
 * syntax before "expect:"; FIELD "-" = any field; FILE, with an optional leading '@', when the
 * error is in another file, e.g. a URDF a scene refers to: matched as a suffix of the reported
 * file). load() parses the file and returns its error with the diagnostic (it may assert more).
 * Asserts, for each file, a negative error at that file, line, column and field with a message;
 * returns the number of files checked.
 */
struct fr_diag;
typedef int (*frtest_loader)(const char *path, struct fr_diag *d, void *ctx);
int frtest_check_bad_files(const char *dir, const char *prefix, const char *suffix,
                           frtest_loader load, void *ctx);

/* Deterministic random numbers (splitmix64) so property tests replay exactly. */
typedef struct frtest_rng {
    uint64_t s;
} frtest_rng;
static inline uint64_t frtest_next(frtest_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi). */
static inline double frtest_uniform(frtest_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)(frtest_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* |a - b| <= tol * max(|a|, |b|, floor) */
#define ck_assert_rel(a, b, tol, floor)                                                            \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        double s_ = fmax(fmax(fabs(a_), fabs(b_)), (floor));                                       \
        ck_assert_msg(fabs(a_ - b_) <= (tol)*s_, "%s = %.17g vs %s = %.17g: rel %.3g > %.3g", #a,  \
                      a_, #b, b_, fabs(a_ - b_) / s_, (double)(tol));                              \
    } while (0)

/* The sawtooth of a stick-slip force record f[0..n): from index `start`, each local maximum
 * followed by a fall of more than half `swing` is a peak, the bottom of that fall its trough.
 * Fills peaks[] (indices) and troughs[] (values), at most `max`; returns how many. */
int frtest_sawtooth(const double *f, long n, long start, double swing, long *peaks, double *troughs,
                    int max);

#endif
