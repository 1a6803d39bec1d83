/* Server internals visible to tests. */
#ifndef FR_SERVER_INTERNAL_H
#define FR_SERVER_INTERNAL_H

#include <pthread.h>

#include "fureru/server.h"
#include "record.h"
#include "snapshot.h"

/* Concurrent snapshot readers the buffer serves (the viewer, tests). */
enum { FRI_SERVER_SNAP_READERS = 2 };

/* What fureru run and replay add to a server beyond the public options. */
typedef struct fri_server_ext {
    fr_device *device;                /* already open (mouse, replay): the server owns it from
                                         create on (also when create fails) */
    const fr_safety_params *safety;   /* its safety parameters */
    const fri_rec *replay;            /* replay: the recording (commands, the safety chain's times,
                                         the number of steps) */
    const char *record_path;          /* write a recording of this run */
    const char *const *package_paths; /* for the recording's head (as given to the scene) */
    int npackage_paths;
    bool strict;
} fri_server_ext;

int fri_server_create_ext(fr_scene *scene, const fr_server_opts *opts, const fri_server_ext *ext,
                          fr_server **out, fr_diag *d);
/* A viewer's command (enum fri_cmd_code), taken by the tick thread before its next step; one
 * producer thread only (the viewer). FR_ERR_FULL when the queue is full. */
int fri_server_command(fr_server *s, int code, double value);

/* The world's substeps in words for the summary and `fureru check` ("" when a tick is one step
 * and the rule asks no more): how many, for which body, how wide against what a tick resolves,
 * and whether the cap or world.substeps left it short of the rule (docs/world.md, "Substeps"). */
void fri_substeps_describe(const fr_world *w, char *buf, size_t size);
/* Replay: writes the replay device saw differ from the recorded felt force. */
void fri_server_replay_stats(const fr_server *s, uint64_t *mismatches, double *max_diff,
                             uint64_t *compared);

/* Run hook(arg) once on the tick thread after its start-up, before the first tick. */
void fri_server_set_tick_hook(fr_server *s, void (*hook)(void *), void *arg);
pthread_t fri_server_tick_thread(const fr_server *s);
/* The CPU a real-time run will give the tick thread alone (cpus.h), −1 when none: a viewer
 * started before the run keeps off it from the start (its GL driver's threads inherit that). */
int fri_server_tick_cpu_plan(const fr_server *s);
/* The snapshots the tick thread publishes every tick, and their constant model (valid from
 * create to destroy). */
fri_tbuf *fri_server_snapshots(fr_server *s);
const fri_snap_model *fri_server_model(const fr_server *s);

#endif
