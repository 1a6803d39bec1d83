/*
 * Snapshots: what the tick thread shows the viewer (and anyone else who watches), and the
 * lock-free buffer that carries them.
 *
 * The buffer (fri_tbuf) is a triple buffer generalised to several readers: 2 + R slots of equal
 * size for at most R concurrent readers. The writer (the tick thread) fills its back slot and
 * publishes it: one atomic store of the newest slot's index, then a scan of the R + 2 reference
 * counts for a slot that is neither the newest nor held by a reader — there always is one, since
 * each reader holds at most one. So publishing never waits, locks or allocates, and the newest
 * snapshot wins. A reader takes the newest slot by counting itself in (and trying again when the
 * newest changed meanwhile), reads it, and lets it go; while it holds the slot the writer never
 * picks it, so a reader never sees a torn snapshot. With one reader it is the classic triple
 * buffer.
 *
 * The snapshot (fri_snap) lives in a slot: a fixed header and arrays at offsets sized at start-up
 * (bodies, contacts). Shapes are not copied: the model (fri_snap_model) built before the run
 * gives each body's shapes by reference to the world's constant shapes.
 */
#ifndef FR_SNAPSHOT_H
#define FR_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fureru/collision.h"
#include "fureru/math.h"

enum { FRI_TBUF_MAX_READERS = 6 };

typedef struct fri_tbuf {
    unsigned char *mem; /* nslots × slot_size, 64-byte aligned */
    size_t slot_size;
    int nslots;
    int back;                       /* writer's slot */
    _Alignas(64) atomic_int latest; /* newest published slot, −1 before the first */
    _Alignas(64) atomic_int refs[FRI_TBUF_MAX_READERS + 2];
    _Alignas(64) atomic_uint_fast64_t published;
} fri_tbuf;

/* Start-up: slots of slot_size bytes (zeroed) for at most max_readers concurrent readers. */
int fri_tbuf_init(fri_tbuf *b, size_t slot_size, int max_readers);
void fri_tbuf_destroy(fri_tbuf *b);
/* Writer: the slot to fill (the same one until the next publish). */
static inline void *fri_tbuf_back(fri_tbuf *b)
{
    return b->mem + (size_t)b->back * b->slot_size;
}
/* Writer: the back slot becomes the newest; a free slot becomes the back. Wait-free. */
void fri_tbuf_publish(fri_tbuf *b);
/* Reader: the newest slot (NULL before the first publish); *slot for the release. */
const void *fri_tbuf_acquire(fri_tbuf *b, int *slot);
void fri_tbuf_release(fri_tbuf *b, int slot);
/* Publishes so far (any thread). */
uint64_t fri_tbuf_published(const fri_tbuf *b);

/* ---------------------------------------------------------------------------- the snapshot */

enum { FRI_SNAP_RECENT = 64 }; /* ticks of timing the snapshot carries (the viewer's p99) */

typedef struct fri_snap_contact {
    fr_vec3 point;        /* centre of pressure, m */
    fr_vec3 normal;       /* unit, from A into B */
    fr_vec3 force;        /* on B (= −force on A), N */
    fr_vec3 t1, t2;       /* the patch's axes */
    double area;          /* m² */
    double ax, ay;        /* area centroid relative to point along t1, t2, m */
    double ixx, ixy, iyy; /* second moments of the patch about its centroid, m⁴ */
    double depth;         /* max depth, m */
    int body_a, body_b;   /* model body indices (−1: not a drawn body) */
    int sliding;
} fri_snap_contact;

/* Commands the tick thread took (viewer, replay): its state after them. */
enum fri_snap_flags {
    FRI_SNAP_PAUSED = 1u << 0,
    FRI_SNAP_HAS_DEVICE = 1u << 1,
    FRI_SNAP_COUPLED = 1u << 2, /* the proxy is driven (the hand holds the device) */
    FRI_SNAP_FINISHED = 1u << 3 /* the run is over: this is the last snapshot */
};

