/*
 * Landings found late (docs/contact.md §5, "Landings found late"). A model rebuilt at a step's
 * start from the geometry can hold more elastic energy than the last step's solve predicted for
 * the same pair at its end: the linear model missed how far the bodies went into each other (a
 * face turning onto the ground, a corner striking: the arcs of a turn are straight lines to it).
 * Released by this step, that excess is energy from nowhere (a 5 mm cube tumbling down its slope
 * at 1 ms gained up to 1.9e-3 of m·g·h in a landing). Had the contact been found in time, its
 * force would have taken that energy from the bodies' approach as they went in; so it is taken
 * now: an impulse along the pair's normal at its point, equal and opposite on its bodies
 * (momentum kept), whose loss of kinetic energy is the excess — at most all of the approach,
 * which a normal impulse can stop but not reverse. What the approach cannot pay (an overlap that
 * holds more than the bodies' whole motion, the stiffened law's far end) the step's solve mostly
 * dissipates; for a pair alone on its bodies the step is then held to the energy they had
 * (fri_world_contacts_late). The contact stage measures each rebuilt model (fri_late_measure)
 * and takes the excesses once its pairs are built (fri_late_take).
 */
#include "world_internal.h"

/* a rebuilt model counts as found late when it holds more than the prediction by this share of
 * its own energy */
#define LATE_REL 1e-3

/* A side's energy, J: a free body's kinetic and gravity's, a link's robot's (less its joint
 * forces' work over the step when `step`), nothing for the others */
static double side_energy(const fr_world *w, int slot, bool step)
{
    if (w->model[slot].type == FR_BODY_LINK) return fri_link_robot_energy(w, slot, step);
    if (w->model[slot].type != FR_BODY_DYNAMIC) return 0.0;
    const fri_body_model *m = &w->model[slot];
    const fri_body_state *s = &w->state[slot];
    const fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
    return 0.5 * m->mass * fr_v3_norm2(s->vel) + 0.5 * fr_v3_dot(wb, fr_m3_mulv(m->inertia, wb)) -
           m->mass * fr_v3_dot(w->def.gravity, s->pose.p);
}

void fri_late_measure(fr_world *w, fri_pair *p, double pred)
{
    if (w->steps == 0 || w->settling) return;
    for (int side = 0; side < 2; side++) {
        const int slot = side ? p->slot_b : p->slot_a;
        /* (a kinematic body's drive does work on the pair: not energy from nowhere; a body
         * placed since the last step brings the placement's) */
        if (w->model[slot].type == FR_BODY_KINEMATIC || w->state[slot].placed == w->steps + 1)
            return;
    }
    /* (one link at most: its tree's response is taken alone) */
    if (w->model[p->slot_a].type == FR_BODY_LINK && w->model[p->slot_b].type == FR_BODY_LINK)
        return;
    const double still[6] = {0};
    fr_contact_response r;
    fr_contact_respond(&p->model, still, 0.0, p->mu, NULL, -1.0, 0u, &r);
    const double e0 = fr_contact_response_energy(&p->model, &r);
    if (e0 - pred > LATE_REL * e0) p->late = e0 - pred;
    p->late_cap = pred; /* (the pair's part; late_take adds its sides') */
}

/* a body's velocity at x */
static fr_vec3 point_vel(const fr_world *w, int slot, fr_vec3 x)
{
    const fri_body_state *s = &w->state[slot];
    if (w->model[slot].type == FR_BODY_STATIC) return fr_v3_zero();
    return fr_v3_add(s->vel, fr_v3_cross(s->angvel, fr_v3_sub(x, s->pose.p)));
}

/* The pair's sides' inverse mass at x (1/kg, world axes): a free body's, a link's tree's (its
 * response kept for late_push), none for the others */
static fr_mat3 late_inv_mass(fr_world *w, const fri_pair *p, fr_vec3 x)
{
    fr_mat3 K = fr_m3_zero();
    for (int side = 0; side < 2; side++) {
        const int slot = side ? p->slot_b : p->slot_a;
        if (w->model[slot].type == FR_BODY_LINK) {
            K = fr_m3_add(K, fri_link_inv_mass(w, slot, x));
            continue;
        }
        if (w->model[slot].type != FR_BODY_DYNAMIC) continue;
        const fri_body_state *s = &w->state[slot];
        const fri_body_model *m = &w->model[slot];
        const fr_mat3 Iw = fr_m3_rotate(fr_q_to_m3(s->pose.q), m->inv_inertia);
        const fr_mat3 rx = fr_m3_skew(fr_v3_sub(x, s->pose.p));
        K = fr_m3_add(K, fr_m3_add(fr_m3_scale(fr_m3_identity(), m->inv_mass),
                                   fr_m3_mul(fr_m3_mul(rx, Iw), fr_m3_transpose(rx))));
    }
    return K;
}

/* The impulse P at x on B, −P on A (after late_inv_mass at x); `start`: the step starts at the
 * new velocities */
