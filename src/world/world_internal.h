/* Internal layout of fr_world, shared by the world's source files. */
#ifndef FR_WORLD_INTERNAL_H
#define FR_WORLD_INTERNAL_H

#include "fureru/constraint.h"
#include "fureru/joints.h"
#include "fureru/sparse.h"
#include "fureru/world.h"

/* Constant per body once added (the model). */
typedef struct fri_body_model {
    char name[48];
    const char *long_name; /* robot links: the whole "ROBOT/LINK" (owned by the robot), or NULL */
    int type;
    double mass, inv_mass; /* kg, 1/kg (0 for static/kinematic) */
    fr_mat3 inertia;       /* body axes, about the COM */
    fr_mat3 inv_inertia;
    double lin_damping, ang_damping;
    int robot, link, parent_link; /* FR_BODY_LINK: which robot and link (−1 otherwise) */
} fri_body_model;

/* Mutable per body (the state). */
typedef struct fri_body_state {
    fr_pose pose;
    fr_vec3 vel, angvel;
    fr_vec3 force, torque; /* accumulated for the current step, world frame */
    /* implicit springs on this body this step: F = imp_f − (imp_c + dt·imp_k)·v⁺ */
    double imp_k, imp_c; /* N/m, N·s/m */
    fr_vec3 imp_f;       /* N */
    /* forces applied from outside (fr_body_apply_force/torque) this step, and the velocities at
     * the step's start: their work, h·F·(v + v⁺)/2 */
    fr_vec3 uforce, utorque;
    fr_vec3 vel0, angvel0;
    /* its angular velocity changed by at most 1 % over the last step: the contacts take its
     * rotation over this one as known (contacts.c, the arcs' drift) */
    bool steady_turn;
    /* rad: h·ω of the turn its last step gave it (integrate.c; zero before its first): a rolling
     * shape's bond read takes that turn's arc out (contacts.c body_roll), not h·ω of a velocity
     * set since (a run's start, fr_body_set_velocity) */
    fr_vec3 turn_last;
    /* m/s, rad/s: how much its velocity and spin changed over the last step. A body that was
     * stopped or struck in it may start this one nearly still under forces that no longer
     * balance (a box that slid to a stop, pitched forward, rocks back onto its rear edge): its
     * contacts' reach counts the change (contacts.c) */
    double dvel, dangvel;
    /* m/s²: its acceleration along the plane it slid on over the last step, when it slid on
     * every loaded contact through that step, else zero (integrate.c, the slide's position) */
    fr_vec3 slide_acc;
    double slide_spin; /* rad/s²: likewise its spin's about the plane's normal */
    /* m: its steps' rounding remainders summed (fri_body_move), valid while pose.p is still
     * p_at, the position they belong to (anything else that writes pose.p leaves them behind) */
    fr_vec3 p_lo, p_at;
    /* w->steps + 1 when its pose was last set from outside (fr_body_set_pose, its creation): its
     * contacts' energy then is the placement's, not a step's (late.c) */
    uint64_t placed;
} fri_body_state;

/* m: the sum of a body's steps taken exactly less pose.p, their sum rounded at each step (zero
 * once pose.p was written by anything but fri_body_move). A stiff contact turns one rounding of
 * a position into force: at 200 m a double holds 2.8e-14 m, and a contact with K ≈ 1e10 N/m
 * makes that 8e-7 m/s of a 1 kg block's velocity at the next step's start, above the solve's
 * tolerance. The advanced contact models take their motion with it (contacts.c); pose.p stays
 * the rounded sum it always was (docs/world.md, "Positions' rounding"). */
static inline fr_vec3 fri_body_p_lo(const fri_body_state *s)
{
    const bool same =
        s->pose.p.x == s->p_at.x && s->pose.p.y == s->p_at.y && s->pose.p.z == s->p_at.z;
    return same ? s->p_lo : fr_v3_zero();
}

/* a + b, and its rounding error (Knuth's TwoSum: exact in round-to-nearest without contraction,
 * which the build's -ffp-contract=off keeps) */
static inline double fri_two_sum(double a, double b, double *err)
{
    const double s = a + b, bb = s - a;
    *err = (a - (s - bb)) + (b - bb);
    return s;
}

/* Moves a body's position by d (m), adding the sum's rounding error to its remainder
 * (fri_body_p_lo). (Folded back into pose.p, a compensated sum, every position changed in its
 * last bits, and chaotic runs took other paths: docs/world.md.) */
static inline void fri_body_move(fri_body_state *s, fr_vec3 d)
{
    fr_vec3 lo = fri_body_p_lo(s), e;
    s->pose.p.x = fri_two_sum(s->pose.p.x, d.x, &e.x);
    s->pose.p.y = fri_two_sum(s->pose.p.y, d.y, &e.y);
    s->pose.p.z = fri_two_sum(s->pose.p.z, d.z, &e.z);
    s->p_lo = fr_v3_add(lo, e);
    s->p_at = s->pose.p;
}

