/*
 * src/contact. Every check compares with an independent formulation: closed forms for boxes,
 * brute-force ray integration over a fine grid of the projected contact area (thickness from the
 * half-spaces, not from the polyhedron), finite differences for the linearisation, and simple
 * rigid-body simulations (semi-implicit Euler written here) against the analytic results of
 * docs/contact.md and experiments.md §1, §2, §4.
 */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/contact.h"
#include "interpose.h"
#include "polybuild.h"

#define G 9.8

static fr_contact_body body_at(fr_pose pose, fr_vec3 v, fr_vec3 w)
{
    return (fr_contact_body){pose, v, w};
}
static fr_contact_body still(fr_pose pose)
{
    return body_at(pose, fr_v3_zero(), fr_v3_zero());
}
static fr_pose pose_of(fr_vec3 p, fr_quat q)
{
    return (fr_pose){p, q};
}
static fr_vec3 rand_v3(frtest_rng *r, double s)
{
    return fr_v3(frtest_uniform(r, -s, s), frtest_uniform(r, -s, s), frtest_uniform(r, -s, s));
}
static fr_quat rand_q(frtest_rng *r)
{
    return fr_q_normalize(fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                               frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
}

/* Planes of box A (pose, half) and of B: the ground z <= 0 (plane) or a box. */
static int planes_box_ground(fr_pose pa, fr_vec3 ha, fr_vec3 gnormal, double gd, tp_plane *pl)
{
    tp_box_planes(pa, ha, FR_FACE_A, pl);
    pl[6] = (tp_plane){gnormal, gd, FR_FACE_B};
    return 7;
}
static int planes_box_box(fr_pose pa, fr_vec3 ha, fr_pose pb, fr_vec3 hb, tp_plane *pl)
{
    tp_box_planes(pa, ha, FR_FACE_A, pl);
    tp_box_planes(pb, hb, FR_FACE_B, pl + 6);
    return 12;
}

/* ------------------------------------------------------------------ brute-force reference */

/* Thickness of the half-space intersection along n through the point x. */
static double ray_thickness(const tp_plane *pl, int np, fr_vec3 x, fr_vec3 n)
{
    double lo = -INFINITY, hi = INFINITY;
    for (int i = 0; i < np; i++) {
        double nd = fr_v3_dot(pl[i].n, n), val = pl[i].d - fr_v3_dot(pl[i].n, x);
        if (fabs(nd) < 1e-14) {
            if (val < 0) return 0.0;
        } else if (nd > 0) {
            hi = fmin(hi, val / nd);
        } else {
            lo = fmax(lo, val / nd);
        }
    }
    return hi > lo ? hi - lo : 0.0;
}

typedef struct grid_ref {
    double V, A;      /* ∫t, area */
    fr_vec3 force_a;  /* −n ∫ p dA */
    fr_vec3 torque_a; /* about A's centre of mass */
    double rad;       /* ∫ t |x − c| dA */
    double rad2;      /* ∫ t |x − c|² dA */
} grid_ref;

/* Midpoint rule over an N×N grid covering the projection of the vertices. Pressure
 * k·t + c·ṫ with ṫ from the bodies' velocities (ramp 1, no clamp). */
static grid_ref grid_integrate(const tp_plane *pl, int np, const tp_poly *tp, fr_vec3 n, double k,
                               double c, const fr_contact_body *a, const fr_contact_body *b,
                               fr_vec3 cpt, int N)
{
    fr_vec3 t1 = fr_v3_perp(n), t2 = fr_v3_cross(n, t1);
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    fr_vec3 o = tp->verts[0];
    for (int i = 0; i < tp->out.nverts; i++) {
        fr_vec3 r = fr_v3_sub(tp->verts[i], o);
        x0 = fmin(x0, fr_v3_dot(r, t1));
        x1 = fmax(x1, fr_v3_dot(r, t1));
        y0 = fmin(y0, fr_v3_dot(r, t2));
        y1 = fmax(y1, fr_v3_dot(r, t2));
    }
    double mx = 0.01 * (x1 - x0 + y1 - y0);
    x0 -= mx, x1 += mx, y0 -= mx, y1 += mx;
    double hx = (x1 - x0) / N, hy = (y1 - y0) / N, dA = hx * hy;
    grid_ref g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            fr_vec3 x = fr_v3_add(o, fr_v3_add(fr_v3_scale(t1, x0 + (i + 0.5) * hx),
                                               fr_v3_scale(t2, y0 + (j + 0.5) * hy)));
            double t = ray_thickness(pl, np, x, n);
            if (!(t > 0)) continue;
            fr_vec3 va = fr_v3_add(a->v, fr_v3_cross(a->w, fr_v3_sub(x, a->pose.p)));
            fr_vec3 vb = fr_v3_add(b->v, fr_v3_cross(b->w, fr_v3_sub(x, b->pose.p)));
            double td = fr_v3_dot(fr_v3_sub(va, vb), n);
            double pr = k * t + c * td;
            fr_vec3 f = fr_v3_scale(n, -pr * dA);
            g.V += t * dA;
            g.A += dA;
            g.force_a = fr_v3_add(g.force_a, f);
            g.torque_a = fr_v3_add(g.torque_a, fr_v3_cross(fr_v3_sub(x, a->pose.p), f));
            fr_vec3 d = fr_v3_sub(x, cpt);
            d = fr_v3_mad(d, -fr_v3_dot(d, n), n);
            g.rad += t * fr_v3_norm(d) * dA;
            g.rad2 += t * fr_v3_norm2(d) * dA;
        }
    return g;
}

static fr_contact_params frictionless(int law, double k, double c)
{
    fr_contact_params p = fr_contact_params_scaled(1.0, 0.005, 0, 0, 0.0, 0.0);
    p.law = law;
    p.stiff_n = k;
    p.damp_n = c;
    p.damping_ramp = 0.0;
    return p;
}

/* ------------------------------------------------------------------ closed-form cases */

/* mean distance from the centre of an a×b rectangle (exact) */
static double rect_mean_radius(double a, double b)
{
    double d = hypot(a, b);
    return (a * a * a * log((b + d) / a) + b * b * b * log((a + d) / b) + 2 * a * b * d) /
           (12 * a * b);
}

START_TEST(test_box_on_plane_closed_form)
{
    /* 1 × 0.6 × 2 block sunk by δ into the ground z <= 0, off the origin and yawed */
    const double delta = 1e-3, K = 8000, k = 2e6;
    fr_vec3 half = fr_v3(0.5, 0.3, 1.0);
    fr_quat q = fr_q_axis_angle(fr_v3(0, 0, 1), 0.3);
    fr_pose pa = pose_of(fr_v3(0.7, -0.2, 1.0 - delta), q);
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(pa, half, fr_v3(0, 0, 1), 0.0, pl);
    ck_assert_int_eq(tp_build(pl, np, 1e-12, &tp), 6);
    fr_contact_body A = still(pa), B = still(fr_pose_identity());
    for (int law = 0; law < 2; law++) {
        fr_contact_params p = frictionless(law, law == FR_CONTACT_MEAN_DEPTH ? K : k, 0.0);
        fr_contact_state st = {0};
        fr_contact_result r;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        ck_assert_int_eq(r.in_contact, 1);
        ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-12);
        ck_assert_rel(r.volume, 0.6 * delta, 1e-9, 0);
        ck_assert_rel(r.area, 0.6, 1e-12, 0);
        ck_assert_rel(r.mean_depth, delta, 1e-9, 0);
        ck_assert_rel(r.max_depth, delta, 1e-9, 0);
        double Nexp = law == FR_CONTACT_MEAN_DEPTH ? K * delta : k * 0.6 * delta;
        ck_assert_rel(r.normal_force, Nexp, 1e-9, 0);
        ck_assert_double_le(fr_v3_dist(r.force_a, fr_v3(0, 0, Nexp)), 1e-9 * Nexp);
        ck_assert_double_le(fr_v3_dist(r.force_b, fr_v3(0, 0, -Nexp)), 1e-9 * Nexp);
        /* centred under the centre of mass: no torque */
        ck_assert_double_le(fr_v3_norm(r.torque_a), 1e-9 * Nexp);
        ck_assert_double_le(fr_v3_dist(r.point, fr_v3(0.7, -0.2, -0.5 * delta)), 1e-9);
        ck_assert_rel(r.spin_radius, rect_mean_radius(1.0, 0.6), 1e-9, 0);
        ck_assert_int_eq(r.sliding, 1); /* frictionless */
    }
}
END_TEST

START_TEST(test_spin_radius_square)
{
    /* the unit square's mean distance from its centre: (√2 + ln(1 + √2)) / 6 */
    ck_assert_rel(rect_mean_radius(1, 1), (sqrt(2.0) + log(1 + sqrt(2.0))) / 6.0, 1e-14, 0);
}
END_TEST

/* Random box–box and box–tilted-plane intersections against the grid reference. */
START_TEST(test_integrals_vs_grid)
{
    frtest_rng rng = {7};
    int done = 0;
    for (int trial = 0; trial < 200 && done < 12; trial++) {
        tp_plane pl[12];
        tp_poly tp;
        fr_vec3 ha = fr_v3(frtest_uniform(&rng, 0.2, 0.6), frtest_uniform(&rng, 0.2, 0.6),
                           frtest_uniform(&rng, 0.2, 0.6));
        fr_pose pa = pose_of(rand_v3(&rng, 0.1), rand_q(&rng));
        int np;
        fr_contact_body B;
        if (done % 2 == 0) {
            fr_vec3 hb = fr_v3(frtest_uniform(&rng, 0.2, 0.6), frtest_uniform(&rng, 0.2, 0.6),
                               frtest_uniform(&rng, 0.2, 0.6));
            fr_pose pb = pose_of(fr_v3_add(fr_v3(0, 0, -0.7), rand_v3(&rng, 0.1)), rand_q(&rng));
            np = planes_box_box(pa, ha, pb, hb, pl);
            B = body_at(pb, rand_v3(&rng, 1), rand_v3(&rng, 2));
        } else {
            fr_vec3 gn = fr_v3_normalize(fr_v3_add(fr_v3(0, 0, 1), rand_v3(&rng, 0.4)));
            np = planes_box_ground(pa, ha, gn, -0.25, pl);
            B = still(fr_pose_identity());
        }
        if (tp_build(pl, np, 1e-12, &tp) < 4 || tp.out.volume < 1e-4) continue;
        fr_contact_body A = body_at(pa, rand_v3(&rng, 1), rand_v3(&rng, 2));
        const double k = 1e5, c = 300;
        fr_contact_params p = frictionless(FR_CONTACT_VOLUME, k, c);
        fr_contact_state st = {0};
        fr_contact_result r;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        /* volume: per-triangle integral vs the polyhedron's own divergence volume */
        ck_assert_rel(r.volume, tp.out.volume, 1e-10, 0);
        grid_ref g = grid_integrate(pl, np, &tp, r.normal, k, c, &A, &B, r.point, 1200);
        double Fs = fmax(fr_v3_norm(g.force_a), k * g.V);
        double Ls = sqrt(g.A);
        /* the grid's own error: ~1e-4 on areas (cut cells), ~1e-7 on the rest */
        ck_assert_rel(r.area, g.A, 3e-4, 0);
        ck_assert_rel(r.volume, g.V, 2e-5, 0);
        ck_assert(r.normal_force > 0);
        ck_assert_double_le(fr_v3_dist(r.force_a, g.force_a), 2e-5 * Fs);
        ck_assert_double_le(fr_v3_dist(r.torque_a, g.torque_a),
                            2e-5 * Fs * (Ls + fr_v3_dist(r.point, pa.p)));
        ck_assert_rel(r.spin_radius, g.rad / g.V, 2e-5, 0);
        /* spin stiffness K_r = K_t·ρ², ρ² the pressure-weighted mean of |x − c|²: read it back
         * from the linearisation of a sticking evaluation (nᵀ K_θθ n; the normal part is ⊥ n) */
        fr_contact_params pf = p;
        pf.mu_s = pf.mu_k = 1.0;
        pf.damp_t = 0.0;
        fr_contact_state sf = {0};
        fr_contact_result rf;
        ck_assert_int_eq(fr_contact_eval(&pf, &tp.out, &A, &B, &sf, &rf), FR_OK);
        ck_assert_int_eq(rf.sliding, 0);
        fr_vec3 nn = rf.normal;
        double kr = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) kr += fr_v3_get(nn, i) * rf.K.m[i][j] * fr_v3_get(nn, j);
        ck_assert_rel(kr / (pf.stiff_t * rf.area), g.rad2 / g.V, 2e-5, 0);
        done++;
    }
    ck_assert_int_ge(done, 12);
}
END_TEST

