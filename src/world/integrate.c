/* Rigid-body integration: symplectic Euler for translation; for rotation an angular impulse
 * followed by the implicit midpoint rule on the torque-free Euler equations (see world.h). */
#include "world_internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/*
 * Torque-free step in the body frame: the implicit midpoint rule on dL/dt = L × ω, ω = I⁻¹L.
 * With h = dt/2 and Lm = (L0 + L1)/2 it reads (1 + h[ωm]×) Lm = L0, ωm = I⁻¹Lm; we solve that for
 * Lm by Newton with backtracking (so large h|ω| cannot overshoot), then L1 = 2Lm − L0. The map
 * L0 → L1 is the Cayley rotation (1 + hΩ)⁻¹(1 − hΩ), Ω = [ωm]×: a rotation by −2·atan(h|ωm|)
 * about ωm, so the body turns by +2·atan(h|ωm|) about ωm and R·L stays fixed in the world.
 * Returns false when Newton does not converge (the caller halves the step).
 */
static fr_vec3 mid_residual(const fr_mat3 *Iinv, fr_vec3 Lm, fr_vec3 L0, double h)
{
    return fr_v3_sub(fr_v3_add(Lm, fr_v3_scale(fr_v3_cross(fr_m3_mulv(*Iinv, Lm), Lm), h)), L0);
}

static bool midpoint_solve(const fr_mat3 *Iinv, fr_vec3 L0, double dt, fr_vec3 *Lm_out)
{
    const double h = 0.5 * dt, tol = 1e-15 * fr_v3_norm(L0);
    fr_vec3 Lm = L0;
    fr_vec3 F = mid_residual(Iinv, Lm, L0, h);
    double fn = fr_v3_norm(F);
    for (int it = 0; it < 30 && fn > tol; it++) {
        fr_vec3 wm = fr_m3_mulv(*Iinv, Lm);
        /* dF/dLm = 1 + h([ωm]× − [Lm]× I⁻¹) */
        fr_mat3 J =
            fr_m3_add(fr_m3_identity(),
                      fr_m3_scale(fr_m3_sub(fr_m3_skew(wm), fr_m3_mul(fr_m3_skew(Lm), *Iinv)), h));
        fr_mat3 Ji;
        if (!fr_m3_inverse(J, &Ji)) return false;
        fr_vec3 step = fr_m3_mulv(Ji, F);
        double t = 1.0;
        for (int ls = 0; ls < 30; ls++, t *= 0.5) {
            fr_vec3 trial = fr_v3_mad(Lm, -t, step);
            fr_vec3 Ft = mid_residual(Iinv, trial, L0, h);
            double ftn = fr_v3_norm(Ft);
            if (ftn < fn || ftn <= tol) {
                Lm = trial;
                F = Ft;
                fn = ftn;
                break;
            }
        }
    }
    if (!(fn <= 1e-12 * fr_v3_norm(L0)) && fn > 0) return false;
    *Lm_out = Lm;
    return true;
}

/* Rotate the body (orientation q, body momentum *Lb) torque-free over dt; halves the step when
 * the implicit solve fails, down to dt/16. */
static void rotate_free(const fr_mat3 *Iinv, fr_quat *q, fr_vec3 *Lb, double dt, int depth)
{
    fr_vec3 Lm;
    if (!midpoint_solve(Iinv, *Lb, dt, &Lm)) {
        if (depth < 4) {
            rotate_free(Iinv, q, Lb, 0.5 * dt, depth + 1);
            rotate_free(Iinv, q, Lb, 0.5 * dt, depth + 1);
            return;
        }
        Lm = *Lb; /* last resort: explicit rotation at the current rate */
    }
    fr_vec3 wm = fr_m3_mulv(*Iinv, Lm);
    double n = fr_v3_norm(wm);
    if (n == 0.0) return;
    double angle = 2.0 * atan(0.5 * dt * n);
    fr_vec3 rot = fr_v3_scale(wm, angle / n);
    /* L1 = R(−rot)·L0 exactly, so that world momentum is kept to round-off */
    const fr_quat e = fr_q_exp(rot);
    *Lb = fr_q_unrotate(e, *Lb);
    *q = fr_q_normalize(fr_q_mul(*q, e));
}

/*
 * The linearly implicit step for bodies in contact or on implicit springs (docs/contact.md §5):
 * (M + Σ h·D̃ + h²·K̃)·ν' = M·ν + h·F + Σ h·D̃·ν, ν = (ω; v), world axes. Pairs of two dynamic
 * bodies couple their equations; a fixed number of block Gauss–Seidel sweeps in body order solves
 * them (deterministic; Gauss–Seidel converges for this symmetric positive-definite system). The
 * gyroscopic term is left out for these bodies while they are in contact.
 */
