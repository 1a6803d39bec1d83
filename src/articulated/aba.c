/*
 * src/articulated: the articulated-body algorithm in world (ground) coordinates, the joint forces
 * of a step (implicit PD, damping, limits, motor saturation) and the two integrators.
 * Notation follows Featherstone, "Rigid Body Dynamics Algorithms" (2008), ch. 7: S_i motion
 * subspace, c_i = v_i × (S_i qd_i), IA_i / pA_i articulated inertia and bias force,
 * U_i = IA_i S_i, D_i = S_iᵀ U_i, u_i = τ_i − S_iᵀ pA_i. All spatial quantities here are world
 * coordinates about the world origin, so a child's IA and pA add to its parent's without a
 * frame change. See docs/articulated.md for the implicit joint-force terms.
 */
#include <string.h>

#include "internal.h"

/* Position error of a joint for its PD: q − q_ref, or for a spherical joint the rotation
 * vector of q_ref⁻¹ q (link coordinates, like its ω). */
static void joint_error(const fri_link *l, const fr_tree_data *d, double *e)
{
    const double *q = d->q + l->qi, *r = d->q_ref + l->qi;
    if (l->nv == 1) {
        e[0] = q[0] - r[0];
        return;
    }
    fr_quat a = fr_q_normalize(fr_q(q[0], q[1], q[2], q[3]));
    fr_quat b = fr_q_normalize(fr_q(r[0], r[1], r[2], r[3]));
    fr_vec3 v = fr_q_log(fr_q_mul(fr_q_conj(b), a));
    e[0] = v.x;
    e[1] = v.y;
    e[2] = v.z;
}

/*
 * The joint force of link i as τ = τ̃ − H·qdd (per DOF), evaluated at the next state
 * (qd⁺ = qd + qdd dt, q⁺ = q + qd⁺ dt):
 *   motor   τ_ff − Kp (e + qd dt) − Kd (qd − qd_ref)          H += (Kp dt + Kd) dt
 *   damper  −c qd                                              H += c dt
 *   limit   −Kl (q − q_lim + qd dt) − Dl qd  (soft, active)    H += (Kl dt + Dl) dt
 *   armature                                                   H += armature
 * (substituting qd⁺ into −K(q⁺ − q*) − D(qd⁺ − qd*)). A saturated motor holds its clamped force
 * (H share 0). A hard limit prescribes qdd instead (qdd_p). `joint` false leaves the armature
 * and, for plain dynamics (dt == 0), τ_ff; the Verlet end kick (dt > 0) has no joint forces.
 */
static void compose(const fr_tree *t, fr_tree_data *d, int i, double dt, bool joint)
{
    const fri_link *l = &t->links[i];
    fri_tree_ws *w = d->ws;
    int vi = l->vi;
    double arm = fri_controllable(l) ? l->def.armature : 0.0;
    if (!joint || !fri_controllable(l)) {
        for (int k = 0; k < l->nv; k++) {
            w->taum[vi + k] = w->taut[vi + k] = joint || !dt ? d->tau[vi + k] : 0.0;
            w->Hm[vi + k] = 0.0;
            w->H[vi + k] = arm;
        }
        return;
    }
    double e[3];
    joint_error(l, d, e);
    double c = l->def.damping;
    for (int k = 0; k < l->nv; k++) {
        int j = vi + k;
        double qd = d->qd[j], kp = d->kp[j], kd = d->kd[j];
        if (!w->sat[i] && w->vlim[i] != 0) {
            /* at the motor's speed limit: an implicit velocity servo toward ±max_velocity */
            double kv = w->vlim_k[i];
            w->taum[j] = -kv * (qd - w->vlim[i] * l->def.max_velocity);
            w->Hm[j] = kv * dt;
        } else if (!w->sat[i]) {
            if (d->pd_mode == FR_PD_IMPLICIT) {
                w->taum[j] = d->tau[j] - kp * (e[k] + qd * dt) - kd * (qd - d->qd_ref[j]);
                w->Hm[j] = (kp * dt + kd) * dt;
            } else {
                w->taum[j] = d->tau[j] - kp * e[k] - kd * (qd - d->qd_ref[j]);
                w->Hm[j] = 0.0;
            }
        } else {
            w->Hm[j] = 0.0; /* taum holds the clamped force */
        }
        w->taut[j] = w->taum[j] - c * qd;
        w->H[j] = w->Hm[j] + c * dt + arm;
    }
    if (w->lim[i] != FRI_LIM_NONE) {
        double q = d->q[l->qi], qd = d->qd[vi];
        double lim = w->lim[i] == FRI_LIM_LOWER ? l->def.q_min : l->def.q_max;
        if (w->lim_hard[i]) {
            w->qdd_p[vi] = ((lim - q) / dt - qd) / dt; /* so that q⁺ = lim exactly */
        } else {
            double kl = l->def.limit_k, dl = l->def.limit_d;
            w->taut[vi] += -kl * (q - lim + qd * dt) - dl * qd;
            w->H[vi] += (kl * dt + dl) * dt;
        }
    }
}

/* ---------------------------------------------------------------- ABA passes */

static bool nonzero(fr_svec f)
{
    return f.ang.x != 0.0 || f.ang.y != 0.0 || f.ang.z != 0.0 || f.lin.x != 0.0 || f.lin.y != 0.0 ||
           f.lin.z != 0.0;
}

/* Pass 1 (world coordinates, on the current configuration): twists from qd, velocity products
 * c = v × vJ and rigid bias forces p0 = v ×* I v − f_ext, all scaled by s (the share of the
 * smooth forces a Verlet half kick takes; 1 otherwise). */
