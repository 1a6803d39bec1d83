/* src/collision: declarations shared between the module's files (not public). */
#ifndef FR_COLLISION_INTERNAL_H
#define FR_COLLISION_INTERNAL_H

#include "fureru/collision.h"

/* One triangle of the dual hull under construction: its dual is the primal vertex x (in the
 * seed's frame); f[] are plane indices (dual points), counter-clockwise seen from outside;
 * nb[k] is the triangle across edge f[k] → f[k+1]; vid names the vertex (triangles meeting at a
 * vertex of degree > 3 share it); f[0] < 0 marks a free slot. 64 bytes. */
typedef struct fri_mp_tri {
    fr_vec3 x;   /* m */
    double viol; /* n_j·x − d_j for the plane being inserted, m */
    int f[3];
    int nb[3];
    int mark; /* stamp: member of the visible set */
    int vid;
} fri_mp_tri;

/* A horizon edge: triangle t (visible), edge k (a → b), u = invisible neighbour, next = the
 * horizon edge starting at b, x = new vertex */
typedef struct fri_mp_edge {
    int t, k, a, b, u, next;
    fr_vec3 x;
    int vid;
} fri_mp_edge;

/* Support point of the shape along d (local coordinates). With inflate, curved shapes use
 * support_radius, whose shape contains the polytope. */
fr_vec3 fri_shape_support(const fr_shape *s, fr_vec3 d, bool inflate);

/* GJK in A's frame: B is placed by rotation Rab (B-local → A-local) and translation tab. With
 * verdict_only, stop as soon as a separating direction is found (dist is then a lower bound and
 * pa, pb are not computed). */
typedef struct fri_gjk_out {
    double dist;
    fr_vec3 pa, pb; /* A's frame */
    fr_vec3 v;      /* pa − pb */
    bool overlap;
    int iters;
} fri_gjk_out;
void fri_gjk(const fr_shape *a, const fr_shape *b, const fr_mat3 *Rab, fr_vec3 tab, fr_vec3 v0,
             bool inflate, bool verdict_only, fri_gjk_out *out);

/* The intersection with explicit relative placement (B in A's frame) and an output frame. */
int fri_mp_intersect(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb,
                     const fr_mat3 *Rab, fr_vec3 tab, fr_collide_work *w, fr_polyhedron_out *out);

#endif
