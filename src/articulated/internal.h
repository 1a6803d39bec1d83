/* src/articulated internals: the frozen model, the workspace and block-structured spatial
 * inertia helpers shared by the algorithms. */
#ifndef FR_ARTICULATED_INTERNAL_H
#define FR_ARTICULATED_INTERNAL_H

#include "fureru/articulated.h"

/* A symmetric 6×6 (articulated) inertia [A B; Bᵀ C] with A and C symmetric and stored packed
 * (00, 01, 02, 11, 12, 22): 21 numbers, and the block structure instead of dense 6×6 algebra. */
typedef struct fri_sym6 {
    double A[6], B[9], C[6]; /* B row-major */
} fri_sym6;

typedef struct fri_link {
    fr_link_def def; /* names point into the tree's own copies */
    int parent;
    fr_joint_type type;
    int qi, vi, nq, nv; /* offsets and sizes in q and qd */
    fr_xform XT;        /* parent → joint frame (constant) */
    bool XT_rot_id;     /* XT has no rotation (skips a 3×3 product per step) */
    bool Ic_diag;       /* the inertia about the COM is diagonal in link axes */
    int axis_kind;      /* revolute about a coordinate axis: 0/1/2 (x/y/z), else -1 */
    double axis_sign;   /* ±1 with axis_kind: the axis is axis_sign·e_kind */
    fr_rbi I;           /* spatial inertia about the link origin, link coordinates */
    fr_svec S[6];       /* motion subspace columns, link coordinates (constant) */
    int dinv_off;       /* offset of this joint's nv×nv block in the workspace's Dinv pool */
    int mimic;          /* the link whose joint this one follows, -1 */
} fri_link;

struct fr_tree {
    fri_link *links;
    int n, cap;
    int nq, nv;
    int ndinv;        /* Σ nv_i² */
    int nmimic;       /* mimic (follower) joints */
    int *mimic_links; /* [nmimic] their links */
    bool final;
};

/* Per-link mode of the joint forces during one step (decided before, revised after a solve). */
enum { FRI_LIM_NONE = 0, FRI_LIM_LOWER = -1, FRI_LIM_UPPER = 1 };

/*
 * Workspace. The ABA works in world (ground) coordinates, about the world origin: inertias
 * then sum without frame changes. RNEA and CRBA work in link coordinates (an independent
 * formulation for the tests).
 */
