/*
 * Articulated-body benchmark: ABA on a 33-DOF hexapod-like tree (free base + 27 revolute joints),
 * fureru vs Bullet's btMultiBody (double precision) when built with it, in the same run.
 *   bench_articulated [--calls N]
 *                     [--only fureru|fureru-kin|fk|step-euler|step-verlet|bullet|bullet-kin]
 * --only runs just that loop N times (for callgrind instruction counts, see callgrind.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/articulated.h"
#include "hexapod_tree.h"
#ifdef HAVE_BULLET
#include "bullet_side.h"
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static fr_tree *build(void)
{
    hex_link L[HEX_LINKS];
    hex_tree(L);
    fr_tree *t = fr_tree_create();
    for (int i = 0; i < HEX_LINKS; i++) {
        fr_link_def d = fr_link_def_default();
        d.parent = L[i].parent;
        d.type = L[i].axis < 0 ? FR_JOINT_FREE : FR_JOINT_REVOLUTE;
        d.axis = fr_v3(L[i].axis == 0, L[i].axis == 1, L[i].axis == 2);
        d.joint_pose.p = fr_v3(L[i].pos[0], L[i].pos[1], L[i].pos[2]);
        d.mass = L[i].mass;
        d.com = fr_v3(L[i].com[0], L[i].com[1], L[i].com[2]);
        d.inertia = fr_m3_diag(fr_v3(L[i].inertia[0], L[i].inertia[1], L[i].inertia[2]));
        if (i == 0) d.q0_pos = fr_v3(L[0].pos[0], L[0].pos[1], L[0].pos[2]);
        if (fr_tree_add_link(t, &d) != i) abort();
    }
    fr_tree_finalize(t);
    return t;
}

/* The benchmark cases; run_case runs one of them `calls` times. */
enum { C_ABA, C_ABA_KIN, C_FK, C_STEP_EULER, C_STEP_VERLET, C_BULLET, C_BULLET_KIN, C_N };
static const char *case_name[C_N] = {
    "fureru fr_tree_aba, q unchanged (cached link kinematics)",
    "fureru fr_tree_aba incl. link kinematics (q changes)",
    "fureru fr_tree_forward_kinematics (q changes)",
    "fureru fr_tree_step, semi-implicit Euler (with PD)",
    "fureru fr_tree_step, Verlet (with PD)",
    "Bullet computeAccelerations..MultiDof (cached links)",
    "Bullet link cache update + the same",
};

typedef struct bench_ctx {
    fr_tree *t;
    fr_tree_data *d;
    double *q_save, *qd;
    int qj; /* a q entry nudged so that link kinematics are recomputed */
#ifdef HAVE_BULLET
    bullet_tree *b;
#endif
} bench_ctx;

static void run_case(bench_ctx *x, int which, int calls)
{
    fr_tree *t = x->t;
    fr_tree_data *d = x->d;
    size_t qb = sizeof(double) * (size_t)fr_tree_nq(t), vb = sizeof(double) * (size_t)fr_tree_nv(t);
    switch (which) {
    case C_ABA:
        for (int k = 0; k < calls; k++) fr_tree_aba(t, d);
        break;
    case C_ABA_KIN:
        for (int k = 0; k < calls; k++) {
            d->q[x->qj] += k & 1 ? -1e-9 : 1e-9;
            fr_tree_aba(t, d);
        }
        break;
    case C_FK:
        for (int k = 0; k < calls; k++) {
            d->q[x->qj] += k & 1 ? -1e-9 : 1e-9;
            fr_tree_forward_kinematics(t, d);
        }
        break;
    case C_STEP_EULER:
    case C_STEP_VERLET:
        /* steps in sequence (the end-of-step kinematics serve the next step), PD holding the
         * pose, restarted every 500 steps so the free base does not fall for ever */
        d->integrator = which == C_STEP_VERLET ? FR_INTEGRATOR_VERLET : FR_INTEGRATOR_EULER;
        for (int k = 0; k < calls; k++) {
            if (k % 500 == 0) {
                memcpy(d->q, x->q_save, qb);
                memcpy(d->qd, x->qd, vb);
            }
            fr_tree_step(t, d, 1e-3);
        }
        memcpy(d->q, x->q_save, qb);
        memcpy(d->qd, x->qd, vb);
        break;
#ifdef HAVE_BULLET
    case C_BULLET:
        for (int k = 0; k < calls; k++) bullet_tree_aba(x->b);
        break;
    case C_BULLET_KIN:
        for (int k = 0; k < calls; k++) {
            bullet_tree_update_cache(x->b);
            bullet_tree_aba(x->b);
        }
        break;
#endif
    default:
        break;
    }
}

