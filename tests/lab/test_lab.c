/* src/lab and the scene's analysis section: the sawtooth detector on a signal with known answers,
 * sweep value lists, and the stick-slip parameters a scene resolves for its sidecar. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frtest.h"
#include "fureru/contact.h"
#include "fureru/scene.h"
#include "lab.h"

/* An ideal sawtooth at 1 kHz: from 0 a ramp at k·V = 1 N/s to the peak P, then a half-cosine slip
 * of TS down to the trough R, a ramp back to P (the stick, (P − R)/(k·V)), and so on. */
START_TEST(test_sawtooth_ideal)
{
    const double P = 5.886, R = 1.962, TS = 0.3, rate = 1.0, TK = (P - R) / rate, dt = 0.001;
    const int n = 30001;
    double *t = malloc(sizeof *t * n), *f = malloc(sizeof *f * n);
    double t1 = P / rate;
    for (int i = 0; i < n; i++) {
        t[i] = i * dt;
        if (t[i] <= t1) {
            f[i] = rate * t[i];
        } else {
            double u = t[i] - t1, c = TK + TS;
            u -= floor(u / c) * c;
            f[i] = u < TS ? R + (P - R) * (1 + cos(M_PI * u / TS)) / 2 : R + rate * (u - TS);
        }
    }
    fri_sawtooth_result r;
    double pt[64], pf[64], tt[64], tf[64];
    fri_sawtooth_points pts = {pt, pf, tt, tf};
    fri_sawtooth_analyze(t, f, n, 0.25 * (P - R), 0.0, &r, &pts);
    ck_assert_int_ge(r.cycles, 5);
    ck_assert_double_eq_tol(r.peak, P, 1e-6);
    ck_assert_double_eq_tol(r.trough, R, 1e-6);
    ck_assert_double_eq_tol(r.stick, TK, 1.5 * dt); /* extremes are found to one sample */
    ck_assert_double_eq_tol(r.slip, TS, 1.5 * dt);
    ck_assert_double_eq_tol(r.period, TK + TS, 1.5 * dt);
    ck_assert_double_eq_tol(pt[0], t1, 1.5 * dt);
    ck_assert_double_eq_tol(pf[1], P, 1e-6);
    ck_assert_double_eq_tol(tt[0], t1 + TS, 1.5 * dt);
    /* every cycle is the same: the spread over them is the sampling's (one sample for times) */
    const double want[5] = {P, R, TK, TS, TK + TS},
                 tol[5] = {1e-6, 1e-6, 1.5 * dt, 1.5 * dt, 1.5 * dt};
    for (int q = 0; q < 5; q++) {
        ck_assert_double_eq_tol(r.lo[q], want[q], tol[q]);
        ck_assert_double_eq_tol(r.hi[q], want[q], tol[q]);
    }
    /* alternate peaks raised by 0.1 N: the medians hide it, the spread shows it */
    for (int i = 0; i < n; i++) {
        double u = t[i] - t1, c = TK + TS;
        if (u > 0 && ((long)floor(u / c)) % 2 == 1) f[i] += 0.1 * (f[i] - R) / (P - R);
    }
    fri_sawtooth_analyze(t, f, n, 0.25 * (P - R), 0.0, &r, NULL);
    ck_assert_double_eq_tol(r.hi[0] - r.lo[0], 0.1, 1e-6);
    free(t);
    free(f);
}
END_TEST

