/* Folders for output files (files.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"

int fri_make_parent_dirs(const char *path)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return ENAMETOOLONG;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = 0;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) return errno;
        *p = '/';
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return errno;
    struct stat st;
    if (stat(dir, &st) != 0) return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

void fri_put_shell_word(FILE *f, const char *w)
{
    bool safe = w[0] != 0;
    for (const char *p = w; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@%", *p))
            safe = false;
    if (safe) {
        fputs(w, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}
