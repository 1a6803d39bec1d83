/* The constraint solver (src/constraint): seed 001's slider example, PGS/SOR against a direct
 * solver (enumeration of the active sets) on random positive-definite bounded LCPs, and the
 * convergence range of the over-relaxation factor ω. */
#include <math.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/constraint.h"
#include "frtest.h"

/* Seed 001 (reference/experiments.md §6): body J of 1 kg, inertia 1/3 about z, at (0.5, 0), on a
 * slider fixed in the world whose axis runs at 45°; rows [1 1 −0.5] (across the axis, at the
 * body's end P_j = origin) and [0 0 −1] (the rotation), dt 0.01, gravity (0, −9.81). */
START_TEST(seed001_slider)
{
    const double dt = 0.01;
    fr_cbody body = {.inv_mass = 1.0, .inv_inertia = fr_m3_diag(fr_v3(3.0, 3.0, 3.0))};
    fr_vec3 vstar = fr_v3(0, -9.81 * dt, 0); /* u + M⁻¹F·dt */
    fr_crow rows[2];
    memset(rows, 0, sizeof rows);
    rows[0] = (fr_crow){.a = -1,
                        .b = 0,
                        .jb = fr_sv(fr_v3(0, 0, -0.5), fr_v3(1, 1, 0)),
                        .lo = -INFINITY,
                        .hi = INFINITY,
                        .normal = -1};
    rows[1] = (fr_crow){.a = -1,
                        .b = 0,
                        .jb = fr_sv(fr_v3(0, 0, -1), fr_v3(0, 0, 0)),
                        .lo = -INFINITY,
                        .hi = INFINITY,
                        .normal = -1};
    for (int i = 0; i < 2; i++) rows[i].rhs = fr_v3_dot(rows[i].jb.lin, vstar);
    ck_assert_double_eq_tol(rows[0].rhs, -0.0981, 1e-15);
    ck_assert_double_eq_tol(rows[1].rhs, 0.0, 1e-15);
    fr_constraint_opts o = fr_constraint_opts_default();
    o.tolerance = 1e-16;
    o.max_iterations = 1000;
    fr_constraint_stats st;
    ck_assert_int_eq(fr_constraint_solve(&body, 1, rows, 2, &o, &st), FR_OK);
    /* A = J M⁻¹ Jᵀ */
    ck_assert_double_eq_tol(fr_constraint_A(&body, rows, 0, 0), 2.75, 1e-15);
    ck_assert_double_eq_tol(fr_constraint_A(&body, rows, 0, 1), 1.5, 1e-15);
    ck_assert_double_eq_tol(fr_constraint_A(&body, rows, 1, 0), 1.5, 1e-15);
    ck_assert_double_eq_tol(fr_constraint_A(&body, rows, 1, 1), 3.0, 1e-15);
    /* the seed's x solves A x = b; the impulse that makes w = Aλ + b = 0 is λ = −x */
    ck_assert_double_eq_tol(rows[0].lambda, 0.04905, 1e-14);
    ck_assert_double_eq_tol(rows[1].lambda, -0.024525, 1e-14);
    fr_vec3 f = fr_v3_add(fr_v3_scale(rows[0].jb.lin, rows[0].lambda),
                          fr_v3_scale(rows[1].jb.lin, rows[1].lambda));
    double tz = rows[0].jb.ang.z * rows[0].lambda + rows[1].jb.ang.z * rows[1].lambda;
    ck_assert_double_eq_tol(f.x, 0.04905, 1e-14); /* Jᵀλ = (0.04905, 0.04905, 0) N·s */
    ck_assert_double_eq_tol(f.y, 0.04905, 1e-14);
    ck_assert_double_eq_tol(tz, 0.0, 1e-14);
    /* the new velocity runs along the axis (1, −1) and the body does not turn */
    fr_vec3 v = fr_v3_add(vstar, body.dnu.lin);
    ck_assert_double_eq_tol(v.x + v.y, 0.0, 1e-14);
    ck_assert_double_eq_tol(v.x, 0.04905, 1e-14);
    ck_assert_double_eq_tol(body.dnu.ang.z, 0.0, 1e-14);
    ck_assert(st.converged);
    ck_assert(st.residual < 1e-15);
}
END_TEST

