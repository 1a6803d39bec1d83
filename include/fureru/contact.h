/*
 * fureru contact: penalty normal force and distributed Coulomb friction computed from the
 * intersection polyhedron of two convex shapes (Hasegawa et al., seed 004 §3.2). The force laws,
 * units, defaults and combination rules are in docs/contact.md.
 *
 * Conventions
 * - The contact normal n points from A into B. Penetration ("thickness") is measured along n.
 * - Pressure at a point x of the contact area (the intersection projected on the plane normal to
 *   n) is p(x) = k·t(x) + c·s·ṫ(x): t(x) is the thickness of the intersection along n through x,
 *   ṫ(x) = (v_A(x) − v_B(x))·n the rate at which it grows, s the damping ramp. The spring part
 *   integrates exactly to k·V with its line of action through the volume centroid.
 * - Friction is Coulomb with the same distribution: limits μ·N for the force and μ·N·r̄ for the
 *   spin torque (r̄ = pressure-weighted mean distance from the centre of pressure), combined in an
 *   ellipse; sticking is a tangential + spin spring-damper from anchors kept in the body frames.
 * - Nothing here allocates: every function works on caller-owned structs.
 *
 * Per tick and per overlapping shape pair the world calls fr_contact_eval with the pair's
 * persistent fr_contact_state; when the pair stops overlapping it calls fr_contact_state_reset.
 */
#ifndef FURERU_CONTACT_H
#define FURERU_CONTACT_H

#include <stdbool.h>

#include "fureru/collision.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the normal stiffness and damping are given. Both give pressure ∝ local thickness. */
enum fr_contact_law {
    /* Force = K·(mean depth) = K·V/A, damping D·(mean ṫ): K in N/m, D in N·s/m. The total
     * stiffness does not depend on the contact area, so it can be scaled from mass and dt. */
    FR_CONTACT_MEAN_DEPTH = 0,
    /* Force = k·V, damping c·∫ṫ dA: k in N/m³ (N/m per m² of contact, i.e. pressure per metre of
     * thickness), c in N·s/m³. Physical units; the total stiffness k·A grows with the area. */
    FR_CONTACT_VOLUME = 1,
};

/* Default gain factors for fr_contact_params_scaled: K = κ·m_red/dt², D = β·m_red/dt. The
 * symplectic Euler step is stable for an effective mass m_red/γ while γ(κ + 2β) < 4, so these
 * hold up to γ = 4 (a box corner, a tall block's tangential mode, a long chain); see the doc. */
#define FR_CONTACT_KAPPA 0.2
#define FR_CONTACT_BETA  0.4
/* Gravity used only to place the default damping ramp (half the rest depth of m_red), m/s². */
#define FR_CONTACT_RAMP_G 9.81

/* A surface material. Pairs combine two of them with fr_contact_params_combine. */
typedef struct fr_contact_material {
    double stiffness; /* N/m³, pressure per metre of thickness; <= 0: not given (mass-scaled) */
    double damping;   /* N·s/m³, pressure per m/s of thickness rate (used when stiffness > 0) */
    double mu_s;      /* static friction coefficient, >= 0 */
    double mu_k;      /* kinetic friction coefficient, 0 <= mu_k <= mu_s */
} fr_contact_material;

/* Resolved gains of one pair (constant; built once when the pair is created). */
typedef struct fr_contact_params {
    int law;             /* enum fr_contact_law */
    double stiff_n;      /* normal stiffness: N/m (MEAN_DEPTH) or N/m³ (VOLUME), > 0 */
    double damp_n;       /* normal damping: N·s/m (MEAN_DEPTH) or N·s/m³ (VOLUME), >= 0 */
    double stiff_t;      /* tangential (static friction) stiffness, same units as stiff_n, > 0 */
    double damp_t;       /* tangential damping, same units as damp_n, >= 0 */
    double mu_s, mu_k;   /* friction coefficients, 0 <= mu_k <= mu_s */
    double damping_ramp; /* m: normal damping scaled by min(1, mean depth / ramp); 0 = none */
    double max_force;    /* N: cap on the normal force; 0 = no cap */
    double normal_blend; /* normal quality below which the previous normal is blended in, [0,1) */
    /* m: the implicit step's pressure law p(t) = k·δ_s·(exp(t/δ_s) − 1) stiffens with the depth
     * t beyond δ_s (docs/contact.md §5), so a contact's stiffness grows with the load it carries;
     * 0 = the linear law p = k·t. Not used by fr_contact_eval (the explicit evaluation). */
    double stiffen_depth;
    /* m, >= 0: when positive and below stiffen_depth, the law stiffens from this depth instead,
     * and continues along its tangent from the same pressure as with stiffen_depth (the pair's
     * load, not the cap, bounds how stiff it gets). Set per step for a body standing on a
     * narrow side (fr_contact_stance_depth); 0 = none. */
    double stiffen_cap;
} fr_contact_params;

