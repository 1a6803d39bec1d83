/*
 * fureru world: rigid bodies, gravity, external forces and the step pipeline.
 *
 * A world is created with fixed capacities (fr_world_def); every array it needs is reserved then,
 * in one arena, so fr_world_step never allocates. Bodies are named by generational ids: removing a
 * body bumps its slot's generation and old ids become stale (FR_ERR_STALE), never dangling.
 *
 * Body frame: a body's frame has its origin at the centre of mass; its axes are arbitrary
 * (the inertia tensor is given in them). Poses are of that frame in world coordinates; linear
 * velocity is the centre of mass's, angular velocity is in world coordinates.
 *
 * Integration (fixed step dt): symplectic Euler for translation (v += dt·a, then x += dt·v);
 * along a slide (every loaded contact slipping in one plane, no joint or spring on the body) the
 * position follows the step's mean velocity in that plane, its turn about the plane's normal the
 * step's mean spin (docs/world.md, "Free bodies").
 * Rotation: forces' torque is applied as an impulse to the world angular momentum; the torque-free
 * part (the gyroscopic term) is integrated implicitly by the implicit midpoint rule on Euler's
 * equations in the body frame, which conserves the body-frame kinetic energy and |L| exactly (both
 * are quadratic invariants); the orientation is then advanced by the exponential map with the
 * rotation that carries L_body back onto the conserved world momentum, so world angular momentum is
 * conserved to round-off and fast asymmetric spinners stay stable.
 */
#ifndef FURERU_WORLD_H
#define FURERU_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "fureru/articulated.h"
#include "fureru/base.h"
#include "fureru/collision.h"
#include "fureru/contact.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_world fr_world;

/* Generational id; {0, 0} is null. */
typedef struct fr_body_id {
    uint32_t index1; /* slot index + 1 */
    uint32_t gen;    /* generation of the slot when the id was issued */
} fr_body_id;
#define FR_BODY_NULL ((fr_body_id){0, 0})
static inline bool fr_body_id_is_null(fr_body_id id)
{
    return id.index1 == 0;
}
static inline bool fr_body_id_eq(fr_body_id a, fr_body_id b)
{
    return a.index1 == b.index1 && a.gen == b.gen;
}

enum fr_body_type {
    FR_BODY_STATIC = 0,    /* never moves, infinite mass */
    FR_BODY_KINEMATIC = 1, /* moves with its set velocity, infinite mass */
    FR_BODY_DYNAMIC = 2,
    FR_BODY_LINK = 3, /* a link of an articulated robot: moved by its tree (fr_world_add_robot) */
};

