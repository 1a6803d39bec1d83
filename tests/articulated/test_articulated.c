/* src/articulated: ABA is checked against CRBA + RNEA on random trees, kinematics against finite
 * differences of the integrator, dynamics against closed forms (pendulum period, slider, PD
 * equilibrium, limit spring) and conservation laws (energy, momentum). */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "gyro_ref.h"
#include "interpose.h"
#include "fureru/articulated.h"
#include "articulated/internal.h"

/* ---------------------------------------------------------------- helpers */

static fr_vec3 rand_v3(frtest_rng *r, double s)
{
    return fr_v3(frtest_uniform(r, -s, s), frtest_uniform(r, -s, s), frtest_uniform(r, -s, s));
}
static fr_quat rand_q(frtest_rng *r)
{
    return fr_q_normalize(fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                               frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
}
/* A physically valid inertia about the COM: a random box, randomly rotated. */
static fr_mat3 rand_inertia(frtest_rng *r, double m)
{
    double a = frtest_uniform(r, 0.05, 0.5), b = frtest_uniform(r, 0.05, 0.5),
           c = frtest_uniform(r, 0.05, 0.5);
    fr_mat3 R = fr_q_to_m3(rand_q(r));
    return fr_m3_rotate(R, fr_m3_diag(fr_v3(m * (b * b + c * c) / 12, m * (a * a + c * c) / 12,
                                            m * (a * a + b * b) / 12)));
}

static double maxabs(const double *x, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}
static double maxdiff(const double *x, const double *y, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i] - y[i]));
    return m;
}
static double sv_norm(fr_svec a)
{
    return sqrt(fr_sv_dot(a, a));
}

/* A random tree with about `ndof` velocity DOF. base: 0 fixed to the world, 1 free. Mixed joint
 * types (revolute, prismatic, spherical, fixed, occasionally a free joint inside the tree) and
 * occasionally a second root. */
static fr_tree *random_tree(frtest_rng *r, int ndof, int base)
{
    fr_tree *t = fr_tree_create();
    int nv = 0, n = 0;
    if (base) {
        fr_link_def d = fr_link_def_default();
        d.type = FR_JOINT_FREE;
        d.mass = frtest_uniform(r, 1, 5);
        d.inertia = rand_inertia(r, d.mass);
        d.com = rand_v3(r, 0.2);
        d.q0_pos = rand_v3(r, 1);
        d.q0_rot = rand_q(r);
        ck_assert_int_eq(fr_tree_add_link(t, &d), 0);
        nv += 6;
        n++;
    }
    while (nv < ndof) {
        fr_link_def d = fr_link_def_default();
        d.parent = n == 0 ? -1 : (int)(frtest_next(r) % (uint64_t)(n + 1)) - 1;
        if (base && d.parent < 0) d.parent = 0;
        double u = frtest_uniform(r, 0, 1);
        d.type = u < 0.45   ? FR_JOINT_REVOLUTE
                 : u < 0.65 ? FR_JOINT_PRISMATIC
                 : u < 0.85 ? FR_JOINT_SPHERICAL
                 : u < 0.97 ? FR_JOINT_FIXED
                            : FR_JOINT_FREE;
        /* stay within ndof: a 1-DOF joint fills the last gap */
        if (nv + (d.type == FR_JOINT_FREE ? 6 : d.type == FR_JOINT_SPHERICAL ? 3 : 0) > ndof)
            d.type = FR_JOINT_REVOLUTE;
        d.axis = rand_v3(r, 1);
        d.joint_pose = (fr_pose){rand_v3(r, 0.4), rand_q(r)};
        d.mass = frtest_uniform(r, 0.3, 3);
        d.inertia = rand_inertia(r, d.mass);
        d.com = rand_v3(r, 0.3);
        d.armature = frtest_uniform(r, 0, 1) < 0.3 ? frtest_uniform(r, 0, 0.1) : 0.0;
        d.damping = frtest_uniform(r, 0, 1) < 0.3 ? frtest_uniform(r, 0, 0.5) : 0.0;
        int idx = fr_tree_add_link(t, &d);
        ck_assert_int_eq(idx, n);
        nv += fr_tree_link_def(t, idx)->type == FR_JOINT_FREE ? 6
              : d.type == FR_JOINT_SPHERICAL                  ? 3
              : d.type == FR_JOINT_FIXED                      ? 0
                                                              : 1;
        n++;
    }
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    return t;
}

/* Random state, inputs and external forces (spherical/free quaternions stay unit). */
static void randomize_state(frtest_rng *r, const fr_tree *t, fr_tree_data *d)
{
    for (int i = 0; i < fr_tree_nlinks(t); i++) {
        const fr_link_def *l = fr_tree_link_def(t, i);
        double *q = d->q + fr_tree_link_q_index(t, i);
        switch (l->type) {
        case FR_JOINT_REVOLUTE:
        case FR_JOINT_PRISMATIC:
            q[0] = frtest_uniform(r, -1.5, 1.5);
            break;
        case FR_JOINT_SPHERICAL: {
            fr_quat a = rand_q(r);
            q[0] = a.w, q[1] = a.x, q[2] = a.y, q[3] = a.z;
            break;
        }
        case FR_JOINT_FREE: {
            fr_quat a = rand_q(r);
            fr_vec3 p = rand_v3(r, 1);
            q[0] = p.x, q[1] = p.y, q[2] = p.z;
            q[3] = a.w, q[4] = a.x, q[5] = a.y, q[6] = a.z;
            break;
        }
        default:
            break;
        }
        d->f_ext[i] = fr_sv(rand_v3(r, 3), rand_v3(r, 10));
    }
    for (int k = 0; k < fr_tree_nv(t); k++) {
        d->qd[k] = frtest_uniform(r, -2, 2);
        d->tau[k] = frtest_uniform(r, -5, 5);
    }
    d->gravity = rand_v3(r, 10);
}

/* ---------------------------------------------------------------- ABA vs CRBA + RNEA */