/* Per body of the implicit system, after its solve: how it moved on its loaded contacts
 * (integrate.c). */
typedef struct fri_slide {
    fr_vec3 n;   /* the normal its loaded contacts share */
    fr_vec3 d;   /* m: its position's correction over the step */
    double dth;  /* rad: its turn's correction about n */
    double fk;   /* N: μ_k·N of its contacts that stuck again in the step */
    double m;    /* kg: the mass of the bodies stuck to it (its cluster's, at the cluster's root) */
    fr_vec3 mdv; /* kg·m/s: the cluster's Σ m·Δv along the plane (at the root) */
    fr_vec3 macc; /* N: its Σ m·(the last step's slide acceleration) (at the root) */
    int kind;     /* FRI_SLIDE_* */
    int root;     /* the cluster of bodies stuck to each other it belongs to (its root's index) */
} fri_slide;

/* Points of a contact polygon in the constraint contact mode. */
#define FRI_CPTS 4

typedef struct fri_shape_inst {
    fr_shape *shape;
    fr_pose local;
    fr_body_id body;
    int material;
    int proxy;           /* sweep-and-prune proxy, −1 when dead */
    double silhouette;   /* largest projected area of the polytope, m² (bounds a contact's area) */
    double thin;         /* least width over its face normals (fr_shape_widths), m */
    double stance_floor; /* a bound below any stiffening depth its stance asks for, m */
    double slack;        /* curved shapes: how far the polytope may stray from the true shape, m */
    /* its stance (fr_shape_stance) along the local direction stance_n, kept for a polytope of
     * many faces (O(faces·√vertices) a call): a body at rest asks again at every step */
    fr_vec3 stance_n;
    double stance_w, stance_h; /* m */
    bool stance_kept;
    bool is_static;
    fr_pose world; /* its pose in the world at the current contact stage (set at its start) */
} fri_shape_inst;

typedef struct fri_material {
    char name[48];
    fr_contact_material m;
} fri_material;

/* A shape pair the broad phase reported, with the state that persists while it does. */
typedef struct fri_pair {
    int sa, sb;     /* shape indices, sa < sb; −1 when the record is free */
    uint64_t stamp; /* step at which the broad phase last reported it */
    int dense;      /* position in the world's active list */
    fr_collide_cache cache;
    fr_contact_state st;
    fr_contact_params params;
    fr_contact_result res;
    /* this step: the contact model (res.in_contact when it has a patch), the response the step
     * took (and, for a robot link against a free body, the tree's side of it) */
    fr_contact_model model;
    fr_contact_response resp, resp_link;
    double mu;    /* friction coefficient of the step: μ_s, or μ_k once the bond broke */
    bool restuck; /* this step's slip reversed and the bond took μ_s again (solve.c) */
    bool held;    /* this step's solve ended slipping at μ_s within its tolerance's noise and
                     was given a wider stick allowance (solve.c) */
    double lam[FR_CONTACT_NPTS]; /* the solve's normal force iterates (N), fr_contact_respond */
    double nlag;                 /* the previous iterate's normal force: the friction limit's (N) */
    double lam_link[FR_CONTACT_NPTS], nlag_link; /* the same in a robot's tree step */
    double nlag_prev; /* the iterate before nlag_link (its Aitken extrapolation, robots.c) */
    /* the friction limit's N of the solve's outer round before nlag, and the rounds taken this
     * step (their Aitken extrapolation, solve.c update_lambda) */
    double nlag_old, nlag_ratio;
    int nlag_rounds;
    /* a robot link's pair with a free body: the body's velocity (ω; v) the tree step takes, its
     * own motion over the step under the pair's last wrench (robots.c) */
    fr_svec link_other_nu;
    fr_mat6 link_S;          /* its response's tangent at the last iterate (world, at the point) */
    fr_svec link_f;          /* the force (about the point; f) the tree's last solve took */
    unsigned char link_lin;  /* the pair's state where the tree's inertias were linearised */
    double link_nlin;        /* N, its normal force there */
    fr_svec link_wr, link_t; /* that iterate's wrench on the link and the link's twist there */
    int link_k;              /* the directions eliminated at that iterate (3, 6; 0 none) */
    bool link_alone;         /* the free body touches nothing else (robots.c) */
    bool modeled;            /* model.area > 0 */
    int edge;                /* both bodies in the implicit system: the system's coupling block */
    bool edge_flip;          /* the block is A[b][a] (the pair's B has the lower system index) */
    int slot_a, slot_b;      /* body slots of sa and sb at the last contact stage */
    bool params_ok;          /* params pass fr_contact_params_check (set with them, at creation) */
    bool mass_scaled;        /* params are the mass-scaled gains (no material stiffness) */
    double link_scale;       /* robot links: the normal law's factor over this contact (robots.c) */
    /* per point (bit q) over this step's link iteration (robots.c): loaded at the last iterate;
     * its load switched once; it takes the loaded tangent while unloaded (switched twice); it was
     * unloaded at the last check under that tangent; it was released from it once */
    unsigned short link_on, link_flip, link_kink, link_open, link_freed;
    /* the constraint contact mode (constraints.c): the polygon's points this step, in the model's
     * plane (x along t1, y along t2 from its point c), their separations (m, < 0 overlapping) and
     * impulses (normal, t1, t2; N·s, on B), kept as the next step's warm start */
    /* the geometry's tangent last measured (geotangent.c): the builds' tangent K, the bodies'
     * poses, the model's point (in A's frame) and t1 (world) then, and builds since */
    bool gt_have;
    bool gt_kept;  /* the model built last kept the tangent (geotangent.c) */
    bool snapped;  /* the model was built with the rolling side turned to a face (contacts.c) */
    bool gt_least; /* this step's model keeps a tangent above FR_CONTACT_GT_MIN only */
    int gt_age;
    int gt_wait; /* steps this pair has waited for a measurement (the step's budget) */
    double gt_K[3][3];
    fr_pose gt_pa, gt_pb;
    fr_vec3 gt_c, gt_t1;
    /* a model advanced from the last step's instead of built from the geometry (contacts.c,
     * "advance"): the bodies' poses it is at, the relative displacement accumulated since it was
     * built, its allowance (m) and how many steps it has been advanced, and the positions'
     * rounding remainders then (fri_body_p_lo) */
    bool geo_ok;
    int geo_age;
    double geo_drift, geo_limit;
    fr_pose geo_pa, geo_pb;
    fr_vec3 geo_lo_a, geo_lo_b;
    /* a landing found late (late.c): how much more elastic energy the model rebuilt
     * at this step's start holds than the last step's solve predicted for the pair at its end
     * (J); and, for a pair alone on its bodies whose approach could not pay all of it, the
     * energy its bodies and it held at the last step's end, which this step must not exceed */
    double late, late_cap;
    bool late_pred;  /* late_cap holds the prediction (a rebuilt model measured) */
    bool late_check; /* what its approach could not pay is held with its island */
    bool cmode;
    bool cslide; /* the pair slid at the last step: μ_k */
    int cn, cn_prev;
    double cx[FRI_CPTS], cy[FRI_CPTS], csep[FRI_CPTS];
    double cx_prev[FRI_CPTS], cy_prev[FRI_CPTS];
    double clam[FRI_CPTS][3], clam_prev[FRI_CPTS][3];
} fri_pair;

