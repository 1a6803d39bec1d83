/*
 * The contact patch: the intersection polyhedron reduced to the integrals the force laws need
 * (docs/contact.md §1).
 *
 * Every integral over the contact area is taken face by face: each face of the intersection is
 * fan-triangulated and each triangle projected on the plane normal to n. With S_T the signed
 * projected area of a triangle (> 0 on faces where the volume is left along +n, < 0 where it is
 * entered), Σ_T S_T·(mean of φ·h over T) = ∫ φ(x)·t(x) dA for any φ that is constant along n,
 * where h = (p − o)·n and t(x) is the thickness through x. Both the "exit" and the "entry"
 * triangles tile the contact area, so Σ_{S_T > 0} S_T·(mean of φ over T) = ∫ φ dA (the exit
 * tiling alone: half the work of averaging both, the same up to rounding). Polynomial
 * integrands use exact per-triangle formulas; |x − c| uses a closed form (seg_integral).
 */
#include <math.h>

#include <string.h>

#include "contact_internal.h"
#include "fureru/base.h"

/* A vertex in the contact frame: (x, y) along t1, t2 and h along n, relative to o. */
typedef struct cpt {
    double x, y, h;
} cpt;

static inline cpt to_frame(fr_vec3 p, fr_vec3 o, fr_vec3 t1, fr_vec3 t2, fr_vec3 n)
{
    fr_vec3 r = fr_v3_sub(p, o);
    return (cpt){fr_v3_dot(r, t1), fr_v3_dot(r, t2), fr_v3_dot(r, n)};
}

/* Sums over the triangles; see fr_contact_eval for their meaning and scale factors. */
typedef struct tri_sums {
    double v, qx, qy, hh, j; /* thickness-weighted: ∫t, ∫t·x, ∫t·y, ∫_V h, ∫t·|x|² */
    double a, ax, ay;        /* area, area first moments */
    double axx, axy, ayy;    /* area second moments */
} tri_sums;

static inline void tri_accumulate(tri_sums *s, cpt p0, cpt p1, cpt p2)
{
    double S = 0.5 * ((p1.x - p0.x) * (p2.y - p0.y) - (p2.x - p0.x) * (p1.y - p0.y));
    if (S == 0.0) return;
    double sx = p0.x + p1.x + p2.x, sy = p0.y + p1.y + p2.y, sh = p0.h + p1.h + p2.h;
    double hx = p0.h * p0.x + p1.h * p1.x + p2.h * p2.x;
    double hy = p0.h * p0.y + p1.h * p1.y + p2.h * p2.y;
    double r0 = p0.x * p0.x + p0.y * p0.y, r1 = p1.x * p1.x + p1.y * p1.y,
           r2 = p2.x * p2.x + p2.y * p2.y;
    double xx = p0.x * p0.x + p1.x * p1.x + p2.x * p2.x;
    double xy = p0.x * p0.y + p1.x * p1.y + p2.x * p2.y;
    double yy = p0.y * p0.y + p1.y * p1.y + p2.y * p2.y;
    s->v += S * sh;
    s->qx += S * (sx * sh + hx);
    s->qy += S * (sy * sh + hy);
    s->hh += S * (sh * sh + p0.h * p0.h + p1.h * p1.h + p2.h * p2.h);
    s->j += S * (sh * (sx * sx + sy * sy) + 2.0 * (hx * sx + hy * sy) + sh * (r0 + r1 + r2) +
                 2.0 * (p0.h * r0 + p1.h * r1 + p2.h * r2));
    if (S > 0.0) { /* the exit triangles tile the contact area */
        s->a += S;
        s->ax += S * sx;
        s->ay += S * sy;
        s->axx += S * (sx * sx + xx);
        s->axy += S * (sx * sy + xy);
        s->ayy += S * (sy * sy + yy);
    }
}

/* ∫_0^1 |w0 + t·w1|·(al + be·t) dt for 2-D vectors w0, w1, in closed form: with u = L(t − t*)
 * along the line (t* the foot of the perpendicular from the origin, d its distance),
 * ∫ sqrt(u² + d²) du = ½(u·r + d²·asinh(u/d)) and ∫ u·sqrt(u² + d²) du = r³/3. */
