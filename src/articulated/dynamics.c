/*
 * src/articulated: kinematics, ABA (with implicit joint springs/PD), RNEA, CRBA, integration.
 * Notation follows Featherstone, "Rigid Body Dynamics Algorithms" (2008), ch. 5–7: Xup_i =
 * i_X_λ(i), S_i motion subspace, c_i = v_i × (S_i qd_i), IA_i / pA_i articulated inertia and bias
 * force, U_i = IA_i S_i, D_i = S_iᵀ U_i, u_i = τ_i − S_iᵀ pA_i. See docs/articulated.md for the
 * implicit joint-force terms.
 */
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------- frames */

static fr_mat3 quat_E(const double *q)
{
    /* E maps joint coordinates to link coordinates: the transpose of the link's rotation */
    fr_quat r = fr_q_normalize(fr_q(q[0], q[1], q[2], q[3]));
    return fr_m3_transpose(fr_q_to_m3(r));
}

fr_xform fri_joint_xform(const fri_link *l, const double *q)
{
    switch (l->type) {
    case FR_JOINT_REVOLUTE: {
        /* E = Rᵀ = c·1 + (1 − c) a aᵀ − s [a]× */
        fr_vec3 a = l->def.axis;
        double s = sin(q[0]), c = cos(q[0]), k = 1.0 - c;
        fr_xform X;
        X.E = (fr_mat3){{{c + k * a.x * a.x, k * a.x * a.y + s * a.z, k * a.x * a.z - s * a.y},
                         {k * a.y * a.x - s * a.z, c + k * a.y * a.y, k * a.y * a.z + s * a.x},
                         {k * a.z * a.x + s * a.y, k * a.z * a.y - s * a.x, c + k * a.z * a.z}}};
        X.r = fr_v3_zero();
        return X;
    }
    case FR_JOINT_PRISMATIC:
        return fr_xf_trans(fr_v3_scale(l->def.axis, q[0]));
    case FR_JOINT_SPHERICAL:
        return fr_xf_rot(quat_E(q));
    case FR_JOINT_FREE:
        return fr_xf(quat_E(q + 3), fr_v3(q[0], q[1], q[2]));
    case FR_JOINT_FIXED:
    default:
        return fr_xf_identity();
    }
}

/* Xup = X_J ∘ X_T without the work a pure rotation or pure translation does not need. */
static fr_xform joint_up(const fri_link *l, const double *q)
{
    const fr_xform *XT = &l->XT;
    switch (l->type) {
    case FR_JOINT_FIXED:
        return *XT;
    case FR_JOINT_REVOLUTE:
    case FR_JOINT_SPHERICAL: {
        fr_xform XJ = fri_joint_xform(l, q);
        return fr_xf(fr_m3_mul(XJ.E, XT->E), XT->r);
    }
    case FR_JOINT_PRISMATIC:
        return fr_xf(XT->E, fr_v3_add(XT->r, fr_m3_tmulv(XT->E, fr_v3_scale(l->def.axis, q[0]))));
    default:
        return fr_xf_mul(fri_joint_xform(l, q), *XT);
    }
}

static fr_svec joint_vel(const fri_link *l, const double *qd)
{
    switch (l->type) {
    case FR_JOINT_REVOLUTE:
        return fr_sv(fr_v3_scale(l->S[0].ang, qd[0]), fr_v3_zero());
    case FR_JOINT_PRISMATIC:
        return fr_sv(fr_v3_zero(), fr_v3_scale(l->S[0].lin, qd[0]));
    case FR_JOINT_SPHERICAL:
        return fr_sv(fr_v3(qd[0], qd[1], qd[2]), fr_v3_zero());
    case FR_JOINT_FREE:
        return fr_sv(fr_v3(qd[0], qd[1], qd[2]), fr_v3(qd[3], qd[4], qd[5]));
    default:
        return fr_sv_zero();
    }
}

void fri_tree_positions(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_xform X = joint_up(l, d->q + l->qi);
        w->Xup[i] = X;
        w->X0[i] = l->parent >= 0 ? fr_xf_mul(X, w->X0[l->parent]) : X;
    }
}

