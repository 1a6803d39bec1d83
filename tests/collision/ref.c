/* Independent reference computations for the collision tests; see ref.h. */
#include <stdio.h>
#include <stdlib.h>

#include <libqhull_r/qhull_ra.h>

#include "ref.h"

typedef struct qrun {
    qhT qh;
    FILE *err;
    coordT *c;
} qrun;

static int qstart(qrun *q, const fr_vec3 *pts, int n, const char *opts)
{
    q->c = malloc(sizeof(coordT) * 3 * (size_t)n);
    for (int i = 0; i < n; i++) {
        q->c[3 * i] = pts[i].x;
        q->c[3 * i + 1] = pts[i].y;
        q->c[3 * i + 2] = pts[i].z;
    }
    q->err = fopen("/dev/null", "w");
    qh_zero(&q->qh, q->err);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "qhull %s", opts);
    return qh_new_qhull(&q->qh, 3, n, q->c, False, cmd, NULL, q->err);
}

static void qend(qrun *q)
{
    int a, b;
    qh_freeqhull(&q->qh, !qh_ALL);
    qh_memfreeshort(&q->qh, &a, &b);
    fclose(q->err);
    free(q->c);
}

double ref_hull_volume(const fr_vec3 *pts, int n)
{
    qrun q;
    double v = -1;
    if (!qstart(&q, pts, n, "")) {
        qhT *qh = &q.qh;
        qh_getarea(qh, qh->facet_list);
        v = qh->totvol;
    }
    qend(&q);
    return v;
}

int ref_mp_volume(const fr_vec3 *n, const double *d, int np, fr_vec3 p, double *vol)
{
    fr_vec3 *y = malloc(sizeof(fr_vec3) * (size_t)np);
    for (int i = 0; i < np; i++) y[i] = fr_v3_scale(n[i], 1.0 / (d[i] - fr_v3_dot(n[i], p)));
    qrun q;
    int rc = -1;
    if (!qstart(&q, y, np, "")) {
        qhT *qh = &q.qh;
        facetT *facet;
        int nf = 0;
        FORALLfacets nf++;
        fr_vec3 *x = malloc(sizeof(fr_vec3) * (size_t)nf);
        int k = 0;
        FORALLfacets
        {
            /* facet: normal·y + offset = 0, offset < 0 since the origin is inside */
            fr_vec3 m = fr_v3(facet->normal[0], facet->normal[1], facet->normal[2]);
            x[k++] = fr_v3_add(p, fr_v3_scale(m, -1.0 / facet->offset));
        }
        double v = ref_hull_volume(x, nf);
        free(x);
        if (v >= 0) {
            *vol = v;
            rc = 0;
        }
    }
    qend(&q);
    free(y);
    return rc;
}

fr_vec3 ref_closest_on_triangle(fr_vec3 p, fr_vec3 a, fr_vec3 b, fr_vec3 c)
{
    fr_vec3 ab = fr_v3_sub(b, a), ac = fr_v3_sub(c, a), ap = fr_v3_sub(p, a);
    double d1 = fr_v3_dot(ab, ap), d2 = fr_v3_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) return a;
    fr_vec3 bp = fr_v3_sub(p, b);
    double d3 = fr_v3_dot(ab, bp), d4 = fr_v3_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return b;
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return fr_v3_mad(a, d1 / (d1 - d3), ab);
    fr_vec3 cp = fr_v3_sub(p, c);
    double d5 = fr_v3_dot(ab, cp), d6 = fr_v3_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return c;
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return fr_v3_mad(a, d2 / (d2 - d6), ac);
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
        return fr_v3_mad(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), fr_v3_sub(c, b));
    double den = 1.0 / (va + vb + vc);
    return fr_v3_add(a, fr_v3_add(fr_v3_scale(ab, vb * den), fr_v3_scale(ac, vc * den)));
}

double ref_distance(const fr_vec3 *a, int na, const fr_vec3 *b, int nb)
{
    int n = na * nb;
    fr_vec3 *m = malloc(sizeof(fr_vec3) * (size_t)n);
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) m[i * nb + j] = fr_v3_sub(a[i], b[j]);
    qrun q;
    double best = -1;
    if (!qstart(&q, m, n, "Qt")) {
        qhT *qh = &q.qh;
        facetT *facet;
        vertexT *vertex, **vertexp;
        bool inside = true;
        double depth = INFINITY; /* when inside: distance from the origin to the boundary */
        best = INFINITY;
        FORALLfacets
        {
            if (facet->offset >= 0) inside = false;
            depth = fmin(depth, -facet->offset);
            fr_vec3 t[3];
            int k = 0;
            FOREACHvertex_(facet->vertices)
            {
                if (k < 3) t[k] = fr_v3(vertex->point[0], vertex->point[1], vertex->point[2]);
                k++;
            }
            if (k != 3) continue;
            fr_vec3 c = ref_closest_on_triangle(fr_v3_zero(), t[0], t[1], t[2]);
            double dd = fr_v3_norm(c);
            if (dd < best) best = dd;
        }
        if (inside) best = -depth;
    }
    qend(&q);
    free(m);
    return best;
}
