/*
 * The implicit step of the bodies in contact (docs/world.md): backward Euler on their velocities,
 *
 *   G(ν') = M·(ν' − ν) − h·F − Σ_pairs Xᵀ·h·W_pair(ν') − h·F_springs(ν') = 0,
 *
 * with each pair's mean wrench over the step from its contact model (include/fureru/contact.h:
 * the normal pressure at the step's end, clamped to no pull, and the friction bond returned onto
 * μ·N' of the same solve). G is solved by Newton's method: each iteration evaluates every pair's
 * response and tangent at the iterate, factors M + Σ XᵀCX (6×6 blocks per body, one block per
 * coupled pair of bodies: fr_bchol, ordered once per coupling pattern) and takes the step, halved
 * back when the residual grows. It stops when no body's velocity would change by more than the
 * tolerance; a bond that sticks at the step's start and slips at the solution then breaks away
 * (μ_s → μ_k) and the solve goes on. The final velocities are the iterate's; in an island that
 * nothing outside it holds, ν + M⁻¹·(the impulses of the converged responses), so that its linear
 * and angular momentum are exact whatever the residual (correct_momentum).
 */

#include <math.h>
#include <string.h>

#include "world_internal.h"

static void jr_swap(fr_world *w, int i, int k);
static void jr_drop_loops(fr_world *w);
static bool jr_inside(const fr_world *w, int r);

/* The most joint equality rows the solve takes (J·H⁻¹·Jᵀ is dense, factored each fresh Newton
 * factor: 192 rows are 1.2 Mflop); a world with more leaves its joints to their own stage. */
#define FRI_JR_MAX 192
/* blocks of L⁻¹·P·J_rᵀ kept per row on average (a row on two bodies of a chain lying on the
 * ground fills 2–3); beyond, J·H⁻¹·Jᵀ is formed by whole solves */
#define JR_POOL 16
/* revisions of the limit and motor rows taking part, a step at most (each a further solve) */
#define JR_PASSES 4
/* a motor row takes part while the joints' stage left its impulse within this share of its
 * bound */
#define JR_MOTOR_SHARE 0.5
/* a row whose pivot in J·M⁻¹·Jᵀ or J·H⁻¹·Jᵀ falls below this share of its diagonal depends on the
 * rows before it (a closed loop's): dropped. (Raising such pivots by 1e-10 of themselves left that
 * much of an error in the impulses: a chain of 0.01 kg and 1 kg links stalled at 1.7e-10 m/s, and
 * a four-bar on a free base at a like floor in 3454 of 3994 steps, above the default tolerance.) */
#define JR_DEPENDENT 1e-10
static int jr_capacity(const fr_world_def *def)
{
    const long m = (long)def->max_joints * 6;
    return def->contact_implicit ? (int)(m < FRI_JR_MAX ? m : FRI_JR_MAX) : 0;
}

size_t fri_world_solve_memory(const fr_world_def *def)
{
    size_t n = (size_t)def->max_bodies, e = (size_t)def->max_contacts + 1;
    size_t fill = def->max_fill > 0 ? (size_t)def->max_fill : 16 * n + 64;
    size_t b = 3 * n * sizeof(int) + n * sizeof(unsigned char);
    b += n * (6 * sizeof(fr_svec) + sizeof(fr_mat3) + sizeof(fr_mat6));
    b += e * (2 * sizeof(int) + sizeof(fr_mat6) + 2 * (sizeof(uint64_t) + sizeof(int)));
    b += n * (sizeof(int) + sizeof(fr_mat3) + sizeof(double)); /* fac_slot, sys_Iinv, sys_rg */
    b += n * sizeof(fri_slide);
    b += fr_bchol_memory((int)n, (int)e, (int)fill);
    const size_t m = (size_t)jr_capacity(def);
    b += m * (4 * sizeof(int) + 2 * sizeof(fr_svec) + 3 * sizeof(double)) + n * sizeof(fr_svec);
    b += 2 * m * m * sizeof(double);
    b += (m + 1) * sizeof(int) + m * JR_POOL * (sizeof(int) + 6 * sizeof(double));
    b += n * (2 * sizeof(int) + 6 * sizeof(double) + 2) + 5 * m * sizeof(int) +
         5 * m * sizeof(double) + m;
    return b + 32 * 64;
}

int fri_world_solve_init(fr_world *w)
{
    fr_arena *a = &w->arena;
    const int n = w->def.max_bodies, e = w->def.max_contacts + 1;
    const int fill = w->def.max_fill > 0 ? w->def.max_fill : 16 * n + 64;
    w->sys_index = FR_ARENA_NEW(a, int, n);
    w->sys_slot = FR_ARENA_NEW(a, int, n);
    w->sys_nu0 = FR_ARENA_NEW(a, fr_svec, n);
    w->sys_nu = FR_ARENA_NEW(a, fr_svec, n);
    w->sys_nu_prev = FR_ARENA_NEW(a, fr_svec, n);
    w->sys_G = FR_ARENA_NEW(a, fr_svec, n);
    w->sys_dx = FR_ARENA_NEW(a, fr_svec, n);
    w->sys_slide = FR_ARENA_NEW(a, fri_slide, n);
    w->sys_up = FR_ARENA_NEW(a, int, n);
    w->sys_island = FR_ARENA_NEW(a, unsigned char, n);
    w->sys_ext = FR_ARENA_NEW(a, fr_svec, n);
    w->sys_Iw = FR_ARENA_NEW(a, fr_mat3, n);
    w->sys_Iinv = FR_ARENA_NEW(a, fr_mat3, n);
    w->sys_rg = FR_ARENA_NEW(a, double, n);
    w->sys_D = FR_ARENA_NEW(a, fr_mat6, n);
    w->sys_eu = FR_ARENA_NEW(a, int, e);
    w->sys_ev = FR_ARENA_NEW(a, int, e);
    w->sys_O = FR_ARENA_NEW(a, fr_mat6, e);
    w->sys_key = FR_ARENA_NEW(a, uint64_t, e);
    w->sys_kidx = FR_ARENA_NEW(a, int, e);
    w->sys_kin = FR_ARENA_NEW(a, uint64_t, e);
    w->sys_kin_idx = FR_ARENA_NEW(a, int, e);
    w->sys_nkin = -1;
    w->fac_slot = FR_ARENA_NEW(a, int, n);
    w->fac_n = 0;
    w->fac_ok = false;
    w->fac_wait = w->fac_backoff = 0;
    if (!w->sys_index || !w->sys_slot || !w->sys_nu0 || !w->sys_nu || !w->sys_nu_prev ||
        !w->sys_G || !w->sys_dx || !w->sys_up || !w->sys_island || !w->sys_ext || !w->sys_Iw ||
        !w->sys_D || !w->sys_eu || !w->sys_ev || !w->sys_O || !w->sys_key || !w->sys_kidx ||
        !w->sys_Iinv || !w->sys_kin || !w->sys_kin_idx || !w->sys_rg || !w->fac_slot ||
        !w->sys_slide)
        return FR_ERR_NOMEM;
    for (int i = 0; i < n; i++) w->sys_index[i] = -1;
    const int m = jr_capacity(&w->def);
    w->max_jr = m;
    w->njr = 0;
    if (m > 0) {
        w->jr_sa = FR_ARENA_NEW(a, int, m);
        w->jr_sb = FR_ARENA_NEW(a, int, m);
        w->jr_a = FR_ARENA_NEW(a, int, m);
        w->jr_b = FR_ARENA_NEW(a, int, m);
        w->jr_ja = FR_ARENA_NEW(a, fr_svec, m);
        w->jr_jb = FR_ARENA_NEW(a, fr_svec, m);
        w->jr_c = FR_ARENA_NEW(a, double, m);
        w->jr_t = FR_ARENA_NEW(a, double, m);
        w->jr_u = FR_ARENA_NEW(a, double, m);
        w->jr_SM = FR_ARENA_NEW(a, double, (size_t)m *(size_t)m);
        w->jr_SH = FR_ARENA_NEW(a, double, (size_t)m *(size_t)m);
        w->jr_x = FR_ARENA_NEW(a, fr_svec, n);
        w->jr_pool = m * JR_POOL;
        w->jr_ps = FR_ARENA_NEW(a, int, m + 1);
        w->jr_pk = FR_ARENA_NEW(a, int, w->jr_pool);
        w->jr_pv = (double(*)[6])FR_ARENA_NEW(a, double, 6 * (size_t)w->jr_pool);
        w->jr_z = (double(*)[6])FR_ARENA_NEW(a, double, 6 * (size_t)n);
        w->jr_idx = FR_ARENA_NEW(a, int, n);
        w->jr_mark = FR_ARENA_NEW(a, unsigned char, n);
        w->jr_fM = FR_ARENA_NEW(a, int, m);
        w->jr_fH = FR_ARENA_NEW(a, int, m);
        w->jr_owner = FR_ARENA_NEW(a, int, m);
        w->jr_kind = FR_ARENA_NEW(a, int, m);
        w->jr_lo = FR_ARENA_NEW(a, double, m);
        w->jr_hi = FR_ARENA_NEW(a, double, m);
        w->jr_lam1 = FR_ARENA_NEW(a, double, m);
        w->jr_kin = FR_ARENA_NEW(a, double, m);
        w->jr_uf = FR_ARENA_NEW(a, int, n);
        w->jr_body = FR_ARENA_NEW(a, unsigned char, n);
        w->jr_slot = FR_ARENA_NEW(a, int, m);
        w->jr_clamp = FR_ARENA_NEW(a, signed char, m);
        if (!w->jr_sa || !w->jr_sb || !w->jr_a || !w->jr_b || !w->jr_ja || !w->jr_jb || !w->jr_c ||
            !w->jr_t || !w->jr_u || !w->jr_SM || !w->jr_SH || !w->jr_x || !w->jr_ps || !w->jr_pk ||
            !w->jr_pv || !w->jr_z || !w->jr_idx || !w->jr_mark || !w->jr_fM || !w->jr_fH ||
            !w->jr_owner || !w->jr_slot || !w->jr_kind || !w->jr_lo || !w->jr_hi || !w->jr_lam1 ||
            !w->jr_kin || !w->jr_uf || !w->jr_body || !w->jr_clamp)
            return FR_ERR_NOMEM;
        memset(w->jr_z, 0, 6 * sizeof(double) * (size_t)n);
        memset(w->jr_mark, 0, (size_t)n);
        memset(w->jr_body, 0, (size_t)n);
        w->jr_marked = false;
    }
    return fr_bchol_init(&w->chol, n, e, fill, a);
}