static void aba_pass1(const fr_tree *t, fr_tree_data *d, const double *qd, double s)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_svec vJ = fr_sv_zero();
        for (int k = 0; k < l->nv; k++) vJ = fr_sv_mad(vJ, qd[l->vi + k], w->Sw[l->vi + k]);
        fr_svec v = l->parent >= 0 ? fr_sv_add(w->vw[l->parent], vJ) : vJ;
        w->vw[i] = v;
        /* rigid I v = (A ω + h × v; m v − h × ω) with h = m c: B = [h]×, C = m 1 */
        const fri_sym6 *I = &w->Iw[i];
        const fr_vec3 h = fr_v3(I->B[7], I->B[2], I->B[3]);
        fr_svec Iv = fr_sv(fr_v3_add(fri_psym_mulv(I->A, v.ang), fr_v3_cross(h, v.lin)),
                           fr_v3_sub(fr_v3_scale(v.lin, I->C[0]), fr_v3_cross(h, v.ang)));
        w->Iv[i] = Iv;
        fr_svec p = fr_sv_crossf(v, Iv);
        fr_svec c = fr_sv_crossm(v, vJ);
        if (nonzero(d->f_ext[i])) p = fr_sv_sub(p, d->f_ext[i]);
        if (d->has_I_ext[i]) {
            /* gravity enters as the base acceleration −g, so ABA's accelerations are the true
             * ones minus g: the external inertia's −I_ext·a_true needs +I_ext·(0; g) more */
            p = fr_sv_add(p, fr_m6_mulv(&d->I_ext[i], fr_sv(fr_v3_zero(), d->gravity)));
        }
        if (s != 1.0) {
            p = fr_sv_scale(p, s);
            c = fr_sv_scale(c, s);
        }
        w->p0[i] = p;
        w->c[i] = c;
    }
    w->a0 = fr_sv(fr_v3_zero(), fr_v3_scale(d->gravity, -s));
}

/* W = U D⁻¹ of a joint of nv > 1 DOF (L: D's Cholesky factor): D x = (U_0..U_{nv-1})_e for each
 * spatial component e */
static void solve_w(fri_tree_ws *w, const double *L, int vi, int nv)
{
    for (int e = 0; e < 6; e++) {
        double x[6];
        for (int k = 0; k < nv; k++) x[k] = fr_sv_get(&w->U[vi + k], e);
        fr_chol_solve(L, nv, x);
        for (int k = 0; k < nv; k++) fr_sv_set(&w->W[vi + k], e, x[k]);
    }
}

/* LU factor with row pivots of the n×n a, in place; false if singular. */
static bool lu_factor(double *a, int n, int *piv)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
        piv[c] = p;
        if (!(fabs(a[p * n + c]) > 0.0)) return false;
        if (p != c)
            for (int k = 0; k < n; k++) {
                const double t = a[c * n + k];
                a[c * n + k] = a[p * n + k];
                a[p * n + k] = t;
            }
        const double inv = 1.0 / a[c * n + c];
        for (int r = c + 1; r < n; r++) {
            const double f = a[r * n + c] *= inv;
            for (int k = c + 1; k < n; k++) a[r * n + k] -= f * a[c * n + k];
        }
    }
    return true;
}

static void lu_solve(const double *a, int n, const int *piv, double *x)
{
    for (int c = 0; c < n; c++) { /* (the factor's rows were swapped whole: P first) */
        const double t = x[piv[c]];
        x[piv[c]] = x[c];
        x[c] = t;
    }
    for (int r = 1; r < n; r++)
        for (int c = 0; c < r; c++) x[r] -= a[r * n + c] * x[c];
    for (int r = n - 1; r >= 0; r--) {
        double s = x[r];
        for (int k = r + 1; k < n; k++) s -= a[r * n + k] * x[k];
        x[r] = s / a[r * n + r];
    }
}

void fri_joint_solve(const fri_tree_ws *w, const fri_link *l, int i, double *x)
{
    if (w->lu[i])
        lu_solve(w->Dinv + l->dinv_off, l->nv, w->piv + l->vi, x);
    else
        fr_chol_solve(w->Dinv + l->dinv_off, l->nv, x);
}

/*
 * The gyroscopic term of a free root (Euler steps). The root's velocity products are quadratic in
 * its twist; taken at the step's start (explicit) they pump energy at a rate set by (|ω|·dt)²: a
 * 6 kg box spun to 100 rad/s by a spring went from 372 J to 2e6 J in 0.74 s at 1 ms, where the
 * same free body (integrate.c: the implicit midpoint rule on its rotation) held. Here they are
 * linearly implicit, on the root's subtree taken as one locked body about its centre of mass c
 * (composite inertia Ic about c, mass m, angular momentum L about c, the root's ω), in the two
 * parts a free body's step has:
 *   rotation     ω × L: Kahan's linearly implicit midpoint rule, the derivative
 *                J = [ω]×·Ic − [L]× at half weight: (Ic + dt/2·J)·ω̇ = τ − ω × L. On a rigid body
 *                this is the Kahan–Hirota–Kimura step of the Euler top: it keeps modified
 *                forms of its energy and |L| exactly (no drift; L's direction in the world
 *                moves first order, as the root turns by its end ω);
 *   translation  m·ω × v_c (the turning of the root's own axes): its derivative in v_c alone,
 *                m·[ω]×, at half weight, so v_c turns by a Cayley rotation and keeps its
 *                length (its derivative in ω, −m·[v_c]×, is left out: it couples the
 *                translation's speed to a landing's turn, and a landing's kick then did work:
 *                a falling pelvis's landing ticks rose 1.7–1.8× higher with it).
 * The root's joint block becomes D + dt/2·Sᵀ·Xᵀ·diag(J, m[ω]×)·X·S (X the shift from the
 * world origin to c), no longer symmetric: an LU factor replaces its Cholesky factor.
 */
