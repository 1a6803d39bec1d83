/* ktest sx sy sz yaw mass dt deg eps NSTEP: the block's contact stiffness, fresh builds vs the
 * model's own response */
#include <stdio.h>
#ifndef ROOT
#define ROOT "."
#endif
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "fureru/scene.h"
#include "slope_case.h"
#include "fureru/world.h"
#include "fureru/contact.h"
#include "world/world_internal.h"
#include "stiff_common.h"

/* the face's depth at ground point (x, y): the block's bottom face above/below it; returns 0 if
 * outside the face's footprint, else the depth (>0 inside the ground, <=0 above) in *t */
static int face_at(fr_pose bp, double x, double y, double *t)
{
    /* bottom face: local z = -SZ/2; its plane in world: point c0, normal nz */
    fr_vec3 c0 = fr_pose_apply(bp, fr_v3(0, 0, -SZ / 2));
    fr_vec3 ex = fr_q_rotate(bp.q, fr_v3(1, 0, 0)), ey = fr_q_rotate(bp.q, fr_v3(0, 1, 0));
    fr_vec3 nz = fr_v3_cross(ex, ey);
    /* vertical line (x, y, z): (P - c0)·nz = 0 */
    double z = c0.z - ((x - c0.x) * nz.x + (y - c0.y) * nz.y) / nz.z;
    fr_vec3 P = {x, y, z};
    fr_vec3 d = fr_v3_sub(P, c0);
    double lx = fr_v3_dot(d, ex), ly = fr_v3_dot(d, ey);
    if (fabs(lx) > SX / 2 || fabs(ly) > SY / 2) return 0;
    *t = -z;
    return 1;
}
#define NJ 4
static const double GX[NJ] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
                              0.8611363115940526};
static const double GW[NJ] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461,
                              0.3478548451374538};
typedef struct {
    int n;
    double x[2 * NJ], y[2 * NJ], w[2 * NJ], t[2 * NJ];
} rule;
/* the 1-D rule along the slope direction e (unit, ground plane) of the lifted region */
static void make_rule(fr_pose bp, fr_vec3 e, rule *R)
{
    fr_vec3 ep = {-e.y, e.x, 0};
    fr_vec3 c = fr_pose_apply(bp, fr_v3(0, 0, -SZ / 2));
    double D = 0.75 * (SX + SY);
    /* s range: where any point across has depth > 0 */
    int NS = 4000, NU = 4000;
    double smin = 1e9, smax = -1e9;
    for (int i = 0; i < NS; i++) {
        double s = -D + 2 * D * (i + 0.5) / NS;
        for (int j = 0; j < NU; j += 8) {
            double u = -D + 2 * D * (j + 0.5) / NU, t;
            double x = c.x + s * e.x + u * ep.x, y = c.y + s * e.y + u * ep.y;
            if (face_at(bp, x, y, &t) && t > 0) {
                smin = fmin(smin, s);
                smax = fmax(smax, s);
                break;
            }
        }
    }
    smin -= D / NS;
    smax += D / NS;
    R->n = 0;
    for (int j = 0; j < NJ; j++) {
        double s = 0.5 * (smin + smax) + 0.5 * (smax - smin) * GX[j];
        double L = 0, m1 = 0, m2 = 0, du = 2 * D / NU;
        for (int k = 0; k < NU; k++) {
            double u = -D + du * (k + 0.5), t;
            double x = c.x + s * e.x + u * ep.x, y = c.y + s * e.y + u * ep.y;
            if (face_at(bp, x, y, &t) && t > 0) {
                L += du;
                m1 += u * du;
                m2 += u * u * du;
            }
        }
        if (!(L > 0)) continue;
        double mu = m1 / L, var = fmax(0, m2 / L - mu * mu), h = sqrt(var);
        double wgt = GW[j] * 0.5 * (smax - smin) * L;
        for (int sg = -1; sg <= 1; sg += 2) {
            double u = mu + sg * h;
            double x = c.x + s * e.x + u * ep.x, y = c.y + s * e.y + u * ep.y, t = 0;
            face_at(bp, x, y, &t);
            R->x[R->n] = x;
            R->y[R->n] = y;
            R->w[R->n] = 0.5 * wgt;
            R->t[R->n] = t;
            R->n++;
        }
    }
}
/* N, M1, M2 about c0 along t1, t2 (ground plane: t1, t2 of m0) from point forces */
static void nmr(const rule *R, const double *f, const fr_contact_model *m0, double out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (int q = 0; q < R->n; q++) {
        fr_vec3 d = fr_v3_sub(fr_v3(R->x[q], R->y[q], 0), m0->point);
        out[0] += f[q];
        out[1] += f[q] * fr_v3_dot(d, m0->t1);
        out[2] += f[q] * fr_v3_dot(d, m0->t2);
    }
}
/* the rule at pose bp (along the thickness' slope there) and its N, moments about m0's point */
static void rule_nm(fr_pose bp, const fr_contact_model *m0, rule *R, double out[3])
{
    double t00, tx, ty;
    fr_vec3 c = fr_pose_apply(bp, fr_v3(0, 0, -SZ / 2));
    face_at(bp, c.x, c.y, &t00);
    face_at(bp, c.x + 1e-5, c.y, &tx);
    face_at(bp, c.x, c.y + 1e-5, &ty);
    make_rule(bp, fr_v3_normalize(fr_v3(tx - t00, ty - t00, 0)), R);
    double f[2 * NJ];
    for (int q = 0; q < R->n; q++)
        f[q] = R->w[q] * fr_contact_pressure(m0->k, m0->ds, R->t[q], NULL);
    nmr(R, f, m0, out);
}

struct gctx {
    const fr_contact_model *m0;
    const rule *R0;
};
/* at a perturbed pose: the rule built there, the first rule's points with their new depths, the
 * grid */
static void geval(fr_pose pp, fr_vec3 rv, fr_vec3 tv, double t[3], double l[3], double x[3],
                  void *user)
{
    const struct gctx *c = user;
    (void)rv, (void)tv;
    rule R1;
    rule_nm(pp, c->m0, &R1, t);
    double fl[2 * NJ];
    for (int q = 0; q < c->R0->n; q++) {
        double tq = 0;
        if (!face_at(pp, c->R0->x[q], c->R0->y[q], &tq)) tq = c->R0->t[q];
        fl[q] = c->R0->w[q] * fr_contact_pressure(c->m0->k, c->m0->ds, tq, NULL);
    }
    nmr(c->R0, fl, c->m0, l);
    exact(pp, c->m0, x);
}

int main(int argc, char **argv)
{
    pair_case pc;
    if (pair_case_start(argc, argv, 1, &pc)) return 1;
    const int slot = pc.slot;
    const fr_vec3 com = pc.com;
    const double sz = pc.sz, dt = pc.dt;
    fr_contact_model m0 = pc.m0;
    fr_pose bp0 = W->state[slot].pose;
    rule R0;
    double base[3], be[3];
    rule_nm(bp0, &m0, &R0, base);
    exact(bp0, &m0, be);
    printf("rule pts %d: N %.6e M %+.4e %+.4e | exact N %.6e M %+.4e %+.4e\n", R0.n, base[0],
           base[1], base[2], be[0], be[1], be[2]);
    double ea = 1e-6, el = ea * sz;
    struct gctx c = {&m0, &R0};
    stiffness_run(bp0, &m0, ea, el, slot, com, dt, geval, &c);
    return 0;
}