void fr_world_solver_stats_get(const fr_world *w, fr_world_solver_stats *out)
{
    *out = w->stats;
    out->analyses = w->chol.analyses;
    out->factorisations = w->chol.factorisations;
    out->factor_blocks = w->chol.nnz;
    out->advanced = w->geo_advanced;
    out->tangents = w->geo_tangents;
}

fr_svec fri_body_nu(const fr_world *w, int slot)
{
    if (w->model[slot].type == FR_BODY_STATIC) return fr_sv_zero();
    return fr_sv(w->state[slot].angvel, w->state[slot].vel);
}

/* A wrench at a point r away from the centre of mass, about the centre: (τ + r × f; f). */
static inline fr_svec wrench_about_com(fr_svec w, fr_vec3 r)
{
    return fr_sv(fr_v3_add(w.ang, fr_v3_cross(r, w.lin)), w.lin);
}

void fri_pair_local(const fr_world *w, const fri_pair *p, fr_svec nu_a, fr_svec nu_b, double y[6])
{
    fr_vec3 c = p->model.point;
    fr_svec d = fr_sv_sub(fri_twist_at(nu_a, fr_v3_sub(c, w->state[p->slot_a].pose.p)),
                          fri_twist_at(nu_b, fr_v3_sub(c, w->state[p->slot_b].pose.p)));
    fr_contact_model_local(&p->model, d, y);
}

/* The velocity the solve uses for a body: its iterate when it is in the system. */
static inline fr_svec nu_of(const fr_world *w, int slot)
{
    int k = w->sys_index[slot];
    return k >= 0 ? w->sys_nu[k] : fri_body_nu(w, slot);
}

/* Pairs the system solves: a model, and at least one side in the system. */
static inline bool in_system(const fr_world *w, const fri_pair *p)
{
    return p->modeled && (w->sys_index[p->slot_a] >= 0 || w->sys_index[p->slot_b] >= 0);
}

/* ---------------------------------------------------------------- the system's shape */

/* Heap sort of (key, index) by key, ascending (no allocation, O(n log n)). */
static void sift(uint64_t *key, int *idx, int root, int n)
{
    for (;;) {
        int c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && key[c + 1] > key[c]) c++;
        if (key[root] >= key[c]) return;
        uint64_t tk = key[root];
        key[root] = key[c];
        key[c] = tk;
        int ti = idx[root];
        idx[root] = idx[c];
        idx[c] = ti;
        root = c;
    }
}

static void heap_sort(uint64_t *key, int *idx, int n)
{
    for (int i = n / 2 - 1; i >= 0; i--) sift(key, idx, i, n);
    for (int e = n - 1; e > 0; e--) {
        uint64_t tk = key[0];
        key[0] = key[e];
        key[e] = tk;
        int ti = idx[0];
        idx[0] = idx[e];
        idx[e] = ti;
        sift(key, idx, 0, e);
    }
}

/* Which bodies take part, in creation order; the coupled pairs of bodies, sorted and merged. */
static void system_shape(fr_world *w)
{
    const bool implicit = w->def.contact_implicit;
    for (int k = 0; k < w->norder; k++) w->sys_index[w->order[k]] = -1;
    /* mark: dynamic bodies with a modeled pair (implicit mode) or an implicit spring */
    if (implicit)
        for (int c = 0; c < w->ncontacts; c++) {
            const fri_pair *p = &w->pairs[w->contacts[c]];
            if (!p->modeled) continue;
            if (w->model[p->slot_a].type == FR_BODY_DYNAMIC) w->sys_index[p->slot_a] = 0;
            if (w->model[p->slot_b].type == FR_BODY_DYNAMIC) w->sys_index[p->slot_b] = 0;
        }
    /* the bodies joined to them by equality rows, and on through the joints */
    w->njr = implicit ? fri_world_joint_eq_rows(w) : 0;
    if (w->njr > 0) jr_drop_loops(w);
    for (bool more = w->njr > 0; more;) {
        more = false;
        for (int r = 0; r < w->njr; r++) {
            const int sa = w->jr_sa[r], sb = w->jr_sb[r];
            if (sa < 0 || sb < 0 || (w->sys_index[sa] == 0) == (w->sys_index[sb] == 0)) continue;
            w->sys_index[sa] = w->sys_index[sb] = 0;
            more = true;
        }
    }
    int n = 0;
    for (int k = 0; k < w->norder; k++) {
        int s = w->order[k];
        const fri_body_state *st = &w->state[s];
        bool springs = w->model[s].type == FR_BODY_DYNAMIC && (st->imp_k > 0 || st->imp_c > 0);
        if (w->sys_index[s] == 0 || springs) {
            w->sys_index[s] = n;
            w->sys_slot[n++] = s;
        }
    }
    w->nsys = n;
    /* the rows on the system's bodies, with their system indices */
    int nr = 0;
    for (int r = 0; r < w->njr; r++) {
        const int a = w->jr_sa[r] >= 0 ? w->sys_index[w->jr_sa[r]] : -1;
        const int b = w->jr_sb[r] >= 0 ? w->sys_index[w->jr_sb[r]] : -1;
        /* (a body with an implicit spring alone is not joined through: its joints stay their
         * stage's) */
        if ((a < 0 && b < 0) || (a < 0 && w->jr_sa[r] >= 0) || (b < 0 && w->jr_sb[r] >= 0))
            continue;
        w->jr_a[nr] = a, w->jr_b[nr] = b;
        w->jr_ja[nr] = w->jr_ja[r], w->jr_jb[nr] = w->jr_jb[r], w->jr_c[nr] = w->jr_c[r];
        w->jr_owner[nr] = w->jr_owner[r], w->jr_slot[nr] = w->jr_slot[r];
        w->jr_kind[nr] = w->jr_kind[r], w->jr_lo[nr] = w->jr_lo[r], w->jr_hi[nr] = w->jr_hi[r];
        w->jr_lam1[nr] = w->jr_lam1[r], w->jr_kin[nr] = w->jr_kin[r];
        nr++;
    }
    /* the limits and motors taking part first: those the constraint stage left strictly inside
     * their bounds (a limit holding, a motor short of its force) */
    w->njr_all = nr;
    if (nr > 0)
        w->cstats.solve_steps++;
    else if (w->jr_overflow && n > 0)
        w->cstats.solve_left_out++;
    if (w->jr_marked) memset(w->jr_body, 0, (size_t)w->def.max_bodies);
    w->jr_marked = nr > 0;
    for (int r = 0; r < nr; r++) {
        if (w->jr_sa[r] >= 0) w->jr_body[w->jr_sa[r]] = 1;
        if (w->jr_sb[r] >= 0) w->jr_body[w->jr_sb[r]] = 1;
    }
    int na = 0;
    for (int r = 0; r < nr; r++) {
        const bool in = jr_inside(w, r);
        w->jr_clamp[r] = (signed char)(in || w->jr_kind[r] != FRI_JR_MOTOR ? 0
                                       : w->jr_lam1[r] >= 0.0              ? 1
                                                                           : -1);
        if (in) jr_swap(w, r, na++);
    }
    w->njr = na;
    /* couplings */
    /* the keys in contact order (sys_kin); sorted into sys_key unless they are the last step's,
     * whose sorted order sys_key still holds (a resting scene's pairs come in the same order) */
    int nk = 0;
    bool same = true;
    if (implicit)
        for (int c = 0; c < w->ncontacts; c++) {
            fri_pair *p = &w->pairs[w->contacts[c]];
            p->edge = -1;
            if (!p->modeled) continue;
            int ia = w->sys_index[p->slot_a], ib = w->sys_index[p->slot_b];
            if (ia < 0 || ib < 0) continue;
            int lo = ia < ib ? ia : ib, hi = ia < ib ? ib : ia;
            uint64_t key = ((uint64_t)(uint32_t)lo << 32) | (uint32_t)hi;
            if (nk >= w->sys_nkin || w->sys_kin[nk] != key || w->sys_kin_idx[nk] != w->contacts[c])
                same = false;
            w->sys_kin[nk] = key;
            w->sys_kin_idx[nk++] = w->contacts[c];
        }
    if (!same || nk != w->sys_nkin) {
        memcpy(w->sys_key, w->sys_kin, sizeof(uint64_t) * (size_t)nk);
        memcpy(w->sys_kidx, w->sys_kin_idx, sizeof(int) * (size_t)nk);
        heap_sort(w->sys_key, w->sys_kidx, nk);
    }
    w->sys_nkin = nk;
    int ne = 0;
    for (int k = 0; k < nk; k++) {
        if (k == 0 || w->sys_key[k] != w->sys_key[k - 1]) {
            w->sys_eu[ne] = (int)(w->sys_key[k] >> 32);
            w->sys_ev[ne] = (int)(w->sys_key[k] & 0xffffffffu);
            ne++;
        }
        fri_pair *p = &w->pairs[w->sys_kidx[k]];
        p->edge = ne - 1;
        p->edge_flip = w->sys_index[p->slot_a] > w->sys_index[p->slot_b];
    }
    w->nedges = ne;
}

