/* src/world: integrator against exact discrete solutions and conservation laws; ids; no
 * allocation while stepping. */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "fureru/world.h"
#include "interpose.h"

static fr_world *make_world(double dt, fr_vec3 g)
{
    fr_world_def def = fr_world_def_default();
    def.dt = dt;
    def.gravity = g;
    def.max_bodies = 16;
    fr_world *w = NULL;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    return w;
}

/* A robot "bot" of one link `name` on a free joint (mass kg, inertia about its centre kg·m², its
 * start position m, world): the link's body */
static fr_body_id add_free_robot(fr_world *w, const char *name, double mass, fr_mat3 inertia,
                                 fr_vec3 at)
{
    fr_tree *t = fr_tree_create();
    fr_link_def ld = fr_link_def_default();
    ld.name = name;
    ld.type = FR_JOINT_FREE;
    ld.mass = mass;
    ld.inertia = inertia;
    ld.q0_pos = at;
    ld.q0_rot = fr_q_identity();
    ck_assert_int_ge(fr_tree_add_link(t, &ld), 0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd = {.tree = t};
    snprintf(rd.name, sizeof rd.name, "bot");
    int r;
    ck_assert_int_eq(fr_world_add_robot(w, &rd, &r), FR_OK);
    return fr_world_robot_link_body(w, r, 0);
}

START_TEST(test_ballistic_exact_discrete)
{
    const double dt = 0.001;
    const fr_vec3 g = fr_v3(0.3, -0.2, -9.81);
    fr_world *w = make_world(dt, g);
    fr_body_def bd = fr_body_def_default();
    bd.pose.p = fr_v3(1, 2, 3);
    bd.vel = fr_v3(4, -5, 6);
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    for (int n = 1; n <= 5000; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        if (n % 500) continue;
        /* symplectic Euler: v_n = v0 + n·dt·g, x_n = x0 + n·dt·v0 + dt²·g·n(n+1)/2 */
        double nn = n, s = dt * dt * nn * (nn + 1) / 2;
        fr_vec3 x =
            fr_v3_add(fr_v3_add(bd.pose.p, fr_v3_scale(bd.vel, nn * dt)), fr_v3_scale(g, s));
        fr_vec3 v = fr_v3_add(bd.vel, fr_v3_scale(g, nn * dt));
        fr_pose p;
        fr_vec3 vel, av;
        fr_body_get_pose(w, id, &p);
        fr_body_get_velocity(w, id, &vel, &av);
        ck_assert_rel(p.p.x, x.x, 1e-12, 1e-300);
        ck_assert_rel(p.p.y, x.y, 1e-12, 1e-300);
        ck_assert_rel(p.p.z, x.z, 1e-12, 1e-300);
        ck_assert_rel(vel.x, v.x, 1e-12, 1e-300);
        ck_assert_rel(vel.z, v.z, 1e-12, 1e-300);
        ck_assert_rel(fr_world_time(w), nn * dt, 1e-15, 1e-300);
    }
    fr_world_destroy(w);
}
END_TEST

/* Torque-free rigid body with principal moments (1, 2, 3) kg·m² spinning mainly about `axis`. */
typedef struct spin_result {
    double L_rel, E_rel;  /* max relative drift of world L and of kinetic energy */
    double min_axis_comp; /* min over time of the body-frame ω component along the spin axis */
    double max_axis_comp;
} spin_result;

static spin_result spin(int axis, double rate, double perturb, fr_quat q0)
{
    fr_world *w = make_world(0.001, fr_v3_zero());
    fr_body_def bd = fr_body_def_default();
    bd.inertia = fr_m3_diag(fr_v3(1, 2, 3));
    bd.pose.q = q0;
    double wb[3] = {perturb, perturb, perturb};
    wb[axis] = rate;
    bd.angvel = fr_q_rotate(q0, fr_v3(wb[0], wb[1], wb[2]));
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    fr_vec3 L0;
    fr_body_angular_momentum(w, id, &L0);
    double E0 = fr_world_kinetic_energy(w);
    spin_result r = {0, 0, 1e300, -1e300};
    for (int n = 0; n < 10000; n++) {
        fr_world_step(w);
        fr_vec3 L;
        fr_body_angular_momentum(w, id, &L);
        r.L_rel = fmax(r.L_rel, fr_v3_dist(L, L0) / fr_v3_norm(L0));
        r.E_rel = fmax(r.E_rel, fabs(fr_world_kinetic_energy(w) - E0) / E0);
        fr_pose p;
        fr_vec3 av;
        fr_body_get_pose(w, id, &p);
        fr_body_get_velocity(w, id, NULL, &av);
        double c = fr_v3_get(fr_q_unrotate(p.q, av), axis);
        r.min_axis_comp = fmin(r.min_axis_comp, c);
        r.max_axis_comp = fmax(r.max_axis_comp, c);
    }
    fr_world_destroy(w);
    return r;
}

START_TEST(test_torque_free_conservation)
{
    fr_quat q0 = fr_q_normalize(fr_q(0.9, 0.1, -0.3, 0.2));
    /* a generic tumbling motion, fast (dt·|ω| = 0.01) */
    fr_world *w = make_world(0.001, fr_v3_zero());
    fr_body_def bd = fr_body_def_default();
    bd.inertia = fr_m3_diag(fr_v3(1, 2, 3));
    bd.pose.q = q0;
    bd.angvel = fr_v3(3, 8, -5);
    fr_body_id id;
    fr_world_add_body(w, &bd, &id);
    fr_vec3 L0;
    fr_body_angular_momentum(w, id, &L0);
    double E0 = fr_world_kinetic_energy(w);
    for (int n = 0; n < 10000; n++) {
        fr_world_step(w);
        fr_vec3 L;
        fr_body_angular_momentum(w, id, &L);
        ck_assert_double_le(fr_v3_dist(L, L0) / fr_v3_norm(L0), 1e-6);
        ck_assert_double_le(fabs(fr_world_kinetic_energy(w) - E0) / E0, 1e-3);
    }
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_dzhanibekov)
{
    fr_quat q0 = fr_q_normalize(fr_q(1, 0.2, 0.1, -0.1));
    /* intermediate axis (I = 2): the spin flips */
    spin_result mid = spin(1, 5.0, 1e-3, q0);
    ck_assert_double_le(mid.L_rel, 1e-6);
    ck_assert_double_le(mid.E_rel, 1e-3);
    ck_assert_double_lt(mid.min_axis_comp, -4.0); /* flipped to about −5 rad/s */
    ck_assert_double_gt(mid.max_axis_comp, 4.9);
    /* minor (I = 1) and major (I = 3) axes are stable: the component keeps its sign and size */
    spin_result lo = spin(0, 5.0, 1e-3, q0), hi = spin(2, 5.0, 1e-3, q0);
    ck_assert_double_gt(lo.min_axis_comp, 4.99);
    ck_assert_double_gt(hi.min_axis_comp, 4.99);
    ck_assert_double_le(lo.L_rel, 1e-6);
    ck_assert_double_le(hi.L_rel, 1e-6);
}
END_TEST

START_TEST(test_fast_asymmetric_spinner_stable)
{
    /* dt·|ω| = 0.5 rad per step: explicit gyroscopic integration blows up; the implicit rule must
     * keep energy and momentum bounded. */
    fr_world *w = make_world(0.001, fr_v3_zero());
    fr_body_def bd = fr_body_def_default();
    bd.inertia = fr_m3_diag(fr_v3(0.3, 0.5, 0.75));
    bd.angvel = fr_v3(300, 300, 200);
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    double E0 = fr_world_kinetic_energy(w);
    fr_vec3 L0;
    fr_body_angular_momentum(w, id, &L0);
    for (int n = 0; n < 20000; n++) fr_world_step(w);
    fr_vec3 L;
    fr_body_angular_momentum(w, id, &L);
    ck_assert_double_le(fr_v3_dist(L, L0) / fr_v3_norm(L0), 1e-6);
    ck_assert_double_le(fabs(fr_world_kinetic_energy(w) - E0) / E0, 1e-3);
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_force_at_point_gives_torque)
{
    /* A force at an offset point: linear impulse F·dt and angular impulse (r × F)·dt exactly. */
    fr_world *w = make_world(0.01, fr_v3_zero());
    fr_body_def bd = fr_body_def_default();
    bd.mass = 2.0;
    bd.inertia = fr_m3_diag(fr_v3(0.5, 0.5, 0.5)); /* spherical: no gyroscopic term */
    fr_body_id id;
    fr_world_add_body(w, &bd, &id);
    fr_vec3 F = fr_v3(0, 3, 0), r = fr_v3(0.5, 0, 0);
    fr_body_apply_force(w, id, F, r);
    fr_world_step(w);
    fr_vec3 v, av;
    fr_body_get_velocity(w, id, &v, &av);
    ck_assert_rel(v.y, 3.0 * 0.01 / 2.0, 1e-14, 1e-300);
    ck_assert_rel(av.z, 1.5 * 0.01 / 0.5, 1e-14, 1e-300);
    /* forces are consumed by the step */
    fr_world_step(w);
    fr_vec3 v2;
    fr_body_get_velocity(w, id, &v2, NULL);
    ck_assert(v2.y == v.y);
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_ids_are_generational)
{
    fr_world *w = make_world(0.001, fr_v3(0, 0, -9.81));
    fr_body_def bd = fr_body_def_default();
    fr_body_id a, b, c;
    strcpy(bd.name, "a");
    ck_assert_int_eq(fr_world_add_body(w, &bd, &a), FR_OK);
    strcpy(bd.name, "b");
    ck_assert_int_eq(fr_world_add_body(w, &bd, &b), FR_OK);
    ck_assert_int_eq(fr_world_remove_body(w, a), FR_OK);
    ck_assert(!fr_body_is_valid(w, a));
    fr_pose p;
    ck_assert_int_eq(fr_body_get_pose(w, a, &p), FR_ERR_STALE);
    ck_assert_int_eq(fr_world_remove_body(w, a), FR_ERR_STALE);
    strcpy(bd.name, "c");
    ck_assert_int_eq(fr_world_add_body(w, &bd, &c), FR_OK);
    ck_assert_uint_eq(c.index1, a.index1); /* slot reused ... */
    ck_assert(!fr_body_id_eq(a, c));       /* ... under a new generation */
    ck_assert(!fr_body_is_valid(w, a));
    ck_assert_int_eq(fr_world_body_count(w), 2);
    ck_assert(fr_body_id_eq(fr_world_body_at(w, 0), b));
    ck_assert(fr_body_id_eq(fr_world_body_at(w, 1), c));
    fr_body_id f;
    ck_assert_int_eq(fr_world_find_body(w, "c", &f), FR_OK);
    ck_assert(fr_body_id_eq(f, c));
    ck_assert_int_eq(fr_world_find_body(w, "a", &f), FR_ERR_NOTFOUND);
    ck_assert(!fr_body_is_valid(w, FR_BODY_NULL));
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_bad_bodies_rejected)
{
    fr_world *w = make_world(0.001, fr_v3_zero());
    fr_body_def bd = fr_body_def_default();
    fr_body_id id;
    bd.mass = 0;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_ERR_RANGE);
    bd = fr_body_def_default();
    bd.inertia = fr_m3_diag(fr_v3(1, 1, 3)); /* 1 + 1 < 3: no real body has this */
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_ERR_RANGE);
    bd = fr_body_def_default();
    bd.pose.p.x = NAN;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_ERR_RANGE);
    bd = fr_body_def_default();
    bd.type = FR_BODY_STATIC;
    bd.mass = 0; /* static bodies need no mass */
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    ck_assert_int_eq(fr_body_set_velocity(w, id, fr_v3(1, 0, 0), fr_v3_zero()), FR_ERR_INVAL);
    fr_world_def def = fr_world_def_default();
    def.dt = 0;
    fr_world *w2;
    ck_assert_int_eq(fr_world_create(&def, &w2), FR_ERR_RANGE);
    /* capacity is fixed */
    def = fr_world_def_default();
    def.max_bodies = 2;
    ck_assert_int_eq(fr_world_create(&def, &w2), FR_OK);
    bd = fr_body_def_default();
    ck_assert_int_eq(fr_world_add_body(w2, &bd, &id), FR_OK);
    ck_assert_int_eq(fr_world_add_body(w2, &bd, &id), FR_OK);
    ck_assert_int_eq(fr_world_add_body(w2, &bd, &id), FR_ERR_FULL);
    fr_world_destroy(w2);
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_kinematic_and_static)
{
    fr_world *w = make_world(0.001, fr_v3(0, 0, -9.81));
    fr_body_def bd = fr_body_def_default();
    bd.type = FR_BODY_KINEMATIC;
    bd.vel = fr_v3(1, 0, 0);
    bd.angvel = fr_v3(0, 0, 1);
    fr_body_id k, s;
    fr_world_add_body(w, &bd, &k);
    bd.type = FR_BODY_STATIC;
    bd.pose.p = fr_v3(0, 0, -1);
    fr_world_add_body(w, &bd, &s);
    fr_body_apply_force(w, k, fr_v3(0, 0, 100), fr_v3_zero());
    for (int n = 0; n < 1000; n++) fr_world_step(w);
    fr_pose pk, ps;
    fr_body_get_pose(w, k, &pk);
    fr_body_get_pose(w, s, &ps);
    ck_assert_rel(pk.p.x, 1.0, 1e-12, 1e-300);
    ck_assert_double_le(fabs(pk.p.z), 1e-300); /* gravity and forces do not move it */
    ck_assert_double_le(fabs(fr_q_angle_between(pk.q, fr_q_axis_angle(fr_v3(0, 0, 1), 1.0))),
                        1e-12);
    ck_assert(ps.p.z == -1.0 && ps.p.x == 0.0);
    fr_world_destroy(w);
}
END_TEST

