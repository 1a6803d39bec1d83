/* A free body on a robot's link: its motion eliminated from the tree's Newton step (robots.c;
 * docs/robots.md, "A free body on a link"). */
#include "world_internal.h"

/*
 * A free body touching a link is not a wall to the tree: over the step it moves under its own
 * forces and under the pair's wrench. The tree's step takes the body's motion in directions E of
 * the pair, z = Eᵀ·(its twist at the point c), as the solution of its own equation
 *   z = z_free − h·G·Eᵀ·W(t_l, z),
 * z_free after a step of its gravity, applied forces and implicit springs, W the wrench on the
 * link (τ about c; f), G = Eᵀ·X·M⁻¹·Xᵀ·E the body's mobility in them (its other contacts not in
 * it: robots.c eliminates a body only where nothing else holds it, pair_holds). Eliminated from
 * the pair's Newton step (∂Eᵀ·W/∂z = S_r/h, S_r = Eᵀ·S·E) the link sees the tangent and the wrench
 *   S' = S − S·E·(G⁻¹ + S_r)⁻¹·Eᵀ·S,   W' = W + S·E·(1 + G·S_r)⁻¹·ρ/h,
 * ρ = z_free − z − h·G·Eᵀ·W the body's residual, and after the tree's step z follows by the same
 * Newton step (fri_link_body_follow). E is all six directions while the pair sticks (the bond's
 * tangent is smooth: a box on the hexapod's back rests to 1e-9 m/s, where it trembled at 0.5 mm/s)
 * and the pressing three while it slips, (t1; 0), (t2; 0), (0; n): the body's tilt about the
 * patch's tangents and its normal velocity at c (with the normal alone a box landing on an edge
 * was predicted to bounce where its own solve turned it onto its face). A slipping contact's
 * friction turns with the slip, and a Newton step on the body's sliding velocity through it swung
 * from side to side and diverged. Taken as moving at its start velocity whatever the link did, a
 * 0.2 kg box dropped 0.5 m onto the standing hexapod gave the link a wall's impulse: the world
 * gained 4.9 J in one tick.
 */
static inline fr_svec sv_of(const double e[6])
{
    return fr_sv(fr_v3(e[0], e[1], e[2]), fr_v3(e[3], e[4], e[5]));
}

static inline void sv_put(fr_svec v, double e[6])
{
    e[0] = v.ang.x, e[1] = v.ang.y, e[2] = v.ang.z, e[3] = v.lin.x, e[4] = v.lin.y, e[5] = v.lin.z;
}

typedef struct body_press {
    int k;          /* directions: 3 (pressing) or 6 (all) */
    fr_svec col[6]; /* E's columns, wrench directions (τ about c; f), unit */
    fr_vec3 r;      /* c − the body's centre, m */
    double G[6][6]; /* mobility in z per unit impulse along E (k × k) */
    fr_svec psi[6]; /* the body's (ω; v) per unit impulse along each column */
    double z_free[6];
} body_press;

/* z_i = E_iᵀ·(the body's twist at c) */
static void press_z(const body_press *b, fr_svec nu, double z[6])
{
    const fr_svec t = fri_twist_at(nu, b->r);
    for (int i = 0; i < b->k; i++)
        z[i] = fr_v3_dot(b->col[i].ang, t.ang) + fr_v3_dot(b->col[i].lin, t.lin);
}

/* Eᵀ·W for a wrench (τ about c; f) */
static void press_w(const body_press *b, fr_svec W, double x[6])
{
    for (int i = 0; i < b->k; i++)
        x[i] = fr_v3_dot(b->col[i].ang, W.ang) + fr_v3_dot(b->col[i].lin, W.lin);
}

