/* Face loops of a convex hull (start-up code only). */
#ifndef FR_COLLISION_HULL_H
#define FR_COLLISION_HULL_H

#include "fureru/collision.h"

typedef struct fri_hull_loops {
    int nverts, nfaces, nloop;
    fr_vec3 *verts;
    int *face_count; /* per face */
    int *loop;       /* vertex indices, counter-clockwise seen from outside, face after face */
} fri_hull_loops;

/* Hull of n points by qhull (coplanar facets merged). Unused points are dropped. */
int fri_hull_qhull(const fr_vec3 *pts, int n, fri_hull_loops *h);
void fri_hull_loops_free(fri_hull_loops *h);

/* Build a polytope (planes, adjacency, dual triangulation, mass properties) from face loops. */
int fri_polytope_build(fr_polytope *p, const fr_vec3 *verts, int nverts, const int *face_count,
                       const int *loop, int nfaces);
void fri_polytope_free(fr_polytope *p);
/* Scale vertices by diag(s) and recompute planes and mass properties (topology unchanged). */
void fri_polytope_scale(fr_polytope *p, fr_vec3 s);

#endif
