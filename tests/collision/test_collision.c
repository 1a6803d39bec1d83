/*
 * src/collision: every result is compared with an independent formulation: analytic volumes
 * (interval products, prisms, lens and cap formulas with rigorous resolution bands), Monte Carlo
 * integration, a literal qhull-based Muller–Preparata, the Minkowski-difference hull for
 * distances, brute-force all-pairs AABB overlap, and conservation laws of a closed polyhedron
 * (Σ area vectors = 0, every vertex inside every plane of A and B).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/collision.h"
#include "interpose.h"
#include "ref.h"

#define PI 3.14159265358979323846

/* Check records every passing ck_assert with a system call; in the hot loops below only a
 * failure calls into Check. */
#define REQ(cond, ...)                                                                             \
    do {                                                                                           \
        if (!(cond)) ck_abort_msg(__VA_ARGS__);                                                    \
    } while (0)

static fr_vec3 rand_v3(frtest_rng *r, double s)
{
    return fr_v3(frtest_uniform(r, -s, s), frtest_uniform(r, -s, s), frtest_uniform(r, -s, s));
}
static fr_quat rand_q(frtest_rng *r)
{
    /* uniform on SO(3): normalised Gaussian-ish by rejection in the 4-ball */
    for (;;) {
        fr_quat q = fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                         frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1));
        double n = fr_q_norm(q);
        if (n > 0.1 && n <= 1) return fr_q_normalize(q);
    }
}
/* one of the 24 rotations of the cube */
static fr_quat cube_q(frtest_rng *r)
{
    static const fr_vec3 ax[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    fr_quat q = fr_q_identity();
    for (int i = 0; i < 3; i++) {
        int k = (int)(frtest_next(r) % 4);
        q = fr_q_mul(fr_q_axis_angle(ax[i], k * 0.5 * PI), q);
    }
    return q;
}

/* ---------------------------------------------------------------- helpers */

typedef struct env {
    fr_collide_work w;
    fr_polyhedron_out o, o2;
} env;

static void env_init(env *e, int max_faces)
{
    ck_assert_int_eq(fr_collide_work_init(&e->w, max_faces, NULL), 0);
    ck_assert_int_eq(fr_polyhedron_out_init(&e->o, max_faces, NULL), 0);
    ck_assert_int_eq(fr_polyhedron_out_init(&e->o2, max_faces, NULL), 0);
}
static void env_free(env *e)
{
    fr_collide_work_free(&e->w);
    fr_polyhedron_out_free(&e->o);
    fr_polyhedron_out_free(&e->o2);
}

/* planes of a polytope at a pose, world coordinates; returns the count */
static int world_planes(const fr_polytope *p, fr_pose T, fr_vec3 *n, double *d)
{
    for (int f = 0; f < p->nfaces; f++) {
        n[f] = fr_q_rotate(T.q, p->normal[f]);
        d[f] = p->offset[f] + fr_v3_dot(n[f], T.p);
    }
    return p->nfaces;
}
static int world_verts(const fr_polytope *p, fr_pose T, fr_vec3 *v)
{
    for (int i = 0; i < p->nverts; i++) v[i] = fr_pose_apply(T, p->verts[i]);
    return p->nverts;
}
static bool inside(fr_vec3 x, const fr_vec3 *n, const double *d, int np)
{
    for (int i = 0; i < np; i++)
        if (n[i].x * x.x + n[i].y * x.y + n[i].z * x.z > d[i]) return false;
    return true;
}
static double max_viol(fr_vec3 x, const fr_vec3 *n, const double *d, int np)
{
    double m = -INFINITY;
    for (int i = 0; i < np; i++) m = fmax(m, fr_v3_dot(n[i], x) - d[i]);
    return m;
}

/*
 * The output is a closed, convex, consistently oriented polyhedron inside A and B: Σ area
 * vectors = 0, every vertex satisfies every plane of A and B, every face lies in a plane of its
 * owner with that plane's normal, faces are convex and counter-clockwise, and the volume and
 * centroid are those of the divergence theorem about a different reference point.
 */
static void check_poly(const fr_polyhedron_out *o, const fr_polytope *A, fr_pose pa,
                       const fr_polytope *B, fr_pose pb, double L)
{
    const double tol = 1e-8 * L;
    fr_vec3 na[2048], nb[2048];
    double da[2048], db[2048];
    int ka = world_planes(A, pa, na, da), kb = world_planes(B, pb, nb, db);
    REQ(isfinite(o->volume) && o->volume > 0, "volume %g", o->volume);
    REQ(fr_v3_isfinite(o->centroid) && fr_v3_isfinite(o->interior), "NaN centroid");
    for (int i = 0; i < o->nverts; i++) {
        REQ(fr_v3_isfinite(o->verts[i]), "NaN vertex");
        REQ(max_viol(o->verts[i], na, da, ka) <= tol, "vertex outside A by %g",
            max_viol(o->verts[i], na, da, ka));
        REQ(max_viol(o->verts[i], nb, db, kb) <= tol, "vertex outside B by %g",
            max_viol(o->verts[i], nb, db, kb));
    }
    /* the interior point is strictly inside both */
    REQ(max_viol(o->interior, na, da, ka) < 0, "interior point not inside A");
    REQ(max_viol(o->interior, nb, db, kb) < 0, "interior point not inside B");
    fr_vec3 sum = fr_v3_zero(), m1 = fr_v3_zero();
    double vol6 = 0, area = 0;
    fr_vec3 ref = fr_v3_zero(); /* the vertex mean (thin shapes: tetrahedra stay small) */
    for (int i = 0; i < o->nverts; i++) ref = fr_v3_add(ref, o->verts[i]);
    ref = fr_v3_scale(ref, 1.0 / o->nverts);
    for (int f = 0; f < o->nfaces; f++) {
        int s = o->face_start[f], c = o->face_count[f];
        REQ(c >= 3 && s + c <= o->nidx, "face %d: %d vertices at %d", f, c, s);
        fr_vec3 n = o->face_normal[f];
        REQ(fabs(fr_v3_norm(n) - 1) < 1e-12, "normal not unit");
        /* the owner's plane with this normal */
        const fr_vec3 *pn = o->face_owner[f] == FR_FACE_A ? na : nb;
        const double *pd = o->face_owner[f] == FR_FACE_A ? da : db;
        int kk = o->face_owner[f] == FR_FACE_A ? ka : kb, best = -1;
        for (int i = 0; i < kk; i++)
            if (best < 0 || fr_v3_dot(pn[i], n) > fr_v3_dot(pn[best], n)) best = i;
        REQ(fr_v3_dot(pn[best], n) > 1 - 1e-12, "face %d normal is not its owner's", f);
        fr_vec3 av = fr_v3_zero();
        for (int k = 0; k < c; k++) {
            int i0 = o->vidx[s + k], i1 = o->vidx[s + (k + 1) % c], i2 = o->vidx[s + (k + 2) % c];
            REQ(i0 >= 0 && i0 < o->nverts && i0 != i1, "face %d: bad index", f);
            fr_vec3 v0 = o->verts[i0], v1 = o->verts[i1], v2 = o->verts[i2];
            REQ(fabs(fr_v3_dot(pn[best], v0) - pd[best]) <= tol, "off its plane by %g",
                fabs(fr_v3_dot(pn[best], v0) - pd[best]));
            /* convex, counter-clockwise about n */
            double turn = fr_v3_dot(fr_v3_cross(fr_v3_sub(v1, v0), fr_v3_sub(v2, v1)), n);
            REQ(turn >= -tol * L, "face %d turns clockwise (%g)", f, turn);
            av = fr_v3_add(av, fr_v3_cross(fr_v3_sub(v0, ref), fr_v3_sub(v1, ref)));
        }
        av = fr_v3_scale(av, 0.5);
        REQ(fr_v3_dot(av, n) >= -tol * L, "face %d area against its normal", f);
        sum = fr_v3_add(sum, av);
        area += fr_v3_norm(av);
        fr_vec3 a0 = fr_v3_sub(o->verts[o->vidx[s]], ref);
        for (int k = 1; k + 1 < c; k++) {
            fr_vec3 b = fr_v3_sub(o->verts[o->vidx[s + k]], ref),
                    d = fr_v3_sub(o->verts[o->vidx[s + k + 1]], ref);
            double det = fr_v3_dot(a0, fr_v3_cross(b, d));
            vol6 += det;
            m1 = fr_v3_add(m1, fr_v3_scale(fr_v3_add(fr_v3_add(a0, b), d), det));
        }
    }
    /* closed: Σ area vectors = 0 */
    REQ(fr_v3_norm(sum) <= 1e-9 * fmax(area, L * L * 1e-6), "open: |Σ A| = %g (A = %g)",
        fr_v3_norm(sum), area);
    REQ(fr_reldiff(vol6 / 6, o->volume, 1e-9 * L * L * L) <= 1e-9, "volume %g vs %g", vol6 / 6,
        o->volume);
    fr_vec3 cen = fr_v3_add(ref, fr_v3_scale(m1, 1.0 / (4 * vol6)));
    REQ(fr_v3_dist(cen, o->centroid) <= 1e-9 * L, "centroid off by %g",
        fr_v3_dist(cen, o->centroid));
}

static void check_empty(const fr_polyhedron_out *o)
{
    ck_assert_int_eq(o->nfaces, 0);
    ck_assert_int_eq(o->nverts, 0);
    ck_assert(o->volume == 0);
}

/* analytic overlap of two axis-aligned boxes (centre, half extents) */
static double box_overlap(fr_vec3 ca, fr_vec3 ha, fr_vec3 cb, fr_vec3 hb, fr_vec3 *cen)
{
    double v = 1;
    double c[3];
    for (int i = 0; i < 3; i++) {
        double lo = fmax(fr_v3_get(ca, i) - fr_v3_get(ha, i), fr_v3_get(cb, i) - fr_v3_get(hb, i));
        double hi = fmin(fr_v3_get(ca, i) + fr_v3_get(ha, i), fr_v3_get(cb, i) + fr_v3_get(hb, i));
        v *= fmax(0, hi - lo);
        c[i] = 0.5 * (lo + hi);
    }
    if (cen) *cen = fr_v3(c[0], c[1], c[2]);
    return v;
}

static fr_shape *box(double x, double y, double z)
{
    fr_shape *s;
    ck_assert_int_eq(fr_shape_create_box(fr_v3(x, y, z), &s), 0);
    return s;
}

static fr_shape *rand_convex(frtest_rng *r, int n, double size)
{
    fr_vec3 pts[64];
    fr_vec3 ax =
        fr_v3(frtest_uniform(r, 0.4, 1), frtest_uniform(r, 0.4, 1), frtest_uniform(r, 0.4, 1));
    fr_quat q = rand_q(r);
    for (int i = 0; i < n; i++) {
        fr_vec3 p;
        do p = rand_v3(r, 1);
        while (fr_v3_norm(p) > 1);
        pts[i] = fr_q_rotate(q, fr_v3_scale(fr_v3_mul(p, ax), size));
    }
    fr_shape *s;
    ck_assert_int_eq(fr_shape_create_convex(pts, n, &s), 0);
    return s;
}

/* ---------------------------------------------------------------- box–box exact */

START_TEST(test_box_box_axis_aligned_exact)
{
    frtest_rng r = {11};
    env e;
    env_init(&e, 6);
    int hits = 0, shared = 0;
    for (int it = 0; it < 3000; it++) {
        fr_vec3 ha = fr_v3(frtest_uniform(&r, 0.1, 2), frtest_uniform(&r, 0.1, 2),
                           frtest_uniform(&r, 0.1, 2));
        fr_vec3 hb = fr_v3(frtest_uniform(&r, 0.1, 2), frtest_uniform(&r, 0.1, 2),
                           frtest_uniform(&r, 0.1, 2));
        fr_shape *A = box(ha.x, ha.y, ha.z), *B = box(hb.x, hb.y, hb.z);
        fr_pose pa = {rand_v3(&r, 3), cube_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, 3)), cube_q(&r)};
        /* world half extents after a cube rotation */
        fr_vec3 wa = fr_v3_abs(fr_q_rotate(pa.q, ha)), wb = fr_v3_abs(fr_q_rotate(pb.q, hb));
        /* a third of the cases share a face plane (same or opposite normal) on some axis */
        if (it % 3 == 0) {
            int ax = (int)(frtest_next(&r) % 3), kind = (int)(frtest_next(&r) % 3);
            double a = fr_v3_get(pa.p, ax), s = fr_v3_get(wa, ax), t = fr_v3_get(wb, ax);
            double c = kind == 0 ? a + s - t : (kind == 1 ? a - s + t : a + s + t);
            if (ax == 0) pb.p.x = c;
            if (ax == 1) pb.p.y = c;
            if (ax == 2) pb.p.z = c;
            shared++;
        }
        fr_vec3 cen;
        double v = box_overlap(pa.p, wa, pb.p, wb, &cen);
        double L = fr_v3_norm(ha) + fr_v3_norm(hb);
        int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        ck_assert_int_ge(rc, 0);
        /* thickness test: overlap thinner than 1e-9 L is touching */
        double thin =
            fmin(fmin(v / fmax(1e-300, fmin(2 * wa.y, 2 * wb.y) * fmin(2 * wa.z, 2 * wb.z)),
                      v / fmax(1e-300, fmin(2 * wa.x, 2 * wb.x) * fmin(2 * wa.z, 2 * wb.z))),
                 v / fmax(1e-300, fmin(2 * wa.x, 2 * wb.x) * fmin(2 * wa.y, 2 * wb.y)));
        if (v > 0 && thin > 1e-7 * L) {
            ck_assert_int_eq(rc, 1);
            hits++;
            ck_assert_rel(e.o.volume, v, 1e-11, 0);
            ck_assert_double_le(fr_v3_dist(e.o.centroid, cen), 1e-11 * L);
            check_poly(&e.o, &A->poly, pa, &B->poly, pb, L);
            /* a box–box intersection is a box: 8 vertices, 6 faces */
            ck_assert_int_eq(e.o.nverts, 8);
            ck_assert_int_eq(e.o.nfaces, 6);
        } else if (v == 0) {
            ck_assert_int_eq(rc, 0);
            check_empty(&e.o);
        }
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(hits, 800);
    ck_assert_int_gt(shared, 500);
    env_free(&e);
}
END_TEST

