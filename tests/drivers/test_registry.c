/* drivers/device: spec resolution, device files, --set, the safety section, listing, a driver
 * registered from outside, and every malformed file in tests/drivers/bad/registry-* rejected at
 * the file, line, column and field its first line names ("# expect: L:C FIELD [@FILE]"). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/devices.h"
#include "fureru/virtual.h"

/* ------------------------------------------------------------------ a fake driver */

typedef struct fake_state {
    int opens, dry_runs;
    double gain;
    char base_dir[512];
} fake_state;
static fake_state g_fake; /* test-only: the entry's open function has no user pointer */

static void fake_close(fr_device *dev)
{
    free(dev);
}
static int fake_read(fr_device *d, fr_device_state *s)
{
    (void)d;
    memset(s, 0, sizeof *s);
    return FR_OK;
}
static int fake_write(fr_device *d, const fr_device_cmd *c)
{
    (void)d;
    (void)c;
    return FR_OK;
}
static void fake_min(fr_device *d)
{
    (void)d;
}
static const fr_device_ops fake_ops = {fake_read, fake_write, fake_min, NULL, fake_close};

static int fake_open(const fr_cfg_node *root, const fr_driver_ctx *ctx, fr_device **out, fr_diag *d)
{
    static const char *const keys[] = {"gain", NULL};
    int err = fr_cfg_double(root, "gain", 1.0, FR_CFG_POSITIVE, &g_fake.gain, d);
    if (!err) err = fr_devreg_check_unknown(root, keys, d);
    if (err) return err;
    snprintf(g_fake.base_dir, sizeof g_fake.base_dir, "%s", ctx->base_dir);
    if (ctx->dry_run) {
        g_fake.dry_runs++;
        return FR_OK;
    }
    fr_device *dev = calloc(1, sizeof *dev);
    dev->ops = &fake_ops;
    snprintf(dev->desc.driver, sizeof dev->desc.driver, "fake");
    snprintf(dev->desc.name, sizeof dev->desc.name, "fake0");
    dev->desc.max_force = 3;
    dev->desc.dof_forced = dev->desc.dof_sensed = 3;
    g_fake.opens++;
    *out = dev;
    return FR_OK;
}

/* A careless driver: reads nothing and checks nothing (the registry's safety net must catch
 * unknown keys). */
static int careless_open(const fr_cfg_node *root, const fr_driver_ctx *ctx, fr_device **out,
                         fr_diag *d)
{
    (void)root;
    (void)d;
    if (!ctx->dry_run) {
        fr_device *dev = calloc(1, sizeof *dev);
        dev->ops = &fake_ops;
        *out = dev;
    }
    return FR_OK;
}

static int probe_yes(void)
{
    return 1;
}
static int probe_no(void)
{
    return 0;
}

static const fr_driver_entry fake_entry = {"fake", "a test driver", fake_open, probe_no};
static const fr_driver_entry careless_entry = {"careless", "forgets checks", careless_open, NULL};

static fr_devreg make_reg(const char *config_dir)
{
    static const fr_driver_entry *const drivers[] = {&fr_virtual_driver, &fake_entry,
                                                     &careless_entry};
    return (fr_devreg){drivers, 3, config_dir};
}

static char *temp_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/fureru-reg-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    rmdir(dir);
}

