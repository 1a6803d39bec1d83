/*
 * fureru joints: constraints between free bodies, solved at the velocity level with the constraint
 * contact rows by projected Gauss–Seidel/SOR (include/fureru/constraint.h, docs/constraint.md).
 *
 * A joint connects body a and body b (b null: the world) through a frame fixed in each (origin the
 * anchor, z the axis); in the joint's rest configuration the two frames coincide. Either body may
 * be a robot link (FR_BODY_LINK): the row then acts on the link's whole tree through its
 * articulated-body response (a loop closed through a tree, a link holding a body, two robots
 * joined; docs/constraint.md §4). The rows:
 *   ball     3: the anchors coincide
 *   hinge    5: ball + the z axes stay parallel; free: the angle about z (rad)
 *   slider   5: the frames keep their orientation and b's anchor stays on a's z axis; free: the
 *               position of b's anchor along a's z (m) (seed 001's prismatic joint)
 *   fixed    6: ball + the orientations
 *   distance 1: |anchor_b − anchor_a| = length; free: that distance (m). Length 0 (below
 *               1 nm) has no direction: the 3 rows of a ball joint.
 * On the free coordinate: limits (one-sided rows, speculative: the limit is met within the step,
 * not overshot), a velocity motor (a row w = rate − speed bounded by ±max·dt), an implicit
 * spring–damper (a soft row: cfm = 1/(dt·(dt·k + c)), the force −k·(x⁺ − rest) − c·ẋ⁺ at the
 * step's end, so that a stiff joint spring stays stable). A distance joint with stiffness > 0 is
 * a soft distance (its length row becomes the spring, about `rest`, not `length`; rest 0: the
 * anchors pulled together, −k·d). The springs' elastic energy ½·k·(x − rest)² is part of the
 * world's (fr_world_energy.spring).
 * Ball and fixed joints have no free coordinate: a limit, motor or spring on one is refused.
 * Drift: after the positions are integrated, the equality rows' position errors are projected
 * out (post-stabilisation: J M⁻¹ Jᵀ δ = −C solved by the same PGS, repeated until
 * max |C| <= 1e-10 m or rad), velocities untouched; no Baumgarte term enters the velocities.
 * The shapes of two bodies that a joint joins never collide with each other.
 */
#ifndef FURERU_JOINTS_H
#define FURERU_JOINTS_H

#include "fureru/world.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fr_cjoint_type {
    FR_CJOINT_BALL = 0,
    FR_CJOINT_HINGE = 1,
    FR_CJOINT_SLIDER = 2,
    FR_CJOINT_FIXED = 3,
    FR_CJOINT_DISTANCE = 4,
};

typedef struct fr_joint_def {
    char name[48];
    int type;                 /* enum fr_cjoint_type */
    fr_body_id a, b;          /* b null: the world; a must be dynamic (or b) */
    fr_pose frame_a, frame_b; /* the joint frame in each body's frame (the world's for b null) */
    double length;            /* distance joint: rest length, m (< 0: the distance at creation) */
    bool limit; /* hinge, slider, distance: lo <= coordinate <= hi; must hold at creation (to
                   FR_JOINT_START_TOL; a hinge's angle is taken in the turn within the limit) */
    double lo, hi;
    bool motor;         /* drive the coordinate's rate to motor_speed with at most */
    double motor_speed; /* motor_max (N or N·m); rad/s (at most FR_WORLD_MAX_JOINT_SPEED) or
                           m/s (at most FR_WORLD_MAX_SPEED) */
    double motor_max;
    double stiffness, damping; /* implicit spring–damper on the coordinate (N/m or N·m/rad; 0:
                                  none), about `rest`; ½·k·(x − rest)² finite at creation */
    double rest;               /* rad or m; a distance joint's: >= 0 */
} fr_joint_def;

/* A joint of the type with identity frames and nothing on its coordinate. */
fr_joint_def fr_joint_def_default(int type);
/* Fill def's frames so that the joint sits at world point `anchor` with its z along world `axis`
 * (any unit vector; ignored for ball and fixed) for the bodies' current poses. */
int fr_joint_def_at(const fr_world *w, fr_joint_def *def, fr_vec3 anchor, fr_vec3 axis);

/* How far (rad or m) a limit may exclude the coordinate at creation: the speculative limit row
 * closes the gap within one step, a velocity of gap/dt. */
#define FR_JOINT_START_TOL 1e-9
/* The free coordinate the joint defined by def would start at (its bodies' current poses): the
 * hinge angle (in the turn within its limit when one is), the slider position, the distance. */
int fr_joint_def_position(const fr_world *w, const fr_joint_def *def, double *out);

/* Start-up or between steps; capacity fr_world_def.max_joints. A joint on a robot link allocates
 * its rows' generalised workspace here (start-up); the step never allocates. FR_ERR_INVAL: no
 * dynamic side, the same body twice, a limit, motor or spring on a ball or fixed joint;
 * FR_ERR_RANGE: a value out of range, a limit excluding the start, a motor beyond the speed
 * limits, a spring whose start energy overflows. */
int fr_world_add_joint(fr_world *w, const fr_joint_def *def, int *out);
int fr_world_joint_count(const fr_world *w);
int fr_world_find_joint(const fr_world *w, const char *name, int *out);
/* Change the motor between steps (enable false turns it off); hinge, slider or distance. */
int fr_world_set_joint_motor(fr_world *w, int joint, bool enable, double speed, double max);

typedef struct fr_joint_state {
    double position;    /* the free coordinate (hinge angle unwrapped, rad; m) */
    double rate;        /* its rate, rad/s or m/s */
    double error;       /* largest equality violation after the step (m or rad) */
    double motor_force; /* the motor's force or torque over the last step, N or N·m */
    double motor_work;  /* J, since creation */
    fr_vec3 force,
        torque; /* the joint's wrench on b (about b's centre of mass) last step, N, N·m */
} fr_joint_state;
int fr_world_joint_state(const fr_world *w, int joint, fr_joint_state *out);

/* The constraint stage's solver over the last step and the run. */
typedef struct fr_world_constraint_stats {
    int rows;              /* rows in the last step (joints and constraint contacts) */
    int contact_points;    /* constraint contact points in the last step */
    int iterations;        /* PGS sweeps of the last step */
    double residual;       /* its natural-map residual, m/s */
    int projections;       /* position projections of the last step */
    double position_error; /* largest equality error after them, m or rad */
    int max_iterations;    /* over the run */
    double max_residual;
    double max_position_error;
    long steps;       /* steps with rows */
    long unconverged; /* steps whose solve stopped at constraint_iterations */
    long dropped;     /* rows that did not fit (capacity), counted */
    int direct_rows;  /* the exact block's capacity: past this many equality rows in a step the
                         joints are solved by PGS alone (docs/constraint.md §2) */
    /* joints on bodies in penalty contact, solved inside the contact step (docs/world.md,
     * "Joints in the implicit step"): steps that took their rows there, steps that had to leave
     * them all to this stage (more rows than solve_rows), and that capacity */
    long solve_steps, solve_left_out;
    int solve_rows;
} fr_world_constraint_stats;
void fr_world_constraint_stats_get(const fr_world *w, fr_world_constraint_stats *out);

#ifdef __cplusplus
}
#endif
#endif
