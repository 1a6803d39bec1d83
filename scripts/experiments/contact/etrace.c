/* etrace SCENE SECONDS [K=V ...]: per step the world's energy less work and its rise, and each
 * contact's state (gt_on, gt energy, elastic energy, depth) around the worst rise (FROM..TO) */
#include <stdio.h>
#include <stdlib.h>
#include "scene_args.h"
#include "fureru/world.h"
#include "world/world_internal.h"
#include "fureru/contact.h"
int main(int argc, char **argv)
{
    fr_scene *s = scene_args_load(argc, argv, "SCENE SECONDS [K=V ...]");
    if (!s) return 1;
    fr_world *w = fr_scene_world(s);
    long n = (long)(atof(argv[2]) / fr_world_get_def(w)->dt + 0.5);
    long from = getenv("FROM") ? atol(getenv("FROM")) : -1,
         to = getenv("TO") ? atol(getenv("TO")) : -1;
    fr_world_energy e0, e;
    fr_world_energy_get(w, &e0);
    double worst = 0;
    long at = -1;
    for (long i = 0; i < n; i++) {
        fr_world_step(w);
        fr_world_energy_get(w, &e);
        double rise = (e.total - e.work) - (e0.total - e0.work);
        if (rise > worst) worst = rise, at = i;
        double est = 0.0;
        for (int c = 0; c < w->ncontacts; c++)
            est += fr_contact_model_energy(&w->pairs[w->contacts[c]].model);
        if (i >= from && i <= to) {
            printf("step %ld: rise %.4g J  ke %.5g pe %.5g contact %.5g  rebuild jump %.4g in-step "
                   "%.4g\n",
                   i, rise, e.kinetic, e.potential, e.contact, est - e0.contact,
                   (e.total - e.work) - (e0.kinetic + e0.potential + e0.spring + est - e0.work));
            for (int c = 0; c < w->ncontacts; c++) {
                fri_pair *p = &w->pairs[w->contacts[c]];
                printf("   pair %d-%d gt_on %d gt_e %.3g depth0 %.3g max %.3g ds %.3g area %.3g N "
                       "%.4g slip %d adv %d\n",
                       p->slot_a, p->slot_b, p->model.gt_on, p->resp.gt_energy, p->model.depth0,
                       p->model.max_depth0, p->model.ds, p->model.area, p->resp.normal,
                       p->resp.slip, p->geo_ok);
            }
        }
        e0 = e;
    }
    printf("worst rise %.4g J at step %ld\n", worst, at);
    fr_scene_destroy(s);
    return 0;
}
