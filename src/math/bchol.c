/*
 * Sparse block Cholesky for 6×6 blocks (include/fureru/sparse.h): minimum-degree ordering on the
 * block graph (the elimination graph kept as explicit adjacency lists; eliminating a node joins
 * its neighbours into a clique, whose members are the node's column of L), then a left-looking
 * numeric factorisation in place over L's pattern.
 */
#include <math.h>
#include <string.h>

#include "fureru/sparse.h"

/* ---------------------------------------------------------------- 6×6 kernels */

typedef double blk[6][6];

/* c −= a·bᵀ */
static inline void sub_abt(blk c, const blk a, const blk b)
{
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0.0;
            for (int k = 0; k < 6; k++) s += a[i][k] * b[j][k];
            c[i][j] -= s;
        }
}

/* c −= a·aᵀ on the lower triangle only */
static inline void sub_aat_lower(blk c, const blk a)
{
    for (int i = 0; i < 6; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0.0;
            for (int k = 0; k < 6; k++) s += a[i][k] * a[j][k];
            c[i][j] -= s;
        }
}

/* Cholesky in place (lower triangle read and written, upper cleared). */
static bool chol6(blk a)
{
    for (int j = 0; j < 6; j++) {
        double d = a[j][j];
        for (int k = 0; k < j; k++) d -= a[j][k] * a[j][k];
        if (!(d > 0.0)) return false;
        d = sqrt(d);
        a[j][j] = d;
        for (int i = j + 1; i < 6; i++) {
            double s = a[i][j];
            for (int k = 0; k < j; k++) s -= a[i][k] * a[j][k];
            a[i][j] = s / d;
        }
        for (int i = 0; i < j; i++) a[i][j] = 0.0;
    }
    return true;
}

/* x ← x·L⁻ᵀ (each row r of x solves L·zᵀ = x[r]ᵀ) */
static inline void trsm_lt(blk x, const blk L)
{
    for (int r = 0; r < 6; r++)
        for (int i = 0; i < 6; i++) {
            double s = x[r][i];
            for (int k = 0; k < i; k++) s -= L[i][k] * x[r][k];
            x[r][i] = s / L[i][i];
        }
}

static inline void fwd(const blk L, double *y)
{
    for (int i = 0; i < 6; i++) {
        double s = y[i];
        for (int k = 0; k < i; k++) s -= L[i][k] * y[k];
        y[i] = s / L[i][i];
    }
}

static inline void bwd_t(const blk L, double *y)
{
    for (int i = 5; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < 6; k++) s -= L[k][i] * y[k];
        y[i] = s / L[i][i];
    }
}

/* The solve's block products in pairs of doubles (GCC/Clang vector extension; SSE2 on x86-64):
 * the triangular solves are most of a chord Newton step on a large stack, whose factor fills
 * like N log N on a wall's or pyramid's grid-like graph. */
typedef double v2 __attribute__((vector_size(16)));

