#include <string.h>

#include "fureru/math.h"

bool fr_m3_inverse(fr_mat3 a, fr_mat3 *out)
{
    fr_mat3 c;
    c.m[0][0] = a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1];
    c.m[0][1] = a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2];
    c.m[0][2] = a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1];
    c.m[1][0] = a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2];
    c.m[1][1] = a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0];
    c.m[1][2] = a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2];
    c.m[2][0] = a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0];
    c.m[2][1] = a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1];
    c.m[2][2] = a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0];
    double det = a.m[0][0] * c.m[0][0] + a.m[0][1] * c.m[1][0] + a.m[0][2] * c.m[2][0];
    double scale = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) scale = fmax(scale, fabs(a.m[i][j]));
    if (!(fabs(det) > 1e-300) || !(fabs(det) > 1e-14 * scale * scale * scale)) return false;
    *out = fr_m3_scale(c, 1.0 / det);
    return true;
}

bool fr_m3_solve_spd(fr_mat3 a, fr_vec3 b, fr_vec3 *x)
{
    double m[9], v[3] = {b.x, b.y, b.z};
    memcpy(m, a.m, sizeof m);
    if (!fr_chol_factor(m, 3)) return false;
    fr_chol_solve(m, 3, v);
    *x = fr_v3(v[0], v[1], v[2]);
    return true;
}

void fr_m3_eigen_sym(fr_mat3 a, fr_vec3 *w, fr_mat3 *V)
{
    fr_mat3 v = fr_m3_identity();
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(a.m[0][1]) + fabs(a.m[0][2]) + fabs(a.m[1][2]);
        double diag = fabs(a.m[0][0]) + fabs(a.m[1][1]) + fabs(a.m[2][2]);
        if (off <= 1e-300 || off <= 1e-17 * diag) break;
        for (int p = 0; p < 2; p++) {
            for (int q = p + 1; q < 3; q++) {
                double apq = a.m[p][q];
                if (apq == 0.0) continue;
                double theta = (a.m[q][q] - a.m[p][p]) / (2.0 * apq);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                /* a <- Jᵀ a J with the Givens rotation J in the (p, q) plane */
                for (int k = 0; k < 3; k++) {
                    double akp = a.m[k][p], akq = a.m[k][q];
                    a.m[k][p] = c * akp - s * akq;
                    a.m[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a.m[p][k], aqk = a.m[q][k];
                    a.m[p][k] = c * apk - s * aqk;
                    a.m[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = v.m[k][p], vkq = v.m[k][q];
                    v.m[k][p] = c * vkp - s * vkq;
                    v.m[k][q] = s * vkp + c * vkq;
                }
            }
        }
    }
    double e[3] = {a.m[0][0], a.m[1][1], a.m[2][2]};
    int idx[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (e[idx[j]] < e[idx[i]]) {
                int t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
            }
    fr_mat3 s;
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) s.m[k][j] = v.m[k][idx[j]];
    if (fr_m3_det(s) < 0)
        for (int k = 0; k < 3; k++) s.m[k][2] = -s.m[k][2];
    *w = fr_v3(e[idx[0]], e[idx[1]], e[idx[2]]);
    *V = s;
}

fr_vec3 fr_q_log(fr_quat q)
{
    if (q.w < 0) q = fr_q(-q.w, -q.x, -q.y, -q.z); /* shortest rotation */
    fr_vec3 u = fr_v3(q.x, q.y, q.z);
    double s = fr_v3_norm(u);
    if (s < 1e-12) return fr_v3_scale(u, 2.0); /* angle ≈ 2 s */
    double angle = 2.0 * atan2(s, q.w);
    return fr_v3_scale(u, angle / s);
}

fr_mat3 fr_q_to_m3(fr_quat q)
{
    double w = q.w, x = q.x, y = q.y, z = q.z;
    return (fr_mat3){{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

fr_quat fr_m3_to_q(fr_mat3 R)
{
    double tr = fr_m3_trace(R);
    fr_quat q;
    if (tr > 0) {
        double s = 2.0 * sqrt(tr + 1.0);
        q = fr_q(0.25 * s, (R.m[2][1] - R.m[1][2]) / s, (R.m[0][2] - R.m[2][0]) / s,
                 (R.m[1][0] - R.m[0][1]) / s);
    } else if (R.m[0][0] > R.m[1][1] && R.m[0][0] > R.m[2][2]) {
        double s = 2.0 * sqrt(1.0 + R.m[0][0] - R.m[1][1] - R.m[2][2]);
        q = fr_q((R.m[2][1] - R.m[1][2]) / s, 0.25 * s, (R.m[0][1] + R.m[1][0]) / s,
                 (R.m[0][2] + R.m[2][0]) / s);
    } else if (R.m[1][1] > R.m[2][2]) {
        double s = 2.0 * sqrt(1.0 + R.m[1][1] - R.m[0][0] - R.m[2][2]);
        q = fr_q((R.m[0][2] - R.m[2][0]) / s, (R.m[0][1] + R.m[1][0]) / s, 0.25 * s,
                 (R.m[1][2] + R.m[2][1]) / s);
    } else {
        double s = 2.0 * sqrt(1.0 + R.m[2][2] - R.m[0][0] - R.m[1][1]);
        q = fr_q((R.m[1][0] - R.m[0][1]) / s, (R.m[0][2] + R.m[2][0]) / s,
                 (R.m[1][2] + R.m[2][1]) / s, 0.25 * s);
    }
    if (q.w < 0) q = fr_q(-q.w, -q.x, -q.y, -q.z);
    return fr_q_normalize(q);
}

fr_quat fr_q_from_rpy(double roll, double pitch, double yaw)
{
    fr_quat qx = fr_q_axis_angle(fr_v3(1, 0, 0), roll);
    fr_quat qy = fr_q_axis_angle(fr_v3(0, 1, 0), pitch);
    fr_quat qz = fr_q_axis_angle(fr_v3(0, 0, 1), yaw);
    return fr_q_mul(qz, fr_q_mul(qy, qx));
}

double fr_q_angle_between(fr_quat a, fr_quat b)
{
    return fr_v3_norm(fr_q_log(fr_q_mul(fr_q_conj(a), b)));
}

/* Inertia about an origin moved to d (old-frame coordinates, no rotation). */
static fr_rbi rbi_translate(fr_rbi I, fr_vec3 d)
{
    fr_vec3 h2 = fr_v3_mad(I.h, -I.m, d);
    fr_mat3 dx = fr_m3_skew(d);
    fr_mat3 Ib =
        fr_m3_add(I.Ibar, fr_m3_add(fr_m3_mul(dx, fr_m3_skew(I.h)), fr_m3_mul(fr_m3_skew(h2), dx)));
    return (fr_rbi){I.m, h2, Ib};
}

fr_rbi fr_rbi_transform(fr_xform X, fr_rbi I)
{
    fr_rbi t = rbi_translate(I, X.r);
    return (fr_rbi){t.m, fr_m3_mulv(X.E, t.h), fr_m3_rotate(X.E, t.Ibar)};
}

fr_rbi fr_rbi_transform_inv(fr_xform X, fr_rbi I)
{
    fr_mat3 Et = fr_m3_transpose(X.E);
    fr_rbi r = {I.m, fr_m3_mulv(Et, I.h), fr_m3_rotate(Et, I.Ibar)};
    return rbi_translate(r, fr_v3_neg(X.r));
}

fr_mat6 fr_m6_zero(void)
{
    fr_mat6 z;
    memset(&z, 0, sizeof z);
    return z;
}

fr_mat6 fr_m6_from_rbi(fr_rbi I)
{
    fr_mat6 a = fr_m6_zero();
    fr_mat3 hx = fr_m3_skew(I.h);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            a.m[i][j] = I.Ibar.m[i][j];
            a.m[i][j + 3] = hx.m[i][j];
            a.m[i + 3][j] = -hx.m[i][j];
        }
    for (int i = 0; i < 3; i++) a.m[i + 3][i + 3] = I.m;
    return a;
}

fr_svec fr_m6_mulv(const fr_mat6 *a, fr_svec v)
{
    double x[6] = {v.ang.x, v.ang.y, v.ang.z, v.lin.x, v.lin.y, v.lin.z}, y[6];
    for (int i = 0; i < 6; i++) {
        double s = 0;
        for (int j = 0; j < 6; j++) s += a->m[i][j] * x[j];
        y[i] = s;
    }
    return fr_sv(fr_v3(y[0], y[1], y[2]), fr_v3(y[3], y[4], y[5]));
}

void fr_m6_add(fr_mat6 *a, const fr_mat6 *b)
{
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) a->m[i][j] += b->m[i][j];
}

/* The 6x6 motion transform of X. */
static void xf_to_m6(fr_xform X, fr_mat6 *out)
{
    fr_mat3 Erx = fr_m3_mul(X.E, fr_m3_skew(X.r));
    *out = fr_m6_zero();
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out->m[i][j] = X.E.m[i][j];
            out->m[i + 3][j + 3] = X.E.m[i][j];
            out->m[i + 3][j] = -Erx.m[i][j];
        }
}

static void m6_mul(const fr_mat6 *a, const fr_mat6 *b, fr_mat6 *c)
{
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = 0; k < 6; k++) s += a->m[i][k] * b->m[k][j];
            c->m[i][j] = s;
        }
}

