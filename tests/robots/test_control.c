/* src/control: hand control through the Jacobian reaches what the arm can reach (with gravity
 * loading its joints) and stays bounded beyond; the gait's foot targets are the ellipse (checked
 * through the tree's own kinematics, not the controller's); the hexapod of
 * config/scenes/hexapod.yaml walks, turns, reverses and survives being lifted; nothing the
 * controllers do per step allocates. */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/control.h"
#include "fureru/scene.h"
#include "fureru/urdf.h"
#include "interpose.h"
#include "scene/robots.h"

static fr_tree *load_tree(const char *rel, const fr_urdf_tree_opts *o)
{
    fr_urdf *u;
    fr_diag d;
    int err = fr_urdf_load_file(frtest_path(rel), &u, &d);
    ck_assert_msg(err == FR_OK, "%s:%d: %s", d.file, d.line, d.msg);
    fr_tree *t;
    ck_assert_int_eq(fr_urdf_build_tree(u, o, &t, NULL), FR_OK);
    fr_urdf_destroy(u);
    return t;
}

/* ---------------------------------------------------------------- hand control */

/* The arm starts bent; the target is where the hand is in another posture (so it is reachable);
 * the joints are PD-held against gravity. With gravity compensation the hand error goes to zero;
 * without it, the Cartesian integral takes the load instead. With orientation the 6-DOF arm
 * reaches the full pose. */
static void reach(bool orientation, bool gravity_comp, double integral)
{
    fr_tree *t = load_tree("tests/robots/good/arm.urdf", NULL);
    fr_tree_data *d = fr_tree_data_create(t);
    int flange = fr_tree_link_find(t, "flange");
    const fr_vec3 tip = fr_v3(0, 0, 0.05);
    /* the goal: the hand in another posture */
    const double goal_q[6] = {0.7, 0.5, 0.9, -0.4, 0.6, 0.3};
    for (int i = 0; i < 6; i++) d->q[i] = goal_q[i];
    fr_tree_forward_kinematics(t, d);
    fr_vec3 goal = fr_tree_point_world(d, flange, tip);
    fr_quat goal_rot = d->pose[flange].q;
    fr_tree_data_reset(t, d);
    d->q[1] = 0.3;
    d->q[2] = 0.5;
    fr_tree_forward_kinematics(t, d);

    fr_hand_def hd = fr_hand_def_default();
    hd.link = flange;
    hd.point = tip;
    hd.orientation = orientation;
    hd.gravity_comp = gravity_comp;
    hd.integral = integral;
    hd.kp = 300;
    hd.kd = 6;
    fr_hand *h;
    ck_assert_int_eq(fr_hand_create(t, &hd, &h), FR_OK);
    fr_hand_set_target(h, goal, goal_rot);
    fr_vec3 e0;
    fr_hand_error(h, d, &e0, NULL);
    ck_assert(fr_v3_norm(e0) > 0.2);
    double e_mid = 0;
    for (int n = 0; n < 6000; n++) {
        ck_assert_int_eq(fr_hand_update(h, t, d, 0.001), FR_OK);
        ck_assert_int_eq(fr_tree_step(t, d, 0.001), FR_OK);
        if (n == 500) {
            fr_vec3 e;
            fr_hand_error(h, d, &e, NULL);
            e_mid = fr_v3_norm(e);
        }
    }
    /* the feed-forward form converges within the PD's settling time; the integral more slowly */
    ck_assert_msg(e_mid < (gravity_comp ? 0.1 : 0.5) * fr_v3_norm(e0), "slow: %g m after 0.5 s",
                  e_mid);
    fr_vec3 ep, er;
    fr_hand_error(h, d, &ep, &er);
    ck_assert_msg(fr_v3_norm(ep) < 1e-6, "hand error %g m", fr_v3_norm(ep));
    if (orientation) ck_assert_msg(fr_v3_norm(er) < 1e-6, "orientation error %g", fr_v3_norm(er));
    /* gravity really loads the joints: held by the feed-forward or by the PD springs */
    int j2 = fr_tree_link_v_index(t, fr_tree_joint_find(t, "j2"));
    double hold = gravity_comp ? d->tau[j2] : d->kp[j2] * (d->q_ref[j2] - d->q[j2]);
    ck_assert_msg(fabs(hold) > 0.5, "no gravity load (%g N·m)", hold);
    fr_hand_destroy(h);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}

