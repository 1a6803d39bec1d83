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

static inline double gdot(const double *x, const double *y, int n)
{
    double s = 0.0;
    for (int k = 0; k < n; k++) s += x[k] * y[k];
    return s;
}

/* J_side·Δν of one side of a row. */
static inline double side_w(const fr_cbody *b, fr_svec j, const double *g)
{
    return b->ndof > 0 ? gdot(g, b->dq, b->ndof) : fr_sv_dot(j, b->dnu);
}

double fr_constraint_w(const fr_cbody *bodies, const fr_crow *r)
{
    double w = r->rhs + r->cfm * r->lambda;
    if (r->a >= 0) w += side_w(&bodies[r->a], r->ja, r->ga);
    if (r->b >= 0) w += side_w(&bodies[r->b], r->jb, r->gb);
    return w;
}

/* J_i's side on body k (given as (j, g)) times row j's M⁻¹ column there. */
static inline double side_A(const fr_cbody *bodies, int k, fr_svec j, const double *g,
                            const fr_crow *rj)
{
    bool gen = bodies[k].ndof > 0;
    double s = 0.0;
    if (rj->a == k) s += gen ? gdot(g, rj->gta, bodies[k].ndof) : fr_sv_dot(j, rj->ta);
    if (rj->b == k) s += gen ? gdot(g, rj->gtb, bodies[k].ndof) : fr_sv_dot(j, rj->tb);
    return s;
}

double fr_constraint_A(const fr_cbody *bodies, const fr_crow *rows, int i, int j)
{
    const fr_crow *ri = &rows[i], *rj = &rows[j];
    double s = i == j ? ri->cfm : 0.0;
    if (ri->a >= 0) s += side_A(bodies, ri->a, ri->ja, ri->ga, rj);
    if (ri->b >= 0) s += side_A(bodies, ri->b, ri->jb, ri->gb, rj);
    return s;
}

static inline void push_side(fr_cbody *b, fr_svec t, const double *gt, double d)
{
    if (b->ndof > 0)
        for (int k = 0; k < b->ndof; k++) b->dq[k] += d * gt[k];
    else
        b->dnu = fr_sv_mad(b->dnu, d, t);
}