/* ---------------------------------------------------------------- tilted box into a half-space */

/* area and centroid of the rectangle [−b,b]×[−c,c] rotated by th about the origin, shifted by
 * (0, zc), clipped to z ≤ 0 (Sutherland–Hodgman on one edge, 2-D) */
static double clip_rect(double b, double c, double th, double zc, double *cy, double *cz)
{
    double P[4][2] = {{-b, -c}, {b, -c}, {b, c}, {-b, c}}, Q[8][2];
    int nq = 0;
    for (int i = 0; i < 4; i++) {
        double y = P[i][0] * cos(th) - P[i][1] * sin(th),
               z = P[i][0] * sin(th) + P[i][1] * cos(th) + zc;
        P[i][0] = y;
        P[i][1] = z;
    }
    for (int i = 0; i < 4; i++) {
        const double *p = P[i], *q = P[(i + 1) % 4];
        if (p[1] <= 0) {
            Q[nq][0] = p[0];
            Q[nq][1] = p[1];
            nq++;
        }
        if ((p[1] < 0) != (q[1] < 0) && p[1] != q[1]) {
            double t = p[1] / (p[1] - q[1]);
            Q[nq][0] = p[0] + t * (q[0] - p[0]);
            Q[nq][1] = 0;
            nq++;
        }
    }
    double a = 0, my = 0, mz = 0;
    for (int i = 0; i < nq; i++) {
        const double *p = Q[i], *q = Q[(i + 1) % nq];
        double cr = p[0] * q[1] - q[0] * p[1];
        a += cr;
        my += (p[0] + q[0]) * cr;
        mz += (p[1] + q[1]) * cr;
    }
    a *= 0.5;
    *cy = my / (6 * a);
    *cz = mz / (6 * a);
    return fabs(a);
}

START_TEST(test_tilted_box_into_halfspace)
{
    frtest_rng r = {12};
    env e;
    env_init(&e, 6);
    fr_shape *G = box(50, 50, 50);
    fr_pose pg = {fr_v3(0, 0, -50), fr_q_identity()}; /* top face at z = 0 */
    for (int it = 0; it < 500; it++) {
        double a = frtest_uniform(&r, 0.2, 1), b = frtest_uniform(&r, 0.2, 1),
               c = frtest_uniform(&r, 0.2, 1);
        double th = frtest_uniform(&r, 0.01, 0.5 * PI - 0.01);
        fr_shape *A = box(a, b, c);
        /* lowest corner of the rotated y–z rectangle is at −(b sin th + c cos th) */
        double low = b * sin(th) + c * cos(th);
        double depth = frtest_uniform(&r, 1e-4, 2 * low) * (it % 2 ? 1 : 0.05);
        double zc = low - depth;
        fr_vec3 off = fr_v3(frtest_uniform(&r, -5, 5), frtest_uniform(&r, -5, 5), 0);
        fr_pose pa = {fr_v3(off.x, off.y, zc), fr_q_axis_angle(fr_v3(1, 0, 0), th)};
        double cy, cz, area = clip_rect(b, c, th, zc, &cy, &cz);
        double v = 2 * a * area;
        int rc = fr_polytope_intersect(&A->poly, pa, &G->poly, pg, &e.w, &e.o);
        ck_assert_int_eq(rc, 1);
        ck_assert_rel(e.o.volume, v, 1e-10, 0);
        ck_assert_double_le(fr_v3_dist(e.o.centroid, fr_v3(off.x, off.y + cy, cz)), 1e-10);
        /* one lowest corner: the closed-form triangular prism */
        if (depth < fmin(2 * b * sin(th), 2 * c * cos(th)))
            ck_assert_rel(v, 2 * a * depth * depth / (2 * sin(th) * cos(th)), 1e-12, 0);
        check_poly(&e.o, &A->poly, pa, &G->poly, pg, 100);
        fr_shape_destroy(A);
    }
    fr_shape_destroy(G);
    env_free(&e);
}
END_TEST

/* ---------------------------------------------------------------- random convex pairs */

/* Monte Carlo volume and centroid of A ∩ B in the overlap of their AABBs */
static double mc_volume(const fr_polytope *A, fr_pose pa, const fr_polytope *B, fr_pose pb,
                        frtest_rng *r, long n, fr_vec3 *cen, double *boxvol)
{
    fr_vec3 na[256], nb[256], va[256], vb[256];
    double da[256], db[256];
    *boxvol = 0; /* disjoint boxes: no volume, no centroid */
    if (cen) *cen = fr_v3_zero();
    int ka = world_planes(A, pa, na, da), kb = world_planes(B, pb, nb, db);
    int ma = world_verts(A, pa, va), mb = world_verts(B, pb, vb);
    fr_vec3 loa = va[0], hia = va[0], lob = vb[0], hib = vb[0];
    for (int i = 1; i < ma; i++) {
        loa = fr_v3_min(loa, va[i]);
        hia = fr_v3_max(hia, va[i]);
    }
    for (int i = 1; i < mb; i++) {
        lob = fr_v3_min(lob, vb[i]);
        hib = fr_v3_max(hib, vb[i]);
    }
    fr_vec3 lo = fr_v3_max(loa, lob), hi = fr_v3_min(hia, hib);
    fr_vec3 ext = fr_v3_sub(hi, lo);
    if (ext.x <= 0 || ext.y <= 0 || ext.z <= 0) return 0;
    double boxv = ext.x * ext.y * ext.z;
    long in = 0;
    fr_vec3 s = fr_v3_zero();
    for (long i = 0; i < n; i++) {
        fr_vec3 x =
            fr_v3(lo.x + ext.x * frtest_uniform(r, 0, 1), lo.y + ext.y * frtest_uniform(r, 0, 1),
                  lo.z + ext.z * frtest_uniform(r, 0, 1));
        if (inside(x, na, da, ka) && inside(x, nb, db, kb)) {
            in++;
            s = fr_v3_add(s, x);
        }
    }
    double p = (double)in / n;
    *boxvol = boxv;
    if (cen) *cen = in ? fr_v3_scale(s, 1.0 / in) : fr_v3_zero();
    return boxv * p;
}

START_TEST(test_random_convex_vs_monte_carlo)
{
    frtest_rng r = {13};
    env e;
    env_init(&e, 128);
    int tested = 0;
    for (int it = 0; it < 50; it++) {
        fr_shape *A = rand_convex(&r, 6 + (int)(frtest_next(&r) % 35), 1.0);
        fr_shape *B =
            rand_convex(&r, 6 + (int)(frtest_next(&r) % 35), frtest_uniform(&r, 0.5, 1.5));
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, 0.5)), rand_q(&r)};
        int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        ck_assert_int_ge(rc, 0);
        double L = A->bound_radius + B->bound_radius;
        fr_vec3 cen;
        double boxv;
        double mc = mc_volume(&A->poly, pa, &B->poly, pb, &r, 200000, &cen, &boxv);
        if (rc == 0) {
            ck_assert_double_le(mc, 0.002 * L * L * L);
            fr_shape_destroy(A);
            fr_shape_destroy(B);
            continue;
        }
        check_poly(&e.o, &A->poly, pa, &B->poly, pb, L);
        /* samples for a standard error ≤ 0.2 % of the volume (the 1 % bound is then 5σ) */
        double p = e.o.volume / boxv;
        long need = (long)((1 - p) / (p * 0.002 * 0.002)) + 1;
        if (need > 4000000) { /* a sliver Monte Carlo cannot resolve: closure checked above */
            fr_shape_destroy(A);
            fr_shape_destroy(B);
            continue;
        }
        if (need > 200000) mc = mc_volume(&A->poly, pa, &B->poly, pb, &r, need, &cen, &boxv);
        tested++;
        ck_assert_rel(e.o.volume, mc, 0.01, 0);
        ck_assert_double_le(fr_v3_dist(e.o.centroid, cen), 0.01 * L);
        /* and the literal Muller–Preparata with qhull about our interior point */
        fr_vec3 n[256];
        double d[256];
        int k = world_planes(&A->poly, pa, n, d);
        k += world_planes(&B->poly, pb, n + k, d + k);
        double vref;
        ck_assert_int_eq(ref_mp_volume(n, d, k, e.o.interior, &vref), 0);
        ck_assert_rel(e.o.volume, vref, 1e-9, 0);
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_ge(tested, 25);
    env_free(&e);
}
END_TEST

/* A ∩ B == B ∩ A over every pair of shape types */
static fr_shape *rand_shape(frtest_rng *r, int type)
{
    fr_shape *s = NULL;
    switch (type) {
    case FR_SHAPE_BOX:
        return box(frtest_uniform(r, 0.2, 1), frtest_uniform(r, 0.2, 1), frtest_uniform(r, 0.2, 1));
    case FR_SHAPE_SPHERE:
        ck_assert_int_eq(
            fr_shape_create_sphere(frtest_uniform(r, 0.3, 1), 1 + (int)(frtest_next(r) % 4), &s),
            0);
        return s;
    case FR_SHAPE_CAPSULE:
        ck_assert_int_eq(fr_shape_create_capsule(frtest_uniform(r, 0.2, 0.6),
                                                 frtest_uniform(r, 0, 0.8),
                                                 4 + (int)(frtest_next(r) % 12), &s),
                         0);
        return s;
    case FR_SHAPE_CYLINDER:
        ck_assert_int_eq(fr_shape_create_cylinder(frtest_uniform(r, 0.2, 0.8),
                                                  frtest_uniform(r, 0.1, 0.8),
                                                  3 + (int)(frtest_next(r) % 30), &s),
                         0);
        return s;
    default:
        return rand_convex(r, 5 + (int)(frtest_next(r) % 30), frtest_uniform(r, 0.4, 1));
    }
}