/* Field by field: the structs have padding, so memcmp would compare garbage. */
static bool v3eq(fr_vec3 a, fr_vec3 b)
{
    return a.x == b.x && a.y == b.y && a.z == b.z;
}
static void check_params_equal(const fr_virtual_params *a, const fr_virtual_params *b)
{
    const fr_device_desc *x = &a->desc, *y = &b->desc;
    ck_assert(a->dof == b->dof && a->dt == b->dt);
    ck_assert(x->max_force == y->max_force && x->max_torque == y->max_torque &&
              x->max_stiffness == y->max_stiffness && x->max_damping == y->max_damping &&
              x->max_rot_stiffness == y->max_rot_stiffness &&
              x->max_rot_damping == y->max_rot_damping &&
              v3eq(x->workspace_min, y->workspace_min) && v3eq(x->workspace_max, y->workspace_max));
    ck_assert(a->hand.mass == b->hand.mass && a->hand.damping == b->hand.damping &&
              a->hand.stiffness == b->hand.stiffness && a->hand.inertia == b->hand.inertia &&
              a->hand.rot_damping == b->hand.rot_damping &&
              a->hand.rot_stiffness == b->hand.rot_stiffness &&
              a->hand.has_start == b->hand.has_start);
    ck_assert(a->encoder.resolution == b->encoder.resolution &&
              a->encoder.latency == b->encoder.latency &&
              a->encoder.velocity == b->encoder.velocity &&
              a->encoder.velocity_cutoff == b->encoder.velocity_cutoff);
    const struct fr_vtraj_params *s = &a->traj, *t = &b->traj;
    ck_assert(s->type == t->type && v3eq(s->point, t->point) && v3eq(s->from, t->from) &&
              v3eq(s->to, t->to) && s->speed == t->speed && v3eq(s->center, t->center) &&
              s->radius == t->radius && s->plane == t->plane && s->period == t->period &&
              v3eq(s->start, t->start) && v3eq(s->direction, t->direction) &&
              s->depth == t->depth && strcmp(s->file, t->file) == 0 && s->loop == t->loop &&
              v3eq(s->offset, t->offset) && s->orientation.w == t->orientation.w &&
              s->orientation.x == t->orientation.x && s->orientation.y == t->orientation.y &&
              s->orientation.z == t->orientation.z);
    ck_assert(a->record.capacity == b->record.capacity &&
              strcmp(a->record.csv, b->record.csv) == 0);
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_open_by_name_defaults)
{
    fr_devreg reg = make_reg(NULL); /* no device files: built-in defaults */
    fr_device *dev = NULL;
    fr_diag d;
    fr_safety_params sp;
    ck_assert_int_eq(fr_devreg_open(&reg, "virtual", NULL, 0, &dev, &sp, &d), FR_OK);
    ck_assert(fr_virtual_is(dev));
    ck_assert_str_eq(dev->desc.driver, "virtual");
    fr_virtual_params got, def;
    fr_virtual_get_params(dev, &got);
    fr_virtual_params_default(&def);
    check_params_equal(&got, &def);
    fr_safety_params sdef;
    fr_safety_params_default(&sdef);
    ck_assert(sp.max_force == sdef.max_force && sp.max_torque == sdef.max_torque &&
              sp.force_rate == sdef.force_rate && sp.torque_rate == sdef.torque_rate &&
              sp.engage_force == sdef.engage_force && sp.engage_torque == sdef.engage_torque &&
              sp.engage_ticks == sdef.engage_ticks && sp.ramp_time == sdef.ramp_time &&
              sp.watchdog_timeout == sdef.watchdog_timeout);
    fr_device_close(dev);
}
END_TEST

/* config/devices/virtual.yaml documents the built-in defaults: they must agree. */
START_TEST(test_virtual_yaml_is_the_default)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    fr_device *dev = NULL;
    fr_diag d;
    int err = fr_devreg_open(&reg, "virtual", NULL, 0, &dev, NULL, &d);
    ck_assert_msg(err == FR_OK, "%s:%d:%d %s: %s", d.file, d.line, d.col, d.field, d.msg);
    fr_virtual_params got, def;
    fr_virtual_get_params(dev, &got);
    fr_virtual_params_default(&def);
    check_params_equal(&got, &def);
    ck_assert_str_eq(dev->desc.name, "virtual");
    fr_device_close(dev);
}
END_TEST

/* Every shipped virtual*.yaml opens, and the recorded one finds its csv next to it. */
START_TEST(test_shipped_files_open)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    const char *specs[] = {"virtual-circle", "virtual-line", "virtual-hold", "virtual-recorded",
                           frtest_path("config/devices/virtual-circle.yaml")};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        fr_device *dev = NULL;
        fr_diag d;
        int err = fr_devreg_open(&reg, specs[i], NULL, 0, &dev, NULL, &d);
        ck_assert_msg(err == FR_OK, "%s: %s:%d:%d %s: %s", specs[i], d.file, d.line, d.col, d.field,
                      d.msg);
        fr_virtual_params p;
        fr_virtual_get_params(dev, &p);
        if (i == 0 || i == 4) ck_assert(p.traj.type == FR_VTRAJ_CIRCLE && p.traj.radius == 0.02);
        if (i == 2) ck_assert_int_eq(dev->desc.dof_forced, 6);
        if (i == 3) {
            ck_assert_int_eq(p.traj.type, FR_VTRAJ_CSV);
            fr_pose pose;
            fr_vec3 v;
            fr_virtual_target(dev, 1.0, &pose, &v); /* x = 0.02 sin(π/2) at t = 1 s */
            ck_assert(fabs(pose.p.x - 0.02) < 1e-9);
        }
        fr_device_close(dev);
    }
}
END_TEST

