/* The haptic safety chain; stage order and reasons are in include/fureru/haptic.h. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/haptic.h"

/* Signal handlers may only touch lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_int must be lock-free");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");

#define CAP_LIMIT 1e6 /* N or N·m; keeps every sum of squares below overflow */

void fr_safety_params_default(fr_safety_params *p)
{
    *p = (fr_safety_params){
        .max_force = 0.0,
        .max_torque = 0.0,
        .force_rate = 2000.0,
        .torque_rate = 100.0,
        .engage_force = 0.2,
        .engage_torque = 0.02,
        .engage_ticks = 3,
        .ramp_time = 2.0,
        .watchdog_timeout = 0.02,
    };
}

/* The norm the invariants are stated in: plain, for vectors already bounded by CAP_LIMIT. */
static inline double plain_norm(fr_vec3 v)
{
    return sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

static inline double max_abs(fr_vec3 v)
{
    return fmax(fabs(v.x), fmax(fabs(v.y), fabs(v.z)));
}

/* |v| for any finite v, without overflow (1e300, DBL_MAX) or underflow (denormals). */
static inline double robust_norm(fr_vec3 v)
{
    double m = max_abs(v);
    if (m == 0.0) return 0.0;
    fr_vec3 u = fr_v3(v.x / m, v.y / m, v.z / m); /* not 1/m: it overflows for denormal m */
    return m * plain_norm(u);
}

/* u·s with plain_norm(u·s) ≤ limit guaranteed after rounding (shrinks s by ulps). */
static fr_vec3 scale_within(fr_vec3 u, double s, double limit)
{
    for (int i = 0; i < 16; i++) {
        fr_vec3 r = fr_v3_scale(u, s);
        if (plain_norm(r) <= limit) return r;
        s = nextafter(s, 0.0);
    }
    return fr_v3_zero(); /* unreachable in practice; zero is always safe */
}

/* Stage 5: cap the magnitude, keeping direction. n = robust_norm(v). */
static fr_vec3 cap_vec(fr_vec3 v, double n, double cap, bool *capped)
{
    if (n <= cap && plain_norm(v) <= cap) return v;
    *capped = true;
    if (!(cap > 0.0)) return fr_v3_zero();
    double m = max_abs(v);
    fr_vec3 u = fr_v3(v.x / m, v.y / m, v.z / m); /* components in [-1, 1], one of them ±1 */
    return scale_within(u, cap / plain_norm(u), cap);
}

/* Stage 7: move from prev toward target by at most step, staying within cap. */
static fr_vec3 rate_vec(fr_vec3 prev, fr_vec3 target, double step, double cap, bool *limited)
{
    if (target.x == 0.0 && target.y == 0.0 && target.z == 0.0) return fr_v3_zero();
    fr_vec3 d = fr_v3_sub(target, prev);
    double nd = plain_norm(d);
    if (nd <= step) return target;
    *limited = true;
    double t = step / nd;
    for (int i = 0; i < 16; i++) {
        fr_vec3 r = fr_v3_add(prev, fr_v3_scale(d, t));
        if (plain_norm(fr_v3_sub(r, prev)) <= step && plain_norm(r) <= cap) return r;
        t = nextafter(t, 0.0);
    }
    return prev; /* satisfies both bounds: |prev| ≤ cap, zero step */
}

static bool valid_nonneg(double v)
{
    return isfinite(v) && v >= 0.0;
}

int fr_safety_init(fr_safety *s, const fr_device_desc *desc, const fr_safety_params *p,
                   double tick_period)
{
    if (!s || !desc || !p) return FR_ERR_INVAL;
    if (!(isfinite(tick_period) && tick_period > 0.0)) return FR_ERR_INVAL;
    if (!valid_nonneg(desc->max_force) || !valid_nonneg(desc->max_torque)) return FR_ERR_RANGE;
    if (!valid_nonneg(p->max_force) || !valid_nonneg(p->max_torque)) return FR_ERR_RANGE;
    if (!(p->force_rate > 0.0) || !(p->torque_rate > 0.0)) return FR_ERR_RANGE; /* +inf ok */
    if (!(isfinite(p->engage_force) && p->engage_force > 0.0)) return FR_ERR_RANGE;
    if (!(isfinite(p->engage_torque) && p->engage_torque > 0.0)) return FR_ERR_RANGE;
    if (p->engage_ticks < 0 || !valid_nonneg(p->ramp_time)) return FR_ERR_RANGE;
    if (!(isfinite(p->watchdog_timeout) && p->watchdog_timeout > 0.0)) return FR_ERR_RANGE;
    if (p->watchdog_timeout > 1e6 || p->ramp_time / tick_period > 1e15) return FR_ERR_RANGE;

    double capf = desc->max_force, capt = desc->dof_forced >= 6 ? desc->max_torque : 0.0;
    if (p->max_force > 0.0) capf = fmin(capf, p->max_force);
    if (p->max_torque > 0.0) capt = fmin(capt, p->max_torque);
    if (capf > CAP_LIMIT || capt > CAP_LIMIT) return FR_ERR_RANGE;

    memset(s, 0, sizeof *s);
    s->cap_force = capf;
    s->cap_torque = capt;
    s->step_force = p->force_rate * tick_period;
    s->step_torque = p->torque_rate * tick_period;
    s->engage_force = p->engage_force;
    s->engage_torque = p->engage_torque;
    s->engage_ticks = p->engage_ticks;
    s->ramp_ticks = (uint64_t)ceil(p->ramp_time / tick_period - 1e-9);
    s->timeout_ns = (int64_t)llround(p->watchdog_timeout * 1e9);
    s->mode = FR_SAFETY_MODE_DISENGAGED;
    atomic_init(&s->last_feed_ns, 0);
    atomic_init(&s->fed, 0);
    atomic_init(&s->latched, 0);
    atomic_init(&s->poll_done, 0);
    return FR_OK;
}

void fr_safety_feed(fr_safety *s, uint64_t now_ns)
{
    atomic_store_explicit(&s->last_feed_ns, now_ns, memory_order_relaxed);
    atomic_store_explicit(&s->fed, 1, memory_order_release);
    atomic_store_explicit(&s->poll_done, 0, memory_order_relaxed);
}

bool fr_safety_expired(const fr_safety *s, uint64_t now_ns)
{
    if (!atomic_load_explicit(&s->fed, memory_order_acquire)) return true;
    uint64_t last = atomic_load_explicit(&s->last_feed_ns, memory_order_relaxed);
    return (int64_t)(now_ns - last) > s->timeout_ns;
}

static void disengage(fr_safety *s)
{
    s->mode = FR_SAFETY_MODE_DISENGAGED;
    s->quiet = 0;
    s->ramp_k = 0;
    s->gain = 0.0;
}

/* Output minimum: immediate, never rate-limited. */
static int put_minimum(fr_safety *s, fr_device_cmd *out, int flags)
{
    s->last_force = fr_v3_zero();
    s->last_torque = fr_v3_zero();
    out->force = fr_v3_zero();
    out->torque = fr_v3_zero();
    return flags;
}

int fr_safety_apply(fr_safety *s, const fr_device_cmd *in, uint64_t now_ns, fr_device_cmd *out)
{
    fr_vec3 f = in->force, t = in->torque; /* copy first: out may alias in */
    s->stats.ticks++;

    /* 1. latch */
    if (atomic_load_explicit(&s->latched, memory_order_relaxed)) {
        disengage(s);
        return put_minimum(s, out, FR_SAFETY_LATCHED | FR_SAFETY_DISENGAGED);
    }
    /* 2. watchdog */
    if (fr_safety_expired(s, now_ns)) {
        if (!s->wd_tripped) s->stats.watchdog_trips++;
        s->wd_tripped = true;
        disengage(s);
        return put_minimum(s, out, FR_SAFETY_WATCHDOG | FR_SAFETY_DISENGAGED);
    }
    s->wd_tripped = false;
    /* 3. finite */
    if (!fr_v3_isfinite(f) || !fr_v3_isfinite(t)) {
        s->stats.nonfinite++;
        disengage(s);
        return put_minimum(s, out, FR_SAFETY_NONFINITE | FR_SAFETY_DISENGAGED);
    }
    /* 4. engage gate, on the raw request */
    double nf = robust_norm(f), nt = robust_norm(t);
    if (s->mode == FR_SAFETY_MODE_DISENGAGED) {
        /* torque the device cannot render (cap 0, 3-DOF) does not hold the gate shut */
        if (nf < s->engage_force && (nt < s->engage_torque || s->cap_torque == 0.0))
            s->quiet++;
        else
            s->quiet = 0;
        if (s->quiet >= s->engage_ticks) {
            s->mode = FR_SAFETY_MODE_RAMPING;
            s->ramp_k = 0;
            s->gain = 0.0;
            s->stats.engagements++;
        }
        return put_minimum(s, out, FR_SAFETY_DISENGAGED);
    }
    int flags = 0;
    if (s->mode == FR_SAFETY_MODE_RAMPING) {
        s->ramp_k++;
        if (s->ramp_k >= s->ramp_ticks) {
            s->gain = 1.0;
            s->mode = FR_SAFETY_MODE_ON;
        } else {
            s->gain = (double)s->ramp_k / (double)s->ramp_ticks;
            flags |= FR_SAFETY_RAMPING;
        }
    }
    /* 5. cap */
    bool capped = false;
    f = cap_vec(f, nf, s->cap_force, &capped);
    t = cap_vec(t, nt, s->cap_torque, &capped);
    /* 6. ramp (gain ≤ 1 cannot raise any component, so the cap still holds) */
    if (s->gain < 1.0) {
        f = fr_v3_scale(f, s->gain);
        t = fr_v3_scale(t, s->gain);
    }
    /* 7. rate */
    bool limited = false;
    f = rate_vec(s->last_force, f, s->step_force, s->cap_force, &limited);
    t = rate_vec(s->last_torque, t, s->step_torque, s->cap_torque, &limited);

    if (capped) {
        flags |= FR_SAFETY_CAPPED;
        s->stats.capped++;
    }
    if (limited) {
        flags |= FR_SAFETY_RATE_LIMITED;
        s->stats.rate_limited++;
    }
    s->last_force = f;
    s->last_torque = t;
    out->force = f;
    out->torque = t;
    return flags;
}

int fr_safety_write(fr_safety *s, fr_device *dev, const fr_device_cmd *in, uint64_t now_ns,
                    int *flags)
{
    fr_device_cmd out;
    int fl = fr_safety_apply(s, in, now_ns, &out);
    if (flags) *flags = fl;
    return fr_device_write(dev, &out);
}

bool fr_safety_watchdog_poll(fr_safety *s, fr_device *dev, uint64_t now_ns)
{
    if (!fr_safety_expired(s, now_ns)) return false;
    if (dev && atomic_exchange_explicit(&s->poll_done, 1, memory_order_acq_rel) == 0)
        fr_device_set_minimum(dev);
    return true;
}

void fr_safety_latch(fr_safety *s)
{
    atomic_store_explicit(&s->latched, 1, memory_order_seq_cst);
}

void fr_safety_stop_signal(fr_safety *s, fr_device *dev)
{
    if (s) fr_safety_latch(s);
    if (dev) fr_device_set_minimum(dev);
}

void fr_safety_stop(fr_safety *s, fr_device *dev)
{
    if (s) fr_safety_latch(s);
    if (!dev) return;
    fr_device_cmd zero = {fr_v3_zero(), fr_v3_zero()};
    if (s) {
        s->last_force = fr_v3_zero();
        s->last_torque = fr_v3_zero();
    }
    (void)fr_device_write(dev, &zero);
    fr_device_set_minimum(dev);
}

void fr_safety_rearm(fr_safety *s)
{
    disengage(s);
    s->last_force = fr_v3_zero();
    s->last_torque = fr_v3_zero();
    s->wd_tripped = false;
    atomic_store_explicit(&s->latched, 0, memory_order_seq_cst);
}