START_TEST(test_symmetry_all_types)
{
    frtest_rng r = {14};
    env e;
    env_init(&e, 512);
    int hits = 0;
    for (int it = 0; it < 1000; it++) {
        int ta = (int)(frtest_next(&r) % 5), tb = (int)(frtest_next(&r) % 5);
        fr_shape *A = rand_shape(&r, ta), *B = rand_shape(&r, tb);
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, 0.7)), rand_q(&r)};
        double L = A->bound_radius + B->bound_radius;
        int r1 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        int r2 = fr_polytope_intersect(&B->poly, pb, &A->poly, pa, &e.w, &e.o2);
        ck_assert_int_ge(r1, 0);
        ck_assert_int_eq(r1, r2);
        if (r1 == 1) {
            hits++;
            check_poly(&e.o, &A->poly, pa, &B->poly, pb, L);
            check_poly(&e.o2, &B->poly, pb, &A->poly, pa, L);
            ck_assert_rel(e.o.volume, e.o2.volume, 1e-9, 1e-9 * L * L * L);
            ck_assert_double_le(fr_v3_dist(e.o.centroid, e.o2.centroid), 1e-9 * L);
            /* same faces with owners swapped: match by normal */
            ck_assert_int_eq(e.o.nfaces, e.o2.nfaces);
            for (int f = 0; f < e.o.nfaces; f++) {
                int g = -1;
                for (int k = 0; k < e.o2.nfaces; k++)
                    if (fr_v3_dot(e.o.face_normal[f], e.o2.face_normal[k]) > 1 - 1e-12 &&
                        e.o.face_owner[f] != e.o2.face_owner[k])
                        g = k;
                ck_assert_msg(g >= 0, "face %d of A∩B has no swapped twin in B∩A", f);
            }
        }
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(hits, 300);
    env_free(&e);
}
END_TEST

/* ---------------------------------------------------------------- curved shapes, mass */

/* moments of inertia (per unit density) are monotone under inclusion: a polytope between an
 * inner and an outer copy of a shape has its inertia between theirs */
static double sphere_I(double r)
{
    return 8 * PI / 15 * pow(r, 5);
}
static void cyl_I(double r, double h, double *ixx, double *izz)
{
    double v = PI * r * r * 2 * h;
    *ixx = v * (3 * r * r + 4 * h * h) / 12;
    *izz = v * r * r / 2;
}
static void capsule_I(double r, double h, double *ixx, double *izz)
{
    double vc = PI * r * r * 2 * h, vs = 4.0 / 3 * PI * r * r * r;
    *ixx = vc * (3 * r * r + 4 * h * h) / 12 + vs * (0.4 * r * r + h * h + 0.75 * h * r);
    *izz = vc * r * r / 2 + 0.4 * vs * r * r;
}
/* largest capsule about the shape's segment inside the polytope, smallest containing it */
static void capsule_band(const fr_polytope *p, double h, double *rin, double *rout)
{
    *rin = INFINITY;
    *rout = 0;
    for (int f = 0; f < p->nfaces; f++)
        for (int s = -1; s <= 1; s += 2) *rin = fmin(*rin, p->offset[f] - p->normal[f].z * s * h);
    for (int i = 0; i < p->nverts; i++) {
        fr_vec3 v = p->verts[i];
        double z = fmax(-h, fmin(h, v.z));
        *rout = fmax(*rout, fr_v3_norm(fr_v3(v.x, v.y, v.z - z)));
    }
}

START_TEST(test_curved_volume_and_mass)
{
    frtest_rng r = {21};
    for (int f = 1; f <= 6; f++) {
        double rad = frtest_uniform(&r, 0.1, 3);
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_sphere(rad, f, &s), 0);
        ck_assert_int_eq(s->poly.nfaces, 20 * f * f);
        ck_assert_int_eq(s->poly.nverts, 10 * f * f + 2);
        ck_assert_rel(s->poly.volume, 4.0 / 3 * PI * rad * rad * rad, 1e-12, 0);
        double in, out;
        fr_polytope_radii(&s->poly, &in, &out);
        ck_assert(in < rad && rad < out);
        ck_assert_rel(out, s->support_radius, 1e-15, 0);
        double m;
        fr_vec3 c;
        fr_mat3 I;
        fr_shape_mass(s, 2.5, &m, &c, &I);
        ck_assert_rel(m, 2.5 * 4.0 / 3 * PI * rad * rad * rad, 1e-14, 0);
        ck_assert_rel(I.m[1][1], 2.5 * 0.4 * m / 2.5 * rad * rad, 1e-14, 0);
        for (int k = 0; k < 3; k++) {
            ck_assert(s->poly.inertia.m[k][k] >= sphere_I(in) &&
                      s->poly.inertia.m[k][k] <= sphere_I(out));
            ck_assert(s->inertia.m[k][k] >= sphere_I(in) && s->inertia.m[k][k] <= sphere_I(out));
        }
        fr_shape_destroy(s);
    }
    /* a fine sphere pins the exact formula down to the band */
    {
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_sphere(1.3, 16, &s), 0);
        double in, out;
        fr_polytope_radii(&s->poly, &in, &out);
        ck_assert_double_le(fabs(s->poly.inertia.m[0][0] - s->inertia.m[0][0]),
                            sphere_I(out) - sphere_I(in));
        ck_assert_double_le(sphere_I(out) - sphere_I(in), 0.03 * s->inertia.m[0][0]);
        fr_shape_destroy(s);
    }
    for (int n = 3; n <= 64; n += 5) {
        double rad = frtest_uniform(&r, 0.1, 2), h = frtest_uniform(&r, 0.05, 2);
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_cylinder(rad, h, n, &s), 0);
        ck_assert_int_eq(s->poly.nfaces, n + 2);
        ck_assert_rel(s->poly.volume, PI * rad * rad * 2 * h, 1e-12, 0);
        /* prism between the inscribed and circumscribed cylinders */
        double rout = s->support_radius, rin = rout * cos(PI / n), ixx0, izz0, ixx1, izz1, ixx, izz;
        cyl_I(rin, h, &ixx0, &izz0);
        cyl_I(rout, h, &ixx1, &izz1);
        cyl_I(rad, h, &ixx, &izz);
        ck_assert_rel(s->inertia.m[0][0], ixx, 1e-14, 0);
        ck_assert_rel(s->inertia.m[2][2], izz, 1e-14, 0);
        ck_assert(s->poly.inertia.m[0][0] >= ixx0 * (1 - 1e-12) &&
                  s->poly.inertia.m[0][0] <= ixx1 * (1 + 1e-12));
        ck_assert(s->poly.inertia.m[2][2] >= izz0 * (1 - 1e-12) &&
                  s->poly.inertia.m[2][2] <= izz1 * (1 + 1e-12));
        fr_shape_destroy(s);
    }
    for (int n = 4; n <= 128; n = n < 32 ? n + 3 : n * 2) {
        double rad = frtest_uniform(&r, 0.1, 2), h = n % 2 ? 0 : frtest_uniform(&r, 0.05, 2);
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_capsule(rad, h, n, &s), 0);
        ck_assert_rel(s->poly.volume, PI * rad * rad * (2 * h + 4.0 / 3 * rad), 1e-12, 0);
        double rin, rout, i0x, i0z, i1x, i1z;
        capsule_band(&s->poly, h, &rin, &rout);
        ck_assert(rin < rad && rad < rout);
        capsule_I(rin, h, &i0x, &i0z);
        capsule_I(rout, h, &i1x, &i1z);
        ck_assert(s->poly.inertia.m[0][0] >= i0x && s->poly.inertia.m[0][0] <= i1x);
        ck_assert(s->poly.inertia.m[2][2] >= i0z && s->poly.inertia.m[2][2] <= i1z);
        /* the exact formula sits in the same band, which is narrow at high resolution */
        ck_assert(s->inertia.m[0][0] >= i0x && s->inertia.m[0][0] <= i1x);
        ck_assert(s->inertia.m[2][2] >= i0z && s->inertia.m[2][2] <= i1z);
        if (n >= 128) ck_assert_double_le(i1x - i0x, 0.01 * s->inertia.m[0][0]);
        fr_shape_destroy(s);
    }
}
END_TEST

/* fr_shape_slack against sampling: points on the true surface (a dense parametric grid) give
 * how far it reaches beyond the polytope's face planes (a lower bound of the slack, exact in the
 * limit) and the polytope's vertices' distances to those points bound how far they stray (an
 * upper bound, to the grid's spacing). A long cylinder's slack is its cross-section's, not its
 * length (the bug that threw HyQ off the ground: a 35 cm leg cylinder was given 15 cm). */
static void slack_check(const fr_shape *sh)
{
    const fr_polytope *P = &sh->poly;
    const double r = sh->radius, h = sh->half_length;
    const int na = 360, nz = 60;
    double in_max = 0.0, spacing = 2 * M_PI * r / na;
    double *vd = malloc(sizeof(double) * (size_t)P->nverts);
    ck_assert_ptr_nonnull(vd);
    for (int v = 0; v < P->nverts; v++) vd[v] = INFINITY;
    for (int part = 0; part < 3; part++)
        for (int i = 0; i < na; i++)
            for (int j = 0; j <= nz; j++) {
                double a = 2 * M_PI * i / na, u = (double)j / nz;
                fr_vec3 x;
                if (sh->type == FR_SHAPE_SPHERE) {
                    if (part) continue;
                    double th = M_PI * u;
                    x = fr_v3(r * sin(th) * cos(a), r * sin(th) * sin(a), r * cos(th));
                } else if (part == 0) { /* the side */
                    x = fr_v3(r * cos(a), r * sin(a), -h + 2 * h * u);
                    spacing = fmax(spacing, 2 * h / nz);
                } else if (sh->type == FR_SHAPE_CYLINDER) { /* the caps */
                    double rr = r * u;
                    x = fr_v3(rr * cos(a), rr * sin(a), part == 1 ? -h : h);
                } else { /* the capsule's hemispheres */
                    double th = 0.5 * M_PI * u;
                    x = fr_v3(r * sin(th) * cos(a), r * sin(th) * sin(a),
                              part == 1 ? -h - r * cos(th) : h + r * cos(th));
                }
                for (int f = 0; f < P->nfaces; f++)
                    in_max = fmax(in_max, fr_v3_dot(P->normal[f], x) - P->offset[f]);
                for (int v = 0; v < P->nverts; v++) vd[v] = fmin(vd[v], fr_v3_dist(P->verts[v], x));
            }
    double out_max = 0.0;
    for (int v = 0; v < P->nverts; v++) out_max = fmax(out_max, vd[v]);
    free(vd);
    double slack = fr_shape_slack(sh);
    ck_assert_msg(slack >= in_max - 1e-12, "type %d r %g h %g: slack %g below sampled %g", sh->type,
                  r, h, slack, in_max);
    ck_assert_msg(slack <= fmax(in_max, out_max) + spacing,
                  "type %d r %g h %g: slack %g above sampled %g (spacing %g)", sh->type, r, h,
                  slack, fmax(in_max, out_max), spacing);
    /* a curved polytope strays by a fraction of its radius, whatever its length */
    ck_assert_msg(slack < 0.2 * r, "type %d r %g h %g: slack %g", sh->type, r, h, slack);
}

START_TEST(test_curved_slack)
{
    fr_shape *sh;
    for (int res = 1; res <= 4; res++) {
        ck_assert_int_eq(fr_shape_create_sphere(0.3, res, &sh), FR_OK);
        slack_check(sh);
        fr_shape_destroy(sh);
    }
    const double hs[] = {0.01, 0.173, 2.0};
    double first = -1;
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(fr_shape_create_cylinder(0.02, hs[k], 0, &sh), FR_OK);
        slack_check(sh);
        /* the same cross-section: the same slack */
        if (first < 0) first = fr_shape_slack(sh);
        ck_assert_double_le(fabs(fr_shape_slack(sh) - first), 1e-12);
        fr_shape_destroy(sh);
        ck_assert_int_eq(fr_shape_create_capsule(0.05, hs[k], 0, &sh), FR_OK);
        slack_check(sh);
        fr_shape_destroy(sh);
    }
    ck_assert_int_eq(fr_shape_create_box(fr_v3(1, 2, 3), &sh), FR_OK);
    ck_assert_double_eq(fr_shape_slack(sh), 0.0);
    fr_shape_destroy(sh);
}
END_TEST

