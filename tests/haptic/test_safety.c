/* src/haptic: the safety chain (fr_safety) against its stated invariants, an independent model
 * of the engage/watchdog state machine, and adversarial inputs. */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "frtest.h"
#include "interpose.h"
#include "fureru/base.h"
#include "fureru/haptic.h"

#define MS 1000000ull /* ns */

/* ck_assert records its location on every call (a syscall in fork mode): in loops of a million
 * ticks only call into Check when the condition fails. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) ck_assert(cond);                                                              \
    } while (0)
#define REQUIRE_MSG(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) ck_assert_msg(cond, __VA_ARGS__);                                             \
    } while (0)

/* ------------------------------------------------------------------ a fake device */

typedef struct fake_dev {
    fr_device dev;
    long writes, minimums;
    fr_device_cmd last;
} fake_dev;

static int fake_read(fr_device *d, fr_device_state *s)
{
    (void)d;
    memset(s, 0, sizeof *s);
    return FR_OK;
}
static int fake_write(fr_device *d, const fr_device_cmd *c)
{
    fake_dev *f = (fake_dev *)d;
    f->writes++;
    f->last = *c;
    return FR_OK;
}
static void fake_minimum(fr_device *d)
{
    ((fake_dev *)d)->minimums++;
}
static const fr_device_ops fake_ops = {fake_read, fake_write, fake_minimum, NULL, NULL};

static fr_device_desc desc6(double fmax, double tmax)
{
    fr_device_desc d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "test");
    strcpy(d.driver, "fake");
    d.dof_sensed = d.dof_forced = 6;
    d.max_force = fmax;
    d.max_torque = tmax;
    return d;
}

/* The norm the invariants are stated in (same expression as the chain's, bit for bit). */
static double pnorm(fr_vec3 v)
{
    return sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}
static bool is_zero(fr_vec3 v)
{
    return v.x == 0.0 && v.y == 0.0 && v.z == 0.0;
}
/* An independent norm in extended precision, scaled so that no double overflows it (also where
 * long double is only double, as under valgrind). |v| = m·lscaled(v) with m = max |v_i|. */
static long double lscaled(fr_vec3 v, long double *m)
{
    long double x = v.x, y = v.y, z = v.z;
    *m = fmaxl(fabsl(x), fmaxl(fabsl(y), fabsl(z)));
    if (*m == 0) return 0;
    x /= *m;
    y /= *m;
    z /= *m;
    return sqrtl(x * x + y * y + z * z);
}
static long double lnorm(fr_vec3 v)
{
    long double m, s = lscaled(v, &m);
    return m * s;
}
/* Component c of v/|v|, without overflow. */
static long double lunit(fr_vec3 v, int c)
{
    long double m, s = lscaled(v, &m);
    return ((long double)fr_v3_get(v, c) / m) / s;
}

/* ------------------------------------------------------------------ generators */

static fr_vec3 rand_dir(frtest_rng *r)
{
    for (;;) {
        fr_vec3 v =
            fr_v3(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1));
        double n = pnorm(v);
        if (n > 0.1 && n <= 1.0) return fr_v3_scale(v, 1.0 / n);
    }
}

enum gen_kind { G_QUIET, G_NORMAL, G_ADVERSARIAL };

