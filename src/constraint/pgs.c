/* Projected Gauss–Seidel / SOR on bounded constraint rows (include/fureru/constraint.h). */
#include <math.h>

#include "fureru/base.h"
#include "fureru/constraint.h"

fr_constraint_opts fr_constraint_opts_default(void)
{
    return (fr_constraint_opts){.omega = 1.0, .max_iterations = 200, .tolerance = 1e-9};
}

static inline fr_svec minv(const fr_cbody *b, fr_svec j)
{
    return fr_sv(fr_m3_mulv(b->inv_inertia, j.ang), fr_v3_scale(j.lin, b->inv_mass));
}

static inline double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static inline void bounds(const fr_crow *rows, const fr_crow *r, double *lo, double *hi)
{
    if (r->normal >= 0) {
        double l = r->mu * fmax(rows[r->normal].lambda, 0.0);
        *lo = -l;
        *hi = l;
    } else {
        *lo = r->lo;
        *hi = r->hi;
    }
}

double fr_constraint_w(const fr_cbody *bodies, const fr_crow *r)
{
    double w = r->rhs + r->cfm * r->lambda;
    if (r->a >= 0) w += fr_sv_dot(r->ja, bodies[r->a].dnu);
    if (r->b >= 0) w += fr_sv_dot(r->jb, bodies[r->b].dnu);
    return w;
}

double fr_constraint_A(const fr_cbody *bodies, const fr_crow *rows, int i, int j)
{
    (void)bodies;
    const fr_crow *ri = &rows[i], *rj = &rows[j];
    double s = i == j ? ri->cfm : 0.0;
    if (ri->a >= 0 && ri->a == rj->a) s += fr_sv_dot(ri->ja, rj->ta);
    if (ri->a >= 0 && ri->a == rj->b) s += fr_sv_dot(ri->ja, rj->tb);
    if (ri->b >= 0 && ri->b == rj->a) s += fr_sv_dot(ri->jb, rj->ta);
    if (ri->b >= 0 && ri->b == rj->b) s += fr_sv_dot(ri->jb, rj->tb);
    return s;
}

static inline void push(fr_cbody *bodies, const fr_crow *r, double d)
{
    if (r->a >= 0) bodies[r->a].dnu = fr_sv_mad(bodies[r->a].dnu, d, r->ta);
    if (r->b >= 0) bodies[r->b].dnu = fr_sv_mad(bodies[r->b].dnu, d, r->tb);
}

/* Natural-map residual in velocity units: how far λ is from its projected Jacobi update. */
static double natural_residual(const fr_cbody *bodies, const fr_crow *rows, int n)
{
    double res = 0.0;
    for (int i = 0; i < n; i++) {
        const fr_crow *r = &rows[i];
        if (!(r->inv_d > 0)) continue;
        double lo, hi;
        bounds(rows, r, &lo, &hi);
        double wi = fr_constraint_w(bodies, r);
        double d = r->lambda - clampd(r->lambda - wi * r->inv_d, lo, hi);
        res = fmax(res, fabs(d) / r->inv_d);
    }
    return res;
}

int fr_constraint_solve(fr_cbody *bodies, int nb, fr_crow *rows, int n,
                        const fr_constraint_opts *opts, fr_constraint_stats *st)
{
    fr_constraint_opts o = opts ? *opts : fr_constraint_opts_default();
    if (!isfinite(o.omega) || o.max_iterations < 0 || !(o.tolerance >= 0)) return FR_ERR_RANGE;
    for (int k = 0; k < nb; k++) bodies[k].dnu = fr_sv_zero();
    /* the diagonal of A and M⁻¹J_iᵀ; the warm start's velocity change */
    for (int i = 0; i < n; i++) {
        fr_crow *r = &rows[i];
        if (r->a >= nb || r->b >= nb || !(r->cfm >= 0) || (r->normal >= 0 && r->normal >= n))
            return FR_ERR_RANGE;
        double d = r->cfm;
        r->ta = r->a >= 0 ? minv(&bodies[r->a], r->ja) : fr_sv_zero();
        r->tb = r->b >= 0 ? minv(&bodies[r->b], r->jb) : fr_sv_zero();
        if (r->a >= 0) d += fr_sv_dot(r->ja, r->ta);
        if (r->b >= 0) d += fr_sv_dot(r->jb, r->tb);
        /* a body that appears on both sides of a row (a == b) couples its two blocks */
        if (r->a >= 0 && r->a == r->b) d += 2.0 * fr_sv_dot(r->ja, r->tb);
        r->inv_d = d > 1e-300 ? 1.0 / d : 0.0;
        if (!isfinite(r->lambda) || r->inv_d == 0.0) r->lambda = 0.0;
        push(bodies, r, r->lambda);
    }
    int it = 0;
    bool conv = false;
    while (it < o.max_iterations) {
        it++;
        double maxd = 0.0;
        for (int i = 0; i < n; i++) {
            fr_crow *r = &rows[i];
            if (r->inv_d == 0.0) continue;
            double lo, hi;
            bounds(rows, r, &lo, &hi);
            double wi = fr_constraint_w(bodies, r);
            double l = clampd(r->lambda - o.omega * wi * r->inv_d, lo, hi);
            double d = l - r->lambda;
            if (d != 0.0) {
                r->lambda = l;
                push(bodies, r, d);
                maxd = fmax(maxd, fabs(d) / r->inv_d);
            }
        }
        if (!isfinite(maxd)) return FR_ERR_NUMERIC;
        if (maxd <= o.tolerance) {
            conv = true;
            break;
        }
    }
    if (st) {
        st->rows = n;
        st->iterations = it;
        st->converged = conv || n == 0;
        st->residual = natural_residual(bodies, rows, n);
        if (!isfinite(st->residual)) return FR_ERR_NUMERIC;
    }
    return FR_OK;
}

int fr_lcp_pgs_dense(int n, const double *A, const double *b, const double *lo, const double *hi,
                     double *x, const fr_constraint_opts *opts, fr_constraint_stats *st)
{
    fr_constraint_opts o = opts ? *opts : fr_constraint_opts_default();
    if (n < 0 || !isfinite(o.omega)) return FR_ERR_RANGE;
    for (int i = 0; i < n; i++)
        if (!(A[i * n + i] > 0)) return FR_ERR_RANGE;
    int it = 0;
    bool conv = false;
    while (it < o.max_iterations) {
        it++;
        double maxd = 0.0;
        for (int i = 0; i < n; i++) {
            double wi = b[i];
            for (int j = 0; j < n; j++) wi += A[i * n + j] * x[j];
            double l = clampd(x[i] - o.omega * wi / A[i * n + i], lo[i], hi[i]);
            maxd = fmax(maxd, fabs(l - x[i]) * A[i * n + i]);
            x[i] = l;
        }
        if (!isfinite(maxd)) return FR_ERR_NUMERIC;
        if (maxd <= o.tolerance) {
            conv = true;
            break;
        }
    }
    if (st) {
        double res = 0.0;
        for (int i = 0; i < n; i++) {
            double wi = b[i];
            for (int j = 0; j < n; j++) wi += A[i * n + j] * x[j];
            double d = x[i] - clampd(x[i] - wi / A[i * n + i], lo[i], hi[i]);
            res = fmax(res, fabs(d) * A[i * n + i]);
        }
        st->rows = n;
        st->iterations = it;
        st->converged = conv;
        st->residual = res;
    }
    return FR_OK;
}