/* The state of one pair that persists across ticks (owned by the caller, e.g. the world's
 * contact cache). Zero-initialised or reset = "not in contact". */
typedef struct fr_contact_state {
    int active;                 /* 1 after an evaluation with overlap */
    int sliding;                /* 1 when the friction slipped at the last evaluation */
    fr_vec3 normal;             /* last normal, world, unit, A → B */
    fr_vec3 anchor_a, anchor_b; /* bonded points in A's and B's body frames, m */
    fr_vec3 axis_a, axis_b;     /* spin reference directions in A's and B's body frames, unit */
    double mean_depth;          /* last V/A, m */
    double max_depth;           /* last extent along n, m */
    double bond_stiffness;      /* the implicit step's bond stiffness at the last step, N/m */
    double bond_energy;         /* the bond's elastic energy at the last step's end, J (a
                                   bond built again holds no more, unless the bodies' motion
                                   since stretched it) */
    double bond_rbar;           /* the spin radius r̄ its twist was weighted by then, m */
    double stiffen;             /* the stiffening depth its law last took, m (0: none yet) */
    fr_vec3 qaxis_a; /* the pressure quadrature's first axis, A's frame, unit (zero: none yet) */
} fr_contact_state;

/* Kinematic state of a body as the contact needs it. A static body has v = w = 0. */
typedef struct fr_contact_body {
    fr_pose pose; /* body frame in world; its origin is the centre of mass (torques are about it) */
    fr_vec3 v;    /* velocity of the centre of mass, m/s, world */
    fr_vec3 w;    /* angular velocity, rad/s, world */
    /* the rotation vector its pose turns by over the step about the centre of mass, rad, world
     * (h·ω for a free or kinematic body; zero when unknown): the implicit step's model adds the
     * arc's second-order drift of its contact point, which the velocities do not carry */
    fr_vec3 turn;
    /* m: where the body is less pose.p, when its position is kept to better than a double at
     * its size holds (the rounding errors of the steps that summed pose.p; zero when not kept).
     * fr_contact_model_advance takes the displacement with it; a build takes the geometry at
     * pose.p. */
    fr_vec3 p_lo;
    /* A curved shape that rolls in this pair (a sphere about its centre, a cylinder or capsule
     * about its axis; docs/contact.md §5, "Rolling"): roll_turn, h·ω of its last step (the part
     * about the axis for a cylinder or capsule; zero: none), and roll_o, the shape's centre,
     * world. Its contact is not a material point: the anchor it carries strays along the arc of
     * that turn, which the bond read takes out. roll_kind: 0 none, 1 a sphere (centre roll_o),
     * 2 a cylinder or capsule (axis roll_axis through roll_o, unit): a pair with such a shape
     * takes its model's point c under that centre or axis (fr_contact_model_build). */
    fr_vec3 roll_turn, roll_o;
    fr_vec3 roll_axis;
    int roll_kind;
} fr_contact_body;

/* Output of one pair evaluation. */
typedef struct fr_contact_result {
    int in_contact;         /* 0 when the polyhedron was empty (everything below is zero) */
    int sliding;            /* 1 slip, 0 stick */
    fr_vec3 force_a;        /* total force on A, N, world */
    fr_vec3 torque_a;       /* torque on A about A's centre of mass, N·m */
    fr_vec3 force_b;        /* = −force_a */
    fr_vec3 torque_b;       /* torque on B about B's centre of mass, N·m */
    fr_vec3 point;          /* centre of pressure (volume centroid), m: friction acts here */
    fr_vec3 normal;         /* unit, from A into B */
    double max_depth;       /* extent of the intersection along n, m */
    double mean_depth;      /* V / A, m */
    double volume;          /* V, m³ */
    double area;            /* A, projected contact area, m² */
    double normal_force;    /* N >= 0 (B is pushed along +n, A along −n) */
    fr_vec3 friction_force; /* on A, tangential, N */
    double friction_torque; /* on A about +n, N·m */
    double friction_limit;  /* μ·N of the current state (μ_s sticking, μ_k sliding), N */
    double spin_radius;     /* r̄: pressure-weighted mean distance from `point`, m */
    /* Linearisation for implicit integration. The wrench on A at `point`, (torque; force) in
     * world axes, changes by −K·δ − D·δ̇ for a small displacement twist δ = (θ; d) of A relative
     * to B at `point` (θ rotation, d translation). Both are symmetric positive semi-definite. */
    fr_mat6 K; /* (N·m/rad, N/rad; N, N/m) */
    fr_mat6 D; /* same with s/… */
} fr_contact_result;