/* ---------------------------------------------------------------- a direct solver */

/* Solve the k×k system M x = r (row-major, in place) by Gaussian elimination with partial
 * pivoting; false when singular. */
static bool gauss(int k, double *M, double *r)
{
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int i = c + 1; i < k; i++)
            if (fabs(M[i * k + c]) > fabs(M[p * k + c])) p = i;
        if (!(fabs(M[p * k + c]) > 1e-14)) return false;
        if (p != c) {
            for (int j = 0; j < k; j++) {
                double t = M[c * k + j];
                M[c * k + j] = M[p * k + j];
                M[p * k + j] = t;
            }
            double t = r[c];
            r[c] = r[p];
            r[p] = t;
        }
        for (int i = c + 1; i < k; i++) {
            double f = M[i * k + c] / M[c * k + c];
            for (int j = c; j < k; j++) M[i * k + j] -= f * M[c * k + j];
            r[i] -= f * r[c];
        }
    }
    for (int c = k - 1; c >= 0; c--) {
        for (int j = c + 1; j < k; j++) r[c] -= M[c * k + j] * r[j];
        r[c] /= M[c * k + c];
    }
    return true;
}

#define NMAX 7

/* The bounded LCP by enumeration of the 3ⁿ active sets (each index at lo, at hi or free): the
 * free indices solve A_FF x_F = −(b_F + A_FC x_C); the set that satisfies every bound and sign
 * condition is the solution (unique for positive-definite A). Returns false if none does. */
static bool lcp_enumerate(int n, const double *A, const double *b, const double *lo,
                          const double *hi, double *x)
{
    int total = 1;
    for (int i = 0; i < n; i++) total *= 3;
    for (int code = 0; code < total; code++) {
        int st[NMAX], c = code, free_idx[NMAX], nf = 0;
        bool ok = true;
        for (int i = 0; i < n; i++, c /= 3) {
            st[i] = c % 3; /* 0 free, 1 at lo, 2 at hi */
            if (st[i] == 1 && !isfinite(lo[i])) ok = false;
            if (st[i] == 2 && !isfinite(hi[i])) ok = false;
            if (st[i] == 0)
                free_idx[nf++] = i;
            else
                x[i] = st[i] == 1 ? lo[i] : hi[i];
        }
        if (!ok) continue;
        double M[NMAX * NMAX], r[NMAX];
        for (int p = 0; p < nf; p++) {
            int i = free_idx[p];
            r[p] = -b[i];
            for (int j = 0; j < n; j++)
                if (st[j] != 0) r[p] -= A[i * n + j] * x[j];
            for (int q = 0; q < nf; q++) M[p * nf + q] = A[i * n + free_idx[q]];
        }
        if (!gauss(nf, M, r)) continue;
        for (int p = 0; p < nf; p++) x[free_idx[p]] = r[p];
        const double eps = 1e-12;
        for (int i = 0; i < n && ok; i++) {
            double w = b[i];
            for (int j = 0; j < n; j++) w += A[i * n + j] * x[j];
            if (st[i] == 0)
                ok = x[i] >= lo[i] - eps && x[i] <= hi[i] + eps;
            else if (st[i] == 1)
                ok = w >= -eps;
            else
                ok = w <= eps;
        }
        if (ok) return true;
    }
    return false;
}

/* Random bounds: a mix of unbounded, one-sided (contact-like) and boxed rows. */
static void random_bounds(frtest_rng *g, double *lo, double *hi)
{
    int kind = (int)(frtest_next(g) % 4);
    *lo = -INFINITY;
    *hi = INFINITY;
    if (kind == 1) *lo = 0.0;
    if (kind == 2) *hi = frtest_uniform(g, 0.0, 0.3);
    if (kind == 3) {
        *lo = -frtest_uniform(g, 0.0, 0.3);
        *hi = frtest_uniform(g, 0.0, 0.3);
    }
}

