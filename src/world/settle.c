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

static double gyration_radius(const fr_world *w, int i)
{
    const fr_mat3 *I = &w->model[i].inertia;
    return sqrt((I->m[0][0] + I->m[1][1] + I->m[2][2]) / w->model[i].mass);
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
    bool *touched = calloc((size_t)w->nslots + 1, sizeof *touched);
    double *overlap = calloc((size_t)w->nslots + 1, sizeof *overlap);
    fri_spring *springs = calloc((size_t)w->nsprings + 1, sizeof *springs);
    if (!start || !settles || !touched || !overlap || !springs) {
        free(start), free(settles), free(touched), free(overlap), free(springs);
        return FR_ERR_NOMEM;
    }
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_state *s = &w->state[i];
        start[i] = (held){s->pose, s->vel, s->angvel};
        settles[i] = w->model[i].type == FR_BODY_DYNAMIC;
    }
    const long max_steps = (long)(max_time / w->def.dt + 0.5);
    int err = FR_ERR_TIMEOUT;
    long k = 0;
    double ke_prev = 0.0;
    double overlaps = 0.0; /* m, the placements' overlaps added up (a body pushed out carries
                             those resting on it, each pushed out of it in turn) */
    /* Everything stands still while the contacts take their loads, and the velocities come back
     * at the end: a box carried by a turntable, a block given a push, settle like the rest (the
     * first step then starts from loaded contacts: a box co-rotating at 99.6 % of its friction
     * limit, placed unloaded, was flung off by the first steps' load transient), and a kinematic
     * body does not drag or turn what rests on it */
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (w->model[i].type == FR_BODY_KINEMATIC || w->model[i].type == FR_BODY_DYNAMIC)
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
        if (k == 1)
            for (int c = 0; c < w->ncontacts; c++) {
                /* how deep each body was placed into another (pushed out, it travels that far) */
                const fri_pair *p = &w->pairs[w->contacts[c]];
                double d = fmax(0.0, p->model.max_depth0);
                overlap[p->slot_a] = fmax(overlap[p->slot_a], d);
                overlap[p->slot_b] = fmax(overlap[p->slot_b], d);
                overlaps += d;
            }
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
            if (supported(w, i)) touched[i] = true;
            if (!touched[i]) {
                /* in the air: held where it was (it falls or flies from there when the run
                 * starts). A body that touched once settles on even when a
                 * step lifts it clear (placed 0.1 mm into the ground, it was pushed out at
                 * 0.1 m/s, put back into the overlap and the run began from there). */
                s->pose = start[i].pose;
                s->vel = s->angvel = fr_v3_zero();
                continue;
            }
            /* the speed of a point at the body's radius of gyration: its linear speed and spin */
            double r = gyration_radius(w, i);
            fastest = fmax(fastest, fr_v3_norm(s->vel) + r * fr_v3_norm(s->angvel));
            ke += w->model[i].mass * (fr_v3_norm2(s->vel) + r * r * fr_v3_norm2(s->angvel));
        }
        /* a body that travels or turns by more than a hundredth of its size (or of a radian)
         * (beyond twice the placements' overlaps added up: pushed out, a body flies that
         * far before the kinetic damping stops it, with what rests on it) was not placed near an
         * equilibrium (a block tipping over, a stack falling): that is the run's to simulate, not a
         * settle's; everything goes back to the placement */
        int far = -1;
        double far_d = 0.0, far_a = 0.0;
        for (int j = 0; j < w->norder && far < 0; j++) {
            int i = w->order[j];
            if (!settles[i]) continue;
            double r = gyration_radius(w, i);
            double dd = fr_v3_dist(w->state[i].pose.p, start[i].pose.p);
            double da = fr_q_angle_between(w->state[i].pose.q, start[i].pose.q);
            if (dd > SETTLE_MAX_MOVE * r + 2.0 * overlaps || da > SETTLE_MAX_MOVE)
                far = i, far_d = dd, far_a = da;
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
    if (err != FR_ERR_RANGE) {
        /* say so when a body was placed well into another (more than 1e-3 of its size) */
        int deep = -1;
        double worst = 0.0;
        for (int j = 0; j < w->norder; j++) {
            int i = w->order[j];
            if (!settles[i]) continue;
            double rel = overlap[i] / gyration_radius(w, i);
            if (rel > 1e-3 && rel > worst) worst = rel, deep = i;
        }
        if (deep >= 0)
            snprintf(w->settle_note, sizeof w->settle_note,
                     "body '%s' was placed %.3g m into another body; settling pushed it out",
                     w->model[deep].long_name ? w->model[deep].long_name : w->model[deep].name,
                     overlap[deep]);
    }
    /* the velocities the bodies were given (what the settle left is below its tolerance), the
     * kinematic bodies where they were placed */
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (w->model[i].type == FR_BODY_KINEMATIC) w->state[i].pose = start[i].pose;
        if (w->model[i].type == FR_BODY_KINEMATIC || w->model[i].type == FR_BODY_DYNAMIC) {
            w->state[i].vel = start[i].vel;
            w->state[i].angvel = start[i].angvel;
        }
    }
    /* the run starts here */
    w->steps = 0;
    w->time = 0.0;
    w->work = 0.0;
    w->placement = 0.0;
    w->joint_work = 0.0;
    memset(&w->stats, 0, sizeof w->stats);
    /* the bonds keep what they hold; the pairs' friction starts static (a body given a velocity
     * across its support breaks away in its first step) */
    for (int c = 0; c < w->ncontacts; c++) w->pairs[w->contacts[c]].st.sliding = 0;
    free(start), free(settles), free(touched), free(overlap), free(springs);
    if (steps_out) *steps_out = (int)k;
    return err;
}