/* Reduced mass of a pair; a mass <= 0 or infinite means static/kinematic (infinite). */
double fr_contact_reduced_mass(double mass_a, double mass_b);

/*
 * Mass-scaled gains (MEAN_DEPTH law): K_n = K_t = κ·m_red/dt², D_n = D_t = β·m_red/dt, the damping
 * ramp at half the rest depth of m_red under FR_CONTACT_RAMP_G, no force cap, normal_blend 0.05.
 * κ <= 0 selects FR_CONTACT_KAPPA, β < 0 FR_CONTACT_BETA (β = 0: no damping).
 */
fr_contact_params fr_contact_params_scaled(double m_red, double dt, double kappa, double beta,
                                           double mu_s, double mu_k);

/*
 * Pair parameters from two materials. Friction: μ = sqrt(μ_a·μ_b) for μ_s and μ_k separately.
 * Stiffness: when neither material gives one, mass-scaled gains as fr_contact_params_scaled with
 * the defaults; otherwise the VOLUME law with the layers in series, 1/k = 1/k_a + 1/k_b (a
 * material without stiffness counts as rigid) and the same rule for damping (which keeps a
 * common relaxation time c/k); tangential = normal; no ramp. FR_ERR_INVAL on bad input.
 */
int fr_contact_params_combine(const fr_contact_material *a, const fr_contact_material *b,
                              double m_red, double dt, fr_contact_params *out);

/* The same with the mass-scaled gains' κ and β (as in fr_contact_params_scaled) for pairs whose
 * materials give no stiffness. */
int fr_contact_params_combine_ex(const fr_contact_material *a, const fr_contact_material *b,
                                 double m_red, double dt, double kappa, double beta,
                                 fr_contact_params *out);

/* FR_OK when every field is in its documented range, else FR_ERR_INVAL. */
int fr_contact_params_check(const fr_contact_params *p);

/*
 * The stiffening depth for a body standing on a side `width` wide (its least extent across the
 * normal) and `height` tall (along it), m: a block near its tipping angle stands on a strip at
 * its edge, and the law's compliance there lets it lean by about √(2·δ·h) before it tips, a
 * share 2·√(2·δ·h)/w of its tipping angle whatever its size (docs/contact.md §8). Capped at
 * FR_CONTACT_STANCE·w²/h, the lean stays near 1.3 %; never below stiffen_depth /
 * FR_CONTACT_STANCE_FLOOR: at 5 ms that lets a rod of 3 mm × 30 cm (h/w 100) take its whole cap
 * (a floor of 40, set while moving pairs took the cap too, let it tip at 0.86 of w/h). A needle
 * of 1 mm × 1 m is beyond it. stiffen_depth when width or height is not positive.
 */
double fr_contact_stance_depth(double stiffen_depth, double width, double height);
#define FR_CONTACT_STANCE       2e-5
#define FR_CONTACT_STANCE_FLOOR 4000.0

/* Forget the pair's contact (call when the shapes no longer overlap). */
void fr_contact_state_reset(fr_contact_state *s);

/*
 * Contact forces of one pair for the current tick. `poly` is the intersection of A's and B's
 * shapes (fr_polyhedron_out: faces counter-clockwise from outside, owners FR_FACE_A/B); an
 * empty polyhedron (no faces) resets the state and returns in_contact = 0. Updates `st` (normal,
 * anchors, stick/slip), so call it exactly once per pair per tick. Never allocates.
 * Returns FR_OK, FR_ERR_INVAL (bad params or polyhedron indices) or FR_ERR_NUMERIC (non-finite
 * input; the state is reset and the result zero).
 */
int fr_contact_eval(const fr_contact_params *p, const fr_polyhedron_out *poly,
                    const fr_contact_body *a, const fr_contact_body *b, fr_contact_state *st,
                    fr_contact_result *out);

/* Options of fr_contact_eval_ex. */
enum fr_contact_eval_flags {
    /* The caller has checked `p` (fr_contact_params_check == FR_OK) and `poly` comes from
     * fr_collide_pair / fr_polytope_intersect (valid indices and owners): they are not checked
     * again. Results are identical; for a per-tick caller such as the world's contact stage. */
    FR_CONTACT_EVAL_CHECKED = 1u << 0,
};

