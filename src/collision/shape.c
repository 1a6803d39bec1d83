/* Shapes: polytopes (planes, adjacency, dual triangulation, exact mass properties), primitives
 * and their volume-matched polyhedral approximations, support functions, AABBs. */
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"
#include "hull.h"

#define PI 3.14159265358979323846

/* ---------------------------------------------------------------- polytope */

void fri_polytope_free(fr_polytope *p)
{
    free(p->verts);
    free(p->normal);
    free(p->offset);
    free(p->face_start);
    free(p->face_count);
    free(p->loop);
    free(p->adj_start);
    free(p->adj);
    free(p->dual);
    memset(p, 0, sizeof *p);
}

/* Planes (Newell normal, mean offset), mass properties (tetrahedra from the vertex mean, so the
 * sums do not cancel for shapes far from their origin) and the bounding radius. */
static void polytope_geometry(fr_polytope *p)
{
    fr_vec3 r = fr_v3_zero();
    p->radius = 0;
    for (int i = 0; i < p->nverts; i++) {
        r = fr_v3_add(r, p->verts[i]);
        p->radius = fmax(p->radius, fr_v3_norm(p->verts[i]));
    }
    r = fr_v3_scale(r, 1.0 / p->nverts);
    fr_vec3 lo = p->verts[0], hi = lo;
    for (int i = 1; i < p->nverts; i++) {
        lo = fr_v3_min(lo, p->verts[i]);
        hi = fr_v3_max(hi, p->verts[i]);
    }
    p->box_c = fr_v3_scale(fr_v3_add(lo, hi), 0.5);
    p->box_h = fr_v3_scale(fr_v3_sub(hi, lo), 0.5);
    double vol = 0;
    fr_vec3 m1 = fr_v3_zero();
    fr_mat3 m2 = fr_m3_zero();
    for (int f = 0; f < p->nfaces; f++) {
        const int *lp = p->loop + p->face_start[f];
        int c = p->face_count[f];
        fr_vec3 a = fr_v3_zero(), s = fr_v3_zero();
        for (int k = 0; k < c; k++) {
            fr_vec3 u = fr_v3_sub(p->verts[lp[k]], r), v = fr_v3_sub(p->verts[lp[(k + 1) % c]], r);
            a = fr_v3_add(a, fr_v3_cross(u, v));
            s = fr_v3_add(s, u);
        }
        fr_vec3 n = fr_v3_normalize(a);
        p->normal[f] = n;
        /* offset through the face's mean point, relative to the true origin */
        p->offset[f] = fr_v3_dot(n, fr_v3_add(fr_v3_scale(s, 1.0 / c), r));
        fr_vec3 a0 = fr_v3_sub(p->verts[lp[0]], r);
        for (int k = 1; k + 1 < c; k++) {
            fr_vec3 b = fr_v3_sub(p->verts[lp[k]], r), d = fr_v3_sub(p->verts[lp[k + 1]], r);
            double det = fr_v3_dot(a0, fr_v3_cross(b, d));
            vol += det / 6.0;
            fr_vec3 sum = fr_v3_add(fr_v3_add(a0, b), d);
            m1 = fr_v3_add(m1, fr_v3_scale(sum, det / 24.0));
            fr_mat3 o = fr_m3_add(fr_m3_add(fr_m3_outer(a0, a0), fr_m3_outer(b, b)),
                                  fr_m3_add(fr_m3_outer(d, d), fr_m3_outer(sum, sum)));
            m2 = fr_m3_add(m2, fr_m3_scale(o, det / 120.0));
        }
    }
    p->volume = vol;
    fr_vec3 g = fr_v3_scale(m1, 1.0 / vol); /* centroid relative to r */
    p->centroid = fr_v3_add(r, g);
    fr_mat3 c = fr_m3_sub(m2, fr_m3_scale(fr_m3_outer(g, g), vol));
    fr_mat3 I = fr_m3_scale(fr_m3_identity(), fr_m3_trace(c));
    p->inertia = fr_m3_sub(I, c);
    /* symmetrise rounding */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) {
            double v = 0.5 * (p->inertia.m[i][j] + p->inertia.m[j][i]);
            p->inertia.m[i][j] = p->inertia.m[j][i] = v;
        }
}

typedef struct dedge {
    int lo, hi; /* plane indices, lo < hi */
    int tri, k;
} dedge;

static int dedge_cmp(const void *x, const void *y)
{
    const dedge *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return 0;
}