/* A static body moved with fr_body_set_pose takes its shapes along: a box dropped where the
 * platform now is lands on it, one where it was falls through (the broad phase kept a static
 * body's boxes where it was created, and both fell through). */
START_TEST(test_static_body_moved)
{
    fr_world *w = make_world(0.001, fr_v3(0, 0, -9.81));
    fr_body_def pd = fr_body_def_default();
    pd.type = FR_BODY_STATIC;
    pd.pose.p = fr_v3(0, 0, -0.05);
    fr_body_id plat;
    ck_assert_int_eq(fr_world_add_body(w, &pd, &plat), FR_OK);
    fr_shape *ps;
    fr_shape_create_box(fr_v3(0.5, 0.5, 0.05), &ps);
    fr_shape_def sd = fr_shape_def_default(ps);
    ck_assert_int_eq(fr_body_add_shape(w, plat, &sd), FR_OK);
    fr_body_id box[2];
    for (int k = 0; k < 2; k++) {
        fr_body_def bd = fr_body_def_default();
        bd.pose.p = fr_v3(k ? 0.0 : 5.0, 0, 0.3);
        ck_assert_int_eq(fr_world_add_body(w, &bd, &box[k]), FR_OK);
        fr_shape *bs;
        fr_shape_create_box(fr_v3(0.1, 0.1, 0.1), &bs);
        sd = fr_shape_def_default(bs);
        ck_assert_int_eq(fr_body_add_shape(w, box[k], &sd), FR_OK);
    }
    ck_assert_int_eq(fr_world_step(w), FR_OK);
    ck_assert_int_eq(fr_body_set_pose(w, plat, (fr_pose){fr_v3(5, 0, -0.05), fr_q_identity()}),
                     FR_OK);
    for (int n = 0; n < 1000; n++) ck_assert_int_eq(fr_world_step(w), FR_OK);
    fr_pose on, off;
    fr_body_get_pose(w, box[0], &on);
    fr_body_get_pose(w, box[1], &off);
    ck_assert_msg(fabs(on.p.z - 0.1) < 1e-3, "the box over the moved platform is at z = %g m",
                  on.p.z);
    ck_assert_msg(off.p.z < -1.0, "the box where the platform was is at z = %g m", off.p.z);
    fr_world_destroy(w);
}
END_TEST

