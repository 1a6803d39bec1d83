/* The SPIDAR driver's registry entry (drivers/spidar/spidar_cfg.c): the shipped device files
 * reproduce the presets field by field, every key and every --set override reaches the config
 * exactly as fr_spidar_config_set puts it there, malformed files in tests/drivers/bad/spidar-*
 * are rejected at the file, line, column and field their first line names ("# expect: L:C
 * FIELD"), and a `board: none` device opened through the registry behaves bit for bit as one
 * from fr_spidar_open with the same configuration. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/devices.h"
#include "fureru/spidar.h"
#include "spidar_cfg.h"

static fr_devreg make_reg(const char *config_dir)
{
    static const fr_driver_entry *const drivers[] = {&fr_spidar_driver};
    return (fr_devreg){drivers, 1, config_dir};
}

static const char *const files[2] = {"config/devices/spidar-4.yaml",
                                     "config/devices/spidar-g6-x3r.yaml"};

static fr_spidar_config preset(int which)
{
    fr_spidar_config c;
    fr_spidar_config_default(&c, which ? FR_SPIDAR_PRESET_G6X3R : FR_SPIDAR_PRESET_SPIDAR4);
    return c;
}

/* Parse a document (file or text) with the driver's parser, after the --set assignments. */
static int parse(const char *path, const char *text, const char *const *sets, int n_sets,
                 fr_spidar_config *out, fr_diag *d)
{
    fr_cfg_doc *doc = NULL;
    int err = path ? fr_cfg_load_file(path, &doc, d) : fr_cfg_load_string(text, "<text>", &doc, d);
    for (int i = 0; !err && i < n_sets; i++) err = fr_cfg_set(doc, sets[i], d);
    if (!err) err = fri_spidar_config_from_cfg(fr_cfg_root(doc), out, d);
    fr_cfg_free(doc);
    return err;
}

#define ASSERT_OK(expr, d)                                                                         \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        ck_assert_msg(e_ == FR_OK, "%s: %s (%s:%d:%d %s: %s)", #expr, fr_strerror(e_), (d).file,   \
                      (d).line, (d).col, (d).field, (d).msg);                                      \
    } while (0)

/*
 * The first field of fr_spidar_config in which g and w differ (NULL: none), written to what.
 * Numbers must be equal (the files print them as the presets write them), except the motor
 * points, which the G6 file prints with 11 decimals (a rounding of at most 5e-12 per
 * coordinate, √3 · 5e-12 < 1e-11 in length): pos_tol = 0 asks for equality there too.
 */