START_TEST(test_polytope_mass_properties)
{
    frtest_rng r = {22};
    /* a box given as 8 rotated, shifted points: exact box mass properties, rotated */
    for (int it = 0; it < 50; it++) {
        fr_vec3 h = fr_v3(frtest_uniform(&r, 0.1, 2), frtest_uniform(&r, 0.1, 2),
                          frtest_uniform(&r, 0.1, 2));
        fr_quat q = rand_q(&r);
        fr_vec3 t = rand_v3(&r, 5);
        fr_vec3 pts[8];
        for (int i = 0; i < 8; i++)
            pts[i] = fr_v3_add(t, fr_q_rotate(q, fr_v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y,
                                                       i & 4 ? h.z : -h.z)));
        fr_shape *s, *b = box(h.x, h.y, h.z);
        ck_assert_int_eq(fr_shape_create_convex(pts, 8, &s), 0);
        ck_assert_int_eq(s->poly.nfaces, 6);
        ck_assert_rel(s->volume, b->volume, 1e-12, 0);
        ck_assert_double_le(fr_v3_dist(s->centroid, t), 1e-12 * 5);
        fr_mat3 R = fr_q_to_m3(q), Iw = fr_m3_rotate(R, b->inertia);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                ck_assert_double_le(fabs(s->inertia.m[i][j] - Iw.m[i][j]),
                                    1e-11 * fr_m3_trace(b->inertia));
        /* the box's own polytope agrees with its formulas */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                ck_assert_double_le(fabs(b->poly.inertia.m[i][j] - b->inertia.m[i][j]),
                                    1e-12 * fr_m3_trace(b->inertia));
        fr_shape_destroy(s);
        fr_shape_destroy(b);
    }
    /* random hulls against Monte Carlo moments */
    for (int it = 0; it < 5; it++) {
        fr_shape *s = rand_convex(&r, 20, 1);
        const fr_polytope *p = &s->poly;
        fr_vec3 lo = p->verts[0], hi = lo;
        for (int i = 1; i < p->nverts; i++) {
            lo = fr_v3_min(lo, p->verts[i]);
            hi = fr_v3_max(hi, p->verts[i]);
        }
        fr_vec3 ext = fr_v3_sub(hi, lo);
        long n = 1000000, in = 0;
        fr_vec3 m1 = fr_v3_zero();
        fr_mat3 m2 = fr_m3_zero();
        for (long i = 0; i < n; i++) {
            fr_vec3 x = fr_v3(lo.x + ext.x * frtest_uniform(&r, 0, 1),
                              lo.y + ext.y * frtest_uniform(&r, 0, 1),
                              lo.z + ext.z * frtest_uniform(&r, 0, 1));
            if (!inside(x, p->normal, p->offset, p->nfaces)) continue;
            in++;
            m1 = fr_v3_add(m1, x);
            m2 = fr_m3_add(m2, fr_m3_outer(x, x));
        }
        double bv = ext.x * ext.y * ext.z, vol = bv * in / n;
        fr_vec3 c = fr_v3_scale(m1, 1.0 / in);
        fr_mat3 C = fr_m3_sub(fr_m3_scale(m2, vol / in), fr_m3_scale(fr_m3_outer(c, c), vol));
        fr_mat3 I = fr_m3_sub(fr_m3_scale(fr_m3_identity(), fr_m3_trace(C)), C);
        ck_assert_rel(s->volume, vol, 0.01, 0);
        ck_assert_double_le(fr_v3_dist(s->centroid, c), 0.01);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                ck_assert_double_le(fabs(s->inertia.m[i][j] - I.m[i][j]),
                                    0.02 * fr_m3_trace(s->inertia));
        fr_shape_destroy(s);
    }
    /* flat input is refused */
    fr_vec3 flat[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.5, 0}};
    fr_shape *s;
    ck_assert_int_eq(fr_shape_create_convex(flat, 5, &s), FR_ERR_INVAL);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(fr_shape_create_box(fr_v3(1, 0, 1), &s), FR_ERR_INVAL);
    ck_assert_int_eq(fr_shape_create_sphere(-1, 0, &s), FR_ERR_INVAL);
}
END_TEST

/* ---------------------------------------------------------------- lens and cap */

static double lens(double R, double r, double d)
{
    if (d >= R + r) return 0;
    if (d <= fabs(R - r)) return 4.0 / 3 * PI * pow(fmin(R, r), 3);
    return PI * (R + r - d) * (R + r - d) *
           (d * d + 2 * d * r - 3 * r * r + 2 * d * R + 6 * r * R - 3 * R * R) / (12 * d);
}
/* volume of a ball of radius R below a plane at signed height s of the centre */
static double cap(double R, double s)
{
    if (s >= R) return 0;
    if (s <= -R) return 4.0 / 3 * PI * R * R * R;
    return PI * (R - s) * (R - s) * (2 * R + s) / 3;
}

START_TEST(test_sphere_lens_and_cap)
{
    frtest_rng r = {23};
    env e;
    env_init(&e, 20 * 25);
    int n = 0;
    double worst = 0;
    for (int it = 0; it < 300; it++) {
        int f1 = 2 + (int)(frtest_next(&r) % 4), f2 = 2 + (int)(frtest_next(&r) % 4);
        double r1 = frtest_uniform(&r, 0.3, 1), r2 = frtest_uniform(&r, 0.3, 1);
        fr_shape *A, *B;
        ck_assert_int_eq(fr_shape_create_sphere(r1, f1, &A), 0);
        ck_assert_int_eq(fr_shape_create_sphere(r2, f2, &B), 0);
        double i1, o1, i2, o2;
        fr_polytope_radii(&A->poly, &i1, &o1);
        fr_polytope_radii(&B->poly, &i2, &o2);
        double d = frtest_uniform(&r, 0.05, 0.95) * (r1 + r2);
        fr_vec3 dir = fr_v3_normalize(rand_v3(&r, 1));
        fr_pose pa = {rand_v3(&r, 2), rand_q(&r)}, pb = {fr_v3_mad(pa.p, d, dir), rand_q(&r)};
        int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        double lo = lens(i1, i2, d), hi = lens(o1, o2, d), ex = lens(r1, r2, d);
        if (rc == 1) {
            n++;
            check_poly(&e.o, &A->poly, pa, &B->poly, pb, r1 + r2);
            ck_assert_msg(e.o.volume >= lo * (1 - 1e-12) && e.o.volume <= hi * (1 + 1e-12),
                          "lens %g outside [%g, %g]", e.o.volume, lo, hi);
            worst = fmax(worst, fabs(e.o.volume - ex) / ex);
        } else
            ck_assert(lo == 0);
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(n, 250);
    /* sphere into a half-space (a large box with its top at z = 0) */
    fr_shape *G = box(40, 40, 40);
    fr_pose pg = {fr_v3(0, 0, -40), fr_q_identity()};
    for (int it = 0; it < 300; it++) {
        int f = 1 + (int)(frtest_next(&r) % 5);
        double rad = frtest_uniform(&r, 0.2, 2);
        fr_shape *A;
        ck_assert_int_eq(fr_shape_create_sphere(rad, f, &A), 0);
        double in, out;
        fr_polytope_radii(&A->poly, &in, &out);
        double zc = frtest_uniform(&r, -0.9, 0.9) * rad;
        fr_pose pa = {fr_v3(frtest_uniform(&r, -3, 3), frtest_uniform(&r, -3, 3), zc), rand_q(&r)};
        int rc = fr_polytope_intersect(&A->poly, pa, &G->poly, pg, &e.w, &e.o);
        double lo = cap(in, zc), hi = cap(out, zc);
        if (rc == 1) {
            check_poly(&e.o, &A->poly, pa, &G->poly, pg, 80);
            ck_assert_msg(e.o.volume >= lo * (1 - 1e-12) && e.o.volume <= hi * (1 + 1e-12),
                          "cap %g outside [%g, %g]", e.o.volume, lo, hi);
        } else
            ck_assert(lo == 0);
        fr_shape_destroy(A);
    }
    fr_shape_destroy(G);
    env_free(&e);
}
END_TEST

/* ---------------------------------------------------------------- GJK */

START_TEST(test_gjk_polytopes_vs_minkowski_hull)
{
    frtest_rng r = {31};
    env e;
    env_init(&e, 64);
    int apart = 0, over = 0;
    for (int it = 0; it < 2000; it++) {
        fr_shape *A = it % 4 == 0 ? box(frtest_uniform(&r, 0.1, 1), frtest_uniform(&r, 0.1, 1),
                                        frtest_uniform(&r, 0.1, 1))
                                  : rand_convex(&r, 5 + (int)(frtest_next(&r) % 15),
                                                frtest_uniform(&r, 0.3, 1));
        fr_shape *B = rand_convex(&r, 5 + (int)(frtest_next(&r) % 15), frtest_uniform(&r, 0.3, 1));
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, it % 2 ? 1.5 : 0.6)), rand_q(&r)};
        double L = A->bound_radius + B->bound_radius;
        fr_vec3 va[64], vb[64];
        int na = world_verts(&A->poly, pa, va), nb = world_verts(&B->poly, pb, vb);
        double ref = ref_distance(va, na, vb, nb);
        fr_gjk_result g;
        fr_gjk_distance(A, pa, B, pb, NULL, &g);
        fr_vec3 pn[128];
        double pd[128];
        int ka = world_planes(&A->poly, pa, pn, pd);
        ck_assert_double_le(max_viol(g.pa, pn, pd, ka), 1e-9 * L);
        int kb = world_planes(&B->poly, pb, pn, pd);
        ck_assert_double_le(max_viol(g.pb, pn, pd, kb), 1e-9 * L);
        int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        if (ref > 1e-9 * L) {
            apart++;
            ck_assert(!g.overlap);
            ck_assert_double_le(fabs(g.distance - ref), 1e-9 * L);
            ck_assert_double_le(fabs(fr_v3_dist(g.pa, g.pb) - g.distance), 1e-12 * L);
            /* warm start from the result converges to the same answer */
            fr_gjk_result g2;
            fr_gjk_distance(A, pa, B, pb, &g.dir, &g2);
            ck_assert_double_le(fabs(g2.distance - ref), 1e-9 * L);
            ck_assert_int_eq(rc, 0);
        } else if (ref < -1e-8 * L) {
            /* penetrating by more than the touching threshold: all three verdicts agree */
            ck_assert(g.overlap);
            ck_assert(g.distance == 0);
            ck_assert_int_eq(rc, 1);
            over++;
            check_poly(&e.o, &A->poly, pa, &B->poly, pb,
                       L); /* includes: interior strictly inside */
        }
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(apart, 700);
    ck_assert_int_gt(over, 500);
    env_free(&e);
}
END_TEST

static double point_segment(fr_vec3 p, fr_vec3 a, fr_vec3 b)
{
    fr_vec3 u = fr_v3_sub(b, a);
    double t = fmax(0, fmin(1, fr_v3_dot(fr_v3_sub(p, a), u) / fr_v3_dot(u, u)));
    return fr_v3_dist(p, fr_v3_mad(a, t, u));
}
/* segment–segment distance: f(s) = dist(a + s(b − a), [c, d]) is convex, so ternary search */
static double segment_segment(fr_vec3 a, fr_vec3 b, fr_vec3 c, fr_vec3 d)
{
    double lo = 0, hi = 1;
    for (int i = 0; i < 200; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        double f1 = point_segment(fr_v3_lerp(a, b, m1), c, d),
               f2 = point_segment(fr_v3_lerp(a, b, m2), c, d);
        if (f1 < f2)
            hi = m2;
        else
            lo = m1;
    }
    return point_segment(fr_v3_lerp(a, b, 0.5 * (lo + hi)), c, d);
}
static double point_cylinder(fr_vec3 p, double R, double h)
{
    double rho = hypot(p.x, p.y), dr = fmax(rho - R, 0), dz = fmax(fabs(p.z) - h, 0);
    return hypot(dr, dz);
}
static double point_box(fr_vec3 p, fr_vec3 h)
{
    fr_vec3 q = fr_v3_max(fr_v3_sub(fr_v3_abs(p), h), fr_v3_zero());
    return fr_v3_norm(q);
}