/* A joint (constraints.c). */
/* row slots: 0–2 the anchors (slider: 0–1 across its axis), 3–5 the orientation, 6 the distance,
 * 7–8 the limits, 9 the motor, 10 the spring */
#define FRI_JOINT_ROWS 11
typedef struct fri_joint {
    fr_joint_def def;
    /* sides on robot links (loops.c): robot and link, −1 for a free body or the world, and the
     * rows' generalised Jacobians and response columns (per row slot: g_a, gt_a, g_b, gt_b with
     * the trees' nv; malloc'ed at creation) */
    int robot_a, robot_b, link_a, link_b;
    double *gbuf;
    double lam[FRI_JOINT_ROWS]; /* the last step's impulses per row slot (warm start) */
    double position, rate, error, motor_force, motor_work;
    /* this step's motor: its rate at the start and the work the first solve booked (the
     * projection after the contact solve books the rest, constraints.c) */
    double motor_rate0, motor_dw;
    fr_vec3 force, torque;
} fri_joint;

typedef struct fri_robot {
    char name[48];
    fr_tree *tree;
    fr_tree_data *data;
    int nlinks;
    fr_body_id *links; /* the link bodies */
    char *names;       /* their names "ROBOT/LINK", one after the other (any length) */
    double total_mass; /* kg */
    bool self_collide;
    fr_controller_fn ctl;
    void *ctl_user;
    bool settle_frozen;       /* fixed to the world: stands still while the world settles */
    double *q_save, *qd_save; /* the state at the step's start, while the link contacts iterate */
    double *q_new;            /* the configuration the iterate's step reached */
    double *lbuf; /* [7·nv] a late landing's Jacobian, impulse and responses (fri_link_inv_mass) */
    uint64_t resp_stamp; /* step whose effective masses the tree's workspace holds */
    /* the constraint stage (loops.c): rows on this tree's links or mimic joints */
    bool constrained; /* joints on its links or mimic joints in the world's solver */
    int cb;           /* its solver body this stage, −1 */
    double *cdq;      /* [nv] the solver's Δqd */
    double *cqd_star; /* [nv] qd⁺ of the tree's own step (before the impulses) */
    double *cjac;     /* [2·6·nv] two links' Jacobians at their centres of mass (loops.c) */
    int cjac_slot[2], cjac_next;
    long cjac_stamp[2];
    double cjac_norm[2]; /* their |J|²_F */
    int nmim; /* mimic constraints: follower and leader v/q indices, multiplier, offset */
    int *mim_fv, *mim_lv, *mim_fq, *mim_lq;
    double *mim_mult, *mim_off, *mim_lam;
    double *mim_buf; /* [nmim·2·nv]: per constraint g and gt */
} fri_robot;

