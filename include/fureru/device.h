/*
 * fureru haptic device interface: a small vtable every driver fills (spidar, virtual, ...).
 *
 * Threading: read/write are called from the 1 kHz tick thread and must not block, allocate,
 * lock or print; a driver that needs I/O runs its own device thread and exchanges the latest
 * state and command through lock-free mailboxes. open/close/calibrate run on the main thread.
 * Forces reach a driver only through the safety chain (include/fureru/haptic.h).
 */
#ifndef FURERU_DEVICE_H
#define FURERU_DEVICE_H

#include <stdint.h>

#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Static description, as CHAI3D's device tables, in the device's own frame (z up). */
typedef struct fr_device_desc {
    char name[64];            /* instance name, e.g. "spidar-g6" */
    char driver[32];          /* driver name, e.g. "spidar", "virtual" */
    int dof_sensed;           /* 3 (position) or 6 (pose) */
    int dof_forced;           /* 3 (force) or 6 (force and torque) */
    double max_force;         /* N, magnitude */
    double max_torque;        /* N·m, magnitude (0 for 3-DOF) */
    double max_stiffness;     /* N/m the device renders stably */
    double max_damping;       /* N·s/m */
    double max_rot_stiffness; /* N·m/rad */
    double max_rot_damping;   /* N·m·s/rad */
    fr_vec3 workspace_min;    /* m, axis-aligned box in the device frame */
    fr_vec3 workspace_max;    /* m */
    /* s: how old a sample is when read, counted from the force write that was held while its
     * motion happened (sensing, transport, filtering delay); 0 when none or unknown. The
     * passivity observer pairs each reported motion with the force held during it
     * (fr_passivity_params.delay); when unsure, declare more, not less. */
    double latency;
} fr_device_desc;

enum fr_device_status {
    FR_DEVICE_OK = 0,
    FR_DEVICE_STALE = 1,        /* no fresh sample since the last read */
    FR_DEVICE_DISCONNECTED = 2, /* unplugged or transport failed; driver keeps trying */
    FR_DEVICE_FAULT = 3,        /* protocol error, stall, garbage; outputs at minimum */
};

/* What the device reports each tick. */
typedef struct fr_device_state {
    fr_pose pose;     /* grip pose in the device frame (orientation identity for 3-DOF) */
    fr_vec3 vel;      /* m/s, filtered */
    fr_vec3 angvel;   /* rad/s, filtered (zero for 3-DOF) */
    uint32_t buttons; /* bit mask */
    int status;       /* enum fr_device_status */
    uint64_t seq;     /* sample counter; unchanged when no new sample arrived */
} fr_device_state;

/* What the world asks the device to render (after the safety chain). */
typedef struct fr_device_cmd {
    fr_vec3 force;  /* N, device frame, applied to the user's hand */
    fr_vec3 torque; /* N·m */
} fr_device_cmd;

typedef struct fr_device fr_device;

typedef struct fr_device_ops {
    /* Latest state; never blocks. Returns FR_OK or a negative FR_ERR_*. */
    int (*read)(fr_device *dev, fr_device_state *out);
    /* Post a command; never blocks. */
    int (*write)(fr_device *dev, const fr_device_cmd *cmd);
    /* Drop every actuator to its minimum (strings to minimum tension) at once; never blocks and
     * is safe to call from a signal handler path and after errors. */
    void (*set_minimum)(fr_device *dev);
    /* Define the current grip pose as the home pose (optional; NULL when not supported). */
    int (*calibrate)(fr_device *dev);
    /* Stop threads, leave the device at minimum, free everything. */
    void (*close)(fr_device *dev);
} fr_device_ops;

struct fr_device {
    const fr_device_ops *ops;
    fr_device_desc desc;
    void *impl; /* driver-private */
};

static inline int fr_device_read(fr_device *d, fr_device_state *s)
{
    return d->ops->read(d, s);
}
static inline int fr_device_write(fr_device *d, const fr_device_cmd *c)
{
    return d->ops->write(d, c);
}
static inline void fr_device_set_minimum(fr_device *d)
{
    d->ops->set_minimum(d);
}

#ifdef __cplusplus
}
#endif
#endif
