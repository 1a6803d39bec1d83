/* src/math: each identity is checked against an independent formulation (matrix products,
 * explicit 6x6 matrices, brute-force solves) on random inputs. */
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/math.h"

static fr_vec3 rand_v3(frtest_rng *r, double s)
{
    return fr_v3(frtest_uniform(r, -s, s), frtest_uniform(r, -s, s), frtest_uniform(r, -s, s));
}
static fr_quat rand_q(frtest_rng *r)
{
    return fr_q_normalize(fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                               frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
}
static fr_svec rand_sv(frtest_rng *r)
{
    return fr_sv(rand_v3(r, 2), rand_v3(r, 2));
}
static double sv_maxdiff(fr_svec a, fr_svec b)
{
    double m = 0;
    for (int i = 0; i < 6; i++) m = fmax(m, fabs(fr_sv_get(&a, i) - fr_sv_get(&b, i)));
    return m;
}
static double m3_maxdiff(fr_mat3 a, fr_mat3 b)
{
    double m = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m = fmax(m, fabs(a.m[i][j] - b.m[i][j]));
    return m;
}
static fr_rbi rand_rbi(frtest_rng *r)
{
    /* a physically valid inertia: principal moments from a random box, random rotation */
    double a = frtest_uniform(r, 0.1, 1), b = frtest_uniform(r, 0.1, 1),
           c = frtest_uniform(r, 0.1, 1);
    double m = frtest_uniform(r, 0.5, 3);
    fr_mat3 R = fr_q_to_m3(rand_q(r));
    fr_mat3 Ic =
        fr_m3_rotate(R, fr_m3_diag(fr_v3(m * (b * b + c * c) / 12, m * (a * a + c * c) / 12,
                                         m * (a * a + b * b) / 12)));
    return fr_rbi_make(m, rand_v3(r, 0.5), Ic);
}

START_TEST(test_quat_rotation_matches_matrix)
{
    frtest_rng r = {1};
    for (int k = 0; k < 1000; k++) {
        fr_quat q = rand_q(&r);
        fr_vec3 v = rand_v3(&r, 3);
        fr_vec3 a = fr_q_rotate(q, v), b = fr_m3_mulv(fr_q_to_m3(q), v);
        ck_assert_double_le(fr_v3_dist(a, b), 1e-14);
        /* round trip through the matrix */
        fr_quat q2 = fr_m3_to_q(fr_q_to_m3(q));
        ck_assert_double_le(fr_q_angle_between(q, q2), 1e-7);
        /* composition: rotate by a then b == rotate by b∘a */
        fr_quat p = rand_q(&r);
        fr_vec3 c = fr_q_rotate(p, fr_q_rotate(q, v)), d = fr_q_rotate(fr_q_mul(p, q), v);
        ck_assert_double_le(fr_v3_dist(c, d), 1e-14);
        ck_assert_double_le(fr_v3_dist(fr_q_unrotate(q, a), v), 1e-14);
    }
}
END_TEST

START_TEST(test_quat_exp_log)
{
    frtest_rng r = {2};
    for (int k = 0; k < 1000; k++) {
        /* angles from tiny (series branch) to near π */
        double scale = pow(10.0, frtest_uniform(&r, -9, 0.45));
        fr_vec3 w = fr_v3_scale(fr_v3_normalize(rand_v3(&r, 1)), scale);
        fr_quat q = fr_q_exp(w);
        ck_assert_double_le(fabs(fr_q_norm(q) - 1.0), 1e-15);
        fr_vec3 w2 = fr_q_log(q);
        ck_assert_double_le(fr_v3_dist(w, w2), 1e-14 * fmax(1.0, scale));
        /* agrees with axis-angle */
        fr_quat qa = fr_q_axis_angle(fr_v3_normalize(w), fr_v3_norm(w));
        ck_assert_double_le(
            fabs(q.w - qa.w) + fabs(q.x - qa.x) + fabs(q.y - qa.y) + fabs(q.z - qa.z), 1e-15);
    }
}
END_TEST

START_TEST(test_rpy)
{
    fr_quat q = fr_q_from_rpy(0.3, -0.2, 1.1);
    fr_mat3 Rx = fr_q_to_m3(fr_q_axis_angle(fr_v3(1, 0, 0), 0.3));
    fr_mat3 Ry = fr_q_to_m3(fr_q_axis_angle(fr_v3(0, 1, 0), -0.2));
    fr_mat3 Rz = fr_q_to_m3(fr_q_axis_angle(fr_v3(0, 0, 1), 1.1));
    /* URDF: fixed-axis roll, then pitch, then yaw */
    ck_assert_double_le(m3_maxdiff(fr_q_to_m3(q), fr_m3_mul(Rz, fr_m3_mul(Ry, Rx))), 1e-15);
}
END_TEST

START_TEST(test_m3_inverse_eigen_solve)
{
    frtest_rng r = {3};
    for (int k = 0; k < 500; k++) {
        fr_mat3 a;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) a.m[i][j] = frtest_uniform(&r, -1, 1);
        fr_mat3 ai;
        if (fr_m3_inverse(a, &ai))
            ck_assert_double_le(m3_maxdiff(fr_m3_mul(a, ai), fr_m3_identity()),
                                1e-9 / fmax(1e-3, fabs(fr_m3_det(a))));
        /* symmetric: a aᵀ + I is SPD */
        fr_mat3 s = fr_m3_add(fr_m3_mult(a, a), fr_m3_identity());
        fr_vec3 w;
        fr_mat3 V;
        fr_m3_eigen_sym(s, &w, &V);
        ck_assert(w.x <= w.y && w.y <= w.z);
        ck_assert_double_le(fabs(fr_m3_det(V) - 1.0), 1e-12);
        ck_assert_double_le(m3_maxdiff(fr_m3_rotate(V, fr_m3_diag(w)), s), 1e-12);
        fr_vec3 b = rand_v3(&r, 1), x;
        ck_assert(fr_m3_solve_spd(s, b, &x));
        ck_assert_double_le(fr_v3_dist(fr_m3_mulv(s, x), b), 1e-12);
    }
    /* singular matrix is refused */
    fr_mat3 sing = fr_m3_outer(fr_v3(1, 2, 3), fr_v3(4, 5, 6)), out;
    ck_assert(!fr_m3_inverse(sing, &out));
}
END_TEST