static const char *config_diff(const fr_spidar_config *g, const fr_spidar_config *w, double pos_tol,
                               char *what, size_t n)
{
    if (strcmp(g->name, w->name) != 0) return snprintf(what, n, "name"), what;
    if (g->board != w->board) return snprintf(what, n, "board"), what;
    if (g->n_strings != w->n_strings) return snprintf(what, n, "n_strings"), what;
    /* motors beyond n_strings are unused but must not be garbage either */
    for (int i = 0; i < FR_SPIDAR_MAX_STRINGS; i++) {
        const fr_spidar_motor *a = &g->motor[i], *b = &w->motor[i];
        if (!(fr_v3_dist(a->position, b->position) <= pos_tol))
            return snprintf(what, n, "motor[%d].position", i), what;
        if (!(fr_v3_dist(a->attach, b->attach) <= pos_tol))
            return snprintf(what, n, "motor[%d].attach", i), what;
        if (a->count_sign != b->count_sign || a->volt_sign != b->volt_sign ||
            a->channel != b->channel)
            return snprintf(what, n, "motor[%d] signs/channel", i), what;
    }
    const struct {
        const char *name;
        double a, b;
    } num[] = {
        {"length_per_count", g->length_per_count, w->length_per_count},
        {"volts_per_newton", g->volts_per_newton, w->volts_per_newton},
        {"tension_min", g->tension_min, w->tension_min},
        {"tension_max", g->tension_max, w->tension_max},
        {"dac_per_volt", g->dac_per_volt, w->dac_per_volt},
        {"home.p.x", g->home.p.x, w->home.p.x},
        {"home.p.y", g->home.p.y, w->home.p.y},
        {"home.p.z", g->home.p.z, w->home.p.z},
        {"home.q.w", g->home.q.w, w->home.q.w},
        {"home.q.x", g->home.q.x, w->home.q.x},
        {"home.q.y", g->home.q.y, w->home.q.y},
        {"home.q.z", g->home.q.z, w->home.q.z},
        {"w_force", g->w_force, w->w_force},
        {"w_torque", g->w_torque, w->w_torque},
        {"w_reg", g->w_reg, w->w_reg},
        {"w_smooth", g->w_smooth, w->w_smooth},
        {"gn_damping", g->gn_damping, w->gn_damping},
        {"gn_max_step", g->gn_max_step, w->gn_max_step},
        {"gn_max_rot", g->gn_max_rot, w->gn_max_rot},
        {"vel_cutoff", g->vel_cutoff, w->vel_cutoff},
        {"max_force", g->max_force, w->max_force},
        {"max_torque", g->max_torque, w->max_torque},
        {"max_stiffness", g->max_stiffness, w->max_stiffness},
        {"max_damping", g->max_damping, w->max_damping},
        {"max_rot_stiffness", g->max_rot_stiffness, w->max_rot_stiffness},
        {"max_rot_damping", g->max_rot_damping, w->max_rot_damping},
        {"workspace_min.x", g->workspace_min.x, w->workspace_min.x},
        {"workspace_min.y", g->workspace_min.y, w->workspace_min.y},
        {"workspace_min.z", g->workspace_min.z, w->workspace_min.z},
        {"workspace_max.x", g->workspace_max.x, w->workspace_max.x},
        {"workspace_max.y", g->workspace_max.y, w->workspace_max.y},
        {"workspace_max.z", g->workspace_max.z, w->workspace_max.z},
        {"usb_period", g->usb_period, w->usb_period},
        {"io_timeout", g->io_timeout, w->io_timeout},
        {"stale_timeout", g->stale_timeout, w->stale_timeout},
        {"command_timeout", g->command_timeout, w->command_timeout},
        {"reconnect_interval", g->reconnect_interval, w->reconnect_interval},
        {"max_string_speed", g->max_string_speed, w->max_string_speed},
    };
    for (size_t k = 0; k < sizeof num / sizeof num[0]; k++)
        if (num[k].a != num[k].b)
            return snprintf(what, n, "%s: %.17g vs %.17g", num[k].name, num[k].a, num[k].b), what;
    const struct {
        const char *name;
        int a, b;
    } ints[] = {
        {"dac_limit", g->dac_limit, w->dac_limit},
        {"calibrate_on_open", g->calibrate_on_open, w->calibrate_on_open},
        {"gn_iterations", g->gn_iterations, w->gn_iterations},
        {"usb_index", g->usb_index, w->usb_index},
        {"recover_samples", g->recover_samples, w->recover_samples},
        {"thread_priority", g->thread_priority, w->thread_priority},
        {"require_device", g->require_device, w->require_device},
    };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
        if (ints[k].a != ints[k].b)
            return snprintf(what, n, "%s: %d vs %d", ints[k].name, ints[k].a, ints[k].b), what;
    return NULL;
}

static void check_config_equal(const fr_spidar_config *g, const fr_spidar_config *w, double pos_tol)
{
    char what[160];
    const char *diff = config_diff(g, w, pos_tol, what, sizeof what);
    ck_assert_msg(diff == NULL, "configs differ at %s", diff);
}

/* ---------------------------------------------------------------- the shipped files */

START_TEST(test_shipped_files_reproduce_presets)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    const char *specs[2] = {"spidar-4", "spidar-g6-x3r"};
    for (int w = 0; w < 2; w++) {
        fr_diag d;
        fr_safety_params sp;
        /* through the registry by spec (a dry run: board sh4 is not looked for) */
        ASSERT_OK(fr_devreg_check(&reg, specs[w], NULL, 0, &sp, &d), d);
        fr_spidar_config got, want = preset(w);
        ASSERT_OK(parse(frtest_path(files[w]), NULL, NULL, 0, &got, &d), d);
        check_config_equal(&got, &want, w ? 1e-11 : 0.0);
    }
}
END_TEST

