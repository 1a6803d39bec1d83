/*
 * The contact model of an implicit step (include/fureru/contact.h, docs/contact.md §5): built
 * once per step from the geometry at its start, it answers the world's solve with the mean wrench
 * over the step and its tangent for any relative motion, then commits the friction bond.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

#include "contact_internal.h"
#include "fureru/base.h"

double fr_contact_pressure(double k, double ds, double t, double *slope)
{
    return fri_law_p(k, ds, FRI_STIFFEN_XMAX, t, slope);
}

double fr_contact_pressure_energy(double k, double ds, double t)
{
    return fri_law_e(k, ds, FRI_STIFFEN_XMAX, t);
}

static bool body_ok(const fr_contact_body *b)
{
    return fr_v3_isfinite(b->pose.p) && fr_q_isfinite(b->pose.q) && fr_v3_isfinite(b->v) &&
           fr_v3_isfinite(b->w);
}

/* The convex polyhedron's chord along the line through x with direction n (unit), m; 0 when the
 * line misses it. */
static double chord_through(const fr_polyhedron_out *poly, fr_vec3 x, fr_vec3 n)
{
    double lo = -INFINITY, hi = INFINITY;
    for (int f = 0; f < poly->nfaces; f++) {
        const fr_vec3 nf = poly->face_normal[f];
        const double c = fr_v3_dot(nf, n);
        const double d = fr_v3_dot(nf, fr_v3_sub(poly->verts[poly->vidx[poly->face_start[f]]], x));
        if (c > 1e-12)
            hi = fmin(hi, d / c);
        else if (c < -1e-12)
            lo = fmax(lo, d / c);
        else if (d < 0.0)
            return 0.0; /* parallel to a face, outside it */
    }
    return hi > lo ? hi - lo : 0.0;
}

/*
 * Points 4..7 on the band D = band \ patch (both integrated in the patch's frame): the band's
 * thickness is the patch's plus g on the patch and g + (signed depth) on D, so D's integrals are
 * the band's less the patch's (its thickness raised by g). The points sit on D's principal axes as
 * the patch's do; each takes as its (negative) starting depth the band's thickness through it
 * less g, or where its line misses the band the signed depth fitted linear over D.
 */
static void band_points(const fr_polyhedron_out *band, double g, double gap, const fri_patch *pt,
                        fr_contact_model *m)
{
    fri_moments mo;
    fri_patch_moments(band, pt, &mo);
    const double A = mo.A - pt->A;
    if (!(A > 1e-6 * mo.A) || !isfinite(A)) return;
    const double sx = mo.Ax - pt->Ax, sy = mo.Ay - pt->Ay;
    const double dg = g - gap; /* how much thicker the band is than the patch on the patch */
    const double V = mo.V - (pt->V + dg * pt->A);
    const double qx = mo.Qx - (pt->Qx + dg * pt->Ax), qy = mo.Qy - (pt->Qy + dg * pt->Ay);
    const double xd = sx / A, yd = sy / A; /* D's centroid, frame coordinates */
    const double ixx = fmax(0.0, mo.Axx - pt->Axx - sx * xd);
    const double iyy = fmax(0.0, mo.Ayy - pt->Ayy - sy * yd);
    const double ixy = mo.Axy - pt->Axy - sx * yd;
    const double tx = qx - xd * V, ty = qy - yd * V; /* ∫ t·ξ dA about D's centroid */
    const double mean = V / A - g;
    double tr = 0.5 * (ixx + iyy), df2 = 0.5 * (ixx - iyy);
    double rad = sqrt(df2 * df2 + ixy * ixy);
    const double li[2] = {tr + rad, fmax(0.0, tr - rad)};
    double th = 0.5 * atan2(2.0 * ixy, ixx - iyy);
    const double e[2][2] = {{cos(th), sin(th)}, {-sin(th), cos(th)}};
    if (!isfinite(mean) || !isfinite(th)) return;
    for (int q = 0; q < 4; q++) {
        int i = q / 2, j = FR_CONTACT_PATCH_PTS + q;
        double sg = (q % 2) ? -1.0 : 1.0, r = sqrt(2.0 * li[i] / A);
        double beta = li[i] > 1e-12 * li[0] ? (e[i][0] * tx + e[i][1] * ty) / li[i] : 0.0;
        m->px[j] = xd - pt->cx + sg * r * e[i][0];
        m->py[j] = yd - pt->cy + sg * r * e[i][1];
        /* The band's thickness is linear only across one face: where two faces meet it (an edge
         * or a corner arriving) it has a kink the fit flattens, so the points near the edge read
         * the band's mean gap instead of their own. The point's own depth is the band's
         * thickness through it along n, less g (where the line meets the band). */
        double dj = mean + sg * r * beta;
        const fr_vec3 at = fr_v3_add(pt->o, fr_v3_add(fr_v3_scale(pt->t1, m->px[j] + pt->cx),
                                                      fr_v3_scale(pt->t2, m->py[j] + pt->cy)));
        const double thk = chord_through(band, at, pt->n);
        if (thk > 0.0) dj = thk - g;
        /* D lies outside the patch: a fit that rises above it there would count the patch's
         * own pressure twice */
        m->pt0[j] = fmin(fmin(0.0, m->depth0), dj);
        m->pw[j] = 0.25 * A;
    }
    m->npts = FR_CONTACT_PATCH_PTS + 4;
}

#define ARC_MAX_TURN 0.1 /* rad per step: beyond, a body's drift is not predicted (below) */

/* How far a point at r from the centre of mass strays from the tangent θ × r when the body
 * turns by θ over the step: R(θ)·r − r − θ × r (the arc's chord against its tangent; second
 * order, θ × (θ × r)/2 for small θ). */
static fr_vec3 arc_drift(fr_vec3 th, fr_vec3 r)
{
    const double a2 = fr_v3_norm2(th);
    /* below 1e-10 rad a step the drift is under 1e-20 of the lever (a body at rest) */
    if (a2 < 1e-20) return fr_v3_zero();
    const double a = sqrt(a2);
    /* R·r = r + sin a·(k × r) + (1 − cos a)·k × (k × r), k = θ/a */
    const double c1 = a < 1e-4 ? 0.5 - a2 / 24.0 : (1.0 - cos(a)) / a2;
    const double c2 = a < 1e-4 ? -a2 / 6.0 : (sin(a) - a) / a;
    const fr_vec3 tr = fr_v3_cross(th, r);
    return fr_v3_add(fr_v3_scale(fr_v3_cross(th, tr), c1), fr_v3_scale(tr, c2));
}

/*
 * What follows from the points' depths, the parameters and the bond: the start's pressures, the
 * damping ramp, the bond's stiffening, and the bond read at the poses (then written back there).
 * Shared by a model built from the geometry and one advanced from the last step's.
 */