void fri_tree_velocities(const fr_tree *t, fr_tree_data *d, const double *qd, bool with_c)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_svec vJ = joint_vel(l, qd + l->vi);
        d->vel[i] =
            l->parent >= 0 ? fr_sv_add(fr_xf_apply_m(w->Xup[i], d->vel[l->parent]), vJ) : vJ;
        if (with_c) w->c[i] = fr_sv_crossm(d->vel[i], vJ);
    }
}

void fr_tree_forward_kinematics(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_positions(t, d);
    fri_tree_velocities(t, d, d->qd, false);
    for (int i = 0; i < t->n; i++) {
        const fr_xform *X = &d->ws->X0[i];
        d->pose[i].p = X->r;
        d->pose[i].q = fr_m3_to_q(fr_m3_transpose(X->E));
    }
}

/* ---------------------------------------------------------------- block inertia transform */

void fri_sym6_add_to_parent(fri_sym6 *dst, fr_xform X, const fri_sym6 *I)
{
    /* Xᵀ I X with X = diag(E, E)·[1 0; −r× 1]: rotate the blocks (Eᵀ · E), then shift the
     * reference point by r:  A' = A − N − Nᵀ − r× C r×, B' = B + r× C, C' = C with N = B r×. */
    const fr_mat3 E = X.E;
    fr_mat3 A = fr_m3_tmul(E, fr_m3_mul(I->A, E));
    fr_mat3 B = fr_m3_tmul(E, fr_m3_mul(I->B, E));
    fr_mat3 C = fr_m3_tmul(E, fr_m3_mul(I->C, E));
    fr_vec3 r = X.r;
    fr_mat3 M, N; /* M = r× C (columns r × C_j), N = B r× (rows B_i × r) */
    for (int j = 0; j < 3; j++) {
        fr_vec3 cj = fr_v3(C.m[0][j], C.m[1][j], C.m[2][j]);
        fr_vec3 m = fr_v3_cross(r, cj);
        M.m[0][j] = m.x;
        M.m[1][j] = m.y;
        M.m[2][j] = m.z;
        fr_vec3 n = fr_v3_cross(fr_v3(B.m[j][0], B.m[j][1], B.m[j][2]), r);
        N.m[j][0] = n.x;
        N.m[j][1] = n.y;
        N.m[j][2] = n.z;
    }
    /* r× C r× = M r×: rows M_i × r */
    for (int i = 0; i < 3; i++) {
        fr_vec3 k = fr_v3_cross(fr_v3(M.m[i][0], M.m[i][1], M.m[i][2]), r);
        double kk[3] = {k.x, k.y, k.z};
        for (int j = 0; j < 3; j++) {
            dst->A.m[i][j] += A.m[i][j] - N.m[i][j] - N.m[j][i] - kk[j];
            dst->B.m[i][j] += B.m[i][j] + M.m[i][j];
            dst->C.m[i][j] += C.m[i][j];
        }
    }
}

/* ---------------------------------------------------------------- joint forces for one step */

static bool controllable(const fri_link *l)
{
    return l->nv == 1 || l->type == FR_JOINT_SPHERICAL;
}

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
    double arm = controllable(l) ? l->def.armature : 0.0;
    if (!joint || !controllable(l)) {
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
        if (!w->sat[i]) {
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

/* Pass 1 (on the last positions): twists from qd, velocity products c and rigid bias forces
 * p0 = v ×* I v − f_ext (ext forces into link frames), all scaled by s (the share of the smooth
 * forces a Verlet half kick takes; 1 otherwise). */
static void aba_pass1(const fr_tree *t, fr_tree_data *d, const double *qd, double s)
{
    fri_tree_ws *w = d->ws;
    fri_tree_velocities(t, d, qd, true);
    for (int i = 0; i < t->n; i++) {
        const fr_rbi *I = &t->links[i].I;
        fr_svec v = d->vel[i];
        fr_svec p = fr_sv_crossf(v, fr_rbi_mulv(*I, v));
        if (nonzero(d->f_ext[i])) p = fr_sv_sub(p, fr_xf_apply_f(w->X0[i], d->f_ext[i]));
        if (s != 1.0) {
            p = fr_sv_scale(p, s);
            w->c[i] = fr_sv_scale(w->c[i], s);
        }
        w->p0[i] = p;
    }
    w->a0 = fr_sv(fr_v3_zero(), fr_v3_scale(d->gravity, -s));
}

/* Invert a small SPD matrix (n ≤ 6) in place through its Cholesky factor. */
static bool small_spd_inverse(double *D, int n)
{
    double L[36], col[6];
    memcpy(L, D, sizeof(double) * (size_t)(n * n));
    if (!fr_chol_factor(L, n)) return false;
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < n; k++) col[k] = (k == j);
        fr_chol_solve(L, n, col);
        for (int k = 0; k < n; k++) D[k * n + j] = col[k];
    }
    return true;
}

