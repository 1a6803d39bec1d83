/*
 * The constraint contact mode (world.contact.mode: constraint, docs/constraint.md) against the
 * penalty mode on the same scenes: the slope at μ = tan θ + 0.005 (no creep in either) and just
 * below tan θ (slides at g·(sin θ − μ cos θ)), the seed paper's column, the stick-slip sawtooth.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/joints.h"
#include "fureru/scene.h"

static const double G = 9.81;
static const char *const MODES[2] = {"world.contact.mode=penalty", "world.contact.mode=constraint"};

static fr_scene *load(const char *rel, const char *const *sets, int n)
{
    fr_scene *s = NULL;
    fr_diag d;
    int err = fr_scene_load(frtest_path(rel), sets, n, &s, &d);
    ck_assert_msg(err == FR_OK, "%s:%d:%d %s: %s", d.file, d.line, d.col, d.field, d.msg);
    return s;
}

static fr_body_id body(fr_world *w, const char *name)
{
    fr_body_id id;
    ck_assert_int_eq(fr_world_find_body(w, name, &id), FR_OK);
    return id;
}

static void step_n(fr_world *w, long n)
{
    for (long i = 0; i < n; i++) ck_assert_int_eq(fr_world_step(w), FR_OK);
}

/* The slope scene (config/scenes/slope.yaml: gravity tilted by θ = 30°) with μ_s = μ_k = mu. */
static fr_scene *slope(int mode, double mu)
{
    static char m[4][64];
    snprintf(m[0], 64, "materials.0.mu_s=%.6f", mu);
    snprintf(m[1], 64, "materials.0.mu_k=%.6f", mu);
    snprintf(m[2], 64, "materials.1.mu_s=%.6f", mu);
    snprintf(m[3], 64, "materials.1.mu_k=%.6f", mu);
    const char *sets[] = {m[0], m[1], m[2], m[3], MODES[mode]};
    return load("config/scenes/slope.yaml", sets, 5);
}

/* μ = tan θ + 0.005: the block must not move at all in 10 s, in either mode. */
START_TEST(slope_no_creep)
{
    int mode = _i;
    const double th = M_PI / 6;
    fr_scene *s = slope(mode, tan(th) + 0.005);
    fr_world *w = fr_scene_world(s);
    ck_assert_int_eq(fr_world_get_def(w)->contact_mode, mode);
    fr_body_id b = body(w, "block");
    step_n(w, 500);
    fr_pose p0, p1;
    fr_body_get_pose(w, b, &p0);
    step_n(w, 10000);
    fr_body_get_pose(w, b, &p1);
    double moved = hypot(p1.p.x - p0.p.x, p1.p.y - p0.p.y);
    fprintf(stderr, "# %s: slope μ = tan θ + 0.005: moved %.3g m in 10 s\n", MODES[mode] + 19,
            moved);
    ck_assert_msg(moved < 1e-6, "%s: block crept %g m in 10 s", MODES[mode], moved);
    fr_world_constraint_stats cs;
    fr_world_constraint_stats_get(w, &cs);
    /* the constraint mode really solved the contact as rows: the block's four base corners */
    ck_assert_int_eq(cs.contact_points, mode ? 4 : 0);
    ck_assert_int_eq(fr_world_contact_count(w), 1);
    fr_scene_destroy(s);
}
END_TEST

/* μ = tan θ − 0.02: it slides with a = g (sin θ − μ cos θ). */
START_TEST(slope_slides)
{
    int mode = _i;
    const double th = M_PI / 6, mu = tan(th) - 0.02;
    fr_scene *s = slope(mode, mu);
    fr_world *w = fr_scene_world(s);
    fr_body_id b = body(w, "block");
    step_n(w, 500);
    fr_vec3 v0, v1;
    fr_body_get_velocity(w, b, &v0, NULL);
    step_n(w, 2000);
    fr_body_get_velocity(w, b, &v1, NULL);
    double a = (v1.x - v0.x) / 2.0, a_pred = G * (sin(th) - mu * cos(th));
    fprintf(stderr, "# %s: slope μ = tan θ − 0.02: a = %.6g, predicted %.6g\n", MODES[mode] + 19, a,
            a_pred);
    ck_assert_rel(a, a_pred, 0.02, 0);
    fr_scene_destroy(s);
}
END_TEST