/* One component-vector per kind. Quiet: |v| < q; normal: [lo, hi]; adversarial: anything. */
static fr_vec3 gen_vec(frtest_rng *r, int kind, double q, double lo, double hi, double cap,
                       fr_vec3 prev_in)
{
    if (kind == G_QUIET) {
        if (frtest_next(r) % 8 == 0) return fr_v3(DBL_TRUE_MIN, -DBL_MIN * 0.5, 0.0);
        if (frtest_next(r) % 8 == 0) return fr_v3_zero();
        return fr_v3_scale(rand_dir(r), frtest_uniform(r, 0, 0.5 * q));
    }
    if (kind == G_NORMAL) return fr_v3_scale(rand_dir(r), frtest_uniform(r, lo, hi));
    switch (frtest_next(r) % 14) {
    case 0:
        return fr_v3(NAN, 0, 0);
    case 1:
        return fr_v3(1.0, INFINITY, 0);
    case 2:
        return fr_v3(-INFINITY, -INFINITY, -INFINITY);
    case 3:
        return fr_v3(DBL_MAX, -DBL_MAX, DBL_MAX);
    case 4:
        return fr_v3_scale(rand_dir(r), pow(10.0, frtest_uniform(r, 0, 308)));
    case 5:
        return fr_v3(DBL_TRUE_MIN, DBL_MAX, -DBL_TRUE_MIN);
    case 6:
        return fr_v3_scale(rand_dir(r), cap); /* at the limit (up to rounding) */
    case 7:
        return fr_v3(cap, 0, 0); /* exactly at the limit */
    case 8:
        return fr_v3(0, 0, -cap);
    case 9:
        return fr_v3_neg(prev_in); /* sign flip */
    case 10:
        return fr_v3_neg(prev_in);
    case 11:
        return fr_v3(-NAN, 1e308, 1e-308);
    case 12:
        return fr_v3(nextafter(cap, INFINITY), 0, 0); /* one ulp above */
    default:
        return fr_v3_scale(rand_dir(r), frtest_uniform(r, 0, 3 * cap));
    }
}

/* ------------------------------------------------------------------ the property test */

typedef struct model {
    int mode; /* 0 disengaged, 1 ramping or on */
    long quiet;
    uint64_t k; /* ticks since engagement */
    bool fed;
    uint64_t last_feed;
} model;

