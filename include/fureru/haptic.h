/*
 * fureru haptic: the safety chain between the world and every device driver (fr_safety).
 * (Pointer/proxy, virtual coupling and the passivity observer will join this header.)
 *
 * Every force a driver receives goes through fr_safety_apply() first. The chain is a plain
 * struct (no allocation at all: embed it or allocate it with the server) configured from the
 * device description (max force/torque) and fr_safety_params.
 *
 * Stages, in order, and why this order:
 *   1. latch     After fr_safety_latch()/stop(): minimum forever (until fr_safety_rearm()).
 *                First, so that an exit in progress wins over everything.
 *   2. watchdog  No fr_safety_feed() within watchdog_timeout → minimum, and disengage so that
 *                force comes back only through stages 4-5 (the hand may have moved during a
 *                stall; a sudden re-engagement would jerk it). Before any arithmetic on the
 *                command: a stale command is not to be trusted at all.
 *   3. finite    A NaN/Inf anywhere in force or torque → minimum, fault counter, disengage (a
 *                NaN means the simulation broke; do not resume until it is quiet again). Before
 *                the arithmetic below so that NaN can never propagate.
 *   4. engage    While disengaged the output is minimum; the gate opens after the *requested*
 *                command (raw, before capping) was below engage_force and engage_torque for
 *                engage_ticks consecutive ticks (CHAI3D: < 0.2 N for 3 ticks). On the raw
 *                request because the point is that the world is not pushing at that moment.
 *                (Torque is ignored here when the device renders none: torque cap 0.)
 *                (fureru run passes, while disengaged, the larger of the request and its
 *                coupling's spring alone: docs/haptics.md §1.)
 *   5. cap       |F| ≤ max force, |τ| ≤ max torque, scaling the whole vector (direction kept).
 *                Overflow-free for any finite input (huge values, denormals).
 *   6. ramp      After the gate opens, gain g = k / ramp_ticks (k = ticks since engagement) up to
 *                1, output g·F. After the cap so that the ramp always spans the full range over
 *                ramp_time whatever the request (ramp-then-cap would saturate early).
 *   7. rate      |F_out(k) − F_out(k−1)| ≤ force_rate·tick_period (same for torque): the last
 *                stage so that nothing after it can jump. Exception, by design: a command of
 *                exactly zero (and every minimum from stages 1-4) is passed at once — a drop to
 *                safety is never rate-limited. The limited output lies on the segment between
 *                two points inside the cap ball, so the cap still holds.
 * Invariants (tested over 10⁶ random and adversarial commands): outputs finite; |F_out| ≤ cap
 * and |τ_out| ≤ cap, evaluated as sqrt(x*x + y*y + z*z) in double (stages 5 and 7 check the
 * rounded result and shrink by ulps if needed); the rate bound holds for every tick whose
 * output is not exactly zero.
 *
 * Minimum = zero force and torque; the driver maps it to its own minimum (SPIDAR: all strings at
 * minimum tension).
 *
 * Threads and signals:
 *   - fr_safety_apply, fr_safety_feed, fr_safety_rearm: the tick thread (one call to apply per
 *     tick; ramps and rate limits count calls). No allocation, lock, I/O or print.
 *   - fr_safety_expired, fr_safety_watchdog_poll: any thread (a supervisor thread polling the
 *     watchdog while the tick thread may be stalled). Lock-free atomics only.
 *   - fr_safety_latch, fr_safety_stop_signal: async-signal-safe, provided the driver's
 *     set_minimum is (device.h requires it): they only store to lock-free atomics and call
 *     set_minimum. Nothing else in this header may be called from a signal handler.
 *   - fr_safety_stop: normal and error exits, on the main thread after the tick thread stopped.
 * Time is a monotonic clock in nanoseconds passed in by the caller (CLOCK_MONOTONIC in the
 * server, simulated time under --fast, anything in tests).
 */
#ifndef FURERU_HAPTIC_H
#define FURERU_HAPTIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fureru/device.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_safety_params {
    double max_force;        /* N; 0 = the device's max_force; else min(this, the device's) */
    double max_torque;       /* N·m; as max_force (a 3-DOF-forced device always gets 0) */
    double force_rate;       /* N/s: |ΔF| per tick ≤ force_rate·tick_period; +inf = no limit */
    double torque_rate;      /* N·m/s */
    double engage_force;     /* N: the request must be below this ... */
    double engage_torque;    /* N·m: ... and this ... */
    int engage_ticks;        /* ... for this many consecutive ticks before force engages */
    double ramp_time;        /* s: then the gain ramps linearly 0 → 1 over this */
    double watchdog_timeout; /* s: no feed for longer than this → minimum */
} fr_safety_params;

/* Defaults: device limits, 2000 N/s, 100 N·m/s, engage below 0.2 N and 0.02 N·m for 3 ticks,
 * ramp 2 s (CHAI3D), watchdog 20 ms. */
void fr_safety_params_default(fr_safety_params *p);