/* The triangulated dual: for each vertex, the cycle of its faces, fanned into triangles
 * oriented counter-clockwise seen from outside the dual hull (checked numerically against the
 * vertex's outward direction), and the triangles' adjacency. */
static int polytope_dual(fr_polytope *p)
{
    int nv = p->nverts, nf = p->nfaces, nl = p->nloop;
    int ntris = 2 * nf - 4;
    /* which face has directed edge u → v: per vertex u, its outgoing edges */
    int *out_start = calloc((size_t)nv + 1, sizeof(int));
    int *out_to = malloc(sizeof(int) * (size_t)nl), *out_face = malloc(sizeof(int) * (size_t)nl);
    int *fill = calloc((size_t)nv, sizeof(int));
    int *cyc = malloc(sizeof(int) * (size_t)nf);
    dedge *edges = malloc(sizeof(dedge) * 3 * (size_t)ntris);
    p->dual = malloc(sizeof(fr_dual_tri) * (size_t)ntris);
    int rc = FR_OK;
    if (!out_start || !out_to || !out_face || !fill || !cyc || !edges || !p->dual) {
        rc = FR_ERR_NOMEM;
        goto done;
    }
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < p->face_count[f]; k++) out_start[p->loop[p->face_start[f] + k] + 1]++;
    for (int v = 0; v < nv; v++) out_start[v + 1] += out_start[v];
    for (int f = 0; f < nf; f++) {
        const int *lp = p->loop + p->face_start[f];
        int c = p->face_count[f];
        for (int k = 0; k < c; k++) {
            int u = lp[k], v = lp[(k + 1) % c];
            int slot = out_start[u] + fill[u]++;
            out_to[slot] = v;
            out_face[slot] = f;
        }
    }
    /* vertex adjacency = targets of outgoing edges (each undirected edge once per end) */
    p->adj_start = malloc(sizeof(int) * ((size_t)nv + 1));
    p->adj = malloc(sizeof(int) * (size_t)nl);
    if (!p->adj_start || !p->adj) {
        rc = FR_ERR_NOMEM;
        goto done;
    }
    memcpy(p->adj_start, out_start, sizeof(int) * ((size_t)nv + 1));
    memcpy(p->adj, out_to, sizeof(int) * (size_t)nl);

    int t = 0;
    for (int v = 0; v < nv; v++) {
        int deg = out_start[v + 1] - out_start[v];
        if (deg < 3) {
            rc = FR_ERR_INVAL;
            goto done;
        }
        /* faces around v: from face f with outgoing edge v → w, the next face is the one with
         * outgoing edge w → v... i.e. the face g holding directed edge (w → v); in g, v's
         * outgoing edge leads on. */
        int f = out_face[out_start[v]], w = out_to[out_start[v]];
        int c = 0;
        bool closed = false;
        while (c < deg && !closed) {
            cyc[c++] = f;
            int g = -1, w2 = -1; /* g holds w → v; w2 = v's successor in g */
            for (int s = out_start[w]; s < out_start[w + 1]; s++)
                if (out_to[s] == v) g = out_face[s];
            for (int s = out_start[v]; s < out_start[v + 1]; s++)
                if (out_face[s] == g) w2 = out_to[s];
            if (g < 0 || w2 < 0) break;
            closed = g == cyc[0];
            f = g;
            w = w2;
        }
        if (!closed || c != deg) {
            rc = FR_ERR_INVAL;
            goto done;
        }
        /* orientation in dual space (dual points about the centroid) against v's direction */
        fr_vec3 xv = fr_v3_sub(p->verts[v], p->centroid), nw = fr_v3_zero();
        for (int i = 0; i < deg; i++) {
            int f0 = cyc[i], f1 = cyc[(i + 1) % deg];
            fr_vec3 y0 = fr_v3_scale(p->normal[f0],
                                     1.0 / (p->offset[f0] - fr_v3_dot(p->normal[f0], p->centroid)));
            fr_vec3 y1 = fr_v3_scale(p->normal[f1],
                                     1.0 / (p->offset[f1] - fr_v3_dot(p->normal[f1], p->centroid)));
            nw = fr_v3_add(nw, fr_v3_cross(y0, y1));
        }
        if (fr_v3_dot(nw, xv) < 0)
            for (int i = 0, j = deg - 1; i < j; i++, j--) {
                int tmp = cyc[i];
                cyc[i] = cyc[j];
                cyc[j] = tmp;
            }
        for (int i = 1; i + 1 < deg; i++) {
            if (t >= ntris) {
                rc = FR_ERR_INVAL;
                goto done;
            }
            p->dual[t] = (fr_dual_tri){{cyc[0], cyc[i], cyc[i + 1]}, {-1, -1, -1}, v};
            t++;
        }
    }
    if (t != ntris) {
        rc = FR_ERR_INVAL;
        goto done;
    }
    int ne = 0;
    for (int i = 0; i < ntris; i++)
        for (int k = 0; k < 3; k++) {
            int a = p->dual[i].f[k], b = p->dual[i].f[(k + 1) % 3];
            edges[ne++] = (dedge){a < b ? a : b, a < b ? b : a, i, k};
        }
    qsort(edges, (size_t)ne, sizeof(dedge), dedge_cmp);
    for (int i = 0; i < ne; i += 2) {
        if (i + 1 >= ne || dedge_cmp(&edges[i], &edges[i + 1]) != 0 ||
            (i + 2 < ne && dedge_cmp(&edges[i], &edges[i + 2]) == 0)) {
            rc = FR_ERR_INVAL; /* not a closed 2-manifold */
            goto done;
        }
        p->dual[edges[i].tri].nb[edges[i].k] = edges[i + 1].tri;
        p->dual[edges[i + 1].tri].nb[edges[i + 1].k] = edges[i].tri;
    }
    p->ntris = ntris;
