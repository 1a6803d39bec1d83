/*
 * The geometry's tangent of a resting pair (docs/contact.md §5, "The geometry's tangent"): the
 * step's model takes the tangent of models built afresh at moved poses
 * (fr_contact_model_measure_tangent), so that its step moves as the next step's build will
 * answer. Without it, small bodies at 5 ms resting near their friction or tipping limit rocked
 * in a growing period 2 and slid or tipped (docs/contact.md §8).
 *
 * The measurement costs six builds. A pair whose bodies have moved, relative to each other at the
 * patch, by less than GT_KEEP stiffening depths since it was measured, and whose model's point
 * and axes are where they were, takes the measured tangent again, for up to GT_MAX_AGE builds:
 * the law's tangent changes by e^x over x depths, so by about 1 % (a resting column's pairs,
 * lifted by its jitter, measured at each build cost it 2.3 times the instructions).
 * Measurements are made after the step's builds, at most GT_PER_STEP a step (a tick's time).
 */
#include <math.h>

#include "world_internal.h"

#define GT_KEEP    0.01
#define GT_MAX_AGE 64
/* measurements a step outside the settle: each costs six builds (100-150 us for a pair of boxes,
 * 300-400 us for a tessellated sphere's pair on this machine); the pairs past it wait, taking
 * their last measurement, longest waiting first */
#define GT_PER_STEP 1
/* the model's point (the centre of pressure, which moves with the depths) moved by at most this
 * share of the patch's width, its t1 turned by at most this many radians. Measured on the shipped
 * pile at rest, a tangent kept over a move of the point by up to this share differs from one
 * measured afresh by at most 5e-3 of its largest entry (in lengths and forces), whether carried to
 * the new point or not (the depths' change that moved the point changes it as much); at 1e-3 the
 * pile measured 0.59 tangents a step, 0.49 now. */
#define GT_KEEP_POINT 1e-2
#define GT_KEEP_TURN  1e-3

/* How far B moved relative to A at the point c (A's frame then) and at the patch's edge r from
 * it, since the poses pa0, pb0 */
static double moved_since(fr_pose pa0, fr_pose pb0, fr_pose pa, fr_pose pb, fr_vec3 c, double r)
{
    const fr_pose rel0 = fr_pose_mul(fr_pose_inverse(pa0), pb0);
    const fr_pose rel = fr_pose_mul(fr_pose_inverse(pa), pb);
    const fr_vec3 cb = fr_pose_apply(fr_pose_inverse(rel0), c); /* c carried by B */
    const double d = fr_v3_dist(fr_pose_apply(rel, cb), c);
    return d + r * fr_q_angle_between(rel.q, rel0.q);
}

