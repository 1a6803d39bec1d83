/* Robots in scene files: the hooks scene.c calls (schema in docs/robots.md). */
#ifndef FR_SCENE_ROBOTS_H
#define FR_SCENE_ROBOTS_H

#include "fureru/config.h"
#include "fureru/control.h"
#include "scene_internal.h"

/* Before the world exists: parse the `robots` list (NULL when absent), load the URDFs, build the
 * trees, shapes and controllers, and remember them in sc->robots. Errors name file:line:column
 * (YAML) or the URDF's file:line. */
int fri_scene_robots_prepare(const fr_cfg_node *robots_node, fri_scene *sc, fr_diag *d);

/* What the robots need of the world's fixed capacities (all 0 without robots). */
typedef struct fri_robots_capacity {
    int robots;
    int bodies;    /* one per link */
    int shapes;    /* collision shapes of all links */
    int max_faces; /* largest polytope face count among them (for max_shape_faces) */
} fri_robots_capacity;
fri_robots_capacity fri_scene_robots_capacity(const fri_scene *sc);

/* After the world, materials and bodies exist: add the robots, attach link shapes, set initial
 * states and gains, install controllers. */
int fri_scene_robots_build(fri_scene *sc, fr_diag *d);

/* Frees what prepare made (call after fr_world_destroy; safe when prepare never ran). */
void fri_scene_robots_destroy(fri_scene *sc);

/* The gait / hand controller of a robot (NULL when it has another kind or none): lets a server
 * change commands while running (fr_gait_set_command). */
fr_gait *fri_scene_robot_gait(fri_scene *sc, const char *robot);
fr_hand *fri_scene_robot_hand(fri_scene *sc, const char *robot);

#endif
