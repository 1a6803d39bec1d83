/*
 * The world's energy and the work done on it from outside (docs/world.md, "Energy"): kinetic and
 * gravitational energy of the free bodies and robots, the elastic energy held by the contacts,
 * the springs, the joints' springs and the robots' soft joint limits, and the work of forces
 * applied from outside (fr_body_apply_force/torque), of the springs' moving anchors (the haptic
 * coupling among them) and of the robots' motors. A step without numerical error can only
 * lose total − work (friction, damping and the implicit step dissipate); what it gains is the
 * step's error.
 */
#include "world_internal.h"

void fri_world_energy_begin(fr_world *w)
{
    for (int k = 0; k < w->norder; k++) {
        fri_body_state *s = &w->state[w->order[k]];
        /* (angvel0 still holds the last step's start) */
        s->steady_turn =
            fr_v3_norm2(fr_v3_sub(s->angvel, s->angvel0)) <= 1e-4 * fr_v3_norm2(s->angvel);
        s->dvel = fr_v3_norm(fr_v3_sub(s->vel, s->vel0));
        s->dangvel = fr_v3_norm(fr_v3_sub(s->angvel, s->angvel0));
        s->vel0 = s->vel;
        s->angvel0 = s->angvel;
    }
}

void fri_world_energy_end(fr_world *w)
{
    const double h = w->h;
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        fri_body_state *s = &w->state[i];
        if (w->model[i].type == FR_BODY_DYNAMIC || w->model[i].type == FR_BODY_LINK)
            w->work += 0.5 * h *
                       (fr_v3_dot(s->uforce, fr_v3_add(s->vel0, s->vel)) +
                        fr_v3_dot(s->utorque, fr_v3_add(s->angvel0, s->angvel)));
        s->uforce = s->utorque = fr_v3_zero();
    }
    /* the robots' motors (their PD included) over the step; not the limits' or the dampers'
     * forces: passive elements (a soft limit's spring energy is in the total) only take energy,
     * so what they give is the step's error, not work. Counted, a hard limit's trapezoid work
     * excused +5.9 J in one tick of a limp robot's drop, and a damper's, whose joint the step's
     * impact took from 556 to 14 rad/s, booked 4.1 J of the tick's loss where the energy fell by
     * less: a 0.8 J rise (a limp iCub's drop) */
    for (int r = 0; r < w->nrobots; r++) {
        const fri_robot *rb = &w->robots[r];
        int nv = fr_tree_nv(rb->tree);
        for (int v = 0; v < nv; v++) {
            double dw = 0.5 * h *
                        (rb->data->tau_out[v] - rb->data->tau_limit[v] - rb->data->tau_damper[v]) *
                        (rb->qd_save[v] + rb->data->qd[v]);
            w->work += dw;
            w->joint_work += dw;
        }
    }
}

double fri_world_contact_energy(const fr_world *w)
{
    double e = 0.0;
    for (int c = 0; c < w->ncontacts; c++) e += fr_world_contact_energy(w, c);
    return e;
}

double fri_world_contact_start_energy(const fr_world *w)
{
    double e = 0.0;
    const double still[6] = {0};
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (p->cmode || !p->modeled) continue;
        fr_contact_response r;
        fr_contact_respond(&p->model, still, 0.0, p->mu, NULL, -1.0, 0u, &r);
        e += fr_contact_response_energy(&p->model, &r);
    }
    return e;
}

void fr_world_energy_get(const fr_world *w, fr_world_energy *e)
{
    fr_world_energy r = {0};
    const fr_vec3 g = w->def.gravity;
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (w->model[i].type != FR_BODY_DYNAMIC) continue;
        const fri_body_state *s = &w->state[i];
        fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
        r.kinetic += 0.5 * w->model[i].mass * fr_v3_norm2(s->vel) +
                     0.5 * fr_v3_dot(wb, fr_m3_mulv(w->model[i].inertia, wb));
        r.potential -= w->model[i].mass * fr_v3_dot(g, s->pose.p);
    }
    for (int rr = 0; rr < w->nrobots; rr++) {
        const fri_robot *rb = &w->robots[rr];
        /* (with the rotors': the joint work that spins them is counted) */
        r.kinetic +=
            fr_tree_kinetic_energy(rb->tree, rb->data) + fr_tree_rotor_energy(rb->tree, rb->data);
        r.potential += fr_tree_potential_energy(rb->tree, rb->data);
        r.spring += fr_tree_limit_energy(rb->tree, rb->data); /* (the soft limits' springs) */
    }
    /* the contacts' elastic energy at the last step's end, from the model and response the step
     * kept (computed here, not in the step: a step that nobody audits does not pay for it) */
    r.contact = fri_world_contact_energy(w);
    r.spring += fri_world_spring_energy(w) + fri_world_joint_spring_energy(w);
    r.total = r.kinetic + r.potential + r.contact + r.spring;
    r.work = w->work;
    r.placement = w->placement;
    r.joint_work = w->joint_work;
    r.time = w->time;
    *e = r;
}
