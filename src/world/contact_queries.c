/* What the last step's contacts can be asked: their results and models, the deepest overlap, the
 * force between two bodies and whether they stick or slide. */
#include <math.h>

#include "world_internal.h"

int fr_world_contact_count(const fr_world *w)
{
    return w->ncontacts;
}

const fr_contact_result *fr_world_contact(const fr_world *w, int i, fr_body_id *a, fr_body_id *b)
{
    if (i < 0 || i >= w->ncontacts) return NULL;
    const fri_pair *p = &w->pairs[w->contacts[i]];
    if (a) *a = w->shapes[p->sa].body;
    if (b) *b = w->shapes[p->sb].body;
    return &p->res;
}

const fr_contact_model *fr_world_contact_model(const fr_world *w, int i)
{
    if (i < 0 || i >= w->ncontacts) return NULL;
    const fri_pair *p = &w->pairs[w->contacts[i]];
    return p->modeled ? &p->model : NULL;
}

double fr_world_contact_energy(const fr_world *w, int i)
{
    if (i < 0 || i >= w->ncontacts) return 0.0;
    const fri_pair *p = &w->pairs[w->contacts[i]];
    return p->cmode ? 0.0 : fr_contact_response_energy(&p->model, &p->resp);
}

double fr_world_max_penetration(const fr_world *w)
{
    return w->max_pen;
}

fr_vec3 fr_world_contact_force(const fr_world *w, fr_body_id on, fr_body_id by)
{
    fr_vec3 f = fr_v3_zero();
    for (int i = 0; i < w->ncontacts; i++) {
        const fri_pair *p = &w->pairs[w->contacts[i]];
        fr_body_id a = w->shapes[p->sa].body, b = w->shapes[p->sb].body;
        bool any = fr_body_id_is_null(by);
        if (fr_body_id_eq(a, on) && (any || fr_body_id_eq(b, by))) f = fr_v3_add(f, p->res.force_a);
        if (fr_body_id_eq(b, on) && (any || fr_body_id_eq(a, by))) f = fr_v3_add(f, p->res.force_b);
    }
    return f;
}

/* m/s: the velocity of a body's point now at x over the last step, its move over the step / h: the
 * centre's velocity and the turn's chord, x less x turned back by h·ω. A step moves a body along
 * those chords, so two points that keep together have the same (a box stuck on a turntable: its
 * point's tangent ω × r would differ from its chord by ω²·r·h/2 outwards, 1.2 mm/s at 2.2 rad/s,
 * 0.5 m and 1 ms, which the probe logged as slip; a new user's trial). Before the first step, the
 * velocities are the ones given: the point's tangent. */
static fr_vec3 step_velocity(const fr_world *w, int slot, fr_vec3 x)
{
    const fri_body_state *s = &w->state[slot];
    const fr_vec3 r = fr_v3_sub(x, s->pose.p);
    const double turn = w->h * fr_v3_norm(s->angvel);
    if (w->steps == 0) return fr_v3_add(s->vel, fr_v3_cross(s->angvel, r));
    if (!(turn > 0.0)) return s->vel;
    const fr_quat back =
        fr_q_axis_angle(fr_v3_scale(s->angvel, -1.0 / fr_v3_norm(s->angvel)), turn);
    return fr_v3_add(s->vel, fr_v3_scale(fr_v3_sub(r, fr_q_rotate(back, r)), 1.0 / w->h));
}

int fr_world_contact_slip(const fr_world *w, fr_body_id on, fr_body_id by, double *speed)
{
    int state = -1;
    double fastest = 0.0;
    for (int i = 0; i < w->ncontacts; i++) {
        const fri_pair *p = &w->pairs[w->contacts[i]];
        fr_body_id a = w->shapes[p->sa].body, b = w->shapes[p->sb].body;
        bool any = fr_body_id_is_null(by);
        bool ab = fr_body_id_eq(a, on) && (any || fr_body_id_eq(b, by));
        bool ba = fr_body_id_eq(b, on) && (any || fr_body_id_eq(a, by));
        if ((!ab && !ba) || !(p->res.normal_force > 0.0)) continue;
        if (p->res.sliding)
            state = 1;
        else if (state < 0)
            state = 0;
        /* the relative velocity of the bodies' points at the pair's centre, in its tangent plane */
        fr_vec3 c = p->res.point, n = p->res.normal;
        fr_vec3 dv = fr_v3_sub(step_velocity(w, p->slot_a, c), step_velocity(w, p->slot_b, c));
        dv = fr_v3_mad(dv, -fr_v3_dot(dv, n), n);
        fastest = fmax(fastest, fr_v3_norm(dv));
    }
    if (speed) *speed = fastest;
    return state;
}
