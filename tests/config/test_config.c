/* src/config: positions, overrides and typed getters. */
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/config.h"

static fr_cfg_doc *load(const char *text)
{
    fr_cfg_doc *doc = NULL;
    fr_diag d;
    int err = fr_cfg_load_string(text, "t.yaml", &doc, &d);
    ck_assert_msg(err == FR_OK, "load failed: %s", d.msg);
    return doc;
}

START_TEST(test_getters_and_defaults)
{
    fr_cfg_doc *doc = load("world:\n  dt: 0.002\n  gravity: [0, 0, -9.8]\n  fast: yes\n");
    fr_diag d;
    fr_cfg_node *w = fr_cfg_get(fr_cfg_root(doc), "world");
    double dt, absent;
    fr_vec3 g;
    bool fast;
    ck_assert_int_eq(fr_cfg_double(w, "dt", 0.001, FR_CFG_POSITIVE, &dt, &d), FR_OK);
    ck_assert(dt == 0.002);
    ck_assert_int_eq(fr_cfg_double(w, "missing", 7.5, FR_CFG_ANY, &absent, &d), FR_OK);
    ck_assert(absent == 7.5);
    ck_assert_int_eq(fr_cfg_vec3(w, "gravity", fr_v3_zero(), &g, &d), FR_OK);
    ck_assert(g.z == -9.8 && g.x == 0);
    ck_assert_int_eq(fr_cfg_bool(w, "fast", false, &fast, &d), FR_OK);
    ck_assert(fast);
    const char *keys[] = {"dt", "gravity", "fast", NULL};
    ck_assert_int_eq(fr_cfg_check_unknown(w, keys, &d), FR_OK);
    fr_cfg_free(doc);
}
END_TEST

START_TEST(test_errors_have_positions)
{
    fr_cfg_doc *doc = load("world:\n  dt: -1\n  gravty: [0, 0, 1]\n  n: abc\n");
    fr_diag d;
    fr_cfg_node *w = fr_cfg_get(fr_cfg_root(doc), "world");
    double dt;
    ck_assert_int_eq(fr_cfg_double(w, "dt", 0.001, FR_CFG_POSITIVE, &dt, &d), FR_ERR_RANGE);
    ck_assert_int_eq(d.line, 2);
    ck_assert_int_eq(d.col, 7);
    ck_assert_str_eq(d.field, "world.dt");
    ck_assert_str_eq(d.file, "t.yaml");
    double n;
    ck_assert_int_eq(fr_cfg_double(w, "n", 1, FR_CFG_ANY, &n, &d), FR_ERR_PARSE);
    ck_assert_int_eq(d.line, 4);
    const char *keys[] = {"dt", "n", NULL};
    ck_assert_int_eq(fr_cfg_check_unknown(w, keys, &d), FR_ERR_PARSE);
    ck_assert_int_eq(d.line, 3);
    ck_assert_int_eq(d.col, 3);
    ck_assert_ptr_nonnull(strstr(d.msg, "gravty"));
    fr_cfg_free(doc);
}
END_TEST

START_TEST(test_syntax_error_and_duplicates)
{
    fr_cfg_doc *doc = NULL;
    fr_diag d;
    ck_assert_int_eq(fr_cfg_load_string("a: [1, 2\nb: 3\n", "x.yaml", &doc, &d), FR_ERR_PARSE);
    ck_assert_int_gt(d.line, 0);
    ck_assert_int_eq(fr_cfg_load_string("a: 1\na: 2\n", "x.yaml", &doc, &d), FR_ERR_PARSE);
    ck_assert_int_eq(d.line, 2);
    ck_assert_str_eq(d.field, "a");
    ck_assert_int_eq(fr_cfg_load_string("- 1\n- 2\n", "x.yaml", &doc, &d), FR_ERR_PARSE);
    ck_assert_int_eq(fr_cfg_load_file("/nonexistent/file.yaml", &doc, &d), FR_ERR_NOTFOUND);
}
END_TEST

START_TEST(test_nan_inf_rejected)
{
    fr_cfg_doc *doc = load("a: .nan\nb: .inf\nc: \"1.0\"\nd: 1e400\n");
    fr_diag d;
    double v;
    ck_assert_int_eq(fr_cfg_double(fr_cfg_root(doc), "a", 0, FR_CFG_ANY, &v, &d), FR_ERR_RANGE);
    ck_assert_int_eq(fr_cfg_double(fr_cfg_root(doc), "b", 0, FR_CFG_ANY, &v, &d), FR_ERR_RANGE);
    ck_assert_int_eq(fr_cfg_double(fr_cfg_root(doc), "c", 0, FR_CFG_ANY, &v, &d), FR_ERR_PARSE);
    ck_assert_int_eq(fr_cfg_double(fr_cfg_root(doc), "d", 0, FR_CFG_ANY, &v, &d), FR_ERR_RANGE);
    fr_cfg_free(doc);
}
END_TEST

