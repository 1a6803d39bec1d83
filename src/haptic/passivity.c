/* Time-domain passivity observer and controller (Hannaford & Ryu 2002) and the Colgate–Schenkel
 * bound. See include/fureru/coupling.h and docs/haptics.md. */
#include <math.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/coupling.h"

double fr_passivity_kmax(double b, double B, double T)
{
    if (!isfinite(b) || !isfinite(B) || !isfinite(T) || !(T > 0)) return NAN;
    double k = 2.0 * (b - fabs(B)) / T;
    return k > 0 ? k : 0.0;
}

bool fr_passivity_colgate(double K, double B, double b, double T)
{
    return b > K * T / 2.0 + fabs(B);
}

/* The declared latency in whole ticks, rounded up (a latency within 1e-6 of a whole number of
 * ticks is that number), capped at FR_PASSIVITY_MAX_DELAY. */
static int delay_ticks(double latency, double period)
{
    if (!(isfinite(latency) && latency > 0 && isfinite(period) && period > 0)) return 0;
    double n = ceil(latency / period - 1e-6);
    return n >= FR_PASSIVITY_MAX_DELAY ? FR_PASSIVITY_MAX_DELAY : n > 0 ? (int)n : 0;
}

static void params_default(fr_passivity_params *p, double alpha_max, double period, double latency)
{
    memset(p, 0, sizeof *p);
    p->period = period;
    p->alpha_max = alpha_max > 0 && isfinite(alpha_max) ? alpha_max : 0.0;
    p->mode = FR_PASSIVITY_ZOH;
    p->delay = delay_ticks(latency, period);
}

void fr_passivity_params_default(fr_passivity_params *p, const fr_device_desc *desc, double period)
{
    params_default(p, desc->max_damping, period, desc->latency);
}

void fr_passivity_params_default_rot(fr_passivity_params *p, const fr_device_desc *desc,
                                     double period)
{
    params_default(p, desc->max_rot_damping, period, desc->latency);
}

int fr_passivity_init(fr_passivity *po, const fr_passivity_params *p)
{
    if (!po || !p) return FR_ERR_INVAL;
    if (!(isfinite(p->period) && p->period > 0)) return FR_ERR_RANGE;
    if (!(isfinite(p->alpha_max) && p->alpha_max >= 0)) return FR_ERR_RANGE;
    if (p->mode != FR_PASSIVITY_ZOH && p->mode != FR_PASSIVITY_LITERAL &&
        p->mode != FR_PASSIVITY_MEASURED)
        return FR_ERR_RANGE;
    if (!(p->delay >= 0 && p->delay <= FR_PASSIVITY_MAX_DELAY)) return FR_ERR_RANGE;
    memset(po, 0, sizeof *po);
    po->T = p->period;
    po->alpha_max = p->alpha_max;
    po->mode = p->mode;
    po->delay = p->delay;
    po->count = INFINITY;
    return FR_OK;
}

void fr_passivity_reset(fr_passivity *po)
{
    po->E = 0.0;
    po->alpha = 0.0;
    po->v_prev = po->fe_prev = po->fout_prev = fr_v3_zero();
    po->altered = false;
    memset(po->past, 0, sizeof po->past);
    po->head = 0;
    po->count = INFINITY;
}

enum { NPAST = FR_PASSIVITY_MAX_DELAY + 1 };

/* The entry of tick n−1−k (k = 0: the last tick's). */
static inline fr_passivity_past *past_at(fr_passivity *po, int k)
{
    return &po->past[(po->head - k + NPAST) % NPAST];
}

/* Tick n's entry becomes the newest; the *_prev fields mirror it. */
static void push_past(fr_passivity *po, fr_vec3 fe, fr_vec3 fout, fr_vec3 v, double alpha)
{
    po->head = (po->head + 1) % NPAST;
    po->past[po->head] = (fr_passivity_past){fe, fout, v, v, alpha, false};
    po->alpha = alpha;
    po->v_prev = v;
    po->fe_prev = fe;
    po->fout_prev = fout;
    po->altered = false;
}

/* The controller for a late sensor (L > 0). v(n) is the motion over [n−1−L, n−L]; the output
 * is held over [n, n+1], L + 1 ticks later, when the hand may be moving the other way. Damping
 * on v then pushes the hand along its new motion at every reversal; the books (paired across
 * the delay) see that as more debt, and the controller rang at the force cap (session 42: the
 * shipped blocks scene at 5 ms, 271 of 1001 ticks). So this controller only takes away the part
 * of F_e along the motion predicted for the hold interval, never beyond zero: the output along
 * it lies between 0 and F_e's, so whatever the hand really does it gets no more power than F_e
 * alone would give it. The debt it acts on is E plus an estimate of the L ticks the books have
 * not seen yet (what was held, times the motion predicted for it). */