START_TEST(test_step_does_not_allocate)
{
    if (!fri_watch_available()) return; /* sanitizer build: malloc belongs to the sanitizer */
    fr_world *w = make_world(0.001, fr_v3(0, 0, -9.81));
    fr_body_def bd = fr_body_def_default();
    bd.inertia = fr_m3_diag(fr_v3(1, 2, 3));
    bd.angvel = fr_v3(1, 2, 3);
    for (int i = 0; i < 10; i++) fr_world_add_body(w, &bd, NULL);
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    for (int n = 0; n < 1000; n++) fr_world_step(w);
    fri_watch_counts c = fri_watch_disarm();
    ck_assert_int_eq(c.allocs, 0);
    ck_assert_int_eq(c.frees, 0);
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.io, 0);
    fr_world_destroy(w);
}
END_TEST

/* A stiff implicit spring (k·dt²/m = 1e4) pulling a light body to a fixed anchor follows the
 * implicit-Euler recurrence exactly and converges; the explicit form of the same gains diverges. */
START_TEST(test_implicit_spring)
{
    const double dt = 0.001, m = 0.01, k = 1e4 * m / (dt * dt), c = 2.0;
    fr_world *w = make_world(dt, fr_v3_zero());
    fr_world_def def = *fr_world_get_def(w);
    ck_assert_int_ge(def.max_springs, 1);
    fr_body_def bd = fr_body_def_default();
    bd.mass = m;
    bd.inertia = fr_m3_diag(fr_v3(1e-6, 1e-6, 1e-6));
    bd.pose.p = fr_v3(0.01, -0.02, 0.005);
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    fr_spring_def sd = {
        .body = id, .anchor = fr_v3(0.1, 0.2, 0.3), .stiffness = k, .damping = c, .implicit = true};
    int si;
    ck_assert_int_eq(fr_world_add_spring(w, &sd, &si), FR_OK);
    double x = bd.pose.p.x, v = 0, xe = x, ve = 0;
    for (int n = 0; n < 200; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        /* (m + dt·c + dt²·k)·v⁺ = m·v + dt·k·(a − x), x⁺ = x + dt·v⁺ */
        v = (m * v + dt * k * (0.1 - x)) / (m + dt * c + dt * dt * k);
        x += dt * v;
        /* explicit: v⁺ = v + dt/m·(k(a − x) − c·v) */
        if (fabs(xe) < 1e100) {
            ve += dt / m * (k * (0.1 - xe) - c * ve);
            xe += dt * ve;
        }
        fr_pose p;
        fr_body_get_pose(w, id, &p);
        ck_assert_rel(p.p.x, x, 1e-12, 1e-12);
        fr_vec3 f;
        fr_world_spring_state(w, si, &f, NULL);
        ck_assert_rel(f.x, k * (0.1 - x) - c * v, 1e-9, 1e-6);
    }
    fr_pose p;
    fr_body_get_pose(w, id, &p);
    ck_assert_double_lt(fr_v3_dist(p.p, sd.anchor), 1e-6); /* converged */
    ck_assert_double_gt(fabs(xe), 1e6);                    /* the explicit form blew up */
    /* a driven anchor is followed too */
    ck_assert_int_eq(fr_world_set_spring_anchor(w, si, fr_v3(0, 0, 0), fr_v3_zero()), FR_OK);
    for (int n = 0; n < 300; n++) fr_world_step(w);
    fr_body_get_pose(w, id, &p);
    ck_assert_double_lt(fr_v3_norm(p.p), 1e-6);
    /* implicit springs must be zero-length at the centre of mass */
    sd.rest_length = 0.1;
    ck_assert_int_eq(fr_world_add_spring(w, &sd, NULL), FR_ERR_INVAL);
    fr_world_destroy(w);
}
END_TEST

/* A one-link robot on a free joint and an identical free body, dropped side by side onto the
 * ground, move identically: the tree's contact path (link body → external wrench → ABA) agrees
 * with the rigid-body path. */
START_TEST(test_robot_link_matches_free_body)
{
    fr_world_def def = fr_world_def_default();
    def.dt = 0.001;
    /* explicit contact step on both paths (_i = 0), or the implicit one: the world's 6×6 solve for
     * the free body, ABA with an external inertia for the link (_i = 1) */
    def.contact_implicit = _i == 1;
    /* the same law on both paths (robot links default to their own κ, β and the linear law) */
    def.contact_link_kappa = def.contact_kappa;
    def.contact_link_beta = def.contact_beta;
    def.contact_stiffen = 0;
    fr_world *w;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    fr_body_def gd = fr_body_def_default();
    gd.type = FR_BODY_STATIC;
    gd.pose.p = fr_v3(0, 0, -0.5);
    fr_body_id ground;
    fr_world_add_body(w, &gd, &ground);
    fr_shape *gs;
    fr_shape_create_box(fr_v3(5, 5, 0.5), &gs);
    fr_shape_def sd = fr_shape_def_default(gs);
    ck_assert_int_eq(fr_body_add_shape(w, ground, &sd), FR_OK);
    const double m = 2.0, hx = 0.2, hy = 0.15, hz = 0.1;
    fr_mat3 I = fr_m3_diag(fr_v3(m * (hy * hy + hz * hz) / 3, m * (hx * hx + hz * hz) / 3,
                                 m * (hx * hx + hy * hy) / 3));
    /* the free body */
    fr_body_def bd = fr_body_def_default();
    bd.mass = m;
    bd.inertia = I;
    bd.pose.p = fr_v3(-1, 0, 0.3);
    fr_body_id box;
    fr_world_add_body(w, &bd, &box);
    fr_shape *bs;
    fr_shape_create_box(fr_v3(hx, hy, hz), &bs);
    sd = fr_shape_def_default(bs);
    ck_assert_int_eq(fr_body_add_shape(w, box, &sd), FR_OK);
    /* the robot: one link on a free joint */
    fr_body_id link = add_free_robot(w, "base", m, I, fr_v3(1, 0, 0.3));
    ck_assert_str_eq(fr_body_name(w, link), "bot/base");
    fr_shape *ls;
    fr_shape_create_box(fr_v3(hx, hy, hz), &ls);
    sd = fr_shape_def_default(ls);
    ck_assert_int_eq(fr_body_add_shape(w, link, &sd), FR_OK);
    int touched = 0;
    for (int n = 0; n < 2000; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        touched += fr_world_contact_count(w) == 2;
        fr_pose pb, pl;
        fr_body_get_pose(w, box, &pb);
        fr_body_get_pose(w, link, &pl);
        ck_assert_double_le(fabs(pb.p.z - pl.p.z), 1e-9);
        ck_assert_double_le(fabs(pb.p.x + 1 - (pl.p.x - 1)), 1e-9);
    }
    ck_assert_int_gt(touched, 1000);
    fr_pose pl;
    fr_body_get_pose(w, link, &pl);
    ck_assert_double_lt(fabs(pl.p.z - hz), 1e-3); /* resting on the ground */
    /* links cannot be moved or removed as bodies */
    ck_assert_int_eq(fr_body_set_pose(w, link, pl), FR_ERR_INVAL);
    ck_assert_int_eq(fr_world_remove_body(w, link), FR_ERR_INVAL);
    fr_world_destroy(w);
}
END_TEST

/* A box pulled by a stiff spring off its centre of mass in zero gravity spins up to ~100 rad/s
 * (|ω|·dt 0.1 at 1 ms, 0.5 at 5 ms): as a free body (its rotation the implicit midpoint rule) and
 * as a one-link robot on a free joint (the tree's Euler step, its root's gyroscopic term linearly
 * implicit) its energy swings alike, by the explicit spring's own error. With the term explicit the
 * robot's energy grew from 372 J to 1272 J in 0.5 s and its run failed the audit at 0.74 s (1 ms),
 * 0.15 s (5 ms). */
