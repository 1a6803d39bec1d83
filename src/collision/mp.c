/*
 * A ∩ B of two convex polyhedra by Muller and Preparata ("Finding the intersection of two convex
 * polyhedra", Theor. Comput. Sci. 7(2), 1978), with a hand-written incremental dual hull in
 * preallocated memory.
 *
 * Duality. With the origin moved to a point p inside both polyhedra, each face plane n·x = d
 * (d > 0) maps to the dual point y = n/d, and a point x lies on the plane iff x·y = 1. The convex
 * hull of all dual points of A and B is the polar of A ∩ B: a hull facet {y : x·y = 1} is the
 * intersection vertex x, a hull vertex is a face of A ∩ B (on A's or B's surface), a hull edge an
 * edge, and dual points strictly inside the hull are planes that do not touch A ∩ B.
 *
 * Construction. The hull is a triangle mesh with adjacency, and every triangle stores its polar,
 * the primal vertex x, and a vertex id. It is seeded with the polar of the polytope S with more
 * faces (precomputed at load time: the polar's face lattice does not depend on p, see
 * fr_polytope.dual) and the other polytope's dual points are added one at a time, as in an
 * incremental hull (the other's planes go into S's frame; those whose half-space holds S's
 * bounding box or sphere cannot cut and are skipped):
 * - a triangle is visible from the new dual point y_j iff x·y_j > 1, i.e. iff its vertex x
 *   violates the new plane: n_j·x − d_j > 0. This is the same predicate multiplied by d_j > 0;
 *   we evaluate it in this form, in metres, with a tolerance eps (1e-10 × the smaller shape's
 *   size + 1e-12 × the larger's, see MP_EPS_REL).
 *   Dividing by d never happens, so a shallow p (a touching or sliver contact, where d → 0 for
 *   some planes) costs no precision;
 * - the most violated triangle is found by a scan (≤ 16 live triangles) or by hill climbing on
 *   the adjacency (a linear function on a convex polytope has no local maximum that is not
 *   global); the visible patch is grown from it. It is removed and its horizon (walked through a
 *   per-plane "edge starting here" map, which also detects a horizon that is not one simple
 *   cycle) is coned to y_j. The cone triangle over horizon edge (a, b) has as polar the point
 *   where the new plane crosses the primal edge a ∩ b, whose end points are the polars of the
 *   two triangles sharing the dual edge: we interpolate along that edge (never a 3×3 solve), and
 *   snap to the invisible end, reusing its vertex id, when it lies within eps of the plane (this
 *   merges coplanar and coincident features: a face of B in the plane of a face of A, a plane
 *   through a vertex);
 * - where the plane cuts off only a small part of the hull (no more than a quarter of its extent
 *   along n, checked first on the seed's bounding box, then on the least violated vertex found
 *   by climbing down), the invisible side is grown instead and the survivors are compacted to
 *   the front, dropping the visible triangles unvisited: a small polytope resting in a large one
 *   (a foot or a ball on the ground) costs its cap, not its whole surface (bench/collision:
 *   a sphere of 80 faces on a box 7.0 → 4.1 µs, of 320 faces 24.6 → 10.5 µs);
 * - a dual point no triangle sees (all vertices satisfy the plane within eps) is inside the hull
 *   or on it: its plane is redundant and is not added. A face of B coplanar with a face of A
 *   with the same normal is therefore dropped and the intersection keeps the seed's face;
 * - a visible patch that is not a disc (possible only through rounding near coincidences; never
 *   seen in the tests' 20000 near-degenerate cases) goes to a slower repairing path (see repair),
 *   counted in fr_collide_work.fixups and tested by forcing it.
 * Vertices of degree > 3 (several coplanar dual triangles) share a vertex id; faces are read off
 * by walking round each dual vertex; faces with fewer than 3 distinct vertices are dropped.
 * The result is "touching" (return 0) when its thickness 2·volume/area is below 1e-9 × the
 * smaller size + 1e-11 × the larger.
 *
 * p itself is only needed to make the duality valid: the construction never reads it. The
 * intersection's centroid is a certified deep interior point (it splits every chord through it
 * at most 3:1, Grünbaum), so it is reported as `interior`: a valid origin for the duality.
 *
 * Memory (all in fr_collide_work, sized for max_faces per polytope): N = 2·max_faces planes,
 * 2N + 8 triangles (a triangulated sphere with N vertices has 2N − 4), horizons of N + 4 edges,
 * 4N + 16 vertex ids (renumbered when exhausted); outputs at most 2N + 8 vertices, N faces and
 * 6N indices. Cost: O(planes × live triangles) for small structures, O(planes × (climb + patch))
 * for large ones; measured in bench/collision.
 */
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"