static body_press press_of(const fr_world *w, const fri_pair *p, int slot, int k)
{
    const fri_body_model *m = &w->model[slot];
    const fri_body_state *s = &w->state[slot];
    const double h = w->h;
    const fr_mat3 Iinv = fr_m3_rotate(fr_q_to_m3(s->pose.q), m->inv_inertia);
    /* implicit springs (a device's proxy) stiffen and damp it over the step */
    const double meff = m->mass + h * s->imp_c + h * h * s->imp_k;
    body_press b;
    b.k = k;
    if (k == 3) {
        b.col[0] = fr_sv(p->model.t1, fr_v3_zero());
        b.col[1] = fr_sv(p->model.t2, fr_v3_zero());
        b.col[2] = fr_sv(fr_v3_zero(), p->model.normal);
    } else {
        for (int j = 0; j < 6; j++) {
            double e[6] = {0};
            e[j] = 1.0;
            b.col[j] = sv_of(e);
        }
    }
    b.r = fr_v3_sub(p->model.point, s->pose.p);
    for (int j = 0; j < k; j++) {
        fr_vec3 tau = fr_v3_add(b.col[j].ang, fr_v3_cross(b.r, b.col[j].lin));
        b.psi[j] = fr_sv(fr_m3_mulv(Iinv, tau), fr_v3_scale(b.col[j].lin, 1.0 / meff));
        double z[6];
        press_z(&b, b.psi[j], z);
        for (int i = 0; i < k; i++) b.G[i][j] = z[i];
    }
    fr_vec3 mom = fr_v3_add(
        fr_v3_scale(s->vel, m->mass),
        fr_v3_scale(fr_v3_add(fr_v3_mad(s->force, m->mass, w->def.gravity), s->imp_f), h));
    fr_svec nu_free = fr_sv(fr_v3_add(s->angvel, fr_m3_mulv(Iinv, fr_v3_scale(s->torque, h))),
                            fr_v3_scale(mom, 1.0 / meff));
    press_z(&b, nu_free, b.z_free);
    return b;
}

/* A·X = B, A k × k in A[i][0..k), nb right-hand columns in A[i][k..k+nb); Gauss–Jordan with
 * partial pivoting, X left in place of B. Returns false on a zero pivot. */
static bool press_solve(int k, int nb, double A[6][18])
{
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int i = c + 1; i < k; i++)
            if (fabs(A[i][c]) > fabs(A[piv][c])) piv = i;
        if (!(fabs(A[piv][c]) > 0.0)) return false;
        if (piv != c)
            for (int j = 0; j < k + nb; j++) {
                double t = A[c][j];
                A[c][j] = A[piv][j];
                A[piv][j] = t;
            }
        const double inv = 1.0 / A[c][c];
        for (int j = 0; j < k + nb; j++) A[c][j] *= inv;
        for (int i = 0; i < k; i++) {
            if (i == c || A[i][c] == 0.0) continue;
            const double f = A[i][c];
            for (int j = 0; j < k + nb; j++) A[i][j] -= f * A[c][j];
        }
    }
    return true;
}

/* S·E (by columns) and S_r = Eᵀ·S·E. */
static void press_S(const body_press *b, const fr_mat6 *S, fr_svec SE[6], double Sr[6][6])
{
    for (int j = 0; j < b->k; j++) {
        SE[j] = fr_m6_mulv(S, b->col[j]);
        double c[6];
        press_w(b, SE[j], c);
        for (int i = 0; i < b->k; i++) Sr[i][j] = c[i];
    }
}

/* x = (1 + G·S_r)⁻¹·v */
static bool press_apply(const body_press *b, double Sr[6][6], const double v[6], double x[6])
{
    double A[6][18];
    const int k = b->k;
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < k; j++) {
            double gs = i == j ? 1.0 : 0.0;
            for (int q = 0; q < k; q++) gs += b->G[i][q] * Sr[q][j];
            A[i][j] = gs;
        }
        A[i][k] = v[i];
    }
    if (!press_solve(k, 1, A)) return false;
    for (int i = 0; i < k; i++) x[i] = A[i][k];
    return true;
}

