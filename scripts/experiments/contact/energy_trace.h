/* A step's energy trace for the experiment tools (etrace, egain): its rise of energy less work,
 * the part the models rebuilt at its start brought (their start energy less what the last step's
 * end held) and the part the step itself made, and each contact's model and response. */
#ifndef FR_EXPERIMENTS_ENERGY_TRACE_H
#define FR_EXPERIMENTS_ENERGY_TRACE_H
#include <stdio.h>

#include "fureru/contact.h"
#include "fureru/world.h"
#include "world/world_internal.h"

static void energy_trace_step(const fr_world *w, long i, const fr_world_energy *e0,
                              const fr_world_energy *e)
{
    double est = 0.0;
    for (int c = 0; c < w->ncontacts; c++)
        est += fr_contact_model_energy(&w->pairs[w->contacts[c]].model);
    const double rise = (e->total - e->work) - (e0->total - e0->work);
    printf("step %ld: rise %.4g J  ke %.6g pe %.6g contact %.5g  rebuild jump %.4g in-step %.4g\n",
           i, rise, e->kinetic, e->potential, e->contact, est - e0->contact,
           (e->total - e->work) - (e0->kinetic + e0->potential + e0->spring + est - e0->work));
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        printf("   pair %d-%d gt_on %d gt_e %.3g depth0 %.3g max %.3g ds %.3g area %.3g N %.4g "
               "slip %d adv %d npts %d\n",
               p->slot_a, p->slot_b, p->model.gt_on, p->resp.gt_energy, p->model.depth0,
               p->model.max_depth0, p->model.ds, p->model.area, p->resp.normal, p->resp.slip,
               p->geo_ok, p->model.npts);
        const fr_contact_model *m = &p->model;
        const double still[6] = {0};
        fr_contact_response r;
        fr_contact_respond(m, still, 0.0, p->mu, NULL, -1.0, 0u, &r);
        printf(
            "      bond %.3g (q0 %.3g m, kf %.3g) model %.4g at rest %.4g (bond %.3g) late %.3g\n",
            0.5 * m->kf * (m->q0[0] * m->q0[0] + m->q0[1] * m->q0[1] + m->q0[2] * m->q0[2]),
            sqrt(m->q0[0] * m->q0[0] + m->q0[1] * m->q0[1] + m->q0[2] * m->q0[2]), m->kf,
            fr_contact_model_energy(m), fr_contact_response_energy(m, &r),
            0.5 * m->kf * (r.bond[0] * r.bond[0] + r.bond[1] * r.bond[1] + r.bond[2] * r.bond[2]),
            p->late);
    }
}

#endif