/*
 * c −= S_ij·ν_j for adjacency entry e (S_ab, or S_ba = S_abᵀ when this body is B). T = S_ijᵀ is
 * stored (S_abᵀ in the pair's S_ba, S_baᵀ = S_ab), so that y = Σ_k T[k]·v_k runs over contiguous
 * rows, two components at a time; each component is summed in the order k = 0..5, as the dot
 * products of S's rows would be.
 */
static inline void coupling_sub(const fr_world *w, int e, double c[6])
{
    const double(*T)[6] = w->sys_T[e]->m;
    const fri_body_state *o = &w->state[w->sys_other[e]];
    const double v[6] = {o->angvel.x, o->angvel.y, o->angvel.z, o->vel.x, o->vel.y, o->vel.z};
#ifdef __SSE2__
    __m128d y0 = _mm_mul_pd(_mm_loadu_pd(&T[0][0]), _mm_set1_pd(v[0]));
    __m128d y1 = _mm_mul_pd(_mm_loadu_pd(&T[0][2]), _mm_set1_pd(v[0]));
    __m128d y2 = _mm_mul_pd(_mm_loadu_pd(&T[0][4]), _mm_set1_pd(v[0]));
    for (int k = 1; k < 6; k++) {
        const __m128d vk = _mm_set1_pd(v[k]);
        y0 = _mm_add_pd(y0, _mm_mul_pd(_mm_loadu_pd(&T[k][0]), vk));
        y1 = _mm_add_pd(y1, _mm_mul_pd(_mm_loadu_pd(&T[k][2]), vk));
        y2 = _mm_add_pd(y2, _mm_mul_pd(_mm_loadu_pd(&T[k][4]), vk));
    }
    _mm_storeu_pd(c, _mm_sub_pd(_mm_loadu_pd(c), y0));
    _mm_storeu_pd(c + 2, _mm_sub_pd(_mm_loadu_pd(c + 2), y1));
    _mm_storeu_pd(c + 4, _mm_sub_pd(_mm_loadu_pd(c + 4), y2));
#else
    double y[6];
    for (int r = 0; r < 6; r++) y[r] = T[0][r] * v[0];
    for (int k = 1; k < 6; k++)
        for (int r = 0; r < 6; r++) y[r] += T[k][r] * v[k];
    for (int r = 0; r < 6; r++) c[r] -= y[r];
#endif
}

/* Cholesky factor L of a 6×6 (lower triangle, fr_chol_factor) with the reciprocals of its
 * diagonal kept in the unused upper triangle: the Gauss–Seidel sweeps multiply instead of dividing
 * (twelve dependent divisions per solve were their critical path). A system without coupled pairs
 * is solved once, with the divisions, exactly as fr_chol_solve does. */
static const int chol6_rdiag[6] = {1, 2, 3, 4, 5, 8};

/* fr_chol_factor for n = 6 (the same operations in the same order), unrolled by the compiler. */
static inline bool chol6_factor(double *a)
{
    for (int j = 0; j < 6; j++) {
        double d = a[j * 6 + j];
        for (int k = 0; k < j; k++) d -= a[j * 6 + k] * a[j * 6 + k];
        if (!(d > 0.0)) return false;
        d = sqrt(d);
        a[j * 6 + j] = d;
        for (int i = j + 1; i < 6; i++) {
            double s = a[i * 6 + j];
            for (int k = 0; k < j; k++) s -= a[i * 6 + k] * a[j * 6 + k];
            a[i * 6 + j] = s / d;
        }
        for (int i = 0; i < j; i++) a[i * 6 + j] = 0.0; /* keep only the lower factor */
    }
    return true;
}

static inline void chol6_solve(const double *restrict L, double *restrict b, bool recip)
{
    for (int i = 0; i < 6; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[i * 6 + k] * b[k];
        b[i] = recip ? s * L[chol6_rdiag[i]] : s / L[i * 6 + i];
    }
    for (int i = 5; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < 6; k++) s -= L[k * 6 + i] * b[k];
        b[i] = recip ? s * L[chol6_rdiag[i]] : s / L[i * 6 + i];
    }
}

/* |a − b|² */
static inline double dist2(fr_vec3 a, fr_vec3 b)
{
    return fr_v3_norm2(fr_v3_sub(a, b));
}

