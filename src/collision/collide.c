/* The narrow-phase entry point: GJK filter + Muller–Preparata intersection, with a per-pair
 * cache for warm starts. */
#include "collision_internal.h"

enum { CACHE_UNKNOWN = 0, CACHE_APART = 1, CACHE_OVERLAP = 2 };

static void empty(fr_polyhedron_out *out)
{
    out->nverts = out->nfaces = out->nidx = 0;
    out->volume = 0;
    out->centroid = out->interior = fr_v3_zero();
}

int fr_collide_pair(const fr_shape *a, fr_pose pa, const fr_shape *b, fr_pose pb,
                    fr_collide_cache *cache, fr_collide_work *w, fr_polyhedron_out *out)
{
    fr_mat3 Rab = fr_q_to_m3(fr_q_mul(fr_q_conj(pa.q), pb.q));
    fr_vec3 tab = fr_q_unrotate(pa.q, fr_v3_sub(pb.p, pa.p));
    fr_collide_cache local = {{0, 0, 0}, {0, 0, 0}, 0, 0};
    if (!cache) cache = &local;
    if (cache->state == CACHE_OVERLAP) {
        /* overlapping last tick: most likely still; the intersection itself decides */
        int r = fri_mp_intersect(&a->poly, pa, &b->poly, pb, &Rab, tab, w, out);
        if (r == 1) {
            cache->interior = fr_pose_apply_inv(pa, out->centroid);
            cache->distance = 0;
            return 1;
        }
        if (r < 0) return r;
    }
    /* GJK on the true shapes grown to contain their polytopes: apart here ⇒ polytopes apart */
    fri_gjk_out g;
    fri_gjk(a, b, &Rab, tab, cache->dir, true, true, &g);
    cache->dir = g.v;
    if (!g.overlap) {
        cache->state = CACHE_APART;
        cache->distance = g.dist;
        empty(out);
        return 0;
    }
    if (cache->state == CACHE_OVERLAP) { /* already computed above: touching or empty */
        cache->state = CACHE_APART;
        cache->distance = 0;
        return 0;
    }
    int r = fri_mp_intersect(&a->poly, pa, &b->poly, pb, &Rab, tab, w, out);
    if (r < 0) return r;
    cache->distance = 0;
    if (r == 0) {
        cache->state = CACHE_APART;
        return 0;
    }
    cache->state = CACHE_OVERLAP;
    cache->interior = fr_pose_apply_inv(pa, out->centroid);
    return 1;
}

/* min over the polytope's vertices (placed at pose) of d·x */
static double poly_min_along(const fr_polytope *p, fr_pose pose, fr_vec3 d)
{
    fr_vec3 dl = fr_q_unrotate(pose.q, d); /* the direction in the polytope's frame */
    double m = INFINITY;
    for (int v = 0; v < p->nverts; v++) m = fmin(m, fr_v3_dot(dl, p->verts[v]));
    return m + fr_v3_dot(d, pose.p);
}

fr_vec3 fr_polytope_sat_normal(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb)
{
    fr_vec3 best = fr_v3_zero();
    double best_sep = -INFINITY;
    for (int f = 0; f < a->nfaces; f++) {
        fr_vec3 n = fr_q_rotate(pa.q, a->normal[f]);
        double sep = poly_min_along(b, pb, n) - (a->offset[f] + fr_v3_dot(n, pa.p));
        if (sep > best_sep) best_sep = sep, best = n;
    }
    for (int g = 0; g < b->nfaces; g++) {
        fr_vec3 n = fr_q_rotate(pb.q, b->normal[g]);
        double sep = poly_min_along(a, pa, n) - (b->offset[g] + fr_v3_dot(n, pb.p));
        if (sep > best_sep) best_sep = sep, best = fr_v3_neg(n);
    }
    return best;
}
