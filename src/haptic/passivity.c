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

static void params_default(fr_passivity_params *p, double alpha_max, double period)
{
    memset(p, 0, sizeof *p);
    p->period = period;
    p->alpha_max = alpha_max > 0 && isfinite(alpha_max) ? alpha_max : 0.0;
    p->mode = FR_PASSIVITY_ZOH;
}

void fr_passivity_params_default(fr_passivity_params *p, const fr_device_desc *desc, double period)
{
    params_default(p, desc->max_damping, period);
}

void fr_passivity_params_default_rot(fr_passivity_params *p, const fr_device_desc *desc,
                                     double period)
{
    params_default(p, desc->max_rot_damping, period);
}

int fr_passivity_init(fr_passivity *po, const fr_passivity_params *p)
{
    if (!po || !p) return FR_ERR_INVAL;
    if (!(isfinite(p->period) && p->period > 0)) return FR_ERR_RANGE;
    if (!(isfinite(p->alpha_max) && p->alpha_max >= 0)) return FR_ERR_RANGE;
    if (p->mode != FR_PASSIVITY_ZOH && p->mode != FR_PASSIVITY_LITERAL &&
        p->mode != FR_PASSIVITY_MEASURED)
        return FR_ERR_RANGE;
    memset(po, 0, sizeof *po);
    po->T = p->period;
    po->alpha_max = p->alpha_max;
    po->mode = p->mode;
    return FR_OK;
}

void fr_passivity_reset(fr_passivity *po)
{
    po->E = 0.0;
    po->alpha = 0.0;
    po->v_prev = po->fe_prev = po->fout_prev = fr_v3_zero();
    po->altered = false;
}

int fr_passivity_step(fr_passivity *po, fr_vec3 dx, fr_vec3 *force)
{
    po->stats.ticks++;
    const fr_vec3 fe = *force;
    if (!fr_v3_isfinite(dx) || !fr_v3_isfinite(fe)) {
        /* nothing non-finite enters the books; the safety chain rejects a bad force */
        po->stats.nonfinite++;
        po->alpha = 0.0;
        po->v_prev = fr_v3_zero();
        /* what will be held next: the force as passed, or nothing once the safety chain has
         * rejected it; this interval's energy is unknown and left out */
        po->fe_prev = po->fout_prev = fr_v3_isfinite(fe) ? fe : fr_v3_zero();
        po->altered = false;
        return FR_PASSIVITY_NONFINITE;
    }
    const double T = po->T;
    const fr_vec3 v = fr_v3_scale(dx, 1.0 / T);
    const double credit = T * po->alpha * fr_v3_norm2(po->v_prev); /* T α(n−1)|v(n−1)|² */
    double dE;
    switch (po->mode) {
    case FR_PASSIVITY_LITERAL:
        dE = -T * fr_v3_dot(fe, v) + credit;
        break;
    case FR_PASSIVITY_MEASURED:
        dE = -T * fr_v3_dot(po->fout_prev, v);
        break;
    default: /* ZOH */
        dE = po->altered ? -T * fr_v3_dot(po->fout_prev, v)
                         : -T * fr_v3_dot(po->fe_prev, v) + credit;
        break;
    }
    double E = po->E + dE;
    if (!isfinite(E)) E = po->E; /* overflowing products: keep the books finite */
    po->E = E;

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
    po->alpha = alpha;
    po->v_prev = v;
    po->fe_prev = fe;
    po->fout_prev = out;
    po->altered = false;
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
    }
}