static void gyro_block(fri_tree_ws *w, const fri_link *l, int i, double *L)
{
    const fri_sym6 *I = &w->Icw[i];
    const fr_svec h = w->hc[i];
    const double m = I->C[0], g = w->gyro_h;
    if (!(m > 0.0)) return;
    const fr_vec3 om = w->vw[i].ang, mc = fr_v3(I->B[7], I->B[2], I->B[3]);
    const fr_vec3 c = fr_v3_scale(mc, 1.0 / m);
    /* about c: Ic = A − m(|c|²·1 − c·cᵀ), L = h_ang − c × p */
    const double P[6] = {I->A[0] - (mc.y * c.y + mc.z * c.z),
                         I->A[1] + mc.x * c.y,
                         I->A[2] + mc.x * c.z,
                         I->A[3] - (mc.x * c.x + mc.z * c.z),
                         I->A[4] + mc.y * c.z,
                         I->A[5] - (mc.x * c.x + mc.y * c.y)};
    const fr_vec3 Lc = fr_v3_sub(h.ang, fr_v3_cross(c, h.lin));
    fr_svec G[6];
    for (int k = 0; k < 6; k++) {
        const fr_svec S = w->Sw[l->vi + k];
        const fr_vec3 dvc = fr_v3_sub(S.lin, fr_v3_cross(c, S.ang)); /* (the twist at c) */
        const fr_vec3 n =
            fr_v3_sub(fr_v3_cross(om, fri_psym_mulv(P, S.ang)), fr_v3_cross(Lc, S.ang));
        const fr_vec3 f = fr_v3_scale(fr_v3_cross(om, dvc), m);
        G[k] = fr_sv(fr_v3_add(n, fr_v3_cross(c, f)), f); /* (the force back about the origin) */
    }
    for (int j = 0; j < 6; j++)
        for (int k = 0; k < 6; k++) L[j * 6 + k] += g * fr_sv_dot(w->Sw[l->vi + j], G[k]);
}

/* Pass 2a: articulated inertias, leaves to root (world coordinates); depends on q and H only.
 * IA_i stays unreduced; the parent receives IA_i − U D⁻¹ Uᵀ. Leaves U, W = U D⁻¹ and 1/D (one
 * DOF) or the Cholesky factor of D (more). */
static bool aba_inertias(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    bool ok = true;
    w->revisable = false;
    const bool gyro = w->gyro_h > 0.0;
    memcpy(w->IA, w->Iw, sizeof(fri_sym6) * (size_t)t->n);
    if (gyro) {
        memcpy(w->Icw, w->Iw, sizeof(fri_sym6) * (size_t)t->n);
        memcpy(w->hc, w->Iv, sizeof(fr_svec) * (size_t)t->n);
    }
    for (int i = 0; i < t->n; i++) {
        if (!d->has_I_ext[i]) continue;
        /* implicit external inertia (symmetric: the upper triangles of the diagonal blocks) */
        const fr_mat6 *E = &d->I_ext[i];
        fri_sym6 *IA = &w->IA[i];
        IA->A[0] += E->m[0][0], IA->A[1] += E->m[0][1], IA->A[2] += E->m[0][2];
        IA->A[3] += E->m[1][1], IA->A[4] += E->m[1][2], IA->A[5] += E->m[2][2];
        IA->C[0] += E->m[3][3], IA->C[1] += E->m[3][4], IA->C[2] += E->m[3][5];
        IA->C[3] += E->m[4][4], IA->C[4] += E->m[4][5], IA->C[5] += E->m[5][5];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) IA->B[3 * r + c] += E->m[r][c + 3];
    }
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        const fri_sym6 *IA = &w->IA[i];
        int vi = l->vi, nv = l->nv, par = l->parent, nred = 0;
        if (nv == 1) {
            fr_svec U = fri_sym6_mulv(IA, w->Sw[vi]);
            w->U[vi] = U;
            if (!w->lim_hard[i]) { /* a prescribed joint stays rigid: IA passes whole */
                double D = fr_sv_dot(w->Sw[vi], U) + w->H[vi];
                double Dinv = 1.0 / D;
                ok = ok && D > 0.0;
                w->Dinv[l->dinv_off] = Dinv;
                w->W[vi] = fr_sv_scale(U, Dinv);
                nred = 1;
            }
        } else if (nv > 1) {
            double *L = w->Dinv + l->dinv_off;
            for (int k = 0; k < nv; k++) w->U[vi + k] = fri_sym6_mulv(IA, w->Sw[vi + k]);
            for (int j = 0; j < nv; j++)
                for (int k = 0; k < nv; k++)
                    L[j * nv + k] =
                        fr_sv_dot(w->Sw[vi + j], w->U[vi + k]) + (j == k ? w->H[vi + k] : 0.0);
            w->lu[i] = gyro && par < 0 && l->type == FR_JOINT_FREE;
            if (w->lu[i]) {
                gyro_block(w, l, i, L);
                if (!lu_factor(L, nv, w->piv + vi)) ok = false;
            } else if (!fr_chol_factor(L, nv)) {
                ok = false;
            }
            if (par >= 0 && ok) {
                solve_w(w, L, vi, nv);
                nred = nv;
            }
        }
        if (par >= 0) {
            fri_sym6_add_reduced(&w->IA[par], IA, w->U + vi, w->W + vi, nred);
            if (gyro) { /* the locked subtree's inertia and momentum */
                fri_sym6 *P = &w->Icw[par];
                const fri_sym6 *C = &w->Icw[i];
                for (int e = 0; e < 6; e++) P->A[e] += C->A[e], P->C[e] += C->C[e];
                for (int e = 0; e < 9; e++) P->B[e] += C->B[e];
                w->hc[par] = fr_sv_add(w->hc[par], w->hc[i]);
            }
        }
    }
    return ok;
}

/* Pass 2b: articulated bias forces, leaves to root: u = τ̃ − Sᵀ pA and the parent receives
 * pa = pA + Ia c + W u with Ia c = IA c − U (Wᵀ c). */