START_TEST(test_set_overrides)
{
    fr_cfg_doc *doc =
        load("world:\n  dt: 0.001\nbodies:\n  - name: a\n    mass: 1\n  - name: b\n    mass: 2\n");
    fr_diag d;
    ck_assert_int_eq(fr_cfg_set(doc, "world.dt=0.005", &d), FR_OK);
    ck_assert_int_eq(fr_cfg_set(doc, "bodies.b.mass=3.5", &d), FR_OK);
    ck_assert_int_eq(fr_cfg_set(doc, "bodies.0.mass=4", &d), FR_OK);
    ck_assert_int_eq(fr_cfg_set(doc, "world.gravity=[0, 0, -1.62]", &d), FR_OK);
    ck_assert_int_eq(fr_cfg_set(doc, "bodies.zz.mass=4", &d), FR_ERR_NOTFOUND);
    ck_assert_int_eq(fr_cfg_set(doc, "world.dt.x=4", &d), FR_ERR_INVAL);
    ck_assert_int_eq(fr_cfg_set(doc, "nonsense", &d), FR_ERR_INVAL);
    fr_cfg_node *root = fr_cfg_root(doc), *w = fr_cfg_get(root, "world");
    double v;
    fr_vec3 g;
    ck_assert_int_eq(fr_cfg_double(w, "dt", 0, FR_CFG_ANY, &v, &d), FR_OK);
    ck_assert(v == 0.005);
    ck_assert_int_eq(fr_cfg_vec3(w, "gravity", fr_v3_zero(), &g, &d), FR_OK);
    ck_assert(g.z == -1.62);
    fr_cfg_node *bodies = fr_cfg_get(root, "bodies");
    ck_assert_int_eq(fr_cfg_node_len(bodies), 2);
    ck_assert_int_eq(fr_cfg_double(fr_cfg_node_item(bodies, 1), "mass", 0, FR_CFG_ANY, &v, &d),
                     FR_OK);
    ck_assert(v == 3.5);
    ck_assert_str_eq(fr_cfg_node_path(fr_cfg_node_item(bodies, 1)), "bodies[b]");
    ck_assert_int_eq(fr_cfg_double(fr_cfg_node_item(bodies, 0), "mass", 0, FR_CFG_ANY, &v, &d),
                     FR_OK);
    ck_assert(v == 4);
    /* a bad override value is reported against --set and its path */
    ck_assert_int_eq(fr_cfg_set(doc, "world.dt=abc", &d), FR_OK);
    ck_assert_int_eq(fr_cfg_double(w, "dt", 0, FR_CFG_ANY, &v, &d), FR_ERR_PARSE);
    ck_assert_str_eq(d.file, "--set");
    ck_assert_str_eq(d.field, "world.dt");
    fr_cfg_free(doc);
}
END_TEST

START_TEST(test_enum_int_string)
{
    fr_cfg_doc *doc = load("kind: box\nn: 12\nname: hello\nbad: 3.5\n");
    fr_diag d;
    const char *kinds[] = {"sphere", "box", NULL};
    int k;
    long n;
    char buf[8];
    fr_cfg_node *r = fr_cfg_root(doc);
    ck_assert_int_eq(fr_cfg_enum(r, "kind", kinds, 0, &k, &d), FR_OK);
    ck_assert_int_eq(k, 1);
    ck_assert_int_eq(fr_cfg_int(r, "n", 0, 0, 100, &n, &d), FR_OK);
    ck_assert_int_eq(n, 12);
    ck_assert_int_eq(fr_cfg_int(r, "n", 0, 0, 10, &n, &d), FR_ERR_RANGE);
    ck_assert_int_eq(fr_cfg_int(r, "bad", 0, 0, 10, &n, &d), FR_ERR_PARSE);
    ck_assert_int_eq(fr_cfg_string(r, "name", "", buf, sizeof buf, &d), FR_OK);
    ck_assert_str_eq(buf, "hello");
    ck_assert_int_eq(fr_cfg_string(r, "name", "", buf, 4, &d), FR_ERR_RANGE);
    fr_cfg_free(doc);
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_getters_and_defaults);
    tcase_add_test(tc, test_errors_have_positions);
    tcase_add_test(tc, test_syntax_error_and_duplicates);
    tcase_add_test(tc, test_nan_inf_rejected);
    tcase_add_test(tc, test_set_overrides);
    tcase_add_test(tc, test_enum_int_string);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(config_suite)
