/*
 * The whole pipeline (scene → broad phase → GJK → Muller–Preparata → penalty force and friction →
 * integration) against analytic mechanics: rest depth, a standing column, a slope that holds or
 * slides, the stick-slip sawtooth, momentum conservation in collisions, energy in a drop, and a
 * spinning box braked by friction torque. Scenes come from config/scenes with --set overrides.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/joints.h"
#include "scene_util.h"

static const double G = 9.81;
/* the worst share of its static load a soft contact's force came off it by
 * (test_settle_soft_materials) */
static double soft_worst, soft_worst_share, soft_worst_depth;

/* A box resting on the ground sinks until its pressure carries m·g. The mass-scaled Winkler law
 * (docs/contact.md, docs/world.md): pressure p(d) = k·δ_s·(exp(d/δ_s) − 1) over the patch with
 * k = κ·m/(dt²·A_ref), A_ref the block's largest projected area (1 m × 2 m), δ_s = g·dt²/κ; the
 * patch is its 1 m × 1 m base, so the rest depth is the law's inverse at m·g/(1 m²). Started
 * touching, the block reaches it at rest. */
START_TEST(test_rest_depth)
{
    const char *dts[] = {"world.dt=0.001", "world.dt=0.005"};
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {dts[k], "world.gravity=[0, 0, -9.81]", "bodies.block.repeat.count=1"};
        fr_scene *s = load("config/scenes/column.yaml", sets, 3);
        fr_world *w = fr_scene_world(s);
        const fr_world_def *def = fr_world_get_def(w);
        fr_body_id b = body(w, "block0");
        step_n(w, (long)(5.0 / def->dt));
        fr_pose p;
        fr_vec3 v, av;
        fr_body_get_pose(w, b, &p);
        fr_body_get_velocity(w, b, &v, &av);
        double kv = def->contact_kappa * 1.0 / (def->dt * def->dt * 2.0);
        double ds = def->contact_stiffen * G * def->dt * def->dt / def->contact_kappa;
        double d_pred = fr_contact_depth_of_pressure(kv, ds, 1.0 * G / 1.0);
        /* to the solve's tolerance and the rounding of the position (z ≈ 1 m: a few ulps). The
         * solve accepts a velocity up to its tolerance τ, which moves the block by τ·h in a step
         * (its force error m·τ/h against the stiffness κ·m·A/(dt²·A_ref) is smaller still). */
        double tol_d = def->solver_tolerance * def->dt;
        ck_assert_double_le(fabs((1.0 - p.p.z) - d_pred), tol_d + 1e-9 * d_pred + 8 * DBL_EPSILON);
        /* at rest: what is left is below the solve's stated tolerance */
        ck_assert_double_le(fr_v3_norm(v), def->solver_tolerance);
        ck_assert_double_le(fr_v3_norm(av), def->solver_tolerance);
        fr_scene_destroy(s);
    }
}
END_TEST

/* The seed paper's column of 13 blocks stands for 10 s, stacked as a person would: every block
 * shifted sideways by up to ±1 mm (a perfectly aligned column could only sink). */
START_TEST(test_column_stands)
{
    const char *dts[] = {"world.dt=0.005", "world.dt=0.001"};
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {dts[k], "bodies.block.repeat.jitter=[0.001, 0.001, 0]"};
        fr_scene *s = load("config/scenes/column.yaml", sets, 2);
        fr_world *w = fr_scene_world(s);
        fr_body_id top = body(w, "block12");
        fr_pose p0, p;
        fr_body_get_pose(w, top, &p0);
        ck_assert_double_gt(hypot(p0.p.x, p0.p.y), 1e-4); /* the jitter is there */
        step_n(w, (long)(10.0 / fr_world_get_def(w)->dt));
        fr_body_get_pose(w, top, &p);
        double drift = hypot(p.p.x - p0.p.x, p.p.y - p0.p.y);
        double tilt = fr_q_angle_between(p.q, fr_q_identity()) * 180 / M_PI;
        ck_assert_msg(drift < 1e-3, "%s: top drift %g m", dts[k], drift);
        ck_assert_msg(tilt < 0.1, "%s: top tilt %g deg", dts[k], tilt);
        ck_assert_double_gt(p.p.z, 24.0); /* still 13 blocks high */
        fr_scene_destroy(s);
    }
}
END_TEST

/* 30° slope (tilted gravity): μ = 0.59 > tan 30° holds the block without creep; μ = 0.56 slides
 * with a = g (sin θ − μ cos θ). */
START_TEST(test_slope_holds)
{
    const char *sets[] = {"materials.0.mu_s=0.59", "materials.0.mu_k=0.59", "materials.1.mu_s=0.59",
                          "materials.1.mu_k=0.59"};
    fr_scene *s = load("config/scenes/slope.yaml", sets, 4);
    fr_world *w = fr_scene_world(s);
    fr_body_id b = body(w, "block");
    step_n(w, 500); /* settle onto the slope: the start is a touching contact */
    fr_pose p0, p1;
    fr_body_get_pose(w, b, &p0);
    step_n(w, 10000);
    fr_body_get_pose(w, b, &p1);
    double moved = hypot(p1.p.x - p0.p.x, p1.p.y - p0.p.y);
    ck_assert_msg(moved < 1e-6, "block crept %g m in 10 s", moved);
    fr_scene_destroy(s);
}
END_TEST

/* Stick-slip rig: sawtooth with peak μ_s·m·g, trough (2μ_k − μ_s)·m·g and stick time
 * 2(μ_s − μ_k)·m·g/(kV) (experiments.md §2). */
START_TEST(test_stick_slip)
{
    const double mu_s = 0.6, mu_k = 0.4, m = 1, k = 100, V = 0.05;
    fr_scene *s = load("config/scenes/stick-slip.yaml", NULL, 0);
    fr_world *w = fr_scene_world(s);
    int spring;
    ck_assert_int_eq(fr_world_find_spring(w, "pull", &spring), FR_OK);
    double dt = fr_world_get_def(w)->dt;
    long n = (long)(12.0 / dt);
    double *f = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_vec3 F;
        fr_world_spring_state(w, spring, &F, NULL);
        f[i] = F.x;
    }
    /* peaks: local maxima followed by a drop of more than half the expected swing */
    double swing = 2 * (mu_s - mu_k) * m * G;
    long peaks[64];
    double troughs[64];
    int np = frtest_sawtooth(f, n, (long)(1.0 / dt), swing, peaks, troughs, 64);
    ck_assert_int_ge(np, 4);
    for (int q = 1; q < np; q++) {
        ck_assert_rel(f[peaks[q]], mu_s * m * G, 0.03, 0);
        ck_assert_rel(troughs[q], (2 * mu_k - mu_s) * m * G, 0.10, 0);
    }
    /* period = stick time + slip time (half an oscillation, π·sqrt(m/k)) */
    double period = (double)(peaks[np - 1] - peaks[1]) * dt / (np - 2);
    double stick = period - M_PI * sqrt(m / k);
    ck_assert_rel(stick, 2 * (mu_s - mu_k) * m * G / (k * V), 0.10, 0);
    free(f);
    fr_scene_destroy(s);
}
END_TEST

/* One body of test_late_landings_keep_applied_work: shape k % 4 thrown tumbling onto ground with
 * μ = 0, under gravity g (m/s², down) and a constant force F at its centre of mass, for T s */
typedef struct {
    fr_vec3 v;
    double held;
    long late;
} thrown_end;

static thrown_end run_thrown(int k, double dt, double g, fr_vec3 F, double T)
{
    const double m = 0.5;
    fr_world_def def = fr_world_def_default();
    def.dt = dt;
    def.gravity = fr_v3(0, 0, -g);
    fr_world *w;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    fr_contact_material mat = {0.0, 0.0, 0.0, 0.0};
    ck_assert_int_eq(fr_world_set_material(w, 0, &mat), FR_OK);
    fr_body_def gd = fr_body_def_default();
    gd.type = FR_BODY_STATIC;
    gd.pose.p = fr_v3(0, 0, -0.5);
    fr_body_id ground;
    fr_world_add_body(w, &gd, &ground);
    fr_shape *gs;
    fr_shape_create_box(fr_v3(50, 50, 0.5), &gs);
    fr_shape_def gsd = fr_shape_def_default(gs);
    ck_assert_int_eq(fr_body_add_shape(w, ground, &gsd), FR_OK);
    fr_shape *sh = NULL;
    switch (k % 4) {
    case 0:
        fr_shape_create_box(fr_v3(0.05, 0.05, 0.05), &sh);
        break;
    case 1:
        fr_shape_create_capsule(0.025, 0.1, 0, &sh);
        break;
    case 2:
        fr_shape_create_cylinder(0.05, 0.05, 0, &sh);
        break;
    default:
        fr_shape_create_sphere(0.05, 0, &sh);
        break;
    }
    ck_assert_ptr_nonnull(sh);
    double vol;
    fr_vec3 com;
    fr_mat3 I;
    fr_shape_mass(sh, 1.0, &vol, &com, &I);
    fr_body_def bd = fr_body_def_default();
    bd.mass = m;
    bd.inertia = fr_m3_scale(I, m / vol);
    bd.lin_damping = bd.ang_damping = 0.0;
    bd.pose = (fr_pose){fr_v3(0, 0, 0.3 + sh->bound_radius),
                        fr_q_axis_angle(fr_v3_normalize(fr_v3(1, 0.3, 0)), 0.9)};
    bd.vel = fr_v3(1, 0, -2);
    bd.angvel = fr_v3(5, 0, 3);
    fr_body_id b;
    ck_assert_int_eq(fr_world_add_body(w, &bd, &b), FR_OK);
    fr_shape_def sd = fr_shape_def_default(sh);
    sd.local.p = fr_v3_neg(com);
    ck_assert_int_eq(fr_body_add_shape(w, b, &sd), FR_OK);
    const long n = (long)(T / dt + 0.5);
    for (long i = 0; i < n; i++) {
        fr_pose p;
        fr_body_get_pose(w, b, &p);
        fr_body_apply_force(w, b, F, p.p);
        ck_assert_int_eq(fr_world_step(w), FR_OK);
    }
    thrown_end e;
    fr_body_get_velocity(w, b, &e.v, NULL);
    fr_world_solver_stats st;
    fr_world_solver_stats_get(w, &st);
    e.late = st.late;
    e.held = st.late_held;
    fr_world_destroy(w);
    return e;
}

/* Landings found late (docs/contact.md §5) take energy along the contacts' normals only: a box,
 * a capsule, a cylinder and a sphere thrown tumbling onto frictionless ground and pushed along x
 * by a constant force at the centre of mass land many times, with excesses taken from their
 * approach and islands held after the step, yet end at exactly v0 + F·t/m along x and keep no
 * speed across (the plane is frictionless and its normal vertical). Measured: equal to 1e-13
 * m/s. With the holds' impulse along the whole relative velocity at the contact the capsule ended
 * 1.3e-5 m/s short at 1 ms; with the held energy not counting the applied force's work and no
 * limit to it, a new user's sphere ended at 8.9 m/s of 10. */
START_TEST(test_late_landings_keep_applied_work)
{
    long late = 0;
    double held = 0.0;
    for (int k = 0; k < 8; k++) {
        const double dt = k < 4 ? 0.001 : 0.005, m = 0.5, T = 1.0, g = 9.81;
        const fr_vec3 F = fr_v3(10, 0, 0);
        const thrown_end e = run_thrown(k, dt, g, F, T);
        const double want = 1.0 + F.x * T / m;
        ck_assert_msg(fabs(e.v.x - want) <= 1e-11 * want && fabs(e.v.y) <= 1e-11 * want,
                      "shape %d dt %g: v = (%.15g, %.3g) m/s, want (%.15g, 0)", k % 4, dt, e.v.x,
                      e.v.y, want);
        late += e.late;
        held += e.held;
    }
    /* (the cases reach both corrections) */
    ck_assert_int_gt(late, 0);
    ck_assert_double_gt(held, 0.0);
    printf("# thrown onto frictionless ground and pushed: %ld landings found late, %.3g J held\n",
           late, held);
}
END_TEST

/* A frictionless column of 20 blocks (1 × 1 × 2 m, 1 kg), jittered sideways by ±0.5 and ±2 mm,
 * at 5 and 1 ms, 10 s from its touching placement: no horizontal force acts, so no block moves
 * out and the energy never rises above its start (the contacts and the implicit step only take
 * energy). Where two offset blocks overlap, each body's side faces cut the slab along one edge,
 * and their area vectors tilted the normal by depth/width towards the overhang: a block slid out
 * at a growing speed, 0.2 m in 10 s at 5 ms, its energy from nowhere (5.8e-3 J; a new user's
 * trial, 2026-11-29). Measured now: the energy falls, blocks move by at most 0.26 mm (the
 * bodies' lean under the contacts' compliance) at 5 ms and 10 µm at 1 ms. (That lean still
 * brings the column down later, 9 cm at 60 s at 5 ms: docs/contact.md §1.) */
