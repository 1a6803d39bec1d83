/* Springs between a body point and an anchor (explicit, or implicit for the haptic coupling). */
#include <string.h>

#include "world_internal.h"

int fr_world_add_spring(fr_world *w, const fr_spring_def *def, int *out)
{
    if (w->locked) return FR_ERR_LOCKED;
    if (!def || fri_body_slot(w, def->body) < 0) return FR_ERR_STALE;
    if (!fr_v3_isfinite(def->local_point) || !fr_v3_isfinite(def->anchor) ||
        !fr_v3_isfinite(def->anchor_vel) || !(def->stiffness >= 0) || !(def->damping >= 0) ||
        !(def->rest_length >= 0) || !isfinite(def->stiffness) || !isfinite(def->damping) ||
        !isfinite(def->rest_length))
        return FR_ERR_RANGE;
    if (def->implicit && (def->rest_length != 0 || fr_v3_norm(def->local_point) != 0))
        return FR_ERR_INVAL;
    if (w->nsprings >= w->def.max_springs) return FR_ERR_FULL;
    fri_spring *s = &w->springs[w->nsprings];
    s->def = *def;
    s->force = fr_v3_zero();
    s->anchor = def->anchor;
    s->a_prev = def->anchor;
    s->driven = false;
    if (out) *out = w->nsprings;
    w->nsprings++;
    return FR_OK;
}

int fr_world_spring_count(const fr_world *w)
{
    return w->nsprings;
}

int fr_world_set_spring_anchor(fr_world *w, int i, fr_vec3 anchor, fr_vec3 anchor_vel)
{
    if (i < 0 || i >= w->nsprings) return FR_ERR_INVAL;
    if (!fr_v3_isfinite(anchor) || !fr_v3_isfinite(anchor_vel)) return FR_ERR_RANGE;
    fri_spring *s = &w->springs[i];
    s->driven = true;
    s->next_anchor = anchor;
    s->def.anchor_vel = anchor_vel;
    return FR_OK;
}

int fr_world_set_spring_gains(fr_world *w, int i, double stiffness, double damping)
{
    if (i < 0 || i >= w->nsprings) return FR_ERR_INVAL;
    if (!(stiffness >= 0) || !(damping >= 0) || !isfinite(stiffness) || !isfinite(damping))
        return FR_ERR_RANGE;
    w->springs[i].def.stiffness = stiffness;
    w->springs[i].def.damping = damping;
    return FR_OK;
}

int fr_world_find_spring(const fr_world *w, const char *name, int *out)
{
    for (int i = 0; i < w->nsprings; i++)
        if (strcmp(w->springs[i].def.name, name) == 0) {
            *out = i;
            return FR_OK;
        }
    return FR_ERR_NOTFOUND;
}

int fr_world_spring_state(const fr_world *w, int i, fr_vec3 *force, fr_vec3 *anchor)
{
    if (i < 0 || i >= w->nsprings) return FR_ERR_INVAL;
    if (force) *force = w->springs[i].force;
    if (anchor) *anchor = w->springs[i].anchor;
    return FR_OK;
}