/* Tolerances: relative to the smaller shape, plus a part relative to the larger one, because
 * rounding grows with the coordinates' magnitude (a 1 cm box on a 1 km ground box: eps 1.7 nm,
 * touching below 17 nm; two 1 m boxes: 0.2 nm and 2 nm). */
#define MP_EPS_REL   1e-10 /* predicate tolerance × the smaller size ... */
#define MP_EPS_BIG   1e-12 /* ... + this × the sum of sizes */
#define MP_THIN_REL  1e-9  /* intersections thinner than this × the smaller size ... */
#define MP_THIN_BIG  1e-11 /* ... + this × the sum count as touching */
#define MP_MAX_FIXES 8
#ifndef MP_INV_SHARE
#define MP_INV_SHARE 0.25 /* see insert_plane */
#endif
#ifndef MP_SCAN_MAX
#define MP_SCAN_MAX 16 /* live triangles up to which a scan beats hill climbing (measured) */
#endif

/* ---------------------------------------------------------------- the dual hull */

typedef struct mp_ctx {
    fr_collide_work *w;
    fri_mp_tri *tri;
    int hi;       /* triangle slots used: [0, hi) */
    int nfree;    /* free slots on w->free_tri */
    int nalive;   /* live triangles */
    int next_vid; /* next unused vertex id */
    int hint;     /* a live triangle to start the next search from */
    double eps;
    fr_vec3 box_c, box_h; /* the seed's bounding box (centre, half extents), its frame, m */
    bool uncut;           /* the hull is still the seed's polar (the box is tight about it) */
    fr_vec3 n;            /* the plane being inserted */
    double d;
    int stamp; /* its stamp: mark = stamp·2 once viol is computed, stamp·2 + 1 when visible */
} mp_ctx;

static const int next3[3] = {1, 2, 0};
static const int prev3[3] = {2, 0, 1};

static inline int corner_of(const fri_mp_tri *t, int plane)
{
    return t->f[0] == plane ? 0 : (t->f[1] == plane ? 1 : 2);
}

/* n·x − d for triangle t's vertex, computed once per insertion */
static inline double viol(mp_ctx *c, int t)
{
    fri_mp_tri *x = &c->tri[t];
    if ((x->mark >> 1) != c->stamp) {
        x->viol = c->n.x * x->x.x + c->n.y * x->x.y + c->n.z * x->x.z - c->d;
        x->mark = c->stamp << 1;
    }
    return x->viol;
}

/* Links the horizon's h edges (each to the edge that starts where it ends; plane_edge holds the
 * edge starting at each plane, stamped pstamp). Returns h, or −1 when they are not one simple
 * cycle. */
static int hz_link(mp_ctx *c, int h, int pstamp)
{
    fr_collide_work *w = c->w;
    for (int i = 0; i < h; i++) {
        int b = w->hz[i].b;
        if (w->plane_mark[b] != pstamp) return -1;
        w->hz[i].next = w->plane_edge[b];
    }
    int e = 0;
    for (int s = 1; s < h; s++) {
        e = w->hz[e].next;
        if (e == 0) return -1; /* a shorter cycle: the visible set is not a disc */
    }
    return w->hz[e].next == 0 ? h : -1;
}

/* Appends horizon edge k (a → b) of visible triangle t, whose invisible neighbour is u. Returns
 * the new length, or −1 (*pinch set to a when two horizon edges start at plane a). */
static int hz_add(mp_ctx *c, int h, int t, int k, int u, int pstamp, int *pinch)
{
    fr_collide_work *w = c->w;
    const fri_mp_tri *tri = c->tri;
    int a = tri[t].f[k];
    if (w->plane_mark[a] == pstamp) {
        *pinch = a;
        return -1;
    }
    if (h >= w->max_hz) return -1;
    w->plane_mark[a] = pstamp;
    w->plane_edge[a] = h;
    fri_mp_edge *e = &w->hz[h++];
    e->t = t;
    e->k = k;
    e->a = a;
    e->b = tri[t].f[next3[k]];
    e->u = u;
    return h;
}