static void model_finish(const fr_contact_params *p, const fr_contact_body *a,
                         const fr_contact_body *b, bool had, fr_contact_state *st,
                         fr_contact_model *m)
{
    const double k = m->k;
    double slope_sum = 0.0;
    m->n0 = 0.0;
    for (int q = 0; q < m->npts; q++) {
        double sl = 0.0;
        m->pn0[q] = m->pw[q] * fri_law_p(k, m->ds, m->xmax, m->pt0[q], &sl);
        m->n0 += m->pn0[q];
        if (m->pn0[q] > 0.0) slope_sum += m->pn0[q] * sl;
        /* the law linearised at the start's forces, which a solve takes as its first iterates:
         * at the depth that carries them, the start's (fr_contact_model_linearise's answer but
         * for the rounding of the law's inverse) */
        m->lin_lam[q] = m->pn0[q];
        m->lin_t[q] = m->pn0[q] > 0.0 ? m->pt0[q] : 0.0;
        m->lin_K[q] = m->pw[q] * (m->pn0[q] > 0.0 ? sl : k);
    }
    m->lin_valid = 1;
    double ramp = 0.0;
    if (m->depth0 > 0.0)
        ramp = p->damping_ramp > 0.0 ? fmin(1.0, m->depth0 / p->damping_ramp) : 1.0;
    m->c = m->c_area * ramp;
    m->max_force = p->max_force;
    /* The bond stiffens with the normal law, so a loaded contact sticks as firmly as it presses:
     * by the law's slope over k, averaged over the points by their forces. (Counted alike, a
     * band point of 1e-5 of the area crossing depth 0 by 1e-18 m swung the bond by 19 %, and a
     * box held on a turntable, whose bond keeps its displacement when it softens, slipped
     * 8e-8 m outwards at each swing.) */
    double stiffen = m->n0 > 0.0 && k > 0.0 ? fmax(1.0, slope_sum / (m->n0 * k)) : 1.0;
    m->kf = m->kf_area * stiffen;
    /* No dashpot beside the bond's spring: one could hold the spring stretched past μ·N (the
     * dashpot balancing it), and the spring would give that energy back when the dashpot stops.
     * The implicit step damps the bond by itself (the stiff spring's numerical damping). */
    m->df = 0.0;

    const fr_vec3 n = m->normal, t1 = m->t1;
    fr_vec3 u, eref;
    double phi;
    fr_vec3 dab;
    fri_bond_read(st, a, b, n, m->point, t1, &u, &phi, &eref, &dab);
    /* J: the bond as it was described at the last step (A's anchor less B's on its normal, the
     * twist at its r̄, its stiffness), stretched by the bodies' motion since */
    const fr_vec3 u0 = fr_v3_mad(dab, -fr_v3_dot(dab, st->normal), st->normal);
    const double r0 = st->bond_rbar * phi;
    const double moved = 0.5 * st->bond_stiffness * (fr_v3_norm2(u0) + r0 * r0);
    if (!(m->rbar > 0.0)) phi = 0.0;
    /* A stiffer bond keeps the force it held (its stored energy can only fall); a softer one
     * keeps its displacement (likewise). */
    if (had && st->bond_stiffness > 0.0 && m->kf > st->bond_stiffness) {
        double s = st->bond_stiffness / m->kf;
        u = fr_v3_scale(u, s);
        phi *= s;
    }
    /* Nor may the bond described anew (at a new contact point, where the twist's lever moves
     * it; on a new normal; with a new r̄) hold more than the last step left in it, or than the
     * bodies' motion since stretched it as it was described (at its anchor, on the old normal,
     * with the old r̄ and stiffness): a tumbling block's bond rose 20-fold at a rebuild, 5e-3 of
     * m·g·h from nowhere. Held to it, the rest is a slip. (Capped at the end's energy alone, a
     * box riding a stick-slipping sled lost its bond to the sled's unpredicted motion at each
     * slip and crept 20 times further.) */
    if (had) {
        const double rphi = m->rbar > 0.0 ? m->rbar * phi : 0.0;
        const double e = 0.5 * m->kf * (fr_v3_norm2(u) + rphi * rphi);
        const double cap = fmax(st->bond_energy, moved);
        if (e > cap) {
            const double s = e > 0.0 ? sqrt(fmax(cap, 0.0) / e) : 0.0;
            u = fr_v3_scale(u, s);
            phi *= s;
        }
    }
    /* The solve moves the bond by h·ẏ, the relative velocity at c; the poses turn along arcs.
     * A body turning about a far axis (a box held on a turntable, 0.5 m out) carries the point
     * (h·ω)²·r/2 off that tangent each step: the bond sees it at the next step's start, and a
     * stiff bond turns it into a force far beyond μ·N. Predicted here, the stuck solution
     * follows the arc. Only while both turn slowly over the step: beyond ARC_MAX_TURN the drift
     * is no longer a small correction (a tumbling chip turns radians in a step). */
    const fr_vec3 c = m->point;
    fr_vec3 uq = u;
    const double amt = ARC_MAX_TURN;
    if (fr_v3_norm2(a->turn) <= amt * amt && fr_v3_norm2(b->turn) <= amt * amt)
        uq = fr_v3_add(uq, fr_v3_sub(arc_drift(a->turn, fr_v3_sub(c, a->pose.p)),
                                     arc_drift(b->turn, fr_v3_sub(c, b->pose.p))));
    /* (a rolling shape's contact is not carried along that arc about its centre: the bond read
     * takes it out, fri_bond_read) */
    if (fr_v3_norm2(a->roll_turn) > 0.0 && fr_v3_norm2(a->turn) <= amt * amt)
        uq = fr_v3_sub(uq, arc_drift(a->turn, fr_v3_sub(c, a->roll_o)));
    if (fr_v3_norm2(b->roll_turn) > 0.0 && fr_v3_norm2(b->turn) <= amt * amt)
        uq = fr_v3_add(uq, arc_drift(b->turn, fr_v3_sub(c, b->roll_o)));
    m->q0[0] = fr_v3_dot(uq, t1);
    m->q0[1] = fr_v3_dot(uq, m->t2);
    m->q0[2] = m->rbar * phi;
    if (had) {
        m->sliding = st->sliding;
    } else {
        const fr_vec3 ra = fr_v3_sub(c, a->pose.p), rb = fr_v3_sub(c, b->pose.p);
        const fr_svec tw =
            fr_sv(fr_v3_sub(a->w, b->w), fr_v3_sub(fr_v3_add(a->v, fr_v3_cross(a->w, ra)),
                                                   fr_v3_add(b->v, fr_v3_cross(b->w, rb))));
        double y[6];
        fr_contact_model_local(m, tw, y);
        m->sliding = fr_contact_model_starts_sliding(m, y);
    }
    fri_bond_write(st, a, b, n, m->point, u, phi, eref);
    st->active = 1;
    st->sliding = m->sliding;
    st->normal = n;
    st->mean_depth = m->depth0;
    st->max_depth = m->max_depth0;
    st->bond_stiffness = m->kf;
    st->bond_rbar = m->rbar > 0.0 ? m->rbar : 0.0;
    st->bond_energy =
        0.5 * m->kf * (m->q0[0] * m->q0[0] + m->q0[1] * m->q0[1] + m->q0[2] * m->q0[2]);
}

