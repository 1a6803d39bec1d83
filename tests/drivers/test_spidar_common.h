/* Helpers shared by the SPIDAR tests: random poses, error bounds computed independently of the
 * driver (explicit matrices, Jacobi eigenvalues), and a brute-force box QP. */
#ifndef TEST_SPIDAR_COMMON_H
#define TEST_SPIDAR_COMMON_H

#include <math.h>
#include <string.h>

#include "frtest.h"
#include "fureru/math.h"
#include "fureru/spidar.h"

static inline fr_vec3 tsp_rand_v3(frtest_rng *r, fr_vec3 lo, fr_vec3 hi)
{
    return fr_v3(frtest_uniform(r, lo.x, hi.x), frtest_uniform(r, lo.y, hi.y),
                 frtest_uniform(r, lo.z, hi.z));
}
static inline fr_vec3 tsp_rand_dir(frtest_rng *r)
{
    for (;;) {
        fr_vec3 v =
            fr_v3(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1));
        double n = fr_v3_norm(v);
        if (n > 0.1 && n <= 1.0) return fr_v3_scale(v, 1.0 / n);
    }
}
/* A pose in the configured workspace, rotated by at most max_angle (rad) for 6-DOF. */
static inline fr_pose tsp_rand_pose(frtest_rng *r, const fr_spidar_config *c, double max_angle)
{
    fr_pose p;
    p.p = tsp_rand_v3(r, c->workspace_min, c->workspace_max);
    p.q = c->n_strings == 8 ? fr_q_axis_angle(tsp_rand_dir(r), frtest_uniform(r, 0.0, max_angle))
                            : c->home.q;
    return p;
}
/* The 6-vector distance (m and rad together) between two poses. */
static inline double tsp_pose_err(fr_pose a, fr_pose b)
{
    double dp = fr_v3_dist(a.p, b.p);
    double dq = fr_q_angle_between(a.q, b.q);
    return sqrt(dp * dp + dq * dq);
}

/* Eigenvalues of a symmetric n×n matrix (n ≤ 8) by cyclic Jacobi; a is destroyed. */
static inline void tsp_eig_sym(double *a, int n, double *w)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) off += a[i * n + j] * a[i * n + j];
        if (off < 1e-30) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (fabs(apq) < 1e-300) continue;
                double th = (a[q * n + q] - a[p * n + p]) / (2 * apq);
                double t = (th >= 0 ? 1.0 : -1.0) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) {
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) {
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    for (int i = 0; i < n; i++) w[i] = a[i * n + i];
}

/* ‖A⁺‖₂ = 1/σ_min(A) for the 8×6 length Jacobian at pose (rows [u_iᵀ m_iᵀ], built here from
 * the geometry, not from the driver). */
static inline double tsp_pinv_norm_6dof(const fr_spidar_config *c, fr_pose pose)
{
    double AtA[36] = {0}, w[6];
    for (int i = 0; i < 8; i++) {
        fr_vec3 rg = fr_q_rotate(pose.q, c->motor[i].attach);
        fr_vec3 d = fr_v3_sub(c->motor[i].position, fr_v3_add(rg, pose.p));
        fr_vec3 u = fr_v3_scale(d, 1.0 / fr_v3_norm(d)), m = fr_v3_cross(rg, u);
        double row[6] = {u.x, u.y, u.z, m.x, m.y, m.z};
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) AtA[a * 6 + b] += row[a] * row[b];
    }
    tsp_eig_sym(AtA, 6, w);
    double mn = w[0];
    for (int i = 1; i < 6; i++) mn = fmin(mn, w[i]);
    return 1.0 / sqrt(mn);
}

/* 3-DOF closed form: x = B⁻¹ rhs with rhs_i = l_i² − l_{i+1}² + const, so measured lengths
 * l_i + δ_i move x by G e, G = B⁻¹ E (E the 3×4 difference matrix), e_i = 2 l_i δ_i + δ_i².
 * With |δ_i| ≤ Δ/2: ‖δx‖ ≤ ‖G‖₂ · sqrt(Σ (l_i Δ + Δ²/4)²). */
