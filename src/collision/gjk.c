/*
 * GJK distance with the signed-volumes sub-algorithm of Montanari, Petrinic and Barbieri,
 * "Improving the GJK algorithm for faster and more reliable distance queries between convex
 * objects" (ACM TOG 36(3), 2017): the closest point of the current simplex to the origin is found
 * from signed volumes/areas/lengths projected on the best-conditioned axes, recursing only into
 * the sub-simplices whose barycentric coordinate is not positive. No Johnson determinants, no
 * division by near-zero Gram determinants.
 */
#include "collision_internal.h"

#define GJK_MAX_ITERS 64

typedef struct sub {
    double lam[4];
    int idx[4];
    int n;
} sub;

static inline bool same_sign(double a, double b)
{
    return (a > 0 && b > 0) || (a < 0 && b < 0);
}

static inline fr_vec3 sub_point(const fr_vec3 *W, const sub *r)
{
    fr_vec3 p = fr_v3_zero();
    for (int i = 0; i < r->n; i++) p = fr_v3_mad(p, r->lam[i], W[r->idx[i]]);
    return p;
}

static void s1d(const fr_vec3 *W, int i0, int i1, sub *r)
{
    fr_vec3 w0 = W[i0], w1 = W[i1];
    fr_vec3 u = fr_v3_sub(w1, w0);
    double uu = fr_v3_dot(u, u);
    if (!(uu > 0)) {
        *r = (sub){{1, 0, 0, 0}, {i0, 0, 0, 0}, 1};
        return;
    }
    fr_vec3 p0 = fr_v3_mad(w0, -fr_v3_dot(w0, u) / uu, u);
    /* largest extent axis */
    int I = 0;
    double au = fabs(u.x);
    if (fabs(u.y) > au) {
        I = 1;
        au = fabs(u.y);
    }
    if (fabs(u.z) > au) I = 2;
    double a0 = fr_v3_get(w0, I), a1 = fr_v3_get(w1, I), pp = fr_v3_get(p0, I);
    double mu = a0 - a1;
    double c0 = pp - a1, c1 = a0 - pp;
    if (same_sign(mu, c0) && same_sign(mu, c1))
        *r = (sub){{c0 / mu, c1 / mu, 0, 0}, {i0, i1, 0, 0}, 2};
    else if (!same_sign(mu, c0)) /* λ0 ≤ 0: beyond w1 */
        *r = (sub){{1, 0, 0, 0}, {i1, 0, 0, 0}, 1};
    else
        *r = (sub){{1, 0, 0, 0}, {i0, 0, 0, 0}, 1};
}

static inline double area2(fr_vec3 a, fr_vec3 b, fr_vec3 c, int J, int K)
{
    return (fr_v3_get(b, J) - fr_v3_get(a, J)) * (fr_v3_get(c, K) - fr_v3_get(a, K)) -
           (fr_v3_get(b, K) - fr_v3_get(a, K)) * (fr_v3_get(c, J) - fr_v3_get(a, J));
}

static void s2d(const fr_vec3 *W, int i0, int i1, int i2, sub *r)
{
    fr_vec3 w0 = W[i0], w1 = W[i1], w2 = W[i2];
    fr_vec3 n = fr_v3_cross(fr_v3_sub(w1, w0), fr_v3_sub(w2, w0));
    double nn = fr_v3_dot(n, n);
    int ids[3] = {i0, i1, i2};
    double C[3] = {0, 0, 0}, mu = 0;
    if (nn > 0) {
        fr_vec3 p0 = fr_v3_scale(n, fr_v3_dot(w0, n) / nn);
        int I = 0;
        double an = fabs(n.x);
        if (fabs(n.y) > an) {
            I = 1;
            an = fabs(n.y);
        }
        if (fabs(n.z) > an) I = 2;
        int J = (I + 1) % 3, K = (I + 2) % 3;
        mu = area2(w0, w1, w2, J, K);
        C[0] = area2(p0, w1, w2, J, K);
        C[1] = area2(w0, p0, w2, J, K);
        C[2] = area2(w0, w1, p0, J, K);
        if (same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2])) {
            *r = (sub){{C[0] / mu, C[1] / mu, C[2] / mu, 0}, {i0, i1, i2, 0}, 3};
            return;
        }
    }
    double best = INFINITY;
    for (int j = 0; j < 3; j++) {
        if (nn > 0 && same_sign(mu, C[j])) continue;
        sub t;
        s1d(W, ids[(j + 1) % 3], ids[(j + 2) % 3], &t);
        double d = fr_v3_norm2(sub_point(W, &t));
        if (d < best) {
            best = d;
            *r = t;
        }
    }
}

