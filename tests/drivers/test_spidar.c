/*
 * drivers/spidar without USB: configuration, kinematics (round trips, quantisation bounds from
 * the Jacobian), the box QP against brute-force enumeration of active sets, the tension
 * distribution on 10⁴ random wrenches per variant, board packet layouts, counter unwrapping,
 * the triple buffer under two threads, and the kinematic device (including a check that
 * read/write neither allocate, lock, wait nor do I/O).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <yaml.h>

#include "fureru/base.h"
#include "interpose.h"
#include "spidar_internal.h"
#include "test_spidar_common.h"

static fr_spidar_config preset(int which)
{
    fr_spidar_config c;
    fr_spidar_config_default(&c, which ? FR_SPIDAR_PRESET_G6X3R : FR_SPIDAR_PRESET_SPIDAR4);
    c.board = FR_SPIDAR_BOARD_NONE;
    return c;
}

/* ---------------------------------------------------------------- configuration */

START_TEST(test_config_presets_and_keys)
{
    char why[160];
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        ck_assert_int_eq(fr_spidar_config_validate(&c, why, sizeof why), FR_OK);
        c.board = FR_SPIDAR_BOARD_SH4;
        ck_assert_int_eq(fr_spidar_config_validate(&c, why, sizeof why), FR_OK);
    }
    fr_spidar_config c = preset(1);
    ck_assert_int_eq(fr_spidar_config_set(&c, "motors.3.position", "[0.1, -0.2, 0.3]"), FR_OK);
    ck_assert(c.motor[3].position.x == 0.1 && c.motor[3].position.y == -0.2 &&
              c.motor[3].position.z == 0.3);
    ck_assert_int_eq(fr_spidar_config_set(&c, "motors.7.count_sign", "-1"), FR_OK);
    ck_assert_int_eq(c.motor[7].count_sign, -1);
    ck_assert_int_eq(fr_spidar_config_set(&c, "motors.7.count_sign", "2"), FR_ERR_PARSE);
    ck_assert_int_eq(fr_spidar_config_set(&c, "motors.8.channel", "1"), FR_ERR_RANGE);
    ck_assert_int_eq(fr_spidar_config_set(&c, "board", "simple"), FR_OK);
    ck_assert_int_eq(c.board, FR_SPIDAR_BOARD_SIMPLE);
    ck_assert_int_eq(fr_spidar_config_set(&c, "board", "sh5"), FR_ERR_PARSE);
    ck_assert_int_eq(fr_spidar_config_set(&c, "usb.period", "0.001"), FR_OK);
    ck_assert(c.usb_period == 0.001);
    ck_assert_int_eq(fr_spidar_config_set(&c, "usb.period", "0.001x"), FR_ERR_PARSE);
    ck_assert_int_eq(fr_spidar_config_set(&c, "usb.period", "nan"), FR_ERR_PARSE);
    ck_assert_int_eq(fr_spidar_config_set(&c, "home.orientation", "[2, 0, 0, 0]"), FR_OK);
    ck_assert(c.home.q.w == 1.0);
    ck_assert_int_eq(fr_spidar_config_set(&c, "no.such.key", "1"), FR_ERR_NOTFOUND);
    /* invalid configurations are rejected with a reason */
    c = preset(1);
    c.motor[5].channel = c.motor[4].channel;
    ck_assert_int_eq(fr_spidar_config_validate(&c, why, sizeof why), FR_ERR_RANGE);
    ck_assert_ptr_nonnull(strstr(why, "channel"));
    c = preset(0);
    for (int i = 0; i < 4; i++) c.motor[i].position.z = 0.07; /* coplanar motors */
    ck_assert_int_eq(fr_spidar_config_validate(&c, why, sizeof why), FR_ERR_INVAL);
    c = preset(1);
    for (int i = 0; i < 8; i++) c.motor[i].attach = fr_v3_zero(); /* no torque: rank 3 */
    ck_assert_int_eq(fr_spidar_config_validate(&c, why, sizeof why), FR_ERR_INVAL);
    c = preset(1);
    c.w_reg = 0;
    ck_assert_int_eq(fr_spidar_config_validate(&c, why, sizeof why), FR_ERR_RANGE);
}
END_TEST

/* The example device files use exactly the keys of fr_spidar_config_set (nested) and hold the
 * presets' values. A minimal recursive walk over libyaml's events flattens them: mapping keys
 * joined with '.', block-sequence items numbered, flow sequences of scalars passed as
 * "[a, b, c]". The registry's own keys (driver, description, safety) are skipped. */
typedef struct ywalk {
    yaml_parser_t p;
    fr_spidar_config *c;
    char bad[128];
    int err;
} ywalk;

static void ywalk_apply(ywalk *w, const char *key, const char *value)
{
    if (!strcmp(key, "driver") || !strcmp(key, "description") || !strncmp(key, "safety", 6)) return;
    int r = fr_spidar_config_set(w->c, key, value);
    if (r != FR_OK && w->err == FR_OK) {
        w->err = r;
        snprintf(w->bad, sizeof w->bad, "%s", key);
    }
}