/* Rows on two bodies with random Jacobians (12 velocity coordinates, so A = J M⁻¹ Jᵀ is positive
 * definite for up to 12 independent rows) and random inertias: the solver's own data path (only
 * A's diagonal formed, M⁻¹Jᵀλ kept per body) against the enumeration on the A the test forms. */
START_TEST(random_rows_vs_enumeration)
{
    frtest_rng g = {12345u + (uint64_t)(_i % 3)};
    int checked = 0, active = 0;
    for (int trial = 0; trial < 60; trial++) {
        int n = 1 + (int)(frtest_next(&g) % NMAX);
        fr_cbody bodies[2];
        memset(bodies, 0, sizeof bodies);
        for (int k = 0; k < 2; k++) {
            /* inverse inertia R·diag·Rᵀ */
            fr_quat q =
                fr_q_normalize((fr_quat){frtest_uniform(&g, -1, 1), frtest_uniform(&g, -1, 1),
                                         frtest_uniform(&g, -1, 1), frtest_uniform(&g, -1, 1)});
            fr_mat3 R = fr_q_to_m3(q);
            fr_mat3 D = fr_m3_diag(fr_v3(frtest_uniform(&g, 0.5, 3), frtest_uniform(&g, 0.5, 3),
                                         frtest_uniform(&g, 0.5, 3)));
            bodies[k].inv_inertia = fr_m3_rotate(R, D);
            bodies[k].inv_mass = frtest_uniform(&g, 0.3, 2.0);
        }
        fr_crow rows[NMAX];
        double A[NMAX * NMAX], b[NMAX], lo[NMAX], hi[NMAX], x[NMAX];
        for (int i = 0; i < n; i++) {
            fr_crow *r = &rows[i];
            memset(r, 0, sizeof *r);
            r->a = (frtest_next(&g) % 5 == 0) ? -1 : 0; /* some rows against the world */
            r->b = 1;
            r->ja = fr_sv(fr_v3(frtest_uniform(&g, -1, 1), frtest_uniform(&g, -1, 1),
                                frtest_uniform(&g, -1, 1)),
                          fr_v3(frtest_uniform(&g, -1, 1), frtest_uniform(&g, -1, 1),
                                frtest_uniform(&g, -1, 1)));
            r->jb = fr_sv(fr_v3(frtest_uniform(&g, -1, 1), frtest_uniform(&g, -1, 1),
                                frtest_uniform(&g, -1, 1)),
                          fr_v3(frtest_uniform(&g, -1, 1), frtest_uniform(&g, -1, 1),
                                frtest_uniform(&g, -1, 1)));
            r->rhs = b[i] = frtest_uniform(&g, -1, 1);
            r->normal = -1;
            random_bounds(&g, &lo[i], &hi[i]);
            r->lo = lo[i];
            r->hi = hi[i];
            r->lambda = 0.0;
        }
        /* A formed independently: Σ over the bodies of J_ik M_k⁻¹ J_jkᵀ */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < 2; k++) {
                    fr_svec ji = k == 0 ? (rows[i].a == 0 ? rows[i].ja : fr_sv_zero()) : rows[i].jb;
                    fr_svec jj = k == 0 ? (rows[j].a == 0 ? rows[j].ja : fr_sv_zero()) : rows[j].jb;
                    s += fr_v3_dot(ji.ang, fr_m3_mulv(bodies[k].inv_inertia, jj.ang)) +
                         bodies[k].inv_mass * fr_v3_dot(ji.lin, jj.lin);
                }
                A[i * n + j] = s;
            }
        ck_assert_msg(lcp_enumerate(n, A, b, lo, hi, x), "enumeration found no solution");
        fr_constraint_opts o = fr_constraint_opts_default();
        o.tolerance = 1e-15;
        o.max_iterations = 200000;
        o.omega = 1.0;
        /* the second half: the unbounded rows eliminated as a direct block, the bounded ones on
         * its Schur complement */
        static double work[1024];
        ck_assert(fr_constraint_work_size(NMAX) <= 1024);
        if (_i >= 3) {
            o.direct_max = NMAX;
            o.work = work;
        }
        fr_constraint_stats st;
        ck_assert_int_eq(fr_constraint_solve(bodies, 2, rows, n, &o, &st), FR_OK);
        for (int i = 0; i < n; i++) {
            ck_assert_msg(fabs(rows[i].lambda - x[i]) <= 1e-8,
                          "trial %d n %d row %d: PGS %.15g vs direct %.15g (%d sweeps)", trial, n,
                          i, rows[i].lambda, x[i], st.iterations);
            ck_assert_double_eq_tol(fr_constraint_A(bodies, rows, i, i), A[i * n + i], 1e-12);
            if (rows[i].lambda == lo[i] || rows[i].lambda == hi[i]) active++;
        }
        checked++;
    }
    ck_assert_int_eq(checked, 60);
    ck_assert_msg(active > 20, "too few rows at a bound (%d): the bounds were not exercised",
                  active);
}
END_TEST

