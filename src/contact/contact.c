/*
 * Penalty contact from the intersection volume (see include/fureru/contact.h, docs/contact.md).
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
#include "fureru/contact.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "fureru/base.h"

/* ------------------------------------------------------------------ parameters */

static bool is_static_mass(double m)
{
    return !(m > 0.0) || isinf(m);
}

double fr_contact_reduced_mass(double mass_a, double mass_b)
{
    bool sa = is_static_mass(mass_a), sb = is_static_mass(mass_b);
    if (sa && sb) return 0.0;
    if (sa) return mass_b;
    if (sb) return mass_a;
    return mass_a * mass_b / (mass_a + mass_b);
}

fr_contact_params fr_contact_params_scaled(double m_red, double dt, double kappa, double beta,
                                           double mu_s, double mu_k)
{
    if (!(kappa > 0.0)) kappa = FR_CONTACT_KAPPA;
    if (!(beta >= 0.0)) beta = FR_CONTACT_BETA;
    fr_contact_params p;
    memset(&p, 0, sizeof p);
    p.law = FR_CONTACT_MEAN_DEPTH;
    p.stiff_n = kappa * m_red / (dt * dt);
    p.damp_n = beta * m_red / dt;
    p.stiff_t = p.stiff_n;
    p.damp_t = p.damp_n;
    p.mu_s = mu_s;
    p.mu_k = mu_k;
    /* Half the depth at which the spring carries m_red·g: resting contacts get full damping. */
    p.damping_ramp = 0.5 * FR_CONTACT_RAMP_G * dt * dt / kappa;
    p.max_force = 0.0;
    p.normal_blend = 0.05;
    return p;
}

static bool mu_ok(double mu_s, double mu_k)
{
    return isfinite(mu_s) && isfinite(mu_k) && mu_k >= 0.0 && mu_k <= mu_s;
}

/* Two layers in series; a value <= 0 is a rigid layer (contributes nothing). */
static double series(double x, double y)
{
    if (!(x > 0.0)) return y > 0.0 ? y : 0.0;
    if (!(y > 0.0)) return x;
    return x * y / (x + y);
}

int fr_contact_params_combine(const fr_contact_material *a, const fr_contact_material *b,
                              double m_red, double dt, fr_contact_params *out)
{
    if (!a || !b || !out) return FR_ERR_INVAL;
    if (!mu_ok(a->mu_s, a->mu_k) || !mu_ok(b->mu_s, b->mu_k)) return FR_ERR_INVAL;
    if (!isfinite(a->stiffness) || !isfinite(b->stiffness) || !isfinite(a->damping) ||
        !isfinite(b->damping) || a->damping < 0.0 || b->damping < 0.0)
        return FR_ERR_INVAL;
    double mu_s = sqrt(a->mu_s * b->mu_s), mu_k = sqrt(a->mu_k * b->mu_k);
    bool ka = a->stiffness > 0.0, kb = b->stiffness > 0.0;
    if (!ka && !kb) {
        if (!(m_red > 0.0) || !isfinite(m_red) || !(dt > 0.0)) return FR_ERR_INVAL;
        *out = fr_contact_params_scaled(m_red, dt, 0.0, -1.0, mu_s, mu_k);
        return FR_OK;
    }
    fr_contact_params p;
    memset(&p, 0, sizeof p);
    p.law = FR_CONTACT_VOLUME;
    p.stiff_n = series(ka ? a->stiffness : 0.0, kb ? b->stiffness : 0.0);
    /* a rigid material's damping is ignored; two dashpots in series otherwise */
    double ca = ka ? a->damping : 0.0, cb = kb ? b->damping : 0.0;
    p.damp_n = (ka && kb) ? (ca + cb > 0.0 ? ca * cb / (ca + cb) : 0.0) : (ka ? ca : cb);
    p.stiff_t = p.stiff_n;
    p.damp_t = p.damp_n;
    p.mu_s = mu_s;
    p.mu_k = mu_k;
    p.damping_ramp = 0.0;
    p.max_force = 0.0;
    p.normal_blend = 0.05;
    *out = p;
    return FR_OK;
}