static void ywalk_node(ywalk *w, yaml_event_t *ev, const char *key)
{
    char sub[256], list[512];
    yaml_event_t e, v;
    if (ev->type == YAML_SCALAR_EVENT) {
        ywalk_apply(w, key, (const char *)ev->data.scalar.value);
    } else if (ev->type == YAML_SEQUENCE_START_EVENT &&
               ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE) {
        snprintf(list, sizeof list, "[");
        while (yaml_parser_parse(&w->p, &e) && e.type == YAML_SCALAR_EVENT) {
            strncat(list, list[1] ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, (const char *)e.data.scalar.value, sizeof list - strlen(list) - 1);
            yaml_event_delete(&e);
        }
        yaml_event_delete(&e);
        strncat(list, "]", sizeof list - strlen(list) - 1);
        ywalk_apply(w, key, list);
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        for (int i = 0; yaml_parser_parse(&w->p, &e) && e.type != YAML_SEQUENCE_END_EVENT; i++) {
            snprintf(sub, sizeof sub, "%s.%d", key, i);
            ywalk_node(w, &e, sub);
            yaml_event_delete(&e);
        }
        yaml_event_delete(&e);
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        while (yaml_parser_parse(&w->p, &e) && e.type == YAML_SCALAR_EVENT) {
            snprintf(sub, sizeof sub, "%s%s%s", key, key[0] ? "." : "",
                     (const char *)e.data.scalar.value);
            yaml_event_delete(&e);
            if (!yaml_parser_parse(&w->p, &v)) break;
            ywalk_node(w, &v, sub);
            yaml_event_delete(&v);
        }
        yaml_event_delete(&e);
    }
}

static int apply_yaml(const char *path, fr_spidar_config *c, char *bad, size_t bad_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return FR_ERR_IO;
    ywalk w = {.c = c, .err = FR_OK};
    yaml_parser_initialize(&w.p);
    yaml_parser_set_input_file(&w.p, f);
    yaml_event_t e;
    while (yaml_parser_parse(&w.p, &e) && e.type != YAML_STREAM_END_EVENT) {
        if (e.type == YAML_MAPPING_START_EVENT) ywalk_node(&w, &e, "");
        yaml_event_delete(&e);
    }
    yaml_event_delete(&e);
    if (w.p.error != YAML_NO_ERROR) w.err = FR_ERR_PARSE;
    yaml_parser_delete(&w.p);
    fclose(f);
    snprintf(bad, bad_size, "%s", w.bad);
    return w.err;
}

START_TEST(test_example_device_files)
{
    const char *files[2] = {"config/devices/spidar-4.yaml", "config/devices/spidar-g6-x3r.yaml"};
    for (int w = 0; w < 2; w++) {
        fr_spidar_config want, got;
        fr_spidar_config_default(&want, w ? FR_SPIDAR_PRESET_G6X3R : FR_SPIDAR_PRESET_SPIDAR4);
        /* start from the other preset so that every value must come from the file */
        fr_spidar_config_default(&got, w ? FR_SPIDAR_PRESET_SPIDAR4 : FR_SPIDAR_PRESET_G6X3R);
        memset(got.motor, 0, sizeof got.motor);
        char bad[128] = "";
        int r = apply_yaml(frtest_path(files[w]), &got, bad, sizeof bad);
        ck_assert_msg(r == FR_OK, "%s: key %s: %s", files[w], bad, fr_strerror(r));
        ck_assert_str_eq(got.name, want.name);
        ck_assert_int_eq(got.board, want.board);
        ck_assert_int_eq(got.n_strings, want.n_strings);
        for (int i = 0; i < want.n_strings; i++) {
            ck_assert_double_le(fr_v3_dist(got.motor[i].position, want.motor[i].position), 1e-10);
            ck_assert_double_le(fr_v3_dist(got.motor[i].attach, want.motor[i].attach), 1e-10);
            ck_assert_int_eq(got.motor[i].count_sign, want.motor[i].count_sign);
            ck_assert_int_eq(got.motor[i].volt_sign, want.motor[i].volt_sign);
            ck_assert_int_eq(got.motor[i].channel, want.motor[i].channel);
        }
        const double *gd[] = {&got.length_per_count,
                              &got.volts_per_newton,
                              &got.tension_min,
                              &got.tension_max,
                              &got.dac_per_volt,
                              &got.w_force,
                              &got.w_reg,
                              &got.w_smooth,
                              &got.vel_cutoff,
                              &got.max_force,
                              &got.max_stiffness,
                              &got.max_damping,
                              &got.usb_period,
                              &got.io_timeout,
                              &got.stale_timeout,
                              &got.command_timeout,
                              &got.reconnect_interval,
                              &got.max_string_speed};
        const double *wd[] = {&want.length_per_count,
                              &want.volts_per_newton,
                              &want.tension_min,
                              &want.tension_max,
                              &want.dac_per_volt,
                              &want.w_force,
                              &want.w_reg,
                              &want.w_smooth,
                              &want.vel_cutoff,
                              &want.max_force,
                              &want.max_stiffness,
                              &want.max_damping,
                              &want.usb_period,
                              &want.io_timeout,
                              &want.stale_timeout,
                              &want.command_timeout,
                              &want.reconnect_interval,
                              &want.max_string_speed};
        for (size_t k = 0; k < sizeof gd / sizeof gd[0]; k++)
            ck_assert_rel(*gd[k], *wd[k], 1e-12, 0);
        ck_assert_double_le(fr_v3_dist(got.workspace_min, want.workspace_min), 1e-12);
        ck_assert_double_le(fr_v3_dist(got.workspace_max, want.workspace_max), 1e-12);
        if (w) {
            ck_assert_rel(got.w_torque, want.w_torque, 1e-12, 0);
            ck_assert_rel(got.gn_damping, want.gn_damping, 1e-12, 0);
            ck_assert_int_eq(got.gn_iterations, want.gn_iterations);
            ck_assert_rel(got.max_torque, want.max_torque, 1e-12, 0);
        }
        ck_assert_int_eq(fr_spidar_config_validate(&got, NULL, 0), FR_OK);
    }
}
END_TEST

/* ---------------------------------------------------------------- conversions */