/* A random symmetric positive-definite n×n A = BᵀB/n + 0.05·1. */
static void random_spd(frtest_rng *g, int n, double *A)
{
    double B[NMAX * NMAX];
    for (int i = 0; i < n * n; i++) B[i] = frtest_uniform(g, -1, 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += B[k * n + i] * B[k * n + j];
            A[i * n + j] = s / n + (i == j ? 0.05 : 0.0);
        }
}

/* SOR converges to the direct solution for every ω in (0, 2) (seed 003), with bounds. */
START_TEST(sor_converges_in_0_2)
{
    const double omegas[] = {0.05, 0.3, 0.7, 1.0, 1.3, 1.7, 1.95};
    frtest_rng g = {777u};
    long sweeps[7] = {0};
    for (int trial = 0; trial < 30; trial++) {
        int n = 2 + (int)(frtest_next(&g) % (NMAX - 1));
        double A[NMAX * NMAX], b[NMAX], lo[NMAX], hi[NMAX], x[NMAX];
        random_spd(&g, n, A);
        for (int i = 0; i < n; i++) {
            b[i] = frtest_uniform(&g, -1, 1);
            random_bounds(&g, &lo[i], &hi[i]);
        }
        ck_assert(lcp_enumerate(n, A, b, lo, hi, x));
        for (size_t k = 0; k < sizeof omegas / sizeof omegas[0]; k++) {
            double l[NMAX] = {0};
            fr_constraint_opts o = {
                .omega = omegas[k], .max_iterations = 2000000, .tolerance = 1e-13};
            fr_constraint_stats st;
            ck_assert_int_eq(fr_lcp_pgs_dense(n, A, b, lo, hi, l, &o, &st), FR_OK);
            ck_assert_msg(st.converged, "ω %g did not converge: residual %g", omegas[k],
                          st.residual);
            sweeps[k] += st.iterations;
            for (int i = 0; i < n; i++)
                ck_assert_msg(fabs(l[i] - x[i]) <= 1e-8, "ω %g trial %d: %.15g vs %.15g", omegas[k],
                              trial, l[i], x[i]);
        }
    }
    for (int k = 0; k < 7; k++) fprintf(stderr, "# ω %.2f: %ld sweeps\n", omegas[k], sweeps[k]);
}
END_TEST

/* Outside (0, 2) it fails: for an unbounded (equality) problem the SOR iteration matrix has
 * spectral radius >= |ω − 1| > 1, so the iterates run away; at ω = 0 nothing moves. */