/* What fr_safety_apply did this tick (bit mask, for logs and tests). */
enum fr_safety_flag {
    FR_SAFETY_LATCHED = 1 << 0,
    FR_SAFETY_WATCHDOG = 1 << 1,
    FR_SAFETY_NONFINITE = 1 << 2,
    FR_SAFETY_DISENGAGED = 1 << 3, /* output held at minimum, waiting for a quiet request */
    FR_SAFETY_RAMPING = 1 << 4,    /* gain < 1 */
    FR_SAFETY_CAPPED = 1 << 5,     /* force or torque was above its cap */
    FR_SAFETY_RATE_LIMITED = 1 << 6,
};

typedef struct fr_safety_stats {
    uint64_t ticks;          /* calls to apply */
    uint64_t nonfinite;      /* commands with NaN/Inf */
    uint64_t capped;         /* ticks with force or torque capped */
    uint64_t rate_limited;   /* ticks with force or torque rate-limited */
    uint64_t watchdog_trips; /* transitions into the expired state seen by apply */
    uint64_t engagements;    /* times the start-up gate opened */
} fr_safety_stats;

enum fr_safety_mode { FR_SAFETY_MODE_DISENGAGED = 0, FR_SAFETY_MODE_RAMPING, FR_SAFETY_MODE_ON };

typedef struct fr_safety {
    /* constants (fr_safety_init) */
    double cap_force, cap_torque;   /* N, N·m */
    double step_force, step_torque; /* N, N·m per tick */
    double engage_force, engage_torque;
    long engage_ticks;
    uint64_t ramp_ticks;
    int64_t timeout_ns;
    /* tick-thread state */
    int mode;        /* enum fr_safety_mode */
    long quiet;      /* consecutive quiet requests while disengaged */
    uint64_t ramp_k; /* ticks since engagement */
    double gain;
    bool wd_tripped;
    fr_vec3 last_force, last_torque; /* previous output */
    fr_safety_stats stats;
    /* shared with other threads and signal handlers */
    _Atomic uint64_t last_feed_ns;
    atomic_int fed;       /* 0 until the first feed */
    atomic_int latched;   /* 1 after latch/stop */
    atomic_int poll_done; /* watchdog_poll already dropped the device for this stall */
} fr_safety;

/* Configure from the device description and params; tick_period in s (> 0). Starts
 * disengaged, never fed (so expired until the first feed), not latched. FR_ERR_INVAL or
 * FR_ERR_RANGE on bad values (non-finite, negative, caps above 1e6). */
int fr_safety_init(fr_safety *s, const fr_device_desc *desc, const fr_safety_params *p,
                   double tick_period);

/* The tick thread produced a fresh command (computed from a fresh device state). */
void fr_safety_feed(fr_safety *s, uint64_t now_ns);
/* True when never fed or the last feed is more than watchdog_timeout before now (a time
 * before the last feed counts as not expired). Any thread. */
bool fr_safety_expired(const fr_safety *s, uint64_t now_ns);

/* The chain: in → out (may alias). Returns the fr_safety_flag mask. One call per tick. */
int fr_safety_apply(fr_safety *s, const fr_device_cmd *in, uint64_t now_ns, fr_device_cmd *out);
/* apply, then fr_device_write(dev, out). Returns the driver's result; *flags (may be NULL)
 * receives the mask. */
int fr_safety_write(fr_safety *s, fr_device *dev, const fr_device_cmd *in, uint64_t now_ns,
                    int *flags);

/* For a supervisor thread: when the watchdog has expired, drop the device to minimum at once
 * (once per stall; a feed re-arms it) without waiting for the tick thread. Returns expired. */
bool fr_safety_watchdog_poll(fr_safety *s, fr_device *dev, uint64_t now_ns);

/* Latch the chain at minimum (every later apply outputs zero). Async-signal-safe. */
void fr_safety_latch(fr_safety *s);
/* Signal path: latch + fr_device_set_minimum(dev). Async-signal-safe when the driver's
 * set_minimum is. Does not write a command (a write may be in progress on the tick thread). */
void fr_safety_stop_signal(fr_safety *s, fr_device *dev);
/* Normal and error exits, once the tick thread no longer runs: latch, write a zero command,
 * set_minimum. dev may be NULL (latch only). */
void fr_safety_stop(fr_safety *s, fr_device *dev);
/* Clear the latch and start again disengaged (previous output taken as zero); tick thread or
 * while it is stopped. Counters are kept. */
void fr_safety_rearm(fr_safety *s);

static inline fr_safety_stats fr_safety_get_stats(const fr_safety *s)
{
    return s->stats;
}
/* Current ramp gain in [0, 1] (0 while disengaged). */
static inline double fr_safety_gain(const fr_safety *s)
{
    return s->mode == FR_SAFETY_MODE_DISENGAGED ? 0.0 : s->gain;
}

#ifdef __cplusplus
}
#endif
#endif