/* Pass 2a: articulated inertias, leaves to root; depends on q and H only. Leaves IA_i reduced
 * by its own joint (the inertia the parent sees), U, W = U D⁻¹ and D⁻¹. */
static bool aba_inertias(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    bool ok = true;
    for (int i = 0; i < t->n; i++) fri_sym6_from_rbi(&w->IA[i], &t->links[i].I);
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        fri_sym6 *IA = &w->IA[i];
        int vi = l->vi, nv = l->nv, par = l->parent;
        if (nv == 1) {
            fr_svec U = fri_sym6_mulv(IA, l->S[0]);
            w->U[vi] = U;
            if (!w->lim_hard[i]) { /* a prescribed joint stays rigid: IA passes whole */
                double D = fri_sdot(l->S[0], U) + w->H[vi];
                double Dinv = 1.0 / D;
                ok = ok && D > 0.0;
                w->Dinv[l->dinv_off] = Dinv;
                w->W[vi] = fr_sv_scale(U, Dinv);
                if (par >= 0) fri_sym6_sub_outer(IA, U, w->W[vi]);
            }
        } else if (nv > 1) {
            double *Dinv = w->Dinv + l->dinv_off;
            for (int k = 0; k < nv; k++) w->U[vi + k] = fri_sym6_mulv(IA, l->S[k]);
            for (int j = 0; j < nv; j++)
                for (int k = 0; k < nv; k++)
                    Dinv[j * nv + k] =
                        fri_sdot(l->S[j], w->U[vi + k]) + (j == k ? w->H[vi + k] : 0.0);
            if (!small_spd_inverse(Dinv, nv)) ok = false;
            for (int k = 0; k < nv; k++) {
                fr_svec W = fr_sv_zero();
                for (int j = 0; j < nv; j++) W = fr_sv_mad(W, Dinv[k * nv + j], w->U[vi + j]);
                w->W[vi + k] = W;
            }
            if (par >= 0)
                for (int k = 0; k < nv; k++) fri_sym6_sub_outer(IA, w->U[vi + k], w->W[vi + k]);
        }
        if (par >= 0) fri_sym6_add_to_parent(&w->IA[par], w->Xup[i], IA);
    }
    return ok;
}

/* Pass 2b: articulated bias forces, leaves to root: u = τ̃ − Sᵀ pA, pa = pA + Ia c + W u. */
static void aba_biases(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    memcpy(w->pA, w->p0, sizeof(fr_svec) * (size_t)t->n);
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        fr_svec pA = w->pA[i];
        int vi = l->vi, par = l->parent;
        for (int k = 0; k < l->nv; k++) w->u[vi + k] = w->taut[vi + k] - fri_sdot(l->S[k], pA);
        if (par < 0) continue;
        fr_svec pa = fr_sv_add(pA, fri_sym6_mulv(&w->IA[i], w->c[i]));
        if (l->nv == 1 && w->lim_hard[i])
            pa = fr_sv_mad(pa, w->qdd_p[vi], w->U[vi]);
        else
            for (int k = 0; k < l->nv; k++) pa = fr_sv_mad(pa, w->u[vi + k], w->W[vi + k]);
        w->pA[par] = fr_sv_add(w->pA[par], fr_xf_inv_apply_f(w->Xup[i], pa));
    }
}

