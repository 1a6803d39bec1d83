/* Independent reference computations for the collision tests (qhull-based, slow, allocating). */
#ifndef FR_TEST_COLLISION_REF_H
#define FR_TEST_COLLISION_REF_H

#include "fureru/collision.h"

/* Muller–Preparata done literally with qhull: dual points n/(d − n·p) about p, their hull,
 * facets dualised back to vertices, and the volume of the hull of those vertices.
 * Returns 0 and the volume, or −1 if qhull failed. */
int ref_mp_volume(const fr_vec3 *n, const double *d, int np, fr_vec3 p, double *vol);

/* Distance between conv(a) and conv(b): the distance from the origin to the triangulated hull of
 * the Minkowski difference, minimised over its triangles; when they overlap, minus the
 * penetration depth (the origin's distance to the hull's boundary). */
double ref_distance(const fr_vec3 *a, int na, const fr_vec3 *b, int nb);

/* Closest point of triangle (a, b, c) to p (Ericson, Real-Time Collision Detection, 5.1.5). */
fr_vec3 ref_closest_on_triangle(fr_vec3 p, fr_vec3 a, fr_vec3 b, fr_vec3 c);

/* Convex hull volume of a point set by qhull. */
double ref_hull_volume(const fr_vec3 *pts, int n);

#endif