void fri_world_springs(fr_world *w)
{
    for (int i = 0; i < w->nsprings; i++) {
        fri_spring *s = &w->springs[i];
        int b = fri_body_slot(w, s->def.body);
        if (b < 0) continue;
        fri_body_state *st = &w->state[b];
        /* while the world settles (fr_world_settle) the clock does not run: anchors stay put */
        const double t = w->settling ? 0.0 : w->time;
        const fr_vec3 av = w->settling ? fr_v3_zero() : s->def.anchor_vel;
        if (!s->driven) s->anchor = fr_v3_mad(s->def.anchor, t, av);
        /* a driven anchor is set once a tick: its substeps move it on a straight line */
        fr_vec3 next = s->next_anchor;
        if (s->driven && w->nsub > 1) {
            if (w->sub_k == 0) s->a_tick = s->anchor;
            if (w->sub_k + 1 < w->nsub)
                next = fr_v3_mad(s->a_tick, (double)(w->sub_k + 1) / w->nsub,
                                 fr_v3_sub(s->next_anchor, s->a_tick));
        }
        if (s->def.implicit) {
            /* the anchor at the end of the step; the force is taken at the new state */
            fr_vec3 a1 =
                s->driven ? next : fr_v3_mad(s->def.anchor, w->settling ? 0.0 : t + w->h, av);
            if (w->model[b].type == FR_BODY_DYNAMIC) {
                st->imp_k += s->def.stiffness;
                st->imp_c += s->def.damping;
                st->imp_f = fr_v3_add(
                    st->imp_f, fr_v3_add(fr_v3_scale(fr_v3_sub(a1, st->pose.p), s->def.stiffness),
                                         fr_v3_scale(av, s->def.damping)));
            } else {
                s->force = fr_v3_add(fr_v3_scale(fr_v3_sub(a1, st->pose.p), s->def.stiffness),
                                     fr_v3_scale(fr_v3_sub(av, st->vel), s->def.damping));
            }
            s->anchor = a1;
            continue; /* its work on the anchor is counted at the new state (springs_post) */
        }
        if (s->driven) s->anchor = next;
        fr_vec3 r = fr_q_rotate(st->pose.q, s->def.local_point);
        fr_vec3 p = fr_v3_add(st->pose.p, r);
        fr_vec3 d = fr_v3_sub(s->anchor, p);
        double len = fr_v3_norm(d);
        fr_vec3 f = fr_v3_zero();
        fr_vec3 vp = fr_v3_add(st->vel, fr_v3_cross(st->angvel, r));
        fr_vec3 vrel = fr_v3_sub(av, vp);
        if (s->def.rest_length == 0.0) {
            /* zero rest length: a linear (vector) spring, well defined at d = 0 */
            f = fr_v3_add(fr_v3_scale(d, s->def.stiffness), fr_v3_scale(vrel, s->def.damping));
        } else if (len > 0) {
            fr_vec3 u = fr_v3_scale(d, 1.0 / len);
            double mag =
                s->def.stiffness * (len - s->def.rest_length) + s->def.damping * fr_v3_dot(vrel, u);
            f = fr_v3_scale(u, mag);
        }
        s->force = f;
        /* the anchor's driver works against the spring: F·Δa (docs/world.md, energy) */
        w->work += fr_v3_dot(f, fr_v3_sub(s->anchor, s->a_prev));
        s->a_prev = s->anchor;
        if (w->model[b].type == FR_BODY_DYNAMIC || w->model[b].type == FR_BODY_LINK) {
            st->force = fr_v3_add(st->force, f);
            st->torque = fr_v3_add(st->torque, fr_v3_cross(r, f));
        }
    }
}

void fri_world_springs_post(fr_world *w)
{
    for (int i = 0; i < w->nsprings; i++) {
        fri_spring *s = &w->springs[i];
        if (!s->def.implicit) continue;
        int b = fri_body_slot(w, s->def.body);
        if (b < 0 || w->model[b].type != FR_BODY_DYNAMIC) continue;
        const fri_body_state *st = &w->state[b];
        /* at the new state: k·(a⁺ − x⁺) + c·(v_a − v⁺), the force the step applied */
        s->force = fr_v3_add(fr_v3_scale(fr_v3_sub(s->anchor, st->pose.p), s->def.stiffness),
                             fr_v3_scale(fr_v3_sub(s->def.anchor_vel, st->vel), s->def.damping));
        w->work += fr_v3_dot(s->force, fr_v3_sub(s->anchor, s->a_prev));
        s->a_prev = s->anchor;
    }
}

double fri_world_spring_energy(const fr_world *w)
{
    double e = 0.0;
    for (int i = 0; i < w->nsprings; i++) {
        const fri_spring *s = &w->springs[i];
        int b = fri_body_slot(w, s->def.body);
        if (b < 0) continue;
        const fri_body_state *st = &w->state[b];
        fr_vec3 p = fr_v3_add(st->pose.p, fr_q_rotate(st->pose.q, s->def.local_point));
        double stretch = fr_v3_norm(fr_v3_sub(s->anchor, p)) - s->def.rest_length;
        if (s->def.rest_length == 0.0) stretch = fr_v3_norm(fr_v3_sub(s->anchor, p));
        e += 0.5 * s->def.stiffness * stretch * stretch;
    }
    return e;
}