START_TEST(test_dense_solvers_agree)
{
    frtest_rng r = {4};
    for (int n = 1; n <= 12; n++) {
        double a[144], spd[144], lu[144], b[12], x1[12], x2[12];
        for (int i = 0; i < n * n; i++) a[i] = frtest_uniform(&r, -1, 1);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = i == j ? 0.5 : 0.0;
                for (int k = 0; k < n; k++) s += a[i * n + k] * a[j * n + k];
                spd[i * n + j] = s;
            }
        for (int i = 0; i < n; i++) b[i] = x1[i] = x2[i] = frtest_uniform(&r, -1, 1);
        memcpy(lu, spd, sizeof(double) * n * n);
        double L[144];
        memcpy(L, spd, sizeof(double) * n * n);
        ck_assert(fr_chol_factor(L, n));
        fr_chol_solve(L, n, x1);
        ck_assert(fr_lu_solve(lu, n, x2));
        for (int i = 0; i < n; i++) {
            double res = -b[i];
            for (int j = 0; j < n; j++) res += spd[i * n + j] * x1[j];
            ck_assert_double_le(fabs(res), 1e-10);
            ck_assert_double_le(fabs(x1[i] - x2[i]), 1e-8 * fmax(1, fabs(x1[i])));
        }
    }
}
END_TEST