/* ---------------------------------------------------------------- joints in the solve */

static void jr_swap(fr_world *w, int i, int k)
{
    if (i == k) return;
#define SWAP(T, arr)                                                                               \
    do {                                                                                           \
        T t_ = arr[i];                                                                             \
        arr[i] = arr[k];                                                                           \
        arr[k] = t_;                                                                               \
    } while (0)
    SWAP(int, w->jr_sa);
    SWAP(int, w->jr_sb);
    SWAP(int, w->jr_a);
    SWAP(int, w->jr_b);
    SWAP(fr_svec, w->jr_ja);
    SWAP(fr_svec, w->jr_jb);
    SWAP(double, w->jr_c);
    SWAP(int, w->jr_owner);
    SWAP(int, w->jr_slot);
    SWAP(int, w->jr_kind);
    SWAP(double, w->jr_lo);
    SWAP(double, w->jr_hi);
    SWAP(double, w->jr_lam1);
    SWAP(double, w->jr_kin);
    SWAP(signed char, w->jr_clamp);
#undef SWAP
}

static int uf_root(int *up, int k)
{
    while (up[k] != k) k = up[k] = up[up[k]];
    return k;
}

/* A closed loop's joints stay their stage's (the splitting): the rows of a group of bodies whose
 * joints close a loop among them or through the world (two joints to a fixed or kinematic body)
 * are dropped. Taken into the solve, a four-bar on a free base stalled against the ground stopped
 * unconverged in 810 of 4000 steps and at 5 ms gained 183 J in a tick: its closure's rows turn
 * dependent near its dead points, where their impulses grow without bound. */
static void jr_drop_loops(fr_world *w)
{
    int *up = w->jr_uf;
    unsigned char *f = w->jr_mark; /* (zero between forward solves: cleared again below) */
    const int nb = w->def.max_bodies;
    for (int i = 0; i < nb; i++) up[i] = i;
    /* each joint once (its rows are consecutive): joining bodies already joined closes a loop
     * (flagged on the root then, 4); a joint to the world is an anchor of its body (8) */
    for (int r = 0; r < w->njr; r++) {
        if (r > 0 && w->jr_owner[r] == w->jr_owner[r - 1]) continue;
        const int a = w->jr_sa[r], b = w->jr_sb[r];
        if (a >= 0 && b >= 0) {
            const int ra = uf_root(up, a), rb = uf_root(up, b);
            if (ra == rb)
                f[ra] |= 4;
            else
                up[ra] = rb;
        } else {
            f[a >= 0 ? a : b] |= f[a >= 0 ? a : b] & 8 ? 4 : 8;
        }
    }
    /* on the final roots: 1 a loop, 2 one anchor (a second one is a loop through the world) */
    for (int i = 0; i < nb; i++) {
        if (!(f[i] & 12)) continue;
        const int ri = uf_root(up, i);
        if (f[i] & 4) f[ri] |= 1;
        if (f[i] & 8) f[ri] |= f[ri] & 2 ? 1 : 2;
    }
    int nr = 0;
    for (int r = 0; r < w->njr; r++) {
        const int s = w->jr_sa[r] >= 0 ? w->jr_sa[r] : w->jr_sb[r];
        if (f[uf_root(up, s)] & 1) continue;
        if (nr != r) jr_swap(w, r, nr);
        nr++;
    }
    for (int i = 0; i < nb; i++) f[i] = 0;
    w->njr = nr;
}

/* N·s: what a motor row held at its bound adds to the constraint stage's impulse */
static double jr_fixed(const fr_world *w, int r)
{
    return (w->jr_clamp[r] > 0 ? w->jr_hi[r] : w->jr_lo[r]) - w->jr_lam1[r];
}

/* whether row r's first impulse lies strictly inside its bounds (an equality row's always does) */
static bool jr_inside(const fr_world *w, int r)
{
    const double l = w->jr_lam1[r], lo = w->jr_lo[r], hi = w->jr_hi[r];
    const double m = 1e-9 * (fabs(lo) < INFINITY ? fabs(lo) : 0.0) +
                     1e-9 * (fabs(hi) < INFINITY ? fabs(hi) : 0.0);
    /* a motor within half of its force (the others start held at their bound, jr_clamp): near
     * its bound the active set flipped from step to step and kicked the light bodies it drives
     * (a car whose wheels need 0.9 of their motors' force, 5 ms: 75.7 J in a tick; with half,
     * 2.2 J; started as an equality up to its bound, with jr_clamp, 1 of 2998 steps unconverged
     * at 1 ms where there are none) */
    if (w->jr_kind[r] == FRI_JR_MOTOR) return fabs(l) < JR_MOTOR_SHARE * hi;
    return w->jr_kind[r] == FRI_JR_EQ || (l > lo + m && l < hi - m);
}

/*
 * Joints in the solve (docs/world.md, "Joints in the implicit step"). The equality rows of the
 * joints on the system's bodies, J·ν' + c = 0, are constraints of the step's minimisation: each
 * Newton direction solves [H Jᵀ; J 0]·[δ; λ] = [−G; −(J·ν + c)] through J·H⁻¹·Jᵀ (dense, on the
 * kept factor of H), the start is projected onto the rows in M's metric, and the residual is G's
 * part that the rows cannot take (G + Jᵀμ, μ = −(J·M⁻¹·Jᵀ)⁻¹·J·M⁻¹·G). Solved after the fact
 * (fri_world_constraints_mid alone), a chain's link landing took the contact force of a free
 * link of its own mass, and its joints then pulled it deeper than the step had found it: a
 * 20-link chain swinging onto the ground rose by up to 0.82 J in a tick at 1 ms.
 */

/* J_r·x over system vectors x */
static double jr_dot(const fr_world *w, int r, const fr_svec *x)
{
    double v = 0.0;
    if (w->jr_a[r] >= 0) v += fr_sv_dot(w->jr_ja[r], x[w->jr_a[r]]);
    if (w->jr_b[r] >= 0) v += fr_sv_dot(w->jr_jb[r], x[w->jr_b[r]]);
    return v;
}

/* x = Σ_r J_rᵀ·lam_r over the system */
static void jr_scatter(const fr_world *w, const double *lam, fr_svec *x)
{
    for (int k = 0; k < w->nsys; k++) x[k] = fr_sv_zero();
    for (int r = 0; r < w->njr; r++) {
        if (w->jr_a[r] >= 0) x[w->jr_a[r]] = fr_sv_mad(x[w->jr_a[r]], lam[r], w->jr_ja[r]);
        if (w->jr_b[r] >= 0) x[w->jr_b[r]] = fr_sv_mad(x[w->jr_b[r]], lam[r], w->jr_jb[r]);
    }
}

/* M⁻¹·y for system body k */
static fr_svec sys_minv(const fr_world *w, int k, fr_svec y)
{
    return fr_sv(fr_m3_mulv(w->sys_Iinv[k], y.ang),
                 fr_v3_scale(y.lin, w->model[w->sys_slot[k]].inv_mass));
}

/* Cholesky of the m×m symmetric A (lower triangle read, L written over it) inside its envelope
 * (first[i]: row i's first nonzero column, which the factor keeps: a chain's rows in order are
 * a band). A row whose pivot falls below JR_DEPENDENT of its diagonal depends on the rows before
 * it (a closed loop's redundant rows): it is dropped, its multiplier zero (L_jj = 0 marks it; the
 * rows are consistent, so that is exact). False on a pivot that is not a number. */
static bool dense_factor(double *A, int m, int *first)
{
    for (int i = 0; i < m; i++) {
        int f = 0;
        while (f < i && A[i * m + f] == 0.0) f++;
        first[i] = f;
    }
    for (int j = 0; j < m; j++) {
        const double a = A[j * m + j];
        double d = a;
        for (int k = first[j]; k < j; k++) d -= A[j * m + k] * A[j * m + k];
        if (!isfinite(d)) return false;
        if (!(d > JR_DEPENDENT * a)) {
            for (int i = j; i < m; i++) A[i * m + j] = 0.0;
            continue;
        }
        const double l = sqrt(d);
        A[j * m + j] = l;
        for (int i = j + 1; i < m; i++) {
            if (first[i] > j) continue;
            double v = A[i * m + j];
            for (int k = first[i] > first[j] ? first[i] : first[j]; k < j; k++)
                v -= A[i * m + k] * A[j * m + k];
            A[i * m + j] = v / l;
        }
    }
    return true;
}

