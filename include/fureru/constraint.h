/*
 * fureru constraint solver: a velocity-level bounded LCP (docs/constraint.md).
 *
 * Rows i = 0..n−1 couple at most two bodies a, b through Jacobian blocks J_i = [J_ia, J_ib]
 * (each a spatial vector (angular; linear), world frame). With M the bodies' mass matrix and
 * v* their velocities before the constraint impulses λ (N·s, or N·m·s), the solver finds λ with
 *     w = A λ + b,   A = J M⁻¹ Jᵀ + diag(cfm),   b = J v* + bias
 *     λ_i = lo_i ⇒ w_i >= 0,   λ_i = hi_i ⇒ w_i <= 0,   lo_i < λ_i < hi_i ⇒ w_i = 0
 * (seed 003's LCP(A, b, λ_lo, λ_hi)). w is the rows' velocity after the step; an equality row has
 * lo = −∞, hi = +∞. A friction row's bounds follow another row's impulse: ±μ·λ_normal.
 *
 * Projected Gauss–Seidel with over-relaxation ω (SOR; it converges for 0 < ω < 2 when A is
 * positive definite): only A's diagonal is formed; Arow_i·λ = J_i·Δν with Δν = M⁻¹Jᵀλ kept per
 * body and updated after each row (seed 003), so a sweep costs O(rows). λ on entry is the warm
 * start (e.g. the last tick's). No allocation.
 */
#ifndef FURERU_CONSTRAINT_H
#define FURERU_CONSTRAINT_H

#include <stdbool.h>
#include <stddef.h>

#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A body as the solver sees it. inv_mass 0 and inv_inertia 0: immovable.
 * ndof > 0 makes it a generalised body (an articulated tree): its velocity is a vector of ndof
 * generalised velocities, a row's side on it is the Jacobian row g (ndof) and the response
 * column gt = M⁻¹gᵀ (ndof), both given by the caller (the tree's articulated-body response:
 * the solver cannot form M⁻¹ itself), and dq accumulates M⁻¹Jᵀλ there. */
typedef struct fr_cbody {
    double inv_mass;     /* 1/kg */
    fr_mat3 inv_inertia; /* world frame, 1/(kg·m²) */
    fr_svec dnu; /* out: (Δω; Δv) = M⁻¹Jᵀλ, the velocity change the impulses make */
    int ndof;    /* 0: a rigid body; > 0: generalised, with dq */
    double *dq;  /* [ndof] out: Δq̇ = M⁻¹Jᵀλ of a generalised body */
} fr_cbody;

typedef struct fr_crow {
    int a, b;       /* body indices, −1: the world (no body) */
    fr_svec ja, jb; /* Jacobian blocks (angular; linear) on a and b */
    double rhs;     /* b_i = J_i·v* + bias, m/s (or rad/s) */
    double cfm;     /* >= 0, added to A_ii: a soft row (implicit spring–damper) */
    double lo, hi;  /* bounds on λ_i (−INFINITY/INFINITY for none) */
    int normal;     /* >= 0: a friction row bounded by ±mu·λ[normal] (lo, hi ignored) */
    double mu;
    double lambda; /* in: warm start; out: the impulse */
    /* filled by the solver */
    double inv_d;   /* 1/A_ii (0 for a row that moves nothing) */
    fr_svec ta, tb; /* M⁻¹J_iᵀ on a and b */
    int blk;        /* the direct block's treatment of the row (internal) */
    /* on a generalised body (fr_cbody.ndof > 0) the side's Jacobian row and its response column
     * M⁻¹gᵀ (ja/jb, ta/tb unused on that side); a row whose two sides are on one generalised
     * body is given as one side (a, b −1) with the two Jacobians summed */
    const double *ga, *gb;
    const double *gta, *gtb;
} fr_crow;

typedef struct fr_constraint_opts {
    double omega; /* SOR factor; 1 = Gauss–Seidel. (0, 2) for convergence */
    int max_iterations;
    double tolerance; /* stop when no row's |Δλ|·A_ii (its velocity change) exceeds this, m/s */
    /* The unbounded rows E (lo = −∞, hi = +∞: a mechanism's joints) may be eliminated exactly:
     * A_EE is formed (rows sharing no body do not couple) and factored by Cholesky inside the
     * rows' envelope (a chain's rows in order are a band; regularised by 1e-10·A_ii for
     * redundant rows), λ_E is kept at its exact value for the other rows' impulses, and the bounded
     * rows that share a body with E (motors, limits, contacts on the mechanism; up to
     * FR_CONSTRAINT_SCHUR_MAX of them) are projected on the Schur complement
     * S = A_BB − A_BE A_EE⁻¹ A_EB (their effective mass with the mechanism attached), the others
     * as above. That is projected Gauss–Seidel on S, which is positive definite, so it converges;
     * a loop, which plain PGS converges slowly, then solves in a few sweeps. Used when
     * 0 < |E| <= direct_max and `work` holds fr_constraint_work_size(direct_max) doubles. */
    int direct_max;
    double *work;
} fr_constraint_opts;
fr_constraint_opts fr_constraint_opts_default(void); /* ω 1, 200 sweeps, 1e-9 m/s, no block */
#define FR_CONSTRAINT_SCHUR_MAX 32
/* Doubles of workspace the direct block of up to n rows needs. */
size_t fr_constraint_work_size(int n);

typedef struct fr_constraint_stats {
    int rows;
    int iterations;  /* sweeps taken */
    double residual; /* max_i |λ_i − clamp(λ_i − w_i/A_ii)|·A_ii at the end, m/s: the LCP's
                        natural-map residual in velocity units */
    bool converged;  /* stopped by the tolerance */
} fr_constraint_stats;

/* Solve the rows in place (λ, inv_d, ta, tb; bodies' dnu). FR_ERR_NUMERIC when λ went
 * non-finite (a diverging SOR), FR_ERR_RANGE for a bad ω or row. */
int fr_constraint_solve(fr_cbody *bodies, int nbodies, fr_crow *rows, int nrows,
                        const fr_constraint_opts *opts, fr_constraint_stats *stats);

/* Row i's A_ij and the velocity w_i = b_i + J_i·Δν + cfm_i·λ_i (diagnostics and tests;
 * A_ij needs the rows prepared by a solve). */
double fr_constraint_A(const fr_cbody *bodies, const fr_crow *rows, int i, int j);
double fr_constraint_w(const fr_cbody *bodies, const fr_crow *row);

/* The same PGS/SOR on a dense n×n A (row-major) with fixed bounds: λ in/out (warm start).
 * Returns the stats as fr_constraint_solve does (residual by the natural map). */
int fr_lcp_pgs_dense(int n, const double *A, const double *b, const double *lo, const double *hi,
                     double *lambda, const fr_constraint_opts *opts, fr_constraint_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