/* The spring part acts along n through the volume centroid (divergence theorem). */
START_TEST(test_spring_line_of_action)
{
    frtest_rng rng = {11};
    int done = 0;
    for (int trial = 0; trial < 300 && done < 50; trial++) {
        tp_plane pl[12];
        tp_poly tp;
        fr_pose pa = pose_of(rand_v3(&rng, 0.2), rand_q(&rng));
        fr_pose pb = pose_of(fr_v3_add(fr_v3(0, 0, -0.8), rand_v3(&rng, 0.2)), rand_q(&rng));
        int np = planes_box_box(pa, fr_v3(0.5, 0.4, 0.3), pb, fr_v3(0.6, 0.35, 0.45), pl);
        if (tp_build(pl, np, 1e-12, &tp) < 4 || tp.out.volume < 1e-6) continue;
        fr_contact_params p = frictionless(FR_CONTACT_VOLUME, 1e6, 0.0);
        fr_contact_state st = {0};
        fr_contact_result r;
        fr_contact_body A = still(pa), B = still(pb);
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        ck_assert_rel(r.normal_force, 1e6 * tp.out.volume, 1e-9, 0);
        ck_assert_double_le(fr_v3_dist(r.point, tp.out.centroid), 1e-9);
        /* torque about the centroid vanishes */
        fr_vec3 tc =
            fr_v3_add(r.torque_a, fr_v3_cross(fr_v3_sub(pa.p, tp.out.centroid), r.force_a));
        ck_assert_double_le(fr_v3_norm(tc), 1e-9 * r.normal_force);
        /* momentum: B's wrench is exactly the opposite about any point */
        fr_vec3 tb_at_a = fr_v3_add(r.torque_b, fr_v3_cross(fr_v3_sub(pb.p, pa.p), r.force_b));
        ck_assert_double_le(fr_v3_norm(fr_v3_add(r.force_a, r.force_b)), 1e-12 * r.normal_force);
        ck_assert_double_le(fr_v3_norm(fr_v3_add(r.torque_a, tb_at_a)), 1e-12 * r.normal_force);
        done++;
    }
    ck_assert_int_ge(done, 50);
}
END_TEST

/* Σ (area vector) over faces on A − on B, from the builder's own plane normals. */
static fr_vec3 owner_area_normal(const tp_poly *tp)
{
    fr_vec3 s = fr_v3_zero();
    for (int f = 0; f < tp->out.nfaces; f++) {
        const int *ix = tp->vidx + tp->fstart[f];
        double area = 0;
        for (int k = 1; k + 1 < tp->fcount[f]; k++)
            area +=
                0.5 * fr_v3_norm(fr_v3_cross(fr_v3_sub(tp->verts[ix[k]], tp->verts[ix[0]]),
                                             fr_v3_sub(tp->verts[ix[k + 1]], tp->verts[ix[0]])));
        s = fr_v3_mad(s, tp->owner[f] == FR_FACE_A ? area : -area, tp->fnormal[f]);
    }
    return fr_v3_normalize(s);
}

START_TEST(test_normal_tilted)
{
    frtest_rng rng = {3};
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, 1e4, 0);
    /* a box of any orientation pressed into a tilted plane: n = −(plane normal) exactly */
    for (int k = 0; k < 40; k++) {
        fr_vec3 gn = fr_v3_normalize(fr_v3_add(fr_v3(0, 0, 1), rand_v3(&rng, 0.8)));
        fr_quat q = rand_q(&rng);
        fr_pose pa = pose_of(fr_v3_scale(gn, 0.3), q);
        tp_plane pl[7];
        tp_poly tp;
        int np = planes_box_ground(pa, fr_v3(0.4, 0.3, 0.2), gn, 0.0, pl);
        if (tp_build(pl, np, 1e-12, &tp) < 4) continue;
        fr_contact_body A = still(pa), B = still(fr_pose_identity());
        fr_contact_state st = {0};
        fr_contact_result r;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        ck_assert_double_le(fr_v3_dist(r.normal, fr_v3_neg(gn)), 1e-12);
        /* the force on A is along the plane normal */
        ck_assert_double_le(fr_v3_norm(fr_v3_cross(r.force_a, gn)), 1e-12 * r.normal_force);
    }
    /* two boxes of any orientation: the definition, from the builder's face planes */
    for (int k = 0; k < 40; k++) {
        fr_pose pa = pose_of(fr_v3(0, 0, 0.3), rand_q(&rng));
        fr_pose pb = pose_of(fr_v3_add(fr_v3(0, 0, -0.3), rand_v3(&rng, 0.1)), rand_q(&rng));
        tp_plane pl[12];
        tp_poly tp;
        int np = planes_box_box(pa, fr_v3(0.4, 0.3, 0.25), pb, fr_v3(0.35, 0.3, 0.3), pl);
        if (tp_build(pl, np, 1e-12, &tp) < 4 || tp.out.volume < 1e-6) continue;
        fr_contact_body A = still(pa), B = still(pb);
        fr_contact_state st = {0};
        fr_contact_result r;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        ck_assert_double_le(fr_v3_dist(r.normal, owner_area_normal(&tp)), 1e-9);
    }
    /* crossed edges: A's edge down (45° about x), B's edge up (45° about y): n = −z */
    {
        fr_pose pa = pose_of(fr_v3(0.1, -0.05, 0.5 * sqrt(2.0) - 0.02),
                             fr_q_axis_angle(fr_v3(1, 0, 0), M_PI / 4));
        fr_pose pb = pose_of(fr_v3(-0.05, 0.1, -0.5 * sqrt(2.0) + 0.02),
                             fr_q_axis_angle(fr_v3(0, 1, 0), M_PI / 4));
        tp_plane pl[12];
        tp_poly tp;
        int np = planes_box_box(pa, fr_v3(2, 0.5, 0.5), pb, fr_v3(0.5, 2, 0.5), pl);
        ck_assert_int_ge(tp_build(pl, np, 1e-12, &tp), 4);
        fr_contact_body A = still(pa), B = still(pb);
        fr_contact_state st = {0};
        fr_contact_result r;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-12);
        /* the two edges are 0.04 apart along z: a tetrahedron of that height */
        ck_assert_rel(r.max_depth, 0.04, 1e-9, 0);
        ck_assert_rel(r.volume, tp.out.volume, 1e-10, 0);
    }
}
END_TEST

/* A tetrahedral intersection (a box corner into the ground): V = A·d/3 exactly. */
static void corner_case(double d, fr_vec3 vel, const fr_contact_params *p, fr_contact_result *r)
{
    /* turn the body diagonal (1,1,1)/√3 to −z: the corner (+,+,+) at the bottom, √3/2 below */
    fr_vec3 u = fr_v3_normalize(fr_v3(1, 1, 1));
    fr_vec3 axis = fr_v3_normalize(fr_v3_cross(u, fr_v3(0, 0, -1)));
    fr_quat qb = fr_q_axis_angle(axis, acos(-u.z));
    fr_pose pa = pose_of(fr_v3(0.2, 0.1, 0.5 * sqrt(3.0) - d), qb);
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(pa, fr_v3(0.5, 0.5, 0.5), fr_v3(0, 0, 1), 0.0, pl);
    ck_assert_int_eq(tp_build(pl, np, 1e-15, &tp), 4);
    fr_contact_body A = body_at(pa, vel, fr_v3_zero()), B = still(fr_pose_identity());
    fr_contact_state st = {0};
    ck_assert_int_eq(fr_contact_eval(p, &tp.out, &A, &B, &st, r), FR_OK);
}

START_TEST(test_continuity_depth_to_zero)
{
    const double K = 1e4, D = 200;
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, K, 0);
    /* flat face: N = K·δ down to the smallest depths */
    for (double d = 1e-2; d > 1e-10; d *= 0.1) {
        fr_pose pa = pose_of(fr_v3(0.3, 0.2, 0.5 - d), fr_q_axis_angle(fr_v3(0, 0, 1), 0.4));
        tp_plane pl[7];
        tp_poly tp;
        int np = planes_box_ground(pa, fr_v3(0.5, 0.5, 0.5), fr_v3(0, 0, 1), 0.0, pl);
        ck_assert_int_eq(tp_build(pl, np, 1e-14, &tp), 6);
        fr_contact_body A = still(pa), B = still(fr_pose_identity());
        fr_contact_state st = {0};
        fr_contact_result r;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        ck_assert_rel(r.normal_force, K * d, 1e-12 / d + 1e-9, 0);
        ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-12);
    }
    /* a corner: mean depth d/3, N = K·d/3, line of action through the tetrahedron's centroid */
    for (double d = 1e-1; d > 1e-8; d *= 0.1) {
        fr_contact_result r;
        corner_case(d, fr_v3_zero(), &p, &r);
        ck_assert_rel(r.mean_depth, d / 3, 1e-6, 0);
        ck_assert_rel(r.max_depth, d, 1e-6, 0);
        ck_assert_rel(r.normal_force, K * d / 3, 1e-6, 0);
        ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-9);
    }
    /* approaching at 1 m/s with damping: the ramp takes the force continuously to 0 */
    p.damp_n = D;
    p.damping_ramp = 1e-3;
    double prev = INFINITY;
    for (double d = 1e-2; d > 1e-9; d *= 0.5) {
        fr_contact_result r;
        corner_case(d, fr_v3(0, 0, -1), &p, &r);
        double bound = (K * d / 3 + D * 1.0 * fmin(1.0, (d / 3) / 1e-3)) * (1 + 1e-6);
        ck_assert_double_le(r.normal_force, bound);
        ck_assert_double_ge(r.normal_force, K * d / 3 * (1 - 1e-6));
        ck_assert_double_le(r.normal_force, prev);
        prev = r.normal_force;
    }
    ck_assert_double_le(prev, 1e-4);
}
END_TEST

START_TEST(test_ab_symmetry)
{
    frtest_rng rng = {5};
    int done = 0;
    for (int k = 0; k < 100 && done < 30; k++) {
        fr_pose pa = pose_of(fr_v3(0, 0, 0.3), rand_q(&rng));
        fr_pose pb = pose_of(fr_v3_add(fr_v3(0, 0, -0.3), rand_v3(&rng, 0.1)), rand_q(&rng));
        tp_plane pl[12];
        tp_poly tp;
        int np = planes_box_box(pa, fr_v3(0.4, 0.3, 0.25), pb, fr_v3(0.35, 0.3, 0.3), pl);
        if (tp_build(pl, np, 1e-12, &tp) < 4 || tp.out.volume < 1e-6) continue;
        fr_contact_params p = fr_contact_params_scaled(1.0, 0.001, 0, 0, 0.6, 0.4);
        fr_contact_body A = body_at(pa, rand_v3(&rng, 0.1), rand_v3(&rng, 0.2));
        fr_contact_body B = body_at(pb, rand_v3(&rng, 0.1), rand_v3(&rng, 0.2));
        fr_contact_state s1 = {0}, s2 = {0};
        fr_contact_result r1, r2;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &s1, &r1), FR_OK);
        tp_swap_owners(&tp);
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &B, &A, &s2, &r2), FR_OK);
        double F = r1.normal_force + 1e-9, L = 1.0;
        ck_assert_rel(r2.normal_force, r1.normal_force, 1e-9, 1e-9);
        ck_assert_double_le(fr_v3_dist(r2.normal, fr_v3_neg(r1.normal)), 1e-12);
        ck_assert_double_le(fr_v3_dist(r2.point, r1.point), 1e-12);
        ck_assert_double_le(fr_v3_dist(r2.force_a, r1.force_b), 1e-9 * F);
        ck_assert_double_le(fr_v3_dist(r2.torque_a, r1.torque_b), 1e-9 * F * L);
        ck_assert_double_le(fr_v3_dist(r2.force_b, r1.force_a), 1e-9 * F);
        ck_assert_double_le(fr_v3_dist(r2.torque_b, r1.torque_a), 1e-9 * F * L);
        ck_assert_int_eq(r1.sliding, r2.sliding);
        done++;
    }
    ck_assert_int_ge(done, 30);
}
END_TEST