START_TEST(test_hand_reaches_position)
{
    reach(false, true, 0);
}
END_TEST

START_TEST(test_hand_reaches_pose)
{
    reach(true, true, 0);
}
END_TEST

START_TEST(test_hand_integral_takes_the_load)
{
    reach(false, false, 5.0);
}
END_TEST

/* A target three times beyond reach: the targets stay finite, within the joint limits and move
 * no faster than max_speed; the arm comes to rest stretched towards the target. */
START_TEST(test_hand_beyond_reach_bounded)
{
    fr_tree *t = load_tree("tests/robots/good/arm.urdf", NULL);
    fr_tree_data *d = fr_tree_data_create(t);
    int flange = fr_tree_link_find(t, "flange"), upper = fr_tree_link_find(t, "upper_arm");
    const fr_vec3 tip = fr_v3(0, 0, 0.05);
    d->q[1] = 0.3;
    d->q[2] = 0.6;
    fr_tree_forward_kinematics(t, d);
    fr_vec3 shoulder = d->pose[upper].p; /* the pitch axis */
    double reach_len = 0.4 + 0.3 + 0.04 + 0.04 + 0.05;
    fr_vec3 dir = fr_v3_normalize(fr_v3(1, 0.5, 0.6));
    fr_vec3 target = fr_v3_mad(shoulder, 3 * reach_len, dir);
    fr_hand_def hd = fr_hand_def_default();
    hd.link = flange;
    hd.point = tip;
    hd.kp = 300;
    hd.kd = 6;
    fr_hand *h;
    ck_assert_int_eq(fr_hand_create(t, &hd, &h), FR_OK);
    fr_hand_set_target(h, target, fr_q_identity());
    double prev[6];
    for (int n = 0; n < 5000; n++) {
        memcpy(prev, n ? d->q_ref : d->q, sizeof prev);
        ck_assert_int_eq(fr_hand_update(h, t, d, 0.001), FR_OK);
        for (int i = 0; i < 6; i++) {
            const fr_link_def *ld = fr_tree_link_def(t, i + 1);
            ck_assert(isfinite(d->q_ref[i]) && isfinite(d->tau[i]));
            ck_assert(fabs(d->q_ref[i] - prev[i]) <= hd.max_speed * 0.001 * (1 + 1e-12));
            if (ld->limited) ck_assert(d->q_ref[i] >= ld->q_min && d->q_ref[i] <= ld->q_max);
        }
        ck_assert_int_eq(fr_tree_step(t, d, 0.001), FR_OK);
    }
    double speed = 0;
    for (int i = 0; i < 6; i++) speed = fmax(speed, fabs(d->qd[i]));
    ck_assert_msg(speed < 1e-3, "still moving (%g rad/s)", speed);
    fr_vec3 hand = fr_tree_point_world(d, flange, tip);
    fr_vec3 arm = fr_v3_sub(hand, shoulder);
    ck_assert_msg(fr_v3_norm(arm) > 0.97 * reach_len, "not stretched: %g of %g", fr_v3_norm(arm),
                  reach_len);
    ck_assert_msg(fr_v3_dot(fr_v3_normalize(arm), dir) > 0.995, "not pointing at the target");
    fr_hand_destroy(h);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* The same through a scene file (type hand): reaches the point given there. */
START_TEST(test_hand_scene)
{
    fr_scene *s;
    fr_diag d;
    int err = fr_scene_load(frtest_path("tests/robots/good/arm-hand.yaml"), NULL, 0, &s, &d);
    ck_assert_msg(err == FR_OK, "%s:%d:%d %s %s", d.file, d.line, d.col, d.field, d.msg);
    fr_world *w = fr_scene_world(s);
    fr_hand *h = fri_scene_robot_hand((fri_scene *)s, "arm");
    ck_assert_ptr_nonnull(h);
    for (int n = 0; n < 4000; n++) ck_assert_int_eq(fr_world_step(w), FR_OK);
    fr_vec3 e;
    fr_hand_error(h, fr_world_robot_data(w, 0), &e, NULL);
    ck_assert_msg(fr_v3_norm(e) < 1e-6, "hand error %g", fr_v3_norm(e));
    /* and the link body the contact stage sees is where the tree says */
    const fr_tree *t = fr_world_robot_tree(w, 0);
    int flange = fr_tree_link_find(t, "flange");
    fr_pose p;
    fr_body_get_pose(w, fr_world_robot_link_body(w, 0, flange), &p);
    fr_vec3 hand = fr_pose_apply(p, fr_v3_sub(fr_v3(0, 0, 0.05), fr_tree_link_def(t, flange)->com));
    ck_assert(fr_v3_norm(fr_v3_sub(hand, fr_v3(0.3, 0.2, 0.7))) < 1e-6);
    fr_scene_destroy(s);
}
END_TEST

/* ---------------------------------------------------------------- the gait's kinematics */

static const char *const leg_names[6] = {"l1", "r2", "l3", "r1", "l2", "r3"};

static fr_tree *hexapod_tree(void)
{
    static const char *const parts[4] = {"yaw", "lift", "knee", "ankle"};
    static const double posture[4] = {0.0, 0.5236, -1.7453, -0.3491};
    char names[24][16];
    const char *np[24];
    double vals[24];
    for (int l = 0; l < 6; l++)
        for (int k = 0; k < 4; k++) {
            snprintf(names[4 * l + k], sizeof names[0], "%s_%s", leg_names[l], parts[k]);
            np[4 * l + k] = names[4 * l + k];
            vals[4 * l + k] = posture[k];
        }
    fr_urdf_tree_opts o = fr_urdf_tree_opts_default();
    o.q0_names = np;
    o.q0_values = vals;
    o.nq0 = 24;
    return load_tree("config/robots/hexapod.urdf", &o);
}

static fr_gait_def hexapod_gait(const fr_tree *t)
{
    fr_gait_def g = fr_gait_def_default();
    g.nlegs = 6;
    for (int l = 0; l < 6; l++) {
        char hip[32], foot[32];
        snprintf(hip, sizeof hip, "%s_coxa", leg_names[l]);
        snprintf(foot, sizeof foot, "%s_tarsus", leg_names[l]);
        g.legs[l].hip_link = fr_tree_link_find(t, hip);
        g.legs[l].foot_link = fr_tree_link_find(t, foot);
        g.legs[l].tip = fr_v3(0.04, 0, 0);
        g.legs[l].phase = l < 3 ? 0.0 : 0.5;
    }
    return g;
}

/* Foot tip of leg l in the base frame from the tree's own kinematics. */
static fr_vec3 tree_foot(const fr_tree *t, const fr_tree_data *d, const fr_gait_def *g, int l)
{
    fr_vec3 w = fr_tree_point_world(d, g->legs[l].foot_link, g->legs[l].tip);
    (void)t;
    return fr_pose_apply_inv(d->pose[g->body_link], w);
}

/* Kinematic playback (joints put exactly at the targets, no dynamics): the tree's feet land on
 * the targets; a stance foot moves at −(v + ω × p) in the body frame (it stays on the ground
 * while the body moves); a swing foot draws the upper half of an ellipse of height step_height
 * whose chord is on the stance line. Forward, turning and reversing commands. */
START_TEST(test_gait_foot_paths)
{
    fr_tree *t = hexapod_tree();
    fr_tree_data *d = fr_tree_data_create(t);
    fr_gait_def g = hexapod_gait(t);
    const double cmds[3][3] = {{0.15, 0, 0}, {0, 0, 0.5}, {-0.1, 0.03, -0.3}};
    const double dt = 0.001;
    for (int c = 0; c < 3; c++) {
        g.speed = cmds[c][0];
        g.lateral = cmds[c][1];
        g.turn_rate = cmds[c][2];
        g.ramp = 0.0;
        g.stand_idle = false; /* full lift from the first step */
        fr_gait *gt;
        ck_assert_int_eq(fr_gait_create(t, &g, &gt), FR_OK);
        fr_tree_data_reset(t, d);
        fr_tree_forward_kinematics(t, d);
        fr_vec3 neutral[6];
        for (int l = 0; l < 6; l++) {
            neutral[l] = tree_foot(t, d, &g, l);
            /* the controller's neutral feet are the tree's at the initial posture */
            ck_assert(fr_v3_norm(fr_v3_sub(neutral[l], fr_gait_foot_target(gt, l))) < 1e-12);
        }
        fr_vec3 prev[6], swing_start[6];
        bool was_stance[6];
        double max_apex[6] = {0}, worst_ik = 0, worst_stance = 0, worst_ellipse = 0;
        for (int l = 0; l < 6; l++) {
            prev[l] = neutral[l];
            was_stance[l] = true;
            swing_start[l] = neutral[l];
        }
        for (int n = 0; n < 3000; n++) {
            ck_assert_int_eq(fr_gait_update(gt, t, d, dt), FR_OK);
            memcpy(d->q, d->q_ref, sizeof(double) * (size_t)fr_tree_nq(t));
            fr_tree_forward_kinematics(t, d);
            double ph = fmod(fr_gait_time(gt) / g.period, 1.0);
            for (int l = 0; l < 6; l++) {
                fr_vec3 target = fr_gait_foot_target(gt, l);
                fr_vec3 foot = tree_foot(t, d, &g, l);
                worst_ik = fmax(worst_ik, fr_v3_norm(fr_v3_sub(foot, target)));
                bool st = fr_gait_leg_in_stance(gt, l);
                ck_assert_int_eq(st, fmod(ph + g.legs[l].phase, 1.0) < g.duty);
                if (st && was_stance[l]) {
                    /* rigid motion of the ground point in the body frame */
                    fr_vec3 v = fr_v3_sub(target, prev[l]);
                    fr_vec3 expect = fr_v3(-(g.speed - g.turn_rate * prev[l].y) * dt,
                                           -(g.lateral + g.turn_rate * prev[l].x) * dt, 0);
                    worst_stance = fmax(worst_stance, fr_v3_norm(fr_v3_sub(v, expect)));
                    ck_assert(fabs(target.z - neutral[l].z) < 1e-15);
                }
                if (!st) {
                    if (was_stance[l]) swing_start[l] = prev[l];
                    /* the swing end: ahead of neutral by half the stance travel */
                    double Ts = g.duty * g.period;
                    fr_vec3 end =
                        fr_v3(neutral[l].x + 0.5 * (g.speed - g.turn_rate * neutral[l].y) * Ts,
                              neutral[l].y + 0.5 * (g.lateral + g.turn_rate * neutral[l].x) * Ts,
                              neutral[l].z);
                    fr_vec3 chord = fr_v3_sub(end, swing_start[l]);
                    fr_vec3 mid = fr_v3_mad(swing_start[l], 0.5, chord);
                    double a = 0.5 * fr_v3_norm(fr_v3(chord.x, chord.y, 0));
                    fr_vec3 rel = fr_v3_sub(target, mid);
                    double along = a > 1e-9 ? (rel.x * chord.x + rel.y * chord.y) / (2 * a) : 0;
                    double across = a > 1e-9 ? (rel.x * chord.y - rel.y * chord.x) / (2 * a) : 0;
                    double z = target.z - neutral[l].z;
                    double e = (a > 1e-9 ? (along / a) * (along / a) : 0) +
                               (z / g.step_height) * (z / g.step_height) - (a > 1e-9 ? 1 : 0);
                    if (a > 1e-9) worst_ellipse = fmax(worst_ellipse, fabs(e) + fabs(across));
                    max_apex[l] = fmax(max_apex[l], z);
                }
                was_stance[l] = st;
                prev[l] = target;
            }
        }
        ck_assert_msg(worst_ik < 1e-4, "cmd %d: tree foot vs target %g m", c, worst_ik);
        ck_assert_msg(worst_stance < 1e-12, "cmd %d: stance path off by %g m", c, worst_stance);
        ck_assert_msg(worst_ellipse < 1e-9, "cmd %d: swing off the ellipse by %g", c,
                      worst_ellipse);
        for (int l = 0; l < 6; l++) ck_assert(fabs(max_apex[l] - g.step_height) < 1e-4);
        fr_gait_destroy(gt);
    }
    /* no command and stand_idle: after half a period the feet stay on the stance line */
    g.speed = g.lateral = g.turn_rate = 0;
    g.stand_idle = true;
    fr_gait *gt;
    ck_assert_int_eq(fr_gait_create(t, &g, &gt), FR_OK);
    fr_tree_data_reset(t, d);
    fr_vec3 rest[6];
    for (int l = 0; l < 6; l++) rest[l] = fr_gait_foot_target(gt, l);
    for (int n = 0; n < 2000; n++) {
        ck_assert_int_eq(fr_gait_update(gt, t, d, dt), FR_OK);
        for (int l = 0; l < 6 && n * dt > 0.5 * g.period; l++)
            ck_assert(fr_v3_norm(fr_v3_sub(fr_gait_foot_target(gt, l), rest[l])) == 0);
    }
    fr_gait_destroy(gt);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------- the hexapod walking */

typedef struct walk_log {
    fr_vec3 start, end;
    double yaw_change; /* unwrapped, rad */
    double zmin, zmax, tilt_max, pen_max;
} walk_log;

static double heading(fr_quat q)
{
    fr_vec3 x = fr_q_rotate(q, fr_v3(1, 0, 0));
    return atan2(x.y, x.x);
}

/* Steps the world for `seconds`, tracking the thorax. */
static void run(fr_world *w, fr_body_id th, double seconds, walk_log *log)
{
    fr_pose p;
    fr_body_get_pose(w, th, &p);
    log->start = p.p;
    log->yaw_change = 0;
    log->zmin = INFINITY;
    log->zmax = -INFINITY;
    log->tilt_max = log->pen_max = 0;
    double yaw = heading(p.q);
    long n = lround(seconds / fr_world_get_def(w)->dt);
    for (long k = 0; k < n; k++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_body_get_pose(w, th, &p);
        double y = heading(p.q), dy = y - yaw;
        dy -= 2 * M_PI * floor((dy + M_PI) / (2 * M_PI));
        log->yaw_change += dy;
        yaw = y;
        log->zmin = fmin(log->zmin, p.p.z);
        log->zmax = fmax(log->zmax, p.p.z);
        log->tilt_max = fmax(log->tilt_max, acos(fmin(1, fr_q_rotate(p.q, fr_v3(0, 0, 1)).z)));
        log->pen_max = fmax(log->pen_max, fr_world_max_penetration(w));
    }
    log->end = p.p;
}

static fr_scene *hexapod_scene(const char *const *sets, int nsets, fr_body_id *th)
{
    fr_scene *s;
    fr_diag d;
    int err = fr_scene_load(frtest_path("config/scenes/hexapod.yaml"), sets, nsets, &s, &d);
    ck_assert_msg(err == FR_OK, "%s:%d:%d %s %s", d.file, d.line, d.col, d.field, d.msg);
    ck_assert_int_eq(fr_world_find_body(fr_scene_world(s), "hexapod/thorax", th), FR_OK);
    return s;
}

/* Nominal height: the thorax's at the start (feet on the ground in the initial posture). */
static const double z_nominal = 0.1123;

START_TEST(test_hexapod_walks)
{
    fr_body_id th;
    const char *sets[] = {"robots.hexapod.controller.speed=0.15"};
    fr_scene *s = hexapod_scene(sets, 1, &th);
    walk_log log;
    run(fr_scene_world(s), th, 10.0, &log);
    double dist = log.end.x - log.start.x;
    ck_assert_msg(dist >= 1.0, "walked %g m in 10 s", dist);
    ck_assert_msg(log.zmin > 0.8 * z_nominal && log.zmax < 1.2 * z_nominal,
                  "body height %g..%g m (nominal %g)", log.zmin, log.zmax, z_nominal);
    ck_assert_msg(log.tilt_max < 0.15, "tilted %g rad", log.tilt_max);
    ck_assert_msg(fabs(log.end.y - log.start.y) < 0.1 * dist, "veered %g m",
                  log.end.y - log.start.y);
    ck_assert_msg(log.pen_max < 0.003, "feet sank %g m", log.pen_max);
    fr_scene_destroy(s);
}
END_TEST

/* Turning in place at 0.5 rad/s for 8 s: the heading changes by the commanded amount (the
 * command fades in over the 0.5 s ramp: ∫ω = ω (T − ramp/2)) within ±30 %; turning while walking
 * (the other way) and walking backwards likewise. */
START_TEST(test_hexapod_turns_and_reverses)
{
    fr_body_id th;
    walk_log log;
    const double T = 8.0, ramp = 0.5;
    const char *spin[] = {"robots.hexapod.controller.speed=0",
                          "robots.hexapod.controller.turn_rate=0.5"};
    fr_scene *s = hexapod_scene(spin, 2, &th);
    run(fr_scene_world(s), th, T, &log);
    double want = 0.5 * (T - ramp / 2);
    ck_assert_msg(log.yaw_change > 0.7 * want && log.yaw_change < 1.3 * want,
                  "turned %g rad, commanded %g", log.yaw_change, want);
    ck_assert_msg(fr_v3_norm(fr_v3_sub(log.end, log.start)) < 0.1, "drifted while turning");
    ck_assert(log.zmin > 0.8 * z_nominal && log.zmax < 1.2 * z_nominal);
    fr_scene_destroy(s);

    const char *arc[] = {"robots.hexapod.controller.speed=0.1",
                         "robots.hexapod.controller.turn_rate=-0.3"};
    s = hexapod_scene(arc, 2, &th);
    run(fr_scene_world(s), th, T, &log);
    want = -0.3 * (T - ramp / 2);
    ck_assert_msg(log.yaw_change < 0.7 * want && log.yaw_change > 1.3 * want,
                  "turned %g rad, commanded %g", log.yaw_change, want);
    fr_scene_destroy(s);

    const char *back[] = {"robots.hexapod.controller.speed=-0.15"};
    s = hexapod_scene(back, 1, &th);
    run(fr_scene_world(s), th, T, &log);
    ck_assert_msg(log.end.x - log.start.x < -0.8, "backwards %g m", log.end.x - log.start.x);
    ck_assert(log.zmin > 0.8 * z_nominal && log.zmax < 1.2 * z_nominal);
    fr_scene_destroy(s);
}
END_TEST

/* Lifted by the thorax for a second (a stiff spring to a hand that rises 8 cm, holds and puts it
 * back down, plus the robot's weight: a force above the weight while lifting, applied on the
 * thorax below the robot's centre of mass), the robot leaves the ground, keeps stepping in the
 * air, and walks on once released. */
START_TEST(test_hexapod_lifted_recovers)
{
    fr_body_id th, ground;
    fr_scene *s = hexapod_scene(NULL, 0, &th);
    fr_world *w = fr_scene_world(s);
    fr_world_find_body(w, "ground", &ground);
    walk_log log;
    run(w, th, 2.0, &log);
    const fr_tree *t = fr_world_robot_tree(w, 0);
    double M = 0;
    for (int i = 0; i < fr_tree_nlinks(t); i++) M += fr_tree_link_def(t, i)->mass;
    const double weight = M * 9.81, k = 3000, c = 2 * sqrt(k * M), dt = 0.001;
    fr_pose p;
    fr_vec3 v, wv;
    fr_body_get_pose(w, th, &p);
    const fr_vec3 grab = p.p;
    double fmax_ = 0, airborne = 0;
    for (int n = 0; n < 1000; n++) {
        double tt = n * dt, lift, rate;
        if (tt < 0.3) { /* up 8 cm, smoothly */
            double u = tt / 0.3;
            lift = 0.08 * (3 * u * u - 2 * u * u * u);
            rate = 0.08 * 6 * u * (1 - u) / 0.3;
        } else if (tt < 0.8) {
            lift = 0.08;
            rate = 0;
        } else { /* and back down to 1 cm above where it was grabbed */
            double u = (tt - 0.8) / 0.2;
            lift = 0.08 - 0.07 * (3 * u * u - 2 * u * u * u);
            rate = -0.07 * 6 * u * (1 - u) / 0.2;
        }
        fr_body_get_pose(w, th, &p);
        fr_body_get_velocity(w, th, &v, &wv);
        fr_vec3 hand = fr_v3(grab.x, grab.y, grab.z + lift);
        fr_vec3 f = fr_v3_add(fr_v3(0, 0, weight),
                              fr_v3_add(fr_v3_scale(fr_v3_sub(hand, p.p), k),
                                        fr_v3_scale(fr_v3_sub(fr_v3(0, 0, rate), v), c)));
        fmax_ = fmax(fmax_, f.z);
        /* held under the robot's centre of mass, as a hand under the belly would */
        fr_vec3 com = fr_tree_com(t, fr_world_robot_data(w, 0), NULL);
        ck_assert_int_eq(fr_body_apply_force(w, th, f, com), FR_OK);
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        /* in the air: no link touches the ground */
        bool touching = false;
        for (int i = 0; i < fr_world_contact_count(w); i++) {
            fr_body_id a, b;
            fr_world_contact(w, i, &a, &b);
            touching |= fr_body_id_eq(a, ground) || fr_body_id_eq(b, ground);
        }
        airborne += touching ? 0 : dt;
    }
    ck_assert_msg(fmax_ > 1.1 * weight, "lifting force %g N, weight %g N", fmax_, weight);
    ck_assert_msg(airborne > 0.3, "in the air only %g s", airborne);
    /* put down: it settles and walks on */
    run(w, th, 1.0, &log);
    ck_assert(log.tilt_max < 0.3);
    run(w, th, 4.0, &log);
    double dist = log.end.x - log.start.x;
    ck_assert_msg(dist > 0.4, "walked %g m after being put down", dist);
    ck_assert_msg(log.zmin > 0.8 * z_nominal && log.zmax < 1.2 * z_nominal,
                  "height %g..%g after the lift", log.zmin, log.zmax);
    ck_assert(log.tilt_max < 0.15);
    fr_scene_destroy(s);
}
END_TEST

/* Pressed down from above with three times its weight for a second (a hand on its back), walking
 * or standing, the robot holds its height within the band and carries on. (With 5× its weight it
 * fails: see docs/robots.md, "Contact limits".) */
START_TEST(test_hexapod_pressed_down)
{
    for (int standing = 0; standing < 2; standing++) {
        fr_body_id th;
        const char *sets[] = {"robots.hexapod.controller.speed=0"};
        fr_scene *s = hexapod_scene(sets, standing, &th);
        fr_world *w = fr_scene_world(s);
        walk_log log;
        run(w, th, 1.0, &log);
        const fr_tree *t = fr_world_robot_tree(w, 0);
        fr_tree_data *td = fr_world_robot_data(w, 0);
        double M;
        fr_tree_com(t, td, &M);
        double zmin = INFINITY, qd_max = 0;
        for (int n = 0; n < 1000; n++) {
            fr_vec3 com = fr_tree_com(t, td, NULL);
            ck_assert_int_eq(fr_body_apply_force(w, th, fr_v3(0, 0, -3 * M * 9.81), com), FR_OK);
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_pose p;
            fr_body_get_pose(w, th, &p);
            zmin = fmin(zmin, p.p.z);
            for (int i = 6; i < fr_tree_nv(t); i++) qd_max = fmax(qd_max, fabs(td->qd[i]));
        }
        ck_assert_msg(zmin > 0.8 * z_nominal, "pressed down to %g m", zmin);
        ck_assert_msg(qd_max < 20, "joints flailing at %g rad/s", qd_max);
        run(w, th, 3.0, &log);
        ck_assert(log.zmin > 0.8 * z_nominal && log.zmax < 1.2 * z_nominal);
        if (!standing)
            ck_assert_msg(log.end.x - log.start.x > 0.3, "walked %g m afterwards",
                          log.end.x - log.start.x);
        fr_scene_destroy(s);
    }
}
END_TEST

/* ---------------------------------------------------------------- no allocation */

START_TEST(test_controllers_do_not_allocate)
{
    if (!fri_watch_available()) return; /* sanitizer build: malloc belongs to the sanitizer */
    fr_body_id th;
    fr_scene *s = hexapod_scene(NULL, 0, &th);
    fr_world *w = fr_scene_world(s);
    for (int n = 0; n < 100; n++) fr_world_step(w);
    fr_gait *g = fri_scene_robot_gait((fri_scene *)s, "hexapod");
    fr_tree *t = load_tree("tests/robots/good/arm.urdf", NULL);
    fr_tree_data *d = fr_tree_data_create(t);
    fr_hand_def hd = fr_hand_def_default();
    hd.link = fr_tree_link_find(t, "flange");
    hd.orientation = true;
    fr_hand *h;
    ck_assert_int_eq(fr_hand_create(t, &hd, &h), FR_OK);
    fr_hand_set_target(h, fr_v3(0.3, 0.2, 0.6), fr_q_identity());
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    for (int n = 0; n < 1000; n++) {
        fr_world_step(w); /* contacts, the gait controller, ABA */
        fr_gait_set_command(g, 0.1, 0.0, 0.2 * sin(n * 0.01));
        fr_hand_update(h, t, d, 0.001);
        fr_tree_step(t, d, 0.001);
    }
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_eq(c.allocs, 0);
    ck_assert_int_eq(c.frees, 0);
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.io, 0);
    ck_assert_int_eq(c.waits, 0);
    fr_hand_destroy(h);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
    fr_scene_destroy(s);
}
END_TEST

static Suite *control_suite(void)
{
    Suite *s = suite_create("control");
    TCase *tc = tcase_create("hand");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hand_reaches_position);
    tcase_add_test(tc, test_hand_reaches_pose);
    tcase_add_test(tc, test_hand_integral_takes_the_load);
    tcase_add_test(tc, test_hand_beyond_reach_bounded);
    tcase_add_test(tc, test_hand_scene);
    suite_add_tcase(s, tc);
    TCase *tg = tcase_create("hexapod");
    tcase_set_timeout(tg, 120);
    tcase_add_test(tg, test_gait_foot_paths);
    tcase_add_test(tg, test_hexapod_walks);
    tcase_add_test(tg, test_hexapod_turns_and_reverses);
    tcase_add_test(tg, test_hexapod_lifted_recovers);
    tcase_add_test(tg, test_hexapod_pressed_down);
    tcase_add_test(tg, test_controllers_do_not_allocate);
    suite_add_tcase(s, tg);
    return s;
}

FRTEST_MAIN(control_suite)
