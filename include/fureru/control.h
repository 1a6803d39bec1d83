/*
 * fureru control: controllers for articulated robots that run inside the physics step (seed 000:
 * "put the controller in the engine"). They only write joint PD targets (q_ref, qd_ref) and gains
 * of an fr_tree_data; the tree's implicit PD (include/fureru/articulated.h) turns them into
 * forces at the next state, so any gain is stable.
 *
 * - Hand control through the Jacobian: the end-effector error Δx becomes a joint correction by
 *   damped least squares, Δθ = Jᵀ(JJᵀ + λ²I)⁻¹Δx (fr_tree_ik_dls), added to the joint targets
 *   (seed 000: hand error → joint-angle error → target angles). The error is taken at the target
 *   configuration θ_goal (a kinematic Newton iteration on the model, rate-limited by max_speed),
 *   not at the measured one: feeding measured angles back through a saturating motor makes the
 *   targets chatter near singularities. Gravity compensation (RNEA) as feed-forward torque lets the
 *   real hand reach θ_goal's hand position under load; an optional integral of the measured hand
 *   error shifts the IK target to remove what other loads (contacts) leave. Redundant joints are
 *   pulled towards the start posture in the null space. A target out of reach leaves the arm
 *   stretched towards it, targets bounded (DLS).
 * - Gait: legs in groups whose foot tips follow, in the body frame, a flat stance line and a
 *   half-ellipse swing (together the ellipse of seed 004 §4.3), through per-leg inverse
 *   kinematics into joint targets. Commands: forward/lateral speed and turn rate; each foot's
 *   ellipse is laid along the body velocity at that foot, so turning and reversing change its
 *   horizontal direction.
 *
 * Create/destroy allocate; the per-step functions (fr_hand_update, fr_gait_update and the
 * fr_controller_fn wrappers) never allocate, lock or print.
 */
#ifndef FURERU_CONTROL_H
#define FURERU_CONTROL_H

#include <stdbool.h>

#include "fureru/articulated.h"
#include "fureru/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- hand control */

typedef struct fr_hand_def {
    int link;          /* end-effector link */
    fr_vec3 point;     /* controlled point on it, link coordinates, m */
    int base_link;     /* joints of this link and above stay as they are (-1: all joints); the
                          moved joints must not include a free joint */
    bool orientation;  /* also drive the link's orientation to the target */
    double lambda;     /* DLS damping, m (and rad); > 0 keeps Δθ bounded at singularities */
    double max_speed;  /* largest target speed, rad/s or m/s (per step: max_speed·dt) */
    int iterations;    /* IK iterations per step (each limited by max_speed·dt / iterations) */
    bool gravity_comp; /* feed-forward the gravity torques of the moved joints (RNEA) */
    double integral;   /* 1/s: gain of the integral of the measured hand error (0: none) */
    double posture;    /* 0..1: null-space pull towards the posture at the first update */
    double kp, kd;     /* gains set on the moved joints at the first update (<= 0: keep) */
} fr_hand_def;
/* point 0, base -1, position only, λ 0.02, max_speed 5, 2 iterations, gravity compensation on,
 * no integral, posture 0.1, kp 0, kd 0. */
fr_hand_def fr_hand_def_default(void);

typedef struct fr_hand fr_hand;
/* Checks the def against the tree (FR_ERR_INVAL for bad links). Allocates. */
int fr_hand_create(const fr_tree *t, const fr_hand_def *def, fr_hand **out);
void fr_hand_destroy(fr_hand *h);
/* Target point in the world (m) and, with def.orientation, the link orientation. */
void fr_hand_set_target(fr_hand *h, fr_vec3 pos, fr_quat rot);
/* One control step (dt s): reads d (q, the last forward kinematics), writes q_ref, qd_ref and,
 * with gravity compensation, tau of the moved joints. Never allocates. */
int fr_hand_update(fr_hand *h, const fr_tree *t, fr_tree_data *d, double dt);
/* Current error of the real hand: target − hand point (m, world) and the orientation error (rad,
 * world rotation vector; zero without orientation), from d's last forward kinematics. */
void fr_hand_error(const fr_hand *h, const fr_tree_data *d, fr_vec3 *pos_err, fr_vec3 *rot_err);
/* fr_controller_fn for fr_world_set_robot_controller (user = the fr_hand). */
void fr_hand_controller(fr_world *w, int robot, void *user);

/* ---------------------------------------------------------------- gait */

