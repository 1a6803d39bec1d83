/* runscene SCENE NSTEP [K=V ...]: loads a scene (settling it as the scene says), prints the
 * settle's note, steps it and prints how far the body BODY (default "b") moved and turned from
 * where the settle left it (EVERY=n: every n steps too) */
#include <stdio.h>
#include <stdlib.h>
#include "scene_args.h"
#include "fureru/world.h"
int main(int argc, char **argv)
{
    fr_scene *s = scene_args_load(argc, argv, "SCENE NSTEP [K=V ...]");
    if (!s) return 1;
    fr_world *w = fr_scene_world(s);
    printf("note: %s\n", fr_world_settle_note(w));
    const long n = atol(argv[2]);
    const int every = getenv("EVERY") ? atoi(getenv("EVERY")) : 0;
    fr_body_id id;
    if (fr_world_find_body(w, getenv("BODY") ? getenv("BODY") : "b", &id)) {
        printf("no such body\n");
        return 1;
    }
    fr_pose p0, p;
    fr_body_get_pose(w, id, &p0);
    for (long i = 0; i < n; i++) {
        fr_world_step(w);
        fr_body_get_pose(w, id, &p);
        if (every > 0 && i % every == 0)
            printf("%ld d %.3g a %.4g\n", i, fr_v3_dist(p.p, p0.p), fr_q_angle_between(p.q, p0.q));
    }
    fr_body_get_pose(w, id, &p);
    printf("end d %.3g a %.4g\n", fr_v3_dist(p.p, p0.p), fr_q_angle_between(p.q, p0.q));
    fr_scene_destroy(s);
    return 0;
}
