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
#include "fureru/world.h"
#include "fureru/contact.h"
#include "world/world_internal.h"
static fr_world *W;
static fri_pair *PP;
static int BLK; /* block slot, 0: A, 1: B */
static void build(fr_pose pa, fr_pose pb, fr_contact_state *st, fr_contact_model *m)
{
    fri_shape_inst *sa = &W->shapes[PP->sa], *sb = &W->shapes[PP->sb];
    fr_pose wa = fr_pose_mul(pa, sa->local), wb = fr_pose_mul(pb, sb->local);
    fr_collide_cache cc = PP->cache;
    fr_collide_pair(sa->shape, wa, sb->shape, wb, &cc, &W->cw, &W->poly);
    fr_contact_body ca = {pa, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
                    cb = {pb, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    fr_contact_model_build(&PP->params, &W->poly, 0.0, NULL, 0.0, &ca, &cb, W->def.dt, st, m);
}
/* N, moments about c0 along t1_0, t2_0 */
static void nm(const fr_contact_model *m, const double *e, const fr_contact_model *m0,
               double out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (int q = 0; q < 5; q++) {
        fr_vec3 P = fr_v3_add(
            m->point, fr_v3_add(fr_v3_scale(m->t1, m->px[q]), fr_v3_scale(m->t2, m->py[q])));
        fr_vec3 d = fr_v3_sub(P, m0->point);
        out[0] += e[q];
        out[1] += e[q] * fr_v3_dot(d, m0->t1);
        out[2] += e[q] * fr_v3_dot(d, m0->t2);
    }
}
static double SX, SY, SZ;
static double RPLAW(const fr_contact_model *m, double t)
{
    if (!(t > 0)) return 0;
    return fr_contact_pressure(m->k, m->ds, t, NULL) - m->k * t;
}
/* exact: grid over the block's bottom face, depth = -z, pressure along +z; N and moments about c0
 */
static void exact(fr_pose bp, const fr_contact_model *m0, double out[3])
{
    int G = 600;
    out[0] = out[1] = out[2] = 0;
    double dA = SX * SY / ((double)G * G);
    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++) {
            fr_vec3 l = {((i + 0.5) / G - 0.5) * SX, ((j + 0.5) / G - 0.5) * SY, -SZ / 2};
            fr_vec3 P = fr_pose_apply(bp, l);
            if (P.z >= 0) continue;
            double sl, pr = fr_contact_pressure(m0->k, m0->ds, -P.z, &sl);
            double f = pr * dA;
            fr_vec3 d = fr_v3_sub(P, m0->point);
            out[0] += f;
            out[1] += f * fr_v3_dot(d, m0->t1);
            out[2] += f * fr_v3_dot(d, m0->t2);
        }
}

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
int main(int argc, char **argv)
{
    double sx = atof(argv[1]), sy = atof(argv[2]), sz = atof(argv[3]), yaw = atof(argv[4]),
           mass = atof(argv[5]), dt = atof(argv[6]), thd = atof(argv[7]), eps = atof(argv[8]);
    long nstep = atol(argv[9]);
    SX = sx;
    SY = sy;
    SZ = sz;
    double th = thd * M_PI / 180, g = 9.81, mu = tan(th) + eps;
    char b[12][200];
    int n = 0;
    snprintf(b[n++], 200, "world.dt=%g", dt);
    snprintf(b[n++], 200, "world.gravity=[%.17g, 0, %.17g]", g * sin(th), -g * cos(th));
    snprintf(b[n++], 200, "materials.0.mu_s=%.17g", mu);
    snprintf(b[n++], 200, "materials.0.mu_k=%.17g", mu);
    snprintf(b[n++], 200, "materials.1.mu_s=%.17g", mu);
    snprintf(b[n++], 200, "materials.1.mu_k=%.17g", mu);
    snprintf(b[n++], 200, "bodies.block.shapes.0.size=[%.17g, %.17g, %.17g]", sx, sy, sz);
    snprintf(b[n++], 200, "bodies.block.position=[0, 0, %.17g]", sz / 2);
    snprintf(b[n++], 200, "bodies.block.rpy=[0, 0, %.17g]", yaw);
    snprintf(b[n++], 200, "bodies.block.mass=%.17g", mass);
    snprintf(b[n++], 200, "world.settle=false");
    const char *sets[12];
    for (int i = 0; i < n; i++) sets[i] = b[i];
    fr_scene *s = NULL;
    fr_diag dg;
    if (fr_scene_load(ROOT "/config/scenes/slope.yaml", sets, n, &s, &dg)) {
        printf("loadfail %s\n", dg.msg);
        return 1;
    }
    W = fr_scene_world(s);
    for (long i = 0; i < nstep; i++) fr_world_step(W);
    PP = NULL;
    for (int c = 0; c < W->ncontacts; c++) PP = &W->pairs[W->contacts[c]];
    BLK = W->model[PP->slot_a].inv_mass > 0 ? 0 : 1;
    int slot = BLK ? PP->slot_b : PP->slot_a;
    fr_pose pa = W->state[PP->slot_a].pose, pb = W->state[PP->slot_b].pose;
    fr_vec3 com = W->state[slot].pose.p;
    fr_contact_state st = PP->st;
    fr_contact_model m0;
    build(pa, pb, &st, &m0);
    fr_pose bp0 = W->state[slot].pose;
    /* slope direction of the thickness: from the face's tilt: gradient of depth in the plane */
    double t00, tx, ty;
    fr_vec3 c = fr_pose_apply(bp0, fr_v3(0, 0, -SZ / 2));
    face_at(bp0, c.x, c.y, &t00);
    face_at(bp0, c.x + 1e-5, c.y, &tx);
    face_at(bp0, c.x, c.y + 1e-5, &ty);
    fr_vec3 e = fr_v3_normalize(fr_v3(tx - t00, ty - t00, 0));
    rule R0;
    make_rule(bp0, e, &R0);
    double f0[2 * NJ];
    for (int q = 0; q < R0.n; q++)
        f0[q] = R0.w[q] * fr_contact_pressure(m0.k, m0.ds, R0.t[q], NULL);
    double base[3], be[3];
    nmr(&R0, f0, &m0, base);
    exact(bp0, &m0, be);
    printf("rule pts %d: N %.6e M %+.4e %+.4e | exact N %.6e M %+.4e %+.4e\n", R0.n, base[0],
           base[1], base[2], be[0], be[1], be[2]);
    double ea = 1e-6, el = ea * sz;
    double KT[3][3], KL[3][3], KE[3][3];
    fr_vec3 ax[3] = {m0.t1, m0.t2, m0.normal};
    for (int k = 0; k < 3; k++) {
        double t[2][3], l[2][3], x[2][3];
        for (int sg = 0; sg < 2; sg++) {
            double ee = sg ? -1 : 1;
            fr_vec3 rv = {0, 0, 0}, tv = {0, 0, 0};
            if (k < 2)
                rv = fr_v3_scale(ax[k], ee * ea);
            else
                tv = fr_v3_scale(ax[2], ee * el);
            fr_pose pp = bp0;
            fr_vec3 r = fr_v3_sub(pp.p, m0.point);
            pp.q = fr_q_normalize(fr_q_mul(fr_q_exp(rv), pp.q));
            pp.p = fr_v3_add(fr_v3_add(m0.point, fr_q_rotate(fr_q_exp(rv), r)), tv);
            /* fresh: a new rule at pp (same slope direction rule) */
            double a0, ax2, ay2;
            fr_vec3 cc = fr_pose_apply(pp, fr_v3(0, 0, -SZ / 2));
            face_at(pp, cc.x, cc.y, &a0);
            face_at(pp, cc.x + 1e-5, cc.y, &ax2);
            face_at(pp, cc.x, cc.y + 1e-5, &ay2);
            fr_vec3 e1 = fr_v3_normalize(fr_v3(ax2 - a0, ay2 - a0, 0));
            rule R1;
            make_rule(pp, e1, &R1);
            double f1[2 * NJ];
            for (int q = 0; q < R1.n; q++)
                f1[q] = R1.w[q] * fr_contact_pressure(m0.k, m0.ds, R1.t[q], NULL);
            nmr(&R1, f1, &m0, t[sg]);
            /* lin: R0's points, depths at the perturbed pose */
            double fl[2 * NJ];
            for (int q = 0; q < R0.n; q++) {
                double tq = 0;
                if (!face_at(pp, R0.x[q], R0.y[q], &tq)) tq = R0.t[q];
                fl[q] = R0.w[q] * fr_contact_pressure(m0.k, m0.ds, tq, NULL);
            }
            nmr(&R0, fl, &m0, l[sg]);
            exact(pp, &m0, x[sg]);
        }
        double hh = 2 * (k < 2 ? ea : el);
        for (int j = 0; j < 3; j++) {
            KT[j][k] = (t[0][j] - t[1][j]) / hh;
            KL[j][k] = (l[0][j] - l[1][j]) / hh;
            KE[j][k] = (x[0][j] - x[1][j]) / hh;
        }
    }
    for (int j = 0; j < 3; j++)
        printf("  fresh %+.4e %+.4e %+.4e | lin %+.4e %+.4e %+.4e | exact %+.4e %+.4e %+.4e\n",
               KT[j][0], KT[j][1], KT[j][2], KL[j][0], KL[j][1], KL[j][2], KE[j][0], KE[j][1],
               KE[j][2]);
    double mass_b = W->model[slot].mass;
    fr_mat3 Ib = W->model[slot].inertia;
    double G[3][3];
    fr_vec3 r = fr_v3_sub(com, m0.point);
    for (int a2 = 0; a2 < 3; a2++)
        for (int c2 = 0; c2 < 3; c2++) {
            fr_vec3 wa = a2 < 2 ? ax[a2] : fr_v3(0, 0, 0),
                    va = a2 < 2 ? fr_v3_cross(ax[a2], r) : ax[2];
            fr_vec3 wc = c2 < 2 ? ax[c2] : fr_v3(0, 0, 0),
                    vc = c2 < 2 ? fr_v3_cross(ax[c2], r) : ax[2];
            fr_vec3 wab = fr_q_unrotate(bp0.q, wa), wcb = fr_q_unrotate(bp0.q, wc);
            G[a2][c2] = mass_b * fr_v3_dot(va, vc) + fr_v3_dot(wab, fr_m3_mulv(Ib, wcb));
        }
    printf("G");
    for (int a2 = 0; a2 < 3; a2++)
        for (int c2 = 0; c2 < 3; c2++) printf(" %.6e", G[a2][c2]);
    printf("\n");
    printf("DK");
    for (int a2 = 0; a2 < 3; a2++)
        for (int c2 = 0; c2 < 3; c2++) printf(" %.6e", KE[a2][c2] - KL[a2][c2]);
    printf("\n");
    printf("KL");
    for (int a2 = 0; a2 < 3; a2++)
        for (int c2 = 0; c2 < 3; c2++) printf(" %.6e", KL[a2][c2]);
    printf("\n");
    printf("dt %g\n", dt);
    return 0;
}