START_TEST(test_gjk_curved_exact)
{
    frtest_rng r = {32};
    int n = 0;
    for (int it = 0; it < 2000; it++) {
        int kind = it % 4;
        double r1 = frtest_uniform(&r, 0.1, 1), r2 = frtest_uniform(&r, 0.1, 1),
               h1 = frtest_uniform(&r, 0, 1);
        fr_shape *A = NULL, *B = NULL;
        fr_pose pa = {rand_v3(&r, 2), rand_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, 3)), rand_q(&r)};
        double ref;
        fr_vec3 ca = fr_pose_apply(pa, fr_v3(0, 0, -h1)), cb = fr_pose_apply(pa, fr_v3(0, 0, h1));
        if (kind == 0) { /* sphere–sphere */
            ck_assert_int_eq(fr_shape_create_sphere(r1, 1, &A), 0);
            ck_assert_int_eq(fr_shape_create_sphere(r2, 1, &B), 0);
            ref = fr_v3_dist(pa.p, pb.p) - r1 - r2;
        } else if (kind == 1) { /* capsule–sphere */
            ck_assert_int_eq(fr_shape_create_capsule(r1, h1, 4, &A), 0);
            ck_assert_int_eq(fr_shape_create_sphere(r2, 1, &B), 0);
            ref = point_segment(pb.p, ca, cb) - r1 - r2;
        } else if (kind == 2) { /* capsule–capsule */
            double h2 = frtest_uniform(&r, 0, 1);
            ck_assert_int_eq(fr_shape_create_capsule(r1, h1, 4, &A), 0);
            ck_assert_int_eq(fr_shape_create_capsule(r2, h2, 4, &B), 0);
            ref = segment_segment(ca, cb, fr_pose_apply(pb, fr_v3(0, 0, -h2)),
                                  fr_pose_apply(pb, fr_v3(0, 0, h2))) -
                  r1 - r2;
        } else { /* cylinder–sphere and box–sphere */
            ck_assert_int_eq(fr_shape_create_sphere(r2, 1, &B), 0);
            if (it % 8 == 3) {
                ck_assert_int_eq(fr_shape_create_cylinder(r1, h1 + 0.05, 3, &A), 0);
                ref = point_cylinder(fr_pose_apply_inv(pa, pb.p), r1, h1 + 0.05) - r2;
            } else {
                fr_vec3 hh = fr_v3(r1, h1 + 0.05, frtest_uniform(&r, 0.1, 1));
                A = box(hh.x, hh.y, hh.z);
                ref = point_box(fr_pose_apply_inv(pa, pb.p), hh) - r2;
            }
        }
        double L = A->bound_radius + B->bound_radius;
        fr_gjk_result g;
        fr_gjk_distance(A, pa, B, pb, NULL, &g);
        if (ref > 1e-6 * L) {
            n++;
            ck_assert_msg(!g.overlap, "kind %d: overlap reported at distance %g", kind, ref);
            ck_assert_msg(fabs(g.distance - ref) <= 1e-8 * L, "kind %d: %.12g vs %.12g", kind,
                          g.distance, ref);
        } else if (ref < -1e-6 * L)
            ck_assert(g.overlap);
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(n, 800);
}
END_TEST

/* ---------------------------------------------------------------- broad phase */

static int pair_cmp(const void *x, const void *y)
{
    const fr_sap_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

START_TEST(test_sap_vs_brute_force)
{
    frtest_rng r = {41};
    enum { CAP = 400, MAXP = 20000 };
    fr_sap *sap;
    ck_assert_int_eq(fr_sap_create(&sap, CAP, 64, NULL), 0);
    static fr_aabb box_of[CAP];
    static uint32_t grp[CAP], msk[CAP];
    static bool st[CAP], alive[CAP];
    static fr_sap_pair got[MAXP], want[MAXP];
    static fr_vec3 vel[CAP];
    static uint64_t ign[64];
    int nign = 0;
    for (int i = 0; i < 300; i++) {
        fr_vec3 c = fr_v3(frtest_uniform(&r, -10, 10), frtest_uniform(&r, -3, 3),
                          frtest_uniform(&r, -3, 3));
        fr_vec3 h = fr_v3(frtest_uniform(&r, 0.1, 0.6), frtest_uniform(&r, 0.1, 0.6),
                          frtest_uniform(&r, 0.1, 0.6));
        fr_aabb b = {fr_v3_sub(c, h), fr_v3_add(c, h)};
        uint32_t g = 1u << (frtest_next(&r) % 3), m = frtest_next(&r) % 8 ? 0xffffffffu : ~g;
        bool s = frtest_next(&r) % 5 == 0;
        int id = fr_sap_insert(sap, b, g, m, s);
        ck_assert_int_ge(id, 0);
        box_of[id] = b;
        grp[id] = g;
        msk[id] = m;
        st[id] = s;
        alive[id] = true;
        vel[id] = rand_v3(&r, 0.05);
    }
    long total_swaps = 0;
    for (int frame = 0; frame < 600; frame++) {
        /* jitter (statics stay), occasionally exact ties, add/remove, ignore pairs, new axis */
        for (int i = 0; i < CAP; i++) {
            if (!alive[i] || st[i]) continue;
            fr_vec3 d = fr_v3_add(vel[i], rand_v3(&r, 0.02));
            if (frtest_next(&r) % 50 == 0) { /* snap a face onto another box's face */
                int j = (int)(frtest_next(&r) % CAP);
                if (alive[j]) d.x = box_of[j].hi.x - box_of[i].lo.x;
            }
            box_of[i].lo = fr_v3_add(box_of[i].lo, d);
            box_of[i].hi = fr_v3_add(box_of[i].hi, d);
            REQ(fr_sap_move(sap, i, box_of[i]) == 0, "move");
        }
        if (frame % 10 == 5) {
            int i = (int)(frtest_next(&r) % CAP);
            if (alive[i]) {
                ck_assert_int_eq(fr_sap_remove(sap, i), 0);
                alive[i] = false;
                for (int k = 0; k < nign; k++)
                    if ((int)(ign[k] >> 32) == i || (int)(ign[k] & 0xffffffff) == i)
                        ign[k--] = ign[--nign];
            } else {
                fr_vec3 c = fr_v3(frtest_uniform(&r, -10, 10), 0, 0), h = fr_v3(0.3, 0.3, 0.3);
                fr_aabb b = {fr_v3_sub(c, h), fr_v3_add(c, h)};
                int id = fr_sap_insert(sap, b, 1, 0xffffffffu, false);
                ck_assert_int_ge(id, 0);
                box_of[id] = b;
                grp[id] = 1;
                msk[id] = 0xffffffffu;
                st[id] = false;
                alive[id] = true;
                vel[id] = rand_v3(&r, 0.05);
            }
        }
        if (frame % 7 == 3 && nign < 60) {
            int a = (int)(frtest_next(&r) % CAP), b = (int)(frtest_next(&r) % CAP);
            if (alive[a] && alive[b] && a != b) {
                ck_assert_int_eq(fr_sap_ignore_pair(sap, a, b), 0);
                uint64_t key = (uint64_t)(a < b ? a : b) << 32 | (uint64_t)(a < b ? b : a);
                bool have = false;
                for (int k = 0; k < nign; k++) have |= ign[k] == key;
                if (!have) ign[nign++] = key;
            }
        }
        if (frame % 150 == 149)
            ck_assert_int_eq(fr_sap_set_axis(sap, (fr_sap_axis(sap) + 1) % 3), 0);
        if (frame == 300) {
            /* the axis of largest variance of the box centres, by brute force */
            double m[3] = {0}, m2[3] = {0};
            int cnt = 0;
            for (int i = 0; i < CAP; i++) {
                if (!alive[i]) continue;
                cnt++;
                for (int k = 0; k < 3; k++) {
                    double c = 0.5 * (fr_v3_get(box_of[i].lo, k) + fr_v3_get(box_of[i].hi, k));
                    m[k] += c;
                    m2[k] += c * c;
                }
            }
            int best = 0;
            for (int k = 1; k < 3; k++)
                if (m2[k] / cnt - m[k] * m[k] / cnt / cnt >
                    m2[best] / cnt - m[best] * m[best] / cnt / cnt)
                    best = k;
            ck_assert_int_eq(fr_sap_choose_axis(sap), best);
            ck_assert_int_eq(fr_sap_set_axis(sap, best), 0);
        }
        int ng;
        REQ(fr_sap_update(sap, got, MAXP, &ng) == 0, "update");
        total_swaps += fr_sap_last_swaps(sap);
        int nw = 0;
        for (int i = 0; i < CAP; i++)
            for (int j = i + 1; j < CAP; j++) {
                if (!alive[i] || !alive[j] || (st[i] && st[j])) continue;
                if (!(grp[i] & msk[j]) || !(grp[j] & msk[i])) continue;
                if (!fr_aabb_overlap(box_of[i], box_of[j])) continue;
                uint64_t key = (uint64_t)i << 32 | (uint64_t)j;
                bool ig = false;
                for (int k = 0; k < nign; k++) ig |= ign[k] == key;
                if (ig) continue;
                want[nw++] = (fr_sap_pair){i, j};
            }
        REQ(ng == nw, "frame %d: %d pairs, brute force %d", frame, ng, nw);
        qsort(got, (size_t)ng, sizeof *got, pair_cmp);
        for (int k = 0; k < ng; k++)
            REQ(got[k].a == want[k].a && got[k].b == want[k].b, "frame %d: pair %d differs", frame,
                k);
        /* a too-small buffer is reported, with the full count */
        if (ng > 2 && frame % 100 == 0) {
            int ng2;
            ck_assert_int_eq(fr_sap_update(sap, got, 2, &ng2), FR_ERR_FULL);
            ck_assert_int_eq(ng2, ng);
        }
    }
    ck_assert_int_gt(total_swaps, 1000); /* the insertion sort did work */
    fr_sap_destroy(sap);
}
END_TEST

/* ---------------------------------------------------------------- degenerate contacts */

START_TEST(test_stacked_equal_boxes_coplanar)
{
    env e;
    env_init(&e, 6);
    fr_shape *A = box(0.5, 0.5, 1), *B = box(0.5, 0.5, 1);
    fr_pose pb = {fr_v3(0.3, -0.2, 1), fr_q_identity()};
    double prev = INFINITY;
    /* depth from 0.1 down past the touching threshold: volume = area × depth, monotone */
    for (double dep = 0.1; dep > 1e-13; dep *= 0.31) {
        fr_pose pa = {fr_v3(0.3, -0.2, 3 - dep), fr_q_identity()};
        int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        ck_assert_int_ge(rc, 0);
        if (dep > 1e-8) {
            ck_assert_int_eq(rc, 1);
            ck_assert_rel(e.o.volume, 1.0 * dep, 1e-6, 0);
            ck_assert_int_eq(e.o.nfaces, 6);
            ck_assert_int_eq(e.o.nverts, 8);
            check_poly(&e.o, &A->poly, pa, &B->poly, pb, 4);
            /* shared side faces carry one tag, so they cancel in Σ A − Σ B */
            fr_vec3 nsum = fr_v3_zero();
            for (int f = 0; f < e.o.nfaces; f++) {
                double ar = (fabs(e.o.face_normal[f].z) > 0.5) ? 1.0 : dep;
                nsum =
                    fr_v3_mad(nsum, e.o.face_owner[f] == FR_FACE_A ? ar : -ar, e.o.face_normal[f]);
            }
            ck_assert_double_le(fabs(nsum.x) + fabs(nsum.y), 1e-12);
            ck_assert_double_le(fabs(nsum.z + 2), 1e-9); /* A (above) pushes down: −2 ẑ */
        }
        if (rc == 0) check_empty(&e.o);
        ck_assert(e.o.volume <= prev);
        prev = e.o.volume;
    }
    /* touching exactly, and apart */
    fr_pose pa = {fr_v3(0.3, -0.2, 3), fr_q_identity()};
    ck_assert_int_eq(fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o), 0);
    check_empty(&e.o);
    /* identical boxes at the same pose: every plane shared */
    ck_assert_int_eq(fr_polytope_intersect(&A->poly, pb, &B->poly, pb, &e.w, &e.o), 1);
    ck_assert_rel(e.o.volume, 2.0, 1e-14, 0);
    ck_assert_int_eq(e.o.nfaces, 6);
    check_poly(&e.o, &A->poly, pb, &B->poly, pb, 4);
    /* the same with B rotated by 180° about z (same box, same planes, different vertex order) */
    fr_pose pr = {pb.p, fr_q_axis_angle(fr_v3(0, 0, 1), PI)};
    ck_assert_int_eq(fr_polytope_intersect(&A->poly, pb, &B->poly, pr, &e.w, &e.o), 1);
    ck_assert_rel(e.o.volume, 2.0, 1e-12, 0);
    check_poly(&e.o, &A->poly, pb, &B->poly, pr, 4);
    fr_shape_destroy(A);
    fr_shape_destroy(B);
    env_free(&e);
}
END_TEST

