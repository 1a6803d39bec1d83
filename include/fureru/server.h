/*
 * fureru server: the 1 kHz tick loop around a world, with timing statistics, a CSV logger thread
 * fed by a lock-free ring, and snapshots for viewers.
 *
 * Threads: the caller's thread runs fr_server_run (it starts and joins the others); a tick thread
 * steps the world (SCHED_FIFO and mlockall when permitted; a warning otherwise); a logger thread
 * drains the log ring into the CSV file. After start-up the tick thread never allocates, locks,
 * blocks on I/O or prints: it sleeps with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to
 * deadlines advanced by the period. In fast mode it does not sleep at all and the run is
 * deterministic (a full log ring then makes it wait, asleep, instead of dropping records).
 *
 * CPUs: with two or more CPUs a real-time run pins the tick thread to the last one (when the
 * caller's thread may use it and another) and keeps every other thread of the process off it
 * while the run lasts, the application's own included: the caller's thread and the logger from
 * the start, any other thread allowed on it (checked at the start and every 0.2 s) by taking that
 * CPU out of its set; those sets are given back when the run ends (unless changed meanwhile). A
 * thread pinned to the tick's CPU alone is left where it is. On one CPU nothing is moved.
 *
 * With a log file, a sidecar FILE.meta.yaml next to it records what made it: the fureru version,
 * the command line, the scene path and the whole scene after --set, the run options, the scene's
 * analysis parameters, and (appended at the end) the run's outcome. docs/scenes.md describes it.
 */
#ifndef FURERU_SERVER_H
#define FURERU_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fureru/devices.h"
#include "fureru/haptic.h"
#include "fureru/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_server fr_server;

typedef struct fr_server_opts {
    double duration;      /* s of simulated time; <= 0: the scene's world.duration */
    bool fast;            /* as fast as possible, no real-time pacing */
    bool headless;        /* no viewer */
    const char *log_path; /* CSV file, or NULL */
    int log_every;        /* log one tick in N (>= 1) */
    bool realtime_sched;  /* try SCHED_FIFO + mlockall in real-time mode */
    int log_ring_records; /* log ring capacity in records (power of two; 0 = default 8192) */
    const char *device; /* device name or file (overrides the scene's device.spec); NULL = scene */
    FILE *progress;     /* a run longer than 2 s shows progress on this stream (one line, kept
                           up to date with \r: meant for a terminal); NULL = none */
    const char *const *argv; /* the command line, NULL-terminated, recorded in the sidecar */
    double
        energy_tolerance; /* the energy audit's bound per tick (fr_server_energy); default 0.25 */
    bool log_energy;      /* the CSV gets energy, work and the tick's gain (J) */
    bool allow_drops;     /* records dropped by a full log ring do not fail the run (they are
                             still counted, and marked in the CSV's log.lost column) */
    double spin;          /* s: real time: sleep until this long before each deadline, then
                             wait for it busy (a warm CPU at the tick; costs spin/dt of a CPU);
                             0 = sleep all the way */
} fr_server_opts;

fr_server_opts fr_server_opts_default(void);

/* Percentiles of a timing histogram, in seconds. */
typedef struct fr_timing {
    uint64_t count;
    double p50, p99, p999, max, mean;
} fr_timing;

/* The energy audit (docs/world.md, "Energy"): after every tick the world's energy less the work
 * done on it (fr_world_energy_get) may rise by at most energy_tolerance × the scale — the kinetic
 * and elastic energy the scene holds plus, per body, its weight times its radius of gyration —
 * plus the magnitude of the robots' joint work in that tick (estimated by the trapezoid rule,
 * which the tree's integrator does not follow exactly). A larger rise is a numerical failure that
 * ends the run. */
typedef struct fr_server_energy {
    double start, end;     /* total energy at the start and the end, J */
    double work;           /* done on the world from outside, J */
    double gained;         /* sum of the ticks' rises of total − work, J */
    double max_gain;       /* the largest one-tick rise, J */
    double max_gain_time;  /* when, s */
    double max_gain_share; /* that rise over the scale then */
    double max_gain_bound; /* the bound in that tick (tolerance × scale + its joint work), J */
    double max_gain_joint; /* that tick's joint work, J */
    double max_use;        /* the largest share of its tick's bound any rise took (< 1) */
    double placement;      /* elastic energy the first tick found in the placement's overlaps, J */
    struct {
        bool failed;
        double time;   /* s */
        double gain;   /* J */
        double bound;  /* J */
        char body[64]; /* the body whose own energy rose most in that tick */
    } fault;
} fr_server_energy;