int fr_contact_params_check(const fr_contact_params *p)
{
    if (!p) return FR_ERR_INVAL;
    if (p->law != FR_CONTACT_MEAN_DEPTH && p->law != FR_CONTACT_VOLUME) return FR_ERR_INVAL;
    if (!(p->stiff_n > 0.0) || !isfinite(p->stiff_n)) return FR_ERR_INVAL;
    if (!(p->stiff_t > 0.0) || !isfinite(p->stiff_t)) return FR_ERR_INVAL;
    if (!(p->damp_n >= 0.0) || !isfinite(p->damp_n)) return FR_ERR_INVAL;
    if (!(p->damp_t >= 0.0) || !isfinite(p->damp_t)) return FR_ERR_INVAL;
    if (!mu_ok(p->mu_s, p->mu_k)) return FR_ERR_INVAL;
    if (!(p->damping_ramp >= 0.0) || !isfinite(p->damping_ramp)) return FR_ERR_INVAL;
    if (!(p->max_force >= 0.0) || !isfinite(p->max_force)) return FR_ERR_INVAL;
    if (!(p->normal_blend >= 0.0) || !(p->normal_blend < 1.0)) return FR_ERR_INVAL;
    return FR_OK;
}

void fr_contact_state_reset(fr_contact_state *s)
{
    if (s) memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ integrals */

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

/* ------------------------------------------------------------------ evaluation */

static int check_poly(const fr_polyhedron_out *poly)
{
    if (!poly->verts || !poly->vidx || !poly->face_start || !poly->face_count || !poly->face_owner)
        return FR_ERR_INVAL;
    for (int f = 0; f < poly->nfaces; f++) {
        int s = poly->face_start[f], c = poly->face_count[f];
        if (s < 0 || c < 3 || s + c > poly->nidx) return FR_ERR_INVAL;
        if (poly->face_owner[f] > FR_FACE_B) return FR_ERR_INVAL;
        for (int k = 0; k < c; k++)
            if (poly->vidx[s + k] < 0 || poly->vidx[s + k] >= poly->nverts) return FR_ERR_INVAL;
    }
    return FR_OK;
}

static bool body_finite(const fr_contact_body *b)
{
    return fr_v3_isfinite(b->pose.p) && fr_q_isfinite(b->pose.q) && fr_v3_isfinite(b->v) &&
           fr_v3_isfinite(b->w);
}

/* (|f|/F)² + (τ/M)², with a zero limit admitting only a zero load. */
static double ellipse(double f, double tau, double F, double M)
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

/*
 * K = sk·∫[g; n][g; n]ᵀ dA + fk·F and D = sd·∫[g; n][g; n]ᵀ dA + fd·F, g = (x − c) × n, from
 * the area moments about c (x − c = X·t1 + Y·t2 gives g = Y·t1 − X·t2), with the friction shape
 * F = [ρ²·n nᵀ, 0; 0, 1 − n nᵀ] (spin and tangential springs).
 */
static void linearisation(fr_mat6 *K, fr_mat6 *D, double sk, double sd, double fk, double fd,
                          double rho2, fr_vec3 n, fr_vec3 t1, fr_vec3 t2, double A, double gx,
                          double gy, double ixx, double ixy, double iyy)
{
    const double a1[3] = {t1.x, t1.y, t1.z}, a2[3] = {t2.x, t2.y, t2.z}, nn[3] = {n.x, n.y, n.z};
    double g[3];
    for (int i = 0; i < 3; i++) g[i] = gy * a1[i] - gx * a2[i];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double gg =
                iyy * a1[i] * a1[j] + ixx * a2[i] * a2[j] - ixy * (a1[i] * a2[j] + a2[i] * a1[j]);
            double nij = nn[i] * nn[j], fs = rho2 * nij, ft = (i == j) - nij;
            K->m[i][j] = sk * gg + fk * fs;
            D->m[i][j] = sd * gg + fd * fs;
            K->m[i][j + 3] = sk * g[i] * nn[j];
            D->m[i][j + 3] = sd * g[i] * nn[j];
            K->m[i + 3][j] = sk * nn[i] * g[j];
            D->m[i + 3][j] = sd * nn[i] * g[j];
            K->m[i + 3][j + 3] = sk * A * nij + fk * ft;
            D->m[i + 3][j + 3] = sd * A * nij + fd * ft;
        }
}