done:
    free(out_start);
    free(out_to);
    free(out_face);
    free(fill);
    free(cyc);
    free(edges);
    return rc;
}

int fri_polytope_build(fr_polytope *p, const fr_vec3 *verts, int nverts, const int *face_count,
                       const int *loop, int nfaces)
{
    memset(p, 0, sizeof *p);
    if (nverts < 4 || nfaces < 4) return FR_ERR_INVAL;
    int nl = 0;
    for (int f = 0; f < nfaces; f++) nl += face_count[f];
    /* Euler: V − E + F = 2 with E = nl/2 */
    if (nl % 2 || nverts - nl / 2 + nfaces != 2) return FR_ERR_INVAL;
    p->nverts = nverts;
    p->nfaces = nfaces;
    p->nloop = nl;
    p->verts = malloc(sizeof(fr_vec3) * (size_t)nverts);
    p->normal = malloc(sizeof(fr_vec3) * (size_t)nfaces);
    p->offset = malloc(sizeof(double) * (size_t)nfaces);
    p->face_start = malloc(sizeof(int) * (size_t)nfaces);
    p->face_count = malloc(sizeof(int) * (size_t)nfaces);
    p->loop = malloc(sizeof(int) * (size_t)nl);
    if (!p->verts || !p->normal || !p->offset || !p->face_start || !p->face_count || !p->loop) {
        fri_polytope_free(p);
        return FR_ERR_NOMEM;
    }
    memcpy(p->verts, verts, sizeof(fr_vec3) * (size_t)nverts);
    memcpy(p->face_count, face_count, sizeof(int) * (size_t)nfaces);
    memcpy(p->loop, loop, sizeof(int) * (size_t)nl);
    for (int f = 0, s = 0; f < nfaces; f++) {
        p->face_start[f] = s;
        s += face_count[f];
    }
    polytope_geometry(p);
    if (!(p->volume > 0) || !isfinite(p->volume)) {
        fri_polytope_free(p);
        return FR_ERR_INVAL;
    }
    int rc = polytope_dual(p);
    if (rc) fri_polytope_free(p);
    return rc;
}

void fri_polytope_scale(fr_polytope *p, fr_vec3 s)
{
    for (int i = 0; i < p->nverts; i++) p->verts[i] = fr_v3_mul(p->verts[i], s);
    polytope_geometry(p);
}

void fr_polytope_radii(const fr_polytope *p, double *inner, double *outer)
{
    double in = INFINITY, out = 0;
    for (int f = 0; f < p->nfaces; f++) in = fmin(in, p->offset[f]);
    for (int v = 0; v < p->nverts; v++) out = fmax(out, fr_v3_norm(p->verts[v]));
    if (inner) *inner = in;
    if (outer) *outer = out;
}

/* How far a local point lies outside the true shape (<= 0 inside; approximate at a cylinder's
 * rim, where the two excesses are combined as a distance to the rim circle). */
static double outside_true(const fr_shape *s, fr_vec3 v)
{
    double rad = hypot(v.x, v.y);
    switch (s->type) {
    case FR_SHAPE_SPHERE:
        return fr_v3_norm(v) - s->radius;
    case FR_SHAPE_CAPSULE: {
        double z = fmax(-s->half_length, fmin(s->half_length, v.z));
        return hypot(rad, v.z - z) - s->radius;
    }
    case FR_SHAPE_CYLINDER: {
        double a = rad - s->radius, b = fabs(v.z) - s->half_length;
        if (a > 0.0 && b > 0.0) return hypot(a, b);
        return fmax(a, b);
    }
    default:
        return 0.0;
    }
}

