/* Constraint rows on articulated trees (docs/constraint.md, "Rows on articulated trees"): the
 * tree's impulse response against the mass matrix (CRBA), a four-bar built as a robot tree and
 * closed by a loop joint against the same mechanism of free bodies, a pendulum hanging from a
 * robot link (a free body, or a second robot) against free bodies, mimic joints through the
 * world's solver against the tree's own, and the no-allocation rule. */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "gyro_ref.h"
#include "fureru/articulated.h"
#include "fureru/joints.h"
#include "fureru/world.h"
#include "interpose.h"

/* ---------------------------------------------------------------- the tree's response */

static double urand(unsigned *s, double lo, double hi)
{
    *s = *s * 1103515245u + 12345u;
    return lo + (hi - lo) * (double)((*s >> 8) & 0xffffff) / (double)0xffffff;
}

/* A tree with a free base, revolute, prismatic and spherical joints and a second root. */
static fr_tree *mixed_tree(unsigned *s)
{
    fr_tree *t = fr_tree_create();
    const fr_joint_type types[7] = {FR_JOINT_FREE,      FR_JOINT_REVOLUTE, FR_JOINT_PRISMATIC,
                                    FR_JOINT_SPHERICAL, FR_JOINT_REVOLUTE, FR_JOINT_REVOLUTE,
                                    FR_JOINT_REVOLUTE};
    const int parents[7] = {-1, 0, 1, 1, 3, -1, 5};
    for (int i = 0; i < 7; i++) {
        fr_link_def ld = fr_link_def_default();
        ld.parent = parents[i];
        ld.type = types[i];
        ld.joint_pose.p = fr_v3(urand(s, -0.3, 0.3), urand(s, -0.3, 0.3), urand(s, -0.3, 0.3));
        ld.joint_pose.q = fr_q_normalize(
            fr_q(urand(s, -1, 1), urand(s, -1, 1), urand(s, -1, 1), urand(s, -1, 1)));
        ld.axis = fr_v3(urand(s, -1, 1), urand(s, -1, 1), urand(s, -1, 1));
        ld.mass = urand(s, 0.3, 2.0);
        ld.com = fr_v3(urand(s, -0.2, 0.2), urand(s, -0.2, 0.2), urand(s, -0.2, 0.2));
        ld.inertia =
            fr_m3_diag(fr_v3(urand(s, 0.01, 0.05), urand(s, 0.01, 0.05), urand(s, 0.01, 0.05)));
        ld.armature = i == 4 ? 0.02 : 0.0;
        ld.q0 = urand(s, -1, 1);
        ck_assert_int_ge(fr_tree_add_link(t, &ld), 0);
    }
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    return t;
}

/* Δqd = R p against the mass matrix of CRBA (an independent algorithm, link coordinates):
 * R = M⁻¹ at any configuration (prepare without the step), and after an Euler step with PD and
 * damping R = (M + diag(H) + dt/2·G)⁻¹ with the step's implicit terms H = (kp·dt + kd)·dt + c·dt
 * and its free root's gyroscopic term G (gyro_ref.h). */