enum { FR_GAIT_MAX_LEGS = 8, FR_GAIT_MAX_CHAIN = 8, FR_GAIT_MAX_BODY = 8 };

typedef struct fr_gait_leg_def {
    int hip_link;  /* first link of the leg: its joint and every joint below it down to the foot
                      link are the leg's (1-DOF joints; fixed ones are carried along) */
    int foot_link; /* the link that carries the foot tip */
    fr_vec3 tip;   /* foot tip in foot-link coordinates, m (e.g. the foot sphere's centre) */
    double phase;  /* phase offset in cycles, [0, 1): the tripods are 0 and 0.5 */
} fr_gait_leg_def;

typedef struct fr_gait_def {
    int body_link; /* the gait's reference frame (the free base); an ancestor of every hip */
    int nlegs;
    fr_gait_leg_def legs[FR_GAIT_MAX_LEGS];
    double period;         /* s, one gait cycle */
    double duty;           /* fraction of the cycle a foot is on the ground, (0, 1); 0.5: tripod */
    double step_height;    /* m, swing lift of the foot tip */
    double height;         /* m, body-frame origin above the stance line; <= 0: from the initial
                              posture (the tree's q0) */
    double max_stride;     /* m, largest stance travel of any foot; faster commands are scaled */
    double speed;          /* m/s, forward (body x) */
    double lateral;        /* m/s, sideways (body y) */
    double turn_rate;      /* rad/s, about body z (positive: to the left) */
    double ramp;           /* s, commands, lift and stride fade in over this time from start */
    double leg_kp, leg_kd; /* PD gains of the leg joints, N·m/rad, N·m·s/rad */
    double body_kp, body_kd; /* of the body joints below */
    int nbody;
    int body_links[FR_GAIT_MAX_BODY];  /* links whose (1-DOF) joints are body joints */
    double body_amp[FR_GAIT_MAX_BODY]; /* rad or m: target q0 + amp·sin(2π·phase + body_phase) */
    double body_phase[FR_GAIT_MAX_BODY]; /* rad */
    int ik_iters;                        /* DLS iterations per leg per step (warm-started) */
    double ik_lambda;                    /* DLS damping, m */
    double ik_posture; /* null-space pull of redundant legs towards the initial posture, 0..1 */
    bool stand_idle;   /* with all commands 0 the feet stop lifting (fade over half a period) and
                          the robot stands on all legs; otherwise it steps in place */
} fr_gait_def;
/* body 0, no legs, period 0.6 s, duty 0.5, step 0.03 m, height from posture, max stride 0.1 m,
 * commands 0, ramp 0.5 s, leg gains 200/2, body gains 400/4, IK 2 iterations, λ 0.005,
 * posture 0.1, stand when idle. */
fr_gait_def fr_gait_def_default(void);

typedef struct fr_gait fr_gait;
/* Builds each leg's kinematic chain from the tree (FR_ERR_INVAL: a hip not below the body, a
 * foot not below its hip, a spherical/free joint in a leg, too many joints) and the neutral foot
 * positions from the tree's initial posture (q0). Allocates. */
int fr_gait_create(const fr_tree *t, const fr_gait_def *def, fr_gait **out);
void fr_gait_destroy(fr_gait *g);
/* Change the commands at any time: stance feet follow at once, swing feet re-aim. */
void fr_gait_set_command(fr_gait *g, double speed, double lateral, double turn_rate);
/* One control step of dt s: advances the gait clock, moves the foot targets, solves the legs'
 * IK and writes q_ref, qd_ref, kp, kd of leg and body joints. Never allocates. */
int fr_gait_update(fr_gait *g, const fr_tree *t, fr_tree_data *d, double dt);
/* fr_controller_fn for fr_world_set_robot_controller (user = the fr_gait). */
void fr_gait_controller(fr_world *w, int robot, void *user);

/* Introspection (tests, viewers): gait time (s), the foot target of leg i in the body frame (m),
 * whether it is in stance, and the commanded foot tip after IK (where the targets put it). */
double fr_gait_time(const fr_gait *g);
int fr_gait_leg_count(const fr_gait *g);
fr_vec3 fr_gait_foot_target(const fr_gait *g, int leg);
bool fr_gait_leg_in_stance(const fr_gait *g, int leg);
fr_vec3 fr_gait_foot_ik(const fr_gait *g, int leg);
/* Largest IK residual |target − tip(q_ref)| over the legs in the last step, m. */
double fr_gait_ik_residual(const fr_gait *g);

#ifdef __cplusplus
}
#endif
#endif