/* Where the patch's outer points sit, as s²/(I/A) along an axis: 3 would be a rectangle's
 * edge; a tilted patch's go to 2 (the ±sqrt(2·I/A) of an equal-weight rule) */
#define QUAD_EDGE 2.6
#define QUAD_TILT 2.0
/* the anisotropy (I₁ − I₂)/(I₁ + I₂) below which a patch takes a reference direction for its
 * axes, and above which its principal axes (fr_contact_model_build) */
#define QUAD_ISO_LO 1e-6
#define QUAD_ISO_HI 1e-4
/* the tilt (the thickness' change over the half-width, against the mean) from which a patch's
 * first axis turns down the thickness' slope, and at which it lies along it */
#define GRAD_LO 1e-3
#define GRAD_HI 1e-2
/* how far a patch's first quadrature axis, kept from build to build, may lie from the rule's before
 * it is chosen again, rad (0.05–0.2 measured alike) */
#define QUAD_HOLD 0.1
/* m/s: the slip from which a sliding pair's first quadrature axis lies along it (below, blended
 * towards the rule's at rest) */
#define SLIP_AXIS_SPEED 1e-3

/* The pressure quadrature on the patch (5 points; docs/contact.md §5) from its two conjugate axes
 * (qaxis: e1, e2 along t1, t2), the second moments each line carries (qli), reach along them
 * (qreach), the thickness at the area centroid (qbase) and its slope (qbeta, along t1, t2). Along
 * each axis, points at s+ and −s− from the area centroid carry li/(s±·(s+ + s−)) (the centroid
 * and the second moments kept, so it is exact for the linear law) and the centroid the rest of
 * the area.
 * - On a level patch s = sqrt(2.6·I/A), 0.93 of a rectangle's half-width: a block placed touching
 *   can hold its centre of pressure near the edge it would tip about (an equal-weight rule stops
 *   at 0.82 of it: a block placed beyond 0.82 of its tipping angle rocked in its first step, the
 *   settle gave up on it, and a 5 mm cube tipped at 0.977 of w/h at 5 ms).
 * - As the thickness changes across the patch (f: over the rectangle's half-width, against the
 *   mean; 1 where a lifting rectangle's field reaches zero at its edge) s goes to sqrt(2·I/A) with
 *   f². Kept near the edge on a tilted patch, the outer points turn with the body and move the
 *   friction point, fixed over the step, sideways by more than the step's yaw can follow: a 1 cm
 *   cube on a 33° slope at 5 ms, μ = tan θ + 0.005, yawed in a period-2 oscillation growing 8-fold
 *   a step and slid 2.3 mm in 10 s (at 3, at the edge, a block sliding down a slope also yawed
 *   and its acceleration was off by 3.6e-8).
 *   On a lifted rectangle the thin side's point then keeps 0.18 of the mean depth, off the law's
 *   kink (a point on it, at the outline, flipped between pressing and not, the advance was refused
 *   at every step, and a cube turned on a 35° slope crept 5 µm in 9 s). (Clamping the thin side
 *   further, to 0.82 of the way to the field's zero, kept a lifted corner's triangle off the kink
 *   too, but moved its point with the depth field at every build, and a 1 cm cube turned 0.4 rad
 *   on a 35° slope at μ = tan θ crept 0.2 nm/s.)
 * - Where the area thins out towards the outline (along a square's diagonal, a corner's
 *   direction, whose second moment is a rectangle's), sqrt(c/3) of the reach along the axis if
 *   that is further: on a rectangle's axes the same point, on the diagonal 0.93 of the corner's
 *   distance where sqrt(2.6·I/A) reached 0.66 of it (a 5 cm cube turned 45° on a slope, a
 *   corner downhill, tipped at 0.967 of its static limit at 5 ms, now 0.982).
 * - Never beyond the patch's reach along the axis (a triangle's side: a point outside the outline
 *   would hold a block beyond its edge).
 * A patch whose axes' shares would exceed its area keeps ±sqrt(2·I/A), A/4 each. */
