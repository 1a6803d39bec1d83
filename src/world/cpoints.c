/* The constraint contact mode's geometry (docs/constraint.md §5): a pair's contact polygon
 * points from the Muller–Preparata polyhedron, and its report from the rows' impulses. The rows
 * themselves are built in constraints.c. */
#include <string.h>

#include "world_internal.h"

/* Points of the pair's contact polygon: w->poly's vertices in the model's plane, merged where
 * they project onto one another (a slab's top and bottom), each with the polyhedron's thickness
 * there as its depth; at most FRI_CPTS of them, the farthest apart (a box face: its corners). */
void fri_contact_points(fr_world *w, fri_pair *p, double gap)
{
    const fr_contact_model *m = &p->model;
    const fr_polyhedron_out *P = &w->poly;
    enum { MAXC = 64 };
    double cx[MAXC], cy[MAXC], smin[MAXC], smax[MAXC];
    int nc = 0;
    double size = sqrt(fmax(m->area, 1e-12));
    double tol = 1e-6 * size + 1e-9;
    for (int v = 0; v < P->nverts; v++) {
        fr_vec3 r = fr_v3_sub(P->verts[v], m->point);
        double x = fr_v3_dot(r, m->t1), y = fr_v3_dot(r, m->t2), s = fr_v3_dot(r, m->normal);
        int c = 0;
        for (; c < nc; c++)
            if (fabs(cx[c] - x) <= tol && fabs(cy[c] - y) <= tol) break;
        if (c == nc) {
            if (nc == MAXC) continue;
            cx[c] = x, cy[c] = y, smin[c] = smax[c] = s;
            nc++;
        } else {
            smin[c] = fmin(smin[c], s);
            smax[c] = fmax(smax[c], s);
        }
    }
    /* farthest-point selection */
    int pick[FRI_CPTS], np = 0;
    double dmin[MAXC];
    for (int c = 0; c < nc; c++) dmin[c] = INFINITY;
    if (nc > 0) {
        int best = 0;
        double bd = -1;
        for (int c = 0; c < nc; c++) {
            double d = cx[c] * cx[c] + cy[c] * cy[c];
            if (d > bd) bd = d, best = c;
        }
        pick[np++] = best;
        while (np < FRI_CPTS && np < nc) {
            int last = pick[np - 1];
            best = -1;
            bd = -1;
            for (int c = 0; c < nc; c++) {
                double dx = cx[c] - cx[last], dy = cy[c] - cy[last];
                dmin[c] = fmin(dmin[c], dx * dx + dy * dy);
                if (dmin[c] > bd) bd = dmin[c], best = c;
            }
            if (!(bd > tol * tol)) break;
            pick[np++] = best;
        }
    }
    /* last step's points for the warm start */
    p->cn_prev = p->cmode ? p->cn : 0;
    memcpy(p->cx_prev, p->cx, sizeof p->cx);
    memcpy(p->cy_prev, p->cy, sizeof p->cy);
    memcpy(p->clam_prev, p->clam, sizeof p->clam);
    p->cn = np;
    for (int k = 0; k < np; k++) {
        int c = pick[k];
        p->cx[k] = cx[c];
        p->cy[k] = cy[c];
        p->csep[k] = gap - (smax[c] - smin[c]);
    }
    p->cmode = true;
}

void fri_contact_constraint_report(fr_world *w, fri_pair *p)
{
    const fr_contact_model *m = &p->model;
    const double h = w->h;
    const fri_body_state *A = &w->state[p->slot_a], *B = &w->state[p->slot_b];
    fr_contact_result *res = &p->res;
    memset(res, 0, offsetof(fr_contact_result, K));
    fr_vec3 f = fr_v3_zero(), ta = fr_v3_zero(), tb = fr_v3_zero();
    double nsum = 0.0, fsum_t1 = 0.0, fsum_t2 = 0.0, maxdepth = 0.0;
    for (int k = 0; k < p->cn; k++) {
        fr_vec3 pt = fr_v3_add(
            m->point, fr_v3_add(fr_v3_scale(m->t1, p->cx[k]), fr_v3_scale(m->t2, p->cy[k])));
        fr_vec3 fk = fr_v3_scale(fr_v3_add(fr_v3_scale(m->normal, p->clam[k][0]),
                                           fr_v3_add(fr_v3_scale(m->t1, p->clam[k][1]),
                                                     fr_v3_scale(m->t2, p->clam[k][2]))),
                                 1.0 / h); /* on B */
        f = fr_v3_add(f, fk);
        tb = fr_v3_add(tb, fr_v3_cross(fr_v3_sub(pt, B->pose.p), fk));
        ta = fr_v3_sub(ta, fr_v3_cross(fr_v3_sub(pt, A->pose.p), fk));
        nsum += p->clam[k][0] / h;
        fsum_t1 += p->clam[k][1] / h;
        fsum_t2 += p->clam[k][2] / h;
        maxdepth = fmax(maxdepth, -p->csep[k]);
    }
    double mu = p->cslide ? m->mu_k : m->mu_s;
    res->in_contact = nsum > 0.0 || m->depth0 > 0.0;
    res->sliding = p->cslide;
    res->force_a = fr_v3_neg(f);
    res->torque_a = ta;
    res->force_b = f;
    res->torque_b = tb;
    res->point = m->point;
    res->normal = m->normal;
    res->mean_depth = m->depth0;
    res->max_depth = maxdepth;
    res->area = m->area;
    res->volume = m->depth0 > 0.0 ? m->area * m->depth0 : 0.0;
    res->normal_force = nsum;
    /* friction on A */
    res->friction_force =
        fr_v3_neg(fr_v3_add(fr_v3_scale(m->t1, fsum_t1), fr_v3_scale(m->t2, fsum_t2)));
    res->friction_limit = mu * nsum;
    if (res->in_contact && maxdepth > w->max_pen) w->max_pen = maxdepth;
}