/* The seed paper's column of 13 blocks (1 × 1 × 2 m, 1 kg) stacked with ±1 mm jitter stands for
 * 10 s at dt 5 ms and 1 ms in both modes. */
START_TEST(column_stands)
{
    int mode = _i / 2;
    const char *dts[] = {"world.dt=0.005", "world.dt=0.001"};
    const char *sets[] = {dts[_i % 2], "bodies.block.repeat.jitter=[0.001, 0.001, 0]", MODES[mode]};
    fr_scene *s = load("config/scenes/column.yaml", sets, 3);
    fr_world *w = fr_scene_world(s);
    fr_body_id top = body(w, "block12");
    fr_pose p0, p;
    fr_body_get_pose(w, top, &p0);
    step_n(w, (long)(10.0 / fr_world_get_def(w)->dt));
    fr_body_get_pose(w, top, &p);
    double drift = hypot(p.p.x - p0.p.x, p.p.y - p0.p.y);
    double tilt = fr_q_angle_between(p.q, fr_q_identity()) * 180 / M_PI;
    fr_world_constraint_stats cs;
    fr_world_constraint_stats_get(w, &cs);
    fprintf(stderr,
            "# %s %s: column top drift %.3g m, tilt %.3g°, sinks %.3g m, sweeps max %d, "
            "unconverged %ld\n",
            MODES[mode] + 19, dts[_i % 2] + 6, drift, tilt, p0.p.z - p.p.z, cs.max_iterations,
            cs.unconverged);
    ck_assert_msg(drift < 1e-3, "top drift %g m", drift);
    ck_assert_msg(tilt < 0.1, "top tilt %g deg", tilt);
    ck_assert_double_gt(p.p.z, 24.0);
    fr_scene_destroy(s);
}
END_TEST

/* Stick-slip (reference/experiments.md §2): a 1 kg weight, μ_s 0.6, μ_k 0.4, pulled through a
 * 100 N/m spring at 0.05 m/s: peak μ_s·m·g, trough (2μ_k − μ_s)·m·g, stick time
 * 2(μ_s − μ_k)·m·g/(k·V), in both modes. */
START_TEST(stick_slip)
{
    int mode = _i;
    const double mu_s = 0.6, mu_k = 0.4, m = 1, k = 100, V = 0.05;
    const char *sets[] = {MODES[mode]};
    fr_scene *s = load("config/scenes/stick-slip.yaml", sets, 1);
    fr_world *w = fr_scene_world(s);
    int spring;
    ck_assert_int_eq(fr_world_find_spring(w, "pull", &spring), FR_OK);
    double dt = fr_world_get_def(w)->dt;
    long n = (long)(12.0 / dt);
    double *f = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_vec3 F;
        fr_world_spring_state(w, spring, &F, NULL);
        f[i] = F.x;
    }
    double swing = 2 * (mu_s - mu_k) * m * G;
    long peaks[64];
    double troughs[64];
    int np = frtest_sawtooth(f, n, (long)(1.0 / dt), swing, peaks, troughs, 64);
    ck_assert_int_ge(np, 4);
    double pk = 0, tr = 0;
    for (int q = 1; q < np; q++) pk += f[peaks[q]] / (np - 1), tr += troughs[q] / (np - 1);
    double period = (double)(peaks[np - 1] - peaks[1]) * dt / (np - 2);
    double stick = period - M_PI * sqrt(m / k);
    fprintf(stderr,
            "# %s: stick-slip peak %.4f N (theory %.4f), trough %.4f N (%.4f), stick %.4f s "
            "(%.4f)\n",
            MODES[mode] + 19, pk, mu_s * m * G, tr, (2 * mu_k - mu_s) * m * G, stick,
            2 * (mu_s - mu_k) * m * G / (k * V));
    for (int q = 1; q < np; q++) {
        ck_assert_rel(f[peaks[q]], mu_s * m * G, 0.03, 0);
        ck_assert_rel(troughs[q], (2 * mu_k - mu_s) * m * G, 0.10, 0);
    }
    ck_assert_rel(stick, 2 * (mu_s - mu_k) * m * G / (k * V), 0.10, 0);
    free(f);
    fr_scene_destroy(s);
}
END_TEST