static void place_points(fr_contact_model *m)
{
    const double A = m->area, base = m->qbase;
    const double e[2][2] = {{m->qaxis[0], m->qaxis[1]}, {m->qaxis[2], m->qaxis[3]}};
    const double gb = hypot(m->qbeta[0], m->qbeta[1]);
    double sq[4], wq[4], wsum = 0.0;
    for (int q = 0; q < 4; q++) {
        const double li_a = m->qli[q / 2] / A;
        /* the thickness' change over the rectangle's half-width, over the mean: 0 on a level
         * patch, 1 where a lifting rectangle's field reaches zero at its edge */
        const double f = base > 0.0 ? fmin(1.0, sqrt(3.0 * li_a) * gb / base) : 0.0;
        const double c = QUAD_EDGE - (QUAD_EDGE - QUAD_TILT) * f * f;
        const double sv = sqrt(c * li_a), sr = sqrt(c / 3.0) * m->qreach[q];
        /* (the reach's point only where the law there is near its exponential part, up to the
         * linear turn xmax·δ_s and fading out by 5 times that: a landing found deep on a corner,
         * 350·δ_s, put its point at the deep apex, which held more of the energy the last step
         * had not predicted; fading out by twice it, small corners tipped 1 % earlier) */
        const double sg = (q % 2) ? -1.0 : 1.0, T = m->xmax * m->ds;
        const double tq = base + sg * sr * (m->qbeta[0] * e[q / 2][0] + m->qbeta[1] * e[q / 2][1]);
        const double wr = T > 0.0 ? fmin(1.0, fmax(0.0, (5.0 - tq / T) / 4.0)) : 0.0;
        sq[q] = fmin(sr > sv ? sv + wr * (sr - sv) : sv, m->qreach[q]);
    }
    for (int q = 0; q < 4; q++) {
        const double sp = sq[q], sm = sq[q ^ 1];
        wq[q] = sp > 0.0 && sm > 0.0 ? m->qli[q / 2] / (sp * (sp + sm)) : 0.0;
        wsum += wq[q];
    }
    const bool simpson = wsum <= A * (1.0 + 1e-12);
    for (int q = 0; q < 4; q++) {
        const int i = q / 2;
        const double sg = (q % 2) ? -1.0 : 1.0, r = simpson ? sq[q] : sqrt(2.0 * m->qli[i] / A);
        m->px[q] = m->ax + sg * r * e[i][0];
        m->py[q] = m->ay + sg * r * e[i][1];
        m->pt0[q] = base + sg * r * (m->qbeta[0] * e[i][0] + m->qbeta[1] * e[i][1]);
        m->pw[q] = simpson ? wq[q] : 0.25 * A;
    }
    m->px[4] = m->ax, m->py[4] = m->ay, m->pt0[4] = base;
    m->pw[4] = simpson ? fmax(0.0, A - wsum) : 0.0;
    /* A level patch takes its four outer points at the corners of the rule's rectangle instead
     * (the product of the two axes' 3-point rules without its points on the axes: the same area,
     * centroid and second moments). The points on the axes span a diamond, half of a
     * rectangle's area: a load towards a corner lies beyond it, and the body pivots about the
     * diamond's edge, its corner going in unseen by any point. A 10 g box under a 1 kg box
     * landing on it near a corner turned at 67 rad/s in the landing's step, its corner 3.6 mm
     * into the ground while the points said it had lifted; every next step found a landing
     * late (100–250 J on the stiffened law where the last step predicted 0.002–0.04 J), the
     * light box rattled at ±60 rad/s between the ground and the heavy one, and a step rose by
     * 1.02 J, 0.13 of m·g·h (docs/contact.md §8, "A light body under a far heavier one").
     * Only where the rule's rectangle lies within the patch (its reach towards the corners,
     * qcreach, at the rule's 0.93 of a rectangle's corner): a disc, or a square whose axes are
     * not along its sides, keeps the points on the axes.
     * Only level (the thickness' change over the half-width below GRAD_LO of the mean): on a
     * lifting patch a corner point sits near the field's zero, the law's kink. */
    const double li_max = fmax(m->qli[0], m->qli[1]);
    const double flev = base > 0.0 ? sqrt(3.0 * li_max / A) * gb / base : INFINITY;
    const double T0 = wq[0] + wq[1], T1 = wq[2] + wq[3];
    if (!simpson || !(flev < GRAD_LO) || !(T0 > 0.0) || !(T1 > 0.0)) return;
    for (int c = 0; c < 4; c++)
        if (!(m->qcreach[c] > 0.0)) return;
    /* both axes' totals made one, T: the axis with the smaller total moves its points in */
    const double T = fmax(T0, T1);
    if (!(T <= A)) return;
    const double k0 = sqrt(T0 / T), k1 = sqrt(T1 / T);
    double s[4];
    for (int q = 0; q < 4; q++) s[q] = sq[q] * (q < 2 ? k0 : k1);
    /* The corners only where they fit, the rule's rectangle within the patch (brought in by a
     * common scale g, each axis' product s+·s− would fall by g² and its total rise by 1/g²:
     * corners brought in hold less along the axes than the axis points, and a slab sliding at
     * μ 1.5 along its diagonal, its axes along the slip, pitched onto them and stopped 7.7 %
     * short). (Squared lengths: hypot was a quarter of this rule's cost in a resting column.) */
    const double edge2 = QUAD_EDGE / 3.0, keep = (1.0 - 1e-9) * (1.0 - 1e-9);
    for (int c = 0; c < 4; c++) {
        const double r1 = (c < 2 ? 1.0 : -1.0) * s[c < 2 ? 0 : 1];
        const double r2 = (c % 2 ? -1.0 : 1.0) * s[c % 2 ? 3 : 2];
        const double dx = r1 * e[0][0] + r2 * e[1][0], dy = r1 * e[0][1] + r2 * e[1][1];
        const double lim2 = edge2 * m->qcreach[c] * m->qcreach[c];
        if (lim2 < (dx * dx + dy * dy) * keep) return;
    }
    const double p1[2] = {s[1] / (s[0] + s[1]), s[0] / (s[0] + s[1])};
    const double p2[2] = {s[3] / (s[2] + s[3]), s[2] / (s[2] + s[3])};
    for (int c = 0; c < 4; c++) {
        const int a = c / 2, b = c % 2;
        const double r1 = (a ? -1.0 : 1.0) * s[a], r2 = (b ? -1.0 : 1.0) * s[2 + b];
        m->px[c] = m->ax + r1 * e[0][0] + r2 * e[1][0];
        m->py[c] = m->ay + r1 * e[0][1] + r2 * e[1][1];
        m->pt0[c] = base + r1 * (m->qbeta[0] * e[0][0] + m->qbeta[1] * e[0][1]) +
                    r2 * (m->qbeta[0] * e[1][0] + m->qbeta[1] * e[1][1]);
        m->pw[c] = T * p1[a] * p2[b];
    }
    m->pw[4] = A - T;
}

/*
 * A pair with a curved shape that rolls (fr_contact_body.roll_kind; docs/contact.md §5,
 * "Rolling") takes its point c under the shape's centre (a sphere) or into the plane of its axis
 * and n (a cylinder or capsule), the points kept where they are. Its response takes the turns the
 * shape is invariant to out of the points' moments (fr_contact_model.roll_s), so the pressure
 * acts along n through c, and a smooth shape's contact lies there; the centre of pressure is a
 * point of the polytope's face, which a roll carries behind the centre, and the pressure through
 * it rolled the body on: a cylinder lying at rest began to roll, e-folding at 21 /s, and a ball
 * placed on a face kept moving at up to 3 mm/s (a new user's trial). Done before the bond is
 * read and written at c.
 */
static void roll_point(fr_contact_model *m, const fr_contact_body *a, const fr_contact_body *b)
{
    const fr_contact_body *s = NULL;
    for (int kind = 1; kind <= 2 && !s; kind++)
        s = b->roll_kind == kind ? b : a->roll_kind == kind ? a : NULL;
    if (!s) return;
    const fr_vec3 n = m->normal, d = fr_v3_sub(m->point, s->roll_o);
    fr_vec3 lat;
    if (s->roll_kind == 1) {
        lat = fr_v3_mad(d, -fr_v3_dot(d, n), n);
    } else {
        /* u = n × axis: |u|² is the share of the axis' turn taken out, as in roll_s */
        const fr_vec3 u = fr_v3_cross(n, s->roll_axis);
        lat = fr_v3_scale(u, fr_v3_dot(d, u));
    }
    const double dx = fr_v3_dot(lat, m->t1), dy = fr_v3_dot(lat, m->t2);
    m->point = fr_v3_sub(m->point, lat);
    for (int q = 0; q < m->npts; q++) m->px[q] += dx, m->py[q] += dy;
    m->ax += dx, m->ay += dy;
}

/* The first axis turned from th0 (rad from t1) towards the thickness' slope β (along t1, t2)
 * as the patch tilts (fr_contact_model_build) */
static double slope_axis(const fr_contact_model *m, double th0, const double beta[2], double base)
{
    const double gb = hypot(beta[0], beta[1]);
    if (!(gb > 0.0) || !(base > 0.0)) return th0;
    const double gx = beta[0] / gb, gy = beta[1] / gb;
    const double lg = m->ixx * gx * gx + 2.0 * m->ixy * gx * gy + m->iyy * gy * gy;
    const double fg = sqrt(3.0 * fmax(0.0, lg) / m->area) * gb / base;
    const double wg = fmin(1.0, fmax(0.0, (fg - GRAD_LO) / (GRAD_HI - GRAD_LO)));
    if (!(wg > 0.0)) return th0;
    /* An axis is a line: the blend is taken on the doubled angle, so that a slope and its reverse
     * ask for the same axis. Blending the angle the short way round turned a slope square to th0
     * one way or the other with its sign: in a pyramid placed exactly, the blocks' tilt across
     * the row (1e-7 rad, the solve's tolerance) flips sign every step, and its axis swung by
     * ±0.3 rad, a build in two of five models instead of an advance (docs/benchmarks.md). */
    const double phi = atan2(gy, gx);
    const double cx = (1.0 - wg) * cos(2.0 * th0) + wg * cos(2.0 * phi);
    const double cy = (1.0 - wg) * sin(2.0 * th0) + wg * sin(2.0 * phi);
    double d = 0.5 * atan2(cy, cx) - th0;
    d -= M_PI * floor(d / M_PI + 0.5);
    return th0 + d;
}