START_TEST(test_counts_and_dac_conversions)
{
    frtest_rng r = {11};
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        c.motor[1].count_sign = -1;
        c.motor[2].volt_sign = -1;
        c.motor[0].channel = 5, c.motor[1].channel = 0, c.motor[2].channel = 7;
        c.motor[3].channel = 1;
        if (w) c.motor[5].channel = 2, c.motor[7].channel = 3;
        ck_assert_int_eq(fr_spidar_config_validate(&c, NULL, 0), FR_OK);
        /* calibration: arbitrary counts at home give home's lengths; moving by k counts
         * changes length i by count_sign·k·Δ */
        int64_t cnt[8];
        for (int i = 0; i < 8; i++) cnt[i] = (int64_t)(frtest_next(&r) % 200000) - 100000;
        fr_spidar_calib cal;
        fr_spidar_calibrate_counts(&c, cnt, c.home, &cal);
        fr_spidar_kin k;
        fr_spidar_kinematics(&c, c.home, &k);
        double l[8];
        fr_spidar_counts_to_lengths(&c, &cal, cnt, l);
        for (int i = 0; i < c.n_strings; i++) ck_assert_rel(l[i], k.length[i], 1e-12, 1e-3);
        for (int i = 0; i < c.n_strings; i++) cnt[i] += 1000;
        double l2[8];
        fr_spidar_counts_to_lengths(&c, &cal, cnt, l2);
        for (int i = 0; i < c.n_strings; i++)
            ck_assert_rel(l2[i] - l[i], c.motor[i].count_sign * 1000 * c.length_per_count, 1e-9,
                          1e-9);
        /* tension → DAC on the right channel with the volt sign; back within half a digit */
        double t[8], t2[8];
        int16_t dac[8];
        for (int i = 0; i < c.n_strings; i++)
            t[i] = frtest_uniform(&r, c.tension_min, c.tension_max);
        fr_spidar_tension_to_dac(&c, t, dac);
        for (int i = 0; i < c.n_strings; i++) {
            double want = c.motor[i].volt_sign * t[i] * c.volts_per_newton * c.dac_per_volt;
            ck_assert_double_le(fabs(dac[c.motor[i].channel] - want), 0.5);
        }
        fr_spidar_dac_to_tension(&c, dac, t2);
        double half = 0.5 / (c.dac_per_volt * c.volts_per_newton);
        for (int i = 0; i < c.n_strings; i++) ck_assert_double_le(fabs(t2[i] - t[i]), half);
        /* out-of-box and NaN tensions never leave the box */
        t[0] = NAN, t[1] = 1e9, t[2] = -5;
        fr_spidar_tension_to_dac(&c, t, dac);
        fr_spidar_dac_to_tension(&c, dac, t2);
        ck_assert_double_le(fabs(t2[0] - c.tension_min), half);
        ck_assert_double_le(fabs(t2[1] - c.tension_max), half);
        ck_assert_double_le(fabs(t2[2] - c.tension_min), half);
    }
}
END_TEST

/* ---------------------------------------------------------------- pose from lengths */

START_TEST(test_pose_roundtrip_3dof)
{
    frtest_rng r = {21};
    fr_spidar_config c = preset(0);
    c.motor[2].attach = fr_v3(0.004, -0.003, 0.002); /* grip offsets are part of the model */
    for (int k = 0; k < 20000; k++) {
        fr_pose p = tsp_rand_pose(&r, &c, 0);
        fr_spidar_kin kin;
        fr_spidar_kinematics(&c, p, &kin);
        fr_vec3 x;
        ck_assert_int_eq(fr_spidar_position_closed_form(&c, kin.length, &x), FR_OK);
        ck_assert_double_le(fr_v3_dist(x, p.p), 1e-9);
    }
}
END_TEST

START_TEST(test_pose_roundtrip_6dof)
{
    frtest_rng r = {22};
    fr_spidar_config c = preset(1);
    double worst = 0;
    for (int k = 0; k < 400; k++) {
        /* a path from home to a random pose, solved warm-started at each step as in use */
        fr_pose target = tsp_rand_pose(&r, &c, 0.6), est = c.home;
        fr_vec3 rv = fr_q_log(target.q);
        for (int s = 1; s <= 10; s++) {
            double a = s / 10.0;
            fr_pose p = {fr_v3_scale(target.p, a), fr_q_exp(fr_v3_scale(rv, a))};
            fr_spidar_kin kin;
            fr_spidar_kinematics(&c, p, &kin);
            int it;
            double res;
            ck_assert_int_eq(fr_spidar_pose_solve(&c, kin.length, est, 100, 1e-14, &est, &it, &res),
                             FR_OK);
            double e = tsp_pose_err(est, p);
            worst = fmax(worst, e);
            ck_assert_msg(e <= 1e-9, "pose %d step %d: error %.3g after %d iterations", k, s, e,
                          it);
            ck_assert_double_le(res, 1e-12);
        }
    }
    /* and from home directly (cold start) for moderate poses */
    for (int k = 0; k < 400; k++) {
        fr_pose p = tsp_rand_pose(&r, &c, 0.3), est;
        fr_spidar_kin kin;
        fr_spidar_kinematics(&c, p, &kin);
        ck_assert_int_eq(fr_spidar_pose_solve(&c, kin.length, c.home, 100, 1e-14, &est, NULL, NULL),
                         FR_OK);
        ck_assert_double_le(tsp_pose_err(est, p), 1e-9);
    }
    ck_assert_double_le(worst, 1e-9);
}
END_TEST

/* Encoder quantisation: lengths rounded to the count (|δl| ≤ Δ/2). The least-squares pose moves
 * by A⁺δl to first order, so ‖δpose‖ ≤ ‖A⁺‖ Δ/2 √n (6-DOF; m and rad as one 6-vector); the
 * 3-DOF closed form obeys the exact bound of tsp_bound_3dof. Second-order terms are ~1e-4 of
 * the first-order ones, and ‖δl‖ reaches Δ/2 √n only when every rounding error is extreme. */