static void aba_biases(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    memcpy(w->pA, w->p0, sizeof(fr_svec) * (size_t)t->n);
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        const fr_svec pA = w->pA[i], c = w->c[i];
        int vi = l->vi, par = l->parent;
        for (int k = 0; k < l->nv; k++)
            w->u[vi + k] = w->taut[vi + k] - fr_sv_dot(w->Sw[vi + k], pA);
        if (par < 0) continue;
        fr_svec pa = fr_sv_add(pA, fri_sym6_mulv(&w->IA[i], c));
        if (l->nv == 1 && w->lim_hard[i])
            pa = fr_sv_mad(pa, w->qdd_p[vi], w->U[vi]);
        else
            for (int k = 0; k < l->nv; k++) {
                const fr_svec W = w->W[vi + k];
                pa = fr_sv_mad(pa, -fr_sv_dot(W, c), w->U[vi + k]);
                pa = fr_sv_mad(pa, w->u[vi + k], W);
            }
        w->pA[par] = fr_sv_add(w->pA[par], pa);
    }
}

/* Pass 3: accelerations, root to leaves. Gravity enters as a base acceleration a0 = −s g. */
static void aba_accels(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        int vi = l->vi, nv = l->nv, par = l->parent;
        fr_svec a = fr_sv_add(par >= 0 ? w->a[par] : w->a0, w->c[i]);
        if (nv == 1) {
            double qdd = w->lim_hard[i]
                             ? w->qdd_p[vi]
                             : w->Dinv[l->dinv_off] * (w->u[vi] - fr_sv_dot(w->U[vi], a));
            d->qdd[vi] = qdd;
            a = fr_sv_mad(a, qdd, w->Sw[vi]);
        } else if (nv > 1) {
            double x[6];
            for (int k = 0; k < nv; k++) x[k] = w->u[vi + k] - fr_sv_dot(w->U[vi + k], a);
            fri_joint_solve(w, l, i, x);
            for (int k = 0; k < nv; k++) {
                d->qdd[vi + k] = x[k];
                a = fr_sv_mad(a, x[k], w->Sw[vi + k]);
            }
        }
        w->a[i] = a;
    }
}

static void clear_modes(const fr_tree *t, fri_tree_ws *w)
{
    for (int i = 0; i < t->n; i++) {
        w->lim[i] = FRI_LIM_NONE;
        w->lim_hard[i] = w->lim_off[i] = w->sat[i] = false;
        w->vlim[i] = 0;
    }
}

void fr_tree_aba(const fr_tree *t, fr_tree_data *d)
{
    clear_modes(t, d->ws);
    for (int i = 0; i < t->n; i++) compose(t, d, i, 0.0, false);
    fri_tree_config(t, d);
    aba_pass1(t, d, d->qd, 1.0);
    aba_inertias(t, d);
    aba_biases(t, d);
    aba_accels(t, d);
}

/* ---------------------------------------------------------------- step */

/* Limit force of a hard-limited joint after a solve: Sᵀ(IA a + pA) − τ̃ + H qdd = Uᵀa − u + H qdd
 * (U and u were taken from the articulated inertia before the joint's own reduction). */
static double hard_limit_force(const fri_tree_ws *w, int vi, double qdd, fr_svec a)
{
    return fr_sv_dot(w->U[vi], a) - w->u[vi] + w->H[vi] * qdd;
}

/* Whether link i's joint modes change after a solve: the motor reaching its speed limit or its
 * effort limit, a limit releasing or one reached within the step engaging. With apply, the change
 * is made (and the joint's forces composed again); without, the modes are only judged
 * (fr_tree_step_revise). */
static bool revise_link(const fr_tree *t, fr_tree_data *d, int i, double dt, bool apply)
{
    fri_tree_ws *w = d->ws;
    const fri_link *l = &t->links[i];
    bool changed = false;
    if (!fri_controllable(l)) return false;
    int vi = l->vi;
    double vmax = l->def.max_velocity;
    if (l->nv == 1 && vmax > 0.0 && !w->sat[i] && !w->vlim[i] && !w->lim_hard[i]) {
        /* the motor may not drive the joint on past its speed limit: above it, the motor
         * becomes a stiff implicit velocity servo toward the limit (it may brake) */
        double tm = w->taum[vi] - w->Hm[vi] * d->qdd[vi];
        double qdn = d->qd[vi] + d->qdd[vi] * dt;
        int side = qdn > vmax ? 1 : qdn < -vmax ? -1 : 0;
        if (side && tm * side > 0.0) {
            if (!apply) return true;
            w->vlim[i] = side;
            /* the servo's gain: 10× the joint's articulated inertia per step, so the excess
             * speed falls to 1/11 in one step */
            w->vlim_k[i] = 10.0 / (w->Dinv[l->dinv_off] * dt);
            d->velocity_limited++;
            changed = true;
        }
    }
    double eff = l->def.effort_limit;
    if (!changed && !w->sat[i] && isfinite(eff)) {
        double tm[3], n2 = 0.0;
        for (int k = 0; k < l->nv; k++) {
            tm[k] = w->taum[vi + k] - w->Hm[vi + k] * d->qdd[vi + k];
            n2 += tm[k] * tm[k];
        }
        if (n2 > eff * eff) {
            if (!apply) return true;
            double sc = eff / sqrt(n2); /* keep the direction */
            for (int k = 0; k < l->nv; k++) w->taum[vi + k] = tm[k] * sc;
            w->sat[i] = true;
            changed = true;
        }
    }
    if (w->lim[i] != FRI_LIM_NONE) {
        double qdd = d->qdd[vi], fl;
        if (w->lim_hard[i]) {
            fl = hard_limit_force(w, vi, qdd, w->a[i]);
        } else {
            double q = d->q[l->qi], qdn = d->qd[vi] + qdd * dt;
            double lim = w->lim[i] == FRI_LIM_LOWER ? l->def.q_min : l->def.q_max;
            fl = -l->def.limit_k * (q - lim + qdn * dt) - l->def.limit_d * qdn;
        }
        /* a limit may only push the joint out of it */
        if ((w->lim[i] == FRI_LIM_LOWER && fl < 0.0) || (w->lim[i] == FRI_LIM_UPPER && fl > 0.0)) {
            if (!apply) return true;
            w->lim[i] = FRI_LIM_NONE;
            w->lim_hard[i] = false;
            w->lim_off[i] = true;
            /* (lim_step kept: the next solve from the same start begins with it engaged again and
             * may release it again. Cleared, the iterates took the limit in one solve, dropped it
             * in the next, crossed it in the third: a Dex5 hand PD-held at 1 ms stopped 801 link
             * iterations unconverged in 3 s, 21 kept) */
            changed = true;
        }
    } else if (l->def.limited && l->nv == 1 && !w->lim_off[i]) {
        /* a limit the solve carries the joint past, which its start did not engage (q + qd·dt
         * short of it, the acceleration on): engaged now. Met only at the next step, a hard limit
         * threw the joint back out at (lim − q)/dt, energy from nowhere. */
        const double qn = d->q[l->qi] + (d->qd[vi] + d->qdd[vi] * dt) * dt;
        const int side = qn < l->def.q_min   ? FRI_LIM_LOWER
                         : qn > l->def.q_max ? FRI_LIM_UPPER
                                             : FRI_LIM_NONE;
        if (side != FRI_LIM_NONE) {
            if (!apply) return true;
            w->lim[i] = w->lim_step[i] = side;
            w->lim_hard[i] = l->def.limit_k == 0.0;
            changed = true;
        }
    }
    if (changed) compose(t, d, i, dt, true);
    return changed;
}