static void dense_solve(const double *L, int m, const int *first, double *x)
{
    for (int i = 0; i < m; i++) {
        double v = x[i];
        for (int k = first[i]; k < i; k++) v -= L[i * m + k] * x[k];
        x[i] = L[i * m + i] != 0.0 ? v / L[i * m + i] : 0.0;
    }
    for (int i = m - 1; i >= 0; i--) {
        const double v = L[i * m + i] != 0.0 ? x[i] / L[i * m + i] : 0.0;
        x[i] = v;
        for (int k = first[i]; k < i; k++) x[k] -= L[i * m + k] * v;
    }
}

/* J·M⁻¹·Jᵀ factored into jr_SM; false (and no rows) when it cannot be */
static bool jr_metric(fr_world *w)
{
    {
        const int m = w->njr;
        double *S = w->jr_SM;
        for (int r = 0; r < m; r++) {
            const int a = w->jr_a[r], b = w->jr_b[r];
            const fr_svec ta = a >= 0 ? sys_minv(w, a, w->jr_ja[r]) : fr_sv_zero();
            const fr_svec tb = b >= 0 ? sys_minv(w, b, w->jr_jb[r]) : fr_sv_zero();
            for (int q = 0; q <= r; q++) {
                double v = 0.0;
                const int qa = w->jr_a[q], qb = w->jr_b[q];
                if (qa >= 0 && qa == a) v += fr_sv_dot(w->jr_ja[q], ta);
                if (qa >= 0 && qa == b) v += fr_sv_dot(w->jr_ja[q], tb);
                if (qb >= 0 && qb == a) v += fr_sv_dot(w->jr_jb[q], ta);
                if (qb >= 0 && qb == b) v += fr_sv_dot(w->jr_jb[q], tb);
                S[r * m + q] = v;
            }
        }
        if (dense_factor(S, m, w->jr_fM)) return true;
    }
    w->njr = 0;
    return false;
}

/* x ← x − M⁻¹·Jᵀ·(J·M⁻¹·Jᵀ)⁻¹·(J·x + add·(J·ν + c)): the nearest direction in M's metric that
 * keeps (add 0) or makes (add 1) the iterate ν + x meet the rows */
static void jr_project(fr_world *w, fr_svec *x, double add)
{
    const int m = w->njr;
    for (int r = 0; r < m; r++)
        w->jr_u[r] = jr_dot(w, r, x) + add * (jr_dot(w, r, w->sys_nu) + w->jr_c[r]);
    dense_solve(w->jr_SM, m, w->jr_fM, w->jr_u);
    jr_scatter(w, w->jr_u, w->jr_x);
    for (int k = 0; k < w->nsys; k++) x[k] = fr_sv_sub(x[k], sys_minv(w, k, w->jr_x[k]));
}

/* J·H⁻¹·Jᵀ's lower triangle into S from the rows' forward solves (L⁻¹·P·J_rᵀ, each touching only
 * the blocks its two bodies' elimination fills); false when they do not fit the pool */
static bool jr_schur_sparse(fr_world *w, double *S)
{
    const int m = w->njr;
    int used = 0;
    bool fits = true;
    for (int q = 0; q < m && fits; q++) {
        int node[2], nb = 0;
        fr_svec val[2];
        if (w->jr_a[q] >= 0) node[nb] = w->jr_a[q], val[nb++] = w->jr_ja[q];
        if (w->jr_b[q] >= 0) node[nb] = w->jr_b[q], val[nb++] = w->jr_jb[q];
        const int cnt =
            fr_bchol_forward_sparse(&w->chol, nb, node, val, w->jr_z, w->jr_mark, w->jr_idx);
        w->jr_ps[q] = used;
        if (used + cnt > w->jr_pool) fits = false;
        for (int i = 0; i < cnt; i++) {
            const int k = w->jr_idx[i];
            if (fits) {
                w->jr_pk[used] = k;
                memcpy(w->jr_pv[used], w->jr_z[k], sizeof w->jr_pv[0]);
                used++;
            }
            memset(w->jr_z[k], 0, sizeof w->jr_z[0]);
            w->jr_mark[k] = 0;
        }
    }
    if (!fits) return false;
    w->jr_ps[m] = used;
    for (int q = 0; q < m; q++)
        for (int r = q; r < m; r++) {
            double v = 0.0;
            const int r0 = w->jr_ps[r], r1 = w->jr_ps[r + 1], q0 = w->jr_ps[q],
                      q1 = w->jr_ps[q + 1];
            /* (supports apart: a zero, as most are along a chain) */
            if (r0 == r1 || q0 == q1 || w->jr_pk[r1 - 1] < w->jr_pk[q0] ||
                w->jr_pk[q1 - 1] < w->jr_pk[r0]) {
                S[r * m + q] = 0.0;
                continue;
            }
            for (int i = w->jr_ps[r], j = w->jr_ps[q];
                 i < w->jr_ps[r + 1] && j < w->jr_ps[q + 1];) {
                if (w->jr_pk[i] < w->jr_pk[j]) {
                    i++;
                } else if (w->jr_pk[i] > w->jr_pk[j]) {
                    j++;
                } else {
                    for (int c = 0; c < 6; c++) v += w->jr_pv[i][c] * w->jr_pv[j][c];
                    i++, j++;
                }
            }
            S[r * m + q] = v;
        }
    return true;
}

/* The Newton direction dir = −H⁻¹·G (chol holding H's factor) turned into the constrained one:
 * δ = dir − H⁻¹·Jᵀ·λ with (J·H⁻¹·Jᵀ)·λ = J·dir + J·ν + c. Falls back on the metric's projection
 * when J·H⁻¹·Jᵀ cannot be factored. */
static void jr_newton(fr_world *w, fr_svec *dir)
{
    const int m = w->njr;
    double *S = w->jr_SH;
    const bool sparse = jr_schur_sparse(w, S);
    {
        for (int q = 0; q < m && !sparse; q++) {
            for (int k = 0; k < w->nsys; k++) w->jr_x[k] = fr_sv_zero();
            if (w->jr_a[q] >= 0) w->jr_x[w->jr_a[q]] = w->jr_ja[q];
            if (w->jr_b[q] >= 0) w->jr_x[w->jr_b[q]] = fr_sv_add(w->jr_x[w->jr_b[q]], w->jr_jb[q]);
            fr_bchol_solve(&w->chol, w->jr_x);
            for (int r = q; r < m; r++) S[r * m + q] = jr_dot(w, r, w->jr_x);
        }
        if (!dense_factor(S, m, w->jr_fH)) {
            jr_project(w, dir, 1.0);
            return;
        }
    }
    for (int r = 0; r < m; r++)
        w->jr_u[r] = jr_dot(w, r, dir) + jr_dot(w, r, w->sys_nu) + w->jr_c[r];
    dense_solve(S, m, w->jr_fH, w->jr_u);
    jr_scatter(w, w->jr_u, w->jr_x);
    fr_bchol_solve(&w->chol, w->jr_x);
    for (int k = 0; k < w->nsys; k++) dir[k] = fr_sv_sub(dir[k], w->jr_x[k]);
}

/* The rows' impulses at the solution, −μ of the last residual (G + Jᵀ·μ = 0 there: the joints
 * put −Jᵀ·μ on the bodies), booked as the constraint stage books its own: the joint's wrench on
 * b, and a kinematic side's drive's work on the world (a crane's load lying on the ground) */
static void jr_book(fr_world *w)
{
    const double h = w->h;
    for (int r = 0; r < w->njr_all; r++) {
        if (r >= w->njr && !w->jr_clamp[r]) continue;
        const double lam = r < w->njr ? -w->jr_t[r] : jr_fixed(w, r);
        const int j = w->jr_owner[r];
        if (j < 0 || j >= w->njoints) continue;
        fri_joint *jt = &w->joints[j];
        jt->force = fr_v3_mad(jt->force, lam / h, w->jr_jb[r].lin);
        jt->torque = fr_v3_mad(jt->torque, lam / h, w->jr_jb[r].ang);
        if (w->jr_kind[r] == FRI_JR_MOTOR) {
            /* the motor's share: its work is booked over its whole impulse after the solve
             * (fri_world_constraints_mid), which may add only what is left of its bound */
            jt->lam[w->jr_slot[r]] += lam;
            jt->motor_force += lam / h;
        } else {
            w->work -= lam * w->jr_kin[r];
        }
    }
}

/* After a converged solve: a limit or motor row whose total impulse (the stage's and the
 * solve's) left its bounds stops taking part (a limit pulling, a motor past its force), and a
 * limit the iterate would pass takes part. Returns whether the rows changed. */
static bool jr_revise(fr_world *w, double tol, bool activate)
{
    bool changed = false;
    for (int r = 0; r < w->njr; r++) {
        if (w->jr_kind[r] == FRI_JR_EQ) continue;
        const double tot = w->jr_lam1[r] - w->jr_t[r];
        if (tot < w->jr_lo[r] || tot > w->jr_hi[r]) {
            /* (a motor past its force holds it: its torque stays continuous) */
            if (w->jr_kind[r] == FRI_JR_MOTOR) w->jr_clamp[r] = (signed char)(tot > 0.0 ? 1 : -1);
            jr_swap(w, r, --w->njr);
            r--;
            changed = true;
        }
    }
    for (int r = w->njr; r < w->njr_all && activate; r++) {
        const double v = jr_dot(w, r, w->sys_nu) + w->jr_c[r];
        /* a motor at its bound whose joint the step drives past its speed holds it instead */
        if (w->jr_clamp[r] && w->jr_clamp[r] * v > tol) {
            w->jr_clamp[r] = 0;
            jr_swap(w, r, w->njr++);
            changed = true;
            continue;
        }
        if (w->jr_kind[r] != FRI_JR_LO && w->jr_kind[r] != FRI_JR_HI) continue;
        if ((w->jr_kind[r] == FRI_JR_LO && v < -tol) || (w->jr_kind[r] == FRI_JR_HI && v > tol)) {
            jr_swap(w, r, w->njr++);
            changed = true;
        }
    }
    return changed;
}