/* The scenes with joints (config/scenes/fourbar.yaml, chain.yaml): the `joints:` section builds
 * them; the four-bar's loop stays closed for its 10 s and its crank turns 10 times; the chain stays
 * in one piece while it swings onto the block and lies on it (constraint contacts). */
START_TEST(joint_scenes)
{
    fr_scene *s = load("config/scenes/fourbar.yaml", NULL, 0);
    fr_world *w = fr_scene_world(s);
    ck_assert_int_eq(fr_world_joint_count(w), 4);
    int a;
    ck_assert_int_eq(fr_world_find_joint(w, "A", &a), FR_OK);
    step_n(w, 10000);
    fr_world_constraint_stats cs;
    fr_world_constraint_stats_get(w, &cs);
    fr_joint_state js;
    fr_world_joint_state(w, a, &js);
    ck_assert_msg(cs.max_position_error < 1e-6, "four-bar joint error %g", cs.max_position_error);
    ck_assert_double_eq_tol(js.position, -10 * 2 * M_PI, 2e-3);
    fr_scene_destroy(s);

    s = load("config/scenes/chain.yaml", NULL, 0);
    w = fr_scene_world(s);
    ck_assert_int_eq(fr_world_joint_count(w), 10);
    ck_assert_int_eq(fr_world_get_def(w)->contact_mode, FR_CONTACT_MODE_CONSTRAINT);
    double worst = 0, pen = 0;
    for (int n = 0; n < 5000; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_constraint_stats_get(w, &cs);
        worst = fmax(worst, cs.position_error);
        pen = fmax(pen, fr_world_max_penetration(w));
    }
    /* the links' ends meet: link i's +x end is link i+1's −x end (0.05 m from each centre) */
    double gap = 0;
    for (int i = 0; i + 1 < 10; i++) {
        char n1[16], n2[16];
        snprintf(n1, sizeof n1, "link%d", i);
        snprintf(n2, sizeof n2, "link%d", i + 1);
        fr_pose p1, p2;
        fr_body_get_pose(w, body(w, n1), &p1);
        fr_body_get_pose(w, body(w, n2), &p2);
        /* the capsule's axis is its body z (rpy turned it onto x) */
        fr_vec3 e1 = fr_pose_apply(p1, fr_v3(0, 0, 0.05)),
                e2 = fr_pose_apply(p2, fr_v3(0, 0, -0.05));
        gap = fmax(gap, fr_v3_norm(fr_v3_sub(e1, e2)));
    }
    fr_pose last;
    fr_body_get_pose(w, body(w, "link9"), &last);
    fprintf(stderr,
            "# chain 5 s: joint error max %.3g, link ends apart %.3g m, penetration %.3g m, "
            "last link at z %.3f\n",
            worst, gap, pen, last.p.z);
    ck_assert_msg(worst < 1e-6 && gap < 1e-6, "chain came apart: %g, %g", worst, gap);
    ck_assert_msg(pen < 1e-3, "penetration %g m", pen);
    ck_assert_int_gt(fr_world_contact_count(w), 0); /* it lies on something */
    fr_scene_destroy(s);
}
END_TEST

