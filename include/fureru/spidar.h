/*
 * fureru SPIDAR driver: string-based haptic interfaces (4-string 3-DOF and 8-string 6-DOF
 * SPIDAR-G), their kinematics, the tension distribution and the USB transport.
 *
 * Layers, each usable on its own:
 *   1. configuration (fr_spidar_config): geometry, conversions, limits, weights, transport;
 *   2. pure kinematics and conversions (no state, no allocation, thread-safe);
 *   3. the box-constrained QP (fr_spidar_qp_solve) and the tension distribution built on it;
 *   4. a device (fr_device, include/fureru/device.h) over a libusb transport with its own device
 *      thread, or over no transport at all ("kinematic" device fed with counts by the caller).
 *
 * Conventions: SI units, z up, poses in the device frame. Strings are indexed by motor
 * (0..n_strings-1); a motor is wired to a board channel (0..7) for both its DAC and its counter.
 * String length from counts:  l_i = count_sign_i · length_per_count · (count_i − offset_i).
 * Motor command from tension: dac_i = round(volt_sign_i · volts_per_newton · t_i · dac_per_volt),
 * clamped to ±dac_limit.
 */
#ifndef FURERU_SPIDAR_H
#define FURERU_SPIDAR_H

#include <stddef.h>
#include <stdint.h>

#include "fureru/device.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FR_SPIDAR_MAX_STRINGS 8
#define FR_SPIDAR_CHANNELS    8 /* channels on a board (DACs and counters) */

enum fr_spidar_board {
    FR_SPIDAR_BOARD_NONE = 0,   /* no hardware: counts are fed by the caller */
    FR_SPIDAR_BOARD_SH4 = 1,    /* USB2.0 "Sh4" board, 0x0CEC:0x0205 */
    FR_SPIDAR_BOARD_SIMPLE = 2, /* USB2.0 "Simple" board, 0x0CEC:0x0203 */
};

enum fr_spidar_preset {
    FR_SPIDAR_PRESET_SPIDAR4 = 0, /* 4 strings, 3-DOF, 0.12 × 0.12 × 0.14 m frame */
    FR_SPIDAR_PRESET_G6X3R = 1,   /* SPIDAR-G6 X3 (right hand), 8 strings, 6-DOF, grip 45 mm */
};

typedef struct fr_spidar_motor {
    fr_vec3 position; /* m, string exit point on the frame, device frame */
    fr_vec3 attach;   /* m, string attachment point on the grip, grip frame */
    int count_sign;   /* +1: counts grow as the string pays out; -1: they shrink */
    int volt_sign;    /* +1: positive volts pull; -1: negative volts pull */
    int channel;      /* board channel 0..7 (DAC and counter) */
} fr_spidar_motor;

/*
 * Everything that describes one SPIDAR. Filled by fr_spidar_config_default() and then changed
 * by code or key by key with fr_spidar_config_set() (the keys are named at each field, in
 * brackets; config/devices/spidar*.yaml use the same names, nested).
 */
