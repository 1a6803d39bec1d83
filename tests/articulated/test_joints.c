/* src/articulated joint semantics beyond the plain tree: mimic joints (mimic.c) against the
 * constrained equations of motion solved independently (CRBA + RNEA + a KKT system), and held
 * while the tree moves; the motor speed limit; the link named when a step goes non-finite. */
#include <string.h>

#include "frtest.h"
#include "fureru/articulated.h"
#include "interpose.h"

/* A fixed post with two branches. Joint "a" swings an arm; "b"
 * (another branch) follows it with multiplier −0.7 and offset 0.1; "c" (prismatic, on the arm)
 * follows it with 0.02 and offset 0.01 — a gripper finger. */
static fr_tree *mimic_tree(void)
{
    fr_tree *t = fr_tree_create();
    fr_link_def p = fr_link_def_default();
    p.name = "post";
    p.joint_name = "mount";
    p.type = FR_JOINT_FIXED;
    p.mass = 2;
    ck_assert_int_eq(fr_tree_add_link(t, &p), 0);
    fr_link_def a = fr_link_def_default();
    a.name = "arm";
    a.joint_name = "a";
    a.parent = 0;
    a.axis = fr_v3(0, 1, 0);
    a.joint_pose = (fr_pose){fr_v3(0, 0, 0.5), fr_q_identity()};
    a.mass = 1.2;
    a.com = fr_v3(0.2, 0, 0);
    a.inertia = fr_m3_diag(fr_v3(0.001, 0.02, 0.02));
    a.max_velocity = 3; /* rad/s: the motor's speed limit, reached in the tests that drive it */
    ck_assert_int_eq(fr_tree_add_link(t, &a), 1);
    fr_link_def b = a;
    b.max_velocity = 0;
    b.name = "flap";
    b.joint_name = "b";
    b.joint_pose = (fr_pose){fr_v3(0, 0.1, 0.3), fr_q_axis_angle(fr_v3(1, 0, 0), 0.4)};
    b.axis = fr_v3(0, 0, 1);
    b.mass = 0.4;
    b.com = fr_v3(0.05, 0.02, 0);
    b.inertia = fr_m3_diag(fr_v3(0.0004, 0.001, 0.001));
    b.mimic_joint = "a";
    b.mimic_multiplier = -0.7;
    b.mimic_offset = 0.1;
    ck_assert_int_eq(fr_tree_add_link(t, &b), 2);
    fr_link_def c = fr_link_def_default();
    c.name = "finger";
    c.joint_name = "c";
    c.parent = 1;
    c.type = FR_JOINT_PRISMATIC;
    c.axis = fr_v3(0, 1, 0);
    c.joint_pose = (fr_pose){fr_v3(0.4, 0, 0), fr_q_identity()};
    c.mass = 0.015;
    c.inertia = fr_m3_diag(fr_v3(2e-6, 2e-6, 1e-6));
    c.mimic_joint = "a";
    c.mimic_multiplier = 0.02;
    c.mimic_offset = 0.01;
    ck_assert_int_eq(fr_tree_add_link(t, &c), 3);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    return t;
}

/* The constraint rows g(q) = q_f − m·q_j − o. */
static void constraint(const fr_tree *t, const fr_tree_data *d, double G[2][3], double g[2])
{
    const char *fol[2] = {"b", "c"};
    for (int r = 0; r < 2; r++) {
        int f = fr_tree_joint_find(t, fol[r]);
        const fr_link_def *ld = fr_tree_link_def(t, f);
        int j = fr_tree_joint_find(t, ld->mimic_joint);
        memset(G[r], 0, sizeof G[r]);
        G[r][fr_tree_link_v_index(t, f)] = 1;
        G[r][fr_tree_link_v_index(t, j)] = -ld->mimic_multiplier;
        g[r] = d->q[fr_tree_link_q_index(t, f)] -
               ld->mimic_multiplier * d->q[fr_tree_link_q_index(t, j)] - ld->mimic_offset;
    }
}

/* One Euler step's accelerations against [M Gᵀ; G 0][qdd; −λ] = [τ − C; (−g/dt − G qd)/dt],
 * M from CRBA, C from RNEA (link coordinates, no ABA), solved by Gaussian elimination. */