/*
 * The horizon of the visible set (mark == vis): its edges, each linked to the edge that starts
 * where it ends. Returns the length, or −1 when it is not one simple cycle (then *pinch is a
 * plane where two horizon edges start, or −1 for several cycles).
 */
static int horizon(mp_ctx *c, int nvis, int vis, int pstamp, int *pinch)
{
    fr_collide_work *w = c->w;
    const fri_mp_tri *tri = c->tri;
    int h = 0;
    *pinch = -1;
    for (int i = 0; i < nvis; i++) {
        int t = w->stack[i];
        for (int k = 0; k < 3; k++) {
            int u = tri[t].nb[k];
            if (tri[u].mark == vis) continue;
            h = hz_add(c, h, t, k, u, pstamp, pinch);
            if (h < 0) return -1;
        }
    }
    return hz_link(c, h, pstamp);
}

/* Slow path, for a horizon that is not one simple cycle (rounding in near-coincident
 * configurations). Every triangle's viol is computed; the visible set is every triangle with
 * viol > eps plus, flooding out from them, every triangle within eps of the plane (either
 * verdict is right to within eps for those, and taking them joins patches that rounding split);
 * then invisible islands (not connected to the least violated triangle) and the star of a plane
 * where the horizon pinches are added, until the horizon is one cycle. Returns nvis (visible
 * triangles carry *vis) or −1. */
static int repair(mp_ctx *c, int *vis)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    const double eps = c->eps;
    w->fixups++;
    for (int t = 0; t < c->hi; t++)
        if (tri[t].f[0] >= 0) viol(c, t);
    if (w->force_repair == 2) /* test: a hole, as rounding could leave one */
        for (int t = 0; t < c->hi; t++) {
            const fri_mp_tri *x = &tri[t];
            if (x->f[0] < 0 || x->viol <= eps) continue;
            if (tri[x->nb[0]].viol > eps && tri[x->nb[1]].viol > eps && tri[x->nb[2]].viol > eps) {
                tri[t].viol = eps; /* just invisible */
                w->holes++;
                break;
            }
        }
    int s = ++w->stamp, v = s << 1 | 1, nvis = 0;
    for (int t = 0; t < c->hi; t++)
        if (tri[t].f[0] >= 0 && tri[t].viol > eps) {
            tri[t].mark = v;
            w->stack[nvis++] = t;
        }
    for (int i = 0; i < nvis; i++)
        for (int k = 0; k < 3; k++) {
            int u = tri[w->stack[i]].nb[k];
            if (tri[u].mark != v && tri[u].viol > -eps) {
                tri[u].mark = v;
                w->stack[nvis++] = u;
            }
        }
    int pinch = -1;
    for (int fix = 0; fix < MP_MAX_FIXES; fix++) {
        if (pinch >= 0)
            for (int t = 0; t < c->hi; t++)
                if (tri[t].f[0] >= 0 && tri[t].mark != v &&
                    (tri[t].f[0] == pinch || tri[t].f[1] == pinch || tri[t].f[2] == pinch)) {
                    tri[t].mark = v;
                    w->stack[nvis++] = t;
                }
        int tmin = -1;
        for (int t = 0; t < c->hi; t++)
            if (tri[t].f[0] >= 0 && tri[t].mark != v && (tmin < 0 || tri[t].viol < tri[tmin].viol))
                tmin = t;
        if (tmin < 0) return nvis; /* everything visible: the caller sees nvis == nalive */
        int s2 = ++w->stamp, nq = 0;
        w->scratch[nq++] = tmin;
        w->scratch_mark[tmin] = s2;
        for (int i = 0; i < nq; i++)
            for (int k = 0; k < 3; k++) {
                int u = tri[w->scratch[i]].nb[k];
                if (tri[u].mark != v && w->scratch_mark[u] != s2) {
                    w->scratch_mark[u] = s2;
                    w->scratch[nq++] = u;
                }
            }
        for (int t = 0; t < c->hi; t++)
            if (tri[t].f[0] >= 0 && tri[t].mark != v && w->scratch_mark[t] != s2) {
                tri[t].mark = v;
                w->stack[nvis++] = t;
            }
        if (nvis >= c->nalive) return nvis;
        /* fresh stamps, so the plane marks of the failed walk are stale */
        s = ++w->stamp;
        v = s << 1 | 1;
        for (int i = 0; i < nvis; i++) tri[w->stack[i]].mark = v;
        if (horizon(c, nvis, v, s, &pinch) > 0) {
            *vis = v;
            return nvis;
        }
    }
    return -1;
}