/* The polyhedron's longest chord along n, m: from each vertex along n to where the ray leaves
 * through a face plane (convex: the nearest one ahead). Unlike the vertices' extent along n it
 * does not grow with the polyhedron's width when n is not square to its faces: two faces 0.5°
 * apart overlapping by 0.31 mm over 24 mm read 0.48 mm as an extent along their blended normal.
 * A slab (`slab`) is measured between its two faces only (normals more than 0.5 along ±n), from
 * each vertex both ways: its thin side faces lean by the bodies' tilt (1e-7 rad in a swaying
 * column) and pass within rounding of the corners' vertices, where they cut a ray short by
 * rounding / lean, micrometres. (A speculative patch keeps every face and one way: with both ways
 * the random scenes' worst landing gained twice as much, 0.022 of its scene's energy.) */
static double max_chord(const fr_polyhedron_out *poly, fr_vec3 n, bool slab)
{
    const double cmin = slab ? 0.5 : 1e-12;
    double best = 0.0;
    for (int v = 0; v < poly->nverts; v++) {
        const fr_vec3 x = poly->verts[v];
        double up = INFINITY, down = INFINITY;
        for (int f = 0; f < poly->nfaces; f++) {
            const fr_vec3 nf = poly->face_normal[f];
            const double c = fr_v3_dot(nf, n);
            if (!(fabs(c) > cmin)) continue;
            const fr_vec3 x0 = poly->verts[poly->vidx[poly->face_start[f]]];
            const double s = fmax(0.0, fr_v3_dot(nf, fr_v3_sub(x0, x)) / fabs(c));
            if (c > 0.0)
                up = fmin(up, s);
            else
                down = fmin(down, s);
        }
        if (isfinite(up)) best = fmax(best, up);
        if (slab && isfinite(down)) best = fmax(best, down);
    }
    return best;
}