typedef struct fri_snap {
    uint64_t seq;  /* publish number, 1, 2, ... */
    uint64_t tick; /* loop ticks so far (paused ticks included) */
    uint64_t steps;
    double time; /* simulated, s */
    double wall; /* s since the loop started */
    unsigned flags;
    double slowmo; /* 1 = real time; 4 = four times slower */
    /* device and coupling (world frame) */
    fr_vec3 pointer;        /* where the device puts the hand in the world (coupling target), m */
    fr_vec3 proxy;          /* proxy body's position, m */
    fr_vec3 coupling_force; /* spring force on the proxy, N */
    fr_vec3 felt;           /* force sent to the device after the safety chain (device frame) */
    fr_vec3 felt_world;     /* the same in world axes (rotated by the workspace), N */
    double max_force;       /* the device's cap, N */
    /* loop statistics */
    uint64_t overruns;
    double energy, work;  /* J */
    int recent_n;         /* valid entries of the rings below (≤ FRI_SNAP_RECENT) */
    uint64_t recent_tick; /* the newest entry's tick; entry i is tick recent_tick − i */
    float recent_latency_us[FRI_SNAP_RECENT]; /* wake-up latency of the last ticks, µs */
    float recent_step_us[FRI_SNAP_RECENT];    /* step time of the last ticks, µs */
    float recent_felt[FRI_SNAP_RECENT];       /* |felt| of the last ticks, N */
    /* arrays (offsets from the snapshot's start) */
    int nbodies;
    int ncontacts, max_contacts;
    uint32_t bodies_off, contacts_off;
    uint64_t checksum; /* fri_snap_checksum of everything else, when the writer computes it */
} fri_snap;

static inline fr_pose *fri_snap_bodies(fri_snap *s)
{
    return (fr_pose *)((unsigned char *)s + s->bodies_off);
}
static inline const fr_pose *fri_snap_bodies_c(const fri_snap *s)
{
    return (const fr_pose *)((const unsigned char *)s + s->bodies_off);
}
static inline fri_snap_contact *fri_snap_contacts(fri_snap *s)
{
    return (fri_snap_contact *)((unsigned char *)s + s->contacts_off);
}
static inline const fri_snap_contact *fri_snap_contacts_c(const fri_snap *s)
{
    return (const fri_snap_contact *)((const unsigned char *)s + s->contacts_off);
}
/* Bytes of one snapshot with these capacities. */
size_t fri_snap_size(int nbodies, int max_contacts);
/* Lay out every slot of b (sized by fri_snap_size) as an empty snapshot. */
void fri_snap_layout(fri_tbuf *b, int nbodies, int max_contacts);
/* A 64-bit hash of the snapshot's header (checksum field excluded), its bodies and its
 * ncontacts contacts. */
uint64_t fri_snap_checksum(const fri_snap *s);

/* Viewer commands (they change the pace, not the physics); recorded with the step they took
 * effect before (src/server/record.h). */
enum fri_cmd_code {
    FRI_CMD_PAUSE = 1,  /* value 1 pause, 0 resume */
    FRI_CMD_STEP = 2,   /* one step while paused */
    FRI_CMD_SLOWMO = 3, /* value: the factor (1 = real time) */
};

/* ---------------------------------------------------------------------------- the model */

typedef struct fri_snap_shape {
    const fr_shape *shape; /* the world's (constant while the world lives) */
    fr_pose local;         /* in the body frame */
} fri_snap_shape;

enum fri_snap_body_kind { FRI_SNAP_STATIC, FRI_SNAP_DYNAMIC, FRI_SNAP_LINK, FRI_SNAP_PROXY };

typedef struct fri_snap_body {
    char name[64];
    int kind; /* enum fri_snap_body_kind */
    int nshapes;
    fri_snap_shape *shapes;
} fri_snap_body;

/* What does not change during a run. */
typedef struct fri_snap_model {
    char scene[128];
    double dt;
    int nbodies;
    fri_snap_body *bodies;
    bool has_device;
    /* the device → world map of the coupling: x_w = offset + scale·rot·x_d */
    double ws_scale;
    fr_quat ws_rot;
    fr_vec3 ws_offset;
    fr_vec3 dev_min, dev_max; /* device workspace box, device frame, m */
    fr_vec3 gravity;
    double size;   /* m: the radius of the moving bodies' bounding box at the start (>= 0.05) */
    double weight; /* N: the moving bodies' and robots' total weight (>= 0.1) */
} fri_snap_model;

#endif
