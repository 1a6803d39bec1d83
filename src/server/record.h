/*
 * Recordings (fureru run --record FILE, fureru replay FILE): what came into a run from outside,
 * with the tick it arrived on, so that the run can be taken again bit for bit.
 *
 * A recording is a text head, then fixed-size binary records (FRI_REC_COLS doubles, the host's
 * byte order), then a trailer. The head names the scene (absolute path, the --set values, the
 * package paths, --strict) with a hash of the whole scene as it ran, the run's dt and duration,
 * and the device's description and safety parameters (hex bytes of the structs: a recording is
 * read by the fureru version that wrote it). Records:
 *   device sample  every step with a device: the step, the time the safety chain was given
 *                  (ns), the state the device reported and the force and torque the safety chain
 *                  sent (the felt force, to compare on replay);
 *   command        a viewer command (pause, single step, slow motion) and the step it took
 *                  effect before.
 * The trailer holds the record count, a 64-bit hash of every record byte, the records dropped
 * (a real-time run whose writer fell behind: such a recording is refused) and the steps taken.
 * Written by a writer thread fed from a lock-free ring (log.h, binary mode), so the tick thread
 * stays free of I/O.
 */
#ifndef FR_SERVER_RECORD_H
#define FR_SERVER_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fureru/device.h"
#include "fureru/haptic.h"
#include "fureru/scene.h"
#include "snapshot.h" /* enum fri_cmd_code */

#define FRI_REC_MAGIC     "fureru-recording 1\n"
#define FRI_REC_END       "FRRECEND"
#define FRI_REC_HASH_SEED 0xcbf29ce484222325ull

enum { FRI_REC_COLS = 26 };
enum fri_rec_kind { FRI_REC_DEVICE = 1, FRI_REC_COMMAND = 2 };

typedef struct fri_rec_trailer {
    char magic[8];
    uint64_t records, hash, dropped, steps;
} fri_rec_trailer;

static inline uint64_t fri_rec_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

static inline double fri_rec_u64(uint64_t v)
{
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}
static inline uint64_t fri_rec_to_u64(double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return v;
}

/* One device sample as recorded. */
typedef struct fri_rec_sample {
    uint64_t now_ns;
    fr_device_state state;
    fr_device_cmd felt;
} fri_rec_sample;

typedef struct fri_rec_command {
    uint64_t step;
    int code;
    double value;
} fri_rec_command;

/* A loaded recording. */
typedef struct fri_rec {
    char scene[4096];
    char **sets, **pkgs;
    int nsets, npkgs;
    bool strict;
    uint64_t scene_hash;
    double dt, duration;
    bool has_device;
    char device_name[64];
    fr_device_desc desc;
    fr_safety_params safety;
    uint64_t steps;
    fri_rec_sample *samples; /* per step (has_device) */
    uint64_t nsamples;
    fri_rec_command *cmds;
    uint64_t ncmds;
} fri_rec;

/* The text head of a recording. */
char *fri_rec_header(const fr_scene *scene, const char *const *pkgs, int npkgs, bool strict,
                     double duration, const fr_device *dev, const fr_safety_params *sp);
/* Hash of the scene as it runs (fr_scene_write_yaml). */
uint64_t fri_rec_scene_hash(const fr_scene *scene);
/* Read and check a recording: FR_OK, or FR_ERR_PARSE with a message saying what is wrong
 * (not a recording, truncated, corrupt, dropped records) in d, or FR_ERR_IO / FR_ERR_NOMEM. */
int fri_rec_load(const char *path, fri_rec *out, fr_diag *d);
void fri_rec_free(fri_rec *r);
/* A device that plays a recording's samples back, one per read (the server's step order); its
 * writes are compared with the recorded felt forces. */
int fri_rec_device_open(const fri_rec *r, fr_device **out);
/* Writes whose force or torque differed from the recording (bit for bit), and the largest
 * difference, N. */
void fri_rec_device_stats(const fr_device *dev, uint64_t *mismatches, double *max_diff,
                          uint64_t *compared);

#endif
