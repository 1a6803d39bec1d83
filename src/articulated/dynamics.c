/*
 * src/articulated: kinematics (cached link positions, world-frame motion subspaces and inertias),
 * RNEA and CRBA in link coordinates, and the position update. Notation follows Featherstone,
 * "Rigid Body Dynamics Algorithms" (2008): Xup_i = i_X_λ(i), X0_i = i_X_0, S_i the motion
 * subspace, c_i = v_i × (S_i qd_i). The ABA and the step are in aba.c.
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

/* E ← E_J E for a revolute joint about ±e_k: a plane rotation of two rows (E_J = R(a, q)ᵀ). */
static void rot_rows(fr_mat3 *E, int k, double angle)
{
    double s = sin(angle), c = cos(angle);
    int i = (k + 1) % 3, j = (k + 2) % 3; /* E_J rows i, j: [c s; −s c] in the (i, j) plane */
    for (int col = 0; col < 3; col++) {
        double ei = E->m[i][col], ej = E->m[j][col];
        E->m[i][col] = c * ei + s * ej;
        E->m[j][col] = -s * ei + c * ej;
    }
}

void fri_tree_positions(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    size_t qbytes = sizeof(double) * (size_t)t->nq;
    if (w->pos_valid && !memcmp(w->qc, d->q, qbytes)) return;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        const double *q = d->q + l->qi;
        const fr_xform *XT = &l->XT;
        fr_mat3 E;  /* E_T E0_λ, then E_J on the left */
        fr_vec3 rj; /* joint origin offset r_T + E_Tᵀ r_J in the parent frame */
        const fr_xform *P = l->parent >= 0 ? &w->X0[l->parent] : NULL;
        if (P)
            E = l->XT_rot_id ? P->E : fr_m3_mul(XT->E, P->E);
        else
            E = XT->E;
        rj = XT->r;
        switch (l->type) {
        case FR_JOINT_REVOLUTE:
            if (l->axis_kind >= 0)
                rot_rows(&E, l->axis_kind, l->axis_sign * q[0]);
            else
                E = fr_m3_mul(fri_joint_xform(l, q).E, E);
            break;
        case FR_JOINT_PRISMATIC:
            rj = fr_v3_add(rj, fr_m3_tmulv(XT->E, fr_v3_scale(l->def.axis, q[0])));
            break;
        case FR_JOINT_SPHERICAL:
        case FR_JOINT_FREE: {
            fr_xform XJ = fri_joint_xform(l, q);
            E = fr_m3_mul(XJ.E, E);
            rj = fr_v3_add(rj, fr_m3_tmulv(XT->E, XJ.r));
            break;
        }
        case FR_JOINT_FIXED:
            break;
        }
        w->X0[i].E = E;
        w->X0[i].r = P ? fr_v3_add(P->r, fr_m3_tmulv(P->E, rj)) : rj;
    }
    memcpy(w->qc, d->q, qbytes);
    w->pos_valid = true;
    w->cfg_valid = false;
}

void fri_tree_config(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    fri_tree_positions(t, d);
    if (w->cfg_valid) return;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        const fr_mat3 E = w->X0[i].E; /* world → link; row r is link axis r in world */
        const fr_vec3 r = w->X0[i].r;
        for (int k = 0; k < l->nv; k++) {
            fr_vec3 sa, sl;
            if (l->axis_kind >= 0) {
                sa = fr_v3_scale(fr_m3_row(&E, l->axis_kind), l->axis_sign);
                sl = fr_v3_zero();
            } else {
                sa = fr_m3_tmulv(E, l->S[k].ang);
                sl = fr_m3_tmulv(E, l->S[k].lin);
            }
            w->Sw[l->vi + k] = fr_sv(sa, fr_v3_add(sl, fr_v3_cross(r, sa)));
        }
        /* rigid inertia about the world origin: Ic rotated (Eᵀ Ic E), parallel axis to c */
        const double m = l->def.mass;
        const fr_vec3 c = fr_v3_add(r, fr_m3_tmulv(E, l->def.com));
        fri_sym6 I;
        /* Eᵀ Ic E: (a, b) = Σ_rs E[r][a] Ic[r][s] E[s][b]; E's rows e0, e1, e2 */
        const fr_vec3 e0 = fr_m3_row(&E, 0), e1 = fr_m3_row(&E, 1), e2 = fr_m3_row(&E, 2);
        fr_vec3 k0, k1, k2; /* Ic E, rows: k_r = Σ_s Ic[r][s] e_s */
        if (l->Ic_diag) {
            k0 = fr_v3_scale(e0, l->def.inertia.m[0][0]);
            k1 = fr_v3_scale(e1, l->def.inertia.m[1][1]);
            k2 = fr_v3_scale(e2, l->def.inertia.m[2][2]);
        } else {
            const fr_mat3 *J = &l->def.inertia;
            k0 = fr_v3_add(fr_v3_add(fr_v3_scale(e0, J->m[0][0]), fr_v3_scale(e1, J->m[0][1])),
                           fr_v3_scale(e2, J->m[0][2]));
            k1 = fr_v3_add(fr_v3_add(fr_v3_scale(e0, J->m[1][0]), fr_v3_scale(e1, J->m[1][1])),
                           fr_v3_scale(e2, J->m[1][2]));
            k2 = fr_v3_add(fr_v3_add(fr_v3_scale(e0, J->m[2][0]), fr_v3_scale(e1, J->m[2][1])),
                           fr_v3_scale(e2, J->m[2][2]));
        }
        /* plus the parallel axis term m (|c|² 1 − c cᵀ) */
        const double mcx = m * c.x, mcy = m * c.y, mcz = m * c.z;
        I.A[0] = e0.x * k0.x + e1.x * k1.x + e2.x * k2.x + (mcy * c.y + mcz * c.z);
        I.A[1] = e0.x * k0.y + e1.x * k1.y + e2.x * k2.y - mcx * c.y;
        I.A[2] = e0.x * k0.z + e1.x * k1.z + e2.x * k2.z - mcx * c.z;
        I.A[3] = e0.y * k0.y + e1.y * k1.y + e2.y * k2.y + (mcx * c.x + mcz * c.z);
        I.A[4] = e0.y * k0.z + e1.y * k1.z + e2.y * k2.z - mcy * c.z;
        I.A[5] = e0.z * k0.z + e1.z * k1.z + e2.z * k2.z + (mcx * c.x + mcy * c.y);
        I.C[0] = I.C[3] = I.C[5] = m;
        I.C[1] = I.C[2] = I.C[4] = 0.0;
        I.B[0] = 0.0, I.B[1] = -mcz, I.B[2] = mcy; /* B = [m c]× */
        I.B[3] = mcz, I.B[4] = 0.0, I.B[5] = -mcx;
        I.B[6] = -mcy, I.B[7] = mcx, I.B[8] = 0.0;
        w->Iw[i] = I;
    }
    w->cfg_valid = true;
}