START_TEST(test_no_pull)
{
    /* separating fast with strong damping: the damping is cut so that the total normal force is
     * 0 (never a pull); what remains is the spring distribution plus the scaled damping one */
    const double k = 1e6, c = 1e6;
    fr_contact_params p = frictionless(FR_CONTACT_VOLUME, k, c);
    fr_pose pa = pose_of(fr_v3(0, 0, 0.5 - 1e-3), fr_q_axis_angle(fr_v3(1, 0, 0), 0.001));
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(pa, fr_v3(0.5, 0.5, 0.5), fr_v3(0, 0, 1), 0.0, pl);
    ck_assert_int_ge(tp_build(pl, np, 1e-12, &tp), 5);
    fr_contact_body A = body_at(pa, fr_v3(0, 0, 1.0), fr_v3(0.3, 0, 0)),
                    B = still(fr_pose_identity());
    fr_contact_state st = {0};
    fr_contact_result r;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
    ck_assert_double_eq(r.normal_force, 0.0);
    ck_assert_double_le(fr_v3_norm(r.force_a), 1e-9);
    /* expected: spring part + α·(damping part), both read from unclamped evaluations (the
     * damping part is linear in the velocity, so a 1e-4 scaled copy is not clamped) */
    const double sc = 1e-4;
    fr_contact_body A0 = still(pa), As = body_at(pa, fr_v3_scale(A.v, sc), fr_v3_scale(A.w, sc));
    fr_contact_result rk, rs;
    fr_contact_state s0 = {0}, s1 = {0};
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A0, &B, &s0, &rk), FR_OK);
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &As, &B, &s1, &rs), FR_OK);
    ck_assert(rs.normal_force > 0);
    double Nd = (rs.normal_force - rk.normal_force) / sc;
    fr_vec3 td = fr_v3_scale(fr_v3_sub(rs.torque_a, rk.torque_a), 1.0 / sc);
    double alpha = rk.normal_force / -Nd;
    ck_assert(alpha > 0 && alpha < 1);
    fr_vec3 t_exp = fr_v3_mad(rk.torque_a, alpha, td);
    ck_assert_double_le(fr_v3_dist(r.torque_a, t_exp), 1e-6 * fr_v3_norm(rk.torque_a) + 1e-9);
    /* slowly separating: damping reduces but does not cancel the spring */
    A.v = fr_v3(0, 0, 1e-4);
    A.w = fr_v3_zero();
    fr_contact_state s2 = {0};
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &s2, &r), FR_OK);
    ck_assert_rel(r.normal_force, k * r.volume - c * r.area * 1e-4, 1e-6, 0);
}
END_TEST

/* The wrench on A referred to the point c: (torque about c; force). */
static fr_svec wrench_at(const fr_contact_result *r, fr_vec3 com, fr_vec3 c)
{
    return fr_sv(fr_v3_add(r->torque_a, fr_v3_cross(fr_v3_sub(com, c), r->force_a)), r->force_a);
}

/* Evaluate box A (pose moved by the twist (th; d) about c) on the ground plane gn·x <= 0. */
static fr_contact_result eval_moved(const fr_contact_params *p, fr_pose pa, fr_vec3 half,
                                    fr_vec3 gn, fr_vec3 c, fr_vec3 th, fr_vec3 d, fr_vec3 vel,
                                    fr_vec3 angvel, const fr_contact_state *st0)
{
    fr_quat dq = fr_q_exp(th);
    fr_pose moved = pose_of(fr_v3_add(fr_v3_add(c, fr_q_rotate(dq, fr_v3_sub(pa.p, c))), d),
                            fr_q_normalize(fr_q_mul(dq, pa.q)));
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(moved, half, gn, 0.0, pl);
    ck_assert_int_ge(tp_build(pl, np, 1e-13, &tp), 4);
    fr_contact_body A = body_at(moved, vel, angvel), B = still(fr_pose_identity());
    fr_contact_state st = *st0;
    fr_contact_result r;
    ck_assert_int_eq(fr_contact_eval(p, &tp.out, &A, &B, &st, &r), FR_OK);
    return r;
}

/* Finite-difference stiffness (−∂w/∂δ) and damping (−∂w/∂ξ, exact: velocity-linear) of a box
 * on the ground plane gn·x <= 0, box tilted by `tilt` (rad) from flat, lowest point `depth` deep.
 */
static void fd_linearisation(int law, double tilt, double depth, fr_quat extra, double *kerr,
                             double *knorm, double *derr, double *nkn, double *nkn_fd)
{
    fr_vec3 half = fr_v3(0.5, 0.3, 0.4);
    fr_vec3 gn = fr_v3_normalize(fr_v3(0.1, -0.2, 1));
    fr_vec3 ax = fr_v3_normalize(fr_v3_cross(fr_v3(0, 0, 1), gn));
    fr_quat flat = fr_q_axis_angle(ax, acos(gn.z)); /* body z along gn */
    fr_quat q =
        fr_q_mul(fr_q_mul(flat, fr_q_axis_angle(fr_v3_normalize(fr_v3(1, 2, 0)), tilt)), extra);
    fr_pose pa = pose_of(fr_v3_zero(), q);
    double lo = INFINITY;
    for (int s = 0; s < 8; s++) {
        fr_vec3 cn = fr_v3(s & 1 ? 0.5 : -0.5, s & 2 ? 0.3 : -0.3, s & 4 ? 0.4 : -0.4);
        lo = fmin(lo, fr_v3_dot(fr_q_rotate(pa.q, cn), gn));
    }
    pa.p = fr_v3_scale(gn, -lo - depth);
    fr_contact_params p = frictionless(law, law == FR_CONTACT_VOLUME ? 1e6 : 1e4, 0);
    p.damp_n = law == FR_CONTACT_VOLUME ? 3e3 : 30;
    fr_contact_state st0 = {0};
    fr_contact_result r0 = eval_moved(&p, pa, half, gn, pa.p, fr_v3_zero(), fr_v3_zero(),
                                      fr_v3_zero(), fr_v3_zero(), &st0);
    fr_vec3 c = r0.point, n = r0.normal;
    fr_svec w0 = wrench_at(&r0, pa.p, c);
    *kerr = *derr = *knorm = 0;
    fr_svec nk = fr_sv_zero(), nkfd = fr_sv_zero();
    for (int j = 0; j < 6; j++) {
        const double e = 1e-6;
        fr_vec3 th = fr_v3(j == 0, j == 1, j == 2), d = fr_v3(j == 3, j == 4, j == 5);
        fr_svec fd = fr_sv_zero();
        for (int sg = -1; sg <= 1; sg += 2) {
            fr_vec3 ths = fr_v3_scale(th, sg * e), ds = fr_v3_scale(d, sg * e);
            fr_contact_result r =
                eval_moved(&p, pa, half, gn, c, ths, ds, fr_v3_zero(), fr_v3_zero(), &st0);
            fr_vec3 com =
                fr_v3_add(fr_v3_add(c, fr_q_rotate(fr_q_exp(ths), fr_v3_sub(pa.p, c))), ds);
            fd = fr_sv_mad(fd, -sg * 0.5 / e, wrench_at(&r, com, c)); /* −∂w/∂δ */
        }
        /* a relative twist (om; vc) at c */
        fr_vec3 om = fr_v3_scale(th, 0.01), vc = fr_v3_scale(d, 0.01);
        fr_vec3 vcom = fr_v3_add(vc, fr_v3_cross(om, fr_v3_sub(pa.p, c)));
        fr_contact_result rv =
            eval_moved(&p, pa, half, gn, c, fr_v3_zero(), fr_v3_zero(), vcom, om, &st0);
        fr_svec dv = fr_sv_scale(fr_sv_sub(wrench_at(&rv, pa.p, c), w0), -100.0);
        for (int i = 0; i < 6; i++) {
            /* the patch moves with A: the torque about the fixed c turns with it, a term
             * [F_A]× of the order of the force that K leaves out (docs/contact.md) */
            double geo = 0.0;
            if (i < 3 && j >= 3) geo = fr_m3_skew(r0.force_a).m[i][j - 3];
            *kerr = fmax(*kerr, fabs(fr_sv_get(&fd, i) - r0.K.m[i][j] - geo));
            *knorm = fmax(*knorm, fabs(r0.K.m[i][j]));
            *derr = fmax(*derr, fabs(fr_sv_get(&dv, i) - r0.D.m[i][j]) /
                                    fmax(1e-30, fabs(r0.D.m[i][j]) + r0.D.m[5][5]));
        }
        /* n-components of the force column for a translation along n */
        double nj = j >= 3 ? fr_v3_get(n, j - 3) : 0.0;
        for (int i = 0; i < 6; i++) {
            fr_sv_set(&nk, i, fr_sv_get(&nk, i) + r0.K.m[i][j] * nj);
            fr_sv_set(&nkfd, i, fr_sv_get(&nkfd, i) + fr_sv_get(&fd, i) * nj);
        }
    }
    *nkn = fr_v3_dot(nk.lin, n);
    *nkn_fd = fr_v3_dot(nkfd.lin, n);
}

START_TEST(test_linearisation_fd)
{
    double kerr, knorm, derr, nkn, nknfd;
    /* parallel faces (a flat box on the plane, any yaw): K and D exact, both laws */
    for (int law = 0; law < 2; law++) {
        fr_quat yaw = fr_q_axis_angle(fr_v3(0, 0, 1), 0.3);
        fd_linearisation(law, 0.0, 0.01, yaw, &kerr, &knorm, &derr, &nkn, &nknfd);
        ck_assert_double_le(kerr, 1e-6 * knorm);
        ck_assert_double_le(derr, 1e-9);
        ck_assert_rel(nkn, nknfd, 1e-6, 0);
    }
    /* tilted faces: D stays exact; K neglects the faces' slope, an error of first order in it */
    /* tilted faces (a wedge-shaped slab): D stays exact; K neglects the faces' slope, an error
     * of first order in it, and small (measured ~0.05·tilt·|K|) */
    for (double tilt = 0.001; tilt < 0.02; tilt *= 4) {
        fd_linearisation(FR_CONTACT_VOLUME, tilt, 0.03, fr_q_identity(), &kerr, &knorm, &derr, &nkn,
                         &nknfd);
        ck_assert_double_le(derr, 1e-9);
        ck_assert_double_le(kerr, 0.1 * tilt * knorm);
    }
    /* a corner (tetrahedron): D exact; the normal–normal stiffness exact for the VOLUME law */
    fr_quat corner = fr_q_normalize(fr_q(0.9, 0.3, 0.25, 0.1));
    fd_linearisation(FR_CONTACT_VOLUME, 0.0, 0.05, corner, &kerr, &knorm, &derr, &nkn, &nknfd);
    ck_assert_double_le(derr, 1e-9);
    ck_assert_rel(nkn, nknfd, 1e-5, 0);
}
END_TEST

/* ------------------------------------------------------------------ friction, unit level */

/* A 1 × 1 box (centre at z = 0.5 − δ, optionally moved by (dx, dy) and yawed by yaw) on the
 * ground; evaluates with the given state. */
static fr_contact_result eval_box_moved(const fr_contact_params *p, double delta, double dx,
                                        double dy, double yaw, fr_vec3 v, fr_vec3 w,
                                        fr_contact_state *st)
{
    fr_pose pa = pose_of(fr_v3(dx, dy, 0.5 - delta), fr_q_axis_angle(fr_v3(0, 0, 1), yaw));
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(pa, fr_v3(0.5, 0.5, 0.5), fr_v3(0, 0, 1), 0.0, pl);
    ck_assert_int_eq(tp_build(pl, np, 1e-13, &tp), 6);
    fr_contact_body A = body_at(pa, v, w), B = still(fr_pose_identity());
    fr_contact_result r;
    ck_assert_int_eq(fr_contact_eval(p, &tp.out, &A, &B, st, &r), FR_OK);
    return r;
}