/* The vertex with the largest d·v (*value) of a polytope with vertices: a scan for small ones,
 * else hill climbing on the vertex graph from vertex start (on a convex polytope a linear
 * function has no local maximum that is not global: the scan's value, at O(√V) for O(V)). */
static int polytope_extreme(const fr_polytope *p, fr_vec3 d, int start, double *value)
{
    int best = p->nverts <= 32 || !p->adj_start || start < 0 || start >= p->nverts ? 0 : start;
    double bv = fr_v3_dot(p->verts[best], d);
    if (p->nverts <= 32 || !p->adj_start) { /* small: a scan is cheaper */
        for (int i = 1; i < p->nverts; i++) {
            double v = fr_v3_dot(p->verts[i], d);
            if (v > bv) {
                bv = v;
                best = i;
            }
        }
    } else {
        for (bool moved = true; moved;) {
            moved = false;
            for (int k = p->adj_start[best]; k < p->adj_start[best + 1]; k++) {
                int u = p->adj[k];
                double v = fr_v3_dot(p->verts[u], d);
                if (v > bv) {
                    bv = v;
                    best = u;
                    moved = true;
                    break;
                }
            }
        }
    }
    *value = bv;
    return best;
}

/* The polytope's extent along the unit direction d, m; hint: the extreme vertices of the last
 * call (the starts of the climbs), per side. */
static double extent_along(const fr_polytope *p, fr_vec3 d, int hint[2])
{
    if (p->nverts <= 0) return 0.0;
    double hi, lo;
    hint[0] = polytope_extreme(p, d, hint[0], &hi);
    hint[1] = polytope_extreme(p, fr_v3_neg(d), hint[1], &lo);
    return hi + lo;
}

void fr_shape_widths(const fr_shape *s, double *least, double *greatest)
{
    const fr_polytope *p = &s->poly;
    double lo_w = INFINITY, hi_w = 0.0;
    int hint[2] = {0, 0};
    for (int f = 0; f < p->nfaces; f++) {
        double w = extent_along(p, p->normal[f], hint);
        if (w < lo_w) lo_w = w;
        if (w > hi_w) hi_w = w;
    }
    *least = p->nfaces > 0 ? lo_w : 0.0;
    *greatest = hi_w;
}

int fr_shape_stance(const fr_shape *s, fr_vec3 n, double *width, double *height)
{
    if (!s || !width || !height) return FR_ERR_INVAL;
    const double nn = fr_v3_norm(n);
    if (!(nn > 0.0) || !isfinite(nn)) return FR_ERR_INVAL;
    n = fr_v3_scale(n, 1.0 / nn);
    const fr_polytope *p = &s->poly;
    int hint[2] = {0, 0};
    *height = extent_along(p, n, hint);
    /* across n, along each face normal's part square to n: a box standing on a face measures
     * its two sides; a face normal within ~6° of n says nothing about the width */
    double w = INFINITY;
    for (int f = 0; f < p->nfaces; f++) {
        fr_vec3 d = fr_v3_mad(p->normal[f], -fr_v3_dot(p->normal[f], n), n);
        double dn = fr_v3_norm(d);
        if (dn < 0.1) continue;
        double e = extent_along(p, fr_v3_scale(d, 1.0 / dn), hint);
        if (e < w) w = e;
    }
    *width = isfinite(w) ? w : 0.0;
    return FR_OK;
}

double fr_shape_slack(const fr_shape *s)
{
    if (!s ||
        (s->type != FR_SHAPE_SPHERE && s->type != FR_SHAPE_CAPSULE && s->type != FR_SHAPE_CYLINDER))
        return 0.0;
    const fr_polytope *p = &s->poly;
    double slack = 0.0;
    /* the polytope's vertices outside the true surface */
    for (int v = 0; v < p->nverts; v++) slack = fmax(slack, outside_true(s, p->verts[v]));
    /* the true surface outside the polytope's face planes */
    for (int f = 0; f < p->nfaces; f++) {
        fr_vec3 x = fr_shape_support(s, p->normal[f]);
        slack = fmax(slack, fr_v3_dot(p->normal[f], x) - p->offset[f]);
    }
    return slack;
}

/* ---------------------------------------------------------------- shapes */