static inline v2 load2(const double *p)
{
    v2 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store2(double *p, v2 v)
{
    memcpy(p, &v, sizeof v);
}

/* y −= L·x: rows as two-lane partial dot products, summed pairwise */
static inline void sub_lx(double *y, const blk L, const double *x)
{
    const v2 x0 = load2(x), x1 = load2(x + 2), x2 = load2(x + 4);
    for (int i = 0; i < 6; i += 2) {
        v2 a = load2(L[i]) * x0 + load2(L[i] + 2) * x1 + load2(L[i] + 4) * x2;
        v2 b = load2(L[i + 1]) * x0 + load2(L[i + 1] + 2) * x1 + load2(L[i + 1] + 4) * x2;
        v2 t = {a[0] + a[1], b[0] + b[1]};
        store2(y + i, load2(y + i) - t);
    }
}

/* y −= Lᵀ·x: rows of L scaled by x's entries (the same order of sums as column dot products) */
static inline void sub_ltx(double *y, const blk L, const double *x)
{
    v2 t0 = {0.0, 0.0}, t1 = t0, t2 = t0;
    for (int i = 0; i < 6; i++) {
        const v2 s = {x[i], x[i]};
        t0 += load2(L[i]) * s;
        t1 += load2(L[i] + 2) * s;
        t2 += load2(L[i] + 4) * s;
    }
    store2(y, load2(y) - t0);
    store2(y + 2, load2(y + 2) - t1);
    store2(y + 4, load2(y + 4) - t2);
}

/* ---------------------------------------------------------------- memory */

static size_t pool_size(int max_n, int max_edges, int max_fill)
{
    return 2 * (size_t)max_edges + 2 * (size_t)max_fill + 4 * (size_t)max_n + 16;
}

size_t fr_bchol_memory(int max_n, int max_edges, int max_fill)
{
    size_t n = (size_t)max_n, e = (size_t)max_edges, f = (size_t)max_fill;
    size_t b = 0;
    b +=
        2 * n * sizeof(int) + (n + 1) * sizeof(int) + f * sizeof(int); /* perm, iperm, start, row */
    b += n * sizeof(fr_mat6) + f * sizeof(fr_mat6);                    /* diag, off */
    b += (n + 1) * sizeof(int) + 2 * f * sizeof(int) + 6 * n * sizeof(double); /* rows, tmp */
    b += e * (3 * sizeof(int) + 1); /* epos, etr, eu+ev */
    b += e * sizeof(int);
    b += 3 * n * sizeof(int) + pool_size(max_n, max_edges, max_fill) * sizeof(int);
    b += 6 * (n + 1) * sizeof(int);
    b += 32 * 64;
    return b;
}

int fr_bchol_init(fr_bchol *s, int max_n, int max_edges, int max_fill, fr_arena *a)
{
    if (!s || !a || max_n < 1 || max_edges < 0 || max_fill < 0) return FR_ERR_INVAL;
    memset(s, 0, sizeof *s);
    s->max_n = max_n;
    s->max_edges = max_edges;
    s->max_fill = max_fill;
    size_t n = (size_t)max_n, e = (size_t)(max_edges > 0 ? max_edges : 1),
           f = (size_t)(max_fill > 0 ? max_fill : 1);
    s->perm = FR_ARENA_NEW(a, int, n);
    s->iperm = FR_ARENA_NEW(a, int, n);
    s->start = FR_ARENA_NEW(a, int, n + 1);
    s->row = FR_ARENA_NEW(a, int, f);
    s->diag = FR_ARENA_NEW(a, fr_mat6, n);
    s->off = FR_ARENA_NEW(a, fr_mat6, f);
    s->rstart = FR_ARENA_NEW(a, int, n + 1);
    s->rpos = FR_ARENA_NEW(a, int, f);
    s->rcol = FR_ARENA_NEW(a, int, f);
    s->tmp = FR_ARENA_NEW(a, double, 6 * n);
    s->epos = FR_ARENA_NEW(a, int, e);
    s->etr = FR_ARENA_NEW(a, unsigned char, e);
    s->eu = FR_ARENA_NEW(a, int, e);
    s->ev = FR_ARENA_NEW(a, int, e);
    s->adj_start = FR_ARENA_NEW(a, int, n);
    s->adj_len = FR_ARENA_NEW(a, int, n);
    s->adj_cap = FR_ARENA_NEW(a, int, n);
    s->adj_pool = (int)pool_size(max_n, max_edges, max_fill);
    s->adj = FR_ARENA_NEW(a, int, (size_t)s->adj_pool);
    s->deg = FR_ARENA_NEW(a, int, n + 1);
    s->head = FR_ARENA_NEW(a, int, n + 1);
    s->next = FR_ARENA_NEW(a, int, n + 1);
    s->prev = FR_ARENA_NEW(a, int, n + 1);
    s->mark = FR_ARENA_NEW(a, int, n + 1);
    s->where = FR_ARENA_NEW(a, int, n + 1);
    if (!s->perm || !s->iperm || !s->start || !s->row || !s->diag || !s->off || !s->rstart ||
        !s->rpos || !s->rcol || !s->tmp || !s->epos || !s->etr || !s->eu || !s->ev ||
        !s->adj_start || !s->adj_len || !s->adj_cap || !s->adj || !s->deg || !s->head || !s->next ||
        !s->prev || !s->mark || !s->where)
        return FR_ERR_NOMEM;
    return FR_OK;
}

/* ---------------------------------------------------------------- minimum degree */

static void bucket_remove(fr_bchol *s, int v)
{
    int d = s->deg[v];
    if (s->prev[v] >= 0)
        s->next[s->prev[v]] = s->next[v];
    else
        s->head[d] = s->next[v];
    if (s->next[v] >= 0) s->prev[s->next[v]] = s->prev[v];
}

static void bucket_insert(fr_bchol *s, int v, int d)
{
    s->deg[v] = d;
    s->prev[v] = -1;
    s->next[v] = s->head[d];
    if (s->head[d] >= 0) s->prev[s->head[d]] = v;
    s->head[d] = v;
}

/* Move the lists of the nodes not yet eliminated to the front of the pool, keeping their order
 * (`where` is scratch here: the nodes sorted by their lists' positions). */
static void pool_compact(fr_bchol *s, int n)
{
    int cnt = 0;
    for (int y = 0; y < n; y++)
        if (s->iperm[y] < 0) s->where[cnt++] = y;
    for (int i = 1; i < cnt; i++) { /* insertion sort: lists are mostly in order already */
        int y = s->where[i], j = i;
        while (j > 0 && s->adj_start[s->where[j - 1]] > s->adj_start[y]) {
            s->where[j] = s->where[j - 1];
            j--;
        }
        s->where[j] = y;
    }
    int top = 0;
    for (int i = 0; i < cnt; i++) {
        int y = s->where[i];
        memmove(s->adj + top, s->adj + s->adj_start[y], sizeof(int) * (size_t)s->adj_len[y]);
        s->adj_start[y] = top;
        s->adj_cap[y] = s->adj_len[y];
        top += s->adj_len[y];
    }
    s->adj_used = top;
}

bool fr_bchol_same(const fr_bchol *s, int n, int nedges, const int *u, const int *v)
{
    if (s->n != n || s->nedges != nedges || s->analyses == 0) return false;
    for (int e = 0; e < nedges; e++)
        if (s->eu[e] != u[e] || s->ev[e] != v[e]) return false;
    return true;
}

int fr_bchol_analyse(fr_bchol *s, int n, int nedges, const int *u, const int *v)
{
    s->n = 0;
    s->nedges = 0;
    s->analyses++;
    if (n < 0 || n > s->max_n || nedges < 0 || nedges > s->max_edges) return FR_ERR_FULL;
    for (int e = 0; e < nedges; e++)
        if (u[e] < 0 || u[e] >= n || v[e] < 0 || v[e] >= n || u[e] == v[e]) return FR_ERR_INVAL;
    /* initial adjacency */
    int *deg = s->deg;
    for (int i = 0; i < n; i++) deg[i] = 0;
    for (int e = 0; e < nedges; e++) deg[u[e]]++, deg[v[e]]++;
    int top = 0;
    for (int i = 0; i < n; i++) {
        s->adj_start[i] = top;
        s->adj_len[i] = 0;
        s->adj_cap[i] = deg[i] + 2;
        top += deg[i] + 2;
    }
    if (top > s->adj_pool) return FR_ERR_FULL;
    s->adj_used = top;
    for (int e = 0; e < nedges; e++) {
        int a = u[e], b = v[e];
        s->adj[s->adj_start[a] + s->adj_len[a]++] = b;
        s->adj[s->adj_start[b] + s->adj_len[b]++] = a;
    }
    /* degree buckets; `mark` stamps set members; live = not yet eliminated (reuse iperm < 0) */
    for (int d = 0; d <= n; d++) s->head[d] = -1;
    for (int i = 0; i < n; i++) {
        s->mark[i] = 0;
        s->iperm[i] = -1;
        bucket_insert(s, i, s->adj_len[i]);
    }
    int stamp = 0, mind = 0, nnz = 0;
    for (int k = 0; k < n; k++) {
        while (s->head[mind] < 0) mind++;
        int p = s->head[mind];
        bucket_remove(s, p);
        s->perm[k] = p;
        s->iperm[p] = k;
        /* p's neighbours become its column of L (as node ids for now) */
        const int len = s->adj_len[p];
        if (nnz + len > s->max_fill) return FR_ERR_FULL;
        const int *np = s->adj + s->adj_start[p];
        s->start[k] = nnz;
        for (int q = 0; q < len; q++) s->row[nnz + q] = np[q];
        nnz += len;
        /* each neighbour x: adj(x) ← adj(x) \ {p} ∪ N(p) \ {x} */
        for (int q = 0; q < len; q++) {
            int x = s->row[s->start[k] + q];
            stamp++;
            int need = s->adj_len[x] - 1 + len - 1;
            if (need > s->adj_cap[x]) {
                int cap = need + need / 2 + 2;
                if (s->adj_used + cap > s->adj_pool) {
                    pool_compact(s, n);
                    if (s->adj_used + cap > s->adj_pool) return FR_ERR_FULL;
                }
                memmove(s->adj + s->adj_used, s->adj + s->adj_start[x],
                        sizeof(int) * (size_t)s->adj_len[x]);
                s->adj_start[x] = s->adj_used;
                s->adj_cap[x] = cap;
                s->adj_used += cap;
            }
            int *ax = s->adj + s->adj_start[x];
            int m = 0;
            for (int i = 0; i < s->adj_len[x]; i++)
                if (ax[i] != p) {
                    s->mark[ax[i]] = stamp;
                    ax[m++] = ax[i];
                }
            const int *cols = s->row + s->start[k];
            for (int i = 0; i < len; i++) {
                int y = cols[i];
                if (y != x && s->mark[y] != stamp) {
                    s->mark[y] = stamp;
                    ax[m++] = y;
                }
            }
            s->adj_len[x] = m;
            bucket_remove(s, x);
            bucket_insert(s, x, m);
            if (m < mind) mind = m;
        }
    }
    s->start[n] = nnz;
    s->nnz = nnz;
    /* columns in elimination order, rows ascending */
    for (int k = 0; k < n; k++) {
        int *r = s->row + s->start[k];
        int len = s->start[k + 1] - s->start[k];
        for (int i = 0; i < len; i++) r[i] = s->iperm[r[i]];
        for (int i = 1; i < len; i++) {
            int x = r[i], j = i;
            while (j > 0 && r[j - 1] > x) {
                r[j] = r[j - 1];
                j--;
            }
            r[j] = x;
        }
    }
    /* row pattern: for each row, the (column, position) of its blocks, columns ascending */
    for (int i = 0; i <= n; i++) s->rstart[i] = 0;
    for (int q = 0; q < nnz; q++) s->rstart[s->row[q] + 1]++;
    for (int i = 0; i < n; i++) s->rstart[i + 1] += s->rstart[i];
    for (int i = 0; i < n; i++) s->where[i] = s->rstart[i];
    for (int k = 0; k < n; k++)
        for (int q = s->start[k]; q < s->start[k + 1]; q++) {
            int t = s->where[s->row[q]]++;
            s->rpos[t] = q;
            s->rcol[t] = k;
        }
    /* edges → blocks of L */
    for (int e = 0; e < nedges; e++) {
        int a = s->iperm[u[e]], b = s->iperm[v[e]];
        int r = a > b ? a : b, c = a > b ? b : a;
        int lo = s->start[c], hi = s->start[c + 1] - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (s->row[mid] < r)
                lo = mid + 1;
            else
                hi = mid;
        }
        s->epos[e] = lo;
        s->etr[e] = a < b; /* block (row b, col a) = A[v][u] = O[e]ᵀ */
        s->eu[e] = u[e];
        s->ev[e] = v[e];
    }
    s->n = n;
    s->nedges = nedges;
    return FR_OK;
}