typedef struct fr_world_def {
    double dt; /* s, fixed step (the tick: fr_world_step advances the world by dt) */
    /* internal steps per dt (docs/world.md, "Substeps"): 0 = as the bodies need (the least n
     * for which every free dynamic body's least width w holds w >= FR_WORLD_SUBSTEP_WIDTH·g·h²,
     * h = dt/n, at most FR_WORLD_SUBSTEPS_MAX), fixed at the first step or settle; n >= 1: that
     * many (default 0) */
    int substeps;
    fr_vec3 gravity;     /* m/s² */
    int max_bodies;      /* capacity, fixed at creation */
    int max_shapes;      /* collision shapes, all bodies together */
    int max_contacts;    /* simultaneously touching shape pairs */
    int max_springs;     /* body–anchor spring elements */
    int max_robots;      /* articulated robots */
    int max_materials;   /* named contact materials (index 0 is the default material) */
    int max_shape_faces; /* largest face count of any shape's polytope (sizes the narrow phase) */
    /* mass-scaled contact gains (docs/world.md): stiffness κ (K = κ·m_red/dt², > 0, default
     * 100) and damping β (D = β·m_red/dt, >= 0, default 10); without the implicit step they are
     * capped at FR_CONTACT_KAPPA and FR_CONTACT_BETA (what the explicit step is stable with) */
    double contact_kappa;
    double contact_beta;
    /* s: when > 0, the contact time constant τ that sets the stiffness instead of κ, K = m_red/τ²
     * (κ = (dt/τ)²): a stiffness independent of dt (default 0: κ) */
    double contact_time;
    /* κ and β of contacts on robot links (linear law; default 12 and 6) */
    double contact_link_kappa;
    double contact_link_beta;
    /* stiffening depth of the mass-scaled pressure law in units of its rest depth g·dt²/κ
     * (docs/world.md): a contact carrying the load W sinks by δ_s·ln(1 + W/(m_red·g)), so its
     * stiffness grows with the load; 0 = the linear law (default 1) */
    double contact_stiffen;
    bool contact_implicit;   /* implicit contacts: free bodies in the world's Newton solve, robot
                                links inside ABA (default true) */
    int implicit_iterations; /* at most this many Newton iterations per step (default 30) */
    double solver_tolerance; /* m/s: the solve stops when no body's velocity (angular: times
                                its radius of gyration) would change by more (default 1e-10) */
    int max_fill;            /* blocks of the sparse factor (0: 16·max_bodies + 64) */
    /* work kept between steps (docs/world.md, "Work kept between steps"): a resting contact's
     * model advanced from the last step's instead of built again from the intersection, and the
     * Newton matrix's last factor tried before a new one (default both true; the results agree
     * to the bounds stated there) */
    bool reuse_contacts;
    bool reuse_factor;
    /* robots: a link-contact iteration may revise the tree's last step for its forces' change
     * (fr_tree_step_revise, a chord iteration) instead of a new articulated step, while every
     * contact keeps the state its tangent was taken in (default true; docs/robots.md) */
    bool revise_robots;
    /* constraints (include/fureru/joints.h, docs/constraint.md): joints between bodies, and the
     * contact mode. Zero fields take the defaults. */
    int max_joints;              /* joints solved as velocity-level constraints (default 64) */
    int contact_mode;            /* enum fr_contact_mode (default FR_CONTACT_MODE_PENALTY) */
    double constraint_omega;     /* SOR factor of the projected Gauss–Seidel, in (0, 2) (1) */
    int constraint_iterations;   /* sweeps per step at most (default 200) */
    double constraint_tolerance; /* m/s: a sweep that changes no row's velocity by more ends
                                    the solve (default 1e-9) */
} fr_world_def;

/* How free bodies' contacts are solved: the penalty model (docs/world.md) or as LCP rows
 * (normal >= 0, a friction box |λ_t| <= μ·λ_n) at the contact polygon's vertices, solved with the
 * joints by projected Gauss–Seidel (docs/constraint.md). Contacts on robot links stay penalty. */
enum fr_contact_mode { FR_CONTACT_MODE_PENALTY = 0, FR_CONTACT_MODE_CONSTRAINT = 1 };

/* The substep rule (docs/world.md, "Substeps"): the penalty law's compliance and a step's turn
 * scale with g·h², and a body narrower than this many g·h² rocks, creeps and lands late at h. */
#define FR_WORLD_SUBSTEP_WIDTH 80.0
#define FR_WORLD_SUBSTEPS_MAX  16

/* dt 1 ms, g = (0, 0, −9.81), room for 1024 bodies. */
fr_world_def fr_world_def_default(void);

typedef struct fr_body_def {
    char name[48];
    int type;           /* enum fr_body_type */
    double mass;        /* kg (dynamic bodies) */
    fr_mat3 inertia;    /* kg·m², about the centre of mass, in body axes */
    fr_pose pose;       /* initial pose of the body frame (origin = centre of mass) */
    fr_vec3 vel;        /* m/s, centre of mass */
    fr_vec3 angvel;     /* rad/s, world frame */
    double lin_damping; /* 1/s, v decays as exp(−c t) (implicit); 0 = none */
    double ang_damping; /* 1/s */
} fr_body_def;

/* A 1 kg unit-cube dynamic body at the origin at rest. */
fr_body_def fr_body_def_default(void);

int fr_world_create(const fr_world_def *def, fr_world **out);
void fr_world_destroy(fr_world *w);
const fr_world_def *fr_world_get_def(const fr_world *w);