static fr_shape *shape_new(fr_shape_type type)
{
    fr_shape *s = calloc(1, sizeof *s);
    if (s) s->type = type;
    return s;
}

void fr_shape_destroy(fr_shape *s)
{
    if (!s) return;
    fri_polytope_free(&s->poly);
    free(s);
}

int fr_shape_clone(const fr_shape *src, fr_shape **out)
{
    *out = NULL;
    if (!src) return FR_ERR_INVAL;
    fr_shape *s = malloc(sizeof *s);
    if (!s) return FR_ERR_NOMEM;
    *s = *src;
    fr_polytope *p = &s->poly;
    const fr_polytope *q = &src->poly;
    size_t nv = (size_t)q->nverts, nf = (size_t)q->nfaces, nl = (size_t)q->nloop;
    p->verts = malloc(sizeof *p->verts * nv);
    p->normal = malloc(sizeof *p->normal * nf);
    p->offset = malloc(sizeof *p->offset * nf);
    p->face_start = malloc(sizeof *p->face_start * nf);
    p->face_count = malloc(sizeof *p->face_count * nf);
    p->loop = malloc(sizeof *p->loop * nl);
    p->adj_start = q->adj_start ? malloc(sizeof *p->adj_start * (nv + 1)) : NULL;
    p->adj = q->adj ? malloc(sizeof *p->adj * nl) : NULL;
    p->dual = q->dual ? malloc(sizeof *p->dual * (size_t)q->ntris) : NULL;
    if (!p->verts || !p->normal || !p->offset || !p->face_start || !p->face_count || !p->loop ||
        (q->adj_start && !p->adj_start) || (q->adj && !p->adj) || (q->dual && !p->dual)) {
        fr_shape_destroy(s);
        return FR_ERR_NOMEM;
    }
    memcpy(p->verts, q->verts, sizeof *p->verts * nv);
    memcpy(p->normal, q->normal, sizeof *p->normal * nf);
    memcpy(p->offset, q->offset, sizeof *p->offset * nf);
    memcpy(p->face_start, q->face_start, sizeof *p->face_start * nf);
    memcpy(p->face_count, q->face_count, sizeof *p->face_count * nf);
    memcpy(p->loop, q->loop, sizeof *p->loop * nl);
    if (p->adj_start) memcpy(p->adj_start, q->adj_start, sizeof *p->adj_start * (nv + 1));
    if (p->adj) memcpy(p->adj, q->adj, sizeof *p->adj * nl);
    if (p->dual) memcpy(p->dual, q->dual, sizeof *p->dual * (size_t)q->ntris);
    *out = s;
    return FR_OK;
}

static int shape_from_points(fr_shape *s, const fr_vec3 *pts, int n)
{
    fri_hull_loops h;
    int rc = fri_hull_qhull(pts, n, &h);
    if (rc) return rc;
    rc = fri_polytope_build(&s->poly, h.verts, h.nverts, h.face_count, h.loop, h.nfaces);
    fri_hull_loops_free(&h);
    return rc;
}

static int finish(fr_shape *s, int rc, fr_shape **out)
{
    if (rc) {
        fr_shape_destroy(s);
        *out = NULL;
        return rc;
    }
    *out = s;
    return FR_OK;
}

int fr_shape_create_box(fr_vec3 half, fr_shape **out)
{
    *out = NULL;
    if (!(half.x > 0 && half.y > 0 && half.z > 0) || !fr_v3_isfinite(half)) return FR_ERR_INVAL;
    fr_shape *s = shape_new(FR_SHAPE_BOX);
    if (!s) return FR_ERR_NOMEM;
    s->half = half;
    fr_vec3 v[8];
    for (int i = 0; i < 8; i++)
        v[i] = fr_v3(i & 1 ? half.x : -half.x, i & 2 ? half.y : -half.y, i & 4 ? half.z : -half.z);
    /* counter-clockwise seen from outside: -x, +x, -y, +y, -z, +z */
    static const int loop[24] = {0, 4, 6, 2, 1, 3, 7, 5, 0, 1, 5, 4,
                                 2, 6, 7, 3, 0, 2, 3, 1, 4, 5, 7, 6};
    static const int cnt[6] = {4, 4, 4, 4, 4, 4};
    int rc = fri_polytope_build(&s->poly, v, 8, cnt, loop, 6);
    s->volume = 8 * half.x * half.y * half.z;
    s->centroid = fr_v3_zero();
    fr_vec3 h2 = fr_v3_mul(half, half);
    s->inertia =
        fr_m3_diag(fr_v3_scale(fr_v3(h2.y + h2.z, h2.x + h2.z, h2.x + h2.y), s->volume / 3));
    s->bound_radius = fr_v3_norm(half);
    return finish(s, rc, out);
}