START_TEST(sor_fails_outside_0_2)
{
    frtest_rng g = {4242u};
    const double bad[] = {-0.3, 2.3, 3.0};
    for (int trial = 0; trial < 10; trial++) {
        int n = 3 + (int)(frtest_next(&g) % (NMAX - 2));
        double A[NMAX * NMAX], b[NMAX], lo[NMAX], hi[NMAX];
        random_spd(&g, n, A);
        for (int i = 0; i < n; i++) {
            b[i] = frtest_uniform(&g, -1, 1);
            lo[i] = -INFINITY;
            hi[i] = INFINITY;
        }
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            double l[NMAX] = {0};
            fr_constraint_opts o = {.omega = bad[k], .max_iterations = 200, .tolerance = 1e-12};
            fr_constraint_stats st;
            int err = fr_lcp_pgs_dense(n, A, b, lo, hi, l, &o, &st);
            ck_assert_msg(err == FR_ERR_NUMERIC || (!st.converged && st.residual > 1e3),
                          "ω %g: residual %g after %d sweeps", bad[k], st.residual, st.iterations);
        }
        double l[NMAX] = {0};
        fr_constraint_opts o = {.omega = 0.0, .max_iterations = 100, .tolerance = 1e-12};
        fr_constraint_stats st;
        ck_assert_int_eq(fr_lcp_pgs_dense(n, A, b, lo, hi, l, &o, &st), FR_OK);
        for (int i = 0; i < n; i++) ck_assert(l[i] == 0.0);
    }
}
END_TEST

/* Friction rows: bounded by ±μ·λ_normal of their normal row, which the solve moves. A block
 * pushed sideways against the ground: with a small push the friction holds it (tangential
 * velocity 0); with a push beyond μ·N it slides and the friction impulse is exactly μ·N. */
START_TEST(friction_box)
{
    for (int pass = 0; pass < 2; pass++) {
        const double h = 0.001, g = 9.81, mu = 0.5, m = 2.0;
        double push = pass == 0 ? 0.4 * mu * m * g : 2.0 * mu * m * g;
        fr_cbody body = {.inv_mass = 1.0 / m, .inv_inertia = fr_m3_diag(fr_v3(0, 0, 0))};
        fr_vec3 vstar = fr_v3(push * h / m, 0, -g * h);
        fr_crow rows[2];
        memset(rows, 0, sizeof rows);
        rows[0] = (fr_crow){.a = -1,
                            .b = 0,
                            .jb = fr_sv(fr_v3_zero(), fr_v3(0, 0, 1)),
                            .lo = 0,
                            .hi = INFINITY,
                            .normal = -1};
        rows[1] = (fr_crow){
            .a = -1, .b = 0, .jb = fr_sv(fr_v3_zero(), fr_v3(1, 0, 0)), .normal = 0, .mu = mu};
        for (int i = 0; i < 2; i++) rows[i].rhs = fr_v3_dot(rows[i].jb.lin, vstar);
        fr_constraint_stats st;
        ck_assert_int_eq(fr_constraint_solve(&body, 1, rows, 2, NULL, &st), FR_OK);
        ck_assert_double_eq_tol(rows[0].lambda, m * g * h, 1e-12);
        fr_vec3 v = fr_v3_add(vstar, body.dnu.lin);
        if (pass == 0) {
            ck_assert_double_eq_tol(v.x, 0.0, 1e-12);
            ck_assert_double_eq_tol(rows[1].lambda, -push * h, 1e-12);
        } else {
            ck_assert_double_eq_tol(rows[1].lambda, -mu * m * g * h, 1e-12);
            ck_assert_double_eq_tol(v.x, (push - mu * m * g) * h / m, 1e-12);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("constraint");
    TCase *tc = tcase_create("pgs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, seed001_slider);
    tcase_add_loop_test(tc, random_rows_vs_enumeration, 0, 6);
    tcase_add_test(tc, sor_converges_in_0_2);
    tcase_add_test(tc, sor_fails_outside_0_2);
    tcase_add_test(tc, friction_box);
    suite_add_tcase(s, tc);
    return s;
}
FRTEST_MAIN(suite)
