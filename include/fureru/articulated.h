/*
 * fureru articulated: tree-structured multibodies in reduced coordinates (Featherstone).
 *
 * A tree (fr_tree) is the constant model: links added parent-first by a builder, then frozen by
 * fr_tree_finalize(). A fr_tree_data holds everything that changes (state, inputs, outputs and
 * the algorithms' workspace); it is allocated once and nothing is allocated afterwards.
 *
 * Frames and conventions (RBDA, Featherstone 2008)
 * - Every link has one joint to its parent (the world for parent == -1). The joint frame is
 *   placed in the parent link frame by `joint_pose` (URDF <joint><origin>); the link frame is the
 *   joint frame moved by the joint (at q = 0 the two coincide). Mass properties are given in the
 *   link frame (URDF <link><inertial>).
 * - Spatial vectors are (angular; linear). Link velocities are body twists: (ω; v) with v the
 *   velocity of the link-frame origin, both in link coordinates.
 * - Position (q, nq entries) and velocity (qd, nv entries) layouts, per joint, in link order:
 *     FIXED      nq 0  nv 0
 *     REVOLUTE   nq 1  nv 1   angle (rad) about `axis`; qd rad/s; force N·m
 *     PRISMATIC  nq 1  nv 1   displacement (m) along `axis`; qd m/s; force N
 *     SPHERICAL  nq 4  nv 3   q = quaternion (w, x, y, z) of the link frame in the joint frame;
 *                             qd = angular velocity in LINK coordinates (rad/s); force N·m
 *     FREE       nq 7  nv 6   q = (px, py, pz, qw, qx, qy, qz): link origin and orientation in
 *                             the joint frame (the world for a root); qd = body twist
 *                             (ωx, ωy, ωz, vx, vy, vz) in LINK coordinates; force = body wrench
 *                             (n; f) in link coordinates about the link origin.
 *   Integration is q⁺ = q ⊕ qd⁺·dt with the exponential map (SO(3) for spherical, SE(3) for
 *   free), so quaternions stay on the unit sphere.
 * - External forces are world-frame spatial forces about the WORLD ORIGIN, accumulated per link
 *   in data->f_ext (fr_tree_add_ext_force adds a force at a world point). fr_tree_step consumes
 *   and clears them.
 *
 * Joint forces in fr_tree_step (all 1-DOF and spherical joints), see docs/articulated.md:
 *   τ = τ_ff + τ_pd + τ_damp + τ_limit, with the PD and the damper evaluated IMPLICITLY at the
 *   next state:  τ_pd = −Kp (q − q_ref + qd⁺ dt) − Kd (qd⁺ − qd_ref),  τ_damp = −c qd⁺,
 *   qd⁺ = qd + qdd dt. Inside ABA this adds H = armature + (Kp dt + Kd + c) dt to the joint's
 *   D_i = S_iᵀ U_i, so K = 1e6 at 1 kHz is stable. Motor force (τ_ff + τ_pd) is clamped to
 *   ±effort_limit (spherical: its norm, keeping the direction), and the joint is then re-solved
 *   with that force held constant. Free joints take tau as a body wrench; PD, damping, armature
 *   and limits do not apply to them.
 * Motor speed limit (1-DOF joints with max_velocity > 0): a motor force that would push the joint
 *   on beyond ±max_velocity at the step's end is cut to zero for that step (gravity, contacts and
 *   the other joints may still move it faster; counted in velocity_limited).
 * Mimic joints: q_f = m·q_j + o is held by a constraint force λ (on the follower, −m·λ on the
 *   joint followed) solved after the step's ABA with the same articulated inertias (implicit
 *   terms included), so that q_f⁺ = m·q_j⁺ + o exactly at the step's end (round-off); λ is part
 *   of tau_out.
 * Joint limits (1-DOF joints): active when q, or the prediction q + qd dt, is past a limit.
 *   limit_k > 0: an implicit one-sided spring-damper (limit_k, limit_d) toward the limit.
 *   limit_k == 0 (default): hard — the joint acceleration is prescribed so that q⁺ lands exactly
 *   on the limit (the K → ∞ form of the same spring; the tree feels the right impulse).
 *   Either way a limit that would pull the joint back into the limit is released.
 *
 * Integrators (data->integrator): FR_INTEGRATOR_EULER (default) is the semi-implicit Euler
 * above, one ABA per step; it is stable with stiff gains but not energy conserving (it loses
 * ~20 % of a chaotic double pendulum's energy over 10 s at 1 ms). FR_INTEGRATOR_VERLET is a
 * time-reversible velocity Verlet (second order, 0.02 % on the same pendulum) with the joint
 * forces as an implicit kick; it costs about 2.5 Euler steps. Its qd at a step boundary holds
 * the end half kick, e.g. dt/2·g_joint for a joint resting on a limit.
 *
 * Link kinematics are cached by q: the algorithms recompute link frames only when q changed
 * since the last call. pose and vel are outputs of fr_tree_forward_kinematics (also run at the
 * end of fr_tree_step and by fr_tree_data_reset); the point, Jacobian, energy, momentum and IK
 * helpers read them.
 */
