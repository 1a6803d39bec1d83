/* A world step that diverges says where and when (fr_world_get_fault): a free body thrown faster
 * than FR_WORLD_MAX_SPEED, a robot joint whose explicit PD blows up; and the contained-fault
 * counters add up the robots'. */
#include <string.h>

#include "frtest.h"
#include "fureru/world.h"
#include "interpose.h"

static fr_world *world(void)
{
    fr_world_def wd = fr_world_def_default();
    wd.max_bodies = 8;
    wd.max_robots = 2;
    fr_world *w;
    ck_assert_int_eq(fr_world_create(&wd, &w), FR_OK);
    return w;
}

START_TEST(test_body_divergence_named)
{
    fr_world *w = world();
    fr_body_def b = fr_body_def_default();
    snprintf(b.name, sizeof b.name, "slingshot");
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &b, &id), FR_OK);
    for (int k = 0; k < 10; k++) ck_assert_int_eq(fr_world_step(w), FR_OK);
    ck_assert_int_eq(fr_world_get_fault(w)->code, 0);
    /* a body pushed to 2 km/s in one step */
    ck_assert_int_eq(fr_body_apply_force(w, id, fr_v3(2e6, 0, 0), fr_v3(0, 0, 0)), FR_OK);
    ck_assert_int_eq(fr_world_step(w), FR_ERR_NUMERIC);
    const fr_world_fault *f = fr_world_get_fault(w);
    ck_assert_int_eq(f->code, FR_ERR_NUMERIC);
    ck_assert_str_eq(f->what, "body 'slingshot'");
    ck_assert_ptr_nonnull(strstr(f->quantity, "velocity"));
    ck_assert(f->value > FR_WORLD_MAX_SPEED);
    ck_assert_rel(f->time, 0.010, 1e-12, 0); /* the step that started at t = 10 ms */
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_joint_divergence_named)
{
    fr_world *w = world();
    fr_tree *t = fr_tree_create();
    fr_link_def a = fr_link_def_default();
    a.name = "base";
    a.joint_name = "mount";
    a.type = FR_JOINT_FIXED;
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    fr_link_def b = fr_link_def_default();
    b.name = "finger";
    b.joint_name = "knuckle";
    b.parent = 0;
    b.mass = 1e-3;
    b.com = fr_v3(0.01, 0, 0);
    b.inertia = fr_m3_diag(fr_v3(1e-8, 1e-8, 1e-8));
    ck_assert_int_eq(fr_tree_add_link(t, &b), 1);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd;
    memset(&rd, 0, sizeof rd);
    snprintf(rd.name, sizeof rd.name, "hand");
    rd.tree = t;
    int r;
    ck_assert_int_eq(fr_world_add_robot(w, &rd, &r), FR_OK);
    fr_tree_data *td = fr_world_robot_data(w, r);
    td->pd_mode = FR_PD_EXPLICIT; /* the form that is unstable with stiff gains */
    td->kp[0] = 1e6;
    td->q_ref[0] = 1;
    int err = FR_OK, k;
    for (k = 0; k < 1000 && !err; k++) err = fr_world_step(w);
    ck_assert_int_eq(err, FR_ERR_NUMERIC);
    const fr_world_fault *f = fr_world_get_fault(w);
    ck_assert_str_eq(f->what, "joint 'hand/knuckle'");
    ck_assert_ptr_nonnull(strstr(f->quantity, "joint"));
    ck_assert_rel(f->time, (k - 1) * 1e-3, 1e-9, 0);
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_contained_counters)
{
    fr_world *w = world();
    fr_tree *t = fr_tree_create();
    fr_link_def a = fr_link_def_default();
    a.name = "arm";
    a.joint_name = "j";
    a.com = fr_v3(0.2, 0, 0);
    a.max_velocity = 1.0;
    ck_assert_int_eq(fr_tree_add_link(t, &a), 0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd;
    memset(&rd, 0, sizeof rd);
    snprintf(rd.name, sizeof rd.name, "r");
    rd.tree = t;
    int r;
    ck_assert_int_eq(fr_world_add_robot(w, &rd, &r), FR_OK);
    fr_tree_data *td = fr_world_robot_data(w, r);
    td->kp[0] = 1e3;
    td->q_ref[0] = 2;
    for (int k = 0; k < 500; k++) ck_assert_int_eq(fr_world_step(w), FR_OK);
    fr_world_counters c;
    fr_world_get_counters(w, &c);
    ck_assert_int_gt(c.velocity_limited, 0);
    ck_assert_int_eq(c.velocity_limited, td->velocity_limited);
    ck_assert_int_eq(fr_world_get_fault(w)->code, 0);
    fr_world_destroy(w);
}
END_TEST

/* The divergence checks run every step and the fault record is written on the stepping thread:
 * neither allocates, locks, waits or prints. */
START_TEST(test_fault_path_does_not_allocate)
{
    fr_world *w = world();
    fr_body_def b = fr_body_def_default();
    snprintf(b.name, sizeof b.name, "slingshot");
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &b, &id), FR_OK);
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    for (int k = 0; k < 100; k++) fr_world_step(w);
    fr_body_apply_force(w, id, fr_v3(2e6, 0, 0), fr_v3(0, 0, 0));
    int err = fr_world_step(w);
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_eq(err, FR_ERR_NUMERIC);
    FRI_WATCH_ASSERT_QUIET(c);
    fr_world_destroy(w);
}
END_TEST

static Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("faults");
    tcase_add_test(tc, test_body_divergence_named);
    tcase_add_test(tc, test_joint_divergence_named);
    tcase_add_test(tc, test_contained_counters);
    tcase_add_test(tc, test_fault_path_does_not_allocate);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return frtest_run(faults_suite());
}
