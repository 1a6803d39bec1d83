/*
 * fureru collision: convex shapes, AABBs, sweep and prune, GJK, and the intersection of two
 * convex polyhedra by the Muller–Preparata method.
 *
 * Shapes live in local coordinates (curved shapes along local z) and are placed by an fr_pose.
 * Every shape has a polyhedral form (fr_polytope) that the intersection uses: exact for boxes and
 * convex hulls, a volume-matched approximation for spheres, capsules and cylinders (see
 * fr_shape_create_sphere and friends). GJK and AABBs use exact support functions.
 *
 * Memory: shapes and the sweep-and-prune structure are built at start-up (they allocate);
 * fr_collide_pair, fr_polytope_intersect, fr_gjk_distance and fr_sap_update never allocate: they
 * use a caller-owned fr_collide_work and fr_polyhedron_out sized by fr_collide_work_init and
 * fr_polyhedron_out_init. Everything is re-entrant (no globals, no static buffers); one work
 * struct per thread.
 */
#ifndef FURERU_COLLISION_H
#define FURERU_COLLISION_H

#include <stddef.h>
#include <stdint.h>

#include "fureru/base.h"
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
 *
 * When a face of A and a face of B lie in the same plane with the same outward normal (two equal
 * boxes stacked: their side faces), the intersection has one face there; it is tagged with the
 * owner of the polyhedron the construction was seeded with (see fr_polytope_intersect), so that
 * opposite shared faces carry the same tag and cancel in Σ(A area vectors) − Σ(B area vectors).
 * Faces of zero area are dropped; every face has at least 3 distinct vertices.
 */
typedef struct fr_polyhedron_out {
    int nverts, nfaces, nidx;
    int max_verts, max_faces, max_idx; /* capacities of the arrays below */
    fr_vec3 *verts;                    /* m */
    int *vidx;
    int *face_start, *face_count;
    unsigned char *face_owner; /* enum fr_face_owner */
    fr_vec3 *face_normal;
    double volume;    /* m³ */
    fr_vec3 centroid; /* m */
    fr_vec3 interior; /* a point strictly inside A and B: the intersection's centroid, which
                         is the duality's origin (see fr_polytope_intersect), m */
} fr_polyhedron_out;

/* ---------------------------------------------------------------- shapes */

typedef enum fr_shape_type {
    FR_SHAPE_BOX = 0,
    FR_SHAPE_SPHERE = 1,
    FR_SHAPE_CAPSULE = 2,  /* segment from (0,0,-h) to (0,0,h) swept by a sphere */
    FR_SHAPE_CYLINDER = 3, /* axis local z, from z = -h to z = h (URDF convention) */
    FR_SHAPE_CONVEX = 4,   /* convex hull of a point set */
} fr_shape_type;

/* Default resolutions of the polyhedral approximations (see the create functions). */
#define FR_SPHERE_RES_DEFAULT   3  /* geodesic frequency: 20·f² triangles */
#define FR_CYLINDER_RES_DEFAULT 16 /* sides of the prism */
#define FR_CAPSULE_RES_DEFAULT  12 /* sides; N/4 latitude rings per hemisphere */

/* Internal to the intersection: one triangle of the triangulated dual of a polytope (the dual of
 * vertex `vert`, whose incident faces f[] are counter-clockwise seen from outside), with the
 * neighbouring triangle across edge f[k] → f[k+1] in nb[k]. */
typedef struct fr_dual_tri {
    int f[3];
    int nb[3];
    int vert;
} fr_dual_tri;

/* A convex polyhedron in local coordinates, with what the intersection and the mass model need. */
typedef struct fr_polytope {
    int nverts, nfaces, nloop;
    fr_vec3 *verts;       /* m */
    fr_vec3 *normal;      /* per face: outward unit normal */
    double *offset;       /* per face: normal·x = offset on the face plane, m */
    int *face_start;      /* per face: first entry in loop[] */
    int *face_count;      /* per face: number of vertices */
    int *loop;            /* vertex indices, counter-clockwise seen from outside */
    int *adj_start, *adj; /* vertex v's neighbours: adj[adj_start[v] .. adj_start[v+1]-1] */
    int ntris;            /* = 2·nfaces − 4 */
    fr_dual_tri *dual;    /* triangulated dual (the seed of the intersection) */
    double volume;        /* m³ */
    fr_vec3 centroid;     /* m */
    fr_mat3 inertia;      /* about the centroid, per unit density (m⁵; × kg/m³ → kg·m²) */
    double radius;        /* max |v|: bounding sphere about the local origin, m */
    fr_vec3 box_c, box_h; /* local AABB: centre and half extents, m */
} fr_polytope;

