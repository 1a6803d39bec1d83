/* URDF repairs and the robot they give (src/scene/urdf_repair.c): the balanced inertia is physical
 * and the nearest one (against a projected-gradient minimisation over second moments, an
 * independent method); merging links through fixed joints keeps the merged body's mass, centre of
 * mass and inertia (against spatial inertias summed with the math module) and the whole robot's
 * dynamics (CRBA mass matrices, 1e-12); a zero position outside the limits starts at the limit;
 * transmissions and mimic joints are read into the tree; long link names survive into the world. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frtest.h"
#include "fureru/scene.h"
#include "fureru/urdf.h"

/* ---------------------------------------------------------------- inertia */

static fr_mat3 sym_rand(frtest_rng *r, double scale)
{
    fr_mat3 A;
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) A.m[i][j] = A.m[j][i] = frtest_uniform(r, -scale, scale);
    return A;
}

static double frob(fr_mat3 a)
{
    double s = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s += a.m[i][j] * a.m[i][j];
    return sqrt(s);
}

/* I(S) = tr(S)·1 − S maps positive semi-definite second moments S onto the physical inertias. */
static fr_mat3 inertia_of(fr_mat3 S)
{
    return fr_m3_sub(fr_m3_scale(fr_m3_identity(), fr_m3_trace(S)), S);
}

/* The nearest physical inertia by projected gradient descent on S: minimise ‖I(S) − I0‖²; the map
 * is self-adjoint with eigenvalues 2 and −1, so the gradient step 1/8 contracts. */
static fr_mat3 nearest_by_descent(fr_mat3 I0)
{
    /* start from the second moment of I0 itself, S = tr(I0)/2·1 − I0, clipped */
    fr_mat3 S = fr_m3_sub(fr_m3_scale(fr_m3_identity(), 0.5 * fr_m3_trace(I0)), I0);
    for (int it = 0; it < 20000; it++) {
        fr_mat3 R = fr_m3_sub(inertia_of(S), I0);
        fr_mat3 grad = fr_m3_scale(inertia_of(R), 2.0); /* the adjoint of I(·) is I(·) */
        S = fr_m3_sub(S, fr_m3_scale(grad, 1.0 / 8));
        fr_vec3 e;
        fr_mat3 V;
        fr_m3_eigen_sym(S, &e, &V);
        e = fr_v3(fmax(e.x, 0), fmax(e.y, 0), fmax(e.z, 0));
        S = fr_m3_mul(fr_m3_mul(V, fr_m3_diag(e)), fr_m3_transpose(V));
    }
    return inertia_of(S);
}

START_TEST(test_inertia_nearest_physical)
{
    frtest_rng rng = {3};
    int changed = 0;
    for (int trial = 0; trial < 200; trial++) {
        fr_mat3 I0 = sym_rand(&rng, 1e-3);
        if (trial % 3 == 0) /* a CAD-like near miss: a thin rod's moments, one a little too big */
            I0 = fr_m3_rotate(fr_q_to_m3(fr_q_axis_angle(fr_v3_normalize(fr_v3(1, 2, 3)), trial)),
                              fr_m3_diag(fr_v3(1e-6, 4.9e-5, 5.3e-5)));
        fr_mat3 J;
        bool ch = fr_urdf_balance_inertia(I0, &J);
        fr_vec3 e;
        fr_mat3 V;
        fr_m3_eigen_sym(J, &e, &V);
        double s = fabs(e.x) + fabs(e.y) + fabs(e.z);
        ck_assert_msg(e.x >= -1e-12 * s && e.x + e.y >= e.z - 1e-12 * s,
                      "trial %d: repaired moments %g %g %g are not physical", trial, e.x, e.y, e.z);
        if (!ch) {
            ck_assert(!memcmp(&I0, &J, sizeof J)); /* physical tensors are left alone */
            continue;
        }
        changed++;
        fr_mat3 K = nearest_by_descent(I0);
        double dj = frob(fr_m3_sub(J, I0)), dk = frob(fr_m3_sub(K, I0));
        ck_assert_msg(dj <= dk * (1 + 1e-9) + 1e-18, "trial %d: %g from the original, descent %g",
                      trial, dj, dk);
        ck_assert_msg(frob(fr_m3_sub(J, K)) <= 1e-7 * frob(I0), "trial %d: %g apart", trial,
                      frob(fr_m3_sub(J, K)));
    }
    ck_assert_int_gt(changed, 100);
    /* the repair through a file: the same function's answer, rotated into link axes */
    fr_urdf *u;
    fr_diag d;
    ck_assert_int_eq(
        fr_urdf_load_file(frtest_path("tests/robots/repairs/01-inertia-triangle.urdf"), &u, &d),
        FR_OK);
    fr_mat3 want;
    ck_assert(fr_urdf_balance_inertia(fr_m3_diag(fr_v3(0.1, 0.1, 0.5)), &want));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            ck_assert(fabs(fr_urdf_link_at(u, 0)->inertia.m[i][j] - want.m[i][j]) < 1e-15);
    ck_assert_rel(want.m[2][2], 0.5 - 0.3 / 3, 1e-12, 0); /* λ + (λ3 − λ1 − λ2)/3·(1, 1, −1) */
    fr_urdf_destroy(u);
}
END_TEST

