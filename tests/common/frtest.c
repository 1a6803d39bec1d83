#include "frtest.h"

#include <stdlib.h>
#include <string.h>

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