void fri_pair_geometry_tangent(fr_world *w, int r, fr_contact_body ca, fr_contact_body cb,
                               bool rest)
{
    fri_pair *p = &w->pairs[r];
    const bool kept = p->gt_kept;
    p->gt_kept = false;
    if (!rest) goto none;
    const int ta = w->model[p->slot_a].type, tb = w->model[p->slot_b].type;
    /* a robot's link takes its normal stiffness from its tree after the build
     * (fri_world_link_contact_scale), which the builds at moved poses would not */
    if (ta == FR_BODY_LINK || tb == FR_BODY_LINK) goto none;
    /* (the constraint contact mode solves rows at the polygon's points, not the model) */
    if (w->def.contact_mode == FR_CONTACT_MODE_CONSTRAINT) goto none;
    if (ta != FR_BODY_DYNAMIC && tb != FR_BODY_DYNAMIC) goto none;
    /* a sphere's or a capsule's patch is lifted by its curvature, and what its builds add to its
     * points' tangent comes from the facets approximating a smooth surface: such a body rolls
     * instead of rocking on an edge, and a rolling one would be measured again at each step (on
     * the shipped pile, spheres and the capsule made 98 % of its 0.49 measurements a step, each
     * costing 300-400 us of a tick) */
    const fr_shape_type ya = w->shapes[p->sa].shape->type, yb = w->shapes[p->sb].shape->type;
    if (ya == FR_SHAPE_SPHERE || ya == FR_SHAPE_CAPSULE || yb == FR_SHAPE_SPHERE ||
        yb == FR_SHAPE_CAPSULE || p->snapped)
        goto none;
    fr_contact_model *m = &p->model;
    if (!(m->area > 0.0) || !(m->ds > 0.0) || !(m->max_depth0 > 1.5 * m->depth0)) goto none;
    const double R = sqrt(m->area);
    p->gt_least = !kept;
    const double least = kept ? 0.0 : FR_CONTACT_GT_MIN;
    const fr_vec3 c_a = fr_pose_apply(fr_pose_inverse(ca.pose), m->point);
    const bool fits =
        p->gt_have && p->gt_age < GT_MAX_AGE && fr_v3_dist(c_a, p->gt_c) <= GT_KEEP_POINT * R &&
        fr_v3_dot(m->t1, p->gt_t1) >= cos(GT_KEEP_TURN) &&
        moved_since(p->gt_pa, p->gt_pb, ca.pose, cb.pose, p->gt_c, R) <= GT_KEEP * m->ds;
    /* a kept measurement that no longer fits is taken until the pair's turn comes */
    if (p->gt_have) {
        fr_contact_model_set_geometry_tangent(m, (const double(*)[3])p->gt_K, least);
        p->gt_kept = m->gt_on;
        p->gt_age++;
    }
    if (fits) {
        p->gt_wait = 0;
        return;
    }
    p->gt_wait++;
    w->gt_queue[w->gt_nqueue++] = r;
    return;
none:
    p->gt_wait = 0;
}

/* The queued pair that has waited longest (the first queued of those) */
static int longest_waiting(const fr_world *w)
{
    int best = -1;
    for (int i = 0; i < w->gt_nqueue; i++) {
        if (w->gt_queue[i] < 0) continue;
        if (best < 0 || w->pairs[w->gt_queue[i]].gt_wait > w->pairs[w->gt_queue[best]].gt_wait)
            best = i;
    }
    return best;
}

void fri_world_geometry_tangents(fr_world *w, fr_contact_body (*ca_of)(const fr_world *, int))
{
    /* (the settle runs before the clock starts: there its pairs are measured as they ask) */
    const int budget = w->settling ? w->gt_nqueue : GT_PER_STEP;
    for (int n = 0; n < budget; n++) {
        const int i = longest_waiting(w);
        if (i < 0) return;
        const int r = w->gt_queue[i];
        w->gt_queue[i] = -1;
        fri_pair *p = &w->pairs[r];
        fr_contact_model *m = &p->model;
        const fr_contact_body ca = ca_of(w, p->slot_a), cb = ca_of(w, p->slot_b);
        const fri_shape_inst *sa = &w->shapes[p->sa], *sb = &w->shapes[p->sb];
        const fr_contact_rebuild g = {sa->shape, sb->shape, sa->local, sb->local,
                                      &p->cache, &w->cw,    &w->poly,  &w->gt_model};
        const double least = p->gt_least ? FR_CONTACT_GT_MIN : 0.0;
        p->gt_wait = 0;
        p->gt_have = false;
        p->gt_kept = false;
        m->gt_on = 0;
        const bool move_a = w->model[p->slot_a].type == FR_BODY_DYNAMIC;
        if (fr_contact_model_measure_tangent(m, &p->params, &p->st, ca, cb, move_a, w->h, &g, least,
                                             p->gt_K) != 1)
            continue;
        p->gt_kept = m->gt_on;
        w->geo_tangents++;
        p->gt_have = true;
        p->gt_age = 0;
        p->gt_pa = ca.pose, p->gt_pb = cb.pose;
        p->gt_c = fr_pose_apply(fr_pose_inverse(ca.pose), m->point), p->gt_t1 = m->t1;
    }
}
