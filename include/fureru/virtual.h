/*
 * fureru virtual device: a simulated haptic device held by a simulated hand. The default device
 * of `fureru run` when no hardware is attached, and the device of tests and experiments.
 *
 * Hand (per axis, isotropic): a point mass m held by the grip; the hand pulls it toward an
 * intended target trajectory x_t(t) like an impedance controller (equilibrium-point model):
 *     m ẍ = k (x_t − x) + b (ẋ_t − ẋ) + F
 * F is the force the device renders (fr_device_cmd.force, applied to the hand). So a constant F
 * displaces the hand by F/k at rest, and a scripted trajectory is followed with the transfer
 * function (b s + k)/(m s² + b s + k). With 6 DOF the orientation follows a target orientation
 * the same way (inertia I, rotational stiffness/damping, torque τ), integrated with
 * semi-implicit Euler on the exponential map (its rest state is exact: angle = |τ|/k_r).
 *
 * Time (the deterministic rule): the device's clock advances by dt on every write and only
 * then; device time t = (number of writes) × dt. A write(F) holds F constant over [t, t + dt)
 * (zero-order hold, as real drivers do) and integrates the hand over it; read never advances
 * time and returns the newest measurement delayed by `latency` writes. So a --fast run that
 * writes once per tick replays bit for bit.
 * Integration: the target is sampled at both ends of the step (position and velocity) and
 * joined by a cubic Hermite polynomial; the hand's linear response to that input is integrated
 * exactly (a 6×6 matrix exponential computed at open, by scaling and squaring: its error grows
 * with the rate (stiffness + damping + 1)·dt/mass, 7e-7 of a static displacement at 1e8, 4e-3 at
 * 1e12, NaN beyond ~3e17, so a hand above 1e8 is refused). Piecewise-linear targets (line, csv)
 * take both ends from the segment containing the step's midpoint, so corners that fall on a
 * tick are exact too. The integration is therefore exact for targets that are cubic between
 * ticks and stable for any m > 0, b ≥ 0, k ≥ 0 within that rate.
 * Measurement: position quantised to the encoder resolution per axis (round to nearest count,
 * error ≤ half a count); velocity either the true one or the backward difference of quantised
 * positions through a first-order low-pass filter; orientation and angular velocity exact;
 * then delayed by `latency` writes (ring buffer). Before `latency` writes have happened, read
 * returns the initial measurement. The device declares it: desc.latency = latency·dt (a delay
 * in writes, so 5 ms at dt 0.005), which the passivity observer pairs across.
 *
 * Trajectories (device frame, m, s):
 *   hold    point                      x_t = point
 *   line    from, to, speed            from → to → from ... at constant speed (triangle wave)
 *   circle  center, radius, plane, period   plane xy|yz|zx: x_t = c + r(cos θ e1 + sin θ e2),
 *                                      θ = 2π t/period, (e1, e2) = (x, y), (y, z) or (z, x)
 *   poke    start, direction, depth, period  x_t = start + dir·depth·(1 − cos θ)/2: from start
 *                                      down `depth` along direction and back, once per period
 *   csv     file, loop, offset         rows t, x, y, z[, qw, qx, qy, qz] (header and # comments
 *                                      allowed), linear interpolation (slerp for orientation);
 *                                      device time 0 is the first row's t; after the last row
 *                                      it loops (loop: true) or holds the last row.
 * The hand starts at hand.start (default: the target at t = 0) with the target's velocity.
 *
 * Records: every write appends {t, force, torque, hand position} to a preallocated ring
 * (record.capacity entries; the oldest are overwritten); readable after the run and dumped to
 * record.csv at close when given.
 *
 * Threads: read/write on the tick thread: no allocation, lock, I/O or print. set_minimum is
 * async-signal-safe (atomic stores only). Everything else: start-up or after the run.
 */
#ifndef FURERU_VIRTUAL_H
#define FURERU_VIRTUAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fureru/devices.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fr_vtraj_type { FR_VTRAJ_HOLD, FR_VTRAJ_LINE, FR_VTRAJ_CIRCLE, FR_VTRAJ_POKE, FR_VTRAJ_CSV };
enum fr_vplane { FR_VPLANE_XY, FR_VPLANE_YZ, FR_VPLANE_ZX };
enum fr_vvel { FR_VVEL_DIFFERENCE, FR_VVEL_TRUE };