START_TEST(test_split_values)
{
    char **v;
    ck_assert_int_eq(fri_split_values("0.01, 0.02,0.05", &v), 3);
    ck_assert_str_eq(v[0], "0.01");
    ck_assert_str_eq(v[1], "0.02");
    ck_assert_str_eq(v[2], "0.05");
    for (int i = 0; i < 3; i++) free(v[i]);
    free(v);
    ck_assert_int_eq(fri_split_values("[0.02,0,0],[0.05, 0, 0]", &v), 2);
    ck_assert_str_eq(v[0], "[0.02,0,0]");
    ck_assert_str_eq(v[1], "[0.05, 0, 0]");
    for (int i = 0; i < 2; i++) free(v[i]);
    free(v);
    ck_assert_int_eq(fri_split_values("'a,b',\"c,d\",{x: 1, y: 2}", &v), 3);
    ck_assert_str_eq(v[0], "'a,b'");
    ck_assert_str_eq(v[1], "\"c,d\"");
    ck_assert_str_eq(v[2], "{x: 1, y: 2}");
    for (int i = 0; i < 3; i++) free(v[i]);
    free(v);
}
END_TEST

/* the parameters the sidecar records come from the world as the scene built it, --set included */
START_TEST(test_scene_analysis_parameters)
{
    fr_scene *s;
    fr_diag d;
    const char *sets[] = {"bodies.weight.mass=2", "springs.pull.anchor_velocity=[0, 0.1, 0]",
                          "springs.pull.stiffness=80"};
    ck_assert_int_eq(fr_scene_load(frtest_path("config/scenes/stick-slip.yaml"), sets, 3, &s, &d),
                     FR_OK);
    const fr_scene_analysis *a = fr_scene_get_analysis(s);
    ck_assert_int_eq(a->type, FR_ANALYSIS_STICK_SLIP);
    ck_assert_str_eq(a->probe, "pull");
    ck_assert_double_eq(a->m, 2);
    ck_assert_double_eq(a->k, 80);
    ck_assert_double_eq_tol(a->v, 0.1, 1e-15);
    ck_assert_double_eq_tol(a->direction.y, 1, 1e-15);
    ck_assert_double_eq(a->g, 9.81);
    fr_scene_destroy(s);

    /* different materials: the pair's friction by the contact module's rule, the mass from the
     * density (0.2 m cube of 500 kg/m³), the direction and speed of a diagonal drive */
    ck_assert_int_eq(fr_scene_load(frtest_path("tests/lab/two-materials.yaml"), NULL, 0, &s, &d),
                     FR_OK);
    a = fr_scene_get_analysis(s);
    int iw, is;
    fr_contact_material wood, steel;
    fr_world *w = fr_scene_world(s);
    ck_assert_int_eq(fr_world_find_material(w, "wood", &iw), FR_OK);
    ck_assert_int_eq(fr_world_find_material(w, "steel", &is), FR_OK);
    fr_world_get_material(w, iw, &wood);
    fr_world_get_material(w, is, &steel);
    fr_contact_params cp;
    ck_assert_int_eq(fr_contact_params_combine(&steel, &wood, 4.0, 0.001, &cp), FR_OK);
    ck_assert_double_eq(a->mu_s, cp.mu_s);
    ck_assert_double_eq(a->mu_k, cp.mu_k);
    ck_assert(a->mu_s < 0.6 && a->mu_s > 0.3); /* neither material's own value */
    ck_assert_double_eq_tol(a->m, 500 * 0.2 * 0.2 * 0.2, 1e-12);
    ck_assert_double_eq(a->k, 250);
    ck_assert_double_eq_tol(a->v, 0.05, 1e-15);
    ck_assert_double_eq_tol(a->direction.x, 0.6, 1e-15);
    ck_assert_double_eq_tol(a->direction.y, 0.8, 1e-15);
    ck_assert_str_eq(a->body, "block");
    ck_assert_str_eq(a->on, "table");
    fr_scene_destroy(s);
}
END_TEST

/* The stick-slip plot's y range holds a negative trough and its theory line (R3 of a new user's
 * trial: a trough of −16.26 N was cut off at 0), and starts at 0 when nothing is negative. */
