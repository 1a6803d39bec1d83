/*
 * fureru collision: convex shapes, AABBs, sweep and prune, GJK, and the intersection of two
 * convex polyhedra by the Muller–Preparata method.
 */
#ifndef FURERU_COLLISION_H
#define FURERU_COLLISION_H

#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which body's surface a face of an intersection polyhedron lies on. */
enum fr_face_owner { FR_FACE_A = 0, FR_FACE_B = 1 };

/*
 * The intersection of convex polyhedra A and B (world coordinates). Faces are convex polygons
 * with vertices counter-clockwise seen from outside; face f uses
 * vidx[face_start[f] .. face_start[f] + face_count[f] - 1]. face_normal is the outward unit
 * normal of the face (equal to the outward normal of the face of A or B it lies on) and
 * face_owner says which. Storage is owned by the caller (see the capacity fields): computing an
 * intersection never allocates.
 */
typedef struct fr_polyhedron_out {
    int nverts, nfaces, nidx;
    int max_verts, max_faces, max_idx; /* capacities of the arrays below */
    fr_vec3 *verts;                    /* m */
    int *vidx;
    int *face_start, *face_count;
    unsigned char *face_owner; /* enum fr_face_owner */
    fr_vec3 *face_normal;
    double volume;     /* m³ */
    fr_vec3 centroid;  /* m */
    fr_vec3 interior;  /* the common interior point the construction started from, m */
} fr_polyhedron_out;

#ifdef __cplusplus
}
#endif
#endif