/* Pass 3: accelerations, root to leaves. Gravity enters as a base acceleration a0 = −s g. */
static void aba_accels(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        int vi = l->vi, nv = l->nv, par = l->parent;
        fr_svec a = fr_sv_add(fr_xf_apply_m(w->Xup[i], par >= 0 ? w->a[par] : w->a0), w->c[i]);
        if (nv == 1) {
            double qdd = w->lim_hard[i]
                             ? w->qdd_p[vi]
                             : w->Dinv[l->dinv_off] * (w->u[vi] - fr_sv_dot(w->U[vi], a));
            d->qdd[vi] = qdd;
            a = fr_sv_mad(a, qdd, l->S[0]);
        } else if (nv > 1) {
            const double *Dinv = w->Dinv + l->dinv_off;
            double x[6];
            for (int k = 0; k < nv; k++) x[k] = w->u[vi + k] - fr_sv_dot(w->U[vi + k], a);
            fr_svec acc = a;
            for (int k = 0; k < nv; k++) {
                double s = 0.0;
                for (int j = 0; j < nv; j++) s += Dinv[k * nv + j] * x[j];
                d->qdd[vi + k] = s;
                acc = fr_sv_mad(acc, s, l->S[k]);
            }
            a = acc;
        }
        w->a[i] = a;
    }
}

static void clear_modes(const fr_tree *t, fri_tree_ws *w)
{
    for (int i = 0; i < t->n; i++) {
        w->lim[i] = FRI_LIM_NONE;
        w->lim_hard[i] = w->sat[i] = false;
    }
}

void fr_tree_aba(const fr_tree *t, fr_tree_data *d)
{
    clear_modes(t, d->ws);
    for (int i = 0; i < t->n; i++) compose(t, d, i, 0.0, false);
    fri_tree_positions(t, d);
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

/* Revise modes after a solve; true when something changed (then solve again). */
static bool revise_modes(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    bool any = false;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        bool changed = false;
        if (!controllable(l)) continue;
        int vi = l->vi;
        double eff = l->def.effort_limit;
        if (!w->sat[i] && isfinite(eff)) {
            double tm[3], n2 = 0.0;
            for (int k = 0; k < l->nv; k++) {
                tm[k] = w->taum[vi + k] - w->Hm[vi + k] * d->qdd[vi + k];
                n2 += tm[k] * tm[k];
            }
            if (n2 > eff * eff) {
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
            if ((w->lim[i] == FRI_LIM_LOWER && fl < 0.0) ||
                (w->lim[i] == FRI_LIM_UPPER && fl > 0.0)) {
                w->lim[i] = FRI_LIM_NONE;
                w->lim_hard[i] = false;
                changed = true;
            }
        }
        if (changed) compose(t, d, i, dt, true);
        any = any || changed;
    }
    return any;
}

static bool all_finite(const double *x, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(x[k])) return false;
    return true;
}

/* Engage limits predicted for this step and compose the joint forces. */
static void start_modes(const fr_tree *t, fr_tree_data *d, double dt)
{
    fri_tree_ws *w = d->ws;
    clear_modes(t, w);
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        if (l->def.limited && l->nv == 1) {
            double q = d->q[l->qi], qn = q + d->qd[l->vi] * dt;
            /* ≤: a joint resting exactly on its limit keeps it engaged */
            if (q <= l->def.q_min || qn <= l->def.q_min)
                w->lim[i] = FRI_LIM_LOWER;
            else if (q >= l->def.q_max || qn >= l->def.q_max)
                w->lim[i] = FRI_LIM_UPPER;
            w->lim_hard[i] = w->lim[i] != FRI_LIM_NONE && l->def.limit_k == 0.0;
        }
        compose(t, d, i, dt, true);
    }
}

/* The implicit solve with the joint forces at the current q: qdd such that
 * M qdd = s·(smooth forces at velocity v) + τ_joint(qd + qdd dt). Positions must be current. */
static void solve_stiff(const fr_tree *t, fr_tree_data *d, const double *v, double dt, double s)
{
    aba_pass1(t, d, v, s);
    /* each revision only saturates a motor or releases a limit, so this ends */
    for (int iter = 0; iter <= 2 * t->n; iter++) {
        aba_inertias(t, d);
        aba_biases(t, d);
        aba_accels(t, d);
        if (!revise_modes(t, d, dt)) break;
    }
}

/* The total joint force of the stiff solve (motor + damper + limit), into tau_out. */
static void joint_forces_out(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        int vi = l->vi;
        double arm = controllable(l) ? l->def.armature : 0.0;
        for (int k = 0; k < l->nv; k++)
            d->tau_out[vi + k] = w->taut[vi + k] - (w->H[vi + k] - arm) * d->qdd[vi + k];
        if (l->nv == 1 && w->lim_hard[i])
            d->tau_out[vi] += hard_limit_force(w, vi, d->qdd[vi], w->a[i]);
    }
}

