/*
 * The implicit step's model answering the world's solve (include/fureru/contact.h,
 * docs/contact.md §5): the mean wrench over the step and its tangent for a relative motion, the
 * elastic energies, and the friction bond's commit once the step is taken. model.c builds and
 * advances the model.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "contact_internal.h"

/* Point q's law at the force lam: the depth where it carries it and the tangent there (the
 * linear law's at a point that carries nothing). */
static void linearise_point(const fr_contact_model *m, int q, double lam, double *tl, double *K)
{
    const double w = m->pw[q];
    double slope = 0.0;
    *tl = fri_law_t(m->k, m->ds, m->xmax, lam / w);
    fri_law_p(m->k, m->ds, m->xmax, *tl, &slope);
    *K = w * (lam > 0.0 ? slope : m->k);
}

void fr_contact_model_linearise(fr_contact_model *m, const double *lam)
{
    for (int q = 0; q < m->npts; q++) {
        if (m->lin_valid && lam[q] == m->lin_lam[q]) continue; /* kept */
        m->lin_lam[q] = lam[q];
        linearise_point(m, q, lam[q], &m->lin_t[q], &m->lin_K[q]);
    }
    m->lin_valid = 1;
}

/* The geometry's tangent's share of a response (fr_contact_model_set_geometry_tangent; G is
 * symmetric and positive semi-definite): the force −G·u, u = h·y, the tangent h²·G and the
 * energy ½·uᵀ·G·u, unless the points' normal tangent (dNq per point, ∂N'_q/∂ṫ_q) with it is not
 * positive definite (every point unloading within the step: then the points alone answer) or the
 * patch's force with it would pull. */
static void geometry_tangent(const fr_contact_model *m, const double y[6], double h,
                             const double *dNq, bool tangent, double *N, fr_contact_response *r)
{
    double P[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double c = 0.0;
            for (int q = 0; q < m->npts; q++) {
                double e[3] = {0.0, 0.0, 1.0};
                fri_point_lever(m, q, e);
                c += dNq[q] * e[i] * e[j];
            }
            P[i][j] = c + h * m->gt[i][j];
        }
    /* Sylvester: P positive definite */
    const double d2 = P[0][0] * P[1][1] - P[0][1] * P[1][0];
    const double d3 = P[0][0] * (P[1][1] * P[2][2] - P[1][2] * P[2][1]) -
                      P[0][1] * (P[1][0] * P[2][2] - P[1][2] * P[2][0]) +
                      P[0][2] * (P[1][0] * P[2][1] - P[1][1] * P[2][0]);
    if (!(P[0][0] > 0.0 && d2 > 0.0 && d3 > 0.0)) return;
    const double u[3] = {h * y[0], h * y[1], h * y[2]};
    double f[3], e = 0.0;
    for (int i = 0; i < 3; i++) {
        f[i] = 0.0;
        for (int j = 0; j < 3; j++) f[i] += m->gt[i][j] * u[j];
        e += 0.5 * u[i] * f[i];
    }
    /* nor where it would pull: a build's force never does, and a linearisation predicting a pull
     * has been taken far beyond the moves it was measured over (a heavy box landing late on a
     * resting pair moved it 40 stiffening depths in the step; the spring held 9.6 mJ that no build
     * then had, and its end's energy rose 27 times as much as without the tangent) */
    if (!(r->w[2] - f[2] < 0.0)) return;
    for (int i = 0; i < 3; i++) {
        r->w[i] -= f[i];
        if (tangent)
            for (int j = 0; j < 3; j++) r->C[i][j] += h * h * m->gt[i][j];
    }
    *N = fmax(0.0, -r->w[2]); /* (w[2] is the force along n on A, −N') */
    r->gt_energy = e;
}