/* Vertices of a geodesic sphere of frequency f on the unit sphere (10f²+2 points). */
static int geodesic_points(int f, fr_vec3 **pts_out)
{
    const double g = 1.6180339887498948482;
    fr_vec3 ico[12];
    int n = 0;
    for (int a = -1; a <= 1; a += 2)
        for (int b = -1; b <= 1; b += 2) {
            ico[n++] = fr_v3(0, a, b * g);
            ico[n++] = fr_v3(a, b * g, 0);
            ico[n++] = fr_v3(b * g, 0, a);
        }
    int cap = 20 * (f + 1) * (f + 2) / 2;
    fr_vec3 *pts = malloc(sizeof(fr_vec3) * (size_t)cap);
    if (!pts) return FR_ERR_NOMEM;
    int np = 0;
    for (int i = 0; i < 12; i++)
        for (int j = i + 1; j < 12; j++)
            for (int k = j + 1; k < 12; k++) {
                /* icosahedron faces: mutually at edge length 2 */
                if (fabs(fr_v3_dist(ico[i], ico[j]) - 2) > 1e-9 ||
                    fabs(fr_v3_dist(ico[j], ico[k]) - 2) > 1e-9 ||
                    fabs(fr_v3_dist(ico[i], ico[k]) - 2) > 1e-9)
                    continue;
                for (int a = 0; a <= f; a++)
                    for (int b = 0; a + b <= f; b++) {
                        int c = f - a - b;
                        fr_vec3 q = fr_v3_normalize(
                            fr_v3_add(fr_v3_add(fr_v3_scale(ico[i], a), fr_v3_scale(ico[j], b)),
                                      fr_v3_scale(ico[k], c)));
                        int dup = 0;
                        for (int m = 0; m < np && !dup; m++) dup = fr_v3_dist(pts[m], q) < 1e-9;
                        if (!dup && np < cap) pts[np++] = q;
                    }
            }
    *pts_out = pts;
    return np;
}

int fr_shape_create_sphere(double radius, int resolution, fr_shape **out)
{
    *out = NULL;
    if (!(radius > 0) || !isfinite(radius)) return FR_ERR_INVAL;
    int f = resolution > 0 ? resolution : FR_SPHERE_RES_DEFAULT;
    if (f > 32) return FR_ERR_RANGE;
    fr_shape *s = shape_new(FR_SHAPE_SPHERE);
    if (!s) return FR_ERR_NOMEM;
    s->radius = radius;
    s->resolution = f;
    fr_vec3 *pts;
    int np = geodesic_points(f, &pts);
    if (np < 0) return finish(s, np, out);
    for (int i = 0; i < np; i++) pts[i] = fr_v3_scale(pts[i], radius);
    int rc = shape_from_points(s, pts, np);
    free(pts);
    s->volume = 4.0 / 3.0 * PI * radius * radius * radius;
    s->centroid = fr_v3_zero();
    s->inertia = fr_m3_scale(fr_m3_identity(), 0.4 * s->volume * radius * radius);
    if (!rc) {
        double k = cbrt(s->volume / s->poly.volume);
        fri_polytope_scale(&s->poly, fr_v3(k, k, k));
        s->support_radius = s->poly.radius;
        s->bound_radius = s->support_radius;
    }
    return finish(s, rc, out);
}

/* Largest horizontal distance of the polytope's vertices from the z axis. */
static double max_rho(const fr_polytope *p)
{
    double m = 0;
    for (int i = 0; i < p->nverts; i++) m = fmax(m, hypot(p->verts[i].x, p->verts[i].y));
    return m;
}