static int eval(const fr_contact_params *p, const fr_polyhedron_out *poly, const fr_contact_body *a,
                const fr_contact_body *b, fr_contact_state *st, fr_contact_result *out,
                bool *linearised, unsigned flags)
{
    if (!p || !poly || !a || !b || !st) return FR_ERR_INVAL;
    const bool checked = flags & FR_CONTACT_EVAL_CHECKED;
    if (!checked && fr_contact_params_check(p) != FR_OK) return FR_ERR_INVAL;
    if (poly->nfaces <= 0 || poly->nverts <= 0) {
        fr_contact_state_reset(st);
        return FR_OK;
    }
    if (!checked && check_poly(poly) != FR_OK) return FR_ERR_INVAL;
    if (!body_finite(a) || !body_finite(b)) {
        fr_contact_state_reset(st);
        return FR_ERR_NUMERIC;
    }

    /* Reference point o: the vertex mean keeps the coordinates below small. */
    fr_vec3 o = fr_v3_zero();
    for (int i = 0; i < poly->nverts; i++) o = fr_v3_add(o, poly->verts[i]);
    o = fr_v3_scale(o, 1.0 / poly->nverts);
    if (!fr_v3_isfinite(o)) {
        fr_contact_state_reset(st);
        return FR_ERR_NUMERIC;
    }

    /* ---- normal: Σ area vectors on A − Σ on B, blended with a prior when that is weak */
    fr_vec3 sum_a = fr_v3_zero(), sum_b = fr_v3_zero();
    double area_abs = 0.0;
    fr_vec3 fav[CONTACT_FBUF]; /* the first faces' area vectors, to skip faces parallel to n */
    double favn[CONTACT_FBUF]; /* and their norms */
    for (int f = 0; f < poly->nfaces; f++) {
        const int *ix = poly->vidx + poly->face_start[f];
        fr_vec3 p0 = poly->verts[ix[0]], av = fr_v3_zero(); /* 2 × area vector */
        for (int k = 1; k + 1 < poly->face_count[f]; k++)
            av = fr_v3_add(av, fr_v3_cross(fr_v3_sub(poly->verts[ix[k]], p0),
                                           fr_v3_sub(poly->verts[ix[k + 1]], p0)));
        double avn = fr_v3_norm(av);
        area_abs += avn;
        if (f < CONTACT_FBUF) fav[f] = av, favn[f] = avn;
        if (poly->face_owner[f] == FR_FACE_A)
            sum_a = fr_v3_add(sum_a, av);
        else
            sum_b = fr_v3_add(sum_b, av);
    }
    fr_vec3 nraw = fr_v3_sub(sum_a, sum_b);
    double q = area_abs > 0.0 ? fr_v3_norm(nraw) / area_abs : 0.0;
    fr_vec3 prior = fr_v3_zero();
    if (st->active)
        prior = st->normal;
    else
        prior = fr_v3_normalize(fr_v3_sub(b->pose.p, a->pose.p));
    double wprior =
        (p->normal_blend > 0.0 && q < p->normal_blend) ? 1.0 - q / p->normal_blend : 0.0;
    fr_vec3 n = fr_v3_add(nraw, fr_v3_scale(prior, wprior * area_abs));
    if (!(fr_v3_norm(n) > 0.0)) n = fr_v3_norm(prior) > 0.0 ? prior : fr_v3(0.0, 0.0, -1.0);
    n = fr_v3_normalize(n);
    if (!fr_v3_isfinite(n)) {
        fr_contact_state_reset(st);
        return FR_ERR_NUMERIC;
    }
    fr_vec3 t1 = fr_v3_perp(n), t2 = fr_v3_cross(n, t1);

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
    const double V = s.v / 3.0;                      /* ∫ t dA = volume, m³ */
    const double Qx = s.qx / 12.0, Qy = s.qy / 12.0; /* ∫ t·x dA, m⁴ */
    const double Hv = s.hh / 24.0;                   /* ∫_V h dV, m⁴ */
    const double Jt = s.j / 60.0;                    /* ∫ t·|x|² dA, m⁵ */
    const double A = s.a;                            /* contact area, m² */
    const double Ax = s.ax / 3.0, Ay = s.ay / 3.0;
    const double Axx = s.axx / 12.0, Axy = s.axy / 12.0, Ayy = s.ayy / 12.0;
    const double extent = hmax - hmin;

    out->in_contact = 1;
    out->normal = n;
    out->max_depth = extent;
    out->area = A;
    if (!(V > 0.0) || !(A > 0.0) || !isfinite(V) || !isfinite(A)) {
        /* touching with no volume: no force; the friction bond restarts */
        out->point = o;
        out->force_b = fr_v3_zero();
        out->sliding = 1;
        fr_contact_state_reset(st);
        st->active = 1;
        st->sliding = 1;
        st->normal = n;
        st->anchor_a = fr_pose_apply_inv(a->pose, o);
        st->anchor_b = fr_pose_apply_inv(b->pose, o);
        st->axis_a = fr_q_unrotate(a->pose.q, t1);
        st->axis_b = fr_q_unrotate(b->pose.q, t1);
        return isfinite(V) && isfinite(A) ? FR_OK : FR_ERR_NUMERIC;
    }

    /* ---- normal pressure p = k·t + c·s·ṫ */
    double mean = fmin(V / A, extent);
    double keff, ceff;
    if (p->law == FR_CONTACT_MEAN_DEPTH) {
        keff = p->stiff_n * mean / V; /* = K/A */
        ceff = p->damp_n / A;
    } else {
        keff = p->stiff_n;
        ceff = p->damp_n;
    }
    double ramp = p->damping_ramp > 0.0 ? fmin(1.0, mean / p->damping_ramp) : 1.0;

    fr_vec3 wrel = fr_v3_sub(a->w, b->w);
    fr_vec3 vo = fr_v3_sub(fr_v3_add(a->v, fr_v3_cross(a->w, fr_v3_sub(o, a->pose.p))),
                           fr_v3_add(b->v, fr_v3_cross(b->w, fr_v3_sub(o, b->pose.p))));
    /* ṫ(x) = a0 + bx·x + by·y */
    double a0 = fr_v3_dot(vo, n);
    fr_vec3 bv = fr_v3_cross(n, wrel);
    double bx = fr_v3_dot(bv, t1), by = fr_v3_dot(bv, t2);
    double Id = a0 * A + bx * Ax + by * Ay;
    double Idx = a0 * Ax + bx * Axx + by * Axy;
    double Idy = a0 * Ay + bx * Axy + by * Ayy;

    double Nk = keff * V, Nkx = keff * Qx, Nky = keff * Qy;
    double cd = ceff * ramp;
    double Nd = cd * Id, Ndx = cd * Idx, Ndy = cd * Idy;
    double dscale = 1.0;
    if (Nk + Nd < 0.0) dscale = Nk / -Nd; /* no pull in total: cut the damping to zero force */
    Nd *= dscale;
    Ndx *= dscale;
    Ndy *= dscale;
    double N = Nk + Nd, Mx = Nkx + Ndx, My = Nky + Ndy;
    double cap = 1.0;
    if (p->max_force > 0.0 && N > p->max_force) cap = p->max_force / N;
    N *= cap;
    Mx *= cap;
    My *= cap;
    if (N < 0.0) N = 0.0; /* round-off after the cut */

    /* centre of pressure of the spring part = volume centroid */
    const double cx = Qx / V, cy = Qy / V, ch = Hv / V;
    fr_vec3 c3 = fr_v3_add(
        o, fr_v3_add(fr_v3_add(fr_v3_scale(t1, cx), fr_v3_scale(t2, cy)), fr_v3_scale(n, ch)));

    /* spin radius r̄ = ∫ t·|x − c| dA / V and ρ² = ∫ t·|x − c|² dA / V */
    double R = 0.0;
    for (int f = 0; f < poly->nfaces; f++) {
        /* a face parallel to n projects to a segment: nothing to integrate */
        if (f < CONTACT_FBUF && fabs(fr_v3_dot(fav[f], n)) <= 1e-12 * favn[f]) continue;
        R += face_radial(&vc, f, cx, cy);
    }
    double rbar = fmax(0.0, R / V);
    double rho2 = fmax(0.0, (Jt - 2.0 * (cx * Qx + cy * Qy)) / V + cx * cx + cy * cy);

    /* ---- friction: aggregated bond (tangential + spin spring-damper) at c, ellipse limit */
    double Kt = p->stiff_t, Dt = p->damp_t;
    if (p->law == FR_CONTACT_VOLUME) {
        Kt *= A;
        Dt *= A;
    }
    double Kr = Kt * rho2, Dr = Dt * rho2;
    fr_vec3 u = fr_v3_zero(), eref = fr_v3_zero();
    double phi = 0.0;
    if (st->active) {
        fr_vec3 pa = fr_pose_apply(a->pose, st->anchor_a),
                pb = fr_pose_apply(b->pose, st->anchor_b);
        fr_vec3 ea = fr_q_rotate(a->pose.q, st->axis_a), eb = fr_q_rotate(b->pose.q, st->axis_b);
        ea = fr_v3_mad(ea, -fr_v3_dot(ea, n), n);
        eb = fr_v3_mad(eb, -fr_v3_dot(eb, n), n);
        double na = fr_v3_norm(ea), nb = fr_v3_norm(eb);
        if (na > 0.5 && nb > 0.5) {
            phi = atan2(fr_v3_dot(n, fr_v3_cross(eb, ea)), fr_v3_dot(eb, ea));
            eref = fr_v3_scale(eb, 1.0 / nb);
        }
        /* the bond is a planar rigid displacement: move its reference point to c */
        u = fr_v3_add(fr_v3_sub(pa, pb), fr_v3_scale(fr_v3_cross(n, fr_v3_sub(c3, pa)), phi));
        u = fr_v3_mad(u, -fr_v3_dot(u, n), n);
    }
    if (fr_v3_norm2(eref) == 0.0) eref = t1;
    fr_vec3 vrel = fr_v3_sub(fr_v3_add(a->v, fr_v3_cross(a->w, fr_v3_sub(c3, a->pose.p))),
                             fr_v3_add(b->v, fr_v3_cross(b->w, fr_v3_sub(c3, b->pose.p))));
    fr_vec3 vt = fr_v3_mad(vrel, -fr_v3_dot(vrel, n), n);
    double wn = fr_v3_dot(wrel, n);

    double Fs = p->mu_s * N, Fk = p->mu_k * N;
    double Ms = Fs * rbar, Mk = Fk * rbar;
    if (!(Ms > 0.0)) Kr = Dr = 0.0; /* no spin resistance without area */
    fr_vec3 fric = fr_v3_add(fr_v3_scale(u, -Kt), fr_v3_scale(vt, -Dt));
    double tau = Kr > 0.0 ? -Kr * phi - Dr * wn : 0.0;
    if (Kr == 0.0) phi = 0.0;
    int sliding = st->active ? st->sliding : 0;
    if (!(Fs > 0.0)) {
        fric = fr_v3_zero();
        tau = 0.0;
        u = fr_v3_zero();
        phi = 0.0;
        sliding = 1;
    } else {
        double fm = fr_v3_norm(fric);
        bool stick = sliding ? ellipse(fm, tau, Fk, Mk) <= 1.0 : ellipse(fm, tau, Fs, Ms) <= 1.0;
        if (stick) {
            sliding = 0;
        } else {
            sliding = 1;
            double gk = ellipse(fm, tau, Fk, Mk);
            double sc = isinf(gk) ? 0.0 : 1.0 / sqrt(gk);
            fric = fr_v3_scale(fric, sc);
            tau *= sc;
            /* the anchors move so that the spring alone holds the kinetic limit */
            u = fr_v3_scale(fric, -1.0 / Kt);
            phi = Kr > 0.0 ? -tau / Kr : 0.0;
        }
    }

    /* ---- wrenches */
    fr_vec3 fa = fr_v3_add(fr_v3_scale(n, -N), fric);
    /* moment of the normal pressure on A about o: −(∫(x − o)·p dA) × n = Mx·t2 − My·t1 */
    fr_vec3 mo = fr_v3_sub(fr_v3_scale(t2, Mx), fr_v3_scale(t1, My));
    fr_vec3 ta = fr_v3_add(mo, fr_v3_cross(fr_v3_sub(o, a->pose.p), fr_v3_scale(n, -N)));
    ta = fr_v3_add(ta, fr_v3_cross(fr_v3_sub(c3, a->pose.p), fric));
    ta = fr_v3_mad(ta, tau, n);
    out->force_a = fa;
    out->torque_a = ta;
    out->force_b = fr_v3_neg(fa);
    out->torque_b = fr_v3_neg(fr_v3_add(ta, fr_v3_cross(fr_v3_sub(a->pose.p, b->pose.p), fa)));
    out->point = c3;
    out->mean_depth = mean;
    out->volume = V;
    out->normal_force = N;
    out->friction_force = fric;
    out->friction_torque = tau;
    out->friction_limit = sliding ? Fk : Fs;
    out->spin_radius = rbar;
    out->sliding = sliding;

    /* ---- linearisation about c */
    double gx = Ax - cx * A, gy = Ay - cy * A;
    double ixx = Axx - 2.0 * cx * Ax + cx * cx * A;
    double iyy = Ayy - 2.0 * cy * Ay + cy * cy * A;
    double ixy = Axy - cx * Ay - cy * Ax + cx * cy * A;
    double kk = (p->law == FR_CONTACT_MEAN_DEPTH ? p->stiff_n / A : keff) * cap;
    bool fr_on = !sliding && Fs > 0.0;
    linearisation(&out->K, &out->D, kk, cd * dscale * cap, fr_on ? Kt : 0.0, fr_on ? Dt : 0.0,
                  Kr > 0.0 ? rho2 : 0.0, n, t1, t2, A, gx, gy, ixx, ixy, iyy);
    *linearised = true;

    /* ---- state for the next tick: re-anchor the bond at c */
    st->active = 1;
    st->sliding = sliding;
    st->normal = n;
    st->anchor_a = fr_pose_apply_inv(a->pose, c3);
    st->anchor_b = fr_pose_apply_inv(b->pose, fr_v3_sub(c3, u));
    fr_vec3 ea =
        fr_v3_add(fr_v3_scale(eref, cos(phi)), fr_v3_scale(fr_v3_cross(n, eref), sin(phi)));
    st->axis_a = fr_q_unrotate(a->pose.q, ea);
    st->axis_b = fr_q_unrotate(b->pose.q, eref);
    st->mean_depth = mean;
    st->max_depth = extent;
    return FR_OK;
}

