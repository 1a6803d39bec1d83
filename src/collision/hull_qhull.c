/* Convex hull of a point set with Debian's reentrant qhull (start-up only: qhull allocates). */
#include <stdio.h>
#include <stdlib.h>

#include <libqhull_r/qhull_ra.h>

#include "collision_internal.h"
#include "hull.h"

int fri_hull_qhull(const fr_vec3 *pts, int n, fri_hull_loops *h)
{
    *h = (fri_hull_loops){0};
    if (n < 4) return FR_ERR_INVAL;
    coordT *coords = malloc(sizeof(coordT) * 3 * (size_t)n);
    int *map = malloc(sizeof(int) * (size_t)n);
    if (!coords || !map) {
        free(coords);
        free(map);
        return FR_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        coords[3 * i] = pts[i].x;
        coords[3 * i + 1] = pts[i].y;
        coords[3 * i + 2] = pts[i].z;
        map[i] = -1;
    }
    FILE *errf = fopen("/dev/null", "w");
    qhT qh_qh;
    qhT *qh = &qh_qh;
    qh_zero(qh, errf ? errf : stderr);
    char cmd[] = "qhull";
    int rc = FR_OK;
    int exitcode = qh_new_qhull(qh, 3, n, coords, False, cmd, NULL, errf ? errf : stderr);
    if (exitcode) {
        rc = FR_ERR_INVAL;
        goto done;
    }
    facetT *facet;
    vertexT *vertex, **vertexp;
    int nf = 0, nloop = 0;
    FORALLfacets
    {
        nf++;
        nloop += qh_setsize(qh, facet->vertices);
    }
    h->face_count = malloc(sizeof(int) * (size_t)nf);
    h->loop = malloc(sizeof(int) * (size_t)nloop);
    h->verts = malloc(sizeof(fr_vec3) * (size_t)n);
    if (!h->face_count || !h->loop || !h->verts) {
        rc = FR_ERR_NOMEM;
        goto done;
    }
    int f = 0, li = 0, nv = 0;
    FORALLfacets
    {
        setT *vs = qh_facet3vertex(qh, facet);
        int start = li;
        FOREACHvertex_(vs)
        {
            int id = qh_pointid(qh, vertex->point);
            if (map[id] < 0) {
                map[id] = nv;
                h->verts[nv++] = pts[id];
            }
            h->loop[li++] = map[id];
        }
        qh_settempfree(qh, &vs);
        int cnt = li - start;
        /* orient counter-clockwise about qhull's outward normal (Newell's area vector) */
        fr_vec3 a = fr_v3_zero();
        for (int k = 0; k < cnt; k++) {
            fr_vec3 p = h->verts[h->loop[start + k]];
            fr_vec3 q = h->verts[h->loop[start + (k + 1) % cnt]];
            a = fr_v3_add(a, fr_v3_cross(p, q));
        }
        fr_vec3 nq = fr_v3(facet->normal[0], facet->normal[1], facet->normal[2]);
        if (fr_v3_dot(a, nq) < 0) {
            for (int i = 0, j = cnt - 1; i < j; i++, j--) {
                int t = h->loop[start + i];
                h->loop[start + i] = h->loop[start + j];
                h->loop[start + j] = t;
            }
        }
        h->face_count[f++] = cnt;
    }
    h->nverts = nv;
    h->nfaces = nf;
    h->nloop = li;
done:
    qh_freeqhull(qh, !qh_ALL);
    int curlong, totlong;
    qh_memfreeshort(qh, &curlong, &totlong);
    if (errf) fclose(errf);
    free(coords);
    free(map);
    if (rc) fri_hull_loops_free(h);
    return rc;
}

void fri_hull_loops_free(fri_hull_loops *h)
{
    free(h->verts);
    free(h->face_count);
    free(h->loop);
    *h = (fri_hull_loops){0};
}