struct fri_tree_ws {
    /* positions, cached by q */
    fr_xform *X0; /* [n] world → link */
    double *qc;   /* [nq] the q X0 was computed for */
    bool pos_valid, cfg_valid;
    /* configuration-dependent world quantities (valid with cfg_valid) */
    fr_svec *Sw;  /* [nv] motion subspace columns in world coordinates */
    fri_sym6 *Iw; /* [n] rigid inertias in world coordinates about the origin */
    /* ABA */
    fr_svec *vw;    /* [n] world twists */
    fr_svec *c;     /* [n] velocity products v × vJ (world) */
    fr_svec *a;     /* [n] link accelerations (world; gravity as a base acceleration) */
    fr_svec *pA;    /* [n] articulated bias forces */
    fr_svec *p0;    /* [n] rigid bias forces (kept for re-solves) */
    fri_sym6 *IA;   /* [n] articulated inertias (reduced by the link's own joint after pass 2) */
    fr_svec a0;     /* base acceleration −s·g of the current solve */
    fr_svec *U;     /* [nv] IA·S columns */
    fr_svec *W;     /* [nv] U·D⁻¹ columns */
    double *Dinv;   /* [ndinv] per joint: 1/D (1 DOF) or the Cholesky factor of D (more DOF);
                     * a free root's under the gyroscopic term: the LU factor of D + dt/2·G */
    bool *lu;       /* [n] the link's Dinv block holds an LU factor (pivots in piv) */
    int *piv;       /* [nv] those factors' row pivots */
    double gyro_h;  /* dt/2 while an Euler step forms its inertias (the gyroscopic term), else 0 */
    fr_svec *Iv;    /* [n] rigid momenta I·v of the links (pass 1) */
    fr_svec *hc;    /* [n] a free root's subtree momenta Σ I·v (scratch) */
    fri_sym6 *Icw;  /* [n] and composite inertias Σ I (world, about the origin; scratch) */
    double *u;      /* [nv] τ̃ − Sᵀ pA */
    double *taut;   /* [nv] joint force part known before the solve (τ̃) */
    double *H;      /* [nv] joint force part ∝ −qdd (implicit terms + armature) */
    double *Hm;     /* [nv] motor share of H (for the saturation check) */
    double *taum;   /* [nv] motor share of τ̃ */
    double *qdd_p;  /* [nv] prescribed acceleration (hard limits) */
    int *lim;       /* [n] FRI_LIM_* */
    bool *lim_hard; /* [n] the active limit is a prescribed (hard) one */
    bool *lim_off;  /* [n] a limit released in this step's solve (not engaged again) */
    /* [n] the side of a limit the last solve engaged within its step: the next solve from the
     * same start (the world's contact iteration) starts with it engaged */
    int *lim_step;
    bool *sat;      /* [n] motor saturated: taum holds the clamped force */
    int *vlim;      /* [n] motor at its speed limit (±1): a velocity servo toward ±max_velocity */
    double *vlim_k; /* [n] that servo's gain, N·m·s/rad or N·s/m */
    /* RNEA / CRBA (link coordinates) */
    fr_xform *Xup; /* [n] parent → link */
    fr_svec *f;    /* [n] RNEA forces */
    fr_svec *al;   /* [n] RNEA link accelerations */
    fr_svec *vl;   /* [n] RNEA link twists */
    fr_rbi *Ic;    /* [n] CRBA composite inertias */
    /* misc */
    double *J;       /* [6·nv] Jacobian scratch */
    double *vit;     /* [nv] Verlet: the mid-step velocity being iterated */
    double *qd0;     /* [nv] Verlet: velocities at the start of the step */
    double *dv_prev; /* [nv] Verlet: last step's v⁺ − qd (the fixed point's first guess) */
    double *q0;      /* [nq] Verlet: positions at the start of the step */
    /* mimic constraints (mimic.c): per constraint k the response of the tree to a unit force
     * pair, accelerations R (nv) and link accelerations Ra (n); G R; the multipliers */
    double *mim_R;      /* [nmimic·nv] */
    fr_svec *mim_Ra;    /* [nmimic·n] */
    double *mim_A;      /* [nmimic²] */
    double *mim_b;      /* [nmimic] */
    double *mim_lambda; /* [nmimic] constraint forces of the last solve, N·m or N */
    double *mim_u;      /* [nv] scratch */
    fr_svec *mim_pA;    /* [n] scratch */
    int *path;          /* [n] fr_tree_point_inv_mass: the links from one to the root */
    /* fr_tree_step_revise: the last Euler step's solve, while its inertias and modes hold */
    bool revisable;  /* set by a finished Euler step, cleared by any other articulated solve */
    double rev_dt;   /* that step's dt, s */
    double *rev_qdd; /* [nv] the revision's change of qdd */
    fr_svec *rev_a;  /* [n] and of the link accelerations */
    double *resp_x;  /* [3·nv] its τ̃ − Sᵀ pA, per force */
};

/* ---------------------------------------------------------------- block inertia helpers */

static inline fr_vec3 fri_psym_mulv(const double *P, fr_vec3 v)
{
    return fr_v3(P[0] * v.x + P[1] * v.y + P[2] * v.z, P[1] * v.x + P[3] * v.y + P[4] * v.z,
                 P[2] * v.x + P[4] * v.y + P[5] * v.z);
}

/* Hot: inlined even where GCC's size heuristics at -O2 would not. */
#if defined(__GNUC__)
#define FRI_HOT_INLINE static inline __attribute__((always_inline))
#else
#define FRI_HOT_INLINE static inline
#endif

FRI_HOT_INLINE fr_svec fri_sym6_mulv(const fri_sym6 *I, fr_svec v)
{
    const double *B = I->B;
    fr_vec3 w = v.ang, u = v.lin;
    fr_vec3 Bu = fr_v3(B[0] * u.x + B[1] * u.y + B[2] * u.z, B[3] * u.x + B[4] * u.y + B[5] * u.z,
                       B[6] * u.x + B[7] * u.y + B[8] * u.z);
    fr_vec3 Btw = fr_v3(B[0] * w.x + B[3] * w.y + B[6] * w.z, B[1] * w.x + B[4] * w.y + B[7] * w.z,
                        B[2] * w.x + B[5] * w.y + B[8] * w.z);
    return fr_sv(fr_v3_add(fri_psym_mulv(I->A, w), Bu), fr_v3_add(Btw, fri_psym_mulv(I->C, u)));
}