START_TEST(test_plucker_duality_and_composition)
{
    frtest_rng r = {5};
    for (int k = 0; k < 1000; k++) {
        fr_pose T1 = {rand_v3(&r, 2), rand_q(&r)}, T2 = {rand_v3(&r, 2), rand_q(&r)};
        fr_xform X = fr_xf_from_pose(T1), Y = fr_xf_from_pose(T2);
        fr_svec m = rand_sv(&r), f = rand_sv(&r);
        /* power is frame-invariant: (X m)·(X* f) = m·f */
        ck_assert_double_le(
            fabs(fr_sv_dot(fr_xf_apply_m(X, m), fr_xf_apply_f(X, f)) - fr_sv_dot(m, f)), 1e-12);
        /* inverse */
        ck_assert_double_le(sv_maxdiff(fr_xf_inv_apply_m(X, fr_xf_apply_m(X, m)), m), 1e-13);
        ck_assert_double_le(sv_maxdiff(fr_xf_inv_apply_f(X, fr_xf_apply_f(X, f)), f), 1e-13);
        ck_assert_double_le(sv_maxdiff(fr_xf_apply_m(fr_xf_inverse(X), m), fr_xf_inv_apply_m(X, m)),
                            1e-13);
        /* composition: frames chained as poses, T2 expressed in T1's frame */
        fr_xform XY = fr_xf_mul(Y, X); /* (C_X_B)(B_X_A) with B = T1 in A, C = T2 in B */
        ck_assert_double_le(sv_maxdiff(fr_xf_apply_m(XY, m), fr_xf_apply_m(Y, fr_xf_apply_m(X, m))),
                            1e-12);
        fr_xform XP = fr_xf_from_pose(fr_pose_mul(T1, T2));
        ck_assert_double_le(sv_maxdiff(fr_xf_apply_m(XP, m), fr_xf_apply_m(XY, m)), 1e-12);
    }
}
END_TEST

START_TEST(test_plucker_point_velocity)
{
    /* A body spinning with ω about the world origin: the velocity of a point p is ω × p. In a
     * frame at p (no rotation), the spatial velocity's linear part is that point velocity. */
    fr_vec3 w = fr_v3(0.3, -1.2, 0.5), p = fr_v3(1, 2, -0.5);
    fr_svec v = fr_sv(w, fr_v3_zero()); /* velocity of the point at the origin is zero */
    fr_svec vp = fr_xf_apply_m(fr_xf_trans(p), v);
    ck_assert_double_le(fr_v3_dist(vp.lin, fr_v3_cross(w, p)), 1e-15);
    /* a pure force f at p gives moment p × f about the origin */
    fr_vec3 f = fr_v3(2, 0, -1);
    fr_svec fo = fr_xf_inv_apply_f(fr_xf_trans(p), fr_sv(fr_v3_zero(), f));
    ck_assert_double_le(fr_v3_dist(fo.ang, fr_v3_cross(p, f)), 1e-15);
}
END_TEST

START_TEST(test_cross_products)
{
    frtest_rng r = {6};
    for (int k = 0; k < 200; k++) {
        fr_svec v = rand_sv(&r), m = rand_sv(&r), f = rand_sv(&r);
        /* v×* is the negative transpose of v×: (v×m)·f = -m·(v×* f) */
        ck_assert_double_le(
            fabs(fr_sv_dot(fr_sv_crossm(v, m), f) + fr_sv_dot(m, fr_sv_crossf(v, f))), 1e-12);
        ck_assert_double_le(sv_maxdiff(fr_sv_crossm(v, v), fr_sv_zero()), 1e-15);
    }
}
END_TEST

