/*
 * fr_contact_model_measure_tangent against models built afresh at moved poses: with the
 * builds' tangent, the step's model answers a small relative motion as the build at the moved
 * pose does (to the motion's second order); without it, on a lifted patch, it does not even
 * get the sign of the tilt coupling right (docs/contact.md §5, "The geometry's tangent").
 * The reference is the fresh build's start wrench taken through the public response
 * (fr_contact_respond, fr_contact_model_wrench), not the function the measurement uses.
 */
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/contact.h"

#include "box_rig.h"

static rig rig_make(double hb)
{
    return rig_make_box(fr_v3(hb, hb, hb));
}

/* The cube on A's top face, turned by `tilt` about (cos φ, sin φ, 0) and yawed, its lowest
 * point `depth` into A. */
static fr_pose cube_on_a(const rig *r, double depth, double tilt, double phi, double yaw)
{
    const fr_quat q = fr_q_mul(fr_q_axis_angle(fr_v3(cos(phi), sin(phi), 0), tilt),
                               fr_q_axis_angle(fr_v3(0, 0, 1), yaw));
    double low = 0.0;
    for (int k = 0; k < 8; k++) {
        const fr_vec3 v = fr_v3((k & 1) ? r->hb.x : -r->hb.x, (k & 2) ? r->hb.y : -r->hb.y,
                                (k & 4) ? r->hb.z : -r->hb.z);
        low = fmin(low, fr_q_rotate(q, v).z);
    }
    return (fr_pose){fr_v3(0.01, -0.02, r->ha.z - low - depth), q};
}

/* The elastic wrench on A at m's start as (τ·t1, τ·t2, f·n) about ref's point, ref's axes,
 * through the public response */
static void wrench_about(const fr_contact_model *m, const fr_contact_model *ref, double out[3])
{
    const double y[6] = {0};
    fr_contact_response rs;
    fr_contact_respond(m, y, DT, 0.0, NULL, -1.0, 0u, &rs);
    const fr_svec w = fr_contact_model_wrench(m, rs.w);
    const fr_vec3 tau = fr_v3_add(w.ang, fr_v3_cross(fr_v3_sub(m->point, ref->point), w.lin));
    out[0] = fr_v3_dot(tau, ref->t1);
    out[1] = fr_v3_dot(tau, ref->t2);
    out[2] = fr_v3_dot(w.lin, ref->normal);
}

/* The model's answer to the relative motion u (turn about t1, t2; along n) over the step, less
 * its answer at rest, elastic only (no damping, no friction) */
static void answer(const fr_contact_model *m0, const double u[3], double out[3])
{
    fr_contact_model m = *m0;
    m.c = 0.0;
    const double y[6] = {u[0] / DT, u[1] / DT, u[2] / DT, 0, 0, 0}, y0[6] = {0};
    fr_contact_response r, r0;
    fr_contact_respond(&m, y, DT, 0.0, NULL, -1.0, 0u, &r);
    fr_contact_respond(&m, y0, DT, 0.0, NULL, -1.0, 0u, &r0);
    for (int i = 0; i < 3; i++) out[i] = r.w[i] - r0.w[i];
}

/* B moved so that A relative to B turns by (u0, u1) about m's point and moves u2 along n */
static fr_pose b_moved(const fr_contact_model *m, fr_pose pb, const double u[3])
{
    const fr_vec3 rv = fr_v3_neg(fr_v3_add(fr_v3_scale(m->t1, u[0]), fr_v3_scale(m->t2, u[1])));
    const fr_quat dq = fr_q_exp(rv);
    pb.q = fr_q_normalize(fr_q_mul(dq, pb.q));
    pb.p = fr_v3_add(fr_v3_add(m->point, fr_q_rotate(dq, fr_v3_sub(pb.p, m->point))),
                     fr_v3_scale(m->normal, -u[2]));
    return pb;
}

/* fr_contact_model_measure_tangent on the rig's model m (built at pa, pb leaving st), B moved */
static int measure(rig *r, fr_contact_model *m, const fr_contact_state *st, fr_pose pa, fr_pose pb)
{
    fr_collide_cache cache = {0};
    const fr_pose id = {fr_v3_zero(), fr_q_identity()};
    const fr_contact_rebuild g = {r->a, r->b, id, id, &cache, &r->w, &r->out, &r->scratch};
    return fr_contact_model_measure_tangent(m, &r->p, st, at(pa), at(pb), false, DT, &g,
                                            FR_CONTACT_GT_MIN, NULL);
}

/* The tangent of the builds (their start wrench at moves of ±el along each of u's axes, through
 * the public response), of a model's answer, in lengths and forces: u' = (√A·θ1, √A·θ2, n),
 * w' = (τ1/√A, τ2/√A, f); −∂w'/∂u', symmetric part */
