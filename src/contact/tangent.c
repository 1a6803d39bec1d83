/*
 * The geometry's tangent (include/fureru/contact.h, docs/contact.md §5): what a model built afresh
 * at moved poses answers, measured by central differences and kept in the step's model, so that
 * the step moves as the next step's build will answer.
 */
#include <math.h>
#include <string.h>

#include "contact_internal.h"

/* The moves, in stiffening depths at the patch's edge (√A from its point): central differences
 * of the exponential law err by about GT_MOVE²/6 of its tangent; the builds' rounding (moves of
 * a thousandth of a depth showed couplings of 5e-6 of the diagonal that are not there) shrinks
 * as 1/GT_MOVE. */
#define GT_MOVE 0.1

/* b turned by rv about c, then moved by tv */
static fr_pose moved(fr_pose b, fr_vec3 c, fr_vec3 rv, fr_vec3 tv)
{
    const fr_quat dq = fr_q_exp(rv);
    b.q = fr_q_normalize(fr_q_mul(dq, b.q));
    b.p = fr_v3_add(fr_v3_add(c, fr_q_rotate(dq, fr_v3_sub(b.p, c))), tv);
    return b;
}

int fr_contact_model_measure_tangent(fr_contact_model *m, const fr_contact_params *p,
                                     const fr_contact_state *st, fr_contact_body a,
                                     fr_contact_body b, bool move_a, double dt,
                                     const fr_contact_rebuild *g, double least, double Kout[3][3])
{
    if (!m || !p || !st || !g || !g->shape_a || !g->shape_b || !g->cache || !g->work || !g->poly ||
        !g->scratch)
        return FR_ERR_INVAL;
    /* lifted: thickest over mean above 1.5 (1 for a uniform slab, 2 for a wedge whose edge
     * touches; fr_contact_model_advance's rule); a uniform slab's points move as a build places
     * them, and its tangent is the points' */
    if (!(m->area > 0.0) || !(m->ds > 0.0) || !(m->max_depth0 > 1.5 * m->depth0)) return 0;
    /* the builds see the bodies at rest (velocities set only a new bond's slide) */
    a.v = a.w = a.turn = b.v = b.w = b.turn = fr_v3_zero();
    const double el = GT_MOVE * m->ds, ea = el / sqrt(m->area);
    const fr_vec3 ax[3] = {m->t1, m->t2, m->normal};
    double K[3][3];
    for (int k = 0; k < 3; k++) {
        double wv[2][3];
        for (int s = 0; s < 2; s++) {
            /* A relative to B turned by rv about m's point and moved by tv: A so moved, or B
             * the other way */
            const double e = (s ? -1.0 : 1.0) * (move_a ? 1.0 : -1.0);
            const fr_vec3 rv = k < 2 ? fr_v3_scale(ax[k], e * ea) : fr_v3_zero();
            const fr_vec3 tv = k < 2 ? fr_v3_zero() : fr_v3_scale(ax[2], e * el);
            fr_contact_body a2 = a, b2 = b;
            if (move_a)
                a2.pose = moved(a.pose, m->point, rv, tv);
            else
                b2.pose = moved(b.pose, m->point, rv, tv);
            fr_collide_cache cache = *g->cache;
            int hit = fr_collide_pair(g->shape_a, fr_pose_mul(a2.pose, g->local_a), g->shape_b,
                                      fr_pose_mul(b2.pose, g->local_b), &cache, g->work, g->poly);
            if (hit < 0) return hit;
            if (hit == 0) return 0;     /* (apart at a move: no tangent to take) */
            fr_contact_state st2 = *st; /* as the next step's build finds it */
            int err =
                fr_contact_model_build(p, g->poly, 0.0, NULL, 0.0, &a2, &b2, dt, &st2, g->scratch);
            if (err) return err;
            if (!(g->scratch->area > 0.0)) return 0;
            fr_contact_model_start_wrench(g->scratch, m, wv[s]);
        }
        const double d = 2.0 * (k < 2 ? ea : el);
        for (int j = 0; j < 3; j++) K[j][k] = -(wv[0][j] - wv[1][j]) / d;
    }
    fr_contact_model_set_geometry_tangent(m, K, least);
    if (Kout) memcpy(Kout, K, sizeof K);
    return 1;
}

void fr_contact_model_set_geometry_tangent(fr_contact_model *m, const double K[3][3], double least)
{
    m->gt_on = 0;
    if (!(m->area > 0.0)) return;
    /* in lengths and forces, u' = (R·θ1, R·θ2, n), w' = (τ1/R, τ2/R, f): the projection below
     * needs one unit along every axis */
    const double R = sqrt(m->area), d[3] = {1.0 / R, 1.0 / R, 1.0};
    double P[3][3]; /* the points' own */
    memset(P, 0, sizeof P);
    for (int q = 0; q < m->npts; q++) {
        if (!(m->pt0[q] > 0.0)) continue; /* (lin_K of a point that carries nothing is k's) */
        double e[3] = {0.0, 0.0, 1.0};
        fri_point_lever(m, q, e);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) P[i][j] += m->lin_K[q] * e[i] * e[j];
    }
    fr_mat3 S;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double kij = K[i][j], kji = K[j][i];
            /* the differences' rounding */
            const double fl = FR_CONTACT_GT_FLOOR * sqrt(fabs(K[i][i] * K[j][j]));
            if (i != j && fabs(kij) < fl) kij = 0.0;
            if (i != j && fabs(kji) < fl) kji = 0.0;
            S.m[i][j] = (0.5 * (kij + kji) - P[i][j]) * d[i] * d[j];
            if (!isfinite(S.m[i][j])) return;
        }
    /* the stiffer directions only */
    fr_vec3 ev;
    fr_mat3 V;
    fr_m3_eigen_sym(S, &ev, &V);
    const double l[3] = {fmax(ev.x, 0.0), fmax(ev.y, 0.0), fmax(ev.z, 0.0)};
    double G[3][3], most = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double g = 0.0;
            for (int k = 0; k < 3; k++) g += V.m[i][k] * l[k] * V.m[j][k];
            G[i][j] = g / (d[i] * d[j]);
            const double pp = fabs(P[i][i] * P[j][j]);
            most = fmax(most, pp > 0.0 ? fabs(G[i][j]) / sqrt(pp) : INFINITY);
        }
    if (!(most >= least)) return; /* (NaN too) */
    memcpy(m->gt, G, sizeof G);
    m->gt_on = 1;
}

void fr_contact_model_start_wrench(const fr_contact_model *m, const fr_contact_model *ref,
                                   double out[3])
{
    fr_vec3 tau = fr_v3_zero(), f = fr_v3_zero();
    for (int q = 0; q < m->npts; q++) {
        if (!(m->pn0[q] > 0.0)) continue;
        const fr_vec3 P = fr_v3_add(
            m->point, fr_v3_add(fr_v3_scale(m->t1, m->px[q]), fr_v3_scale(m->t2, m->py[q])));
        const fr_vec3 fq = fr_v3_scale(m->normal, -m->pn0[q]); /* on A */
        f = fr_v3_add(f, fq);
        tau = fr_v3_add(tau, fr_v3_cross(fr_v3_sub(P, ref->point), fq));
    }
    out[0] = fr_v3_dot(tau, ref->t1);
    out[1] = fr_v3_dot(tau, ref->t2);
    out[2] = fr_v3_dot(f, ref->normal);
}