#ifndef FURERU_ARTICULATED_H
#define FURERU_ARTICULATED_H

#include <stdbool.h>
#include <stddef.h>

#include "fureru/base.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fr_joint_type {
    FR_JOINT_FIXED = 0,
    FR_JOINT_REVOLUTE,
    FR_JOINT_PRISMATIC,
    FR_JOINT_SPHERICAL,
    FR_JOINT_FREE,
} fr_joint_type;

/* How fr_tree_step evaluates the joint PD (the explicit form exists to show why not). */
typedef enum fr_pd_mode {
    FR_PD_IMPLICIT = 0, /* at the next state (stable for any gains) */
    FR_PD_EXPLICIT,     /* at the current state (unstable for stiff gains) */
} fr_pd_mode;

/* The time integrator of fr_tree_step. */
typedef enum fr_integrator {
    FR_INTEGRATOR_EULER = 0, /* semi-implicit Euler: one ABA per step (the default) */
    FR_INTEGRATOR_VERLET,    /* time-reversible velocity Verlet: ~3–4 ABAs per step, second
                                order, no secular energy drift; joint forces as an implicit kick */
} fr_integrator;

/* One link and the joint to its parent. Start from fr_link_def_default(). */
typedef struct fr_link_def {
    const char *name;       /* link name, unique, copied (NULL → "link<i>") */
    const char *joint_name; /* joint name, unique among joints, copied (NULL → "joint<i>") */
    int parent;             /* parent link index (< this link's), -1 = world */
    fr_joint_type type;
    fr_pose joint_pose;  /* joint frame in the parent link frame (m, unit quaternion) */
    fr_vec3 axis;        /* revolute/prismatic axis in the joint frame (normalised on add) */
    double mass;         /* kg (0 allowed for massless frames, but the tree must be solvable) */
    fr_vec3 com;         /* centre of mass in the link frame, m */
    fr_mat3 inertia;     /* rotational inertia about the COM in link axes, kg·m² */
    double damping;      /* viscous joint damping c, N·m·s/rad or N·s/m (implicit) */
    double armature;     /* rotor inertia added to the joint, kg·m² or kg */
    bool limited;        /* 1-DOF joints: enforce [q_min, q_max] */
    double q_min, q_max; /* rad or m */
    double limit_k;      /* limit spring, N·m/rad or N/m; 0 = hard limit */
    double limit_d;      /* limit damper, N·m·s/rad or N·s/m (with limit_k > 0) */
    double effort_limit; /* |motor force| cap, N·m or N; INFINITY = none */
    double kp, kd;       /* default PD gains (copied into data->kp, kd; 0 = no PD) */
    double max_velocity; /* 1-DOF joints: the motor (τ_ff + PD) cannot push the joint faster
                            than this, rad/s or m/s (0 = no limit; see "Motor speed limit") */
    /* 1-DOF joints: follow another 1-DOF joint (not itself a follower), q = mimic_multiplier ·
     * q_joint + mimic_offset, held exactly by a constraint force solved in each step (NULL: none;
     * the name is copied) */
    const char *mimic_joint;
    double mimic_multiplier, mimic_offset;
    double q0;      /* 1-DOF joints: initial position and PD target, rad or m */
    fr_quat q0_rot; /* spherical/free: initial orientation */
    fr_vec3 q0_pos; /* free: initial position, m */
} fr_link_def;