START_TEST(test_mimic_matches_kkt)
{
    fr_tree *t = mimic_tree();
    fr_tree_data *d = fr_tree_data_create(t);
    frtest_rng rng = {7};
    const double dt = 1e-3;
    for (int trial = 0; trial < 20; trial++) {
        fr_tree_data_reset(t, d);
        for (int k = 0; k < 3; k++) {
            d->q[k] = frtest_uniform(&rng, -1, 1) * (k == 2 ? 0.01 : 1);
            d->qd[k] = frtest_uniform(&rng, -2, 2) * (k == 2 ? 0.01 : 1);
            d->tau[k] = frtest_uniform(&rng, -3, 3) * (k == 2 ? 0.01 : 1);
        }
        double G[2][3], g[2], M[9], C[3], zero[3] = {0, 0, 0};
        constraint(t, d, G, g);
        fr_tree_crba(t, d, M);
        fr_tree_rnea(t, d, zero, C);
        double A[5][6] = {{0}};
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) A[r][c] = M[r * 3 + c];
            for (int k = 0; k < 2; k++) A[r][3 + k] = G[k][r];
            A[r][5] = d->tau[r] - C[r];
        }
        for (int k = 0; k < 2; k++) {
            for (int c = 0; c < 3; c++) A[3 + k][c] = G[k][c];
            double gqd = G[k][0] * d->qd[0] + G[k][1] * d->qd[1] + G[k][2] * d->qd[2];
            A[3 + k][5] = (-g[k] / dt - gqd) / dt;
        }
        for (int c = 0; c < 5; c++) { /* elimination with partial pivoting */
            int p = c;
            for (int r = c + 1; r < 5; r++)
                if (fabs(A[r][c]) > fabs(A[p][c])) p = r;
            for (int k = 0; k < 6; k++) {
                double x = A[c][k];
                A[c][k] = A[p][k];
                A[p][k] = x;
            }
            for (int r = 0; r < 5; r++)
                if (r != c) {
                    double f = A[r][c] / A[c][c];
                    for (int k = c; k < 6; k++) A[r][k] -= f * A[c][k];
                }
        }
        double qd0[3];
        memcpy(qd0, d->qd, sizeof qd0);
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        for (int k = 0; k < 3; k++) {
            double want = A[k][5] / A[k][k];
            ck_assert_msg(fabs(d->qdd[k] - want) <= 1e-9 * (1 + fabs(want)),
                          "trial %d dof %d: qdd %.15g vs KKT %.15g", trial, k, d->qdd[k], want);
            ck_assert(fabs((d->qd[k] - qd0[k]) / dt - want) <= 1e-6 * (1 + fabs(want)));
        }
        /* and the step lands on the constraint */
        constraint(t, d, G, g);
        ck_assert(fabs(g[0]) < 1e-12 && fabs(g[1]) < 1e-12);
    }
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* While the tree swings (gravity, a PD on the driving joint toward a moving target, a damper on
 * the follower, random pushes), both followers stay on multiplier·q + offset within 1e-6 (the
 * issue's bound; the projection gives round-off), for both integrators; q_a travels > 1 rad. */
START_TEST(test_mimic_follows_while_moving)
{
    fr_tree *t = mimic_tree();
    fr_tree_data *d = fr_tree_data_create(t);
    d->integrator = _i ? FR_INTEGRATOR_VERLET : FR_INTEGRATOR_EULER;
    frtest_rng rng = {11};
    int a = fr_tree_joint_find(t, "a");
    int va = fr_tree_link_v_index(t, a), qa = fr_tree_link_q_index(t, a);
    /* the followers start on the constraint */
    double G[2][3], g[2];
    constraint(t, d, G, g);
    ck_assert(fabs(g[0]) < 1e-15 && fabs(g[1]) < 1e-15);
    d->kp[va] = 50;
    d->kd[va] = 1;
    double lo = 0, hi = 0, worst = 0;
    for (int k = 0; k < 5000; k++) {
        d->q_ref[qa] = 1.2 * sin(2 * M_PI * 0.7 * k * 1e-3);
        fr_tree_add_ext_force(d, 3, fr_tree_point_world(d, 3, fr_v3_zero()),
                              fr_v3(frtest_uniform(&rng, -1, 1), frtest_uniform(&rng, -1, 1), 0));
        ck_assert_int_eq(fr_tree_step(t, d, 1e-3), FR_OK);
        constraint(t, d, G, g);
        worst = fmax(worst, fmax(fabs(g[0]), fabs(g[1])));
        lo = fmin(lo, d->q[qa]);
        hi = fmax(hi, d->q[qa]);
    }
    ck_assert_msg(hi - lo > 1.0, "the driving joint moved only %g rad", hi - lo);
    ck_assert_msg(worst < 1e-6, "followers off their constraint by %g", worst);
    ck_assert_msg(worst < 1e-12, "followers off by %g: the projection should land them", worst);
    ck_assert_int_eq(d->mimic_singular, 0);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* Bad mimic definitions are refused when the tree is finalised. */
START_TEST(test_mimic_rejected)
{
    fr_tree *t = fr_tree_create();
    fr_link_def a = fr_link_def_default();
    a.name = "a";
    a.joint_name = "ja";
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    fr_link_def b = a;
    b.name = "b";
    b.joint_name = "jb";
    b.parent = 0;
    b.mimic_joint = "nope";
    ck_assert_int_eq(fr_tree_add_link(t, &b), 1);
    ck_assert_int_eq(fr_tree_finalize(t), FR_ERR_INVAL); /* no such joint */
    fr_tree_destroy(t);
    t = fr_tree_create();
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    b.mimic_joint = "ja";
    b.type = FR_JOINT_SPHERICAL;
    ck_assert_int_eq(fr_tree_add_link(t, &b), FR_ERR_INVAL); /* followers are 1-DOF */
    fr_tree_destroy(t);
}
END_TEST

/* A horizontal arm (no gravity about its axis) driven by a stiff PD toward a far target: its speed
 * stays at the motor's limit (the servo leaves at most 1/11 of a step's excess); without the
 * motor pushing, gravity may take the same joint faster. */
START_TEST(test_motor_speed_limit)
{
    fr_tree *t = fr_tree_create();
    fr_link_def a = fr_link_def_default();
    a.name = "arm";
    a.joint_name = "j";
    a.axis = fr_v3(0, 0, 1);
    a.mass = 1;
    a.com = fr_v3(0.3, 0, 0);
    a.inertia = fr_m3_diag(fr_v3(0.001, 0.01, 0.01));
    a.max_velocity = 2.0;
    a.effort_limit = 50;
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_tree_data *d = fr_tree_data_create(t);
    d->kp[0] = 1e4;
    d->kd[0] = 10;
    d->q_ref[0] = 3.0;
    double top = 0;
    for (int k = 0; k < 3000; k++) {
        ck_assert_int_eq(fr_tree_step(t, d, 1e-3), FR_OK);
        top = fmax(top, d->qd[0]);
    }
    ck_assert_msg(top <= 2.0 * (1 + 1.0 / 11) && top > 1.9, "top speed %g", top);
    ck_assert_int_gt(d->velocity_limited, 0);
    ck_assert_rel(d->q[0], 3.0, 1e-3, 0); /* it still gets there */
    /* the same joint under gravity without a motor: faster than the motor's limit */
    fr_tree_data_reset(t, d);
    d->gravity = fr_v3(0, -9.81, 0);
    top = 0;
    for (int k = 0; k < 1000; k++) {
        ck_assert_int_eq(fr_tree_step(t, d, 1e-3), FR_OK);
        top = fmax(top, fabs(d->qd[0]));
    }
    ck_assert_msg(top > 4.0, "a falling arm %g rad/s", top);
    ck_assert_int_eq(d->velocity_limited, 0);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* An explicit PD far too stiff for its link goes non-finite: the step says which link. */
START_TEST(test_fault_link_named)
{
    fr_tree *t = fr_tree_create();
    fr_link_def a = fr_link_def_default();
    a.name = "base";
    a.joint_name = "j0";
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    fr_link_def b = a;
    b.name = "tip";
    b.joint_name = "j1";
    b.parent = 0;
    b.mass = 1e-3;
    b.inertia = fr_m3_diag(fr_v3(1e-8, 1e-8, 1e-8));
    b.com = fr_v3(0.01, 0, 0);
    ck_assert_int_eq(fr_tree_add_link(t, &b), 1);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_tree_data *d = fr_tree_data_create(t);
    d->pd_mode = FR_PD_EXPLICIT;
    d->kp[1] = 1e6;
    d->q_ref[1] = 1;
    int err = FR_OK, k;
    for (k = 0; k < 2000 && !err; k++) err = fr_tree_step(t, d, 1e-3);
    ck_assert_int_eq(err, FR_ERR_NUMERIC);
    ck_assert_int_ge(d->fault_link, 0);
    ck_assert_int_le(d->fault_link, 1);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* Mimic projection and the motor speed limit run in the step: no allocation, lock, wait or I/O. */
START_TEST(test_joints_step_does_not_allocate)
{
    fr_tree *t = mimic_tree();
    fr_tree_data *d = fr_tree_data_create(t);
    int a = fr_tree_joint_find(t, "a");
    d->kp[fr_tree_link_v_index(t, a)] = 1e4;
    d->q_ref[fr_tree_link_q_index(t, a)] = 2;
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    int err = FR_OK;
    for (int k = 0; k < 1000; k++) err |= fr_tree_step(t, d, 1e-3);
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_eq(err, FR_OK);
    ck_assert_int_gt(d->velocity_limited, 0); /* the speed limit was in play */
    FRI_WATCH_ASSERT_QUIET(c);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

static Suite *joints_suite(void)
{
    Suite *s = suite_create("joints");
    TCase *tc = tcase_create("mimic");
    tcase_add_test(tc, test_mimic_matches_kkt);
    tcase_add_loop_test(tc, test_mimic_follows_while_moving, 0, 2);
    tcase_add_test(tc, test_mimic_rejected);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("motor");
    tcase_add_test(tm, test_motor_speed_limit);
    tcase_add_test(tm, test_fault_link_named);
    tcase_add_test(tm, test_joints_step_does_not_allocate);
    suite_add_tcase(s, tm);
    return s;
}

int main(void)
{
    return frtest_run(joints_suite());
}