/* The limit and motor rows revised (jr_revise) and the iterate moved onto the rows taking part
 * then; returns whether they changed. */
static bool jr_revise_onto(fr_world *w, double tol, int *passes)
{
    /* After JR_PASSES revisions the rows only leave (a motor to its bound, a limit that pulls),
     * at most once each: two slider motors pressing on each other through a contact flipped
     * between taking part and holding their bounds, and the step ended with both taking part at
     * 1e4 times their force (a new user's trial: their bases kicked to 0.26 m/s). */
    if (w->njr_all == 0 || *passes >= JR_PASSES + w->njr_all) return false;
    if (!jr_revise(w, tol, *passes < JR_PASSES)) return false;
    (*passes)++;
    if (w->njr > 0 && jr_metric(w)) {
        for (int k = 0; k < w->nsys; k++) w->sys_dx[k] = fr_sv_zero();
        jr_project(w, w->sys_dx, 1.0);
        for (int k = 0; k < w->nsys; k++) w->sys_nu[k] = fr_sv_add(w->sys_nu[k], w->sys_dx[k]);
    }
    return true;
}

/* ---------------------------------------------------------------- Newton */

/* Every pair's response at the iterate (flags: enum fr_contact_respond_flags). While kept
 * factors are in use (resp_lazy) the tangents are left out: a chord step does not assemble the
 * matrix, and newton_direction asks for them (ensure_tangents) only when it factors afresh. */
static void respond_all(fr_world *w, unsigned flags)
{
    const double h = w->h;
    if (w->resp_lazy) flags &= ~(unsigned)FR_RESPOND_TANGENT;
    w->resp_flags = flags;
    w->resp_tangent = (flags & FR_RESPOND_TANGENT) != 0;
    w->stats.evaluations++;
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        if (!in_system(w, p)) continue;
        double y[6];
        fri_pair_local(w, p, nu_of(w, p->slot_a), nu_of(w, p->slot_b), y);
        fr_contact_respond(&p->model, y, h, p->mu, p->lam, p->nlag, flags, &p->resp);
    }
}

/* The tangents at the iterate, for a fresh factor (the responses are the same with or without). */
static void ensure_tangents(fr_world *w)
{
    if (w->resp_tangent) return;
    const bool lazy = w->resp_lazy;
    w->resp_lazy = false;
    respond_all(w, w->resp_flags | FR_RESPOND_TANGENT);
    w->resp_lazy = lazy;
}

/* After a converged inner solve: each point's law linearised afresh at the force it reached, the
 * friction limits at the normal forces of this solve. Returns whether that changes any force the
 * responses took at the iterate by more than the tolerance allows (a velocity change of the
 * tolerance over the step): the new tangent's force at the iterate's depth against the old
 * one's, whose difference is the linearisation's error (second order in the depth's change, so a
 * resting stack's contacts need no further round); a bond at its friction limit also by the
 * change of its forces and limit themselves. */
/* A bond at μ_s that a converged solve leaves slipping by no more than the solve's tolerance can
 * explain: its trial force above μ·N·(1 + slack) by at most FRI_HOLD_SPEED times the force of the
 * stick speed. At the exact friction limit both sticking and slipping at the noise floor solve the
 * step (a step accepted without an iteration leaves velocities off by up to the tolerance, more at
 * a lever arm, and the next solve's first iterate can take the slipping branch: 1.9–2.1 stick
 * speeds measured on a cube at μ_s = tan 5°); that is not a breakaway, and the pair is solved
 * again with the wider allowance. */

static bool slip_within_noise(const fr_world *w, const fri_pair *p, const fr_contact_response *r,
                              double nlag)
{
    const fr_contact_model *m = &p->model;
    const double F = p->mu * (nlag >= 0.0 ? nlag : r->normal);
    const double s = w->h * m->kf + m->df;
    return r->trial <= F * (1.0 + FR_CONTACT_STICK_SLACK) + FRI_HOLD_SPEED * s * m->stick_speed;
}

/* the least force a sliding bond must hold at the step's start, of μ_k·N, for its slip to have a
 * direction (rounding leaves ~1e-16 of it) */
#define RESTICK_START_FORCE 1e-9

bool fri_pair_judge_slip(fr_world *w, fri_pair *p, const fr_contact_response *r, double nlag)
{
    if (!(r->slip && r->normal > 0.0)) return false;
    fr_contact_model *m = &p->model;
    if (p->mu > m->mu_k && !p->held && slip_within_noise(w, p, r, nlag)) {
        m->stick_speed *= FRI_HOLD_SPEED;
        p->held = true;
        w->stats.holds++;
        return true;
    }
    if (p->mu > m->mu_k) {
        p->mu = m->mu_k;
        w->stats.breakaways++;
        return true;
    }
    /* (a slipping bond holds the kinetic force: q0 = −z_start/k_f). A bond that held next to
     * nothing at the start (a foot landing while it slides, its q0 ~1e-19 m) has no direction
     * its slip could reverse from: taken by the sign of that rounding, the same landing stuck
     * again or slid on as the solver's path fell (a hexapod's yaw rate 0.012 rad/s apart in a
     * step, revise_robots on and off; a new user's trial) */
    const double q0n = sqrt(m->q0[0] * m->q0[0] + m->q0[1] * m->q0[1] + m->q0[2] * m->q0[2]);
    if (m->sliding && !p->restuck && m->mu_s > m->mu_k &&
        m->kf * q0n > RESTICK_START_FORCE * m->mu_k * r->normal &&
        r->z[0] * m->q0[0] + r->z[1] * m->q0[1] + r->z[2] * m->q0[2] > 0.0) {
        p->mu = m->mu_s;
        p->restuck = true;
        w->stats.resticks++;
        return true;
    }
    return false;
}

static bool update_lambda(fr_world *w)
{
    const double h = w->h, tol = w->def.solver_tolerance;
    bool moved = false;
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        if (!in_system(w, p)) continue;
        double m_red = fr_contact_reduced_mass(w->model[p->slot_a].mass, w->model[p->slot_b].mass);
        double ftol = tol * m_red / h;
        fr_contact_model *m = &p->model;
        const double N = p->resp.normal;
        /* a bond at (or within 0.1 % of) its friction limit: the limit decides stick or slip,
         * so its forces are taken to the tolerance itself, not to their linearisation's error */
        const bool at_limit =
            p->mu > 0.0 && p->resp.trial >= (1.0 - 1e-3) * p->mu * fmin(N, p->nlag);
        double taken[FR_CONTACT_NPTS]; /* the tangent's force at the iterate's depth */
        for (int q = 0; q < m->npts; q++) {
            taken[q] = p->lam[q] + m->lin_K[q] * (p->resp.depth[q] - m->lin_t[q]);
            if (at_limit && fabs(p->resp.elastic[q] - p->lam[q]) > ftol + 1e-9 * p->lam[q])
                moved = true;
            p->lam[q] = p->resp.elastic[q];
        }
        fr_contact_model_linearise(m, p->lam);
        for (int q = 0; q < m->npts && !at_limit; q++) {
            double now = p->lam[q] + m->lin_K[q] * (p->resp.depth[q] - m->lin_t[q]);
            if (fabs(now - taken[q]) > ftol + 1e-9 * p->lam[q]) moved = true;
        }
        /* (a friction limit a little off still opposes the slip: it cannot add energy) */
        if (at_limit && fabs(N - p->nlag) > ftol + FR_CONTACT_STICK_SLACK * p->nlag) moved = true;
        /* A sliding pair's N converges linearly over the rounds, at a ratio set by how its
         * friction moves the bodies; on a jointed body it can be large (a box dragged up off the
         * ground by a rope at an angle: −μ·tan α, 0.8 for a crane's slow lift, 60 rounds a step
         * and 447 of 2500 steps unconverged): Aitken's Δ² takes the next round's limit there, as
         * robots.c does. (Not on free bodies alone: a tumbling block's extrapolated limit rose
         * 3.2 m·g·h in a step, tests/physics/test_friction.c.) */
        double next = N;
        const bool joined = w->jr_marked && (w->jr_body[p->slot_a] || w->jr_body[p->slot_b]);
        if (at_limit && joined && p->nlag_rounds >= 1) {
            const double d1 = N - p->nlag, d0 = p->nlag - p->nlag_old;
            const double ratio = d0 != 0.0 ? d1 / d0 : 0.0;
            /* (only a ratio steady over two rounds: a geometric sequence; among a chain's many
             * coupled contacts the ratios wander, and extrapolated there 3462 of 5555 steps
             * stopped unconverged) */
            if (p->nlag_rounds >= 2 && fabs(ratio) < 0.95 &&
                fabs(ratio - p->nlag_ratio) <= 0.02 * fabs(ratio))
                next = fmax(0.0, N + ratio / (1.0 - ratio) * d1);
            p->nlag_ratio = ratio;
        }
        p->nlag_old = p->nlag;
        p->nlag_rounds++;
        p->nlag = next;
    }
    return moved;
}

