/* Internal to src/contact: the contact patch shared by the explicit evaluation (eval.c) and the
 * implicit step's model (model.c). */
#ifndef FR_CONTACT_INTERNAL_H
#define FR_CONTACT_INTERNAL_H

#include <math.h>
#include <stdbool.h>

#include "fureru/contact.h"

/* The intersection polyhedron reduced to what the force laws need. Frame coordinates (x, y, h)
 * are along t1, t2, n relative to o. */
typedef struct fri_patch {
    fr_vec3 o;            /* vertex mean, m */
    fr_vec3 n, t1, t2;    /* unit; n from A into B, t2 = n × t1 */
    fr_vec3 c3;           /* volume centroid (world), m */
    double cx, cy;        /* the volume centroid in frame coordinates, m */
    double V;             /* ∫ t dA = volume, m³ */
    double A;             /* contact area (projected), m² */
    double extent;        /* extent of the vertices along n, m */
    double mean;          /* min(V/A, extent), m */
    double Qx, Qy;        /* ∫ t·x dA, ∫ t·y dA, m⁴ */
    double Ax, Ay;        /* ∫ x dA, ∫ y dA, m³ */
    double Axx, Axy, Ayy; /* ∫ x² dA, ∫ x·y dA, ∫ y² dA, m⁴ */
    double rbar;          /* ∫ t·|x − c| dA / V, m */
    double rho2;          /* ∫ t·|x − c|² dA / V, m² */
    bool has_volume;      /* V > 0 and A > 0, both finite (else only o, n, frame, extent) */
    bool slab;            /* between two antiparallel faces, each most of its owner's area */
} fri_patch;

/*
 * Geometry of an intersection polyhedron (docs/contact.md §1): normal from the owners' area
 * vectors (blended with `prior` when weak), frame, exact triangle integrals, spin radius.
 * FR_ERR_NUMERIC when the polyhedron is not finite. `poly` must be valid and non-empty.
 */
int fri_patch_compute(const fr_polyhedron_out *poly, fr_vec3 prior, double normal_blend,
                      fri_patch *pt);

/* Area and thickness integrals of a polyhedron in another patch's frame (its o, t1, t2, n), in
 * that frame's coordinates: the fields of fri_patch with the same names. */
typedef struct fri_moments {
    double V, Qx, Qy;     /* ∫ t dA, ∫ t·x dA, ∫ t·y dA */
    double A, Ax, Ay;     /* ∫ dA, ∫ x dA, ∫ y dA */
    double Axx, Axy, Ayy; /* ∫ x² dA, ∫ x·y dA, ∫ y² dA */
} fri_moments;
void fri_patch_moments(const fr_polyhedron_out *poly, const fri_patch *frame, fri_moments *mo);

/* ∫ t² dA over the patch, in its frame: the overlay of the exit faces' projections on the entry
 * faces', over each of whose cells t is linear; NAN beyond its buffers (64 faces a side, 256
 * vertices). */
double fri_patch_thickness2(const fr_polyhedron_out *poly, const fri_patch *pt);

/* How far the patch reaches from the frame point (x0, y0) both ways along each of the 2 unit
 * directions line[d] in its plane: where the line leaves the patch's projection (the union of
 * its exit faces'), m, as reach[2d] along +line[d] and reach[2d + 1] along −line[d]; 0 where the
 * point is outside. */
void fri_patch_reach(const fr_polyhedron_out *poly, const fri_patch *pt, double x0, double y0,
                     const double (*line)[2], double *reach);

/*
 * The friction bond kept in the pair's state (docs/contact.md §3): anchors in each body's frame.
 * fri_bond_read gives its tangential displacement u (of A's anchor relative to B's, moved to the
 * point c as a planar rigid displacement, in the plane normal to n), its twist φ about n and B's
 * reference direction (the fallback `t1` when there is no bond), and with `d` (may be NULL) A's
 * anchor less B's as they stand, unprojected. fri_bond_write stores a bond with displacement u
 * and twist φ re-anchored at c (A's anchor at c, B's at c − u).
 */
void fri_bond_read(const fr_contact_state *st, const fr_contact_body *a, const fr_contact_body *b,
                   fr_vec3 n, fr_vec3 c, fr_vec3 t1, fr_vec3 *u, double *phi, fr_vec3 *eref,
                   fr_vec3 *d);
void fri_bond_write(fr_contact_state *st, const fr_contact_body *a, const fr_contact_body *b,
                    fr_vec3 n, fr_vec3 c, fr_vec3 u, double phi, fr_vec3 eref);

/* (|f|/F)² + (τ/M)², with a zero limit admitting only a zero load. */
double fri_ellipse(double f, double tau, double F, double M);

/* ---- the pressure law (model.c, respond.c): p(t), its energy ∫p and its inverse */

/* Beyond this many stiffening depths the law continues along its tangent: a contact stiffens to at
 * most e^7 ≈ 1100 times its stiffness at first touch (carrying ~1100 times the pair's own
 * weight). Beyond, the force grows linearly: a deep overlap (a fast rotation, an initial overlap)
 * meets a stiff but linear spring, which the implicit step resolves; any further growth (a
 * higher cap, a parabola) made such steps explode in the random-scene tests. */
#define FRI_STIFFEN_XMAX 7.0

/* Point q's lever in the depth rate: ṫ_q = y[2] + e·(y[0], y[1]) and its pressure's moment about c
 * on A is −N_q·e; (Y, −X) less the turns the curved shape is invariant to (roll_s). */
static inline void fri_point_lever(const fr_contact_model *m, int q, double e[2])
{
    const double a = m->py[q], b = -m->px[q];
    e[0] = a, e[1] = b;
    if (!m->roll) return; /* (the common case: no curved shape rolls in the pair) */
    e[0] -= m->roll_s[0] * a + m->roll_s[1] * b;
    e[1] -= m->roll_s[1] * a + m->roll_s[2] * b;
}

static inline double fri_law_p(double k, double ds, double xm, double t, double *slope)
{
    if (!(t > 0.0)) {
        if (slope) *slope = 0.0;
        return 0.0;
    }
    if (!(ds > 0.0)) {
        if (slope) *slope = k;
        return k * t;
    }
    double x = t / ds;
    if (x <= xm) {
        double em1 = expm1(x); /* one transcendental for both: e^x = em1 + 1 */
        if (slope) *slope = k * (em1 + 1.0);
        return k * ds * em1;
    }
    double e = exp(xm);
    if (slope) *slope = k * e;
    return k * ds * expm1(xm) + k * e * (t - xm * ds);
}

static inline double fri_law_e(double k, double ds, double xm, double t)
{
    if (!(t > 0.0)) return 0.0;
    if (!(ds > 0.0)) return 0.5 * k * t * t;
    double x = t / ds;
    if (x <= xm) return k * ds * ds * (expm1(x) - x);
    double e = exp(xm), d = t - xm * ds;
    return k * ds * ds * (expm1(xm) - xm) + k * ds * expm1(xm) * d + 0.5 * k * e * d * d;
}

static inline double fri_law_t(double k, double ds, double xm, double p)
{
    if (!(p > 0.0) || !(k > 0.0)) return 0.0;
    if (!(ds > 0.0)) return p / k;
    double pmax = k * ds * expm1(xm);
    if (p <= pmax) return ds * log1p(p / (k * ds));
    return xm * ds + (p - pmax) / (k * exp(xm));
}

#endif