START_TEST(test_stickslip_yrange)
{
    fri_stickslip s;
    memset(&s, 0, sizeof s);
    s.m = 1, s.k = 1000, s.v = 0.5, s.mu_s = 0.8, s.mu_k = 0.1, s.g = 9.81;
    s.peak = 18.2192, s.trough = -16.2572;
    const double f[] = {0.0, 18.32, -16.36, 3.0};
    double lo, hi;
    fri_stickslip_yrange(&s, f, 4, &lo, &hi);
    ck_assert(lo < -16.36 && lo < s.trough);
    ck_assert(hi > 18.32 && hi > s.peak);
    s.peak = 5.94871, s.trough = 1.89929, s.mu_s = 0.6, s.mu_k = 0.4;
    const double g[] = {0.0, 5.95, 1.9};
    fri_stickslip_yrange(&s, g, 3, &lo, &hi);
    ck_assert_double_eq(lo, 0.0);
    ck_assert(hi > 5.95);
}
END_TEST

/* --log-every: the sampling, not the step, limits a stick of 39 steps logged every 10 (a new
 * user's note advised a shorter world.dt); logged every step, the step is the limit. */
START_TEST(test_stickslip_notes_sampling)
{
    fri_stickslip s;
    memset(&s, 0, sizeof s);
    s.m = 1, s.k = 100, s.v = 1, s.mu_s = 0.6, s.mu_k = 0.4, s.g = 9.81;
    s.peak = 14.1147, s.trough = -6.26665, s.stuck = 0.03924, s.period = 0.628811;
    s.dt = 0.001, s.log_every = 10, s.ts = 0.01, s.log_records = -1;
    s.max_tilt = s.max_rise = NAN;
    s.r.cycles = 5;
    int n = fri_stickslip_notes(&s);
    ck_assert(n & 1 << FRI_SS_SAMPLING);
    ck_assert(!(n & 1 << FRI_SS_COARSE));
    ck_assert_str_eq(fri_stickslip_note_names[FRI_SS_SAMPLING], "coarse-sampling");
    s.log_every = 1, s.ts = s.dt;
    n = fri_stickslip_notes(&s);
    ck_assert(n & 1 << FRI_SS_COARSE);
    ck_assert(!(n & 1 << FRI_SS_SAMPLING));
    /* the fall alone: V = 0.05 m/s, a row every 50 ms (6.3 samples a fall; the stick 16) */
    s.v = 0.05, s.stuck = 0.7848, s.peak = 5.94871, s.trough = 1.89929;
    s.log_every = 50, s.ts = 0.05;
    n = fri_stickslip_notes(&s);
    ck_assert(n & 1 << FRI_SS_SAMPLING);
    ck_assert(!(n & 1 << FRI_SS_COARSE));
    s.log_every = 1, s.ts = s.dt;
    ck_assert_int_eq(fri_stickslip_notes(&s), 0);
}
END_TEST

/* gnuplot's warnings on a script of ours stay off the user's stderr (a failed run's analysis
 * printed "Skipping data file with no valid points" six times); they are shown when it fails. */
START_TEST(test_plot_quiet)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) return; /* nothing to test */
    char path[] = "/tmp/fureru-test-stderr-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    FILE *gp = fri_plot_open();
    ck_assert_ptr_nonnull(gp);
    fputs("set terminal dumb\nset output '/dev/null'\n$empty << EOD\nEOD\n"
          "plot $empty using 1:2 with points, x\n",
          gp);
    ck_assert_int_eq(fri_plot_close(gp), 0);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    close(fd);
    unlink(path);
    ck_assert_int_eq(st.st_size, 0);
}
END_TEST

static Suite *lab_suite(void)
{
    Suite *s = suite_create("lab");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sawtooth_ideal);
    tcase_add_test(tc, test_split_values);
    tcase_add_test(tc, test_scene_analysis_parameters);
    tcase_add_test(tc, test_stickslip_yrange);
    tcase_add_test(tc, test_stickslip_notes_sampling);
    tcase_add_test(tc, test_plot_quiet);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(lab_suite)