START_TEST(test_property_million)
{
    const double capf = 10.0, capt = 0.5, tick = 1e-3;
    fr_device_desc desc = desc6(capf, capt);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.ramp_time = 0.05; /* short, so that the million ticks visit every state often */
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, tick), FR_OK);
    const double stepf = p.force_rate * tick, stept = p.torque_rate * tick;
    const uint64_t ramp_ticks = 50, timeout = 20 * MS;

    frtest_rng rng = {12345};
    model m = {0};
    uint64_t now = 1000 * MS;
    fr_vec3 prevf = fr_v3_zero(), prevt = fr_v3_zero(), inf_prev = fr_v3(3, 0, 0),
            int_prev = fr_v3(0.1, 0, 0);
    int kind = G_QUIET, feed_mode = 0;
    long block = 0;
    long n_full = 0, n_ramp = 0, n_capped = 0, n_limited = 0, n_wd = 0, n_nan = 0, n_drops = 0;
    long n_engage = 0;
    const long N = 1000000;
    for (long i = 0; i < N; i++) {
        if (block-- <= 0) { /* new block: input kind and feeding pattern */
            block = (long)(frtest_next(&rng) % 200);
            int r = (int)(frtest_next(&rng) % 10);
            kind = r < 3 ? G_QUIET : r < 7 ? G_NORMAL : G_ADVERSARIAL;
            feed_mode = (int)(frtest_next(&rng) % 6); /* 0-2 fresh, 3 alternate, 4 rare, 5 none */
        }
        /* time: 1 ms ticks with occasional gaps (a stalled loop) */
        now += frtest_next(&rng) % 500 == 0 ? frtest_next(&rng) % (60 * MS) : MS;
        bool feed = feed_mode <= 2 || (feed_mode == 3 && (i & 1)) ||
                    (feed_mode == 4 && frtest_next(&rng) % 25 == 0);
        if (feed) {
            fr_safety_feed(&s, now);
            m.fed = true;
            m.last_feed = now;
        }
        bool expired = !m.fed || (int64_t)(now - m.last_feed) > (int64_t)timeout;
        REQUIRE_MSG(fr_safety_expired(&s, now) == expired, "tick %ld watchdog", i);

        fr_device_cmd in = {gen_vec(&rng, kind, 0.2, 0.5, 30.0, capf, inf_prev),
                            gen_vec(&rng, kind, 0.02, 0.05, 2.0, capt, int_prev)};
        if (kind == G_ADVERSARIAL && frtest_next(&rng) % 3 == 0) in.torque = fr_v3_zero();
        inf_prev = in.force;
        int_prev = in.torque;
        fr_device_cmd out;
        int flags = fr_safety_apply(&s, &in, now, &out);

        /* invariants on every tick */
        REQUIRE(fr_v3_isfinite(out.force) && fr_v3_isfinite(out.torque));
        REQUIRE_MSG(pnorm(out.force) <= capf, "tick %ld |F| = %.17g", i, pnorm(out.force));
        REQUIRE_MSG(pnorm(out.torque) <= capt, "tick %ld |T| = %.17g", i, pnorm(out.torque));
        if (!is_zero(out.force))
            REQUIRE_MSG(pnorm(fr_v3_sub(out.force, prevf)) <= stepf, "tick %ld dF = %.17g", i,
                        pnorm(fr_v3_sub(out.force, prevf)));
        else if (pnorm(prevf) > stepf)
            n_drops++;
        if (!is_zero(out.torque))
            REQUIRE_MSG(pnorm(fr_v3_sub(out.torque, prevt)) <= stept, "tick %ld dT", i);

        /* the independent model of watchdog, NaN and engage gate */
        bool finite = fr_v3_isfinite(in.force) && fr_v3_isfinite(in.torque);
        if (expired || !finite) {
            m.mode = 0;
            m.quiet = 0;
            REQUIRE(is_zero(out.force) && is_zero(out.torque));
            REQUIRE(flags & (expired ? FR_SAFETY_WATCHDOG : FR_SAFETY_NONFINITE));
            if (expired)
                n_wd++;
            else
                n_nan++;
        } else if (m.mode == 0) {
            bool quiet = lnorm(in.force) < 0.2L && lnorm(in.torque) < 0.02L;
            m.quiet = quiet ? m.quiet + 1 : 0;
            if (m.quiet >= p.engage_ticks) {
                m.mode = 1;
                m.k = 0;
                n_engage++;
            }
            REQUIRE_MSG(is_zero(out.force) && is_zero(out.torque),
                        "tick %ld: output before "
                        "the quiet period",
                        i);
        } else {
            m.k++;
            double g = m.k >= ramp_ticks ? 1.0 : (double)m.k / (double)ramp_ticks;
            REQUIRE(pnorm(out.force) <= g * capf * (1 + 1e-12));
            REQUIRE(pnorm(out.torque) <= g * capt * (1 + 1e-12));
            if (g < 1.0)
                n_ramp++;
            else
                n_full++;
            REQUIRE(fabs(fr_safety_gain(&s) - g) <= 1e-15);
        }
        if (flags & FR_SAFETY_CAPPED) n_capped++;
        if (flags & FR_SAFETY_RATE_LIMITED) n_limited++;
        prevf = out.force;
        prevt = out.torque;
    }
    /* every state and stage was visited often */
    REQUIRE_MSG(n_full > 50000 && n_ramp > 20000 && n_capped > 10000 && n_limited > 20000 &&
                    n_wd > 20000 && n_nan > 5000 && n_engage > 1000 && n_drops > 300,
                "full %ld ramp %ld capped %ld limited %ld wd %ld nan %ld engage %ld drops %ld",
                n_full, n_ramp, n_capped, n_limited, n_wd, n_nan, n_engage, n_drops);
    fr_safety_stats st = fr_safety_get_stats(&s);
    ck_assert_uint_eq(st.ticks, (uint64_t)N);
    ck_assert_uint_eq(st.nonfinite, (uint64_t)n_nan);
    ck_assert_uint_eq(st.engagements, (uint64_t)n_engage);
}
END_TEST

/* ------------------------------------------------------------------ single stages */