START_TEST(test_set_overrides)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    fr_device *dev = NULL;
    fr_diag d;
    const char *sets[] = {"hand.mass=0.3", "trajectory.depth=0.01", "trajectory.start=[0, 0, 0.05]",
                          "safety.max_force=4", "name=bench-hand"};
    fr_safety_params sp;
    ck_assert_int_eq(fr_devreg_open(&reg, "virtual", sets, 5, &dev, &sp, &d), FR_OK);
    fr_virtual_params p;
    fr_virtual_get_params(dev, &p);
    ck_assert(p.hand.mass == 0.3 && p.traj.depth == 0.01 && p.traj.start.z == 0.05);
    ck_assert(sp.max_force == 4.0);
    ck_assert_str_eq(dev->desc.name, "bench-hand");
    /* the safety chain takes the file's cap and the device's limits */
    fr_safety s;
    ck_assert_int_eq(fr_safety_init(&s, &dev->desc, &sp, p.dt), FR_OK);
    ck_assert(s.cap_force == 4.0 && s.cap_torque == 0.0);
    fr_device_close(dev);
    /* by driver name only (no file), with overrides */
    fr_devreg bare = make_reg(NULL);
    ck_assert_int_eq(fr_devreg_open(&bare, "virtual", sets, 2, &dev, NULL, &d), FR_OK);
    fr_virtual_get_params(dev, &p);
    ck_assert(p.hand.mass == 0.3);
    fr_device_close(dev);
    /* switching the type leaves the file's poke keys unknown to a hold: an error, located */
    const char *other[] = {"trajectory.type=hold"};
    ck_assert_int_eq(fr_devreg_open(&reg, "virtual", other, 1, &dev, NULL, &d), FR_ERR_PARSE);
    ck_assert_str_eq(d.field, "trajectory.start");
    /* a bad override names its path */
    const char *bad[] = {"hand.mass=-2"};
    ck_assert_int_eq(fr_devreg_open(&reg, "virtual", bad, 1, &dev, NULL, &d), FR_ERR_RANGE);
    ck_assert_str_eq(d.field, "hand.mass");
    ck_assert_ptr_null(dev);
}
END_TEST

START_TEST(test_unknown_spec)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    fr_device *dev = NULL;
    fr_diag d;
    ck_assert_int_eq(fr_devreg_open(&reg, "phantom", NULL, 0, &dev, NULL, &d), FR_ERR_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(d.msg, "phantom"));
    ck_assert_ptr_nonnull(strstr(d.msg, "virtual"));
    ck_assert_int_eq(fr_devreg_open(&reg, "/nonexistent/dev.yaml", NULL, 0, &dev, NULL, &d),
                     FR_ERR_NOTFOUND);
}
END_TEST

/* A driver registered from outside: the registry hands it the root, base_dir and dry_run. */
START_TEST(test_external_driver)
{
    char *dir = temp_dir();
    put(dir, "fake-a.yaml",
        "driver: fake\ndescription: \"the fake one\"\ngain: 2.5\nsafety: {ramp_time: 0.5}\n");
    put(dir, "fake-typo.yaml", "driver: fake\ngian: 2.5\n");
    put(dir, "careless.yaml", "driver: careless\nanything: 1\n");
    put(dir, "broken.yaml", "driver: [\n");
    fr_devreg reg = make_reg(dir);
    fr_device *dev = NULL;
    fr_diag d;
    fr_safety_params sp;
    memset(&g_fake, 0, sizeof g_fake);
    ck_assert_int_eq(fr_devreg_check(&reg, "fake-a", NULL, 0, &sp, &d), FR_OK);
    ck_assert_int_eq(g_fake.dry_runs, 1);
    ck_assert_int_eq(g_fake.opens, 0);
    ck_assert(sp.ramp_time == 0.5);
    ck_assert_int_eq(fr_devreg_open(&reg, "fake-a", NULL, 0, &dev, &sp, &d), FR_OK);
    ck_assert_int_eq(g_fake.opens, 1);
    ck_assert(g_fake.gain == 2.5);
    ck_assert_str_eq(g_fake.base_dir, dir);
    ck_assert_str_eq(dev->desc.driver, "fake");
    fr_device_close(dev);
    /* the driver's own unknown-key check lists common and driver keys */
    ck_assert_int_eq(fr_devreg_open(&reg, "fake-typo", NULL, 0, &dev, NULL, &d), FR_ERR_PARSE);
    ck_assert_str_eq(d.field, "gian");
    ck_assert_int_eq(d.line, 2);
    ck_assert_ptr_nonnull(strstr(d.msg, "gain"));
    ck_assert_ptr_nonnull(strstr(d.msg, "safety"));
    /* the registry's safety net */
    ck_assert_int_eq(fr_devreg_open(&reg, "careless", NULL, 0, &dev, NULL, &d), FR_ERR_PARSE);
    ck_assert_str_eq(d.field, "anything");
    ck_assert_ptr_null(dev);

    /* listing */
    fr_devreg_file files[8];
    int n = 0;
    ck_assert_int_eq(fr_devreg_list_files(&reg, files, 8, &n), FR_OK);
    ck_assert_int_eq(n, 4);
    ck_assert_str_eq(files[0].name, "broken");
    ck_assert_int_ne(files[0].err, FR_OK);
    ck_assert_str_eq(files[2].name, "fake-a");
    ck_assert_str_eq(files[2].driver, "fake");
    ck_assert_str_eq(files[2].description, "the fake one");
    ck_assert(files[2].known);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    fr_devreg_print(&reg, mem);
    fclose(mem);
    ck_assert_ptr_nonnull(strstr(buf, "virtual"));
    ck_assert_ptr_nonnull(strstr(buf, "fake-a"));
    ck_assert_ptr_nonnull(strstr(buf, "the fake one"));
    ck_assert_ptr_nonnull(strstr(buf, "[no hardware]"));
    free(buf);
    rm_dir(dir);

    /* default spec: hardware that says it is attached wins, else virtual */
    ck_assert_str_eq(fr_devreg_default_spec(&reg), "virtual");
    static const fr_driver_entry hw = {"hw", "attached", fake_open, probe_yes};
    static const fr_driver_entry *const with_hw[] = {&fr_virtual_driver, &hw};
    fr_devreg reg2 = {with_hw, 2, NULL};
    ck_assert_str_eq(fr_devreg_default_spec(&reg2), "hw");
}
END_TEST