fr_link_def fr_link_def_default(void);

typedef struct fr_tree fr_tree;

/* An empty tree to build. Allocates (start-up only). NULL on out-of-memory. */
fr_tree *fr_tree_create(void);
void fr_tree_destroy(fr_tree *t);
/* Add a link; returns its index (>= 0) or FR_ERR_INVAL (bad parent, name clash, bad inertia,
 * zero axis), FR_ERR_LOCKED (already finalised), FR_ERR_NOMEM. */
int fr_tree_add_link(fr_tree *t, const fr_link_def *def);
/* Freeze the model (q/qd layouts); no links can be added afterwards. FR_ERR_INVAL for an
 * empty tree. */
int fr_tree_finalize(fr_tree *t);

int fr_tree_nlinks(const fr_tree *t);
int fr_tree_nq(const fr_tree *t);
int fr_tree_nv(const fr_tree *t);
/* -1 when absent. */
int fr_tree_link_find(const fr_tree *t, const char *name);
int fr_tree_joint_find(const fr_tree *t, const char *joint_name); /* → link index */
/* The stored definition of link i (names owned by the tree); NULL when out of range. */
const fr_link_def *fr_tree_link_def(const fr_tree *t, int i);
int fr_tree_link_q_index(const fr_tree *t, int i); /* first entry of link i's joint in q */
int fr_tree_link_v_index(const fr_tree *t, int i); /* first entry in qd */
int fr_tree_link_nv(const fr_tree *t, int i);

/* Mutable state, inputs and outputs; arrays sized by the tree. Fields may be read and written
 * directly between calls. */
typedef struct fri_tree_ws fri_tree_ws;
typedef struct fr_tree_data {
    /* state */
    double *q;  /* [nq] joint positions (layout above) */
    double *qd; /* [nv] joint velocities */
    /* inputs, kept across steps */
    fr_vec3 gravity; /* m/s², default (0, 0, −9.81) */
    double *tau;     /* [nv] feed-forward joint force (motor), N·m or N */
    double *q_ref;   /* [nq] PD target positions (spherical: quaternion) */
    double *qd_ref;  /* [nv] PD target velocities */
    double *kp;      /* [nv] PD stiffness, N·m/rad or N/m */
    double *kd;      /* [nv] PD damping, N·m·s/rad or N·s/m */
    fr_svec *f_ext;  /* [nlinks] world wrench (n about the world origin; f), N·m and N */
    /* [nlinks] implicit external inertia: a symmetric positive semi-definite 6×6 (world axes,
     * about the world origin, (ang; lin) order) added to the link's inertia in the step's ABA,
     * for an external wrench that depends on the link's new velocity: a stiff contact or spring
     * taken at the step's end, f = f0 − C·ν⁺, with ν⁺ = ν + dt·a (Euler), is
     * f_ext = f0 − C·ν plus I_ext = dt·C. Cleared by fr_tree_step, like f_ext. */
    fr_mat6 *I_ext;
    bool *has_I_ext;    /* [nlinks] */
    fr_pd_mode pd_mode; /* default FR_PD_IMPLICIT */
    /* true: the step leaves the mimic constraints to the caller (the world's constraint stage
     * solves them with its other rows through fr_tree_impulse_response); default false */
    bool mimic_external;
    fr_integrator integrator; /* default FR_INTEGRATOR_EULER */
    /* outputs */
    double *qdd;     /* [nv] joint accelerations of the last step / fr_tree_aba */
    double *tau_out; /* [nv] total joint force of the last step (motor + damping + limit) */
    /* [nv] the joint limits' share of tau_out (soft and hard) and the joint dampers' (−c·qd⁺):
     * passive elements, not drives, which the world leaves out of the joints' work (a soft
     * limit's energy is in fr_tree_limit_energy; a damper, a limit's damping and a hard limit
     * only take energy) */
    double *tau_limit;
    double *tau_damper;
    fr_pose *pose;     /* [nlinks] link frames in the world (fr_tree_forward_kinematics) */
    fr_svec *vel;      /* [nlinks] link twists in link coordinates */
    double revised_dv; /* the last fr_tree_step_revise: the largest change it made to a link's
                          velocity, m/s (its centre of mass; angular times the link's radius of
                          gyration √(tr I_c / m)) */
    /* counters (contained faults) and the last failure */
    unsigned long velocity_limited; /* joint-steps whose motor was cut at max_velocity */
    unsigned long mimic_singular;   /* steps whose mimic constraints could not be solved */
    int fault_link;  /* after FR_ERR_NUMERIC: the link whose joint acceleration was not finite */
    fri_tree_ws *ws; /* internal workspace */
    fr_arena own;    /* backing memory when created by fr_tree_data_create */
} fr_tree_data;