/* Cap alone (no rate limit, no ramp): output = input·min(1, cap/|input|), same direction. */
START_TEST(test_cap_keeps_direction)
{
    fr_device_desc desc = desc6(8.0, 0.3);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.force_rate = p.torque_rate = INFINITY;
    p.ramp_time = 0.0;
    p.engage_ticks = 0;
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, 1e-3), FR_OK);
    frtest_rng rng = {99};
    fr_device_cmd zero = {fr_v3_zero(), fr_v3_zero()}, out;
    fr_safety_feed(&s, 0);
    fr_safety_apply(&s, &zero, 0, &out); /* the gate opens (engage_ticks 0) */
    for (int i = 0; i < 200000; i++) {
        fr_vec3 f;
        switch (i % 5) {
        case 0:
            f = fr_v3_scale(rand_dir(&rng), pow(10.0, frtest_uniform(&rng, -300, 308)));
            break;
        case 1:
            f = fr_v3(DBL_MAX, DBL_MAX * frtest_uniform(&rng, -1, 1), -DBL_MAX);
            break;
        case 2:
            f = fr_v3(DBL_TRUE_MIN * (double)(i % 7), 0, -DBL_TRUE_MIN);
            break;
        case 3:
            f = fr_v3_scale(rand_dir(&rng), frtest_uniform(&rng, 0, 16));
            break;
        default:
            f = fr_v3(0, 8.0, 0);
        }
        fr_device_cmd in = {f, fr_v3_scale(f, 0.01)};
        fr_safety_feed(&s, (uint64_t)i);
        fr_safety_apply(&s, &in, (uint64_t)i, &out);
        REQUIRE(pnorm(out.force) <= 8.0 && pnorm(out.torque) <= 0.3);
        /* compare with the extended-precision expectation */
        for (int w = 0; w < 2; w++) {
            fr_vec3 a = w ? in.torque : in.force, b = w ? out.torque : out.force;
            long double cap = w ? 0.3L : 8.0L, na = lnorm(a), nb = lnorm(b);
            long double want = na < cap ? na : cap;
            REQUIRE_MSG(fabsl(nb - want) <= 1e-14L * fmaxl(want, 1e-300L) + 1e-320L,
                        "|out| %.17Lg want %.17Lg", nb, want);
            if (na > 0 && nb > 0) { /* direction: unit vectors agree */
                long double d2 = 0;
                for (int c = 0; c < 3; c++) {
                    long double ua = lunit(a, c), ub = lunit(b, c);
                    d2 += (ua - ub) * (ua - ub);
                }
                REQUIRE_MSG(sqrtl(d2) <= 1e-14L, "direction changed by %Lg", sqrtl(d2));
            }
        }
    }
}
END_TEST

/* CHAI3D's start-up: < 0.2 N for 3 consecutive ticks, then the gain ramps over 2 s. */
START_TEST(test_ramp_engages_after_quiet)
{
    fr_device_desc desc = desc6(10.0, 1.0);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.force_rate = p.torque_rate = INFINITY;
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, 1e-3), FR_OK);
    fr_device_cmd big = {fr_v3(0, 5, 0), fr_v3_zero()}, small = {fr_v3(0.19, 0, 0), fr_v3_zero()};
    fr_device_cmd twist = {fr_v3(0.1, 0, 0), fr_v3(0, 0, 0.5)}, out;
    uint64_t now = 0;
#define TICK(cmd) (now += MS, fr_safety_feed(&s, now), fr_safety_apply(&s, &(cmd), now, &out))
    for (int i = 0; i < 100; i++) {
        TICK(big);
        REQUIRE(is_zero(out.force));
    }
    TICK(small);
    TICK(small);
    TICK(big); /* breaks the quiet run */
    TICK(small);
    TICK(twist); /* small force, large torque: not quiet either */
    TICK(small);
    TICK(small);
    REQUIRE(is_zero(out.force));
    ck_assert_int_eq(s.mode, FR_SAFETY_MODE_DISENGAGED);
    TICK(small); /* third consecutive quiet tick: the gate opens, output still zero */
    REQUIRE(is_zero(out.force));
    ck_assert_int_eq(s.mode, FR_SAFETY_MODE_RAMPING);
    for (int k = 1; k <= 2500; k++) {
        int fl = TICK(big);
        double g = k >= 2000 ? 1.0 : k / 2000.0;
        REQUIRE_MSG(fabs(out.force.y - 5.0 * g) <= 1e-15 * 5.0, "k %d: %g", k, out.force.y);
        ck_assert_int_eq(!!(fl & FR_SAFETY_RAMPING), k < 2000);
    }