/* G at the iterate; returns the largest velocity correction M⁻¹G (angular × radius of gyration).
 */
static double residual(fr_world *w)
{
    const double h = w->h;
    for (int k = 0; k < w->nsys; k++) {
        int s = w->sys_slot[k];
        const fri_body_model *m = &w->model[s];
        const fri_body_state *st = &w->state[s];
        fr_svec d = fr_sv_sub(w->sys_nu[k], w->sys_nu0[k]);
        fr_vec3 Pl = fr_v3_scale(d.lin, m->mass), La = fr_m3_mulv(w->sys_Iw[k], d.ang);
        /* implicit springs at the step's end: F = imp_f − (imp_c + h·imp_k)·v' */
        fr_vec3 fs = fr_v3_sub(st->imp_f, fr_v3_scale(w->sys_nu[k].lin, st->imp_c + h * st->imp_k));
        w->sys_G[k] = fr_sv(fr_v3_sub(La, w->sys_ext[k].ang),
                            fr_v3_sub(fr_v3_sub(Pl, w->sys_ext[k].lin), fr_v3_scale(fs, h)));
    }
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!in_system(w, p)) continue;
        fr_svec P = fr_sv_scale(fr_contact_model_wrench(&p->model, p->resp.w), h);
        int ia = w->sys_index[p->slot_a], ib = w->sys_index[p->slot_b];
        if (ia >= 0)
            w->sys_G[ia] = fr_sv_sub(
                w->sys_G[ia],
                wrench_about_com(P, fr_v3_sub(p->model.point, w->state[p->slot_a].pose.p)));
        if (ib >= 0)
            w->sys_G[ib] = fr_sv_add(
                w->sys_G[ib],
                wrench_about_com(P, fr_v3_sub(p->model.point, w->state[p->slot_b].pose.p)));
    }
    /* the motors held at their bounds: given impulses */
    for (int r = w->njr; r < w->njr_all; r++) {
        if (!w->jr_clamp[r]) continue;
        const double fix = jr_fixed(w, r);
        if (w->jr_a[r] >= 0)
            w->sys_G[w->jr_a[r]] = fr_sv_mad(w->sys_G[w->jr_a[r]], -fix, w->jr_ja[r]);
        if (w->jr_b[r] >= 0)
            w->sys_G[w->jr_b[r]] = fr_sv_mad(w->sys_G[w->jr_b[r]], -fix, w->jr_jb[r]);
    }
    /* the part the joints' rows take is no residual: G + Jᵀ·μ, μ in M's metric */
    if (w->njr > 0) {
        for (int r = 0; r < w->njr; r++) {
            double v = 0.0;
            if (w->jr_a[r] >= 0)
                v += fr_sv_dot(w->jr_ja[r], sys_minv(w, w->jr_a[r], w->sys_G[w->jr_a[r]]));
            if (w->jr_b[r] >= 0)
                v += fr_sv_dot(w->jr_jb[r], sys_minv(w, w->jr_b[r], w->sys_G[w->jr_b[r]]));
            w->jr_t[r] = -v;
        }
        dense_solve(w->jr_SM, w->njr, w->jr_fM, w->jr_t);
        jr_scatter(w, w->jr_t, w->jr_x);
        for (int k = 0; k < w->nsys; k++) w->sys_G[k] = fr_sv_add(w->sys_G[k], w->jr_x[k]);
    }
    double worst = 0.0;
    for (int k = 0; k < w->nsys; k++) {
        const fri_body_model *m = &w->model[w->sys_slot[k]];
        fr_vec3 dw = fr_m3_mulv(w->sys_Iinv[k], w->sys_G[k].ang);
        const double rg = w->sys_rg[k];
        double e = fmax(fr_v3_norm(w->sys_G[k].lin) * m->inv_mass, fr_v3_norm(dw) * rg);
        /* less the rounding floor of a fast body in stiff contact: 1e-9 of its speed */
        double speed = fr_v3_norm(w->sys_nu[k].lin) + fr_v3_norm(w->sys_nu[k].ang) * rg;
        e = fmax(0.0, e - 1e-9 * speed);
        if (!(e <= worst)) worst = e; /* NaN propagates */
    }
    return worst;
}

/* The Newton matrix M + Σ XᵀCX (+ the implicit springs' h·(c + h·k)). */
static void assemble(fr_world *w)
{
    const double h = w->h;
    for (int k = 0; k < w->nsys; k++) {
        int s = w->sys_slot[k];
        const fri_body_state *st = &w->state[s];
        fr_mat6 *D = &w->sys_D[k];
        memset(D, 0, sizeof *D);
        double ml = w->model[s].mass + h * st->imp_c + h * h * st->imp_k;
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) D->m[i][j] = w->sys_Iw[k].m[i][j];
            D->m[3 + i][3 + i] = ml;
        }
    }
    for (int e = 0; e < w->nedges; e++) memset(&w->sys_O[e], 0, sizeof(fr_mat6));
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!in_system(w, p)) continue;
        int ia = w->sys_index[p->slot_a], ib = w->sys_index[p->slot_b];
        fr_mat6 Cw, aa, ab, bb;
        fr_contact_tangent_world(&p->model, p->resp.C, &Cw);
        fr_contact_blocks(&Cw, p->model.point, w->state[p->slot_a].pose.p,
                          w->state[p->slot_b].pose.p, ia >= 0 ? &aa : NULL,
                          ia >= 0 && ib >= 0 ? &ab : NULL, ib >= 0 ? &bb : NULL);
        if (ia >= 0) fr_m6_add(&w->sys_D[ia], &aa);
        if (ib >= 0) fr_m6_add(&w->sys_D[ib], &bb);
        if (ia >= 0 && ib >= 0) {
            fr_mat6 *O = &w->sys_O[p->edge];
            if (p->edge_flip) {
                for (int i = 0; i < 6; i++)
                    for (int j = 0; j < 6; j++) O->m[i][j] += ab.m[j][i];
            } else {
                fr_m6_add(O, &ab);
            }
        }
    }
}

/* y ← H·x over the assembled blocks (for the iterative fallback). */
static void mat_vec(const fr_world *w, const fr_svec *x, fr_svec *y)
{
    for (int k = 0; k < w->nsys; k++) y[k] = fr_m6_mulv(&w->sys_D[k], x[k]);
    for (int e = 0; e < w->nedges; e++) {
        const fr_mat6 *O = &w->sys_O[e];
        int u = w->sys_eu[e], v = w->sys_ev[e];
        y[u] = fr_sv_add(y[u], fr_m6_mulv(O, x[v]));
        fr_svec t = fr_sv_zero();
        for (int i = 0; i < 6; i++) {
            double s = 0.0;
            for (int j = 0; j < 6; j++) s += O->m[j][i] * fr_sv_get(&x[u], j);
            fr_sv_set(&t, i, s);
        }
        y[v] = fr_sv_add(y[v], t);
    }
}

/*
 * H·dx = −G by conjugate gradients preconditioned with the diagonal blocks, for a system whose
 * sparse factor does not fit max_fill (counted in the stats). Uses sys_nu_prev's neighbours as
 * scratch: dx in `dx`, r/z/p/q from the caller's buffers. Returns false when it cannot proceed.
 */
static bool solve_cg(fr_world *w, fr_svec *dx, fr_svec *r, fr_svec *z, fr_svec *pv, fr_svec *q)
{
    const int n = w->nsys;
    /* block-diagonal preconditioner: factor copies of the diagonal blocks in sys_O's tail is not
     * available; use the diagonal entries (Jacobi) */
    double rz = 0.0, r0 = 0.0;
    for (int k = 0; k < n; k++) {
        dx[k] = fr_sv_zero();
        r[k] = fr_sv_neg(w->sys_G[k]);
        for (int i = 0; i < 6; i++) {
            double d = w->sys_D[k].m[i][i];
            fr_sv_set(&z[k], i, fr_sv_get(&r[k], i) / d);
        }
        pv[k] = z[k];
        rz += fr_sv_dot(r[k], z[k]);
        r0 = fmax(r0, fr_sv_dot(r[k], r[k]));
    }
    if (!(r0 > 0.0)) return true;
    for (int it = 0; it < 20 * n + 100; it++) {
        mat_vec(w, pv, q);
        double pq = 0.0;
        for (int k = 0; k < n; k++) pq += fr_sv_dot(pv[k], q[k]);
        if (!(pq > 0.0)) return false;
        double alpha = rz / pq, rn = 0.0, rz2 = 0.0;
        for (int k = 0; k < n; k++) {
            dx[k] = fr_sv_mad(dx[k], alpha, pv[k]);
            r[k] = fr_sv_mad(r[k], -alpha, q[k]);
            rn = fmax(rn, fr_sv_dot(r[k], r[k]));
            for (int i = 0; i < 6; i++)
                fr_sv_set(&z[k], i, fr_sv_get(&r[k], i) / w->sys_D[k].m[i][i]);
            rz2 += fr_sv_dot(r[k], z[k]);
        }
        if (rn <= 1e-28 * r0) return true;
        double beta = rz2 / rz;
        rz = rz2;
        for (int k = 0; k < n; k++) pv[k] = fr_sv_mad(z[k], beta, pv[k]);
    }
    return true;
}

/* The factor in chol is for the bodies of this system, in this order (its pattern is checked by
 * fr_bchol_same where the step starts). */