/* Revise modes after a solve; true when something changed (then solve again). */
static bool revise_modes(const fr_tree *t, fr_tree_data *d, double dt)
{
    bool any = false;
    for (int i = 0; i < t->n; i++) any = revise_link(t, d, i, dt, true) || any;
    return any;
}

/* All finite; otherwise d->fault_link names the first link with a non-finite acceleration. */
static bool all_finite(const fr_tree *t, fr_tree_data *d, const double *x)
{
    for (int k = 0; k < t->nv; k++)
        if (!isfinite(x[k])) {
            for (int i = 0; i < t->n; i++)
                if (k >= t->links[i].vi && k < t->links[i].vi + t->links[i].nv) d->fault_link = i;
            return false;
        }
    return true;
}

/* Engage limits predicted for this step and compose the joint forces. */
static void start_modes(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    clear_modes(t, w);
    /* the same start as the last solve's (the world's contact iteration takes the step again with
     * other contact forces): a limit that solve engaged within the step starts engaged, so the
     * iterates do not switch it on and off (the solve still releases it if it pulls) */
    const bool same = w->cfg_valid && !memcmp(w->qc, d->q, sizeof(double) * (size_t)t->nq) &&
                      !memcmp(w->qd0, d->qd, sizeof(double) * (size_t)t->nv);
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        if (!same) w->lim_step[i] = FRI_LIM_NONE;
        if (l->def.limited && l->nv == 1) {
            double q = d->q[l->qi], qn = q + d->qd[l->vi] * dt;
            /* ≤: a joint resting exactly on its limit keeps it engaged */
            if (q <= l->def.q_min || qn <= l->def.q_min)
                w->lim[i] = FRI_LIM_LOWER;
            else if (q >= l->def.q_max || qn >= l->def.q_max)
                w->lim[i] = FRI_LIM_UPPER;
            else
                w->lim[i] = w->lim_step[i];
            w->lim_hard[i] = w->lim[i] != FRI_LIM_NONE && l->def.limit_k == 0.0;
        }
        compose(t, d, i, dt, true);
    }
}

/* The implicit solve with the joint forces at the current q: qdd such that
 * M qdd = s·(smooth forces at velocity v) + τ_joint(qd + qdd dt). Positions must be current.
 * True when the step's starting modes held (none was revised). */
static bool solve_stiff(const fr_tree *t, fr_tree_data *d, const double *v, double dt, double s,
                        bool inertias_done)
{
    aba_pass1(t, d, v, s);
    if (!inertias_done) aba_inertias(t, d);
    /* each revision saturates a motor, releases a limit or engages one not released in this
     * solve, so this ends */
    for (int iter = 0; iter <= 3 * t->n; iter++) {
        aba_biases(t, d);
        aba_accels(t, d);
        if (!revise_modes(t, d, dt)) return iter == 0;
        aba_inertias(t, d);
    }
    return false;
}

/* The total joint force of the stiff solve (motor + damper + limit) into tau_out, the limit's
 * and the damper's shares of it into tau_limit and tau_damper. */
static void joint_forces_out(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        int vi = l->vi;
        double arm = fri_controllable(l) ? l->def.armature : 0.0;
        /* (the damper's share: −c·qd⁺, as compose puts it in τ̃ and H) */
        const double c = fri_controllable(l) ? l->def.damping : 0.0;
        for (int k = 0; k < l->nv; k++) {
            d->tau_out[vi + k] = w->taut[vi + k] - (w->H[vi + k] - arm) * d->qdd[vi + k];
            d->tau_limit[vi + k] = 0.0;
            d->tau_damper[vi + k] = -c * (d->qd[vi + k] + d->qdd[vi + k] * dt);
        }
        if (l->nv != 1 || w->lim[i] == FRI_LIM_NONE) continue;
        if (w->lim_hard[i]) {
            d->tau_limit[vi] = hard_limit_force(w, vi, d->qdd[vi], w->a[i]);
            d->tau_out[vi] += d->tau_limit[vi];
        } else {
            /* the soft limit's share of the sum above: −Kl (q − lim + qd⁺ dt) − Dl qd⁺ */
            const double lim = w->lim[i] == FRI_LIM_LOWER ? l->def.q_min : l->def.q_max;
            const double qdn = d->qd[vi] + d->qdd[vi] * dt;
            d->tau_limit[vi] =
                -l->def.limit_k * (d->q[l->qi] - lim + qdn * dt) - l->def.limit_d * qdn;
        }
    }
}