/* Structural changes: not allowed while the world steps (FR_ERR_LOCKED); never allocate. */
int fr_world_add_body(fr_world *w, const fr_body_def *def, fr_body_id *out);
int fr_world_remove_body(fr_world *w, fr_body_id id);
bool fr_body_is_valid(const fr_world *w, fr_body_id id);
int fr_world_find_body(const fr_world *w, const char *name, fr_body_id *out);
/* Live bodies in creation order: i in [0, fr_world_body_count). */
int fr_world_body_count(const fr_world *w);
fr_body_id fr_world_body_at(const fr_world *w, int i);

/* The internal steps each fr_world_step takes (world.substeps; fixed by the first step or settle,
 * the rule's until then) and, when the rule chose more than one, the body that asked for the
 * most (else an invalid id). */
int fr_world_substeps(const fr_world *w, fr_body_id *body);

/* The rule's side of the substeps (docs/world.md, "Substeps"), whether or not world.substeps set
 * them: what the rule asks uncapped, for which body, and how wide that body is. */
typedef struct fr_substeps_info {
    int n;           /* internal steps a tick (fr_world_substeps) */
    int asked;       /* what the rule asks, uncapped (n unless capped or world.substeps set) */
    bool set;        /* world.substeps chose n */
    fr_body_id body; /* the body asking the most when it asks more than 1, else invalid */
    double width;    /* m, that body's least width */
    double resolved; /* m, the least width a whole tick resolves: FR_WORLD_SUBSTEP_WIDTH·g·dt² */
} fr_substeps_info;
void fr_world_substeps_info(const fr_world *w, fr_substeps_info *out);

/* The substeps the rule asks for a free body of least width `width` (m) at def's dt and gravity:
 * the least n with width >= FR_WORLD_SUBSTEP_WIDTH·g·(dt/n)², not capped at FR_WORLD_SUBSTEPS_MAX
 * (at most 1e9); 1 without gravity. */
int fr_world_substeps_for_width(const fr_world_def *def, double width);

/* Advance one step of dt (in fr_world_substeps steps of dt/n). FR_ERR_NUMERIC when the step
 * diverged (fr_world_fault says where); the state is then not to be trusted. */
int fr_world_step(fr_world *w);

/*
 * Settle the bodies placed at rest before the first step (docs/world.md, "Settling"): every free
 * dynamic body with zero velocity that touches the ground or other bodies is brought to the
 * equilibrium of its contacts, so that a body placed touching (a scene's convention) starts
 * carrying its load, without a first step of free fall or an impact. The world steps, those
 * bodies stopped whenever their kinetic energy has passed a peak (kinetic damping), friction
 * holding (μ = FRI_SETTLE_MU: nothing slides while settling), every body standing still (the
 * velocities it was given come back at the end), bodies in the air, kinematic bodies and the
 * springs' anchors held where they are; a robot on a free base settles with its controller
 * holding its posture (fr_world_settling), one fixed to the world stands still. It stops when no
 * settling body moves faster than `tolerance` (m/s) after a step, or after `max_time` (s) of
 * steps. The clock, step count, work and solver statistics then restart at zero; the contacts
 * keep the load and friction they carry. Positions move by the contacts' compression
 * (micrometres for the default laws). Before the first step only (else FR_ERR_INVAL).
 * *steps_out (may be NULL): the
 * steps taken; FR_ERR_TIMEOUT when max_time ran out first (the state is then partly settled).
 */
int fr_world_settle(fr_world *w, double max_time, double tolerance, int *steps_out);
/* A body that travels more than 1e-2 of its radius of gyration or turns more than 1e-2 rad while
 * settling was not placed near an equilibrium (a block that tips over, a stack that falls):
 * fr_world_settle then puts every body back where it was placed, forgets the contacts (the first
 * step finds them as without a settle) and returns FR_ERR_RANGE; fr_world_settle_note says which
 * body and how far ("" otherwise). */