static bool factor_fits(const fr_world *w)
{
    return w->fac_ok && w->fac_n == w->nsys &&
           !memcmp(w->fac_slot, w->sys_slot, sizeof(int) * (size_t)w->nsys);
}

/* The Newton direction δ = −H⁻¹G (H assembled at the iterate), or with `lagged` the direction of
 * the factor kept from an earlier iterate (a chord step). */
static int newton_direction(fr_world *w, bool direct, bool lagged, fr_svec *dir)
{
    const int n = w->nsys;
    if (direct && lagged) {
        memcpy(dir, w->sys_G, sizeof(fr_svec) * (size_t)n);
        fr_bchol_solve(&w->chol, dir);
        for (int k = 0; k < n; k++) dir[k] = fr_sv_neg(dir[k]);
        return FR_OK;
    }
    ensure_tangents(w);
    assemble(w);
    if (direct) {
        memcpy(dir, w->sys_G, sizeof(fr_svec) * (size_t)n);
        w->fac_ok = false;
        int err = fr_bchol_factor(&w->chol, w->sys_D, w->sys_O);
        if (err) return err;
        memcpy(w->fac_slot, w->sys_slot, sizeof(int) * (size_t)n);
        w->fac_n = n;
        w->fac_ok = true;
        fr_bchol_solve(&w->chol, dir);
        for (int k = 0; k < n; k++) dir[k] = fr_sv_neg(dir[k]);
        if (w->njr > 0) jr_newton(w, dir);
        return FR_OK;
    }
    /* iterative fallback; scratch from the factor's unused storage (no factor kept) */
    w->fac_ok = false;
    fr_svec *buf = (fr_svec *)(void *)w->chol.off;
    if ((size_t)4 * (size_t)n * sizeof(fr_svec) > (size_t)w->chol.max_fill * sizeof(fr_mat6))
        return FR_ERR_FULL;
    fr_svec *r = buf, *z = buf + n, *pv = buf + 2 * n, *q = buf + 3 * n;
    if (!solve_cg(w, dir, r, z, pv, q)) return FR_ERR_NUMERIC;
    if (w->njr > 0) jr_project(w, dir, 1.0);
    return FR_OK;
}

/* G·δ: the slope of the step's incremental potential along δ at the iterate. */
static double slope_along(const fr_world *w, const fr_svec *dir)
{
    double s = 0.0;
    for (int k = 0; k < w->nsys; k++) s += fr_sv_dot(w->sys_G[k], dir[k]);
    return s;
}

/* ν = ν_prev + α·δ, with the responses (and their tangents: the last point tried is where the
 * next iteration starts) and the residual there, which it returns. */
static double try_step(fr_world *w, const fr_svec *dir, double alpha)
{
    for (int k = 0; k < w->nsys; k++) w->sys_nu[k] = fr_sv_mad(w->sys_nu_prev[k], alpha, dir[k]);
    respond_all(w, FR_RESPOND_TANGENT);
    return residual(w);
}

/*
 * Returns the residual where it stops (the responses with their tangents left there).
 * With the normal forces linearised at λ and the friction limits at the previous iterate's
 * normal forces, the step's equations are the gradient of a convex, piecewise-quadratic
 * potential Φ (inertia, springs, each pair's normal spring-damper with its no-pull clamp and
 * its elasto-plastic bond): along the Newton direction δ the slope G·δ grows from negative. The
 * full step is taken when the slope is still negative there; otherwise the step is cut back to
 * where the slope vanishes (regula falsi, Illinois), which a contact switching between sticking
 * and slipping, or closing and opening, needs to keep Newton from cycling.
 */
static double line_search(fr_world *w, const fr_svec *dir, bool chord)
{
    double g0 = slope_along(w, dir);
    const double amax = 1.0;
    memcpy(w->sys_nu_prev, w->sys_nu, sizeof(fr_svec) * (size_t)w->nsys);
    double res = try_step(w, dir, amax);
    double g1 = slope_along(w, dir);
    if (!(g0 < 0.0) || !(g1 > 1e-12 * -g0)) return res;
    /* a chord step (a kept factor's direction, Newton's but for the matrix's small change) that
     * overshoots a little still descends by at least ¾ of a quadratic model's optimum: taken
     * (the chord rule refactors when it does not contract); not while a contact slides, whose
     * stick or slip the zero of the slope decides */
    if (chord && g1 <= 0.5 * -g0) return res;
    double a = 0.0, fa = g0, b = amax, fb = g1;
    int side = 0;
    for (int k = 0; k < 20; k++) {
        double x = (a * fb - b * fa) / (fb - fa);
        res = try_step(w, dir, x);
        double fx = slope_along(w, dir);
        if (fabs(fx) <= 1e-3 * -g0) return res;
        if (fx < 0.0) {
            a = x, fa = fx;
            if (side == -1) fb *= 0.5;
            side = -1;
        } else {
            b = x, fb = fx;
            if (side == 1) fa *= 0.5;
            side = 1;
        }
    }
    return res;
}

/* The step from a start already within the tolerance (fri_world_solve takes one anyway): its
 * direction is small and the potential's slope along it at rounding level, where the line search
 * only cut the step back and forth (17 evaluations a step in a resting column of 13). Taken whole
 * while that leaves the residual within the tolerance; else searched from the start. */
static double polish_step(fr_world *w, const fr_svec *dir, double tol, bool chord)
{
    memcpy(w->sys_nu_prev, w->sys_nu, sizeof(fr_svec) * (size_t)w->nsys);
    double res = try_step(w, dir, 1.0);
    if (res <= tol) return res;
    memcpy(w->sys_nu, w->sys_nu_prev, sizeof(fr_svec) * (size_t)w->nsys);
    respond_all(w, FR_RESPOND_TANGENT);
    return line_search(w, dir, chord);
}

static int island_root(int *up, int k)
{
    while (up[k] != k) k = up[k] = up[up[k]];
    return k;
}

/*
 * Momentum made exact where it is conserved. The iterate leaves a residual G (≤ the tolerance, in
 * velocity) on each body: its momentum change differs from the impulses it took by G. In an island
 * of the system that nothing outside it holds (no pair with a static, kinematic or link body, no
 * implicit spring) each body's velocity is corrected by M⁻¹·G, so that every pair's impulse acts
 * equal and opposite on its two bodies and the island's linear and angular momentum are exact
 * whatever the residual. A held island's momentum is not conserved, and there the correction did
 * harm: it moved the bodies against each other by h·M⁻¹·G, which in stiff contact is a force of
 * h²·K/m times the correction at the next step's start (10⁴ in a 200-block pyramid at 1 ms), where
 * the first chord step then fell short of the tolerance in half the steps (docs/world.md,
 * "Momentum"). It keeps the iterate, which is at least one Newton iteration from the step's
 * start (fri_world_solve).
 */
static void mark_islands(fr_world *w)
{
    const int n = w->nsys;
    int *up = w->sys_up;
    /* per root: bit 1 held, bit 2 a pair inside; then per body: bit 4 in a free island */
    unsigned char *state = w->sys_island;
    for (int k = 0; k < n; k++) {
        up[k] = k;
        const fri_body_state *st = &w->state[w->sys_slot[k]];
        state[k] = st->imp_k > 0 || st->imp_c > 0;
    }
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!in_system(w, p)) continue;
        int ia = w->sys_index[p->slot_a], ib = w->sys_index[p->slot_b];
        if (ia < 0 || ib < 0) {
            state[ia >= 0 ? ia : ib] |= 1;
            continue;
        }
        state[ia] |= 2;
        int ra = island_root(up, ia), rb = island_root(up, ib);
        up[ra] = rb;
    }
    for (int r = 0; r < w->njr; r++) {
        const int ia = w->jr_a[r], ib = w->jr_b[r];
        if (ia < 0 || ib < 0) {
            state[ia >= 0 ? ia : ib] |= 1;
            continue;
        }
        state[ia] |= 2;
        up[island_root(up, ia)] = island_root(up, ib);
    }
    for (int k = 0; k < n; k++) state[island_root(up, k)] |= state[k] & 3;
    for (int k = 0; k < n; k++)
        if ((state[island_root(up, k)] & 3) == 2) state[k] |= 4;
}

bool fri_world_sys_free(const fr_world *w, int k)
{
    return (w->sys_island[k] & 4) != 0;
}

static void correct_momentum(fr_world *w)
{
    for (int k = 0; k < w->nsys; k++) {
        if (!fri_world_sys_free(w, k)) continue;
        const fri_body_model *m = &w->model[w->sys_slot[k]];
        fr_vec3 dw = fr_m3_mulv(w->sys_Iinv[k], w->sys_G[k].ang);
        w->sys_nu[k].ang = fr_v3_sub(w->sys_nu[k].ang, dw);
        w->sys_nu[k].lin = fr_v3_mad(w->sys_nu[k].lin, -m->inv_mass, w->sys_G[k].lin);
    }
}

/* A chord step (the kept factor) must shrink the residual at least this much, or the step goes
 * on with fresh factors: Newton's own contraction is far better near the solution, and a chord
 * step that barely contracts costs an iteration for nothing. 1000-fold takes a resting stack's
 * step from its start to the tolerance in one chord step; at 20-fold a factor gone stale while a
 * 200-block pyramid settled was kept for good at 1.9 chord steps a step (docs/world.md, "Kept
 * factors": callgrind over the stacks, 0.05 / 0.01 / 0.003 / 0.001 / 0.0002). */
