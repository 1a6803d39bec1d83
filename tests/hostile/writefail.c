/* LD_PRELOAD shim for the log-integrity tests: write() to a file whose path ends with
 * $FR_WRITE_MATCH fails with ENOSPC once $FR_WRITE_LIMIT bytes have gone to it (the write that
 * crosses the limit is partial, as on a full disk), and sleeps $FR_WRITE_SLEEP_MS per call (a
 * stalled disk). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static long long sent;

static int matches(int fd, const char *suffix)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    size_t a = strlen(path), b = strlen(suffix);
    return a >= b && !strcmp(path + a - b, suffix);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    if (!real_write) real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *m = getenv("FR_WRITE_MATCH");
    if (!m || fd < 3 || !matches(fd, m)) return real_write(fd, buf, len);
    const char *sl = getenv("FR_WRITE_SLEEP_MS");
    if (sl) {
        long ms = atol(sl);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    const char *lim = getenv("FR_WRITE_LIMIT");
    if (lim) {
        long long limit = atoll(lim);
        if (sent >= limit) {
            errno = ENOSPC;
            return -1;
        }
        if (sent + (long long)len > limit) len = (size_t)(limit - sent);
    }
    ssize_t r = real_write(fd, buf, len);
    if (r > 0) sent += r;
    return r;
}