static inline void push(fr_cbody *bodies, const fr_crow *r, double d)
{
    if (r->a >= 0) push_side(&bodies[r->a], r->ta, r->gta, d);
    if (r->b >= 0) push_side(&bodies[r->b], r->tb, r->gtb, d);
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

size_t fr_constraint_work_size(int n)
{
    const size_t m = FR_CONSTRAINT_SCHUR_MAX;
    return n > 0 ? (size_t)n * (size_t)n + 4 * (size_t)n + m * ((size_t)n + 2) : 0;
}

/* The direct block: the unbounded rows E, A_EE + δ·diag factored (L Lᵀ, lower, row-major), and
 * the coupled bounded rows with x = A_EE⁻¹ a_E,i and their Schur diagonal. Rows that share no
 * body do not couple (A_pq = 0), and Cholesky's fill stays inside each row's envelope (from its
 * first nonzero, env[p]): a chain's rows in their joints' order are a band, so the factor costs
 * O(n·b²) and a solve O(n·b) instead of O(n³/6) and O(n²). */
typedef struct dblock {
    int n;
    double *L;   /* n×n */
    double *rhs; /* n */
    int *idx;    /* n row indices (in n doubles' room) */
    int *env;    /* n: the first column of row p's envelope (in n doubles' room) */
    int ns;      /* coupled rows */
    double *x;   /* ns × n */
    double *sd;  /* ns: 1/S_ii */
} dblock;

enum { BLK_SCALAR = 0, BLK_E = 1, BLK_SCHUR = 2 }; /* fr_crow.blk: row kind; Schur slot in >> 2 */

static bool unbounded(const fr_crow *r)
{
    return r->normal < 0 && r->lo == -INFINITY && r->hi == INFINITY && r->inv_d > 0.0;
}

static void chol_solve(const dblock *B, double *y)
{
    const int ne = B->n;
    for (int i = 0; i < ne; i++) { /* L z = y */
        const double *Li = B->L + (size_t)i * (size_t)ne;
        double s = y[i];
        for (int k = B->env[i]; k < i; k++) s -= Li[k] * y[k];
        y[i] = s / Li[i];
    }
    for (int i = ne - 1; i >= 0; i--) { /* Lᵀ x = z, by rows of L: x_i, then its share out */
        const double *Li = B->L + (size_t)i * (size_t)ne;
        y[i] /= Li[i];
        for (int k = B->env[i]; k < i; k++) y[k] -= Li[k] * y[i];
    }
}

static bool shares_body(const fr_crow *a, const fr_crow *b)
{
    return (a->a >= 0 && (a->a == b->a || a->a == b->b)) ||
           (a->b >= 0 && (a->b == b->a || a->b == b->b));
}

static bool block_setup(const fr_cbody *bodies, fr_crow *rows, int n, const fr_constraint_opts *o,
                        dblock *B)
{
    B->n = B->ns = 0;
    for (int i = 0; i < n; i++) rows[i].blk = BLK_SCALAR;
    if (o->direct_max <= 0 || !o->work) return false;
    int ne = 0;
    for (int i = 0; i < n; i++) ne += unbounded(&rows[i]);
    if (ne == 0 || ne > o->direct_max) return false;
    B->L = o->work;
    B->rhs = o->work + (size_t)ne * (size_t)ne;
    B->idx = (int *)(void *)(B->rhs + ne); /* ne doubles of room hold ne ints */
    B->env = (int *)(void *)(B->rhs + 2 * (size_t)ne);
    B->x = B->rhs + 4 * (size_t)ne;
    B->sd = B->x + (size_t)FR_CONSTRAINT_SCHUR_MAX * (size_t)ne;
    for (int i = 0; i < n; i++)
        if (unbounded(&rows[i])) B->idx[B->n++] = i;
    /* A_EE (lower triangle, inside the envelope) + δ·A_ii, then Cholesky in place */
    for (int p = 0; p < ne; p++) {
        const fr_crow *rp = &rows[B->idx[p]];
        double *Lp = B->L + (size_t)p * (size_t)ne;
        B->env[p] = p;
        for (int q = 0; q <= p; q++) {
            if (q < p && !shares_body(rp, &rows[B->idx[q]])) {
                Lp[q] = 0.0;
                continue;
            }
            if (q < B->env[p]) B->env[p] = q;
            double a = fr_constraint_A(bodies, rows, B->idx[p], B->idx[q]);
            if (p == q) a *= 1.0 + 1e-10;
            Lp[q] = a;
        }
    }
    for (int i = 0; i < ne; i++) {
        double *Li = B->L + (size_t)i * (size_t)ne;
        for (int j = B->env[i]; j <= i; j++) {
            const double *Lj = B->L + (size_t)j * (size_t)ne;
            double s = Li[j];
            for (int k = B->env[i] > B->env[j] ? B->env[i] : B->env[j]; k < j; k++)
                s -= Li[k] * Lj[k];
            if (j < i) {
                Li[j] = s / Lj[j];
            } else {
                if (!(s > 0)) return false;
                Li[i] = sqrt(s);
            }
        }
    }
    for (int p = 0; p < ne; p++) rows[B->idx[p]].blk = BLK_E;
    /* the bounded rows on the mechanism's bodies: x = A_EE⁻¹ a_E,i, S_ii = A_ii − a_iᵀ x */
    for (int i = 0; i < n && B->ns < FR_CONSTRAINT_SCHUR_MAX; i++) {
        fr_crow *r = &rows[i];
        if (r->blk != BLK_SCALAR || r->inv_d == 0.0) continue;
        bool coupled = false;
        for (int p = 0; p < ne && !coupled; p++) coupled = shares_body(r, &rows[B->idx[p]]);
        if (!coupled) continue;
        double *x = B->x + (size_t)B->ns * (size_t)ne;
        for (int p = 0; p < ne; p++) x[p] = fr_constraint_A(bodies, rows, B->idx[p], i);
        double *y = B->rhs;
        for (int p = 0; p < ne; p++) y[p] = x[p];
        chol_solve(B, y);
        double S = 1.0 / r->inv_d;
        for (int p = 0; p < ne; p++) S -= x[p] * y[p];
        for (int p = 0; p < ne; p++) x[p] = y[p];
        /* a row the mechanism holds entirely (S ≈ 0) moves nothing: leave it scalar */
        if (!(S > 1e-9 / r->inv_d)) continue;
        B->sd[B->ns] = 1.0 / S;
        r->blk = BLK_SCHUR | (B->ns << 2);
        B->ns++;
    }
    return true;
}

/* λ_E += Δ with A_EE Δ = −w_E: the block's rows exact for the other rows' current impulses.
 * Returns the largest |w_i| it removed: the velocity change, as the scalar rows' measure (the
 * impulses of redundant rows may move along A's null space without moving anything). */
static double block_solve(fr_cbody *bodies, fr_crow *rows, dblock *B)
{
    const int ne = B->n;
    double *y = B->rhs;
    double maxd = 0.0;
    for (int p = 0; p < ne; p++) {
        y[p] = -fr_constraint_w(bodies, &rows[B->idx[p]]);
        maxd = fmax(maxd, fabs(y[p]));
    }
    chol_solve(B, y);
    for (int p = 0; p < ne; p++) {
        fr_crow *r = &rows[B->idx[p]];
        r->lambda += y[p];
        push(bodies, r, y[p]);
    }
    return maxd;
}

/* A Schur row's update d: the row moves by d and the block follows, λ_E −= x·d. */
static void schur_push(fr_cbody *bodies, fr_crow *rows, const dblock *B, const fr_crow *r, double d)
{
    const double *x = B->x + (size_t)(r->blk >> 2) * (size_t)B->n;
    push(bodies, r, d);
    for (int p = 0; p < B->n; p++) {
        fr_crow *e = &rows[B->idx[p]];
        e->lambda -= x[p] * d;
        push(bodies, e, -x[p] * d);
    }
}

int fr_constraint_solve(fr_cbody *bodies, int nb, fr_crow *rows, int n,
                        const fr_constraint_opts *opts, fr_constraint_stats *st)
{
    fr_constraint_opts o = opts ? *opts : fr_constraint_opts_default();
    if (!isfinite(o.omega) || o.max_iterations < 0 || !(o.tolerance >= 0)) return FR_ERR_RANGE;
    for (int k = 0; k < nb; k++) {
        bodies[k].dnu = fr_sv_zero();
        for (int q = 0; q < bodies[k].ndof; q++) bodies[k].dq[q] = 0.0;
    }
    /* the diagonal of A and M⁻¹J_iᵀ; the warm start's velocity change */
    for (int i = 0; i < n; i++) {
        fr_crow *r = &rows[i];
        if (r->a >= nb || r->b >= nb || !(r->cfm >= 0) || (r->normal >= 0 && r->normal >= n))
            return FR_ERR_RANGE;
        bool ga = r->a >= 0 && bodies[r->a].ndof > 0, gb = r->b >= 0 && bodies[r->b].ndof > 0;
        if ((ga && (!r->ga || !r->gta || r->a == r->b)) || (gb && (!r->gb || !r->gtb)))
            return FR_ERR_RANGE;
        double d = r->cfm;
        r->ta = r->a >= 0 && !ga ? minv(&bodies[r->a], r->ja) : fr_sv_zero();
        r->tb = r->b >= 0 && !gb ? minv(&bodies[r->b], r->jb) : fr_sv_zero();
        if (r->a >= 0) d += ga ? gdot(r->ga, r->gta, bodies[r->a].ndof) : fr_sv_dot(r->ja, r->ta);
        if (r->b >= 0) d += gb ? gdot(r->gb, r->gtb, bodies[r->b].ndof) : fr_sv_dot(r->jb, r->tb);
        /* a body that appears on both sides of a row (a == b) couples its two blocks */
        if (r->a >= 0 && r->a == r->b) d += 2.0 * fr_sv_dot(r->ja, r->tb);
        r->inv_d = d > 1e-300 ? 1.0 / d : 0.0;
        if (!isfinite(r->lambda) || r->inv_d == 0.0) r->lambda = 0.0;
        push(bodies, r, r->lambda);
    }
    dblock B = {0, NULL, NULL, NULL, NULL, 0, NULL, NULL};
    bool block = block_setup(bodies, rows, n, &o, &B);
    int it = 0;
    bool conv = false;
    while (it < o.max_iterations) {
        it++;
        double maxd = block ? block_solve(bodies, rows, &B) : 0.0;
        for (int i = 0; i < n; i++) {
            fr_crow *r = &rows[i];
            if (r->inv_d == 0.0 || (r->blk & 3) == BLK_E) continue;
            double lo, hi;
            bounds(rows, r, &lo, &hi);
            double wi = fr_constraint_w(bodies, r);
            bool schur = (r->blk & 3) == BLK_SCHUR;
            double step = schur ? B.sd[r->blk >> 2] : r->inv_d;
            double l = clampd(r->lambda - o.omega * wi * step, lo, hi);
            double d = l - r->lambda;
            if (d != 0.0) {
                r->lambda = l;
                if (schur)
                    schur_push(bodies, rows, &B, r, d);
                else
                    push(bodies, r, d);
                maxd = fmax(maxd, fabs(d) / step);
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