/* No file, `strings:` alone and `preset:` alone give the presets exactly. */
START_TEST(test_preset_selection)
{
    fr_diag d;
    fr_spidar_config got, s4 = preset(0), g6 = preset(1);
    ASSERT_OK(fri_spidar_config_from_cfg(NULL, &got, &d), d);
    check_config_equal(&got, &s4, 0.0);
    const struct {
        const char *text;
        const fr_spidar_config *want;
    } cases[] = {
        {"driver: spidar\n", &s4},
        {"driver: spidar\nstrings: 4\n", &s4},
        {"driver: spidar\nstrings: 8\n", &g6},
        {"driver: spidar\npreset: spidar-g6-x3r\n", &g6},
        {"driver: spidar\npreset: spidar-4\nstrings: 4\n", &s4},
        {"driver: spidar\npreset: spidar-g6-x3r\nstrings: 8\nhome: \nusb:\n", &g6},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ASSERT_OK(parse(NULL, cases[k].text, NULL, 0, &got, &d), d);
        check_config_equal(&got, cases[k].want, 0.0);
    }
    /* by driver name alone: every default (spidar-4), validated */
    fr_devreg bare = make_reg(NULL);
    ASSERT_OK(fr_devreg_check(&bare, "spidar", NULL, 0, NULL, &d), d);
}
END_TEST

/*
 * Every key, changed to a value no preset has, through fr_cfg_set (the --set path) on the G6
 * file: the result must be the preset changed by fr_spidar_config_set with the same texts (the
 * spidar module's own key parser, independent of the YAML walk).
 */
static const char *const every_key[] = {
    "name=g6-bench",
    "board=simple",
    "length_per_count=2.0e-5",
    "volts_per_newton=0.4",
    "tension_min=0.5",
    "tension_max=15",
    "dac_per_volt=400",
    "dac_limit=30000",
    "calibrate_on_open=0",
    "home.position=[0.001, -0.002, 0.003]",
    "home.orientation=[0.99, 0.05, -0.02, 0.01]",
    "motors.0.channel=1",
    "motors.1.channel=0",
    "motors.2.count_sign=1",
    "motors.3.volt_sign=-1",
    "motors.4.position=[-0.085, 0.001, 0.075]",
    "motors.5.attach=[0.016, 0.015, 0.001]",
    "tension.w_force=2",
    "tension.w_torque=5",
    "tension.w_reg=0.002",
    "tension.w_smooth=0.1",
    "pose.damping=0.001",
    "pose.iterations=3",
    "pose.max_step=0.01",
    "pose.max_rot=0.2",
    "pose.vel_cutoff=40",
    "limits.max_force=8",
    "limits.max_torque=0.15",
    "limits.max_stiffness=1500",
    "limits.max_damping=8",
    "limits.max_rot_stiffness=1.5",
    "limits.max_rot_damping=0.015",
    "limits.workspace_min=[-0.02, -0.021, -0.04]",
    "limits.workspace_max=[0.02, 0.022, 0.04]",
    "usb.index=1",
    "usb.period=0.001",
    "usb.io_timeout=0.02",
    "usb.stale_timeout=0.003",
    "usb.command_timeout=0.006",
    "usb.reconnect_interval=0.1",
    "usb.recover_samples=5",
    "usb.max_string_speed=2.5",
    "usb.thread_priority=80",
    "usb.require_device=0",
};
#define N_EVERY ((int)(sizeof every_key / sizeof every_key[0]))

/* preset + fr_spidar_config_set("a.b", "v") for each "a.b=v". */
static fr_spidar_config preset_with(int which, const char *const *sets, int n)
{
    fr_spidar_config c = preset(which);
    for (int i = 0; i < n; i++) {
        char key[128];
        const char *eq = strchr(sets[i], '=');
        ck_assert_ptr_nonnull(eq);
        snprintf(key, sizeof key, "%.*s", (int)(eq - sets[i]), sets[i]);
        ck_assert_msg(fr_spidar_config_set(&c, key, eq + 1) == FR_OK, "%s", sets[i]);
    }
    return c;
}