void fr_tree_velocities(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_svec v = l->parent >= 0 ? w->vw[l->parent] : fr_sv_zero();
        for (int k = 0; k < l->nv; k++) v = fr_sv_mad(v, d->qd[l->vi + k], w->Sw[l->vi + k]);
        w->vw[i] = v;
        d->vel[i] = fr_xf_apply_m(w->X0[i], v);
    }
}

void fr_tree_forward_kinematics(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_ws *w = d->ws;
    fri_tree_config(t, d);
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_svec v = l->parent >= 0 ? w->vw[l->parent] : fr_sv_zero();
        for (int k = 0; k < l->nv; k++) v = fr_sv_mad(v, d->qd[l->vi + k], w->Sw[l->vi + k]);
        w->vw[i] = v;
        const fr_xform *X = &w->X0[i];
        d->vel[i] = fr_xf_apply_m(*X, v);
        d->pose[i].p = X->r;
        d->pose[i].q = fr_m3_to_q(fr_m3_transpose(X->E));
    }
}

/* Xup (link coordinates, for RNEA and CRBA) and X0. */
static void link_transforms(const fr_tree *t, fr_tree_data *d)
{
    fri_tree_positions(t, d);
    for (int i = 0; i < t->n; i++) d->ws->Xup[i] = joint_up(&t->links[i], d->q + t->links[i].qi);
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
    link_transforms(t, d);
    const fr_svec a0 = fr_sv(fr_v3_zero(), fr_v3_neg(d->gravity));
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        int p = l->parent;
        fr_svec vJ = joint_vel(l, d->qd + l->vi);
        fr_svec v = p >= 0 ? fr_sv_add(fr_xf_apply_m(w->Xup[i], w->vl[p]), vJ) : vJ;
        w->vl[i] = v;
        fr_svec a =
            fr_sv_add(fr_xf_apply_m(w->Xup[i], p >= 0 ? w->al[p] : a0), fr_sv_crossm(v, vJ));
        for (int k = 0; k < l->nv; k++) a = fr_sv_mad(a, qdd[l->vi + k], l->S[k]);
        w->al[i] = a;
        fr_svec f = fr_sv_add(fr_rbi_mulv(l->I, a), fr_sv_crossf(v, fr_rbi_mulv(l->I, v)));
        w->f[i] = fr_sv_sub(f, fr_xf_apply_f(w->X0[i], d->f_ext[i]));
    }
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        double arm = fri_controllable(l) ? l->def.armature : 0.0;
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
    link_transforms(t, d);
    memset(M, 0, sizeof(double) * (size_t)nv * (size_t)nv);
    for (int i = 0; i < t->n; i++) w->Ic[i] = t->links[i].I;
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        if (l->parent >= 0)
            w->Ic[l->parent] =
                fr_rbi_add(w->Ic[l->parent], fr_rbi_transform_inv(w->Xup[i], w->Ic[i]));
        if (l->nv == 0) continue;
        fr_svec F[6];
        double arm = fri_controllable(l) ? l->def.armature : 0.0;
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