static double seg_integral(double w0x, double w0y, double w1x, double w1y, double al, double be)
{
    double L2 = w1x * w1x + w1y * w1y;
    if (!(L2 > 0.0)) return sqrt(w0x * w0x + w0y * w0y) * (al + 0.5 * be);
    double L = sqrt(L2);
    double ts = -(w0x * w1x + w0y * w1y) / L2;
    double cr = w0x * w1y - w0y * w1x;
    double dd = cr * cr / L2; /* d² */
    double u0 = -L * ts, u1 = L * (1.0 - ts);
    double r0 = sqrt(u0 * u0 + dd), r1 = sqrt(u1 * u1 + dd);
    double g0 = 0.5 * (u1 * r1 - u0 * r0);
    if (dd > 1e-200 * L2) {
        /* asinh(u1/d) − asinh(u0/d) = ln(s1/s0), s = u + r, written without cancellation */
        double s1 = u1 >= 0.0 ? u1 + r1 : dd / (r1 - u1);
        double s0 = u0 >= 0.0 ? u0 + r0 : dd / (r0 - u0);
        g0 += 0.5 * dd * log(s1 / s0);
    }
    double g1 = (r1 * r1 * r1 - r0 * r0 * r0) / 3.0;
    return ((al + be * ts) * g0 + be / L * g1) / L;
}

/* Projected vertices, cached for the first CONTACT_VBUF (the rest are projected when used). */
#define CONTACT_VBUF 256
#define CONTACT_FBUF 128
typedef struct vcache {
    const fr_polyhedron_out *poly;
    fr_vec3 o, t1, t2, n;
    int nbuf;
    cpt v[CONTACT_VBUF];
} vcache;

static inline cpt vget(const vcache *c, int i)
{
    return i < c->nbuf ? c->v[i] : to_frame(c->poly->verts[i], c->o, c->t1, c->t2, c->n);
}

/*
 * Signed ∫ h(x)·|x − c| dA over the projection of face f (h is linear on the face, the sign that
 * of the face's projected orientation). The polygon is the signed sum of the triangles (c, p, q)
 * over its boundary edges p → q; in each, x = c + s·w(t) with w(t) = p + t(q − p) and
 * dA = s·J ds dt, so the s-integral is exact and the t-integral is seg_integral. A face that is a
 * needle in projection (nearly parallel to n) uses the edge-midpoint rule on its fan triangles,
 * since extrapolating h to c would amplify round-off; its contribution is negligible either way.
 */
static double face_radial(const vcache *vc, int f, double cx, double cy)
{
    const int *ix = vc->poly->vidx + vc->poly->face_start[f];
    const int m = vc->poly->face_count[f];
    cpt p0 = vget(vc, ix[0]);
    p0.x -= cx, p0.y -= cy;
    double S2 = 0.0, best = -1.0, lmax = 0.0;
    cpt b1 = p0, b2 = p0, prev = p0;
    for (int k = 1; k < m; k++) {
        cpt q = vget(vc, ix[k]);
        q.x -= cx, q.y -= cy;
        double l2 = (q.x - prev.x) * (q.x - prev.x) + (q.y - prev.y) * (q.y - prev.y);
        if (l2 > lmax) lmax = l2;
        if (k >= 2) {
            double s2 = (prev.x - p0.x) * (q.y - p0.y) - (q.x - p0.x) * (prev.y - p0.y);
            S2 += s2;
            if (fabs(s2) > best) best = fabs(s2), b1 = prev, b2 = q;
        }
        prev = q;
    }
    double l2 = (p0.x - prev.x) * (p0.x - prev.x) + (p0.y - prev.y) * (p0.y - prev.y);
    if (l2 > lmax) lmax = l2;
    if (S2 == 0.0) return 0.0;
    if (fabs(S2) < 1e-6 * lmax) {
        double sum = 0.0;
        cpt a = vget(vc, ix[1]);
        a.x -= cx, a.y -= cy;
        for (int k = 2; k < m; k++) {
            cpt q = vget(vc, ix[k]);
            q.x -= cx, q.y -= cy;
            double s2 = (a.x - p0.x) * (q.y - p0.y) - (q.x - p0.x) * (a.y - p0.y);
            const cpt t[3] = {p0, a, q};
            double e = 0.0;
            for (int i = 0; i < 3; i++) {
                const cpt u = t[i], w = t[(i + 1) % 3];
                double mx = 0.5 * (u.x + w.x), my = 0.5 * (u.y + w.y);
                e += 0.5 * (u.h + w.h) * sqrt(mx * mx + my * my);
            }
            sum += s2 / 6.0 * e;
            a = q;
        }
        return sum;
    }
    /* h at c, from the face's best-conditioned fan triangle */
    double bs2 = (b1.x - p0.x) * (b2.y - p0.y) - (b2.x - p0.x) * (b1.y - p0.y);
    double hc = (p0.h * (b1.x * b2.y - b2.x * b1.y) + b1.h * (b2.x * p0.y - p0.x * b2.y) +
                 b2.h * (p0.x * b1.y - b1.x * p0.y)) /
                bs2;
    double sum = 0.0;
    prev = p0;
    for (int k = 1; k <= m; k++) {
        cpt q = p0;
        if (k < m) {
            q = vget(vc, ix[k]);
            q.x -= cx, q.y -= cy;
        }
        double J = prev.x * q.y - q.x * prev.y;
        if (J != 0.0) {
            double al = hc / 3.0 + (prev.h - hc) / 4.0, be = (q.h - prev.h) / 4.0;
            sum += J * seg_integral(prev.x, prev.y, q.x - prev.x, q.y - prev.y, al, be);
        }
        prev = q;
    }
    return sum;
}