typedef struct fr_spidar_config {
    char name[64]; /* [name] instance name */
    int board;     /* [board] enum fr_spidar_board: "none", "sh4", "simple" */
    int n_strings; /* [strings] 4 (3-DOF) or 8 (6-DOF) */
    fr_spidar_motor motor[FR_SPIDAR_MAX_STRINGS]; /* [motors.I.position|attach|count_sign|
                                                     volt_sign|channel] */
    double length_per_count;                      /* [length_per_count] m per encoder count */
    double volts_per_newton;                      /* [volts_per_newton] V/N */
    double tension_min;    /* [tension_min] N, every string always keeps at least this */
    double tension_max;    /* [tension_max] N */
    double dac_per_volt;   /* [dac_per_volt] DAC digits per volt */
    int dac_limit;         /* [dac_limit] |DAC| clamp, digits (<= 32767) */
    fr_pose home;          /* [home.position] m, [home.orientation] (w x y z): the grip pose
                              at calibration; 3-DOF uses home.orientation as the fixed grip
                              orientation */
    int calibrate_on_open; /* [calibrate_on_open] 1: the first sample defines the home pose */

    /* Tension distribution: minimise w_force‖f − U t‖² + w_torque‖τ − M t‖² + w_reg‖t‖²
     * + w_smooth‖t − t_prev‖² subject to tension_min ≤ t ≤ tension_max. */
    double w_force;  /* [tension.w_force] 1/N² scale, > 0 */
    double w_torque; /* [tension.w_torque] > 0 for 6-DOF (ignored for 3-DOF) */
    double w_reg;    /* [tension.w_reg] ε > 0 (makes the problem strictly convex) */
    double w_smooth; /* [tension.w_smooth] >= 0 */

    /* Pose from lengths (6-DOF: damped Gauss-Newton warm-started from the last pose). */
    double gn_damping;  /* [pose.damping] σ, Marquardt-scaled (σ · diag(AᵀA)) */
    int gn_iterations;  /* [pose.iterations] per read */
    double gn_max_step; /* [pose.max_step] m, translation cap per iteration */
    double gn_max_rot;  /* [pose.max_rot] rad, rotation cap per iteration */
    double vel_cutoff;  /* [pose.vel_cutoff] Hz, first-order velocity filter */

    /* Static description reported through fr_device_desc. */
    double max_force;         /* [limits.max_force] N */
    double max_torque;        /* [limits.max_torque] N·m */
    double max_stiffness;     /* [limits.max_stiffness] N/m */
    double max_damping;       /* [limits.max_damping] N·s/m */
    double max_rot_stiffness; /* [limits.max_rot_stiffness] N·m/rad */
    double max_rot_damping;   /* [limits.max_rot_damping] N·m·s/rad */
    fr_vec3 workspace_min;    /* [limits.workspace_min] m */
    fr_vec3 workspace_max;    /* [limits.workspace_max] m */

    /* USB transport. */
    int usb_index;             /* [usb.index] which matching board, 0 = first found */
    double usb_period;         /* [usb.period] s, device-thread cycle (one OUT and one IN) */
    double io_timeout;         /* [usb.io_timeout] s, per transfer */
    double stale_timeout;      /* [usb.stale_timeout] s, newest sample older → fault */
    double command_timeout;    /* [usb.command_timeout] s, newest command older → minimum */
    double reconnect_interval; /* [usb.reconnect_interval] s, between attempts when unplugged */
    int recover_samples;       /* [usb.recover_samples] good samples before a fault clears */
    double max_string_speed;   /* [usb.max_string_speed] m/s, counter jumps beyond are garbage */
    int thread_priority;       /* [usb.thread_priority] SCHED_FIFO priority, 0 = leave as is */
    int require_device;        /* [usb.require_device] 1: open fails without a board */
} fr_spidar_config;

/* Fill *cfg with a preset (geometry from the Springhead SPIDAR descriptions, board Sh4). */
void fr_spidar_config_default(fr_spidar_config *cfg, enum fr_spidar_preset preset);
/* Check the configuration; FR_OK or FR_ERR_INVAL/FR_ERR_RANGE with a reason in why. */
int fr_spidar_config_validate(const fr_spidar_config *cfg, char *why, size_t why_size);
/* Set one field by its key (see the field comments), value as text: numbers, "[x, y, z]",
 * "[w, x, y, z]", names for board. FR_ERR_NOTFOUND for an unknown key, FR_ERR_PARSE for a bad
 * value, FR_ERR_RANGE for a motor index out of range. */
int fr_spidar_config_set(fr_spidar_config *cfg, const char *key, const char *value);

/* ---------------------------------------------------------------- kinematics (pure) */

/* String geometry at a grip pose. */
typedef struct fr_spidar_kin {
    int n;
    double length[FR_SPIDAR_MAX_STRINGS]; /* m */
    fr_vec3 u[FR_SPIDAR_MAX_STRINGS];     /* unit, from the grip attachment to the motor */
    fr_vec3 m[FR_SPIDAR_MAX_STRINGS];     /* m, (R g_i) × u_i: moment of a unit tension */
} fr_spidar_kin;