const char *fr_world_settle_note(const fr_world *w);
/* The steps the last fr_world_settle took (0: nothing to settle), −1 when none ran. */
int fr_world_settle_steps(const fr_world *w);
/* Told every 1024 steps of a settle how many steps of dt (s) it has taken and may take at most (a
 * settle at a small dt can run for minutes: `fureru check` at dt 1e-6 was silent for 78 s).
 * Called on the settling thread, before the run; NULL: nobody is told. */
typedef void (*fr_settle_progress_fn)(void *user, long steps, long max_steps, double dt);
void fr_world_set_settle_progress(fr_world *w, fr_settle_progress_fn fn, void *user);
/* True while fr_world_settle steps the world: a robot's controller then holds the posture it was
 * given (its PD targets as they are, zero rates) instead of running its motion. */
bool fr_world_settling(const fr_world *w);

/* Divergence: a non-finite or absurd value (a body faster than FR_WORLD_MAX_SPEED or spinning
 * faster than FR_WORLD_MAX_SPIN, a joint faster than FR_WORLD_MAX_JOINT_SPEED) ends the step with
 * FR_ERR_NUMERIC and is recorded here: which body or joint, what quantity, when. */
#define FR_WORLD_MAX_SPEED       1e3 /* m/s */
#define FR_WORLD_MAX_SPIN        1e5 /* rad/s */
#define FR_WORLD_MAX_JOINT_SPEED 1e5 /* rad/s or m/s */
typedef struct fr_world_fault {
    int code;          /* 0 (none) or FR_ERR_NUMERIC */
    double time;       /* simulated time at the start of the failing step, s */
    char what[160];    /* "body 'crate'", "joint 'go1/FR_calf_joint'", "link 'go1/FR_calf'" */
    char quantity[64]; /* "joint acceleration", "velocity", "angular velocity", "position", ... */
    double value;      /* the offending value (NaN, inf, or its magnitude) */
} fr_world_fault;
const fr_world_fault *fr_world_get_fault(const fr_world *w);

/* Faults the step contained (counted, not fatal), totals since creation. */
typedef struct fr_world_counters {
    unsigned long velocity_limited; /* robot joint-steps whose motor was held at its speed limit */
    unsigned long mimic_singular;   /* robot steps whose mimic constraints could not be solved */
} fr_world_counters;
void fr_world_get_counters(const fr_world *w, fr_world_counters *out);
double fr_world_time(const fr_world *w); /* s */
uint64_t fr_world_step_count(const fr_world *w);

/* Body access. All return FR_OK or FR_ERR_STALE. */
const char *fr_body_name(const fr_world *w, fr_body_id id); /* "" when stale */
int fr_body_type(const fr_world *w, fr_body_id id);         /* −1 when stale */
int fr_body_get_pose(const fr_world *w, fr_body_id id, fr_pose *out);
int fr_body_set_pose(fr_world *w, fr_body_id id, fr_pose pose);
int fr_body_get_velocity(const fr_world *w, fr_body_id id, fr_vec3 *vel, fr_vec3 *angvel);
int fr_body_set_velocity(fr_world *w, fr_body_id id, fr_vec3 vel, fr_vec3 angvel);
int fr_body_get_mass(const fr_world *w, fr_body_id id, double *mass, fr_mat3 *inertia_body);
/* Accumulated for the next step only: a force at a world point, or a pure torque. */
int fr_body_apply_force(fr_world *w, fr_body_id id, fr_vec3 force, fr_vec3 point_world);
int fr_body_apply_torque(fr_world *w, fr_body_id id, fr_vec3 torque);

/* ---------------------------------------------------------------- contact */

/* Add a named material; its index is written to *out. Index 0 is the built-in default material
 * (mass-scaled gains, μ_s = μ_k = 0.5) and can be replaced with fr_world_set_material(w, 0, ...).
 */
int fr_world_add_material(fr_world *w, const char *name, const fr_contact_material *m, int *out);
int fr_world_set_material(fr_world *w, int index, const fr_contact_material *m);
int fr_world_find_material(const fr_world *w, const char *name, int *out);
/* The material at an index (0: the default one). */
int fr_world_get_material(const fr_world *w, int index, fr_contact_material *out);