START_TEST(test_quantisation_bounds)
{
    frtest_rng r = {23};
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        double D = c.length_per_count, worst_ratio = 0;
        for (int k = 0; k < 3000; k++) {
            fr_pose p = tsp_rand_pose(&r, &c, 0.5);
            fr_spidar_kin kin;
            fr_spidar_kinematics(&c, p, &kin);
            double lq[8];
            for (int i = 0; i < c.n_strings; i++) lq[i] = D * nearbyint(kin.length[i] / D);
            double err, bound;
            if (w == 0) {
                fr_vec3 x;
                ck_assert_int_eq(fr_spidar_position_closed_form(&c, lq, &x), FR_OK);
                err = fr_v3_dist(x, p.p);
                bound = tsp_bound_3dof(&c, p.p, D);
            } else {
                fr_pose est;
                ck_assert_int_eq(fr_spidar_pose_solve(&c, lq, p, 50, 1e-15, &est, NULL, NULL),
                                 FR_OK);
                err = tsp_pose_err(est, p);
                bound = tsp_pinv_norm_6dof(&c, p) * D / 2 * sqrt(8.0);
            }
            ck_assert_msg(err <= bound, "variant %d pose %d: error %.3g > bound %.3g", w, k, err,
                          bound);
            worst_ratio = fmax(worst_ratio, err / bound);
        }
        /* the bound is not vacuous: errors reach a fair fraction of it */
        ck_assert_double_ge(worst_ratio, 0.05);
    }
}
END_TEST

/* ---------------------------------------------------------------- box QP */

static void rand_spd(frtest_rng *r, int n, double *H, double cond_floor)
{
    double M[64];
    for (int i = 0; i < n * n; i++) M[i] = frtest_uniform(r, -1, 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += M[k * n + i] * M[k * n + j];
            H[i * n + j] = s + (i == j ? cond_floor : 0.0);
        }
}

START_TEST(test_qp_matches_brute_force)
{
    frtest_rng r = {31};
    int max_it[9] = {0};
    for (int k = 0; k < 6000; k++) {
        int n = 1 + (int)(frtest_next(&r) % 8);
        double H[64], g[8], lo[8], hi[8], x[8], xb[8], vb;
        rand_spd(&r, n, H, k % 3 == 0 ? 1e-6 : 0.1);
        for (int i = 0; i < n; i++) {
            g[i] = frtest_uniform(&r, -5, 5);
            lo[i] = frtest_uniform(&r, -2, 1);
            hi[i] = k % 17 == 0 && i == 0 ? lo[i] : lo[i] + frtest_uniform(&r, 0, 3);
        }
        int it;
        ck_assert_int_eq(fr_spidar_qp_solve(n, H, g, lo, hi, x, &it), FR_OK);
        ck_assert_int_le(it, fr_spidar_qp_iteration_bound(n));
        max_it[n] = it > max_it[n] ? it : max_it[n];
        ck_assert_int_ge(tsp_qp_brute(n, H, g, lo, hi, xb, &vb), 1);
        double v = tsp_qp_value(n, H, g, x), scale = 1;
        for (int i = 0; i < n; i++) {
            ck_assert(x[i] >= lo[i] && x[i] <= hi[i]);
            scale = fmax(scale, fabs(xb[i]));
        }
        ck_assert_msg(fabs(v - vb) <= 1e-9 * fmax(1.0, fabs(vb)), "n=%d objective %.17g vs %.17g",
                      n, v, vb);
        /* a strictly convex problem has one minimiser; how close is limited by conditioning */
        if (k % 3 != 0)
            for (int i = 0; i < n; i++) ck_assert_double_le(fabs(x[i] - xb[i]), 1e-9 * scale);
    }
    for (int n = 1; n <= 8; n++) ck_assert_int_le(max_it[n], fr_spidar_qp_iteration_bound(n));
    /* bad input */
    double H1 = 1, g1 = 0, lo1 = 1, hi1 = 0, x1;
    ck_assert_int_eq(fr_spidar_qp_solve(1, &H1, &g1, &lo1, &hi1, &x1, NULL), FR_ERR_INVAL);
    double Hn = -1, l0 = 0, h0 = 1;
    ck_assert_int_eq(fr_spidar_qp_solve(1, &Hn, &g1, &l0, &h0, &x1, NULL), FR_ERR_NUMERIC);
    ck_assert_int_eq(fr_spidar_qp_iteration_bound(8), 8L * 6560 + 1);
}
END_TEST

/* 10⁴ random wrenches per variant at random poses: box always met; optimum equal to the brute
 * force; iterations under the bound; and for wrenches that some tensions in the box produce
 * exactly (f = U t_f, τ = M t_f), the optimum's weighted wrench error obeys
 * λ_t‖Δf‖² + λ_r‖Δτ‖² ≤ ε(‖t_f‖² − ‖t*‖²) (compare the objective at t* and t_f). */