typedef struct fr_server_stats {
    uint64_t ticks;              /* steps taken */
    double sim_time;             /* s */
    double wall_time;            /* s */
    fr_timing latency;           /* wake-up latency (real-time mode only) */
    fr_timing step;              /* time per tick's work */
    uint64_t overruns;           /* ticks whose work ended after the next deadline */
    int max_contacts;            /* most contacts in one tick */
    double max_penetration;      /* deepest contact penetration seen, m */
    uint64_t log_records;        /* records written to the CSV */
    uint64_t log_dropped;        /* records dropped because the ring was full (real-time mode) */
    uint64_t log_waits;          /* times a fast run waited for the logger (a full ring) */
    double log_cpu;              /* s of CPU time the logger thread used (formatting, writing) */
    double tick_cpu;             /* s of CPU time the tick thread used */
    bool sched_fifo;             /* the tick thread ran with SCHED_FIFO */
    bool memory_locked;          /* mlockall succeeded */
    char sched_note[160];        /* why real-time scheduling was not used, if so */
    char device[64];             /* the device's name ("" when none) */
    fr_safety_stats safety;      /* what the safety chain did */
    uint64_t device_faults;      /* ticks the device reported a fault or disconnection */
    uint64_t passivity_active;   /* ticks the passivity controller added damping */
    double passivity_dissipated; /* J it planned to dissipate */
    uint64_t coupling_rejected;  /* device samples the coupling rejected (faults, NaN) */
    fr_world_fault fault;        /* the divergence that ended the run (fault.code 0: none) */
    fr_world_counters contained; /* faults the world contained (counted, not fatal) */
    fr_server_energy energy;     /* the energy audit */
    uint64_t haptic_resets;      /* times a runaway proxy was put back at the device's point */
    bool interrupted;            /* fr_server_request_stop (a signal) ended the run early */
    uint64_t log_lost;           /* records lost: dropped, or not written (a write error) */
    int log_errno;               /* errno of the log's failed write (0: none) */
    int tick_cpu_index;          /* the CPU the tick thread was pinned to (−1: not pinned) */
    double others_on_tick_cpu;   /* share of that CPU's time other threads used during the run
                                    (/proc/stat less the tick thread's own time; −1 unknown) */
    uint64_t spin_late;          /* spin: ticks whose sleep overshot the spin's start past the
                                    deadline */
} fr_server_stats;

/* The scene stays owned by the caller and must outlive the server. */
int fr_server_create(fr_scene *scene, const fr_server_opts *opts, fr_server **out, fr_diag *d);
/* What `fureru check` validates beyond the scene: everything fr_server_create would (device
 * spec and settings, safety, coupling gains against the device's limits, options) without
 * writing a log. A simulated device is opened (and closed); a hardware device is validated
 * from its file and settings only (*device_opened false), never touched. The scene's world
 * may get the device coupling's spring: load the scene again to run it. */
int fr_server_check(fr_scene *scene, const fr_server_opts *opts, bool *device_opened, fr_diag *d);
/* Run until the duration is reached or fr_server_request_stop; returns FR_OK or a runtime error:
 * FR_ERR_NUMERIC (divergence), FR_ERR_IO (the log could not be written: stats.log_errno),
 * FR_ERR_FULL (log records dropped, unless opts.allow_drops). */
int fr_server_run(fr_server *s);
/* Async-signal-safe: ask the loop to stop at the next tick. */
void fr_server_request_stop(fr_server *s);
void fr_server_get_stats(const fr_server *s, fr_server_stats *out);
void fr_server_print_summary(const fr_server *s, FILE *out);
void fr_server_destroy(fr_server *s);

/* The device registry the server uses (drivers linked into this build, config/devices). */
const fr_devreg *fr_server_devices(void);

#ifdef __cplusplus
}
#endif
#endif