static fr_mat3 builds_tangent(rig *r, fr_pose pa, fr_pose pb, const fr_contact_state *st,
                              const fr_contact_model *m, double el)
{
    const double R = sqrt(m->area), sc[3] = {1.0 / R, 1.0 / R, 1.0};
    double K[3][3];
    for (int k = 0; k < 3; k++) {
        double w[2][3];
        for (int s = 0; s < 2; s++) {
            double u[3] = {0, 0, 0};
            u[k] = (s ? -el : el) * sc[k];
            fr_contact_state st2 = *st;
            fr_contact_model fresh;
            build(r, pa, b_moved(m, pb, u), &st2, &fresh);
            wrench_about(&fresh, m, w[s]);
        }
        for (int i = 0; i < 3; i++) K[i][k] = -(w[0][i] - w[1][i]) * sc[i] / (2.0 * el);
    }
    fr_mat3 S;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) S.m[i][j] = 0.5 * (K[i][j] + K[j][i]);
    return S;
}

static fr_mat3 model_tangent(const fr_contact_model *m, double el)
{
    const double R = sqrt(m->area), sc[3] = {1.0 / R, 1.0 / R, 1.0};
    fr_mat3 T;
    for (int k = 0; k < 3; k++) {
        double u[3] = {0, 0, 0}, a[2][3];
        for (int s = 0; s < 2; s++) {
            u[k] = (s ? -el : el) * sc[k];
            answer(m, u, a[s]);
        }
        for (int i = 0; i < 3; i++) T.m[i][k] = -(a[0][i] - a[1][i]) * sc[i] / (2.0 * el);
    }
    return T;
}

static fr_mat3 m3_sub(fr_mat3 a, fr_mat3 b)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] -= b.m[i][j];
    return a;
}

/* Cubes of 3 mm and 1 cm leaning on an edge (their patch a wedge over part of the face), three
 * directions and yaws. On such a patch the builds are stiffer than the model's points in one
 * direction (the rocking's cause: by 0.5 of the points' own stiffness along it) and softer in
 * another (by 0.5 of the points' largest eigenvalue). With the geometry's tangent the model is
 * (1) at least as stiff as the builds in every direction, (2) as stiff as they are along the
 * first, and (3) stiffer than its points by a positive semi-definite spring. Measured by
 * differences of moves of 1/300 of a stiffening depth at the patch's edge, taken otherwise than
 * the measurement's (through the public response, smaller moves), in lengths and forces: (1) its
 * least eigenvalue +1.8e-4 of the points' largest (allowed −1e-3: the differences' second-order
 * error is about 0.5 % of the tangent), (2) off by 3e-3 of the excess (allowed 1e-2), (3) −9e-15
 * (allowed −1e-9: the response is linear in G). No tangent fails (1) and (2), K's symmetric part
 * whole (3), a tangent of the wrong sign all three. */
START_TEST(test_tangent_answers_as_the_build)
{
    const double sizes[2] = {0.0015, 0.005};
    double worst[3] = {0, 0, 0};
    for (int si = 0; si < 2; si++)
        for (int k = 0; k < 3; k++) {
            rig r = rig_make(sizes[si]);
            const double hw = sizes[si];
            /* the thickness falls by 4 stiffening depths across the half-width: a wedge */
            const double tilt = 4.0 * DS / hw, depth = 3.0 * DS;
            const fr_pose pa = {fr_v3_zero(), fr_q_identity()};
            const fr_pose pb = cube_on_a(&r, depth, tilt, 0.7 + 2.1 * k, 0.3 * k);
            fr_contact_state st = {0};
            fr_contact_model m;
            build(&r, pa, pb, &st, &m);
            ck_assert_msg(m.max_depth0 > 1.5 * m.depth0, "not lifted: %g / %g", m.max_depth0,
                          m.depth0);
            fr_contact_model plain = m;
            ck_assert_int_eq(measure(&r, &m, &st, pa, pb), 1);
            ck_assert(m.gt_on && !plain.gt_on);
            const double el = DS / 300.0;
            const fr_mat3 B = builds_tangent(&r, pa, pb, &st, &m, el);
            const fr_mat3 P = model_tangent(&plain, el), M = model_tangent(&m, el);
            fr_vec3 ev, e1, e3;
            fr_mat3 V, V1, V3;
            fr_m3_eigen_sym(P, &ev, &V);
            const double scale = ev.z; /* the points' largest */
            /* the excess: the rocking's cause */
            fr_m3_eigen_sym(m3_sub(B, P), &ev, &V);
            const double excess = ev.z;
            const fr_vec3 v = {V.m[0][2], V.m[1][2], V.m[2][2]};
            const double pv = fr_v3_dot(v, fr_m3_mulv(P, v));
            ck_assert_msg(excess > 0.3 * pv && ev.x < -0.1 * scale,
                          "cube %g m, lean %d: the builds exceed the points by %g (%g along it), "
                          "fall short by %g",
                          2 * hw, k, excess, pv, -ev.x);
            /* (1) M − B ⪰ 0 */
            fr_m3_eigen_sym(m3_sub(M, B), &e1, &V1);
            /* (2) along the excess' direction as stiff as the builds */
            const double along = fr_v3_dot(v, fr_m3_mulv(m3_sub(M, B), v)) / excess;
            /* (3) M − P ⪰ 0 */
            fr_m3_eigen_sym(m3_sub(M, P), &e3, &V3);
            worst[0] = fmax(worst[0], -e1.x / scale);
            worst[1] = fmax(worst[1], fabs(along));
            worst[2] = fmax(worst[2], -e3.x / scale);
            ck_assert_msg(e1.x > -1e-3 * scale && fabs(along) < 1e-2 && e3.x > -1e-9 * scale,
                          "cube %g m, lean %d: softer than the builds by %g, off along the excess "
                          "by %g, softer than the points by %g",
                          2 * hw, k, -e1.x / scale, along, -e3.x / scale);
            rig_free(&r);
        }
    printf("# worst: softer than the builds %.3g, along the excess %.3g, softer than the points "
           "%.3g\n",
           worst[0], worst[1], worst[2]);
}
END_TEST