START_TEST(test_friction_stick_slip_translation)
{
    const double K = 1e4, Kt = 1e4, delta = 1e-3, N = K * delta;
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, K, 0);
    p.stiff_t = Kt;
    p.damp_t = 0;
    p.mu_s = 0.6;
    p.mu_k = 0.4;
    fr_contact_state st = {0};
    fr_contact_result r = eval_box_moved(&p, delta, 0, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 0);
    ck_assert_double_le(fr_v3_norm(r.friction_force), 1e-12);
    ck_assert_rel(r.friction_limit, 0.6 * N, 1e-12, 0);
    /* displaced 0.3 mm: the static spring holds −Kt·u, well under μ_s N = 6 N */
    r = eval_box_moved(&p, delta, 3e-4, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 0);
    ck_assert_double_le(fr_v3_dist(r.friction_force, fr_v3(-3.0, 0, 0)), 1e-9);
    /* the friction acts at the centre of pressure (z = −δ/2): torque about the centre of mass */
    fr_vec3 com = fr_v3(3e-4, 0, 0.5 - delta);
    fr_vec3 t_exp = fr_v3_cross(fr_v3_sub(r.point, com), r.friction_force);
    ck_assert_double_le(fr_v3_dist(r.torque_a, t_exp), 1e-9);
    /* 0.59 mm: 5.9 N, still sticking — the limit is μ_s·N at rest, never zero */
    r = eval_box_moved(&p, delta, 5.9e-4, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 0);
    ck_assert_rel(fr_v3_norm(r.friction_force), 5.9, 1e-9, 0);
    /* 0.8 mm: over the limit → slip at μ_k N = 4 N, opposing the displacement */
    r = eval_box_moved(&p, delta, 8e-4, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 1);
    ck_assert_double_le(fr_v3_dist(r.friction_force, fr_v3(-4.0, 0, 0)), 1e-9);
    ck_assert_rel(r.friction_limit, 0.4 * N, 1e-12, 0);
    /* the anchor was dragged to the kinetic limit: 0.1 mm further gives μ_k N again (slip) */
    r = eval_box_moved(&p, delta, 9e-4, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 1);
    ck_assert_rel(fr_v3_norm(r.friction_force), 4.0, 1e-9, 0);
    /* moving back by 0.1 mm: the spring relaxes below μ_k N → stick, force −Kt·(u − 0.1 mm) */
    r = eval_box_moved(&p, delta, 8e-4, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 0);
    ck_assert_double_le(fr_v3_dist(r.friction_force, fr_v3(-3.0, 0, 0)), 1e-8);
    /* sticking with velocity: the damper adds −Dt·v */
    p.damp_t = 50;
    r = eval_box_moved(&p, delta, 8e-4, 0, 0, fr_v3(0, 0.02, 0), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 0);
    ck_assert_double_le(fr_v3_dist(r.friction_force, fr_v3(-3.0, -1.0, 0)), 1e-8);
    /* frictionless pair: nothing tangential at all */
    fr_contact_params p0 = p;
    p0.mu_s = p0.mu_k = 0;
    fr_contact_state s0 = {0};
    r = eval_box_moved(&p0, delta, 0, 0, 0, fr_v3(1, 0, 0), fr_v3_zero(), &s0);
    ck_assert_double_eq(fr_v3_norm(r.friction_force), 0.0);
}
END_TEST

START_TEST(test_friction_spin_and_ellipse)
{
    const double K = 1e4, Kt = 1e4, delta = 1e-3, N = K * delta;
    const double rbar = rect_mean_radius(1, 1), rho2 = 1.0 / 6.0; /* unit square */
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, K, 0);
    p.stiff_t = Kt;
    p.damp_t = 0;
    p.mu_s = 0.6;
    p.mu_k = 0.4;
    fr_contact_state st = {0};
    fr_contact_result r = eval_box_moved(&p, delta, 0, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_rel(r.spin_radius, rbar, 1e-12, 0);
    /* twist by 1 mrad: spin spring K_r = K_t·ρ² = 1e4/6 → τ = −1.667 N·m < μ_s N r̄ = 2.296 */
    r = eval_box_moved(&p, delta, 0, 0, 1e-3, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 0);
    /* (friction_torque is about n = −z: the yaw +φ about z is −φ about n) */
    ck_assert_rel(r.friction_torque, Kt * rho2 * 1e-3, 1e-9, 0);
    ck_assert_double_le(fr_v3_norm(r.friction_force), 1e-9);
    ck_assert_double_le(fr_v3_dist(r.torque_a, fr_v3(0, 0, -Kt * rho2 * 1e-3)), 1e-9);
    /* 2 mrad: over the limit → the kinetic spin torque μ_k N r̄ */
    r = eval_box_moved(&p, delta, 0, 0, 2e-3, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r.sliding, 1);
    ck_assert_rel(r.friction_torque, 0.4 * N * rbar, 1e-9, 0);
    /* combined: trial (f, τ) = (−5 N along y, 2 N·m about n): inside each limit alone, outside the
     * ellipse (5/6)² + (2/2.296)² > 1 → scaled onto the kinetic ellipse, same direction */
    fr_contact_state s2 = {0};
    eval_box_moved(&p, delta, 0, 0, 0, fr_v3_zero(), fr_v3_zero(), &s2);
    double phi = 2.0 / (Kt * rho2);
    r = eval_box_moved(&p, delta, 0, 5e-4, phi, fr_v3_zero(), fr_v3_zero(), &s2);
    ck_assert_int_eq(r.sliding, 1);
    double F = 0.4 * N, M = 0.4 * N * rbar;
    double fy = r.friction_force.y, tz = r.friction_torque;
    ck_assert_rel(fy * fy / (F * F) + tz * tz / (M * M), 1.0, 1e-9, 0);
    ck_assert_rel(fy / tz, -5.0 / 2.0, 1e-6, 0);
    ck_assert_double_le(fabs(r.friction_force.x), 1e-9);
}
END_TEST

/* The bond is a planar rigid displacement: when the centre of pressure moves (here by tilting
 * the box about a tangent axis through the old centre), the static spring reads the twisted
 * bond at the new centre: u = φ·n × Δc. */
START_TEST(test_friction_bond_transport)
{
    const double K = 1e4, Kt = 1e4, delta = 1e-3, phi = 1e-3, psi = 1e-3;
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, K, 0);
    p.stiff_t = Kt;
    p.damp_t = 0;
    p.mu_s = p.mu_k = 1.0;
    fr_contact_state st = {0};
    fr_contact_result r0 = eval_box_moved(&p, delta, 0, 0, 0, fr_v3_zero(), fr_v3_zero(), &st);
    fr_contact_result r1 = eval_box_moved(&p, delta, 0, 0, phi, fr_v3_zero(), fr_v3_zero(), &st);
    ck_assert_int_eq(r1.sliding, 0);
    ck_assert_double_le(fr_v3_norm(r1.friction_force), 1e-9);
    /* tilt about the x axis through the current centre of pressure */
    fr_vec3 c1 = r1.point;
    fr_quat tq = fr_q_axis_angle(fr_v3(1, 0, 0), psi);
    fr_pose pa = pose_of(fr_v3(0, 0, 0.5 - delta), fr_q_axis_angle(fr_v3(0, 0, 1), phi));
    pa = pose_of(fr_v3_add(c1, fr_q_rotate(tq, fr_v3_sub(pa.p, c1))), fr_q_mul(tq, pa.q));
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(pa, fr_v3(0.5, 0.5, 0.5), fr_v3(0, 0, 1), 0.0, pl);
    ck_assert_int_eq(tp_build(pl, np, 1e-13, &tp), 6);
    fr_contact_body A = still(pa), B = still(fr_pose_identity());
    fr_contact_result r2;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r2), FR_OK);
    fr_vec3 dc = fr_v3_sub(r2.point, c1);
    ck_assert_double_ge(fabs(dc.y), 0.05); /* the centre moved (ψ/(12δ) ≈ 0.083 m) */
    /* twist about n = −z is −φ */
    fr_vec3 u = fr_v3_scale(fr_v3_cross(r2.normal, dc), -phi);
    u = fr_v3_mad(u, -fr_v3_dot(u, r2.normal), r2.normal);
    fr_vec3 f_exp = fr_v3_scale(u, -Kt);
    ck_assert_double_le(fr_v3_dist(r2.friction_force, f_exp), 1e-3 * fr_v3_norm(f_exp));
    (void)r0;
}
END_TEST

START_TEST(test_params_and_combination)
{
    fr_contact_params p;
    fr_contact_material a = {0, 0, 0.36, 0.25}, b = {0, 0, 0.64, 0.49};
    ck_assert_int_eq(fr_contact_params_combine(&a, &b, 2.0, 0.001, &p), FR_OK);
    ck_assert_int_eq(p.law, FR_CONTACT_MEAN_DEPTH);
    ck_assert_rel(p.stiff_n, FR_CONTACT_KAPPA * 2.0 / 1e-6, 1e-12, 0);
    ck_assert_rel(p.damp_n, FR_CONTACT_BETA * 2.0 / 1e-3, 1e-12, 0);
    ck_assert_rel(p.mu_s, 0.48, 1e-12, 0);
    ck_assert_rel(p.mu_k, 0.35, 1e-12, 0);
    /* the ramp sits at half the rest depth of m_red: K·2·ramp = m_red·g */
    ck_assert_rel(p.stiff_n * 2 * p.damping_ramp, 2.0 * FR_CONTACT_RAMP_G, 1e-12, 0);
    ck_assert_int_eq(fr_contact_params_check(&p), FR_OK);
    /* two compliant layers in series; damping likewise, keeping the common c/k */
    a.stiffness = 1e6, a.damping = 1e3, b.stiffness = 3e6, b.damping = 3e3;
    ck_assert_int_eq(fr_contact_params_combine(&a, &b, 2.0, 0.001, &p), FR_OK);
    ck_assert_int_eq(p.law, FR_CONTACT_VOLUME);
    ck_assert_rel(p.stiff_n, 7.5e5, 1e-12, 0);
    ck_assert_rel(p.damp_n, 750, 1e-12, 0);
    ck_assert_rel(p.stiff_t, p.stiff_n, 1e-12, 0);
    /* a rigid partner: the compliant layer alone */
    b.stiffness = 0;
    ck_assert_int_eq(fr_contact_params_combine(&a, &b, 2.0, 0.001, &p), FR_OK);
    ck_assert_rel(p.stiff_n, 1e6, 1e-12, 0);
    ck_assert_rel(p.damp_n, 1e3, 1e-12, 0);
    /* μ_k > μ_s and negative values are refused */
    b.mu_k = 0.7;
    ck_assert_int_eq(fr_contact_params_combine(&a, &b, 2.0, 0.001, &p), FR_ERR_INVAL);
    b.mu_k = 0.3, a.damping = -1;
    ck_assert_int_eq(fr_contact_params_combine(&a, &b, 2.0, 0.001, &p), FR_ERR_INVAL);
    a.damping = 1e3, a.stiffness = 0;
    ck_assert_int_eq(fr_contact_params_combine(&a, &b, 0.0, 0.001, &p), FR_ERR_INVAL);
    /* reduced masses; 0 or ∞ is a static body */
    ck_assert_rel(fr_contact_reduced_mass(1, 1), 0.5, 1e-15, 0);
    ck_assert_rel(fr_contact_reduced_mass(2, INFINITY), 2, 1e-15, 0);
    ck_assert_rel(fr_contact_reduced_mass(0, 3), 3, 1e-15, 0);
    ck_assert_double_eq(fr_contact_reduced_mass(0, 0), 0);
    /* every field's range */
    fr_contact_params ok = fr_contact_params_scaled(1, 0.001, 0, -1, 0.5, 0.4);
    ck_assert_int_eq(fr_contact_params_check(&ok), FR_OK);
    fr_contact_params bad[9];
    for (int i = 0; i < 9; i++) bad[i] = ok;
    bad[0].law = 7;
    bad[1].stiff_n = 0;
    bad[2].stiff_t = NAN;
    bad[3].damp_n = -1;
    bad[4].damp_t = INFINITY;
    bad[5].mu_k = 0.6;
    bad[6].damping_ramp = -1;
    bad[7].max_force = -2;
    bad[8].normal_blend = 1.0;
    for (int i = 0; i < 9; i++) ck_assert_int_eq(fr_contact_params_check(&bad[i]), FR_ERR_INVAL);
}
END_TEST