START_TEST(test_edge_edge_vertex_face_sliver)
{
    env e;
    env_init(&e, 6);
    fr_shape *A = box(1, 1, 1), *B = box(1, 1, 1);
    const double s2 = sqrt(2.0);
    for (double dep = 0.3; dep > 1e-7; dep *= 0.2) {
        /* edge–edge: A's top edge along x, B's bottom edge along y, crossing: V = 2δ³/3 */
        fr_pose pa = {fr_v3(0, 0, 0), fr_q_axis_angle(fr_v3(1, 0, 0), PI / 4)};
        fr_pose pb = {fr_v3(0, 0, 2 * s2 - dep), fr_q_axis_angle(fr_v3(0, 1, 0), PI / 4)};
        ck_assert_int_eq(fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o), 1);
        ck_assert_rel(e.o.volume, 2 * dep * dep * dep / 3, 1e-7, 0);
        check_poly(&e.o, &A->poly, pa, &B->poly, pb, 4);
        /* vertex–face: A's body diagonal vertical, its lowest corner δ into B's top face:
         * a corner tetrahedron, V = √3 δ³ / 2 */
        fr_quat q = fr_q_axis_angle(fr_v3_normalize(fr_v3(1, -1, 0)), acos(1 / sqrt(3.0)));
        fr_vec3 low = fr_q_rotate(q, fr_v3(-1, -1, -1)); /* the corner that points down */
        fr_pose pv = {fr_v3(0.1, 0.2, 1 - dep - low.z), q};
        fr_pose pg = {fr_v3(0, 0, 0), fr_q_identity()};
        fr_shape *G = box(3, 3, 1);
        ck_assert_int_eq(fr_polytope_intersect(&A->poly, pv, &G->poly, pg, &e.w, &e.o), 1);
        ck_assert_rel(e.o.volume, sqrt(3.0) * dep * dep * dep / 2, 1e-6, 0);
        check_poly(&e.o, &A->poly, pv, &G->poly, pg, 8);
        fr_shape_destroy(G);
    }
    /* sliver: a box tilted by a tiny angle resting δ deep on a wider one (side faces x = ±1
     * shared): a thin wedge or trapezoid prism */
    fr_shape_destroy(A);
    A = box(1, 2, 1);
    for (double th = 1e-3; th > 1e-13; th *= 0.1) {
        /* touching threshold here: 1e-9 × 0.0087 + 1e-11 × 1414 m ≈ 14 nm (it was 1.4 µm when the
         * tolerance followed the sum of sizes) */
        for (double dep = 1e-3; dep > 5e-8; dep *= 0.1) {
            fr_pose pa = {fr_v3(0, 0, 0), fr_q_identity()};
            /* B tilted about x; its lowest edge is δ below A's top (z = 1) */
            double low = sin(th) + cos(th);
            fr_pose pb = {fr_v3(0, 0, 1 - dep + low), fr_q_axis_angle(fr_v3(1, 0, 0), th)};
            int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
            double cy, cz, area = clip_rect(1, 1, th, -dep + low, &cy, &cz);
            double v = 2 * area;
            if (v > 1e-8 * 4 * 4) {
                ck_assert_int_eq(rc, 1);
                ck_assert_rel(e.o.volume, v, 1e-5, 0);
                check_poly(&e.o, &A->poly, pa, &B->poly, pb, 4);
            } else {
                ck_assert_int_ge(rc, 0);
                if (rc == 0)
                    check_empty(&e.o);
                else
                    check_poly(&e.o, &A->poly, pa, &B->poly, pb, 4);
            }
        }
    }
    fr_shape_destroy(A);
    fr_shape_destroy(B);
    env_free(&e);
}
END_TEST

/* a small box on a huge one: tolerances follow the small box, not the sum of sizes */
START_TEST(test_scale_disparity)
{
    env e;
    env_init(&e, 6);
    fr_shape *G = box(1000, 1000, 10), *A = box(0.005, 0.005, 0.005);
    fr_pose pg = {fr_v3(0, 0, -10), fr_q_identity()};
    /* touching threshold here: 1e-9 × 0.0087 + 1e-11 × 1414 m ≈ 14 nm (it was 1.4 µm when the
     * tolerance followed the sum of sizes) */
    for (double dep = 1e-3; dep > 5e-8; dep *= 0.1) {
        fr_pose pa = {fr_v3(123.4, -56.7, 0.005 - dep), fr_q_axis_angle(fr_v3(0, 0, 1), 0.3)};
        ck_assert_int_eq(fr_polytope_intersect(&A->poly, pa, &G->poly, pg, &e.w, &e.o), 1);
        ck_assert_rel(e.o.volume, 1e-4 * dep, 1e-5, 0);
        ck_assert_double_le(fabs(e.o.centroid.z + 0.5 * dep), 1e-3 * dep + 1e-12);
        check_poly(&e.o, &A->poly, pa, &G->poly, pg, 0.02);
    }
    fr_pose pt = {fr_v3(123.4, -56.7, 0.005 - 1e-9), fr_q_identity()};
    ck_assert_int_eq(fr_polytope_intersect(&A->poly, pt, &G->poly, pg, &e.w, &e.o), 0);
    check_empty(&e.o);
    fr_shape_destroy(G);
    fr_shape_destroy(A);
    env_free(&e);
}
END_TEST

/* near-coincident features: cube rotations plus rotations of 1e-14..1e-6 rad and positions
 * snapped so that faces coincide; the result must stay closed, inside both, and match the
 * axis-aligned formula to first order in the perturbation */
START_TEST(test_near_degenerate_stress)
{
    frtest_rng r = {51};
    env e;
    env_init(&e, 6);
    long fix0 = e.w.fixups;
    int hits = 0;
    for (int it = 0; it < 20000; it++) {
        double hx = 0.25 * (1 + (int)(frtest_next(&r) % 4)),
               hy = 0.25 * (1 + (int)(frtest_next(&r) % 4)),
               hz = 0.25 * (1 + (int)(frtest_next(&r) % 4));
        fr_shape *A = box(hx, hy, hz), *B = box(0.25 * (1 + (int)(frtest_next(&r) % 4)),
                                                0.25 * (1 + (int)(frtest_next(&r) % 4)),
                                                0.25 * (1 + (int)(frtest_next(&r) % 4)));
        double tilt = pow(10, -frtest_uniform(&r, 6, 14));
        fr_quat qa = cube_q(&r),
                qb = fr_q_mul(fr_q_axis_angle(fr_v3_normalize(rand_v3(&r, 1)), tilt), cube_q(&r));
        /* positions on a 1/8 grid: faces coincide often */
        fr_vec3 pp =
            fr_v3(0.125 * (int)(frtest_next(&r) % 17) - 1, 0.125 * (int)(frtest_next(&r) % 17) - 1,
                  0.125 * (int)(frtest_next(&r) % 17) - 1);
        fr_pose pa = {fr_v3_zero(), qa}, pb = {pp, qb};
        int rc = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        ck_assert_int_ge(rc, 0);
        fr_vec3 wa = fr_v3_abs(fr_q_rotate(qa, A->half)),
                wb = fr_v3_abs(fr_q_rotate(fr_q_normalize(qb), B->half));
        double v = box_overlap(pa.p, wa, pb.p, wb, NULL);
        if (rc == 1) {
            hits++;
            check_poly(&e.o, &A->poly, pa, &B->poly, pb, 4);
            ck_assert_double_le(fabs(e.o.volume - v), 1e-5);
        } else
            ck_assert_double_le(v, 1e-5);
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(hits, 5000);
    /* the repairing path is never needed here (it exists for rounding in cases we have not
     * met): test_repair_path_equivalent exercises it */
    ck_assert_int_eq(e.w.fixups - fix0, 0);
    env_free(&e);
}
END_TEST

/* A plane inserted from its invisible side (the survivors compacted, the visible triangles
 * dropped unvisited) gives the same intersection as the usual walk over the visible side: forced
 * for every plane it can take (side 2: also on hulls already cut, many times over), and by the
 * rule (side 0) on shapes resting a little way into a large box, where the rule takes it. */
START_TEST(test_invisible_side_equivalent)
{
    frtest_rng r = {57};
    env e;
    env_init(&e, 512);
    fr_shape *ground = box(5, 5, 0.5);
    int hits = 0;
    long inv0 = e.w.inverted;
    long by_rule = 0;
    for (int it = 0; it < 600; it++) {
        const bool rest = it % 2;
        fr_shape *A = rand_shape(&r, it % 5), *B = rest ? ground : rand_shape(&r, (it / 5) % 5);
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)}, pb;
        if (rest) { /* A's lowest point 0–30 % of its size into the ground's top face */
            double zmin = INFINITY;
            for (int v = 0; v < A->poly.nverts; v++)
                zmin = fmin(zmin, pa.p.z + fr_q_rotate(pa.q, A->poly.verts[v]).z);
            double dip = frtest_uniform(&r, 0.0, 0.3) * A->bound_radius;
            pb = (fr_pose){fr_v3(pa.p.x, pa.p.y, zmin + dip - 0.5), fr_q_identity()};
        } else
            pb = (fr_pose){fr_v3_add(pa.p, rand_v3(&r, 0.6)), rand_q(&r)};
        e.w.side = 1;
        int r1 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        for (int side = 0; side <= 2; side += 2) {
            long before = e.w.inverted;
            e.w.side = side;
            int r2 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o2);
            if (side == 0) by_rule += e.w.inverted - before;
            ck_assert_int_eq(r1, r2);
            if (r1 != 1) continue;
            hits++;
            ck_assert_rel(e.o.volume, e.o2.volume, 1e-12, 0);
            ck_assert_int_eq(e.o.nfaces, e.o2.nfaces);
            ck_assert_int_eq(e.o.nverts, e.o2.nverts);
            ck_assert_double_le(fr_v3_norm(fr_v3_sub(e.o.centroid, e.o2.centroid)),
                                1e-12 * (A->bound_radius + B->bound_radius));
            check_poly(&e.o2, &A->poly, pa, &B->poly, pb, A->bound_radius + B->bound_radius);
        }
        e.w.side = 0;
        fr_shape_destroy(A);
        if (!rest) fr_shape_destroy(B);
    }
    fr_shape_destroy(ground);
    ck_assert_int_gt(hits, 1000);
    ck_assert_int_gt(e.w.inverted - inv0, 3000); /* the forced side ran on cut hulls too */
    ck_assert_int_gt(by_rule, 150);              /* and the rule takes it for resting shapes */
    env_free(&e);
}
END_TEST

/* the slow, repairing horizon path gives the same intersections as the fast one, also when it
 * has to fill a hole in the visible patch (faked: an invisible triangle amid visible ones) */