/* Calibration state: a count offset per motor. */
typedef struct fr_spidar_calib {
    double count_offset[FR_SPIDAR_MAX_STRINGS]; /* counts */
} fr_spidar_calib;

/* For 3-DOF the orientation is ignored and cfg->home.q is used. */
void fr_spidar_kinematics(const fr_spidar_config *cfg, fr_pose pose, fr_spidar_kin *out);
/* Lengths from counts (counts indexed by motor). */
void fr_spidar_counts_to_lengths(const fr_spidar_config *cfg, const fr_spidar_calib *cal,
                                 const int64_t *counts, double *lengths);
/* Offsets that make the given counts correspond to the pose (calibration at a home pose). */
void fr_spidar_calibrate_counts(const fr_spidar_config *cfg, const int64_t *counts, fr_pose pose,
                                fr_spidar_calib *cal);
/* 3-DOF closed form: 2(p'_{i+1} − p'_i)·x = l_i² − l_{i+1}² + |p'_{i+1}|² − |p'_i|², with
 * p'_i = p_i − R_home g_i. FR_ERR_NUMERIC if the geometry is degenerate or a length is not
 * finite. */
int fr_spidar_position_closed_form(const fr_spidar_config *cfg, const double *lengths,
                                   fr_vec3 *pos);
/* 6-DOF damped Gauss-Newton from guess: up to max_iter iterations, stopping when the step is
 * below tol (m and rad). *iters (may be NULL) receives the iterations done; *residual (may be
 * NULL) the RMS length residual (m). FR_ERR_NUMERIC when the result is not finite. */
int fr_spidar_pose_solve(const fr_spidar_config *cfg, const double *lengths, fr_pose guess,
                         int max_iter, double tol, fr_pose *out, int *iters, double *residual);

/* ---------------------------------------------------------------- conversions (pure) */

/* DAC values indexed by board channel (unused channels 0). Tensions are first clamped to
 * [tension_min, tension_max] (NaN → tension_min): nothing outside the box reaches a motor. */
void fr_spidar_tension_to_dac(const fr_spidar_config *cfg, const double *tension,
                              int16_t dac[FR_SPIDAR_CHANNELS]);
/* Inverse for checking: tension per motor from channel DAC values. */
void fr_spidar_dac_to_tension(const fr_spidar_config *cfg, const int16_t dac[FR_SPIDAR_CHANNELS],
                              double *tension);

/* ---------------------------------------------------------------- tension distribution */

#define FR_SPIDAR_QP_MAX_N 16

/*
 * Strictly convex box QP: minimise ½ xᵀ H x − gᵀ x subject to lo ≤ x ≤ hi (n ≤ 16, H
 * symmetric positive definite, row-major n×n, lo ≤ hi). Goldfarb–Idnani dual active-set method
 * specialised to bounds. Every full step strictly increases the objective and leaves x at the
 * minimiser over a working set, so no working set repeats; at most n−1 drops precede each full
 * step. Hence at most n·(3ⁿ − 1) iterations (fr_spidar_qp_iteration_bound); the solver also
 * stops there, so it terminates in floating point too. On return x is in the box and satisfies
 * the KKT conditions to rounding. *iters (may be NULL) receives the iterations (one per
 * equality-constrained subproblem solved). FR_ERR_INVAL on bad input, FR_ERR_NUMERIC if H is
 * not positive definite or the bound was hit.
 */
int fr_spidar_qp_solve(int n, const double *H, const double *g, const double *lo, const double *hi,
                       double *x, int *iters);
long fr_spidar_qp_iteration_bound(int n);

/* Tensions (per motor) for a wanted force (N) and torque (N·m, ignored for 3-DOF) at the
 * string geometry kin. t_prev (may be NULL) is used by the smoothing term. */
int fr_spidar_tension_solve(const fr_spidar_config *cfg, const fr_spidar_kin *kin, fr_vec3 force,
                            fr_vec3 torque, const double *t_prev, double *tension, int *iters);

