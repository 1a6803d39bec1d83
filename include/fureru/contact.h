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
} fr_contact_state;

/* Kinematic state of a body as the contact needs it. A static body has v = w = 0. */
typedef struct fr_contact_body {
    fr_pose pose; /* body frame in world; its origin is the centre of mass (torques are about it) */
    fr_vec3 v;    /* velocity of the centre of mass, m/s, world */
    fr_vec3 w;    /* angular velocity, rad/s, world */
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

/* FR_OK when every field is in its documented range, else FR_ERR_INVAL. */
int fr_contact_params_check(const fr_contact_params *p);

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

#ifdef __cplusplus
}
#endif
#endif