double fri_ellipse(double f, double tau, double F, double M)
{
    double g = 0.0;
    if (F > 0.0)
        g += (f / F) * (f / F);
    else if (f != 0.0)
        return INFINITY;
    if (M > 0.0)
        g += (tau / M) * (tau / M);
    else if (tau != 0.0)
        return INFINITY;
    return g;
}

void fri_patch_moments(const fr_polyhedron_out *poly, const fri_patch *frame, fri_moments *mo)
{
    tri_sums s;
    memset(&s, 0, sizeof s);
    const fr_vec3 o = frame->o, t1 = frame->t1, t2 = frame->t2, n = frame->n;
    for (int f = 0; f < poly->nfaces; f++) {
        const int *ix = poly->vidx + poly->face_start[f];
        cpt q0 = to_frame(poly->verts[ix[0]], o, t1, t2, n);
        cpt q1 = to_frame(poly->verts[ix[1]], o, t1, t2, n);
        for (int k = 2; k < poly->face_count[f]; k++) {
            cpt q2 = to_frame(poly->verts[ix[k]], o, t1, t2, n);
            tri_accumulate(&s, q0, q1, q2);
            q1 = q2;
        }
    }
    mo->V = s.v / 3.0;
    mo->Qx = s.qx / 12.0, mo->Qy = s.qy / 12.0;
    mo->A = s.a;
    mo->Ax = s.ax / 3.0, mo->Ay = s.ay / 3.0;
    mo->Axx = s.axx / 12.0, mo->Axy = s.axy / 12.0, mo->Ayy = s.ayy / 12.0;
}

/* The polyhedron's vertices projected on the patch's plane, relative to a point (x0, y0) there:
 * the first CONTACT_VBUF kept, the rest projected when used. */
typedef struct plane_pts {
    const fr_polyhedron_out *poly;
    const fri_patch *pt;
    double x0, y0;
    int nbuf;
    double x[CONTACT_VBUF], y[CONTACT_VBUF];
} plane_pts;

static inline void plane_pt(const plane_pts *c, int i, double *x, double *y)
{
    if (i < c->nbuf) {
        *x = c->x[i], *y = c->y[i];
        return;
    }
    const cpt v = to_frame(c->poly->verts[i], c->pt->o, c->pt->t1, c->pt->t2, c->pt->n);
    *x = v.x - c->x0, *y = v.y - c->y0;
}