/* The end of an Euler step from its solve's qdd: joint forces out, qd⁺ = qd + qdd dt,
 * q⁺ = q ⊕ qd⁺ dt; the solve stays open to fr_tree_step_revise. */
static int finish_euler(const fr_tree *t, fr_tree_data *d, double dt, bool modes_held)
{
    fri_tree_ws *w = d->ws;
    if (!all_finite(t, d, d->qdd)) return FR_ERR_NUMERIC;
    joint_forces_out(t, d, dt);
    fri_mimic_forces_out(t, d);
    memcpy(w->qd0, d->qd, sizeof(double) * (size_t)t->nv);
    for (int k = 0; k < t->nv; k++) d->qd[k] += d->qdd[k] * dt;
    fr_tree_integrate_q(t, d->q, d->qd, dt, d->q);
    /* (a revision of the modes is a choice a step with other forces might not make: such a solve,
     * and a mimic projection, are not revised) */
    w->revisable = modes_held && t->nmimic == 0;
    w->rev_dt = dt;
    return FR_OK;
}

/* Semi-implicit Euler: one stiff solve, qd⁺ = qd + qdd dt, q⁺ = q ⊕ qd⁺ dt. */
static int step_euler(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    start_modes(t, d, dt);
    fri_tree_config(t, d);
    w->gyro_h = 0.5 * dt; /* (its inertias take the free roots' gyroscopic term) */
    bool held = solve_stiff(t, d, d->qd, dt, 1.0, false);
    w->gyro_h = 0.0;
    fri_mimic_project(t, d, dt, true);
    return finish_euler(t, d, dt, held);
}

/*
 * Time-reversible velocity Verlet with the stiff joint forces as an implicit kick (see
 * docs/articulated.md):
 *   v⁺  = qd + dt/2·f(q, v⁺) + dt·M⁻¹τ_joint(q + v⁺ dt, v⁺)   (fixed point in v⁺; the joint
 *                                                              forces implicit through H)
 *   q⁺  = q ⊕ v⁺ dt
 *   qd⁺ = v⁺ + dt/2·f(q⁺, v⁺)
 * with f the smooth dynamics (gravity, velocity products, ext forces) and τ_joint the motor
 * (feed-forward + PD), damper and limit forces. Without joint forces this is a symmetric
 * (time-reversible), second-order velocity Verlet; joint forces enter first-order, like Euler.
 */