static void late_push(fr_world *w, const fri_pair *p, fr_vec3 x, fr_vec3 P, bool start)
{
    for (int side = 0; side < 2; side++) {
        const int slot = side ? p->slot_b : p->slot_a;
        const fr_vec3 J = side ? P : fr_v3_neg(P);
        if (w->model[slot].type == FR_BODY_LINK) {
            fri_link_push(w, slot, J);
            continue;
        }
        if (w->model[slot].type != FR_BODY_DYNAMIC) continue;
        fri_body_state *s = &w->state[slot];
        const fri_body_model *m = &w->model[slot];
        const fr_vec3 L = fr_q_unrotate(s->pose.q, fr_v3_cross(fr_v3_sub(x, s->pose.p), J));
        s->vel = fr_v3_mad(s->vel, m->inv_mass, J);
        s->angvel = fr_v3_add(s->angvel, fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, L)));
        if (start) s->vel0 = s->vel, s->angvel0 = s->angvel;
    }
}

/* Whether `slot` is `other` or a link of the same robot */
static bool same_owner(const fr_world *w, int slot, int other)
{
    if (slot == other) return true;
    return w->model[slot].type == FR_BODY_LINK && w->model[other].type == FR_BODY_LINK &&
           w->model[slot].robot == w->model[other].robot;
}

/* The pair's sides (a free body, a link's whole robot) touch nothing else this step and no
 * joint or spring holds them: their energy and the pair's are all the step changes there */
static bool late_alone(const fr_world *w, const fri_pair *p)
{
    for (int side = 0; side < 2; side++) {
        const int slot = side ? p->slot_b : p->slot_a;
        const int type = w->model[slot].type;
        if (type != FR_BODY_DYNAMIC && type != FR_BODY_LINK) continue;
        for (int c = 0; c < w->ncontacts; c++) {
            const fri_pair *o = &w->pairs[w->contacts[c]];
            if (o != p && (same_owner(w, o->slot_a, slot) || same_owner(w, o->slot_b, slot)))
                return false;
        }
        for (int j = 0; j < w->njoints; j++) {
            const int ja = fri_body_slot(w, w->joints[j].def.a);
            const int jb = fri_body_slot(w, w->joints[j].def.b);
            if ((ja >= 0 && same_owner(w, ja, slot)) || (jb >= 0 && same_owner(w, jb, slot)))
                return false;
        }
        for (int k = 0; k < w->nsprings; k++) {
            const int ks = fri_body_slot(w, w->springs[k].def.body);
            if (ks >= 0 && same_owner(w, ks, slot)) return false;
        }
    }
    return true;
}

void fri_late_take(fr_world *w)
{
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        const double cap = p->late_cap;
        p->late_check = false;
        if (!(p->late > 0.0)) continue;
        const fr_vec3 n = p->model.normal, x = p->model.point;
        /* m/s: A's point goes into B along n; 1/kg: the sides' inverse mass along n there */
        const double v =
            fr_v3_dot(n, fr_v3_sub(point_vel(w, p->slot_a, x), point_vel(w, p->slot_b, x)));
        const double im = fr_v3_dot(n, fr_m3_mulv(late_inv_mass(w, p, x), n));
        w->stats.late++;
        w->stats.late_energy += p->late;
        /* the impulse j whose loss j·v − j²·im/2 is the excess (all of the approach, v/im, when
         * the excess is more than it holds; written without the difference's cancellation) */
        double j = 0.0, left = p->late;
        if (v > 0.0 && im > 0.0 && isfinite(im)) {
            const double d = v * v - 2.0 * p->late * im;
            j = d > 0.0 ? 2.0 * p->late / (v + sqrt(d)) : v / im;
            left = d > 0.0 ? 0.0 : p->late - 0.5 * v * v / im;
        }
        w->stats.late_left += left;
        if (left > 0.0 && late_alone(w, p)) {
            p->late_cap = cap + side_energy(w, p->slot_a, false) + side_energy(w, p->slot_b, false);
            p->late_check = true;
        }
        if (j > 0.0) late_push(w, p, x, fr_v3_scale(n, j), true);
    }
}

void fri_world_contacts_late(fr_world *w)
{
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        if (!p->late_check) continue;
        p->late_check = false;
        const double gain = fr_contact_response_energy(&p->model, &p->resp) +
                            side_energy(w, p->slot_a, true) + side_energy(w, p->slot_b, true) -
                            p->late_cap;
        if (!(gain > 0.0)) continue;
        /* the plastic impulse at the pair's point against its relative velocity there, scaled
         * to take the gain (at most all of that velocity: what the sides can give) */
        const fr_vec3 x = p->model.point;
        const fr_vec3 u = fr_v3_sub(point_vel(w, p->slot_a, x), point_vel(w, p->slot_b, x));
        fr_mat3 Kinv;
        if (!fr_m3_inverse(late_inv_mass(w, p, x), &Kinv)) continue;
        const fr_vec3 P = fr_m3_mulv(Kinv, u); /* the impulse on B that stops u */
        const double q = fr_v3_dot(u, P);      /* twice the kinetic energy it takes */
        if (!(q > 0.0) || !isfinite(q)) continue;
        const double r = 2.0 * gain / q;
        const double lam = r >= 1.0 ? 1.0 : r / (1.0 + sqrt(1.0 - r));
        w->stats.late_held += fmin(gain, 0.5 * q);
        late_push(w, p, x, fr_v3_scale(P, lam), false);
    }
}
