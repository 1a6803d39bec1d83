/* Internal scene state shared by the scene module's files. */
#ifndef FR_SCENE_INTERNAL_H
#define FR_SCENE_INTERNAL_H

#include "fureru/scene.h"

struct fr_scene {
    char path[1024];
    char name[128];
    double duration; /* s */
    fr_world *world;
};
typedef struct fr_scene fri_scene;

/* position + orientation ([w, x, y, z]) or rpy (rad) of a mapping. */
int fri_scene_parse_pose(const fr_cfg_node *map, fr_pose *pose, fr_diag *d);

#endif