typedef struct fri_spring {
    fr_spring_def def;
    fr_vec3 force;       /* on the body in the last step, N */
    fr_vec3 force_el;    /* explicit: its elastic part, N */
    fr_vec3 anchor;      /* at the last step, m */
    bool driven;         /* the anchor is set from outside (fr_world_set_spring_anchor) */
    fr_vec3 next_anchor; /* driven: anchor at the end of the next step, m */
    fr_vec3 a_prev;      /* the anchor the driver's work was counted to, m */
    fr_vec3 a_tick;      /* driven: its anchor at the start of the tick (substeps move it on
                            a straight line to next_anchor), m */
} fri_spring;

struct fr_world {
    fr_world_def def;
    fr_arena arena;
    bool locked;
    bool settling; /* fr_world_settle is stepping: friction holds (settle.c) */
    bool pushing;  /* ... pushing placed overlaps out: without friction (settle.c push_out) */
    char settle_note[512]; /* why the last fr_world_settle gave up, "" when it did not */
    int settle_steps;      /* steps the last fr_world_settle took; −1 before any */
    fr_settle_progress_fn settle_progress; /* told how far a settle has come (NULL: nobody) */
    void *settle_user;
    double time;
    uint64_t steps; /* internal steps (substeps) taken */
    /* substeps (docs/world.md, "Substeps"): nsub internal steps of h = dt/nsub per tick, fixed
     * (sub_fixed) by the first step or settle; sub_k the one being taken; sub_body the body the
     * rule chose them for */
    double h;
    int nsub, sub_k;
    bool sub_fixed;
    fr_body_id sub_body;
    int sub_asked;    /* the rule's n, uncapped, whatever world.substeps says */
    double sub_width; /* m, sub_body's least width */

    int cap;    /* body slots */
    int nslots; /* slots ever used (high-water mark) */
    fri_body_model *model;
    fri_body_state *state;
    uint32_t *gen;
    bool *alive;
    int *free_slots; /* stack of removed slots */
    int nfree;
    int *order; /* live slots in creation order */
    int norder;

    /* contact */
    fri_shape_inst *shapes;
    int nshapes;
    int *proxy_shape; /* sweep-and-prune proxy id → shape index */
    fri_material *materials;
    int nmaterials;
    struct fr_sap *sap;
    fr_sap_pair *sap_pairs;
    int max_sap_pairs;
    fri_pair *pairs; /* max_contacts records */
    int *pair_free;  /* stack of free records */
    int npair_free;
    int *hash; /* open addressing (linear probing) → record, −1 empty */
    uint32_t hmask;
    int *active; /* records in use, dense */
    int nactive;
    int *contacts; /* records overlapping at the last step, in evaluation order */
    int ncontacts;
    double max_pen;
    long geo_advanced;   /* pair models advanced from the last step's (contacts.c) */
    long pair_overflows; /* broad-phase pairs that did not fit (counted, not fatal) */
    fr_collide_work cw;
    fr_polyhedron_out poly;
    fr_polyhedron_out band;    /* a pair's intersection with the band its motion can close */
    fr_contact_model gt_model; /* a model built at moved poses (geotangent.c) */
    long geo_tangents;         /* geometry tangents measured (geotangent.c) */
    int *gt_queue;             /* the step's pairs (records) waiting for a measurement */
    int gt_nqueue;

    fri_spring *springs;
    int nsprings;

    fri_robot *robots;
    int nrobots;
    /* per body slot, the modeled pairs it is in this step (counted by the robots' stage for the
     * bodies in its contacts only; a free body on a link is eliminated where it is 1) */
    int *touching;
    fr_world_fault fault; /* the step that diverged, if one did */

