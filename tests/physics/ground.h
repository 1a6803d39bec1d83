/* The property tests' ground: a static slab 10 m thick whose top is z = 0. */
#ifndef FR_TESTS_PHYSICS_GROUND_H
#define FR_TESTS_PHYSICS_GROUND_H

#include "frtest.h"
#include "fureru/world.h"

/* hx, hy: its half extents along x and y, m */
static inline fr_body_id add_ground_slab(fr_world *w, double hx, double hy)
{
    fr_body_def gd = fr_body_def_default();
    gd.type = FR_BODY_STATIC;
    gd.pose.p = fr_v3(0, 0, -5);
    fr_body_id ground;
    ck_assert_int_eq(fr_world_add_body(w, &gd, &ground), FR_OK);
    fr_shape *gs = NULL;
    ck_assert_int_eq(fr_shape_create_box(fr_v3(hx, hy, 5), &gs), FR_OK);
    fr_shape_def gsd = fr_shape_def_default(gs);
    ck_assert_int_eq(fr_body_add_shape(w, ground, &gsd), FR_OK);
    return ground;
}

#endif
