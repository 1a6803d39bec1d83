/*
 * Test helper: the intersection of half-spaces by brute force (every triple of planes, kept when
 * inside all others), written as an fr_polyhedron_out. Independent of src/collision; used to
 * hand the contact module exact intersections (box ∩ box, box ∩ half-space, wedges…).
 */
#ifndef FR_TEST_POLYBUILD_H
#define FR_TEST_POLYBUILD_H

#include "fureru/collision.h"
#include "fureru/math.h"

#define TP_MAXP 32
#define TP_MAXV 128
#define TP_MAXF 32
#define TP_MAXI 512

/* n·x <= d, owner FR_FACE_A or FR_FACE_B */
typedef struct tp_plane {
    fr_vec3 n;
    double d;
    int owner;
} tp_plane;

typedef struct tp_poly {
    fr_vec3 verts[TP_MAXV];
    int vidx[TP_MAXI];
    int fstart[TP_MAXF], fcount[TP_MAXF];
    unsigned char owner[TP_MAXF];
    fr_vec3 fnormal[TP_MAXF];
    fr_polyhedron_out out; /* points into the arrays above */
} tp_poly;

/* Build the intersection; returns the number of faces (0 when empty). tol: absolute distance
 * under which a point is on a plane / two vertices are one. */
int tp_build(const tp_plane *pl, int np, double tol, tp_poly *tp);
/* The 6 planes of a box (half extents `half`, pose of its centre). */
void tp_box_planes(fr_pose pose, fr_vec3 half, int owner, tp_plane *out6);
/* The polyhedron with A and B swapped (owners flipped), same geometry. */
void tp_swap_owners(tp_poly *tp);

#endif