/* A shape. Fields are read-only after creation. */
typedef struct fr_shape {
    fr_shape_type type;
    fr_vec3 half;          /* box: half extents, m */
    double radius;         /* sphere, capsule, cylinder: radius, m */
    double half_length;    /* capsule, cylinder: half length along local z, m */
    int resolution;        /* curved shapes: the resolution the polytope was built with */
    double support_radius; /* curved shapes: radius of the true shape grown just enough to contain
                              the polytope (vertex radius); GJK uses it inside fr_collide_pair and
                              the AABB uses it, m */
    double volume;         /* of the true shape, m³ */
    fr_vec3 centroid;      /* of the true shape, local, m */
    fr_mat3 inertia;       /* of the true shape about its centroid, per unit density, m⁵ */
    double bound_radius;   /* bounding sphere about the local origin (true shape and polytope), m */
    fr_polytope poly;      /* the polyhedral form used by the intersection */
} fr_shape;

/*
 * Constructors (start-up only: they allocate; qhull builds hulls of point sets). Return 0 or a
 * negative FR_ERR_*; *out is NULL on failure. Destroy with fr_shape_destroy.
 *
 * Approximations of curved shapes, all volume-matched (the polytope's volume equals the true
 * shape's to rounding), with vertices on a slightly larger copy of the true surface:
 * - sphere: geodesic icosphere of frequency f = resolution ≥ 1 (10f²+2 vertices, 20f² faces),
 *   scaled uniformly; its faces lie outside radius r·(1 − e_in) and its vertices inside
 *   r·(1 + e_out): f = 1: 6.1%/18.2%, f = 2: 2.3%/4.6%, f = 3: 0.84%/2.1%, f = 4: 0.64%/1.2%,
 *   f = 8: 0.17%/0.29% (fr_polytope_radii gives the band; a sphere–sphere or sphere–plane
 *   contact volume lies between the analytic values for those two radii). Cost grows with the
 *   face count: see bench/collision;
 * - cylinder: regular prism with N = resolution ≥ 3 sides, scaled radially so its cross-section
 *   area is π r²;
 * - capsule: N = resolution ≥ 4 sides, max(1, N/4) latitude rings per hemisphere, scaled
 *   radially so its volume is that of the capsule.
 * Pass resolution ≤ 0 for the default.
 */
int fr_shape_create_box(fr_vec3 half, fr_shape **out);
int fr_shape_create_sphere(double radius, int resolution, fr_shape **out);
int fr_shape_create_capsule(double radius, double half_length, int resolution, fr_shape **out);
int fr_shape_create_cylinder(double radius, double half_length, int resolution, fr_shape **out);
/* Convex hull of n ≥ 4 points (m, local); FR_ERR_INVAL when the points are (nearly) flat. */
int fr_shape_create_convex(const fr_vec3 *points, int n, fr_shape **out);
void fr_shape_destroy(fr_shape *s);
/* An exact copy of a shape (its own arrays, the same numbers): what a scene's repeated bodies
 * use instead of building the same hull again. */
int fr_shape_clone(const fr_shape *src, fr_shape **out);

/* Mass (kg), centre of mass (local, m) and inertia about the centre of mass (local axes, kg·m²)
 * of the true shape at the given density (kg/m³). Exact for every type. */
void fr_shape_mass(const fr_shape *s, double density, double *mass, fr_vec3 *com, fr_mat3 *inertia);

/* Farthest point of the true shape along dir (local coordinates). */
fr_vec3 fr_shape_support(const fr_shape *s, fr_vec3 dir);

/* Smallest distance from the local origin to a face plane and largest vertex distance: the
 * polytope lies between these spheres (for a sphere's approximation, the resolution error). */
void fr_polytope_radii(const fr_polytope *p, double *inner, double *outer);

/* The polytope's least and greatest width over its face normals (its extent along each), m: a
 * box's shortest and longest side. */
void fr_shape_widths(const fr_shape *s, double *least, double *greatest);

/*
 * How the polytope stands on its side facing −n (n in the shape's frame, any length > 0): its
 * height, the extent along n, and its width, the least extent across n over the directions of
 * its face normals' parts square to n (those within ~6° of n skipped), both m. A box standing
 * on a face: its height and its shorter side there. FR_ERR_INVAL for a zero or non-finite n.
 */
int fr_shape_stance(const fr_shape *s, fr_vec3 n, double *width, double *height);