START_TEST(test_shipped_list)
{
    fr_devreg reg = make_reg(frtest_path("config/devices"));
    fr_devreg_file files[64];
    int n = 0;
    ck_assert_int_eq(fr_devreg_list_files(&reg, files, 64, &n), FR_OK);
    bool found = false;
    for (int i = 0; i < n && i < 64; i++)
        if (strcmp(files[i].name, "virtual") == 0) {
            found = true;
            ck_assert_str_eq(files[i].driver, "virtual");
            ck_assert(files[i].known && files[i].description[0]);
        }
    ck_assert(found);
}
END_TEST

/* An embedded device section (as a scene's `device:`) and the safety-section parser. */
START_TEST(test_open_node_and_safety)
{
    fr_cfg_doc *doc = NULL;
    fr_diag d;
    ck_assert_int_eq(fr_cfg_load_string("device:\n  driver: virtual\n  hand: {mass: 0.25}\n"
                                        "  safety: {max_force: 6, engage_ticks: 5, "
                                        "watchdog_timeout: 0.005}\n",
                                        "scene.yaml", &doc, &d),
                     FR_OK);
    fr_devreg reg = make_reg(NULL);
    fr_device *dev = NULL;
    fr_safety_params sp;
    ck_assert_int_eq(fr_devreg_open_node(&reg, fr_cfg_get(fr_cfg_root(doc), "device"), "scene.yaml",
                                         ".", false, &dev, &sp, &d),
                     FR_OK);
    fr_virtual_params p;
    fr_virtual_get_params(dev, &p);
    ck_assert(p.hand.mass == 0.25);
    ck_assert(sp.max_force == 6 && sp.engage_ticks == 5 && sp.watchdog_timeout == 0.005);
    fr_device_close(dev);
    fr_cfg_free(doc);
}
END_TEST

static int check_device(const char *path, fr_diag *d, void *ctx)
{
    return fr_devreg_check((const fr_devreg *)ctx, path, NULL, 0, NULL, d);
}

START_TEST(test_bad_files)
{
    fr_devreg reg = make_reg(NULL);
    int n = frtest_check_bad_files(frtest_path("tests/drivers/bad"), "registry-", ".yaml",
                                   check_device, &reg);
    ck_assert_int_ge(n, 6);
}
END_TEST

static Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("registry");
    tcase_add_test(tc, test_open_by_name_defaults);
    tcase_add_test(tc, test_virtual_yaml_is_the_default);
    tcase_add_test(tc, test_shipped_files_open);
    tcase_add_test(tc, test_set_overrides);
    tcase_add_test(tc, test_unknown_spec);
    tcase_add_test(tc, test_external_driver);
    tcase_add_test(tc, test_shipped_list);
    tcase_add_test(tc, test_open_node_and_safety);
    tcase_add_test(tc, test_bad_files);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(registry_suite)