START_TEST(test_every_key_reaches_the_config)
{
    fr_diag d;
    fr_spidar_config got, want = preset_with(1, every_key, N_EVERY), base = preset(1);
    ASSERT_OK(parse(frtest_path(files[1]), NULL, every_key, N_EVERY, &got, &d), d);
    check_config_equal(&got, &want, 1e-11);
    ck_assert_int_eq(fr_spidar_config_validate(&got, NULL, 0), FR_OK);
    /* each override on its own changes the preset (so none of them is a no-op above) */
    for (int i = 0; i < N_EVERY; i++) {
        fr_spidar_config one = preset_with(1, every_key + i, 1);
        char what[160];
        ck_assert_msg(config_diff(&one, &base, 0.0, what, sizeof what) != NULL,
                      "%s is the preset's value", every_key[i]);
    }
    /* and through the registry (the --set list of fureru run --device) */
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    ASSERT_OK(fr_devreg_check(&reg, "spidar-g6-x3r", every_key, N_EVERY, NULL, &d), d);

    /* the same on the 3-DOF file (no motors 4..7 there: a shorter list) */
    const char *s4[] = {"board=none",
                        "strings=4",
                        "motors.1.position=[-0.05, -0.06, 0.08]",
                        "motors.3.count_sign=-1",
                        "tension_max=12",
                        "usb.require_device=false",
                        "calibrate_on_open=true"};
    const char *s4_set[] = {"board=none",
                            "strings=4",
                            "motors.1.position=[-0.05, -0.06, 0.08]",
                            "motors.3.count_sign=-1",
                            "tension_max=12",
                            "usb.require_device=0",
                            "calibrate_on_open=1"};
    want = preset_with(0, s4_set, 7);
    ASSERT_OK(parse(frtest_path(files[0]), NULL, s4, 7, &got, &d), d);
    check_config_equal(&got, &want, 0.0);
}
END_TEST

/* Overrides that are wrong are located at their path (file "--set", no line). */
START_TEST(test_bad_overrides)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    fr_diag d;
    const struct {
        const char *set;
        int err;
        const char *field;
    } cases[] = {
        {"usb.period=0", FR_ERR_RANGE, "usb.period"},
        {"tension_max=.inf", FR_ERR_RANGE, "tension_max"},
        {"board=usb3", FR_ERR_PARSE, "board"},
        {"motors.1.chanel=2", FR_ERR_PARSE, "motors[1].chanel"},
        {"motors.1.channel=0", FR_ERR_RANGE, "motors[1].channel"},
        {"motors.2.position=[0, 0]", FR_ERR_PARSE, "motors[2].position"},
        {"motors.9.channel=1", FR_ERR_NOTFOUND, "motors.9"},
        {"pose.iterations=0", FR_ERR_RANGE, "pose.iterations"},
        {"strings=8", FR_ERR_RANGE, "motors"}, /* the file lists 4 motors */
        {"tension=3", FR_ERR_PARSE, "tension"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(&d, 0, sizeof d);
        int err = fr_devreg_check(&reg, "spidar-4", &cases[k].set, 1, NULL, &d);
        ck_assert_msg(err == cases[k].err && strcmp(d.field, cases[k].field) == 0,
                      "%s: got %s, field '%s' (%s); want %s, '%s'", cases[k].set, fr_strerror(err),
                      d.field, d.msg, fr_strerror(cases[k].err), cases[k].field);
        /* a value from --set has no position in the file */
        if (strcmp(cases[k].field, "motors") != 0) ck_assert_int_eq(d.line, 0);
    }
}
END_TEST

/* ---------------------------------------------------------------- malformed files */

/* Check, then open for real: opening fails the same way before any hardware is looked for. */
static int check_then_open(const char *path, fr_diag *d, void *ctx)
{
    const fr_devreg *reg = ctx;
    int err = fr_devreg_check(reg, path, NULL, 0, NULL, d);
    fr_device *dev = NULL;
    fr_diag d2;
    ck_assert_int_eq(fr_devreg_open(reg, path, NULL, 0, &dev, NULL, &d2), err);
    ck_assert_ptr_null(dev);
    ck_assert(d2.line == d->line && d2.col == d->col && strcmp(d2.field, d->field) == 0);
    return err;
}

START_TEST(test_bad_files)
{
    fr_devreg reg = make_reg(NULL);
    int n = frtest_check_bad_files(frtest_path("tests/drivers/bad"), "spidar-", ".yaml",
                                   check_then_open, &reg);
    ck_assert_int_ge(n, 8);
}
END_TEST

/* ---------------------------------------------------------------- board: none */

/* Counts that a board would report at pose (offset per motor: the counters start anywhere). */
static void counts_at(const fr_spidar_config *c, fr_pose pose, int64_t *counts)
{
    fr_spidar_kin k;
    fr_spidar_kinematics(c, pose, &k);
    for (int i = 0; i < c->n_strings; i++)
        counts[i] = 1000 * (i + 1) +
                    (int64_t)llround(k.length[i] / (c->motor[i].count_sign * c->length_per_count));
}

