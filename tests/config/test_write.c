/* src/config/write.c: fr_cfg_write gives YAML that fr_cfg_load reads back to the same tree (every
 * shipped scene and device file, and scalars that need quoting), so a log's sidecar holds the
 * scene exactly as it ran. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/config.h"

static void same_tree(const fr_cfg_node *a, const fr_cfg_node *b)
{
    ck_assert_int_eq(fr_cfg_node_kind(a), fr_cfg_node_kind(b));
    const char *path = fr_cfg_node_path(a);
    if (fr_cfg_node_kind(a) == FR_CFG_SCALAR) {
        ck_assert_msg(!strcmp(fr_cfg_node_scalar(a), fr_cfg_node_scalar(b)), "%s: '%s' vs '%s'",
                      path, fr_cfg_node_scalar(a), fr_cfg_node_scalar(b));
        ck_assert_msg(fr_cfg_node_quoted(a) == fr_cfg_node_quoted(b), "%s: quoting", path);
        return;
    }
    ck_assert_int_eq(fr_cfg_node_len(a), fr_cfg_node_len(b));
    for (int i = 0; i < fr_cfg_node_len(a); i++) {
        if (fr_cfg_node_kind(a) == FR_CFG_MAP)
            ck_assert_str_eq(fr_cfg_node_key(a, i), fr_cfg_node_key(b, i));
        same_tree(fr_cfg_node_item(a, i), fr_cfg_node_item(b, i));
    }
}

static char *write_text(fr_cfg_doc *doc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fr_cfg_write(fr_cfg_root(doc), m, 0);
    fclose(m);
    return text;
}

/* load, write, read back: the same tree, and writing that gives the same text */
static void round_trip(fr_cfg_doc *doc, const char *what)
{
    char *t1 = write_text(doc);
    fr_cfg_doc *back;
    fr_diag d;
    int err = fr_cfg_load_string(t1, what, &back, &d);
    ck_assert_msg(err == FR_OK, "%s written as:\n%s\ndoes not load: %d:%d %s", what, t1, d.line,
                  d.col, d.msg);
    same_tree(fr_cfg_root(doc), fr_cfg_root(back));
    char *t2 = write_text(back);
    ck_assert_str_eq(t1, t2);
    free(t1);
    free(t2);
    fr_cfg_free(back);
}

static int round_trip_dir(const char *rel)
{
    DIR *dir = opendir(frtest_path(rel));
    ck_assert_ptr_nonnull(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", rel, e->d_name);
        fr_cfg_doc *doc;
        fr_diag d;
        ck_assert_int_eq(fr_cfg_load_file(frtest_path(p), &doc, &d), FR_OK);
        round_trip(doc, p);
        fr_cfg_free(doc);
        n++;
    }
    closedir(dir);
    return n;
}

START_TEST(test_shipped_files_round_trip)
{
    ck_assert_int_ge(round_trip_dir("config/scenes"), 9);
    ck_assert_int_ge(round_trip_dir("config/devices"), 6);
}
END_TEST

START_TEST(test_scalars_that_need_quotes)
{
    static const char *text =
        "plain: 0.25\n"
        "negative: -9.81\n"
        "words: a block on a table\n"
        "colon: \"key: value\"\n"
        "hash: \"not # a comment\"\n"
        "dash: \"- x\"\n"
        "quoted_number: \"1.5\"\n"
        "quoted_null: \"null\"\n"
        "empty: \"\"\n"
        "null_value: null\n"
        "newline: \"two\\nlines\"\n"
        "quote: 'it''s \"here\"'\n"
        "unicode: μ_s ≥ μ_k\n"
        "brackets: \"[0, 1]\"\n"
        "list: [1, \"two, three\", [4, 5], {a: b}]\n"
        "nested:\n  - name: x\n    shapes:\n      - {type: box, size: [1, 2, 3]}\n  - []\n"
        "empty_map: {}\n";
    fr_cfg_doc *doc;
    fr_diag d;
    ck_assert_int_eq(fr_cfg_load_string(text, "<test>", &doc, &d), FR_OK);
    round_trip(doc, "<test>");
    fr_cfg_free(doc);
}
END_TEST

static Suite *write_suite(void)
{
    Suite *s = suite_create("config_write");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_shipped_files_round_trip);
    tcase_add_test(tc, test_scalars_that_need_quotes);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(write_suite)