/* fr_contact_eval with options (flags: enum fr_contact_eval_flags; 0 = fr_contact_eval). */
int fr_contact_eval_ex(const fr_contact_params *p, const fr_polyhedron_out *poly,
                       const fr_contact_body *a, const fr_contact_body *b, fr_contact_state *st,
                       fr_contact_result *out, unsigned flags);

/*
 * A pair's K or D (about `point`, from fr_contact_result) in the bodies' own velocity coordinates
 * ν = (ω; v of the centre of mass), world axes, for an implicit step: the wrench on A about com_a
 * changes by −(aa·δν_A + ab·δν_B) and the wrench on B about com_b by −(abᵀ·δν_A + bb·δν_B).
 * (With X_A: ν_A ↦ twist of A at `point`: aa = X_AᵀKX_A, ab = −X_AᵀKX_B, bb = X_BᵀKX_B.)
 * Any output pointer may be NULL.
 */
void fr_contact_blocks(const fr_mat6 *Kc, fr_vec3 point, fr_vec3 com_a, fr_vec3 com_b, fr_mat6 *aa,
                       fr_mat6 *ab, fr_mat6 *bb);
/* (Kc is taken as symmetric, as K, D and their combinations are: aa and bb are formed exactly
 * symmetric, half of their entries copied from the other half.) */

/* ---------------------------------------------------------------- the implicit step's model */

/*
 * For an implicit step the contact is a model built once per step from the geometry at the
 * step's start (fr_contact_model_build), a response to the relative motion over the step
 * (fr_contact_respond: the mean wrench and its tangent, evaluated as often as the world's solve
 * needs) and a commit of the friction bond once the step is taken (fr_contact_model_commit).
 * docs/contact.md §5 derives it; in short:
 *
 * Local coordinates at the model's `point` c (an orthonormal basis of twists and wrenches):
 *   y = (ω·t1, ω·t2, v·n, v·t1, v·t2, ω·n) for the twist (ω; v) of A relative to B at c,
 *   w = (τ·t1, τ·t2, f·n, f·t1, f·t2, τ·n) for the wrench (τ; f) on A about c (power w·y).
 * Normal: at each of the patch's pressure quadrature points q (see fr_contact_model) the depth
 * at the step's end t'_q = t0_q + h·ṫ_q gives N'_q = (A/4)·(p(t'_q) + c·ṫ_q), clamped to >= 0
 * (no pull: a gap that does not close, or a side that lifts, carries nothing), with p the
 * (stiffening) pressure law; N' = Σ N'_q acts through the points. Friction: an isotropic
 * elasto-plastic bond in the coordinates q = (u·t1, u·t2, r̄·φ) (u the tangential bond
 * displacement, φ its twist, r̄ the spin radius): the trial force z = −k_f·(q0 + h·ẏ_f) − d_f·ẏ_f
 * is kept while |z| <= μ·N' (stick) and returned radially onto |z| = μ·N' (slip), with N' the
 * normal force of the same response; μ is μ_s for a bond that sticks at the step's start and μ_k
 * for one that slides (the caller switches a breaking bond to μ_k). The ellipse limit of the
 * explicit evaluation, (|f|/μN)² + (τ/μNr̄)² <= 1, is this circle.
 */
/* Pressure quadrature points of a model (see fr_contact_model): 5 on the patch, 4 on the band
 * that may close within the step. */
#define FR_CONTACT_PATCH_PTS 5
#define FR_CONTACT_NPTS      9