/* Semi-implicit Euler: one stiff solve, qd⁺ = qd + qdd dt, q⁺ = q ⊕ qd⁺ dt. */
static int step_euler(const fr_tree *t, fr_tree_data *d, double dt)
{
    start_modes(t, d, dt);
    fri_tree_positions(t, d);
    solve_stiff(t, d, d->qd, dt, 1.0);
    if (!all_finite(d->qdd, t->nv)) return FR_ERR_NUMERIC;
    joint_forces_out(t, d);
    for (int k = 0; k < t->nv; k++) d->qd[k] += d->qdd[k] * dt;
    fr_tree_integrate_q(t, d->q, d->qd, dt, d->q);
    return FR_OK;
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
    fri_tree_positions(t, d);
    memcpy(w->vit, d->qd, sizeof(double) * (size_t)nv);
    for (int it = 0; it < 8; it++) {
        solve_stiff(t, d, w->vit, dt, 0.5);
        double diff = 0.0, scale = 0.0;
        for (int k = 0; k < nv; k++) {
            double vn = d->qd[k] + d->qdd[k] * dt;
            diff = fmax(diff, fabs(vn - w->vit[k]));
            scale = fmax(scale, fabs(vn));
            w->vit[k] = vn;
        }
        if (!(diff > 1e-13 * (1.0 + scale))) break; /* also stops on NaN */
    }
    if (!all_finite(d->qdd, nv)) return FR_ERR_NUMERIC;
    joint_forces_out(t, d);
    memcpy(w->qd0, d->qd, sizeof(double) * (size_t)nv);
    memcpy(w->q0, d->q, sizeof(double) * (size_t)t->nq);
    fr_tree_integrate_q(t, d->q, w->vit, dt, d->q);
    /* end kick: at (q⁺, v⁺), half the smooth forces, no joint forces */
    clear_modes(t, w);
    for (int i = 0; i < t->n; i++) compose(t, d, i, dt, false);
    fri_tree_positions(t, d);
    aba_pass1(t, d, w->vit, 0.5);
    aba_inertias(t, d);
    aba_biases(t, d);
    aba_accels(t, d);
    if (!all_finite(d->qdd, nv)) {
        memcpy(d->q, w->q0, sizeof(double) * (size_t)t->nq);
        return FR_ERR_NUMERIC;
    }
    for (int k = 0; k < nv; k++) {
        d->qd[k] = w->vit[k] + d->qdd[k] * dt;
        d->qdd[k] = (d->qd[k] - w->qd0[k]) / dt; /* the step's mean acceleration */
    }
    return FR_OK;
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

/* ---------------------------------------------------------------- integration */

static fr_quat get_q(const double *q)
{
    return fr_q(q[0], q[1], q[2], q[3]);
}
static void put_q(double *q, fr_quat r)
{
    q[0] = r.w;
    q[1] = r.x;
    q[2] = r.y;
    q[3] = r.z;
}

void fr_tree_integrate_q(const fr_tree *t, const double *q, const double *v, double dt,
                         double *q_out)
{
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        const double *qi = q + l->qi, *vi = v + l->vi;
        double *qo = q_out + l->qi;
        switch (l->type) {
        case FR_JOINT_REVOLUTE:
        case FR_JOINT_PRISMATIC:
            qo[0] = qi[0] + vi[0] * dt;
            break;
        case FR_JOINT_SPHERICAL: {
            fr_vec3 phi = fr_v3_scale(fr_v3(vi[0], vi[1], vi[2]), dt);
            put_q(qo, fr_q_normalize(fr_q_mul(get_q(qi), fr_q_exp(phi))));
            break;
        }
        case FR_JOINT_FREE: {
            /* T⁺ = T · exp(ξ dt) on SE(3), ξ the body twist: exact for a constant twist */
            fr_vec3 phi = fr_v3_scale(fr_v3(vi[0], vi[1], vi[2]), dt);
            fr_vec3 rho = fr_v3_scale(fr_v3(vi[3], vi[4], vi[5]), dt);
            double th2 = fr_v3_norm2(phi), th = sqrt(th2), a, b;
            if (th < 1e-4) {
                a = 0.5 - th2 / 24.0;        /* (1 − cos θ)/θ² */
                b = 1.0 / 6.0 - th2 / 120.0; /* (θ − sin θ)/θ³ */
            } else {
                a = (1.0 - cos(th)) / th2;
                b = (th - sin(th)) / (th2 * th);
            }
            fr_vec3 pr = fr_v3_cross(phi, rho);
            fr_vec3 dp =
                fr_v3_add(fr_v3_add(rho, fr_v3_scale(pr, a)), fr_v3_scale(fr_v3_cross(phi, pr), b));
            fr_quat r = fr_q_normalize(get_q(qi + 3));
            fr_vec3 p = fr_v3_add(fr_v3(qi[0], qi[1], qi[2]), fr_q_rotate(r, dp));
            put_q(qo + 3, fr_q_normalize(fr_q_mul(r, fr_q_exp(phi))));
            qo[0] = p.x;
            qo[1] = p.y;
            qo[2] = p.z;
            break;
        }
        case FR_JOINT_FIXED:
            break;
        }
    }
}