/* Give the live triangles compact vertex ids again (when ids run out). */
static void renumber_vids(mp_ctx *c)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    int s = ++w->stamp, k = 0;
    for (int t = 0; t < c->hi; t++) {
        if (tri[t].f[0] < 0) continue;
        int v = tri[t].vid;
        if (w->vid_mark[v] != s) {
            w->vid_mark[v] = s;
            w->vid_map[v] = k++;
        }
    }
    for (int t = 0; t < c->hi; t++)
        if (tri[t].f[0] >= 0) tri[t].vid = w->vid_map[tri[t].vid];
    c->next_vid = k;
}

/*
 * The most violated vertex (sgn 1; the least violated: sgn −1), by hill climbing on the dual
 * adjacency from the hint: a linear function on a convex polytope has no local maximum that is
 * not global, so moving to a strictly better neighbour while one exists ends at the maximum.
 * Triangles of one vertex (equal values) form plateaus; when no neighbour is strictly better,
 * the plateau is searched for an exit before stopping. *vbest: the vertex's viol.
 */
static int climb(mp_ctx *c, double sgn, double *vbest)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    int t = c->hint;
    double v = sgn * viol(c, t);
    for (;;) {
        int bu = -1;
        double bv = v;
        for (int k = 0; k < 3; k++) {
            int u = tri[t].nb[k];
            double vu = sgn * viol(c, u);
            if (vu > bv) {
                bv = vu;
                bu = u;
            }
        }
        if (bu >= 0) {
            t = bu;
            v = bv;
            continue;
        }
        /* plateau of equal values around t: look for a strictly better neighbour */
        int s2 = ++w->stamp, nq = 0;
        w->scratch[nq++] = t;
        w->scratch_mark[t] = s2;
        for (int i = 0; i < nq && bu < 0; i++)
            for (int k = 0; k < 3; k++) {
                int u = tri[w->scratch[i]].nb[k];
                if (w->scratch_mark[u] == s2) continue;
                double vu = sgn * viol(c, u);
                if (vu > v) {
                    bu = u;
                    bv = vu;
                    break;
                }
                if (vu == v) {
                    w->scratch_mark[u] = s2;
                    w->scratch[nq++] = u;
                }
            }
        if (bu < 0) break;
        t = bu;
        v = bv;
    }
    *vbest = sgn * v;
    return t;
}

/* New vertices on the horizon's primal edges (where the plane crosses them). */
static void hz_points(mp_ctx *c, int h)
{
    fr_collide_work *w = c->w;
    const fri_mp_tri *tri = c->tri;
    const double eps = c->eps;
    for (int i = 0; i < h; i++) {
        fri_mp_edge *e = &w->hz[i];
        const fri_mp_tri *tv = &tri[e->t], *tu = &tri[e->u];
        if (tu->viol >= -eps) { /* the invisible end is on the plane: snap (merges coincidences) */
            e->x = tu->x;
            e->vid = tu->vid;
        } else if (tv->viol <= eps) { /* only after a repair */
            e->x = tv->x;
            e->vid = tv->vid;
        } else {
            double s = tv->viol / (tv->viol - tu->viol);
            e->x = fr_v3(tv->x.x + (tu->x.x - tv->x.x) * s, tv->x.y + (tu->x.y - tv->x.y) * s,
                         tv->x.z + (tu->x.z - tv->x.z) * s);
            e->vid = c->next_vid++;
        }
    }
}

