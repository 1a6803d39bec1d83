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
 * the primal vertex x. It is seeded with the polar of one polytope (precomputed at load time:
 * the polar's face lattice does not depend on p, see fr_polytope.dual) and the other polytope's
 * dual points are added one at a time, as in an incremental hull:
 * - a triangle is visible from the new dual point y_j iff x·y_j > 1, i.e. iff its vertex x
 *   violates the new plane: n_j·x − d_j > 0. This is the same predicate multiplied by d_j > 0;
 *   we evaluate it in this form, in metres, with a tolerance eps relative to the shapes' size.
 *   Dividing by d never happens, so a shallow p (a touching or sliver contact, where d → 0 for
 *   some planes) costs no precision;
 * - the visible triangles form a connected patch; they are removed and the horizon is coned to
 *   y_j. The cone triangle over horizon edge (a, b) has as polar the point where the new plane
 *   crosses the primal edge a ∩ b, whose end points are the polars of the two triangles that
 *   share the dual edge: we interpolate along that edge (never a 3×3 solve), and snap to the
 *   invisible end when it lies within eps of the plane (this merges coplanar and coincident
 *   features: a face of B in the plane of a face of A, or a plane through a vertex);
 * - a dual point no triangle sees (all vertices satisfy the plane within eps) is inside the hull
 *   or on it: its plane is redundant and is not added. A face of B coplanar with a face of A
 *   with the same normal is therefore dropped and the intersection keeps A's (the seed's) face;
 * - near-degenerate horizons (a visible patch that is not a disc, from rounding when a plane
 *   nearly touches a vertex) are repaired by growing the visible patch and counted in
 *   fr_collide_work.fixups.
 * Vertices of degree > 3 (several coplanar dual triangles) are merged by exact equality of their
 * stored polars along dual edges; faces are read off by walking round each dual vertex.
 *
 * p itself is only needed to make the duality valid: the construction never reads it. The
 * intersection's centroid is a certified deep interior point (it splits every chord through it
 * at most 3:1), so it is reported as `interior` and cached as the next tick's p.
 *
 * Memory: N = faces(A) + faces(B) planes, at most 2N triangles (a triangulated sphere with N
 * vertices has 2N − 4), horizons of at most N edges; outputs at most 2N vertices, N faces and
 * 6N indices. Cost: O(N·T) predicate evaluations in the worst case (T = live triangles), far
 * less in practice (planes of the other polytope that cannot reach the seed are culled by its
 * bounding sphere before any scan).
 */
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"

#define MP_EPS_REL   1e-10 /* predicate tolerance, relative to the shapes' size */
#define MP_THIN_REL  1e-9  /* intersections thinner than this (relative) count as touching */
#define MP_MAX_FIXES 8

/* ---------------------------------------------------------------- memory */

static size_t al64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static void sizes(int max_faces, int *planes, int *tris, int *hz)
{
    int n = 2 * (max_faces > 4 ? max_faces : 4);
    *planes = n;
    *tris = 2 * n + 8;
    *hz = n + 4;
}

size_t fr_collide_memory(int max_faces)
{
    int n, t, h;
    sizes(max_faces, &n, &t, &h);
    size_t s = 0;
    s += al64(sizeof(fr_vec3) * (size_t)n) + al64(sizeof(double) * (size_t)n) +
         al64(sizeof(int) * (size_t)n);
    s += al64(sizeof(fri_mp_tri) * (size_t)t) + 4 * al64(sizeof(int) * (size_t)t);
    s += al64(sizeof(fri_mp_edge) * (size_t)h);
    /* output */
    s += al64(sizeof(fr_vec3) * (size_t)t) + al64(sizeof(int) * 6 * (size_t)n) +
         2 * al64(sizeof(int) * (size_t)n) + al64((size_t)n) + al64(sizeof(fr_vec3) * (size_t)n);
    return s + 64;
}

static void *get(fr_arena *a, size_t bytes)
{
    if (a) return fr_arena_alloc(a, bytes);
    void *p = NULL;
    if (posix_memalign(&p, 64, al64(bytes ? bytes : 1))) return NULL;
    memset(p, 0, bytes);
    return p;
}

