/*
 * The run's divergence guard (docs/haptics.md, "Faults"): after every step a cheap check of
 * what the world's own check (finite poses, speeds below FR_WORLD_MAX_SPEED and _SPIN) does not
 * cover: every logged body's distance from the origin, every spring's force; and the haptic
 * path's own failure, a proxy running away from the device. A runaway proxy first degrades the
 * haptic path (coupling released for the tick, proxy put back at the device's point, zero force
 * sent); FRI_GUARD_RESETS of them within FRI_GUARD_RESET_WINDOW of simulated time abandon the
 * run. Tick thread: no allocation, no I/O.
 */
#ifndef FR_SERVER_GUARD_H
#define FR_SERVER_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "fureru/world.h"

#define FRI_GUARD_MAX_POSITION 1e4  /* m from the world's origin */
#define FRI_GUARD_MAX_FORCE    1e9  /* N in a spring */
#define FRI_GUARD_STRETCH      0.2  /* m at the device between the grip and the proxy */
#define FRI_GUARD_SLIP_SPEED   10.0 /* m/s at the device of the proxy relative to the grip */
#define FRI_GUARD_RESET_WINDOW 1.0  /* s of simulated time */
enum { FRI_GUARD_RESETS = 3 };

typedef struct fri_guard {
    fr_world_fault fault; /* what ended the run (code 0: nothing) */
    uint64_t resets;      /* haptic resets (runaway proxy put back) */
    double reset_times[FRI_GUARD_RESETS];
    double first_reset, last_reset; /* s */
    char last_reset_why[96];
    bool last_far; /* the last reset was for the distance (else for the speed) */
} fri_guard;

/* Bodies (ids) and springs after a step: FR_OK or FR_ERR_NUMERIC with g->fault set. */
int fri_guard_world(fri_guard *g, const fr_world *w, const fr_body_id *ids, int n);
/* A runaway check of the proxy against the grip's point and velocity mapped into the world
 * (the device's, not the coupling's stretch-limited target, which never lies farther from the
 * proxy than max_force/K), `scale` world metres per device metre: true when the haptic path
 * must be reset this tick: the proxy more than FRI_GUARD_STRETCH from the grip, or moving faster
 * than FRI_GUARD_SLIP_SPEED both relative to the grip and in the world. *abandon is set when
 * the resets came too often (g->fault then says why). */
bool fri_guard_proxy(fri_guard *g, const fr_world *w, fr_body_id proxy, fr_vec3 grip,
                     fr_vec3 grip_vel, double scale, bool *abandon);

#endif