int main(int argc, char **argv)
{
    int calls = 5000;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
    }
    fr_tree *t = build();
    fr_tree_data *d = fr_tree_data_create(t);
    int nv = fr_tree_nv(t);
    /* a generic state: joint angles and rates from a fixed pseudo-random sequence */
    double q[HEX_LINKS], qd[6 + HEX_LINKS];
    unsigned s = 12345;
    for (int i = 0; i < HEX_LINKS - 1; i++) {
        s = s * 1103515245u + 12345u;
        q[i] = ((s >> 8) % 2000) / 1000.0 - 1.0;
    }
    for (int i = 0; i < nv; i++) {
        s = s * 1103515245u + 12345u;
        qd[i] = ((s >> 8) % 2000) / 1000.0 - 1.0;
    }
    for (int i = 1; i < HEX_LINKS; i++) d->q[fr_tree_link_q_index(t, i)] = q[i - 1];
    memcpy(d->qd, qd, sizeof(double) * (size_t)nv);
    for (int k = 0; k < nv; k++) d->kp[k] = k < 6 ? 0 : 50, d->kd[k] = k < 6 ? 0 : 1;
    memcpy(d->q_ref, d->q, sizeof(double) * (size_t)fr_tree_nq(t));
    bench_ctx x = {0};
    x.t = t, x.d = d, x.qd = qd, x.qj = fr_tree_link_q_index(t, 5);
    x.q_save = malloc(sizeof(double) * (size_t)fr_tree_nq(t));
    memcpy(x.q_save, d->q, sizeof(double) * (size_t)fr_tree_nq(t));
    int ncases = C_STEP_VERLET + 1;
#ifdef HAVE_BULLET
    x.b = bullet_tree_create(q, qd);
    ncases = C_N;
#endif
    if (only) {
        for (int c = 0; c < C_N; c++) {
            static const char *key[C_N] = {"fureru",      "fureru-kin", "fk",        "step-euler",
                                           "step-verlet", "bullet",     "bullet-kin"};
            if (!strcmp(only, key[c]) && c < ncases) {
                run_case(&x, c, calls);
                return 0;
            }
        }
        fprintf(stderr, "unknown or unavailable --only %s\n", only);
        return 2;
    }
    printf("tree: %d links, nq %d, nv %d (free base + 27 revolute)\n", fr_tree_nlinks(t),
           fr_tree_nq(t), nv);
    /* rounds interleave the cases so that load on the machine hits them alike; best of each */
    double best[C_N];
    for (int c = 0; c < C_N; c++) best[c] = 1e30;
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < ncases; c++) {
            double t0 = now();
            run_case(&x, c, calls);
            double ns = (now() - t0) / calls * 1e9;
            if (ns < best[c]) best[c] = ns;
        }
    for (int c = 0; c < ncases; c++) printf("%-58s %8.0f ns/call\n", case_name[c], best[c]);
#ifdef HAVE_BULLET
    printf("ratio fureru / Bullet, cached link kinematics:             %8.2f (target <= 0.5)\n",
           best[C_ABA] / best[C_BULLET]);
    printf("ratio fureru / Bullet, incl. link kinematics:              %8.2f\n",
           best[C_ABA_KIN] / best[C_BULLET_KIN]);
    /* the same tree? compare joint accelerations */
    double qb[HEX_LINKS], worst = 0, big = 0;
    bullet_tree_joint_acc(x.b, 1e-6, qb);
    fr_tree_aba(t, d);
    for (int i = 0; i < HEX_LINKS - 1; i++) {
        double a = d->qdd[6 + i];
        worst = worst > fabs(a - qb[i]) ? worst : fabs(a - qb[i]);
        big = big > fabs(a) ? big : fabs(a);
    }
    printf("same tree: joint accelerations fureru vs Bullet, max |diff| %.3g (max |qdd| %.3g)\n",
           worst, big);
    bullet_tree_destroy(x.b);
#else
    printf("Bullet comparison not built (bullet-float64 or a C++ compiler not found)\n");
#endif
    free(x.q_save);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
    return 0;
}