typedef struct fr_virtual_params {
    int dof;             /* 3 (position/force) or 6 (pose/force+torque) */
    double dt;           /* s of device time per write */
    fr_device_desc desc; /* limits reported to the safety chain (name/driver/dof set by open) */
    struct fr_vhand_params {
        double mass;          /* kg */
        double damping;       /* N·s/m */
        double stiffness;     /* N/m */
        double inertia;       /* kg·m² (6-DOF) */
        double rot_damping;   /* N·m·s/rad */
        double rot_stiffness; /* N·m/rad */
        bool has_start;
        fr_vec3 start; /* m; default: the target at t = 0 */
    } hand;
    struct {
        double resolution;      /* m per count; 0 = exact */
        int latency;            /* writes of delay on the reported state */
        int velocity;           /* enum fr_vvel */
        double velocity_cutoff; /* Hz, low-pass on the difference velocity; 0 = none */
    } encoder;
    struct fr_vtraj_params {
        int type;            /* enum fr_vtraj_type */
        fr_vec3 point;       /* hold */
        fr_vec3 from, to;    /* line */
        double speed;        /* m/s, line */
        fr_vec3 center;      /* circle */
        double radius;       /* m, circle */
        int plane;           /* enum fr_vplane, circle */
        double period;       /* s, circle and poke */
        fr_vec3 start;       /* poke */
        fr_vec3 direction;   /* poke (normalised at open) */
        double depth;        /* m, poke */
        char file[512];      /* csv (absolute, or relative to the working directory) */
        bool loop;           /* csv */
        fr_vec3 offset;      /* m, added to csv positions */
        fr_quat orientation; /* target orientation of hold/line/circle/poke (6-DOF) */
    } traj;
    struct {
        long capacity; /* records kept (ring) */
        char csv[512]; /* dump at close ("" = none); relative to the working directory */
    } record;
} fr_virtual_params;

/* Defaults (= config/devices/virtual.yaml): 3 DOF, dt 1 ms, hand 0.15 kg, 3 N·s/m, 200 N/m,
 * SPIDAR-like encoder (1.66555e-5 m per count, 1 tick latency, difference velocity at 100 Hz),
 * a gentle poke from z = 0.02 m down 0.03 m every 2 s, 65536 records, limits 10 N, 0.5 N·m,
 * 3000 N/m, 20 N·s/m, workspace ±0.1 m. */
void fr_virtual_params_default(fr_virtual_params *p);
/* Read a device file's root (its driver keys; see config/devices/virtual.yaml) over the
 * defaults. Relative csv paths resolve against base_dir. Errors name file:line:col:field. */
int fr_virtual_params_from_cfg(const fr_cfg_node *root, const char *base_dir, fr_virtual_params *p,
                               fr_diag *d);

/* Validate p, load the csv trajectory, allocate everything. */
int fr_virtual_open(const fr_virtual_params *p, fr_device **out, fr_diag *d);
/* The registry entry ("virtual"). */
extern const fr_driver_entry fr_virtual_driver;

/* Inspection (tests, experiments, logs). All return FR_ERR_INVAL for a non-virtual device. */
bool fr_virtual_is(const fr_device *dev);
int fr_virtual_get_params(const fr_device *dev, fr_virtual_params *out);
double fr_virtual_time(const fr_device *dev); /* s: writes × dt */
/* The hand's true state now: exact position, velocity, orientation, no delay; seq = writes. */
int fr_virtual_true_state(const fr_device *dev, fr_device_state *out);
/* The target trajectory at device time t. */
int fr_virtual_target(const fr_device *dev, double t, fr_pose *pose, fr_vec3 *vel);

typedef struct fr_virtual_record {
    double t;       /* s: start of the step the command was held over */
    fr_vec3 force;  /* N, as written (non-finite writes are recorded as received) */
    fr_vec3 torque; /* N·m */
    fr_vec3 hand;   /* m: hand position at t */
} fr_virtual_record;
/* Records kept (≤ capacity); i = 0 is the oldest kept. */
size_t fr_virtual_record_count(const fr_device *dev);
int fr_virtual_record_get(const fr_device *dev, size_t i, fr_virtual_record *out);
/* Write the kept records as CSV (t,fx,fy,fz,tx,ty,tz,x,y,z). */
int fr_virtual_record_dump(const fr_device *dev, const char *path);

typedef struct fr_virtual_stats {
    uint64_t writes, reads;
    uint64_t nonfinite;     /* writes with NaN/Inf (applied as zero) */
    uint64_t minimum_calls; /* set_minimum calls */
    uint64_t records_lost;  /* overwritten in the ring */
} fr_virtual_stats;
int fr_virtual_get_stats(const fr_device *dev, fr_virtual_stats *out);

#ifdef __cplusplus
}
#endif
#endif