START_TEST(test_eval_errors_and_empty)
{
    fr_contact_params p = fr_contact_params_scaled(1, 0.001, 0, -1, 0.5, 0.4);
    fr_pose pa = pose_of(fr_v3(0, 0, 0.499), fr_q_identity());
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(pa, fr_v3(0.5, 0.5, 0.5), fr_v3(0, 0, 1), 0.0, pl);
    ck_assert_int_eq(tp_build(pl, np, 1e-13, &tp), 6);
    fr_contact_body A = still(pa), B = still(fr_pose_identity());
    fr_contact_state st = {0};
    fr_contact_result r;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
    ck_assert_int_eq(st.active, 1);
    /* an empty intersection: no contact, the pair's state forgotten */
    fr_polyhedron_out empty = tp.out;
    empty.nfaces = 0;
    ck_assert_int_eq(fr_contact_eval(&p, &empty, &A, &B, &st, &r), FR_OK);
    ck_assert_int_eq(r.in_contact, 0);
    ck_assert_int_eq(st.active, 0);
    ck_assert_double_eq(fr_v3_norm(r.force_a), 0);
    /* non-finite body state */
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
    fr_contact_body An = A;
    An.v.x = NAN;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &An, &B, &st, &r), FR_ERR_NUMERIC);
    ck_assert_int_eq(st.active, 0);
    ck_assert_double_eq(fr_v3_norm(r.force_a), 0);
    /* a face index out of range, bad params */
    tp.vidx[2] = 999;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_ERR_INVAL);
    tp.vidx[2] = 0;
    p.mu_k = 0.9;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_ERR_INVAL);
    ck_assert_int_eq(fr_contact_eval(NULL, &tp.out, &A, &B, &st, &r), FR_ERR_INVAL);
    /* force cap */
    p = fr_contact_params_scaled(1, 0.001, 0, -1, 0.5, 0.4);
    p.max_force = 1.0;
    fr_contact_state s2 = {0};
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &s2, &r), FR_OK);
    ck_assert_rel(r.normal_force, 1.0, 1e-12, 0);
}
END_TEST

START_TEST(test_no_allocation)
{
    if (!fri_watch_available()) return; /* sanitizer build: allocation counters unavailable */
    frtest_rng rng = {9};
    fr_pose pa = pose_of(fr_v3(0, 0, 0.3), rand_q(&rng));
    fr_pose pb = pose_of(fr_v3(0.05, 0, -0.3), rand_q(&rng));
    tp_plane pl[12];
    tp_poly tp;
    int np = planes_box_box(pa, fr_v3(0.4, 0.3, 0.25), pb, fr_v3(0.35, 0.3, 0.3), pl);
    ck_assert_int_ge(tp_build(pl, np, 1e-12, &tp), 4);
    fr_contact_params p = fr_contact_params_scaled(1, 0.001, 0, -1, 0.5, 0.4);
    fr_contact_body A = body_at(pa, fr_v3(0.1, 0, 0), fr_v3(0, 0.2, 0)), B = still(pb);
    fr_contact_state st = {0};
    fr_contact_result r;
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    for (int i = 0; i < 100; i++) fr_contact_eval(&p, &tp.out, &A, &B, &st, &r);
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_eq(c.allocs, 0);
    ck_assert_int_eq(c.frees, 0);
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.io, 0);
    ck_assert_int_eq(c.waits, 0);
    ck_assert(r.normal_force > 0);
}
END_TEST

/* The symplectic Euler step of m ẍ = −Kx − Dẋ with the default gains is stable up to an
 * effective mass m_red/4 (γ(κ + 2β) < 4), and unstable past it: the bound is the real one. */
START_TEST(test_explicit_stability_bound)
{
    const double m = 1.0, dt = 0.005;
    fr_contact_params p = fr_contact_params_scaled(m, dt, 0, -1, 0, 0);
    ck_assert_rel(p.stiff_n * dt * dt / m + 2 * p.damp_n * dt / m, 1.0, 1e-12, 0);
    const double gammas[4] = {1.0, 3.0, 3.9, 4.1};
    for (int k = 0; k < 4; k++) {
        double me = m / gammas[k], x = 1e-3, v = 0;
        for (int i = 0; i < 4000; i++) {
            v += dt * (-p.stiff_n * x - p.damp_n * v) / me;
            x += dt * v;
        }
        if (gammas[k] < 4)
            ck_assert_double_le(fabs(x), 1e-9);
        else
            ck_assert_double_ge(fabs(x), 1.0);
    }
}
END_TEST

/* ------------------------------------------------------------------ simulations */

/* A box integrated by semi-implicit (symplectic) Euler: v and the world angular momentum L get
 * the forces first, then the pose moves with the new velocities. */
typedef struct sim_box {
    fr_vec3 half;    /* m */
    double m;        /* kg */
    fr_vec3 inertia; /* principal moments in body axes, kg·m² */
    fr_pose pose;    /* centre of mass */
    fr_vec3 v;       /* m/s */
    fr_vec3 L;       /* angular momentum about the centre, world, kg·m²/s */
} sim_box;

static sim_box sim_make(fr_vec3 half, double m, fr_pose pose)
{
    sim_box b = {half,
                 m,
                 fr_v3(m * (half.y * half.y + half.z * half.z) / 3,
                       m * (half.x * half.x + half.z * half.z) / 3,
                       m * (half.x * half.x + half.y * half.y) / 3),
                 pose,
                 fr_v3_zero(),
                 fr_v3_zero()};
    return b;
}
static fr_vec3 sim_omega(const sim_box *b)
{
    fr_vec3 lb = fr_q_unrotate(b->pose.q, b->L);
    return fr_q_rotate(b->pose.q,
                       fr_v3(lb.x / b->inertia.x, lb.y / b->inertia.y, lb.z / b->inertia.z));
}
static void sim_set_omega(sim_box *b, fr_vec3 w)
{
    fr_vec3 wb = fr_q_unrotate(b->pose.q, w);
    b->L = fr_q_rotate(b->pose.q, fr_v3_mul(wb, b->inertia));
}
static void sim_step(sim_box *b, fr_vec3 F, fr_vec3 T, double dt)
{
    b->v = fr_v3_mad(b->v, dt / b->m, F);
    b->L = fr_v3_mad(b->L, dt, T);
    fr_vec3 w = sim_omega(b);
    b->pose.p = fr_v3_mad(b->pose.p, dt, b->v);
    b->pose.q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(w, dt)), b->pose.q));
}
/*
 * One step with the contact treated linearly implicitly (docs/contact.md, "Integration"): with
 * ν = (ω; v), M = diag(I_world, m), X the map from ν to the twist at the contact point c and the
 * result's K, D about c: (M + h·XᵀDX + h²·XᵀKX)·ν' = M·ν + h·(F_ext + W + XᵀDX·ν), where W is the
 * evaluated wrench about the centre of mass. Gyroscopic terms are left out (slow rotations).
 */
static void sim_step_implicit(sim_box *b, const fr_contact_result *r, fr_vec3 Fext, double dt)
{
    if (!r->in_contact) {
        sim_step(b, Fext, fr_v3_zero(), dt);
        return;
    }
    fr_mat3 R = fr_q_to_m3(b->pose.q);
    fr_mat3 Iw = fr_m3_rotate(R, fr_m3_diag(b->inertia));
    fr_vec3 w = sim_omega(b);
    fr_mat3 rx = fr_m3_skew(fr_v3_sub(r->point, b->pose.p));
    double X[6][6] = {{0}};
    for (int i = 0; i < 3; i++) {
        X[i][i] = X[i + 3][i + 3] = 1;
        for (int j = 0; j < 3; j++) X[i + 3][j] = -rx.m[i][j]; /* v_c = v − r×ω */
    }
    double A[36], rhs[6], nu[6] = {w.x, w.y, w.z, b->v.x, b->v.y, b->v.z};
    double Fx[6] = {r->torque_a.x,         r->torque_a.y,         r->torque_a.z,
                    Fext.x + r->force_a.x, Fext.y + r->force_a.y, Fext.z + r->force_a.z};
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) {
            double sd = 0, sk = 0; /* (XᵀDX)_ij, (XᵀKX)_ij */
            for (int k = 0; k < 6; k++)
                for (int l = 0; l < 6; l++) {
                    sd += X[k][i] * r->D.m[k][l] * X[l][j];
                    sk += X[k][i] * r->K.m[k][l] * X[l][j];
                }
            double mij = i < 3 ? (j < 3 ? Iw.m[i][j] : 0) : (i == j ? b->m : 0);
            A[i * 6 + j] = mij + dt * sd + dt * dt * sk;
        }
    }
    for (int i = 0; i < 6; i++) {
        double mnu = 0, dnu = 0;
        for (int j = 0; j < 6; j++) {
            double mij = i < 3 ? (j < 3 ? Iw.m[i][j] : 0) : (i == j ? b->m : 0);
            mnu += mij * nu[j];
            double sd = 0;
            for (int k = 0; k < 6; k++)
                for (int l = 0; l < 6; l++) sd += X[k][i] * r->D.m[k][l] * X[l][j];
            dnu += sd * nu[j];
        }
        rhs[i] = mnu + dt * (Fx[i] + dnu);
    }
    ck_assert(fr_lu_solve(A, 6, rhs));
    b->v = fr_v3(rhs[3], rhs[4], rhs[5]);
    fr_vec3 wn = fr_v3(rhs[0], rhs[1], rhs[2]);
    b->L = fr_m3_mulv(Iw, wn);
    b->pose.p = fr_v3_mad(b->pose.p, dt, b->v);
    b->pose.q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(wn, dt)), b->pose.q));
}

static fr_contact_body sim_body(const sim_box *b)
{
    return body_at(b->pose, b->v, sim_omega(b));
}
/* Box against the static ground gn·x <= 0. */
static void sim_ground_contact(const fr_contact_params *p, const sim_box *b, fr_vec3 gn,
                               fr_contact_state *st, fr_contact_result *r)
{
    tp_plane pl[7];
    tp_poly tp;
    int np = planes_box_ground(b->pose, b->half, gn, 0.0, pl);
    tp_build(pl, np, 1e-13, &tp);
    fr_contact_body A = sim_body(b), B = still(fr_pose_identity());
    ck_assert_int_eq(fr_contact_eval(p, &tp.out, &A, &B, st, r), FR_OK);
}
static double sim_energy(const sim_box *b, fr_vec3 g)
{
    return 0.5 * b->m * fr_v3_norm2(b->v) + 0.5 * fr_v3_dot(sim_omega(b), b->L) -
           b->m * fr_v3_dot(g, b->pose.p);
}

/* A 1 × 1 × 2 block, 1 kg (the paper's), resting: settles at the depth K·d = m·g predicts. */
START_TEST(test_sim_rest_depth)
{
    const double dts[2] = {0.005, 0.001};
    for (int k = 0; k < 2; k++) {
        double dt = dts[k];
        fr_contact_params p = fr_contact_params_scaled(1.0, dt, 0, -1, 0.5, 0.5);
        sim_box b = sim_make(fr_v3(0.5, 0.5, 1.0), 1.0, pose_of(fr_v3(0, 0, 1.0), fr_q_identity()));
        fr_contact_state st = {0};
        fr_contact_result r;
        for (int i = 0; i < (int)(5.0 / dt); i++) {
            sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
            sim_step(&b, fr_v3_add(r.force_a, fr_v3(0, 0, -G * b.m)), r.torque_a, dt);
        }
        double d_exp = b.m * G / p.stiff_n;
        ck_assert_rel(r.mean_depth, d_exp, 0.01, 0);
        ck_assert_rel(1.0 - b.pose.p.z, d_exp, 0.01, 0);
        ck_assert_double_le(fr_v3_norm(b.v), 1e-6);
        ck_assert_double_le(fr_v3_norm(sim_omega(&b)) * 1.0, 1e-6);
        ck_assert_int_eq(r.sliding, 0);
    }
}
END_TEST

/* With zero damping the contact is a conservative spring: a dropped box never comes back above
 * its drop height; a tilted, tumbling one never gains mechanical energy. */
/* With zero damping the contact is a conservative spring, but a fixed step can gain energy where
 * the spring starts and stops acting (explicit symplectic Euler measured up to +16% rebound at
 * κ = 0.2). The linearly implicit step never does: a dropped box never comes back above its drop
 * height; a tilted, tumbling one never gains mechanical energy. */
