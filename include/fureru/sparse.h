/*
 * fureru sparse: Cholesky factorisation of sparse symmetric positive-definite matrices made of
 * 6×6 blocks (one block row per rigid body, one off-diagonal block per pair of coupled bodies),
 * the system of the world's implicit contact step.
 *
 * Analysis (fr_bchol_analyse) orders the nodes by minimum degree on the block graph (so paths,
 * trees and chains factor without fill) and finds the pattern of the factor L; it is kept while
 * the graph does not change. Factorisation (fr_bchol_factor) is a left-looking block Cholesky
 * in that order; fr_bchol_solve solves with it. All memory is reserved by fr_bchol_init for at
 * most max_n nodes, max_edges input blocks and max_fill blocks of L; nothing allocates later.
 */
#ifndef FURERU_SPARSE_H
#define FURERU_SPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "fureru/base.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_bchol {
    int max_n, max_edges, max_fill;
    int n, nedges; /* the analysed pattern */
    int nnz;       /* off-diagonal blocks of L */
    int *perm;     /* perm[k] = node eliminated k-th */
    int *iperm;    /* iperm[node] = k */
    /* L, column k (elimination order): rows row[start[k] .. start[k+1]) (ascending, > k) */
    int *start, *row;
    fr_mat6 *diag; /* [n] the diagonal factors (lower triangular) */
    fr_mat6 *off;  /* [nnz] the off-diagonal blocks of L */
    /* row pattern of L, row k: the columns j < k with L_kj != 0 and where that block sits */
    int *rstart, *rpos, *rcol;
    /* input edge e → position of its block in `off` (transposed when etr[e]) */
    int *epos;
    unsigned char *etr;
    int *eu, *ev; /* the analysed edges, to tell a changed pattern from the same */
    /* workspace */
    int *adj_start, *adj_len, *adj_cap, *adj; /* elimination graph (minimum degree) */
    int adj_pool, adj_used;
    int *deg, *head, *next, *prev, *mark, *where;
    double *tmp; /* [6·max_n] the solve's permuted vector */
    long analyses, factorisations;
} fr_bchol;

/* Bytes fr_bchol_init takes from an arena. */
size_t fr_bchol_memory(int max_n, int max_edges, int max_fill);
/* Reserve memory for at most max_n nodes, max_edges off-diagonal input blocks and max_fill
 * off-diagonal blocks of L, from `arena` (NULL: not supported, FR_ERR_INVAL). */
int fr_bchol_init(fr_bchol *s, int max_n, int max_edges, int max_fill, fr_arena *arena);

/*
 * The pattern: n nodes and nedges edges (u[e], v[e]), u != v, no edge twice. Orders, computes
 * L's pattern and maps the edges. Returns FR_OK, or FR_ERR_FULL when L would need more than
 * max_fill blocks (or the sizes exceed the capacities), FR_ERR_INVAL for a bad edge.
 */
int fr_bchol_analyse(fr_bchol *s, int n, int nedges, const int *u, const int *v);
/* True when (n, u, v) is the pattern analysed last (same edges in the same order). */
bool fr_bchol_same(const fr_bchol *s, int n, int nedges, const int *u, const int *v);

/*
 * Factor A with diagonal blocks D[0..n) and, for each edge e, the block A[u[e]][v[e]] = O[e]
 * (A[v[e]][u[e]] = O[e]ᵀ). Only the lower triangles of the diagonal blocks are read. Returns
 * FR_OK or FR_ERR_NUMERIC when A is not positive definite (to rounding).
 */
int fr_bchol_factor(fr_bchol *s, const fr_mat6 *D, const fr_mat6 *O);
/* x ← A⁻¹ x (x: n spatial vectors, node order). */
void fr_bchol_solve(const fr_bchol *s, fr_svec *x);
/* The forward half of a solve, z = L⁻¹·P·b, for a right-hand side b with blocks at nb nodes
 * only (node[i], value b[i]), touching only the blocks it fills: z ([n][6], elimination order)
 * and mark ([n]) must be zero where it will write; the indices of the blocks it wrote are put in
 * idx (ascending) and their count returned, for the caller to clear. Then bᵀ·H⁻¹·c = z_b·z_c. */
int fr_bchol_forward_sparse(const fr_bchol *s, int nb, const int *node, const fr_svec *b,
                            double (*z)[6], unsigned char *mark, int *idx);

#ifdef __cplusplus
}
#endif
#endif