START_TEST(test_repair_path_equivalent)
{
    frtest_rng r = {52};
    env e;
    env_init(&e, 512);
    int hits = 0;
    for (int it = 0; it < 400; it++) {
        fr_shape *A = rand_shape(&r, it % 5), *B = rand_shape(&r, (it / 5) % 5);
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, 0.6)), rand_q(&r)};
        e.w.force_repair = 0;
        int r1 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        e.w.force_repair = 1 + it % 2;
        int r2 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o2);
        e.w.force_repair = 0;
        ck_assert_int_eq(r1, r2);
        if (r1 == 1) {
            hits++;
            ck_assert_rel(e.o.volume, e.o2.volume, 1e-12, 0);
            ck_assert_int_eq(e.o.nfaces, e.o2.nfaces);
            ck_assert_int_eq(e.o.nverts, e.o2.nverts);
            check_poly(&e.o2, &A->poly, pa, &B->poly, pb, A->bound_radius + B->bound_radius);
        }
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    ck_assert_int_gt(hits, 200);
    ck_assert_int_gt(e.w.fixups, 1000); /* the slow path did run */
    ck_assert_int_gt(e.w.holes, 100);   /* and filled holes */
    env_free(&e);
}
END_TEST

/* support functions: hill climbing on big hulls and the closed forms agree with brute force */
START_TEST(test_support_brute_force)
{
    frtest_rng r = {62};
    for (int it = 0; it < 20; it++) {
        fr_vec3 pts[200]; /* on an ellipsoid: all are hull vertices, so support climbs */
        fr_vec3 ax = fr_v3(frtest_uniform(&r, 0.3, 1), frtest_uniform(&r, 0.3, 1), 1);
        for (int i = 0; i < 200; i++) pts[i] = fr_v3_mul(fr_v3_normalize(rand_v3(&r, 1)), ax);
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_convex(pts, 200, &s), 0);
        ck_assert_int_gt(s->poly.nverts, 32);
        for (int k = 0; k < 500; k++) {
            fr_vec3 d = rand_v3(&r, 1);
            double best = -INFINITY;
            for (int i = 0; i < s->poly.nverts; i++)
                best = fmax(best, fr_v3_dot(s->poly.verts[i], d));
            REQ(fr_v3_dot(fr_shape_support(s, d), d) == best, "support %g vs %g",
                fr_v3_dot(fr_shape_support(s, d), d), best);
        }
        fr_shape_destroy(s);
    }
    /* curved shapes: the support value is the max over a dense sampling of the surface */
    for (int t = FR_SHAPE_SPHERE; t <= FR_SHAPE_CYLINDER; t++) {
        fr_shape *s = rand_shape(&r, t);
        for (int k = 0; k < 50; k++) {
            fr_vec3 d = fr_v3_normalize(rand_v3(&r, 1));
            double sv = fr_v3_dot(fr_shape_support(s, d), d), best = -INFINITY;
            for (int a = 0; a < 400; a++)
                for (int b = 0; b <= 200; b++) {
                    double th = 2 * PI * a / 400, ph = PI * b / 200 - PI / 2, R = s->radius;
                    fr_vec3 p;
                    if (t == FR_SHAPE_CYLINDER) /* rim circles */
                        p = fr_v3(R * cos(th), R * sin(th),
                                  b % 2 ? s->half_length : -s->half_length);
                    else {
                        p = fr_v3(R * cos(ph) * cos(th), R * cos(ph) * sin(th), R * sin(ph));
                        if (t == FR_SHAPE_CAPSULE)
                            p.z += p.z > 0 ? s->half_length : -s->half_length;
                    }
                    best = fmax(best, fr_v3_dot(p, d));
                }
            REQ(sv >= best - 1e-12 && sv <= best + 1e-3 * s->bound_radius, "type %d: %g vs %g", t,
                sv, best);
        }
        fr_shape_destroy(s);
    }
}
END_TEST

/* fr_shape_widths: a box's shortest and longest side (exact), a regular tetrahedron's height
 * every way, and a hull's widths along its face normals from its support function both ways. */
START_TEST(test_shape_widths)
{
    frtest_rng r = {63};
    for (int it = 0; it < 20; it++) {
        fr_vec3 h = fr_v3(frtest_uniform(&r, 0.005, 1), frtest_uniform(&r, 0.005, 1),
                          frtest_uniform(&r, 0.005, 1));
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_box(h, &s), FR_OK);
        double lo, hi;
        fr_shape_widths(s, &lo, &hi);
        /* (to rounding: the face normals come from cross products) */
        REQ(fabs(lo - 2 * fmin(h.x, fmin(h.y, h.z))) <= 1e-15 * hi &&
                fabs(hi - 2 * fmax(h.x, fmax(h.y, h.z))) <= 1e-15 * hi,
            "box %g %g %g: %g %g", h.x, h.y, h.z, lo, hi);
        fr_shape_destroy(s);
    }
    const double a = 0.3; /* edge */
    fr_vec3 tet[4] = {fr_v3(1, 1, 1), fr_v3(1, -1, -1), fr_v3(-1, 1, -1), fr_v3(-1, -1, 1)};
    for (int i = 0; i < 4; i++) tet[i] = fr_v3_scale(tet[i], a / (2 * sqrt(2.0)));
    fr_shape *t;
    ck_assert_int_eq(fr_shape_create_convex(tet, 4, &t), FR_OK);
    double lo, hi;
    fr_shape_widths(t, &lo, &hi);
    REQ(fabs(lo - a * sqrt(2.0 / 3.0)) < 1e-15 && fabs(hi - lo) < 1e-15, "tetrahedron %g %g", lo,
        hi);
    fr_shape_destroy(t);
    for (int it = 0; it < 20; it++) {
        fr_vec3 pts[12];
        for (int i = 0; i < 12; i++) pts[i] = rand_v3(&r, frtest_uniform(&r, 0.01, 1));
        fr_shape *s;
        if (fr_shape_create_convex(pts, 12, &s) != FR_OK) continue;
        double wlo = INFINITY, whi = 0;
        for (int f = 0; f < s->poly.nfaces; f++) {
            fr_vec3 n = s->poly.normal[f];
            double w = fr_v3_dot(fr_shape_support(s, n), n) +
                       fr_v3_dot(fr_shape_support(s, fr_v3_neg(n)), fr_v3_neg(n));
            wlo = fmin(wlo, w), whi = fmax(whi, w);
        }
        fr_shape_widths(s, &lo, &hi);
        REQ(fabs(lo - wlo) <= 1e-15 * whi && fabs(hi - whi) <= 1e-15 * whi, "hull: %g %g vs %g %g",
            lo, hi, wlo, whi);
        fr_shape_destroy(s);
    }
    /* many vertices (the extremes found by climbing the vertex graph): the same as a scan over
     * every vertex, to the bit; widths and the stance's height */
    int many = 0;
    for (int it = 0; it < 30; it++) {
        fr_shape *s;
        if (it % 3 == 0) {
            ck_assert_int_eq(fr_shape_create_sphere(frtest_uniform(&r, 0.002, 1), 3 + it % 5, &s),
                             FR_OK);
        } else {
            fr_vec3 pts[300];
            int np = 40 + (int)(frtest_next(&r) % 260);
            const double rad = frtest_uniform(&r, 0.01, 1); /* near a sphere: most on the hull */
            for (int i = 0; i < np; i++)
                pts[i] =
                    fr_v3_scale(fr_v3_normalize(rand_v3(&r, 1)), rad * frtest_uniform(&r, 0.9, 1));
            if (fr_shape_create_convex(pts, np, &s) != FR_OK) continue;
        }
        const fr_polytope *p = &s->poly;
        if (p->nverts <= 32) { /* (a scan then) */
            fr_shape_destroy(s);
            continue;
        }
        many++;
        double wlo = INFINITY, whi = 0;
        for (int f = 0; f < p->nfaces; f++) {
            double up = -INFINITY, dn = INFINITY;
            for (int v = 0; v < p->nverts; v++) {
                double x = fr_v3_dot(p->normal[f], p->verts[v]);
                up = fmax(up, x), dn = fmin(dn, x);
            }
            wlo = fmin(wlo, up - dn), whi = fmax(whi, up - dn);
        }
        fr_shape_widths(s, &lo, &hi);
        /* (a rounding tie between neighbours may stop the climb an ulp short) */
        const double tol = 1e-15 * s->bound_radius;
        REQ(fabs(lo - wlo) <= tol && fabs(hi - whi) <= tol,
            "widths %.17g %.17g vs scan %.17g %.17g", lo, hi, wlo, whi);
        const fr_vec3 n = fr_v3_normalize(rand_v3(&r, 1));
        double up = -INFINITY, dn = INFINITY, w, h;
        for (int v = 0; v < p->nverts; v++) {
            double x = fr_v3_dot(n, p->verts[v]);
            up = fmax(up, x), dn = fmin(dn, x);
        }
        ck_assert_int_eq(fr_shape_stance(s, n, &w, &h), FR_OK);
        REQ(fabs(h - (up - dn)) <= tol, "height %.17g vs scan %.17g", h, up - dn);
        fr_shape_destroy(s);
    }
    ck_assert_int_ge(many, 20);
}
END_TEST

/* The extent of a shape along the unit u, by its support function both ways. */
static double extent_by_support(const fr_shape *s, fr_vec3 u)
{
    return fr_v3_dot(fr_shape_support(s, u), u) +
           fr_v3_dot(fr_shape_support(s, fr_v3_neg(u)), fr_v3_neg(u));
}

START_TEST(test_shape_stance)
{
    frtest_rng r = {64};
    /* a box standing on each of its faces: its height along the normal, its shorter side across */
    for (int it = 0; it < 20; it++) {
        const double e[3] = {frtest_uniform(&r, 0.003, 1), frtest_uniform(&r, 0.003, 1),
                             frtest_uniform(&r, 0.003, 1)};
        fr_shape *s;
        ck_assert_int_eq(fr_shape_create_box(fr_v3(e[0], e[1], e[2]), &s), FR_OK);
        for (int ax = 0; ax < 3; ax++)
            for (int sg = -1; sg <= 1; sg += 2) {
                fr_vec3 n = fr_v3(ax == 0 ? sg : 0, ax == 1 ? sg : 0, ax == 2 ? sg : 0);
                double w, h;
                ck_assert_int_eq(fr_shape_stance(s, fr_v3_scale(n, 3.0), &w, &h), FR_OK);
                const double want_w = 2 * fmin(e[(ax + 1) % 3], e[(ax + 2) % 3]);
                REQ(fabs(h - 2 * e[ax]) <= 1e-15 && fabs(w - want_w) <= 1e-15,
                    "box %g %g %g on face %d: w %g h %g", e[0], e[1], e[2], ax, w, h);
            }
        fr_shape_destroy(s);
    }
    /* any shape, any normal: the height is the extent along n (the support function's), and the
     * width an extent across n: within [least, greatest] of 3600 directions across n, the least
     * less its sampling error (the extent changes by at most 2·R per radian, R the bounding
     * radius, and the true least lies within half a step, π/7200, of a sample) */
    for (int it = 0; it < 40; it++) {
        fr_vec3 pts[12];
        for (int i = 0; i < 12; i++) pts[i] = rand_v3(&r, frtest_uniform(&r, 0.01, 1));
        fr_shape *s;
        if (fr_shape_create_convex(pts, 12, &s) != FR_OK) continue;
        const fr_vec3 n = fr_v3_normalize(rand_v3(&r, 1));
        double w, h;
        ck_assert_int_eq(fr_shape_stance(s, n, &w, &h), FR_OK);
        REQ(fabs(h - extent_by_support(s, n)) <= 1e-15 * s->bound_radius, "hull height %g vs %g", h,
            extent_by_support(s, n));
        fr_vec3 a =
            fr_v3_normalize(fr_v3_cross(n, fabs(n.x) < 0.9 ? fr_v3(1, 0, 0) : fr_v3(0, 1, 0)));
        fr_vec3 b = fr_v3_cross(n, a);
        double least = INFINITY, greatest = 0;
        for (int k = 0; k < 3600; k++) {
            double th = M_PI * k / 3600;
            double x =
                extent_by_support(s, fr_v3_add(fr_v3_scale(a, cos(th)), fr_v3_scale(b, sin(th))));
            least = fmin(least, x), greatest = fmax(greatest, x);
        }
        REQ(w >= least - 2 * s->bound_radius * M_PI / 7200 && w <= greatest + 1e-15,
            "hull width %g outside [%g, %g] across n", w, least, greatest);
        fr_shape_destroy(s);
    }
    fr_shape *s;
    ck_assert_int_eq(fr_shape_create_box(fr_v3(1, 1, 1), &s), FR_OK);
    double w, h;
    ck_assert_int_eq(fr_shape_stance(s, fr_v3_zero(), &w, &h), FR_ERR_INVAL);
    ck_assert_int_eq(fr_shape_stance(s, fr_v3(NAN, 0, 1), &w, &h), FR_ERR_INVAL);
    fr_shape_destroy(s);
}
END_TEST

