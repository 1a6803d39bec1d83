/* Brute-force half-space intersection for the contact tests (see polybuild.h). */
#include "polybuild.h"

#include <math.h>
#include <string.h>

void tp_box_planes(fr_pose pose, fr_vec3 half, int owner, tp_plane *out6)
{
    for (int ax = 0; ax < 3; ax++) {
        fr_vec3 e = fr_v3(ax == 0, ax == 1, ax == 2);
        double hx = fr_v3_get(half, ax);
        for (int sg = -1; sg <= 1; sg += 2) {
            fr_vec3 nw = fr_q_rotate(pose.q, fr_v3_scale(e, sg));
            fr_vec3 pt = fr_pose_apply(pose, fr_v3_scale(e, sg * hx));
            *out6++ = (tp_plane){nw, fr_v3_dot(nw, pt), owner};
        }
    }
}

static bool solve3(fr_vec3 a, fr_vec3 b, fr_vec3 c, double da, double db, double dc, fr_vec3 *x)
{
    fr_vec3 bc = fr_v3_cross(b, c), ca = fr_v3_cross(c, a), ab = fr_v3_cross(a, b);
    double det = fr_v3_dot(a, bc);
    if (fabs(det) < 1e-10) return false;
    *x = fr_v3_scale(
        fr_v3_add(fr_v3_add(fr_v3_scale(bc, da), fr_v3_scale(ca, db)), fr_v3_scale(ab, dc)),
        1.0 / det);
    return true;
}

int tp_build(const tp_plane *pl_in, int np, double tol, tp_poly *tp)
{
    tp_plane pl[TP_MAXP];
    int m = 0;
    for (int i = 0; i < np && m < TP_MAXP; i++) {
        double nn = fr_v3_norm(pl_in[i].n);
        tp_plane q = {fr_v3_scale(pl_in[i].n, 1.0 / nn), pl_in[i].d / nn, pl_in[i].owner};
        bool dup = false; /* coincident planes would give the same face twice */
        for (int j = 0; j < m; j++)
            if (fr_v3_dist(pl[j].n, q.n) < 1e-12 && fabs(pl[j].d - q.d) < tol) dup = true;
        if (!dup) pl[m++] = q;
    }
    int nv = 0;
    for (int i = 0; i < m; i++)
        for (int j = i + 1; j < m; j++)
            for (int k = j + 1; k < m; k++) {
                fr_vec3 x;
                if (!solve3(pl[i].n, pl[j].n, pl[k].n, pl[i].d, pl[j].d, pl[k].d, &x)) continue;
                bool in = true;
                for (int l = 0; l < m && in; l++)
                    if (fr_v3_dot(pl[l].n, x) > pl[l].d + tol) in = false;
                if (!in) continue;
                bool dup = false;
                for (int v = 0; v < nv && !dup; v++)
                    if (fr_v3_dist(tp->verts[v], x) < tol) dup = true;
                if (!dup && nv < TP_MAXV) tp->verts[nv++] = x;
            }
    int nf = 0, ni = 0;
    for (int i = 0; i < m && nf < TP_MAXF; i++) {
        int on[TP_MAXV], c = 0;
        fr_vec3 cen = fr_v3_zero();
        for (int v = 0; v < nv; v++)
            if (fabs(fr_v3_dot(pl[i].n, tp->verts[v]) - pl[i].d) <= tol) {
                on[c++] = v;
                cen = fr_v3_add(cen, tp->verts[v]);
            }
        if (c < 3) continue;
        cen = fr_v3_scale(cen, 1.0 / c);
        fr_vec3 u = fr_v3_perp(pl[i].n), w = fr_v3_cross(pl[i].n, u);
        double ang[TP_MAXV];
        for (int k = 0; k < c; k++) {
            fr_vec3 r = fr_v3_sub(tp->verts[on[k]], cen);
            ang[k] = atan2(fr_v3_dot(r, w), fr_v3_dot(r, u));
        }
        for (int k = 1; k < c; k++) /* insertion sort by angle: counter-clockwise about n */
            for (int l = k; l > 0 && ang[l] < ang[l - 1]; l--) {
                double ta = ang[l];
                ang[l] = ang[l - 1];
                ang[l - 1] = ta;
                int tv = on[l];
                on[l] = on[l - 1];
                on[l - 1] = tv;
            }
        /* skip faces with no area (planes touching along an edge or at a vertex) */
        fr_vec3 av = fr_v3_zero();
        for (int k = 1; k + 1 < c; k++)
            av = fr_v3_add(av, fr_v3_cross(fr_v3_sub(tp->verts[on[k]], tp->verts[on[0]]),
                                           fr_v3_sub(tp->verts[on[k + 1]], tp->verts[on[0]])));
        if (fr_v3_norm(av) <= tol * tol) continue;
        if (ni + c > TP_MAXI) break;
        tp->fstart[nf] = ni;
        tp->fcount[nf] = c;
        tp->owner[nf] = (unsigned char)pl[i].owner;
        tp->fnormal[nf] = pl[i].n;
        for (int k = 0; k < c; k++) tp->vidx[ni++] = on[k];
        nf++;
    }
    /* volume and centroid by the divergence theorem (tetrahedra from the origin) */
    double vol = 0.0;
    fr_vec3 cen = fr_v3_zero();
    for (int f = 0; f < nf; f++) {
        const int *ix = tp->vidx + tp->fstart[f];
        for (int k = 1; k + 1 < tp->fcount[f]; k++) {
            fr_vec3 p0 = tp->verts[ix[0]], p1 = tp->verts[ix[k]], p2 = tp->verts[ix[k + 1]];
            double v6 = fr_v3_dot(p0, fr_v3_cross(p1, p2));
            vol += v6 / 6.0;
            cen = fr_v3_add(cen, fr_v3_scale(fr_v3_add(fr_v3_add(p0, p1), p2), v6 / 24.0));
        }
    }
    fr_polyhedron_out *o = &tp->out;
    memset(o, 0, sizeof *o);
    o->nverts = nf > 0 ? nv : 0;
    o->nfaces = nf;
    o->nidx = ni;
    o->max_verts = TP_MAXV;
    o->max_faces = TP_MAXF;
    o->max_idx = TP_MAXI;
    o->verts = tp->verts;
    o->vidx = tp->vidx;
    o->face_start = tp->fstart;
    o->face_count = tp->fcount;
    o->face_owner = tp->owner;
    o->face_normal = tp->fnormal;
    o->volume = vol;
    o->centroid = vol > 0 ? fr_v3_scale(cen, 1.0 / vol) : fr_v3_zero();
    o->interior = o->centroid;
    return nf;
}

void tp_swap_owners(tp_poly *tp)
{
    for (int f = 0; f < tp->out.nfaces; f++)
        tp->owner[f] = tp->owner[f] == FR_FACE_A ? FR_FACE_B : FR_FACE_A;
}