/* The cone over the horizon's h edges to plane j, in slots ids[0..h) (free or new). */
static void cone(mp_ctx *c, int j, int h, int *ids)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    /* slots first, then links (edge i's successor starts at its end b) */
    for (int i = 0; i < h; i++) ids[i] = c->nfree ? w->free_tri[--c->nfree] : c->hi++;
    for (int i = 0; i < h; i++) {
        const fri_mp_edge *e = &w->hz[i];
        fri_mp_tri *t = &tri[ids[i]];
        t->x = e->x;
        t->vid = e->vid;
        t->f[0] = e->a;
        t->f[1] = e->b;
        t->f[2] = j;
        t->nb[0] = e->u;
        t->nb[1] = ids[e->next];
        tri[ids[e->next]].nb[2] = ids[i];
        t->mark = 0;
        fri_mp_tri *u = &tri[e->u];
        u->nb[corner_of(u, e->b)] = ids[i]; /* u's edge b → a */
    }
    c->hint = ids[0];
}

/*
 * Plane j when most of the hull would see it (a small polytope's cap inside a large one: a foot
 * in the ground, where the usual walk visits the whole foot to keep a few triangles): the
 * invisible side is grown instead, from the least violated triangle tmin, the cone built on its
 * boundary, and the survivors (invisible and cone triangles) compacted into slots [0, n), which
 * drops the visible ones unvisited. Invisible islands not joined to tmin's side go with the
 * visible set, as in repair. Returns 1 when done, 0 when nothing is visible, −1 when the
 * invisible side's boundary is not one simple cycle or the slots do not suffice (the caller then
 * takes the usual path; nothing has been changed).
 */
static int insert_from_invisible(mp_ctx *c, int j, int tmin)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    const double eps = c->eps;
    int *in = w->scratch, nin = 0;
    const int s2 = ++w->stamp;
    in[nin++] = tmin;
    w->scratch_mark[tmin] = s2;
    for (int i = 0; i < nin; i++)
        for (int k = 0; k < 3; k++) {
            int u = tri[in[i]].nb[k];
            if (w->scratch_mark[u] != s2 && viol(c, u) <= eps) {
                w->scratch_mark[u] = s2;
                in[nin++] = u;
            }
        }
    if (nin >= c->nalive) return 0;
    /* the boundary, as edges of the visible triangles beyond it */
    const int pstamp = ++w->stamp;
    int h = 0, pinch;
    for (int i = 0; i < nin; i++) {
        int u = in[i];
        for (int k = 0; k < 3; k++) {
            int t = tri[u].nb[k];
            if (w->scratch_mark[t] == s2) continue;
            /* u's edge f[k] → f[k+1] is t's edge f[k+1] → f[k] */
            int kt = corner_of(&tri[t], tri[u].f[next3[k]]);
            if (tri[t].f[next3[kt]] != tri[u].f[k]) return -1;
            h = hz_add(c, h, t, kt, u, pstamp, &pinch);
            if (h < 0) return -1;
        }
    }
    if (h == 0 || hz_link(c, h, pstamp) < 0) return -1;
    if (c->nfree + (w->max_tris - c->hi) < h) return -1;
    if (c->next_vid + h > w->max_vids) renumber_vids(c);
    hz_points(c, h);
    int *ids = w->stack;
    cone(c, j, h, ids);
    /* compact: survivors beyond slot n move into the dead or visible slots below it */
    const int n = nin + h, s3 = ++w->stamp;
    for (int i = 0; i < nin; i++) w->scratch_mark[in[i]] = s3;
    for (int i = 0; i < h; i++) w->scratch_mark[ids[i]] = s3;
    int *map = w->free_tri; /* the free list is void once compacted */
    int hole = 0;
    for (int pass = 0; pass < 2; pass++) {
        const int *list = pass ? ids : in, cnt = pass ? h : nin;
        for (int i = 0; i < cnt; i++) {
            int m = list[i];
            if (m < n) continue;
            while (w->scratch_mark[hole] == s3) hole++;
            tri[hole] = tri[m];
            w->scratch_mark[hole] = s3;
            map[m] = hole;
        }
    }
    for (int t = 0; t < n; t++)
        for (int k = 0; k < 3; k++)
            if (tri[t].nb[k] >= n) tri[t].nb[k] = map[tri[t].nb[k]];
    if (c->hint >= n) c->hint = map[c->hint];
    c->hi = c->nalive = n;
    c->nfree = 0;
    return 1;
}

/* Insert plane j (normal n, offset d in the seed's frame). Returns 1 if the hull changed, 0 if
 * the plane is redundant, 2 if it cuts everything (empty intersection), or a negative error. */
