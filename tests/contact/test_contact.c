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
    /* separating fast with strong damping: the total normal force is cut to 0, never pulls */
    fr_contact_params p = frictionless(FR_CONTACT_MEAN_DEPTH, 1e4, 1e4);
    fr_pose pa = pose_of(fr_v3(0, 0, 0.5 - 1e-3), fr_q_axis_angle(fr_v3(1, 0, 0), 0.01));
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
    ck_assert_double_ge(fr_v3_dot(r.force_a, fr_v3(0, 0, 1)), 0.0);
    ck_assert_double_le(fr_v3_norm(r.force_a), 1e-9);
    /* slowly separating: damping reduces but does not cancel the spring */
    A.v = fr_v3(0, 0, 1e-4);
    A.w = fr_v3_zero();
    fr_contact_state s2 = {0};
    ck_assert_int_eq(fr_contact_eval(&p, &tp.out, &A, &B, &s2, &r), FR_OK);
    ck_assert_rel(r.normal_force, 1e4 * r.mean_depth - 1e4 * 1e-4, 1e-6, 0);
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
    tcase_add_test(tc, test_continuity_depth_to_zero);
    tcase_add_test(tc, test_ab_symmetry);
    tcase_add_test(tc, test_no_pull);
    tcase_add_test(tc, test_linearisation_fd);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(contact_suite)