/* ---------------------------------------------------------------- RNEA and CRBA */

void fr_tree_rnea(const fr_tree *t, fr_tree_data *d, const double *qdd, double *tau_out)
{
    fri_tree_ws *w = d->ws;
    fri_tree_positions(t, d);
    fri_tree_velocities(t, d, d->qd, true);
    const fr_svec a0 = fr_sv(fr_v3_zero(), fr_v3_neg(d->gravity));
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_svec a =
            fr_sv_add(fr_xf_apply_m(w->Xup[i], l->parent >= 0 ? w->a[l->parent] : a0), w->c[i]);
        for (int k = 0; k < l->nv; k++) a = fr_sv_mad(a, qdd[l->vi + k], l->S[k]);
        w->a[i] = a;
        fr_svec v = d->vel[i];
        fr_svec f = fr_sv_add(fr_rbi_mulv(l->I, a), fr_sv_crossf(v, fr_rbi_mulv(l->I, v)));
        w->f[i] = fr_sv_sub(f, fr_xf_apply_f(w->X0[i], d->f_ext[i]));
    }
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        double arm = controllable(l) ? l->def.armature : 0.0;
        for (int k = 0; k < l->nv; k++)
            tau_out[l->vi + k] = fri_sdot(l->S[k], w->f[i]) + arm * qdd[l->vi + k];
        if (l->parent >= 0)
            w->f[l->parent] = fr_sv_add(w->f[l->parent], fr_xf_inv_apply_f(w->Xup[i], w->f[i]));
    }
}

void fr_tree_crba(const fr_tree *t, fr_tree_data *d, double *M)
{
    fri_tree_ws *w = d->ws;
    int nv = t->nv;
    fri_tree_positions(t, d);
    memset(M, 0, sizeof(double) * (size_t)nv * (size_t)nv);
    for (int i = 0; i < t->n; i++) w->Ic[i] = t->links[i].I;
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        if (l->parent >= 0)
            w->Ic[l->parent] =
                fr_rbi_add(w->Ic[l->parent], fr_rbi_transform_inv(w->Xup[i], w->Ic[i]));
        if (l->nv == 0) continue;
        fr_svec F[6];
        double arm = controllable(l) ? l->def.armature : 0.0;
        for (int k = 0; k < l->nv; k++) {
            F[k] = fr_rbi_mulv(w->Ic[i], l->S[k]);
            for (int m = 0; m < l->nv; m++)
                M[(l->vi + k) * nv + l->vi + m] = fri_sdot(l->S[m], F[k]) + (k == m ? arm : 0.0);
        }
        for (int j = i; t->links[j].parent >= 0;) {
            for (int k = 0; k < l->nv; k++) F[k] = fr_xf_inv_apply_f(w->Xup[j], F[k]);
            j = t->links[j].parent;
            const fri_link *lj = &t->links[j];
            for (int k = 0; k < l->nv; k++)
                for (int m = 0; m < lj->nv; m++) {
                    double h = fri_sdot(lj->S[m], F[k]);
                    M[(l->vi + k) * nv + lj->vi + m] = h;
                    M[(lj->vi + m) * nv + l->vi + k] = h;
                }
        }
    }
}