int fr_contact_eval_ex(const fr_contact_params *p, const fr_polyhedron_out *poly,
                       const fr_contact_body *a, const fr_contact_body *b, fr_contact_state *st,
                       fr_contact_result *out, unsigned flags)
{
    if (!out) return FR_ERR_INVAL;
    /* a full evaluation sets every field; the 6×6 blocks are cleared only when it stops early */
    memset(out, 0, offsetof(fr_contact_result, K));
    bool linearised = false;
    int err = eval(p, poly, a, b, st, out, &linearised, flags);
    if (!linearised) {
        memset(&out->K, 0, sizeof out->K);
        memset(&out->D, 0, sizeof out->D);
    }
    return err;
}

int fr_contact_eval(const fr_contact_params *p, const fr_polyhedron_out *poly,
                    const fr_contact_body *a, const fr_contact_body *b, fr_contact_state *st,
                    fr_contact_result *out)
{
    return fr_contact_eval_ex(p, poly, a, b, st, out, 0u);
}

/* X = [1 0; −[r]× 1] maps ν = (ω; v) to the twist at a point r away: (ω; v + ω × r). */

/* a·b for a 3×3 block a of a 6×6 (at r0, c0) and b with a zero diagonal (a skew matrix): the
 * products with b's diagonal are left out (each is ±0 and adds nothing to the sums). */