static double spun_box(bool robot, double dt, double *e_end)
{
    fr_world *w = make_world(dt, fr_v3_zero());
    const double m = 6.13;
    const fr_mat3 I = fr_m3_diag(fr_v3(0.0207, 0.0493, 0.0598));
    fr_body_id id;
    if (robot) {
        id = add_free_robot(w, "box", m, I, fr_v3_zero());
    } else {
        fr_body_def bd = fr_body_def_default();
        bd.mass = m;
        bd.inertia = I;
        ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    }
    fr_spring_def sd = {.body = id,
                        .local_point = fr_v3(0.11, 0.023, -0.017),
                        .anchor = fr_v3(0.21, 0.17, 0.19),
                        .stiffness = 1.03e4};
    ck_assert_int_eq(fr_world_add_spring(w, &sd, NULL), FR_OK);
    fr_world_energy e;
    fr_world_energy_get(w, &e);
    const double E0 = e.total;
    double dev = 0.0;
    for (int n = 0; n < (int)(2.0 / dt + 0.5); n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy_get(w, &e);
        dev = fmax(dev, fabs(e.total - e.work - E0) / E0);
    }
    *e_end = (e.total - e.work - E0) / E0;
    fr_world_destroy(w);
    return dev;
}

START_TEST(test_robot_spin_matches_free_body)
{
    const double dt = _i == 0 ? 0.001 : 0.005;
    double end_b, end_r;
    const double dev_b = spun_box(false, dt, &end_b), dev_r = spun_box(true, dt, &end_r);
    fprintf(stderr,
            "# box spun by a spring, dt %g s, 2 s: energy swings by %.3g (free body), %.3g (robot) "
            "of its start; ends %+.3g, %+.3g\n",
            dt, dev_b, dev_r, end_b, end_r);
    ck_assert_msg(dev_r < 1.5 * dev_b, "robot's energy swings by %g, the free body's %g", dev_r,
                  dev_b);
}
END_TEST

/* A scene of boxes (3–30 mm, 0.01–2 kg) tumbling onto the ground and onto each other, and one on
 * an implicit spring whose anchor moves at a constant velocity (the clock's time in the step) */
static fr_world *substep_scene(double dt, int substeps, unsigned seed)
{
    fr_world_def def = fr_world_def_default();
    def.dt = dt;
    def.substeps = substeps;
    def.max_bodies = 16;
    fr_world *w = NULL;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    fr_body_def gd = fr_body_def_default();
    gd.type = FR_BODY_STATIC;
    gd.pose.p = fr_v3(0, 0, -0.5);
    fr_body_id ground;
    ck_assert_int_eq(fr_world_add_body(w, &gd, &ground), FR_OK);
    fr_shape *gs;
    ck_assert_int_eq(fr_shape_create_box(fr_v3(2, 2, 0.5), &gs), FR_OK);
    fr_shape_def sd = fr_shape_def_default(gs);
    ck_assert_int_eq(fr_body_add_shape(w, ground, &sd), FR_OK);
    srand(seed);
#define U(a, b) ((a) + ((b) - (a)) * (double)rand() / RAND_MAX)
    for (int i = 0; i < 7; i++) {
        fr_vec3 h = fr_v3(U(0.0015, 0.015), U(0.0015, 0.015), U(0.0015, 0.015));
        fr_body_def bd = fr_body_def_default();
        bd.mass = exp(U(log(0.01), log(2.0)));
        bd.inertia = fr_m3_diag(fr_v3(bd.mass * (h.y * h.y + h.z * h.z) / 3,
                                      bd.mass * (h.x * h.x + h.z * h.z) / 3,
                                      bd.mass * (h.x * h.x + h.y * h.y) / 3));
        /* the first four in a loose pile, the rest apart */
        bd.pose.p = i < 4 ? fr_v3(U(-0.004, 0.004), U(-0.004, 0.004), 0.02 + 0.035 * i)
                          : fr_v3(0.1 * i, U(-0.05, 0.05), U(0.0, 0.05) + 0.016);
        bd.pose.q = fr_q_normalize((fr_quat){U(-1, 1), U(-1, 1), U(-1, 1), U(-1, 1)});
        bd.vel = fr_v3(U(-1, 1), U(-1, 1), U(-1, 0.5));
        bd.angvel = fr_v3(U(-20, 20), U(-20, 20), U(-20, 20));
        fr_body_id id;
        ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
        fr_shape *bs;
        ck_assert_int_eq(fr_shape_create_box(h, &bs), FR_OK);
        sd = fr_shape_def_default(bs);
        ck_assert_int_eq(fr_body_add_shape(w, id, &sd), FR_OK);
        if (i == 6) {
            fr_spring_def sp = {.body = id,
                                .anchor = bd.pose.p,
                                .anchor_vel = fr_v3(0.2, -0.1, 0.05),
                                .stiffness = 50 * bd.mass,
                                .damping = bd.mass,
                                .implicit = true};
            ck_assert_int_eq(fr_world_add_spring(w, &sp, NULL), FR_OK);
        }
    }
#undef U
    return w;
}

/* A tick of n substeps is n steps of dt/n (docs/world.md, "Substeps"): a world at dt with n
 * substeps and one at dt/n stepped n times a tick end every tick bit for bit the same, contacts,
 * friction, the spring's moving anchor and the energy's books included; the clock is the
 * substeps', the step count the ticks'. */
START_TEST(test_substeps_are_steps)
{
    const int n = 2 + _i % 3;
    const double dt = 0.005;
    fr_world *a = substep_scene(dt, n, 100 + _i), *b = substep_scene(dt / n, 1, 100 + _i);
    ck_assert_int_eq(fr_world_substeps(a, NULL), n);
    ck_assert_int_eq(fr_world_substeps(b, NULL), 1);
    int touching = 0;
    for (int k = 1; k <= 300; k++) {
        ck_assert_int_eq(fr_world_step(a), FR_OK);
        /* the tick's deepest penetration is its substeps' deepest */
        double pen = 0.0;
        for (int j = 0; j < n; j++) {
            ck_assert_int_eq(fr_world_step(b), FR_OK);
            pen = fmax(pen, fr_world_max_penetration(b));
        }
        ck_assert(fr_world_max_penetration(a) == pen);
        ck_assert_uint_eq(fr_world_step_count(a), (uint64_t)k);
        ck_assert_uint_eq(fr_world_step_count(b), (uint64_t)(k * n));
        ck_assert(fr_world_time(a) == fr_world_time(b));
        for (int i = 0; i < fr_world_body_count(a); i++) {
            fr_body_id ia = fr_world_body_at(a, i), ib = fr_world_body_at(b, i);
            fr_pose pa, pb;
            fr_vec3 va, wa, vb, wb;
            fr_body_get_pose(a, ia, &pa);
            fr_body_get_pose(b, ib, &pb);
            fr_body_get_velocity(a, ia, &va, &wa);
            fr_body_get_velocity(b, ib, &vb, &wb);
            ck_assert_msg(!memcmp(&pa, &pb, sizeof pa) && !memcmp(&va, &vb, sizeof va) &&
                              !memcmp(&wa, &wb, sizeof wa),
                          "tick %d body %d: %.17g against %.17g", k, i, pa.p.z, pb.p.z);
        }
        fr_world_energy ea, eb;
        fr_world_energy_get(a, &ea);
        fr_world_energy_get(b, &eb);
        ck_assert(ea.total == eb.total && ea.work == eb.work);
        touching += fr_world_contact_count(a) > 2;
    }
    ck_assert_int_gt(touching, 100); /* (the boxes did meet) */
    fr_world_destroy(a);
    fr_world_destroy(b);
}
END_TEST

/* A box of width w (its least), dynamic or not, in a world at dt */
static fr_body_id add_box(fr_world *w, fr_vec3 size, int type, double x)
{
    fr_body_def bd = fr_body_def_default();
    bd.type = type;
    bd.pose.p = fr_v3(x, 0, 1);
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    fr_shape *s;
    ck_assert_int_eq(fr_shape_create_box(fr_v3_scale(size, 0.5), &s), FR_OK);
    fr_shape_def sd = fr_shape_def_default(s);
    ck_assert_int_eq(fr_body_add_shape(w, id, &sd), FR_OK);
    return id;
}