    /* the implicit step (solve.c): the bodies that take part, their blocks and the couplings */
    int *sys_index; /* per body slot: its index in the system, −1 when not in it */
    int *sys_slot;  /* per system index: the body slot */
    int nsys;
    fr_svec *sys_nu0, *sys_nu, *sys_nu_prev; /* (ω; v): start, iterate, previous iterate */
    fr_svec *sys_G;                          /* residual (impulse, N·s and N·m·s) */
    fr_svec *sys_dx;                         /* Newton direction */
    fri_slide *sys_slide;                    /* how each slid (integrate.c) */
    int *sys_up;                             /* its island's union–find parent (solve.c) */
    unsigned char *sys_island;               /* its island's state (solve.c, correct_momentum) */
    fr_svec *sys_ext;                        /* h·(external force and torque, gravity included) */
    fr_mat3 *sys_Iw;                         /* world inertia at the step's start */
    fr_mat3 *sys_Iinv;                       /* its inverse (world axes) */
    double *sys_rg;                          /* radius of gyration, m */
    fr_mat6 *sys_D;                          /* diagonal blocks of the Newton matrix */
    int *sys_eu, *sys_ev;                    /* couplings (system indices, eu < ev) */
    fr_mat6 *sys_O;                          /* their blocks A[eu][ev] */
    uint64_t *sys_key;                       /* sort keys of the coupled pairs, sorted */
    int *sys_kidx;
    uint64_t *sys_kin; /* the same in the contacts' order, as the last step found them */
    int *sys_kin_idx, sys_nkin;
    int nedges;
    fr_bchol chol;
    /* The factor kept from an earlier iteration or step (docs/world.md, "Reusing the factor"):
     * valid for the bodies fac_slot[0..fac_n) in that order, with chol's coupling pattern. */
    int *fac_slot;
    int fac_n;
    bool fac_ok;
    /* the responses: their flags, whether they hold tangents, whether these are left out */
    unsigned resp_flags;
    bool resp_tangent, resp_lazy;
    int fac_wait, fac_backoff; /* steps before a kept factor is tried again at a step's start */
    /* The joints' equality rows coupled into the implicit step (solve.c, "Joints in the solve"):
     * per row its bodies' slots (−1: static, kinematic or the world), then their system indices,
     * its Jacobian blocks, and the kinematic sides' J·ν (m/s or rad/s); the dense matrices
     * J·M⁻¹·Jᵀ and J·H⁻¹·Jᵀ (max_jr², factored in place) and scratch. */
    int njr, max_jr;
    int *jr_sa, *jr_sb, *jr_a, *jr_b;
    fr_svec *jr_ja, *jr_jb;
    double *jr_c, *jr_SM, *jr_SH, *jr_t, *jr_u;
    fr_svec *jr_x;
    /* L⁻¹·P·J_rᵀ of each row, its nonzero blocks (elimination index jr_pk, value jr_pv) from
     * jr_ps[r]; the forward solve's scratch */
    int *jr_ps, *jr_pk, *jr_idx, jr_pool;
    double (*jr_pv)[6], (*jr_z)[6];
    unsigned char *jr_mark;
    int *jr_fM, *jr_fH;      /* the two factors' envelopes (first nonzero column per row) */
    int *jr_owner, *jr_slot; /* the row's joint and its row slot */
    /* A limit or motor row (kind FRI_JR_*) takes part while the constraint stage's impulse lam1
     * on it is strictly inside its bounds [jr_lo, jr_hi] (N·s, for the row's total impulse), or
     * once the step would pass the limit; the rows taking part come first, [0, njr), the others
     * after them, up to njr_all. A motor row not taking part holds its bound instead (jr_clamp
     * +1 at jr_hi, −1 at jr_lo): the solve applies the rest of that impulse as a given one. */
    int *jr_kind, njr_all;
    signed char *jr_clamp;
    double *jr_lo, *jr_hi, *jr_lam1;
    double *jr_kin; /* the kinematic sides' part of jr_c (jr_c adds a limit's or motor's bias) */
    int *jr_uf;     /* [max_bodies] union-find over the joints' bodies (closed loops, solve.c) */
    unsigned char *jr_body; /* [max_bodies] a body of a row in the solve (cleared each step) */
    bool jr_marked;         /* jr_body holds marks to clear */
    bool jr_overflow;       /* the last collection had more rows than max_jr */
    fr_world_solver_stats stats;
    double work;       /* J: work done on the world from outside since its creation (energy.c) */
    double joint_work; /* J: the part of it the robots' joint forces did */
    double placement;  /* J: elastic energy the first step found in the placement's overlaps */
    bool settled;      /* fr_world_settle ended with the contacts it loaded (no placement then) */

