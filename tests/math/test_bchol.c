/* src/math bchol.c: the sparse block Cholesky against a dense Cholesky of the same matrix on
 * random graphs (paths, trees, grids, random), the fill of paths and trees (none), reuse of an
 * analysis, capacity errors and an indefinite matrix. */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/sparse.h"

#define MAXN 160
#define MAXE 800

typedef struct graph {
    int n, ne;
    int u[MAXE], v[MAXE];
} graph;

static void add_edge(graph *g, int a, int b)
{
    for (int e = 0; e < g->ne; e++)
        if ((g->u[e] == a && g->v[e] == b) || (g->u[e] == b && g->v[e] == a)) return;
    g->u[g->ne] = a;
    g->v[g->ne] = b;
    g->ne++;
}

/* kind 0 path, 1 random tree, 2 grid, 3 random sparse, 4 disconnected pieces */
static void make_graph(frtest_rng *r, int kind, int n, graph *g)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    if (kind == 0) {
        for (int i = 1; i < n; i++) add_edge(g, (i * 7) % n, ((i - 1) * 7) % n);
    } else if (kind == 1) {
        for (int i = 1; i < n; i++) add_edge(g, i, (int)frtest_uniform(r, 0, i));
    } else if (kind == 2) {
        int w = 1;
        while (w * w < n) w++;
        for (int i = 0; i < n; i++) {
            if ((i % w) + 1 < w && i + 1 < n) add_edge(g, i, i + 1);
            if (i + w < n) add_edge(g, i, i + w);
        }
    } else if (kind == 3) {
        for (int k = 0; k < 2 * n && g->ne < MAXE; k++) {
            int a = (int)frtest_uniform(r, 0, n), b = (int)frtest_uniform(r, 0, n);
            if (a != b) add_edge(g, a, b);
        }
    } else {
        for (int i = 1; i < n; i++)
            if (i % 5 != 0) add_edge(g, i, i - 1);
    }
}

/* A random SPD matrix with this pattern: D_i = M_i + Σ_e S_e-shares, O_e = −X_eᵀ S_e Y_e. Each
 * edge contributes [Xᵀ S X, −Xᵀ S Y; −Yᵀ S X, Yᵀ S Y] (PSD), each node a positive-definite M. */
static void make_matrix(frtest_rng *r, const graph *g, fr_mat6 *D, fr_mat6 *O, double stiff)
{
    for (int i = 0; i < g->n; i++) {
        memset(&D[i], 0, sizeof D[i]);
        for (int k = 0; k < 6; k++) D[i].m[k][k] = frtest_uniform(r, 0.5, 2.0);
    }
    for (int e = 0; e < g->ne; e++) {
        double B[6][6], X[6][6], Y[6][6];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                B[a][b] = frtest_uniform(r, -1, 1);
                X[a][b] = (a == b) + frtest_uniform(r, -0.5, 0.5);
                Y[a][b] = (a == b) + frtest_uniform(r, -0.5, 0.5);
            }
        double S[6][6]; /* S = stiff·B Bᵀ */
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                double s = 0;
                for (int k = 0; k < 6; k++) s += B[a][k] * B[b][k];
                S[a][b] = stiff * s;
            }
        double SX[6][6], SY[6][6];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                double sx = 0, sy = 0;
                for (int k = 0; k < 6; k++) sx += S[a][k] * X[k][b], sy += S[a][k] * Y[k][b];
                SX[a][b] = sx, SY[a][b] = sy;
            }
        fr_mat6 *Du = &D[g->u[e]], *Dv = &D[g->v[e]];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                double xx = 0, yy = 0, xy = 0;
                for (int k = 0; k < 6; k++)
                    xx += X[k][a] * SX[k][b], yy += Y[k][a] * SY[k][b], xy += X[k][a] * SY[k][b];
                Du->m[a][b] += xx;
                Dv->m[a][b] += yy;
                O[e].m[a][b] = -xy;
            }
    }
}

static void dense_of(const graph *g, const fr_mat6 *D, const fr_mat6 *O, double *A)
{
    int N = 6 * g->n;
    memset(A, 0, sizeof(double) * (size_t)N * (size_t)N);
    for (int i = 0; i < g->n; i++)
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) A[(6 * i + a) * N + 6 * i + b] = D[i].m[a][b];
    for (int e = 0; e < g->ne; e++)
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                A[(6 * g->u[e] + a) * N + 6 * g->v[e] + b] = O[e].m[a][b];
                A[(6 * g->v[e] + b) * N + 6 * g->u[e] + a] = O[e].m[a][b];
            }
}

static fr_bchol S;
static fr_arena arena;
static fr_mat6 D[MAXN], O[MAXE];
static double A[6 * MAXN * 6 * MAXN];

static void setup(void)
{
    ck_assert_int_eq(fr_arena_init(&arena, fr_bchol_memory(MAXN, MAXE, 20000)), FR_OK);
    ck_assert_int_eq(fr_bchol_init(&S, MAXN, MAXE, 20000, &arena), FR_OK);
}
static void teardown(void)
{
    fr_arena_destroy(&arena);
}

