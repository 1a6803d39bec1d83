/* Helpers the physics tests share: a shipped scene with --set overrides, a body by name, steps. */
#ifndef FR_TESTS_PHYSICS_SCENE_UTIL_H
#define FR_TESTS_PHYSICS_SCENE_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "frtest.h"
#include "fureru/scene.h"
#include "fureru/world.h"

/* The scene at `rel` (from the source root) with `n` --set values; fails the test on an error. */
static inline fr_scene *load(const char *rel, const char *const *sets, int n)
{
    fr_scene *s = NULL;
    fr_diag d;
    int err = fr_scene_load(frtest_path(rel), sets, n, &s, &d);
    ck_assert_msg(err == FR_OK, "%s:%d:%d %s: %s", d.file, d.line, d.col, d.field, d.msg);
    return s;
}

static inline fr_body_id body(fr_world *w, const char *name)
{
    fr_body_id id;
    ck_assert_int_eq(fr_world_find_body(w, name, &id), FR_OK);
    return id;
}

static inline void step_n(fr_world *w, long n)
{
    for (long i = 0; i < n; i++) ck_assert_int_eq(fr_world_step(w), FR_OK);
}

/* The largest one-step rise of energy less work over T s of steps, J */
static inline double worst_rise(fr_world *w, double T)
{
    fr_world_energy e0, e1;
    fr_world_energy_get(w, &e0);
    double gain = 0.0;
    const double dt = fr_world_get_def(w)->dt;
    for (long i = 0; i < (long)(T / dt); i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy_get(w, &e1);
        gain = fmax(gain, (e1.total - e1.work) - (e0.total - e0.work));
        e0 = e1;
    }
    return gain;
}

/* --set values built with printf formats; a test uses a handful at a time (a pool per file) */
static char set_pool[32][512];
static int set_next;
static inline const char *setf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline const char *setf(const char *fmt, ...)
{
    char *b = set_pool[set_next++ % 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof set_pool[0], fmt, ap);
    va_end(ap);
    return b;
}

/* The scene at `rel` at step dt, s (world.dt set) */
static inline fr_scene *load_dt(const char *rel, double dt)
{
    const char *sets[] = {setf("world.dt=%g", dt)};
    return load(rel, sets, 1);
}

#endif