/* Bytes fr_tree_data_create_in takes from an arena (including alignment padding). */
size_t fr_tree_data_size(const fr_tree *t);
/* Allocate data once (the tree must be finalised); initial state from fr_tree_data_reset. */
fr_tree_data *fr_tree_data_create(const fr_tree *t);
/* The same, carved from a caller's arena (freed with the arena; do not call ..._destroy). */
fr_tree_data *fr_tree_data_create_in(const fr_tree *t, fr_arena *a);
void fr_tree_data_destroy(fr_tree_data *d);
/* q = q0, qd = 0, refs = q0, gains from the model, no forces; then forward kinematics. */
void fr_tree_data_reset(const fr_tree *t, fr_tree_data *d);
/* Forget what the steps carried from one to the next (the stiff solve's warm start, the last
 * joint forces and accelerations, the mimic impulses), the state and the commands kept: the
 * next step then runs as the first after fr_tree_data_reset would from this state. */
void fr_tree_data_forget(const fr_tree *t, fr_tree_data *d);

/* Link poses (data->pose) and twists (data->vel) from q and qd. */
void fr_tree_forward_kinematics(const fr_tree *t, fr_tree_data *d);

/* Forward dynamics by the articulated-body algorithm (in world coordinates): data->qdd from q,
 * qd, tau, f_ext and gravity (rigid-body dynamics plus armature only: no PD, damping or limits).
 * Does not update pose and vel. */
void fr_tree_aba(const fr_tree *t, fr_tree_data *d);
/* Inverse dynamics (recursive Newton–Euler): tau_out[nv] = joint forces giving qdd[nv] at the
 * current q, qd, gravity and f_ext. tau_out may not alias qdd. */
void fr_tree_rnea(const fr_tree *t, fr_tree_data *d, const double *qdd, double *tau_out);
/* Joint-space mass matrix M (nv×nv, row-major, armature included) by the composite-rigid-body
 * algorithm. */
void fr_tree_crba(const fr_tree *t, fr_tree_data *d, double *M);

/* What each joint coordinate moves at the current q, armature included, for a check before
 * stepping (start-up; it changes no state but the workspace): D[nv], ABA's D = Sᵀ Iᴬ S with the
 * joints beyond free (for a joint of more DOF, the pivots of its D's LDLᵀ), and locked[nv], the
 * same with the joints just beyond it locked (the scale of D's rounding). 0 is a joint the step
 * cannot accelerate: its child a point mass on its axis, and the joints beyond letting the rest
 * stay put. A pivot not above FR_TREE_SINGULAR_REL·locked and FR_TREE_SINGULAR_ABS is taken as
 * 0: left out of its parent's inertia, as it would be exactly, so that each such joint shows,
 * not the ones above it. */
#define FR_TREE_SINGULAR_REL 1e-9
#define FR_TREE_SINGULAR_ABS 1e-14
void fr_tree_joint_inertias(const fr_tree *t, fr_tree_data *d, double *D, double *locked);

/* One step of dt seconds with data->integrator: ABA with the implicit joint forces above, then
 * (Euler) qd⁺ = qd + qdd dt, q⁺ = q ⊕ qd⁺ dt; f_ext cleared; forward kinematics of the new
 * state. qdd is the step's mean acceleration (qd⁺ − qd)/dt. FR_ERR_NUMERIC (q, qd left as they
 * were) when the result is not finite; FR_ERR_INVAL for dt <= 0. */
