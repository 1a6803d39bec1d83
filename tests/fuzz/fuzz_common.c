/* Scratch files for the fuzz harnesses (fuzz_common.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

const char *fr_fuzz_dir(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fureru-fuzz-%ld", t && t[0] ? t : "/tmp", (long)getpid());
        mkdir(dir, 0700);
    }
    return dir;
}

int fr_fuzz_write(const char *name, const uint8_t *data, size_t size, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", fr_fuzz_dir(), name);
    FILE *f = fopen(buf, "wb");
    if (!f) return -1;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && put == size ? 0 : -1;
}
