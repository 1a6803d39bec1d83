/* The run's energy audit (audit.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

/* A body's kinetic and gravitational energy, J. */
static double body_energy(const fr_world *w, fr_body_id id, fr_vec3 g)
{
    double m;
    fr_mat3 I;
    fr_pose p;
    fr_vec3 v, om;
    fr_body_get_mass(w, id, &m, &I);
    fr_body_get_pose(w, id, &p);
    fr_body_get_velocity(w, id, &v, &om);
    fr_vec3 wb = fr_q_unrotate(p.q, om);
    return 0.5 * m * fr_v3_norm2(v) + 0.5 * fr_v3_dot(wb, fr_m3_mulv(I, wb)) -
           m * fr_v3_dot(g, p.p);
}

static double level(const fr_world *w, fr_world_energy *e)
{
    fr_world_energy_get(w, e);
    return e->total - e->work;
}

/* J: the scale a tick's rise is measured against: what the scene holds beyond lying still (kinetic
 * and elastic energy), each body's weight times its size, and each robot's weight times its
 * extent */
static double scale_of(const fri_audit *a, const fr_world_energy *e)
{
    double scale = e->kinetic + e->contact + e->spring + a->robots;
    for (int i = 0; i < a->nbodies; i++) scale += a->size[i];
    return scale;
}

int fri_audit_init(fri_audit *a, const fr_world *w, double tolerance)
{
    memset(a, 0, sizeof *a);
    a->tolerance = tolerance;
    int nb = fr_world_body_count(w);
    a->ids = calloc((size_t)nb + 1, sizeof *a->ids);
    a->e = calloc((size_t)nb + 1, sizeof *a->e);
    a->size = calloc((size_t)nb + 1, sizeof *a->size);
    a->de = calloc((size_t)nb + 1, sizeof *a->de);
    a->own = calloc((size_t)nb + 1, sizeof *a->own);
    if (!a->ids || !a->e || !a->size || !a->de || !a->own) return FR_ERR_NOMEM;
    const fr_vec3 g = fr_world_get_def(w)->gravity;
    for (int i = 0; i < nb; i++) {
        fr_body_id id = fr_world_body_at(w, i);
        int type = fr_body_type(w, id);
        if (type != FR_BODY_DYNAMIC && type != FR_BODY_LINK) continue;
        double m;
        fr_mat3 I;
        fr_body_get_mass(w, id, &m, &I);
        /* radius of gyration: how far the body's mass lies from its centre */
        double rg = m > 0.0 ? sqrt((I.m[0][0] + I.m[1][1] + I.m[2][2]) / m) : 0.0;
        a->ids[a->nbodies] = id;
        a->size[a->nbodies] = m * fr_v3_norm(g) * rg;
        a->e[a->nbodies] = body_energy(w, id, g);
        a->nbodies++;
    }
    /* A robot's weight can drop by its own extent (a leg folding, the body tipping over its
     * feet): each robot adds M·|g|·R, R the farthest a link's mass lies from its root at the
     * start. (Link bodies report no inertia, so their own sizes above are zero: the default
     * scene's scale was the hand's 0.026 J.) */
    for (int r = 0; r < fr_world_robot_count(w); r++) {
        /* (the links' own masses and inertias: a link body's mass is the robot's, for its
         * contacts' stiffness) */
        const fr_tree *t = fr_world_robot_tree(w, r);
        fr_pose root;
        fr_body_get_pose(w, fr_world_robot_link_body(w, r, 0), &root);
        double mass = 0.0, extent = 0.0;
        for (int l = 0; l < fr_tree_nlinks(t); l++) {
            const fr_link_def *ld = fr_tree_link_def(t, l);
            if (!(ld->mass > 0.0)) continue;
            fr_pose p;
            fr_body_get_pose(w, fr_world_robot_link_body(w, r, l), &p);
            const fr_mat3 *I = &ld->inertia;
            double rg = sqrt((I->m[0][0] + I->m[1][1] + I->m[2][2]) / ld->mass);
            mass += ld->mass;
            extent = fmax(extent, fr_v3_dist(p.p, root.p) + rg); /* (p: at its centre of mass) */
        }
        a->robots += mass * fr_v3_norm(g) * extent;
    }
    fr_world_energy e;
    a->level = level(w, &e);
    a->scale = scale_of(a, &e);
    a->joint_work = e.joint_work;
    a->work = e.work;
    a->stats.start = e.total;
    a->stats.end = e.total;
    return FR_OK;
}