static inline fr_mat3 mul_zd_right(const fr_mat6 *m, int r0, int c0, const fr_mat3 *b)
{
    fr_mat3 c;
    for (int i = 0; i < 3; i++) {
        const double *a = &m->m[r0 + i][c0];
        c.m[i][0] = a[1] * b->m[1][0] + a[2] * b->m[2][0];
        c.m[i][1] = a[0] * b->m[0][1] + a[2] * b->m[2][1];
        c.m[i][2] = a[0] * b->m[0][2] + a[1] * b->m[1][2];
    }
    return c;
}

/* a·b for a with a zero diagonal (a skew matrix), likewise */
static inline fr_mat3 mul_zd_left(const fr_mat3 *a, const fr_mat3 *b)
{
    fr_mat3 c;
    for (int j = 0; j < 3; j++) {
        c.m[0][j] = a->m[0][1] * b->m[1][j] + a->m[0][2] * b->m[2][j];
        c.m[1][j] = a->m[1][0] * b->m[0][j] + a->m[1][2] * b->m[2][j];
        c.m[2][j] = a->m[2][0] * b->m[0][j] + a->m[2][1] * b->m[1][j];
    }
    return c;
}

/*
 * out = s·X_pᵀ K X_q with X_r = [1 0; −[r]× 1] (ν = (ω; v_com) ↦ the twist at the point r away
 * from the centre of mass). Block form, K = [A B; C D]: with R = −[r_q]× and X_pᵀ = [1 [r_p]×; 0
 * 1], X_pᵀ K X_q = [A + B R + [r_p]×(C + D R),  B + [r_p]× D;  C + D R,  D] — four 3×3 products
 * with skew factors instead of two dense 6×6 ones (this runs for every contact every tick).
 */
