/*
 * Landings found late (docs/contact.md §5, "Landings found late"). A model rebuilt at a step's
 * start from the geometry can hold far more elastic energy than the last step's solve predicted
 * for the same pair at its end: the linear model missed how far the bodies went into each other
 * (a face turning onto the ground, a corner striking: the arcs of a turn are straight lines to
 * it). Released by this step, that excess is energy from nowhere (a 5 mm block tumbling down its
 * slope at 1 ms rose by up to 0.76 of m·g·h in a step). Had the contact been found in time, its
 * force would have taken that energy from the bodies' approach as they went in:
 * - where the approach holds it all, it is taken at the step's start by an impulse along the
 *   pair's normal at its point, equal and opposite on its sides (momentum kept), whose loss of
 *   kinetic energy is the excess;
 * - where it does not (an overlap holding more than the bodies' whole motion, on the stiffened
 *   law's far end, or a pair that already separates), the step's solve dissipates most of it,
 *   and the island of the step's contacts that holds it is then held to the energy it had at the
 *   last step's end, by at most that excess (fri_world_contacts_late); a pair alone in its
 *   island first gives all of its approach. (Taking part of the approach of a pair among others
 *   drove the sides' other contacts and made the solve release more of the rest: a quadruped's
 *   feet rose by up to 0.1 J a tick at 3–10 ms, 0.005 J before; a new user's trial.)
 * The contact stage measures each rebuilt model (fri_late_measure) and takes the
 * excesses once its pairs are built (fri_late_take).
 */
#include "world_internal.h"

/* a rebuilt model counts as found late when it holds more than the prediction by this share of
 * its own energy (twice the prediction: a landing's is 10³–10⁵ times it; at 1e-3 a box riding on
 * the walking hexapod was pushed at nearly every step and took three times the Newton
 * iterations, a new user's trial) */
#define LATE_REL 0.5
/* and as a landing, whose rise the hold may take from the bodies' turn too, when it holds more
 * than ten times it */
#define LATE_LANDING 9.0

/* A side's energy, J: a free body's kinetic and gravity's, a link's robot's, nothing for the
 * others; with `step`, less the work done on it over the step from outside (forces applied with
 * fr_body_apply_force/torque, the robots' joint forces), as fri_world_energy_end books it */