static int insert_plane(mp_ctx *c, int j, fr_vec3 n, double d)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    const double eps = c->eps;
    c->n = n;
    c->d = d;
    c->stamp = ++w->stamp;
    double vmax = -INFINITY;
    int best = -1, nvis = 0;
    const int vis = c->stamp << 1 | 1;
    int pstamp = c->stamp, vmark = vis;
    if (c->nalive <= MP_SCAN_MAX) {
        /* small: scan, and take every violating triangle as visible (the horizon check below
         * catches a set that is not a disc) */
        for (int t = 0; t < c->hi; t++) {
            fri_mp_tri *x = &tri[t];
            if (x->f[0] < 0) continue;
            double v = n.x * x->x.x + n.y * x->x.y + n.z * x->x.z - d;
            x->viol = v;
            if (v > eps) {
                x->mark = vis;
                w->stack[nvis++] = t;
            } else
                x->mark = c->stamp << 1;
            if (v > vmax) {
                vmax = v;
                best = t;
            }
        }
        if (nvis == 0) return 0;
    } else {
        best = climb(c, 1.0, &vmax);
        if (vmax <= eps) {
            c->hint = best;
            return 0;
        }
        /* the invisible side is grown instead when the plane cuts off no more than MP_INV_SHARE
         * of the seed's bounding box along n (which holds the hull) below it */
        const fr_vec3 bc = c->box_c, bh = c->box_h;
        const double lo = n.x * bc.x + n.y * bc.y + n.z * bc.z - d,
                     ext = fabs(n.x) * bh.x + fabs(n.y) * bh.y + fabs(n.z) * bh.z;
        double vmin = 0.0;
        int tmin = -1;
        if (w->side != 1 && !w->force_repair &&
            (w->side == 2 || ext - lo < MP_INV_SHARE * 2.0 * ext))
            tmin = climb(c, -1.0, &vmin);
        if (tmin >= 0 && vmin <= eps && (w->side == 2 || -vmin < MP_INV_SHARE * (vmax - vmin))) {
            int r = insert_from_invisible(c, j, tmin);
            if (r >= 0) {
                w->inverted += r;
                c->uncut = c->uncut && r == 0;
                return r;
            }
            c->stamp = ++w->stamp; /* the usual path, with fresh marks */
            pstamp = c->stamp;
            vmark = c->stamp << 1 | 1;
        }
        /* the visible set: the component of the maximum with viol > eps */
        const int v2 = vmark;
        w->stack[nvis++] = best;
        tri[best].mark = v2;
        for (int i = 0; i < nvis; i++) {
            int t = w->stack[i];
            for (int k = 0; k < 3; k++) {
                int u = tri[t].nb[k];
                if (tri[u].mark != v2 && viol(c, u) > eps) {
                    tri[u].mark = v2;
                    w->stack[nvis++] = u;
                }
            }
        }
    }
    if (nvis >= c->nalive) return 2;
    int pinch, h = w->force_repair ? -1 : horizon(c, nvis, vmark, pstamp, &pinch);
    if (h < 0) {
        nvis = repair(c, &vmark);
        if (nvis < 0) return FR_ERR_NUMERIC;
        if (nvis >= c->nalive) return 2;
        pstamp = ++w->stamp; /* plane marks of repair's successful walk are set: walk afresh */
        h = horizon(c, nvis, vmark, pstamp, &pinch);
        if (h < 0) return FR_ERR_NUMERIC;
    }
    if (c->nalive - nvis + h > w->max_tris) return FR_ERR_FULL;
    if (c->next_vid + h > w->max_vids) renumber_vids(c);
    hz_points(c, h);
    for (int i = 0; i < nvis; i++) {
        int t = w->stack[i];
        tri[t].f[0] = -1;
        w->free_tri[c->nfree++] = t;
    }
    c->nalive -= nvis;
    cone(c, j, h, w->stack); /* the visible list is no longer needed */
    c->nalive += h;
    c->uncut = false;
    return 1;
}

static void out_empty(fr_polyhedron_out *out)
{
    out->nverts = out->nfaces = out->nidx = 0;
    out->volume = 0;
    out->centroid = out->interior = fr_v3_zero();
}

/*
 * S is the seed (its frame is the working frame), O the other polytope placed in S's frame by
 * (R, t); pose_s is S's world pose; owner_s is S's tag.
 */