void fr_contact_respond(const fr_contact_model *m, const double y[6], double h, double mu,
                        const double *lam, double nlag, unsigned flags, fr_contact_response *r)
{
    const bool tangent = flags & FR_RESPOND_TANGENT;
    /* C is the bulk of the response: cleared and filled only when asked for */
    memset(r->w, 0, sizeof r->w);
    if (tangent) memset(r->C, 0, sizeof r->C);
    memset(&r->normal, 0, sizeof *r - offsetof(fr_contact_response, normal));
    r->slip = 1;
    if (!(m->area > 0.0)) return;
    /* ---- normal: each quadrature point's depth at the step's end */
    double N = 0.0, Nq[FR_CONTACT_NPTS], dNq[FR_CONTACT_NPTS];
    for (int q = 0; q < m->npts; q++) {
        const double w = m->pw[q];
        double lv[2];
        fri_point_lever(m, q, lv);
        double td = y[2] + lv[0] * y[0] + lv[1] * y[1]; /* ṫ at the point */
        double tp = m->pt0[q] + h * td;
        r->depth[q] = tp;
        double Nel, K, slope = 0.0;
        if (lam) {
            /* linearised at the force iterate λ: Nel = λ + K(λ)·(t' − t(λ)), exact at t' = t(λ) */
            double tl;
            if (m->lin_valid && lam[q] == m->lin_lam[q]) {
                tl = m->lin_t[q];
                K = m->lin_K[q];
            } else {
                linearise_point(m, q, lam[q], &tl, &K);
            }
            Nel = lam[q] + K * (tp - tl);
            r->mismatch[q] = tp - tl;
            /* the next iterate: the tangent's value (Newton's; the law itself would overshoot
             * exponentially when deeper), but the law's own where the tangent, which lies below
             * the convex law, would drop a point that still presses */
            r->elastic[q] = Nel > 0.0 ? Nel : w * fri_law_p(m->k, m->ds, m->xmax, tp, NULL);
        } else {
            Nel = w * fri_law_p(m->k, m->ds, m->xmax, tp, &slope);
            K = w * slope;
            r->elastic[q] = Nel;
        }
        double n = Nel + m->c * w * td, dn = h * K + m->c * w; /* ∂N'_q/∂ṫ_q */
        if (!(n > 0.0)) {
            n = 0.0;
            /* at the kink the tangent may be either side's: with FR_RESPOND_KINK_LOADED, within a
             * stiffening depth of touching, the loaded side's */
            dn = ((flags & FR_RESPOND_KINK_LOADED) && m->ds > 0.0 && tp > -m->ds) ||
                         (flags & FR_RESPOND_KINK_POINT(q))
                     ? h * w * m->k + m->c * w
                     : 0.0;
        }
        Nq[q] = n;
        dNq[q] = dn;
        N += n;
    }
    if (m->max_force > 0.0 && N > m->max_force) {
        double sc = m->max_force / N;
        for (int q = 0; q < m->npts; q++) Nq[q] *= sc, dNq[q] = 0.0;
        N = m->max_force;
    }
    for (int q = 0; q < m->npts; q++) {
        double e[3] = {0.0, 0.0, 1.0};
        fri_point_lever(m, q, e);
        /* the point's force −N_q·n on A, about c */
        r->w[0] -= Nq[q] * e[0];
        r->w[1] -= Nq[q] * e[1];
        r->w[2] -= Nq[q];
        if (tangent && dNq[q] > 0.0) {
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) r->C[i][j] += h * dNq[q] * e[i] * e[j];
        }
    }
    if (m->gt_on && N > 0.0) geometry_tangent(m, y, h, dNq, tangent, &N, r);
    r->normal = N;
    /* ---- friction: the elasto-plastic bond, returned radially onto |z| = μ·N' */
    const double S[3] = {1.0, 1.0, m->rbar};
    const double yf[3] = {y[3], y[4], m->rbar * y[5]};
    const double s = h * m->kf + m->df;
    double zt[3], tn2 = 0.0;
    for (int i = 0; i < 3; i++) {
        zt[i] = -(m->kf * m->q0[i] + s * yf[i]);
        tn2 += zt[i] * zt[i];
    }
    const double tn = sqrt(tn2), F = mu * (nlag >= 0.0 ? nlag : N);
    r->trial = tn;
    if (!(F > 0.0) || !(m->kf > 0.0)) return; /* no friction: z = 0, slip */
    if (tn <= F * (1.0 + FR_CONTACT_STICK_SLACK) + s * m->stick_speed) {
        r->slip = 0;
        for (int i = 0; i < 3; i++) {
            r->z[i] = zt[i];
            r->bond[i] = m->q0[i] + h * yf[i];
        }
        if (tangent)
            for (int i = 0; i < 3; i++) r->C[3 + i][3 + i] = h * s * S[i] * S[i];
    } else {
        double sc = F / tn;
        for (int i = 0; i < 3; i++) {
            r->z[i] = zt[i] * sc;
            r->bond[i] = -r->z[i] / m->kf; /* the spring alone holds the kinetic force */
        }
        if (tangent && (flags & FR_RESPOND_STICK_TANGENT))
            for (int i = 0; i < 3; i++) r->C[3 + i][3 + i] = h * s * S[i] * S[i];
        else if (tangent)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    double zz = (i == j) - zt[i] * zt[j] / tn2;
                    r->C[3 + i][3 + j] = h * s * sc * zz * S[i] * S[j];
                }
    }
    r->w[3] = r->z[0];
    r->w[4] = r->z[1];
    r->w[5] = m->rbar * r->z[2];
}

/* C (local) → Eᵀ C E (world axes at the model's point). E's rows are (t1; 0), (t2; 0), (0; n),
 * (0; t1), (0; t2), (n; 0): with R the rotation of rows t1, t2, n, the local angular components
 * are rows 0, 1, 5 and the linear ones 3, 4, 2, so each 3×3 block of the result is Rᵀ·C_xy·R of
 * C's block between those rows (C is symmetric: the mixed blocks are each other's transpose). */