/* At a failure: the body whose energy rose most in the tick, each contact's elastic energy
 * counted as the energy of the one of its two bodies that lost more of its own in the tick (the
 * one that drove into it: a landing puts the tick's rise into its contact while the landing
 * body's kinetic and gravitational energy falls). By the bodies' own energies alone a new user's
 * failed drop named a body in free fall 3 m away; with a contact's energy shared half and half a
 * box landing on a resting pad named the pad (a second trial). The contacts' energy is taken as
 * it is now, not its rise (the last tick's per body is not kept): a failing rise is a share of
 * the scene's energy scale, far above what resting contacts hold. */
static int culprit(fri_audit *a, const fr_world *w)
{
    for (int i = 0; i < a->nbodies; i++) a->own[i] = a->de[i];
    for (int c = 0; c < fr_world_contact_count(w); c++) {
        fr_body_id b[2];
        fr_world_contact(w, c, &b[0], &b[1]);
        int at[2] = {-1, -1};
        for (int i = 0; i < a->nbodies; i++)
            for (int k = 0; k < 2; k++)
                if (fr_body_id_eq(a->ids[i], b[k])) at[k] = i;
        int to = at[0] < 0                        ? at[1]
                 : at[1] < 0                      ? at[0]
                 : a->own[at[0]] <= a->own[at[1]] ? at[0]
                                                  : at[1];
        if (to >= 0) a->de[to] += fr_world_contact_energy(w, c);
    }
    int worst = -1;
    for (int i = 0; i < a->nbodies; i++)
        if (worst < 0 || a->de[i] > a->de[worst]) worst = i;
    return worst;
}

int fri_audit_tick(fri_audit *a, const fr_world *w)
{
    fr_world_energy e;
    const double now = level(w, &e);
    double gain = now - a->level;
    a->level = now;
    if (a->outside) {
        /* the tick of an outside intervention: its rise is the intervention's work */
        a->outside = false;
        if (gain > 0.0) a->outside_work += gain;
        gain = fmin(gain, 0.0);
    }
    a->stats.end = e.total;
    a->stats.work = e.work;
    a->stats.placement = e.placement;
    if (gain > 0.0) a->stats.gained += gain;
    /* the scale at the tick's start: taken after it, it held the tick's own rise, so that with
     * a tolerance of 1 or more no tick could fail (a body that rose from 24.7 J to 346 J in one
     * tick rose by 0.93 of that; a new user's trial) */
    const double scale = a->scale;
    a->scale = scale_of(a, &e);
    const fr_vec3 g = fr_world_get_def(w)->gravity;
    for (int i = 0; i < a->nbodies; i++) {
        double ei = body_energy(w, a->ids[i], g);
        a->de[i] = ei - a->e[i];
        a->e[i] = ei;
    }
    /* the robots' joint work is estimated by the trapezoid rule, which the tree's integrator
     * does not follow exactly: the audit cannot see errors smaller than that work */
    const double joint = fabs(e.joint_work - a->joint_work);
    /* the energy the tick's other work moved through the world is part of its scale (a 1 kg box
     * pulled by a spring whose anchor moves at 1.1 m/s in zero gravity, momentarily at rest on
     * the anchor: a scale of ~0 failed a tick rising 1.1e-7 J while the driver put 6e-3 J in) */
    const double flow = fabs((e.work - a->work) - (e.joint_work - a->joint_work));
    const double bound = a->tolerance * (scale + flow) + joint + 1e-9;
    a->joint_work = e.joint_work;
    a->work = e.work;
    if (gain > a->stats.max_gain) {
        a->stats.max_gain = gain;
        a->stats.max_gain_time = e.time;
        a->stats.max_gain_share = scale > 0.0 ? gain / scale : 0.0;
        a->stats.max_gain_bound = bound;
        a->stats.max_gain_joint = joint;
    }
    if (gain / bound > a->stats.max_use) a->stats.max_use = gain / bound;
    if (gain > bound && !a->stats.fault.failed) {
        a->stats.fault.failed = true;
        a->stats.fault.time = e.time;
        a->stats.fault.gain = gain;
        a->stats.fault.bound = bound;
        int worst = culprit(a, w);
        snprintf(a->stats.fault.body, sizeof a->stats.fault.body, "%s",
                 worst >= 0 ? fr_body_name(w, a->ids[worst]) : "");
        return FR_ERR_NUMERIC;
    }
    return FR_OK;
}

void fri_audit_free(fri_audit *a)
{
    free(a->ids);
    free(a->e);
    free(a->size);
    free(a->de);
    free(a->own);
    memset(a, 0, sizeof *a);
}