    /* the constraint stage (constraints.c): joints, the rows of the step, the bodies they move */
    fri_joint *joints;
    int njoints;
    int *cb_of_slot; /* per body slot: its index among the solver's bodies, −1 */
    int *cb_slot;    /* per solver body: the slot */
    fr_cbody *cbodies;
    fr_svec *cb_vstar; /* per solver body: (ω*; v*) before the impulses */
    int ncb;
    fr_crow *crows;
    int *crow_owner;  /* >= 0 joint, < 0: −(pair record + 1) */
    int *crow_slot;   /* the row's slot in its owner (joint row slot, or point·3 + direction) */
    double *crow_kin; /* m/s or rad/s: J·ν of the row's kinematic sides (their set motion): the
                         drive's work on the world through the row, −λ·crow_kin */
    int ncrows, max_crows;
    fr_world_constraint_stats cstats;
    /* landings found late (late.c): per body slot, the islands of the step's contacts (parent,
     * the stamp they were formed at, the stamp energies were summed at, a root's state and its
     * energy), and whether an island is held this step */
    int *late_up;
    uint64_t *late_stamp, *late_seen;
    unsigned char *late_state;
    double *late_e, *late_u; /* J: a root's energy; the excesses its approach left */
    bool late_any;
    uint64_t late_clock;   /* counts the stamps (never reset: the settle restarts steps) */
    uint64_t late_islands; /* the stamp of this step's islands */
    int *late_order;       /* the step's contacts in the order of their shapes, late_n of them */
    int late_n;
    double *cwork; /* the solver's direct block (fr_constraint_work_size) */
    /* per body slot: the free islands of joined dynamic bodies (union–find, marked by isl_stamp)
     * whose angular momentum the position projection must not change (constraints.c) */
    int *isl_up;
    uint64_t *isl_stamp, isl_clock;
    struct fri_island *isl;
    bool creproject;     /* fri_world_constraints_mid: solved bodies at their new velocities */
    long cstamp;         /* counts the rows' builds (the trees' Jacobian cache, loops.c) */
    fr_crow *crows_heap; /* rows reserved beyond the arena's (fri_world_constraint_reserve) */
    int *crow_owner_heap, *crow_slot_heap;
    double *crow_kin_heap;
};

/* Fix the substeps (world.substeps, or the bodies' rule) at the first step or settle. */
void fri_world_fix_substeps(fr_world *w);
/* Each body's width as the substep rule takes it, by slot: a dynamic body's widest shape's least
 * width (m), 0 for others */
void fri_world_body_widths(const fr_world *w, double *width);

/* Record a divergence (the step then returns FR_ERR_NUMERIC). */
int fri_world_fault(fr_world *w, const char *what, const char *name, const char *quantity,
                    double value);

/* Robots (robots.c). */
int fri_world_robot_init(fr_world *w);
void fri_world_robot_destroy(fr_world *w);
int fri_world_robots_step(fr_world *w);  /* controllers, then every tree */
void fri_world_robots_sync(fr_world *w); /* link bodies from the trees */
/* A landing found late on a link (late.c): the tree's inverse mass at x (1/kg, world), the
 * impulse P there (after fri_link_inv_mass at the same point), the robot's energy (J; less its
 * joint forces' work over the step when `step`) */
fr_mat3 fri_link_inv_mass(fr_world *w, int slot, fr_vec3 x);
void fri_link_push(fr_world *w, int slot, fr_vec3 P);
double fri_link_robot_energy(const fr_world *w, int slot, bool step);
/* Links of one robot that must not touch (same robot without self-collision, or parent–child). */
bool fri_world_links_filtered(const fr_world *w, int slot_a, int slot_b);
/* A body nothing can move: static, or a robot link fixed to the world through fixed joints only
 * (a fixed base). A pair of two such has no contact to solve. */
bool fri_world_body_immovable(const fr_world *w, int slot);
/* A built model of a pair with a robot link: its normal law rescaled from the link's contact mass
 * to the tree's effective mass at the patch (when larger), and from the patch's share of the
 * largest patch (aref, m²) to at least LINK_AREA_FLOOR of it (robots.c). */
void fri_world_link_contact_scale(fr_world *w, fri_pair *p, double aref, bool fresh);
/* A resting pair's model on a lifted patch takes the tangent of the builds themselves
 * (fr_contact_model_set_geometry_tangent) from models built at moved poses (geotangent.c);
 * ca, cb the bodies as the model was built from; rest: the pair is at rest on its stance. A pair
 * whose kept measurement no longer fits takes it this step anyway and is queued (record r); the
 * queue is measured after the step's builds by fri_world_geometry_tangents, within a budget. */
void fri_pair_geometry_tangent(fr_world *w, int r, fr_contact_body ca, fr_contact_body cb,
                               bool rest);
/* Measures the geometry's tangent of the queued pairs that have waited longest, up to
 * GT_PER_STEP of them; ca_of(w, slot) gives a body as the builds saw it. */
void fri_world_geometry_tangents(fr_world *w, fr_contact_body (*ca_of)(const fr_world *, int));
/* fr_world_add_body without the public checks on type (links). */
int fri_world_add_body_internal(fr_world *w, const fr_body_def *def, fr_body_id *out);

/* Twist at a point r away from the centre of mass: (ω; v + ω × r). */
static inline fr_svec fri_twist_at(fr_svec nu, fr_vec3 r)
{
    return fr_sv(nu.ang, fr_v3_add(nu.lin, fr_v3_cross(nu.ang, r)));
}

