/* The Euler step's gyroscopic term of a free root (src/articulated/aba.c, docs/articulated.md),
 * written out from CRBA's mass matrix in the root's own coordinates, for dense references. */
#ifndef FRTEST_GYRO_REF_H
#define FRTEST_GYRO_REF_H

#include "fureru/articulated.h"

/* A += dt/2·G on the block of every free root: M the mass matrix at the step's start (CRBA, row
 * major nv×nv), qd the start velocities. The root's block of M is its subtree's composite inertia
 * about the root's origin in root axes (mass m, m·c, Ic about the origin) and its rows times qd
 * the subtree's momentum h; G is Kahan's derivative of the rotation ω × L about the centre of mass
 * c, [ω]×·Ic_c − [L_c]×, and of the translation m·ω × v_c in v_c, m·[ω]×, shifted to the origin. */
static inline void frtest_gyro_ref(const fr_tree *t, const double *M, const double *qd, double dt,
                                   double *A)
{
    const int nv = fr_tree_nv(t);
    for (int i = 0; i < fr_tree_nlinks(t); i++) {
        const fr_link_def *l = fr_tree_link_def(t, i);
        if (l->parent >= 0 || l->type != FR_JOINT_FREE) continue;
        const int r = fr_tree_link_v_index(t, i);
#define MB(a, b) M[(size_t)(r + (a)) * (size_t)nv + (size_t)(r + (b))]
        const double m = MB(3, 3);
        if (!(m > 0)) continue;
        /* the coupling block is [m·c]× */
        const fr_vec3 c = fr_v3_scale(fr_v3(MB(2, 4), MB(0, 5), MB(1, 3)), 1.0 / m);
        fr_mat3 Ic;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) Ic.m[a][b] = MB(a, b);
        Ic = fr_m3_sub(Ic, fr_m3_scale(fr_m3_sub(fr_m3_scale(fr_m3_identity(), fr_v3_dot(c, c)),
                                                 fr_m3_outer(c, c)),
                                       m));
#undef MB
        double h[6] = {0};
        for (int a = 0; a < 6; a++)
            for (int j = 0; j < nv; j++)
                h[a] += M[(size_t)(r + a) * (size_t)nv + (size_t)j] * qd[j];
        const fr_vec3 w = fr_v3(qd[r], qd[r + 1], qd[r + 2]);
        const fr_vec3 p = fr_v3(h[3], h[4], h[5]);
        const fr_vec3 Lc = fr_v3_sub(fr_v3(h[0], h[1], h[2]), fr_v3_cross(c, p));
        for (int k = 0; k < 6; k++) {
            const fr_vec3 dw = fr_v3(k == 0, k == 1, k == 2), dv = fr_v3(k == 3, k == 4, k == 5);
            const fr_vec3 dvc = fr_v3_sub(dv, fr_v3_cross(c, dw));
            const fr_vec3 n = fr_v3_sub(fr_v3_cross(w, fr_m3_mulv(Ic, dw)), fr_v3_cross(Lc, dw));
            const fr_vec3 f = fr_v3_scale(fr_v3_cross(w, dvc), m);
            const fr_vec3 nc = fr_v3_add(n, fr_v3_cross(c, f));
            const double col[6] = {nc.x, nc.y, nc.z, f.x, f.y, f.z};
            for (int j = 0; j < 6; j++)
                A[(size_t)(r + j) * (size_t)nv + (size_t)(r + k)] += 0.5 * dt * col[j];
        }
    }
}

#endif