static int step_late(fr_passivity *po, double E, fr_vec3 fe, fr_vec3 v, fr_vec3 *force)
{
    const double T = po->T;
    const int L = po->delay;
    /* linear extrapolation over the L + 1 ticks from v(n)'s interval to the hold interval. An
     * encoder's count is the smallest displacement it reports; a still hand dithering between
     * two counts changes v by at most two counts a tick, so such a change is not extrapolated
     * (extrapolated, it read up to 5 counts a tick: at 1 ms and α_max 20 N·s/m up to 1.7 N taken
     * away and given back on a hand at rest) */
    const double dv[3] = {v.x, v.y, v.z};
    for (int a = 0; a < 3; a++)
        if (dv[a] != 0 && fabs(dv[a]) * T < po->count) po->count = fabs(dv[a]) * T;
    fr_vec3 slope = fr_v3_sub(v, past_at(po, 0)->v);
    const double dead = 2.0 * (1 + 1e-9) * po->count / T;
    if (fabs(slope.x) <= dead) slope.x = 0.0;
    if (fabs(slope.y) <= dead) slope.y = 0.0;
    if (fabs(slope.z) <= dead) slope.z = 0.0;
    const fr_vec3 vp = fr_v3_add(v, fr_v3_scale(slope, L + 1.0));
    double Ee = E;
    for (int k = 0; k < L; k++) {
        const fr_passivity_past *q = past_at(po, k);
        Ee -= T * fr_v3_dot(q->fout, q->vp);
    }
    if (!isfinite(Ee)) Ee = E;
    int flags = 0;
    double alpha = 0.0;
    fr_vec3 out = fe;
    const double vn = sqrt(fr_v3_norm2(vp));
    const double fpar = vn > 0 && isfinite(vn) ? fr_v3_dot(fe, vp) / vn : 0.0;
    if (Ee < 0 && fpar > 0) {
        /* remove r along vp: r = −E/(T|vp|), at most F_e's part along it and α_max|vp| */
        double r = fmin(-Ee / (T * vn), fpar);
        if (!(r < po->alpha_max * vn)) {
            r = po->alpha_max * vn;
            flags |= FR_PASSIVITY_CAPPED;
            po->stats.capped++;
        }
        if (r > 0) {
            alpha = r / vn;
            out = fr_v3_sub(fe, fr_v3_scale(vp, alpha));
            flags |= FR_PASSIVITY_ACTIVE;
            po->stats.active++;
        }
    }
    po->stats.dissipated += T * alpha * fr_v3_norm2(vp);
    push_past(po, fe, out, v, alpha);
    po->past[po->head].vp = vp;
    *force = out;
    return flags;
}

int fr_passivity_step(fr_passivity *po, fr_vec3 dx, fr_vec3 *force)
{
    po->stats.ticks++;
    const fr_vec3 fe = *force;
    if (!fr_v3_isfinite(dx) || !fr_v3_isfinite(fe)) {
        /* nothing non-finite enters the books; the safety chain rejects a bad force */
        po->stats.nonfinite++;
        /* what will be held next: the force as passed, or nothing once the safety chain has
         * rejected it; this interval's energy is unknown and left out */
        fr_vec3 held = fr_v3_isfinite(fe) ? fe : fr_v3_zero();
        push_past(po, held, held, fr_v3_zero(), 0.0);
        return FR_PASSIVITY_NONFINITE;
    }
    const double T = po->T;
    const int L = po->delay;
    const fr_vec3 v = fr_v3_scale(dx, 1.0 / T);
    /* the tick whose output was held while this motion happened: n−1−L */
    const fr_passivity_past *h = past_at(po, L);
    const double credit = T * h->alpha * fr_v3_norm2(h->v); /* T α(n−1−L)|v(n−1−L)|² */
    double dE;
    switch (po->mode) {
    case FR_PASSIVITY_LITERAL: /* H&R's f(n)·v(n), shifted by the delay like the others */
        dE = -T * fr_v3_dot(L ? past_at(po, L - 1)->fe : fe, v) + credit;
        break;
    case FR_PASSIVITY_MEASURED:
        dE = -T * fr_v3_dot(h->fout, v);
        break;
    default: /* ZOH */
        /* with a delay, what was held at tick n−1−L (the controller's part, which acted on an
         * old motion, included) is booked as it was: −T F_out(n−1−L)·v(n) */
        dE = h->altered || L > 0 ? -T * fr_v3_dot(h->fout, v) : -T * fr_v3_dot(h->fe, v) + credit;
        break;
    }
    double E = po->E + dE;
    if (!isfinite(E)) E = po->E; /* overflowing products: keep the books finite */
    po->E = E;

    if (L > 0) return step_late(po, E, fe, v, force);

    /* α(n) = min(α_max, −E/(T|v|²)) when E < 0, without dividing by a vanishing |v|² */
    int flags = 0;
    double alpha = 0.0;
    if (E < 0) {
        const double tv2 = T * fr_v3_norm2(v);
        if (-E >= po->alpha_max * tv2) {
            alpha = po->alpha_max;
            flags |= FR_PASSIVITY_CAPPED;
            po->stats.capped++;
        } else {
            alpha = -E / tv2; /* tv2 > −E/α_max > 0 here */
        }
        if (alpha > 0) {
            flags |= FR_PASSIVITY_ACTIVE;
            po->stats.active++;
        }
    }
    const fr_vec3 out = fr_v3_sub(fe, fr_v3_scale(v, alpha));
    po->stats.dissipated += T * alpha * fr_v3_norm2(v);
    push_past(po, fe, out, v, alpha);
    *force = out;
    return flags;
}

void fr_passivity_commit(fr_passivity *po, fr_vec3 force_written)
{
    if (!fr_v3_isfinite(force_written)) force_written = fr_v3_zero();
    if (force_written.x != po->fout_prev.x || force_written.y != po->fout_prev.y ||
        force_written.z != po->fout_prev.z) {
        po->altered = true;
        po->fout_prev = force_written;
        fr_passivity_past *h = &po->past[po->head];
        h->altered = true;
        h->fout = force_written;
    }
}