/* A free body on a link (linkbody.c): the directions a pair's Newton step eliminates for its
 * response rs (6 sticking, 3 slipping); the pair's tangent S and wrench W on the link (world, at
 * the model's point) with the body p->link_other_nu eliminated in k directions; after the tree's
 * step moved the link's point to twist t_l, the body's velocity by the same Newton step. */
int fri_link_body_dims(const fr_contact_response *rs);
void fri_link_body_eliminate(const fr_world *w, fri_pair *p, int other, int k, fr_mat6 *S,
                             fr_svec *W);
void fri_link_body_follow(const fr_world *w, fri_pair *p, int other, fr_svec t_l);

/* Contact and spring forces of the current state, accumulated into the bodies. */
int fri_world_contacts(fr_world *w);
/* Forget every pair (their models, bonds and warm starts): the next step finds them afresh. */
void fri_world_pairs_clear(fr_world *w);
void fri_world_springs(fr_world *w);
/* After integration: the force implicit springs exerted at the new state. */
void fri_world_springs_post(fr_world *w);
/* Elastic energy of the springs at the current state, J. */
double fri_world_spring_energy(const fr_world *w);
/* The joints' springs' elastic energy, ½·k·(x − rest)² (constraints.c). */
double fri_world_joint_spring_energy(const fr_world *w);
/* A bond at μ_s that a converged solve leaves slipping within this many stick speeds' force of its
 * limit is held, not broken away (solve.c, robots.c; docs/contact.md §5). */
#define FRI_HOLD_SPEED 4.0

/* A converged response that slips (r, its friction limit taken at nlag): a bond at μ_s slipping
 * within the solve's noise is held with a wider allowance, one beyond breaks away to μ_k, a bond
 * that slid at the start and whose slip reversed sticks again under μ_s (each once a step).
 * True when the pair changed and the step must be solved again (solve.c, robots.c). */
bool fri_pair_judge_slip(fr_world *w, fri_pair *p, const fr_contact_response *r, double nlag);

/* The friction coefficient while settling: the bonds hold whatever the load needs. */
#define FRI_SETTLE_MU 1e6

/* Energy bookkeeping around a step (energy.c): the start's velocities, then the work done. */
void fri_world_energy_begin(fr_world *w);
/* the contacts' elastic energy at the last step's end (what fr_world_energy_get reports), and at
 * this step's start from the models the contact stage just built */
double fri_world_contact_energy(const fr_world *w);
double fri_world_contact_start_energy(const fr_world *w);
void fri_world_energy_end(fr_world *w);
/* Arena bytes the contact machinery needs for a definition. */
size_t fri_world_contact_memory(const fr_world_def *def);
int fri_world_contact_init(fr_world *w);
void fri_world_contact_destroy(fr_world *w);
void fri_world_remove_body_shapes(fr_world *w, fr_body_id id);

/* Integrate every dynamic and kinematic body over dt with its accumulated force and torque; the
 * bodies in contact or on implicit springs through the implicit step (solve.c). */
int fri_world_integrate(fr_world *w);
/* The implicit step of the bodies in contact or on implicit springs: their new velocities. */
int fri_world_solve(fr_world *w);
/* After the solve: whether the system's body k is in an island nothing outside holds (no pair
 * with a static, kinematic or link body, no implicit spring), where momentum is conserved. */
bool fri_world_sys_free(const fr_world *w, int k);
size_t fri_world_solve_memory(const fr_world_def *def);
int fri_world_solve_init(fr_world *w);
/* Torque-free rotation over dt (implicit midpoint, integrate.c) of orientation q and body-frame
 * angular momentum Lb. */
void fri_rotate_free(const fr_mat3 *Iinv, fr_quat *q, fr_vec3 *Lb, double dt);
/* After the step: commit the friction bonds at the new poses and fill the contact reports. */
void fri_world_contacts_commit(fr_world *w);
/* A static body's shapes follow its pose set from outside (their broad-phase boxes) */
void fri_world_shapes_placed(fr_world *w, fr_body_id id);
/* Landings found late (late.c): a rebuilt model measured against the last step's prediction
 * (pred, J), the excesses taken from the pairs' approach (after the contact stage's pairs), and
 * after the step a pair alone on its bodies held to the energy they had */
void fri_late_measure(fr_world *w, fri_pair *p, double pred);
void fri_late_take(fr_world *w);
void fri_world_contacts_late(fr_world *w);
/* A pair's relative twist at its model's point and the local coordinates of it, from the bodies'
 * velocities (system iterate for bodies in the system, else their state). */
void fri_pair_local(const fr_world *w, const fri_pair *p, fr_svec nu_a, fr_svec nu_b, double y[6]);
/* The body velocity (ω; v) a contact sees (zero for static bodies). */
fr_svec fri_body_nu(const fr_world *w, int slot);