static int step_verlet(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    int nv = t->nv;
    start_modes(t, d, dt);
    fri_tree_config(t, d);
    /* predictor: the previous step's velocity change of this stage */
    for (int k = 0; k < nv; k++) w->vit[k] = d->qd[k] + w->dv_prev[k];
    for (int it = 0; it < 8; it++) {
        /* the velocity only changes biases: inertias (q, H, modes) carry over */
        solve_stiff(t, d, w->vit, dt, 0.5, it > 0);
        fri_mimic_project(t, d, dt, true);
        double diff = 0.0, scale = 0.0;
        for (int k = 0; k < nv; k++) {
            double vn = d->qd[k] + d->qdd[k] * dt;
            diff = fmax(diff, fabs(vn - w->vit[k]));
            scale = fmax(scale, fabs(vn));
            w->vit[k] = vn;
        }
        if (!(diff > 1e-12 * (1.0 + scale))) break; /* also stops on NaN */
    }
    for (int k = 0; k < nv; k++) w->dv_prev[k] = w->vit[k] - d->qd[k];
    if (!all_finite(t, d, d->qdd)) return FR_ERR_NUMERIC;
    joint_forces_out(t, d, dt);
    fri_mimic_forces_out(t, d);
    memcpy(w->qd0, d->qd, sizeof(double) * (size_t)nv);
    memcpy(w->q0, d->q, sizeof(double) * (size_t)t->nq);
    fr_tree_integrate_q(t, d->q, w->vit, dt, d->q);
    /* end kick: at (q⁺, v⁺), half the smooth forces, no joint forces */
    clear_modes(t, w);
    for (int i = 0; i < t->n; i++) compose(t, d, i, dt, false);
    fri_tree_config(t, d);
    aba_pass1(t, d, w->vit, 0.5);
    aba_inertias(t, d);
    aba_biases(t, d);
    aba_accels(t, d);
    fri_mimic_project(t, d, dt, false);
    if (!all_finite(t, d, d->qdd)) {
        memcpy(d->q, w->q0, sizeof(double) * (size_t)t->nq);
        return FR_ERR_NUMERIC;
    }
    for (int k = 0; k < nv; k++) {
        d->qd[k] = w->vit[k] + d->qdd[k] * dt;
        d->qdd[k] = (d->qd[k] - w->qd0[k]) / dt; /* the step's mean acceleration */
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- effective mass at a point */

int fr_tree_point_mass_prepare(const fr_tree *t, fr_tree_data *d, double dt)
{
    if (!(dt > 0.0)) return FR_ERR_INVAL;
    /* no limits: a limit holds only one way, and a contact may well pull the joint off it (taken
     * as rigid, a finger at its limit carried the whole hand's mass and its first touch threw the
     * LEAP hand off the ground) */
    clear_modes(t, d->ws);
    for (int i = 0; i < t->n; i++) compose(t, d, i, dt, true);
    fri_tree_config(t, d);
    return aba_inertias(t, d) ? FR_OK : FR_ERR_NUMERIC;
}

/* The response to nc ≤ 3 forces f[c] at the link alone (accelerations a[c] of the link): bias
 * forces on the path from the link to the root (pass 2 with pA = −f there and nothing elsewhere),
 * then the accelerations back down the same path (pass 3 without velocity products or gravity); the
 * other links do not enter. */
static void point_response(const fr_tree *t, fr_tree_data *d, int link, const fr_svec *f, int nc,
                           fr_svec *a)
{
    fri_tree_ws *w = d->ws;
    const int nv = t->nv;
    int *path = w->path, np = 0;
    double *x = w->resp_x; /* [3·nv]: column c at c·nv */
    fr_svec pa[3];
    for (int c = 0; c < nc; c++) pa[c] = fr_sv_neg(f[c]);
    for (int i = link; i >= 0; i = t->links[i].parent) {
        const fri_link *l = &t->links[i];
        path[np++] = i;
        const int vi = l->vi;
        const bool pass = !(l->nv == 1 && w->lim_hard[i]);
        for (int c = 0; c < nc; c++) {
            double *xc = x + c * nv + vi;
            for (int k = 0; k < l->nv; k++) xc[k] = -fr_sv_dot(w->Sw[vi + k], pa[c]);
            for (int k = 0; pass && k < l->nv; k++) pa[c] = fr_sv_mad(pa[c], xc[k], w->W[vi + k]);
        }
    }
    for (int c = 0; c < nc; c++) a[c] = fr_sv_zero();
    for (int j = np - 1; j >= 0; j--) {
        const fri_link *l = &t->links[path[j]];
        const int vi = l->vi, lnv = l->nv;
        if (lnv == 1) {
            if (w->lim_hard[path[j]]) continue;
            for (int c = 0; c < nc; c++) {
                double qdd = w->Dinv[l->dinv_off] * (x[c * nv + vi] - fr_sv_dot(w->U[vi], a[c]));
                a[c] = fr_sv_mad(a[c], qdd, w->Sw[vi]);
            }
        } else if (lnv > 1) {
            for (int c = 0; c < nc; c++) {
                double y[6];
                for (int k = 0; k < lnv; k++)
                    y[k] = x[c * nv + vi + k] - fr_sv_dot(w->U[vi + k], a[c]);
                fri_joint_solve(w, l, path[j], y);
                for (int k = 0; k < lnv; k++) a[c] = fr_sv_mad(a[c], y[k], w->Sw[vi + k]);
            }
        }
    }
}

double fr_tree_point_inv_mass(const fr_tree *t, fr_tree_data *d, int link, fr_vec3 p, fr_vec3 u)
{
    if (link < 0 || link >= t->n) return 0.0;
    const fr_svec f = fr_sv(fr_v3_cross(p, u), u);
    fr_svec a;
    point_response(t, d, link, &f, 1, &a);
    return fr_sv_dot(f, a);
}

fr_mat3 fr_tree_point_inv_mass3(const fr_tree *t, fr_tree_data *d, int link, fr_vec3 p)
{
    fr_mat3 L = {{{0}}};
    if (link < 0 || link >= t->n) return L;
    fr_svec f[3], a[3];
    for (int c = 0; c < 3; c++) {
        fr_vec3 e = fr_v3(c == 0, c == 1, c == 2);
        f[c] = fr_sv(fr_v3_cross(p, e), e);
    }
    point_response(t, d, link, f, 3, a);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) L.m[r][c] = fr_sv_dot(f[r], a[c]);
    return L;
}

int fr_tree_step_no_kinematics(const fr_tree *t, fr_tree_data *d, double dt)
{
    if (!(dt > 0.0)) return FR_ERR_INVAL;
    int err = d->integrator == FR_INTEGRATOR_VERLET ? step_verlet(t, d, dt) : step_euler(t, d, dt);
    if (!err) fr_tree_clear_ext(t, d);
    return err;
}

int fr_tree_step(const fr_tree *t, fr_tree_data *d, double dt)
{
    if (!(dt > 0.0)) return FR_ERR_INVAL;
    int err = d->integrator == FR_INTEGRATOR_VERLET ? step_verlet(t, d, dt) : step_euler(t, d, dt);
    if (err) {
        fr_tree_forward_kinematics(t, d);
        return err;
    }
    fr_tree_clear_ext(t, d);
    fr_tree_forward_kinematics(t, d);
    return FR_OK;
}

/*
 * The last Euler step again from the same start, with external forces changed by f_ext and
 * nothing else: the solve is linear in the forces while the articulated inertias (q, H, external
 * inertias) and the joint modes hold, so the step's qdd moves by the tree's response to f_ext
 * alone, one pass up and one down (fri_tree_response) instead of a whole ABA. Refused (1) when the
 * change would alter a joint's mode, which the full step would then revise.
 */
int fr_tree_step_revise(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    int rc = 1;
    bool ext_inertia = false;
    for (int i = 0; i < t->n; i++) ext_inertia = ext_inertia || d->has_I_ext[i];
    if (!(dt > 0.0))
        rc = FR_ERR_INVAL;
    else if (w->revisable && dt == w->rev_dt && d->integrator == FR_INTEGRATOR_EULER &&
             !ext_inertia && w->cfg_valid && !memcmp(w->qc, d->q, sizeof(double) * (size_t)t->nq) &&
             !memcmp(w->qd0, d->qd, sizeof(double) * (size_t)t->nv)) {
        fri_tree_response(t, d, NULL, d->f_ext, w->rev_qdd, w->rev_a);
        /* the solve's state as the full step with these forces would leave it */
        for (int k = 0; k < t->nv; k++) {
            d->qdd[k] += w->rev_qdd[k];
            w->u[k] += w->mim_u[k]; /* (fri_tree_response leaves its τ̃ − Sᵀ·pA there) */
        }
        double dv = 0.0;
        for (int i = 0; i < t->n; i++) {
            const fr_svec da = w->rev_a[i];
            w->a[i] = fr_sv_add(w->a[i], da);
            /* the change of the link's velocity, dt·Δa: at its centre c = h/m (Iw's h = m·c) */
            const double m = t->links[i].def.mass;
            if (!(m > 0.0)) continue;
            const fri_sym6 *I = &w->Iw[i];
            const fr_mat3 *Ic = &t->links[i].def.inertia;
            const fr_vec3 c = fr_v3_scale(fr_v3(I->B[7], I->B[2], I->B[3]), 1.0 / m);
            const double k = sqrt((Ic->m[0][0] + Ic->m[1][1] + Ic->m[2][2]) / m);
            const fr_vec3 dvc = fr_v3_add(da.lin, fr_v3_cross(da.ang, c));
            dv = fmax(dv, dt * (fr_v3_norm(dvc) + k * fr_v3_norm(da.ang)));
        }
        d->revised_dv = dv;
        bool modes_hold = true;
        for (int i = 0; i < t->n && modes_hold; i++) modes_hold = !revise_link(t, d, i, dt, false);
        rc = modes_hold ? finish_euler(t, d, dt, true) : 1;
    }
    if (rc) w->revisable = false; /* (the solve's state is spent: a full step starts afresh) */
    fr_tree_clear_ext(t, d);
    return rc;
}

/* No modes, each joint's armature alone on its diagonal, the configuration's kinematics */
static void plain_config(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    clear_modes(t, w);
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        double arm = fri_controllable(l) ? l->def.armature : 0.0;
        for (int k = 0; k < l->nv; k++) w->H[l->vi + k] = arm;
    }
    fri_tree_config(t, d);
}

