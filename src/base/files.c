/* Folders for output files (files.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "fureru/base.h"

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

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISDIR(m)  ? "a folder"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* Open without blocking (a FIFO with no writer would block open()), then check what it is. */
static int open_input(const char *path, size_t limit, size_t *size, int *err, char *msg, size_t msz)
{
    *err = FR_OK;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        snprintf(msg, msz, "cannot open: %s", strerror(e));
        *err = e == ENOENT ? FR_ERR_NOTFOUND : e == EACCES ? FR_ERR_PERM : FR_ERR_IO;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(msg, msz, "cannot stat: %s", strerror(errno));
        close(fd);
        *err = FR_ERR_IO;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(msg, msz, "%s, not a regular file: refused", kind_of(st.st_mode));
        close(fd);
        *err = FR_ERR_PARSE;
        return -1;
    }
    if ((unsigned long long)st.st_size > (unsigned long long)limit) {
        snprintf(msg, msz, "%lld bytes: larger than the limit of %zu MiB for this kind of file",
                 (long long)st.st_size, limit >> 20);
        close(fd);
        *err = FR_ERR_RANGE;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *size = (size_t)st.st_size;
    return fd;
}

int fri_check_input(const char *path, size_t limit, char *msg, size_t msz)
{
    size_t size;
    int err, fd = open_input(path, limit, &size, &err, msg, msz);
    if (fd < 0) return err;
    close(fd);
    return FR_OK;
}

int fri_read_input(const char *path, size_t limit, char **out, size_t *len, char *msg, size_t msz)
{
    *out = NULL;
    *len = 0;
    size_t size;
    int err, fd = open_input(path, limit, &size, &err, msg, msz);
    if (fd < 0) return err;
    /* the size is read again as it comes: a file that grows while read stops at the limit */
    size_t cap = size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(msg, msz, "out of memory reading %zu bytes", size);
        close(fd);
        return FR_ERR_NOMEM;
    }
    for (;;) {
        if (n + 1 == cap) {
            if (cap > limit) {
                free(buf);
                close(fd);
                snprintf(msg, msz, "grew beyond the limit of %zu MiB while read", limit >> 20);
                return FR_ERR_RANGE;
            }
            size_t nc = cap * 2 > limit + 2 ? limit + 2 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                close(fd);
                snprintf(msg, msz, "out of memory reading %zu bytes", nc);
                return FR_ERR_NOMEM;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(msg, msz, "read error: %s", strerror(errno));
            free(buf);
            close(fd);
            return FR_ERR_IO;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return FR_OK;
}