#define FAC_CONTRACTION 1e-3
/* Fewer bodies than this in the system: always fresh factors (measured: the default scene's few
 * free bodies stepped 16 % slower with chord steps; a 50-block column 17 % faster). */
#define FAC_MIN_BODIES 16

int fri_world_solve(fr_world *w)
{
    const double h = w->h;
    const fr_vec3 g = w->def.gravity;
    system_shape(w);
    w->stats.bodies = w->nsys;
    w->stats.couplings = w->nedges;
    w->stats.iterations = 0;
    w->stats.residual = 0.0;
    if (w->nsys == 0) return FR_OK;
    w->stats.steps++;
    for (int k = 0; k < w->nsys; k++) {
        int s = w->sys_slot[k];
        const fri_body_model *m = &w->model[s];
        const fri_body_state *st = &w->state[s];
        const fr_mat3 R = fr_q_to_m3(st->pose.q);
        w->sys_Iw[k] = fr_m3_rotate(R, m->inertia);
        w->sys_Iinv[k] = fr_m3_rotate(R, m->inv_inertia);
        /* radius of gyration: angular corrections are weighed at it */
        w->sys_rg[k] =
            sqrt((m->inertia.m[0][0] + m->inertia.m[1][1] + m->inertia.m[2][2]) / (2.0 * m->mass));
        w->sys_nu0[k] = fr_sv(st->angvel, st->vel);
        w->sys_nu[k] = w->sys_nu0[k];
        w->sys_ext[k] =
            fr_sv(fr_v3_scale(st->torque, h), fr_v3_scale(fr_v3_mad(st->force, m->mass, g), h));
    }
    bool direct = true;
    if (w->nedges > 0 && !fr_bchol_same(&w->chol, w->nsys, w->nedges, w->sys_eu, w->sys_ev)) {
        int err = fr_bchol_analyse(&w->chol, w->nsys, w->nedges, w->sys_eu, w->sys_ev);
        if (err == FR_ERR_FULL) {
            direct = false;
            w->stats.fallbacks++;
        } else if (err) {
            return err;
        }
        w->fac_ok = false;
    } else if (w->nedges == 0 && !fr_bchol_same(&w->chol, w->nsys, 0, NULL, NULL)) {
        int err = fr_bchol_analyse(&w->chol, w->nsys, 0, NULL, NULL);
        if (err) return err;
        w->fac_ok = false;
    }
    /* A factor kept from the last iterate or step is used while its chord steps contract the
     * residual well (a resting stack's Newton matrix hardly changes); the first that does not
     * contract by FAC_CONTRACTION sends the rest of the step back to fresh factors. */
    /* (not for a handful of bodies: their factor costs less than a chord step's responses) */
    /* joints' rows: their metric, and the start moved onto them (J changed with the poses) */
    if (w->njr > 0 && jr_metric(w)) {
        for (int k = 0; k < w->nsys; k++) w->sys_dx[k] = fr_sv_zero();
        jr_project(w, w->sys_dx, 1.0);
        for (int k = 0; k < w->nsys; k++) w->sys_nu[k] = fr_sv_add(w->sys_nu[k], w->sys_dx[k]);
    }
    /* (no kept factor with joints' rows: J·H⁻¹·Jᵀ is formed on each fresh one) */
    bool chord = direct && w->def.reuse_factor && w->nsys >= FAC_MIN_BODIES && w->njr_all == 0;
    w->resp_lazy = chord;
    /*
     * Newton on the velocities and, per pair, the normal force λ at which its pressure law is
     * linearised (a primal–dual Newton: the stiffening law is taken at the force it carries, not
     * at the depth of the velocity iterate, which a Newton step from a gap or a light load would
     * push deep into the exponential). Each iteration: the direction from the tangents at (ν, λ),
     * the full step, λ ← the elastic forces there, the residual with the new λ (so it also measures
     * how far each depth is from the law at its force).
     */
    const double tol = w->def.solver_tolerance;
    const int max_it = w->def.implicit_iterations;
    int jr_passes = 0;
    fr_svec *dir = w->sys_dx;
    bool sliding = false;
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        memcpy(p->lam, p->model.pn0, sizeof p->lam);
        p->nlag = p->model.n0;
        p->nlag_rounds = 0;
        fr_contact_model_linearise(&p->model, p->lam);
        if (p->model.sliding) sliding = true;
    }
    /* at the step's start too, unless a contact slides (its friction's tangent turns with the slip)
     * or that failed lately (then tried again after 1, 3, 7 … 64 steps) */
    bool cross = w->fac_wait == 0 && !sliding;
    if (w->fac_wait > 0) w->fac_wait--;
    /* the first direction sees the contacts touching at the start as loaded (a column released
     * touching then compresses as a whole instead of loading one contact per iteration) */
    respond_all(w, FR_RESPOND_TANGENT | FR_RESPOND_KINK_LOADED);
    double res = residual(w);
    int it = 0;
    for (;;) {
        if (!isfinite(res)) return FR_ERR_NUMERIC;
        /* At least one iteration: a start within the tolerance is the last step's solution, not
         * this one's. Taken as solved, an acceleration below tolerance/h was never taken (at a
         * loose tolerance a block on a slope at 0.06 m/s² stayed put); corrected by its
         * residual instead (session 36), a resting column was kicked whenever its start fell
         * within the tolerance, and kept rocking (tests/physics/test_reuse.c). */
        if (res <= tol && it > 0) {
            /* the convex problem at these λ is solved: the law at the forces it reached, and
             * the friction limits at μ·N of this solve, for the next round (outer iteration);
             * the last iterations are kept for the inner solve, so that a step that runs out
             * of them ends on a solved (consistent, dissipative) problem */
            if (it < max_it - max_it / 4 && update_lambda(w)) {
                respond_all(w, FR_RESPOND_TANGENT);
                res = residual(w);
                if (res > tol && it < max_it) continue;
            }
            /* converged: bonds that stuck at the start and slip under μ_s break away; bonds
             * that slid at the start and whose friction turned against its direction then (the
             * slip reversed: the bodies stopped relative to each other inside the step) stick
             * again, under μ_s, once in a step: at rest Coulomb's friction takes any force up
             * to μ_s·N, so a block pulled back by less than μ_s·N after a slip stays, instead
             * of sliding back under μ_k (only a larger pull sends it back, then under μ_k) */
            bool broke = false;
            if (it >= max_it - max_it / 4) {
                /* (the joints' limits and motors still revised: a motor row left past its bound
                 * booked that impulse, which the projection after the solve then took back
                 * against the motor's bound alone, throwing a 30 g shin of a ragdoll pressed by
                 * its torso: 3.1 → 31 J of kinetic energy in that step) */
                if (jr_revise_onto(w, tol, &jr_passes)) {
                    respond_all(w, FR_RESPOND_TANGENT);
                    res = residual(w);
                    if (it < max_it) continue;
                }
                if (update_lambda(w)) w->stats.unconverged++;
                break;
            }
            for (int c = 0; c < w->ncontacts; c++) {
                fri_pair *p = &w->pairs[w->contacts[c]];
                if (in_system(w, p) && fri_pair_judge_slip(w, p, &p->resp, p->nlag)) broke = true;
            }
            /* the joints' limits and motors taking part anew (a few times a step at most) */
            if (!broke && jr_revise_onto(w, tol, &jr_passes)) {
                broke = true;
            }
            if (!broke) break;
            respond_all(w, FR_RESPOND_TANGENT);
            res = residual(w);
            continue;
        }
        if (it >= max_it) {
            w->stats.unconverged++;
            break;
        }
        const bool lagged = chord && factor_fits(w) && (it > 0 || cross);
        int err = newton_direction(w, direct, lagged, dir);
        if (err) return err;
        it++;
        const double res_before = res;
        /* the responses, tangents and residual where it stopped */
        res = res_before <= tol ? polish_step(w, dir, tol, lagged && !sliding)
                                : line_search(w, dir, lagged && !sliding);
        if (lagged) {
            w->stats.chord_steps++;
            /* (from a start within the tolerance, a residual at rounding level cannot shrink
             * 1000-fold: there the step must only reach FAC_CONTRACTION of the tolerance) */
            const bool good = res <= FAC_CONTRACTION * fmax(res_before, tol);
            if (!good) chord = w->resp_lazy = false;
            if (it == 1) {
                w->fac_backoff = good ? 0 : w->fac_backoff < 64 ? 2 * w->fac_backoff + 1 : 64;
                w->fac_wait = w->fac_backoff;
            }
        }
    }
    w->stats.iterations = it;
    w->stats.newton_iterations += it;
    w->stats.residual = res;
    if (it > w->stats.max_iterations) w->stats.max_iterations = it;
    /* An unsolved step (out of iterations far from the solution) keeps its iterate: the line
     * search only ever lowered the step's potential along the way, while a correction by the
     * residual could be large. */
    if (w->njr_all > 0) jr_book(w);
    mark_islands(w);
    if (res <= 1e3 * tol) correct_momentum(w);
    for (int k = 0; k < w->nsys; k++) {
        fri_body_state *st = &w->state[w->sys_slot[k]];
        st->angvel = w->sys_nu[k].ang;
        st->vel = w->sys_nu[k].lin;
        if (!fr_v3_isfinite(st->vel) || !fr_v3_isfinite(st->angvel)) return FR_ERR_NUMERIC;
    }
    return FR_OK;
}