/* The rule: the least n for which every free dynamic body's least width w holds
 * w >= FR_WORLD_SUBSTEP_WIDTH·g·(dt/n)², at most FR_WORLD_SUBSTEPS_MAX; static and kinematic
 * bodies do not count; world.substeps >= 1 overrides it; fixed at the first step. */
START_TEST(test_substeps_rule)
{
    const double g = 9.81;
    for (int k = 0; k < 200; k++) {
        const double dt = k % 2 ? 0.005 : 0.001 + 0.009 * (k % 7) / 6.0;
        /* widths around the rule's thresholds and anywhere between 0.05 mm and 5 cm */
        const double wmin = k < 100 ? FR_WORLD_SUBSTEP_WIDTH * g * pow(dt / (1 + k % 5), 2) *
                                          (1 + (k % 4 < 2 ? -1e-9 : 1e-9))
                                    : 5e-5 * pow(1000, (double)rand() / RAND_MAX);
        fr_world *w = make_world(dt, fr_v3(0, 0, -g));
        add_box(w, fr_v3(0.5, 0.6, 0.7), FR_BODY_DYNAMIC, 0); /* (needs none up to 10 ms) */
        fr_body_id small = add_box(w, fr_v3(3 * wmin, wmin, 2 * wmin), FR_BODY_DYNAMIC, 1);
        add_box(w, fr_v3(1e-5, 0.1, 0.1), FR_BODY_STATIC, 2);
        add_box(w, fr_v3(1e-5, 0.1, 0.1), FR_BODY_KINEMATIC, 3);
        fr_body_id who;
        const int n = fr_world_substeps(w, &who);
        const double h = dt / n, h1 = dt / (n - 1);
        ck_assert_int_ge(n, 1);
        ck_assert_int_le(n, FR_WORLD_SUBSTEPS_MAX);
        if (n < FR_WORLD_SUBSTEPS_MAX)
            ck_assert_msg(wmin >= FR_WORLD_SUBSTEP_WIDTH * g * h * h * (1 - 1e-12),
                          "w %g dt %g: n %d too few", wmin, dt, n);
        if (n > 1) {
            ck_assert_msg(wmin < FR_WORLD_SUBSTEP_WIDTH * g * h1 * h1, "w %g dt %g: n %d too many",
                          wmin, dt, n);
            ck_assert(who.index1 == small.index1 && who.gen == small.gen);
        } else
            ck_assert_uint_eq(who.index1, 0);
        /* the rule's side, uncapped: least n by the inequality whatever the cap */
        fr_substeps_info si;
        fr_world_substeps_info(w, &si);
        const double ha = dt / si.asked, ha1 = dt / (si.asked - 1);
        ck_assert_msg(wmin >= FR_WORLD_SUBSTEP_WIDTH * g * ha * ha * (1 - 1e-12), "asked too few");
        if (si.asked > 1) ck_assert(wmin < FR_WORLD_SUBSTEP_WIDTH * g * ha1 * ha1);
        ck_assert_int_eq(si.n, n);
        ck_assert_int_eq(si.n, si.asked < FR_WORLD_SUBSTEPS_MAX ? si.asked : FR_WORLD_SUBSTEPS_MAX);
        ck_assert(!si.set);
        if (si.asked > 1) {
            ck_assert(si.body.index1 == small.index1);
            ck_assert_double_eq_tol(si.width, wmin, 1e-14 * wmin);
        }
        ck_assert_double_eq(si.resolved, FR_WORLD_SUBSTEP_WIDTH * g * dt * dt);
        ck_assert_int_eq(fr_world_substeps_for_width(fr_world_get_def(w), wmin), si.asked);
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        /* fixed by the first step: a smaller body added later does not change it */
        add_box(w, fr_v3(1e-5, 1e-5, 1e-5), FR_BODY_DYNAMIC, 4);
        ck_assert_int_eq(fr_world_substeps(w, NULL), n);
        fr_world_destroy(w);
    }
    /* a body far too thin for the step takes the most; world.substeps overrides the rule */
    fr_world *w = make_world(0.005, fr_v3(0, 0, -g));
    add_box(w, fr_v3(1e-5, 0.01, 0.01), FR_BODY_DYNAMIC, 0);
    ck_assert_int_eq(fr_world_substeps(w, NULL), FR_WORLD_SUBSTEPS_MAX);
    fr_world_destroy(w);
    fr_world_def def = fr_world_def_default();
    def.dt = 0.005;
    def.substeps = 3;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    add_box(w, fr_v3(1e-5, 0.01, 0.01), FR_BODY_DYNAMIC, 0);
    ck_assert_int_eq(fr_world_substeps(w, NULL), 3);
    /* set, the rule still says what it asks and for whom (the summary says the world is short) */
    fr_substeps_info si;
    fr_world_substeps_info(w, &si);
    ck_assert(si.set && si.n == 3 && si.asked > FR_WORLD_SUBSTEPS_MAX && si.body.index1 != 0);
    ck_assert_double_eq_tol(si.width, 1e-5, 1e-19);
    fr_world_destroy(w);
    /* no gravity, no rule */
    w = make_world(0.005, fr_v3_zero());
    add_box(w, fr_v3(1e-5, 0.01, 0.01), FR_BODY_DYNAMIC, 0);
    ck_assert_int_eq(fr_world_substeps(w, NULL), 1);
    fr_world_destroy(w);
    def.substeps = -1;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_ERR_RANGE);
    def.substeps = FR_WORLD_SUBSTEPS_MAX + 1;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_ERR_RANGE);
}
END_TEST

static void count_calls(fr_world *w, int robot, void *user)
{
    (void)w, (void)robot;
    ++*(int *)user;
}

/* What runs once a tick: a robot's controller runs once whatever the substeps, and a spring
 * anchor set each tick moves over the tick's substeps on a straight line: bit for bit an anchor
 * set at each of a finer world's steps on the same line. */