/* ρ = z_free − z − h·G·Eᵀ·W */
static void press_residual(const body_press *b, fr_svec nu, fr_svec W, double h, double rho[6])
{
    double z[6], ew[6];
    press_z(b, nu, z);
    press_w(b, W, ew);
    for (int i = 0; i < b->k; i++) {
        double g = 0.0;
        for (int q = 0; q < b->k; q++) g += b->G[i][q] * ew[q];
        rho[i] = b->z_free[i] - z[i] - h * g;
    }
}

/* The directions the pair's Newton step eliminates: all six while it sticks (its tangent is the
 * bond's, smooth), the pressing three while it slips. */
int fri_link_body_dims(const fr_contact_response *rs)
{
    return rs->normal > 0.0 && !rs->slip ? 6 : 3;
}

/* The pair's tangent S (in place) and wrench W on the link with the body eliminated. */
void fri_link_body_eliminate(const fr_world *w, fri_pair *p, int other, int k, fr_mat6 *S,
                             fr_svec *W)
{
    const double h = w->h;
    body_press b = press_of(w, p, other, k);
    fr_svec SE[6];
    double Sr[6][6], rho[6], x[6], A[6][18];
    press_S(&b, S, SE, Sr);
    press_residual(&b, p->link_other_nu, *W, h, rho);
    /* K = G⁻¹ + S_r, then K⁻¹ */
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            A[i][j] = b.G[i][j];
            A[i][k + j] = i == j ? 1.0 : 0.0;
        }
    if (!press_solve(k, k, A) || !press_apply(&b, Sr, rho, x)) return;
    double K[6][18];
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            K[i][j] = A[i][k + j] + Sr[i][j];
            K[i][k + j] = i == j ? 1.0 : 0.0;
        }
    if (!press_solve(k, k, K)) return;
    p->link_k = k;
    for (int j = 0; j < k; j++) *W = fr_sv_add(*W, fr_sv_scale(SE[j], x[j] / h));
    double se[6][6];
    for (int j = 0; j < k; j++) sv_put(SE[j], se[j]);
    for (int a = 0; a < 6; a++)
        for (int c = 0; c < 6; c++) {
            double d = 0.0;
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++) d += se[i][a] * K[i][k + j] * se[j][c];
            S->m[a][c] -= d;
        }
}

/* After the tree's step moved the link's point to twist t_l: the body's z by the Newton step on
 * its equation, linearised at the iterate (wrench W_k, tangent S, link twist t_l,k):
 *   δz = (1 + G·S_r)⁻¹·(z_free − z_k − h·G·Eᵀ·(W_k − S·(t_l − t_l,k)/h)),
 * carried by the impulses G⁻¹·δz along E. */
void fri_link_body_follow(const fr_world *w, fri_pair *p, int other, fr_svec t_l)
{
    if (w->model[other].type != FR_BODY_DYNAMIC || p->link_k == 0) return;
    const double h = w->h;
    body_press b = press_of(w, p, other, p->link_k);
    const int k = b.k;
    fr_svec SE[6];
    double Sr[6][6], rho[6], dz[6], A[6][18];
    press_S(&b, &p->link_S, SE, Sr);
    fr_svec Wl = fr_sv_sub(p->link_wr,
                           fr_sv_scale(fr_m6_mulv(&p->link_S, fr_sv_sub(t_l, p->link_t)), 1.0 / h));
    press_residual(&b, p->link_other_nu, Wl, h, rho);
    if (!press_apply(&b, Sr, rho, dz)) return;
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < k; j++) A[i][j] = b.G[i][j];
        A[i][k] = dz[i];
    }
    if (!press_solve(k, 1, A)) return;
    fr_svec dnu = fr_sv_zero();
    for (int j = 0; j < k; j++) dnu = fr_sv_add(dnu, fr_sv_scale(b.psi[j], A[j][k]));
    p->link_other_nu = fr_sv_add(p->link_other_nu, dnu);
}