static void tension_property(int w, double eps, uint64_t seed)
{
    frtest_rng r = {seed};
    fr_spidar_config c = preset(w);
    c.w_reg = eps;
    int n = c.n_strings, max_it = 0;
    double wt = n == 8 ? c.w_torque : 0.0;
    for (int k = 0; k < 10000; k++) {
        fr_pose p = tsp_rand_pose(&r, &c, 0.5);
        fr_spidar_kin kin;
        fr_spidar_kinematics(&c, p, &kin);
        fr_vec3 f, tau;
        double tf[8];
        int feasible = k % 2;
        if (feasible) {
            f = tau = fr_v3_zero();
            for (int i = 0; i < n; i++) {
                tf[i] = frtest_uniform(&r, c.tension_min, c.tension_max * 0.6);
                f = fr_v3_mad(f, tf[i], kin.u[i]);
                tau = fr_v3_mad(tau, tf[i], kin.m[i]);
            }
        } else {
            f = fr_v3_scale(tsp_rand_dir(&r), frtest_uniform(&r, 0, 30));
            tau = fr_v3_scale(tsp_rand_dir(&r), frtest_uniform(&r, 0, 0.5));
        }
        double t[8];
        int it;
        ck_assert_int_eq(fr_spidar_tension_solve(&c, &kin, f, tau, NULL, t, &it), FR_OK);
        ck_assert_int_le(it, fr_spidar_qp_iteration_bound(n));
        max_it = it > max_it ? it : max_it;
        for (int i = 0; i < n; i++) ck_assert(t[i] >= c.tension_min && t[i] <= c.tension_max);
        /* brute force on the same quadratic, built here from the geometry */
        double H[64], g[8], lo[8], hi[8], xb[8], vb;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++)
                H[i * n + j] = c.w_force * fr_v3_dot(kin.u[i], kin.u[j]) +
                               wt * fr_v3_dot(kin.m[i], kin.m[j]) + (i == j ? c.w_reg : 0);
            g[i] = c.w_force * fr_v3_dot(kin.u[i], f) + wt * fr_v3_dot(kin.m[i], tau);
            lo[i] = c.tension_min, hi[i] = c.tension_max;
        }
        ck_assert_int_ge(tsp_qp_brute(n, H, g, lo, hi, xb, &vb), 1);
        double v = tsp_qp_value(n, H, g, t);
        ck_assert_msg(fabs(v - vb) <= 1e-9 * fmax(1.0, fabs(vb)), "objective %.17g vs %.17g", v,
                      vb);
        for (int i = 0; i < n; i++)
            ck_assert_msg(fabs(t[i] - xb[i]) <= 1e-9 * c.tension_max, "t[%d] %.17g vs %.17g", i,
                          t[i], xb[i]);
        if (feasible) {
            fr_vec3 ft = fr_v3_zero(), tt = fr_v3_zero();
            double nt = 0, nf = 0;
            for (int i = 0; i < n; i++) {
                ft = fr_v3_mad(ft, t[i], kin.u[i]);
                tt = fr_v3_mad(tt, t[i], kin.m[i]);
                nt += t[i] * t[i];
                nf += tf[i] * tf[i];
            }
            double lhs =
                c.w_force * fr_v3_norm2(fr_v3_sub(ft, f)) + wt * fr_v3_norm2(fr_v3_sub(tt, tau));
            ck_assert_msg(lhs <= eps * (nf - nt) + 1e-12 * nf, "wrench error %.3g > %.3g", lhs,
                          eps * (nf - nt));
        }
    }
    ck_assert_int_le(max_it, fr_spidar_qp_iteration_bound(n));
}

START_TEST(test_tension_3dof)
{
    tension_property(0, 1e-3, 41);
    tension_property(0, 0.3, 42); /* Springhead's weight */
}
END_TEST

START_TEST(test_tension_6dof)
{
    tension_property(1, 1e-3, 43);
}
END_TEST

/* The presets' geometry can push and twist the grip every way (force closure): in a core
 * region, every wrench of 1 N and 0.01 N·m (6-DOF) is reproduced once the regulariser is tiny.
 * (A transcription error in the geometry, such as a swapped attachment point, breaks this.) */