static double side_energy(const fr_world *w, int slot, bool step)
{
    if (w->model[slot].type == FR_BODY_LINK) return fri_link_robot_energy(w, slot, step);
    if (w->model[slot].type != FR_BODY_DYNAMIC) return 0.0;
    const fri_body_model *m = &w->model[slot];
    const fri_body_state *s = &w->state[slot];
    const fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
    double e = 0.5 * m->mass * fr_v3_norm2(s->vel) +
               0.5 * fr_v3_dot(wb, fr_m3_mulv(m->inertia, wb)) -
               m->mass * fr_v3_dot(w->def.gravity, s->pose.p);
    if (step)
        e -= 0.5 * w->h *
             (fr_v3_dot(s->uforce, fr_v3_add(s->vel0, s->vel)) +
              fr_v3_dot(s->utorque, fr_v3_add(s->angvel0, s->angvel)));
    return e;
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
    /* (a link against anything but a fixed body: the tree's step and the free body's solve take
     * each other's motion as given, so their prediction is not the pair's — a box riding on a
     * walking robot; two links: each tree's response is taken alone) */
    const int ta = w->model[p->slot_a].type, tb = w->model[p->slot_b].type;
    if ((ta == FR_BODY_LINK && tb != FR_BODY_STATIC) ||
        (tb == FR_BODY_LINK && ta != FR_BODY_STATIC))
        return;
    const double still[6] = {0};
    fr_contact_response r;
    fr_contact_respond(&p->model, still, 0.0, p->mu, NULL, -1.0, 0u, &r);
    const double e0 = fr_contact_response_energy(&p->model, &r);
    if (e0 - pred > LATE_REL * e0) p->late = e0 - pred;
    p->late_cap = pred;
    p->late_pred = true;
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

/*
 * Islands (union–find over body slots; a robot's links are one node, its first link's slot;
 * static and kinematic bodies join nothing): what is left of an excess is held per island of
 * this step's contacts, whose energy is all the step changes there.
 */
static int node_of(const fr_world *w, int slot)
{
    const int type = w->model[slot].type;
    if (type == FR_BODY_LINK) return fri_body_slot(w, w->robots[w->model[slot].robot].links[0]);
    return type == FR_BODY_DYNAMIC ? slot : -1;
}

static int root_of(const fr_world *w, int node)
{
    int *up = w->late_up;
    while (up[node] != node) node = up[node] = up[up[node]];
    return node;
}

/* the root of slot's island this step, or −1 (not in one) */
static int island_of(const fr_world *w, int slot)
{
    const int nd = slot >= 0 ? node_of(w, slot) : -1;
    return nd >= 0 && w->late_stamp[nd] == w->late_islands ? root_of(w, nd) : -1;
}

static void islands_build(fr_world *w)
{
    const uint64_t stamp = w->late_islands = ++w->late_clock;
    for (int c = 0; c < w->late_n; c++) {
        const fri_pair *p = &w->pairs[w->late_order[c]];
        for (int side = 0; side < 2; side++) {
            const int nd = node_of(w, side ? p->slot_b : p->slot_a);
            if (nd < 0 || w->late_stamp[nd] == stamp) continue;
            w->late_stamp[nd] = stamp;
            w->late_up[nd] = nd;
            w->late_state[nd] = 0;
            w->late_e[nd] = w->late_u[nd] = 0.0;
        }
    }
    for (int c = 0; c < w->late_n; c++) {
        const fri_pair *p = &w->pairs[w->late_order[c]];
        const int na = node_of(w, p->slot_a), nb = node_of(w, p->slot_b);
        if (na < 0 || nb < 0) continue;
        const int ra = root_of(w, na), rb = root_of(w, nb);
        if (ra != rb) w->late_up[ra] = rb;
    }
}

/* the island of a pair (−1: none; both its sides are fixed) */
static int pair_island(const fr_world *w, const fri_pair *p)
{
    const int r = island_of(w, p->slot_a);
    return r >= 0 ? r : island_of(w, p->slot_b);
}

/* late_state per root: LEFT an excess its approach could not pay, OPEN its energy is not its
 * own (a kinematic body's contact or one placed since the last step, a constraint contact, a
 * joint with a motor or a spring, a spring on it), HELD to be held after the step */
enum { LEFT = 1, OPEN = 2, HELD = 4, SEEN = 8, MANY = 16 };

static void islands_mark(fr_world *w)
{
    for (int c = 0; c < w->late_n; c++) {
        const fri_pair *p = &w->pairs[w->late_order[c]];
        const int r = pair_island(w, p);
        if (r < 0) continue;
        w->late_state[r] |= (w->late_state[r] & SEEN) ? MANY : SEEN;
        const int ta = w->model[p->slot_a].type, tb = w->model[p->slot_b].type;
        if (p->cmode || ta == FR_BODY_KINEMATIC || tb == FR_BODY_KINEMATIC ||
            w->state[p->slot_a].placed == w->steps + 1 ||
            w->state[p->slot_b].placed == w->steps + 1)
            w->late_state[r] |= OPEN;
    }
    for (int j = 0; j < w->njoints; j++) {
        const fr_joint_def *d = &w->joints[j].def;
        /* (a passive joint does no work — a limit or damping only takes energy — so its island's
         * energy is its own: a hinged slab's landings rose by up to 0.048 of m·g·L/2 in a step
         * while every jointed island was left alone; a motor's work and a joint spring's energy
         * are not counted here) */
        if (!d->motor && !(d->stiffness > 0.0)) continue;
        for (int side = 0; side < 2; side++) {
            const int r =
                island_of(w, fri_body_slot(w, side ? w->joints[j].def.b : w->joints[j].def.a));
            if (r >= 0) w->late_state[r] |= OPEN;
        }
    }
    for (int k = 0; k < w->nsprings; k++) {
        const int r = island_of(w, fri_body_slot(w, w->springs[k].def.body));
        if (r >= 0) w->late_state[r] |= OPEN;
    }
}

/* Adds the bodies' and robots' energies (J; at the step's end with `step`) of each island (of
 * each held one with `held`) to late_e at its root, times `sign` */
static void islands_add_sides(fr_world *w, bool step, bool held, double sign)
{
    const uint64_t seen = ++w->late_clock;
    for (int c = 0; c < w->late_n; c++) {
        const fri_pair *p = &w->pairs[w->late_order[c]];
        for (int side = 0; side < 2; side++) {
            const int nd = node_of(w, side ? p->slot_b : p->slot_a);
            if (nd < 0 || w->late_seen[nd] == seen) continue;
            w->late_seen[nd] = seen;
            const int r = root_of(w, nd);
            if (!held || (w->late_state[r] & HELD)) w->late_e[r] += sign * side_energy(w, nd, step);
        }
    }
}

/* the pair's elastic energy at the last step's end, J: its prediction, or for a model advanced
 * from it (a small motion) what it holds now */
static double pair_before(const fri_pair *p)
{
    if (p->late_pred) return p->late_cap;
    const double still[6] = {0};
    fr_contact_response r;
    fr_contact_respond(&p->model, still, 0.0, p->mu, NULL, -1.0, 0u, &r);
    return fr_contact_response_energy(&p->model, &r);
}

static int64_t shape_key(const fr_world *w, int r)
{
    return (int64_t)w->pairs[r].sa * ((int64_t)w->def.max_shapes + 1) + w->pairs[r].sb;
}

void fri_late_take(fr_world *w)
{
    w->late_any = false;
    bool any = false;
    for (int c = 0; c < w->ncontacts && !any; c++) any = w->pairs[w->contacts[c]].late > 0.0;
    if (!any) return;
    /* the contacts in the order of their shapes (a run's records depend on its history: a
     * settle that gave up leaves its own, and the impulses below are taken one after another) */
    int *o = w->late_order, nc = w->late_n = w->ncontacts;
    for (int c = 0; c < nc; c++) o[c] = w->contacts[c];
    for (int gap = nc / 2; gap > 0; gap /= 2)
        for (int i = gap; i < nc; i++)
            for (int j = i; j >= gap && shape_key(w, o[j - gap]) > shape_key(w, o[j]); j -= gap) {
                const int t = o[j];
                o[j] = o[j - gap], o[j - gap] = t;
            }
    /* the islands and their bodies' energies before the impulses */
    islands_build(w);
    islands_mark(w);
    islands_add_sides(w, false, false, 1.0);
    bool left_any = false;
    for (int c = 0; c < w->late_n; c++) {
        fri_pair *p = &w->pairs[w->late_order[c]];
        p->late_check = false;
        if (!(p->late > 0.0)) continue;
        const fr_vec3 n = p->model.normal, x = p->model.point;
        /* m/s: A's point goes into B along n; 1/kg: the sides' inverse mass along n there */
        const double v =
            fr_v3_dot(n, fr_v3_sub(point_vel(w, p->slot_a, x), point_vel(w, p->slot_b, x)));
        const double im = fr_v3_dot(n, fr_m3_mulv(late_inv_mass(w, p, x), n));
        w->stats.late++;
        w->stats.late_energy += p->late;
        /* the impulse j whose loss j·v − j²·im/2 is the excess, where the approach holds it
         * (written without the difference's cancellation) */
        const double d = v * v - 2.0 * p->late * im;
        if (v > 0.0 && im > 0.0 && isfinite(im) && d > 0.0) {
            const double j = 2.0 * p->late / (v + sqrt(d));
            w->stats.late_paid += p->late;
            late_push(w, p, x, fr_v3_scale(n, j), true);
            continue;
        }
        /* the rest is held with the pair's island; a pair alone in its island (a body landing on
         * the ground) first gives all of its approach (elsewhere the impulse, taken as on free
         * sides, would drive the sides' other contacts: a quadruped's feet rose by 0.1 J a
         * tick at 3–10 ms, 0.005 J without it) */
        double left = p->late;
        const int r = pair_island(w, p);
        if (r >= 0 && !(w->late_state[r] & (MANY | OPEN)) && v > 0.0 && im > 0.0 && isfinite(im)) {
            late_push(w, p, x, fr_v3_scale(n, v / im), true);
            left -= 0.5 * v * v / im;
            w->stats.late_paid += 0.5 * v * v / im;
        }
        if (r < 0) continue;
        w->late_state[r] |= LEFT;
        w->late_u[r] += left;
        p->late_check = left_any = true;
    }
    if (!left_any) return;
    /* the islands that hold what was left: with their pairs' energies at the last step's end */
    for (int c = 0; c < w->late_n; c++) {
        fri_pair *p = &w->pairs[w->late_order[c]];
        const int r = pair_island(w, p);
        if (r < 0) continue;
        if ((w->late_state[r] & (LEFT | OPEN)) == LEFT) w->late_state[r] |= HELD;
        if (!(w->late_state[r] & HELD)) {
            p->late_check = false;
            continue;
        }
        w->late_e[r] += pair_before(p);
        w->late_any |= p->late_check;
    }
}

/* The share λ of a motion whose kinetic energy is q/2 that takes `gain` of it (all: 1) */
static double hold_share(double gain, double q)
{
    const double f = 2.0 * gain / q;
    return f >= 1.0 ? 1.0 : f / (1.0 + sqrt(1.0 - f));
}

/* The pressure's motion y = S·ν of a free side (its normal velocity at x, its turn about t1 and
 * t2; `sign` −1 for A's share of A relative to B) and its part of K = S·M⁻¹·Sᵀ */
static void hold_side(const fr_world *w, int slot, fr_vec3 x, const fr_vec3 ax[3], double sign,
                      double y[3], double K[3][3])
{
    if (w->model[slot].type != FR_BODY_DYNAMIC) return;
    const fri_body_state *s = &w->state[slot];
    const fri_body_model *m = &w->model[slot];
    const fr_mat3 Iw = fr_m3_rotate(fr_q_to_m3(s->pose.q), m->inv_inertia);
    const fr_vec3 rn = fr_v3_cross(fr_v3_sub(x, s->pose.p), ax[0]);
    const fr_vec3 lin[3] = {ax[0], fr_v3_zero(), fr_v3_zero()}, ang[3] = {rn, ax[1], ax[2]};
    for (int k = 0; k < 3; k++) {
        y[k] += sign * (fr_v3_dot(lin[k], s->vel) + fr_v3_dot(ang[k], s->angvel));
        for (int l = 0; l < 3; l++)
            K[k][l] +=
                m->inv_mass * fr_v3_dot(lin[k], lin[l]) + fr_v3_dot(ang[k], fr_m3_mulv(Iw, ang[l]));
    }
}

/* The generalised impulse g (along ax[0] at x; couples about ax[1], ax[2]) on B, −g on A */
static void hold_push(fr_world *w, const fri_pair *p, fr_vec3 x, const fr_vec3 ax[3],
                      const double g[3])
{
    for (int side = 0; side < 2; side++) {
        const int slot = side ? p->slot_b : p->slot_a;
        if (w->model[slot].type != FR_BODY_DYNAMIC) continue;
        fri_body_state *s = &w->state[slot];
        const fri_body_model *m = &w->model[slot];
        const double sg = side ? 1.0 : -1.0;
        const fr_vec3 F = fr_v3_scale(ax[0], sg * g[0]);
        const fr_vec3 T = fr_v3_add(
            fr_v3_cross(fr_v3_sub(x, s->pose.p), F),
            fr_v3_scale(fr_v3_add(fr_v3_scale(ax[1], g[1]), fr_v3_scale(ax[2], g[2])), sg));
        s->vel = fr_v3_mad(s->vel, m->inv_mass, F);
        s->angvel = fr_v3_add(
            s->angvel,
            fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, fr_q_unrotate(s->pose.q, T))));
    }
}