/* dst += I − Σ_k u_k w_kᵀ over n columns, where Σ u wᵀ = U D⁻¹ Uᵀ is symmetric (only the
 * upper halves of the A and C blocks are formed). n = 0 adds I whole. */
static inline void fri_sym6_add_reduced(fri_sym6 *restrict dst, const fri_sym6 *restrict I,
                                        const fr_svec *u, const fr_svec *w, int n)
{
    double A0 = I->A[0], A1 = I->A[1], A2 = I->A[2], A3 = I->A[3], A4 = I->A[4], A5 = I->A[5];
    double C0 = I->C[0], C1 = I->C[1], C2 = I->C[2], C3 = I->C[3], C4 = I->C[4], C5 = I->C[5];
    double B[9];
    for (int e = 0; e < 9; e++) B[e] = I->B[e];
    for (int k = 0; k < n; k++) {
        const fr_vec3 ua = u[k].ang, ul = u[k].lin, wa = w[k].ang, wl = w[k].lin;
        A0 -= ua.x * wa.x, A1 -= ua.x * wa.y, A2 -= ua.x * wa.z;
        A3 -= ua.y * wa.y, A4 -= ua.y * wa.z, A5 -= ua.z * wa.z;
        C0 -= ul.x * wl.x, C1 -= ul.x * wl.y, C2 -= ul.x * wl.z;
        C3 -= ul.y * wl.y, C4 -= ul.y * wl.z, C5 -= ul.z * wl.z;
        B[0] -= ua.x * wl.x, B[1] -= ua.x * wl.y, B[2] -= ua.x * wl.z;
        B[3] -= ua.y * wl.x, B[4] -= ua.y * wl.y, B[5] -= ua.y * wl.z;
        B[6] -= ua.z * wl.x, B[7] -= ua.z * wl.y, B[8] -= ua.z * wl.z;
    }
    dst->A[0] += A0, dst->A[1] += A1, dst->A[2] += A2;
    dst->A[3] += A3, dst->A[4] += A4, dst->A[5] += A5;
    dst->C[0] += C0, dst->C[1] += C1, dst->C[2] += C2;
    dst->C[3] += C3, dst->C[4] += C4, dst->C[5] += C5;
    for (int e = 0; e < 9; e++) dst->B[e] += B[e];
}

/* Motion-subspace product Sᵀ f for one column. */
static inline double fri_sdot(fr_svec s, fr_svec f)
{
    return fr_sv_dot(s, f);
}

/* Joints with PD, damping, armature and limits: 1-DOF and spherical. */
static inline bool fri_controllable(const fri_link *l)
{
    return l->nv == 1 || l->type == FR_JOINT_SPHERICAL;
}

/* Mimic constraints (mimic.c), after a solve whose articulated inertias are still in the
 * workspace: correct qdd (and the link accelerations) so that every follower lands on
 * m·q_j + o at the step's end (positions true: from q, qd over dt) or keeps its velocity
 * relation (positions false: G qdd = 0); the forces go to mim_lambda. */
void fri_mimic_project(const fr_tree *t, fr_tree_data *d, double dt, bool positions);
/* Response of the tree (accelerations R[nv], link accelerations Ra[n] or NULL) to the
 * generalised force tau (nv, may alias R; NULL: none) and the spatial link forces fext (n, world
 * about the origin; NULL: none), on the articulated inertias of the last aba_inertias. */
void fri_tree_response(const fr_tree *t, fr_tree_data *d, const double *tau, const fr_svec *fext,
                       double *R, fr_svec *Ra);
/* The articulated inertias at the current q with armature only (no step terms, no limits). */
void fri_aba_plain_inertias(const fr_tree *t, fr_tree_data *d);
/* tau_out += the constraint forces of the last projection. */
void fri_mimic_forces_out(const fr_tree *t, fr_tree_data *d);

/* The linear solve of link i's joint block (nv > 1) of the last aba_inertias: Cholesky, or LU
 * for a free root under the gyroscopic term. x is overwritten. */
void fri_joint_solve(const fri_tree_ws *w, const fri_link *l, int i, double *x);

/* Joint transform X_J(q) of link l (joint frame → link frame). */
fr_xform fri_joint_xform(const fri_link *l, const double *q);
/* X0 (world → link) from q, skipped when q is unchanged since the last call. */
void fri_tree_positions(const fr_tree *t, fr_tree_data *d);
/* Sw and Iw for the current positions (cached likewise). */
void fri_tree_config(const fr_tree *t, fr_tree_data *d);

#endif
