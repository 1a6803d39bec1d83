/* etrace SCENE SECONDS [K=V ...]: per step the world's energy less work and its rise, and each
 * contact's state (gt_on, gt energy, elastic energy, depth) around the worst rise (FROM..TO) */
#include <stdio.h>
#include <stdlib.h>
#include "energy_trace.h"
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
        if (i >= from && i <= to) energy_trace_step(w, i, &e0, &e);
        e0 = e;
    }
    printf("worst rise %.4g J at step %ld\n", worst, at);
    fr_scene_destroy(s);
    return 0;
}