START_TEST(test_aba_matches_crba_rnea)
{
    frtest_rng r = {42};
    double worst_fd = 0, worst_id = 0;
    int nspherical = 0, nfree = 0, nfixed = 0, max_nv = 0;
    for (int trial = 0; trial < 100; trial++) {
        int ndof = trial == 0 ? 40 : 1 + (int)(frtest_next(&r) % 40);
        fr_tree *t = random_tree(&r, ndof, trial % 2);
        fr_tree_data *d = fr_tree_data_create(t);
        ck_assert_ptr_nonnull(d);
        int nv = fr_tree_nv(t);
        ck_assert_int_le(nv, 40);
        max_nv = nv > max_nv ? nv : max_nv;
        for (int i = 0; i < fr_tree_nlinks(t); i++) {
            fr_joint_type ty = fr_tree_link_def(t, i)->type;
            nspherical += ty == FR_JOINT_SPHERICAL;
            nfree += ty == FR_JOINT_FREE;
            nfixed += ty == FR_JOINT_FIXED;
        }
        randomize_state(&r, t, d);
        double *M = malloc(sizeof(double) * (size_t)(nv * nv));
        double *b = malloc(sizeof(double) * (size_t)nv), *x = malloc(sizeof(double) * (size_t)nv);
        double *zero = calloc((size_t)nv, sizeof(double)),
               *tau2 = malloc(sizeof(double) * (size_t)nv);
        fr_tree_aba(t, d);
        /* M qdd = τ − C(q, qd, g, f_ext), with C = RNEA(qdd = 0) */
        fr_tree_crba(t, d, M);
        fr_tree_rnea(t, d, zero, b);
        for (int k = 0; k < nv; k++) x[k] = d->tau[k] - b[k];
        ck_assert(fr_chol_factor(M, nv));
        fr_chol_solve(M, nv, x);
        double e = maxdiff(x, d->qdd, nv) / fmax(maxabs(x, nv), 1e-12);
        worst_fd = fmax(worst_fd, e);
        ck_assert_msg(e < 1e-9, "trial %d (nv %d): ABA vs CRBA rel %.3g", trial, nv, e);
        /* RNEA of the ABA result gives back the torques */
        fr_tree_rnea(t, d, d->qdd, tau2);
        double e2 = maxdiff(tau2, d->tau, nv) / fmax(maxabs(d->tau, nv), 1e-12);
        worst_id = fmax(worst_id, e2);
        ck_assert_msg(e2 < 1e-9, "trial %d: RNEA(ABA) rel %.3g", trial, e2);
        free(M), free(b), free(x), free(zero), free(tau2);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
    ck_assert_int_gt(nspherical, 20);
    ck_assert_int_gt(nfree, 50);
    ck_assert_int_gt(nfixed, 10);
    ck_assert_int_eq(max_nv, 40);
    printf("# ABA vs CRBA worst rel %.3g, RNEA(ABA) worst rel %.3g (up to %d DOF)\n", worst_fd,
           worst_id, max_nv);
}
END_TEST

/* Trial `trial`'s random tree (5 + trial links) in a random state, and its CRBA mass matrix (nv²,
 * malloc'd) */
static fr_tree *random_tree_crba(frtest_rng *r, int trial, fr_tree_data **d, double **M)
{
    fr_tree *t = random_tree(r, 5 + trial, trial % 2);
    *d = fr_tree_data_create(t);
    randomize_state(r, t, *d);
    const int nv = fr_tree_nv(t);
    *M = malloc(sizeof(double) * (size_t)(nv * nv));
    fr_tree_forward_kinematics(t, *d);
    fr_tree_crba(t, *d, *M);
    return t;
}

/* fr_tree_joint_inertias: ABA's D of each joint equals the pivot of the mass matrix factored
 * from the leaves (M = Lᵀ D L, CRBA's M; a joint of more DOF: the product of its pivots, its D's
 * determinant), on random trees and states; a point mass on a revolute axis gives 0, and 0 plus
 * the armature with one. */
START_TEST(test_joint_inertias_match_crba)
{
    frtest_rng r = {11};
    for (int trial = 0; trial < 30; trial++) {
        fr_tree_data *d;
        double *M;
        fr_tree *t = random_tree_crba(&r, trial, &d, &M);
        int nv = fr_tree_nv(t);
        double *D = malloc(sizeof(double) * (size_t)nv),
               *locked = malloc(sizeof(double) * (size_t)nv);
        fr_tree_joint_inertias(t, d, D, locked);
        double *piv = malloc(sizeof(double) * (size_t)nv);
        for (int k = nv - 1; k >= 0; k--) {
            double p = piv[k] = M[k * nv + k];
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++) M[i * nv + j] -= M[i * nv + k] * M[k * nv + j] / p;
        }
        for (int i = 0; i < fr_tree_nlinks(t); i++) {
            int vi = fr_tree_link_v_index(t, i), n = fr_tree_link_nv(t, i);
            if (!n) continue;
            double a = 1, b = 1;
            for (int k = 0; k < n; k++) {
                a *= piv[vi + k];
                b *= D[vi + k];
                ck_assert(D[vi + k] <= locked[vi + k] * (1 + 1e-12) + 1e-12);
            }
            ck_assert_rel(b, a, 1e-9, 1e-12);
        }
        free(piv);
        free(D);
        free(locked);
        free(M);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
    /* a 0.1 kg point mass on a revolute axis: nothing to turn; an armature is all it turns */
    for (int arm = 0; arm <= 1; arm++) {
        fr_tree *t = fr_tree_create();
        fr_link_def base = fr_link_def_default();
        base.type = FR_JOINT_FIXED;
        base.mass = 1;
        base.inertia = fr_m3_diag(fr_v3(0.01, 0.01, 0.01));
        ck_assert_int_eq(fr_tree_add_link(t, &base), 0);
        fr_link_def tip = fr_link_def_default();
        tip.parent = 0;
        tip.type = FR_JOINT_REVOLUTE;
        tip.axis = fr_v3(0, 1, 0);
        tip.joint_pose.p = fr_v3(0, 0, 0.2);
        tip.mass = 0.1;
        tip.inertia = fr_m3_zero();
        tip.armature = arm ? 1e-3 : 0;
        ck_assert_int_eq(fr_tree_add_link(t, &tip), 1);
        ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
        fr_tree_data *d = fr_tree_data_create(t);
        double D, locked;
        fr_tree_joint_inertias(t, d, &D, &locked);
        ck_assert_double_eq_tol(D, (arm ? 1e-3 : 0.0), 1e-18);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
}
END_TEST

/* ½ qdᵀ M qd (CRBA) equals Σ ½ vᵀ I v over the links. */
START_TEST(test_crba_kinetic_energy)
{
    frtest_rng r = {7};
    for (int trial = 0; trial < 30; trial++) {
        fr_tree_data *d;
        double *M;
        fr_tree *t = random_tree_crba(&r, trial, &d, &M);
        /* armature adds rotor energy the link sum does not see: drop it for this identity */
        int nv = fr_tree_nv(t);
        double ke = 0, arm = 0;
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < nv; j++) ke += 0.5 * d->qd[i] * M[i * nv + j] * d->qd[j];
        for (int i = 0; i < fr_tree_nlinks(t); i++) {
            const fr_link_def *l = fr_tree_link_def(t, i);
            if (l->type == FR_JOINT_FREE) continue;
            int vi = fr_tree_link_v_index(t, i);
            for (int k = 0; k < fr_tree_link_nv(t, i); k++)
                arm += 0.5 * l->armature * d->qd[vi + k] * d->qd[vi + k];
        }
        ck_assert_rel(ke - arm, fr_tree_kinetic_energy(t, d), 1e-12, 1e-9);
        /* ... and the rotors' energy is that difference */
        ck_assert_rel(ke, fr_tree_kinetic_energy(t, d) + fr_tree_rotor_energy(t, d), 1e-12, 1e-9);
        free(M);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
}
END_TEST

/* ---------------------------------------------------------------- kinematics */

/* Link twists and point Jacobians agree with finite differences of the poses along the
 * integrator's own position update q ⊕ qd·h: S, X_J and the exponential maps are consistent. */
START_TEST(test_kinematics_match_integrator)
{
    frtest_rng r = {99};
    const double h = 1e-6;
    for (int trial = 0; trial < 20; trial++) {
        fr_tree *t = random_tree(&r, 10 + trial, trial % 2);
        fr_tree_data *d = fr_tree_data_create(t), *dp = fr_tree_data_create(t),
                     *dm = fr_tree_data_create(t);
        randomize_state(&r, t, d);
        int nq = fr_tree_nq(t), nv = fr_tree_nv(t), n = fr_tree_nlinks(t);
        fr_tree_integrate_q(t, d->q, d->qd, h, dp->q);
        fr_tree_integrate_q(t, d->q, d->qd, -h, dm->q);
        (void)nq;
        fr_tree_forward_kinematics(t, d);
        fr_tree_forward_kinematics(t, dp);
        fr_tree_forward_kinematics(t, dm);
        double *Ja = malloc(sizeof(double) * 3 * (size_t)nv),
               *Jl = malloc(sizeof(double) * 3 * (size_t)nv);
        for (int i = 0; i < n; i++) {
            /* world twist from the data: ω and origin velocity in world axes */
            fr_vec3 w = fr_q_rotate(d->pose[i].q, d->vel[i].ang);
            fr_vec3 v = fr_q_rotate(d->pose[i].q, d->vel[i].lin);
            fr_vec3 vfd = fr_v3_scale(fr_v3_sub(dp->pose[i].p, dm->pose[i].p), 0.5 / h);
            fr_vec3 wfd =
                fr_v3_scale(fr_q_log(fr_q_mul(dp->pose[i].q, fr_q_conj(dm->pose[i].q))), 0.5 / h);
            double s = 1.0 + fr_v3_norm(v) + fr_v3_norm(w);
            /* central differences: O(h²) truncation and ~1e-16/h rounding */
            ck_assert_msg(fr_v3_dist(v, vfd) < 1e-8 * s, "link %d lin %g", i, fr_v3_dist(v, vfd));
            ck_assert_msg(fr_v3_dist(w, wfd) < 1e-8 * s, "link %d ang %g", i, fr_v3_dist(w, wfd));
            /* the Jacobian of a point on the link maps qd to its velocity */
            fr_vec3 pl = rand_v3(&r, 0.5);
            fr_vec3 pw = fr_tree_point_world(d, i, pl);
            fr_tree_point_jacobian(t, d, i, pw, Ja, Jl);
            fr_vec3 jv = fr_v3_zero(), jw = fr_v3_zero();
            for (int k = 0; k < nv; k++) {
                jw = fr_v3_add(jw, fr_v3_scale(fr_v3(Ja[k], Ja[nv + k], Ja[2 * nv + k]), d->qd[k]));
                jv = fr_v3_add(jv, fr_v3_scale(fr_v3(Jl[k], Jl[nv + k], Jl[2 * nv + k]), d->qd[k]));
            }
            fr_vec3 pfd = fr_v3_scale(
                fr_v3_sub(fr_tree_point_world(dp, i, pl), fr_tree_point_world(dm, i, pl)), 0.5 / h);
            ck_assert(fr_v3_dist(jw, w) < 1e-12 * s);
            ck_assert(fr_v3_dist(jv, fr_tree_point_velocity(d, i, pw)) < 1e-12 * s);
            ck_assert(fr_v3_dist(jv, pfd) < 1e-8 * s);
        }
        free(Ja), free(Jl);
        fr_tree_data_destroy(d), fr_tree_data_destroy(dp), fr_tree_data_destroy(dm);
        fr_tree_destroy(t);
    }
}
END_TEST

/* ---------------------------------------------------------------- pendulums */

/* A link swinging about the world y axis, COM at L below the joint (hanging at q = 0). */
static int add_bar(fr_tree *t, int parent, fr_vec3 at, double m, double L, double Ic)
{
    fr_link_def d = fr_link_def_default();
    d.parent = parent;
    d.type = FR_JOINT_REVOLUTE;
    d.axis = fr_v3(0, 1, 0);
    d.joint_pose.p = at;
    d.mass = m;
    d.com = fr_v3(0, 0, -L);
    d.inertia = fr_m3_diag(fr_v3(Ic, Ic, Ic));
    return fr_tree_add_link(t, &d);
}

START_TEST(test_pendulum_period)
{
    const double m = 1.0, L = 1.0, Ic = 0.01, g = 9.81, th0 = 0.01, dt = 1e-3;
    fr_tree *t = fr_tree_create();
    add_bar(t, -1, fr_v3_zero(), m, L, Ic);
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t);
    d->q[0] = th0;
    /* physical pendulum, with the first finite-amplitude correction (1 + θ0²/16) */
    double T = 2 * M_PI * sqrt((Ic + m * L * L) / (m * g * L)) * (1 + th0 * th0 / 16);
    double prev = d->q[0], tprev = 0, first = -1, last = -1;
    int crossings = 0;
    for (int k = 1; k <= (int)(12 * T / dt); k++) {
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        double q = d->q[0], tk = k * dt;
        if (prev > 0 && q <= 0) { /* downward zero crossing, linearly interpolated */
            double tc = tprev + dt * prev / (prev - q);
            if (first < 0)
                first = tc;
            else
                crossings++;
            last = tc;
        }
        prev = q;
        tprev = tk;
    }
    ck_assert_int_ge(crossings, 10);
    double Tm = (last - first) / crossings;
    printf("# pendulum period %.9f s, theory %.9f s (rel %.2g)\n", Tm, T, fabs(Tm - T) / T);
    ck_assert_rel(Tm, T, 1e-3, 0);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* Undamped double pendulum released horizontal (chaotic): the largest energy error over 10 s,
 * relative to the energy above the hanging rest state. */
static double double_pendulum_energy_error(fr_integrator integ, double dt)
{
    fr_tree *t = fr_tree_create();
    int a = add_bar(t, -1, fr_v3_zero(), 1.0, 0.5, 0.02);
    add_bar(t, a, fr_v3(0, 0, -1.0), 1.0, 0.5, 0.02);
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t);
    d->integrator = integ;
    double Erest = fr_tree_potential_energy(t, d);
    d->q[0] = M_PI / 2;
    fr_tree_forward_kinematics(t, d);
    double E0 = fr_tree_kinetic_energy(t, d) + fr_tree_potential_energy(t, d), worst = 0;
    for (int k = 0; k < (int)(10.0 / dt + 0.5); k++) {
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        double E = fr_tree_kinetic_energy(t, d) + fr_tree_potential_energy(t, d);
        worst = fmax(worst, fabs(E - E0));
    }
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
    return worst / (E0 - Erest);
}

START_TEST(test_double_pendulum_energy)
{
    double ev = double_pendulum_energy_error(FR_INTEGRATOR_VERLET, 1e-3);
    double ev2 = double_pendulum_energy_error(FR_INTEGRATOR_VERLET, 5e-4);
    double ee = double_pendulum_energy_error(FR_INTEGRATOR_EULER, 1e-3);
    printf("# double pendulum, max |E − E0| / (E0 − E_rest) over 10 s: Verlet %.3g (1 ms), "
           "%.3g (0.5 ms); semi-implicit Euler %.3g (1 ms)\n",
           ev, ev2, ee);
    ck_assert_double_lt(ev, 1e-3);
    /* second order: halving dt quarters the error (chaos blurs the factor, not the order) */
    ck_assert_double_lt(ev2, 0.4 * ev);
}
END_TEST

/* ---------------------------------------------------------------- implicit PD */

/* A light arm (0.5 kg, 0.3 m rod) under gravity with K = 1e6 N·m/rad at 1 kHz. */
static fr_tree *pd_arm(double K, double D, double effort)
{
    fr_tree *t = fr_tree_create();
    fr_link_def d = fr_link_def_default();
    d.axis = fr_v3(0, 1, 0);
    d.mass = 0.5;
    d.com = fr_v3(0.15, 0, 0);
    d.inertia = fr_m3_diag(fr_v3(1e-4, 0.5 * 0.09 / 12, 0.5 * 0.09 / 12));
    d.kp = K;
    d.kd = D;
    d.effort_limit = effort;
    fr_tree_add_link(t, &d);
    fr_tree_finalize(t);
    return t;
}

/* Loop tests run once per integrator: _i = FR_INTEGRATOR_EULER, FR_INTEGRATOR_VERLET. */
static const char *integ_name(int i)
{
    return i == FR_INTEGRATOR_VERLET ? "Verlet" : "Euler";
}

START_TEST(test_pd_implicit_stiff_settles)
{
    const double K = 1e6, dt = 1e-3, I = 0.5 * 0.09 / 12 + 0.5 * 0.15 * 0.15;
    fr_tree *t = pd_arm(K, 2 * sqrt(K * I), INFINITY);
    fr_tree_data *d = fr_tree_data_create(t);
    d->integrator = (fr_integrator)_i;
    d->q_ref[0] = 0.5;
    double worst = 0, qprev = 0;
    for (int k = 0; k < 2000; k++) {
        qprev = d->q[0];
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        worst = fmax(worst, fabs(d->q[0] - 0.5));
    }
    ck_assert_double_le(worst, 0.5 + 1e-9);            /* never overshoots past the start error */
    ck_assert_double_lt(fabs(d->q[0] - qprev), 1e-12); /* at rest */
    /* equilibrium of the spring against gravity: K (q − q*) = −τ_hold(q), τ_hold = RNEA */
    double zero = 0, hold;
    d->qd[0] = 0;
    fr_tree_rnea(t, d, &zero, &hold);
    ck_assert_msg(fabs(d->q[0] - (0.5 - hold / K)) < 1e-12, "%s: q %.15g vs %.15g", integ_name(_i),
                  d->q[0], 0.5 - hold / K);
    ck_assert_double_gt(fabs(hold / K), 1e-7); /* gravity sag is visible, so the check bites */
    /* tau_out reports the spring force that holds the arm */
    ck_assert_rel(d->tau_out[0], hold, 1e-6, 1e-9);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

START_TEST(test_pd_explicit_stiff_diverges)
{
    const double K = 1e6, dt = 1e-3, I = 0.5 * 0.09 / 12 + 0.5 * 0.15 * 0.15;
    fr_tree *t = pd_arm(K, 2 * sqrt(K * I), INFINITY);
    fr_tree_data *d = fr_tree_data_create(t);
    d->integrator = (fr_integrator)_i;
    d->q_ref[0] = 0.5;
    d->pd_mode = FR_PD_EXPLICIT;
    int err = FR_OK, k;
    for (k = 0; k < 200 && err == FR_OK && fabs(d->q[0]) < 1e6; k++) err = fr_tree_step(t, d, dt);
    ck_assert_msg(err == FR_ERR_NUMERIC || fabs(d->q[0]) >= 1e6, "explicit PD stayed bounded");
    /* and at a gentle gain the explicit form works, so the divergence is the gain's fault */
    fr_tree_data_reset(t, d);
    d->integrator = (fr_integrator)_i;
    d->pd_mode = FR_PD_EXPLICIT;
    d->kp[0] = 10, d->kd[0] = 0.5;
    d->q_ref[0] = 0.5;
    for (k = 0; k < 5000; k++) ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
    ck_assert_double_lt(fabs(d->q[0] - 0.5), 0.2);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* A spherical joint with K = 1e6 reaches its target orientation. */
START_TEST(test_pd_spherical)
{
    const double K = 1e6, dt = 1e-3;
    fr_tree *t = fr_tree_create();
    fr_link_def d0 = fr_link_def_default();
    d0.type = FR_JOINT_SPHERICAL;
    d0.mass = 0.5;
    d0.com = fr_v3(0, 0, -0.2);
    d0.inertia = fr_m3_diag(fr_v3(2e-3, 3e-3, 1e-3));
    d0.kp = K;
    d0.kd = 2 * sqrt(K * 0.025);
    fr_tree_add_link(t, &d0);
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t);
    d->integrator = (fr_integrator)_i;
    d->gravity = fr_v3_zero();
    fr_quat target = fr_q_normalize(fr_q(0.8, 0.3, -0.4, 0.2));
    d->q_ref[0] = target.w, d->q_ref[1] = target.x, d->q_ref[2] = target.y, d->q_ref[3] = target.z;
    for (int k = 0; k < 2000; k++) ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
    fr_quat q = fr_q(d->q[0], d->q[1], d->q[2], d->q[3]);
    ck_assert_double_lt(fr_q_angle_between(q, target), 1e-9);
    ck_assert_double_lt(fabs(fr_q_norm(q) - 1), 1e-12);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* Saturated motor: the joint moves exactly as if ±effort were applied as a constant force. */
START_TEST(test_effort_limit)
{
    const double eff = 0.3, dt = 1e-3;
    fr_tree *t = pd_arm(1e4, 10, eff);
    fr_tree_data *d = fr_tree_data_create(t), *e = fr_tree_data_create(t);
    d->integrator = e->integrator = (fr_integrator)_i;
    d->q_ref[0] = 1.0;
    d->tau[0] = 0.1; /* the cap applies to feed-forward + PD together */
    ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
    ck_assert_double_eq_tol(d->tau_out[0], eff, 1e-15);
    /* the same step with a constant motor force +eff and no PD */
    e->kp[0] = e->kd[0] = 0;
    e->tau[0] = eff;
    ck_assert_int_eq(fr_tree_step(t, e, dt), FR_OK);
    ck_assert_rel(d->qd[0], e->qd[0], 1e-12, 1e-12);
    ck_assert_rel(d->q[0], e->q[0], 1e-12, 1e-12);
    fr_tree_data_destroy(d), fr_tree_data_destroy(e);
    fr_tree_destroy(t);
}
END_TEST

/* The implicit joint forces on whole trees: the Euler step's qdd solves the dense system
 * (M + diag H + dt/2·G) qdd = τ̃ − C with M from CRBA and C from RNEA (link-frame algorithms), H
 * and τ̃ from the implicit PD/damper formulas written out here (spherical error: log(q_ref⁻¹ q)),
 * G the free roots' gyroscopic term (gyro_ref.h). */
START_TEST(test_implicit_pd_tree_matches_dense)
{
    frtest_rng r = {77};
    const double dt = 1e-3;
    for (int trial = 0; trial < 40; trial++) {
        fr_tree *t = random_tree(&r, 5 + trial % 30, trial % 2);
        fr_tree_data *d = fr_tree_data_create(t);
        randomize_state(&r, t, d);
        int nv = fr_tree_nv(t), n = fr_tree_nlinks(t);
        for (int k = 0; k < nv; k++) {
            d->kp[k] = frtest_uniform(&r, 0, 1e4);
            d->kd[k] = frtest_uniform(&r, 0, 50);
            d->qd_ref[k] = frtest_uniform(&r, -1, 1);
        }
        for (int i = 0; i < n; i++) { /* random targets */
            const fr_link_def *l = fr_tree_link_def(t, i);
            double *qr = d->q_ref + fr_tree_link_q_index(t, i);
            if (l->type == FR_JOINT_REVOLUTE || l->type == FR_JOINT_PRISMATIC)
                qr[0] = frtest_uniform(&r, -1, 1);
            if (l->type == FR_JOINT_SPHERICAL) {
                fr_quat a = rand_q(&r);
                qr[0] = a.w, qr[1] = a.x, qr[2] = a.y, qr[3] = a.z;
            }
        }
        double *M = malloc(sizeof(double) * (size_t)(nv * nv)),
               *C = malloc(sizeof(double) * (size_t)nv);
        double *x = malloc(sizeof(double) * (size_t)nv), *zero = calloc((size_t)nv, sizeof(double));
        double *A = malloc(sizeof(double) * (size_t)(nv * nv));
        fr_tree_crba(t, d, M);
        fr_tree_rnea(t, d, zero, C);
        memcpy(A, M, sizeof(double) * (size_t)(nv * nv));
        frtest_gyro_ref(t, M, d->qd, dt, A);
        for (int i = 0; i < n; i++) {
            const fr_link_def *l = fr_tree_link_def(t, i);
            int vi = fr_tree_link_v_index(t, i), nvi = fr_tree_link_nv(t, i);
            const double *q = d->q + fr_tree_link_q_index(t, i),
                         *qr = d->q_ref + fr_tree_link_q_index(t, i);
            double e[3] = {0, 0, 0};
            bool pd = l->type == FR_JOINT_REVOLUTE || l->type == FR_JOINT_PRISMATIC ||
                      l->type == FR_JOINT_SPHERICAL;
            if (nvi == 1) e[0] = q[0] - qr[0];
            if (l->type == FR_JOINT_SPHERICAL) {
                fr_vec3 ev = fr_q_log(fr_q_mul(fr_q_conj(fr_q(qr[0], qr[1], qr[2], qr[3])),
                                               fr_q(q[0], q[1], q[2], q[3])));
                e[0] = ev.x, e[1] = ev.y, e[2] = ev.z;
            }
            for (int k = 0; k < nvi; k++) {
                int j = vi + k;
                double tt = d->tau[j];
                if (pd) {
                    double qd = d->qd[j], kp = d->kp[j], kd = d->kd[j], c = l->damping;
                    tt += -kp * (e[k] + qd * dt) - kd * (qd - d->qd_ref[j]) - c * qd;
                    A[j * nv + j] += (kp * dt + kd) * dt + c * dt; /* armature is in M */
                }
                x[j] = tt - C[j];
            }
        }
        ck_assert(fr_lu_solve(A, nv, x));
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        double e = maxdiff(x, d->qdd, nv) / fmax(maxabs(x, nv), 1e-12);
        ck_assert_msg(e < 1e-9, "trial %d: implicit step vs dense rel %.3g", trial, e);
        free(M), free(A), free(C), free(x), free(zero);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
}
END_TEST

/* fr_tree_point_inv_mass and fr_tree_point_inv_mass3 (one pass from the link to the root and back
 * on the step's articulated inertias) equal uᵀ J M̃⁻¹ Jᵀ u from CRBA, the point Jacobian and a dense
 * Cholesky solve, M̃ the mass matrix with the implicit PD and damping terms of a step of dt. */
START_TEST(test_point_inv_mass_matches_dense)
{
    frtest_rng r = {91};
    const double dt = 1e-3;
    double worst = 0;
    for (int trial = 0; trial < 60; trial++) {
        fr_tree *t = random_tree(&r, 1 + trial % 35, trial % 2);
        fr_tree_data *d = fr_tree_data_create(t);
        randomize_state(&r, t, d);
        int nv = fr_tree_nv(t), n = fr_tree_nlinks(t);
        for (int k = 0; k < nv; k++) {
            d->kp[k] = trial % 3 ? frtest_uniform(&r, 0, 1e4) : 0.0;
            d->kd[k] = trial % 3 ? frtest_uniform(&r, 0, 50) : 0.0;
        }
        for (int i = 0; i < n; i++) d->f_ext[i] = fr_sv_zero();
        fr_tree_forward_kinematics(t, d);
        double *M = malloc(sizeof(double) * (size_t)(nv * nv)),
               *J = malloc(sizeof(double) * (size_t)(3 * nv)),
               *x = malloc(sizeof(double) * (size_t)nv);
        fr_tree_crba(t, d, M);
        for (int i = 0; i < n; i++) {
            const fr_link_def *l = fr_tree_link_def(t, i);
            bool pd = l->type == FR_JOINT_REVOLUTE || l->type == FR_JOINT_PRISMATIC ||
                      l->type == FR_JOINT_SPHERICAL;
            for (int k = 0, vi = fr_tree_link_v_index(t, i); pd && k < fr_tree_link_nv(t, i); k++)
                M[(vi + k) * nv + vi + k] +=
                    (d->kp[vi + k] * dt + d->kd[vi + k]) * dt + l->damping * dt;
        }
        ck_assert(fr_chol_factor(M, nv));
        ck_assert_int_eq(fr_tree_point_mass_prepare(t, d, dt), FR_OK);
        for (int c = 0; c < 5; c++) {
            int link = (int)(frtest_next(&r) % (uint64_t)n);
            fr_vec3 p = fr_tree_point_world(d, link, rand_v3(&r, 0.5));
            fr_vec3 u = fr_v3_normalize(rand_v3(&r, 1));
            fr_tree_point_jacobian(t, d, link, p, NULL, J);
            for (int k = 0; k < nv; k++) x[k] = u.x * J[k] + u.y * J[nv + k] + u.z * J[2 * nv + k];
            double want = 0;
            double *y = malloc(sizeof(double) * (size_t)nv);
            memcpy(y, x, sizeof(double) * (size_t)nv);
            fr_chol_solve(M, nv, y);
            for (int k = 0; k < nv; k++) want += x[k] * y[k];
            free(y);
            double got = fr_tree_point_inv_mass(t, d, link, p, u);
            double e = fabs(got - want) / fmax(want, 1e-12);
            worst = fmax(worst, e);
            ck_assert_msg(e < 1e-9, "trial %d link %d: %.12g vs dense %.12g", trial, link, got,
                          want);
            /* the 3×3 in one pass: uᵀ L u gives the same */
            fr_mat3 L = fr_tree_point_inv_mass3(t, d, link, p);
            double got3 = fr_v3_dot(u, fr_m3_mulv(L, u));
            e = fabs(got3 - want) / fmax(want, 1e-12);
            worst = fmax(worst, e);
            ck_assert_msg(e < 1e-9, "trial %d link %d: 3x3 %.12g vs dense %.12g", trial, link, got3,
                          want);
        }
        free(M), free(J), free(x);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
    printf("# point inverse mass vs dense worst rel %.3g\n", worst);
}
END_TEST

/* ---------------------------------------------------------------- limits */

START_TEST(test_hard_limit)
{
    const double dt = 1e-3;
    fr_tree *t = fr_tree_create();
    fr_link_def l = fr_link_def_default();
    l.axis = fr_v3(0, 1, 0);
    l.com = fr_v3(0.3, 0, 0);
    l.mass = 1;
    l.limited = true;
    l.q_min = -0.4;
    l.q_max = 2.0;
    fr_tree_add_link(t, &l);
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t), *e = fr_tree_data_create(t);
    d->integrator = e->integrator = (fr_integrator)_i;
    /* R_y(q) x = (cos q, 0, −sin q): with gravity up the arm swings to negative q */
    double zero = 0, hold;
    d->gravity = e->gravity = fr_v3(0, 0, 9.81);
    for (int k = 0; k < 2000; k++) {
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        ck_assert_double_ge(d->q[0], -0.4 - 1e-12);
    }
    ck_assert_double_eq_tol(d->q[0], -0.4, 1e-12);
    /* at rest: Euler reports qd = 0; Verlet's step-boundary velocity carries the end half kick
     * of the free dynamics, dt/2·α with α the free acceleration on the limit */
    e->q[0] = -0.4;
    fr_tree_aba(t, e);
    double qd_rest = _i == FR_INTEGRATOR_VERLET ? 0.5 * dt * e->qdd[0] : 0.0;
    ck_assert_double_eq_tol(d->qd[0], qd_rest, 1e-12);
    /* the limit carries the weight: tau_out is the holding torque (RNEA) */
    d->qd[0] = 0;
    fr_tree_rnea(t, d, &zero, &hold);
    d->qd[0] = qd_rest;
    ck_assert_double_gt(hold, 0);
    ck_assert_rel(d->tau_out[0], hold, 1e-9, 1e-12);
    /* a motor pulling out of the limit is not held back (no adhesion): the step equals the free
     * step with the same force */
    fr_tree_data_reset(t, e);
    e->integrator = (fr_integrator)_i;
    e->gravity = d->gravity;
    e->q[0] = d->q[0], e->qd[0] = d->qd[0];
    e->tau[0] = d->tau[0] = 2 * hold + 1.0;
    ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
    fr_tree *tf = fr_tree_create(); /* the same arm without limits */
    l.limited = false;
    fr_tree_add_link(tf, &l);
    fr_tree_finalize(tf);
    fr_tree_data *f = fr_tree_data_create(tf);
    f->integrator = (fr_integrator)_i;
    f->gravity = e->gravity;
    f->q[0] = e->q[0], f->qd[0] = e->qd[0], f->tau[0] = e->tau[0];
    ck_assert_int_eq(fr_tree_step(tf, f, dt), FR_OK);
    ck_assert_double_eq(d->q[0], f->q[0]);
    ck_assert_double_eq(d->qd[0], f->qd[0]);
    ck_assert_double_gt(d->qd[0], qd_rest);
    fr_tree_data_destroy(f);
    fr_tree_destroy(tf);
    fr_tree_data_destroy(e);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* A soft limit spring settles at the penetration where it balances gravity. */
START_TEST(test_soft_limit)
{
    const double kl = 1e4;
    fr_tree *t = fr_tree_create();
    fr_link_def l = fr_link_def_default();
    l.type = FR_JOINT_PRISMATIC;
    l.axis = fr_v3(0, 0, 1);
    l.mass = 2;
    l.limited = true;
    l.q_min = 0.1;
    l.q_max = 1;
    l.q0 = 0.5;
    l.limit_k = kl;
    l.limit_d = 200;
    fr_tree_add_link(t, &l);
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t);
    d->integrator = (fr_integrator)_i;
    for (int k = 0; k < 5000; k++) ck_assert_int_eq(fr_tree_step(t, d, 1e-3), FR_OK);
    ck_assert_double_eq_tol(d->q[0], 0.1 - 2 * 9.81 / kl, 1e-9);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------- slider */

START_TEST(test_slider_45)
{
    const double g = 9.81;
    fr_tree *t = fr_tree_create();
    fr_link_def l = fr_link_def_default();
    l.type = FR_JOINT_PRISMATIC;
    l.axis = fr_v3(1, 0, 0);
    /* the joint frame pitched so its x axis points 45° up: R_y(−45°) x = (c, 0, s) */
    l.joint_pose = (fr_pose){fr_v3(0.3, -0.2, 1.0), fr_q_axis_angle(fr_v3(0, 1, 0), -M_PI / 4)};
    l.mass = 2.5;
    l.com = fr_v3(0.1, 0.2, -0.3); /* irrelevant to a pure translation */
    l.inertia = fr_m3_diag(fr_v3(0.1, 0.2, 0.3));
    fr_tree_add_link(t, &l);
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t);
    d->qd[0] = 0.7;
    fr_tree_aba(t, d);
    ck_assert_rel(d->qdd[0], -g * sin(M_PI / 4), 1e-9, 0);
    ck_assert_int_eq(fr_tree_step(t, d, 1e-3), FR_OK);
    ck_assert_rel(d->qd[0], 0.7 - g * sin(M_PI / 4) * 1e-3, 1e-12, 0);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------- momentum */

START_TEST(test_free_momentum)
{
    frtest_rng r = {2024};
    for (int trial = 0; trial < 10; trial++) {
        fr_tree *t = random_tree(&r, 20, 1);
        fr_tree_data *d = fr_tree_data_create(t);
        randomize_state(&r, t, d);
        int nv = fr_tree_nv(t), n = fr_tree_nlinks(t);
        d->gravity = fr_v3_zero();
        for (int k = 0; k < nv; k++) d->tau[k] = 0;
        fr_tree_clear_ext(t, d);
        fr_tree_aba(t, d);
        fr_tree_forward_kinematics(t, d);
        /* (1) the momentum sum equals the root rows of M qd (composite inertia of the tree) */
        double *M = malloc(sizeof(double) * (size_t)(nv * nv));
        fr_tree_crba(t, d, M);
        double hb[6] = {0};
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < nv; j++) hb[i] += M[i * nv + j] * d->qd[j];
        fr_svec h_root = fr_sv(fr_v3(hb[0], hb[1], hb[2]), fr_v3(hb[3], hb[4], hb[5]));
        fr_svec h = fr_tree_momentum(t, d);
        fr_svec h2 = fr_xf_inv_apply_f(d->ws->X0[0], h_root);
        ck_assert_double_lt(sv_norm(fr_sv_sub(h, h2)), 1e-12 * (1 + sv_norm(h)));
        /* (2) ḣ = Σ (I a + v ×* I v) vanishes with the ABA accelerations; the ABA keeps
         * a and v in world coordinates, so transform the rigid inertias independently here */
        fr_tree_aba(t, d);
        fr_svec hdot = fr_sv_zero();
        double scale = 0;
        for (int i = 0; i < n; i++) {
            const fr_link_def *l = fr_tree_link_def(t, i);
            fr_rbi Iw =
                fr_rbi_transform_inv(d->ws->X0[i], fr_rbi_make(l->mass, l->com, l->inertia));
            fr_svec v = d->ws->vw[i];
            fr_svec fw =
                fr_sv_add(fr_rbi_mulv(Iw, d->ws->a[i]), fr_sv_crossf(v, fr_rbi_mulv(Iw, v)));
            hdot = fr_sv_add(hdot, fw);
            scale += sv_norm(fw);
        }
        ck_assert_msg(sv_norm(hdot) < 1e-11 * scale, "hdot %g scale %g", sv_norm(hdot), scale);
        /* (3) simulated, the momentum drifts only at the integrator's order: halving dt halves
         * the drift (Euler) or quarters it (Verlet) */
        double drift[2];
        fr_svec h0 = fr_tree_momentum(t, d);
        double *q0 = malloc(sizeof(double) * (size_t)fr_tree_nq(t)),
               *v0 = malloc(sizeof(double) * (size_t)nv);
        memcpy(q0, d->q, sizeof(double) * (size_t)fr_tree_nq(t));
        memcpy(v0, d->qd, sizeof(double) * (size_t)nv);
        d->integrator = (fr_integrator)_i;
        for (int pass = 0; pass < 2; pass++) {
            double dt = pass ? 5e-4 : 1e-3;
            memcpy(d->q, q0, sizeof(double) * (size_t)fr_tree_nq(t));
            memcpy(d->qd, v0, sizeof(double) * (size_t)nv);
            for (int k = 0; k < (int)(0.2 / dt + 0.5); k++)
                ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
            drift[pass] = sv_norm(fr_sv_sub(fr_tree_momentum(t, d), h0)) / sv_norm(h0);
        }
        printf("# free tree %d, %s: momentum drift over 0.2 s: %.3g (1 ms), %.3g (0.5 ms)\n", trial,
               integ_name(_i), drift[0], drift[1]);
        if (_i == FR_INTEGRATOR_VERLET)
            ck_assert_double_lt(drift[1], 0.3 * drift[0]);
        else
            ck_assert_double_lt(fabs(drift[1] / drift[0] - 0.5), 0.1);
        free(q0), free(v0), free(M);
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
}
END_TEST

/* A torque-free asymmetric body on a free joint spun at ~100 rad/s (|ω|·dt 0.1 at 1 ms), no
 * gravity, about its intermediate axis (it tumbles: the spin flips) and near its major axis (it
 * precesses), over 2 s with Euler steps. The root's gyroscopic term is linearly implicit
 * (Kahan's midpoint): the energy error stays bounded and falls as dt² (its constant measured:
 * 0.064·(|ω|dt)² tumbling, 1.4e-4·(|ω|dt)² near the major axis); the angular momentum about the
 * centre of mass (world) moves first order (0.26·|ω|dt and 0.027·|ω|dt over the run), where the
 * free body keeps both (test_world.c). Taken explicitly, the energy grew a thousandfold within
 * the run at every step down to 0.5 ms. */
START_TEST(test_free_spin_torque_free)
{
    const fr_vec3 w0 = _i == 0 ? fr_v3(0.3, 97.0, 0.2) : fr_v3(4.1, 2.3, 103.0);
    const double dts[3] = {5e-3, 1e-3, 5e-4}, T = 2.0, wn = fr_v3_norm(w0);
    double e[3], lc[3];
    for (int k = 0; k < 3; k++) {
        const double dt = dts[k];
        fr_tree *t = fr_tree_create();
        fr_link_def b = fr_link_def_default();
        b.type = FR_JOINT_FREE;
        b.mass = 5.7;
        b.inertia = fr_m3_diag(fr_v3(0.0213, 0.0487, 0.0611));
        b.com = fr_v3(0.013, -0.007, 0.004); /* (the link origin off the centre of mass) */
        b.q0_pos = fr_v3(0.2, -0.1, 0.4);
        b.q0_rot = fr_q_normalize(fr_q(0.9, 0.1, -0.3, 0.2));
        ck_assert_int_ge(fr_tree_add_link(t, &b), 0);
        ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
        fr_tree_data *d = fr_tree_data_create(t);
        d->gravity = fr_v3_zero();
        const double v0[6] = {w0.x, w0.y, w0.z, 0.4, -0.3, 0.2};
        memcpy(d->qd, v0, sizeof v0);
        fr_tree_forward_kinematics(t, d);
        double m;
        const double E0 = fr_tree_kinetic_energy(t, d);
        fr_svec h0 = fr_tree_momentum(t, d);
        fr_vec3 c0 = fr_tree_com(t, d, &m);
        const fr_vec3 L0 = fr_v3_sub(h0.ang, fr_v3_cross(c0, h0.lin));
        e[k] = lc[k] = 0.0;
        for (int n = 0; n < (int)(T / dt + 0.5); n++) {
            ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
            e[k] = fmax(e[k], fabs(fr_tree_kinetic_energy(t, d) - E0) / E0);
            const fr_svec h = fr_tree_momentum(t, d);
            const fr_vec3 c = fr_tree_com(t, d, &m);
            const fr_vec3 L = fr_v3_sub(h.ang, fr_v3_cross(c, h.lin));
            lc[k] = fmax(lc[k], fr_v3_norm(fr_v3_sub(L, L0)) / fr_v3_norm(L0));
            if (!(e[k] < 1.0)) break; /* (diverging: no use going on) */
        }
        fr_tree_data_destroy(d);
        fr_tree_destroy(t);
    }
    fflush(stdout);
    printf("# free spin, %s axis, 2 s: energy %.3g (5 ms) %.3g (1 ms) %.3g (0.5 ms); angular "
           "momentum about the centre of mass %.3g %.3g %.3g\n",
           _i == 0 ? "intermediate" : "near the major", e[0], e[1], e[2], lc[0], lc[1], lc[2]);
    for (int k = 0; k < 2; k++) {
        const double wdt = wn * dts[k];
        ck_assert_msg(e[k] < 0.1 * wdt * wdt, "energy off by %g at dt %g", e[k], dts[k]);
        ck_assert_msg(lc[k] < 0.3 * wdt, "momentum off by %g at dt %g", lc[k], dts[k]);
    }
    ck_assert_msg(e[1] / e[2] > 3.5 && e[1] / e[2] < 4.6, "energy: not O(dt²): %g, %g", e[1], e[2]);
    ck_assert_msg(lc[1] / lc[2] > 1.6 && lc[1] / lc[2] < 2.6, "momentum: not O(dt): %g, %g", lc[1],
                  lc[2]);
}
END_TEST

/* ---------------------------------------------------------------- IK */

START_TEST(test_ik_dls_converges)
{
    frtest_rng r = {5};
    /* a 6-DOF chain on a free base: reach a pose the chain can reach (FK of a random q) */
    fr_tree *t = fr_tree_create();
    fr_link_def b = fr_link_def_default();
    b.type = FR_JOINT_FREE;
    b.mass = 5;
    int base = fr_tree_add_link(t, &b), prev = base;
    fr_vec3 axes[6] = {{0, 0, 1}, {0, 1, 0}, {0, 1, 0}, {1, 0, 0}, {0, 1, 0}, {1, 0, 0}};
    for (int k = 0; k < 6; k++) {
        fr_link_def l = fr_link_def_default();
        l.parent = prev;
        l.axis = axes[k];
        l.joint_pose.p = fr_v3(k == 0 ? 0 : 0.25, 0, 0);
        prev = fr_tree_add_link(t, &l);
    }
    fr_tree_finalize(t);
    fr_tree_data *d = fr_tree_data_create(t);
    int nv = fr_tree_nv(t), nq = fr_tree_nq(t);
    fr_vec3 tip = fr_v3(0.1, 0, 0);
    for (int k = 0; k < 6; k++) d->q[7 + k] = frtest_uniform(&r, -1, 1);
    fr_tree_forward_kinematics(t, d);
    fr_vec3 goal_p = fr_tree_point_world(d, prev, tip);
    fr_quat goal_q = d->pose[prev].q;
    for (int k = 0; k < 6; k++) d->q[7 + k] += frtest_uniform(&r, -0.4, 0.4);
    double *dth = malloc(sizeof(double) * (size_t)nv), *q_base = malloc(sizeof(double) * 7);
    memcpy(q_base, d->q, sizeof(double) * 7);
    double err = 1;
    for (int it = 0; it < 100 && err > 1e-10; it++) {
        fr_tree_forward_kinematics(t, d);
        fr_vec3 dp = fr_v3_sub(goal_p, fr_tree_point_world(d, prev, tip));
        fr_vec3 dr = fr_q_log(fr_q_mul(goal_q, fr_q_conj(d->pose[prev].q)));
        err = fr_v3_norm(dp) + fr_v3_norm(dr);
        ck_assert_int_eq(fr_tree_ik_dls(t, d, prev, tip, base, dp, &dr, 1e-3, dth), FR_OK);
        for (int k = 0; k < 6; k++) ck_assert_double_eq(dth[k], 0.0); /* base excluded */
        fr_tree_integrate_q(t, d->q, dth, 1.0, d->q);
    }
    ck_assert_double_lt(err, 1e-10);
    ck_assert(memcmp(q_base, d->q, sizeof(double) * 7) == 0);
    (void)nq;
    /* position-only, whole chain incl. the base */
    ck_assert_int_eq(fr_tree_ik_dls(t, d, prev, tip, -1, fr_v3(0.01, 0, 0), NULL, 0.1, dth), FR_OK);
    ck_assert_double_ne(fabs(dth[3]) + fabs(dth[4]) + fabs(dth[5]), 0.0);
    ck_assert_int_eq(fr_tree_ik_dls(t, d, base, tip, prev, fr_v3_zero(), NULL, 0.1, dth),
                     FR_ERR_INVAL); /* base_link not an ancestor */
    free(dth), free(q_base);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------- builder and memory */

START_TEST(test_builder)
{
    fr_tree *t = fr_tree_create();
    fr_link_def l = fr_link_def_default();
    l.name = "base";
    l.joint_name = "j0";
    ck_assert_int_eq(fr_tree_add_link(t, &l), 0);
    l.parent = 0;
    l.name = "arm";
    l.joint_name = "j1";
    l.type = FR_JOINT_SPHERICAL;
    ck_assert_int_eq(fr_tree_add_link(t, &l), 1);
    ck_assert_int_eq(fr_tree_add_link(t, &l), FR_ERR_INVAL); /* duplicate names */
    l.name = "x";
    l.joint_name = "y";
    l.parent = 5;
    ck_assert_int_eq(fr_tree_add_link(t, &l), FR_ERR_INVAL); /* parent after child */
    l.parent = 1;
    l.type = FR_JOINT_REVOLUTE;
    l.axis = fr_v3_zero();
    ck_assert_int_eq(fr_tree_add_link(t, &l), FR_ERR_INVAL);
    l.axis = fr_v3(0, 0, 2);
    l.inertia = fr_m3_diag(fr_v3(-1, 1, 1));
    ck_assert_int_eq(fr_tree_add_link(t, &l), FR_ERR_INVAL);
    l.inertia = fr_m3_diag(fr_v3(1, 1, 1));
    ck_assert_int_eq(fr_tree_add_link(t, &l), 2);
    ck_assert_double_eq(fr_tree_link_def(t, 2)->axis.z, 1.0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    ck_assert_int_eq(fr_tree_add_link(t, &l), FR_ERR_LOCKED);
    ck_assert_int_eq(fr_tree_link_find(t, "arm"), 1);
    ck_assert_int_eq(fr_tree_joint_find(t, "y"), 2);
    ck_assert_int_eq(fr_tree_link_find(t, "nope"), -1);
    ck_assert_int_eq(fr_tree_nq(t), 6);
    ck_assert_int_eq(fr_tree_nv(t), 5);
    ck_assert_int_eq(fr_tree_link_q_index(t, 2), 5);
    ck_assert_int_eq(fr_tree_link_v_index(t, 2), 4);
    /* arena-backed data fits in exactly fr_tree_data_size bytes */
    fr_arena a;
    ck_assert_int_eq(fr_arena_init(&a, fr_tree_data_size(t)), FR_OK);
    fr_tree_data *d = fr_tree_data_create_in(t, &a);
    ck_assert_ptr_nonnull(d);
    ck_assert_double_eq(d->q[1], 1.0); /* identity quaternion w */
    ck_assert_int_eq(fr_tree_step(t, d, 1e-3), FR_OK);
    fr_arena_destroy(&a);
    fr_tree_destroy(t);
}
END_TEST

START_TEST(test_no_allocation)
{
    frtest_rng r = {11};
    fr_tree *t = random_tree(&r, 33, 1);
    fr_tree_data *d = fr_tree_data_create(t);
    int nv = fr_tree_nv(t);
    double *M = malloc(sizeof(double) * (size_t)(nv * nv)),
           *tau = malloc(sizeof(double) * (size_t)nv);
    double *dth = malloc(sizeof(double) * (size_t)nv);
    for (int k = 0; k < nv; k++) d->kp[k] = 100, d->kd[k] = 1;
    if (!fri_watch_available()) {
        printf("# allocation counters unavailable (sanitizer build)\n");
    } else {
        fri_watch_thread(pthread_self());
        int bad = 0; /* no ck_assert while armed: Check itself allocates to record locations */
        fri_watch_arm();
        for (int k = 0; k < 50; k++) {
            fr_tree_add_ext_force(d, 1, fr_v3(0, 0, 0), fr_v3(0, 0, 1));
            bad += fr_tree_step(t, d, 1e-3) != FR_OK;
        }
        fr_tree_aba(t, d);
        fr_tree_rnea(t, d, d->qdd, tau);
        fr_tree_crba(t, d, M);
        fr_tree_ik_dls(t, d, fr_tree_nlinks(t) - 1, fr_v3_zero(), -1, fr_v3(0, 0, 0.01), NULL, 0.1,
                       dth);
        fri_watch_counts c = fri_watch_disarm();
        ck_assert_int_eq(bad, 0);
        ck_assert_int_eq(c.allocs, 0);
        ck_assert_int_eq(c.frees, 0);
        ck_assert_int_eq(c.locks, 0);
        ck_assert_int_eq(c.io, 0);
    }
    free(M), free(tau), free(dth);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* An implicit external inertia: a free link in gravity pulled to a fixed point by a stiff
 * spring-damper taken at the step's end (f = −k(x⁺ − a) − c·v⁺, entered as f_ext and
 * I_ext = dt·(c + dt·k) at its centre) follows the implicit-Euler recurrence
 * (m + dt·c + dt²·k)·v⁺ = m·v + dt·(k·(a − x) + m·g) without rotating, far past the explicit
 * limit (k·dt²/m = 1e4). */
START_TEST(test_implicit_ext_inertia)
{
    const double m = 0.05, dt = 0.001, k = 1e4 * m / (dt * dt), c = 3.0;
    fr_tree *t = fr_tree_create();
    fr_link_def ld = fr_link_def_default();
    ld.parent = -1;
    ld.type = FR_JOINT_FREE;
    ld.mass = m;
    ld.inertia = fr_m3_diag(fr_v3(2e-5, 3e-5, 4e-5));
    ld.q0_pos = fr_v3(0.3, -0.2, 0.5);
    ld.q0_rot = fr_q_normalize(fr_q(0.9, 0.1, 0.2, -0.1));
    ck_assert_int_ge(fr_tree_add_link(t, &ld), 0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_tree_data *d = fr_tree_data_create(t);
    const fr_vec3 g =
        fr_v3(0.5, -0.3, -9.81); /* gravity too: ABA takes it as a base acceleration */
    d->gravity = g;
    fr_tree_forward_kinematics(t, d);
    const fr_vec3 a = fr_v3(0.1, 0.1, 0.1);
    fr_vec3 x = ld.q0_pos, v = fr_v3_zero();
    fr_quat q0 = d->pose[0].q;
    for (int n = 0; n < 300; n++) {
        fr_vec3 p = fr_tree_point_world(d, 0, fr_v3_zero()); /* the centre (com at the origin) */
        fr_vec3 vp = fr_tree_point_velocity(d, 0, p);
        /* f0 − C·ν at the centre: F = k(a − p) (C = diag(0, c + dt·k) there) */
        fr_vec3 F = fr_v3_sub(fr_v3_scale(fr_v3_sub(a, p), k), fr_v3_scale(vp, c + dt * k));
        fr_tree_add_ext_force(d, 0, p, F);
        /* I_ext = dt·Xᵀ C X with X: (ω; v_O) ↦ twist at p, i.e. [0 0; 0 s·1] moved to the origin */
        double sdt = dt * (c + dt * k);
        fr_mat3 px = fr_m3_skew(p);
        fr_mat6 I = fr_m6_zero();
        fr_mat3 A = fr_m3_scale(fr_m3_mul(px, fr_m3_transpose(px)), sdt);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                I.m[i][j] = A.m[i][j];
                I.m[i][j + 3] = sdt * px.m[i][j];
                I.m[i + 3][j] = -sdt * px.m[i][j];
            }
            I.m[i + 3][i + 3] = sdt;
        }
        fr_tree_add_ext_inertia(d, 0, &I);
        ck_assert_int_eq(fr_tree_step(t, d, dt), FR_OK);
        /* the recurrence, per axis */
        v = fr_v3_scale(
            fr_v3_add(fr_v3_add(fr_v3_scale(v, m), fr_v3_scale(fr_v3_sub(a, x), dt * k)),
                      fr_v3_scale(g, dt * m)),
            1.0 / (m + dt * c + dt * dt * k));
        x = fr_v3_mad(x, dt, v);
        fr_vec3 pn = fr_tree_point_world(d, 0, fr_v3_zero());
        /* rounding only: k·dt²/m = 1e4 amplifies the 1e-16 of the spatial algebra to ~1e-10 m */
        ck_assert_double_le(fr_v3_dist(pn, x), 1e-9);
        /* no torque about the centre: only rounding turns it (1e5 N forces at 0.6 m against
         * 2e-5 kg·m² make ~1e-8 rad over the run); a wrong coupling block turns it by degrees */
        ck_assert_double_le(fr_q_angle_between(d->pose[0].q, q0), 1e-6);
        ck_assert(!d->has_I_ext[0]); /* consumed by the step */
    }
    /* at rest where the spring carries the weight: k·(a − x) + m·g = 0 */
    ck_assert_double_lt(fr_v3_dist(x, fr_v3_mad(a, m / k, g)), 1e-6);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------- revised steps */

/* A random tree whose 1-DOF joints have PD gains and, some of them, hard or soft limits, effort
 * and speed limits: a step's joint modes then engage and revise. */
static fr_tree *random_motor_tree(frtest_rng *r, int ndof, int base)
{
    fr_tree *t0 = random_tree(r, ndof, base);
    fr_tree *t = fr_tree_create();
    for (int i = 0; i < fr_tree_nlinks(t0); i++) {
        fr_link_def d = *fr_tree_link_def(t0, i);
        if (d.type == FR_JOINT_REVOLUTE || d.type == FR_JOINT_PRISMATIC) {
            d.kp = frtest_uniform(r, 0, 1) < 0.7 ? frtest_uniform(r, 1, 1e4) : 0.0;
            d.kd = frtest_uniform(r, 0, 20);
            double u = frtest_uniform(r, 0, 1);
            if (u < 0.2) {
                d.limited = true;
                d.q_min = frtest_uniform(r, -1.5, 0.2);
                d.q_max = d.q_min + frtest_uniform(r, 0.05, 2.0);
                d.limit_k = u < 0.1 ? 0.0 : frtest_uniform(r, 1e2, 1e5);
                d.limit_d = d.limit_k > 0 ? frtest_uniform(r, 0, 50) : 0.0;
            }
            if (frtest_uniform(r, 0, 1) < 0.3)
                d.effort_limit = pow(10.0, frtest_uniform(r, 1, 3.5));
            if (frtest_uniform(r, 0, 1) < 0.1) d.max_velocity = frtest_uniform(r, 1, 5);
        }
        ck_assert_int_eq(fr_tree_add_link(t, &d), i);
    }
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_tree_destroy(t0);
    return t;
}

/* An external inertia as a contact's tangent gives one: symmetric positive semi-definite (of rank
 * 6 or less), 1e-3 to 10 in size. */
static fr_mat6 rand_ext_inertia(frtest_rng *r)
{
    double B[6][6];
    int rank = 1 + (int)(frtest_next(r) % 6);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) B[i][j] = frtest_uniform(r, -1, 1);
    double sc = pow(10.0, frtest_uniform(r, -3, 1));
    fr_mat6 I;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            I.m[i][j] = 0;
            for (int k = 0; k < rank; k++) I.m[i][j] += sc * B[i][k] * B[j][k];
        }
    return I;
}

/*
 * An external inertia I on a link (a contact's tangent, fr_tree_add_ext_inertia) is the force
 * −I·a on the link's whole spatial acceleration a = J·qdd + J̇·qd (world, about the origin), as
 * for a body whose inertia it adds to. On random trees with inertias on any links, ABA equals the
 * dense (M + Σ JᵢᵀIᵢJᵢ)·qdd = τ − C(q, qd, g, f_ext) − Σ JᵢᵀIᵢ·J̇ᵢqd, Jᵢ the link's spatial Jacobian
 * and J̇ᵢqd from central differences of Jᵢ along the motion (ε = 1e-6: error ~1e-11 of it). A
 * single free body, the only case tested before, cannot tell whether J̇·qd is in: it is zero there.
 */
START_TEST(test_ext_inertia_matches_dense)
{
    frtest_rng r = {1618};
    const double eps = 1e-6;
    double worst = 0, jdot_share = 0;
    for (int trial = 0; trial < 60; trial++) {
        fr_tree *t = random_tree(&r, 2 + trial % 30, trial % 2);
        fr_tree_data *d = fr_tree_data_create(t), *e = fr_tree_data_create(t);
        randomize_state(&r, t, d);
        const int nv = fr_tree_nv(t), n = fr_tree_nlinks(t);
        double *M = malloc(sizeof(double) * (size_t)(nv * nv)),
               *C = malloc(sizeof(double) * (size_t)nv), *x = malloc(sizeof(double) * (size_t)nv),
               *y = malloc(sizeof(double) * (size_t)nv), *zero = calloc((size_t)nv, sizeof(double)),
               *J = malloc(sizeof(double) * (size_t)(6 * nv)),
               *Jp = malloc(sizeof(double) * (size_t)(6 * nv)),
               *Jm = malloc(sizeof(double) * (size_t)(6 * nv));
        fr_tree_forward_kinematics(t, d);
        fr_tree_crba(t, d, M);
        fr_tree_rnea(t, d, zero, C);
        for (int k = 0; k < nv; k++) x[k] = d->tau[k] - C[k], y[k] = x[k];
        for (int i = 0; i < n; i++) {
            if (frtest_uniform(&r, 0, 1) < 0.5) continue;
            fr_mat6 I = rand_ext_inertia(&r);
            fr_tree_add_ext_inertia(d, i, &I);
            /* J (6 × nv): ω, then the twist's linear part about the origin; J̇·qd by differences */
            fr_tree_point_jacobian(t, d, i, fr_v3_zero(), J, J + 3 * nv);
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                fr_tree_integrate_q(t, d->q, d->qd, sgn * eps, e->q);
                fr_tree_forward_kinematics(t, e);
                double *Js = sgn > 0 ? Jp : Jm;
                fr_tree_point_jacobian(t, e, i, fr_v3_zero(), Js, Js + 3 * nv);
            }
            double jd[6];
            for (int u = 0; u < 6; u++) {
                jd[u] = 0;
                for (int b = 0; b < nv; b++)
                    jd[u] += (Jp[u * nv + b] - Jm[u * nv + b]) / (2 * eps) * d->qd[b];
            }
            for (int a = 0; a < nv; a++) {
                for (int b = 0; b < nv; b++) {
                    double sum = 0;
                    for (int u = 0; u < 6; u++)
                        for (int v = 0; v < 6; v++)
                            sum += J[u * nv + a] * I.m[u][v] * J[v * nv + b];
                    M[a * nv + b] += sum;
                }
                for (int u = 0; u < 6; u++)
                    for (int v = 0; v < 6; v++) x[a] -= J[u * nv + a] * I.m[u][v] * jd[v];
            }
        }
        ck_assert(fr_chol_factor(M, nv));
        fr_chol_solve(M, nv, x);
        fr_chol_solve(M, nv, y); /* (the same without J̇·qd: how much the term weighs) */
        fr_tree_aba(t, d);
        double e1 = maxdiff(x, d->qdd, nv) / fmax(maxabs(x, nv), 1e-12);
        worst = fmax(worst, e1);
        jdot_share = fmax(jdot_share, maxdiff(x, y, nv) / fmax(maxabs(x, nv), 1e-12));
        ck_assert_msg(e1 < 1e-8, "trial %d (%d DOF): ABA with external inertias vs dense rel %.3g",
                      trial, nv, e1);
        free(M), free(C), free(x), free(y), free(zero), free(J), free(Jp), free(Jm);
        fr_tree_data_destroy(d);
        fr_tree_data_destroy(e);
        fr_tree_destroy(t);
    }
    printf("# external inertias: ABA vs dense worst rel %.3g (J̇·qd moves qdd by up to %.3g)\n",
           worst, jdot_share);
    ck_assert_double_gt(jdot_share, 1e3 * worst); /* the term is seen */
}
END_TEST

/*
 * fr_tree_step_revise gives what the full Euler step with the changed forces gives: over random
 * motor trees (limits, efforts, speed limits, external inertias), a step with forces F, then
 * revisions by ΔF₁ and ΔF₂, against a fresh step with F + ΔF₁ + ΔF₂, to rounding. Where it
 * refuses (1), q and qd are untouched and a full step of its own forces must have revised its
 * joint modes (or the first step had), which the test checks by the full step's own report.
 */
START_TEST(test_step_revise_matches_full)
{
    frtest_rng r = {2718};
    const double dt = 1e-3;
    int revised = 0, refused = 0, refused_modes = 0;
    double worst = 0;
    for (int trial = 0; trial < 300; trial++) {
        fr_tree *t = random_motor_tree(&r, 3 + trial % 25, trial % 2);
        const int n = fr_tree_nlinks(t), nq = fr_tree_nq(t), nv = fr_tree_nv(t);
        fr_tree_data *d = fr_tree_data_create(t), *e = fr_tree_data_create(t);
        randomize_state(&r, t, d);
        /* PD targets near the state: the motors start within their efforts, mostly */
        memcpy(d->q_ref, d->q, sizeof(double) * (size_t)nq);
        for (int i = 0; i < n; i++)
            if (fr_tree_link_nv(t, i) == 1)
                d->q_ref[fr_tree_link_q_index(t, i)] += frtest_uniform(&r, -0.05, 0.05);
        ck_assert_int_gt(n, 0);
        const size_t nl = (size_t)n;
        fr_svec *F = malloc(sizeof(fr_svec) * nl);
        fr_mat6 *I = malloc(sizeof(fr_mat6) * nl);
        bool *hasI = malloc(sizeof(bool) * nl);
        for (int i = 0; i < n; i++) {
            F[i] = d->f_ext[i];
            hasI[i] = frtest_uniform(&r, 0, 1) < 0.3;
            if (hasI[i]) {
                I[i] = rand_ext_inertia(&r);
                fr_tree_add_ext_inertia(d, i, &I[i]);
            }
        }
        double *q0 = malloc(sizeof(double) * (size_t)nq),
               *qd0 = malloc(sizeof(double) * (size_t)nv);
        memcpy(q0, d->q, sizeof(double) * (size_t)nq);
        memcpy(qd0, d->qd, sizeof(double) * (size_t)nv);
        fr_tree_forward_kinematics(t, d);
        ck_assert_int_eq(fr_tree_step_no_kinematics(t, d, dt), FR_OK);
        const bool first_held = d->ws->revisable; /* (its modes not revised) */
        int rc = 0;
        for (int pass = 0; pass < 2 && rc == 0; pass++) {
            memcpy(d->q, q0, sizeof(double) * (size_t)nq);
            memcpy(d->qd, qd0, sizeof(double) * (size_t)nv);
            /* changes of a few links' forces, small or large against F */
            double mag = pow(10.0, frtest_uniform(&r, -4, 5));
            for (int i = 0; i < n; i++) {
                if (frtest_uniform(&r, 0, 1) < 0.6) continue;
                fr_svec df = fr_sv(rand_v3(&r, 3 * mag), rand_v3(&r, 10 * mag));
                F[i] = fr_sv_add(F[i], df);
                d->f_ext[i] = df;
            }
            rc = fr_tree_step_revise(t, d, dt);
            ck_assert_int_ge(rc, 0);
            for (int i = 0; i < n; i++) ck_assert(sv_norm(d->f_ext[i]) == 0.0); /* cleared */
        }
        /* the reference: a fresh step with the whole forces */
        memcpy(e->q, q0, sizeof(double) * (size_t)nq);
        memcpy(e->qd, qd0, sizeof(double) * (size_t)nv);
        memcpy(e->tau, d->tau, sizeof(double) * (size_t)nv);
        memcpy(e->q_ref, d->q_ref, sizeof(double) * (size_t)nq);
        memcpy(e->qd_ref, d->qd_ref, sizeof(double) * (size_t)nv);
        memcpy(e->kp, d->kp, sizeof(double) * (size_t)nv);
        memcpy(e->kd, d->kd, sizeof(double) * (size_t)nv);
        e->gravity = d->gravity;
        for (int i = 0; i < n; i++) {
            e->f_ext[i] = F[i];
            if (hasI[i]) fr_tree_add_ext_inertia(e, i, &I[i]);
        }
        fr_tree_forward_kinematics(t, e);
        ck_assert_int_eq(fr_tree_step_no_kinematics(t, e, dt), FR_OK);
        if (rc == 0) {
            revised++;
            double sq = 1e-300, sqd = 1e-300, stau = 1e-300;
            for (int k = 0; k < nq; k++) sq = fmax(sq, fabs(e->q[k]));
            for (int k = 0; k < nv; k++) {
                sqd = fmax(sqd, fabs(e->qd[k] - qd0[k]));
                stau = fmax(stau, fabs(e->tau_out[k]));
            }
            double dq = maxdiff(d->q, e->q, nq) / sq, dqd = maxdiff(d->qd, e->qd, nv) / sqd,
                   dtau = maxdiff(d->tau_out, e->tau_out, nv) / stau;
            worst = fmax(worst, fmax(dq, fmax(dqd, dtau)));
            /* (rounding: the two sum the same terms in another order) */
            ck_assert_msg(dqd < 1e-12 && dq < 1e-12 && dtau < 1e-12,
                          "trial %d: revised vs full: q %.3g, qd change %.3g, tau_out %.3g", trial,
                          dq, dqd, dtau);
        } else {
            refused++;
            /* untouched, and refused for a reason: the first step revised its joint modes, or
             * the full step with the changed forces revises them */
            ck_assert(maxdiff(d->q, q0, nq) == 0.0 && maxdiff(d->qd, qd0, nv) == 0.0);
            ck_assert(!first_held || !e->ws->revisable);
            refused_modes += first_held;
        }
        free(F), free(I), free(hasI), free(q0), free(qd0);
        fr_tree_data_destroy(d);
        fr_tree_data_destroy(e);
        fr_tree_destroy(t);
    }
    printf("# step revisions: %d matched the full step (worst %.3g), %d refused (%d where the "
           "change revises the modes)\n",
           revised, worst, refused, refused_modes);
    ck_assert_int_gt(revised, 100);
    ck_assert_int_gt(refused - refused_modes, 20);
    ck_assert_int_gt(refused_modes, 10);
}
END_TEST

/* A revision needs the step it revises: after another solve, with an external inertia, another
 * start or dt, or on a Verlet tree it is refused, and nothing moves. */
START_TEST(test_step_revise_refused)
{
    frtest_rng r = {31};
    fr_tree *t = random_tree(&r, 12, 1);
    const int nq = fr_tree_nq(t), nv = fr_tree_nv(t);
    fr_tree_data *d = fr_tree_data_create(t);
    randomize_state(&r, t, d);
    double q0[64], qd0[64];
    memcpy(q0, d->q, sizeof(double) * (size_t)nq);
    memcpy(qd0, d->qd, sizeof(double) * (size_t)nv);
    const double dt = 1e-3;
    /* no step yet */
    ck_assert_int_eq(fr_tree_step_revise(t, d, dt), 1);
    for (int c = 0; c < 6; c++) {
        memcpy(d->q, q0, sizeof(double) * (size_t)nq);
        memcpy(d->qd, qd0, sizeof(double) * (size_t)nv);
        d->integrator = FR_INTEGRATOR_EULER;
        fr_tree_forward_kinematics(t, d);
        ck_assert_int_eq(fr_tree_step_no_kinematics(t, d, dt), FR_OK);
        memcpy(d->q, q0, sizeof(double) * (size_t)nq);
        memcpy(d->qd, qd0, sizeof(double) * (size_t)nv);
        double h = dt;
        fr_mat6 I = rand_ext_inertia(&r);
        switch (c) {
        case 0:
            fr_tree_aba(t, d);
            break; /* another solve */
        case 1:
            ck_assert_int_eq(fr_tree_point_mass_prepare(t, d, dt), FR_OK);
            break;
        case 2:
            fr_tree_add_ext_inertia(d, 1, &I);
            break; /* an inertia */
        case 3:
            d->qd[nv - 1] += 1e-9;
            break; /* another start */
        case 4:
            h = 2e-3;
            break; /* another dt */
        case 5:
            break; /* (the control) */
        }
        d->f_ext[1] = fr_sv(fr_v3(1, 0, 0), fr_v3(0, 2, 0));
        double qb[64], qdb[64];
        memcpy(qb, d->q, sizeof(double) * (size_t)nq);
        memcpy(qdb, d->qd, sizeof(double) * (size_t)nv);
        int rc = fr_tree_step_revise(t, d, h);
        ck_assert_int_eq(rc, c == 5 ? FR_OK : 1);
        if (c < 5) {
            ck_assert(maxdiff(d->q, qb, nq) == 0.0 && maxdiff(d->qd, qdb, nv) == 0.0);
            /* and refused again until a full step */
            ck_assert_int_eq(fr_tree_step_revise(t, d, h), 1);
        }
    }
    ck_assert_int_eq(fr_tree_step_revise(t, d, 0.0), FR_ERR_INVAL);
    fr_tree_data_destroy(d);
    fr_tree_destroy(t);
}
END_TEST

static Suite *articulated_suite(void)
{
    Suite *s = suite_create("articulated");
    TCase *tc = tcase_create("dynamics");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_aba_matches_crba_rnea);
    tcase_add_test(tc, test_implicit_ext_inertia);
    tcase_add_test(tc, test_ext_inertia_matches_dense);
    tcase_add_test(tc, test_step_revise_matches_full);
    tcase_add_test(tc, test_step_revise_refused);
    tcase_add_test(tc, test_point_inv_mass_matches_dense);
    tcase_add_test(tc, test_crba_kinetic_energy);
    tcase_add_test(tc, test_joint_inertias_match_crba);
    tcase_add_test(tc, test_kinematics_match_integrator);
    tcase_add_test(tc, test_pendulum_period);
    tcase_add_test(tc, test_double_pendulum_energy);
    tcase_add_test(tc, test_slider_45);
    tcase_add_loop_test(tc, test_free_momentum, 0, 2);
    tcase_add_loop_test(tc, test_free_spin_torque_free, 0, 2);
    suite_add_tcase(s, tc);
    TCase *pd = tcase_create("control");
    tcase_add_test(pd, test_implicit_pd_tree_matches_dense);
    tcase_add_loop_test(pd, test_pd_implicit_stiff_settles, 0, 2);
    tcase_add_loop_test(pd, test_pd_explicit_stiff_diverges, 0, 2);
    tcase_add_loop_test(pd, test_pd_spherical, 0, 2);
    tcase_add_loop_test(pd, test_effort_limit, 0, 2);
    tcase_add_loop_test(pd, test_hard_limit, 0, 2);
    tcase_add_loop_test(pd, test_soft_limit, 0, 2);
    tcase_add_test(pd, test_ik_dls_converges);
    suite_add_tcase(s, pd);
    TCase *b = tcase_create("model");
    tcase_add_test(b, test_builder);
    tcase_add_test(b, test_no_allocation);
    suite_add_tcase(s, b);
    return s;
}

FRTEST_MAIN(articulated_suite)