typedef struct fr_contact_model {
    fr_vec3 point;        /* c, where the model is linearised and friction acts, m */
    fr_vec3 normal;       /* n, from A into B */
    fr_vec3 t1, t2;       /* tangents, t2 = n × t1 */
    double area;          /* A, m² */
    double ax, ay;        /* area centroid relative to c along t1, t2, m */
    double ixx, ixy, iyy; /* ∫X², ∫XY, ∫Y² dA about the area centroid, m⁴ */
    double depth0;        /* mean depth V/A at the step's start, m (negative: a gap) */
    /* The normal pressure over the patch, by a 5-point quadrature that matches the patch's area,
     * centroid and second moments (the area centroid and two points on each principal axis, at
     * 0.93 of a rectangle's half-width on a level patch, at ±sqrt(2·I/A) on a tilted one, further
     * in on a side the thickness falls to zero towards; a level patch's four instead towards its
     * corners, within qcreach; docs/contact.md §5): the thickness field
     * fitted linear over the patch, each point carries p(t) of its own depth t. Exact for the
     * linear law; a tilting patch's deep side stiffens on its own; a point whose depth is
     * negative carries nothing (a rocking patch lifts). A pair that turns or moves fast adds 4
     * points at ±sqrt(2·I/A), A/4 each, on the band around the patch that lies within the step's
     * reach (fr_contact_model_build's `band`), with their (negative) depths: a face that rotates
     * flat within the step meets the ground where it lands, not only at the edge that touched at
     * the start. */
    int npts;                                        /* points in use: 5 or 9 */
    double px[FR_CONTACT_NPTS], py[FR_CONTACT_NPTS]; /* points relative to c along t1, t2, m */
    double pw[FR_CONTACT_NPTS];                      /* area per point, m² */
    double pt0[FR_CONTACT_NPTS];                     /* their depths at the start, m */
    double pn0[FR_CONTACT_NPTS];                     /* their elastic forces at the start, N */
    /* what places the patch's points (fr_contact_model_advance places them again): the two
     * axes e1, e2 along t1, t2 (unit; conjugate: e2 is e1's conjugate direction under the
     * patch's second moments, square to it on principal axes) and the second moments the points
     * on each carry (m⁴), the patch's reach along +e1, −e1, +e2, −e2 from the area centroid (m),
     * the thickness there (m), its slope along t1, t2, and the angle from t1 the rule gave
     * before turning down that slope (rad) */
    double qaxis[4], qli[2], qreach[4], qbase, qbeta[2], qth0;
    /* the patch's reach from the area centroid towards the corners of its reach along the axes
     * (+e1+e2, +e1−e2, −e1+e2, −e1−e2), m; 0: not measured (a gap's patch) */
    double qcreach[4];
    /* J: with the linear law (ds 0), the elastic energy the points miss, ½k·∫(t − t_fit)² dA, the
     * thickness' departure from its linear fit (an edge's or a corner's tent): the points carry
     * the force and its moments exactly but only the fit's energy. Added to the model's and the
     * response's energies, constant over the step; 0 for the stiffening law and a gap. */
    double e_res;
    double k;    /* pressure per metre of depth at zero depth, N/m³ */
    double ds;   /* stiffening depth δ_s, m (0: linear) */
    double xmax; /* the law continues along its tangent beyond xmax·δ_s (7; more when capped) */
    double c;    /* normal damping per area, the ramp included, N·s/m³ */
    double n0;   /* normal force of the start's elastic pressure, N */
    double max_force; /* cap on N', 0 = none, N */
    double kf, df;    /* friction bond stiffness N/m and damping N·s/m (spin: × r̄²) */
    double rbar;      /* spin radius r̄, m */
    double q0[3];     /* bond displacement at the start (u·t1, u·t2, r̄·φ), m */
    double mu_s, mu_k;
    int sliding; /* the bond slid at the last step: μ_k applies */
    /* m/s, >= 0: the bond also holds when its trial force exceeds μ·N by no more than the force
     * s·v a slip of this speed would add (s = h·kf + df): the velocity a solve accepts as zero
     * (the world sets its solver_tolerance), so a block at μ = tan θ exactly is not set sliding by
     * the solve's own residual. fr_contact_model_build sets 0. */
    double stick_speed;
    /* The geometry's tangent less the points' (fr_contact_model_set_geometry_tangent;
     * docs/contact.md §5, "The geometry's tangent"): G = −∂w/∂u over u = (turn about t1, turn about
     * t2, along n) of A relative to B, rows (τ·t1, τ·t2, f·n), N·m/rad, N·m/m, N/rad, N/m. A
     * response adds −G·(h·y) while gt_on (fr_contact_model_build clears it). */
    double gt[3][3];
    int gt_on;
    /* The turns the pair's curved shape is invariant to, (s11, s12, s22) along t1, t2
     * (src/world/contacts.c pair_roll; docs/contact.md §5, "Rolling"): taken out of the points.
     * depth rates and of their pressure's moments. 0 (fr_contact_model_build's): none. */
    double roll_s[3];
    bool roll;              /* roll_s is not zero */
    double c_area, kf_area; /* c before the damping ramp, kf before the bond's stiffening */
    double max_depth0;      /* the patch's extent along n less the gap at the start, m */
    int slab; /* the patch lies between two parallel flat faces (its outline does not move with
                 the depth: fr_contact_model_advance) */
    /* The pressure law linearised at the force iterates λ (fr_contact_model_linearise): the depth
     * t(λ) and the tangent K(λ) per point, reused by every response at the same λ (a solve
     * evaluates several per iterate; the law's transcendental inverse dominated their cost). */
    int lin_valid;
    double lin_lam[FR_CONTACT_NPTS], lin_t[FR_CONTACT_NPTS], lin_K[FR_CONTACT_NPTS];
} fr_contact_model;