/* ---------------------------------------------------------------- merging fixed links */

static fr_urdf *load(const char *rel, bool merge)
{
    fr_urdf_opts o = fr_urdf_opts_default();
    o.merge_fixed = merge;
    fr_urdf *u = NULL;
    fr_diag d;
    int err = fr_urdf_load(frtest_path(rel), &o, &u, &d);
    ck_assert_msg(err == FR_OK, "%s: %s:%d %s", rel, d.file, d.line, d.msg);
    return u;
}

/* A link's spatial inertia about its own frame's origin, in its axes. */
static fr_rbi link_rbi(const fr_urdf_link *L)
{
    return fr_rbi_make(L->mass, L->com, L->inertia);
}

/* The pose of link i of the unmerged robot in the frame of link `root`'s of the merged one:
 * walk the fixed joints up to the link that survived. */
static fr_pose pose_in_survivor(const fr_urdf *full, int i, const char *survivor)
{
    fr_pose X = fr_pose_identity();
    while (strcmp(fr_urdf_link_at(full, i)->name, survivor)) {
        const fr_urdf_joint *j = fr_urdf_joint_at(full, i);
        ck_assert(j && j->type == FR_URDF_FIXED && j->parent >= 0);
        X = fr_pose_mul(j->origin, X);
        i = j->parent;
    }
    return X;
}