START_TEST(tree_response_matches_crba)
{
    unsigned s = 7u + 1000u * (unsigned)_i;
    fr_tree *t = mixed_tree(&s);
    fr_tree_data *d = fr_tree_data_create(t);
    int nv = fr_tree_nv(t), nq = fr_tree_nq(t);
    double *M = calloc((size_t)(nv * nv), sizeof(double)), *p = calloc((size_t)nv, 8),
           *x = calloc((size_t)nv, 8), *r = calloc((size_t)nv, 8), *q0 = calloc((size_t)nq, 8);
    for (int k = 0; k < nv; k++) d->qd[k] = urand(&s, -1, 1);
    double *qd0 = malloc(sizeof(double) * (size_t)nv); /* (the step's start: its G's velocities) */
    memcpy(qd0, d->qd, sizeof(double) * (size_t)nv);
    const double dt = 0.001;
    double H[64] = {0};
    bool step = _i % 2 == 1;
    if (step) {
        for (int k = 0; k < nv; k++) d->kp[k] = d->kd[k] = 0.0;
        /* PD and damping on the revolute joint of link 1 and the last one */
        int v1 = fr_tree_link_v_index(t, 1), v6 = fr_tree_link_v_index(t, 6);
        d->kp[v1] = 300.0, d->kd[v1] = 4.0;
        d->kp[v6] = 50.0, d->kd[v6] = 0.5;
        H[v1] = (300.0 * dt + 4.0) * dt;
        H[v6] = (50.0 * dt + 0.5) * dt + fr_tree_link_def(t, 6)->damping * dt;
        memcpy(q0, d->q, sizeof(double) * (size_t)nq);
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        memcpy(d->q, q0, sizeof(double) * (size_t)nq); /* back to the step's start */
    }
    fr_tree_response_prepare(t, d, step);
    fr_tree_crba(t, d, M);
    double *A = malloc(sizeof(double) * (size_t)(nv * nv)),
           *B = malloc(sizeof(double) * (size_t)(nv * nv));
    memcpy(A, M, sizeof(double) * (size_t)(nv * nv));
    if (step) frtest_gyro_ref(t, M, qd0, dt, A);
    for (int k = 0; k < nv; k++) A[k * nv + k] += H[k];
    double worst = 0.0;
    for (int trial = 0; trial < 5; trial++) {
        for (int k = 0; k < nv; k++) p[k] = x[k] = urand(&s, -1, 1);
        fr_tree_impulse_response(t, d, p, r);
        memcpy(B, A, sizeof(double) * (size_t)(nv * nv));
        ck_assert(fr_lu_solve(B, nv, x));
        double sc = 0.0;
        for (int k = 0; k < nv; k++) sc = fmax(sc, fabs(x[k]));
        for (int k = 0; k < nv; k++) worst = fmax(worst, fabs(r[k] - x[k]) / sc);
    }
    fprintf(stderr, "# tree response vs CRBA (%s): worst relative %.3g\n",
            step ? "after an Euler step" : "M⁻¹", worst);
    ck_assert_msg(worst < 1e-11, "response off by %g", worst);
    free(M), free(A), free(B), free(p), free(x), free(r), free(q0), free(qd0);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------- four-bars */

/* Ground pivots A = (0,0,0) and D = (0.4,0,0), crank AB 0.1 m, coupler BC 0.35 m, rocker CD
 * 0.3 m (Grashof), rods of 0.5 kg with a 0.02 m square section, hinges along y, gravity −z;
 * the crank starts at th0 from x towards z (test_joints.c's four-bar). */
enum { FB_A = 0, FB_B, FB_C, FB_D };
typedef struct fbgeo {
    double a, b, c, d;
    fr_vec3 P[4];
} fbgeo;

static fbgeo fb_geo(double th0)
{
    fbgeo g = {0.1, 0.35, 0.3, 0.4, {{0}}};
    g.P[FB_A] = fr_v3(0, 0, 0);
    g.P[FB_D] = fr_v3(g.d, 0, 0);
    g.P[FB_B] = fr_v3(g.a * cos(th0), 0, g.a * sin(th0));
    fr_vec3 BD = fr_v3_sub(g.P[FB_D], g.P[FB_B]);
    double L = fr_v3_norm(BD);
    double x = (g.b * g.b - g.c * g.c + L * L) / (2 * L), h = sqrt(g.b * g.b - x * x);
    fr_vec3 u = fr_v3_scale(BD, 1 / L), n = fr_v3(-u.z, 0, u.x);
    if (n.z < 0) n = fr_v3_neg(n);
    g.P[FB_C] = fr_v3_add(g.P[FB_B], fr_v3_add(fr_v3_scale(u, x), fr_v3_scale(n, h)));
    return g;
}

static const double ROD_M = 0.5, ROD_T = 0.02;

static fr_mat3 rod_inertia(double m, double L)
{
    return fr_m3_diag(fr_v3(m * 2 * ROD_T * ROD_T / 12, m * (L * L + ROD_T * ROD_T) / 12,
                            m * (L * L + ROD_T * ROD_T) / 12));
}

/* The angle about +y that turns x onto the direction P → Q (in the x-z plane). */
static double rod_angle(fr_vec3 P, fr_vec3 Q)
{
    return -atan2(Q.z - P.z, Q.x - P.x);
}

static fr_body_id add_rod(fr_world *w, const char *name, double L, fr_vec3 P, fr_vec3 Q)
{
    fr_body_def bd = fr_body_def_default();
    snprintf(bd.name, sizeof bd.name, "%s", name);
    bd.mass = ROD_M;
    bd.inertia = rod_inertia(ROD_M, L);
    bd.pose = (fr_pose){fr_v3_scale(fr_v3_add(P, Q), 0.5),
                        fr_q_axis_angle(fr_v3(0, 1, 0), rod_angle(P, Q))};
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    return id;
}

/* A hinge along y at world point `at` between a and b (b null: the world). */
static int add_hinge(fr_world *w, const char *name, fr_body_id a, fr_body_id b, fr_vec3 at,
                     bool motor, double speed)
{
    fr_joint_def jd = fr_joint_def_default(FR_CJOINT_HINGE);
    snprintf(jd.name, sizeof jd.name, "%s", name);
    jd.a = a;
    jd.b = b;
    ck_assert_int_eq(fr_joint_def_at(w, &jd, at, fr_v3(0, 1, 0)), FR_OK);
    if (motor) {
        /* the angle is b's about a's y: the crank turns at +ω about y when its rate is −ω */
        jd.motor = true;
        jd.motor_speed = -speed;
        jd.motor_max = 50.0;
    }
    int j;
    ck_assert_int_eq(fr_world_add_joint(w, &jd, &j), FR_OK);
    return j;
}

typedef struct fourbar {
    fr_world *w;
    fbgeo g;
    fr_body_id crank, coupler, rocker; /* link bodies or free bodies */
    int robot;                         /* −1: free bodies */
    int motor, loop;
} fourbar;

static fr_world *make_world(double dt)
{
    fr_world_def def = fr_world_def_default();
    def.dt = dt;
    def.max_bodies = 16;
    def.max_joints = 8;
    def.max_robots = 4;
    fr_world *w;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    return w;
}

/* The four-bar of free bodies and four hinge joints (as test_joints.c builds it). */
static void fb_free(fourbar *fb, double th0, bool motor, double omega, double dt)
{
    fb->w = make_world(dt);
    fb->g = fb_geo(th0);
    fb->robot = -1;
    const fr_vec3 *P = fb->g.P;
    fb->crank = add_rod(fb->w, "crank", fb->g.a, P[FB_A], P[FB_B]);
    fb->coupler = add_rod(fb->w, "coupler", fb->g.b, P[FB_B], P[FB_C]);
    fb->rocker = add_rod(fb->w, "rocker", fb->g.c, P[FB_D], P[FB_C]);
    fb->motor = add_hinge(fb->w, "A", fb->crank, FR_BODY_NULL, P[FB_A], motor, omega);
    add_hinge(fb->w, "B", fb->crank, fb->coupler, P[FB_B], false, 0);
    fb->loop = add_hinge(fb->w, "C", fb->coupler, fb->rocker, P[FB_C], false, 0);
    add_hinge(fb->w, "D", fb->rocker, FR_BODY_NULL, P[FB_D], false, 0);
}

/* A rod link: joint at `at` (parent frame), about y, the rod along the link's x from the joint. */
static fr_link_def rod_link(const char *name, int parent, fr_vec3 at, double L, double q0)
{
    fr_link_def ld = fr_link_def_default();
    ld.name = name;
    ld.joint_name = name;
    ld.parent = parent;
    ld.type = FR_JOINT_REVOLUTE;
    ld.joint_pose = (fr_pose){at, fr_q_identity()};
    ld.axis = fr_v3(0, 1, 0);
    ld.mass = ROD_M;
    ld.com = fr_v3(L / 2, 0, 0);
    ld.inertia = rod_inertia(ROD_M, L);
    ld.kp = ld.kd = 0.0;
    ld.q0 = q0;
    return ld;
}

/* The same four-bar as a robot tree: crank (root, at A) → coupler (at B), rocker a second root
 * at D, closed by a hinge joint between the coupler's and the rocker's link bodies at C; the
 * motor is a hinge joint between the world and the crank's link body (its five equality rows are
 * the tree's own joint: held, they drop out; its motor row drives the crank's coordinate). */
static void fb_tree(fourbar *fb, double th0, bool motor, double omega, double dt)
{
    fb->w = make_world(dt);
    fb->g = fb_geo(th0);
    const fr_vec3 *P = fb->g.P;
    double pc = rod_angle(P[FB_A], P[FB_B]), pu = rod_angle(P[FB_B], P[FB_C]),
           pr = rod_angle(P[FB_D], P[FB_C]);
    fr_tree *t = fr_tree_create();
    fr_link_def l0 = rod_link("crank", -1, P[FB_A], fb->g.a, pc);
    fr_link_def l1 = rod_link("coupler", 0, fr_v3(fb->g.a, 0, 0), fb->g.b, pu - pc);
    fr_link_def l2 = rod_link("rocker", -1, P[FB_D], fb->g.c, pr);
    ck_assert_int_eq(fr_tree_add_link(t, &l0), 0);
    ck_assert_int_eq(fr_tree_add_link(t, &l1), 1);
    ck_assert_int_eq(fr_tree_add_link(t, &l2), 2);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd = {.name = "fourbar", .tree = t};
    ck_assert_int_eq(fr_world_add_robot(fb->w, &rd, &fb->robot), FR_OK);
    fr_tree_data *d = fr_world_robot_data(fb->w, fb->robot);
    for (int k = 0; k < 3; k++) d->kp[k] = d->kd[k] = 0.0;
    fb->crank = fr_world_robot_link_body(fb->w, fb->robot, 0);
    fb->coupler = fr_world_robot_link_body(fb->w, fb->robot, 1);
    fb->rocker = fr_world_robot_link_body(fb->w, fb->robot, 2);
    fb->motor = add_hinge(fb->w, "A", fb->crank, FR_BODY_NULL, P[FB_A], motor, omega);
    fb->loop = add_hinge(fb->w, "C", fb->coupler, fb->rocker, P[FB_C], false, 0);
}

/* A point given in a rod's frame: rod bodies are centred, with x along the rod. */
static fr_vec3 rod_point(fr_world *w, fr_body_id id, double x)
{
    fr_pose p;
    fr_body_get_pose(w, id, &p);
    return fr_pose_apply(p, fr_v3(x, 0, 0));
}

/* Loop closure measured on the bodies' poses: C on the coupler against C on the rocker. */
static double fb_closure(const fourbar *fb)
{
    fr_vec3 c1 = rod_point(fb->w, fb->coupler, fb->g.b / 2);
    fr_vec3 c2 = rod_point(fb->w, fb->rocker, fb->g.c / 2);
    return fr_v3_norm(fr_v3_sub(c1, c2));
}

/* Motor-driven tree four-bar, 10 s at 1 kHz: the loop stays closed (measured on the link poses),
 * the motor holds its rate, and the energy follows the motor's work up to the velocity
 * projection's O(dt) loss (as the free-body four-bar's, test_joints.c). */
START_TEST(tree_fourbar_motor_10s)
{
    const double omega = 2 * M_PI;
    fourbar fb;
    fb_tree(&fb, M_PI / 2, true, omega, 0.001);
    fr_world_energy e0, e;
    fr_world_energy_get(fb.w, &e0);
    double max_closure = 0, max_gap = 0, max_work = 0, max_err = 0;
    for (int n = 1; n <= 10000; n++) {
        ck_assert_int_eq(fr_world_step(fb.w), FR_OK);
        max_closure = fmax(max_closure, fb_closure(&fb));
        fr_world_energy_get(fb.w, &e);
        max_gap = fmax(max_gap, fabs((e.total - e0.total) - (e.work - e0.work)));
        max_work = fmax(max_work, fabs(e.work - e0.work));
        fr_world_constraint_stats cs;
        fr_world_constraint_stats_get(fb.w, &cs);
        max_err = fmax(max_err, cs.position_error);
    }
    fr_joint_state js;
    fr_world_joint_state(fb.w, fb.motor, &js);
    fr_world_constraint_stats cs;
    fr_world_constraint_stats_get(fb.w, &cs);
    const fr_tree_data *d = fr_world_robot_data(fb.w, fb.robot);
    fprintf(stderr,
            "# tree four-bar 10 s: closure %.3g m, joint error %.3g, |ΔE − W| max %.3g J (|W| "
            "max %.3g J), crank %.6f rev, rate %.9f, sweeps max %d, residual max %.3g\n",
            max_closure, max_err, max_gap, max_work, (d->q[0] + M_PI / 2) / (2 * M_PI), js.rate,
            cs.max_iterations, cs.max_residual);
    ck_assert_msg(max_closure < 1e-6, "loop closure %g m", max_closure);
    ck_assert_msg(max_err < 1e-9, "joint error after projection %g", max_err);
    ck_assert_double_eq_tol(js.rate, -omega, 1e-8);
    ck_assert_msg(max_gap < 0.05 * max_work + 0.01, "|ΔE − W| %g J of %g", max_gap, max_work);
    fr_world_destroy(fb.w);
}
END_TEST

/* The energy budget E − E0 − W of the driven tree four-bar over 2 s: a loss that halves with dt
 * (the velocity projection's O(dt) dissipation), so what is left is the method's error, not a
 * missing or wrong work term (which would not scale so). */
static double fb_tree_loss(double dt)
{
    fourbar fb;
    fb_tree(&fb, M_PI / 2, true, 2 * M_PI, dt);
    fr_world_energy e0, e;
    fr_world_energy_get(fb.w, &e0);
    int steps = (int)lround(2.0 / dt);
    for (int n = 0; n < steps; n++) ck_assert_int_eq(fr_world_step(fb.w), FR_OK);
    fr_world_energy_get(fb.w, &e);
    fr_world_destroy(fb.w);
    return -((e.total - e0.total) - (e.work - e0.work));
}

START_TEST(tree_fourbar_energy_first_order)
{
    double l1 = fb_tree_loss(0.001), l2 = fb_tree_loss(0.0005);
    fprintf(stderr, "# tree four-bar 2 s: loss %.6g J at 1 ms, %.6g J at 0.5 ms (ratio %.4f)\n", l1,
            l2, l1 / l2);
    ck_assert(l1 > 0 && l2 > 0);
    ck_assert_msg(fabs(l1 / l2 - 2.0) < 0.15, "loss ratio %g: not first order", l1 / l2);
}
END_TEST

/* The largest distance between the two formulations' coupler–rocker points C and rocker angles
 * over T seconds of the passive four-bar falling from th0 under gravity. */
static double fb_compare(double th0, double dt, double T, double *dangle)
{
    fourbar ft, ff;
    fb_tree(&ft, th0, false, 0, dt);
    fb_free(&ff, th0, false, 0, dt);
    int steps = (int)lround(T / dt);
    double worst = 0.0;
    *dangle = 0.0;
    for (int n = 0; n < steps; n++) {
        ck_assert_int_eq(fr_world_step(ft.w), FR_OK);
        ck_assert_int_eq(fr_world_step(ff.w), FR_OK);
        fr_vec3 ct = rod_point(ft.w, ft.rocker, ft.g.c / 2);
        fr_vec3 cf = rod_point(ff.w, ff.rocker, ff.g.c / 2);
        worst = fmax(worst, fr_v3_norm(fr_v3_sub(ct, cf)));
        fr_pose pt, pf;
        fr_body_get_pose(ft.w, ft.crank, &pt);
        fr_body_get_pose(ff.w, ff.crank, &pf);
        fr_quat dq = fr_q_mul(pt.q, fr_q_conj(pf.q));
        *dangle = fmax(*dangle, fr_v3_norm(fr_q_log(dq)) * 2.0);
    }
    fr_world_destroy(ft.w);
    fr_world_destroy(ff.w);
    return worst;
}

/* The passive four-bar released at a crank angle of 4 rad swings under gravity (about 1.5
 * periods in 2 s). Tree + loop joint (reduced coordinates, the tree's response) and free
 * bodies + four hinges (maximal coordinates, block-diagonal M) are two discretisations of one ODE,
 * both first order: their difference must be O(dt), i.e. halve with dt; the bound is 2.4 times
 * the difference measured at 1 ms (4.2e-4 m). (Released higher, the light crank whips through
 * the top and the two drift apart in phase by O(dt) per swing times a large rate: still first
 * order over 0.5 s, e.g. 5.8e-3 m vs 2.9e-3 m from 2 rad, but not a tight comparison.) */
START_TEST(tree_fourbar_matches_free_bodies)
{
    double a1, a2;
    double d1 = fb_compare(4.0, 0.001, 2.0, &a1), d2 = fb_compare(4.0, 0.0005, 2.0, &a2);
    fprintf(stderr,
            "# four-bar tree vs free bodies, 2 s passive: point C apart %.3g m at 1 ms, %.3g m at "
            "0.5 ms (ratio %.3f); crank angle apart %.3g, %.3g rad\n",
            d1, d2, d1 / d2, a1, a2);
    ck_assert_msg(d1 < 1e-3, "formulations %g m apart", d1);
    ck_assert_msg(d1 / d2 > 1.7 && d1 / d2 < 2.4, "difference ratio %g: not O(dt)", d1 / d2);
}
END_TEST

/* The tree four-bar driven by the crank's own implicit joint PD as a velocity servo (kp 0,
 * kd 2 N·m·s/rad toward 2π rad/s) instead of a constraint motor: the loop's impulses change the
 * step's end velocity, to which the implicit damper answers (fr_tree_impulse_forces puts that
 * into tau_out). Over 2 s the energy must follow the joint forces' work up to the projection's
 * O(dt) loss: E − E0 − W halves with dt. */
static double fb_pd_gap(double dt, double *work)
{
    fourbar fb;
    fb_tree(&fb, M_PI / 2, false, 0, dt);
    fr_tree_data *d = fr_world_robot_data(fb.w, fb.robot);
    d->kp[0] = 0.0;
    d->kd[0] = 2.0;
    d->qd_ref[0] = 2 * M_PI;
    fr_world_energy e0, e;
    fr_world_energy_get(fb.w, &e0);
    int steps = (int)lround(2.0 / dt);
    for (int n = 0; n < steps; n++) ck_assert_int_eq(fr_world_step(fb.w), FR_OK);
    fr_world_energy_get(fb.w, &e);
    *work = e.joint_work - e0.joint_work;
    ck_assert_double_eq_tol(d->qd[0], 2 * M_PI, 1.0); /* it runs near its target */
    fr_world_destroy(fb.w);
    return (e.total - e0.total) - (e.work - e0.work);
}

START_TEST(tree_fourbar_pd_energy)
{
    double w1, w2;
    double g1 = fb_pd_gap(0.001, &w1), g2 = fb_pd_gap(0.0005, &w2);
    fprintf(stderr,
            "# tree four-bar on its crank's PD, 2 s: E − E0 − W %.4g J at 1 ms, %.4g J at 0.5 ms "
            "(ratio %.3f; the PD's work %.4g J)\n",
            g1, g2, g1 / g2, w1);
    ck_assert_msg(g1 < 0 && g2 < 0, "energy gained: %g, %g J", g1, g2);
    ck_assert_msg(fabs(g1 / g2 - 2.0) < 0.2, "gap ratio %g: not O(dt)", g1 / g2);
    ck_assert_msg(fabs(g1) < 0.05 * fabs(w1), "gap %g J of %g J of work", g1, w1);
}
END_TEST

/* ---------------------------------------------------------------- a pendulum on a link */

/* An arm (0.4 m rod, 0.5 kg) on a hinge about y at the origin, with a bob (0.3 kg, a small
 * sphere) hanging 0.25 m below its tip on a ball joint, pushed sideways so the ball joint works in
 * 3-D. mode 0: arm and bob free bodies with joints; 1: arm a robot link, bob a free body;
 * 2: arm a robot link, bob a second robot (a free-floating one-link tree). Returns the bob's
 * body and fills its start velocity. */
typedef struct pend {
    fr_world *w;
    fr_body_id arm, bob;
    int joint;
} pend;

static const double ARM_L = 0.4, BOB_M = 0.3, BOB_R = 0.03, DROP = 0.25;

static bool pend_verlet; /* the robots step with FR_INTEGRATOR_VERLET */

static void pend_make(pend *p, int mode, double dt)
{
    p->w = make_world(dt);
    const double th = 0.5; /* the arm, 0.5 rad below horizontal: x turned by +0.5 about y */
    fr_vec3 tip = fr_v3(ARM_L * cos(th), 0, -ARM_L * sin(th));
    fr_vec3 bobc = fr_v3_add(tip, fr_v3(0, 0, -DROP));
    double Ib = 0.4 * BOB_M * BOB_R * BOB_R;
    if (mode == 0) {
        p->arm = add_rod(p->w, "arm", ARM_L, fr_v3(0, 0, 0), tip);
        add_hinge(p->w, "shoulder", p->arm, FR_BODY_NULL, fr_v3(0, 0, 0), false, 0);
    } else {
        fr_tree *t = fr_tree_create();
        fr_link_def l0 = rod_link("arm", -1, fr_v3(0, 0, 0), ARM_L, th);
        ck_assert_int_eq(fr_tree_add_link(t, &l0), 0);
        ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
        fr_robot_def rd = {.name = "arm", .tree = t};
        int r;
        ck_assert_int_eq(fr_world_add_robot(p->w, &rd, &r), FR_OK);
        fr_tree_data *d = fr_world_robot_data(p->w, r);
        d->kp[0] = d->kd[0] = 0.0;
        if (pend_verlet) d->integrator = FR_INTEGRATOR_VERLET;
        p->arm = fr_world_robot_link_body(p->w, r, 0);
    }
    if (mode == 2) {
        fr_tree *t = fr_tree_create();
        fr_link_def lb = fr_link_def_default();
        lb.name = "bob";
        lb.joint_name = "bob_free";
        lb.parent = -1;
        lb.type = FR_JOINT_FREE;
        lb.mass = BOB_M;
        lb.inertia = fr_m3_diag(fr_v3(Ib, Ib, Ib));
        lb.q0_pos = bobc;
        lb.q0_rot = fr_q_identity();
        ck_assert_int_eq(fr_tree_add_link(t, &lb), 0);
        ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
        fr_robot_def rd = {.name = "bob", .tree = t};
        int r;
        ck_assert_int_eq(fr_world_add_robot(p->w, &rd, &r), FR_OK);
        fr_tree_data *d = fr_world_robot_data(p->w, r);
        if (pend_verlet) d->integrator = FR_INTEGRATOR_VERLET;
        /* free joint velocity: body twist (ω; v) in link coordinates (identity orientation) */
        d->qd[4] = 0.8;
        fr_world_robot_sync(p->w, r);
        p->bob = fr_world_robot_link_body(p->w, r, 0);
    } else {
        fr_body_def bd = fr_body_def_default();
        snprintf(bd.name, sizeof bd.name, "bob");
        bd.mass = BOB_M;
        bd.inertia = fr_m3_diag(fr_v3(Ib, Ib, Ib));
        bd.pose.p = bobc;
        bd.vel = fr_v3(0, 0.8, 0);
        ck_assert_int_eq(fr_world_add_body(p->w, &bd, &p->bob), FR_OK);
    }
    fr_joint_def jd = fr_joint_def_default(FR_CJOINT_BALL);
    snprintf(jd.name, sizeof jd.name, "hook");
    jd.a = p->arm;
    jd.b = p->bob;
    ck_assert_int_eq(fr_joint_def_at(p->w, &jd, tip, fr_v3(0, 0, 1)), FR_OK);
    ck_assert_int_eq(fr_world_add_joint(p->w, &jd, &p->joint), FR_OK);
}

static double pend_compare(int mode, double dt, double T, double *closure, double *dE)
{
    pend a, b;
    pend_make(&a, 0, dt);
    pend_make(&b, mode, dt);
    fr_world_energy e0, e;
    fr_world_energy_get(b.w, &e0);
    int steps = (int)lround(T / dt);
    double worst = 0.0;
    *closure = *dE = 0.0;
    for (int n = 0; n < steps; n++) {
        ck_assert_int_eq(fr_world_step(a.w), FR_OK);
        ck_assert_int_eq(fr_world_step(b.w), FR_OK);
        fr_pose pa, pb;
        fr_body_get_pose(a.w, a.bob, &pa);
        fr_body_get_pose(b.w, b.bob, &pb);
        worst = fmax(worst, fr_v3_norm(fr_v3_sub(pa.p, pb.p)));
        fr_vec3 tip = rod_point(b.w, b.arm, ARM_L / 2);
        *closure = fmax(*closure, fabs(fr_v3_norm(fr_v3_sub(pb.p, tip)) - DROP));
        fr_world_energy_get(b.w, &e);
        *dE = fmax(*dE, fabs(e.total - e0.total));
    }
    fr_world_destroy(a.w);
    fr_world_destroy(b.w);
    return worst;
}

/* The link↔body (mode 1) and link↔link of two trees (mode 2) pendulum against the all-free-body
 * one: first-order discretisations of one ODE, so the bob's paths differ by O(dt) (halving
 * with dt); the hook stays closed and the passive system's energy moves only by the projection's
 * O(dt) loss. */
START_TEST(link_pendulum_matches_free_bodies)
{
    int mode = 1 + (_i & 1);
    pend_verlet = _i >= 2;
    double c1, c2, e1, e2;
    double d1 = pend_compare(mode, 0.001, 1.5, &c1, &e1);
    double d2 = pend_compare(mode, 0.0005, 1.5, &c2, &e2);
    fprintf(stderr,
            "# pendulum on a link (%s%s), 1.5 s: bob apart from the free-body one %.3g m at 1 ms, "
            "%.3g m at 0.5 ms (ratio %.3f); hook error %.3g, %.3g m; |ΔE| %.3g, %.3g J\n",
            mode == 1 ? "bob a free body" : "bob a second robot",
            pend_verlet ? ", Verlet trees" : "", d1, d2, d1 / d2, c1, c2, e1, e2);
    ck_assert_msg(d1 < 3e-2, "bob paths %g m apart", d1);
    ck_assert_msg(d1 / d2 > 1.7 && d1 / d2 < 2.4, "difference ratio %g: not O(dt)", d1 / d2);
    ck_assert_msg(c1 < 1e-9 && c2 < 1e-9, "hook opened: %g, %g m", c1, c2);
    ck_assert_msg(e1 / e2 > 1.6, "energy drift %g, %g J: not O(dt)", e1, e2);
}
END_TEST

/* The pendulum of two robots (bob a free-floating tree) swinging into a static ground box: the
 * bob's contacts are solved in its tree's step (penalty, implicit, iterated) and the hook's rows
 * after it, on the step's articulated inertias with the contact's external inertia in them. The
 * hook stays closed, nothing faults, and the bob does not sink through. */
START_TEST(loop_with_link_contact)
{
    pend p;
    pend_make(&p, 2, 0.001);
    fr_shape *bs, *gs;
    ck_assert_int_eq(fr_shape_create_box(fr_v3(0.03, 0.03, 0.03), &bs), FR_OK);
    fr_shape_def sd = fr_shape_def_default(bs);
    ck_assert_int_eq(fr_body_add_shape(p.w, p.bob, &sd), FR_OK);
    fr_body_def gd = fr_body_def_default();
    gd.type = FR_BODY_STATIC;
    snprintf(gd.name, sizeof gd.name, "ground");
    /* its top at z = −0.5: the bob (centre at −0.44 at the start, hanging 0.25 m below the tip)
     * swings down into it */
    gd.pose.p = fr_v3(0, 0, -0.7);
    fr_body_id ground;
    ck_assert_int_eq(fr_world_add_body(p.w, &gd, &ground), FR_OK);
    ck_assert_int_eq(fr_shape_create_box(fr_v3(2, 2, 0.2), &gs), FR_OK);
    sd = fr_shape_def_default(gs);
    ck_assert_int_eq(fr_body_add_shape(p.w, ground, &sd), FR_OK);
    double hook = 0.0, pen = 0.0;
    int touching = 0;
    for (int n = 0; n < 1500; n++) {
        ck_assert_int_eq(fr_world_step(p.w), FR_OK);
        fr_pose pb;
        fr_body_get_pose(p.w, p.bob, &pb);
        fr_vec3 tip = rod_point(p.w, p.arm, ARM_L / 2);
        hook = fmax(hook, fabs(fr_v3_norm(fr_v3_sub(pb.p, tip)) - DROP));
        pen = fmax(pen, fr_world_max_penetration(p.w));
        touching += fr_world_contact_count(p.w) > 0;
    }
    fprintf(stderr,
            "# pendulum of two robots on the ground, 1.5 s: %d steps touching, hook error %.3g m, "
            "penetration %.3g m\n",
            touching, hook, pen);
    ck_assert_int_gt(touching, 100);
    ck_assert_msg(hook < 1e-8, "hook opened by %g m", hook);
    ck_assert_msg(pen < 5e-3, "penetration %g m", pen);
    fr_world_destroy(p.w);
}
END_TEST

/* ---------------------------------------------------------------- mimic */

/* Leader a (revolute, PD toward a moving target) with follower b (revolute, mimic of a with
 * multiplier −0.7, offset 0.1) on it and a third link c on b. */
static fr_tree *mimic_tree(void)
{
    fr_tree *t = fr_tree_create();
    fr_link_def a = rod_link("a", -1, fr_v3(0, 0, 0), 0.3, 0.2);
    a.axis = fr_v3(0, 1, 0);
    a.kp = 40.0;
    a.kd = 2.0;
    fr_link_def b = rod_link("b", 0, fr_v3(0.3, 0, 0), 0.25, 0.1 - 0.7 * 0.2);
    b.axis = fr_v3(0, 0.6, 0.8);
    b.mimic_joint = "a";
    b.mimic_multiplier = -0.7;
    b.mimic_offset = 0.1;
    b.damping = 0.05;
    fr_link_def c = rod_link("c", 1, fr_v3(0.25, 0, 0), 0.2, 0.3);
    c.axis = fr_v3(1, 0, 0);
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    ck_assert_int_eq(fr_tree_add_link(t, &b), 1);
    ck_assert_int_eq(fr_tree_add_link(t, &c), 2);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    return t;
}

/* The world solves the mimic row with its other rows (g = e_b + 0.7·e_a, the tree's response);
 * the tree alone solves it inside its step (src/articulated/mimic.c). Same equations, another
 * code path: the trajectories agree to round-off, and the follower stays on its constraint. */
START_TEST(mimic_through_solver_matches_tree)
{
    fr_world *w = make_world(0.001);
    fr_robot_def rd = {.name = "m", .tree = mimic_tree()};
    int r;
    ck_assert_int_eq(fr_world_add_robot(w, &rd, &r), FR_OK);
    fr_tree_data *dw = fr_world_robot_data(w, r);
    ck_assert(dw->mimic_external);
    fr_tree *t = mimic_tree();
    fr_tree_data *dt = fr_tree_data_create(t);
    dt->gravity = fr_world_get_def(w)->gravity;
    double worst = 0.0, worst_c = 0.0, moved = 0.0, worst_tau = 0.0, tau_scale = 0.0;
    for (int n = 0; n < 3000; n++) {
        double ref = 0.2 + 0.8 * sin(2 * M_PI * 0.7 * n * 0.001);
        dw->q_ref[0] = dt->q_ref[0] = ref;
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        ck_assert_int_eq(fr_tree_step(t, dt, 0.001), FR_OK);
        for (int k = 0; k < 3; k++) {
            worst = fmax(worst, fabs(dw->q[k] - dt->q[k]));
            /* the joint forces, the mimic force included (the world adds it after its solve) */
            worst_tau = fmax(worst_tau, fabs(dw->tau_out[k] - dt->tau_out[k]));
            tau_scale = fmax(tau_scale, fabs(dt->tau_out[k]));
        }
        double C = dw->q[1] + 0.7 * dw->q[0] - 0.1;
        worst_c = fmax(worst_c, fabs(C));
        moved = fmax(moved, fabs(dw->qd[1]));
    }
    fprintf(stderr,
            "# mimic through the world's solver vs the tree's own: q apart %.3g rad; follower "
            "error %.3g rad at up to %.3g rad/s; joint forces apart %.3g N·m (of %.3g)\n",
            worst, worst_c, moved, worst_tau, tau_scale);
    ck_assert_msg(worst_tau < 1e-9 * tau_scale, "joint forces apart by %g N·m", worst_tau);
    ck_assert_msg(moved > 0.5, "the follower hardly moved (%g rad/s)", moved);
    ck_assert_msg(worst_c < 1e-6, "follower off its constraint by %g rad", worst_c);
    ck_assert_msg(worst < 1e-9, "world and tree apart by %g rad", worst);
    fr_tree_data_destroy(dt);
    fr_tree_destroy(t);
    fr_world_destroy(w);
}
END_TEST

/* ---------------------------------------------------------------- the tick path */

/* Stepping a world with a closed tree loop, a link↔body joint, a link↔link joint of two trees
 * and a mimic joint allocates, locks and prints nothing. */
START_TEST(loops_no_allocation)
{
    fourbar fb;
    fb_tree(&fb, M_PI / 2, true, 2 * M_PI, 0.001);
    for (int n = 0; n < 10; n++) ck_assert_int_eq(fr_world_step(fb.w), FR_OK);
    pend p;
    pend_make(&p, 2, 0.001);
    fr_world *wm = make_world(0.001);
    fr_robot_def rd = {.name = "m", .tree = mimic_tree()};
    ck_assert_int_eq(fr_world_add_robot(wm, &rd, NULL), FR_OK);
    ck_assert_int_eq(fr_world_step(p.w), FR_OK);
    ck_assert_int_eq(fr_world_step(wm), FR_OK);
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    int errs = 0;
    for (int n = 0; n < 200; n++) {
        errs += fr_world_step(fb.w) != FR_OK;
        errs += fr_world_step(p.w) != FR_OK;
        errs += fr_world_step(wm) != FR_OK;
    }
    fri_watch_counts c = fri_watch_disarm();
    FRI_WATCH_ASSERT_QUIET(c);
    ck_assert_int_eq(errs, 0);
    fr_world_destroy(fb.w);
    fr_world_destroy(p.w);
    fr_world_destroy(wm);
}
END_TEST

static Suite *loops_suite(void)
{
    Suite *s = suite_create("loops");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, tree_response_matches_crba, 0, 4);
    tcase_add_test(tc, tree_fourbar_motor_10s);
    tcase_add_test(tc, tree_fourbar_energy_first_order);
    tcase_add_test(tc, tree_fourbar_matches_free_bodies);
    tcase_add_test(tc, tree_fourbar_pd_energy);
    tcase_add_loop_test(tc, link_pendulum_matches_free_bodies, 0, 4);
    tcase_add_test(tc, loop_with_link_contact);
    tcase_add_test(tc, mimic_through_solver_matches_tree);
    tcase_add_test(tc, loops_no_allocation);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(loops_suite)