/*
 * The model of the next step from this one, for a pair whose bodies moved from a0, b0 (this
 * model's start; their pose and p_lo are read) to a, b by a small rigid motion: its frame
 * carried by A, each point's depth moved by B's displacement relative to A along n (first
 * order: exact for flat faces but for the outline's change and O(θ²) terms; the displacements
 * taken as differences, with the positions' remainders p_lo), then the pressures, damping, bond
 * and state as fr_contact_model_build makes them. Returns the largest relative displacement at the
 * points (m; for a slab, where the update is exact along n, only its part across n);
 * FR_ERR_RANGE, leaving model and state as they were, when that exceeds `limit` (m) or when a
 * slab's point would lift off;
 * another negative FR_ERR_* when the model cannot be advanced (no patch, band points). The
 * caller decides from the accumulated displacement when to build from the geometry again
 * (docs/contact.md §5, "Advancing a resting contact").
 */
double fr_contact_model_advance(const fr_contact_params *p, const fr_contact_body *a0,
                                const fr_contact_body *b0, const fr_contact_body *a,
                                const fr_contact_body *b, double limit, fr_contact_state *st,
                                fr_contact_model *m);

/* The response of a model to a relative motion over the step. */
typedef struct fr_contact_response {
    double w[6];    /* mean wrench on A over the step, local coordinates (N·m, N) */
    double C[6][6]; /* −∂(h·w)/∂y, symmetric positive semi-definite (μ·∂N'/∂y left out) */
    double normal; /* N' >= 0, N */
    double z[3];   /* friction force in bond coordinates (f·t1, f·t2, τ/r̄), N */
    double trial;  /* |trial friction force|, N */
    /* per quadrature point: the elastic force (>= 0) to take as the next iterate λ, N, and how
     * far its depth is from the law's at λ, m (lam given only) */
    double elastic[FR_CONTACT_NPTS];
    double mismatch[FR_CONTACT_NPTS];
    double depth[FR_CONTACT_NPTS]; /* the points' depths at the step's end, m */
    double bond[3];   /* the bond's elastic displacement at the step's end (as q0), m */
    int slip;         /* 1 when the friction is at its limit (or there is no normal force) */
    double gt_energy; /* ½·uᵀ·G·u, the geometry's tangent's share of the elastic energy, J */
} fr_contact_response;

/*
 * The model of one step of length dt from a pair's geometry at the step's start. `poly` is the
 * intersection of A's shape with B's shape moved by `gap`·n towards A (n the patch's normal):
 * gap = 0 for the real intersection; gap > 0 for a pair that is apart or touching (a speculative
 * contact that takes the load inside the step when the gap closes: the model's depth0 is the
 * patch's extent along n minus gap, i.e. minus the distance left between the thickest points).
 * `band` (NULL: none) is, for a real intersection (gap = 0), the intersection with B moved by
 * `band_gap`·n towards A instead, n the pair's normal at the last step: the patch and the band
 * around it that can close within the step (the model adds points on the band, see above).
 * Reads and re-anchors the friction bond in `st` (at the start's poses); resets `st` when the patch
 * is empty. Returns FR_OK (m->area = 0: nothing to model), FR_ERR_INVAL or FR_ERR_NUMERIC (state
 * reset). Never allocates.
 */
int fr_contact_model_build(const fr_contact_params *p, const fr_polyhedron_out *poly, double gap,
                           const fr_polyhedron_out *band, double band_gap, const fr_contact_body *a,
                           const fr_contact_body *b, double dt, fr_contact_state *st,
                           fr_contact_model *m);

/*
 * The geometry's tangent (docs/contact.md §5). On a lifted patch (its thickness reaching zero
 * inside it) the model's points, fixed over the step, do not move as a build at the step's end
 * would place them, and the next step's model is stiffer than this one's tangent by far more
 * than the law's curvature: an implicit step then rocks in a growing period 2 (small bodies at
 * 5 ms). The caller measures the tangent of the builds themselves, K = −∂w/∂u, by differences
 * of fr_contact_model_start_wrench over models built at poses moved by u (A relative to B about
 * m's point), and gives it here. The model keeps G, the part of K's symmetric part beyond its
 * points' own tangent (Σ K_q·e_q·e_qᵀ, e_q = (Y_q, −X_q, 1)) where that is stiffer: the
 * difference's positive eigen-directions, in lengths and forces (tilts times √A, moments over
 * √A). A softer build cannot drive the rocking, and a spring taken softer than the points' own
 * releases energy the step never stored (kept, a tipping block's landings gained up to 1.3e-3
 * of m·g·h in a step; K's antisymmetric part, the builds' points moving with the pose, 0.2 J).
 * K's couplings below FR_CONTACT_GT_FLOOR of √(K_ii·K_jj) are taken as zero (the differences'
 * rounding: a block tipping square to a slope kept its motion in the plane to 1e-17 rad/s
 * without it, to 1e-11 with it). The responses take G (see fr_contact_respond's energy) unless
 * none of its couplings reaches `least` of the points' own (√(P_ii·P_jj)); m->gt_on says which.
 */