START_TEST(test_force_closure_core)
{
    frtest_rng r = {44};
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        c.w_reg = 1e-9;
        if (w) { /* 6-DOF: the core, ±1 cm and 0.3 rad; 3-DOF: the whole workspace */
            c.workspace_min = fr_v3(-0.01, -0.01, -0.01);
            c.workspace_max = fr_v3(0.01, 0.01, 0.01);
        }
        for (int k = 0; k < 5000; k++) {
            fr_pose p = tsp_rand_pose(&r, &c, 0.3);
            fr_spidar_kin kin;
            fr_spidar_kinematics(&c, p, &kin);
            fr_vec3 f = fr_v3_scale(tsp_rand_dir(&r), 1.0);
            fr_vec3 tau = w ? fr_v3_scale(tsp_rand_dir(&r), 0.01) : fr_v3_zero();
            double t[8];
            ck_assert_int_eq(fr_spidar_tension_solve(&c, &kin, f, tau, NULL, t, NULL), FR_OK);
            fr_vec3 ft = fr_v3_zero(), tt = fr_v3_zero();
            for (int i = 0; i < c.n_strings; i++) {
                ft = fr_v3_mad(ft, t[i], kin.u[i]);
                tt = fr_v3_mad(tt, t[i], kin.m[i]);
            }
            ck_assert_double_le(fr_v3_dist(ft, f), 1e-5);
            ck_assert_double_le(fr_v3_dist(tt, tau), 1e-5);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------- boards, unwrap, mailbox */

START_TEST(test_board_packets)
{
    const fri_spidar_board *sh4 = fri_spidar_board_get(FR_SPIDAR_BOARD_SH4);
    const fri_spidar_board *sim = fri_spidar_board_get(FR_SPIDAR_BOARD_SIMPLE);
    ck_assert_ptr_nonnull(sh4);
    ck_assert_ptr_nonnull(sim);
    ck_assert_ptr_null(fri_spidar_board_get(FR_SPIDAR_BOARD_NONE));
    ck_assert_uint_eq(sh4->vid, 0x0CEC);
    ck_assert_uint_eq(sh4->pid, 0x0205);
    ck_assert_uint_eq(sh4->ep_out, 0x02);
    ck_assert_uint_eq(sh4->ep_in, 0x86);
    ck_assert_uint_eq(sim->pid, 0x0203);
    int16_t dac[8] = {1, -1, 300, -300, 32767, -32768, 0, 4660};
    uint8_t b[512];
    ck_assert_int_eq(sh4->build_command(dac, b), 512);
    const uint8_t want[18] = {0x01, 0x0E, 0x01, 0x00, 0xFF, 0xFF, 0x2C, 0x01, 0xD4,
                              0xFE, 0xFF, 0x7F, 0x00, 0x80, 0x00, 0x00, 0x34, 0x12};
    ck_assert_mem_eq(b, want, 18);
    for (int i = 18; i < 512; i++) ck_assert_uint_eq(b[i], 0);
    ck_assert_int_eq(sh4->build_request(b), 0);
    /* IN layout */
    uint8_t in[512] = {0};
    for (int c = 0; c < 8; c++) {
        in[16 + 2 * c] = (uint8_t)(0x10 * c + 1), in[17 + 2 * c] = (uint8_t)(0xF0 - c);
        in[32 + 2 * c] = (uint8_t)(c * 30), in[33 + 2 * c] = 0x01;
    }
    in[48] = 0x5A, in[49] = 0x01;
    in[50] = 0x78, in[51] = 0x56, in[52] = 0x34, in[53] = 0x12;
    fri_spidar_raw raw;
    ck_assert_int_eq(sh4->parse(in, 512, &raw), FR_OK);
    for (int c = 0; c < 8; c++) {
        ck_assert_uint_eq(raw.counter[c], (uint32_t)((0xF0 - c) << 8 | (0x10 * c + 1)));
        ck_assert_double_eq_tol(raw.adc[c], (256 + c * 30) * 24.0 / 4096.0, 1e-12);
    }
    ck_assert_uint_eq(raw.pio, 0x015A);
    ck_assert_uint_eq(raw.status, 0x12345678);
    ck_assert_int_eq(sh4->parse(in, 53, &raw), FR_ERR_PARSE);
    /* Simple board */
    ck_assert_int_eq(sim->build_command(dac, b), 17);
    ck_assert_uint_eq(b[0], 0x52);
    ck_assert_mem_eq(b + 1, want + 2, 16);
    ck_assert_int_eq(sim->build_request(b), 1);
    ck_assert_uint_eq(b[0], 0x51);
    ck_assert_int_eq(sim->build_init(0, 1, b), 3);
    ck_assert(b[0] == 0xA2 && b[1] == 0x1A && b[2] == 0xFF);
    ck_assert_int_eq(sim->build_init(1, 1, b), 3);
    ck_assert(b[0] == 0xA2 && b[1] == 0x19 && b[2] == 0xFF);
    ck_assert_int_eq(sim->build_init(1, 0, b), 0); /* counters are not cleared on reconnect */
    uint8_t sin[32] = {0};
    int32_t v[8] = {0, 1, -1, 8388607, -8388608, 123456, -654321, 42};
    for (int c = 0; c < 8; c++) {
        uint32_t u = (uint32_t)v[c] & 0xFFFFFF;
        sin[3 * c] = (uint8_t)u, sin[3 * c + 1] = (uint8_t)(u >> 8),
                sin[3 * c + 2] = (uint8_t)(u >> 16);
    }
    sin[24] = 0xA5;
    ck_assert_int_eq(sim->parse(sin, 32, &raw), FR_OK);
    for (int c = 0; c < 8; c++) {
        fri_unwrap u = {0};
        fri_unwrap_apply(&u, raw.counter[c], 24, 0);
        ck_assert_int_eq(u.count, v[c]);
    }
    ck_assert_uint_eq(raw.pio & sim->button_mask, 0x05);
}
END_TEST

START_TEST(test_unwrap)
{
    frtest_rng r = {51};
    const int bits[2] = {16, 24};
    for (int b = 0; b < 2; b++)
        for (int neg = 0; neg < 2; neg++) {
            uint32_t mask = (1u << bits[b]) - 1;
            int64_t truth = (int64_t)(frtest_next(&r) % 100000) - 50000;
            fri_unwrap u = {0};
            /* the board shows (±truth) mod 2^bits; the host sees −raw when negating */
            fri_unwrap_apply(&u, (uint32_t)(neg ? -truth : truth) & mask, bits[b], neg);
            int64_t offset = u.count - truth;
            int64_t maxstep = (int64_t)(mask / 2) - 701; /* below half the range */
            for (int k = 0; k < 100000; k++) {
                truth += (int64_t)(frtest_next(&r) % (uint64_t)(2 * 700 + 1)) - 700;
                if (k % 1000 == 0) truth += (frtest_next(&r) & 1) ? maxstep : -maxstep;
                fri_unwrap_apply(&u, (uint32_t)(neg ? -truth : truth) & mask, bits[b], neg);
                ck_assert_int_eq(u.count - offset, truth);
            }
        }
}
END_TEST

typedef struct tb_shared {
    fri_tbuf tb;
    struct {
        uint64_t a, b[15];
    } slot[3];
    _Atomic int done;
} tb_shared;

static void *tb_producer(void *arg)
{
    tb_shared *s = arg;
    for (uint64_t i = 1; i <= 2000000; i++) {
        s->slot[s->tb.back].a = i;
        for (int k = 0; k < 15; k++) s->slot[s->tb.back].b[k] = i * (uint64_t)(k + 1);
        fri_tbuf_publish(&s->tb);
    }
    atomic_store(&s->done, 1);
    return NULL;
}

START_TEST(test_triple_buffer_two_threads)
{
    static tb_shared s;
    memset(&s, 0, sizeof s);
    fri_tbuf_init(&s.tb);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, tb_producer, &s), 0);
    uint64_t last = 0, taken = 0;
    for (;;) {
        int fin = atomic_load(&s.done);
        if (fri_tbuf_take(&s.tb)) {
            uint64_t a = s.slot[s.tb.front].a;
            for (int k = 0; k < 15; k++) ck_assert_uint_eq(s.slot[s.tb.front].b[k], a * (k + 1));
            ck_assert_uint_gt(a, last); /* newer every time, never torn */
            last = a;
            taken++;
        }
        if (fin && !(atomic_load(&s.tb.mid) & FRI_TBUF_FRESH)) break;
    }
    pthread_join(th, NULL);
    ck_assert_uint_eq(last, 2000000); /* the newest value always arrives */
    ck_assert_uint_gt(taken, 0);
}
END_TEST