START_TEST(test_sim_drop_no_energy_gain)
{
    const double dts[2] = {0.005, 0.001};
    for (int k = 0; k < 2; k++)
        for (double h0 = 0.02; h0 < 0.5; h0 *= 1.13) {
            double dt = dts[k];
            fr_contact_params p = fr_contact_params_scaled(1.0, dt, 0, 0.0, 0.0, 0.0);
            ck_assert_double_eq(p.damp_n, 0.0);
            sim_box b = sim_make(fr_v3(0.5, 0.5, 0.25), 1.0,
                                 pose_of(fr_v3(0, 0, 0.25 + h0), fr_q_identity()));
            fr_contact_state st = {0};
            fr_contact_result r;
            int contacts = 0;
            double hmax = 0;
            for (int i = 0; i < (int)(3.0 / dt); i++) {
                sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
                contacts += r.in_contact;
                if (contacts > 0) hmax = fmax(hmax, b.pose.p.z - 0.25);
                sim_step_implicit(&b, &r, fr_v3(0, 0, -G * b.m), dt);
            }
            ck_assert_int_gt(contacts, 0);
            ck_assert_double_le(hmax, h0);
        }
    /* tilted drop, frictionless: mechanical energy out of contact never exceeds the start */
    for (int k = 0; k < 2; k++)
        for (int trial = 0; trial < 4; trial++) {
            double dt = dts[k];
            fr_contact_params p = fr_contact_params_scaled(1.0, dt, 0, 0.0, 0.0, 0.0);
            sim_box b = sim_make(fr_v3(0.4, 0.3, 0.2), 1.0,
                                 pose_of(fr_v3(0, 0, 0.6 + 0.1 * trial),
                                         fr_q_axis_angle(fr_v3_normalize(fr_v3(1, 2, 0)), 0.5)));
            sim_set_omega(&b, fr_v3(0.5, -1.0, 0.3));
            fr_vec3 g = fr_v3(0, 0, -G);
            double E0 = sim_energy(&b, g), Emax = -INFINITY;
            fr_contact_state st = {0};
            fr_contact_result r;
            int contacts = 0;
            for (int i = 0; i < (int)(3.0 / dt); i++) {
                sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
                contacts += r.in_contact;
                if (contacts && !r.in_contact) Emax = fmax(Emax, sim_energy(&b, g));
                sim_step_implicit(&b, &r, fr_v3_scale(g, b.m), dt);
            }
            ck_assert_int_gt(contacts, 0);
            ck_assert(isfinite(Emax)); /* it bounced off at least once */
            ck_assert_double_le(Emax, E0);
        }
}
END_TEST

static void sim_advance(sim_box *b, const fr_contact_result *r, fr_vec3 Fext, double dt,
                        int implicit)
{
    if (implicit)
        sim_step_implicit(b, r, Fext, dt);
    else
        sim_step(b, fr_v3_add(r->force_a, Fext), r->torque_a, dt);
}

/* experiments.md §4 at 30° (tan θ = 0.5774), in the slope's frame (gravity tilted) */
static double slope_run(double mu, double dt, int implicit, double t_end, double *creep,
                        double *accel, int *slips_late)
{
    const double th = atan(0.5774);
    fr_vec3 g = fr_v3(G * sin(th), 0, -G * cos(th));
    fr_contact_params p = fr_contact_params_scaled(1.0, dt, 0, -1, mu, mu);
    double d0 = G * cos(th) / p.stiff_n; /* rest depth */
    sim_box b =
        sim_make(fr_v3(0.25, 0.25, 0.1), 1.0, pose_of(fr_v3(0, 0, 0.1 - d0), fr_q_identity()));
    fr_contact_state st = {0};
    fr_contact_result r;
    int n = (int)(t_end / dt + 0.5), n1 = (int)(1.0 / dt + 0.5);
    double x1 = 0, dev = 0;
    double st_ = 0, sv = 0, stt = 0, stv = 0; /* least squares v = v0 + a t over t >= 1 s */
    int cnt = 0;
    *slips_late = 0;
    for (int i = 0; i <= n; i++) {
        double t = i * dt;
        if (i == n1) x1 = b.pose.p.x;
        if (i >= n1) {
            dev = fmax(dev, fabs(b.pose.p.x - x1));
            st_ += t, sv += b.v.x, stt += t * t, stv += t * b.v.x, cnt++;
        }
        if (i == n) break;
        sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
        if (i >= n1 && r.sliding) (*slips_late)++;
        sim_advance(&b, &r, fr_v3_scale(g, b.m), dt, implicit);
    }
    *creep = dev;
    *accel = (cnt * stv - st_ * sv) / (cnt * stt - st_ * st_);
    return G * (sin(th) - mu * cos(th));
}

START_TEST(test_sim_slope)
{
    const double dts[2] = {0.005, 0.001};
    for (int impl = 0; impl < 2; impl++)
        for (int k = 0; k < 2; k++) {
            double creep, acc;
            int slips;
            /* μ = 0.59 > tan θ: holds; after settling (1 s) it moves < 1 µm in 10 s */
            slope_run(0.59, dts[k], impl, 11.0, &creep, &acc, &slips);
            ck_assert_msg(creep < 1e-6, "creep %g m (dt %g, implicit %d)", creep, dts[k], impl);
            ck_assert_int_eq(slips, 0);
            /* μ = 0.56 < tan θ: slides with a = g(sin θ − μ cos θ) */
            double a_exp = slope_run(0.56, dts[k], impl, 5.0, &creep, &acc, &slips);
            ck_assert_msg(fabs(acc - a_exp) <= 0.02 * a_exp, "a = %g vs %g (dt %g, implicit %d)",
                          acc, a_exp, dts[k], impl);
        }
}
END_TEST

/* experiments.md §2: a block pulled through a spring whose end moves at constant speed V. */
START_TEST(test_sim_stick_slip)
{
    const double m = 1.0, mus = 0.6, muk = 0.4, ks = 100.0, V = 0.01;
    const double peak_exp = mus * m * G, trough_exp = (2 * muk - mus) * m * G;
    const double stick_exp = 2 * (mus - muk) * m * G / (ks * V);
    const double dts[2] = {0.005, 0.001};
    for (int impl = 0; impl < 2; impl++)
        for (int k = 0; k < 2; k++) {
            double dt = dts[k];
            fr_contact_params p = fr_contact_params_scaled(m, dt, 0, -1, mus, muk);
            double d0 = m * G / p.stiff_n;
            sim_box b = sim_make(fr_v3(0.25, 0.25, 0.1), m,
                                 pose_of(fr_v3(0, 0, 0.1 - d0), fr_q_identity()));
            fr_contact_state st = {0};
            fr_contact_result r;
            int prev = 0, nslip = 0;
            double t_stick_start = 0, peak = 0, trough = INFINITY;
            double peaks[16], troughs[16], sticks[16];
            int np = 0, nt = 0, ns = 0;
            for (int i = 0; i < (int)(30.0 / dt); i++) {
                double t = i * dt;
                double fs = ks * (V * t - b.pose.p.x); /* spring force on the block */
                sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
                if (r.sliding && !prev) { /* stick → slip: the peak */
                    nslip++;
                    if (nslip > 1 && ns < 16) sticks[ns++] = t - t_stick_start;
                    if (np < 16) peaks[np++] = peak;
                    trough = INFINITY;
                }
                if (!r.sliding && prev) { /* slip → stick: the trough */
                    t_stick_start = t;
                    if (nt < 16) troughs[nt++] = trough;
                    peak = 0;
                }
                peak = fmax(peak, fs);
                trough = fmin(trough, fs);
                prev = r.sliding;
                sim_advance(&b, &r, fr_v3(fs, 0, -G * m), dt, impl);
            }
            ck_assert_int_ge(np, 5);
            for (int i = 0; i < np; i++)
                ck_assert_msg(fabs(peaks[i] - peak_exp) <= 0.03 * peak_exp,
                              "peak %d = %g vs %g (dt %g, implicit %d)", i, peaks[i], peak_exp, dt,
                              impl);
            for (int i = 0; i < nt; i++)
                ck_assert_msg(fabs(troughs[i] - trough_exp) <= 0.10 * trough_exp,
                              "trough %d = %g vs %g (dt %g, implicit %d)", i, troughs[i],
                              trough_exp, dt, impl);
            for (int i = 0; i < ns; i++)
                ck_assert_msg(fabs(sticks[i] - stick_exp) <= 0.10 * stick_exp,
                              "stick %d = %g s vs %g (dt %g, implicit %d)", i, sticks[i], stick_exp,
                              dt, impl);
        }
}
END_TEST

/* A box spinning flat stops in I·ω0 / (μ·N·r̄), r̄ = mean |r| over its square footprint. */
START_TEST(test_sim_spin_stop)
{
    const double dts[2] = {0.005, 0.001};
    for (int impl = 0; impl < 2; impl++)
        for (int k = 0; k < 2; k++) {
            double dt = dts[k], mu = 0.5, w0 = 10.0;
            fr_contact_params p = fr_contact_params_scaled(1.0, dt, 0, -1, mu, mu);
            double d0 = G / p.stiff_n;
            sim_box b = sim_make(fr_v3(0.25, 0.25, 0.1), 1.0,
                                 pose_of(fr_v3(0, 0, 0.1 - d0), fr_q_identity()));
            sim_set_omega(&b, fr_v3(0, 0, w0));
            double T_exp = b.inertia.z * w0 / (mu * G * rect_mean_radius(0.5, 0.5));
            fr_contact_state st = {0};
            fr_contact_result r;
            double t_stop = -1;
            for (int i = 0; i < (int)(2 * T_exp / dt); i++) {
                sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
                if (i > 0 && (!r.sliding || sim_omega(&b).z <= 0)) {
                    t_stop = i * dt;
                    break;
                }
                sim_advance(&b, &r, fr_v3(0, 0, -G), dt, impl);
            }
            ck_assert_msg(fabs(t_stop - T_exp) <= 0.10 * T_exp,
                          "stop at %g s vs %g (dt %g, implicit %d)", t_stop, T_exp, dt, impl);
        }
}
END_TEST

/* Two free boxes colliding with friction, no gravity: linear and angular momentum conserved. */
START_TEST(test_sim_momentum)
{
    const double dt = 0.001;
    sim_box a =
        sim_make(fr_v3(0.3, 0.2, 0.25), 2.0, pose_of(fr_v3(0, 0, 0), rand_q(&(frtest_rng){1})));
    sim_box b = sim_make(fr_v3(0.25, 0.3, 0.2), 1.0,
                         pose_of(fr_v3(0.9, 0.1, 0.05), rand_q(&(frtest_rng){2})));
    a.v = fr_v3(1.0, 0.1, 0), b.v = fr_v3(-0.8, 0, 0.05);
    sim_set_omega(&a, fr_v3(0, 0, 2)), sim_set_omega(&b, fr_v3(1, 0, -1));
    fr_contact_params p =
        fr_contact_params_scaled(fr_contact_reduced_mass(2, 1), dt, 0, -1, 0.6, 0.4);
    fr_contact_state st = {0};
    fr_contact_result r;
    fr_vec3 P0 = fr_v3_add(fr_v3_scale(a.v, a.m), fr_v3_scale(b.v, b.m));
    fr_vec3 L0 =
        fr_v3_add(fr_v3_add(a.L, b.L), fr_v3_add(fr_v3_cross(a.pose.p, fr_v3_scale(a.v, a.m)),
                                                 fr_v3_cross(b.pose.p, fr_v3_scale(b.v, b.m))));
    double Nmax = 0;
    int stuck = 0;
    for (int i = 0; i < 1000; i++) {
        tp_plane pl[12];
        tp_poly tp;
        int np = planes_box_box(a.pose, a.half, b.pose, b.half, pl);
        tp_build(pl, np, 1e-13, &tp);
        fr_contact_body A = sim_body(&a), B = sim_body(&b);
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
        Nmax = fmax(Nmax, r.normal_force);
        stuck += r.in_contact && !r.sliding;
        sim_step(&a, r.force_a, r.torque_a, dt);
        sim_step(&b, r.force_b, r.torque_b, dt);
    }
    fr_vec3 P1 = fr_v3_add(fr_v3_scale(a.v, a.m), fr_v3_scale(b.v, b.m));
    fr_vec3 L1 =
        fr_v3_add(fr_v3_add(a.L, b.L), fr_v3_add(fr_v3_cross(a.pose.p, fr_v3_scale(a.v, a.m)),
                                                 fr_v3_cross(b.pose.p, fr_v3_scale(b.v, b.m))));
    ck_assert_double_gt(Nmax, 10.0); /* they did collide */
    ck_assert_int_gt(stuck, 0);      /* and friction acted */
    ck_assert_double_le(fr_v3_dist(P0, P1), 1e-12 * fr_v3_norm(P0));
    ck_assert_double_le(fr_v3_dist(L0, L1), 1e-11 * fr_v3_norm(L0));
}
END_TEST

/* Gains past the explicit limit (κ = 4, β = 2: κ + 2β = 8): the linearly implicit step with the
 * result's K and D settles the paper's 1 × 1 × 2 block at the predicted depth; explicit diverges.
 */