static void m6_transpose(const fr_mat6 *a, fr_mat6 *t)
{
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) t->m[i][j] = a->m[j][i];
}

void fr_m6_transform_inv(fr_xform X, const fr_mat6 *a, fr_mat6 *out)
{
    fr_mat6 x, xt, tmp;
    xf_to_m6(X, &x);
    m6_transpose(&x, &xt);
    m6_mul(a, &x, &tmp);
    m6_mul(&xt, &tmp, out);
}

void fr_m6_transform(fr_xform X, const fr_mat6 *a, fr_mat6 *out)
{
    /* X* a X⁻¹ = (X⁻¹)ᵀ a X⁻¹ */
    fr_m6_transform_inv(fr_xf_inverse(X), a, out);
}

void fr_m6_sub_outer(fr_mat6 *a, fr_svec u, double inv_d)
{
    double x[6] = {u.ang.x, u.ang.y, u.ang.z, u.lin.x, u.lin.y, u.lin.z};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) a->m[i][j] -= x[i] * x[j] * inv_d;
}

bool fr_chol_factor(double *a, int n)
{
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (int k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
        if (!(d > 0.0)) return false;
        d = sqrt(d);
        a[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = a[i * n + j];
            for (int k = 0; k < j; k++) s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / d;
        }
        for (int i = 0; i < j; i++) a[i * n + j] = 0.0; /* keep only the lower factor */
    }
    return true;
}

void fr_chol_solve(const double *L, int n, double *b)
{
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[i * n + k] * b[k];
        b[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++) s -= L[k * n + i] * b[k];
        b[i] = s / L[i * n + i];
    }
}

bool fr_lu_solve(double *a, int n, double *b)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
        if (!(fabs(a[p * n + c]) > 1e-300)) return false;
        if (p != c) {
            for (int k = 0; k < n; k++) {
                double t = a[c * n + k];
                a[c * n + k] = a[p * n + k];
                a[p * n + k] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            if (f == 0.0) continue;
            for (int k = c; k < n; k++) a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++) s -= a[i * n + k] * b[k];
        b[i] = s / a[i * n + i];
    }
    return true;
}