START_TEST(test_inertia_transforms)
{
    frtest_rng r = {7};
    for (int k = 0; k < 300; k++) {
        fr_rbi I = rand_rbi(&r);
        fr_xform X = fr_xf_from_pose((fr_pose){rand_v3(&r, 2), rand_q(&r)});
        fr_svec v = rand_sv(&r);
        /* 6x6 form equals the compact product */
        fr_mat6 M = fr_m6_from_rbi(I);
        ck_assert_double_le(sv_maxdiff(fr_m6_mulv(&M, v), fr_rbi_mulv(I, v)), 1e-12);
        /* I_B = X* I_A X⁻¹: momentum transforms as a force */
        fr_rbi IB = fr_rbi_transform(X, I);
        fr_svec vB = fr_xf_apply_m(X, v);
        ck_assert_double_le(sv_maxdiff(fr_rbi_mulv(IB, vB), fr_xf_apply_f(X, fr_rbi_mulv(I, v))),
                            1e-11);
        /* and back */
        fr_rbi IA = fr_rbi_transform_inv(X, IB);
        ck_assert_double_le(sv_maxdiff(fr_rbi_mulv(IA, v), fr_rbi_mulv(I, v)), 1e-11);
        /* 6x6 versions agree */
        fr_mat6 MB, MA;
        fr_m6_transform(X, &M, &MB);
        fr_m6_transform_inv(X, &MB, &MA);
        ck_assert_double_le(sv_maxdiff(fr_m6_mulv(&MB, vB), fr_rbi_mulv(IB, vB)), 1e-11);
        ck_assert_double_le(sv_maxdiff(fr_m6_mulv(&MA, v), fr_rbi_mulv(I, v)), 1e-11);
        /* kinetic energy is frame-invariant */
        ck_assert_double_le(
            fabs(fr_sv_dot(vB, fr_rbi_mulv(IB, vB)) - fr_sv_dot(v, fr_rbi_mulv(I, v))), 1e-11);
    }
}
END_TEST

START_TEST(test_pose_ops)
{
    frtest_rng r = {8};
    for (int k = 0; k < 500; k++) {
        fr_pose a = {rand_v3(&r, 2), rand_q(&r)}, b = {rand_v3(&r, 2), rand_q(&r)};
        fr_vec3 p = rand_v3(&r, 1);
        ck_assert_double_le(
            fr_v3_dist(fr_pose_apply(fr_pose_mul(a, b), p), fr_pose_apply(a, fr_pose_apply(b, p))),
            1e-13);
        ck_assert_double_le(fr_v3_dist(fr_pose_apply(fr_pose_inverse(a), fr_pose_apply(a, p)), p),
                            1e-13);
        ck_assert_double_le(fr_v3_dist(fr_pose_apply_inv(a, fr_pose_apply(a, p)), p), 1e-13);
    }
}
END_TEST

START_TEST(test_errors_named)
{
    for (int e = FR_ERR_PERM; e <= FR_OK; e++) {
        ck_assert_ptr_nonnull(fr_strerror(e));
        ck_assert_str_ne(fr_strerror(e), "unknown error");
    }
    ck_assert_str_eq(fr_strerror(-999), "unknown error");
}
END_TEST

START_TEST(test_arena)
{
    fr_arena a;
    ck_assert_int_eq(fr_arena_init(&a, 1000), FR_OK);
    double *x = FR_ARENA_NEW(&a, double, 10);
    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq((uintptr_t)x % 64, 0);
    for (int i = 0; i < 10; i++) ck_assert(x[i] == 0.0);
    ck_assert_ptr_null(fr_arena_alloc(&a, 100000));
    fr_arena_destroy(&a);
}
END_TEST

static Suite *math_suite(void)
{
    Suite *s = suite_create("math");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_quat_rotation_matches_matrix);
    tcase_add_test(tc, test_quat_exp_log);
    tcase_add_test(tc, test_rpy);
    tcase_add_test(tc, test_m3_inverse_eigen_solve);
    tcase_add_test(tc, test_dense_solvers_agree);
    tcase_add_test(tc, test_plucker_duality_and_composition);
    tcase_add_test(tc, test_plucker_point_velocity);
    tcase_add_test(tc, test_cross_products);
    tcase_add_test(tc, test_inertia_transforms);
    tcase_add_test(tc, test_pose_ops);
    tcase_add_test(tc, test_errors_named);
    tcase_add_test(tc, test_arena);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(math_suite)