#define FR_CONTACT_GT_FLOOR 1e-6
/* The world's `least` for a pair that did not keep one at its last build (and 0 for one that
 * did: a tangent switched off for a step jolts a bond at its limit, and a 1.3 cm cube at
 * μ = tan θ + 0.005 whose tangent dipped to 0.02 of the points' own for single steps slid off).
 * A smaller one cannot drive the rocking, which needs the next build stiffer than the step's
 * model by 4 plus the model's own in units of the body's inertia over dt², and every response
 * pays for it (measured: 0.2–70 of the points' own on small bodies rocking at 5 ms, median 1.1;
 * 7e-4 to 0.022 on a resting wall of 1 m blocks, where keeping it cost 15 % of the step). */
#define FR_CONTACT_GT_MIN 0.1
void fr_contact_model_set_geometry_tangent(fr_contact_model *m, const double K[3][3], double least);
/* The normal pressure of m at its start as (τ·t1, τ·t2, f·n) on A about ref's point, in ref's
 * axes (N·m, N·m, N): a model built at moved poses measured against the step's model. */
void fr_contact_model_start_wrench(const fr_contact_model *m, const fr_contact_model *ref,
                                   double out[3]);

/* What a pair's model can be built again from at moved poses: the shapes, each as its body
 * carries it, the pair's collision cache (copied, left as it is) and the scratch a build uses. */
typedef struct fr_contact_rebuild {
    const fr_shape *shape_a, *shape_b;
    fr_pose local_a, local_b;
    const fr_collide_cache *cache;
    fr_collide_work *work;
    fr_polyhedron_out *poly;
    fr_contact_model *scratch;
} fr_contact_rebuild;

/* Measures the builds' tangent of m (built with p at the bodies a, b, leaving the state st) from
 * six models built at poses moved by a tenth of a stiffening depth at the patch's edge, A
 * relative to B about m's point (move_a: A is moved, else B the other way), and sets it
 * (fr_contact_model_set_geometry_tangent, which keeps it or not: m->gt_on). 1 when measured; 0
 * when m's patch is not lifted (thickest over mean at most 1.5: a uniform slab's points move as
 * a build places them) or a move parts the bodies; a negative FR_ERR_* when a build fails. K
 * (NULL: not wanted) receives the builds' tangent when measured, to give again to models built
 * at nearly the same poses. Never allocates. */
int fr_contact_model_measure_tangent(fr_contact_model *m, const fr_contact_params *p,
                                     const fr_contact_state *st, fr_contact_body a,
                                     fr_contact_body b, bool move_a, double dt,
                                     const fr_contact_rebuild *g, double least, double K[3][3]);

/* Scales the model's normal law (pressure per depth and damping; its start forces and kept
 * linearisation with them) by s > 0, leaving friction as built: for a stiffness set from what is
 * known only once the patch is (the world's robot links: the tree's effective mass at the patch,
 * and the patch's area, docs/robots.md). */
void fr_contact_model_scale_normal(fr_contact_model *m, double s);

/* Scales the band points' share of the normal law (their weights, so force, stiffness and damping
 * alike) by s in (0, 1]: after fr_contact_model_scale_normal, a band that should not take a
 * factor the patch's own area set (a robot link's sliver, docs/robots.md). */
void fr_contact_model_scale_band(fr_contact_model *m, double s);

/* y (local) from the relative twist (ω; v) of A relative to B at the model's point. */
void fr_contact_model_local(const fr_contact_model *m, fr_svec twist, double y[6]);
/* The wrench (τ about the point; f) on A, world axes, from local w. */
fr_svec fr_contact_model_wrench(const fr_contact_model *m, const double w[6]);

/*
 * Mean wrench over a step of length h for the relative motion y (local), with friction
 * coefficient mu (μ_s or μ_k, see above); flags: enum fr_contact_respond_flags.
 * lam NULL: each quadrature point's pressure law at its depth at the step's end, t'. lam given
 * (m->npts forces, N): each point's law linearised at its force λ, i.e. at the depth t(λ)
 * where it carries λ: N' = λ + K(λ)·(t' − t(λ)) (the same at t' = t(λ)). A Newton solve that
 * iterates on λ (λ ← r->elastic) converges far better on the stiffening law than one that
 * linearises it at the depth of its iterate.
 * nlag < 0: the friction limit is μ·N' of this response; nlag >= 0: μ·nlag, the normal force of
 * the solve's previous iterate (a fixed limit makes the friction the gradient of a convex
 * potential, so the tangent C is exact; at convergence nlag = N').
 */