/* Takes up to `gain` (J) from the pair's sides after the step (fri_world_contacts_late), with
 * the pressure's couples too after a landing (`couples`): what it took */
static double hold_take(fr_world *w, const fri_pair *p, double gain, bool couples)
{
    const fr_vec3 n = p->model.normal, x = p->model.point;
    const bool link =
        w->model[p->slot_a].type == FR_BODY_LINK || w->model[p->slot_b].type == FR_BODY_LINK;
    if (!link && couples) {
        const fr_vec3 ax[3] = {n, p->model.t1, p->model.t2};
        double y[3] = {0, 0, 0}, K[3][3] = {{0}};
        hold_side(w, p->slot_a, x, ax, 1.0, y, K);
        hold_side(w, p->slot_b, x, ax, -1.0, y, K);
        const fr_mat3 Km = {{{K[0][0], K[0][1], K[0][2]},
                             {K[1][0], K[1][1], K[1][2]},
                             {K[2][0], K[2][1], K[2][2]}}};
        fr_vec3 kinv_y;
        if (!fr_m3_solve_spd(Km, fr_v3(y[0], y[1], y[2]), &kinv_y)) return 0.0;
        const double q = y[0] * kinv_y.x + y[1] * kinv_y.y + y[2] * kinv_y.z;
        if (!(q > 0.0) || !isfinite(q)) return 0.0; /* (a fixed pair: nothing to take) */
        const double lam = hold_share(gain, q);
        const double g[3] = {lam * kinv_y.x, lam * kinv_y.y, lam * kinv_y.z};
        hold_push(w, p, x, ax, g);
        return fmin(gain, 0.5 * q);
    }
    const double v =
        fr_v3_dot(n, fr_v3_sub(point_vel(w, p->slot_a, x), point_vel(w, p->slot_b, x)));
    const double im = fr_v3_dot(n, fr_m3_mulv(late_inv_mass(w, p, x), n));
    if (!(im > 0.0) || !isfinite(im) || v == 0.0) return 0.0;
    const double q = v * v / im; /* twice the kinetic energy of that velocity */
    late_push(w, p, x, fr_v3_scale(n, hold_share(gain, q) * v / im), false);
    return fmin(gain, 0.5 * q);
}