START_TEST(test_matches_dense)
{
    frtest_rng r = {7};
    double worst = 0;
    for (int trial = 0; trial < 60; trial++) {
        int kind = trial % 5, n = 1 + (int)frtest_uniform(&r, 0, 120);
        double stiff = trial % 2 ? 1e6 : 1.0; /* stiff couplings: ill-conditioned as stacks are */
        graph g;
        make_graph(&r, kind, n, &g);
        make_matrix(&r, &g, D, O, stiff);
        ck_assert_int_eq(fr_bchol_analyse(&S, g.n, g.ne, g.u, g.v), FR_OK);
        ck_assert(fr_bchol_same(&S, g.n, g.ne, g.u, g.v));
        if (kind == 0 || kind == 1 || kind == 4) ck_assert_int_eq(S.nnz, g.ne); /* no fill */
        ck_assert_int_eq(fr_bchol_factor(&S, D, O), FR_OK);
        fr_svec x[MAXN], b[MAXN];
        int N = 6 * n;
        double xd[6 * MAXN];
        for (int i = 0; i < n; i++) {
            b[i] = fr_sv(fr_v3(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1),
                               frtest_uniform(&r, -1, 1)),
                         fr_v3(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1),
                               frtest_uniform(&r, -1, 1)));
            x[i] = b[i];
            for (int k = 0; k < 6; k++) xd[6 * i + k] = fr_sv_get(&b[i], k);
        }
        fr_bchol_solve(&S, x);
        dense_of(&g, D, O, A);
        ck_assert(fr_chol_factor(A, N));
        fr_chol_solve(A, N, xd);
        double xs = 0, err = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 6; k++) {
                xs = fmax(xs, fabs(xd[6 * i + k]));
                err = fmax(err, fabs(fr_sv_get(&x[i], k) - xd[6 * i + k]));
            }
        /* two backward-stable Cholesky solves of the same matrix agree to cond·eps; with the
         * stiff couplings cond ~ 1e7 */
        double tol = (stiff > 1 ? 1e-7 : 1e-12) * xs;
        ck_assert_msg(err <= tol, "trial %d kind %d n %d: err %.3g > %.3g", trial, kind, n, err,
                      tol);
        worst = fmax(worst, err / xs);
    }
    printf("# bchol vs dense: worst relative difference %.3g\n", worst);
}
END_TEST

/* The residual of the block solve itself: A x = b to rounding (independent of the dense one). */
START_TEST(test_residual)
{
    frtest_rng r = {11};
    for (int trial = 0; trial < 20; trial++) {
        graph g;
        make_graph(&r, 2 + trial % 2, 100, &g);
        make_matrix(&r, &g, D, O, 10.0);
        ck_assert_int_eq(fr_bchol_analyse(&S, g.n, g.ne, g.u, g.v), FR_OK);
        ck_assert_int_eq(fr_bchol_factor(&S, D, O), FR_OK);
        fr_svec x[MAXN], b[MAXN];
        for (int i = 0; i < g.n; i++) {
            b[i] = fr_sv(fr_v3(i, 1, -i), fr_v3(0.5, trial, 1.0 / (i + 1)));
            x[i] = b[i];
        }
        fr_bchol_solve(&S, x);
        fr_svec ax[MAXN];
        for (int i = 0; i < g.n; i++) ax[i] = fr_m6_mulv(&D[i], x[i]);
        for (int e = 0; e < g.ne; e++) {
            ax[g.u[e]] = fr_sv_add(ax[g.u[e]], fr_m6_mulv(&O[e], x[g.v[e]]));
            fr_mat6 t;
            for (int a = 0; a < 6; a++)
                for (int c = 0; c < 6; c++) t.m[a][c] = O[e].m[c][a];
            ax[g.v[e]] = fr_sv_add(ax[g.v[e]], fr_m6_mulv(&t, x[g.u[e]]));
        }
        for (int i = 0; i < g.n; i++)
            for (int k = 0; k < 6; k++)
                ck_assert_rel(fr_sv_get(&ax[i], k), fr_sv_get(&b[i], k), 1e-10, 1.0);
    }
}
END_TEST

START_TEST(test_errors)
{
    graph g;
    frtest_rng r = {3};
    make_graph(&r, 0, 10, &g);
    int bad_u[1] = {3}, bad_v[1] = {3};
    ck_assert_int_eq(fr_bchol_analyse(&S, 10, 1, bad_u, bad_v), FR_ERR_INVAL);
    ck_assert_int_eq(fr_bchol_analyse(&S, MAXN + 1, 0, g.u, g.v), FR_ERR_FULL);
    /* a dense graph needs more fill than a small factor can hold */
    fr_arena a2;
    fr_bchol s2;
    ck_assert_int_eq(fr_arena_init(&a2, fr_bchol_memory(40, 800, 50)), FR_OK);
    ck_assert_int_eq(fr_bchol_init(&s2, 40, 800, 50, &a2), FR_OK);
    graph d;
    make_graph(&r, 2, 40, &d);
    ck_assert_int_eq(fr_bchol_analyse(&s2, d.n, d.ne, d.u, d.v), FR_ERR_FULL);
    fr_arena_destroy(&a2);
    /* not positive definite */
    make_matrix(&r, &g, D, O, 1.0);
    D[4].m[2][2] = -1.0;
    ck_assert_int_eq(fr_bchol_analyse(&S, g.n, g.ne, g.u, g.v), FR_OK);
    ck_assert_int_eq(fr_bchol_factor(&S, D, O), FR_ERR_NUMERIC);
    ck_assert(!fr_bchol_same(&S, g.n, g.ne - 1, g.u, g.v));
}
END_TEST

static Suite *bchol_suite(void)
{
    Suite *s = suite_create("bchol");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_matches_dense);
    tcase_add_test(tc, test_residual);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(bchol_suite)
