/*
 * The explicit contact evaluation (fr_contact_eval: forces of the current state, the friction
 * bond advanced by one tick, the linearisation K, D) and the bodies' blocks of a 6×6 contact
 * matrix (fr_contact_blocks). See include/fureru/contact.h and docs/contact.md.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "contact_internal.h"
#include "fureru/base.h"

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

    fr_vec3 prior = st->active ? st->normal : fr_v3_normalize(fr_v3_sub(b->pose.p, a->pose.p));
    fri_patch pt;
    if (fri_patch_compute(poly, prior, p->normal_blend, &pt) != FR_OK) {
        fr_contact_state_reset(st);
        return FR_ERR_NUMERIC;
    }
    const fr_vec3 o = pt.o, n = pt.n, t1 = pt.t1, t2 = pt.t2;
    const double V = pt.V, A = pt.A, extent = pt.extent;
    const double Qx = pt.Qx, Qy = pt.Qy, Ax = pt.Ax, Ay = pt.Ay;
    const double Axx = pt.Axx, Axy = pt.Axy, Ayy = pt.Ayy;

    out->in_contact = 1;
    out->normal = n;
    out->max_depth = extent;
    out->area = A;
    if (!pt.has_volume) {
        /* touching with no volume: no force; the friction bond restarts */
        out->point = o;
        out->force_b = fr_v3_zero();
        out->sliding = 1;
        fr_contact_state_reset(st);
        st->active = 1;
        st->sliding = 1;
        st->normal = n;
        fri_bond_write(st, a, b, n, o, fr_v3_zero(), 0.0, t1);
        return FR_OK;
    }

    /* ---- normal pressure p = k·t + c·s·ṫ */
    double mean = pt.mean;
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

    const double cx = pt.cx, cy = pt.cy, rbar = pt.rbar, rho2 = pt.rho2;
    const fr_vec3 c3 = pt.c3;

    /* ---- friction: aggregated bond (tangential + spin spring-damper) at c, ellipse limit */
    double Kt = p->stiff_t, Dt = p->damp_t;
    if (p->law == FR_CONTACT_VOLUME) {
        Kt *= A;
        Dt *= A;
    }
    double Kr = Kt * rho2, Dr = Dt * rho2;
    fr_vec3 u, eref;
    double phi;
    fri_bond_read(st, a, b, n, c3, t1, &u, &phi, &eref, NULL);
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
        bool stick =
            sliding ? fri_ellipse(fm, tau, Fk, Mk) <= 1.0 : fri_ellipse(fm, tau, Fs, Ms) <= 1.0;
        if (stick) {
            sliding = 0;
        } else {
            sliding = 1;
            double gk = fri_ellipse(fm, tau, Fk, Mk);
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
    fri_bond_write(st, a, b, n, c3, u, phi, eref);
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
