/* What ktest.c and kg.c share: the world and its one pair, a fresh model at given poses, the
 * normal force and moments of point forces about a model's point, the same over a grid on the
 * block's bottom face (the exact reference), and the generalised mass and stiffness print-out
 * that kev.py reads. */
#ifndef FR_EXPERIMENTS_STIFF_COMMON_H
#define FR_EXPERIMENTS_STIFF_COMMON_H
#include <math.h>
#include <stdio.h>

#include "fureru/contact.h"
#include "fureru/world.h"
#include "world/world_internal.h"
#include "slope_case.h"

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

/* The case of the command line stepped NSTEP (argv[9]) steps, then the world's one contact pair
 * (PP), which side the block is (BLK), the block's slot, the bodies' poses, the block's centre of
 * mass, and a model built afresh at them; 1 when there is none. */
typedef struct pair_case {
    int slot;
    fr_pose pa, pb;
    fr_vec3 com;
    double sz, dt, mu;
    fr_contact_model m0;
} pair_case;
static int pair_case_start(int argc, char **argv, int nosettle, pair_case *pc)
{
    if (argc < 10) {
        fprintf(stderr, "usage: %s sx sy sz yaw mass dt deg eps NSTEP\n", argv[0]);
        return 1;
    }
    double sx, sy;
    fr_scene *s = slope_case_args(argv, nosettle, &sx, &sy, &pc->sz, &pc->dt, &pc->mu);
    if (!s) return 1;
    SX = sx, SY = sy, SZ = pc->sz;
    W = fr_scene_world(s);
    printf("settle: %s\n", fr_world_settle_note(W));
    for (long i = 0, n = atol(argv[9]); i < n; i++) fr_world_step(W);
    PP = NULL;
    for (int c = 0; c < W->ncontacts; c++) PP = &W->pairs[W->contacts[c]];
    if (!PP) {
        printf("no contact\n");
        return 1;
    }
    BLK = W->model[PP->slot_a].inv_mass > 0 ? 0 : 1;
    pc->slot = BLK ? PP->slot_b : PP->slot_a;
    pc->pa = W->state[PP->slot_a].pose, pc->pb = W->state[PP->slot_b].pose;
    pc->com = W->state[pc->slot].pose.p;
    fr_contact_state st = PP->st;
    build(pc->pa, pc->pb, &st, &pc->m0);
    return 0;
}

/* the k-th perturbation (0, 1: a turn ea about ax[k]; 2: a move el along ax[2]) with sign sg */
static void perturbation(int k, int sg, const fr_vec3 ax[3], double ea, double el, fr_vec3 *rv,
                         fr_vec3 *tv)
{
    const double e = sg ? -1 : 1;
    *rv = *tv = fr_v3_zero();
    if (k < 2)
        *rv = fr_v3_scale(ax[k], e * ea);
    else
        *tv = fr_v3_scale(ax[2], e * el);
}

/* bp turned by rv about the axis through c, then moved by tv */
static fr_pose turned_about(fr_pose bp, fr_vec3 c, fr_vec3 rv, fr_vec3 tv)
{
    fr_vec3 r = fr_v3_sub(bp.p, c);
    bp.q = fr_q_normalize(fr_q_mul(fr_q_exp(rv), bp.q));
    bp.p = fr_v3_add(fr_v3_add(c, fr_q_rotate(fr_q_exp(rv), r)), tv);
    return bp;
}

/* the block's generalised mass in (turn about t1, turn about t2, along n) about m0's point, and
 * the stiffness matrices KE − KL (the exact less the model's) and KL, for kev.py */
static void print_gdk(int slot, fr_vec3 com, const fr_contact_model *m0, const fr_vec3 ax[3],
                      double KE[3][3], double KL[3][3], double dt)
{
    double mass_b = W->model[slot].mass;
    fr_mat3 Ib = W->model[slot].inertia;
    double G[3][3];
    fr_vec3 r = fr_v3_sub(com, m0->point);
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
            fr_vec3 wa = a < 2 ? ax[a] : fr_v3(0, 0, 0), va = a < 2 ? fr_v3_cross(ax[a], r) : ax[2];
            fr_vec3 wc = c < 2 ? ax[c] : fr_v3(0, 0, 0), vc = c < 2 ? fr_v3_cross(ax[c], r) : ax[2];
            fr_vec3 wab = fr_q_unrotate(W->state[slot].pose.q, wa),
                    wcb = fr_q_unrotate(W->state[slot].pose.q, wc);
            G[a][c] = mass_b * fr_v3_dot(va, vc) + fr_v3_dot(wab, fr_m3_mulv(Ib, wcb));
        }
    printf("G");
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) printf(" %.6e", G[a][c]);
    printf("\nDK");
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) printf(" %.6e", KE[a][c] - KL[a][c]);
    printf("\nKL");
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) printf(" %.6e", KL[a][c]);
    printf("\ndt %g\n", dt);
}
/* The stiffness matrices by central differences over the three perturbations of the block's
 * pose bp0 about m0's point: `eval` gives, at a perturbed pose, the fresh build's (t), the model's
 * (l) and the grid's (x) normal force and moments; printed with print_gdk for kev.py. */
typedef void (*stiff_eval)(fr_pose pp, fr_vec3 rv, fr_vec3 tv, double t[3], double l[3],
                           double x[3], void *user);
static void stiffness_run(fr_pose bp0, const fr_contact_model *m0, double ea, double el, int slot,
                          fr_vec3 com, double dt, stiff_eval eval, void *user)
{
    double KT[3][3], KL[3][3], KE[3][3];
    const fr_vec3 ax[3] = {m0->t1, m0->t2, m0->normal};
    for (int k = 0; k < 3; k++) {
        double t[2][3], l[2][3], x[2][3];
        for (int sg = 0; sg < 2; sg++) {
            fr_vec3 rv, tv;
            perturbation(k, sg, ax, ea, el, &rv, &tv);
            eval(turned_about(bp0, m0->point, rv, tv), rv, tv, t[sg], l[sg], x[sg], user);
        }
        const double hh = 2 * (k < 2 ? ea : el);
        for (int j = 0; j < 3; j++) {
            KT[j][k] = (t[0][j] - t[1][j]) / hh;
            KL[j][k] = (l[0][j] - l[1][j]) / hh;
            KE[j][k] = (x[0][j] - x[1][j]) / hh;
        }
    }
    printf("local K (rows N, M1 = sum f x1, M2; cols turn about t1, t2, along n):\n");
    for (int j = 0; j < 3; j++)
        printf("  fresh %+.4e %+.4e %+.4e | model %+.4e %+.4e %+.4e | exact %+.4e %+.4e %+.4e\n",
               KT[j][0], KT[j][1], KT[j][2], KL[j][0], KL[j][1], KL[j][2], KE[j][0], KE[j][1],
               KE[j][2]);
    print_gdk(slot, com, m0, ax, KE, KL, dt);
}
#endif