void fri_world_contacts_late(fr_world *w)
{
    if (!w->late_any) return;
    w->late_any = false;
    /* each held island's rise: its bodies' and pairs' energies at the step's end, less the work
     * done on it from outside and less what it held at the last step's end */
    for (int c = 0; c < w->late_n; c++) {
        const fri_pair *p = &w->pairs[w->late_order[c]];
        const int r = pair_island(w, p);
        if (r >= 0 && (w->late_state[r] & HELD))
            w->late_e[r] -= fr_contact_response_energy(&p->model, &p->resp);
    }
    islands_add_sides(w, true, true, -1.0);
    /* (late_e is now minus the rise; late_u what of it may be taken: the excesses left) */
    for (int c = 0; c < w->late_n; c++) {
        fri_pair *p = &w->pairs[w->late_order[c]];
        if (!p->late_check) continue;
        p->late_check = false;
        const int r = pair_island(w, p);
        const double gain = fmin(-w->late_e[r], w->late_u[r]);
        if (!(gain > 0.0)) continue;
        /* impulses the patch's pressure could give, against the motion it acts on (what the
         * overlap's release gave): between free bodies a normal impulse at the pair's point and
         * couples about the two axes of its plane (the pressure's moment: a landing's release
         * goes into the body's turn as much as into its rise), for a robot's link the normal
         * impulse alone; scaled to take the rise, at most all of that motion — the friction
         * plane is left alone */
        /* (the couples only after a landing: on a block rocking slowly over its edge, a rebuild
         * holding a few times the prediction is the patch described anew, and taking its rise
         * from the turn stopped a slender block's fall) */
        const double taken = hold_take(w, p, gain, p->late > LATE_LANDING * p->late_cap);
        w->stats.late_held += taken;
        w->late_e[r] += taken;
        w->late_u[r] -= taken;
    }
}