static void check_merge(const char *rel)
{
    fr_urdf *full = load(rel, false), *m = load(rel, true);
    ck_assert_int_gt(fr_urdf_frame_count(m), 0);
    ck_assert_int_eq(fr_urdf_link_count(m) + fr_urdf_frame_count(m), fr_urdf_link_count(full));
    /* per merged body: Σ of its parts' spatial inertias moved into its frame (math module) */
    for (int s = 0; s < fr_urdf_link_count(m); s++) {
        const fr_urdf_link *S = fr_urdf_link_at(m, s);
        fr_rbi sum = fr_rbi_make(0, fr_v3_zero(), fr_m3_zero());
        for (int i = 0; i < fr_urdf_link_count(full); i++) {
            const char *nm = fr_urdf_link_at(full, i)->name;
            fr_pose at;
            if (fr_urdf_frame_find(m, nm, &at) != s) continue;
            fr_pose X = pose_in_survivor(full, i, S->name);
            /* the frame table agrees with the joints' chain */
            ck_assert(fr_v3_norm(fr_v3_sub(at.p, X.p)) < 1e-12);
            /* fr_rbi_transform_inv(X, I): I moved from child to parent coordinates */
            sum = fr_rbi_add(
                sum, fr_rbi_transform_inv(fr_xf_from_pose(X), link_rbi(fr_urdf_link_at(full, i))));
        }
        fr_rbi got = link_rbi(S);
        double scale = fmax(1e-3, got.m);
        ck_assert_msg(fabs(got.m - sum.m) <= 1e-12 * scale, "%s: mass %.17g vs %.17g", S->name,
                      got.m, sum.m);
        ck_assert_msg(fr_v3_norm(fr_v3_sub(got.h, sum.h)) <= 1e-12 * scale, "%s: first moment",
                      S->name);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                ck_assert_msg(fabs(got.Ibar.m[a][b] - sum.Ibar.m[a][b]) <=
                                  1e-12 * fmax(1e-6, fr_m3_trace(sum.Ibar)),
                              "%s: inertia[%d][%d] %.17g vs %.17g", S->name, a, b, got.Ibar.m[a][b],
                              sum.Ibar.m[a][b]);
    }
    /* the whole robot: the same mass matrix and centre of mass at random configurations */
    fr_tree *tf, *tm;
    ck_assert_int_eq(fr_urdf_build_tree(full, NULL, &tf, NULL), FR_OK);
    ck_assert_int_eq(fr_urdf_build_tree(m, NULL, &tm, NULL), FR_OK);
    int nv = fr_tree_nv(tf);
    ck_assert_int_eq(fr_tree_nv(tm), nv);
    fr_tree_data *df = fr_tree_data_create(tf), *dm = fr_tree_data_create(tm);
    double *Mf = malloc(sizeof(double) * (size_t)(nv * nv)),
           *Mm = malloc(sizeof(double) * (size_t)(nv * nv));
    frtest_rng rng = {5};
    for (int trial = 0; trial < 3; trial++) {
        /* the same joint positions by name (the q layouts differ only by fixed joints: none) */
        for (int i = 0; i < fr_tree_nlinks(tm); i++) {
            const fr_link_def *ld = fr_tree_link_def(tm, i);
            if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
            double q = frtest_uniform(&rng, -0.5, 0.5);
            dm->q[fr_tree_link_q_index(tm, i)] = q;
            df->q[fr_tree_link_q_index(tf, fr_tree_joint_find(tf, ld->joint_name))] = q;
        }
        fr_tree_crba(tf, df, Mf);
        fr_tree_crba(tm, dm, Mm);
        double mx = 0;
        for (int k = 0; k < nv * nv; k++) mx = fmax(mx, fabs(Mf[k]));
        for (int k = 0; k < nv * nv; k++)
            ck_assert_msg(fabs(Mf[k] - Mm[k]) <= 1e-12 * mx, "%s: M[%d] %.17g vs %.17g", rel, k,
                          Mf[k], Mm[k]);
        fr_tree_forward_kinematics(tf, df);
        fr_tree_forward_kinematics(tm, dm);
        double mf, mm;
        fr_vec3 cf = fr_tree_com(tf, df, &mf), cm = fr_tree_com(tm, dm, &mm);
        ck_assert_rel(mm, mf, 1e-12, 0);
        ck_assert(fr_v3_norm(fr_v3_sub(cf, cm)) <= 1e-12);
    }
    free(Mf);
    free(Mm);
    fr_tree_data_destroy(df);
    fr_tree_data_destroy(dm);
    fr_tree_destroy(tf);
    fr_tree_destroy(tm);
    fr_urdf_destroy(full);
    fr_urdf_destroy(m);
}

START_TEST(test_merge_keeps_mass_properties)
{
    check_merge("tests/robots/good/arm.urdf"); /* a massless tool frame */
    check_merge("config/robots/hexapod.urdf"); /* a head with mass and shapes */
    check_merge("config/robots/example-robot-data/robots/go1_description/urdf/go1.urdf");
    check_merge("config/robots/example-robot-data/robots/anymal_c_simple_description/urdf/"
                "anymal.urdf"); /* 65 fixed links, chains of them */
}
END_TEST

/* ---------------------------------------------------------------- joints */