/* Curved shapes (sphere, capsule, cylinder): how far the polytope strays from the true surface
 * either way, m — its vertices outside the true shape, and the true shape beyond its face
 * planes; 0 for boxes and hulls (the polytope is the shape). A distance measured on the true
 * shapes is the polytopes' within the sum of the two shapes' slacks. */
double fr_shape_slack(const fr_shape *s);

/* ---------------------------------------------------------------- AABB */

typedef struct fr_aabb {
    fr_vec3 lo, hi; /* m */
} fr_aabb;

/* Axis-aligned box holding the shape (and its polytope) at the pose; exact for box, sphere,
 * capsule, cylinder (using support_radius) and convex hulls. */
fr_aabb fr_shape_aabb(const fr_shape *s, fr_pose pose);

static inline bool fr_aabb_overlap(fr_aabb a, fr_aabb b)
{
    return a.lo.x <= b.hi.x && b.lo.x <= a.hi.x && a.lo.y <= b.hi.y && b.lo.y <= a.hi.y &&
           a.lo.z <= b.hi.z && b.lo.z <= a.hi.z;
}

/* ---------------------------------------------------------------- sweep and prune */

/*
 * Broad phase: object intervals on one axis kept sorted between calls by insertion sort (cost
 * O(n + swaps) when objects move little), overlap tested on the other two axes. A pair (a, b)
 * is reported when the AABBs overlap (closed intervals), not both are static,
 * (group_a & mask_b) && (group_b & mask_a), and the pair is not on the ignore list.
 */
typedef struct fr_sap fr_sap;
typedef struct fr_sap_pair {
    int a, b; /* proxy ids, a < b */
} fr_sap_pair;

/* capacity objects at most, max_ignore ignored pairs at most. With arena != NULL, memory comes
 * from it (fr_sap_destroy then frees nothing); otherwise from malloc. */
int fr_sap_create(fr_sap **out, int capacity, int max_ignore, fr_arena *arena);
void fr_sap_destroy(fr_sap *sap);
/* Returns the proxy id (≥ 0) or FR_ERR_FULL. */
int fr_sap_insert(fr_sap *sap, fr_aabb box, uint32_t group, uint32_t mask, bool is_static);
int fr_sap_remove(fr_sap *sap, int id);
/* New box for a proxy (cheap: the sort happens in fr_sap_update). */
int fr_sap_move(fr_sap *sap, int id, fr_aabb box);
/* Never report the pair (a, b) (e.g. bodies joined by a joint). FR_ERR_FULL when the list is. */
int fr_sap_ignore_pair(fr_sap *sap, int a, int b);
/* Axis of largest variance of the box centres (0, 1, 2). */
int fr_sap_choose_axis(const fr_sap *sap);
/* Sort on another axis (a full O(n log n) re-sort, no allocation). */
int fr_sap_set_axis(fr_sap *sap, int axis);
int fr_sap_axis(const fr_sap *sap);
/*
 * Re-sort (insertion sort) and write the candidate pairs into pairs[0 .. max_pairs-1];
 * *npairs is the number of pairs found. Returns 0, or FR_ERR_FULL when more than max_pairs
 * pairs exist (the first max_pairs are written, *npairs is the full count).
 */
int fr_sap_update(fr_sap *sap, fr_sap_pair *pairs, int max_pairs, int *npairs);
/* Element swaps done by the last update's insertion sort (for benchmarks). */
long fr_sap_last_swaps(const fr_sap *sap);

/* ---------------------------------------------------------------- GJK */

typedef struct fr_gjk_result {
    double distance; /* between the shapes, 0 when they overlap or touch, m */
    fr_vec3 pa, pb;  /* closest points on A and on B (world); when overlapping, both are the
                        common point from the final simplex (possibly on a boundary) */
    fr_vec3 dir;     /* pa − pb when apart, in A's local frame: pass it back as warm start */
    bool overlap;
    int iterations;
} fr_gjk_result;

/*
 * GJK (Gilbert–Johnson–Keerthi) distance between the true shapes, with the signed-volumes
 * sub-algorithm (Montanari, Petrinic and Barbieri, 2017). warm_dir (A's local frame, may be
 * NULL) is the previous result's dir. Never allocates.
 */
void fr_gjk_distance(const fr_shape *a, fr_pose pa, const fr_shape *b, fr_pose pb,
                     const fr_vec3 *warm_dir, fr_gjk_result *res);

/* ---------------------------------------------------------------- intersection */