/* ---------------------------------------------------------------- AABB */

START_TEST(test_aabb_tight_and_containing)
{
    frtest_rng r = {61};
    for (int it = 0; it < 500; it++) {
        fr_shape *s = rand_shape(&r, it % 5);
        fr_pose T = {rand_v3(&r, 5), rand_q(&r)};
        fr_aabb b = fr_shape_aabb(s, T);
        double L = s->bound_radius;
        /* contains the polytope */
        fr_vec3 lo = fr_v3(INFINITY, INFINITY, INFINITY), hi = fr_v3_neg(lo);
        for (int i = 0; i < s->poly.nverts; i++) {
            fr_vec3 v = fr_pose_apply(T, s->poly.verts[i]);
            lo = fr_v3_min(lo, v);
            hi = fr_v3_max(hi, v);
        }
        ck_assert(b.lo.x <= lo.x + 1e-12 && b.lo.y <= lo.y + 1e-12 && b.lo.z <= lo.z + 1e-12);
        ck_assert(b.hi.x >= hi.x - 1e-12 && b.hi.y >= hi.y - 1e-12 && b.hi.z >= hi.z - 1e-12);
        /* and the true shape: support along ± world axes */
        for (int k = 0; k < 3; k++) {
            fr_vec3 ax = fr_v3(k == 0, k == 1, k == 2);
            double up = fr_v3_get(fr_pose_apply(T, fr_shape_support(s, fr_q_unrotate(T.q, ax))), k);
            double dn = fr_v3_get(
                fr_pose_apply(T, fr_shape_support(s, fr_q_unrotate(T.q, fr_v3_neg(ax)))), k);
            ck_assert(fr_v3_get(b.hi, k) >= up - 1e-12 && fr_v3_get(b.lo, k) <= dn + 1e-12);
            /* tight: exact for polytopes, within the approximation band for curved shapes */
            double slack = (s->type == FR_SHAPE_BOX || s->type == FR_SHAPE_CONVEX)
                               ? 1e-12
                               : (s->support_radius - s->radius) + 1e-12;
            ck_assert_double_le(fr_v3_get(b.hi, k) - up, slack * (1 + 1e-9) + 1e-12 * L);
            ck_assert_double_le(dn - fr_v3_get(b.lo, k), slack * (1 + 1e-9) + 1e-12 * L);
        }
        fr_shape_destroy(s);
    }
}
END_TEST

/* ---------------------------------------------------------------- the entry point */

START_TEST(test_collide_pair_cache_and_agreement)
{
    frtest_rng r = {71};
    env e;
    env_init(&e, 512);
    for (int it = 0; it < 300; it++) {
        fr_shape *A = rand_shape(&r, it % 5), *B = rand_shape(&r, (it / 5) % 5);
        fr_collide_cache cache;
        fr_collide_cache_reset(&cache);
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)};
        fr_vec3 start = fr_v3_add(pa.p, fr_v3_scale(fr_v3_normalize(rand_v3(&r, 1)), 3));
        fr_quat qb = rand_q(&r);
        /* B approaches A, passes through it, and leaves: the cache goes apart → overlap → apart */
        int transitions = 0, last = -1;
        for (int k = 0; k <= 60; k++) {
            fr_pose pb = {fr_v3_lerp(start, fr_v3_sub(fr_v3_scale(pa.p, 2), start), k / 60.0), qb};
            int rc = fr_collide_pair(A, pa, B, pb, &cache, &e.w, &e.o);
            int rc2 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o2);
            ck_assert_int_ge(rc, 0);
            ck_assert_int_eq(rc, rc2);
            if (rc == 1) {
                ck_assert_rel(e.o.volume, e.o2.volume, 1e-12, 0);
                ck_assert_int_eq(cache.state, 2);
            } else {
                check_empty(&e.o);
                ck_assert_int_eq(cache.state, 1);
                /* the distance kept is a lower bound on the true one */
                fr_gjk_result g;
                fr_gjk_distance(A, pa, B, pb, NULL, &g);
                ck_assert_double_le(cache.distance, g.distance + 1e-9);
            }
            transitions += last >= 0 && rc != last;
            last = rc;
        }
        ck_assert_int_eq(transitions, 2);
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    env_free(&e);
}
END_TEST

/* same inputs, same bits, whatever the work buffer did before (the world's determinism) */
START_TEST(test_deterministic_bits)
{
    frtest_rng r = {72};
    env e;
    env_init(&e, 512);
    for (int it = 0; it < 200; it++) {
        fr_shape *A = rand_shape(&r, it % 5), *B = rand_shape(&r, (it / 5) % 5);
        fr_pose pa = {rand_v3(&r, 1), rand_q(&r)},
                pb = {fr_v3_add(pa.p, rand_v3(&r, 0.6)), rand_q(&r)};
        int r1 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o);
        /* something else in between */
        fr_pose pc = {fr_v3_add(pb.p, rand_v3(&r, 0.3)), rand_q(&r)};
        fr_polytope_intersect(&B->poly, pc, &A->poly, pa, &e.w, &e.o2);
        int r2 = fr_polytope_intersect(&A->poly, pa, &B->poly, pb, &e.w, &e.o2);
        ck_assert_int_eq(r1, r2);
        ck_assert_int_eq(e.o.nverts, e.o2.nverts);
        ck_assert_int_eq(e.o.nidx, e.o2.nidx);
        ck_assert(memcmp(e.o.verts, e.o2.verts, sizeof(fr_vec3) * (size_t)e.o.nverts) == 0);
        ck_assert(memcmp(e.o.vidx, e.o2.vidx, sizeof(int) * (size_t)e.o.nidx) == 0);
        ck_assert(memcmp(&e.o.volume, &e.o2.volume, sizeof(double)) == 0);
        ck_assert(memcmp(&e.o.centroid, &e.o2.centroid, sizeof(fr_vec3)) == 0);
        fr_shape_destroy(A);
        fr_shape_destroy(B);
    }
    env_free(&e);
}
END_TEST

START_TEST(test_collide_pair_no_allocation)
{
    frtest_rng r = {81};
    fr_arena arena;
    ck_assert_int_eq(fr_arena_init(&arena, fr_collide_memory(500)), 0);
    fr_collide_work w;
    fr_polyhedron_out o;
    ck_assert_int_eq(fr_collide_work_init(&w, 500, &arena), 0);
    ck_assert_int_eq(fr_polyhedron_out_init(&o, 500, &arena), 0);
    fr_shape *sh[10];
    for (int i = 0; i < 10; i++) sh[i] = rand_shape(&r, i % 5);
    ck_assert_int_le(fr_shapes_max_faces((const fr_shape *const *)sh, 10), 500);
    fr_sap *sap;
    ck_assert_int_eq(fr_sap_create(&sap, 10, 4, NULL), 0);
    fr_pose pose[10];
    fr_collide_cache cache[10][10];
    memset(cache, 0, sizeof cache);
    for (int i = 0; i < 10; i++) {
        pose[i] = (fr_pose){rand_v3(&r, 1), rand_q(&r)};
        ck_assert_int_eq(fr_sap_insert(sap, fr_shape_aabb(sh[i], pose[i]), 1, 1, false), i);
    }
    fr_sap_pair pairs[64];
    int np, hits = 0;
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    for (int step = 0; step < 50; step++) {
        for (int i = 0; i < 10; i++) {
            pose[i].p = fr_v3_add(pose[i].p, fr_v3(0.01, 0, 0));
            fr_sap_move(sap, i, fr_shape_aabb(sh[i], pose[i]));
        }
        fr_sap_update(sap, pairs, 64, &np);
        for (int k = 0; k < np; k++) {
            int a = pairs[k].a, b = pairs[k].b;
            hits += fr_collide_pair(sh[a], pose[a], sh[b], pose[b], &cache[a][b], &w, &o) == 1;
        }
    }
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_gt(hits, 10);
    if (fri_watch_available()) {
        ck_assert_int_eq(c.allocs, 0);
        ck_assert_int_eq(c.frees, 0);
        ck_assert_int_eq(c.locks, 0);
        ck_assert_int_eq(c.io, 0);
    }
    /* a world whose shapes are too large for the work buffers gets an error, not an overflow */
    fr_collide_work small;
    fr_polyhedron_out so;
    ck_assert_int_eq(fr_collide_work_init(&small, 6, NULL), 0);
    ck_assert_int_eq(fr_polyhedron_out_init(&so, 6, NULL), 0);
    fr_shape *big;
    ck_assert_int_eq(fr_shape_create_sphere(1, 3, &big), 0);
    fr_pose id = fr_pose_identity();
    ck_assert_int_eq(fr_collide_pair(big, id, big, id, NULL, &small, &so), FR_ERR_FULL);
    fr_shape_destroy(big);
    fr_collide_work_free(&small);
    fr_polyhedron_out_free(&so);
    for (int i = 0; i < 10; i++) fr_shape_destroy(sh[i]);
    fr_sap_destroy(sap);
    fr_arena_destroy(&arena);
}
END_TEST

Suite *collision_suite(void);
Suite *collision_suite(void)
{
    Suite *s = suite_create("collision");
    TCase *tc = tcase_create("intersection");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_box_box_axis_aligned_exact);
    tcase_add_test(tc, test_tilted_box_into_halfspace);
    tcase_add_test(tc, test_sphere_lens_and_cap);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("montecarlo");
    tcase_set_timeout(tm, 120);
    tcase_add_test(tm, test_random_convex_vs_monte_carlo);
    suite_add_tcase(s, tm);
    TCase *ty = tcase_create("symmetry");
    tcase_set_timeout(ty, 120);
    tcase_add_test(ty, test_symmetry_all_types);
    suite_add_tcase(s, ty);
    TCase *td = tcase_create("degenerate");
    tcase_set_timeout(td, 120);
    tcase_add_test(td, test_stacked_equal_boxes_coplanar);
    tcase_add_test(td, test_edge_edge_vertex_face_sliver);
    tcase_add_test(td, test_near_degenerate_stress);
    tcase_add_test(td, test_repair_path_equivalent);
    tcase_add_test(td, test_invisible_side_equivalent);
    tcase_add_test(td, test_scale_disparity);
    suite_add_tcase(s, td);
    TCase *ts = tcase_create("shapes");
    tcase_add_test(ts, test_curved_volume_and_mass);
    tcase_add_test(ts, test_polytope_mass_properties);
    tcase_add_test(ts, test_curved_slack);
    tcase_add_test(ts, test_aabb_tight_and_containing);
    tcase_add_test(ts, test_support_brute_force);
    tcase_add_test(ts, test_shape_widths);
    tcase_add_test(ts, test_shape_stance);
    tcase_set_timeout(ts, 60);
    suite_add_tcase(s, ts);
    TCase *tg = tcase_create("gjk");
    tcase_add_test(tg, test_gjk_polytopes_vs_minkowski_hull);
    tcase_add_test(tg, test_gjk_curved_exact);
    tcase_set_timeout(tg, 60);
    suite_add_tcase(s, tg);
    TCase *tb = tcase_create("broadphase");
    tcase_add_test(tb, test_sap_vs_brute_force);
    tcase_set_timeout(tb, 60);
    suite_add_tcase(s, tb);
    TCase *tp = tcase_create("pair");
    tcase_add_test(tp, test_collide_pair_cache_and_agreement);
    tcase_add_test(tp, test_collide_pair_no_allocation);
    tcase_add_test(tp, test_deterministic_bits);
    tcase_set_timeout(tp, 60);
    suite_add_tcase(s, tp);
    return s;
}

FRTEST_MAIN(collision_suite)