static int mp_run(const fr_polytope *S, const fr_polytope *O, const fr_mat3 *R, fr_vec3 t,
                  fr_pose pose_s, int owner_s, fr_collide_work *w, fr_polyhedron_out *out)
{
    out_empty(out);
    if (w->stamp > (1 << 29)) { /* stamps (×2 in marks) wrap: restart them */
        w->stamp = 0;
        memset(w->plane_mark, 0, sizeof(int) * (size_t)w->max_planes);
        memset(w->scratch_mark, 0, sizeof(int) * (size_t)w->max_tris);
        memset(w->vid_mark, 0, sizeof(int) * (size_t)w->max_vids);
        for (int i = 0; i < w->max_tris; i++) w->tri[i].mark = 0;
    }
    int FS = S->nfaces, FO = O->nfaces;
    if (FS + FO > w->max_planes || S->ntris > w->max_tris || S->nverts > w->max_vids)
        return FR_ERR_FULL;
    mp_ctx c = {w, w->tri,   S->ntris, 0,    S->ntris,  S->nverts, 0,
                0, S->box_c, S->box_h, true, {0, 0, 0}, 0,         0};
    const double rsum = S->radius + O->radius, rmin = fmin(S->radius, O->radius);
    c.eps = MP_EPS_REL * rmin + MP_EPS_BIG * rsum;
    const double thin = MP_THIN_REL * rmin + MP_THIN_BIG * rsum;
    /* seed: the polar of S */
    for (int i = 0; i < S->ntris; i++) {
        const fr_dual_tri *d = &S->dual[i];
        fri_mp_tri *x = &c.tri[i];
        x->x = S->verts[d->vert];
        x->vid = d->vert;
        x->f[0] = d->f[0];
        x->f[1] = d->f[1];
        x->f[2] = d->f[2];
        x->nb[0] = d->nb[0];
        x->nb[1] = d->nb[1];
        x->nb[2] = d->nb[2];
        x->mark = 0;
    }
    /* O's planes in S's frame; those whose half-space holds S's bounding box or bounding sphere
     * cannot cut S (exact for a box seed). Inserting them nearest-first was measured: no gain for
     * boxes and hulls, 10 % slower for spheres. */
    const fr_vec3 bc = S->box_c, bh = S->box_h;
    for (int i = 0; i < FO; i++) {
        fr_vec3 n = fr_m3_mulv(*R, O->normal[i]);
        double d = O->offset[i] + fr_v3_dot(n, t);
        w->pn[i] = n;
        w->pd[i] = d;
        double sup = n.x * bc.x + n.y * bc.y + n.z * bc.z + fabs(n.x) * bh.x + fabs(n.y) * bh.y +
                     fabs(n.z) * bh.z;
        if (d >= (sup < S->radius ? sup : S->radius) + c.eps) continue; /* fmin, inline */
        int r = insert_plane(&c, FS + i, n, d);
        if (r == 2) return 0;
        if (r < 0) return r;
    }

    /* read the polyhedron off the hull, in world coordinates: a face per dual vertex (walk round
     * it), a vertex per vertex id (numbered on first use). Volume and centroid from fan
     * tetrahedra about the first vertex: it lies on the polyhedron, so no tetrahedron has
     * negative volume and nothing cancels. */
    fri_mp_tri *tri = c.tri;
    const fr_mat3 Rs = fr_q_to_m3(pose_s.q);
    const fr_vec3 ps = pose_s.p;
    int stamp = ++w->stamp;
    int nv = 0, nf = 0, ni = 0;
    double vol6 = 0, area = 0;
    fr_vec3 m1 = fr_v3_zero(), ref = fr_v3_zero();
    for (int i = 0; i < c.hi; i++) {
        if (tri[i].f[0] < 0) continue;
        for (int k = 0; k < 3; k++) {
            int p = tri[i].f[k];
            if (w->plane_mark[p] == stamp) continue;
            w->plane_mark[p] = stamp;
            int start = ni, last = -1, cur = i, kk = k;
            int guard = c.nalive + 1;
            do {
                const fri_mp_tri *tc = &tri[cur];
                int v = tc->vid, id;
                if (w->vid_mark[v] != stamp) {
                    if (nv >= out->max_verts) return FR_ERR_FULL;
                    w->vid_mark[v] = stamp;
                    w->vid_map[v] = id = nv;
                    fr_vec3 x = fr_v3_add(fr_m3_mulv(Rs, tc->x), ps);
                    if (nv == 0) ref = x;
                    out->verts[nv++] = x;
                } else
                    id = w->vid_map[v];
                if (id != last) {
                    if (ni >= out->max_idx) return FR_ERR_FULL;
                    out->vidx[ni++] = id;
                    last = id;
                }
                int nx = tc->nb[prev3[kk]]; /* counter-clockwise about p */
                kk = corner_of(&tri[nx], p);
                cur = nx;
                if (--guard < 0) return FR_ERR_NUMERIC;
            } while (cur != i);
            if (ni - start > 1 && out->vidx[ni - 1] == out->vidx[start]) ni--;
            int cnt = ni - start;
            if (cnt < 3) {
                ni = start;
                continue;
            }
            if (nf >= out->max_faces) return FR_ERR_FULL;
            bool own = p < FS;
            fr_vec3 nrm = fr_m3_mulv(Rs, own ? S->normal[p] : w->pn[p - FS]);
            /* fan tetrahedra (volume, centroid moment) and the area along the normal */
            const int *ix = out->vidx + start;
            fr_vec3 a0 = fr_v3_sub(out->verts[ix[0]], ref);
            fr_vec3 b = fr_v3_sub(out->verts[ix[1]], ref);
            fr_vec3 av = fr_v3_cross(a0, b);
            for (int q = 2; q < cnt; q++) {
                fr_vec3 d = fr_v3_sub(out->verts[ix[q]], ref);
                fr_vec3 cr = fr_v3_cross(b, d);
                double det = fr_v3_dot(a0, cr);
                vol6 += det;
                m1 = fr_v3_add(m1, fr_v3_scale(fr_v3_add(fr_v3_add(a0, b), d), det));
                av = fr_v3_add(av, cr);
                b = d;
            }
            av = fr_v3_add(av, fr_v3_cross(b, a0));
            area += fr_v3_dot(av, nrm);
            out->face_start[nf] = start;
            out->face_count[nf] = cnt;
            out->face_owner[nf] = (unsigned char)(own ? owner_s : 1 - owner_s);
            out->face_normal[nf] = nrm;
            nf++;
        }
    }
    double vol = vol6 / 6.0;
    area *= 0.5;
    /* touching or empty: thickness 2V/A below tolerance */
    if (!(vol > 0) || 2 * vol <= thin * area || !isfinite(vol)) {
        out_empty(out);
        return 0;
    }
    out->nverts = nv;
    out->nfaces = nf;
    out->nidx = ni;
    out->volume = vol;
    out->centroid = fr_v3_add(ref, fr_v3_scale(m1, 1.0 / (4.0 * vol6)));
    out->interior = out->centroid;
    return 1;
}