int fr_shape_create_cylinder(double radius, double half_length, int resolution, fr_shape **out)
{
    *out = NULL;
    if (!(radius > 0) || !(half_length > 0) || !isfinite(radius) || !isfinite(half_length))
        return FR_ERR_INVAL;
    int n = resolution > 0 ? resolution : FR_CYLINDER_RES_DEFAULT;
    if (n < 3) return FR_ERR_RANGE;
    if (n > 1024) return FR_ERR_RANGE;
    fr_shape *s = shape_new(FR_SHAPE_CYLINDER);
    if (!s) return FR_ERR_NOMEM;
    s->radius = radius;
    s->half_length = half_length;
    s->resolution = n;
    fr_vec3 *pts = malloc(sizeof(fr_vec3) * 2 * (size_t)n);
    if (!pts) return finish(s, FR_ERR_NOMEM, out);
    for (int i = 0; i < n; i++) {
        double th = 2 * PI * i / n;
        pts[2 * i] = fr_v3(radius * cos(th), radius * sin(th), -half_length);
        pts[2 * i + 1] = fr_v3(radius * cos(th), radius * sin(th), half_length);
    }
    int rc = shape_from_points(s, pts, 2 * n);
    free(pts);
    double L = 2 * half_length, r2 = radius * radius;
    s->volume = PI * r2 * L;
    s->centroid = fr_v3_zero();
    double ixx = s->volume * (3 * r2 + L * L) / 12;
    s->inertia = fr_m3_diag(fr_v3(ixx, ixx, s->volume * r2 / 2));
    if (!rc) {
        double k = sqrt(s->volume / s->poly.volume);
        fri_polytope_scale(&s->poly, fr_v3(k, k, 1));
        s->support_radius = max_rho(&s->poly);
        s->bound_radius = hypot(s->support_radius, half_length);
    }
    return finish(s, rc, out);
}

int fr_shape_create_capsule(double radius, double half_length, int resolution, fr_shape **out)
{
    *out = NULL;
    if (!(radius > 0) || !(half_length >= 0) || !isfinite(radius) || !isfinite(half_length))
        return FR_ERR_INVAL;
    int n = resolution > 0 ? resolution : FR_CAPSULE_RES_DEFAULT;
    if (n < 4 || n > 1024) return FR_ERR_RANGE;
    int m = n / 4 > 1 ? n / 4 : 1;
    fr_shape *s = shape_new(FR_SHAPE_CAPSULE);
    if (!s) return FR_ERR_NOMEM;
    s->radius = radius;
    s->half_length = half_length;
    s->resolution = n;
    fr_vec3 *pts = malloc(sizeof(fr_vec3) * (2 * (size_t)n * (size_t)m + 2));
    if (!pts) return finish(s, FR_ERR_NOMEM, out);
    int np = 0;
    for (int side = -1; side <= 1; side += 2)
        for (int k = 0; k < m; k++) {
            if (k == 0 && side == 1 && half_length == 0) continue; /* one equator for h = 0 */
            double phi = 0.5 * PI * k / m;
            for (int i = 0; i < n; i++) {
                double th = 2 * PI * i / n;
                pts[np++] = fr_v3(radius * cos(phi) * cos(th), radius * cos(phi) * sin(th),
                                  side * (half_length + radius * sin(phi)));
            }
        }
    pts[np++] = fr_v3(0, 0, -(half_length + radius));
    pts[np++] = fr_v3(0, 0, half_length + radius);
    int rc = shape_from_points(s, pts, np);
    free(pts);
    double r2 = radius * radius, h = half_length;
    double vc = PI * r2 * 2 * h, vs = 4.0 / 3.0 * PI * r2 * radius;
    s->volume = vc + vs;
    s->centroid = fr_v3_zero();
    double izz = vc * r2 / 2 + 0.4 * vs * r2;
    double ixx = vc * (3 * r2 + 4 * h * h) / 12 + vs * (0.4 * r2 + h * h + 0.75 * h * radius);
    s->inertia = fr_m3_diag(fr_v3(ixx, ixx, izz));
    if (!rc) {
        double k = sqrt(s->volume / s->poly.volume);
        fri_polytope_scale(&s->poly, fr_v3(k, k, 1));
        s->support_radius = max_rho(&s->poly);
        s->bound_radius = h + s->support_radius;
    }
    return finish(s, rc, out);
}

int fr_shape_create_convex(const fr_vec3 *points, int n, fr_shape **out)
{
    *out = NULL;
    if (!points || n < 4) return FR_ERR_INVAL;
    for (int i = 0; i < n; i++)
        if (!fr_v3_isfinite(points[i])) return FR_ERR_INVAL;
    fr_shape *s = shape_new(FR_SHAPE_CONVEX);
    if (!s) return FR_ERR_NOMEM;
    int rc = shape_from_points(s, points, n);
    if (!rc) {
        s->volume = s->poly.volume;
        s->centroid = s->poly.centroid;
        s->inertia = s->poly.inertia;
        s->bound_radius = s->poly.radius;
    }
    return finish(s, rc, out);
}

void fr_shape_mass(const fr_shape *s, double density, double *mass, fr_vec3 *com, fr_mat3 *inertia)
{
    if (mass) *mass = density * s->volume;
    if (com) *com = s->centroid;
    if (inertia) *inertia = fr_m3_scale(s->inertia, density);
}