void fri_aba_plain_inertias(const fr_tree *t, fr_tree_data *d)
{
    plain_config(t, d);
    /* the external inertias of a step are gone (cleared with it): rigid links only */
    aba_inertias(t, d);
}

void fr_tree_joint_inertias(const fr_tree *t, fr_tree_data *d, double *D, double *locked)
{
    fri_tree_ws *w = d->ws;
    plain_config(t, d);
    /* locked: the link's own inertia here, its children's unreduced articulated inertias below */
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        for (int k = 0; k < l->nv; k++)
            locked[l->vi + k] =
                fr_sv_dot(w->Sw[l->vi + k], fri_sym6_mulv(&w->Iw[i], w->Sw[l->vi + k])) +
                w->H[l->vi + k];
    }
    /* the articulated inertias (aba_inertias without external inertias or modes) */
    memcpy(w->IA, w->Iw, sizeof(fri_sym6) * (size_t)t->n);
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        const fri_sym6 *IA = &w->IA[i];
        int vi = l->vi, nv = l->nv, nred = 0, par = l->parent;
        for (int k = 0; k < nv; k++) w->U[vi + k] = fri_sym6_mulv(IA, w->Sw[vi + k]);
        if (nv == 1) {
            D[vi] = fr_sv_dot(w->Sw[vi], w->U[vi]) + w->H[vi];
            if (D[vi] > FR_TREE_SINGULAR_REL * locked[vi] && D[vi] > FR_TREE_SINGULAR_ABS) {
                w->W[vi] = fr_sv_scale(w->U[vi], 1.0 / D[vi]);
                nred = 1;
            }
        } else if (nv > 1) {
            double M[36], L[36];
            for (int j = 0; j < nv; j++)
                for (int k = 0; k < nv; k++)
                    M[j * nv + k] = L[j * nv + k] =
                        fr_sv_dot(w->Sw[vi + j], w->U[vi + k]) + (j == k ? w->H[vi + k] : 0.0);
            /* LDLᵀ pivots, a singular one left out */
            bool all = true;
            for (int k = 0; k < nv; k++) {
                double p = M[k * nv + k];
                D[vi + k] = p;
                if (!(p > FR_TREE_SINGULAR_REL * locked[vi + k] && p > FR_TREE_SINGULAR_ABS)) {
                    all = false;
                    continue;
                }
                for (int a = k + 1; a < nv; a++)
                    for (int b = k + 1; b < nv; b++)
                        M[a * nv + b] -= M[a * nv + k] * M[k * nv + b] / p;
            }
            if (all && fr_chol_factor(L, nv)) {
                solve_w(w, L, vi, nv);
                nred = nv;
            }
        }
        if (par < 0) continue;
        /* the parent's joint with this one locked sees IA whole */
        const fri_link *pl = &t->links[par];
        for (int k = 0; k < pl->nv; k++)
            locked[pl->vi + k] +=
                fr_sv_dot(w->Sw[pl->vi + k], fri_sym6_mulv(IA, w->Sw[pl->vi + k]));
        fri_sym6_add_reduced(&w->IA[par], IA, w->U + vi, w->W + vi, nred);
    }
    w->revisable = false;
}

void fr_tree_response_prepare(const fr_tree *t, fr_tree_data *d, bool step)
{
    /* the kinematics at the current q: Sw there (the step's inertias were formed at its start) */
    fr_tree_forward_kinematics(t, d);
    if (!step || d->integrator != FR_INTEGRATOR_EULER) fri_aba_plain_inertias(t, d);
}

void fr_tree_impulse_response(const fr_tree *t, fr_tree_data *d, const double *p, double *dqd)
{
    fri_tree_response(t, d, p, NULL, dqd, NULL);
}

void fr_tree_impulse_forces(const fr_tree *t, fr_tree_data *d, const double *dqd, double dt)
{
    if (d->integrator != FR_INTEGRATOR_EULER || !(dt > 0.0)) return;
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        double arm = fri_controllable(l) ? l->def.armature : 0.0;
        for (int k = 0; k < l->nv; k++)
            d->tau_out[l->vi + k] -= (w->H[l->vi + k] - arm) * dqd[l->vi + k] / dt;
        /* (the damper's share of it, c dt, and a soft limit's: (Kl dt + Dl) dt) */
        if (fri_controllable(l))
            for (int k = 0; k < l->nv; k++)
                d->tau_damper[l->vi + k] -= l->def.damping * dqd[l->vi + k];
        if (l->nv == 1 && w->lim[i] != FRI_LIM_NONE && !w->lim_hard[i])
            d->tau_limit[l->vi] -= (l->def.limit_k * dt + l->def.limit_d) * dqd[l->vi];
    }
}