/* Scratch memory for one thread's intersections (contents private: use the init/free calls). */
typedef struct fr_collide_work {
    int max_planes, max_tris, max_hz, max_vids;
    fr_vec3 *pn;            /* the other polytope's planes in the seed's frame: normals */
    double *pd;             /* and offsets, m */
    int *plane_mark;        /* per plane: stamp */
    int *plane_edge;        /* per plane: the horizon edge that starts there */
    struct fri_mp_tri *tri; /* the dual hull's triangles */
    int *stack, *free_tri;  /* visible set; free slots */
    int *scratch, *scratch_mark;
    struct fri_mp_edge *hz;  /* horizon */
    int *vid_mark, *vid_map; /* per vertex id: stamp, output index */
    int stamp;
    long fixups;      /* horizons that needed the slow, repairing path (diagnostics) */
    long holes;       /* tests only: holes faked */
    long inverted;    /* planes inserted from the invisible side (diagnostics) */
    int side;         /* tests only: 0 = the side nearer the plane, 1 = always the visible side,
                         2 = the invisible side whenever it can be */
    int force_repair; /* tests only: 1 = take the repairing path for every horizon; 2 = and
                         fake an invisible triangle inside the visible patch for it to fix */
} fr_collide_work;

/* Per-pair state kept by the caller between ticks (zero-initialise or fr_collide_cache_reset). */
typedef struct fr_collide_cache {
    fr_vec3 dir;      /* last GJK direction, A's local frame */
    fr_vec3 interior; /* last interior point, A's local frame, m */
    double distance;  /* when apart: a lower bound on the distance (GJK stops at the first
                         separating direction), m; 0 when overlapping */
    int state;        /* 0 unknown, 1 apart, 2 overlapping */
} fr_collide_cache;

static inline void fr_collide_cache_reset(fr_collide_cache *c)
{
    *c = (fr_collide_cache){{0, 0, 0}, {0, 0, 0}, 0.0, 0};
}

/* Largest face count over the shapes' polytopes: the size parameter below. */
int fr_shapes_max_faces(const fr_shape *const *shapes, int n);
/* Bytes fr_collide_work_init + fr_polyhedron_out_init take from an arena (with alignment). */
size_t fr_collide_memory(int max_faces);
/* Size for pairs of polytopes with at most max_faces faces each. arena NULL → malloc (then free
 * with fr_collide_work_free / fr_polyhedron_out_free). */
int fr_collide_work_init(fr_collide_work *w, int max_faces, fr_arena *arena);
void fr_collide_work_free(fr_collide_work *w);
int fr_polyhedron_out_init(fr_polyhedron_out *o, int max_faces, fr_arena *arena);
void fr_polyhedron_out_free(fr_polyhedron_out *o);

/*
 * A ∩ B of two polytopes by Muller–Preparata (method, tolerances and memory bounds: see
 * src/collision/mp.c): the dual hull of both polytopes' face planes is built incrementally in
 * `w`, seeded with the precomputed dual of the polytope with more faces; output in world
 * coordinates. out->interior is the centroid of the intersection, a certified deep interior
 * point (every chord through it is split at most 3:1), usable as the duality's origin.
 * Returns 1 when the intersection has positive thickness (2·volume/area > 1e-9 × the smaller
 * shape's size + 1e-11 × the larger's), 0 when it is empty or flat (touching; out->nfaces = 0,
 * volume = 0), or FR_ERR_FULL (buffers too small for these polytopes) / FR_ERR_NUMERIC
 * (topology could not be repaired; never seen in the tests).
 */
int fr_polytope_intersect(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb,
                          fr_collide_work *w, fr_polyhedron_out *out);

/*
 * The narrow phase the contact module calls for each candidate pair: GJK (warm-started from
 * cache) rejects separated pairs; overlapping pairs get their intersection polyhedron. When the
 * cache says the pair overlapped at the previous call, GJK is skipped and the intersection is
 * computed directly. Returns 1 (overlap, *out filled), 0 (apart or touching; out->nfaces = 0,
 * cache->distance is a lower bound on the distance), or a negative FR_ERR_*. Never allocates.
 * Curved shapes: GJK runs on the true shape grown to support_radius (it contains the polytope),
 * the verdict that counts is the polytopes' intersection.
 */
int fr_collide_pair(const fr_shape *a, fr_pose pa, const fr_shape *b, fr_pose pb,
                    fr_collide_cache *cache, fr_collide_work *w, fr_polyhedron_out *out);

/*
 * Separating-axis direction of two polytopes over their face normals: the face normal (from A
 * towards B) along which they are farthest apart, or overlap least. For shapes that touch, where
 * GJK has no direction to give, it is the touching faces' normal. Edge–edge axes are not tried.
 */
fr_vec3 fr_polytope_sat_normal(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb);

#ifdef __cplusplus
}
#endif
#endif