START_TEST(test_frictionless_column_stays)
{
    for (int k = 0; k < 4; k++) {
        const double dt = k % 2 ? 0.001 : 0.005, jit = k < 2 ? 0.0005 : 0.002;
        const char *sets[] = {setf("world.dt=%g", dt),
                              "materials=[{name: default, mu_s: 0, mu_k: 0}]",
                              setf("bodies.block.repeat={count: 20, offset: [0, 0, 2], jitter: "
                                   "[%g, %g, 0], seed: 1}",
                                   jit, jit)};
        fr_scene *s = load("config/scenes/column.yaml", sets, 3);
        fr_world *w = fr_scene_world(s);
        fr_body_id id[20];
        fr_pose p0[20], p;
        for (int b = 0; b < 20; b++) {
            char name[16];
            snprintf(name, sizeof name, "block%d", b);
            ck_assert_int_eq(fr_world_find_body(w, name, &id[b]), FR_OK);
            fr_body_get_pose(w, id[b], &p0[b]);
        }
        fr_world_energy e0, e;
        fr_world_energy_get(w, &e0);
        double rise = -INFINITY, moved = 0.0;
        for (long i = 0; i < (long)(10.0 / dt + 0.5); i++) {
            ck_assert_int_ge(fr_world_step(w), 0);
            fr_world_energy_get(w, &e);
            rise = fmax(rise, (e.total - e.work) - (e0.total - e0.work));
        }
        for (int b = 0; b < 20; b++) {
            fr_body_get_pose(w, id[b], &p);
            moved = fmax(moved, hypot(p.p.x - p0[b].p.x, p.p.y - p0[b].p.y));
        }
        /* (the energy to its rounding: 4000 J summed over the blocks, 1e-12 of it) */
        ck_assert_msg(rise <= 4e-9, "dt %g, jitter %g: the energy rose %g J", dt, jit, rise);
        ck_assert_msg(moved < 1e-3, "dt %g, jitter %g: a block moved %g m", dt, jit, moved);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A slab hinged to the world at one end (tests/physics/scenes/flap.yaml: 0.5 × 0.15 × 0.025 m,
 * 1.875 kg, a passive hinge 1 cm above the ground) released from 20–65° up, flat or rolled 5°
 * about its length so that it lands on an edge, μ 0.8, at 1 and 5 ms: the hinge holds the slab
 * against the ground, and the landing's overlap is found late millimetres deep (10⁵ times the
 * prediction). Its energy less work may rise in a step by at most 1e-2 of m·g·L/2, a stated
 * bound (measured worst 2.5e-3; the island's hold, docs/contact.md §5, takes the rise with the
 * free body's response, not the hinged one's). An island with a joint was left alone: the
 * slab's landings then rose by up to 0.048 of m·g·L/2 in a step (a new user's trial: 0.087 over
 * 80 random slabs). */
START_TEST(test_hinged_slab_lands)
{
    const double L = 0.5, W = 0.15, T = 0.025, m = 1000.0 * L * W * T, g = 9.81;
    double worst = 0.0;
    long late = 0;
    for (int k = 0; k < 16; k++) {
        const double dt = k % 2 ? 0.005 : 0.001, th = (20.0 + 15.0 * (k / 4)) * M_PI / 180.0;
        const double roll = (k / 2) % 2 ? 5.0 * M_PI / 180.0 : 0.0;
        const double hz = T / 2 + 0.01 + W / 2 * sin(roll);
        const char *sets[] = {
            setf("world.dt=%g", dt),
            setf("bodies.slab.position=[%.17g, 0, %.17g]", L / 2 * cos(th), hz + L / 2 * sin(th)),
            setf("bodies.slab.rpy=[%.17g, %.17g, 0]", roll, -th),
            setf("joints.0.anchor=[0, 0, %.17g]", hz)};
        fr_scene *s = load("tests/physics/scenes/flap.yaml", sets, 4);
        fr_world *w = fr_scene_world(s);
        const double rise = worst_rise(w, 2.0);
        const double scale = m * g * L / 2;
        ck_assert_msg(rise <= 1e-2 * scale, "th %g deg roll %g dt %g: rose %g of m g L/2 in a step",
                      th * 180 / M_PI, roll * 180 / M_PI, dt, rise / scale);
        worst = fmax(worst, rise / scale);
        fr_world_solver_stats st;
        fr_world_solver_stats_get(w, &st);
        late += st.late;
        fr_scene_destroy(s);
    }
    ck_assert_int_gt(late, 0);
    printf("# hinged slab landing, 16 runs: worst rise %g of m g L/2, %ld landings found late\n",
           worst, late);
}
END_TEST

/* A heavy box dropped onto a 10 g box lying on the ground (a new user's trial): the light box
 * carries 1e4–1e5 times its weight from the landing's first step. With the patch's outer points on
 * its axes, a diamond, the light box pivoted about the diamond's edge under the load near its
 * corner (67 rad/s in the landing's step, its corner 3.6 mm into the ground unseen), every next
 * step found a landing late, and a step rose by 0.016 of m·g·h (100 kg; 1 kg: 0.13, failing the
 * run's audit). A level patch's points now lie towards its corners (src/contact/model.c
 * place_points): below 1e-5 of m·g·h. */
START_TEST(test_heavy_box_on_light_box)
{
    const double g = 9.81, h = 0.75;
    const struct {
        double M;
        const char *pos, *rpy;
    } cases[] = {{100.0, "[0.05, 0.03, 0.8]", "[0.1, 0.05, 0.3]"},
                 {1.0, "[0.05, 0.03, 0.85]", "[0.1, 0.05, 0.3]"}};
    double worst = 0.0;
    for (int k = 0; k < 2; k++) {
        const double M = cases[k].M, I = M * 0.3 * 0.3 / 6.0;
        const char *sets[] = {setf("bodies.heavy.mass=%.17g", M),
                              setf("bodies.heavy.inertia=[%.17g, %.17g, %.17g]", I, I, I),
                              setf("bodies.heavy.position=%s", cases[k].pos),
                              setf("bodies.heavy.rpy=%s", cases[k].rpy)};
        fr_scene *s = load("tests/physics/scenes/heavy-on-light.yaml", sets, 4);
        fr_world *w = fr_scene_world(s);
        const double rise = worst_rise(w, 1.0), scale = M * g * h;
        ck_assert_msg(rise <= 1e-5 * scale, "%g kg: rose %g of m g h in a step", M, rise / scale);
        worst = fmax(worst, rise / scale);
        fr_scene_destroy(s);
    }
    printf("# heavy box on a light box: worst rise %g of m g h\n", worst);
}
END_TEST

/* Two free bodies colliding without gravity: linear and angular momentum conserved to round-off,
 * also where the solve stops far from its solution (world.contact.tolerance 1e-3 m/s, largest
 * residual 1e-3 m/s: each body's velocity is corrected by M⁻¹·G in an island nothing holds,
 * src/world/solve.c correct_momentum). Measured 3e-15 and 2e-13 at the default tolerance, 7e-16 and
 * 1e-13 at the loose one; without the correction the loose solve's angular momentum changed by 6e-9
 * of itself (Newton's full steps keep the momentum themselves; the slide corrections of integrate.c
 * take each body's velocity change as its impulses). */