int fr_tree_step(const fr_tree *t, fr_tree_data *d, double dt);
/* fr_tree_step without the forward kinematics of the new state, for a caller that repeats the
 * step from the same start (the world's link-contact iteration): pose and vel are left as they
 * were. With FR_INTEGRATOR_EULER the step's kinematics stay those of its start, so that, once q is
 * put back to the start, fr_tree_velocities gives the links' twists J(q₀)·qd⁺ without
 * recomputing the configuration. */
int fr_tree_step_no_kinematics(const fr_tree *t, fr_tree_data *d, double dt);
/* The last FR_INTEGRATOR_EULER step (fr_tree_step_no_kinematics) taken again from the same start
 * (q, qd, commands, gravity, dt), its external forces changed by f_ext (added since, the change
 * only; no external inertia): the solve is linear in those forces while its articulated inertias
 * and joint modes hold, so this costs one pass up and one down instead of an ABA, and gives what
 * the full step with the changed forces gives, to rounding. f_ext is cleared. Returns FR_OK, or 1
 * (q and qd untouched) when there is no such step to revise (another solve since, a step whose
 * joint modes were revised, mimic joints) or the change would alter a joint's mode: take the
 * full step then, its forces whole. FR_ERR_NUMERIC as fr_tree_step. data->revised_dv tells how
 * much the revision moved the links (an iteration's convergence measure). */
int fr_tree_step_revise(const fr_tree *t, fr_tree_data *d, double dt);
/* Link twists (data->vel) from qd at the configuration of the last kinematics or Euler step's
 * start: valid only while q is that configuration's (pose is not touched). */
void fr_tree_velocities(const fr_tree *t, fr_tree_data *d);

/*
 * Constraint impulses on a tree (docs/constraint.md, "Rows on articulated trees"). After
 * fr_tree_response_prepare, fr_tree_impulse_response gives the change of qd that a generalised
 * impulse p (nv; Jᵀλ for a row J in generalised coordinates) makes: Δqd = R p, with R the
 * tree's inverse inertia from the articulated-body recursion (one leaves-to-root bias pass and
 * one root-to-leaves acceleration pass on the articulated inertias, no velocity products,
 * gravity or external forces): O(n) per impulse, and R is symmetric positive (semi)definite.
 * prepare(step = true) right after an Euler fr_tree_step with q put back to the step's start
 * uses the step's own articulated inertias, so R includes the implicit PD, damping and armature
 * terms, the hard limits (a prescribed joint does not move) and the contacts' external inertias
 * of that step: the impulse then acts on the step exactly as a force inside it would.
 * step = false (or a Verlet step) forms the articulated inertias at the current q with armature
 * only: R = M(q)⁻¹. Both leave the kinematics (pose, vel) at the current q and qd.
 */
void fr_tree_response_prepare(const fr_tree *t, fr_tree_data *d, bool step);
void fr_tree_impulse_response(const fr_tree *t, fr_tree_data *d, const double *p, double *dqd);
/* Once a velocity change dqd from impulses (prepared with step = true) is applied to an Euler
 * step: tau_out gets the joint forces' answer to it, −(H − armature)·dqd/dt (the implicit PD,
 * damping and soft-limit terms act at the step's end velocity, which moved). Not for a hard
 * limit's force (it is left as the step found it) nor a Verlet step (nothing done). */
void fr_tree_impulse_forces(const fr_tree *t, fr_tree_data *d, const double *dqd, double dt);

/* q ⊕ v·dt into q_out (q_out may alias q): the integrator's position update on its own. */
void fr_tree_integrate_q(const fr_tree *t, const double *q, const double *v, double dt,
                         double *q_out);

/* Force f (N) at world point p (m) on a link, added to data->f_ext. */
void fr_tree_add_ext_force(fr_tree_data *d, int link, fr_vec3 p_world, fr_vec3 f_world);
/* Pure torque (N·m, world axes). */
void fr_tree_add_ext_torque(fr_tree_data *d, int link, fr_vec3 n_world);
/* Add to I_ext[link] (kg, kg·m, kg·m²: world axes about the world origin, symmetric). */
void fr_tree_add_ext_inertia(fr_tree_data *d, int link, const fr_mat6 *I);
void fr_tree_clear_ext(const fr_tree *t, fr_tree_data *d);