void fr_collide_work_free(fr_collide_work *w)
{
    /* only for malloc'ed work: arena memory is released with the arena */
    free(w->pn);
    free(w->pd);
    free(w->plane_mark);
    free(w->tri);
    free(w->stack);
    free(w->free_tri);
    free(w->uf);
    free(w->vmap);
    free(w->hz);
    memset(w, 0, sizeof *w);
}

int fr_collide_work_init(fr_collide_work *w, int max_faces, fr_arena *arena)
{
    memset(w, 0, sizeof *w);
    if (max_faces < 4) max_faces = 4;
    int n, t, h;
    sizes(max_faces, &n, &t, &h);
    w->max_planes = n;
    w->max_tris = t;
    w->max_hz = h;
    w->pn = get(arena, sizeof(fr_vec3) * (size_t)n);
    w->pd = get(arena, sizeof(double) * (size_t)n);
    w->plane_mark = get(arena, sizeof(int) * (size_t)n);
    w->tri = get(arena, sizeof(fri_mp_tri) * (size_t)t);
    w->stack = get(arena, sizeof(int) * (size_t)t);
    w->free_tri = get(arena, sizeof(int) * (size_t)t);
    w->uf = get(arena, sizeof(int) * (size_t)t);
    w->vmap = get(arena, sizeof(int) * (size_t)t);
    w->hz = get(arena, sizeof(fri_mp_edge) * (size_t)h);
    if (!w->pn || !w->pd || !w->plane_mark || !w->tri || !w->stack || !w->free_tri || !w->uf ||
        !w->vmap || !w->hz) {
        if (!arena) fr_collide_work_free(w);
        return FR_ERR_NOMEM;
    }
    return FR_OK;
}

void fr_polyhedron_out_free(fr_polyhedron_out *o)
{
    free(o->verts);
    free(o->vidx);
    free(o->face_start);
    free(o->face_count);
    free(o->face_owner);
    free(o->face_normal);
    memset(o, 0, sizeof *o);
}