typedef struct fr_shape_def {
    fr_shape *shape; /* made with fr_shape_create_*; the world owns it from now on */
    fr_pose local;   /* shape frame in the body frame (whose origin is the centre of mass) */
    int material;    /* material index */
    uint32_t
        group; /* collision filter: shapes collide when (group_a & mask_b) && (group_b & mask_a) */
    uint32_t mask;
} fr_shape_def;
/* Defaults: identity pose, material 0, group 1, mask all. */
fr_shape_def fr_shape_def_default(fr_shape *shape);
/* Attach a shape to a body (start-up or between steps; never allocates). On error the shape is
 * still the caller's. Shapes of one body never collide with each other. */
int fr_body_add_shape(fr_world *w, fr_body_id body, const fr_shape_def *def);

/* A body's shapes (for viewers): how many, and the i-th with its pose in the body frame (NULL
 * when out of range). The shape stays the world's. */
int fr_body_shape_count(const fr_world *w, fr_body_id id);
const fr_shape *fr_body_shape_at(const fr_world *w, fr_body_id id, int i, fr_pose *local);
/* All the world's shapes, k in [0, fr_world_shape_count): the k-th, its body and its pose in the
 * body frame (NULL when out of range). One pass over them is linear; asking each body for its
 * shapes (above) is quadratic in a large world. */
int fr_world_shape_count(const fr_world *w);
const fr_shape *fr_world_shape_at(const fr_world *w, int k, fr_body_id *body, fr_pose *local);

/* Contacts after the last step: overlapping shape pairs. */
int fr_world_contact_count(const fr_world *w);
/* The i-th contact (0 <= i < count): the result and the two bodies (force_a acts on *a). */
const fr_contact_result *fr_world_contact(const fr_world *w, int i, fr_body_id *a, fr_body_id *b);
/* The i-th contact's patch model of the last step (area, axes, second moments), or NULL when the
 * pair had no patch. */
const fr_contact_model *fr_world_contact_model(const fr_world *w, int i);
/* The elastic energy the i-th contact holds after the last step (its pressure and its friction
 * bond; 0 for a constraint contact), J: the contacts' share of fr_world_energy's `contact`. */
double fr_world_contact_energy(const fr_world *w, int i);
/* Largest penetration (max depth) over the contacts of the last step, m: of each of its substeps'
 * ends (docs/world.md, "Substeps"). */
double fr_world_max_penetration(const fr_world *w);
/* Total contact force exerted on body `on` by body `by` in the last step (all shape pairs), N;
 * `by` null = from every body. */
fr_vec3 fr_world_contact_force(const fr_world *w, fr_body_id on, fr_body_id by);
/* Whether the loaded contacts between `on` and `by` (FR_BODY_NULL: any) stick or slide after the
 * last step: 1 when one slides, 0 when all stick, −1 when none carries load; *speed (may be
 * NULL): the largest relative tangential speed of the bodies' points at a pair's centre over the
 * last step (each point's move over the step / dt: a box stuck on a turntable reads ~0), m/s. */
int fr_world_contact_slip(const fr_world *w, fr_body_id on, fr_body_id by, double *speed);

/* ---------------------------------------------------------------- springs */

/* A spring-damper between a point on a body and an anchor that moves at constant velocity
 * (a stick-slip rig's drive, a tether): F = k·(|d| − L0)·d̂ + c·(relative velocity along d̂)
 * with d from the body point to the anchor.
 *
 * An `implicit` spring (zero rest length, attached at the centre of mass) is integrated at the
 * next step's state, F = k·(a⁺ − x⁺) + c·(v_a − v⁺), so a stiff spring on a light body stays
 * stable: the body's velocity update becomes v⁺ = (m·v + dt·(F_other + k·(a⁺ − x) + c·v_a)) / (m +
 * dt·c + dt²·k)   (per axis). This is the virtual coupling between a haptic device and its proxy
 * body; the reported force is the one at the new state. A spring's anchor can also be driven from
 * outside each tick (fr_world_set_spring_anchor: the anchor at the END of the next step and its
 * velocity). */