void fri_patch_reach(const fr_polyhedron_out *poly, const fri_patch *pt, double x0, double y0,
                     const double (*line)[2], double *reach)
{
    plane_pts c;
    c.poly = poly, c.pt = pt, c.x0 = x0, c.y0 = y0;
    c.nbuf = poly->nverts < CONTACT_VBUF ? poly->nverts : CONTACT_VBUF;
    double ext[2][2] = {{0.0, 0.0}, {0.0, 0.0}}; /* no exit lies beyond the vertices' extent */
    for (int i = 0; i < poly->nverts; i++) {
        const cpt v = to_frame(poly->verts[i], pt->o, pt->t1, pt->t2, pt->n);
        if (i < c.nbuf) c.x[i] = v.x - x0, c.y[i] = v.y - y0;
        for (int d = 0; d < 2; d++) {
            const double u = (v.x - x0) * line[d][0] + (v.y - y0) * line[d][1];
            ext[d][0] = fmax(ext[d][0], u), ext[d][1] = fmax(ext[d][1], -u);
        }
    }
    double out[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    for (int f = 0; f < poly->nfaces; f++) {
        const int *ix = poly->vidx + poly->face_start[f];
        const int m = poly->face_count[f];
        if (m < 3) continue;
        /* the exit faces (positive projected area in their vertex order) tile the patch; a face
         * seen edge-on, a needle in projection, covers none (its edges, nearly parallel, would
         * put the exit anywhere along them) */
        double S2 = 0.0, lmax = 0.0, ax, ay, bx, by;
        plane_pt(&c, ix[m - 1], &ax, &ay);
        for (int k = 0; k < m; k++, ax = bx, ay = by) {
            plane_pt(&c, ix[k], &bx, &by);
            lmax = fmax(lmax, (bx - ax) * (bx - ax) + (by - ay) * (by - ay));
            S2 += ax * by - bx * ay;
        }
        if (!(S2 > 1e-6 * lmax)) continue;
        /* the line through (x0, y0) along line[d] within this polygon: s in [lo, hi] */
        for (int d = 0; d < 2; d++) {
            double lo = -INFINITY, hi = INFINITY;
            plane_pt(&c, ix[m - 1], &ax, &ay);
            for (int k = 0; k < m && lo <= hi; k++, ax = bx, ay = by) {
                plane_pt(&c, ix[k], &bx, &by);
                const double ex = bx - ax, ey = by - ay;
                /* inside (left of the edge a → b) where f0 + s·f1 >= 0 */
                const double f0 = ey * ax - ex * ay, f1 = ex * line[d][1] - ey * line[d][0];
                if (f1 > 0.0)
                    lo = fmax(lo, -f0 / f1);
                else if (f1 < 0.0)
                    hi = fmin(hi, f0 / -f1);
                else if (f0 < 0.0)
                    hi = -INFINITY;
            }
            if (!(hi >= lo) || !isfinite(hi) || !isfinite(lo)) continue;
            out[d][0] = fmax(out[d][0], hi), out[d][1] = fmax(out[d][1], -lo);
        }
    }
    for (int d = 0; d < 2; d++)
        for (int sg = 0; sg < 2; sg++) reach[2 * d + sg] = fmin(out[d][sg], ext[d][sg]);
}

int fri_patch_compute(const fr_polyhedron_out *poly, fr_vec3 prior, double normal_blend,
                      fri_patch *pt)
{
    memset(pt, 0, sizeof *pt);
    /* Reference point o: the vertex mean keeps the coordinates below small. */
    fr_vec3 o = fr_v3_zero();
    for (int i = 0; i < poly->nverts; i++) o = fr_v3_add(o, poly->verts[i]);
    o = fr_v3_scale(o, 1.0 / poly->nverts);
    if (!fr_v3_isfinite(o)) return FR_ERR_NUMERIC;

    /* ---- normal: Σ area vectors on A − Σ on B, blended with a prior when that is weak */
    fr_vec3 sum_a = fr_v3_zero(), sum_b = fr_v3_zero();
    double area_abs = 0.0, abs_a = 0.0, abs_b = 0.0;
    fr_vec3 fav[CONTACT_FBUF]; /* the first faces' area vectors, to skip faces parallel to n */
    double favn[CONTACT_FBUF]; /* and their norms */
    fr_vec3 big_a = fr_v3_zero(), big_b = fr_v3_zero(); /* each owner's largest face */
    double bign_a = 0.0, bign_b = 0.0;
    for (int f = 0; f < poly->nfaces; f++) {
        const int *ix = poly->vidx + poly->face_start[f];
        fr_vec3 p0 = poly->verts[ix[0]], av = fr_v3_zero(); /* 2 × area vector */
        for (int k = 1; k + 1 < poly->face_count[f]; k++)
            av = fr_v3_add(av, fr_v3_cross(fr_v3_sub(poly->verts[ix[k]], p0),
                                           fr_v3_sub(poly->verts[ix[k + 1]], p0)));
        double avn = fr_v3_norm(av);
        area_abs += avn;
        if (f < CONTACT_FBUF) fav[f] = av, favn[f] = avn;
        if (poly->face_owner[f] == FR_FACE_A) {
            sum_a = fr_v3_add(sum_a, av);
            abs_a += avn;
            if (avn > bign_a) bign_a = avn, big_a = av;
        } else {
            sum_b = fr_v3_add(sum_b, av);
            abs_b += avn;
            if (avn > bign_b) bign_b = avn, big_b = av;
        }
    }
    fr_vec3 nraw = fr_v3_sub(sum_a, sum_b);
    /* A slab between two parallel faces (a block resting on a block, offset sideways): its thin
     * side faces would tilt Σ_A − Σ_B by ~depth/width; the faces' own normal is the contact's. */
    const bool faces =
        bign_a >= 0.5 * abs_a && bign_b >= 0.5 * abs_b && bign_a > 0.0 && bign_b > 0.0;
    const double tilt = faces ? fr_v3_norm(fr_v3_add(fr_v3_scale(big_a, 1.0 / bign_a),
                                                     fr_v3_scale(big_b, 1.0 / bign_b)))
                              : INFINITY;
    /* (a slab for fr_contact_model_advance: the faces within a milliradian of parallel, so that
     * its outline is theirs whatever the depth) */
    pt->slab = tilt < 1e-3;
    /* Both bodies' rims in it (a block on a block offset sideways, each body's side faces cutting
     * the slab along one edge): the rims' area vectors are not each other's opposite, and they
     * tilted the normal by depth/width towards the overhang, 1e-5 rad in a column of 1 m blocks;
     * without friction the tilt pushed a jittered block out at a growing speed, 0.2 m in 10 s,
     * with energy from nowhere (a new user's trial). A body whose only face here is its big one
     * (the ground under a tilted block) gives the exact normal as it is. */
    const bool rims = pt->slab && bign_a < (1.0 - 1e-9) * abs_a && bign_b < (1.0 - 1e-9) * abs_b;
    if (tilt < 1e-9 || rims)
        nraw = fr_v3_scale(
            fr_v3_sub(fr_v3_scale(big_a, 1.0 / bign_a), fr_v3_scale(big_b, 1.0 / bign_b)),
            0.5 * fr_v3_norm(nraw));
    double q = area_abs > 0.0 ? fr_v3_norm(nraw) / area_abs : 0.0;
    double wprior = (normal_blend > 0.0 && q < normal_blend) ? 1.0 - q / normal_blend : 0.0;
    fr_vec3 n = fr_v3_add(nraw, fr_v3_scale(prior, wprior * area_abs));
    if (!(fr_v3_norm(n) > 0.0)) n = fr_v3_norm(prior) > 0.0 ? prior : fr_v3(0.0, 0.0, -1.0);
    n = fr_v3_normalize(n);
    if (!fr_v3_isfinite(n)) return FR_ERR_NUMERIC;
    fr_vec3 t1 = fr_v3_perp(n), t2 = fr_v3_cross(n, t1);
    pt->o = o, pt->n = n, pt->t1 = t1, pt->t2 = t2;

    /* ---- vertices in the contact frame */
    vcache vc;
    vc.poly = poly, vc.o = o, vc.t1 = t1, vc.t2 = t2, vc.n = n;
    vc.nbuf = 0;
    double hmin = INFINITY, hmax = -INFINITY;
    for (int i = 0; i < poly->nverts; i++) {
        cpt pv = to_frame(poly->verts[i], o, t1, t2, n);
        if (i < CONTACT_VBUF) vc.v[vc.nbuf++] = pv;
        if (pv.h < hmin) hmin = pv.h; /* fmin/fmax without the library calls */
        if (pv.h > hmax) hmax = pv.h;
    }

    /* ---- exact triangle integrals */
    tri_sums s;
    memset(&s, 0, sizeof s);
    for (int f = 0; f < poly->nfaces; f++) { /* fan triangulation of each face */
        const int *ix = poly->vidx + poly->face_start[f];
        cpt q0 = vget(&vc, ix[0]), q1 = vget(&vc, ix[1]);
        for (int k = 2; k < poly->face_count[f]; k++) {
            cpt q2 = vget(&vc, ix[k]);
            tri_accumulate(&s, q0, q1, q2);
            q1 = q2;
        }
    }
    const double V = s.v / 3.0; /* ∫ t dA = volume, m³ */
    pt->V = V;
    pt->Qx = s.qx / 12.0, pt->Qy = s.qy / 12.0; /* ∫ t·x dA, m⁴ */
    const double Hv = s.hh / 24.0;              /* ∫_V h dV, m⁴ */
    const double Jt = s.j / 60.0;               /* ∫ t·|x|² dA, m⁵ */
    pt->A = s.a;                                /* contact area, m² */
    pt->Ax = s.ax / 3.0, pt->Ay = s.ay / 3.0;
    pt->Axx = s.axx / 12.0, pt->Axy = s.axy / 12.0, pt->Ayy = s.ayy / 12.0;
    pt->extent = hmax - hmin;
    pt->c3 = o;
    if (!(V > 0.0) || !(pt->A > 0.0))
        return isfinite(V) && isfinite(pt->A) ? FR_OK : FR_ERR_NUMERIC;
    if (!isfinite(V) || !isfinite(pt->A)) return FR_ERR_NUMERIC;
    pt->has_volume = true;
    pt->mean = fmin(V / pt->A, pt->extent);

    /* centre of pressure of a uniform-modulus spring = volume centroid */
    const double cx = pt->Qx / V, cy = pt->Qy / V, ch = Hv / V;
    pt->cx = cx, pt->cy = cy;
    pt->c3 = fr_v3_add(
        o, fr_v3_add(fr_v3_add(fr_v3_scale(t1, cx), fr_v3_scale(t2, cy)), fr_v3_scale(n, ch)));

    /* spin radius r̄ = ∫ t·|x − c| dA / V and ρ² = ∫ t·|x − c|² dA / V */
    double R = 0.0;
    for (int f = 0; f < poly->nfaces; f++) {
        /* a face parallel to n projects to a segment: nothing to integrate */
        if (f < CONTACT_FBUF && fabs(fr_v3_dot(fav[f], n)) <= 1e-12 * favn[f]) continue;
        R += face_radial(&vc, f, cx, cy);
    }
    pt->rbar = fmax(0.0, R / V);
    pt->rho2 = fmax(0.0, (Jt - 2.0 * (cx * pt->Qx + cy * pt->Qy)) / V + cx * cx + cy * cy);
    return FR_OK;
}

/* ∫ t² dA (fri_patch_thickness2): the faces' projections and their heights h = a + bx·x + by·y
 * over them, exit faces and entry faces apart; polygons counter-clockwise in the frame. */
#define T2_FACES 64
#define T2_VERTS 256
#define T2_CLIP  256
typedef struct t2_face {
    int start, count;          /* into the shared vertex buffer */
    double a, bx, by;          /* the face's height over the plane */
    double xlo, xhi, ylo, yhi; /* its projection's bounding box */
} t2_face;

/* Clips the convex polygon (x, y)[0..n) to the left of the edge p → q; returns the new count. */
static int clip_left(const double *x, const double *y, int n, double px, double py, double qx,
                     double qy, double *ox, double *oy)
{
    const double ex = qx - px, ey = qy - py;
    int m = 0;
    for (int i = 0; i < n; i++) {
        const int j = i + 1 < n ? i + 1 : 0;
        const double si = ex * (y[i] - py) - ey * (x[i] - px);
        const double sj = ex * (y[j] - py) - ey * (x[j] - px);
        if (si >= 0.0) ox[m] = x[i], oy[m] = y[i], m++;
        if ((si >= 0.0) != (sj >= 0.0)) {
            const double s = si / (si - sj);
            ox[m] = x[i] + s * (x[j] - x[i]), oy[m] = y[i] + s * (y[j] - y[i]), m++;
        }
    }
    return m;
}

double fri_patch_thickness2(const fr_polyhedron_out *poly, const fri_patch *pt)
{
    if (poly->nfaces <= 0) return 0.0;
    double vx[T2_VERTS], vy[T2_VERTS];
    t2_face fe[T2_FACES], fn[T2_FACES];
    int ne = 0, nn = 0, nv = 0;
    for (int f = 0; f < poly->nfaces; f++) {
        const int *ix = poly->vidx + poly->face_start[f];
        const int m = poly->face_count[f];
        if (m < 3) continue;
        if (nv + m > T2_VERTS) return NAN;
        cpt p[T2_VERTS];
        double S2 = 0.0, lmax = 0.0, best = 0.0;
        int bi = 1;
        for (int k = 0; k < m; k++)
            p[k] = to_frame(poly->verts[ix[k]], pt->o, pt->t1, pt->t2, pt->n);
        for (int k = 0; k < m; k++) {
            const cpt a = p[k], b = p[k + 1 < m ? k + 1 : 0];
            lmax = fmax(lmax, (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y));
            if (k >= 1 && k + 1 < m) {
                const double s2 = (a.x - p[0].x) * (b.y - p[0].y) - (b.x - p[0].x) * (a.y - p[0].y);
                S2 += s2;
                if (fabs(s2) > best) best = fabs(s2), bi = k;
            }
        }
        /* a face seen edge-on (a needle in projection) covers no area */
        if (!(fabs(S2) > 1e-6 * lmax)) continue;
        const bool exit = S2 > 0.0;
        if ((exit ? ne : nn) >= T2_FACES) return NAN;
        t2_face *t = exit ? &fe[ne++] : &fn[nn++];
        /* the face's plane from its best-conditioned fan triangle */
        const cpt p0 = p[0], p1 = p[bi], p2 = p[bi + 1];
        const double D = (p1.x - p0.x) * (p2.y - p0.y) - (p2.x - p0.x) * (p1.y - p0.y);
        t->bx = ((p1.h - p0.h) * (p2.y - p0.y) - (p2.h - p0.h) * (p1.y - p0.y)) / D;
        t->by = ((p2.h - p0.h) * (p1.x - p0.x) - (p1.h - p0.h) * (p2.x - p0.x)) / D;
        t->a = p0.h - t->bx * p0.x - t->by * p0.y;
        t->start = nv, t->count = m;
        t->xlo = t->ylo = INFINITY, t->xhi = t->yhi = -INFINITY;
        for (int k = 0; k < m; k++) {
            const cpt q = p[exit ? k : m - 1 - k]; /* counter-clockwise */
            vx[nv] = q.x, vy[nv] = q.y, nv++;
            t->xlo = fmin(t->xlo, q.x), t->xhi = fmax(t->xhi, q.x);
            t->ylo = fmin(t->ylo, q.y), t->yhi = fmax(t->yhi, q.y);
        }
    }
    /* over each exit face's overlap with each entry face t = h_exit − h_entry is linear */
    double sum = 0.0;
    double bx[2][T2_CLIP], by[2][T2_CLIP];
    for (int i = 0; i < ne; i++)
        for (int j = 0; j < nn; j++) {
            const t2_face *e = &fe[i], *g = &fn[j];
            if (e->xlo >= g->xhi || g->xlo >= e->xhi || e->ylo >= g->yhi || g->ylo >= e->yhi)
                continue;
            int n = e->count, cur = 0;
            memcpy(bx[0], vx + e->start, n * sizeof(double));
            memcpy(by[0], vy + e->start, n * sizeof(double));
            for (int k = 0; k < g->count && n >= 3; k++) {
                const int a = g->start + k, b = g->start + (k + 1 < g->count ? k + 1 : 0);
                if (n + 1 > T2_CLIP) return NAN;
                n = clip_left(bx[cur], by[cur], n, vx[a], vy[a], vx[b], vy[b], bx[1 - cur],
                              by[1 - cur]);
                cur = 1 - cur;
            }
            if (n < 3) continue;
            const double da = e->a - g->a, dbx = e->bx - g->bx, dby = e->by - g->by;
            const double *X = bx[cur], *Y = by[cur];
            const double u0 = da + dbx * X[0] + dby * Y[0];
            double u1 = da + dbx * X[1] + dby * Y[1];
            for (int k = 2; k < n; k++) {
                const double u2 = da + dbx * X[k] + dby * Y[k];
                const double S =
                    0.5 * ((X[k - 1] - X[0]) * (Y[k] - Y[0]) - (X[k] - X[0]) * (Y[k - 1] - Y[0]));
                sum += S / 6.0 * (u0 * u0 + u1 * u1 + u2 * u2 + u0 * u1 + u1 * u2 + u0 * u2);
                u1 = u2;
            }
        }
    return sum;
}