/* For p = q of a symmetric K (the diagonal blocks aa, bb) the result is symmetric: its lower
 * triangle and its top-right block (the bottom-left one transposed) are copied instead of formed
 * (the same up to rounding; the block is then exactly symmetric). */
static void sandwich_sym(fr_vec3 r, const fr_mat6 *K, fr_mat6 *out)
{
    const fr_mat3 R = fr_m3_scale(fr_m3_skew(r), -1.0), P = fr_m3_skew(r);
    fr_mat3 CDR = mul_zd_right(K, 3, 3, &R), BR = mul_zd_right(K, 0, 3, &R), PCDR;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) CDR.m[i][j] = K->m[3 + i][j] + CDR.m[i][j];
    PCDR = mul_zd_left(&P, &CDR);
    for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
            out->m[i][j] = (K->m[i][j] + BR.m[i][j]) + PCDR.m[i][j];
            out->m[j][i] = out->m[i][j];
        }
        for (int j = 0; j < 3; j++) {
            out->m[3 + i][j] = CDR.m[i][j];
            out->m[j][3 + i] = CDR.m[i][j];
            out->m[3 + i][3 + j] = K->m[3 + i][3 + j];
        }
    }
}

static void sandwich(fr_vec3 rp, const fr_mat6 *K, fr_vec3 rq, double s, fr_mat6 *out)
{
    const fr_mat3 R = fr_m3_scale(fr_m3_skew(rq), -1.0), P = fr_m3_skew(rp);
    fr_mat3 CDR = mul_zd_right(K, 3, 3, &R), BR = mul_zd_right(K, 0, 3, &R), PD, PCDR;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) CDR.m[i][j] = K->m[3 + i][j] + CDR.m[i][j];
    PCDR = mul_zd_left(&P, &CDR);
    fr_mat3 D;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) D.m[i][j] = K->m[3 + i][3 + j];
    PD = mul_zd_left(&P, &D);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out->m[i][j] = s * ((K->m[i][j] + BR.m[i][j]) + PCDR.m[i][j]);
            out->m[i][3 + j] = s * (K->m[i][3 + j] + PD.m[i][j]);
            out->m[3 + i][j] = s * CDR.m[i][j];
            out->m[3 + i][3 + j] = s * D.m[i][j];
        }
}

void fr_contact_blocks(const fr_mat6 *Kc, fr_vec3 point, fr_vec3 com_a, fr_vec3 com_b, fr_mat6 *aa,
                       fr_mat6 *ab, fr_mat6 *bb)
{
    fr_vec3 ra = fr_v3_sub(point, com_a), rb = fr_v3_sub(point, com_b);
    if (aa) sandwich_sym(ra, Kc, aa);
    if (ab) sandwich(ra, Kc, rb, -1.0, ab);
    if (bb) sandwich_sym(rb, Kc, bb);
}