static inline double vol6(fr_vec3 a, fr_vec3 b, fr_vec3 c, fr_vec3 d)
{
    return fr_v3_dot(fr_v3_sub(b, a), fr_v3_cross(fr_v3_sub(c, a), fr_v3_sub(d, a)));
}

/* returns true when the origin is inside the tetrahedron */
static bool s3d(const fr_vec3 *W, sub *r)
{
    fr_vec3 o = fr_v3_zero();
    double mu = vol6(W[0], W[1], W[2], W[3]);
    double C[4] = {vol6(o, W[1], W[2], W[3]), vol6(W[0], o, W[2], W[3]), vol6(W[0], W[1], o, W[3]),
                   vol6(W[0], W[1], W[2], o)};
    if (mu != 0 && same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2]) &&
        same_sign(mu, C[3])) {
        *r = (sub){{C[0] / mu, C[1] / mu, C[2] / mu, C[3] / mu}, {0, 1, 2, 3}, 4};
        return true;
    }
    static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    double best = INFINITY;
    for (int j = 0; j < 4; j++) {
        if (mu != 0 && same_sign(mu, C[j])) continue;
        sub t;
        s2d(W, face[j][0], face[j][1], face[j][2], &t);
        double d = fr_v3_norm2(sub_point(W, &t));
        if (d < best) {
            best = d;
            *r = t;
        }
    }
    return false;
}

/* support of B (placed in A's frame by Rab, tab) */
static inline fr_vec3 support_b(const fr_shape *b, const fr_mat3 *Rab, fr_vec3 tab, fr_vec3 d,
                                bool inflate)
{
    fr_vec3 dl = fr_m3_tmulv(*Rab, d);
    return fr_v3_add(fr_m3_mulv(*Rab, fri_shape_support(b, dl, inflate)), tab);
}