int fr_contact_model_build(const fr_contact_params *p, const fr_polyhedron_out *poly, double gap,
                           const fr_polyhedron_out *band, double band_gap, const fr_contact_body *a,
                           const fr_contact_body *b, double dt, fr_contact_state *st,
                           fr_contact_model *m)
{
    if (!m) return FR_ERR_INVAL;
    memset(m, 0, sizeof *m);
    if (!p || !poly || !a || !b || !st || !(dt > 0.0) || !(gap >= 0.0) || !isfinite(gap))
        return FR_ERR_INVAL;
    if (poly->nfaces <= 0 || poly->nverts <= 0) {
        fr_contact_state_reset(st);
        return FR_OK;
    }
    if (!body_ok(a) || !body_ok(b)) {
        fr_contact_state_reset(st);
        return FR_ERR_NUMERIC;
    }
    const bool had = st->active != 0;
    fr_vec3 prior = had ? st->normal : fr_v3_normalize(fr_v3_sub(b->pose.p, a->pose.p));
    fri_patch pt;
    if (fri_patch_compute(poly, prior, p->normal_blend, &pt) != FR_OK) {
        fr_contact_state_reset(st);
        return FR_ERR_NUMERIC;
    }
    const fr_vec3 n = pt.n, t1 = pt.t1;
    m->normal = n;
    m->t1 = t1;
    m->t2 = pt.t2;
    m->mu_s = p->mu_s;
    m->mu_k = p->mu_k;
    if (!pt.has_volume) {
        /* flat: no patch to model; the bond restarts */
        m->point = pt.o;
        fr_contact_state_reset(st);
        return FR_OK;
    }
    const double A = pt.A;
    m->point = pt.c3;
    m->area = A;
    /* area centroid relative to c, and the second moments about it */
    m->ax = pt.Ax / A - pt.cx;
    m->ay = pt.Ay / A - pt.cy;
    m->ixx = fmax(0.0, pt.Axx - pt.Ax * pt.Ax / A);
    m->iyy = fmax(0.0, pt.Ayy - pt.Ay * pt.Ay / A);
    m->ixy = pt.Axy - pt.Ax * pt.Ay / A;
    /* A speculative patch (gap > 0) touches first where it is thickest: the gap that must close
     * is `gap` less the virtual overlap's thickness there (for a face on a face, its uniform
     * thickness), its longest chord along n: the vertices' extent along a normal that is not
     * square to two tilted faces also counts the patch's width (a coin at 0.5° over a coin took
     * a 86 µm gap for a 79 µm overlap and was thrown up, gaining energy at every landing) */
    const double thick = gap > 0.0 ? fmin(pt.extent, max_chord(poly, n, false))
                         : pt.slab ? fmin(pt.extent, max_chord(poly, n, true))
                                   : pt.extent;
    m->depth0 = gap > 0.0 ? thick - gap : pt.mean;
    /* pressure per metre of depth and damping per area */
    double k = p->stiff_n, c = p->damp_n, kf = p->stiff_t, df = p->damp_t;
    if (p->law == FR_CONTACT_MEAN_DEPTH) {
        k /= A;
        c /= A;
    } else {
        kf *= A;
        df *= A;
    }
    m->k = k;
    m->ds = p->stiffen_depth > 0.0 ? p->stiffen_depth : 0.0;
    m->xmax = FRI_STIFFEN_XMAX;
    if (m->ds > 0.0 && p->stiffen_cap > 0.0 && p->stiffen_cap < m->ds) {
        /* a body on a narrow side: the law stiffens sooner but turns linear at the same pressure
         * (e^7 times the first touch's stiffness would leave a 1 cm block tipping 2.3 % early at
         * 5 ms: then the linear part's compliance decides) */
        m->xmax = log1p(m->ds / p->stiffen_cap * expm1(FRI_STIFFEN_XMAX));
        m->ds = p->stiffen_cap;
    }
    /* the pressure quadrature: principal axes of the patch's second moments */
    double tr = 0.5 * (m->ixx + m->iyy), df2 = 0.5 * (m->ixx - m->iyy);
    double rad = sqrt(df2 * df2 + m->ixy * m->ixy);
    const double lam1 = tr + rad;
    const double thp = rad > 0.0 ? 0.5 * atan2(2.0 * m->ixy, m->ixx - m->iyy) : 0.0;
    double th = thp;
    /* A patch as wide every way (a square's, or a tilted square's, whose moments differ by
     * ~1e-9 of themselves) has any axes for principal axes, and rounding would pick them anew at
     * every build, each time turning the points and, under a stiffening law, the centre of
     * pressure. Such a patch takes a reference direction: the frame's t1 at first touch, once
     * bonded B's spin reference, which turns with B (a square box carried round by a turntable
     * under fixed axes saw its points turn against it once a turn, its centre of pressure swing,
     * and it crept outwards at 96 % of its friction limit). From an anisotropy of QUAD_ISO_LO to
     * QUAD_ISO_HI the axes turn continuously from the reference to the principal ones (switched
     * at 1e-9, a 1 cm cube turned on a 20° slope at μ = tan θ exactly flipped between the two at
     * every step and slid). */
    double th_ref = 0.0;
    if (had) {
        fr_vec3 eb = fr_q_rotate(b->pose.q, st->axis_b);
        eb = fr_v3_mad(eb, -fr_v3_dot(eb, n), n);
        if (fr_v3_norm(eb) > 0.5) th_ref = atan2(fr_v3_dot(eb, pt.t2), fr_v3_dot(eb, t1));
    }
    const double aniso = tr > 0.0 ? rad / tr : 0.0;
    const double wp = fmin(1.0, fmax(0.0, (aniso - QUAD_ISO_LO) / (QUAD_ISO_HI - QUAD_ISO_LO)));
    if (wp < 1.0) {
        /* the principal axes are defined to a half turn: go the short way round */
        double d = th - th_ref;
        d -= M_PI * floor(d / M_PI + 0.5);
        th = th_ref + wp * d;
    }
    /* A pair that slides takes its first axis along the slip: the friction's moment moves the
     * centre of pressure that way, towards the front edge, and the points on that line hold it
     * up to 0.93 of the way to the outline; a diamond across it held it to 0.66 of the way to a
     * corner, and a slab sliding towards one at μ = 1.5 (the centre of pressure 0.78 of the way
     * out) pitched onto the diamond's edge in its first step, pressed 1.36 times its weight and
     * slid 1/470 of its distance (a new user's trial). Faded in from SLIP_AXIS_SPEED down to rest,
     * where the slip's direction is the solve's noise. */
    {
        const fr_vec3 ra = fr_v3_sub(pt.c3, a->pose.p), rb = fr_v3_sub(pt.c3, b->pose.p);
        const fr_vec3 vr = fr_v3_sub(fr_v3_add(a->v, fr_v3_cross(a->w, ra)),
                                     fr_v3_add(b->v, fr_v3_cross(b->w, rb)));
        const double vx = fr_v3_dot(vr, t1), vy = fr_v3_dot(vr, pt.t2), slip = hypot(vx, vy);
        const bool slides = had ? st->sliding != 0 : slip > FR_CONTACT_START_SLIP_SPEED;
        const double ws = slides ? fmin(1.0, slip / SLIP_AXIS_SPEED) : 0.0;
        if (ws > 0.0) {
            const double ths = atan2(vy, vx);
            const double cx = (1.0 - ws) * cos(2.0 * th) + ws * cos(2.0 * ths);
            const double cy = (1.0 - ws) * sin(2.0 * th) + ws * sin(2.0 * ths);
            double d = 0.5 * atan2(cy, cx) - th;
            d -= M_PI * floor(d / M_PI + 0.5);
            th += d;
        }
    }
    /* the thickness field fitted linear over the patch, t = mean + β·ξ (ξ from the area
     * centroid): ∫t·ξ dA = I·β = −V·(ax, ay), c being the volume centroid (solved along the
     * principal axes); uniform for a gap */
    double beta[2] = {0.0, 0.0}; /* β along t1, t2 */
    if (gap <= 0.0) {
        const double lp[2] = {lam1, tr - rad};
        for (int i = 0; i < 2; i++) {
            const double ex = i ? -sin(thp) : cos(thp), ey = i ? cos(thp) : sin(thp);
            if (lp[i] > 1e-12 * lam1) {
                const double b_i = -pt.V * (ex * m->ax + ey * m->ay) / lp[i];
                beta[0] += b_i * ex, beta[1] += b_i * ey;
            }
        }
    }
    const double base = gap > 0.0 ? m->depth0 : pt.V / A;
    /* The linear law's energy is ½k·∫t² dA. The points, on the thickness' linear fit, carry
     * ½k·∫t_fit² dA = ½k·(V²/A + βᵀ·I·β); where the thickness is not linear (an edge's or a
     * corner's intersection is a tent over its patch) the rest, ½k·∫(t − t_fit)² dA, held 1/4 of
     * an edge's energy and 1/3 of a corner's that no response reported, while the force, k·V
     * through the volume centroid, is the whole energy's gradient (docs/contact.md §5, "The
     * linear law's energy"). */
    if (!(m->ds > 0.0) && gap <= 0.0) {
        const double t2 = fri_patch_thickness2(poly, &pt);
        const double fit2 = pt.V * pt.V / A + m->ixx * beta[0] * beta[0] +
                            2.0 * m->ixy * beta[0] * beta[1] + m->iyy * beta[1] * beta[1];
        if (isfinite(t2)) m->e_res = 0.5 * k * fmax(0.0, t2 - fit2);
    }
    /* A tilted patch takes its first axis down the thickness' slope (GRAD_LO to GRAD_HI: its
     * change over the patch's half-width along it, against the mean): where a block leans, its
     * points lie on the line it leans along, whatever its yaw. A lifted square's principal axes
     * turn with the body's yaw at every build, and much faster than it (its anisotropy is
     * small): a 7.2 mm cube on a 31.8° slope at μ = tan θ, 5 ms, yawed in a period-2 oscillation
     * growing 3.9-fold a step as its friction point jumped sideways with the axes, and slid. */
    m->qth0 = th;
    th = slope_axis(m, th, beta, base);
    /* The first axis is kept, carried with A, while it stays within QUAD_HOLD of the one above
     * (fr_contact_model_advance refuses where a build would choose again): any axis is exact
     * with its conjugate (below), and both rules above swing far faster than the bodies turn
     * where their input is nearly degenerate (a lifted square's principal axes with its yaw, a
     * lifted brick's slope with its roll: 0.011 rad for a roll of 5e-7 rad). At each build the
     * friction point, fixed over the step, then moved sideways against the yaw and grew a
     * period-2 yaw oscillation on small bodies at 5 ms (docs/contact.md §8). (Turned on by the
     * excess only, rather than chosen again, the axis crept with the rule: a random box scene
     * then gained 1.6e-4 of its energy in a step, 3.4e-5 this way.) */
    if (had && fr_v3_norm2(st->qaxis_a) > 0.0) {
        fr_vec3 ua = fr_q_rotate(a->pose.q, st->qaxis_a);
        ua = fr_v3_mad(ua, -fr_v3_dot(ua, n), n);
        if (fr_v3_norm(ua) > 0.5) {
            const double thc = atan2(fr_v3_dot(ua, pt.t2), fr_v3_dot(ua, t1));
            double d = th - thc;
            d -= M_PI * floor(d / M_PI + 0.5);
            if (fabs(d) <= QUAD_HOLD) th = thc;
        }
    }
    st->qaxis_a =
        fr_q_unrotate(a->pose.q, fr_v3_add(fr_v3_scale(t1, cos(th)), fr_v3_scale(pt.t2, sin(th))));
    /* The second axis is the first's conjugate: along v + k·u, k = I_uv/I_vv, the points on the
     * two lines carry I_uu − I_uv²/I_vv along u and I_vv·(1 + k²) along the second, which sums to
     * the whole second-moment tensor for any first axis (on the principal ones k = 0) */
    const double u[2] = {cos(th), sin(th)}, v[2] = {-sin(th), cos(th)};
    const double iuu = m->ixx * u[0] * u[0] + 2.0 * m->ixy * u[0] * u[1] + m->iyy * u[1] * u[1];
    const double ivv = m->ixx * v[0] * v[0] + 2.0 * m->ixy * v[0] * v[1] + m->iyy * v[1] * v[1];
    const double iuv = (m->ixx - m->iyy) * u[0] * v[0] + m->ixy * (u[0] * v[1] + u[1] * v[0]);
    const double kc = ivv > 1e-12 * lam1 ? iuv / ivv : 0.0, nk = sqrt(1.0 + kc * kc);
    const double e[2][2] = {{u[0], u[1]}, {(v[0] + kc * u[0]) / nk, (v[1] + kc * u[1]) / nk}};
    const double li[2] = {fmax(0.0, iuu - kc * iuv), fmax(0.0, ivv) * nk * nk};
    m->npts = FR_CONTACT_PATCH_PTS;
    fri_patch_reach(poly, &pt, pt.Ax / A, pt.Ay / A, e, m->qreach);
    /* towards the corners of the axes' reach (place_points' level patch) */
    memset(m->qcreach, 0, sizeof m->qcreach);
    if (gap <= 0.0) {
        double dir[4][2], out[4];
        for (int j = 0; j < 4; j++) {
            const double r1 = j < 2 ? m->qreach[0] : -m->qreach[1];
            const double r2 = j % 2 ? -m->qreach[3] : m->qreach[2];
            const double dx = r1 * e[0][0] + r2 * e[1][0], dy = r1 * e[0][1] + r2 * e[1][1];
            const double len = hypot(dx, dy);
            dir[j][0] = len > 0.0 ? dx / len : 0.0, dir[j][1] = len > 0.0 ? dy / len : 0.0;
        }
        const double l01[2][2] = {{dir[0][0], dir[0][1]}, {dir[1][0], dir[1][1]}};
        const double l23[2][2] = {{dir[2][0], dir[2][1]}, {dir[3][0], dir[3][1]}};
        fri_patch_reach(poly, &pt, pt.Ax / A, pt.Ay / A, l01, out);
        m->qcreach[0] = out[0], m->qcreach[1] = out[2];
        fri_patch_reach(poly, &pt, pt.Ax / A, pt.Ay / A, l23, out);
        m->qcreach[2] = out[0], m->qcreach[3] = out[2];
    }
    m->qaxis[0] = e[0][0], m->qaxis[1] = e[0][1], m->qaxis[2] = e[1][0], m->qaxis[3] = e[1][1];
    m->qli[0] = li[0], m->qli[1] = li[1];
    m->qbeta[0] = beta[0], m->qbeta[1] = beta[1];
    m->qbase = base;
    place_points(m);
    if (band && band_gap > gap && band->nfaces > 0) band_points(band, band_gap, gap, &pt, m);
    /* Friction acts at the quadrature's centre of pressure, not at the volume centroid: the two
     * differ under the stiffening law, and the normal moments come from the quadrature, so a body
     * at rest has its centre of pressure, not the centroid, under its centre of mass. Friction
     * at the centroid then had a lever sideways and twisted the body, and the bond's spin took
     * that from the friction budget (a cube turned 0.3 rad on a slope at μ = tan θ slid off). */
    double sp = 0.0, sx = 0.0, sy = 0.0;
    for (int q = 0; q < m->npts; q++) {
        double pq = m->pw[q] * fri_law_p(m->k, m->ds, m->xmax, m->pt0[q], NULL);
        sp += pq, sx += pq * m->px[q], sy += pq * m->py[q];
    }
    if (sp > 0.0) {
        const double X = sx / sp, Y = sy / sp;
        m->point = fr_v3_add(m->point, fr_v3_add(fr_v3_scale(t1, X), fr_v3_scale(pt.t2, Y)));
        for (int q = 0; q < m->npts; q++) m->px[q] -= X, m->py[q] -= Y;
        m->ax -= X, m->ay -= Y;
    }
    roll_point(m, a, b);
    m->c_area = c;
    m->kf_area = kf;
    m->max_depth0 = thick - gap;
    m->slab = pt.slab && gap <= 0.0 && !band;
    m->rbar = pt.rbar;
    (void)df;
    model_finish(p, a, b, had, st, m);
    return FR_OK;
}

