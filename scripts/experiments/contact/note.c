/* note sx sy sz yaw mass dt deg eps: the settle's note for the slope case */
#include <stdio.h>
#include "fureru/scene.h"
#include "fureru/world.h"
#include "slope_case.h"
int main(int argc, char **argv)
{
    if (argc < 9) return 2;
    double sx, sy, sz, dt, mu;
    fr_scene *s = slope_case_args(argv, 0, &sx, &sy, &sz, &dt, &mu);
    if (!s) return 1;
    const char *n = fr_world_settle_note(fr_scene_world(s));
    printf("note: %s\n", n && *n ? n : "(none)");
    fr_scene_destroy(s);
    return 0;
}
