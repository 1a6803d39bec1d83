/*
 * Where scenes, devices, robots and the udev rule are: the first of
 *   1. $FURERU_DATA_DIR, when set (the user's explicit choice);
 *   2. relative to the installed binary or library: BINDIR/../share/fureru or
 * LIBDIR/../share/fureru (the relative paths are compiled in, so an installed tree can be moved as
 * a whole);
 *   3. the source tree's config/ folder (a program run from its build directory);
 *   4. the configured DATADIR/fureru (a static library linked into a program elsewhere).
 * A folder counts when it has a devices/ or scenes/ subfolder. Start-up only.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fr_config.h"
#include "fureru/base.h"

static char g_dir[PATH_MAX];
static const char *g_origin = "none";
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_data_dir(const char *p)
{
    char sub[PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s/devices", p);
    if (is_dir(sub)) return 1;
    snprintf(sub, sizeof sub, "%s/scenes", p);
    return is_dir(sub);
}

/* dir of the file `path` (resolved) joined with rel; 1 when that is a data directory */
static int try_beside(const char *path, const char *rel, const char *origin)
{
    char real[PATH_MAX], cand[2 * PATH_MAX];
    if (!path || !realpath(path, real)) return 0;
    char *slash = strrchr(real, '/');
    if (!slash) return 0;
    *slash = 0;
    if (rel[0] == '/')
        snprintf(cand, sizeof cand, "%s", rel);
    else
        snprintf(cand, sizeof cand, "%s/%s", real, rel);
    char canon[PATH_MAX];
    if (!realpath(cand, canon) || !is_data_dir(canon)) return 0;
    snprintf(g_dir, sizeof g_dir, "%s", canon);
    g_origin = origin;
    return 1;
}

static int try_dir(const char *p, const char *origin)
{
    if (!p || !p[0] || !is_data_dir(p)) return 0;
    snprintf(g_dir, sizeof g_dir, "%s", p);
    g_origin = origin;
    return 1;
}

static void find(void)
{
    const char *env = getenv("FURERU_DATA_DIR");
    if (env && env[0]) { /* taken as given, even when it does not exist: the user asked for it */
        snprintf(g_dir, sizeof g_dir, "%s", env);
        g_origin = "FURERU_DATA_DIR";
        return;
    }
    Dl_info info;
    if (dladdr((void *)fr_data_dir, &info) && info.dli_fname && strstr(info.dli_fname, ".so") &&
        try_beside(info.dli_fname, FR_LIBDIR_TO_DATADIR, "installed (beside libfureru)"))
        return;
    if (try_beside("/proc/self/exe", FR_BINDIR_TO_DATADIR, "installed (beside the program)"))
        return;
    if (try_dir(FR_SOURCE_ROOT "/config", "source tree")) return;
    if (try_dir(FR_DATADIR, "configured data directory")) return;
    snprintf(g_dir, sizeof g_dir, "%s", FR_DATADIR); /* errors will name the expected place */
    g_origin = "not found";
}

const char *fr_data_dir(void)
{
    pthread_once(&g_once, find);
    return g_dir;
}

const char *fr_data_dir_origin(void)
{
    pthread_once(&g_once, find);
    return g_origin;
}
