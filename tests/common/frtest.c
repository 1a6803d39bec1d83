#include "frtest.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/config.h"

int frtest_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

const char *frtest_path(const char *rel)
{
    static char buf[8][4096];
    static int next;
    const char *root = getenv("FR_SOURCE_ROOT");
    char *b = buf[next];
    next = (next + 1) % 8;
    snprintf(b, sizeof buf[0], "%s/%s", root ? root : ".", rel);
    return b;
}

int frtest_check_bad_files(const char *dir, const char *prefix, const char *suffix,
                           frtest_loader load, void *ctx)
{
    DIR *dp = opendir(dir);
    ck_assert_msg(dp != NULL, "cannot open %s", dir);
    struct dirent *e;
    int checked = 0;
    size_t lp = strlen(prefix), ls = strlen(suffix);
    while ((e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (n < lp + ls || strncmp(e->d_name, prefix, lp) || strcmp(e->d_name + n - ls, suffix))
            continue;
        char path[4096], first[1024] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        ck_assert_msg(fgets(first, sizeof first, f) != NULL, "%s: empty", path);
        fclose(f);
        const char *ex = strstr(first, "expect:");
        int line = 0, col = 0;
        char field[256] = "", file[256] = "";
        ck_assert_msg(ex && sscanf(ex, "expect: %d:%d %255s %255s", &line, &col, field, file) >= 3,
                      "%s: no 'expect: LINE:COL FIELD' on the first line", path);
        fr_diag d;
        memset(&d, 0, sizeof d);
        int err = load(path, &d, ctx);
        ck_assert_msg(err < 0, "%s: accepted", e->d_name);
        ck_assert_msg(d.line == line && d.col == col, "%s: error at %d:%d, expected %d:%d (%s)",
                      e->d_name, d.line, d.col, line, col, d.msg);
        if (strcmp(field, "-"))
            ck_assert_msg(!strcmp(d.field, field), "%s: field '%s', expected '%s' (%s)", e->d_name,
                          d.field, field, d.msg);
        if (!strcmp(file, "-->")) file[0] = 0; /* the end of an XML comment, not a file */
        const char *want = file[0] == '@' ? file + 1 : file;
        if (want[0]) {
            size_t wl = strlen(want), dl = strlen(d.file);
            ck_assert_msg(dl >= wl && !strcmp(d.file + dl - wl, want),
                          "%s: error in '%s', expected '%s'", e->d_name, d.file, want);
        } else {
            ck_assert_msg(!strcmp(d.file, path), "%s: error in '%s'", e->d_name, d.file);
        }
        ck_assert_msg(strlen(d.msg) > 5, "%s: no message", e->d_name);
        checked++;
    }
    closedir(dp);
    return checked;
}

int frtest_sawtooth(const double *f, long n, long start, double swing, long *peaks, double *troughs,
                    int max)
{
    int np = 0;
    long i = start > 0 ? start : 1;
    while (i < n - 1 && np < max) {
        if (f[i] >= f[i - 1] && f[i] > f[i + 1]) {
            double lo = f[i];
            long j = i;
            while (j < n - 1 && f[j + 1] <= f[j] + 1e-9) lo = f[++j];
            if (f[i] - lo > 0.5 * swing) {
                peaks[np] = i;
                troughs[np++] = lo;
                i = j;
            }
        }
        i++;
    }
    return np;
}