#undef TICK
}
END_TEST

START_TEST(test_watchdog_timing)
{
    fr_device_desc desc = desc6(10.0, 1.0);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.watchdog_timeout = 0.02;
    p.ramp_time = 0;
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, 1e-3), FR_OK);
    REQUIRE(fr_safety_expired(&s, 0)); /* never fed */
    REQUIRE(fr_safety_expired(&s, 123456789));
    frtest_rng rng = {7};
    for (int i = 0; i < 100000; i++) {
        uint64_t t0 = frtest_next(&rng) >> 2;
        fr_safety_feed(&s, t0);
        uint64_t dt = frtest_next(&rng) % (40 * MS);
        REQUIRE_MSG(fr_safety_expired(&s, t0 + dt) == (dt > 20 * MS), "expiry at +%llu ns",
                    (unsigned long long)dt);
        REQUIRE(!fr_safety_expired(&s, t0 + 20 * MS));
        REQUIRE(fr_safety_expired(&s, t0 + 20 * MS + 1));
        REQUIRE(!fr_safety_expired(&s, t0 - dt)); /* earlier than the feed: not expired */
    }
    /* apply: full force while fed, minimum at once when the timeout passes, then a new quiet
     * period is needed before force comes back */
    fake_dev fd = {{&fake_ops, desc, NULL}, 0, 0, {{0}}};
    fr_safety_rearm(&s);
    fr_device_cmd q = {fr_v3_zero(), fr_v3_zero()}, f = {fr_v3(1, 0, 0), fr_v3_zero()}, out;
    uint64_t now = 5000 * MS;
    for (int i = 0; i < 3; i++) {
        now += MS;
        fr_safety_feed(&s, now);
        fr_safety_apply(&s, &q, now, &out);
    }
    for (int i = 0; i < 50; i++) { /* ramp 0, rate 2 N/tick: at 1 N within a tick */
        now += MS;
        fr_safety_feed(&s, now);
        fr_safety_apply(&s, &f, now, &out);
    }
    REQUIRE(out.force.x == 1.0);
    uint64_t fed_at = now;
    for (uint64_t t = fed_at; t <= fed_at + 40 * MS; t += MS / 4) {
        int fl = fr_safety_apply(&s, &f, t, &out);
        bool exp = t > fed_at + 20 * MS;
        ck_assert_int_eq(!!(fl & FR_SAFETY_WATCHDOG), exp);
        REQUIRE(exp ? out.force.x == 0.0 : out.force.x == 1.0);
        ck_assert_int_eq(fr_safety_watchdog_poll(&s, &fd.dev, t), exp);
    }
    ck_assert_int_eq(fd.minimums, 1); /* once per stall */
    ck_assert_uint_eq(s.stats.watchdog_trips, 1);
    now = fed_at + 50 * MS;
    fr_safety_feed(&s, now);
    fr_safety_apply(&s, &f, now, &out);
    REQUIRE(out.force.x == 0.0); /* disengaged: 1 N is not quiet */
    REQUIRE(!fr_safety_watchdog_poll(&s, &fd.dev, now));
}
END_TEST