/* ---------------------------------------------------------------- numeric */

int fr_bchol_factor(fr_bchol *s, const fr_mat6 *D, const fr_mat6 *O)
{
    const int n = s->n;
    s->factorisations++;
    for (int q = 0; q < s->nnz; q++) memset(&s->off[q], 0, sizeof(fr_mat6));
    for (int e = 0; e < s->nedges; e++) {
        fr_mat6 *dst = &s->off[s->epos[e]];
        if (s->etr[e]) {
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) dst->m[i][j] += O[e].m[j][i];
        } else {
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) dst->m[i][j] += O[e].m[i][j];
        }
    }
    int *map = s->where;
    for (int k = 0; k < n; k++) {
        blk *Lkk = &s->diag[k].m;
        memcpy(Lkk, &D[s->perm[k]], sizeof(fr_mat6));
        for (int q = s->start[k]; q < s->start[k + 1]; q++) map[s->row[q]] = q;
        /* updates from the columns j < k with a block in row k */
        for (int t = s->rstart[k]; t < s->rstart[k + 1]; t++) {
            int p = s->rpos[t];
            const blk *Lkj = &s->off[p].m;
            sub_aat_lower(*Lkk, *Lkj);
            /* the rows of column j after k (ascending) update column k */
            const int qend = s->start[s->rcol[t] + 1];
            for (int q = p + 1; q < qend; q++) sub_abt(s->off[map[s->row[q]]].m, s->off[q].m, *Lkj);
        }
        if (!chol6(*Lkk)) return FR_ERR_NUMERIC;
        for (int q = s->start[k]; q < s->start[k + 1]; q++) trsm_lt(s->off[q].m, *Lkk);
    }
    return FR_OK;
}