static void same_state(const fr_device_state *a, const fr_device_state *b, int step)
{
    ck_assert_msg(a->pose.p.x == b->pose.p.x && a->pose.p.y == b->pose.p.y &&
                      a->pose.p.z == b->pose.p.z && a->pose.q.w == b->pose.q.w &&
                      a->pose.q.x == b->pose.q.x && a->pose.q.y == b->pose.q.y &&
                      a->pose.q.z == b->pose.q.z,
                  "step %d: poses differ", step);
    ck_assert_int_eq(a->status, b->status);
    ck_assert_int_eq(a->buttons, b->buttons);
    ck_assert(a->seq == b->seq);
}

static void same_output(fr_device *a, fr_device *b, int n)
{
    double ta[FR_SPIDAR_MAX_STRINGS], tb[FR_SPIDAR_MAX_STRINGS];
    int16_t da[FR_SPIDAR_CHANNELS], db[FR_SPIDAR_CHANNELS];
    int ma, mb;
    ck_assert_int_eq(fr_spidar_last_output(a, ta, da, &ma), FR_OK);
    ck_assert_int_eq(fr_spidar_last_output(b, tb, db, &mb), FR_OK);
    ck_assert_int_eq(ma, mb);
    for (int i = 0; i < n; i++) ck_assert_msg(ta[i] == tb[i], "tension %d", i);
    ck_assert(memcmp(da, db, sizeof da) == 0);
}

START_TEST(test_board_none_matches_fr_spidar_open)
{
    int w = _i; /* 0: spidar-4, 1: spidar-g6-x3r */
    const char *sets[] = {"board=none", "name=bench", "tension_min=0.4", "limits.max_force=3.5",
                          "tension.w_smooth=0.05"};
    /* the reference: what the file says (the G6 file rounds the preset's motor points) */
    fr_spidar_config cfg, want = preset_with(w, sets, 5);
    fr_diag d;
    ASSERT_OK(parse(frtest_path(files[w]), NULL, sets, 5, &cfg, &d), d);
    check_config_equal(&cfg, &want, w ? 1e-11 : 0.0);
    fr_devreg reg = make_reg(NULL);
    fr_device *dev = NULL, *ref = NULL;
    fr_safety_params sp;
    ASSERT_OK(fr_devreg_open(&reg, frtest_path(files[w]), sets, 5, &dev, &sp, &d), d);
    ck_assert_int_eq(fr_spidar_open(&cfg, &ref), FR_OK);

    const fr_device_desc *a = &dev->desc, *b = &ref->desc;
    ck_assert_str_eq(a->name, "bench");
    ck_assert_str_eq(a->name, b->name);
    ck_assert_str_eq(a->driver, b->driver);
    ck_assert_int_eq(a->dof_sensed, w ? 6 : 3);
    ck_assert(a->dof_sensed == b->dof_sensed && a->dof_forced == b->dof_forced);
    ck_assert(a->max_force == 3.5 && a->max_force == b->max_force);
    ck_assert(a->max_torque == b->max_torque && a->max_stiffness == b->max_stiffness &&
              a->max_damping == b->max_damping && a->max_rot_stiffness == b->max_rot_stiffness &&
              a->max_rot_damping == b->max_rot_damping);
    ck_assert(memcmp(&a->workspace_min, &b->workspace_min, sizeof(fr_vec3)) == 0 &&
              memcmp(&a->workspace_max, &b->workspace_max, sizeof(fr_vec3)) == 0);
    ck_assert(dev->ops->calibrate != NULL);

    /* before any sample: both refuse to pull and post the minimum */
    fr_device_state sa, sb;
    fr_device_cmd cmd = {fr_v3(1, 0, 0), fr_v3_zero()};
    ck_assert_int_eq(fr_device_read(dev, &sa), FR_OK);
    ck_assert_int_eq(fr_device_read(ref, &sb), FR_OK);
    same_state(&sa, &sb, -1);
    ck_assert_int_eq(fr_device_write(dev, &cmd), fr_device_write(ref, &cmd));
    same_output(dev, ref, cfg.n_strings);

    frtest_rng r = {77 + (uint64_t)w};
    int64_t counts[FR_SPIDAR_MAX_STRINGS];
    for (int step = 0; step <= 200; step++) {
        /* a smooth path through half the workspace (a hand does not teleport: the 6-DOF
         * pose solver is warm-started from the last pose) */
        double t = 2.0 * M_PI * step / 200.0;
        fr_vec3 lo = cfg.workspace_min, hi = cfg.workspace_max;
        fr_pose p = cfg.home;
        p.p = fr_v3(0.25 * (hi.x - lo.x) * sin(t), 0.25 * (hi.y - lo.y) * sin(2 * t),
                    0.25 * (hi.z - lo.z) * (1 - cos(t)));
        if (w) p.q = fr_q_axis_angle(fr_v3_normalize(fr_v3(1, sin(t), 0.5)), 0.2 * sin(t));
        counts_at(&cfg, p, counts);
        ck_assert_int_eq(fr_spidar_feed_counts(dev, counts), FR_OK);
        ck_assert_int_eq(fr_spidar_feed_counts(ref, counts), FR_OK);
        ck_assert_int_eq(fr_device_read(dev, &sa), FR_OK);
        ck_assert_int_eq(fr_device_read(ref, &sb), FR_OK);
        same_state(&sa, &sb, step);
        ck_assert_msg(sa.status == FR_DEVICE_OK, "step %d: status %d", step, sa.status);
        cmd.force =
            fr_v3(frtest_uniform(&r, -3, 3), frtest_uniform(&r, -3, 3), frtest_uniform(&r, -3, 3));
        cmd.torque = w ? fr_v3(frtest_uniform(&r, -0.05, 0.05), frtest_uniform(&r, -0.05, 0.05),
                               frtest_uniform(&r, -0.05, 0.05))
                       : fr_v3_zero();
        if (step == 100) cmd.force.x = NAN; /* both drop to the minimum */
        int ea = fr_device_write(dev, &cmd), eb = fr_device_write(ref, &cmd);
        ck_assert_int_eq(ea, eb);
        ck_assert_int_eq(ea, step == 100 ? FR_ERR_NUMERIC : FR_OK);
        same_output(dev, ref, cfg.n_strings);
        if (step == 200) { /* back at home */
            ck_assert_int_eq(dev->ops->calibrate(dev), ref->ops->calibrate(ref));
            fr_device_set_minimum(dev);
            fr_device_set_minimum(ref);
        }
    }
    fr_device_close(dev);
    fr_device_close(ref);
}
END_TEST