START_TEST(test_substeps_tick_inputs)
{
    const int n = 4;
    const double dt = 0.004, m = 0.05;
    fr_world_def def = fr_world_def_default();
    def.gravity = fr_v3(0, 0, -9.81);
    def.max_bodies = 16;
    fr_world *ws[2];
    int si[2];
    fr_body_id ids[2];
    for (int k = 0; k < 2; k++) {
        def.dt = k == 0 ? dt : dt / n;
        def.substeps = k == 0 ? n : 1;
        ck_assert_int_eq(fr_world_create(&def, &ws[k]), FR_OK);
        fr_body_def bd = fr_body_def_default();
        bd.mass = m;
        bd.inertia = fr_m3_diag(fr_v3(1e-5, 1e-5, 1e-5));
        ck_assert_int_eq(fr_world_add_body(ws[k], &bd, &ids[k]), FR_OK);
        fr_spring_def sp = {.body = ids[k],
                            .anchor = fr_v3(0.05, 0, 0), /* where the path starts, below */
                            .stiffness = 400,
                            .damping = 2,
                            .implicit = true};
        ck_assert_int_eq(fr_world_add_spring(ws[k], &sp, &si[k]), FR_OK);
    }
    fr_world *a = ws[0], *b = ws[1];
    /* the anchor's path: a circle of 5 cm at 2 Hz (the hand a user moves) */
#define PATH(t) fr_v3(0.05 * cos(4 * M_PI * (t)), 0.05 * sin(4 * M_PI * (t)), 0.01 * (t))
    double worst = 0;
    for (int k = 1; k <= 500; k++) {
        const fr_vec3 a0 = PATH((k - 1) * dt), a1 = PATH(k * dt);
        ck_assert_int_eq(fr_world_set_spring_anchor(a, si[0], a1, fr_v3_zero()), FR_OK);
        ck_assert_int_eq(fr_world_step(a), FR_OK);
        for (int j = 1; j <= n; j++) {
            fr_vec3 aj = j == n ? a1 : fr_v3_mad(a0, (double)j / n, fr_v3_sub(a1, a0));
            ck_assert_int_eq(fr_world_set_spring_anchor(b, si[1], aj, fr_v3_zero()), FR_OK);
            ck_assert_int_eq(fr_world_step(b), FR_OK);
        }
        fr_pose pa, pb;
        fr_body_get_pose(a, ids[0], &pa);
        fr_body_get_pose(b, ids[1], &pb);
        worst = fmax(worst, fr_v3_dist(pa.p, pb.p));
        fr_vec3 an;
        fr_world_spring_state(a, si[0], NULL, &an);
        ck_assert(fr_v3_dist(an, a1) == 0.0); /* the tick ends where the anchor was set */
    }
#undef PATH
    /* (the same points on the line, the same steps: bit for bit) */
    ck_assert_msg(worst == 0.0, "a driven anchor's body %g m off the finer world's", worst);
    fr_world_energy ea, eb;
    fr_world_energy_get(a, &ea);
    fr_world_energy_get(b, &eb);
    ck_assert(ea.work == eb.work && ea.total == eb.total);
    fr_world_destroy(a);
    fr_world_destroy(b);

    /* the controller: once a tick */
    def.dt = 0.003;
    def.substeps = 3;
    ck_assert_int_eq(fr_world_create(&def, &a), FR_OK);
    fr_tree *t = fr_tree_create();
    fr_link_def ld = fr_link_def_default();
    ld.name = "base";
    ld.parent = -1;
    ld.type = FR_JOINT_FREE;
    ld.q0_rot = fr_q_identity();
    ck_assert_int_ge(fr_tree_add_link(t, &ld), 0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd = {.tree = t};
    snprintf(rd.name, sizeof rd.name, "bot");
    int r, calls = 0;
    ck_assert_int_eq(fr_world_add_robot(a, &rd, &r), FR_OK);
    ck_assert_int_eq(fr_world_set_robot_controller(a, r, count_calls, &calls), FR_OK);
    for (int k = 0; k < 10; k++) ck_assert_int_eq(fr_world_step(a), FR_OK);
    ck_assert_int_eq(calls, 10);
    fr_world_destroy(a);
}
END_TEST

/* The work of forces and torques applied from outside (fr_body_apply_force/torque, docs/world.md,
 * "Energy"): from rest under a constant force along x and a constant torque about z (isotropic
 * inertia: no gyroscopic term), symplectic Euler gives v_n = n·dt·F/m, ω_n = n·dt·τ/I, and the
 * step's trapezoidal work ½·dt·F·(v_{n−1} + v_n) sums to ½·m·v_n² + ½·I·ω_n² exactly: the audit's
 * total less work is zero but for rounding (measured 3.6e-14 of the kinetic energy over 1000
 * steps, the turn's rounding through the body's frame). A work or a kinetic energy off by any
 * factor fails. */
START_TEST(test_applied_work_is_kinetic_energy)
{
    const double dt = 0.002, m = 2.5, I = 0.4, F = 3.0, tau = 0.7;
    fr_world *w = make_world(dt, fr_v3_zero());
    fr_body_def bd = fr_body_def_default();
    bd.mass = m;
    bd.inertia = fr_m3_diag(fr_v3(I, I, I));
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    for (int n = 1; n <= 1000; n++) {
        fr_pose p;
        fr_body_get_pose(w, id, &p);
        ck_assert_int_eq(fr_body_apply_force(w, id, fr_v3(F, 0, 0), p.p), FR_OK);
        ck_assert_int_eq(fr_body_apply_torque(w, id, fr_v3(0, 0, tau)), FR_OK);
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        if (n % 100) continue;
        const double v = n * dt * F / m, om = n * dt * tau / I;
        const double ke = 0.5 * m * v * v + 0.5 * I * om * om;
        fr_world_energy e;
        fr_world_energy_get(w, &e);
        ck_assert_rel(e.kinetic, ke, 1e-12, 1e-300);
        ck_assert_rel(e.work, ke, 1e-12, 1e-300);
        ck_assert_double_le(fabs(e.total - e.work), 1e-12 * ke);
    }
    fr_world_destroy(w);
}
END_TEST

/* A spring's anchor moving at constant velocity, its body held (kinematic, at rest): after every
 * step the anchor the world reports is where it is at that time, the springs' energy is ½·k·s² of
 * the state and that time (s the stretch, computed here), and the driver's work is what the
 * springs gained plus what their dampers took, c·(V·u)²·dt a step (V·u the anchor's speed along
 * the spring, the whole V at rest length 0): energy less work falls by exactly that, to rounding
 * (two springs, one of rest length L > 0 off the body's centre). Before the anchor was moved at the
 * step's end, the energy took the anchor at the step's start (0.36 mm behind here) and the work
 * counted the force after the move times the move, so energy less work fell by ½·k·|Δa|² a step. */
START_TEST(test_moving_anchor_energy_now)
{
    const double dt = 0.001, k[2] = {100.0, 40.0}, c[2] = {2.0, 0.5}, L[2] = {0.0, 0.05};
    const fr_vec3 V = fr_v3(0.2, -0.1, 0.3), a0[2] = {fr_v3(0, 0, 0.1), fr_v3(0.2, 0.1, 0.3)};
    const fr_vec3 lp[2] = {fr_v3_zero(), fr_v3(0.05, 0.02, -0.01)};
    fr_world *w = make_world(dt, fr_v3(0, 0, -9.81));
    fr_body_def bd = fr_body_def_default();
    bd.type = FR_BODY_KINEMATIC;
    bd.pose.p = fr_v3(0.01, 0.02, -0.05);
    bd.pose.q = fr_q_axis_angle(fr_v3_normalize(fr_v3(0.3, 0.4, 0.5)), 0.7);
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    for (int i = 0; i < 2; i++) {
        fr_spring_def sd = {.body = id,
                            .anchor = a0[i],
                            .anchor_vel = V,
                            .local_point = lp[i],
                            .stiffness = k[i],
                            .damping = c[i],
                            .rest_length = L[i]};
        ck_assert_int_eq(fr_world_add_spring(w, &sd, NULL), FR_OK);
    }
    fr_world_energy e0;
    fr_world_energy_get(w, &e0);
    double taken = 0.0; /* J, by the dampers */
    for (int n = 1; n <= 1000; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        const double t = fr_world_time(w);
        fr_world_energy e;
        fr_world_energy_get(w, &e);
        double es = 0.0;
        for (int i = 0; i < 2; i++) {
            fr_vec3 a;
            fr_world_spring_state(w, i, NULL, &a);
            fr_vec3 want = fr_v3_mad(a0[i], t, V);
            ck_assert_double_le(fr_v3_norm(fr_v3_sub(a, want)), 1e-15);
            fr_vec3 p = fr_v3_add(bd.pose.p, fr_q_rotate(bd.pose.q, lp[i]));
            double len = fr_v3_norm(fr_v3_sub(a, p)), s = len - L[i];
            es += 0.5 * k[i] * s * s;
            double vu = L[i] > 0.0 ? fr_v3_dot(V, fr_v3_sub(a, p)) / len : fr_v3_norm(V);
            taken += c[i] * vu * vu * dt;
        }
        ck_assert_rel(e.spring, es, 1e-13, 1e-300);
        ck_assert_double_le(fabs((e.total - e.work) - (e0.total - e0.work) + taken), 1e-13 * es);
    }
    fr_world_destroy(w);
}
END_TEST

/* A free body of mass m and inertia diag(i, i, i) at p moving at v, added to w */
static fr_body_id free_body(fr_world *w, double m, double i, fr_vec3 p, fr_vec3 v)
{
    fr_body_def bd = fr_body_def_default();
    bd.mass = m;
    bd.inertia = fr_m3_diag(fr_v3(i, i, i));
    bd.pose.p = p;
    bd.vel = v;
    fr_body_id id;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &id), FR_OK);
    return id;
}