int fri_mp_intersect(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb,
                     const fr_mat3 *Rab, fr_vec3 tab, fr_collide_work *w, fr_polyhedron_out *out)
{
    /* seed with the polytope with more faces (ties: A), insert the other's planes: inserting a
     * plane costs more than copying a triangle (measured: sphere f = 2 on a box 34.5k
     * instructions seeded with the sphere, 54k seeded with the box; hulls and boxes equal) */
#ifdef MP_SEED_SMALLER
    if (b->ntris < a->ntris) {
#else
    if (b->ntris > a->ntris) {
#endif
        fr_mat3 Rba = fr_m3_transpose(*Rab);
        fr_vec3 tba = fr_v3_neg(fr_m3_mulv(Rba, tab));
        return mp_run(b, a, &Rba, tba, pb, FR_FACE_B, w, out);
    }
    return mp_run(a, b, Rab, tab, pa, FR_FACE_A, w, out);
}

int fr_polytope_intersect(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb,
                          fr_collide_work *w, fr_polyhedron_out *out)
{
    fr_mat3 Rab = fr_q_to_m3(fr_q_mul(fr_q_conj(pa.q), pb.q));
    fr_vec3 tab = fr_q_unrotate(pa.q, fr_v3_sub(pb.p, pa.p));
    return fri_mp_intersect(a, pa, b, pb, &Rab, tab, w, out);
}
