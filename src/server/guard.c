/* The run's divergence guard (guard.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "guard.h"

static int fault(fri_guard *g, const fr_world *w, const char *what, const char *name,
                 const char *quantity, double value)
{
    fr_world_fault *f = &g->fault;
    f->code = FR_ERR_NUMERIC;
    f->time = fr_world_time(w);
    snprintf(f->what, sizeof f->what, "%s '%s'", what, name);
    snprintf(f->quantity, sizeof f->quantity, "%s", quantity);
    f->value = value;
    return FR_ERR_NUMERIC;
}

int fri_guard_world(fri_guard *g, const fr_world *w, const fr_body_id *ids, int n)
{
    for (int k = 0; k < n; k++) {
        fr_pose p;
        fr_body_get_pose(w, ids[k], &p);
        double r = fr_v3_norm(p.p);
        if (!(r <= FRI_GUARD_MAX_POSITION))
            return fault(g, w, "body", fr_body_name(w, ids[k]), "distance from the origin (m)", r);
    }
    int ns = fr_world_spring_count(w);
    for (int i = 0; i < ns; i++) {
        fr_vec3 f;
        if (fr_world_spring_state(w, i, &f, NULL) != FR_OK) continue;
        double m = fr_v3_norm(f);
        if (!(m <= FRI_GUARD_MAX_FORCE)) {
            char name[32]; /* the world keeps no names for lookup: its index (scene order, then
                              the device coupling) */
            snprintf(name, sizeof name, "#%d", i);
            return fault(g, w, "spring", name, "force (N)", m);
        }
    }
    return FR_OK;
}

bool fri_guard_proxy(fri_guard *g, const fr_world *w, fr_body_id proxy, fr_vec3 grip,
                     fr_vec3 grip_vel, double scale, bool *abandon)
{
    *abandon = false;
    fr_pose p;
    fr_vec3 v, om;
    fr_body_get_pose(w, proxy, &p);
    fr_body_get_velocity(w, proxy, &v, &om);
    double s = scale > 0 ? scale : 1.0;
    double stretch = fr_v3_dist(p.p, grip) / s, slip = fr_v3_dist(v, grip_vel) / s;
    double speed = fr_v3_norm(v) / s;
    const char *quantity = NULL;
    double value = 0;
    if (!(stretch <= FRI_GUARD_STRETCH)) {
        quantity = "distance from the grip (m at the device)";
        value = stretch;
    } else if (!(slip <= FRI_GUARD_SLIP_SPEED) && !(speed <= FRI_GUARD_SLIP_SPEED)) {
        /* the proxy itself flies: a grip that jerked away from a proxy at rest is the stretch
         * limit's business (the force stays at the cap), not a runaway */
        quantity = "speed relative to the grip (m/s at the device)";
        value = slip;
    }
    if (!quantity) return false;
    g->last_far = value == stretch;
    double t = fr_world_time(w);
    if (!g->resets) g->first_reset = t;
    g->last_reset = t;
    snprintf(g->last_reset_why, sizeof g->last_reset_why, "%s %.3g", quantity, value);
    g->reset_times[g->resets % FRI_GUARD_RESETS] = t;
    g->resets++;
    double oldest = g->reset_times[g->resets % FRI_GUARD_RESETS];
    if (g->resets >= FRI_GUARD_RESETS && t - oldest <= FRI_GUARD_RESET_WINDOW) {
        char name[96];
        snprintf(name, sizeof name, "%s", fr_body_name(w, proxy));
        fault(g, w, "proxy", name, quantity, value);
        size_t k = strlen(g->fault.what);
        snprintf(g->fault.what + k, sizeof g->fault.what - k, " (put back %d times in %g s)",
                 FRI_GUARD_RESETS, FRI_GUARD_RESET_WINDOW);
        *abandon = true;
    }
    return true;
}