enum fr_contact_respond_flags {
    FR_RESPOND_TANGENT = 1u << 0, /* fill C (without it C is left as it was) */
    /* a point that carries nothing within a stiffening depth of touching gets the loaded
     * side's tangent (the first Newton direction of a step then sees the contacts it closes) */
    FR_RESPOND_KINK_LOADED = 1u << 1,
    /* a slipping bond gets the sticking bond's tangent: an iteration towards a solution where it
     * sticks again (a slip that reversed) is not left without stiffness along the slip, where a
     * fixed-point iteration then overshoots from side to side (robots.c) */
    FR_RESPOND_STICK_TANGENT = 1u << 2,
};
/* Point q (< FR_CONTACT_NPTS), when it carries nothing, gets the loaded side's tangent whatever
 * its depth: a point an iteration has loaded and unloaded in turn, whose kink its iterates jump
 * across (the robots' link-contact iteration, src/world/robots.c). */
#define FR_RESPOND_KINK_POINT(q) (1u << (8 + (q)))
/* The friction limit's relative slack: a bond whose trial force is within this share of μ·N
 * sticks. Static friction is an inequality: a load at the limit must hold, not slide on the
 * step's own noise (a block on a slope with μ = tan θ exactly). Measured, a bond held at its
 * limit sees its force against μ·N wander by up to 7e-6 (its elastic give under the solve's
 * tolerance, the advanced models' updates): at 1e-6 a block at μ_s = tan θ with μ_k below broke
 * away and slid off within 70 ms. 1e-5 of μ is far below any friction coefficient's
 * uncertainty. */
#define FR_CONTACT_STICK_SLACK 1e-5
/* A new contact (or one whose bodies were given velocities, fr_world_settle) whose bodies move
 * across each other at its point faster than this (m/s; spin at the patch's radius) starts
 * sliding, under μ_k: a box landing or launched across the ground slows at μ_k·g from its first
 * step. Slower, it starts held by its bond. */
#define FR_CONTACT_START_SLIP_SPEED 1e-6
/* Whether a relative twist y (local, fr_contact_model_local) at m's point is a slide by that
 * rule. */
bool fr_contact_model_starts_sliding(const fr_contact_model *m, const double y[6]);
void fr_contact_respond(const fr_contact_model *m, const double y[6], double h, double mu,
                        const double *lam, double nlag, unsigned flags, fr_contact_response *r);
/* Keep the law's linearisation at the forces lam (m->npts, N) in the model, for the responses
 * that are given the same lam (bit for bit; any other lam is linearised as it comes). */
void fr_contact_model_linearise(fr_contact_model *m, const double *lam);
/* The depth at which the pressure law carries the pressure p (its inverse), m. */
double fr_contact_depth_of_pressure(double k, double ds, double p);

/* A local tangent C (as in fr_contact_response) in world axes at the model's point, (ang; lin)
 * order: EᵀCE with E the local basis; symmetric. */
void fr_contact_tangent_world(const fr_contact_model *m, const double C[6][6], fr_mat6 *out);

/* The pressure law: p(t) (N/m²) and its slope (N/m³) at depth t (0 for t <= 0). */
double fr_contact_pressure(double k, double ds, double t, double *slope);
/* Its energy per area, ∫_0^t p (J/m²). */
double fr_contact_pressure_energy(double k, double ds, double t);

/* Elastic energy stored in the contact at the step's start (normal pressure and bond; with the
 * linear law the pressure's is ½k·∫t² dA, the points' plus e_res), J. */
double fr_contact_model_energy(const fr_contact_model *m);
/* ... and at the step's end as the step's solution has it (the points' depths and the bond after
 * the response r), J. */
double fr_contact_response_energy(const fr_contact_model *m, const fr_contact_response *r);

/*
 * After the step: store the bond so that it carries the step's final friction (a slipping bond is
 * moved so that its spring alone holds the kinetic force; a sticking one keeps its anchors) at
 * the bodies' new poses (a, b: their pose and p_lo are read); mark it sliding or sticking for
 * the next step.
 */
void fr_contact_model_commit(const fr_contact_model *m, const fr_contact_response *r,
                             const fr_contact_body *a, const fr_contact_body *b,
                             fr_contact_state *st);

#ifdef __cplusplus
}
#endif
#endif