/* World-point helpers on pose and vel of the last forward kinematics. */
fr_vec3 fr_tree_point_world(const fr_tree_data *d, int link, fr_vec3 p_local);
fr_vec3 fr_tree_point_velocity(const fr_tree_data *d, int link, fr_vec3 p_world);
/* Jacobian of a point fixed to `link` (currently at p_world): rows of Jang (3×nv) map qd to the
 * link's world angular velocity, rows of Jlin (3×nv) to the point's world velocity. Either may
 * be NULL. Row-major. Uses the last forward kinematics. */
void fr_tree_point_jacobian(const fr_tree *t, const fr_tree_data *d, int link, fr_vec3 p_world,
                            double *Jang, double *Jlin);

/* The tree's effective mass at a point, as a step of dt sees it: 1/(uᵀ J M̃⁻¹ Jᵀ u) for a unit
 * direction u at world point p fixed to `link`, M̃ the mass matrix with the step's implicit joint
 * terms (armature, damping, implicit PD) — what a force there moves within one step. Joint limits
 * are left out (a limit holds one way only) and so are external inertias.
 * fr_tree_point_mass_prepare forms the articulated inertias (O(n), on the current q and qd; it
 * overwrites the workspace, and the next step forms its own again); then each
 * fr_tree_point_inv_mass is one pass from the link to the root and back (O(depth)) and returns
 * uᵀ J M̃⁻¹ Jᵀ u (1/kg; 0 where the point cannot move, e.g. a fixed base). Never allocates. */
int fr_tree_point_mass_prepare(const fr_tree *t, fr_tree_data *d, double dt);
double fr_tree_point_inv_mass(const fr_tree *t, fr_tree_data *d, int link, fr_vec3 p, fr_vec3 u);
/* The whole 3×3 J M̃⁻¹ Jᵀ at p (world axes, 1/kg) in one pass for the three axes. */
fr_mat3 fr_tree_point_inv_mass3(const fr_tree *t, fr_tree_data *d, int link, fr_vec3 p);

/* Energies (J) and momentum on the last forward kinematics: potential = −Σ m g·c_world. */
double fr_tree_kinetic_energy(const fr_tree *t, const fr_tree_data *d);
/* The rotors' kinetic energy the links' sum leaves out: Σ ½·armature·q̇² over the joints that
 * carry an armature (it is in the mass matrix, so the joint forces that spin the rotors do work
 * on it). */
double fr_tree_rotor_energy(const fr_tree *t, const fr_tree_data *d);
double fr_tree_potential_energy(const fr_tree *t, const fr_tree_data *d);
/* The soft limits' elastic energy, Σ ½·limit_k·(q − q_lim)² over the 1-DOF joints past a limit
 * with limit_k > 0 (a hard limit holds none). */
double fr_tree_limit_energy(const fr_tree *t, const fr_tree_data *d);
/* Total spatial momentum in world coordinates about the world origin: (angular; linear). */
fr_svec fr_tree_momentum(const fr_tree *t, const fr_tree_data *d);
/* Centre of mass of the whole tree in the world, and total mass (kg, may be NULL). */
fr_vec3 fr_tree_com(const fr_tree *t, const fr_tree_data *d, double *mass);

/*
 * Damped-least-squares IK step for a point fixed to `link` (p_local in link coordinates):
 *   Δθ = Jᵀ (J Jᵀ + λ² I)⁻¹ Δx,
 * with Δx = dpos (world, m) or (drot; dpos) when drot != NULL (world rotation vector, rad).
 * Only the joints of `link` and of its ancestors below `base_link` move (base_link itself and
 * everything above it stay; base_link = -1: every ancestor joint, a free base included; an
 * index that is not an ancestor is FR_ERR_INVAL). dtheta (nv) receives the
 * increments in velocity coordinates (zero elsewhere); apply with fr_tree_integrate_q(q, dθ, 1).
 * Uses the last forward kinematics; no allocation. FR_ERR_NUMERIC when J Jᵀ + λ² I is singular
 * (λ = 0 at a singularity).
 */
int fr_tree_ik_dls(const fr_tree *t, fr_tree_data *d, int link, fr_vec3 p_local, int base_link,
                   fr_vec3 dpos, const fr_vec3 *drot, double lambda, double *dtheta);

#ifdef __cplusplus
}
#endif
#endif