void fr_bchol_solve(const fr_bchol *s, fr_svec *x)
{
    const int n = s->n;
    double(*y)[6] = (double(*)[6])s->tmp;
    for (int k = 0; k < n; k++) {
        const fr_svec *xk = &x[s->perm[k]];
        y[k][0] = xk->ang.x, y[k][1] = xk->ang.y, y[k][2] = xk->ang.z;
        y[k][3] = xk->lin.x, y[k][4] = xk->lin.y, y[k][5] = xk->lin.z;
    }
    /* L z = P x */
    for (int k = 0; k < n; k++) {
        fwd(s->diag[k].m, y[k]);
        for (int q = s->start[k]; q < s->start[k + 1]; q++) sub_lx(y[s->row[q]], s->off[q].m, y[k]);
    }
    /* Lᵀ w = z */
    for (int k = n - 1; k >= 0; k--) {
        for (int q = s->start[k]; q < s->start[k + 1]; q++)
            sub_ltx(y[k], s->off[q].m, y[s->row[q]]);
        bwd_t(s->diag[k].m, y[k]);
    }
    for (int k = 0; k < n; k++) {
        fr_svec *xk = &x[s->perm[k]];
        *xk = fr_sv(fr_v3(y[k][0], y[k][1], y[k][2]), fr_v3(y[k][3], y[k][4], y[k][5]));
    }
}

int fr_bchol_forward_sparse(const fr_bchol *s, int nb, const int *node, const fr_svec *b,
                            double (*z)[6], unsigned char *mark, int *idx)
{
    const int n = s->n;
    int lo = n;
    for (int i = 0; i < nb; i++) {
        const int k = s->iperm[node[i]];
        z[k][0] += b[i].ang.x, z[k][1] += b[i].ang.y, z[k][2] += b[i].ang.z;
        z[k][3] += b[i].lin.x, z[k][4] += b[i].lin.y, z[k][5] += b[i].lin.z;
        mark[k] = 1;
        if (k < lo) lo = k;
    }
    int cnt = 0;
    for (int k = lo; k < n; k++) {
        if (!mark[k]) continue;
        idx[cnt++] = k;
        fwd(s->diag[k].m, z[k]);
        for (int q = s->start[k]; q < s->start[k + 1]; q++) {
            mark[s->row[q]] = 1;
            sub_lx(z[s->row[q]], s->off[q].m, z[k]);
        }
    }
    return cnt;
}
