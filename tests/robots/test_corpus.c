/* The URDF corpus (tests/robots/corpus, corpus.yaml): 14 robot descriptions from public
 * repositories load with exactly the warnings listed for them (each at its file:line:column), and
 * each, dropped on flat ground from its default pose, survives 5 s limp and 5 s held by a stiff
 * joint PD: no divergence, followers of <mimic> joints on their constraint, and the ground
 * penetration at rest below 5 mm. Step times and the deepest (impact) penetration are printed as
 * TAP comments (bench/robot/bench_corpus.c measures the step times properly). */
#include <stdio.h>
#include <string.h>

#include "corpus_drop.h"
#include "frtest.h"
#include "fureru/config.h"
#include "fureru/urdf.h"

#define SECONDS          5.0
#define REST_PENETRATION 0.005 /* m (the 5 mm) */

static fr_cfg_doc *manifest(void)
{
    fr_cfg_doc *doc;
    fr_diag d;
    int err = fr_cfg_load_file(frtest_path("tests/robots/corpus/corpus.yaml"), &doc, &d);
    ck_assert_msg(err == FR_OK, "%s:%d:%d %s", d.file, d.line, d.col, d.msg);
    return doc;
}

static const fr_cfg_node *robot_entry(fr_cfg_doc *doc, int i)
{
    return fr_cfg_node_item(fr_cfg_get(fr_cfg_root(doc), "robots"), i);
}

static int robot_count(fr_cfg_doc *doc)
{
    return fr_cfg_node_len(fr_cfg_get(fr_cfg_root(doc), "robots"));
}

static const char *field(const fr_cfg_node *r, const char *key)
{
    return fr_cfg_node_scalar(fr_cfg_get(r, key));
}

/* Every robot loads, with no error and exactly its listed warnings, in order. */
START_TEST(test_corpus_loads)
{
    fr_cfg_doc *doc = manifest();
    int n = robot_count(doc), total = 0;
    ck_assert_int_ge(n, 10);
    for (int i = 0; i < n; i++) {
        const fr_cfg_node *r = robot_entry(doc, i);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", frtest_path("tests/robots/corpus"), field(r, "urdf"));
        fr_diag_list all;
        fr_diag_list_init(&all);
        fr_urdf_opts o = fr_urdf_opts_default();
        o.diags = &all;
        fr_urdf *u = NULL;
        fr_diag d;
        int err = fr_urdf_load(path, &o, &u, &d);
        ck_assert_msg(err == FR_OK, "%s: %s:%d:%d %s", field(r, "name"), d.file, d.line, d.col,
                      d.msg);
        ck_assert_int_eq(all.nerrors, 0);
        const fr_cfg_node *want = fr_cfg_get(r, "warnings");
        int k = 0;
        for (int j = 0; j < all.n; j++) {
            const fr_diag *x = &all.items[j];
            if (x->severity != FR_DIAG_WARNING) continue;
            ck_assert_msg(k < fr_cfg_node_len(want), "%s: unexpected warning %d:%d %s",
                          field(r, "name"), x->line, x->col, x->msg);
            char loc[32];
            snprintf(loc, sizeof loc, "%d:%d", x->line, x->col);
            const char *exp = fr_cfg_node_scalar(fr_cfg_node_item(want, k));
            ck_assert_msg(!strcmp(loc, exp), "%s: warning %d at %s, expected %s (%s)",
                          field(r, "name"), k, loc, exp, x->msg);
            ck_assert_str_eq(x->file, path);
            k++;
        }
        ck_assert_msg(k == fr_cfg_node_len(want), "%s: %d warnings, expected %d", field(r, "name"),
                      k, fr_cfg_node_len(want));
        total += k;
        /* the tree builds: every movable joint moves mass, mimic joints resolve */
        fr_tree *t;
        ck_assert_int_eq(fr_urdf_build_tree(u, NULL, &t, NULL), FR_OK);
        printf("# %-9s %-18s %2d links (%2d merged), %2d DOF, %2d warnings\n", field(r, "name"),
               field(r, "class"), fr_urdf_link_count(u), fr_urdf_frame_count(u), fr_urdf_dof(u), k);
        fr_tree_destroy(t);
        fr_urdf_destroy(u);
        fr_diag_list_free(&all);
    }
    ck_assert_int_gt(total, 0);
    fr_cfg_free(doc);
}
END_TEST

static void drop(int i, bool pd)
{
    fr_cfg_doc *doc = manifest();
    const fr_cfg_node *r = robot_entry(doc, i);
    corpus_run run;
    ck_assert_int_eq(
        corpus_drop(frtest_path("tests/robots/corpus"), field(r, "urdf"), pd, SECONDS, &run),
        FR_OK);
    printf("# %-9s %-4s %6.1f us/step  peak penetration %5.2f mm at %.3f s, at rest %5.2f mm, "
           "max joint speed %6.1f, %d contacts at most%s\n",
           field(r, "name"), pd ? "pd" : "limp", run.cpu_per_step * 1e6, run.pen_max * 1e3,
           run.pen_max_at, run.pen_rest * 1e3, run.max_joint_speed, run.contacts_max,
           run.mimic ? "" : "");
    fflush(stdout);
    ck_assert_msg(run.err == FR_OK, "%s %s: diverged at t = %.4f s: %s %s = %g", field(r, "name"),
                  pd ? "pd" : "limp", run.fault.time, run.fault.what, run.fault.quantity,
                  run.fault.value);
    ck_assert_msg(run.seconds >= SECONDS - 1e-9, "%s: stopped at %g s", field(r, "name"),
                  run.seconds);
    ck_assert_msg(run.pen_rest < REST_PENETRATION, "%s %s: %.2f mm into the ground at rest",
                  field(r, "name"), pd ? "pd" : "limp", run.pen_rest * 1e3);
    /* followers stay on their constraint: the projection lands them to round-off */
    if (run.mimic)
        ck_assert_msg(run.mimic_err < 1e-9, "%s: mimic error %g (followers moved %g)",
                      field(r, "name"), run.mimic_err, run.mimic_travel);
    fr_cfg_free(doc);
}

START_TEST(test_corpus_limp_drop)
{
    drop(_i, false);
}
END_TEST

START_TEST(test_corpus_pd_hold)
{
    drop(_i, true);
}
END_TEST

static Suite *corpus_suite(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_corpus_loads);
    suite_add_tcase(s, tc);
    /* the manifest's size, read outside any test (errors show in test_corpus_loads) */
    fr_cfg_doc *doc = NULL;
    int n = 0;
    if (fr_cfg_load_file(frtest_path("tests/robots/corpus/corpus.yaml"), &doc, NULL) == FR_OK)
        n = robot_count(doc);
    fr_cfg_free(doc);
    TCase *run = tcase_create("drop");
    tcase_set_timeout(run, 120);
    tcase_add_loop_test(run, test_corpus_limp_drop, 0, n);
    tcase_add_loop_test(run, test_corpus_pd_hold, 0, n);
    suite_add_tcase(s, run);
    return s;
}

int main(void)
{
    return frtest_run(corpus_suite());
}