START_TEST(test_drop_to_minimum_is_immediate)
{
    fr_device_desc desc = desc6(10.0, 1.0);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.ramp_time = 0;
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, 1e-3), FR_OK);
    fr_device_cmd q = {fr_v3_zero(), fr_v3_zero()}, out;
    fr_device_cmd f = {fr_v3(0, 0, 9), fr_v3(0.5, 0, 0)};
    uint64_t now = 0;
    for (int cause = 0; cause < 3; cause++) {
        fr_safety_rearm(&s);
        for (int i = 0; i < 3; i++) {
            now += MS;
            fr_safety_feed(&s, now);
            fr_safety_apply(&s, &q, now, &out);
        }
        for (int i = 1; i <= 10; i++) { /* rate-limited rise: 2 N and 0.1 N·m per tick */
            now += MS;
            fr_safety_feed(&s, now);
            fr_safety_apply(&s, &f, now, &out);
            REQUIRE(fabs(out.force.z - fmin(9.0, 2.0 * i)) <= 1e-12);
            REQUIRE(fabs(out.torque.x - fmin(0.5, 0.1 * i)) <= 1e-12);
        }
        now += MS;
        fr_device_cmd bad = {fr_v3(NAN, 0, 0), fr_v3_zero()};
        if (cause != 2)
            fr_safety_feed(&s, now);
        else
            now += 100 * MS;
        fr_safety_apply(&s, cause == 0 ? &q : &bad, now, &out);
        REQUIRE(is_zero(out.force) && is_zero(out.torque));
    }
    ck_assert_uint_eq(s.stats.nonfinite, 1);
    ck_assert_uint_eq(s.stats.watchdog_trips, 1);
}
END_TEST

/* A 3-DOF-forced device gets no torque; params may only lower the device's caps. */
START_TEST(test_caps_from_description)
{
    fr_device_desc d = desc6(12.0, 0.4);
    fr_safety_params p;
    fr_safety_params_default(&p);
    fr_safety s;
    p.max_force = 5.0;
    p.max_torque = 1.0;
    ck_assert_int_eq(fr_safety_init(&s, &d, &p, 1e-3), FR_OK);
    REQUIRE(s.cap_force == 5.0 && s.cap_torque == 0.4);
    d.dof_forced = 3;
    ck_assert_int_eq(fr_safety_init(&s, &d, &p, 1e-3), FR_OK);
    REQUIRE(s.cap_torque == 0.0);
    { /* a torque it cannot render neither holds the gate shut nor reaches the output */
        fr_device_cmd c = {fr_v3(0.1, 0, 0), fr_v3(0, 0, 3.0)}, out;
        for (int i = 1; i <= 10; i++) {
            fr_safety_feed(&s, (uint64_t)i * MS);
            fr_safety_apply(&s, &c, (uint64_t)i * MS, &out);
            REQUIRE(is_zero(out.torque));
        }
        ck_assert_int_eq(s.mode, FR_SAFETY_MODE_RAMPING);
        ck_assert(out.force.x > 0);
    }
    p.max_force = 50.0;
    ck_assert_int_eq(fr_safety_init(&s, &d, &p, 1e-3), FR_OK);
    REQUIRE(s.cap_force == 12.0);
    /* invalid configurations */
    fr_safety_params b = p;
    b.engage_force = NAN;
    ck_assert_int_lt(fr_safety_init(&s, &d, &b, 1e-3), 0);
    b = p;
    b.force_rate = 0;
    ck_assert_int_lt(fr_safety_init(&s, &d, &b, 1e-3), 0);
    b = p;
    b.watchdog_timeout = 0;
    ck_assert_int_lt(fr_safety_init(&s, &d, &b, 1e-3), 0);
    b = p;
    b.ramp_time = -1;
    ck_assert_int_lt(fr_safety_init(&s, &d, &b, 1e-3), 0);
    ck_assert_int_lt(fr_safety_init(&s, &d, &p, 0.0), 0);
    d.max_force = INFINITY;
    ck_assert_int_lt(fr_safety_init(&s, &d, &p, 1e-3), 0);
}
END_TEST

/* ------------------------------------------------------------------ exit paths */

static fr_safety *g_sig_safety; /* test-only: the handler needs to find them */
static fr_device *g_sig_dev;
static void on_signal(int sig)
{
    (void)sig;
    fr_safety_stop_signal(g_sig_safety, g_sig_dev);
}

