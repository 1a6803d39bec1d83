/* Runs a fuzz harness over files and folders of inputs (the committed corpus) without libFuzzer:
 * the regression test of the corpus in the ordinary build and under ASan/UBSan. A crash, a
 * sanitizer report or a leak fails the test. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        unsigned char *nb = realloc(buf, cap *= 2);
        if (!nb) free(buf);
        buf = nb;
    }
    fclose(f);
    if (!buf) return 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int files = 0, fail = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            fail |= run_file(argv[i]);
            files++;
            continue;
        }
        DIR *dir = opendir(argv[i]);
        if (!dir) return 1;
        char **names = NULL;
        int n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (e->d_name[0] == '.') continue;
            if (n == cap)
                names = realloc(names, sizeof *names * (size_t)(cap = cap ? 2 * cap : 64));
            names[n++] = strdup(e->d_name);
        }
        closedir(dir);
        qsort(names, (size_t)n, sizeof *names, cmp);
        for (int k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
            fail |= run_file(path);
            files++;
            free(names[k]);
        }
        free(names);
    }
    printf("replay: %d inputs, no crash\n", files);
    return fail;
}