/* A free body pulled steadily through an explicit spring against a constant force F (zero
 * gravity): stretched F/k from the start and moving at the anchor's V, it stays so — its kinetic
 * and the spring's elastic energy do not change — while F takes F·V·dt a step. The anchor's
 * driver must put exactly that in: energy less work stays put to rounding at every step. Before
 * the anchor met the body half-way along its move, the driver was given ½·k·(V·dt)² a step too
 * little, so energy less work rose by that every step (here 0.05 J a step, 50 J over the
 * run); a new user's stick-slip rig (20 kg, k 1e5 N/m, V 1 m/s) rose at 599 ticks. */
START_TEST(test_steady_pull_work)
{
    const double dt = 0.001, m = 20.0, k = 1e5, F = 58.86, V = 1.0;
    fr_world *w = make_world(dt, fr_v3_zero());
    const fr_vec3 p0 = fr_v3(0.1, 0.2, 0.3);
    fr_body_id id = free_body(w, m, 1.0, p0, fr_v3(V, 0, 0));
    fr_spring_def sd = {.body = id,
                        .anchor = fr_v3_add(p0, fr_v3(F / k, 0, 0)),
                        .anchor_vel = fr_v3(V, 0, 0),
                        .stiffness = k};
    ck_assert_int_eq(fr_world_add_spring(w, &sd, NULL), FR_OK);
    fr_world_energy e0;
    fr_world_energy_get(w, &e0);
    const double scale = 0.5 * m * V * V;
    for (int n = 1; n <= 1000; n++) {
        ck_assert_int_eq(fr_body_apply_force(w, id, fr_v3(-F, 0, 0), p0), FR_OK);
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy e;
        fr_world_energy_get(w, &e);
        ck_assert_double_le(fabs((e.total - e.work) - (e0.total - e0.work)), 1e-12 * scale * n);
    }
    fr_vec3 v, om;
    fr_body_get_velocity(w, id, &v, &om);
    ck_assert_double_le(fabs(v.x - V), 1e-12 * V);
    fr_world_destroy(w);
}
END_TEST

/* An explicit spring of rest length L > 0 with damping c along its axis (a body at the origin's
 * right, moving along x, anchor at the origin): the force is k·(L − x) − c·v on the body, taken at
 * the step's start, and the body follows the symplectic-Euler recurrence v⁺ = v + dt·f/m,
 * x⁺ = x + dt·v⁺ to rounding (measured: positions equal, velocities 1.2e-16 of v0 over 2000
 * steps; the spring's reported force likewise). Without its damping term, or with its sign turned,
 * the position parts by 4e-6 relative at the first step. */
START_TEST(test_damped_spring_rest_length)
{
    const double dt = 0.001, m = 1.2, k = 80.0, c = 3.0, L = 0.2;
    fr_world *w = make_world(dt, fr_v3_zero());
    const double x0 = 0.3, v0 = 0.5;
    fr_body_id id = free_body(w, m, 0.1, fr_v3(x0, 0, 0), fr_v3(v0, 0, 0));
    fr_spring_def sd = {
        .body = id, .anchor = fr_v3_zero(), .stiffness = k, .damping = c, .rest_length = L};
    int si;
    ck_assert_int_eq(fr_world_add_spring(w, &sd, &si), FR_OK);
    double x = x0, v = v0;
    for (int n = 0; n < 2000; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        const double f = k * (L - x) - c * v; /* x stays in (0.1, 0.4): the axis is +x */
        v += dt * f / m;
        x += dt * v;
        fr_pose p;
        fr_vec3 vel, av;
        fr_body_get_pose(w, id, &p);
        fr_body_get_velocity(w, id, &vel, &av);
        ck_assert_rel(p.p.x, x, 1e-12, 1e-300);
        ck_assert_rel(vel.x, v, 1e-12, v0); /* (v crosses 0: its scale, v0) */
        fr_vec3 fs;
        fr_world_spring_state(w, si, &fs, NULL);
        ck_assert_rel(fs.x, f, 1e-12, k * L);
    }
    fr_world_destroy(w);
}
END_TEST

/* A limp two-link arm (fixed shoulder, elbow; both about y, no motor, no damper unless asked)
 * dropped from near horizontal: the shoulder stops at q_max = 1.37 rad, the elbow folds onto
 * q_min = −0.83 rad. Hard limits (limit_k 0) or soft ones (limit_k, limit_d). */
static fr_world *limit_arm(double dt, double limit_k, double limit_d, double damping, bool limited,
                           fr_integrator integ, int *robot)
{
    fr_world *w = make_world(dt, fr_v3(0, 0, -9.81));
    fr_tree *t = fr_tree_create();
    const double L[2] = {0.43, 0.31}, m[2] = {1.27, 0.58};
    const double q0[2] = {0.13, -0.21}, lo[2] = {-0.6, -0.83}, hi[2] = {1.37, 0.47};
    for (int i = 0; i < 2; i++) {
        fr_link_def ld = fr_link_def_default();
        ld.name = ld.joint_name = i ? "fore" : "upper";
        ld.parent = i - 1;
        ld.joint_pose = (fr_pose){fr_v3(i ? L[0] : 0.0, 0, 0), fr_q_identity()};
        ld.axis = fr_v3(0, 1, 0);
        ld.mass = m[i];
        ld.com = fr_v3(L[i] / 2, 0, 0);
        const double r = 0.021; /* a rod of that radius */
        ld.inertia =
            fr_m3_diag(fr_v3(m[i] * r * r / 2, m[i] * L[i] * L[i] / 12, m[i] * L[i] * L[i] / 12));
        ld.damping = damping;
        ld.limited = limited;
        ld.q_min = lo[i];
        ld.q_max = hi[i];
        ld.limit_k = limit_k;
        ld.limit_d = limit_d;
        ld.q0 = q0[i];
        ck_assert_int_eq(fr_tree_add_link(t, &ld), i);
    }
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd = {.tree = t};
    snprintf(rd.name, sizeof rd.name, "arm");
    ck_assert_int_eq(fr_world_add_robot(w, &rd, robot), FR_OK);
    fr_tree_data *d = fr_world_robot_data(w, *robot);
    d->integrator = integ;
    for (int k = 0; k < 2; k++) d->kp[k] = d->kd[k] = 0.0;
    return w;
}

/* 1.7 s of the arm; *engaged: steps a limit pushed; *stored: the most a soft limit held; *jw: the
 * joints' work at the end; *lost: what total − work lost; *past: the farthest a hard-limited
 * joint ended a step past its limit. */
static void limit_arm_run(double dt, double limit_k, double limit_d, double damping,
                          fr_integrator integ, int *engaged, double *stored, double *jw,
                          double *lost, double *past)
{
    int robot;
    fr_world *w = limit_arm(dt, limit_k, limit_d, damping, true, integ, &robot);
    fr_tree_data *d = fr_world_robot_data(w, robot);
    const fr_tree *t = fr_world_robot_tree(w, robot);
    fr_world_energy e0, e;
    fr_world_energy_get(w, &e0);
    *engaged = 0;
    *stored = *past = 0.0;
    const int steps = (int)lround(1.7 / dt);
    for (int n = 0; n < steps; n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        if (d->tau_limit[0] != 0.0 || d->tau_limit[1] != 0.0) ++*engaged;
        *stored = fmax(*stored, fr_tree_limit_energy(t, d));
        for (int j = 0; j < 2 && limit_k == 0.0; j++) {
            const fr_link_def *ld = fr_tree_link_def(t, j);
            *past = fmax(*past, fmax(ld->q_min - d->q[j], d->q[j] - ld->q_max));
        }
    }
    fr_world_energy_get(w, &e);
    *jw = e.joint_work;
    *lost = (e0.total - e0.work) - (e.total - e.work);
    fr_world_destroy(w);
}

