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
    }
}

#endif
