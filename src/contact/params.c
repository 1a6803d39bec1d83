/* Contact parameters: reduced mass, mass-scaled gains, material combination, checks
 * (docs/contact.md §4). */
#include <math.h>
#include <string.h>

#include "contact_internal.h"
#include "fureru/base.h"

static bool is_static_mass(double m)
{
    return !(m > 0.0) || isinf(m);
}

double fr_contact_reduced_mass(double mass_a, double mass_b)
{
    bool sa = is_static_mass(mass_a), sb = is_static_mass(mass_b);
    if (sa && sb) return 0.0;
    if (sa) return mass_b;
    if (sb) return mass_a;
    return mass_a * mass_b / (mass_a + mass_b);
}

fr_contact_params fr_contact_params_scaled(double m_red, double dt, double kappa, double beta,
                                           double mu_s, double mu_k)
{
    if (!(kappa > 0.0)) kappa = FR_CONTACT_KAPPA;
    if (!(beta >= 0.0)) beta = FR_CONTACT_BETA;
    fr_contact_params p;
    memset(&p, 0, sizeof p);
    p.law = FR_CONTACT_MEAN_DEPTH;
    p.stiff_n = kappa * m_red / (dt * dt);
    p.damp_n = beta * m_red / dt;
    p.stiff_t = p.stiff_n;
    p.damp_t = p.damp_n;
    p.mu_s = mu_s;
    p.mu_k = mu_k;
    /* Half the depth at which the spring carries m_red·g: resting contacts get full damping. */
    p.damping_ramp = 0.5 * FR_CONTACT_RAMP_G * dt * dt / kappa;
    p.max_force = 0.0;
    p.normal_blend = 0.05;
    return p;
}

static bool mu_ok(double mu_s, double mu_k)
{
    return isfinite(mu_s) && isfinite(mu_k) && mu_k >= 0.0 && mu_k <= mu_s;
}

/* Two layers in series; a value <= 0 is a rigid layer (contributes nothing). */
static double series(double x, double y)
{
    if (!(x > 0.0)) return y > 0.0 ? y : 0.0;
    if (!(y > 0.0)) return x;
    return x * y / (x + y);
}

int fr_contact_params_combine(const fr_contact_material *a, const fr_contact_material *b,
                              double m_red, double dt, fr_contact_params *out)
{
    return fr_contact_params_combine_ex(a, b, m_red, dt, 0.0, -1.0, out);
}

int fr_contact_params_combine_ex(const fr_contact_material *a, const fr_contact_material *b,
                                 double m_red, double dt, double kappa, double beta,
                                 fr_contact_params *out)
{
    if (!a || !b || !out) return FR_ERR_INVAL;
    if (!mu_ok(a->mu_s, a->mu_k) || !mu_ok(b->mu_s, b->mu_k)) return FR_ERR_INVAL;
    if (!isfinite(a->stiffness) || !isfinite(b->stiffness) || !isfinite(a->damping) ||
        !isfinite(b->damping) || a->damping < 0.0 || b->damping < 0.0)
        return FR_ERR_INVAL;
    double mu_s = sqrt(a->mu_s * b->mu_s), mu_k = sqrt(a->mu_k * b->mu_k);
    bool ka = a->stiffness > 0.0, kb = b->stiffness > 0.0;
    if (!ka && !kb) {
        if (!(m_red > 0.0) || !isfinite(m_red) || !(dt > 0.0)) return FR_ERR_INVAL;
        *out = fr_contact_params_scaled(m_red, dt, kappa, beta, mu_s, mu_k);
        return FR_OK;
    }
    fr_contact_params p;
    memset(&p, 0, sizeof p);
    p.law = FR_CONTACT_VOLUME;
    p.stiff_n = series(ka ? a->stiffness : 0.0, kb ? b->stiffness : 0.0);
    /* a rigid material's damping is ignored; two dashpots in series otherwise */
    double ca = ka ? a->damping : 0.0, cb = kb ? b->damping : 0.0;
    p.damp_n = (ka && kb) ? (ca + cb > 0.0 ? ca * cb / (ca + cb) : 0.0) : (ka ? ca : cb);
    p.stiff_t = p.stiff_n;
    p.damp_t = p.damp_n;
    p.mu_s = mu_s;
    p.mu_k = mu_k;
    p.damping_ramp = 0.0;
    p.max_force = 0.0;
    p.normal_blend = 0.05;
    *out = p;
    return FR_OK;
}

int fr_contact_params_check(const fr_contact_params *p)
{
    if (!p) return FR_ERR_INVAL;
    if (p->law != FR_CONTACT_MEAN_DEPTH && p->law != FR_CONTACT_VOLUME) return FR_ERR_INVAL;
    if (!(p->stiff_n > 0.0) || !isfinite(p->stiff_n)) return FR_ERR_INVAL;
    if (!(p->stiff_t > 0.0) || !isfinite(p->stiff_t)) return FR_ERR_INVAL;
    if (!(p->damp_n >= 0.0) || !isfinite(p->damp_n)) return FR_ERR_INVAL;
    if (!(p->damp_t >= 0.0) || !isfinite(p->damp_t)) return FR_ERR_INVAL;
    if (!mu_ok(p->mu_s, p->mu_k)) return FR_ERR_INVAL;
    if (!(p->damping_ramp >= 0.0) || !isfinite(p->damping_ramp)) return FR_ERR_INVAL;
    if (!(p->max_force >= 0.0) || !isfinite(p->max_force)) return FR_ERR_INVAL;
    if (!(p->normal_blend >= 0.0) || !(p->normal_blend < 1.0)) return FR_ERR_INVAL;
    if (!(p->stiffen_depth >= 0.0) || !isfinite(p->stiffen_depth)) return FR_ERR_INVAL;
    if (!(p->stiffen_cap >= 0.0) || !isfinite(p->stiffen_cap)) return FR_ERR_INVAL;
    return FR_OK;
}

double fr_contact_stance_depth(double stiffen_depth, double width, double height)
{
    if (!(stiffen_depth > 0.0) || !(width > 0.0) || !(height > 0.0) || !isfinite(width) ||
        !isfinite(height))
        return stiffen_depth;
    const double cap = FR_CONTACT_STANCE * width * width / height;
    return fmax(stiffen_depth / FR_CONTACT_STANCE_FLOOR, fmin(stiffen_depth, cap));
}

void fr_contact_state_reset(fr_contact_state *s)
{
    if (s) memset(s, 0, sizeof *s);
}