static void implicit_bodies(fr_world *w)
{
    const double h = w->def.dt;
    const fr_vec3 g = w->def.gravity;
    const int n = w->nslots;
    /* assemble and factor each body's diagonal block */
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_model *m = &w->model[i];
        fri_body_state *s = &w->state[i];
        if (m->type != FR_BODY_DYNAMIC) {
            w->sys_on[i] = false;
            continue;
        }
        bool springs = s->imp_k > 0 || s->imp_c > 0;
        if (!w->sys_on[i] && !springs) continue;
        if (!w->sys_on[i]) {
            w->sys_on[i] = true;
            w->sys_A[i] = fr_m6_zero();
            w->sys_b[i] = fr_sv_zero();
        }
        fr_mat6 *A = &w->sys_A[i];
        fr_mat3 Iw = fr_m3_rotate(fr_q_to_m3(s->pose.q), m->inertia);
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) A->m[r][c] += Iw.m[r][c];
            A->m[r + 3][r + 3] += m->mass + h * s->imp_c + h * h * s->imp_k;
        }
        fr_vec3 L = fr_m3_mulv(Iw, s->angvel), P = fr_v3_scale(s->vel, m->mass);
        fr_vec3 F = fr_v3_add(fr_v3_add(s->force, fr_v3_scale(g, m->mass)), s->imp_f);
        w->sys_b[i] = fr_sv_add(w->sys_b[i], fr_sv(fr_v3_mad(L, h, s->torque), fr_v3_mad(P, h, F)));
        if (!chol6_factor(&A->m[0][0])) {
            w->sys_on[i] = false; /* never seen: explicit step */
            continue;
        }
        for (int r = 0; r < 6; r++) (&A->m[0][0])[chol6_rdiag[r]] = 1.0 / A->m[r][r];
    }
    /* the coupled pairs of each body, as a CSR list of pair records */
    int *start = w->sys_adj_start, *cur = w->sys_cursor;
    for (int i = 0; i <= n; i++) start[i] = 0;
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!p->coupled) continue;
        int a = p->slot_a, b = p->slot_b; /* set by the contact stage of this step */
        if (!w->sys_on[a] || !w->sys_on[b]) continue;
        start[a + 1]++;
        start[b + 1]++;
    }
    for (int i = 0; i < n; i++) {
        start[i + 1] += start[i];
        cur[i] = start[i];
    }
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!p->coupled) continue;
        int a = p->slot_a, b = p->slot_b; /* set by the contact stage of this step */
        if (!w->sys_on[a] || !w->sys_on[b]) continue;
        /* each entry: the block's stored transpose and the other body, no lookups in the sweep */
        w->sys_T[cur[a]] = &p->S_ba;
        w->sys_other[cur[a]++] = b;
        w->sys_T[cur[b]] = &p->S_ab;
        w->sys_other[cur[b]++] = a;
    }
    /* block Gauss–Seidel on the new velocities, starting from the current ones */
    const bool coupled = start[n] > 0;
    const int sweeps = coupled ? w->def.implicit_iterations : 1;
    for (int it = 0; it < sweeps; it++) {
        /* largest squared velocity change of this sweep (sqrt is monotonic: the largest change
         * is the root of the largest square) */
        double change2 = 0.0;
        for (int k = 0; k < w->norder; k++) {
            int i = w->order[k];
            if (!w->sys_on[i]) continue;
            const fr_svec bi = w->sys_b[i];
            double x[6] = {bi.ang.x, bi.ang.y, bi.ang.z, bi.lin.x, bi.lin.y, bi.lin.z};
            for (int e = start[i]; e < start[i + 1]; e++) coupling_sub(w, e, x);
            chol6_solve(&w->sys_A[i].m[0][0], x, coupled);
            fr_vec3 wn = fr_v3(x[0], x[1], x[2]), vn = fr_v3(x[3], x[4], x[5]);
            fri_body_state *si = &w->state[i];
            if (coupled) {
                double dw = dist2(wn, si->angvel), dv = dist2(vn, si->vel);
                if (dw > change2) change2 = dw;
                if (dv > change2) change2 = dv;
            }
            si->angvel = wn;
            si->vel = vn;
        }
        /* converged: the remaining error is far below what the step resolves (1e-9 m/s) */
        if (sqrt(change2) < 1e-9) break;
    }
    /* Momentum: Gauss–Seidel stops before full convergence, so each pair's implicit impulse would
     * be evaluated with its two bodies' velocities from different sweeps. Evaluate every term once
     * more with the final velocities (residual r = b − A·ν' − Σ S_ij·ν'_j) and move each body by
     * M⁻¹·r: then M·ν_new = M·ν + h·F + Σ pair impulses that are equal and opposite. */
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (!w->sys_on[i]) continue;
        fr_svec vi = fr_sv(w->state[i].angvel, w->state[i].vel);
        /* A·ν' from the Cholesky factor: L·(Lᵀ·ν') */
        const double *Lf = &w->sys_A[i].m[0][0];
        double x[6], y[6];
        for (int r = 0; r < 6; r++) x[r] = fr_sv_get(&vi, r);
        for (int r = 0; r < 6; r++) {
            double acc = 0;
            for (int q = r; q < 6; q++) acc += Lf[q * 6 + r] * x[q];
            y[r] = acc;
        }
        fr_svec Av = fr_sv_zero();
        for (int r = 0; r < 6; r++) {
            double acc = 0;
            for (int q = 0; q <= r; q++) acc += Lf[r * 6 + q] * y[q];
            fr_sv_set(&Av, r, acc);
        }
        fr_svec res = fr_sv_sub(w->sys_b[i], Av);
        double c[6] = {res.ang.x, res.ang.y, res.ang.z, res.lin.x, res.lin.y, res.lin.z};
        for (int e = start[i]; e < start[i + 1]; e++) coupling_sub(w, e, c);
        w->sys_b[i] = fr_sv(fr_v3(c[0], c[1], c[2]), fr_v3(c[3], c[4], c[5]));
    }
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (!w->sys_on[i]) continue;
        const fri_body_model *m = &w->model[i];
        fri_body_state *s = &w->state[i];
        fr_mat3 R = fr_q_to_m3(s->pose.q);
        fr_mat3 Iinv_w = fr_m3_rotate(R, m->inv_inertia);
        s->angvel = fr_v3_add(s->angvel, fr_m3_mulv(Iinv_w, w->sys_b[i].ang));
        s->vel = fr_v3_mad(s->vel, m->inv_mass, w->sys_b[i].lin);
    }
    /* positions, damping, and the accumulators cleared */
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (!w->sys_on[i]) continue;
        const fri_body_model *m = &w->model[i];
        fri_body_state *s = &w->state[i];
        if (m->lin_damping > 0) s->vel = fr_v3_scale(s->vel, 1.0 / (1.0 + h * m->lin_damping));
        s->pose.p = fr_v3_mad(s->pose.p, h, s->vel);
        /* the solve fixed the angular impulse, I·(ω' − ω); the rotation itself is the same
         * momentum-conserving implicit-midpoint rotation free bodies get (gyroscopic term) */
        fr_vec3 Lb = fr_m3_mulv(m->inertia, fr_q_unrotate(s->pose.q, s->angvel));
        if (m->ang_damping > 0) Lb = fr_v3_scale(Lb, 1.0 / (1.0 + h * m->ang_damping));
        rotate_free(&m->inv_inertia, &s->pose.q, &Lb, h, 0);
        s->angvel = fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, Lb));
        s->force = s->torque = s->imp_f = fr_v3_zero();
        s->imp_k = s->imp_c = 0.0;
    }
}