/* A lifting slab's change of tilt, relative to its mean depth, that has it built again (below) */
#define ADVANCE_TILT_REL 1e-5

/* m: how far a body's motion from b0 to b moves the point c (whose lever from b0's centre is
 * r), (R·r − r) + Δp, from small differences: the positions themselves may be hundreds of metres
 * out, where a double holds only tens of femtometres, and the depth is wanted to better */
static fr_vec3 point_motion(const fr_contact_body *b0, const fr_contact_body *b, fr_quat q,
                            fr_vec3 r)
{
    const fr_vec3 dp = fr_v3_add(fr_v3_sub(b->pose.p, b0->pose.p), fr_v3_sub(b->p_lo, b0->p_lo));
    return fr_v3_add(fr_v3_sub(fr_q_rotate(q, r), r), dp);
}

double fr_contact_model_advance(const fr_contact_params *p, const fr_contact_body *a0,
                                const fr_contact_body *b0, const fr_contact_body *a,
                                const fr_contact_body *b, double limit, fr_contact_state *st,
                                fr_contact_model *m)
{
    if (!p || !a0 || !b0 || !a || !b || !st || !m) return FR_ERR_INVAL;
    if (!(m->area > 0.0) || m->npts != FR_CONTACT_PATCH_PTS || !st->active) return FR_ERR_INVAL;
    if (!body_ok(a) || !body_ok(b)) return FR_ERR_NUMERIC;
    const fr_pose pa0 = a0->pose, pb0 = b0->pose;
    /* A's motion x ↦ Ra·(x − pa0) + pa, likewise B's; B's displacement relative to A, brought
     * back through A's rotation: d(x) = Ra⁻¹·(x_B' − x_A') = (Ra⁻¹Rb − I)·(x − c) + d(c), affine */
    const fr_quat qa = fr_q_mul(a->pose.q, fr_q_conj(pa0.q));
    const fr_quat qb = fr_q_mul(b->pose.q, fr_q_conj(pb0.q));
    const fr_vec3 n = m->normal, t1 = m->t1, t2 = m->t2, c = m->point;
    fr_mat3 M = fr_q_to_m3(fr_q_mul(fr_q_conj(qa), qb));
    for (int i = 0; i < 3; i++) M.m[i][i] -= 1.0;
    const fr_vec3 ua = point_motion(a0, a, qa, fr_v3_sub(c, pa0.p));
    const fr_vec3 ub = point_motion(b0, b, qb, fr_v3_sub(c, pb0.p));
    const fr_vec3 dc = fr_q_unrotate(qa, fr_v3_sub(ub, ua));
    const fr_vec3 Mt1 = fr_m3_mulv(M, t1), Mt2 = fr_m3_mulv(M, t2);
    double moved = 0.0;
    double dn_q[FR_CONTACT_NPTS + 1]; /* the points' depth changes, the area centroid's last */
    /* the depth change at the area centroid (the mean's) */
    /* (thickest over mean: 1 for a uniform slab, 2 for a wedge whose edge just touches) */
    const bool lifted = m->max_depth0 > 1.5 * m->depth0;
    const double dc_n =
        -fr_v3_dot(n, fr_v3_add(dc, fr_v3_add(fr_v3_scale(Mt1, m->ax), fr_v3_scale(Mt2, m->ay))));
    for (int q = 0; q <= m->npts; q++) {
        const double X = q < m->npts ? m->px[q] : m->ax, Y = q < m->npts ? m->py[q] : m->ay;
        fr_vec3 d = fr_v3_add(dc, fr_v3_add(fr_v3_scale(Mt1, X), fr_v3_scale(Mt2, Y)));
        dn_q[q] = -fr_v3_dot(n, d); /* B moving against n deepens the overlap */
        /* a slab's outline moves only with the motion across n */
        moved = fmax(moved, m->slab ? fr_v3_norm(fr_v3_mad(d, dn_q[q], n)) : fr_v3_norm(d));
        /* A slab's outline is its faces' only where it is thick all over; where its light side
         * lifts (a block tipped by a slope: the thickness reaches zero inside the faces; or a
         * column's blocks pressing on a corner) the outline moves with the tilt. There a change
         * of tilt since the build of ADVANCE_TILT_REL of the mean depth across the points has it
         * built again. Measured with a cube at μ = tan θ exactly on slopes of 20–44°, turned or
         * not, 1 and 5 ms, 20 s: no check, 22 µm of slide (its patch lost 4 % of its area at a
         * rebuild); 1e-4, 15 nm (35°, 5 ms); 1e-5, below 0.7 nm everywhere, and a resting
         * column's patches are still advanced (195 of 197 a step; 1e-6: 116). */
        if (m->slab && lifted && q < m->npts && fabs(dn_q[q] - dc_n) > ADVANCE_TILT_REL * m->depth0)
            return FR_ERR_RANGE;
        if (m->slab && !((q < m->npts ? m->pt0[q] : m->depth0) + dn_q[q] > 0.0))
            return FR_ERR_RANGE;
    }
    if (!isfinite(moved)) return FR_ERR_NUMERIC;
    if (!(moved <= limit)) return FR_ERR_RANGE;
    /* the thickness field moves by the affine dn: its value at the area centroid and its slope
     * along the axes; the points are placed again from it as a build would place them */
    const double gx = -fr_v3_dot(n, Mt1), gy = -fr_v3_dot(n, Mt2);
    const double beta1[2] = {m->qbeta[0] + gx, m->qbeta[1] + gy};
    /* a build would choose the first axis again once the slope turned it beyond QUAD_HOLD */
    double turn = slope_axis(m, m->qth0, beta1, m->qbase + dc_n) - atan2(m->qaxis[1], m->qaxis[0]);
    turn -= M_PI * floor(turn / M_PI + 0.5);
    if (fabs(turn) > QUAD_HOLD) return FR_ERR_RANGE;
    m->qbase += dc_n;
    m->qbeta[0] = beta1[0], m->qbeta[1] = beta1[1];
    place_points(m);
    m->depth0 += dn_q[m->npts];
    m->max_depth0 += dn_q[m->npts];
    m->point = fr_v3_add(c, ua);
    m->normal = fr_v3_normalize(fr_q_rotate(qa, n));
    m->t1 = fr_v3_normalize(fr_q_rotate(qa, t1));
    m->t2 = fr_v3_cross(m->normal, m->t1);
    if (!fr_v3_isfinite(m->point) || !fr_v3_isfinite(m->normal)) return FR_ERR_NUMERIC;
    roll_point(m, a, b); /* (c carried with A lags behind a rolling centre as a build's would) */
    model_finish(p, a, b, true, st, m);
    return moved;
}