/* A uniform slab (a cube flat on A) gets no tangent: its points move as a build places them. */
START_TEST(test_slab_takes_none)
{
    rig r = rig_make(0.005);
    const fr_pose pa = {fr_v3_zero(), fr_q_identity()};
    const fr_pose pb = cube_on_a(&r, 3.0 * DS, 0.0, 0.0, 0.2);
    fr_contact_state st = {0};
    fr_contact_model m;
    build(&r, pa, pb, &st, &m);
    ck_assert_int_eq(measure(&r, &m, &st, pa, pb), 0);
    ck_assert(!m.gt_on);
    rig_free(&r);
}
END_TEST

/* The tangent's spring never makes the patch pull, and the energy a response counts for it is
 * the work of the force it adds (½·u·ΔF, linear): over moves of a lifted cube's model up to 50
 * stiffening depths along n and tilts as far at the edge, in 26 directions. A linearisation taken
 * that far (a heavy box landing late on a resting pair) predicted a pull and held energy that no
 * build had (docs/contact.md §5, "Where it would break the step"). */
START_TEST(test_tangent_never_pulls)
{
    rig r = rig_make(0.0015);
    const double hw = 0.0015;
    const fr_pose pa = {fr_v3_zero(), fr_q_identity()};
    const fr_pose pb = cube_on_a(&r, 3.0 * DS, 4.0 * DS / hw, 0.7, 0.0);
    fr_contact_state st = {0};
    fr_contact_model m;
    build(&r, pa, pb, &st, &m);
    ck_assert_int_eq(measure(&r, &m, &st, pa, pb), 1);
    ck_assert(m.gt_on);
    m.c = 0.0;
    fr_contact_model plain = m;
    plain.gt_on = 0;
    const double R = sqrt(m.area);
    int with = 0, without = 0;
    for (int d = 0; d < 27; d++) {
        if (d == 13) continue; /* (0, 0, 0) */
        const double dir[3] = {d % 3 - 1.0, (d / 3) % 3 - 1.0, d / 9 - 1.0};
        for (double mag = 0.01; mag <= 50.0; mag *= 1.5) {
            const double u[3] = {mag * DS * dir[0] / R, mag * DS * dir[1] / R, mag * DS * dir[2]};
            const double y[6] = {u[0] / DT, u[1] / DT, u[2] / DT, 0, 0, 0};
            fr_contact_response a, b;
            fr_contact_respond(&m, y, DT, 0.0, NULL, -1.0, 0u, &a);
            fr_contact_respond(&plain, y, DT, 0.0, NULL, -1.0, 0u, &b);
            ck_assert_msg(a.w[2] <= 0.0, "dir %d, %g depths: the patch pulls with %g N", d, mag,
                          a.w[2]);
            double work = 0.0, diff = 0.0;
            for (int i = 0; i < 3; i++) {
                work += 0.5 * u[i] * (b.w[i] - a.w[i]);
                diff = fmax(diff, fabs(b.w[i] - a.w[i]));
            }
            ck_assert_msg(fabs(a.gt_energy - work) <= 1e-9 * fabs(work) + 1e-300,
                          "dir %d, %g depths: counted %g J for a force whose work is %g J", d, mag,
                          a.gt_energy, work);
            if (diff > 0.0)
                with++;
            else if (b.normal > 0.0)
                without++;
        }
    }
    /* (both sides of the rule were reached) */
    ck_assert_msg(with > 0 && without > 0, "%d moves took the tangent, %d left it", with, without);
    rig_free(&r);
}
END_TEST

static Suite *tangent_suite(void)
{
    Suite *s = suite_create("contact-tangent");
    TCase *tc = tcase_create("tangent");
    tcase_add_test(tc, test_tangent_answers_as_the_build);
    tcase_add_test(tc, test_slab_takes_none);
    tcase_add_test(tc, test_tangent_never_pulls);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(tangent_suite)
