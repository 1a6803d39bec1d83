/*
 * Box-constrained strictly convex QP by the dual active-set method of Goldfarb and Idnani
 * (Math. Programming 27, 1983), specialised to bounds, and the SPIDAR tension distribution.
 *
 * Problem: min q(x) = ½ xᵀHx − gᵀx  s.t. lo ≤ x ≤ hi. A working set A assigns some variables to
 * a bound (side s_i = +1 lower, −1 upper); the rest F are free. Invariant: x is stationary on F
 * ((Hx − g)_F = 0), x_A is at its bounds, and the multipliers u_i = s_i (Hx − g)_i are ≥ 0, i.e.
 * x is dual feasible. Each outer step takes the most violated bound p and moves along
 *   z_F = s_p H_FF⁻¹ e_p,  z_A = 0        (primal),   r_i = −s_i (H z)_i, i ∈ A   (dual),
 * by the smaller of the full step t1 = |violation| / (H_FF⁻¹)_pp, which makes p active, and the
 * partial step t2 = min u_i/r_i (r_i > 0), which drops the bound whose multiplier reaches zero.
 * q rises by ζ w_p (u_p + ζ/2) with w_p = (H_FF⁻¹)_pp > 0: strictly on every full step (ζ = t1
 * > 0), and after a full step x minimises q over the affine set of the new working set. So the
 * working sets after full steps never repeat: at most 3ⁿ − 1 full steps, each preceded by at
 * most n − 1 drops: n(3ⁿ − 1) subproblems plus the first, unconstrained one.
 */
#include <math.h>
#include <string.h>

#include "fureru/base.h"
#include "spidar_internal.h"

long fr_spidar_qp_iteration_bound(int n)
{
    if (n < 1 || n > FR_SPIDAR_QP_MAX_N) return 0;
    long p = 1;
    for (int i = 0; i < n; i++) p *= 3;
    return (long)n * (p - 1) + 1;
}

int fr_spidar_qp_solve(int n, const double *H, const double *g, const double *lo, const double *hi,
                       double *x, int *iters)
{
    enum { MAXN = FR_SPIDAR_QP_MAX_N };
    if (iters) *iters = 0;
    if (n < 1 || n > MAXN || !H || !g || !lo || !hi || !x) return FR_ERR_INVAL;
    for (int i = 0; i < n; i++) {
        if (!isfinite(lo[i]) || !isfinite(hi[i]) || !(lo[i] <= hi[i]) || !isfinite(g[i]))
            return FR_ERR_INVAL;
        for (int j = 0; j < n; j++)
            if (!isfinite(H[i * n + j])) return FR_ERR_INVAL;
    }
    int side[MAXN] = {0};
    double u[MAXN] = {0}, tol[MAXN];
    double L[MAXN * MAXN], w[MAXN];
    int F[MAXN];
    for (int i = 0; i < n; i++) tol[i] = 1e-12 * fmax(1.0, fmax(fabs(lo[i]), fabs(hi[i])));

    /* The unconstrained minimiser. */
    memcpy(L, H, sizeof(double) * (size_t)(n * n));
    if (!fr_chol_factor(L, n)) return FR_ERR_NUMERIC;
    memcpy(x, g, sizeof(double) * (size_t)n);
    fr_chol_solve(L, n, x);
    long it = 1, bound = fr_spidar_qp_iteration_bound(n);

    for (;;) {
        /* The most violated bound among the free variables. */
        int p = -1, sp = 0;
        double worst = 0;
        for (int i = 0; i < n; i++) {
            if (side[i]) continue;
            double vl = lo[i] - x[i], vh = x[i] - hi[i];
            if (vl > tol[i] && vl > worst) worst = vl, p = i, sp = 1;
            if (vh > tol[i] && vh > worst) worst = vh, p = i, sp = -1;
        }
        if (p < 0) break;
        double bp = sp > 0 ? lo[p] : hi[p], up = 0;
        for (;;) {
            if (++it > bound) goto fail;
            int m = 0, pp = -1;
            for (int i = 0; i < n; i++)
                if (!side[i]) {
                    if (i == p) pp = m;
                    F[m++] = i;
                }
            for (int a = 0; a < m; a++)
                for (int b = 0; b < m; b++) L[a * m + b] = H[F[a] * n + F[b]];
            if (!fr_chol_factor(L, m)) goto fail;
            for (int a = 0; a < m; a++) w[a] = a == pp ? 1.0 : 0.0;
            fr_chol_solve(L, m, w); /* w = H_FF⁻¹ e_p; z_F = s_p w */
            double wp = w[pp];
            if (!(wp > 0)) goto fail;
            double t1 = fabs(bp - x[p]) / wp, t2 = INFINITY, r[MAXN];
            int k = -1;
            for (int i = 0; i < n; i++) {
                if (!side[i]) continue;
                double hz = 0;
                for (int a = 0; a < m; a++) hz += H[i * n + F[a]] * w[a];
                r[i] = -(double)side[i] * (double)sp * hz;
                if (r[i] > 0 && u[i] / r[i] < t2) t2 = u[i] / r[i], k = i;
            }
            double step = t2 < t1 ? t2 : t1;
            for (int a = 0; a < m; a++) x[F[a]] += step * (double)sp * w[a];
            for (int i = 0; i < n; i++)
                if (side[i]) u[i] -= step * r[i];
            up += step;
            if (t2 < t1) { /* partial step: the bound k leaves the working set */
                x[k] = side[k] > 0 ? lo[k] : hi[k];
                side[k] = 0;
                u[k] = 0;
                continue;
            }
            x[p] = bp; /* full step: p joins the working set */
            side[p] = sp;
            u[p] = up;
            break;
        }
    }
    for (int i = 0; i < n; i++) x[i] = fmin(fmax(x[i], lo[i]), hi[i]);
    if (iters) *iters = (int)it;
    return FR_OK;
fail:
    for (int i = 0; i < n; i++) x[i] = isfinite(x[i]) ? fmin(fmax(x[i], lo[i]), hi[i]) : lo[i];
    if (iters) *iters = (int)(it > bound ? bound : it);
    return FR_ERR_NUMERIC;
}

int fr_spidar_tension_solve(const fr_spidar_config *cfg, const fr_spidar_kin *kin, fr_vec3 f,
                            fr_vec3 tau, const double *t_prev, double *t, int *iters)
{
    int n = kin->n;
    double H[FR_SPIDAR_MAX_STRINGS * FR_SPIDAR_MAX_STRINGS], g[FR_SPIDAR_MAX_STRINGS];
    double lo[FR_SPIDAR_MAX_STRINGS], hi[FR_SPIDAR_MAX_STRINGS];
    double wt = n == 8 ? cfg->w_torque : 0.0;
    double diag = cfg->w_reg + cfg->w_smooth;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            H[i * n + j] = cfg->w_force * fr_v3_dot(kin->u[i], kin->u[j]) +
                           wt * fr_v3_dot(kin->m[i], kin->m[j]) + (i == j ? diag : 0.0);
        g[i] = cfg->w_force * fr_v3_dot(kin->u[i], f) + wt * fr_v3_dot(kin->m[i], tau) +
               (t_prev ? cfg->w_smooth * t_prev[i] : 0.0);
        lo[i] = cfg->tension_min;
        hi[i] = cfg->tension_max;
    }
    return fr_spidar_qp_solve(n, H, g, lo, hi, t, iters);
}