/* ---------------------------------------------------------------- the device */

/* Messages from the device thread (never from the tick thread); the default prints to stderr
 * with a "spidar:" prefix. */
typedef void (*fr_spidar_log_fn)(void *user, const char *msg);
typedef struct fr_spidar_hooks {
    fr_spidar_log_fn log; /* NULL: stderr */
    void *user;
} fr_spidar_hooks;

/* Open a SPIDAR; cfg->board selects the transport (FR_SPIDAR_BOARD_NONE = kinematic device).
 * Errors: FR_ERR_INVAL (bad config), FR_ERR_NOTFOUND (no board and require_device),
 * FR_ERR_PERM (board found but not accessible: see config/udev/), FR_ERR_IO, FR_ERR_NOMEM. */
int fr_spidar_open(const fr_spidar_config *cfg, fr_device **out);
int fr_spidar_open_hooks(const fr_spidar_config *cfg, const fr_spidar_hooks *hooks,
                         fr_device **out);

/* Kinematic device (no hardware): feed counts per motor; the next read() uses them. Call from
 * one thread at a time. FR_ERR_UNSUPPORTED on a USB device. */
int fr_spidar_feed_counts(fr_device *dev, const int64_t *counts);

/* What the last write() computed (tick thread only): tensions per motor (N) and DAC values per
 * channel; *minimum is 1 when the minimum was posted instead. */
int fr_spidar_last_output(fr_device *dev, double *tension, int16_t dac[FR_SPIDAR_CHANNELS],
                          int *minimum);

enum fr_spidar_fault {
    FR_SPIDAR_FAULT_NONE = 0,
    FR_SPIDAR_FAULT_TIMEOUT,   /* a transfer timed out or samples stopped */
    FR_SPIDAR_FAULT_SHORT,     /* short IN packet */
    FR_SPIDAR_FAULT_STALL,     /* endpoint stalled */
    FR_SPIDAR_FAULT_GARBAGE,   /* implausible counter jump */
    FR_SPIDAR_FAULT_TRANSFER,  /* other transfer or submit error */
    FR_SPIDAR_FAULT_UNPLUGGED, /* device gone */
    FR_SPIDAR_FAULT_POSE,      /* lengths inconsistent with the geometry */
    FR_SPIDAR_FAULT_COUNT_
};

/* Transport counters and the last error (any thread except the tick thread). */
typedef struct fr_spidar_info {
    int link;                                /* enum fr_device_status of the transport */
    uint64_t samples;                        /* good IN samples */
    uint64_t packets_out;                    /* OUT packets completed */
    uint64_t minimum_packets;                /* of which at minimum tension */
    uint64_t faults[FR_SPIDAR_FAULT_COUNT_]; /* events per enum fr_spidar_fault */
    uint64_t reconnects;                     /* successful re-opens after an unplug */
    int last_fault;                          /* enum fr_spidar_fault */
    int last_libusb;                         /* libusb error or transfer status of the last fault */
    char last_error[160];                    /* e.g. "IN 0x86: LIBUSB_TRANSFER_TIMED_OUT" */
    int recalibration_advised;               /* 1 after a reconnect: counts may have restarted */
} fr_spidar_info;
int fr_spidar_get_info(fr_device *dev, fr_spidar_info *out);
const char *fr_spidar_fault_name(int fault);

/* ---------------------------------------------------------------- the registry entry */

/* driver: spidar (include/fureru/devices.h): a device file with the keys above, nested
 * (config/devices/spidar*.yaml), starting from `preset:` (spidar-4 | spidar-g6-x3r; default:
 * inferred from `strings:`, else spidar-4); probe() says whether an Sh4 (0x0CEC:0x0205) or
 * Simple (0x0CEC:0x0203) board is attached. */
typedef struct fr_driver_entry fr_driver_entry;
extern const fr_driver_entry fr_spidar_driver;

#ifdef __cplusplus
}
#endif
#endif