void fri_gjk(const fr_shape *a, const fr_shape *b, const fr_mat3 *Rab, fr_vec3 tab, fr_vec3 v0,
             bool inflate, bool verdict_only, fri_gjk_out *out)
{
    fr_vec3 W[4], PA[4], PB[4];
    int n = 0;
    double scale = a->bound_radius + b->bound_radius + fr_v3_norm(tab);
    double eps_abs2 = (1e-12 * scale) * (1e-12 * scale);
    const double eps_rel2 = 1e-20; /* relative distance precision 1e-10 */
    fr_vec3 v = v0;
    if (!(fr_v3_norm2(v) > eps_abs2) || !fr_v3_isfinite(v)) {
        v = fr_v3_sub(a->centroid, fr_v3_add(fr_m3_mulv(*Rab, b->centroid), tab));
        if (!(fr_v3_norm2(v) > eps_abs2)) v = fr_v3(1, 0, 0);
    }
    double vv = INFINITY;
    bool overlap = false;
    int it = 0;
    sub r = {{1, 0, 0, 0}, {0, 0, 0, 0}, 0};
    for (; it < GJK_MAX_ITERS; it++) {
        fr_vec3 d = fr_v3_neg(v);
        fr_vec3 sa = fri_shape_support(a, d, inflate);
        fr_vec3 sb = support_b(b, Rab, tab, v, inflate);
        fr_vec3 w = fr_v3_sub(sa, sb);
        double vw = fr_v3_dot(v, w);
        if (verdict_only && vw > 0) {
            /* v separates: all of A − B lies in v·x ≥ v·w > 0. The distance is at least
             * v·w/|v|; with a warm start this usually ends the query at the first support. */
            out->overlap = false;
            out->iters = it;
            out->v = v;
            out->dist = vw / fr_v3_norm(v);
            out->pa = out->pb = fr_v3_zero();
            return;
        }
        if (n > 0) {
            /* converged: the lower bound v·w/|v| is within eps of |v| */
            if (vv - vw <= eps_rel2 * vv) break;
            bool dup = false;
            for (int i = 0; i < n; i++) dup |= fr_v3_norm2(fr_v3_sub(W[i], w)) <= eps_abs2;
            if (dup) break;
        }
        W[n] = w;
        PA[n] = sa;
        PB[n] = sb;
        n++;
        if (n == 1)
            r = (sub){{1, 0, 0, 0}, {0, 0, 0, 0}, 1};
        else if (n == 2)
            s1d(W, 0, 1, &r);
        else if (n == 3)
            s2d(W, 0, 1, 2, &r);
        else
            overlap = s3d(W, &r);
        /* keep only the vertices in use, in order */
        fr_vec3 W2[4], A2[4], B2[4];
        double lam[4];
        for (int i = 0; i < r.n; i++) {
            W2[i] = W[r.idx[i]];
            A2[i] = PA[r.idx[i]];
            B2[i] = PB[r.idx[i]];
            lam[i] = r.lam[i];
        }
        n = r.n;
        for (int i = 0; i < n; i++) {
            W[i] = W2[i];
            PA[i] = A2[i];
            PB[i] = B2[i];
            r.idx[i] = i;
            r.lam[i] = lam[i];
        }
        if (overlap) break;
        fr_vec3 vn = sub_point(W, &r);
        double vvn = fr_v3_norm2(vn);
        if (vvn <= eps_abs2) {
            v = vn;
            vv = vvn;
            overlap = true;
            break;
        }
        if (vvn >= vv) break; /* no progress (rounding): keep the previous v */
        v = vn;
        vv = vvn;
    }
    fr_vec3 pa = fr_v3_zero(), pb = fr_v3_zero();
    for (int i = 0; i < n; i++) {
        pa = fr_v3_mad(pa, r.lam[i], PA[i]);
        pb = fr_v3_mad(pb, r.lam[i], PB[i]);
    }
    out->overlap = overlap;
    out->iters = it;
    if (overlap) {
        /* the common point: both combinations agree up to rounding; average them */
        fr_vec3 c = fr_v3_scale(fr_v3_add(pa, pb), 0.5);
        out->pa = out->pb = c;
        out->dist = 0;
        out->v = fr_v3_norm2(v) > 0 && fr_v3_isfinite(v) ? v : fr_v3(1, 0, 0);
    } else {
        out->pa = pa;
        out->pb = pb;
        out->v = fr_v3_sub(pa, pb);
        out->dist = fr_v3_norm(out->v);
    }
}

void fr_gjk_distance(const fr_shape *a, fr_pose pa, const fr_shape *b, fr_pose pb,
                     const fr_vec3 *warm_dir, fr_gjk_result *res)
{
    fr_mat3 Rab = fr_q_to_m3(fr_q_mul(fr_q_conj(pa.q), pb.q));
    fr_vec3 tab = fr_q_unrotate(pa.q, fr_v3_sub(pb.p, pa.p));
    fri_gjk_out o;
    fri_gjk(a, b, &Rab, tab, warm_dir ? *warm_dir : fr_v3_zero(), false, false, &o);
    res->distance = o.dist;
    res->overlap = o.overlap;
    res->iterations = o.iters;
    res->pa = fr_pose_apply(pa, o.pa);
    res->pb = fr_pose_apply(pa, o.pb);
    res->dir = o.v;
}
