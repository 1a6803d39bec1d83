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
    if (getenv("NOSETTLE")) snprintf(b[n++], 200, "world.settle=false");
    const char *sets[12];
    for (int i = 0; i < n; i++) sets[i] = b[i];
    fr_scene *s = NULL;
    fr_diag dg;
    if (fr_scene_load(ROOT "/config/scenes/slope.yaml", sets, n, &s, &dg)) {
        printf("loadfail %s\n", dg.msg);
        return 1;
    }
    W = fr_scene_world(s);
    printf("settle: %s\n", fr_world_settle_note(W));
    for (long i = 0; i < nstep; i++) fr_world_step(W);
    PP = NULL;
    for (int c = 0; c < W->ncontacts; c++) PP = &W->pairs[W->contacts[c]];
    if (!PP) {
        printf("no contact\n");
        return 1;
    }
    BLK = W->model[PP->slot_a].inv_mass > 0 ? 0 : 1;
    int slot = BLK ? PP->slot_b : PP->slot_a;
    fr_pose pa = W->state[PP->slot_a].pose, pb = W->state[PP->slot_b].pose;
    fr_vec3 com = W->state[slot].pose.p;
    fr_contact_state st = PP->st;
    fr_contact_model m0;
    build(pa, pb, &st, &m0);
    printf("block is %s; m0 npts %d area %.3e depth0/ds %.3f qbeta %.3e %.3e\n", BLK ? "B" : "A",
           m0.npts, m0.area, m0.depth0 / m0.ds, m0.qbeta[0], m0.qbeta[1]);
    for (int q = 0; q < 5; q++)
        printf("  q%d (%+.4e,%+.4e) w %.3e t/ds %.4f n0 %.4e\n", q, m0.px[q], m0.py[q], m0.pw[q],
               m0.pt0[q] / m0.ds, m0.pn0[q]);
    double base[3];
    nm(&m0, m0.pn0, &m0, base);
    double be[3];
    exact(W->state[slot].pose, &m0, be);
    printf("base model N %.6e M %+.4e %+.4e | exact N %.6e M %+.4e %+.4e\n", base[0], base[1],
           base[2], be[0], be[1], be[2]);
    const char *nmz[6] = {"rx", "ry", "rz", "tx", "ty", "tz"};
    double ea = atof(getenv("EA") ? getenv("EA") : "1e-6"), el = ea * sz;
    for (int k = 0; k < 6; k++) {
        double Kt[3], Kl[3], Ke[3], pl[3][2];
        for (int sg = 0; sg < 2; sg++) {
            double e = sg ? -1 : 1;
            fr_vec3 rv = {0, 0, 0}, tv = {0, 0, 0};
            if (k < 3)
                (&rv.x)[k] = e * ea;
            else
                (&tv.x)[k - 3] = e * el;
            /* perturbed block pose: rotate about its COM */
            fr_pose pp = W->state[slot].pose;
            fr_quat dq = fr_q_exp(rv);
            pp.q = fr_q_normalize(fr_q_mul(dq, pp.q));
            pp.p = fr_v3_add(pp.p, tv);
            fr_contact_state s2 = PP->st;
            fr_contact_model m1;
            build(BLK ? pa : pp, BLK ? pp : pb, &s2, &m1);
            double t[3];
            nm(&m1, m1.pn0, &m0, t);
            /* model response: relative twist of A wrt B at c, over h = dt */
            fr_vec3 om = rv, vc = fr_v3_add(tv, fr_v3_cross(rv, fr_v3_sub(m0.point, com)));
            if (BLK) {
                om = fr_v3_scale(om, -1);
                vc = fr_v3_scale(vc, -1);
            }
            fr_svec tw = {fr_v3_scale(om, 1 / dt), fr_v3_scale(vc, 1 / dt)};
            double y[6];
            fr_contact_model_local(&m0, tw, y);
            fr_contact_response r;
            fr_contact_respond(&m0, y, dt, mu, NULL, -1, 0, &r);
            double l[3];
            nm(&m0, r.elastic, &m0, l);
            double ex[3];
            exact(pp, &m0, ex);
            for (int j = 0; j < 3; j++) {
                pl[j][sg] = t[j];
                if (!sg) {
                    Kt[j] = t[j];
                    Kl[j] = l[j];
                    Ke[j] = ex[j];
                } else {
                    Kt[j] = (Kt[j] - t[j]) / (2 * (k < 3 ? ea : el));
                    Kl[j] = (Kl[j] - l[j]) / (2 * (k < 3 ? ea : el));
                    Ke[j] = (Ke[j] - ex[j]) / (2 * (k < 3 ? ea : el));
                }
            }
        }
        printf("%s: true dN %+.4e dM1 %+.4e dM2 %+.4e | lin dN %+.4e dM1 %+.4e dM2 %+.4e\n", nmz[k],
               Kt[0], Kt[1], Kt[2], Kl[0], Kl[1], Kl[2]);
        printf("    exact dN %+.4e dM1 %+.4e dM2 %+.4e\n", Ke[0], Ke[1], Ke[2]);
        (void)pl;
    }
    /* local: rotations about t1, t2 through c0, translation along n; outputs N, M about t1 (=-M2?),
     * use raw N,M1,M2 */
    double KT[3][3], KL[3][3], KE[3][3];
    fr_vec3 ax[3] = {m0.t1, m0.t2, m0.normal};
    for (int k = 0; k < 3; k++) {
        double t[2][3], l[2][3], x[2][3];
        for (int sg = 0; sg < 2; sg++) {
            double e = sg ? -1 : 1;
            fr_vec3 rv = {0, 0, 0}, tv = {0, 0, 0};
            if (k < 2)
                rv = fr_v3_scale(ax[k], e * ea);
            else
                tv = fr_v3_scale(ax[2], e * el);
            fr_pose pp = W->state[slot].pose;
            /* rotation about the axis through c0 */
            fr_vec3 r = fr_v3_sub(pp.p, m0.point);
            pp.q = fr_q_normalize(fr_q_mul(fr_q_exp(rv), pp.q));
            pp.p = fr_v3_add(fr_v3_add(m0.point, fr_q_rotate(fr_q_exp(rv), r)), tv);
            fr_contact_state s2 = PP->st;
            fr_contact_model m1;
            build(BLK ? pa : pp, BLK ? pp : pb, &s2, &m1);
            nm(&m1, m1.pn0, &m0, t[sg]);
            fr_vec3 om = rv, vc = tv; /* at c0 the rotation moves nothing */
            if (BLK) {
                om = fr_v3_scale(om, -1);
                vc = fr_v3_scale(vc, -1);
            }
            fr_svec tw = {fr_v3_scale(om, 1 / dt), fr_v3_scale(vc, 1 / dt)};
            double y[6];
            fr_contact_model_local(&m0, tw, y);
            fr_contact_response r2;
            fr_contact_respond(&m0, y, dt, mu, NULL, -1, 0, &r2);
            nm(&m0, r2.elastic, &m0, l[sg]);
            exact(pp, &m0, x[sg]);
        }
        double hh = 2 * (k < 2 ? ea : el);
        for (int j = 0; j < 3; j++) {
            KT[j][k] = (t[0][j] - t[1][j]) / hh;
            KL[j][k] = (l[0][j] - l[1][j]) / hh;
            KE[j][k] = (x[0][j] - x[1][j]) / hh;
        }
    }
    printf("local K (rows N, M1=sum f*x1, M2; cols rot t1, rot t2, n):\n");
    for (int j = 0; j < 3; j++)
        printf("  fresh %+.4e %+.4e %+.4e | lin %+.4e %+.4e %+.4e | exact %+.4e %+.4e %+.4e\n",
               KT[j][0], KT[j][1], KT[j][2], KL[j][0], KL[j][1], KL[j][2], KE[j][0], KE[j][1],
               KE[j][2]);
    /* generalized mass of the block in (rot t1, rot t2, n) about c0 */
    double mass_b = W->model[slot].mass;
    fr_mat3 Ib = W->model[slot].inertia; /* body axes */
    double G[3][3];
    fr_vec3 r = fr_v3_sub(com, m0.point);
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
            fr_vec3 wa = a < 2 ? ax[a] : fr_v3(0, 0, 0), va = a < 2 ? fr_v3_cross(ax[a], r) : ax[2];
            fr_vec3 wc = c < 2 ? ax[c] : fr_v3(0, 0, 0), vc = c < 2 ? fr_v3_cross(ax[c], r) : ax[2];
            fr_vec3 wab = fr_q_unrotate(W->state[slot].pose.q, wa),
                    wcb = fr_q_unrotate(W->state[slot].pose.q, wc);
            fr_vec3 Iw = fr_m3_mulv(Ib, wcb);
            G[a][c] = mass_b * fr_v3_dot(va, vc) + fr_v3_dot(wab, Iw);
        }
    /* generalized forces from (N, M1, M2): N acts along n on A? the block is B; force on B from
       pressure: +N along -n? just use the moments' work pairing: rotation about t1 by th moves a
       point at (x1,x2) along n by -x2*th? compute properly: d(depth)... skip signs: print dt^2 *
       G^-1 * dK, eigen via python */
    printf("G");
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) printf(" %.6e", G[a][c]);
    printf("\n");
    printf("DK");
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) printf(" %.6e", KE[a][c] - KL[a][c]);
    printf("\n");
    printf("KL");
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) printf(" %.6e", KL[a][c]);
    printf("\n");
    printf("dt %g\n", dt);
    return 0;
}