START_TEST(test_exit_paths)
{
    fr_device_desc desc = desc6(10.0, 1.0);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.ramp_time = 0;
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, 1e-3), FR_OK);
    fake_dev fd = {{&fake_ops, desc, NULL}, 0, 0, {{0}}};
    fr_device_cmd q = {fr_v3_zero(), fr_v3_zero()}, f = {fr_v3(1, 0, 0), fr_v3_zero()};
    uint64_t now = 0;
    int fl = 0;
    for (int i = 0; i < 10; i++) {
        now += MS;
        fr_safety_feed(&s, now);
        fr_safety_write(&s, &fd.dev, i < 3 ? &q : &f, now, &fl);
    }
    ck_assert(fd.last.force.x == 1.0);
    /* signal path */
    g_sig_safety = &s;
    g_sig_dev = &fd.dev;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, &old);
    raise(SIGUSR1);
    sigaction(SIGUSR1, &old, NULL);
    ck_assert_int_eq(fd.minimums, 1);
    now += MS;
    fr_safety_feed(&s, now);
    fr_safety_write(&s, &fd.dev, &f, now, &fl);
    ck_assert(fl & FR_SAFETY_LATCHED);
    ck_assert(is_zero(fd.last.force));
    /* rearm, engage again, then the normal exit */
    fr_safety_rearm(&s);
    for (int i = 0; i < 10; i++) {
        now += MS;
        fr_safety_feed(&s, now);
        fr_safety_write(&s, &fd.dev, i < 3 ? &q : &f, now, &fl);
    }
    ck_assert(fd.last.force.x == 1.0);
    long w = fd.writes;
    fr_safety_stop(&s, &fd.dev);
    ck_assert_int_eq(fd.writes, w + 1);
    ck_assert(is_zero(fd.last.force) && is_zero(fd.last.torque));
    ck_assert_int_eq(fd.minimums, 2);
    now += MS;
    fr_safety_feed(&s, now);
    fr_safety_write(&s, &fd.dev, &f, now, &fl);
    ck_assert(is_zero(fd.last.force));
}
END_TEST

/* ------------------------------------------------------------------ real-time rules */

START_TEST(test_no_alloc_no_lock)
{
    if (!fri_watch_available()) return; /* sanitizer build */
    fr_device_desc desc = desc6(10.0, 1.0);
    fr_safety_params p;
    fr_safety_params_default(&p);
    p.ramp_time = 0.01;
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &desc, &p, 1e-3), FR_OK);
    fake_dev fd = {{&fake_ops, desc, NULL}, 0, 0, {{0}}};
    frtest_rng rng = {5};
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    uint64_t now = 0;
    for (int i = 0; i < 20000; i++) {
        now += MS;
        if (i % 100 < 90) fr_safety_feed(&s, now);
        fr_device_cmd in = {gen_vec(&rng, i % 3, 0.2, 0.5, 30, 10, fr_v3(1, 0, 0)),
                            gen_vec(&rng, i % 3, 0.02, 0.05, 2, 1, fr_v3(0, 1, 0))};
        fr_device_cmd out;
        fr_safety_apply(&s, &in, now, &out);
        fr_safety_write(&s, &fd.dev, &in, now, NULL);
        (void)fr_safety_expired(&s, now);
        (void)fr_safety_watchdog_poll(&s, &fd.dev, now);
        if (i % 5000 == 4999) {
            fr_safety_stop_signal(&s, &fd.dev);
            fr_safety_rearm(&s);
        }
    }
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_eq(c.allocs, 0);
    ck_assert_int_eq(c.frees, 0);
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.waits, 0);
    ck_assert_int_eq(c.io, 0);
}
END_TEST

static Suite *safety_suite(void)
{
    Suite *s = suite_create("haptic");
    TCase *tc = tcase_create("safety");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_property_million);
    tcase_add_test(tc, test_cap_keeps_direction);
    tcase_add_test(tc, test_ramp_engages_after_quiet);
    tcase_add_test(tc, test_watchdog_timing);
    tcase_add_test(tc, test_drop_to_minimum_is_immediate);
    tcase_add_test(tc, test_caps_from_description);
    tcase_add_test(tc, test_exit_paths);
    tcase_add_test(tc, test_no_alloc_no_lock);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(safety_suite)