/* ---------------------------------------------------------------- kinematic device */

static void counts_for_pose(const fr_spidar_config *c, fr_pose p, const int64_t *base,
                            int64_t *counts)
{
    /* the counts a board would show: home → base, then one count per Δ of length change */
    fr_spidar_kin k, h;
    fr_spidar_kinematics(c, p, &k);
    fr_spidar_kinematics(c, c->home, &h);
    for (int i = 0; i < c->n_strings; i++)
        counts[i] = base[i] + (int64_t)nearbyint(c->motor[i].count_sign *
                                                 (k.length[i] - h.length[i]) / c->length_per_count);
}

START_TEST(test_kinematic_device)
{
    frtest_rng r = {61};
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        c.motor[0].count_sign = -1, c.motor[1].volt_sign = -1;
        fr_device *dev;
        ck_assert_int_eq(fr_spidar_open(&c, &dev), FR_OK);
        ck_assert_str_eq(dev->desc.driver, "spidar");
        ck_assert_int_eq(dev->desc.dof_sensed, w ? 6 : 3);
        fr_device_state st;
        ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
        ck_assert_int_eq(st.status, FR_DEVICE_STALE); /* nothing measured yet */
        fr_device_cmd cmd = {fr_v3(1, 0, 0), fr_v3_zero()};
        ck_assert_int_eq(fr_device_write(dev, &cmd), FR_ERR_DEVICE);
        int mn;
        fr_spidar_last_output(dev, NULL, NULL, &mn);
        ck_assert_int_eq(mn, 1);
        int64_t base[8] = {1000, -2000, 30000, 7, 123456, -99999, 5, 65535}, cnt[8];
        ck_assert_int_eq(fr_spidar_feed_counts(dev, base), FR_OK); /* calibrates at home */
        ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
        ck_assert_int_eq(st.status, FR_DEVICE_OK);
        ck_assert_double_le(tsp_pose_err(st.pose, c.home), 1e-12);
        ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
        ck_assert_int_eq(st.status, FR_DEVICE_STALE); /* no new sample */
        for (int k = 0; k < 200; k++) {
            fr_pose p = tsp_rand_pose(&r, &c, 0.4);
            counts_for_pose(&c, p, base, cnt);
            ck_assert_int_eq(fr_spidar_feed_counts(dev, cnt), FR_OK);
            /* the 6-DOF estimate converges over a few reads (2 iterations each) */
            for (int j = 0; j < (w ? 10 : 1); j++) {
                if (j) fr_spidar_feed_counts(dev, cnt);
                ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
            }
            ck_assert_int_eq(st.status, FR_DEVICE_OK);
            double bound = w ? tsp_pinv_norm_6dof(&c, p) * c.length_per_count / 2 * sqrt(8.0)
                             : tsp_bound_3dof(&c, p.p, c.length_per_count);
            ck_assert_double_le(tsp_pose_err(st.pose, p), bound);
            /* write: the tensions are the QP's at the reported pose, on the right channels */
            cmd.force = fr_v3_scale(tsp_rand_dir(&r), frtest_uniform(&r, 0, 4));
            cmd.torque = fr_v3_scale(tsp_rand_dir(&r), frtest_uniform(&r, 0, 0.05));
            ck_assert_int_eq(fr_device_write(dev, &cmd), FR_OK);
            double t[8], te[8];
            int16_t dac[8], de[8];
            fr_spidar_last_output(dev, t, dac, &mn);
            ck_assert_int_eq(mn, 0);
            fr_spidar_kin kin;
            fr_spidar_kinematics(&c, st.pose, &kin);
            ck_assert_int_eq(
                fr_spidar_tension_solve(&c, &kin, cmd.force, cmd.torque, NULL, te, NULL), FR_OK);
            fr_spidar_tension_to_dac(&c, te, de);
            for (int i = 0; i < c.n_strings; i++) ck_assert(t[i] == te[i]);
            ck_assert_mem_eq(dac, de, sizeof dac);
        }
        /* NaN is refused and drops to minimum */
        cmd.force.y = NAN;
        ck_assert_int_eq(fr_device_write(dev, &cmd), FR_ERR_NUMERIC);
        fr_spidar_last_output(dev, NULL, NULL, &mn);
        ck_assert_int_eq(mn, 1);
        /* calibrate: the current counts become the home pose */
        counts_for_pose(&c, tsp_rand_pose(&r, &c, 0.3), base, cnt);
        fr_spidar_feed_counts(dev, cnt);
        ck_assert_int_eq(dev->ops->calibrate(dev), FR_OK);
        fr_spidar_feed_counts(dev, cnt);
        ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
        ck_assert_double_le(tsp_pose_err(st.pose, c.home), 1e-12);
        /* counts that no pose explains are a fault (e.g. a counter that restarted) */
        cnt[1] += 5000;
        for (int j = 0; j < 5; j++) {
            fr_spidar_feed_counts(dev, cnt);
            ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
        }
        ck_assert_int_eq(st.status, FR_DEVICE_FAULT);
        cmd.force = fr_v3(1, 0, 0);
        ck_assert_int_eq(fr_device_write(dev, &cmd), FR_ERR_DEVICE);
        fr_spidar_info info;
        ck_assert_int_eq(fr_spidar_get_info(dev, &info), FR_OK);
        ck_assert_uint_gt(info.faults[FR_SPIDAR_FAULT_POSE], 0);
        dev->ops->close(dev);
    }
}
END_TEST

