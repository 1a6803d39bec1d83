/* src/articulated internals: the frozen model, the workspace and block-structured spatial
 * inertia helpers shared by the algorithms. */
#ifndef FR_ARTICULATED_INTERNAL_H
#define FR_ARTICULATED_INTERNAL_H

#include "fureru/articulated.h"

/* A symmetric 6×6 articulated inertia kept as 3×3 blocks [A B; Bᵀ C] (A, C symmetric), so
 * products and frame changes use the block structure instead of dense 6×6 algebra. */
typedef struct fri_sym6 {
    fr_mat3 A, B, C;
} fri_sym6;

typedef struct fri_link {
    fr_link_def def; /* names point into the tree's own copies */
    int parent;
    fr_joint_type type;
    int qi, vi, nq, nv; /* offsets and sizes in q and qd */
    fr_xform XT;        /* parent link → joint frame (constant) */
    fr_rbi I;           /* spatial inertia about the link origin, link coordinates */
    fr_svec S[6];       /* motion subspace columns, link coordinates (constant) */
    int dinv_off;       /* offset of this joint's nv×nv block in the workspace's Dinv pool */
} fri_link;

struct fr_tree {
    fri_link *links;
    int n, cap;
    int nq, nv;
    int ndinv; /* Σ nv_i² */
    bool final;
};

/* Per-link mode of the joint forces during one step (decided before, revised after a solve). */
enum { FRI_LIM_NONE = 0, FRI_LIM_LOWER = -1, FRI_LIM_UPPER = 1 };

struct fri_tree_ws {
    fr_xform *Xup; /* [n] parent → link */
    fr_xform *X0;  /* [n] world → link */
    fr_svec *c;    /* [n] velocity-product acceleration v × vJ */
    fr_svec *a;    /* [n] link accelerations (gravity included as a fictitious base acceleration) */
    fr_svec *pA;   /* [n] articulated bias forces */
    fr_svec *p0;   /* [n] rigid bias forces (kept for a re-solve) */
    fri_sym6 *IA;  /* [n] articulated inertias */
    fr_svec *f;    /* [n] RNEA forces */
    fr_rbi *Ic;    /* [n] CRBA composite inertias */
    fr_svec *U;    /* [nv] IA·S columns */
    fr_svec *W;    /* [nv] U·D⁻¹ columns */
    double *Dinv;  /* [ndinv] per joint nv×nv inverses */
    double *u;     /* [nv] τ̃ − Sᵀ pA */
    double *taut;  /* [nv] joint force part known before the solve (τ̃) */
    double *H;     /* [nv] joint force part ∝ −qdd (implicit terms + armature) */
    double *Hm;    /* [nv] motor share of H (for the saturation check) */
    double *taum;  /* [nv] motor share of τ̃ */
    double *qdd_p; /* [nv] prescribed acceleration (hard limits) */
    int *lim;      /* [n] FRI_LIM_* */
    bool *lim_hard; /* [n] active limit is a prescribed (hard) one */
    bool *sat;      /* [n] motor saturated: hold taum */
    double *J;      /* [6·nv] Jacobian scratch */
    double *vit;    /* [nv] Verlet: the mid-step velocity being iterated */
    double *qd0;    /* [nv] Verlet: velocities at the start of the step */
    double *q0;     /* [nq] Verlet: positions at the start of the step */
    fr_svec a0;     /* base acceleration (−s·g) of the current solve */
};

/* ---------------------------------------------------------------- block inertia helpers */

static inline void fri_sym6_from_rbi(fri_sym6 *o, const fr_rbi *I)
{
    o->A = I->Ibar;
    o->B = fr_m3_skew(I->h);
    o->C = fr_m3_diag(fr_v3(I->m, I->m, I->m));
}

static inline fr_svec fri_sym6_mulv(const fri_sym6 *I, fr_svec v)
{
    return fr_sv(fr_v3_add(fr_m3_mulv(I->A, v.ang), fr_m3_mulv(I->B, v.lin)),
                 fr_v3_add(fr_m3_tmulv(I->B, v.ang), fr_m3_mulv(I->C, v.lin)));
}

/* I −= u wᵀ (w = u·s for a rank-one update; the sum over a joint's columns is symmetric). */
static inline void fri_sym6_sub_outer(fri_sym6 *I, fr_svec u, fr_svec w)
{
    double ua[3] = {u.ang.x, u.ang.y, u.ang.z}, ul[3] = {u.lin.x, u.lin.y, u.lin.z};
    double wa[3] = {w.ang.x, w.ang.y, w.ang.z}, wl[3] = {w.lin.x, w.lin.y, w.lin.z};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            I->A.m[i][j] -= ua[i] * wa[j];
            I->B.m[i][j] -= ua[i] * wl[j];
            I->C.m[i][j] -= ul[i] * wl[j];
        }
}

/* dst += Xᵀ I X for X = child_X_parent (E: parent → child rotation, r: child origin in the
 * parent): the child's articulated inertia expressed in the parent frame. */
void fri_sym6_add_to_parent(fri_sym6 *dst, fr_xform X, const fri_sym6 *I);

/* Motion-subspace product Sᵀ f for one column. */
static inline double fri_sdot(fr_svec s, fr_svec f)
{
    return fr_sv_dot(s, f);
}

/* Joint transform X_J(q) of link l (joint frame → link frame). */
fr_xform fri_joint_xform(const fri_link *l, const double *q);
/* Xup and X0 from q. */
void fri_tree_positions(const fr_tree *t, fr_tree_data *d);
/* Link twists (data->vel) from the joint velocities qd (on the last positions), and the
 * velocity products c = v × vJ when with_c. */
void fri_tree_velocities(const fr_tree *t, fr_tree_data *d, const double *qd, bool with_c);

#endif
