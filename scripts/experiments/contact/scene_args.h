/* The experiment tools' common start: SCENE ARG [K=V ...] on the command line, the scene loaded
 * with the --set values after the first two arguments (its settle as the scene says). */
#ifndef SCENE_ARGS_H
#define SCENE_ARGS_H
#include <stdio.h>
#include "fureru/scene.h"
static fr_scene *scene_args_load(int argc, char **argv, const char *usage)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return NULL;
    }
    fr_scene *s = NULL;
    fr_diag dg;
    if (fr_scene_load(argv[1], (const char *const *)argv + 3, argc - 3, &s, &dg)) {
        printf("load: %s\n", dg.msg);
        return NULL;
    }
    return s;
}
#endif