/* The velocity estimate: the grip moves at a constant velocity in real time (counts fed every
 * millisecond, positions from the actual time). The filter is linear, so the mean of its output
 * over the last 150 reads is the mean finite difference: (x_N − x_0)/(N dt) up to the filter's
 * transient, with a quantisation error of about two pose errors over 0.15 s (≪ 5 %). */
START_TEST(test_kinematic_velocity)
{
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        fr_device *dev;
        ck_assert_int_eq(fr_spidar_open(&c, &dev), FR_OK);
        int64_t base[8] = {0}, cnt[8];
        fr_vec3 v = fr_v3(0.08, -0.05, 0.03);
        fr_vec3 w_rot = fr_v3(0.3, 0, w ? 2.0 : 0.0);
        if (!w) w_rot = fr_v3_zero();
        struct timespec t0s;
        clock_gettime(CLOCK_MONOTONIC, &t0s);
        fr_device_state st;
        fr_vec3 vm = fr_v3_zero(), wm = fr_v3_zero();
        for (int k = 0; k < 300; k++) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double t = (double)(ts.tv_sec - t0s.tv_sec) + (double)(ts.tv_nsec - t0s.tv_nsec) * 1e-9;
            fr_pose p = {fr_v3_scale(v, t), fr_q_exp(fr_v3_scale(w_rot, t))};
            counts_for_pose(&c, p, base, cnt);
            fr_spidar_feed_counts(dev, cnt);
            ck_assert_int_eq(fr_device_read(dev, &st), FR_OK);
            if (k >= 150) {
                vm = fr_v3_mad(vm, 1.0 / 150, st.vel);
                wm = fr_v3_mad(wm, 1.0 / 150, st.angvel);
            }
            struct timespec d = {0, 1000000};
            nanosleep(&d, NULL);
        }
        ck_assert_double_le(fr_v3_dist(vm, v), 0.05 * fr_v3_norm(v));
        if (w)
            ck_assert_double_le(fr_v3_dist(wm, w_rot), 0.05 * fr_v3_norm(w_rot));
        else
            ck_assert(fr_v3_norm(st.angvel) == 0.0);
        dev->ops->close(dev);
    }
}
END_TEST

typedef struct feeder {
    fr_device *dev;
    const fr_spidar_config *c;
    _Atomic int stop;
} feeder;

static void *feed_thread(void *arg)
{
    feeder *f = arg;
    frtest_rng r = {71};
    int64_t base[8] = {0}, cnt[8];
    while (!atomic_load(&f->stop)) {
        fr_pose p = tsp_rand_pose(&r, f->c, 0.1);
        p.p = fr_v3_scale(p.p, 0.1); /* small motions around home */
        counts_for_pose(f->c, p, base, cnt);
        fr_spidar_feed_counts(f->dev, cnt);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* read/write on the watched thread: no allocation, lock, wait or I/O, while another thread
 * produces samples (as the device thread does). */
START_TEST(test_hot_path_no_alloc)
{
    if (!fri_watch_available()) return; /* sanitizer build: malloc is not interposed */
    for (int w = 0; w < 2; w++) {
        fr_spidar_config c = preset(w);
        fr_device *dev;
        ck_assert_int_eq(fr_spidar_open(&c, &dev), FR_OK);
        int64_t zero[8] = {0};
        fr_spidar_feed_counts(dev, zero);
        fr_device_state st;
        fr_device_read(dev, &st);
        feeder f = {dev, &c, 0};
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, feed_thread, &f), 0);
        fr_device_cmd cmd = {fr_v3(1, 2, -1), fr_v3(0.01, 0, 0.02)};
        fri_watch_thread(pthread_self());
        fri_watch_arm();
        int ok = 0;
        for (int k = 0; k < 20000; k++) {
            fr_device_read(dev, &st);
            ok += st.status == FR_DEVICE_OK;
            fr_device_write(dev, &cmd);
            fr_device_set_minimum(dev);
        }
        fri_watch_counts n = fri_watch_disarm();
        atomic_store(&f.stop, 1);
        pthread_join(th, NULL);
        ck_assert_int_gt(ok, 0);
        ck_assert_int_eq(n.allocs, 0);
        ck_assert_int_eq(n.frees, 0);
        ck_assert_int_eq(n.locks, 0);
        ck_assert_int_eq(n.waits, 0);
        ck_assert_int_eq(n.io, 0);
        dev->ops->close(dev);
    }
}
END_TEST

static Suite *spidar_suite(void)
{
    Suite *s = suite_create("spidar");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_config_presets_and_keys);
    tcase_add_test(tc, test_example_device_files);
    tcase_add_test(tc, test_counts_and_dac_conversions);
    tcase_add_test(tc, test_pose_roundtrip_3dof);
    tcase_add_test(tc, test_pose_roundtrip_6dof);
    tcase_add_test(tc, test_quantisation_bounds);
    tcase_add_test(tc, test_qp_matches_brute_force);
    tcase_add_test(tc, test_tension_3dof);
    tcase_add_test(tc, test_tension_6dof);
    tcase_add_test(tc, test_force_closure_core);
    tcase_add_test(tc, test_board_packets);
    tcase_add_test(tc, test_unwrap);
    tcase_add_test(tc, test_triple_buffer_two_threads);
    tcase_add_test(tc, test_kinematic_device);
    tcase_add_test(tc, test_kinematic_velocity);
    tcase_add_test(tc, test_hot_path_no_alloc);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(spidar_suite)