/* The constraint stage (constraints.c): before integration the joints' and constraint contacts'
 * impulses, added to the bodies' forces; after it the position projection. */
size_t fri_world_constraint_memory(const fr_world_def *def);
int fri_world_constraint_init(fr_world *w);
int fri_world_constraints(fr_world *w);
int fri_world_constraints_post(fr_world *w);
/* Between the implicit contact solve's velocities and the positions: the joints of bodies it
 * solved, once more (constraints.c). */
void fri_world_constraints_mid(fr_world *w);
int fri_world_joint_eq_rows(fr_world *w);
enum { FRI_JR_EQ, FRI_JR_LO, FRI_JR_HI, FRI_JR_MOTOR };
/* Rows on articulated trees (loops.c). The solver body of robot link `slot` (its tree, prepared
 * for the velocity stage or the position projection), −1 when the robot is not constrained. */
int fri_loop_body(fr_world *w, int slot, bool position);
/* The generalised side of a row: g = J_linkᵀ·j (j the spatial block at the link body's centre of
 * mass) into g (nv), added to it when `add`. Returns |j|²·|J_link|²_F, the scale below which g
 * is round-off (a row the tree itself already holds). */
double fri_loop_jacobian(fr_world *w, int slot, fr_svec j, double *g, bool add);
/* gt = R g for robot r (its tree's response). */
void fri_loop_response(fr_world *w, int r, const double *g, double *gt);
/* After the velocity solve: every prepared tree takes qd⁺ = qd*⁺ + Δqd and its positions from
 * them; after a projection pass: q ⊕ Δ. Link bodies synced. */
void fri_loop_finish(fr_world *w, bool position);
/* Reserve `extra` more constraint rows (start-up; malloc). */
int fri_world_constraint_reserve(fr_world *w, int extra);
/* A joint row's sides on robot links (owner's joint, row slot; slots sa, sb): the generalised
 * Jacobians and response columns into r (a row with both sides on one tree: one side). Returns
 * J·v* (the trees' qd⁺ before the impulses, the other side's v* or set motion). */
double fri_loop_sides(fr_world *w, fr_crow *r, int owner, int slot, int sa, int sb);
/* The mimic rows of every robot with mimic joints (velocity rows, or position rows adding their
 * errors to *max_err). */
void fri_loop_mimic_rows(fr_world *w, bool position, double *max_err);
/* A row side's rate J·u at the step's start (u0) or end (u⁺), for the motors' work. */
double fri_loop_side_rate(const fr_world *w, int bi, fr_svec J, const double *g, bool end);
/* A free island's sums for the projection's angular momentum (constraints.c): mass, Σ m·x, its
 * centre, its angular momentum about it before and after the projection, its inertia about it,
 * whether a joint ties it to anything that is not a free body. */
typedef struct fri_island {
    double m;
    fr_vec3 mx, c, L0, L1;
    fr_mat3 Ic;
    bool anchored;
} fri_island;

/* The position projection's tolerance (m or rad) and most passes (constraints.c, loops.c). A
 * joint still apart by more than FRI_JOINT_FAULT_ERR (m or rad) after them is torn: the step
 * fails with a fault naming it. */
#define FRI_PROJECT_TOL     1e-10
#define FRI_PROJECT_PASSES  48
#define FRI_JOINT_FAULT_ERR 1e-4
/* A joint on robot links (slots sa, sb): its robots' buffers and its rows' workspace. */
int fri_loop_joint_init(fr_world *w, fri_joint *jt, int sa, int sb);
/* Free what loops and joints on links allocated. */
void fri_world_loops_destroy(fr_world *w);
/* Set up robot r's constraint side (mimic constraints into the world's solver). */
int fri_world_robot_loops_init(fr_world *w, int r);
/* Bodies joined by a joint do not touch (their shapes overlap at the joint by design). */
bool fri_world_joined(const fr_world *w, int slot_a, int slot_b);
/* The constraint contact mode: the pair's polygon points from w->poly (contacts.c calls it). */
void fri_contact_points(fr_world *w, fri_pair *p, double gap);
/* Fill a constraint pair's report (contacts' commit). */
void fri_contact_constraint_report(fr_world *w, fri_pair *p);

/* Slot of a valid id, or −1. */
static inline int fri_body_slot(const fr_world *w, fr_body_id id)
{
    if (id.index1 == 0 || id.index1 > (uint32_t)w->nslots) return -1;
    int i = (int)id.index1 - 1;
    return w->alive[i] && w->gen[i] == id.gen ? i : -1;
}

/* a shape's pose in the world: its body's pose times its own */
static inline fr_pose fri_shape_pose(const fr_world *w, const fri_shape_inst *s)
{
    return fr_pose_mul(w->state[fri_body_slot(w, s->body)].pose, s->local);
}

#endif
