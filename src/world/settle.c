/*
 * Settling before the first step (include/fureru/world.h fr_world_settle, docs/world.md
 * "Settling"): a relaxation of the bodies placed at rest by ordinary implicit steps with kinetic
 * damping (the bodies are stopped whenever their kinetic energy has passed a peak), friction
 * holding. Build time only: it allocates.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

typedef struct held {
    fr_pose pose;
    fr_vec3 vel, angvel;
} held;

/* Is slot i in a modelled pair (touching, overlapping, or about to close within the step)? A
 * body at rest further from everything is in the air. */
static bool supported(const fr_world *w, int i)
{
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (p->slot_a == i || p->slot_b == i) return true;
    }
    return false;
}

/* Slot i was put back to its placement after every settling step: kinematic, or dynamic and
 * given a velocity. */
static bool held_body(const fr_world *w, const bool *settles, int i)
{
    const int type = w->model[i].type;
    return type == FR_BODY_KINEMATIC || (type == FR_BODY_DYNAMIC && !settles[i]);
}

/* what a settling body may travel (times its radius of gyration) or turn (rad) */
#define SETTLE_MAX_MOVE 1e-2

const char *fr_world_settle_note(const fr_world *w)
{
    return w ? w->settle_note : "";
}

int fr_world_settle(fr_world *w, double max_time, double tolerance, int *steps_out)
{
    if (steps_out) *steps_out = 0;
    if (!w || w->locked || w->steps != 0 || !(max_time >= 0.0) || !(tolerance > 0.0))
        return FR_ERR_INVAL;
    w->settle_note[0] = '\0';
    if (w->nrobots > 0) return FR_ERR_UNSUPPORTED;
    held *start = calloc((size_t)w->nslots + 1, sizeof *start);
    bool *settles = calloc((size_t)w->nslots + 1, sizeof *settles);
    fri_spring *springs = calloc((size_t)w->nsprings + 1, sizeof *springs);
    if (!start || !settles || !springs) {
        free(start), free(settles), free(springs);
        return FR_ERR_NOMEM;
    }
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_state *s = &w->state[i];
        start[i] = (held){s->pose, s->vel, s->angvel};
        settles[i] = w->model[i].type == FR_BODY_DYNAMIC && fr_v3_norm2(s->vel) == 0.0 &&
                     fr_v3_norm2(s->angvel) == 0.0;
    }
    const long max_steps = (long)(max_time / w->def.dt + 0.5);
    int err = FR_ERR_TIMEOUT;
    long k = 0;
    double ke_prev = 0.0;
    /* kinematic bodies stand still while the others settle on them (a conveyor's belt would
     * drag a box along, a turntable turn under it): their velocities come back at the end */
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (w->model[i].type == FR_BODY_KINEMATIC)
            w->state[i].vel = w->state[i].angvel = fr_v3_zero();
    }
    w->settling = true;
    while (k < max_steps) {
        memcpy(springs, w->springs, sizeof *springs * (size_t)w->nsprings);
        int e = fr_world_step(w);
        k++;
        if (e) {
            err = e;
            break;
        }
        memcpy(w->springs, springs, sizeof *springs * (size_t)w->nsprings);
        double fastest = 0.0, ke = 0.0;
        for (int j = 0; j < w->norder; j++) {
            int i = w->order[j];
            fri_body_state *s = &w->state[i];
            const int type = w->model[i].type;
            if (type != FR_BODY_DYNAMIC && type != FR_BODY_KINEMATIC) continue;
            if (type == FR_BODY_KINEMATIC) {
                s->pose = start[i].pose;
                continue;
            }
            if (!settles[i] || !supported(w, i)) {
                /* moving, or at rest in the air: held where it was (it falls or moves from
                 * there when the run starts) */
                s->pose = start[i].pose;
                s->vel = start[i].vel;
                s->angvel = start[i].angvel;
                continue;
            }
            /* the speed of a point at the body's radius of gyration: its linear speed and spin */
            const fr_mat3 *I = &w->model[i].inertia;
            double r = sqrt((I->m[0][0] + I->m[1][1] + I->m[2][2]) / w->model[i].mass);
            fastest = fmax(fastest, fr_v3_norm(s->vel) + r * fr_v3_norm(s->angvel));
            ke += w->model[i].mass * (fr_v3_norm2(s->vel) + r * r * fr_v3_norm2(s->angvel));
        }
        /* a body that travels or turns by more than a hundredth of its size (or of a radian)
         * was not placed near an equilibrium (a block tipping over, a stack falling): that is
         * the run's to simulate, not a settle's; everything goes back to the placement */
        int far = -1;
        double far_d = 0.0, far_a = 0.0;
        for (int j = 0; j < w->norder && far < 0; j++) {
            int i = w->order[j];
            if (!settles[i]) continue;
            const fr_mat3 *I = &w->model[i].inertia;
            double r = sqrt((I->m[0][0] + I->m[1][1] + I->m[2][2]) / w->model[i].mass);
            double dd = fr_v3_dist(w->state[i].pose.p, start[i].pose.p);
            double da = fr_q_angle_between(w->state[i].pose.q, start[i].pose.q);
            if (dd > SETTLE_MAX_MOVE * r || da > SETTLE_MAX_MOVE) far = i, far_d = dd, far_a = da;
        }
        if (far >= 0) {
            snprintf(w->settle_note, sizeof w->settle_note,
                     "body '%s' moved %.3g m and turned %.3g rad while settling: not placed near "
                     "an equilibrium; the run starts from the placement",
                     w->model[far].long_name ? w->model[far].long_name : w->model[far].name, far_d,
                     far_a);
            for (int j = 0; j < w->norder; j++) {
                int i = w->order[j];
                w->state[i].pose = start[i].pose;
                w->state[i].vel = start[i].vel;
                w->state[i].angvel = start[i].angvel;
            }
            fri_world_pairs_clear(w);
            err = FR_ERR_RANGE;
            break;
        }
        if (fastest <= tolerance) {
            err = FR_OK;
            break;
        }
        /* kinetic damping: past a peak of the kinetic energy the bodies are near a minimum of
         * the potential along their motion; stopping them there converges in a number of steps
         * that grows like the stack's height, not its square */
        if (ke < ke_prev) {
            for (int j = 0; j < w->norder; j++) {
                int i = w->order[j];
                if (settles[i]) w->state[i].vel = w->state[i].angvel = fr_v3_zero();
            }
            ke = 0.0;
        }
        ke_prev = ke;
    }
    w->settling = false;
    /* the settled bodies start at rest (what is left is below the tolerance), the kinematic
     * ones where they were placed, at their set velocities */
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (settles[i]) w->state[i].vel = w->state[i].angvel = fr_v3_zero();
        if (w->model[i].type == FR_BODY_KINEMATIC) {
            w->state[i].pose = start[i].pose;
            w->state[i].vel = start[i].vel;
            w->state[i].angvel = start[i].angvel;
        }
    }
    /* the run starts here */
    w->steps = 0;
    w->time = 0.0;
    w->work = 0.0;
    w->joint_work = 0.0;
    memset(&w->stats, 0, sizeof w->stats);
    /* the bonds keep what they hold; the pairs' friction starts static. The pairs of a held
     * body are forgotten (the first step finds them again): what they held, and the elastic
     * energy the audit would start from, came from steps that the body was put back from. */
    for (int c = 0; c < w->ncontacts; c++) w->pairs[w->contacts[c]].st.sliding = 0;
    bool *was_held = calloc((size_t)w->nslots + 1, sizeof *was_held);
    if (was_held) {
        for (int j = 0; j < w->norder; j++)
            was_held[w->order[j]] = held_body(w, settles, w->order[j]);
        fri_world_pairs_forget(w, was_held);
    } else {
        fri_world_pairs_clear(w);
    }
    free(was_held), free(start), free(settles), free(springs);
    if (steps_out) *steps_out = (int)k;
    return err;
}