int fr_shapes_max_faces(const fr_shape *const *shapes, int n)
{
    int m = 4;
    for (int i = 0; i < n; i++)
        if (shapes[i] && shapes[i]->poly.nfaces > m) m = shapes[i]->poly.nfaces;
    return m;
}

/* ---------------------------------------------------------------- support and AABB */

static inline double sgn_half(double d, double h)
{
    return d < 0 ? -h : h;
}

fr_vec3 fri_shape_support(const fr_shape *s, fr_vec3 d, bool inflate)
{
    switch (s->type) {
    case FR_SHAPE_BOX:
        return fr_v3(sgn_half(d.x, s->half.x), sgn_half(d.y, s->half.y), sgn_half(d.z, s->half.z));
    case FR_SHAPE_SPHERE: {
        double r = inflate ? s->support_radius : s->radius;
        double n = fr_v3_norm(d);
        return n > 0 ? fr_v3_scale(d, r / n) : fr_v3(r, 0, 0);
    }
    case FR_SHAPE_CAPSULE: {
        double r = inflate ? s->support_radius : s->radius;
        double n = fr_v3_norm(d);
        fr_vec3 c = fr_v3(0, 0, sgn_half(d.z, s->half_length));
        return n > 0 ? fr_v3_mad(c, r / n, d) : fr_v3_add(c, fr_v3(r, 0, 0));
    }
    case FR_SHAPE_CYLINDER: {
        double r = inflate ? s->support_radius : s->radius;
        double rho = hypot(d.x, d.y);
        double z = sgn_half(d.z, s->half_length);
        return rho > 0 ? fr_v3(d.x * r / rho, d.y * r / rho, z) : fr_v3(r, 0, z);
    }
    case FR_SHAPE_CONVEX:
    default: {
        double v;
        return s->poly.verts[polytope_extreme(&s->poly, d, 0, &v)];
    }
    }
}

fr_vec3 fr_shape_support(const fr_shape *s, fr_vec3 dir)
{
    return fri_shape_support(s, dir, false);
}

fr_aabb fr_shape_aabb(const fr_shape *s, fr_pose pose)
{
    fr_mat3 R = fr_q_to_m3(pose.q);
    fr_vec3 e;
    switch (s->type) {
    case FR_SHAPE_BOX:
        e = fr_v3(
            fabs(R.m[0][0]) * s->half.x + fabs(R.m[0][1]) * s->half.y + fabs(R.m[0][2]) * s->half.z,
            fabs(R.m[1][0]) * s->half.x + fabs(R.m[1][1]) * s->half.y + fabs(R.m[1][2]) * s->half.z,
            fabs(R.m[2][0]) * s->half.x + fabs(R.m[2][1]) * s->half.y +
                fabs(R.m[2][2]) * s->half.z);
        break;
    case FR_SHAPE_SPHERE:
        e = fr_v3(s->support_radius, s->support_radius, s->support_radius);
        break;
    case FR_SHAPE_CAPSULE: {
        fr_vec3 a = fr_v3_abs(fr_m3_col(&R, 2));
        e = fr_v3_add(fr_v3_scale(a, s->half_length),
                      fr_v3(s->support_radius, s->support_radius, s->support_radius));
        break;
    }
    case FR_SHAPE_CYLINDER: {
        fr_vec3 a = fr_m3_col(&R, 2);
        double r = s->support_radius, h = s->half_length;
        e = fr_v3(fabs(a.x) * h + r * sqrt(fmax(0, 1 - a.x * a.x)),
                  fabs(a.y) * h + r * sqrt(fmax(0, 1 - a.y * a.y)),
                  fabs(a.z) * h + r * sqrt(fmax(0, 1 - a.z * a.z)));
        break;
    }
    case FR_SHAPE_CONVEX:
    default: {
        const fr_polytope *p = &s->poly;
        fr_vec3 lo = fr_m3_mulv(R, p->verts[0]), hi = lo;
        for (int i = 1; i < p->nverts; i++) {
            fr_vec3 v = fr_m3_mulv(R, p->verts[i]);
            lo = fr_v3_min(lo, v);
            hi = fr_v3_max(hi, v);
        }
        return (fr_aabb){fr_v3_add(lo, pose.p), fr_v3_add(hi, pose.p)};
    }
    }
    return (fr_aabb){fr_v3_sub(pose.p, e), fr_v3_add(pose.p, e)};
}