START_TEST(test_joint_semantics_read)
{
    /* a zero position outside the limits starts at the nearest limit */
    fr_urdf *u = load("tests/robots/repairs/07-zero-outside-limits.urdf", true);
    const fr_urdf_joint *calf = fr_urdf_joint_at(u, fr_urdf_joint_find(u, "calf"));
    ck_assert_rel(calf->q_init, -0.9, 0, 1);
    fr_tree *t;
    ck_assert_int_eq(fr_urdf_build_tree(u, NULL, &t, NULL), FR_OK);
    fr_tree_data *td = fr_tree_data_create(t);
    ck_assert_rel(td->q[fr_tree_link_q_index(t, fr_tree_joint_find(t, "calf"))], -0.9, 0, 1);
    /* the velocity limit reaches the motor */
    ck_assert_rel(fr_tree_link_def(t, fr_tree_joint_find(t, "calf"))->max_velocity, 20, 0, 1);
    fr_tree_data_destroy(td);
    fr_tree_destroy(t);
    fr_urdf_destroy(u);
    /* transmissions: reduction and actuator of the joint they drive */
    u = load("tests/robots/repairs/11-transmission-unknown-joint.urdf", true);
    const fr_urdf_joint *j = fr_urdf_joint_at(u, fr_urdf_joint_find(u, "j"));
    ck_assert_rel(j->reduction, 10, 0, 1);
    ck_assert_str_eq(j->actuator, "m");
    fr_urdf_destroy(u);
    /* mimic: the Panda's second finger follows the first, in the tree */
    u = load("config/robots/example-robot-data/robots/panda_description/urdf/panda.urdf", true);
    j = fr_urdf_joint_at(u, fr_urdf_joint_find(u, "panda_finger_joint2"));
    ck_assert_int_eq(j->mimic, fr_urdf_joint_find(u, "panda_finger_joint1"));
    ck_assert_str_eq(j->mimic_joint, "panda_finger_joint1");
    ck_assert_rel(j->mimic_multiplier, 1, 0, 1);
    ck_assert_int_eq(fr_urdf_build_tree(u, NULL, &t, NULL), FR_OK);
    const fr_link_def *ld = fr_tree_link_def(t, fr_tree_joint_find(t, "panda_finger_joint2"));
    ck_assert_str_eq(ld->mimic_joint, "panda_finger_joint1");
    ck_assert(!ld->limited); /* the follower's range comes from the joint it follows */
    fr_tree_destroy(t);
    fr_urdf_destroy(u);
    /* a PR2 transmission (PR2 style: <mechanicalReduction> in the transmission) */
    u = load("config/robots/example-robot-data/robots/pr2_description/urdf/pr2.urdf", true);
    int nred = 0;
    for (int i = 0; i < fr_urdf_link_count(u); i++) {
        const fr_urdf_joint *x = fr_urdf_joint_at(u, i);
        nred += x && x->reduction != 1;
    }
    ck_assert_int_gt(nred, 10);
    fr_urdf_destroy(u);
}
END_TEST

/* ---------------------------------------------------------------- names */

/* Link names longer than the world's short names: bodies keep their whole names. */
START_TEST(test_long_link_names)
{
    const char *xml =
        "<robot name='r'>\n"
        "<link name='camera_laserscan_link_left_with_a_very_long_name_indeed'>"
        "<inertial><mass value='1'/><inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' "
        "izz='0.01'/></inertial>"
        "<collision><geometry><box size='0.1 0.1 0.1'/></geometry></collision></link>\n"
        "</robot>\n";
    char path[] = "/tmp/fureru-long-XXXXXX.urdf";
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(xml, f);
    fclose(f);
    char scene[] = "/tmp/fureru-long-XXXXXX.yaml";
    fd = mkstemps(scene, 5);
    f = fdopen(fd, "w");
    fprintf(f, "name: long\nrobots:\n  - name: a_robot_with_a_long_name_too\n    urdf: %s\n", path);
    fclose(f);
    fr_scene *s;
    fr_diag d;
    int err = fr_scene_load(scene, NULL, 0, &s, &d);
    ck_assert_msg(err == FR_OK, "%s:%d %s", d.file, d.line, d.msg);
    fr_body_id b;
    const char *want = "a_robot_with_a_long_name_too/camera_laserscan_link_left_with_a_very_long_"
                       "name_indeed";
    ck_assert_int_eq(fr_world_find_body(fr_scene_world(s), want, &b), FR_OK);
    ck_assert_str_eq(fr_body_name(fr_scene_world(s), b), want);
    fr_scene_destroy(s);
    unlink(path);
    unlink(scene);
}
END_TEST

static Suite *repair_suite(void)
{
    Suite *s = suite_create("urdf-repair");
    TCase *tc = tcase_create("repair");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_inertia_nearest_physical);
    tcase_add_test(tc, test_merge_keeps_mass_properties);
    tcase_add_test(tc, test_joint_semantics_read);
    tcase_add_test(tc, test_long_link_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return frtest_run(repair_suite());
}