START_TEST(test_sim_implicit_stiff)
{
    const double dt = 0.005;
    for (int impl = 0; impl < 2; impl++) {
        fr_contact_params p = fr_contact_params_scaled(1.0, dt, 4.0, 2.0, 0.5, 0.5);
        sim_box b = sim_make(fr_v3(0.5, 0.5, 1.0), 1.0,
                             pose_of(fr_v3(0, 0, 1.0), fr_q_axis_angle(fr_v3(1, 0, 0), 0.01)));
        fr_contact_state st = {0};
        fr_contact_result r;
        double vmax = 0;
        for (int i = 0; i < (int)(5.0 / dt) && vmax < 100; i++) {
            sim_ground_contact(&p, &b, fr_v3(0, 0, 1), &st, &r);
            sim_advance(&b, &r, fr_v3(0, 0, -G), dt, impl);
            vmax = fmax(vmax, fr_v3_norm(b.v));
        }
        if (impl) {
            ck_assert_rel(r.mean_depth, G / p.stiff_n, 0.01, 0);
            ck_assert_double_le(fr_v3_norm(b.v), 1e-6);
            ck_assert_double_le(fr_v3_norm(sim_omega(&b)), 1e-6);
        } else {
            ck_assert_double_ge(vmax, 1.0); /* the explicit step blows up */
        }
    }
}
END_TEST

/* ------------------------------------------------------------------ with src/collision */

/* A 0.8 × 0.6 × 0.5 m box and a 6 × 6 × 1 m ground with the narrow phase's work memory. */
typedef struct box_ground {
    fr_shape *box, *ground;
    fr_vec3 ha, hg; /* half extents, m */
    fr_collide_work w;
    fr_polyhedron_out out;
} box_ground;

static box_ground box_ground_make(void)
{
    box_ground f = {.ha = fr_v3(0.4, 0.3, 0.25), .hg = fr_v3(3, 3, 0.5)};
    ck_assert_int_eq(fr_shape_create_box(f.ha, &f.box), FR_OK);
    ck_assert_int_eq(fr_shape_create_box(f.hg, &f.ground), FR_OK);
    const fr_shape *all[2] = {f.box, f.ground};
    int mf = fr_shapes_max_faces(all, 2);
    ck_assert_int_eq(fr_collide_work_init(&f.w, mf, NULL), FR_OK);
    ck_assert_int_eq(fr_polyhedron_out_init(&f.out, mf, NULL), FR_OK);
    return f;
}

/* fr_collide_pair's intersections give the same contact as the brute-force half-spaces. */
START_TEST(test_collide_pair_matches_bruteforce)
{
    box_ground fx = box_ground_make();
    fr_shape *box = fx.box, *ground = fx.ground;
    fr_vec3 ha = fx.ha, hg = fx.hg;
    fr_collide_work w = fx.w;
    fr_polyhedron_out out = fx.out;
    frtest_rng rng = {21};
    fr_contact_params p = fr_contact_params_scaled(1.0, 0.001, 0, -1, 0.6, 0.4);
    int done = 0;
    for (int k = 0; k < 60; k++) {
        fr_pose pa = pose_of(fr_v3_add(fr_v3(0, 0, 0.25), rand_v3(&rng, 0.15)), rand_q(&rng));
        fr_pose pg = pose_of(fr_v3(0, 0, -0.5), fr_q_axis_angle(fr_v3(0, 1, 0), 0.1 * (k % 3)));
        fr_collide_cache cache = {0};
        int hit = fr_collide_pair(box, pa, ground, pg, &cache, &w, &out);
        ck_assert_int_ge(hit, 0);
        tp_plane pl[12];
        tp_poly tp;
        int np = planes_box_box(pa, ha, pg, hg, pl);
        int nf = tp_build(pl, np, 1e-12, &tp);
        if (!hit) {
            ck_assert(nf == 0 || tp.out.volume < 1e-9);
            continue;
        }
        fr_contact_body A = body_at(pa, rand_v3(&rng, 0.5), rand_v3(&rng, 1)), B = still(pg);
        fr_contact_state s1 = {0}, s2 = {0};
        fr_contact_result r1, r2;
        ck_assert_int_eq(fr_contact_eval(&p, &out, &A, &B, &s1, &r1), FR_OK);
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &s2, &r2), FR_OK);
        double F = fmax(1.0, fr_v3_norm(r2.force_a));
        ck_assert_rel(r1.volume, r2.volume, 1e-9, 1e-12);
        ck_assert_double_le(fr_v3_dist(r1.normal, r2.normal), 1e-9);
        ck_assert_double_le(fr_v3_dist(r1.force_a, r2.force_a), 1e-8 * F);
        ck_assert_double_le(fr_v3_dist(r1.torque_a, r2.torque_a), 1e-8 * F);
        done++;
    }
    ck_assert_int_ge(done, 20);
    fr_collide_work_free(&w);
    fr_polyhedron_out_free(&out);
    fr_shape_destroy(box);
    fr_shape_destroy(ground);
}
END_TEST

/* fr_contact_eval_ex: with FR_CONTACT_EVAL_CHECKED the same bytes as fr_contact_eval (result and
 * state over several ticks of random box-on-ground contacts from the real narrow phase); without
 * flags it still rejects bad indices and parameters. */
START_TEST(test_eval_ex_matches_eval)
{
    box_ground fx = box_ground_make();
    fr_shape *box = fx.box, *ground = fx.ground;
    fr_collide_work w = fx.w;
    fr_polyhedron_out out = fx.out;
    frtest_rng rng = {57};
    fr_contact_params p = fr_contact_params_scaled(1.0, 0.001, 0, -1, 0.6, 0.4);
    int done = 0;
    for (int k = 0; k < 40; k++) {
        fr_vec3 c0 = fr_v3_add(fr_v3(0, 0, 0.25), rand_v3(&rng, 0.1));
        fr_quat q0 = rand_q(&rng);
        fr_vec3 v = rand_v3(&rng, 0.5), om = rand_v3(&rng, 1);
        fr_pose pg = pose_of(fr_v3(0, 0, -0.5), fr_q_identity());
        fr_contact_state s1 = {0}, s2 = {0};
        for (int t = 0; t < 5; t++) {
            fr_pose pa = pose_of(fr_v3_mad(c0, 0.001 * t, v), q0);
            fr_collide_cache cache = {0};
            int hit = fr_collide_pair(box, pa, ground, pg, &cache, &w, &out);
            ck_assert_int_ge(hit, 0);
            if (!hit) break;
            fr_contact_body A = body_at(pa, v, om), B = still(pg);
            fr_contact_result r1, r2;
            memset(&r1, 0x5a, sizeof r1);
            memset(&r2, 0x5a, sizeof r2);
            ck_assert_int_eq(fr_contact_eval(&p, &out, &A, &B, &s1, &r1), FR_OK);
            ck_assert_int_eq(
                fr_contact_eval_ex(&p, &out, &A, &B, &s2, &r2, FR_CONTACT_EVAL_CHECKED), FR_OK);
            ck_assert_int_eq(r1.in_contact, 1);
            ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
            ck_assert(memcmp(&s1, &s2, sizeof s1) == 0);
            done++;
        }
        if (k == 0) {
            /* bad input is still caught without the flag */
            fr_pose pa = pose_of(c0, q0);
            fr_collide_cache cache = {0};
            ck_assert_int_eq(fr_collide_pair(box, pa, ground, pg, &cache, &w, &out), 1);
            fr_contact_body A = still(pa), B = still(pg);
            fr_contact_result r;
            fr_contact_state st = {0};
            int keep = out.vidx[1];
            out.vidx[1] = out.nverts;
            ck_assert_int_eq(fr_contact_eval_ex(&p, &out, &A, &B, &st, &r, 0u), FR_ERR_INVAL);
            out.vidx[1] = keep;
            fr_contact_params bad = p;
            bad.mu_k = 0.9;
            ck_assert_int_eq(fr_contact_eval_ex(&bad, &out, &A, &B, &st, &r, 0u), FR_ERR_INVAL);
            ck_assert_int_eq(fr_contact_eval_ex(&p, &out, &A, &B, &st, &r, 0u), FR_OK);
        }
    }
    ck_assert_int_ge(done, 100);
    fr_collide_work_free(&w);
    fr_polyhedron_out_free(&out);
    fr_shape_destroy(box);
    fr_shape_destroy(ground);
}
END_TEST

/* Scenes through the real narrow phase: the paper's block and a standing cylinder (a 16-gon
 * prism) resting on a ground box settle at the depth K·d = m·g predicts; a sphere and a capsule
 * (volume-matched polytopes) get a penalty force along the ground normal, decreasing with the
 * depth and bounded by K × their polytope's depth. */
START_TEST(test_collide_pair_scenes)
{
    fr_shape *shapes[5] = {NULL};
    ck_assert_int_eq(fr_shape_create_box(fr_v3(0.5, 0.5, 1.0), &shapes[0]), FR_OK);
    ck_assert_int_eq(fr_shape_create_cylinder(0.3, 0.2, 0, &shapes[1]), FR_OK);
    ck_assert_int_eq(fr_shape_create_sphere(0.3, 0, &shapes[2]), FR_OK);
    ck_assert_int_eq(fr_shape_create_capsule(0.2, 0.3, 0, &shapes[3]), FR_OK);
    ck_assert_int_eq(fr_shape_create_box(fr_v3(5, 5, 0.5), &shapes[4]), FR_OK);
    int mf = fr_shapes_max_faces((const fr_shape *const *)shapes, 5);
    fr_collide_work w;
    fr_polyhedron_out out;
    ck_assert_int_eq(fr_collide_work_init(&w, mf, NULL), FR_OK);
    ck_assert_int_eq(fr_polyhedron_out_init(&out, mf, NULL), FR_OK);
    const double dt = 0.005;
    fr_pose pg = pose_of(fr_v3(0, 0, -0.5), fr_q_identity());
    fr_pose starts[2] = {pose_of(fr_v3(0, 0, 1.0), fr_q_identity()),
                         pose_of(fr_v3(0, 0, 0.2), fr_q_identity())};
    for (int s = 0; s < 2; s++) {
        double m;
        fr_vec3 com;
        fr_mat3 I;
        fr_shape_mass(shapes[s], 1.0, &m, &com, &I);
        fr_shape_mass(shapes[s], 1.0 / m, &m, &com, &I); /* 1 kg */
        sim_box b = sim_make(fr_v3(1, 1, 1), m, starts[s]);
        b.inertia = fr_v3(I.m[0][0], I.m[1][1], I.m[2][2]);
        fr_contact_params p = fr_contact_params_scaled(m, dt, 0, -1, 0.5, 0.5);
        fr_contact_state st = {0};
        fr_collide_cache cache = {0};
        fr_contact_result r;
        for (int i = 0; i < (int)(5.0 / dt); i++) {
            int hit = fr_collide_pair(shapes[s], b.pose, shapes[4], pg, &cache, &w, &out);
            ck_assert_int_ge(hit, 0);
            fr_contact_body A = sim_body(&b), B = still(pg);
            ck_assert_int_eq(fr_contact_eval(&p, &out, &A, &B, &st, &r), FR_OK);
            sim_step(&b, fr_v3_add(r.force_a, fr_v3(0, 0, -G * m)), r.torque_a, dt);
        }
        ck_assert_int_eq(r.in_contact, 1);
        ck_assert_rel(r.normal_force, m * G, 1e-6, 0);
        ck_assert_rel(r.mean_depth, m * G / p.stiff_n, 0.01, 0);
        ck_assert_double_le(fr_v3_norm(b.v), 1e-6);
        ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-9);
    }
    /* curved shapes pressed into the ground: force = K·V/A up the ground normal, growing with
     * depth, continuous towards 0 */
    fr_contact_params p = fr_contact_params_scaled(1.0, dt, 0, -1, 0.5, 0.5);
    for (int s = 2; s < 4; s++) {
        double prev = INFINITY;
        for (double d = 0.05; d > 1e-6; d *= 0.5) {
            fr_quat q = s == 3 ? fr_q_axis_angle(fr_v3(1, 0, 0), M_PI / 2) : fr_q_identity();
            double r0 = s == 2 ? 0.3 : 0.2;
            fr_pose pa = pose_of(fr_v3(0.1, 0.2, r0 - d), q);
            fr_collide_cache cache = {0};
            int hit = fr_collide_pair(shapes[s], pa, shapes[4], pg, &cache, &w, &out);
            ck_assert_int_ge(hit, 0);
            if (!hit) continue; /* the polytope's bottom may sit above the true surface */
            fr_contact_body A = still(pa), B = still(pg);
            fr_contact_state st = {0};
            fr_contact_result r;
            ck_assert_int_eq(fr_contact_eval(&p, &out, &A, &B, &st, &r), FR_OK);
            ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-9);
            ck_assert_rel(r.normal_force, p.stiff_n * r.volume / r.area, 1e-9, 0);
            ck_assert_double_le(fr_v3_norm(fr_v3_cross(r.force_a, fr_v3(0, 0, 1))),
                                1e-9 * r.normal_force);
            ck_assert_double_le(r.normal_force, prev);
            ck_assert(r.mean_depth > 0 && r.mean_depth <= r.max_depth);
            ck_assert_double_le(r.normal_force, p.stiff_n * r.max_depth * (1 + 1e-9));
            prev = r.normal_force;
        }
    }
    fr_collide_work_free(&w);
    fr_polyhedron_out_free(&out);
    for (int s = 0; s < 5; s++) fr_shape_destroy(shapes[s]);
}
END_TEST