typedef struct fr_spring_def {
    char name[48];
    fr_body_id body;
    fr_vec3 local_point; /* m, body frame */
    fr_vec3 anchor;      /* m, world, at t = 0 */
    fr_vec3 anchor_vel;  /* m/s, world */
    double stiffness;    /* N/m, >= 0 */
    double damping;      /* N·s/m, >= 0 */
    double rest_length;  /* m, >= 0 */
    bool implicit;       /* integrate at the next state (needs rest_length 0, local_point 0) */
} fr_spring_def;
int fr_world_add_spring(fr_world *w, const fr_spring_def *def, int *out);
int fr_world_spring_count(const fr_world *w);
/* Drive the anchor: where it is at the end of the next step (m) and its velocity (m/s). From then
 * on the anchor no longer moves by itself. */
int fr_world_set_spring_anchor(fr_world *w, int i, fr_vec3 anchor, fr_vec3 anchor_vel);
/* Change gains (N/m, N·s/m) between steps. */
int fr_world_set_spring_gains(fr_world *w, int i, double stiffness, double damping);
int fr_world_find_spring(const fr_world *w, const char *name, int *out);
/* Force the spring exerted on its body in the last step (N, world; before the first step, the
 * force at the state it was added at) and its anchor now (m). */
int fr_world_spring_state(const fr_world *w, int i, fr_vec3 *force, fr_vec3 *anchor);

/* ---------------------------------------------------------------- articulated robots */

/*
 * A robot is a Featherstone tree (include/fureru/articulated.h) placed in the world by its root
 * joint. Each link is also a world body of type FR_BODY_LINK (origin at the link's centre of mass,
 * link axes) that carries the link's shapes, so links touch free bodies, static bodies and other
 * robots through the ordinary contact stage; contact forces on a link enter the tree's ABA as
 * external forces. Link bodies are named "ROBOT/LINK".
 *
 * Step order: contacts (links at their current state) → controllers → tree step (implicit joint
 * PD, and the contacts' implicit share as an external inertia) for every robot → free-body
 * integration → link bodies updated from the trees. Contact stiffness of a link uses the robot's
 * total mass as the link's mass (the mass-scaled law needs the mass the contact holds up).
 */
typedef struct fr_robot_def {
    char name[48];
    fr_tree *tree;     /* finalised; the world owns it from now on (also on error) */
    bool self_collide; /* false: links of this robot never touch each other; true: only
                          parent–child pairs are filtered */
} fr_robot_def;
int fr_world_add_robot(fr_world *w, const fr_robot_def *def, int *out);
int fr_world_robot_count(const fr_world *w);
int fr_world_find_robot(const fr_world *w, const char *name, int *out);
const char *fr_world_robot_name(const fr_world *w, int robot);
const fr_tree *fr_world_robot_tree(const fr_world *w, int robot);
/* The robot's state: q, qd, PD targets and gains may be changed between steps (or by a
 * controller); NULL for a bad index. */
fr_tree_data *fr_world_robot_data(fr_world *w, int robot);
/* The world body that stands for a link (for shapes, probes and viewers). */
fr_body_id fr_world_robot_link_body(const fr_world *w, int robot, int link);
/* Start-up (allocates), after the link shapes are attached: each link's contact mass becomes the
 * smallest effective mass of the tree at its shapes' vertices (see docs/robots.md). */
int fr_world_robot_set_contact_masses(fr_world *w, int robot);
/* Call after changing q/qd from outside so the link bodies follow (the step does it itself). */
void fr_world_robot_sync(fr_world *w, int robot);
/* A controller runs on the stepping thread once per step, before the trees step: it may set
 * targets, gains and feed-forward torques; it must not allocate, lock or print. */
typedef void (*fr_controller_fn)(fr_world *w, int robot, void *user);
int fr_world_set_robot_controller(fr_world *w, int robot, fr_controller_fn fn, void *user);