int fr_polyhedron_out_init(fr_polyhedron_out *o, int max_faces, fr_arena *arena)
{
    memset(o, 0, sizeof *o);
    if (max_faces < 4) max_faces = 4;
    int n, t, h;
    sizes(max_faces, &n, &t, &h);
    o->max_verts = t;
    o->max_faces = n;
    o->max_idx = 6 * n;
    o->verts = get(arena, sizeof(fr_vec3) * (size_t)t);
    o->vidx = get(arena, sizeof(int) * 6 * (size_t)n);
    o->face_start = get(arena, sizeof(int) * (size_t)n);
    o->face_count = get(arena, sizeof(int) * (size_t)n);
    o->face_owner = get(arena, (size_t)n);
    o->face_normal = get(arena, sizeof(fr_vec3) * (size_t)n);
    if (!o->verts || !o->vidx || !o->face_start || !o->face_count || !o->face_owner ||
        !o->face_normal) {
        if (!arena) fr_polyhedron_out_free(o);
        return FR_ERR_NOMEM;
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- the dual hull */

typedef struct mp_ctx {
    fr_collide_work *w;
    fri_mp_tri *tri;
    int hi;     /* triangle slots used: [0, hi) */
    int nfree;  /* free slots on w->free_tri */
    int nalive; /* live triangles */
    double eps;
} mp_ctx;

static int ufind(int *uf, int x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

static inline int edge_index(const fri_mp_tri *t, int from)
{
    return t->f[0] == from ? 0 : (t->f[1] == from ? 1 : 2);
}

/*
 * Walk the horizon of the visible set (mark == stamp) in order. Returns its length, or −1 when
 * it is not a single simple cycle (then *pinch is a plane met twice, or −1).
 */
static int horizon(mp_ctx *c, int nvis, int stamp, int *pinch)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    int t0 = -1, k0 = -1, total = 0;
    *pinch = -1;
    for (int i = 0; i < nvis; i++) {
        int t = w->stack[i];
        for (int k = 0; k < 3; k++)
            if (tri[tri[t].nb[k]].mark != stamp) {
                total++;
                if (t0 < 0) {
                    t0 = t;
                    k0 = k;
                }
            }
    }
    if (t0 < 0 || total > w->max_hz) return -1;
    int h = 0, t = t0, k = k0;
    int guard = 3 * nvis + 3;
    do {
        if (h >= total) return -1;
        int a = tri[t].f[k];
        if (w->plane_mark[a] == stamp) {
            *pinch = a;
            return -1;
        }
        w->plane_mark[a] = stamp;
        w->hz[h++] = (fri_mp_edge){t, k, a, tri[t].f[(k + 1) % 3], tri[t].nb[k], {0, 0, 0}};
        /* next horizon edge: rotate about b through visible triangles */
        k = (k + 1) % 3;
        while (tri[tri[t].nb[k]].mark == stamp) {
            int t2 = tri[t].nb[k];
            int c2 = tri[t].f[(k + 1) % 3];
            int k2 = edge_index(&tri[t2], c2);
            t = t2;
            k = (k2 + 1) % 3;
            if (--guard < 0) return -1;
        }
    } while (t != t0 || k != k0);
    return h == total ? h : -1;
}

/* Add to the visible set every live triangle the invisible region around the least-violating
 * triangle cannot reach (islands), then, if a plane is pinched, its whole star. */
static int grow_visible(mp_ctx *c, int nvis, int stamp, int pinch)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    if (pinch >= 0)
        for (int t = 0; t < c->hi; t++)
            if (!tri[t].dead && tri[t].mark != stamp &&
                (tri[t].f[0] == pinch || tri[t].f[1] == pinch || tri[t].f[2] == pinch)) {
                tri[t].mark = stamp;
                w->stack[nvis++] = t;
            }
    /* invisible component holding the minimum */
    int tmin = -1;
    for (int t = 0; t < c->hi; t++)
        if (!tri[t].dead && tri[t].mark != stamp && (tmin < 0 || tri[t].viol < tri[tmin].viol))
            tmin = t;
    if (tmin < 0) return nvis;
    int *q = w->uf; /* scratch: BFS queue over invisible triangles, uses vmap as marks */
    for (int t = 0; t < c->hi; t++) w->vmap[t] = 0;
    int nq = 0;
    q[nq++] = tmin;
    w->vmap[tmin] = 1;
    for (int i = 0; i < nq; i++)
        for (int k = 0; k < 3; k++) {
            int u = tri[q[i]].nb[k];
            if (tri[u].mark != stamp && !w->vmap[u]) {
                w->vmap[u] = 1;
                q[nq++] = u;
            }
        }
    for (int t = 0; t < c->hi; t++)
        if (!tri[t].dead && tri[t].mark != stamp && !w->vmap[t]) {
            tri[t].mark = stamp;
            w->stack[nvis++] = t;
        }
    return nvis;
}

/* Insert plane j (normal n, offset d in the seed's frame). Returns 1 if the hull changed, 0 if
 * the plane is redundant, 2 if it cuts everything (empty intersection), or a negative error. */
static int insert_plane(mp_ctx *c, int j, fr_vec3 n, double d)
{
    fr_collide_work *w = c->w;
    fri_mp_tri *tri = c->tri;
    const double eps = c->eps;
    int best = -1;
    double bv = eps;
    for (int t = 0; t < c->hi; t++) {
        if (tri[t].dead) continue;
        double v = n.x * tri[t].x.x + n.y * tri[t].x.y + n.z * tri[t].x.z - d;
        tri[t].viol = v;
        if (v > bv) {
            bv = v;
            best = t;
        }
    }
    if (best < 0) return 0;
    int stamp = ++w->stamp;
    int nvis = 0;
    w->stack[nvis++] = best;
    tri[best].mark = stamp;
    for (int i = 0; i < nvis; i++) {
        const fri_mp_tri *t = &tri[w->stack[i]];
        for (int k = 0; k < 3; k++) {
            int u = t->nb[k];
            if (tri[u].mark != stamp && tri[u].viol > eps) {
                tri[u].mark = stamp;
                w->stack[nvis++] = u;
            }
        }
    }
    if (nvis >= c->nalive) return 2;
    int pinch, h = horizon(c, nvis, stamp, &pinch);
    for (int fix = 0; h < 0 && fix < MP_MAX_FIXES; fix++) {
        w->fixups++;
        nvis = grow_visible(c, nvis, stamp, pinch);
        if (nvis >= c->nalive) return 2;
        /* plane marks of the failed walk are stale: take a fresh stamp for the set */
        int s2 = ++w->stamp;
        for (int i = 0; i < nvis; i++) tri[w->stack[i]].mark = s2;
        stamp = s2;
        h = horizon(c, nvis, stamp, &pinch);
    }
    if (h < 0) return FR_ERR_NUMERIC;
    if (c->nalive - nvis + h > w->max_tris) return FR_ERR_FULL;
    /* new vertices on the horizon's primal edges */
    for (int i = 0; i < h; i++) {
        fri_mp_edge *e = &w->hz[i];
        const fri_mp_tri *tv = &tri[e->t], *tu = &tri[e->u];
        if (tu->viol >= -eps)
            e->x = tu->x; /* the invisible end is on the plane: snap (merges coincidences) */
        else if (tv->viol <= eps)
            e->x = tv->x;
        else {
            double s = tv->viol / (tv->viol - tu->viol);
            e->x = fr_v3_add(tv->x, fr_v3_scale(fr_v3_sub(tu->x, tv->x), s));
        }
    }
    for (int i = 0; i < nvis; i++) {
        int t = w->stack[i];
        tri[t].dead = 1;
        w->free_tri[c->nfree++] = t;
    }
    c->nalive -= nvis;
    /* ids for the cone, then its links */
    int *ids = w->stack; /* the visible list is no longer needed */
    for (int i = 0; i < h; i++) ids[i] = c->nfree ? w->free_tri[--c->nfree] : c->hi++;
    for (int i = 0; i < h; i++) {
        const fri_mp_edge *e = &w->hz[i];
        fri_mp_tri *t = &tri[ids[i]];
        t->x = e->x;
        t->f[0] = e->a;
        t->f[1] = e->b;
        t->f[2] = j;
        t->nb[0] = e->u;
        t->nb[1] = ids[(i + 1) % h];
        t->nb[2] = ids[(i + h - 1) % h];
        t->dead = 0;
        t->mark = 0;
        fri_mp_tri *u = &tri[e->u];
        int m = edge_index(u, e->b); /* u's edge b → a */
        u->nb[m] = ids[i];
    }
    c->nalive += h;
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
    if (w->stamp > (1 << 30)) { /* stamps wrap after ~1e9 insertions: restart them */
        w->stamp = 0;
        memset(w->plane_mark, 0, sizeof(int) * (size_t)w->max_planes);
    }
    int FS = S->nfaces, FO = O->nfaces, N = FS + FO;
    if (N > w->max_planes || S->ntris > w->max_tris) return FR_ERR_FULL;
    mp_ctx c = {w, w->tri, S->ntris, 0, S->ntris, 0};
    double size = S->radius + O->radius;
    c.eps = MP_EPS_REL * size;
    /* seed: the polar of S */
    for (int i = 0; i < S->ntris; i++) {
        const fr_dual_tri *d = &S->dual[i];
        fri_mp_tri *x = &c.tri[i];
        x->x = S->verts[d->vert];
        x->f[0] = d->f[0];
        x->f[1] = d->f[1];
        x->f[2] = d->f[2];
        x->nb[0] = d->nb[0];
        x->nb[1] = d->nb[1];
        x->nb[2] = d->nb[2];
        x->mark = 0;
        x->dead = 0;
    }
    /* O's planes in S's frame; insert those that can reach S (bounding-sphere cull) */
    for (int i = 0; i < FO; i++) {
        fr_vec3 n = fr_m3_mulv(*R, O->normal[i]);
        double d = O->offset[i] + fr_v3_dot(n, t);
        w->pn[i] = n;
        w->pd[i] = d;
        if (d >= S->radius + c.eps) continue;
        int r = insert_plane(&c, FS + i, n, d);
        if (r == 2) return 0;
        if (r < 0) return r;
    }

    /* vertices: clusters of live triangles with bitwise-equal polars */
    fri_mp_tri *tri = c.tri;
    for (int i = 0; i < c.hi; i++) w->uf[i] = i;
    for (int i = 0; i < c.hi; i++) {
        if (tri[i].dead) continue;
        for (int k = 0; k < 3; k++) {
            int u = tri[i].nb[k];
            if (u > i && tri[u].x.x == tri[i].x.x && tri[u].x.y == tri[i].x.y &&
                tri[u].x.z == tri[i].x.z) {
                int ra = ufind(w->uf, i), rb = ufind(w->uf, u);
                if (ra != rb) w->uf[ra > rb ? ra : rb] = ra < rb ? ra : rb;
            }
        }
    }
    int nv = 0;
    fr_vec3 ref = fr_v3_zero();
    for (int i = 0; i < c.hi; i++) w->vmap[i] = -1;
    for (int i = 0; i < c.hi; i++) {
        if (tri[i].dead) continue;
        int r = ufind(w->uf, i);
        if (w->vmap[r] < 0) {
            if (nv >= out->max_verts) return FR_ERR_FULL;
            w->vmap[r] = nv;
            out->verts[nv++] = tri[r].x;
            ref = fr_v3_add(ref, tri[r].x);
        }
        w->vmap[i] = w->vmap[r];
    }
    ref = fr_v3_scale(ref, 1.0 / (nv > 0 ? nv : 1));
    /* faces: walk round each dual vertex */
    int stamp = ++w->stamp;
    int nf = 0, ni = 0;
    double vol6 = 0, area2 = 0;
    fr_vec3 m1 = fr_v3_zero();
    for (int i = 0; i < c.hi; i++) {
        if (tri[i].dead) continue;
        for (int k = 0; k < 3; k++) {
            int p = tri[i].f[k];
            if (w->plane_mark[p] == stamp) continue;
            w->plane_mark[p] = stamp;
            int start = ni, last = -1, cur = i, kk = k;
            int guard = c.nalive + 1;
            do {
                int vid = w->vmap[cur];
                if (vid != last) {
                    if (ni >= out->max_idx) return FR_ERR_FULL;
                    out->vidx[ni++] = vid;
                    last = vid;
                }
                int nx = tri[cur].nb[(kk + 2) % 3]; /* counter-clockwise about p */
                kk = edge_index(&tri[nx], p);
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
            /* volume (tetrahedra from ref), centroid moment and area */
            fr_vec3 a0 = fr_v3_sub(out->verts[out->vidx[start]], ref);
            fr_vec3 av = fr_v3_zero();
            for (int q = 1; q + 1 < cnt; q++) {
                fr_vec3 b = fr_v3_sub(out->verts[out->vidx[start + q]], ref);
                fr_vec3 d = fr_v3_sub(out->verts[out->vidx[start + q + 1]], ref);
                fr_vec3 cr = fr_v3_cross(b, d);
                double det = fr_v3_dot(a0, cr);
                vol6 += det;
                m1 = fr_v3_add(m1, fr_v3_scale(fr_v3_add(fr_v3_add(a0, b), d), det));
                av = fr_v3_add(av, fr_v3_cross(fr_v3_sub(b, a0), fr_v3_sub(d, a0)));
            }
            area2 += fr_v3_norm(av);
            out->face_start[nf] = start;
            out->face_count[nf] = cnt;
            bool own = p < FS;
            out->face_owner[nf] = (unsigned char)(own ? owner_s : 1 - owner_s);
            out->face_normal[nf] = own ? S->normal[p] : w->pn[p - FS];
            nf++;
        }
    }
    double vol = vol6 / 6.0, area = 0.5 * area2;
    /* touching or empty: thickness 2V/A below tolerance */
    if (!(vol > 0) || 2 * vol <= MP_THIN_REL * size * area || !isfinite(vol)) {
        out_empty(out);
        return 0;
    }
    fr_vec3 cen = fr_v3_add(ref, fr_v3_scale(m1, 1.0 / (4.0 * vol6)));
    /* to world */
    fr_mat3 Rs = fr_q_to_m3(pose_s.q);
    for (int i = 0; i < nv; i++) out->verts[i] = fr_v3_add(fr_m3_mulv(Rs, out->verts[i]), pose_s.p);
    for (int f = 0; f < nf; f++) out->face_normal[f] = fr_m3_mulv(Rs, out->face_normal[f]);
    out->nverts = nv;
    out->nfaces = nf;
    out->nidx = ni;
    out->volume = vol;
    out->centroid = fr_v3_add(fr_m3_mulv(Rs, cen), pose_s.p);
    out->interior = out->centroid;
    return 1;
}

int fri_mp_intersect(const fr_polytope *a, fr_pose pa, const fr_polytope *b, fr_pose pb,
                     const fr_mat3 *Rab, fr_vec3 tab, fr_collide_work *w, fr_polyhedron_out *out)
{
    /* seed with the polytope with fewer triangles (ties: A): fewer triangles to scan per plane */
    if (b->ntris < a->ntris) {
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