void fr_contact_model_scale_normal(fr_contact_model *m, double s)
{
    if (!(s > 0.0) || !isfinite(s) || !(m->area > 0.0)) return;
    m->k *= s;
    m->e_res *= s;
    m->c *= s;
    m->c_area *= s;
    m->n0 *= s;
    for (int q = 0; q < m->npts; q++) {
        m->pn0[q] *= s;
        /* the law's linearisation kept with the model: the same depth carries s times the force */
        m->lin_lam[q] *= s;
        m->lin_K[q] *= s;
    }
}

void fr_contact_model_scale_band(fr_contact_model *m, double s)
{
    if (!(s > 0.0) || !(s < 1.0)) return;
    for (int q = FR_CONTACT_PATCH_PTS; q < m->npts; q++) {
        m->pw[q] *= s;
        m->pn0[q] *= s;
        m->lin_lam[q] *= s;
        m->lin_K[q] *= s;
    }
}

bool fr_contact_model_starts_sliding(const fr_contact_model *m, const double y[6])
{
    return hypot(y[3], y[4]) + fabs(y[5]) * m->rbar > FR_CONTACT_START_SLIP_SPEED;
}

void fr_contact_model_local(const fr_contact_model *m, fr_svec tw, double y[6])
{
    y[0] = fr_v3_dot(tw.ang, m->t1);
    y[1] = fr_v3_dot(tw.ang, m->t2);
    y[2] = fr_v3_dot(tw.lin, m->normal);
    y[3] = fr_v3_dot(tw.lin, m->t1);
    y[4] = fr_v3_dot(tw.lin, m->t2);
    y[5] = fr_v3_dot(tw.ang, m->normal);
}

fr_svec fr_contact_model_wrench(const fr_contact_model *m, const double w[6])
{
    fr_vec3 tau = fr_v3_add(fr_v3_add(fr_v3_scale(m->t1, w[0]), fr_v3_scale(m->t2, w[1])),
                            fr_v3_scale(m->normal, w[5]));
    fr_vec3 f = fr_v3_add(fr_v3_add(fr_v3_scale(m->normal, w[2]), fr_v3_scale(m->t1, w[3])),
                          fr_v3_scale(m->t2, w[4]));
    return fr_sv(tau, f);
}

double fr_contact_depth_of_pressure(double k, double ds, double p)
{
    return fri_law_t(k, ds, FRI_STIFFEN_XMAX, p);
}