/* config/scenes/fourbar-robot.yaml: the four-bar as a URDF tree closed by a `loops:` entry. Its
 * loop stays closed (measured on the link bodies' poses), its crank turns at the motor's rate,
 * and it moves as fourbar.yaml's free bodies do: the two differ by what the position
 * projections take from or give to the crank (O(dt): the difference halves at dt = 0.5 ms). */
static double loop_scene_vs_free(const char *dtset, double *closure, double *rate)
{
    const char *sets[1] = {dtset};
    fr_scene *st = load("config/scenes/fourbar-robot.yaml", sets, 1);
    fr_scene *sf = load("config/scenes/fourbar.yaml", sets, 1);
    fr_world *wt = fr_scene_world(st), *wf = fr_scene_world(sf);
    fr_body_id cou = body(wt, "fourbar/coupler"), roc = body(wt, "fourbar/rocker");
    fr_body_id rf = body(wf, "rocker");
    int steps = (int)lround(10.0 / fr_world_get_def(wt)->dt);
    double worst = 0.0;
    *closure = 0.0;
    for (int n = 0; n < steps; n++) {
        ck_assert_int_eq(fr_world_step(wt), FR_OK);
        ck_assert_int_eq(fr_world_step(wf), FR_OK);
        /* C on the coupler (0.35 m along its link x from B; the body is centred) and the rocker */
        fr_pose pc, pr, pf;
        fr_body_get_pose(wt, cou, &pc);
        fr_body_get_pose(wt, roc, &pr);
        fr_body_get_pose(wf, rf, &pf);
        fr_vec3 c1 = fr_pose_apply(pc, fr_v3(0.175, 0, 0)),
                c2 = fr_pose_apply(pr, fr_v3(0.15, 0, 0));
        *closure = fmax(*closure, fr_v3_norm(fr_v3_sub(c1, c2)));
        /* the rocker's centre in both */
        worst = fmax(worst, fr_v3_norm(fr_v3_sub(pr.p, pf.p)));
    }
    int a;
    ck_assert_int_eq(fr_world_find_joint(wt, "A", &a), FR_OK);
    fr_joint_state js;
    fr_world_joint_state(wt, a, &js);
    *rate = js.rate;
    fr_scene_destroy(st);
    fr_scene_destroy(sf);
    return worst;
}

START_TEST(loop_scene)
{
    double c1, c2, r1, r2;
    double d1 = loop_scene_vs_free("world.dt=0.001", &c1, &r1);
    double d2 = loop_scene_vs_free("world.dt=0.0005", &c2, &r2);
    fprintf(stderr,
            "# fourbar-robot.yaml 10 s: loop closure %.3g m (%.3g at 0.5 ms); rocker vs "
            "fourbar.yaml's %.3g m at 1 ms, %.3g m at 0.5 ms (ratio %.3f)\n",
            c1, c2, d1, d2, d1 / d2);
    ck_assert_msg(c1 < 1e-6 && c2 < 1e-6, "loop open by %g, %g m", c1, c2);
    ck_assert_double_eq_tol(r1, -2 * M_PI, 1e-8);
    ck_assert_msg(d1 < 1.5e-3, "tree and free four-bars %g m apart", d1);
    ck_assert_msg(d1 / d2 > 1.7 && d1 / d2 < 2.4, "difference ratio %g: not O(dt)", d1 / d2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("contact-mode");
    TCase *tc = tcase_create("contact-mode");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, slope_no_creep, 0, 2);
    tcase_add_loop_test(tc, slope_slides, 0, 2);
    tcase_add_loop_test(tc, column_stands, 0, 4);
    tcase_add_loop_test(tc, stick_slip, 0, 2);
    tcase_add_test(tc, joint_scenes);
    tcase_add_test(tc, loop_scene);
    suite_add_tcase(s, tc);
    return s;
}
FRTEST_MAIN(suite)