/* A joint limit is passive: its force is not the joints' work (it was: the trapezoid rule's work
 * of a hard limit's force excused +5.9 J in one tick of a limp robot's drop), nor is a joint
 * damper's. Hard limits, soft ones (k 700 N·m/rad, d 0.9 N·m·s/rad or undamped) and hard ones
 * with a joint damper (0.037 N·m·s/rad), at dt 1 and 5 ms, Euler and Verlet. The joints' work is
 * zero to rounding (≤ 2e-16 J; with the damper counted −0.72 J); the limits take ~5 J of the
 * arm's ~6 J; a hard
 * limit the solve reaches within a step holds the joint on it (it ended 6.7e-6 rad past at 1 ms
 * before). (The arm's steps rise by the integrators' own error, which the limits' changed
 * trajectory changes: the exact balance is test_limit_energy_exact's.) */
START_TEST(test_limit_is_passive)
{
    static const struct {
        double k, d, c;
    } var[4] = {{0.0, 0.0, 0.0}, {700.0, 0.9, 0.0}, {700.0, 0.0, 0.0}, {0.0, 0.0, 0.037}};
    const double dt = _i % 2 ? 0.005 : 0.001;
    const double k = var[(_i / 2) % 4].k, dl = var[(_i / 2) % 4].d, c = var[(_i / 2) % 4].c;
    const fr_integrator integ = _i >= 8 ? FR_INTEGRATOR_VERLET : FR_INTEGRATOR_EULER;
    int engaged;
    double stored, jw, lost, past;
    limit_arm_run(dt, k, dl, c, integ, &engaged, &stored, &jw, &lost, &past);
    ck_assert_msg(engaged > 5, "the limits engaged in %d steps", engaged);
    if (k > 0.0) ck_assert_msg(stored > 0.5, "the soft limits held at most %g J", stored);
    /* no motor: no joint work (the limits and the damper are passive) */
    ck_assert_msg(fabs(jw) < 1e-12, "the limits' or damper's force counted as %g J of joint work",
                  jw);
    ck_assert_msg(lost > 3.0, "the limits took %g J", lost);
    ck_assert_msg(past <= 1e-12, "a hard-limited joint ended a step %g rad past its limit", past);
}
END_TEST

/* One link on a fixed joint whose step is exact without a limit: a rotor about the vertical (no
 * gravity torque, no velocity products) spun at 3.7 rad/s toward its limits [−0.41, 0.58] rad
 * (_i 0–2: hard, soft k 700 N·m/rad with d 0.9 N·m·s/rad, soft undamped; Euler at 1 and 5 ms,
 * Verlet at 1 ms); or (_i 9, 10) a pendulum at rest 3e-7 rad short of its hard limit under
 * gravity, which the start's q + qd·dt does not reach (Euler, 1 and 5 ms); or (_i 11–13) the
 * rotor with a hard limit and a joint damper (0.0137 N·m·s/rad; Euler 1, 5 ms, Verlet 1 ms). A
 * limit or a damper only takes energy: total (with the soft limit's spring) − work never rises in
 * a step beyond rounding (1e-13 of the energy; measured 0), and neither does joint work
 * (rounding: ≤ 2e-17 J). Before: the joints' work counted the limit's force (−0.14 J for the
 * rotor) and the damper's; without the soft
 * limit's spring in the total a step rose by up to 0.11 of the energy; and the pendulum, carried
 * 2e-5 rad past its limit, was thrown back out at the next step (+4.1e-5 J at 1 ms, +1.0e-3 J at
 * 5 ms). (Verlet's pendulum on its limit rises once by its step-boundary velocity's energy, the
 * end half kick's ⅛·I·α²·dt²: 5.1e-6 J at 1 ms; docs/articulated.md.) */
START_TEST(test_limit_energy_exact)
{
    const bool pendulum = _i == 9 || _i == 10;
    const int kind = pendulum   ? 0
                     : _i >= 11 ? 3
                                : _i % 3,
              run = pendulum   ? _i - 9
                    : _i >= 11 ? _i - 11
                               : _i / 3;
    const double dt = run == 1 ? 0.005 : 0.001;
    fr_world *w = make_world(dt, fr_v3(0, 0, -9.81));
    fr_tree *t = fr_tree_create();
    fr_link_def ld = fr_link_def_default();
    ld.name = ld.joint_name = "rotor";
    ld.axis = pendulum ? fr_v3(0, 1, 0) : fr_v3(0, 0, 1);
    ld.mass = 0.83;
    ld.com = fr_v3(0.135, 0.011, 0);
    ld.inertia = fr_m3_diag(fr_v3(2.1e-4, 5.2e-3, 5.3e-3));
    ld.limited = true;
    ld.q_min = -0.41;
    ld.q_max = 0.58;
    ld.limit_k = kind == 1 || kind == 2 ? 700.0 : 0.0;
    ld.damping = kind == 3 ? 0.0137 : 0.0;
    ld.limit_d = kind == 1 ? 0.9 : 0.0;
    ld.q0 = pendulum ? 0.58 - 3e-7 : 0.05;
    ck_assert_int_eq(fr_tree_add_link(t, &ld), 0);
    ck_assert_int_eq(fr_tree_finalize(t), FR_OK);
    fr_robot_def rd = {.tree = t};
    snprintf(rd.name, sizeof rd.name, "rotor");
    int r;
    ck_assert_int_eq(fr_world_add_robot(w, &rd, &r), FR_OK);
    fr_tree_data *d = fr_world_robot_data(w, r);
    d->integrator = run == 2 ? FR_INTEGRATOR_VERLET : FR_INTEGRATOR_EULER;
    d->kp[0] = d->kd[0] = 0.0;
    d->qd[0] = pendulum ? 0.0 : 3.7;
    fr_world_robot_sync(w, r);
    fr_world_energy e0, e;
    fr_world_energy_get(w, &e0);
    double level = e0.total - e0.work, rise = 0.0, past = 0.0;
    int engaged = 0;
    for (int n = 0; n < (int)lround(0.9 / dt); n++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy_get(w, &e);
        rise = fmax(rise, (e.total - e.work) - level);
        level = e.total - e.work;
        if (d->tau_limit[0] != 0.0) engaged++;
        if (ld.limit_k == 0.0) past = fmax(past, fmax(ld.q_min - d->q[0], d->q[0] - ld.q_max));
    }
    ck_assert_msg(engaged > 0, "the limit never engaged");
    ck_assert_msg(fabs(e.joint_work) <= 1e-15 * fabs(e0.total),
                  "the limit's or damper's force counted as %g J of joint work", e.joint_work);
    ck_assert_msg(rise <= 1e-13 * fabs(e0.total), "a step rose by %g J (%g of the energy)", rise,
                  rise / fabs(e0.total));
    ck_assert_msg(past <= 1e-12, "the joint ended a step %g rad past its hard limit", past);
    fr_world_destroy(w);
}
END_TEST

static Suite *world_suite(void)
{
    Suite *s = suite_create("world");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ballistic_exact_discrete);
    tcase_add_test(tc, test_torque_free_conservation);
    tcase_add_test(tc, test_dzhanibekov);
    tcase_add_test(tc, test_fast_asymmetric_spinner_stable);
    tcase_add_test(tc, test_force_at_point_gives_torque);
    tcase_add_test(tc, test_ids_are_generational);
    tcase_add_test(tc, test_bad_bodies_rejected);
    tcase_add_test(tc, test_kinematic_and_static);
    tcase_add_test(tc, test_static_body_moved);
    tcase_add_test(tc, test_step_does_not_allocate);
    tcase_add_test(tc, test_implicit_spring);
    tcase_add_test(tc, test_applied_work_is_kinetic_energy);
    tcase_add_test(tc, test_damped_spring_rest_length);
    tcase_add_test(tc, test_steady_pull_work);
    tcase_add_test(tc, test_moving_anchor_energy_now);
    tcase_add_loop_test(tc, test_robot_link_matches_free_body, 0, 2);
    tcase_add_loop_test(tc, test_robot_spin_matches_free_body, 0, 2);
    tcase_add_loop_test(tc, test_substeps_are_steps, 0, 6);
    tcase_add_test(tc, test_substeps_rule);
    tcase_add_test(tc, test_substeps_tick_inputs);
    tcase_add_loop_test(tc, test_limit_is_passive, 0, 16);
    tcase_add_loop_test(tc, test_limit_energy_exact, 0, 14);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(world_suite)