/* Energy (J) of the world's current state, the contacts' as the last step's solution holds them
 * (its end depths and friction bonds), and the work done on it from outside since it was created:
 * forces applied with fr_body_apply_force/torque, springs' moving anchors (the haptic coupling
 * among them), robots' joint forces. Without numerical error, total − work never grows: friction,
 * damping and the implicit step only dissipate (docs/world.md). */
typedef struct fr_world_energy {
    double kinetic;    /* free bodies and robots */
    double potential;  /* gravity, −Σ m g·x */
    double contact;    /* elastic energy held by the contacts (pressure and friction bonds) */
    double spring;     /* elastic energy of the springs and of the joints' springs */
    double total;      /* kinetic + potential + contact + spring */
    double work;       /* done from outside since creation */
    double joint_work; /* the part of it done by robots' joint forces (also in work) */
    /* elastic energy that the first step found in the placement's overlaps (a body placed into
     * another; a curved shape's polytope, which reaches beyond its true radius, placed at that
     * radius): part of the state at t = 0 that total could not show then, J (not in work) */
    double placement;
    double time; /* s, when it was measured */
} fr_world_energy;
void fr_world_energy_get(const fr_world *w, fr_world_energy *e);

/* The implicit step's solver over the last step and over the run. */
typedef struct fr_world_solver_stats {
    int bodies;          /* bodies in the last step's system */
    int couplings;       /* coupled body pairs in it */
    int iterations;      /* Newton iterations of the last step */
    double residual;     /* its final residual, m/s (velocity correction, see solver_tolerance) */
    int max_iterations;  /* largest iteration count of any step */
    long steps;          /* steps that solved a system */
    long unconverged;    /* steps that stopped at implicit_iterations above the tolerance */
    long analyses;       /* orderings of the sparse factor (the coupling pattern changed) */
    long factorisations; /* numeric factorisations */
    long fallbacks;      /* steps solved iteratively because the factor did not fit max_fill */
    long newton_iterations; /* Newton iterations of all steps */
    long evaluations;       /* passes over every pair's response: Newton and line-search points,
                               the force linearisation's rounds */
    long chord_steps;    /* Newton iterations that reused an earlier iterate's or step's factor */
    int factor_blocks;   /* off-diagonal 6×6 blocks of the last sparse factor (its fill) */
    long advanced;       /* pair models advanced from the last step's instead of built from the
                            intersection (resting contacts, docs/contact.md §5) */
    long tangents;       /* geometry tangents measured, six builds at moved poses each (pairs
                            resting on a lifted patch, docs/contact.md §5) */
    long breakaways;     /* bonds that passed from static to kinetic friction inside a step */
    long resticks;       /* sliding bonds whose slip reversed inside a step and stuck again */
    long holds;          /* bonds at μ_s whose solve slipped by no more than its tolerance allows
                            and were solved again with a wider stick allowance */
    long tree_steps;     /* robots' articulated steps taken (several per tick while their
                            contacts iterate) */
    long tree_revisions; /* robots' contact iterations that revised the last articulated step
                            for the forces' change alone (fr_tree_step_revise) instead */
    long late;           /* pairs whose model rebuilt at a step's start held more than twice the
                            elastic energy the last step's solve predicted (landings found late,
                            docs/contact.md §5) */
    double late_energy;  /* J: those models' excess over the prediction (on the stiffened law's
                            far end it can be many times what the bodies hold) */
    double late_paid;    /* J: the part taken from the approach of pairs whose approach held it */
    double late_held;    /* J: taken after the step from islands whose energy the step raised,
                            at most the excesses their approach could not pay */
} fr_world_solver_stats;
void fr_world_solver_stats_get(const fr_world *w, fr_world_solver_stats *out);

/* Diagnostics: totals over dynamic bodies. Momentum about the world origin. */
void fr_world_momentum(const fr_world *w, fr_vec3 *linear, fr_vec3 *angular);
double fr_world_kinetic_energy(const fr_world *w);
/* Angular momentum of one body about its centre of mass, world frame. */
int fr_body_angular_momentum(const fr_world *w, fr_body_id id, fr_vec3 *out);

#ifdef __cplusplus
}
#endif
#endif
