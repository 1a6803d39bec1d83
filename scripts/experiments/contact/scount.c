/* scount SCENE SECONDS: steps a scene and prints the solver's counts per step (pair models
 * advanced, geometry tangents measured) */
#include <stdio.h>
#include <stdlib.h>
#include "fureru/scene.h"
#include "fureru/world.h"
int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    fr_scene *s = NULL;
    fr_diag dg;
    if (fr_scene_load(argv[1], NULL, 0, &s, &dg)) {
        printf("load: %s\n", dg.msg);
        return 1;
    }
    fr_world *w = fr_scene_world(s);
    long n = (long)(atof(argv[2]) / fr_world_get_def(w)->dt + 0.5);
    fr_world_solver_stats a, b;
    fr_world_solver_stats_get(w, &a);
    for (long i = 0; i < n; i++) fr_world_step(w);
    fr_world_solver_stats_get(w, &b);
    printf("%s: %ld steps, advanced %.2f, tangents %.3f, newton %.2f per step\n", argv[1], n,
           (double)(b.advanced - a.advanced) / n, (double)(b.tangents - a.tangents) / n,
           (double)(b.newton_iterations - a.newton_iterations) / n);
    fr_scene_destroy(s);
    return 0;
}
