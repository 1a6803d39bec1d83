/*
 * src/articulated: mimic joints, q_f = m·q_j + o, as constraints solved after the step's ABA.
 *
 * With G the constraint rows (+1 at the follower, −m at the joint followed) and qdd₀ the step's
 * solution without them, the constrained accelerations are qdd = qdd₀ + R λ, where column k of R
 * is the tree's response to the unit force pair G_kᵀ: one ABA bias and acceleration pass with the
 * articulated inertias of the step (so the implicit PD, damping, armature, hard limits and
 * external inertias of the step are all in it), no velocity products, gravity or external forces.
 * λ solves (G R) λ = b with b chosen so that the Euler position update lands every follower on
 * its constraint: G qd⁺ = −g(q)/dt, i.e. G qdd = (−g(q)/dt − G qd)/dt (or G qdd = 0 for a pure
 * velocity relation). The constraint is linear in q, so q⁺ satisfies it to round-off.
 */
#include <string.h>

#include "internal.h"

/* Response of the tree (accelerations R[nv], link accelerations Ra[n]) to the generalised force
 * tau (nv; NULL: none) and the spatial forces fext (n, world, about the origin; NULL: none), on
 * the articulated inertias of the last aba_inertias. */
void fri_tree_response(const fr_tree *t, fr_tree_data *d, const double *tau, const fr_svec *fext,
                       double *R, fr_svec *Ra)
{
    fri_tree_ws *w = d->ws;
    fr_svec *pA = w->mim_pA;
    double *u = w->mim_u;
    for (int i = 0; i < t->n; i++) pA[i] = fext ? fr_sv_neg(fext[i]) : fr_sv_zero();
    for (int i = t->n - 1; i >= 0; i--) {
        const fri_link *l = &t->links[i];
        int vi = l->vi, par = l->parent;
        if (!tau && pA[i].ang.x == 0.0 && pA[i].ang.y == 0.0 && pA[i].ang.z == 0.0 &&
            pA[i].lin.x == 0.0 && pA[i].lin.y == 0.0 && pA[i].lin.z == 0.0) {
            /* (no force in the subtree: nothing to pass up; a revision has a few feet's) */
            for (int k = 0; k < l->nv; k++) u[vi + k] = 0.0;
            continue;
        }
        for (int k = 0; k < l->nv; k++)
            u[vi + k] = (tau ? tau[vi + k] : 0.0) - fr_sv_dot(w->Sw[vi + k], pA[i]);
        if (par < 0) continue;
        fr_svec pa = pA[i];
        if (!(l->nv == 1 && w->lim_hard[i]))
            for (int k = 0; k < l->nv; k++) pa = fr_sv_mad(pa, u[vi + k], w->W[vi + k]);
        pA[par] = fr_sv_add(pA[par], pa);
    }
    if (!Ra) Ra = pA; /* the bias forces are spent: their room holds the accelerations */
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        int vi = l->vi, nv = l->nv, par = l->parent;
        fr_svec a = par >= 0 ? Ra[par] : fr_sv_zero();
        if (nv == 1) {
            double x =
                w->lim_hard[i] ? 0.0 : w->Dinv[l->dinv_off] * (u[vi] - fr_sv_dot(w->U[vi], a));
            R[vi] = x;
            a = fr_sv_mad(a, x, w->Sw[vi]);
        } else if (nv > 1) {
            double x[6];
            for (int k = 0; k < nv; k++) x[k] = u[vi + k] - fr_sv_dot(w->U[vi + k], a);
            fri_joint_solve(w, l, i, x);
            for (int k = 0; k < nv; k++) {
                R[vi + k] = x[k];
                a = fr_sv_mad(a, x[k], w->Sw[vi + k]);
            }
        }
        Ra[i] = a;
    }
}

void fri_mimic_project(const fr_tree *t, fr_tree_data *d, double dt, bool positions)
{
    int m = t->nmimic, nv = t->nv, n = t->n;
    if (m == 0 || d->mimic_external) return;
    fri_tree_ws *w = d->ws;
    for (int k = 0; k < m; k++) {
        const fri_link *f = &t->links[t->mimic_links[k]];
        const fri_link *j = &t->links[f->mimic];
        double *R = w->mim_R + (size_t)k * (size_t)nv;
        /* the unit force pair G_kᵀ, answered in place (response() reads it in its first pass and
         * writes the accelerations in its second) */
        memset(R, 0, sizeof(double) * (size_t)nv);
        R[f->vi] = 1.0;
        R[j->vi] -= f->def.mimic_multiplier;
        fri_tree_response(t, d, R, NULL, R, w->mim_Ra + (size_t)k * (size_t)n);
    }
    /* G R and the right-hand side */
    for (int r = 0; r < m; r++) {
        const fri_link *f = &t->links[t->mimic_links[r]];
        const fri_link *j = &t->links[f->mimic];
        double mult = f->def.mimic_multiplier;
        for (int k = 0; k < m; k++) {
            const double *R = w->mim_R + (size_t)k * (size_t)nv;
            w->mim_A[r * m + k] = R[f->vi] - mult * R[j->vi];
        }
        double gqdd = d->qdd[f->vi] - mult * d->qdd[j->vi];
        double target = 0.0;
        if (positions) {
            double g = d->q[f->qi] - mult * d->q[j->qi] - f->def.mimic_offset;
            double gqd = d->qd[f->vi] - mult * d->qd[j->vi];
            target = (-g / dt - gqd) / dt;
        }
        w->mim_b[r] = target - gqdd;
    }
    bool ok = fr_lu_solve(w->mim_A, m, w->mim_b);
    for (int k = 0; ok && k < m; k++) ok = isfinite(w->mim_b[k]);
    if (!ok) { /* every joint of a constraint prescribed (hard limits): leave the step as it is */
        d->mimic_singular++;
        for (int k = 0; k < m; k++) w->mim_lambda[k] = 0.0;
        return;
    }
    for (int k = 0; k < m; k++) {
        double lam = w->mim_b[k];
        w->mim_lambda[k] = lam;
        const double *R = w->mim_R + (size_t)k * (size_t)nv;
        const fr_svec *Ra = w->mim_Ra + (size_t)k * (size_t)n;
        for (int i = 0; i < nv; i++) d->qdd[i] += lam * R[i];
        for (int i = 0; i < n; i++) w->a[i] = fr_sv_mad(w->a[i], lam, Ra[i]);
    }
}

void fri_mimic_forces_out(const fr_tree *t, fr_tree_data *d)
{
    if (d->mimic_external) return;
    for (int k = 0; k < t->nmimic; k++) {
        const fri_link *f = &t->links[t->mimic_links[k]];
        const fri_link *j = &t->links[f->mimic];
        double lam = d->ws->mim_lambda[k];
        d->tau_out[f->vi] += lam;
        d->tau_out[j->vi] -= f->def.mimic_multiplier * lam;
    }
}