void fri_world_integrate(fr_world *w)
{
    const double dt = w->def.dt;
    const fr_vec3 g = w->def.gravity;
    implicit_bodies(w);
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_model *m = &w->model[i];
        fri_body_state *s = &w->state[i];
        if (m->type == FR_BODY_STATIC || w->sys_on[i]) continue;
        if (m->type == FR_BODY_LINK) { /* moved by its tree (robots.c) */
            s->force = s->torque = s->imp_f = fr_v3_zero();
            s->imp_k = s->imp_c = 0.0;
            continue;
        }
        if (m->type == FR_BODY_DYNAMIC) {
            fr_vec3 a = fr_v3_mad(g, m->inv_mass, s->force);
            if (s->imp_k > 0 || s->imp_c > 0) {
                /* implicit springs: (m + dt·c + dt²·k)·v⁺ = m·v + dt·(m·g + F + imp_f) */
                double denom = m->mass + dt * s->imp_c + dt * dt * s->imp_k;
                fr_vec3 num =
                    fr_v3_add(fr_v3_scale(s->vel, m->mass),
                              fr_v3_scale(fr_v3_add(fr_v3_scale(a, m->mass), s->imp_f), dt));
                s->vel = fr_v3_scale(num, 1.0 / denom);
            } else {
                s->vel = fr_v3_mad(s->vel, dt, a);
            }
            if (m->lin_damping > 0) s->vel = fr_v3_scale(s->vel, 1.0 / (1.0 + dt * m->lin_damping));
            /* angular impulse in the world, then the torque-free rotation in the body frame */
            fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
            fr_vec3 Lb = fr_m3_mulv(m->inertia, wb);
            Lb = fr_v3_add(Lb, fr_q_unrotate(s->pose.q, fr_v3_scale(s->torque, dt)));
            if (m->ang_damping > 0) Lb = fr_v3_scale(Lb, 1.0 / (1.0 + dt * m->ang_damping));
            rotate_free(&m->inv_inertia, &s->pose.q, &Lb, dt, 0);
            s->angvel = fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, Lb));
        } else {
            /* kinematic: follow the set velocities exactly */
            s->pose.q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(s->angvel, dt)), s->pose.q));
        }
        s->pose.p = fr_v3_mad(s->pose.p, dt, s->vel);
        s->force = fr_v3_zero();
        s->torque = fr_v3_zero();
        s->imp_k = s->imp_c = 0.0;
        s->imp_f = fr_v3_zero();
    }
}