static inline double tsp_bound_3dof(const fr_spidar_config *c, fr_vec3 x, double delta)
{
    fr_vec3 p[4];
    double l[4];
    for (int i = 0; i < 4; i++) {
        p[i] = fr_v3_sub(c->motor[i].position, fr_q_rotate(c->home.q, c->motor[i].attach));
        l[i] = fr_v3_dist(p[i], x);
    }
    fr_mat3 B, Bi;
    for (int i = 0; i < 3; i++) {
        fr_vec3 d = fr_v3_scale(fr_v3_sub(p[i + 1], p[i]), 2.0);
        B.m[i][0] = d.x, B.m[i][1] = d.y, B.m[i][2] = d.z;
    }
    if (!fr_m3_inverse(B, &Bi)) return INFINITY;
    double G[3][4] = {{0}}, GGt[9] = {0}, w[3];
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 3; j++) {
            G[r][j] += Bi.m[r][j];
            G[r][j + 1] -= Bi.m[r][j];
        }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 4; k++) GGt[a * 3 + b] += G[a][k] * G[b][k];
    tsp_eig_sym(GGt, 3, w);
    double gmax = sqrt(fmax(w[0], fmax(w[1], w[2]))), e2 = 0;
    for (int i = 0; i < 4; i++) {
        double e = l[i] * delta + delta * delta / 4;
        e2 += e * e;
    }
    return gmax * sqrt(e2);
}

/* ---------------------------------------------------------------- brute-force box QP */

/* Solve a small SPD system by Gaussian elimination with partial pivoting (src/math's LU,
 * independent of the driver's Cholesky). a (m×m) and b are overwritten. */
static inline int tsp_gauss(double *a, double *b, int m)
{
    return fr_lu_solve(a, m, b) ? 1 : 0;
}

static inline double tsp_qp_value(int n, const double *H, const double *g, const double *x)
{
    double v = 0;
    for (int i = 0; i < n; i++) {
        double hx = 0;
        for (int j = 0; j < n; j++) hx += H[i * n + j] * x[j];
        v += 0.5 * x[i] * hx - g[i] * x[i];
    }
    return v;
}

/*
 * Brute force: every assignment of each variable to {lower, upper, free} (3ⁿ), the
 * equality-constrained subproblem solved, KKT-feasible ones kept (free variables inside the box,
 * multipliers of the bounds ≥ 0). For each free set F the subproblem's solution is affine in the
 * fixed values: x_F = H_FF⁻¹ g_F − Σ_j H_FF⁻¹ H_Fj b_j, so H_FF is solved once per F.
 * Returns the number of KKT points found (1 for a strictly convex problem, more only when
 * degenerate, all equal) and the one with the lowest objective in x.
 */
static inline int tsp_qp_brute(int n, const double *H, const double *g, const double *lo,
                               const double *hi, double *x_best, double *v_best)
{
    int found = 0;
    *v_best = INFINITY;
    for (unsigned fmask = 0; fmask < (1u << n); fmask++) {
        int F[16], A[16], m = 0, na = 0;
        for (int i = 0; i < n; i++) {
            if (fmask & (1u << i))
                F[m++] = i;
            else
                A[na++] = i;
        }
        /* K[:,0] = H_FF⁻¹ g_F; K[:,1+j] = H_FF⁻¹ H_F,A[j] */
        double K[16][17];
        int ok = 1;
        for (int col = 0; col <= na && ok; col++) {
            double a[256], b[16];
            for (int r = 0; r < m; r++) {
                for (int s = 0; s < m; s++) a[r * m + s] = H[F[r] * n + F[s]];
                b[r] = col == 0 ? g[F[r]] : H[F[r] * n + A[col - 1]];
            }
            if (m && !tsp_gauss(a, b, m)) ok = 0;
            for (int r = 0; r < m; r++) K[r][col] = b[r];
        }
        if (!ok) continue;
        unsigned combos = 1u << na;
        for (unsigned smask = 0; smask < combos; smask++) {
            double x[16];
            for (int j = 0; j < na; j++) x[A[j]] = (smask & (1u << j)) ? hi[A[j]] : lo[A[j]];
            int feas = 1;
            for (int r = 0; r < m && feas; r++) {
                double v = K[r][0];
                for (int j = 0; j < na; j++) v -= K[r][1 + j] * x[A[j]];
                x[F[r]] = v;
                double tol = 1e-10 * fmax(1.0, fabs(v));
                if (v < lo[F[r]] - tol || v > hi[F[r]] + tol) feas = 0;
            }
            if (!feas) continue;
            /* multipliers: (Hx − g)_i must be ≥ 0 at a lower bound, ≤ 0 at an upper one */
            for (int j = 0; j < na && feas; j++) {
                int i = A[j];
                double gr = -g[i];
                for (int k = 0; k < n; k++) gr += H[i * n + k] * x[k];
                double tol = 1e-9 * fmax(1.0, fabs(g[i]));
                if (lo[i] == hi[i]) continue;
                if ((smask & (1u << j)) ? gr > tol : gr < -tol) feas = 0;
            }
            if (!feas) continue;
            found++;
            double v = tsp_qp_value(n, H, g, x);
            if (v < *v_best) {
                *v_best = v;
                memcpy(x_best, x, sizeof(double) * (size_t)n);
            }
        }
    }
    return found;
}

#endif