/* fr_contact_tangent_world is the tangent's bilinear form in world twists: for random symmetric
 * local tangents C, frames (t1, t2, n) and world twists ν₁, ν₂ (ω; v), ν₁ᵀ·out·ν₂ = y₁ᵀ·C·y₂ with
 * y = (ω·t1, ω·t2, v·n, v·t1, v·t2, ω·n) the local twist as fr_contact_respond reads it; and out is
 * symmetric. */
START_TEST(test_tangent_world_form)
{
    frtest_rng rng = {4242};
    double worst = 0;
    for (int trial = 0; trial < 200; trial++) {
        fr_contact_model m;
        memset(&m, 0, sizeof m);
        fr_mat3 R = fr_q_to_m3(rand_q(&rng));
        m.t1 = fr_m3_col(&R, 0), m.t2 = fr_m3_col(&R, 1), m.normal = fr_m3_col(&R, 2);
        double B[6][6], C[6][6];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) B[i][j] = frtest_uniform(&rng, -1, 1);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) C[i][j] = B[i][j] + B[j][i];
        fr_mat6 out;
        fr_contact_tangent_world(&m, C, &out);
        double scale = 0;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                scale = fmax(scale, fabs(C[i][j]));
                worst = fmax(worst, fabs(out.m[i][j] - out.m[j][i]));
            }
        for (int k = 0; k < 4; k++) {
            fr_vec3 w1 = rand_v3(&rng, 1), v1 = rand_v3(&rng, 1), w2 = rand_v3(&rng, 1),
                    v2 = rand_v3(&rng, 1);
            const double y1[6] = {fr_v3_dot(w1, m.t1),     fr_v3_dot(w1, m.t2),
                                  fr_v3_dot(v1, m.normal), fr_v3_dot(v1, m.t1),
                                  fr_v3_dot(v1, m.t2),     fr_v3_dot(w1, m.normal)};
            const double y2[6] = {fr_v3_dot(w2, m.t1),     fr_v3_dot(w2, m.t2),
                                  fr_v3_dot(v2, m.normal), fr_v3_dot(v2, m.t1),
                                  fr_v3_dot(v2, m.t2),     fr_v3_dot(w2, m.normal)};
            const double n1[6] = {w1.x, w1.y, w1.z, v1.x, v1.y, v1.z},
                         n2[6] = {w2.x, w2.y, w2.z, v2.x, v2.y, v2.z};
            double a = 0, b = 0;
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    a += n1[i] * out.m[i][j] * n2[j];
                    b += y1[i] * C[i][j] * y2[j];
                }
            worst = fmax(worst, fabs(a - b) / scale);
        }
    }
    /* (rounding: sums of 36 products of numbers up to 2) */
    ck_assert_msg(worst < 1e-13, "tangent in world axes off by %.3g of C", worst);
}
END_TEST

/* fr_contact_blocks against the dense products X_pᵀ K X_q (X_r = [1 0; −[r]× 1]) for random
 * symmetric K: within 1e-12 of the largest entry, and aa, bb exactly symmetric. */
START_TEST(test_blocks_dense)
{
    frtest_rng rng = {91};
    for (int k = 0; k < 200; k++) {
        fr_mat6 K;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j <= i; j++) K.m[i][j] = K.m[j][i] = frtest_uniform(&rng, -1.0, 1.0);
        fr_vec3 pt = rand_v3(&rng, 1.0), ca = rand_v3(&rng, 1.0), cb = rand_v3(&rng, 1.0);
        fr_mat6 out[3];
        fr_contact_blocks(&K, pt, ca, cb, &out[0], &out[1], &out[2]);
        const fr_vec3 rp[3] = {fr_v3_sub(pt, ca), fr_v3_sub(pt, ca), fr_v3_sub(pt, cb)};
        const fr_vec3 rq[3] = {fr_v3_sub(pt, ca), fr_v3_sub(pt, cb), fr_v3_sub(pt, cb)};
        const double sg[3] = {1.0, -1.0, 1.0};
        for (int b = 0; b < 3; b++) {
            double Xp[6][6] = {{0}}, Xq[6][6] = {{0}};
            fr_mat3 sp = fr_m3_skew(rp[b]), sq = fr_m3_skew(rq[b]);
            for (int i = 0; i < 6; i++) Xp[i][i] = Xq[i][i] = 1.0;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    Xp[3 + i][j] = -sp.m[i][j];
                    Xq[3 + i][j] = -sq.m[i][j];
                }
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    double e = 0.0;
                    for (int u = 0; u < 6; u++)
                        for (int v = 0; v < 6; v++) e += Xp[u][i] * K.m[u][v] * Xq[v][j];
                    ck_assert_double_le(fabs(sg[b] * e - out[b].m[i][j]), 1e-12 * 16.0);
                    if (b != 1) ck_assert(out[b].m[i][j] == out[b].m[j][i]);
                }
        }
    }
}
END_TEST

/* fr_contact_blocks: the damping response of two moving bodies (exactly linear in the
 * velocities, friction sticking) matches −blocks·δν for both bodies' wrenches. */
START_TEST(test_blocks_two_bodies)
{
    frtest_rng rng = {17};
    int done = 0;
    for (int k = 0; k < 50 && done < 10; k++) {
        fr_pose pa = pose_of(fr_v3(0, 0, 0.3), rand_q(&rng));
        fr_pose pb = pose_of(fr_v3_add(fr_v3(0, 0, -0.3), rand_v3(&rng, 0.1)), rand_q(&rng));
        tp_plane pl[12];
        tp_poly tp;
        int np = planes_box_box(pa, fr_v3(0.4, 0.3, 0.25), pb, fr_v3(0.35, 0.3, 0.3), pl);
        if (tp_build(pl, np, 1e-12, &tp) < 4 || tp.out.volume < 1e-5) continue;
        fr_contact_params p = frictionless(FR_CONTACT_VOLUME, 1e6, 1e3);
        p.stiff_t = 1e6, p.damp_t = 2e3, p.mu_s = p.mu_k = 10.0;
        fr_contact_body A0 = still(pa), B0 = still(pb);
        fr_contact_state s0 = {0}, s1 = {0};
        fr_contact_result r0, r1;
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A0, &B0, &s0, &r0), FR_OK);
        fr_svec dA = fr_sv(rand_v3(&rng, 1e-3), rand_v3(&rng, 1e-3));
        fr_svec dB = fr_sv(rand_v3(&rng, 1e-3), rand_v3(&rng, 1e-3));
        fr_contact_body A1 = body_at(pa, dA.lin, dA.ang), B1 = body_at(pb, dB.lin, dB.ang);
        ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A1, &B1, &s1, &r1), FR_OK);
        ck_assert_int_eq(r1.sliding, 0);
        fr_mat6 aa, ab, bb;
        fr_contact_blocks(&r0.D, r0.point, pa.p, pb.p, &aa, &ab, &bb);
        fr_svec wa = fr_sv_sub(fr_sv(r1.torque_a, r1.force_a), fr_sv(r0.torque_a, r0.force_a));
        fr_svec wb = fr_sv_sub(fr_sv(r1.torque_b, r1.force_b), fr_sv(r0.torque_b, r0.force_b));
        fr_svec ea = fr_sv_neg(fr_sv_add(fr_m6_mulv(&aa, dA), fr_m6_mulv(&ab, dB)));
        fr_mat6 abt;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) abt.m[i][j] = ab.m[j][i];
        fr_svec eb = fr_sv_neg(fr_sv_add(fr_m6_mulv(&abt, dA), fr_m6_mulv(&bb, dB)));
        double scale = 1e-9 * (fr_v3_norm(fr_v3_sub(r1.force_a, r0.force_a)) + 1e-6);
        for (int i = 0; i < 6; i++) {
            ck_assert_double_le(fabs(fr_sv_get(&wa, i) - fr_sv_get(&ea, i)), scale * 1e3);
            ck_assert_double_le(fabs(fr_sv_get(&wb, i) - fr_sv_get(&eb, i)), scale * 1e3);
        }
        done++;
    }
    ck_assert_int_ge(done, 10);
}
END_TEST

/* A box wholly inside another: the area vectors cancel (q = 0), so the normal is the prior: the
 * line between the centres for a new contact, the previous normal for a continuing one. */
START_TEST(test_normal_fallback_containment)
{
    fr_pose pa = pose_of(fr_v3(0.05, 0, 0.3), fr_q_axis_angle(fr_v3(0, 0, 1), 0.2));
    fr_pose pb = pose_of(fr_v3(0.05, 0, 0), fr_q_identity());
    tp_plane pl[12];
    tp_poly tp;
    int np = planes_box_box(pa, fr_v3(0.1, 0.1, 0.1), pb, fr_v3(1, 1, 1), pl);
    ck_assert_int_eq(tp_build(pl, np, 1e-12, &tp), 6);
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, 1e4, 0);
    fr_contact_body A = still(pa), B = still(pb);
    fr_contact_state st = {0};
    fr_contact_result r;
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
    ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, -1)), 1e-12);
    ck_assert_rel(r.normal_force, 1e4 * 0.2, 1e-9, 0); /* mean depth = A's height */
    st.normal = fr_v3(1, 0, 0);
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &st, &r), FR_OK);
    ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(1, 0, 0)), 1e-12);
    /* swapped roles: the prior flips with them */
    tp_swap_owners(&tp);
    fr_contact_state s2 = {0};
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &B, &A, &s2, &r), FR_OK);
    ck_assert_double_le(fr_v3_dist(r.normal, fr_v3(0, 0, 1)), 1e-12);
}
END_TEST

static Suite *contact_suite(void)
{
    Suite *s = suite_create("contact");
    TCase *tc = tcase_create("laws");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_box_on_plane_closed_form);
    tcase_add_test(tc, test_spin_radius_square);
    tcase_add_test(tc, test_integrals_vs_grid);
    tcase_add_test(tc, test_spring_line_of_action);
    tcase_add_test(tc, test_normal_tilted);
    tcase_add_test(tc, test_normal_fallback_containment);
    tcase_add_test(tc, test_continuity_depth_to_zero);
    tcase_add_test(tc, test_ab_symmetry);
    tcase_add_test(tc, test_no_pull);
    tcase_add_test(tc, test_linearisation_fd);
    tcase_add_test(tc, test_blocks_two_bodies);
    tcase_add_test(tc, test_blocks_dense);
    tcase_add_test(tc, test_tangent_world_form);
    tcase_add_test(tc, test_friction_stick_slip_translation);
    tcase_add_test(tc, test_friction_spin_and_ellipse);
    tcase_add_test(tc, test_friction_bond_transport);
    tcase_add_test(tc, test_params_and_combination);
    tcase_add_test(tc, test_eval_errors_and_empty);
    tcase_add_test(tc, test_no_allocation);
    tcase_add_test(tc, test_explicit_stability_bound);
    suite_add_tcase(s, tc);
    tc = tcase_create("simulation");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sim_rest_depth);
    tcase_add_test(tc, test_sim_drop_no_energy_gain);
    tcase_add_test(tc, test_sim_slope);
    tcase_add_test(tc, test_sim_stick_slip);
    tcase_add_test(tc, test_sim_spin_stop);
    tcase_add_test(tc, test_sim_momentum);
    tcase_add_test(tc, test_sim_implicit_stiff);
    suite_add_tcase(s, tc);
    tc = tcase_create("collision");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_collide_pair_matches_bruteforce);
    tcase_add_test(tc, test_eval_ex_matches_eval);
    tcase_add_test(tc, test_collide_pair_scenes);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(contact_suite)
