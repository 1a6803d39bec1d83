/* Springs between a body point and an anchor (explicit, or implicit for the haptic coupling). */
#include <string.h>

#include "world_internal.h"

/* J: the spring's elastic energy with its anchor at a and its body at the state st */
static double spring_elastic(const fri_spring *s, const fri_body_state *st, fr_vec3 a)
{
    fr_vec3 p = fr_v3_add(st->pose.p, fr_q_rotate(st->pose.q, s->def.local_point));
    double len = fr_v3_norm(fr_v3_sub(a, p));
    double stretch = s->def.rest_length == 0.0 ? len : len - s->def.rest_length;
    return 0.5 * s->def.stiffness * stretch * stretch;
}

/* N: an explicit spring's force with its anchor at a, its body at the state st: its elastic part
 * in *el, its damper's in *damp */
static void spring_force(const fri_spring *s, const fri_body_state *st, fr_vec3 a, fr_vec3 *el,
                         fr_vec3 *damp)
{
    fr_vec3 r = fr_q_rotate(st->pose.q, s->def.local_point);
    fr_vec3 d = fr_v3_sub(a, fr_v3_add(st->pose.p, r));
    fr_vec3 vrel = fr_v3_sub(s->def.anchor_vel, fr_v3_add(st->vel, fr_v3_cross(st->angvel, r)));
    *el = *damp = fr_v3_zero();
    if (s->def.rest_length == 0.0) {
        *el = fr_v3_scale(d, s->def.stiffness);
        *damp = fr_v3_scale(vrel, s->def.damping);
        return;
    }
    double len = fr_v3_norm(d);
    if (!(len > 0)) return;
    fr_vec3 u = fr_v3_scale(d, 1.0 / len);
    *el = fr_v3_scale(u, s->def.stiffness * (len - s->def.rest_length));
    *damp = fr_v3_scale(u, s->def.damping * fr_v3_dot(vrel, u));
}

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
    s->anchor = def->anchor;
    /* (what a probe reads before the first step: the force at the body's state as added) */
    fr_vec3 el, damp;
    spring_force(s, &w->state[fri_body_slot(w, def->body)], s->anchor, &el, &damp);
    s->force = fr_v3_add(el, damp);
    s->force_el = el;
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
        fr_vec3 r = fr_q_rotate(st->pose.q, s->def.local_point), el, damp;
        spring_force(s, st, s->anchor, &el, &damp);
        fr_vec3 f = fr_v3_add(el, damp);
        s->force = f;
        s->force_el = el;
        /* the anchor's driver works against the spring: F·Δa (docs/world.md, energy) */
        w->work += fr_v3_dot(f, fr_v3_sub(s->anchor, s->a_prev));
        s->a_prev = s->anchor;
        if (w->model[b].type == FR_BODY_DYNAMIC || w->model[b].type == FR_BODY_LINK) {
            st->force = fr_v3_add(st->force, f);
            st->torque = fr_v3_add(st->torque, fr_v3_cross(r, f));
        }
    }
}

/*
 * After the step. An implicit spring's force at the new state is the force the step applied. An
 * explicit spring's anchor is moved to where it is at the step's end, its body held at the new
 * state, so that the energy read after the step belongs to the state and the time it is read with
 * (a log's row, the run's summary; before, it took the anchor at the step's start, 0.5 mm behind
 * at 0.5 m/s and 1 ms, a new user's trial). The driver's work for that move is the elastic energy
 * it adds with the body at its new place, exactly, and the damper's force there times the move
 * (what the damper takes), plus ½·(F₀ − F)·Δa, F₀ the elastic force the step applied and F the
 * one at the body's new place and the anchor's old one: the anchor and the body move together
 * over the step, so the anchor meets the body half-way along its move, not at its end (exact
 * for rest length 0). Without it a block sliding steadily behind its anchor, whose energy does
 * not change, was given ½·k·|Δa|² too little work a step (20 kg, k 1e5 N/m, V 1 m/s, 1 ms:
 * 100 J over 2 m, and energy less work rose at 599 ticks; a new user's trial). Its force stays
 * the one the step applied (fr_world_spring_state).
 */
void fri_world_springs_post(fr_world *w)
{
    for (int i = 0; i < w->nsprings; i++) {
        fri_spring *s = &w->springs[i];
        if (!s->def.implicit) {
            int b = fri_body_slot(w, s->def.body);
            if (b < 0 || s->driven) continue;
            const fri_body_state *st = &w->state[b];
            fr_vec3 a1 = s->anchor, el, damp;
            if (!w->settling)
                a1 = fr_v3_mad(s->def.anchor, (double)(w->steps + 1) * w->h, s->def.anchor_vel);
            fr_vec3 el0, damp0;
            spring_force(s, st, s->anchor, &el0, &damp0);
            spring_force(s, st, a1, &el, &damp);
            const fr_vec3 da = fr_v3_sub(a1, s->anchor);
            w->work += spring_elastic(s, st, a1) - spring_elastic(s, st, s->anchor) +
                       0.5 * fr_v3_dot(fr_v3_sub(s->force_el, el0), da) + fr_v3_dot(damp, da);
            s->anchor = a1;
            s->a_prev = a1;
            continue;
        }
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
        e += spring_elastic(s, &w->state[b], s->anchor);
    }
    return e;
}