START_TEST(test_collision_conserves_momentum)
{
    for (int loose = 0; loose < 2; loose++) {
        const char *sets[] = {"world.gravity=[0, 0, 0]",
                              "bodies.ground.position=[0, 0, -100]",
                              "bodies.block.repeat.count=2",
                              "bodies.block.repeat.offset=[1.5, 0.3, 2.1]",
                              "bodies.block.velocity=[0.8, 0.1, 1.0]",
                              "bodies.block.angular_velocity=[0.3, -0.2, 0.5]",
                              loose ? "world.contact.tolerance=1e-3"
                                    : "world.contact.tolerance=1e-10"};
        fr_scene *s = load("config/scenes/column.yaml", sets, 7);
        fr_world *w = fr_scene_world(s);
        fr_body_id b1 = body(w, "block1");
        /* send the second block back towards the first */
        fr_body_set_velocity(w, b1, fr_v3(-0.9, 0.0, -1.1), fr_v3(0.1, 0.4, -0.2));
        fr_vec3 P0, L0;
        fr_world_momentum(w, &P0, &L0);
        int contacts = 0;
        double res = 0.0;
        for (int i = 0; i < 3000; i++) {
            fr_world_step(w);
            contacts += fr_world_contact_count(w) > 0;
            fr_world_solver_stats st;
            fr_world_solver_stats_get(w, &st);
            if (fr_world_contact_count(w) > 0) res = fmax(res, st.residual);
        }
        ck_assert_int_gt(contacts, 0);
        if (loose) ck_assert_double_gt(res, 1e-5); /* the loose solve did stop far off */
        fr_vec3 P, L;
        fr_world_momentum(w, &P, &L);
        const double dP = fr_v3_dist(P, P0) / fr_v3_norm(P0),
                     dL = fr_v3_dist(L, L0) / fr_v3_norm(L0);
        fprintf(
            stderr,
            "# collision, tolerance %s: momentum %.3g, angular momentum %.3g (relative), largest "
            "residual %.3g m/s\n",
            loose ? "1e-3" : "1e-10", dP, dL, res);
        ck_assert_double_le(dP, 1e-13);
        ck_assert_double_le(dL, 1e-12);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A tilted cube thrown edge or corner first onto a heavier one, no gravity, friction or damping,
 * at a physical stiffness (the linear law; a user's trial): the world's energy, kinetic plus the
 * contacts' elastic, never rises. The contact's elastic energy was its points' on the thickness'
 * linear fit, short of ½k·∫t² dA by a quarter for an edge's tent, so the sum fell as the cube went
 * in and rose back as it left: by 6.1 % of the start at a pitch of 0.7 rad (0.5 J → 0.3256 J
 * → 0.3560 J), and the rebuilt models then held more than the steps predicted, two of them taken
 * for landings found late. Now the largest rise above the run's lowest energy is rounding
 * (measured 1.1e-16 of the start's at 1 ms, 0 at 5 ms; docs/contact.md §5, "The linear law's
 * energy"). */
START_TEST(test_wedge_energy_never_rises)
{
    const char *tilts[] = {"bodies.A.rpy=[0, 0.7, 0.3]", "bodies.A.rpy=[0, 0.35, 0.3]",
                           "bodies.A.rpy=[0.5, 0.7, 0.3]"};
    for (int c = 0; c < 6; c++) {
        const char *sets[] = {tilts[c % 3], c < 3 ? "world.dt=0.001" : "world.dt=0.005"};
        fr_scene *s = load("tests/physics/scenes/wedge.yaml", sets, 2);
        fr_world *w = fr_scene_world(s);
        fr_world_energy e;
        fr_world_energy_get(w, &e);
        const double e0 = e.total - e.work;
        double low = e0, rise = 0.0;
        int touched = 0;
        for (int i = 0; i < (int)(0.3 / fr_world_get_def(w)->dt); i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            touched |= fr_world_contact_count(w) > 0;
            fr_world_energy_get(w, &e);
            const double x = e.total - e.work;
            rise = fmax(rise, x - low);
            low = fmin(low, x);
        }
        ck_assert(touched);
        fprintf(stderr, "# wedge %s, %s: rise %.3g of the start, end %.4f of it\n", sets[0],
                sets[1], rise / e0, low / e0);
        ck_assert_msg(rise <= 1e-9 * e0, "%s %s: the energy rose by %g of its start", sets[0],
                      sets[1], rise / e0);
        fr_scene_destroy(s);
    }
}
END_TEST

/* With zero contact damping a dropped box never rebounds above its drop height. */
START_TEST(test_drop_no_rebound_above)
{
    const char *heights[] = {"bodies.block.position=[0, 0, 1.05]",
                             "bodies.block.position=[0, 0, 1.3]",
                             "bodies.block.position=[0, 0, 2.0]"};
    const double h0[] = {0.05, 0.3, 1.0};
    for (int k = 0; k < 3; k++) {
        const char *sets[] = {"world.contact.beta=0", "world.dt=0.001",
                              "bodies.block.repeat.count=1", heights[k]};
        fr_scene *s = load("config/scenes/column.yaml", sets, 4);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "block0");
        double hmax = 0;
        int touched = 0;
        for (int i = 0; i < 4000; i++) {
            fr_world_step(w);
            touched |= fr_world_contact_count(w) > 0;
            fr_pose p;
            fr_body_get_pose(w, b, &p);
            if (touched) hmax = fmax(hmax, p.p.z - 1.0);
        }
        ck_assert(touched);
        ck_assert_msg(hmax <= h0[k], "dropped from %g m, rebounded to %g m", h0[k], hmax);
        fr_scene_destroy(s);
    }
}
END_TEST

/* Thin bodies landing tilted (a new user's trial): a 2 mm coin dropped 0.5 m at 10° onto a 3 mm
 * table at 5 ms, a 0.5 mm card dropped 5 cm at 2° onto the ground at 1 ms and at 3° onto the
 * 3 mm table at 5 ms. The contact's band (the region its motion can close within the step) was
 * found by moving one body into the other by its reach, up to 15 mm here: through the coin or
 * the table, so its depths were garbage and the landing went unseen until the next step: the coin
 * passed through the table, the card went 0.94 mm into the ground and bounced 7.7 mm up, or
 * flipped through the table gaining 0.17 of its energy. Now each lands: its deepest overlap stays
 * under `pen` (measured 0.12, 0.005 and 0.37 mm), it never rises after touching by more than
 * the overlap it had (no bounce), it ends on the table, and no step gains more than 1e-10 of the
 * energy scale m·g·h0 (measured 8e-12; the gains are rounding). */
START_TEST(test_thin_bodies_land)
{
    const struct {
        const char *shape, *table, *pose;
        double dt, mass, pen;
    } cases[] = {
        {"bodies.thin.shapes=[{type: cylinder, radius: 0.01, length: 0.002}]",
         "bodies.table.shapes.0.size=[4, 4, 0.003]",
         "bodies.thin.position=[0, 0, 0.5027212895296815]", 0.005, 0.005, 3e-4},
        {"bodies.thin.shapes=[{type: box, size: [0.09, 0.06, 0.0005]}]",
         "bodies.table.shapes.0.size=[4, 4, 0.003]",
         "bodies.thin.position=[0, 0, 0.05129683260782981]", 0.001, 0.0018, 2e-5},
        {"bodies.thin.shapes=[{type: box, size: [0.09, 0.06, 0.0005]}]",
         "bodies.table.shapes.0.size=[4, 4, 0.003]",
         "bodies.thin.position=[0, 0, 0.05181973607097696]", 0.005, 0.0018, 8e-4},
    };
    const double tilt[] = {0.17453292519943295, 0.03490658503988659, 0.05235987755982988};
    for (int c = 0; c < 3; c++) {
        char dt[64], mass[64], rpy[96];
        snprintf(dt, sizeof dt, "world.dt=%g", cases[c].dt);
        snprintf(mass, sizeof mass, "bodies.thin.mass=%g", cases[c].mass);
        snprintf(rpy, sizeof rpy, "bodies.thin.rpy=[%.17g, 0, 0]", tilt[c]);
        const char *sets[] = {dt, mass, rpy, cases[c].shape, cases[c].table, cases[c].pose};
        fr_scene *s = load("tests/physics/scenes/thin-drop.yaml", sets, 6);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "thin");
        fr_pose p;
        fr_body_get_pose(w, b, &p);
        const double scale = cases[c].mass * G * p.p.z;
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        double pen = 0, gain = 0, z_touch = INFINITY, rise = 0;
        for (long i = 0; i < (long)(1.5 / cases[c].dt); i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_world_energy_get(w, &e1);
            gain = fmax(gain, (e1.total - e1.work) - (e0.total - e0.work));
            e0 = e1;
            pen = fmax(pen, fr_world_max_penetration(w));
            fr_body_get_pose(w, b, &p);
            if (fr_world_contact_count(w) > 0 && !isfinite(z_touch)) z_touch = p.p.z;
            if (isfinite(z_touch)) rise = fmax(rise, p.p.z - z_touch);
        }
        ck_assert_msg(isfinite(z_touch), "case %d: never touched", c);
        ck_assert_msg(pen <= cases[c].pen, "case %d: %g m deep (allowed %g)", c, pen, cases[c].pen);
        ck_assert_msg(rise <= pen, "case %d: rose %g m after touching (overlap %g m)", c, rise,
                      pen);
        ck_assert_msg(p.p.z > 0.0, "case %d: ended at z = %g m, under the table's top", c, p.p.z);
        ck_assert_msg(gain <= 1e-10 * scale, "case %d: a step gained %g J (scale %g J)", c, gain,
                      scale);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A coin (cylinder, r 12 mm, 1.5 mm, 7 g) tilted 0.5° dropped 1 mm onto an equal static coin (a
 * new user's trial): the speculative patch took the gap to close as its vertices' extent along
 * the patch normal, which between two faces 0.5° apart also counts the patch's width (165 µm
 * over 24 mm), so the coin 86 µm above read as 79 µm deep and was thrown up at every landing; at
 * 1 ms its energy grew until the audit stopped the run. Now it lands and rests flat on the
 * other: no step gains more than 1e-10 of m·g·h0 (rounding), and at the end it lies level
 * (tilt < 1e-6 rad, still to 1e-6 m/s) with its centre within the law's rest depth (δ_s·ln 2:
 * 1.7 µm at 5 ms) of 2.25 mm. */
START_TEST(test_coin_on_coin)
{
    for (int k = 0; k < 2; k++) {
        const double dt = k ? 0.005 : 0.001;
        char dts[32];
        snprintf(dts, sizeof dts, "world.dt=%g", dt);
        const char *sets[] = {
            dts,
            "bodies.table.shapes=[{type: cylinder, radius: 0.012, length: 0.0015}]",
            "bodies.table.position=[0, 0, 0.00075]",
            "bodies.thin.shapes=[{type: cylinder, radius: 0.012, length: 0.0015}]",
            "bodies.thin.mass=0.007",
            "bodies.thin.position=[0, 0, 0.0033547184259804875]",
            "bodies.thin.rpy=[0.008726646259971648, 0, 0]"};
        fr_scene *s = load("tests/physics/scenes/thin-drop.yaml", sets, 7);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "thin");
        const double scale = 0.007 * G * 0.0033547184259804875;
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        double gain = 0;
        for (long i = 0; i < (long)(3.0 / dt); i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_world_energy_get(w, &e1);
            gain = fmax(gain, (e1.total - e1.work) - (e0.total - e0.work));
            e0 = e1;
        }
        fr_pose p;
        fr_vec3 v, av;
        fr_body_get_pose(w, b, &p);
        fr_body_get_velocity(w, b, &v, &av);
        const fr_world_def *def = fr_world_get_def(w);
        const double rest = def->contact_stiffen * G * dt * dt / def->contact_kappa * log(2.0);
        ck_assert_msg(gain <= 1e-10 * scale, "dt %g: a step gained %g J (scale %g J)", dt, gain,
                      scale);
        ck_assert_msg(fr_q_angle_between(p.q, fr_q_identity()) < 1e-6, "dt %g: tilted %g rad", dt,
                      fr_q_angle_between(p.q, fr_q_identity()));
        ck_assert_msg(fr_v3_norm(v) < 1e-6, "dt %g: still moving at %g m/s", dt, fr_v3_norm(v));
        ck_assert_msg(p.p.z <= 0.00225 && p.p.z >= 0.00225 - 2.0 * rest,
                      "dt %g: centre at %.9g m, resting on the coin at 0.00225 m less %g m", dt,
                      p.p.z, rest);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A 0.2 m cube (8 kg) dropped 1 m exactly onto an edge (a new user's trial): the impulse passes
 * through the centre of mass, nothing spins it, and the contact has no restitution, so it must not
 * rebound. The band points' depths were a linear fit over the band, which flattens the V of the
 * two faces meeting at the edge: the edge went 1.5 mm in and left at 0.74 m/s (e 0.17). Now
 * after the first contact its upward speed stays under 1 mm/s (measured 1e-4 m/s at 1 ms, 0 at
 * 5 ms) and its centre never rises by more than the deepest overlap. (A corner still rebounds,
 * docs/contact.md §8.) */
START_TEST(test_edge_landing_no_rebound)
{
    const struct {
        const char *rpy, *pos;
        double dt;
    } cases[] = {
        {"bodies.thin.rpy=[0.7853981633974483, 0, 0]",
         "bodies.thin.position=[0, 0, 1.1414213562373094]", 0.001},
        {"bodies.thin.rpy=[0.7853981633974483, 0, 0]",
         "bodies.thin.position=[0, 0, 1.1414213562373094]", 0.005},
    };
    for (int c = 0; c < 2; c++) {
        char dt[32];
        snprintf(dt, sizeof dt, "world.dt=%g", cases[c].dt);
        const char *sets[] = {dt,
                              "bodies.table.shapes.0.size=[6, 6, 0.1]",
                              "bodies.table.position=[0, 0, -0.05]",
                              "bodies.thin.shapes=[{type: box, size: [0.2, 0.2, 0.2]}]",
                              "bodies.thin.mass=8",
                              cases[c].rpy,
                              cases[c].pos};
        fr_scene *s = load("tests/physics/scenes/thin-drop.yaml", sets, 7);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "thin");
        double z_low = INFINITY, up = 0, rise = 0, pen = 0;
        bool touched = false;
        for (long i = 0; i < (long)(1.0 / cases[c].dt); i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            touched |= fr_world_contact_count(w) > 0;
            if (!touched) continue;
            fr_pose p;
            fr_vec3 v, av;
            fr_body_get_pose(w, b, &p);
            fr_body_get_velocity(w, b, &v, &av);
            pen = fmax(pen, fr_world_max_penetration(w));
            z_low = fmin(z_low, p.p.z);
            rise = fmax(rise, p.p.z - z_low);
            up = fmax(up, v.z);
        }
        ck_assert_msg(touched, "case %d: never landed", c);
        ck_assert_msg(up < 1e-3, "case %d: left the ground at %g m/s", c, up);
        ck_assert_msg(rise <= pen, "case %d: rose %g m (deepest overlap %g m)", c, rise, pen);
        fr_scene_destroy(s);
    }
}
END_TEST

/* After a step: each contact's normal force under the upper of its two bodies (by world z), into
 * that body's index among the world's bodies: the first step's in first (when at_first), the
 * largest in peak, the last in last (may be NULL) */
static void record_loads(fr_world *w, int nb, bool at_first, double *first, double *peak,
                         double *last)
{
    for (int j = 0; j < fr_world_contact_count(w); j++) {
        fr_body_id a, b;
        const fr_contact_result *r = fr_world_contact(w, j, &a, &b);
        fr_pose pa, pb;
        fr_body_get_pose(w, a, &pa);
        fr_body_get_pose(w, b, &pb);
        fr_body_id up = pa.p.z > pb.p.z ? a : b;
        int u = -1;
        for (int m = 0; m < nb; m++)
            if (fr_body_id_eq(fr_world_body_at(w, m), up)) u = m;
        ck_assert_int_ge(u, 0);
        if (at_first) first[u] = r->normal_force;
        peak[u] = fmax(peak[u], r->normal_force);
        if (last) last[u] = r->normal_force;
    }
}

/* Bodies placed touching start carrying their load (world.settle, on by default: docs/world.md
 * "Settling"): for columns of 1, 13 and 50 jittered blocks at dt 5 and 1 ms, every contact's
 * normal force on the first step and its peak over 2 s equal its static force at the end, to what
 * the settling leaves: it stops when no block moves faster than settle_tolerance (1e-9 m/s) after
 * a step, a force imbalance of m·1e-9/h, i.e. 2e-8 (5 ms) to 1e-7 (1 ms) of a block's weight per
 * contact below it. (Without settling a suddenly loaded 50-block column overshoots to 1.95 times
 * its static load, as an elastic column does.) */
START_TEST(test_touching_start_no_impact)
{
    const char *dts[] = {"world.dt=0.005", "world.dt=0.001"};
    const char *counts[] = {"bodies.block.repeat.count=1", "bodies.block.repeat.count=13",
                            "bodies.block.repeat.count=50"};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++) {
            const char *sets[] = {dts[k], counts[c],
                                  "bodies.block.repeat.jitter=[0.001, 0.001, 0]"};
            fr_scene *s = load("config/scenes/column.yaml", sets, 3);
            fr_world *w = fr_scene_world(s);
            const fr_world_def *def = fr_world_get_def(w);
            const int nb = fr_world_body_count(w);
            double first[64] = {0}, peak[64] = {0}, last[64] = {0};
            ck_assert_int_le(nb, 64);
            long n = (long)(2.0 / def->dt + 0.5);
            for (long i = 0; i < n; i++) {
                ck_assert_int_eq(fr_world_step(w), FR_OK);
                record_loads(w, nb, i == 0, first, peak, last);
            }
            double tol = 1e-9 / (G * def->dt) * (nb - 1) + 1e-9;
            for (int m = 0; m < nb; m++) {
                if (fr_body_type(w, fr_world_body_at(w, m)) != FR_BODY_DYNAMIC) continue;
                /* block m carries the nb − m blocks above and itself (the ground is body 0) */
                /* to the solve's tolerance τ: a velocity error τ is a force error m·τ/h */
                ck_assert_rel(last[m], (double)(nb - m) * 9.8,
                              def->solver_tolerance / (9.8 * def->dt) + 1e-12, 1.0);
                ck_assert_double_le(peak[m], last[m] * (1.0 + tol));
                ck_assert_double_ge(first[m], last[m] * (1.0 - tol));
            }
            fr_scene_destroy(s);
        }
}
END_TEST

/* Settling holds what is in the air and gives back what moves: a block 0.1 m above the ground
 * stays there, a sliding block takes its load (it sinks by its rest depth, as a block at rest
 * does) and keeps its velocity for the run; the clock starts at zero. (A moving body once was
 * held unloaded: a box carried by a turntable near its friction limit was flung off by the
 * first steps' load transient.) */
START_TEST(test_settle_holds_the_rest)
{
    const char *sets[] = {"bodies.block.repeat.count=2", "bodies.block.repeat.offset=[3, 0, 0.1]",
                          "bodies.block.velocity=[0.5, 0, 0]"};
    /* both blocks slide: the one in the air keeps its placement, the touching one takes its load
     * where it was placed; both keep their velocities */
    fr_scene *s = load("config/scenes/column.yaml", sets, 3);
    fr_world *w = fr_scene_world(s);
    ck_assert_double_eq(fr_world_time(w), 0.0);
    fr_pose p;
    fr_vec3 v, av;
    fr_body_get_pose(w, body(w, "block1"), &p);
    fr_body_get_velocity(w, body(w, "block1"), &v, &av);
    ck_assert_double_eq(p.p.z, 1.1);
    ck_assert_double_eq(p.p.x, 3.0);
    ck_assert_double_eq(v.x, 0.5);
    fr_body_get_pose(w, body(w, "block0"), &p);
    fr_body_get_velocity(w, body(w, "block0"), &v, &av);
    ck_assert_double_lt(p.p.z, 1.0);
    ck_assert_double_gt(p.p.z, 1.0 - 1e-4);
    ck_assert_double_eq(p.p.x, 0.0);
    ck_assert_double_eq(v.x, 0.5);
    const double z_moving = p.p.z;
    fr_scene_destroy(s);
    /* at rest: the touching block settles (sinks by its rest depth), the one in the air is held */
    const char *sets2[] = {"bodies.block.repeat.count=2", "bodies.block.repeat.offset=[3, 0, 0.1]"};
    s = load("config/scenes/column.yaml", sets2, 2);
    w = fr_scene_world(s);
    fr_body_get_pose(w, body(w, "block1"), &p);
    ck_assert_double_eq(p.p.z, 1.1);
    fr_body_get_velocity(w, body(w, "block1"), &v, &av);
    ck_assert_double_eq(fr_v3_norm(v), 0.0);
    fr_body_get_pose(w, body(w, "block0"), &p);
    ck_assert_double_lt(p.p.z, 1.0);
    ck_assert_double_gt(p.p.z, 1.0 - 1e-4);
    /* (the same rest as the moving block's, to the settle's tolerance) */
    ck_assert_double_lt(fabs(p.p.z - z_moving), 1e-11);
    fr_scene_destroy(s);
}
END_TEST

/* A block placed into the ground (config/scenes/column.yaml's first block, r_g = 1 m) settles to
 * the rest a touching placement settles to, and the run starts at rest there: no launch. The
 * settle once put a block lifted clear by its first step back into its placement, so the run
 * pushed it out at depth/dt (0.1 m/s for 0.1 mm at 1 ms, a hop; 1 mm aborted the run). A
 * placement deeper than 1e-3 of the body's size is named in the note. */
START_TEST(test_settle_pushes_out_an_overlap)
{
    const double depths[] = {1e-4, 5e-3, 0.1}, dts[] = {0.001, 0.005};
    for (int k = 0; k < 4; k++) {
        char dt[64];
        snprintf(dt, sizeof dt, "world.dt=%g", dts[k % 2]);
        /* one block, then the column (the blocks above ride up on the one pushed out) */
        const char *sets0[] = {dt, k < 2 ? "bodies.block.repeat.count=1" : "world.duration=10"};
        fr_scene *s = load("config/scenes/column.yaml", sets0, 2);
        fr_pose ref;
        fr_body_get_pose(fr_scene_world(s), body(fr_scene_world(s), "block0"), &ref);
        fr_scene_destroy(s);
        for (int d = 0; d < 3; d++) {
            char pos[96];
            snprintf(pos, sizeof pos, "bodies.block.position=[0, 0, %.17g]", 1.0 - depths[d]);
            const char *sets[] = {dt, pos, sets0[1]};
            s = load("config/scenes/column.yaml", sets, 3);
            fr_world *w = fr_scene_world(s);
            fr_body_id b = body(w, "block0");
            fr_pose p;
            fr_body_get_pose(w, b, &p);
            const char *note = fr_world_settle_note(w);
            /* the settle stops below 1e-9 m/s: at the contact's ω = √κ/dt that is < 1e-12 m */
            ck_assert_msg(fabs(p.p.z - ref.p.z) < 1e-11, "dt %g, %g m deep: rests %g m off",
                          dts[k % 2], depths[d], p.p.z - ref.p.z);
            if (depths[d] < 1e-3)
                ck_assert_str_eq(note, "");
            else
                ck_assert_msg(strstr(note, "'block0' was placed"), "note: %s", note);
            double top = p.p.z, fastest = 0.0;
            for (int i = 0; i < (int)(0.5 / dts[k % 2]); i++) {
                ck_assert_int_eq(fr_world_step(w), FR_OK);
                fr_pose q;
                fr_vec3 v, av;
                fr_body_get_pose(w, b, &q);
                fr_body_get_velocity(w, b, &v, &av);
                top = fmax(top, q.p.z);
                fastest = fmax(fastest, fr_v3_norm(v));
            }
            ck_assert_msg(top - p.p.z < 1e-11 && fastest < 1e-9,
                          "dt %g, %g m deep: rose %g m, moved at up to %g m/s", dts[k % 2],
                          depths[d], top - p.p.z, fastest);
            fr_scene_destroy(s);
        }
    }
    /* on the 30° slope (slope.yaml, μ 0.59 > tan 30°) a block placed 1 mm and 2 mm into the ground
     * starts where the touching one does: pushed out in the first settle step it stops there (let
     * fly, it left the slope for a few steps and came down 0.52 mm and 1.1 mm downhill); measured
     * 1.7e-8 m apart, what the settles' different paths leave within their tolerance */
    {
        fr_scene *s = load("config/scenes/slope.yaml", NULL, 0);
        fr_pose ref, p;
        fr_body_get_pose(fr_scene_world(s), body(fr_scene_world(s), "block"), &ref);
        fr_scene_destroy(s);
        const char *deep[] = {"bodies.block.position=[0, 0, 0.249]",
                              "bodies.block.position=[0, 0, 0.248]"};
        for (int d = 0; d < 2; d++) {
            s = load("config/scenes/slope.yaml", deep + d, 1);
            fr_body_get_pose(fr_scene_world(s), body(fr_scene_world(s), "block"), &p);
            ck_assert_msg(fr_v3_dist(p.p, ref.p) < 1e-7, "%s: starts %g m from the touching start",
                          deep[d], fr_v3_dist(p.p, ref.p));
            fr_scene_destroy(s);
        }
    }
    /* every block of the column 2 mm into the one below: the pushes add up along it (26 mm at
     * the top), more than the settle's own allowance (1e-2 of r_g, 1 cm), and it still settles
     * to the touching column's rest */
    for (int k = 0; k < 2; k++) {
        char dt[64];
        snprintf(dt, sizeof dt, "world.dt=%g", dts[k]);
        const char *sets0[] = {dt};
        fr_scene *s = load("config/scenes/column.yaml", sets0, 1);
        fr_pose ref, p;
        fr_body_get_pose(fr_scene_world(s), body(fr_scene_world(s), "block12"), &ref);
        fr_scene_destroy(s);
        const char *sets[] = {dt, "bodies.block.position=[0, 0, 0.998]",
                              "bodies.block.repeat.offset=[0, 0, 1.998]"};
        s = load("config/scenes/column.yaml", sets, 3);
        fr_world *w = fr_scene_world(s);
        fr_body_get_pose(w, body(w, "block12"), &p);
        ck_assert_msg(fabs(p.p.z - ref.p.z) < 1e-9, "dt %g: the column's top rests %g m off (%s)",
                      dts[k], p.p.z - ref.p.z, fr_world_settle_note(w));
        fr_scene_destroy(s);
    }
}
END_TEST

/* A settle that runs out of its time says so (it was silent, the column's top then moving at
 * 0.4 mm/s); one that ends says nothing. */
START_TEST(test_settle_says_when_it_ran_out)
{
    const char *sets[] = {"world.dt=0.001", "world.settle_time=0.001"};
    fr_scene *s = load("config/scenes/column.yaml", sets, 2);
    ck_assert_ptr_nonnull(strstr(fr_world_settle_note(fr_scene_world(s)), "ran out"));
    fr_scene_destroy(s);
    s = load("config/scenes/column.yaml", sets, 1);
    ck_assert_str_eq(fr_world_settle_note(fr_scene_world(s)), "");
    fr_scene_destroy(s);
}
END_TEST

/* Without settling, a block placed 1 mm into the ground starts with elastic energy that only the
 * first step's contact stage finds: fr_world_energy.placement reports it, and it accounts for
 * that step's rise of total − work (which the server's audit then names, instead of a bare
 * "numerical failure"); a settled start reports none beyond rounding. */
START_TEST(test_placement_energy)
{
    for (int deep = 0; deep < 2; deep++) {
        const char *sets[] = {"bodies.block.repeat.count=1", "world.settle=false",
                              deep ? "bodies.block.position=[0, 0, 0.999]"
                                   : "bodies.block.position=[0, 0, 1]"};
        fr_scene *s = load("config/scenes/column.yaml", sets, deep ? 3 : 1);
        fr_world *w = fr_scene_world(s);
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        ck_assert_double_eq(e0.placement, 0.0);
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy_get(w, &e1);
        const double rise = (e1.total - e1.work) - (e0.total - e0.work);
        if (deep) {
            ck_assert_msg(rise > 0.0 && rise <= e1.placement, "rise %g J, placement %g J", rise,
                          e1.placement);
        } else {
            /* settled: the last settling step's energy is the state's (to its rounding) */
            ck_assert_msg(e1.placement <= 1e-9 * e1.contact, "placement %g J, contact %g J",
                          e1.placement, e1.contact);
        }
        fr_scene_destroy(s);
    }
}
END_TEST

/* A body placed far from an equilibrium is not settled: a 0.5 m cube on a 55° slope with μ = 1.5
 * tips over (tan 55° = 1.43 > w/h = 1). The settle gives up once the cube has turned 1e-2 rad,
 * puts it back where it was placed (exactly) with no contact state, and says so; the fall is the
 * run's: the first step starts from the placement (it fell and slid 4.7 m inside the settle
 * before, and the run's energy audit never saw it). Below the tipping angle (30°) the settle
 * runs as usual: the cube moves by its rest depth only. */
START_TEST(test_settle_gives_up_far_from_equilibrium)
{
    for (int tips = 0; tips < 2; tips++) {
        const double th = (tips ? 55.0 : 30.0) * M_PI / 180.0, g = 9.81;
        char grav[96];
        snprintf(grav, sizeof grav, "world.gravity=[%.17g, 0, %.17g]", g * sin(th), -g * cos(th));
        const char *sets[] = {grav,
                              "world.dt=0.005",
                              "materials.0.mu_s=1.5",
                              "materials.0.mu_k=1.5",
                              "materials.1.mu_s=1.5",
                              "materials.1.mu_k=1.5"};
        fr_scene *s = load("config/scenes/slope.yaml", sets, 6);
        fr_world *w = fr_scene_world(s);
        fr_pose p;
        fr_body_get_pose(w, body(w, "block"), &p);
        const char *note = fr_world_settle_note(w);
        if (tips) {
            ck_assert_msg(strstr(note, "'block'") && strstr(note, "equilibrium"), "note: %s", note);
            ck_assert_double_eq(p.p.x, 0.0);
            ck_assert_double_eq(p.p.z, 0.25);
            ck_assert_double_eq(p.q.w, 1.0);
            ck_assert_int_eq(fr_world_contact_count(w), 0);
        } else {
            ck_assert_str_eq(note, "");
            ck_assert_double_lt(fr_v3_dist(p.p, fr_v3(0, 0, 0.25)), 1e-4);
        }
        fr_scene_destroy(s);
    }
}
END_TEST

/* A body placed into another where the settle gives up starts the run pushed out of it, at rest,
 * not from the overlap, whose stored energy the run released: a ball of resolution 2 placed 5 mm
 * into a 30° slope at 1 ms (it rolls, so the settle gives up; placed at its true radius its
 * polytope's vertices lay 4.6 mm in the ground, 2.3 kJ, and the run failed the energy audit in
 * its first tick; met at a face since session 45, which lies inside, that placement no longer
 * overlaps), and a 0.5 m cube placed 5 mm into the ground on 55° at 5 ms, where it tips; and an
 * 8-sided cylinder on its side placed like the ball (met at a face in the push-out and as placed
 * at the run's first step, 6.7 kJ; the ball 455 J). The first step finds no more than the
 * contact's own energy at the push's end (1e-4 of the body's size deep), and no step of the next
 * 0.2 s gains energy. */
START_TEST(test_settle_gives_up_pushes_out)
{
    for (int k = 0; k < 3; k++) {
        const int cube = k == 1, cyl = k == 2;
        const double th = (cube ? 55.0 : 30.0) * M_PI / 180.0, g = 9.81;
        char grav[96];
        snprintf(grav, sizeof grav, "world.gravity=[%.17g, 0, %.17g]", g * sin(th), -g * cos(th));
        const char *sets[] = {
            grav,
            cube ? "world.dt=0.005" : "world.dt=0.001",
            cube ? "bodies.block.position=[0, 0, 0.245]" : "bodies.block.position=[0, 0, 0.095]",
            "materials.0.mu_s=1.5",
            "materials.0.mu_k=1.5",
            "materials.1.mu_s=1.5",
            "materials.1.mu_k=1.5",
            cyl ? "bodies.block.shapes.0={type: cylinder, radius: 0.1, length: 0.2, material: "
                  "block, resolution: 8}"
                : "bodies.block.shapes.0={type: sphere, radius: 0.1, material: block, resolution: "
                  "2}",
            "bodies.block.rpy=[1.5707963267948966, 0, 0]"};
        fr_scene *s = load("config/scenes/slope.yaml", sets, cube ? 7 : cyl ? 9 : 8);
        fr_world *w = fr_scene_world(s);
        const char *note = fr_world_settle_note(w);
        ck_assert_msg(strstr(note, "equilibrium") && strstr(note, "'block' pushed out"), "%s",
                      note);
        double m;
        fr_mat3 I;
        fr_body_get_mass(w, body(w, "block"), &m, &I);
        const double rg = sqrt((I.m[0][0] + I.m[1][1] + I.m[2][2]) / m), scale = m * g * rg;
        fr_pose p;
        fr_body_get_pose(w, body(w, "block"), &p);
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        double worst = -INFINITY;
        for (int i = 0; i < (cube ? 40 : 200); i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_world_energy_get(w, &e1);
            worst = fmax(worst, (e1.total - e1.work) - (e0.total - e0.work));
            e0 = e1;
        }
        printf("# pushed out (%s): placement %.3g, rise %.3g of the scale\n",
               cube  ? "cube"
               : cyl ? "cylinder"
                     : "ball",
               e1.placement / scale, worst / scale);
        /* pushed out along the ground's normal (the ball by its polytope's reach beyond its
         * radius, 4.6 mm), not along it */
        ck_assert_msg(fabs(p.p.x) < 1e-4 * rg && fabs(p.p.y) < 1e-4 * rg, "%g %g", p.p.x, p.p.y);
        if (cube)
            ck_assert_msg(fabs(p.p.z - 0.25) < 1e-4 * rg, "z %.9g", p.p.z);
        else
            ck_assert_msg(p.p.z > 0.095, "z %.9g", p.p.z);
        /* measured 0, 5.1e-9 and 0 of the scale (the push stops 1e-4 of the size
         * deep); from the overlap 2.3 kJ */
        ck_assert_msg(e1.placement < 1e-5 * scale, "placement %g J of %g", e1.placement, scale);
        /* measured -7.9e-6, -8.6e-6 and -6.2e-6 (8.2e-5 the ball rolling on its facets before
         * session 45) */
        ck_assert_msg(worst < 1e-3 * scale, "rise %g J of %g", worst, scale);
        fr_scene_destroy(s);
    }
}
END_TEST

/* Placement errors are pushed out before the settle, with gravity and friction off
 * (tests/physics/scenes/overlaps.yaml; a new user's trial): a box resting on the floor and
 * placed 5 cm into a wall stayed wedged in both when the settle's own steps pushed it, friction
 * holding (4 mm still in the wall, 8.8e5 J, then thrown at 2.9 m/s), and the note said it had
 * been pushed out; a row of boxes each 1 cm into the next widened what the settle let every body
 * travel, so that a tower tipping on the tilted floor finished its fall inside the settle. Level
 * (1 ms): the box ends touching the wall, the row's boxes apart (to the push's stop, 20
 * stiffening depths, and the rest's give), the note saying what was done. Tilted at 5 ms: the
 * tower, placed touching, starts exactly where it was placed, the box pushed out, and the first
 * tick finds no more energy in overlaps than the contacts' own. */
START_TEST(test_settle_pushes_out_first)
{
    for (int tilted = 0; tilted < 2; tilted++) {
        const char *sets[] = {"world.gravity=[1.7, 0, -9.66]", "world.dt=0.005"};
        fr_scene *s = load("tests/physics/scenes/overlaps.yaml", sets, tilted ? 2 : 0);
        fr_world *w = fr_scene_world(s);
        const char *note = fr_world_settle_note(w);
        fr_pose p;
        fr_body_get_pose(w, body(w, "box"), &p);
        /* measured 2.5e-9 (level, 1 ms) and 1.2e-7 m (tilted, 5 ms) off touching */
        ck_assert_msg(fabs(p.p.x + 0.05) < 1e-6 && fabs(p.p.y) < 1e-9, "box at %.9g %.9g", p.p.x,
                      p.p.y);
        if (!tilted) {
            ck_assert_msg(strstr(note, "'box' was placed") && strstr(note, "'wall'") &&
                              strstr(note, "pushed out by 0.05 m, then settled"),
                          "%s", note);
            for (int i = 0; i + 1 < 10; i++) {
                char a[8], b[8];
                snprintf(a, sizeof a, "r%d", i), snprintf(b, sizeof b, "r%d", i + 1);
                fr_pose pa, pb;
                fr_body_get_pose(w, body(w, a), &pa);
                fr_body_get_pose(w, body(w, b), &pb);
                /* (measured at most 4.8e-8 m into each other: the rest's give) */
                ck_assert_msg(pb.p.y - pa.p.y > 0.1 - 5e-7, "%s %s %.9g", a, b, pb.p.y - pa.p.y);
            }
        } else {
            ck_assert_msg(strstr(note, "'tower'") && strstr(note, "equilibrium") &&
                              strstr(note, "'box' pushed out of 'wall'"),
                          "%s", note);
            fr_body_get_pose(w, body(w, "tower"), &p);
            ck_assert_double_eq(p.p.x, 1.0);
            ck_assert_double_eq(p.p.z, 0.5);
            ck_assert_double_eq(p.q.w, 1.0);
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_world_energy e;
            fr_world_energy_get(w, &e);
            /* measured 1.8e-6 J (the loaded contacts' own); from the overlap, 4.5e5 J */
            ck_assert_msg(e.placement < 2e-5, "placement %g J", e.placement);
        }
        fr_scene_destroy(s);
    }
}
END_TEST

/* A settled contact carrying more than its law stiffens for (about 1100 times the weight of its
 * reduced mass) is named in the settle's note with its load (tests/physics/scenes/sandwich.yaml:
 * 10 g under 100 kg, frictionless, which a new user saw squeezed out sideways after 1-6 s), and
 * one within it (1 kg: 100 times) is not. */
START_TEST(test_settle_names_overload)
{
    fr_scene *s = load("tests/physics/scenes/sandwich.yaml", NULL, 0);
    const char *note = fr_world_settle_note(fr_scene_world(s));
    /* 100 kg on 10 g, and the 10 g's own weight: (100 + 0.01)/0.01 times its reduced mass's */
    ck_assert_msg(strstr(note, "the contact of 'light' on ") &&
                      strstr(note, "carries 1e+04 times the weight of 'light'"),
                  "%s", note);
    fr_scene_destroy(s);
    const char *sets[] = {"bodies.light.mass=1"};
    s = load("tests/physics/scenes/sandwich.yaml", sets, 1);
    note = fr_world_settle_note(fr_scene_world(s));
    ck_assert_msg(note[0] == '\0', "%s", note);
    fr_scene_destroy(s);
}
END_TEST

/* Bodies of a soft material placed touching start at rest carrying their weight (docs/world.md
 * "Settling", "Soft materials"; a user's trial): the settle once gave up on a 1 kg 0.2 m cube on a
 * 1e5 N/m³ material, its static depth (4.9 mm) beyond its travel limit (1e-2 of its radius of
 * gyration, 1.4 mm), and on a stack of 0.01, 1 and 100 kg at 1e8 N/m³ (2.18 mm in all), blaming
 * the placement; the runs then started with a fall onto the contacts (peaks of 1.31 and 1.81 times
 * the static load). tests/physics/scenes/soft.yaml and soft-stack.yaml: the cube at 1e5-1e8 N/m³
 * and 0.01-100 kg (where it rests less than 1 cm deep), the stack light or heavy at the bottom at
 * 1e7 and 1e8, each at 1 and 5 ms. The settle says nothing, the cube rests at the law's depth
 * W/(k·A) (the pair's k, the materials' in series), and every contact's normal force on the
 * first step and at its peak over 0.5 s is its static load W to what the settle and the solve
 * leave: a body j moving at τ (settle_tolerance 1e-9 m/s plus solver_tolerance) after a step holds
 * a force imbalance up to τ·(m_j/h + (c + h·k)·A_j) (its inertia, and its contact's damping and
 * stiffness over the step, c and k the pair's, A_j its footprint: an overdamped contact creeps
 * at τ), the contact under body i the sum over i and the bodies on it, which a start from rest
 * swings to twice that. */
static void soft_check(fr_world *w, double k, double c, const double *foot, const char *what)
{
    const fr_world_def *def = fr_world_get_def(w);
    const double h = def->dt, tau = 1e-9 + def->solver_tolerance;
    const int nb = fr_world_body_count(w);
    double first[8] = {0}, peak[8] = {0}, load[8] = {0}, slack[8] = {0};
    ck_assert_int_le(nb, 8);
    /* the static load under body m: its weight and the weights above it (the bodies are listed
     * bottom up, after the static ones), and the imbalance the settle may leave there */
    for (int m = nb - 1; m >= 0; m--) {
        fr_body_id id = fr_world_body_at(w, m);
        if (fr_body_type(w, id) != FR_BODY_DYNAMIC) continue;
        double mass;
        fr_mat3 I;
        fr_body_get_mass(w, id, &mass, &I);
        load[m] = mass * G + (m + 1 < nb ? load[m + 1] : 0.0);
        slack[m] = tau * (mass / h + (c + h * k) * foot[m]) + (m + 1 < nb ? slack[m + 1] : 0.0);
    }
    const long n = (long)(0.5 / h + 0.5);
    for (long i = 0; i < n; i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        record_loads(w, nb, i == 0, first, peak, NULL);
    }
    for (int m = 0; m < nb; m++) {
        if (!(load[m] > 0.0)) continue;
        const double tol = 2.0 * slack[m] / load[m];
        ck_assert_msg(peak[m] <= load[m] * (1.0 + tol) && first[m] >= load[m] * (1.0 - tol),
                      "%s, body %d: first %.9g N, peak %.9g N (%.3g of the static %.9g N; "
                      "allowed %.3g)",
                      what, m, first[m], peak[m], peak[m] / load[m] - 1.0, load[m], tol);
        const double off = fmax(peak[m] / load[m] - 1.0, 1.0 - first[m] / load[m]);
        soft_worst = fmax(soft_worst, off);
        soft_worst_share = fmax(soft_worst_share, off / tol);
    }
}

/* A ball rolls down a slope (gravity tilted 20°) at 5/7·g·sin θ, with no cap on its turn per step:
 * the linear model read a turn by θ as the ground tilting under it, its leading band point dug in
 * at θ ≈ 0.42 rad a step and the ball rolled on at 1.70 m/s (5 ms) or 8.4 m/s (1 ms;
 * docs/contact.md §5, "Rolling"). On flat ground a 0.1 m ball rolling at 10 m/s keeps its speed and
 * does not hop (7.9 m/s and 8 cm before). */
START_TEST(test_ball_rolls_freely)
{
    const double dts[] = {0.005, 0.001};
    for (int d = 0; d < 2; d++) {
        const char *sets[] = {setf("world.dt=%g", dts[d])};
        fr_scene *s = load("tests/physics/scenes/rolling-ball.yaml", sets, 1);
        fr_world *w = fr_scene_world(s);
        const int n = (int)lround(3.0 / dts[d]);
        for (int i = 0; i < n; i++) ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_vec3 v, om;
        fr_body_get_velocity(w, body(w, "b"), &v, &om);
        const double want = 5.0 / 7.0 * 9.81 * sin(20.0 * M_PI / 180.0) * 3.0;
        printf("# ball on 20 deg, dt %g: v %.4f m/s at 3 s (5/7 g sin t: %.4f), omega R %.4f\n",
               dts[d], v.x, want, om.y * 0.02);
        ck_assert_msg(fabs(v.x - want) < 0.02 * want, "dt %g: v %g m/s at 3 s, want %g", dts[d],
                      v.x, want);
        /* (the polytope rolls on a little more than R: ω·R 7.02 m/s at 1 ms, 7.18 at 5 ms) */
        ck_assert_msg(fabs(om.y * 0.02 - v.x) < 0.05 * want, "dt %g: slips: v %g, omega R %g",
                      dts[d], v.x, om.y * 0.02);
        fr_scene_destroy(s);
    }
    {
        const char *sets[] = {"world.gravity=[0, 0, -9.81]", "bodies.1.shapes.0.radius=0.1",
                              "bodies.1.position=[0, 0, 0.1]", "bodies.1.velocity=[10, 0, 0]",
                              "bodies.1.angular_velocity=[0, 100, 0]"};
        fr_scene *s = load("tests/physics/scenes/rolling-ball.yaml", sets, 5);
        fr_world *w = fr_scene_world(s);
        double zmax = 0.0;
        for (int i = 0; i < 200; i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_pose p;
            fr_body_get_pose(w, body(w, "b"), &p);
            zmax = fmax(zmax, p.p.z);
        }
        fr_vec3 v, om;
        fr_body_get_velocity(w, body(w, "b"), &v, &om);
        printf("# ball on flat ground: v %.4f m/s after 1 s (10), highest z %.5f m\n", v.x, zmax);
        ck_assert_msg(v.x > 9.7 && v.x < 10.1, "v %g m/s after 1 s", v.x);
        ck_assert_msg(zmax < 0.1 + 2e-3, "hopped to %g m", zmax);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A ball, a cylinder and a capsule placed at rest on flat ground stay at rest, at their default
 * resolutions, each with an edge or a vertex of its polytope under it. The turns a rolling shape
 * is invariant to are taken out of the pressure's moments, so the pressure must act through a
 * point under the shape's centre (its axis): through the patch's centre of pressure, a point of
 * the polytope that the roll carries behind the centre, they rolled off as a ball balanced on a
 * point does, e-folding at √(5g/7R) = 12 /s, to 0.05–0.15 m/s, and at 5 ms never came to rest
 * (a new user's trial). The bound, from the second second on, is the solve's own: a velocity it
 * accepts as zero. */
START_TEST(test_curved_bodies_rest)
{
    const char *shapes[] = {"{type: sphere, radius: 0.05, material: m}",
                            "{type: cylinder, radius: 0.05, length: 0.3, material: m}",
                            "{type: capsule, radius: 0.05, length: 0.3, material: m}"};
    const char *rpys[] = {"[0, 0, 0]", "[1.5707963267948966, 0, 0]", "[0, 1.5707963267948966, 0]"};
    const double dts[] = {0.001, 0.005};
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 3; k++) {
            const char *sets[] = {setf("world.dt=%g", dts[d]), "world.gravity=[0, 0, -9.81]",
                                  setf("bodies.1.shapes.0=%s", shapes[k]),
                                  "bodies.1.position=[0, 0, 0.05]",
                                  setf("bodies.1.rpy=%s", rpys[k])};
            fr_scene *s = load("tests/physics/scenes/rolling-ball.yaml", sets, 5);
            fr_world *w = fr_scene_world(s);
            const double tol = fr_world_get_def(w)->solver_tolerance;
            fr_pose p0, p;
            fr_body_get_pose(w, body(w, "b"), &p0);
            double worst = 0.0;
            for (int i = 0; i < (int)lround(5.0 / dts[d]); i++) {
                ck_assert_int_eq(fr_world_step(w), FR_OK);
                if ((i + 1) * dts[d] < 1.0) continue; /* (the settle's residual dies out first) */
                fr_vec3 v, om;
                fr_body_get_velocity(w, body(w, "b"), &v, &om);
                worst = fmax(worst, fmax(fr_v3_norm(v), 0.05 * fr_v3_norm(om)));
            }
            fr_body_get_pose(w, body(w, "b"), &p);
            printf("# %s at rest, dt %g: fastest %.3g m/s, moved %.3g m\n", shapes[k], dts[d],
                   worst, fr_v3_dist(p.p, p0.p));
            ck_assert_msg(worst < tol, "%s, dt %g: moves at %g m/s", shapes[k], dts[d], worst);
            fr_scene_destroy(s);
        }
}
END_TEST

/* Four balls in a pyramid, placed touching, rest (at their default resolution and at 8). A pair
 * of two rolling shapes is faceted (src/world/contacts.c rolls): its patch normal runs a
 * facet's angle off the line of centres, and a pressure through a point under one centre turned
 * the other ball: the pyramid walked 2–6 cm in 3 s at 0.01–0.04 m/s (a new user's trial). Bound:
 * 3 times the worst speed measured after the first 2 s (3.3e-8 m/s). */
START_TEST(test_ball_pyramid_rests)
{
    const char *res[] = {"0", "8"};
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {setf("bodies.1.shapes.0.resolution=%s", res[k]),
                              setf("bodies.2.shapes.0.resolution=%s", res[k]),
                              setf("bodies.3.shapes.0.resolution=%s", res[k]),
                              setf("bodies.4.shapes.0.resolution=%s", res[k])};
        fr_scene *s = load("tests/physics/scenes/ball-pyramid.yaml", sets, 4);
        fr_world *w = fr_scene_world(s);
        const char *names[] = {"p0", "p1", "p2", "top"};
        double worst = 0.0;
        for (int i = 0; i < 600; i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            if (i < 400) continue;
            for (int b = 0; b < 4; b++) {
                fr_vec3 v, om;
                fr_body_get_velocity(w, body(w, names[b]), &v, &om);
                worst = fmax(worst, fmax(fr_v3_norm(v), 0.05 * fr_v3_norm(om)));
            }
        }
        printf("# ball pyramid, resolution %s, 5 ms: fastest %.3g m/s from 2 s to 3 s\n", res[k],
               worst);
        ck_assert_msg(worst < 1e-7, "resolution %s: moves at %g m/s", res[k], worst);
        fr_scene_destroy(s);
    }
}
END_TEST

START_TEST(test_settle_soft_materials)
{
    const double ks[] = {1e5, 1e6, 1e7, 1e8}, masses[] = {0.01, 1.0, 100.0};
    const double dts[] = {0.001, 0.005}, A = 0.2 * 0.2;
    soft_worst = soft_worst_share = soft_worst_depth = 0.0;
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < 4; k++)
            for (int m = 0; m < 3; m++) {
                /* the pair's stiffness and damping: the two materials' in series */
                const double kp = ks[k] / 2, cp = ks[k] / 50 / 2;
                const double depth = fr_contact_depth_of_pressure(kp, 0.0, masses[m] * G / A);
                if (depth > 0.01) continue; /* (100 kg on 1e5: 49 cm) */
                const char *sets[] = {setf("world.dt=%g", dts[d]),
                                      setf("materials.0.stiffness=%g", ks[k]),
                                      setf("materials.0.damping=%g", ks[k] / 50),
                                      setf("bodies.box.mass=%g", masses[m])};
                fr_scene *s = load("tests/physics/scenes/soft.yaml", sets, 4);
                fr_world *w = fr_scene_world(s);
                const char *what = setf("cube, %g N/m³, %g kg, %g ms (%.3g m deep)", ks[k],
                                        masses[m], 1e3 * dts[d], depth);
                ck_assert_msg(!fr_world_settle_note(w)[0], "%s: %s", what, fr_world_settle_note(w));
                fr_pose p;
                fr_body_get_pose(w, body(w, "box"), &p);
                /* at the law's depth, to the imbalance the settle leaves over the pair's k·A (and
                 * the position's rounding) */
                const double tau = 1e-9 + fr_world_get_def(w)->solver_tolerance, h = dts[d];
                const double slack = tau * (masses[m] / h + (cp + h * kp) * A) / (kp * A);
                const double sunk = 0.1 - p.p.z;
                ck_assert_msg(fabs(sunk - depth) <= slack + 1e-16,
                              "%s: sunk %.12g m, the law's %.12g (%.3g of it; allowed %.3g)", what,
                              sunk, depth, sunk / depth - 1.0, slack / depth);
                soft_worst_depth = fmax(soft_worst_depth, fabs(sunk / depth - 1.0));
                const double foot[] = {0, 0, A};
                soft_check(w, kp, cp, foot, what);
                fr_scene_destroy(s);
            }
        /* the stack light at the bottom (the trial's), then heavy at the bottom */
        for (int k = 2; k < 4; k++)
            for (int heavy = 0; heavy < 2; heavy++) {
                const char *sets[] = {setf("world.dt=%g", dts[d]),
                                      setf("materials.0.stiffness=%g", ks[k]),
                                      setf("materials.0.damping=%g", ks[k] / 1000),
                                      setf("bodies.b0.mass=%g", heavy ? 100.0 : 0.01),
                                      setf("bodies.b2.mass=%g", heavy ? 0.01 : 100.0)};
                fr_scene *s = load("tests/physics/scenes/soft-stack.yaml", sets, 5);
                fr_world *w = fr_scene_world(s);
                const char *what = setf("stack %s at the bottom, %g N/m³, %g ms",
                                        heavy ? "100 kg" : "10 g", ks[k], 1e3 * dts[d]);
                ck_assert_msg(!fr_world_settle_note(w)[0], "%s: %s", what, fr_world_settle_note(w));
                const double foot[] = {0, 0.2 * 0.2, 0.17 * 0.17, 0.14 * 0.14};
                soft_check(w, ks[k] / 2, ks[k] / 1000 / 2, foot, what);
                fr_scene_destroy(s);
            }
    }
    fprintf(stderr,
            "# soft materials: first and peak forces at most %.3g off the static load, %.3g of "
            "what the settle may leave; the cube rests at the law's depth to %.3g of it\n",
            soft_worst, soft_worst_share, soft_worst_depth);
}
END_TEST

/* ... and where the static load tilts them: a soft body's contacts turn it as they sink under an
 * off-centre load or a slope's friction, by up to about its depth over its patch's half-width,
 * which also passed the settle's turn limit (1e-2 rad) and made it give up (a new user's trial:
 * 5 kg 40 mm off-centre on 1 kg at 3e6 N/m³ peaked at 1.89 times its static load, a cube on a
 * 20° slope at 3e5 N/m³ at 1.81). The soft stack with its 100 kg top 30 mm off-centre (1e8 N/m³,
 * tilting about 0.018 rad), and the soft cube on a 20° slope (gravity turned; 3e5 N/m³, μ_s 0.8,
 * 3 mm deep): settled, and the whole force each body's support carries (normal and friction)
 * equals the weight above it, first step and peak over 0.5 s, to the settle's slack as in
 * soft_check. */
START_TEST(test_settle_soft_tilted)
{
    const double dts[] = {0.001, 0.005}, th = 20.0 * M_PI / 180.0;
    for (int d = 0; d < 2; d++)
        for (int c = 0; c < 2; c++) {
            const double h = dts[d];
            fr_scene *s;
            if (c == 0) {
                const char *sets[] = {setf("world.dt=%g", h), "bodies.b0.mass=1",
                                      "bodies.b2.position=[0.03, 0, 0.5]"};
                s = load("tests/physics/scenes/soft-stack.yaml", sets, 3);
            } else {
                const char *sets[] = {
                    setf("world.dt=%g", h),
                    setf("world.gravity=[%.17g, 0, %.17g]", G * sin(th), -G * cos(th)),
                    "materials.0.stiffness=3e5",
                    "materials.0.damping=6e3",
                    "materials.0.mu_s=0.8",
                    "materials.0.mu_k=0.8"};
                s = load("tests/physics/scenes/soft.yaml", sets, 6);
            }
            fr_world *w = fr_scene_world(s);
            const char *what = setf("%s, %g ms", c ? "cube on 20°" : "offset stack", 1e3 * h);
            ck_assert_msg(!fr_world_settle_note(w)[0], "%s: %s", what, fr_world_settle_note(w));
            const fr_world_def *def = fr_world_get_def(w);
            const double tau = 1e-9 + def->solver_tolerance;
            const int nb = fr_world_body_count(w);
            fr_body_id id[8], under[8];
            double load[8] = {0}, slack[8] = {0}, first[8] = {0}, peak[8] = {0};
            int nd = 0;
            for (int m = 0; m < nb; m++) /* the dynamic bodies bottom up, each on the one before */
                if (fr_body_type(w, fr_world_body_at(w, m)) == FR_BODY_DYNAMIC) {
                    id[nd] = fr_world_body_at(w, m);
                    under[nd] = nd ? id[nd - 1] : body(w, "ground");
                    nd++;
                }
            for (int m = nd - 1; m >= 0; m--) {
                double mass;
                fr_mat3 I;
                fr_body_get_mass(w, id[m], &mass, &I);
                load[m] = mass * G + (m + 1 < nd ? load[m + 1] : 0.0);
                /* (the pair's k·A and c·A at most the footprint's: 0.2 m boxes) */
                const double kA = def->dt * 5e7 * 0.04 + 5e4 * 0.04;
                slack[m] = tau * (mass / h + kA) + (m + 1 < nd ? slack[m + 1] : 0.0);
            }
            for (long i = 0; i < (long)(0.5 / h + 0.5); i++) {
                ck_assert_int_eq(fr_world_step(w), FR_OK);
                for (int m = 0; m < nd; m++) {
                    double f = fr_v3_norm(fr_world_contact_force(w, id[m], under[m]));
                    if (i == 0) first[m] = f;
                    peak[m] = fmax(peak[m], f);
                }
            }
            for (int m = 0; m < nd; m++) {
                const double tol = 2.0 * slack[m] / load[m];
                ck_assert_msg(peak[m] <= load[m] * (1.0 + tol) && first[m] >= load[m] * (1.0 - tol),
                              "%s, body %d: first %.9g N, peak %.9g N of the static %.9g N "
                              "(allowed %.3g)",
                              what, m, first[m], peak[m], load[m], tol);
            }
            fr_scene_destroy(s);
        }
}
END_TEST

/* ... and placed into another: the push before the settle moves a soft body slowly (its law's
 * force over a step, 2 % of the depth a step here), so a 1 kg cube placed 15 mm into the ground at
 * 1e6 N/m³ was still 0.29 mm in after it, deeper than the push's 1e-3 of r_g; the settle then
 * took it to its static depth (0.49 mm, its weight carried), but the note said it could not be
 * pushed out (a new user's trial). It now says it was pushed out and settled, and the cube
 * carries its weight from the first step (to the settle's slack, as soft_check). */
START_TEST(test_settle_soft_pushed_out)
{
    for (int d = 0; d < 2; d++) {
        const double h = d ? 0.005 : 0.001;
        const char *sets[] = {setf("world.dt=%g", h), "materials.0.stiffness=1e6",
                              "materials.0.damping=0", "bodies.box.position=[0, 0, 0.085]"};
        fr_scene *s = load("tests/physics/scenes/soft.yaml", sets, 4);
        fr_world *w = fr_scene_world(s);
        const char *note = fr_world_settle_note(w);
        ck_assert_msg(strstr(note, "pushed out by") && !strstr(note, "could not be pushed out"),
                      "%g ms: %s", 1e3 * h, note);
        const double foot[] = {0, 0, 0.2 * 0.2};
        soft_check(w, 5e5, 0.0, foot, setf("cube placed 15 mm into the ground, %g ms", 1e3 * h));
        fr_scene_destroy(s);
    }
}
END_TEST

/* ... and a soft body placed far from an equilibrium is still not settled: the compliance counts
 * only what the contacts holding it up against gravity would carry. The 1 kg cube at 1e5 N/m³
 * placed touching the wall only (in the air beside it: its contact carries nothing, and it falls
 * along the wall), and placed on an edge at 0.5 rad (it tips): the settle gives up, says so, and
 * the cube starts where it was placed. */
START_TEST(test_settle_soft_gives_up)
{
    const double th = 0.5;
    const char *places[][2] = {
        {"bodies.box.position=[0.9, 0, 1]", "bodies.box.rpy=[0, 0, 0]"},
        {setf("bodies.box.position=[0, 0, %.17g]", 0.1 * (cos(th) + sin(th))),
         setf("bodies.box.rpy=[%.17g, 0, 0]", th)},
    };
    for (int c = 0; c < 2; c++) {
        for (int d = 0; d < 2; d++) {
            const char *sets[] = {d ? "world.dt=0.005" : "world.dt=0.001", places[c][0],
                                  places[c][1]};
            fr_scene *s = load("tests/physics/scenes/soft.yaml", sets, 3);
            fr_world *w = fr_scene_world(s);
            const char *note = fr_world_settle_note(w);
            ck_assert_msg(strstr(note, "body 'box' moved") &&
                              strstr(note, "not placed near an equilibrium"),
                          "case %d, dt %s: %s", c, sets[0], note);
            fr_pose p;
            fr_body_get_pose(w, body(w, "box"), &p);
            ck_assert_double_eq(p.p.x, c ? 0.0 : 0.9);
            ck_assert_double_eq(p.p.z, c ? 0.1 * (cos(th) + sin(th)) : 1.0);
            ck_assert_int_eq(fr_world_contact_count(w), 0);
            fr_scene_destroy(s);
        }
    }
}
END_TEST

/* The settle's notes say what a user needs: a body of a few millimetres at 5 ms that turned
 * past the settle's limit gets the rocking hint (a new user's trial: 188 notes blamed the
 * placement of bodies placed at rest), a 0.5 m block that tips does not, a settle that runs
 * out names the body still moving, and a slender block turned 45° on its slope, placed at rest
 * at 0.97 of its static limit (√2·w/h, a corner downhill), that tips anyway is told it may tip
 * early (a new user's trial, 2026-11-28: the note blamed the placement; docs/contact.md §5). */
START_TEST(test_settle_notes_name_the_cause)
{
    static const struct {
        double size[3], yaw, deg, eps;
        const char *want, *not ;
    } cases[] = {
        {{0.00783853, 0.00391926, 0.00391926}, 0.4436, 57.53, 0.0, "body 'block' moved", "xx"},
        {{0.5, 0.5, 0.5}, 0.0, 56.0, 0.0, "body 'block' moved", "tipping early"},
        {{0.005, 0.005, 0.005}, 0.0, 43.5, 0.005, "still moving at up to", "xx"},
        {{0.004, 0.004, 0.2},
         M_PI / 4,
         1.5722,
         0.5,
         "or tipping early on its contacts as slender",
         "rocking"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const double th = cases[k].deg * M_PI / 180, mu = tan(th) + cases[k].eps;
        const char *sets[] = {
            "world.dt=0.005",
            /* (a 5 ms step taken whole: in the substeps they ask for the small bodies settle,
             * docs/world.md "Substeps") */
            "world.substeps=1",
            setf("world.gravity=[%.17g, 0, %.17g]", 9.81 * sin(th), -9.81 * cos(th)),
            setf("materials.0.mu_s=%.17g", mu), setf("materials.0.mu_k=%.17g", mu),
            setf("materials.1.mu_s=%.17g", mu), setf("materials.1.mu_k=%.17g", mu),
            setf("bodies.block.shapes.0.size=[%.17g, %.17g, %.17g]", cases[k].size[0],
                 cases[k].size[1], cases[k].size[2]),
            setf("bodies.block.position=[0, 0, %.17g]", cases[k].size[2] / 2),
            setf("bodies.block.rpy=[0, 0, %.17g]", cases[k].yaw)};
        fr_scene *s = load("config/scenes/slope.yaml", sets, 10);
        const char *note = fr_world_settle_note(fr_scene_world(s));
        ck_assert_msg(strstr(note, cases[k].want) && !strstr(note, cases[k].not ), "case %zu: %s",
                      k, note);
        if (k == 0) {
            ck_assert_msg(strstr(note, "or rocking on its contacts as bodies of a few millimetres "
                                       "do at a step this long"),
                          "%s", note);
            /* held to one step by world.substeps, it is told the rule's own count for it */
            const int ask =
                fr_world_substeps_for_width(fr_world_get_def(fr_scene_world(s)), cases[k].size[1]);
            ck_assert_int_gt(ask, 1);
            ck_assert_msg(
                strstr(note, setf("world.substeps 0 (the rule's %d substeps for it)", ask)), "%s",
                note);
        }
        if (k == 1) ck_assert_msg(!strstr(note, "rocking"), "%s", note);
        if (k == 2) ck_assert_msg(strstr(note, "('block'; world.settle_time"), "%s", note);
        fr_scene_destroy(s);
    }
}
END_TEST

/* The shipped delta (config/scenes/delta.yaml): its rods, distance joints from an arm's tip to a
 * platform point (`anchor_b`), are 0.45 m from the start (the loops closed as built, to the file's
 * 9 digits), stay closed while an arm's motor drives it for 1 s, and keep the platform level (the
 * parallelograms' job). */
/* The walking hexapod (config/scenes/hexapod.yaml, geared joints: armature 0.004 kg·m²) never
 * gains energy beyond the work its joints do: over 3 s of its gait, total − work rises in no
 * step by more than 1 mJ (measured 8e-5 J, the trapezoid estimate of the joint work). Its
 * energy left out the rotors' Σ ½·armature·q̇², which the joint work spins up: each gait phase
 * change then showed 0.02–0.1 J. */
START_TEST(test_walking_robot_energy)
{
    fr_scene *s = load("config/scenes/hexapod.yaml", NULL, 0);
    fr_world *w = fr_scene_world(s);
    fr_world_energy e0, e1;
    fr_world_energy_get(w, &e0);
    double worst = 0.0;
    for (int i = 0; i < 3000; i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy_get(w, &e1);
        worst = fmax(worst, (e1.total - e1.work) - (e0.total - e0.work));
        e0 = e1;
    }
    ck_assert_msg(worst < 1e-3, "the walking hexapod gained %g J in a step", worst);
    fr_scene_destroy(s);
}
END_TEST

START_TEST(test_delta_scene)
{
    const char *sets[] = {"joints.0.motor.speed=0.5"};
    fr_scene *s = load("config/scenes/delta.yaml", sets, 1);
    fr_world *w = fr_scene_world(s);
    fr_body_id plat = body(w, "platform");
    fr_pose p0, p;
    fr_body_get_pose(w, plat, &p0);
    step_n(w, 1);
    /* nothing to correct: the platform moves only as the motor turns its arm (0.5 rad/s × 0.2 m ×
     * 1 ms = 1e-4 m at the tip; measured 1.4e-4 m), not by a rod's length */
    fr_body_get_pose(w, plat, &p);
    ck_assert_msg(fr_v3_dist(p.p, p0.p) < 1e-3, "the platform jumped %g m", fr_v3_dist(p.p, p0.p));
    for (int k = 0; k < 6; k++) { /* the rods after the first step: as built */
        char name[16];
        snprintf(name, sizeof name, "rod%d%c", k / 2, "ab"[k % 2]);
        int j;
        ck_assert_int_eq(fr_world_find_joint(w, name, &j), FR_OK);
        fr_joint_state js;
        ck_assert_int_eq(fr_world_joint_state(w, j, &js), FR_OK);
        ck_assert_msg(fabs(js.position - 0.45) < 1e-8 && js.error < 1e-9,
                      "%s: %.12g m long, error %g m", name, js.position, js.error);
    }
    double tilt = 0.0, err = 0.0;
    for (int i = 0; i < 1000; i++) {
        step_n(w, 1);
        fr_body_get_pose(w, plat, &p);
        fr_vec3 z = fr_q_rotate(p.q, fr_v3(0, 0, 1));
        tilt = fmax(tilt, acos(fmin(1.0, z.z)));
        for (int j = 0; j < fr_world_joint_count(w); j++) {
            fr_joint_state js;
            fr_world_joint_state(w, j, &js);
            err = fmax(err, js.error);
        }
    }
    ck_assert_msg(fr_v3_dist(p.p, p0.p) > 0.05, "the platform did not move: %g m",
                  fr_v3_dist(p.p, p0.p));
    ck_assert_msg(err < 1e-9 && tilt < 1e-6, "joint error %g m, platform tilt %g rad", err, tilt);
    fr_scene_destroy(s);
}
END_TEST

/* Joints on bodies in penalty contact, their limits and motors solved inside the contact step
 * (docs/world.md, "Joints in the implicit step"; a new user's trial, session 44, found each case
 * failing with only the equality rows there): case 0, an arm whose elbow comes to rest on its
 * hinge limit (706 of 3739 steps unconverged, its energy flickering by up to 9 mJ a step; it
 * comes to rest rolling on its forearm in a circle about the shoulder, no friction working on a
 * rolling capsule, where the old splitting's damping stopped it); case 1,
 * a car whose motor-driven wheels climb a 9° slope at 5 ms (8.9 % slip with the motors outside the
 * solve, 1.4 % with every joint outside it); case 2, a crane lifting a box off the ground by a
 * distance joint at an angle (447 of 2500 steps unconverged: the box's friction limit converged
 * at a ratio of −0.8 a round); case 3, a four-bar on a free base stalled against the ground, a
 * closed loop the solve leaves to the joints' own stage (3454 of 3994 steps unconverged taken
 * into it). */
START_TEST(test_jointed_in_contact)
{
    static const char *const scene[] = {
        "tests/physics/scenes/jointed-arm-limit.yaml", "tests/physics/scenes/motor-car-slope.yaml",
        "tests/physics/scenes/crane-lift.yaml", "tests/physics/scenes/fourbar-free-base.yaml"};
    static const double T[] = {4.0, 3.0, 2.5, 4.0};
    fr_scene *s = load(scene[_i], NULL, 0);
    fr_world *w = fr_scene_world(s);
    fr_world_energy e0;
    fr_world_energy_get(w, &e0);
    const double rise = worst_rise(w, T[_i]);
    fr_world_solver_stats st;
    fr_world_solver_stats_get(w, &st);
    double slip = 0.0;
    if (_i == 1) {
        /* the chassis's speed against the wheels' rim speed ω·R relative to it */
        fr_vec3 v, om, vw, omw;
        ck_assert_int_eq(fr_body_get_velocity(w, body(w, "chassis"), &v, &om), FR_OK);
        ck_assert_int_eq(fr_body_get_velocity(w, body(w, "wrl"), &vw, &omw), FR_OK);
        const double rim = fabs(omw.y - om.y) * 0.087;
        slip = fabs(fr_v3_norm(v) - rim) / rim;
    }
    printf("# %s: %ld of %ld steps unconverged; largest rise %.3g of the start's energy; slip "
           "%.3g (car)\n",
           scene[_i], st.unconverged, st.steps, rise / e0.total, slip);
    ck_assert_msg(st.unconverged <= st.steps / 1000, "%ld of %ld steps unconverged", st.unconverged,
                  st.steps);
    /* (the arm: measured 8.6e-7; with its limit outside the solve 6.6e-5) */
    if (_i == 0) ck_assert_msg(rise <= 1e-5 * e0.total, "rose %.3g J in a step", rise);
    if (_i == 1) ck_assert_msg(slip < 0.005, "the wheels slip %.3g", slip);
    fr_scene_destroy(s);
}
END_TEST

/* The inradius of the 48-sided wheel the car scenes use (the face the wheel rolls on), m */
static double wheel_rolling_radius(int resolution)
{
    fr_shape *sh = NULL;
    ck_assert_int_eq(fr_shape_create_cylinder(0.093, 0.0255, resolution, &sh), FR_OK);
    double r = 0.0;
    for (int f = 0; f < sh->poly.nfaces; f++)
        if (fabs(sh->poly.normal[f].z) < 1e-12) r = fmax(r, sh->poly.offset[f]);
    fr_shape_destroy(sh);
    return r;
}

/* The widest swing of the normal force on `on` from `by` over T s of steps, N (from t0 on) */
static double force_swing(fr_world *w, const char *on, const char *by, double t0, double T,
                          double *lo_out)
{
    const double dt = fr_world_get_def(w)->dt;
    double lo = INFINITY, hi = -INFINITY;
    for (long i = 0; i < lround(T / dt); i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        if ((double)(i + 1) * dt < t0) continue;
        const double f = fr_world_contact_force(w, body(w, on), body(w, by)).z;
        lo = fmin(lo, f), hi = fmax(hi, f);
    }
    if (lo_out) *lo_out = lo;
    return hi - lo;
}

/* Wheels roll as cylinders, not as the polygons that approximate them (docs/contact.md §5,
 * "Rolling"). Met at its facets, a wheel's centre rose and fell by r·(1 − cos(π/N)) a facet
 * against the step's model, which takes a turn about the axis as leaving the volume unchanged:
 * case 0–1, a lone wheel rolling on flat ground lost 90 % of its energy in 3 s; case 2–3, a car
 * of 31.3 kg on 0.29 kg wheels joined in the contact step coasting, its wheels' normal force
 * swung 0–445 N and left the ground for 1–2 steps a facet (a session 44 trial); case 4–5, the car
 * climbing 11.3° with its motors at 90 % of their force stalled at 1 ms, and with the motors past
 * their bound left out of the solve it accelerated 7 % short of the law below; case 6–7, a wheel
 * of 8 sides placed on a slope with a vertex down, met at a face only from its second step on,
 * rose 0.92 J (0.89 of its energy) in its first. Cases alternate dt 1 ms and 5 ms. */
START_TEST(test_wheels_roll)
{
    const double dt = _i % 2 ? 0.005 : 0.001;
    const char *const scene[] = {
        "tests/physics/scenes/wheel-roll.yaml", "tests/physics/scenes/car-coast.yaml",
        "tests/physics/scenes/car-near-limit.yaml", "tests/physics/scenes/wheel-slope-vertex.yaml"};
    fr_scene *s = load_dt(scene[_i / 2], dt);
    fr_world *w = fr_scene_world(s);
    const double g = 9.81;
    if (_i >= 6) {
        /* the wheel placed on the slope with a vertex down rolls off without a rise (measured
         * none at either step) */
        fr_world_energy e0;
        fr_world_energy_get(w, &e0);
        const double rise = worst_rise(w, 1.0);
        printf("# %s dt %g: largest rise %.3g of the start's energy\n", scene[3], dt,
               rise / e0.total);
        ck_assert_msg(rise <= 1e-12 * e0.total, "rose %g J in a step", rise);
    } else if (_i < 4) {
        /* after 0.1 s (the start's ω = v/R slips to v/r), the energy and each normal force:
         * measured 5e-14 of the energy, swings 7e-9 of the load at most) */
        const char *wheel = _i < 2 ? "wheel" : "wrl";
        step_n(w, (int)lround(0.1 / dt));
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        double lo = 0.0;
        const double swing = force_swing(w, wheel, "ground", 0.0, 2.9, &lo);
        fr_world_energy_get(w, &e1);
        const double load = _i < 2 ? 0.29 * g : (31.3 + 4 * 0.29) * g / 4;
        const double lost = ((e0.total - e0.work) - (e1.total - e1.work)) / e0.total;
        printf("# %s dt %g: energy lost %.3g of it in 2.9 s; %s's normal force %.6g N, swings "
               "%.3g of its load\n",
               scene[_i / 2], dt, lost, wheel, lo, swing / load);
        ck_assert_msg(fabs(lost) < 1e-10, "energy lost %g of it", lost);
        ck_assert_msg(swing < 1e-7 * load, "normal force swings %g N", swing);
        ck_assert_msg(fabs(lo - load) < 1e-7 * load, "normal force %g N, load %g N", lo, load);
    } else {
        /* the chassis's speed along the slope, fitted over 0.5–2.5 s: the law with the wheels'
         * inertia ½·m·R² and the face they roll on (measured 3.7e-5 off at 1 ms, 9.5e-4 at
         * 5 ms); then the motors' speed */
        const double th = 0.19722220547535926, r = wheel_rolling_radius(48);
        const double M = 31.3 + 4 * 0.29, I = 0.5 * 0.29 * 0.093 * 0.093;
        const double a = (4 * 1.61 / r - M * g * sin(th)) / (M + 4 * I / (r * r));
        double st = 0, sv = 0, stt = 0, stv = 0, lo = INFINITY;
        int n = 0;
        for (long i = 0; i < lround(3.0 / dt); i++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            const double t = (double)(i + 1) * dt;
            if (t > 0.1) {
                const char *wh[] = {"wfl", "wfr", "wrl", "wrr"};
                for (int k = 0; k < 4; k++)
                    lo = fmin(lo, fr_world_contact_force(w, body(w, wh[k]), body(w, "ground")).z);
            }
            if (t < 0.5 || t > 2.5) continue;
            fr_vec3 v, om;
            fr_body_get_velocity(w, body(w, "chassis"), &v, &om);
            const double u = v.x * cos(th) + v.z * sin(th);
            st += t, sv += u, stt += t * t, stv += t * u, n++;
        }
        const double fit = (n * stv - st * sv) / (n * stt - st * st);
        fr_vec3 v, om;
        fr_body_get_velocity(w, body(w, "chassis"), &v, &om);
        const double u = v.x * cos(th) + v.z * sin(th), want = 6.1 * r;
        printf("# car near its motors' force, dt %g: a %.7g m/s² (law %.7g, %.2g off); %.6g m/s "
               "at 3 s (motors %.6g); least wheel force %.4g N\n",
               dt, fit, a, fit / a - 1, u, want, lo);
        ck_assert_msg(fabs(fit / a - 1) < (dt < 0.002 ? 2e-4 : 3e-3), "a %g, law %g", fit, a);
        ck_assert_msg(fabs(u / want - 1) < 1e-3, "%g m/s at 3 s, motors %g", u, want);
        ck_assert_msg(lo > 0.5 * M * g * cos(th) / 4, "a wheel's force fell to %g N", lo);
    }
    fr_scene_destroy(s);
}
END_TEST

/* A slider's motor at its force presses a box against a wall through a light pusher: the pusher
 * holds still and presses with exactly the motor's force (37.3 N). With the motor left out of
 * the contact step once past its bound (session 44), the joints' stage drove the 73 g pusher at
 * its speed after each solve and the pusher rattled at ±0.17 m/s, its force 25–50 N at 1 ms and
 * 35–40 N at 5 ms. */
START_TEST(test_slider_motor_presses)
{
    const double dt = _i ? 0.005 : 0.001;
    fr_scene *s = load_dt("tests/physics/scenes/slider-press.yaml", dt);
    fr_world *w = fr_scene_world(s);
    step_n(w, lround(1.5 / dt));
    double worst_f = 0.0, worst_v = 0.0;
    for (long i = 0; i < lround(1.0 / dt); i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        const fr_vec3 f = fr_world_contact_force(w, body(w, "box"), body(w, "pusher"));
        fr_vec3 v, om;
        fr_body_get_velocity(w, body(w, "pusher"), &v, &om);
        worst_f = fmax(worst_f, fabs(f.x - 37.3));
        worst_v = fmax(worst_v, fr_v3_norm(v));
    }
    printf("# slider motor pressing, dt %g: force off the motor's by %.3g N at most, pusher at "
           "%.3g m/s at most\n",
           dt, worst_f, worst_v);
    /* (measured: the force to 7e-12 N at 1 ms and 3e-9 N at 5 ms, the pusher still to 9e-14 and
     * 2e-10 m/s) */
    ck_assert_msg(worst_f < 1e-9 * 37.3, "force off by %g N", worst_f);
    ck_assert_msg(worst_v < 1e-8, "pusher moves at %g m/s", worst_v);
    fr_scene_destroy(s);
}
END_TEST

/* A rolling shape's bond read takes out the turn its body made over the last step
 * (fri_body_state.turn_last), not h·ω of its velocity now: a 0.1 m ball (resolution 32) set
 * rolling at 10 m/s had made no turn before its first step, whose read took 0.49 rad out (5 ms),
 * a 2.9 mm slip; the ball slid the wrong way at μ_k for 6 steps, gaining 0.048 J, and went on
 * alternating stick and slip, its speed swinging 10.02–10.17 m/s. Over 1 s no step may gain more
 * than 1e-4 J (measured 7e-6 and 1.9e-5 J at 1 and 5 ms: the facets) and its speed stays within
 * 1e-4 of its start's (2.9e-5 above at 1 ms). Cases: dt 1 ms and 5 ms. */
START_TEST(test_ball_set_rolling)
{
    const double dt = _i ? 0.005 : 0.001;
    const char *sets[] = {setf("world.dt=%g", dt),        "world.gravity=[0, 0, -9.81]",
                          "bodies.1.shapes.0.radius=0.1", "bodies.1.position=[0, 0, 0.1]",
                          "bodies.1.velocity=[10, 0, 0]", "bodies.1.angular_velocity=[0, 100, 0]"};
    fr_scene *s = load("tests/physics/scenes/rolling-ball.yaml", sets, 6);
    fr_world *w = fr_scene_world(s);
    fr_world_energy e0, e1;
    fr_world_energy_get(w, &e0);
    double rise = 0.0, vmax = 0.0;
    for (long i = 0; i < lround(1.0 / dt); i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        fr_world_energy_get(w, &e1);
        rise = fmax(rise, (e1.total - e1.work) - (e0.total - e0.work));
        e0 = e1;
        fr_vec3 v, om;
        fr_body_get_velocity(w, body(w, "b"), &v, &om);
        vmax = fmax(vmax, fr_v3_norm(v));
    }
    printf("# ball set rolling at 10 m/s, dt %g: largest rise %.3g J, fastest %.9g m/s\n", dt, rise,
           vmax);
    ck_assert_msg(rise <= 1e-4, "rose %g J in a step", rise);
    ck_assert_msg(vmax <= 10.0 * (1.0 + 1e-4), "reached %.12g m/s", vmax);
    fr_scene_destroy(s);
}
END_TEST

/* Two slider motors pressing on each other through a contact: pushers of 0.1 kg (30 N and 20 N,
 * both at 0.5 m/s towards each other) on free 500 kg bases meet head-on. After the impact the
 * stronger pushes the weaker back with the weaker's force, 20 N, and the bases stay. The solve's
 * revisions of the motors flipped between taking part and holding their bounds, and the step
 * ended with both taking part at up to 1e4 times their force: the contact carried 1962 N (the
 * bases' floor friction), the bases were kicked to 0.26 m/s and driven along the floor, and the
 * motors' work took it all (a new user's trial, session 45). Cases: dt 1 ms and 5 ms. */
START_TEST(test_slider_motors_clash)
{
    const double dt = _i ? 0.005 : 0.001;
    fr_scene *s = load_dt("tests/physics/scenes/slider-clash.yaml", dt);
    fr_world *w = fr_scene_world(s);
    double off = 0.0, vbase = 0.0;
    for (long i = 0; i < lround(1.0 / dt); i++) {
        ck_assert_int_eq(fr_world_step(w), FR_OK);
        const char *bases[] = {"baseA", "baseB"};
        for (int k = 0; k < 2; k++) {
            fr_vec3 v, om;
            fr_body_get_velocity(w, body(w, bases[k]), &v, &om);
            vbase = fmax(vbase, fr_v3_norm(v));
        }
        /* (from 0.85 s pusher A meets base B, which then carries the rest of its force) */
        if ((double)(i + 1) * dt < 0.5 || (double)(i + 1) * dt > 0.8) continue;
        const fr_vec3 f = fr_world_contact_force(w, body(w, "pA"), body(w, "pB"));
        off = fmax(off, fabs(fabs(f.x) - 20.0));
    }
    printf(
        "# slider motors clashing, dt %g: pusher force off 20 N by %.3g N at most over 0.5–0.8 s, "
        "bases at %.3g m/s at most\n",
        dt, off, vbase);
    /* (measured: the force to 1.2e-10 N at 1 ms and 2.1e-9 N at 5 ms; the bases at 8e-5 and
     * 3.5e-4 m/s, the impact's) */
    ck_assert_msg(off < 1e-9 * 20.0, "pusher force off by %g N", off);
    ck_assert_msg(vbase < 1e-3, "bases moved at %g m/s", vbase);
    fr_scene_destroy(s);
}
END_TEST

static Suite *physics_suite(void)
{
    Suite *s = suite_create("physics");
    TCase *tc = tcase_create("contact");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_rest_depth);
    tcase_add_test(tc, test_column_stands);
    tcase_add_test(tc, test_slope_holds);
    tcase_add_test(tc, test_stick_slip);
    tcase_add_test(tc, test_collision_conserves_momentum);
    tcase_add_test(tc, test_drop_no_rebound_above);
    tcase_add_test(tc, test_wedge_energy_never_rises);
    tcase_add_test(tc, test_thin_bodies_land);
    tcase_add_test(tc, test_coin_on_coin);
    tcase_add_test(tc, test_edge_landing_no_rebound);
    tcase_add_test(tc, test_late_landings_keep_applied_work);
    tcase_add_test(tc, test_hinged_slab_lands);
    tcase_add_test(tc, test_heavy_box_on_light_box);
    tcase_add_test(tc, test_frictionless_column_stays);
    tcase_add_test(tc, test_touching_start_no_impact);
    tcase_add_test(tc, test_settle_holds_the_rest);
    tcase_add_test(tc, test_settle_pushes_out_an_overlap);
    tcase_add_test(tc, test_placement_energy);
    tcase_add_test(tc, test_settle_says_when_it_ran_out);
    tcase_add_test(tc, test_settle_gives_up_far_from_equilibrium);
    tcase_add_test(tc, test_settle_gives_up_pushes_out);
    tcase_add_test(tc, test_settle_pushes_out_first);
    tcase_add_test(tc, test_settle_names_overload);
    tcase_add_test(tc, test_settle_notes_name_the_cause);
    tcase_add_test(tc, test_settle_soft_materials);
    tcase_add_test(tc, test_settle_soft_tilted);
    tcase_add_test(tc, test_settle_soft_pushed_out);
    tcase_add_test(tc, test_ball_rolls_freely);
    tcase_add_test(tc, test_curved_bodies_rest);
    tcase_add_test(tc, test_ball_pyramid_rests);
    tcase_add_test(tc, test_settle_soft_gives_up);
    tcase_add_test(tc, test_delta_scene);
    tcase_add_test(tc, test_walking_robot_energy);
    tcase_add_loop_test(tc, test_jointed_in_contact, 0, 4);
    tcase_add_loop_test(tc, test_wheels_roll, 0, 8);
    tcase_add_loop_test(tc, test_slider_motor_presses, 0, 2);
    tcase_add_loop_test(tc, test_slider_motors_clash, 0, 2);
    tcase_add_loop_test(tc, test_ball_set_rolling, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(physics_suite)