void fr_contact_tangent_world(const fr_contact_model *m, const double C[6][6], fr_mat6 *out)
{
    static const int ang[3] = {0, 1, 5}, lin[3] = {3, 4, 2};
    const fr_vec3 t1 = m->t1, t2 = m->t2, n = m->normal;
    const double R[3][3] = {{t1.x, t1.y, t1.z}, {t2.x, t2.y, t2.z}, {n.x, n.y, n.z}};
    for (int blk = 0; blk < 3; blk++) {
        const int *ri = blk == 2 ? lin : ang, *ci = blk == 0 ? ang : lin;
        const int oi = blk == 2 ? 3 : 0, oj = blk == 0 ? 0 : 3;
        double T[3][3]; /* C_xy·R */
        for (int k = 0; k < 3; k++)
            for (int b = 0; b < 3; b++)
                T[k][b] = C[ri[k]][ci[0]] * R[0][b] + C[ri[k]][ci[1]] * R[1][b] +
                          C[ri[k]][ci[2]] * R[2][b];
        for (int a = 0; a < 3; a++)
            for (int b = blk == 1 ? 0 : a; b < 3; b++) {
                double v = R[0][a] * T[0][b] + R[1][a] * T[1][b] + R[2][a] * T[2][b];
                out->m[oi + a][oj + b] = v;
                out->m[oj + b][oi + a] = v;
            }
    }
}

double fr_contact_model_energy(const fr_contact_model *m)
{
    if (!(m->area > 0.0)) return 0.0;
    double e = 0.0;
    for (int q = 0; q < m->npts; q++) e += m->pw[q] * fri_law_e(m->k, m->ds, m->xmax, m->pt0[q]);
    return e + m->e_res +
           0.5 * m->kf * (m->q0[0] * m->q0[0] + m->q0[1] * m->q0[1] + m->q0[2] * m->q0[2]);
}

/* The pressure's elastic energy at the step's end: each point at the depth where the law carries
 * its elastic force (the depth the solve reached, once converged), and the linear law's rest
 * (e_res: the thickness' departure from its fit, whose change over the step is of third order)
 * while the patch still presses. */
static double pressure_energy_end(const fr_contact_model *m, const fr_contact_response *r)
{
    double e = 0.0;
    for (int q = 0; q < m->npts; q++) {
        double t = fri_law_t(m->k, m->ds, m->xmax, r->elastic[q] / m->pw[q]);
        e += m->pw[q] * fri_law_e(m->k, m->ds, m->xmax, t);
    }
    return e > 0.0 ? e + m->e_res : e;
}

double fr_contact_response_energy(const fr_contact_model *m, const fr_contact_response *r)
{
    if (!(m->area > 0.0)) return 0.0;
    return pressure_energy_end(m, r) + r->gt_energy +
           0.5 * m->kf *
               (r->bond[0] * r->bond[0] + r->bond[1] * r->bond[1] + r->bond[2] * r->bond[2]);
}

void fr_contact_model_commit(const fr_contact_model *m, const fr_contact_response *r,
                             const fr_contact_body *a, const fr_contact_body *b,
                             fr_contact_state *st)
{
    if (!(m->area > 0.0) || !st->active) return;
    const fr_pose pb = b->pose;
    st->normal = m->normal;
    /* the contact point and B's spin reference, carried by the bodies to their new poses */
    fr_vec3 c = fr_pose_apply(a->pose, st->anchor_a);
    fr_vec3 eref = fr_q_rotate(pb.q, st->axis_b);
    eref = fr_v3_mad(eref, -fr_v3_dot(eref, m->normal), m->normal);
    double en = fr_v3_norm(eref);
    eref = en > 0.5 ? fr_v3_scale(eref, 1.0 / en) : m->t1;
    st->bond_energy =
        0.5 * m->kf * (r->bond[0] * r->bond[0] + r->bond[1] * r->bond[1] + r->bond[2] * r->bond[2]);
    if (!(r->normal > 0.0)) {
        /* unloaded: the bond restarts where the bodies are, ready to stick when loaded again */
        fri_bond_write(st, a, b, m->normal, c, fr_v3_zero(), 0.0, eref);
        st->sliding = 0;
        st->bond_energy = 0.0;
        return;
    }
    if (!r->slip) {
        st->sliding = 0; /* the anchors written at the step's start moved with the bodies */
        return;
    }
    /* slipping: the spring alone holds the kinetic force at the new poses */
    double kf = m->kf > 0.0 ? m->kf : 1.0;
    fr_vec3 u =
        fr_v3_scale(fr_v3_add(fr_v3_scale(m->t1, r->z[0]), fr_v3_scale(m->t2, r->z[1])), -1.0 / kf);
    double phi = m->rbar > 0.0 ? -r->z[2] / (kf * m->rbar) : 0.0;
    fri_bond_write(st, a, b, m->normal, c, u, phi, eref);
    st->sliding = 1;
}