/* Without a board attached, a real open of an sh4 file fails at the `board` key, while the dry
 * run accepts it; usb.require_device: 0 opens and waits for the board. */
START_TEST(test_open_without_board)
{
    if (fr_spidar_driver.probe() != 0) return; /* a board is attached here: nothing to show */
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    fr_diag d;
    fr_device *dev = NULL;
    ASSERT_OK(fr_devreg_check(&reg, "spidar-4", NULL, 0, NULL, &d), d);
#ifdef FR_HAVE_LIBUSB
    ck_assert_int_eq(fr_devreg_open(&reg, "spidar-4", NULL, 0, &dev, NULL, &d), FR_ERR_NOTFOUND);
#else /* a build without USB (meson -Dusb=disabled) says so, at the same place */
    ck_assert_int_eq(fr_devreg_open(&reg, "spidar-4", NULL, 0, &dev, NULL, &d), FR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(d.msg, "-Dusb=disabled"));
#endif
    ck_assert_ptr_null(dev);
    ck_assert_str_eq(d.field, "board");
    ck_assert_str_eq(d.file, frtest_path(files[0]));
    /* the line of `board:` in the file */
    FILE *f = fopen(frtest_path(files[0]), "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    int ln = 0, board_line = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (strncmp(line, "board:", 6) == 0) board_line = ln;
    }
    fclose(f);
    ck_assert_int_eq(d.line, board_line);
    ck_assert_int_eq(d.col, 8);
#ifdef FR_HAVE_LIBUSB
    ck_assert_ptr_nonnull(strstr(d.msg, "0cec:0205"));
#endif
}
END_TEST

static Suite *spidar_cfg_suite(void)
{
    Suite *s = suite_create("spidar_cfg");
    TCase *tc = tcase_create("spidar_cfg");
    tcase_add_test(tc, test_shipped_files_reproduce_presets);
    tcase_add_test(tc, test_preset_selection);
    tcase_add_test(tc, test_every_key_reaches_the_config);
    tcase_add_test(tc, test_bad_overrides);
    tcase_add_test(tc, test_bad_files);
    tcase_add_loop_test(tc, test_board_none_matches_fr_spidar_open, 0, 2);
    tcase_add_test(tc, test_open_without_board);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(spidar_cfg_suite)
