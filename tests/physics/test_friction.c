/*
 * Friction and contact against analytic mechanics, started from the scenes' touching convention
 * at dt 1 and 5 ms (issue 8): a slide stops at v²/(2μg) and stays at rest, slopes hold at
 * μ = tan θ + 0.005 (and at tan θ exactly), a block tips at tan θ = w/h without gaining energy
 * when it lands, the stick-slip rig follows the piecewise exact solution, the seed paper's column
 * of 100 and 200 jittered blocks stands at 5 ms, and pairs of dissimilar materials and masses
 * follow the combining rule (fr_contact_params_combine). Suite 'physics' only: ~1 min in a
 * release build, far longer under the sanitizers.
 */
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_util.h"

static void step(fr_world *w)
{
    step_n(w, 1);
}

static const double DTS[2] = {0.001, 0.005};

/* The slope scene tilted by th (gravity turned, the ground level) with the block w × d × h (m)
 * standing on it turned by yaw about the normal, at dt, μ = 1.5 (it cannot slide: it tips) */
static fr_scene *tipping_block(double dt, double th, double w, double d, double h, double yaw)
{
    const double g = 9.81;
    const char *sets[] = {setf("world.dt=%g", dt),
                          setf("world.gravity=[%.17g, 0, %.17g]", g * sin(th), -g * cos(th)),
                          "materials.0.mu_s=1.5",
                          "materials.0.mu_k=1.5",
                          "materials.1.mu_s=1.5",
                          "materials.1.mu_k=1.5",
                          setf("bodies.block.shapes.0.size=[%g, %g, %g]", w, d, h),
                          setf("bodies.block.position=[0, 0, %.17g]", h / 2),
                          setf("bodies.block.rpy=[0, 0, %.17g]", yaw)};
    return load("config/scenes/slope.yaml", sets, 9);
}

/* The --set values of slope.yaml turned into flat ground (gravity along −z) at step dt, both
 * materials at μ_s, μ_k; returns how many were written (6). */
static int flat_ground(const char **sets, double dt, double mu_s, double mu_k)
{
    sets[0] = setf("world.dt=%g", dt);
    sets[1] = "world.gravity=[0, 0, -9.81]";
    sets[2] = setf("materials.0.mu_s=%.17g", mu_s);
    sets[3] = setf("materials.0.mu_k=%.17g", mu_k);
    sets[4] = setf("materials.1.mu_s=%.17g", mu_s);
    sets[5] = setf("materials.1.mu_k=%.17g", mu_k);
    return 6;
}

/* The slope scene with `sets` (flat_ground's and the block's), its world, the block and where it
 * starts */
static fr_scene *slide_scene(const char **sets, int ns, fr_world **w, fr_body_id *b, fr_pose *p0)
{
    fr_scene *s = load("config/scenes/slope.yaml", sets, ns);
    *w = fr_scene_world(s);
    *b = body(*w, "block");
    fr_body_get_pose(*w, *b, p0);
    return s;
}

/* The block as a box of size sz touching the ground, turned by yaw and launched at v0 along the
 * ground's direction dir (rad): four more sets after the first ns; returns their count */
static int box_launch(const char **sets, int ns, const double sz[3], double yaw, double dir,
                      double v0)
{
    sets[ns++] = setf("bodies.block.shapes.0.size=[%g, %g, %g]", sz[0], sz[1], sz[2]);
    sets[ns++] = setf("bodies.block.position=[0, 0, %.17g]", sz[2] / 2);
    sets[ns++] = setf("bodies.block.rpy=[0, 0, %.17g]", yaw);
    sets[ns++] = setf("bodies.block.velocity=[%.17g, %.17g, 0]", v0 * cos(dir), v0 * sin(dir));
    return ns;
}

/* A slab (0.5 × 0.5 × 0.1 m, 1 kg) given v0 along the ground from a touching start slides
 * under μ_k·m·g. The step integrates v ← v − μg·h, x ← x + v·h, so it stops after
 * v0²/(2μg) − v0·h/2 + O(μg·h²) (the last step's remainder): that is the prediction, to the
 * rest depth's settling and the solve's tolerance. Then it is at rest: no friction chatter. */
START_TEST(test_slide_stops)
{
    const double mus[] = {0.1, 0.5, 1.0, 1.5}, g = 9.81;
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < 16; m++) {
            /* fast slides, and slow ones that last a few steps (at 5 ms and μ 1.5 one); μ_s
             * above μ_k in odd cases (it holds the block where it stops); settled and, from the
             * touching placement itself, unsettled starts */
            const double dt = DTS[k], mu = mus[m % 4], v0 = m % 8 < 4 ? 1.0 + 2.0 * mu : 0.05;
            const double mu_s = m % 2 ? 1.3 * mu : mu;
            const char *sets[10];
            int ns = flat_ground(sets, dt, mu_s, mu);
            sets[ns++] = "bodies.block.shapes.0.size=[0.5, 0.5, 0.1]";
            sets[ns++] = "bodies.block.position=[-10, 0, 0.05]";
            sets[ns++] = setf("bodies.block.velocity=[%.17g, 0, 0]", v0);
            sets[ns++] = m < 8 ? "world.settle=true" : "world.settle=false";
            fr_world *w;
            fr_body_id b;
            fr_pose p0, p;
            fr_scene *s = slide_scene(sets, ns, &w, &b, &p0);
            const double d_pred = v0 * v0 / (2 * mu * g);
            const double t_stop = v0 / (mu * g);
            /* (a slide that stops inside its first step rocks the block on its base and rings
             * its bond: down about 40 times a step, below 1e-5 m/s two steps after that) */
            long n_stop = (long)(t_stop / dt) + 4, n = n_stop + (long)(1.0 / dt);
            double vmax_after = 0;
            for (long i = 0; i < n; i++) {
                step(w);
                fr_vec3 v, av;
                fr_body_get_velocity(w, b, &v, &av);
                if (i >= n_stop)
                    vmax_after = fmax(vmax_after, fmax(fr_v3_norm(v), 0.25 * fr_v3_norm(av)));
            }
            fr_body_get_pose(w, b, &p);
            double d = p.p.x - p0.p.x;
            /* the slide's steps are exact for its constant deceleration (integrate.c); what is
             * left is the bond's elastic give where it stops, μ·m·g/k_f: 0.0055·μ·g·h² measured */
            ck_assert_msg(fabs(d - d_pred) <= 0.01 * mu * g * dt * dt + 1e-9 * d_pred,
                          "dt %g mu %g v0 %g case %d: slid %.9g m, predicted %.9g m (%.3g %%)", dt,
                          mu, v0, m, d, d_pred, 100 * (d - d_pred) / d_pred);
            ck_assert_msg(fabs(p.p.y - p0.p.y) < 1e-9, "dt %g mu %g: sideways %g m", dt, mu,
                          p.p.y - p0.p.y);
            ck_assert_msg(vmax_after < 1e-5, "dt %g mu %g case %d: after the stop |v| up to %g m/s",
                          dt, mu, m, vmax_after);
            fr_scene_destroy(s);
        }
}
END_TEST

/* Boxes whose friction's moment moves their centre of pressure far out, μ·h/w up to 0.88 (the
 * centre of pressure at μ·h/2 from the middle: 0.88 of the way to the front edge), launched
 * slowly (a slide of 2 to 6 steps at 5 ms) along their sides, along a diagonal of the ground with
 * the box turned, and towards a corner, from a touching start: each stops within 2 % of
 * v0²/(2μg) and is then at rest. The error is the box's pitch taking the load forward in the
 * first steps (it presses less, then more): measured up to 1.5 % at 5 ms, 0.25 % at 1 ms. A
 * slide across the quadrature's axes once met a diamond of points holding the centre of pressure
 * to 0.66 of the way to a corner: the box pitched onto its edge in its first step, pressed 1.4
 * times its weight and stopped short, by 99.8 % for a 0.34 × 0.34 × 0.2 m box at μ 1.5 (a new
 * user's trial; docs/contact.md §5, "A slide's axis"). */
START_TEST(test_slide_stops_any_direction)
{
    static const struct {
        double size[3], mu;
    } boxes[] = {{{0.34, 0.34, 0.2}, 1.5},
                 {{0.1, 0.1, 0.15}, 0.5},
                 {{0.1, 0.1, 0.1}, 0.8},
                 {{0.3, 0.15, 0.1}, 0.6}};
    /* the box's yaw and the launch's direction on the ground */
    static const double launch[3][2] = {{0.0, 0.0}, {0.3, M_PI / 4}, {M_PI / 4, 0.0}};
    const double g = 9.81;
    double worst = 0.0;
    for (size_t bx = 0; bx < sizeof boxes / sizeof boxes[0]; bx++)
        for (int l = 0; l < 3; l++)
            for (int k = 0; k < 4; k++) {
                const double dt = DTS[k % 2], v0 = k < 2 ? 0.1 : 0.3, mu = boxes[bx].mu;
                const double *sz = boxes[bx].size, dir = launch[l][1];
                const char *sets[12];
                int ns = flat_ground(sets, dt, mu, mu);
                ns = box_launch(sets, ns, sz, launch[l][0], dir, v0);
                fr_world *w;
                fr_body_id b;
                fr_pose p0, p;
                fr_scene *s = slide_scene(sets, ns, &w, &b, &p0);
                const double d_pred = v0 * v0 / (2 * mu * g);
                const long n_stop = (long)(v0 / (mu * g) / dt) + 4, n = n_stop + (long)(0.3 / dt);
                double vmax_after = 0;
                for (long i = 0; i < n; i++) {
                    step(w);
                    fr_vec3 v, av;
                    fr_body_get_velocity(w, b, &v, &av);
                    if (i >= n_stop) vmax_after = fmax(vmax_after, fr_v3_norm(v));
                }
                fr_body_get_pose(w, b, &p);
                const double d = hypot(p.p.x - p0.p.x, p.p.y - p0.p.y), err = d / d_pred - 1;
                worst = fmax(worst, fabs(err));
                ck_assert_msg(fabs(err) <= 0.02,
                              "%g x %g x %g m, mu %g, yaw %g, along %g rad, v0 %g, dt %g: slid "
                              "%.6g m of %.6g (%+.2f %%)",
                              sz[0], sz[1], sz[2], mu, launch[l][0], dir, v0, dt, d, d_pred,
                              100 * err);
                ck_assert_msg(vmax_after < 1e-5, "%g x %g x %g m, dt %g: after the stop |v| %g",
                              sz[0], sz[1], sz[2], dt, vmax_after);
                fr_scene_destroy(s);
            }
    printf("# slides any way round, mu h/w up to 0.88: worst %.3g %%\n", 100 * worst);
}
END_TEST

/* Boxes at μ_k·h/w 0.8–0.88 (μ_s 0.2 above) slid to a stop, from a touching start, any way round:
 * no step's energy less work rises by more than GAIN of m·g·s (s the box's largest side). The
 * friction's moment pitches a box forward while it slides, so its rear edge lifts by
 * micrometres; where it stops, the box rocks back onto that edge. It starts that step nearly
 * still, so its start velocity's reach saw no motion: its model was advanced without band points
 * and the edge landed unseen, found the next step 10 stiffening depths deep. A 0.3 × 0.3 ×
 * 0.15 m box at 5 ms rose by 4.1e-4 of m·g·s in that step (8.2 mJ), a 2 cm one at 1 ms by
 * 9.5e-5; a new user's 648 slides at each step rose above 1e-6 in 43 runs at 5 ms and 7 at
 * 1 ms. The contacts' reach now counts how much the last step changed the bodies' velocities
 * (docs/contact.md §5, "Band points"). Measured worst: see the printed line. */
START_TEST(test_slide_stop_never_gains)
{
    static const struct {
        double size[3], mass, muh_w;
    } boxes[] = {{{0.3, 0.3, 0.15}, 6.75, 0.8},
                 {{0.02, 0.02, 0.01}, 0.002, 0.88},
                 {{2.0, 2.0, 1.0}, 2000.0, 0.8}};
    /* the box's yaw and the launch's direction on the ground */
    static const double launch[6][2] = {{1.1, 1.4},    {1.1, 3.1},    {0.3, 1.3},
                                        {0.3, 1.0854}, {0.3, 1.8708}, {1.1, 1.1}};
    const double g = 9.81, GAIN = 1e-12;
    double worst = 0.0;
    for (size_t bx = 0; bx < sizeof boxes / sizeof boxes[0]; bx++)
        for (int l = 0; l < 6; l++)
            for (int k = 0; k < 4; k++) {
                const double *sz = boxes[bx].size, dt = DTS[k % 2], v0 = k < 2 ? 0.15 : 0.5;
                const double mu = boxes[bx].muh_w * fmin(sz[0], sz[1]) / sz[2];
                const double dir = launch[l][1], scale = boxes[bx].mass * g * sz[0];
                const char *sets[12];
                int ns = flat_ground(sets, dt, mu + 0.2, mu);
                sets[ns++] = setf("bodies.block.mass=%g", boxes[bx].mass);
                ns = box_launch(sets, ns, sz, launch[l][0], dir, v0);
                fr_world *w;
                fr_body_id b;
                fr_pose p0;
                fr_scene *s = slide_scene(sets, ns, &w, &b, &p0);
                const double rise = worst_rise(w, v0 / (mu * g) + 0.3) / scale;
                worst = fmax(worst, rise);
                ck_assert_msg(rise <= GAIN,
                              "%g x %g x %g m, mu_k %g, yaw %g, along %g rad, v0 %g, dt %g: rose "
                              "%.3g of m g s in a step",
                              sz[0], sz[1], sz[2], mu, launch[l][0], dir, v0, dt, rise);
                fr_scene_destroy(s);
            }
    printf("# slides to a stop, mu h/w 0.8-0.88: worst one-step rise %.3g of m g s\n", worst);
}
END_TEST

START_TEST(test_slope_slides)
{
    /* from rest, μ_s below tan θ (it breaks away in its first step) and μ_k below that: the
     * block slides at a = g·(sin θ − μ_k·cos θ), and along the slide its position follows the
     * steps' mean velocities, exact for that constant acceleration (integrate.c) */
    const double g = 9.81, th = M_PI / 6, mus[2][2] = {{0.56, 0.56}, {0.5, 0.3}};
    for (int k = 0; k < 4; k++) {
        const double dt = k < 2 ? 0.001 : 0.005, mu_s = mus[k % 2][0], mu_k = mus[k % 2][1];
        const char *sets[] = {setf("world.dt=%g", dt), setf("materials.0.mu_s=%.17g", mu_s),
                              setf("materials.0.mu_k=%.17g", mu_k),
                              setf("materials.1.mu_s=%.17g", mu_s),
                              setf("materials.1.mu_k=%.17g", mu_k)};
        fr_scene *s = load("config/scenes/slope.yaml", sets, 5);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "block");
        step_n(w, (long)(0.5 / dt + 0.5));
        fr_vec3 v0, v1;
        fr_pose p0, p1;
        fr_body_get_velocity(w, b, &v0, NULL);
        fr_body_get_pose(w, b, &p0);
        const double T = 2.0;
        step_n(w, (long)(T / dt + 0.5));
        fr_body_get_velocity(w, b, &v1, NULL);
        fr_body_get_pose(w, b, &p1);
        const double a = (v1.x - v0.x) / T, a_pred = g * (sin(th) - mu_k * cos(th));
        const double d = p1.p.x - p0.p.x, d_pred = v0.x * T + 0.5 * a_pred * T * T;
        ck_assert_rel(a, a_pred, 1e-9, 0);
        ck_assert_rel(d, d_pred, 1e-9, 0);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A block carried on a block that slides (tests/physics/scenes/carried.yaml): launched together at
 * v0, the lower one slides on the ground under μ 0.3 and the upper one rides on it (held by μ 1);
 * both stop at v0²/(2·μ·g). The pair stuck to each other slides as one (integrate.c): they
 * stopped v0·h/2 short, the symplectic step's error. What is left is the two bonds' elastic give,
 * up to 0.0096·μ·g·h² measured. */
START_TEST(test_carried_block_slides)
{
    const double g = 9.81, mu = 0.3;
    for (int k = 0; k < 2; k++) {
        const double dt = DTS[k], v0 = k ? 1.0 : 2.0;
        const char *sets[] = {setf("world.dt=%g", dt),
                              setf("bodies.low.velocity=[%.17g, 0, 0]", v0),
                              setf("bodies.top.velocity=[%.17g, 0, 0]", v0)};
        fr_scene *s = load("tests/physics/scenes/carried.yaml", sets, 3);
        fr_world *w = fr_scene_world(s);
        fr_body_id lo = body(w, "low"), tp = body(w, "top");
        fr_pose l0, t0, l1, t1;
        fr_body_get_pose(w, lo, &l0);
        fr_body_get_pose(w, tp, &t0);
        step_n(w, (long)((v0 / (mu * g) + 0.5) / dt));
        fr_body_get_pose(w, lo, &l1);
        fr_body_get_pose(w, tp, &t1);
        const double d_pred = v0 * v0 / (2 * mu * g), tol = 0.02 * mu * g * dt * dt;
        ck_assert_msg(fabs(l1.p.x - l0.p.x - d_pred) <= tol,
                      "dt %g: the lower block slid %.9g m of %.9g", dt, l1.p.x - l0.p.x, d_pred);
        ck_assert_msg(fabs(t1.p.x - t0.p.x - d_pred) <= tol,
                      "dt %g: the upper block rode %.9g m of %.9g", dt, t1.p.x - t0.p.x, d_pred);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A box that lands with a sideways speed slides under μ_k from touchdown (a contact whose bodies
 * move across each other when it is first loaded starts sliding): with μ_s far above μ_k it was
 * held by μ_s at touchdown and stopped 30 % short. Inelastic landing at v_z = √(2·g·drop): the
 * impact's friction μ_k·m·v_z takes the sideways speed to v_t − μ_k·v_z, then it slides
 * (v_t − μ_k·v_z)²/(2·μ_k·g) after the fall's v_t·√(2·drop/g). */
START_TEST(test_landing_slides)
{
    const double g = 9.81, drop = 0.02, vx = 0.24, vy = 0.18, mu_k = 0.2, mu_s = 1.0;
    for (int k = 0; k < 2; k++) {
        const double dt = DTS[k], vt = hypot(vx, vy), vz = sqrt(2 * g * drop);
        const char *sets[10];
        int ns = flat_ground(sets, dt, mu_s, mu_k);
        sets[ns++] = "bodies.block.shapes.0.size=[0.1, 0.15, 0.04]";
        sets[ns++] = "bodies.block.mass=0.3";
        sets[ns++] = setf("bodies.block.position=[-10, 0, %.17g]", 0.02 + drop);
        sets[ns++] = setf("bodies.block.velocity=[%.17g, %.17g, 0]", vx, vy);
        fr_scene *s = load("config/scenes/slope.yaml", sets, ns);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "block");
        fr_pose p0, p;
        fr_body_get_pose(w, b, &p0);
        step_n(w, (long)(0.6 / dt));
        fr_body_get_pose(w, b, &p);
        const double d = hypot(p.p.x - p0.p.x, p.p.y - p0.p.y), v1 = vt - mu_k * vz;
        const double d_pred = vt * sqrt(2 * drop / g) + v1 * v1 / (2 * mu_k * g);
        /* the fall lands within a step of its time (the symplectic step falls ahead) and the
         * impact's steps move by their end velocities: v_t·h + μ_k·v_z·h */
        ck_assert_msg(fabs(d - d_pred) <= (vt + mu_k * vz) * dt,
                      "dt %g: slid %.6g m, predicted %.6g m", dt, d, d_pred);
        fr_scene_destroy(s);
    }
}
END_TEST

/* A square slab (side a) spinning on flat ground: the spin friction μ_k·N·r̄ (r̄ the mean distance
 * of a square's points from its centre, a·(√2 + ln(1 + √2))/6) stops it at α = μ_k·m·g·r̄/I after
 * turning ω0²/(2α): its turn follows the steps' mean spin (integrate.c), as a slide's path
 * follows their mean velocity (it fell ω0·h/2 short: 3.7 % at 5 ms). */
START_TEST(test_spin_down)
{
    const double g = 9.81, a = 1.0, m = 1.0, mu_k = 0.4, mu_s = 0.6;
    const double I = m * a * a / 6, rbar = a * (sqrt(2) + log(1 + sqrt(2))) / 6;
    const double alpha = mu_k * m * g * rbar / I;
    for (int k = 0; k < 4; k++) {
        const double dt = DTS[k % 2], w0 = k < 2 ? 4.0 : 0.5;
        const char *sets[9];
        int ns = flat_ground(sets, dt, mu_s, mu_k);
        sets[ns++] = "bodies.block.shapes.0.size=[1, 1, 0.2]";
        sets[ns++] = "bodies.block.position=[-10, 0, 0.1]";
        sets[ns++] = setf("bodies.block.angular_velocity=[0, 0, %.17g]", w0);
        fr_world *w;
        fr_body_id b;
        fr_pose p0;
        fr_scene *s = slide_scene(sets, ns, &w, &b, &p0);
        const double t_stop = w0 / alpha, turn = w0 * w0 / (2 * alpha);
        const long n = (long)((t_stop + 0.5) / dt);
        double wmax_after = 0.0;
        for (long i = 0; i < n; i++) {
            step(w);
            fr_vec3 av;
            fr_body_get_velocity(w, b, NULL, &av);
            if ((i + 1) * dt > t_stop + 4 * dt) wmax_after = fmax(wmax_after, fr_v3_norm(av));
        }
        fr_pose p;
        fr_body_get_pose(w, b, &p);
        const double yaw = 2 * atan2(p.q.z, p.q.w);
        /* what is left is the bond's angular give where it stops and its last step: up to
         * 0.07·α·h² measured */
        ck_assert_msg(fabs(yaw - turn) <= 0.15 * alpha * dt * dt + 1e-9 * turn,
                      "dt %g w0 %g: turned %.9g rad, predicted %.9g", dt, w0, yaw, turn);
        ck_assert_msg(wmax_after < 1e-4, "dt %g w0 %g: after the stop |w| up to %g rad/s", dt, w0,
                      wmax_after);
        fr_scene_destroy(s);
    }
}
END_TEST

/* Slope of angle θ (tilted gravity, slope.yaml) with block shape `size`, turned by `yaw` (rad)
 * about the slope's normal, at rest, touching: returns the largest distance from its position at
 * t = 1 s over the following 9 s. */
static double slope_creep_m(double theta, double mu_s, double mu_k, const double size[3],
                            double yaw, double mass, double dt, int substeps, int *took)
{
    const double g = 9.81;
    const char *sets[] = {
        setf("world.dt=%g", dt),
        setf("world.substeps=%d", substeps),
        setf("world.gravity=[%.17g, 0, %.17g]", g * sin(theta), -g * cos(theta)),
        setf("materials.0.mu_s=%.17g", mu_s),
        setf("materials.0.mu_k=%.17g", mu_k),
        setf("materials.1.mu_s=%.17g", mu_s),
        setf("materials.1.mu_k=%.17g", mu_k),
        setf("bodies.block.shapes.0.size=[%.17g, %.17g, %.17g]", size[0], size[1], size[2]),
        setf("bodies.block.position=[0, 0, %.17g]", size[2] / 2),
        setf("bodies.block.rpy=[0, 0, %.17g]", yaw),
        setf("bodies.block.mass=%.17g", mass)}; /* (the scene's 1 kg where mass <= 0) */
    fr_scene *s = load("config/scenes/slope.yaml", sets, mass > 0.0 ? 11 : 10);
    fr_world *w = fr_scene_world(s);
    fr_body_id b = body(w, "block");
    if (took) *took = fr_world_substeps(w, NULL);
    long n1 = (long)(1.0 / dt + 0.5), n = (long)(10.0 / dt + 0.5);
    fr_pose p1 = {0}, p;
    double worst = 0;
    for (long i = 0; i < n; i++) {
        step(w);
        if (i + 1 == n1) fr_body_get_pose(w, b, &p1);
        if (i + 1 > n1) {
            fr_body_get_pose(w, b, &p);
            worst = fmax(worst, hypot(p.p.x - p1.p.x, p.p.y - p1.p.y));
        }
    }
    fr_scene_destroy(s);
    return worst;
}

/* the same with the scene's mass (1 kg) */
static double slope_creep_n(double theta, double mu_s, double mu_k, const double size[3],
                            double yaw, double dt, int substeps, int *took)
{
    return slope_creep_m(theta, mu_s, mu_k, size, yaw, 0.0, dt, substeps, took);
}

/* the same with the substeps the bodies ask for (world.substeps 0) */
static double slope_creep(double theta, double mu_s, double mu_k, const double size[3], double yaw,
                          double dt)
{
    return slope_creep_n(theta, mu_s, mu_k, size, yaw, dt, 0, NULL);
}

/* Every slope case (5°, 20°, 35° and 40°; a 0.5 m cube, the cube turned 0.5 rad about the slope's
 * normal, a lying slab, a 1 cm cube and that cube turned 0.4 rad; dt 1 and 5 ms) with μ_s = tan θ +
 * ds and μ_k = tan θ·fk + dk: after the first second the block moves less than 1 nm in 9 s (the
 * issue asks for 1 µm; a held bond moves only by its anchor's elastic creep under the solve's
 * rounding: at most 1.2e-10 m measured). At 40° the cube's uphill side lifts (its centre of
 * pressure is 0.84 of the way to the downhill edge). Each of these once set the cube at μ = tan θ
 * exactly sliding, for good (μ_k = tan θ): a square's quadrature turned by rounding at each rebuild
 * (1 µm in 10 s, growing with t²), friction acting at the volume centroid instead of the centre of
 * pressure (the turned cube: 1.5 mm in 20 s), a lifting block's patch advanced as a slab (40°: 22
 * µm in 20 s), and for the 1 cm cube at 5 ms (a new user's trial, 2026-11-30): a nearly square
 * patch whose axes flipped between its principal ones and the reference at each step (20°,
 * turned: 19.5 mm), and the quadrature's outer points kept near the edges on a tilted patch, whose
 * turn with the cube moved the friction point sideways more than a step's yaw could follow (a
 * period-2 yaw growing 8-fold a step; 33°, μ = tan θ + 0.005: 2.3 mm in 10 s). At 5° the friction
 * limit is small against the force noise of a solve at its velocity tolerance: a cube there with
 * μ_k = μ_s/2 broke away at 1 ms and slid 15 m until a bond slipping within that noise was solved
 * again as held (solve.c, FRI_HOLD_SPEED). */
static void slope_holds_everywhere(double ds, double fk, double dk)
{
    const double angles[] = {5, 20, 35, 40};
    const double shapes[5][3] = {
        {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.8, 0.6, 0.1}, {0.01, 0.01, 0.01}, {0.01, 0.01, 0.01}};
    const double yaws[5] = {0.0, 0.5, 0.0, 0.0, 0.4};
    for (int a = 0; a < 4; a++)
        for (int sh = 0; sh < 5; sh++)
            for (int k = 0; k < 2; k++) {
                double th = angles[a] * M_PI / 180, t = tan(th);
                double c = slope_creep(th, t + ds, t * fk + dk, shapes[sh], yaws[sh], DTS[k]);
                ck_assert_msg(c < 1e-9,
                              "%g deg, shape %d, dt %g, mu_s tan%+g, mu_k %g tan%+g: "
                              "crept %g m",
                              angles[a], sh, DTS[k], ds, fk, dk, c);
            }
}

/* μ_s = μ_k = tan θ + 0.005; and μ_s above tan θ with μ_k well below it: static friction holds
 * from rest. */
START_TEST(test_slope_no_creep)
{
    slope_holds_everywhere(0.005, 1.0, 0.005);
    slope_holds_everywhere(0.005, 0.5, 0.0);
}
END_TEST

/* μ_s = tan θ exactly: static friction is an inequality, the block must hold, with μ_k = μ_s and
 * with μ_k = μ_s/2 (where a bond that broke away would slide off: at the stick slack 1e-6 the
 * noise of a sticking bond at its limit, up to 7e-6 of μ·N, broke it within 20–70 ms at 1 ms). */
START_TEST(test_slope_exact_limit)
{
    slope_holds_everywhere(0.0, 1.0, 0.0);
    slope_holds_everywhere(0.0, 0.5, 0.0);
}
END_TEST

/* A body on the slope at its friction limit (μ_s = μ_k = tan θ + dmu) at 5 ms */
typedef struct slope_body {
    double size[3], yaw, deg, dmu;
} slope_body;

/* Each of the bodies creeps by less than `bound` over 9 s after the first second, at a tick of
 * 5 ms in `substeps` steps (0: as many as the bodies ask for, which must then be more than one);
 * returns the largest creep */
static double bodies_hold(const slope_body *cases, size_t n, double bound, int substeps)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double th = cases[i].deg * M_PI / 180, mu = tan(th) + cases[i].dmu;
        int took;
        const double c =
            slope_creep_n(th, mu, mu, cases[i].size, cases[i].yaw, 0.005, substeps, &took);
        if (substeps == 0) ck_assert_int_gt(took, 1);
        ck_assert_msg(c < bound, "case %zu (%g x %g x %g m, yaw %g, %g deg): crept %g m", i,
                      cases[i].size[0], cases[i].size[1], cases[i].size[2], cases[i].yaw,
                      cases[i].deg, c);
        worst = fmax(worst, c);
    }
    return worst;
}

/* Small bodies and bricks at their friction limit at 5 ms (taken in one step, world.substeps 1:
 * the model at a step coarser than these bodies ask for), the cases a new user's trial found
 * creeping (2026-11-30, on the 5-point quadrature with its points on the principal axes): each
 * holds to 1 nm over 9 s after the first second (measured below 1e-10 m). Seven of the nine moved
 * by 0.1 mm to 0.22 m: a lifted square's principal axes, or a lifted brick's slope, turned far
 * faster than the body's yaw at each build, the friction point (fixed over the step) jumped
 * sideways with them, and a period-2 yaw grew (3.9-fold a step for the 7.2 mm cube) until the
 * bond's spin took the friction budget; or that rocking made the settle give up. The quadrature's
 * first axis is now kept while it stays near the rule (docs/contact.md §5). */
START_TEST(test_small_bodies_hold)
{
    static const slope_body cases[] = {
        {{0.003, 0.003, 0.003}, 0.1, 36.0, 0.005},
        {{0.015, 0.015, 0.015}, 0.0, 29.14, 0.0},
        {{0.015, 0.015, 0.015}, 0.0, 29.14, 0.005},
        {{0.0072, 0.0072, 0.0072}, 0.0, 31.8, 0.0},
        {{0.0035, 0.0035, 0.0035}, 0.24, 37.4, 0.0},
        {{0.01, 0.01, 0.01}, 0.0, 33.0, 0.005},
        {{0.2, 0.1, 0.1}, 0.0, 55.0, 0.0},
        {{0.04, 0.02, 0.02}, 0.0, 57.0, 0.0},
        {{0.003, 0.003, 0.0006}, 0.0, 67.63, 0.0},
        /* two bricks of a random sweep that the first axis down the thickness' slope alone let
         * creep by 89 mm and 3 mm (that slope swung with the brick's roll) */
        {{0.00433606, 0.00216803, 0.00216803}, 0.0, 44.49, 0.0},
        {{0.00474096, 0.00237048, 0.00237048}, 0.0, 47.5, 0.005},
    };
    printf("# small bodies: worst creep %g m\n",
           bodies_hold(cases, sizeof cases / sizeof cases[0], 1e-9, 1));
}
END_TEST

/* Small bodies whose settle gave up at 5 ms (one step a tick, as above; docs/contact.md §8,
 * "Small bodies at their friction limit"): each rocked in a growing period 2 on its lifted patch,
 * turned past the settle's limit, and started from the touching placement, whose first steps'
 * rocking broke the bond; they slid 9.5 cm to 312 m in 10 s. With the geometry's tangent
 * (docs/contact.md §5) each settles and holds as the bodies above do, to 1 nm over 9 s after the
 * first second (measured at most 1.7e-10 m). */
START_TEST(test_rocking_bodies_hold)
{
    static const slope_body cases[] = {
        {{0.003, 0.003, 0.003}, 0.3517, 43.40, 0.0},
        {{0.003, 0.003, 0.003}, 1.1, 43.5, 0.0},
        {{0.00328761, 0.00328761, 0.00657522}, 0.2763, 25.06, 0.0},
        {{0.00696071, 0.00696071, 0.0139214}, 0.3415, 25.92, 0.0},
        {{0.00877368, 0.00438684, 0.00438684}, 0.6799, 53.07, 0.005},
    };
    printf("# rocking bodies: worst creep %g m\n",
           bodies_hold(cases, sizeof cases / sizeof cases[0], 1e-9, 1));
}
END_TEST

/* The three bodies of the 3280-body creep sweep (docs/contact.md §8) that still moved more than
 * 1 µm at a 5 ms step taken whole (0.11 m, 50 mm and 268 m in 10 s, each after a settle that gave
 * up: 3.9, 7.5 and 2.4 mm wide, whose rocking the step could not resolve): at a 5 ms tick in the
 * substeps they ask for (docs/world.md, "Substeps"; 3, 2 and 4) each holds to 1 nm over 9 s
 * after the first second, as the bodies above (measured below 1e-10 m). */
START_TEST(test_substepped_bodies_hold)
{
    static const slope_body cases[] = {
        {{0.00783853, 0.00391926, 0.00391926}, 0.4436, 57.53, 0.0},
        {{0.0149678, 0.0074839, 0.0074839}, 0.0297, 54.34, 0.0},
        {{0.00478017, 0.00239008, 0.00239008}, 0.8606, 47.01, 0.005},
    };
    printf("# substepped bodies: worst creep %g m\n",
           bodies_hold(cases, sizeof cases / sizeof cases[0], 1e-9, 0));
}
END_TEST

/* A sample of the recorded creep sweep (scripts/experiments/contact/r2000.cases: 2000 random
 * cubes, bricks, slabs and tall blocks of 1.6 mm–0.5 m and 2–50 g, up to 0.97 of their tipping
 * slope, yawed or not, μ_s = μ_k = tan θ or tan θ + 0.005, 1 and 5 ms, the substeps they ask for;
 * docs/contact.md §5, "Which axes"), every 20th case: each holds to 1e-8 m over 9 s after the
 * first second (measured over all 2000: at most 2.4e-9 m). The fixed cases above cover what
 * trials found; this samples what they did not choose. (A slab's normal taken as its faces'
 * bisector, tried 2026-11-29, let 329 of the first 815 slide, up to 1.2 m; this test fails at its
 * first case then, as six of the tests above do.) */
START_TEST(test_recorded_sweep_holds)
{
    FILE *f = fopen(frtest_path("scripts/experiments/contact/r2000.cases"), "r");
    ck_assert_ptr_nonnull(f);
    double v[8], worst = 0.0;
    int line = 0, run = 0;
    while (fscanf(f, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &v[6], &v[7]) == 8) {
        if (line++ % 20) continue;
        const double th = v[6] * M_PI / 180, mu = tan(th) + v[7];
        const double c = slope_creep_m(th, mu, mu, v, v[3], v[4], v[5], 0, NULL);
        ck_assert_msg(c < 1e-8,
                      "case line %d (%g x %g x %g m, yaw %g, %g kg, dt %g, %g deg%+g): crept %g m",
                      line, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], c);
        worst = fmax(worst, c);
        run++;
    }
    fclose(f);
    ck_assert_int_eq(run, 100);
    printf("# recorded sweep: %d cases, worst creep %g m\n", run, worst);
}
END_TEST

/* A box carried by a kinematic turntable (config/scenes/turntable.yaml: r = 0.5 m, μ_s = 0.3),
 * started turning with it from the scenes' touching convention: static friction supplies
 * m·ω²·r while ω < ω_max = √(μ_s·g/r). At 0.98·ω_max (96 % of μ_s·N) its distance from the axis
 * changes by less than 0.2 µm at 1 ms and 5 µm at 5 ms over 5 s (measured 57 nm / 1.4 µm, the
 * first step's pick-up of the load), and after the first 0.1 s by less than 1e-11 m (measured
 * 0.55 pm / 0.12 pm: the bond's give under rounding); at 1.02·ω_max it is flung off. The
 * square patch's quadrature turns with the bodies (B's spin reference): on the frame's fixed
 * axes the box turned under its points once a turn, its centre of pressure swung, and it
 * oscillated by ±9.5 nm at 5 ms (by ±14 nm and crept outwards at 0.7 nm/s with the points
 * near the edge). Two bugs once let it creep at 71 % of the limit (4.7 mm in 5 s
 * at 82 %): the solve moved the bond along the table's tangent while the table turned its
 * anchor along an arc, (ω·h)²·r/2 off per step, which the stiff bond took as a pull far beyond
 * μ·N; and settling turned the table under the held box. The probe's slip speed of the stuck box
 * after 0.1 s stays below 0.03·dt² m/s (measured 1.6e-8 at 1 ms, 4.4e-7 at 5 ms: the step's
 * rotation against the chord's, second order); from the points' tangents instead of their moves
 * over the step it read ω²·r·dt/2 (1.4e-3 m/s at 1 ms), a new user's trial. */
static double turntable_drift(double f, double dt, double from, double *slip)
{
    const double r = 0.5, g = 9.81, mu_s = 0.3, W = f * sqrt(mu_s * g / r);
    const char *sets[] = {setf("world.dt=%g", dt),
                          setf("bodies.table.angular_velocity=[0, 0, %.17g]", W),
                          setf("bodies.box.angular_velocity=[0, 0, %.17g]", W),
                          setf("bodies.box.velocity=[0, %.17g, 0]", r * W)};
    fr_scene *s = load("config/scenes/turntable.yaml", sets, 4);
    fr_world *w = fr_scene_world(s);
    fr_body_id b = body(w, "box");
    double r0 = -1, worst = 0;
    for (long i = 0; i <= (long)(5.0 / dt + 0.5); i++) {
        if (i > 0) step(w);
        fr_pose p;
        fr_body_get_pose(w, b, &p);
        double ri = hypot(p.p.x, p.p.y);
        if (r0 < 0 && i * dt >= from - 1e-12) r0 = ri;
        if (r0 >= 0) worst = fmax(worst, fabs(ri - r0));
        double speed;
        if (r0 >= 0 && slip && fr_world_contact_slip(w, b, body(w, "table"), &speed) == 0)
            *slip = fmax(*slip, speed);
    }
    fr_scene_destroy(s);
    return worst;
}

START_TEST(test_turntable_holds)
{
    for (int k = 0; k < 2; k++) {
        const double dt = DTS[k];
        double slip = 0.0;
        double all = turntable_drift(0.98, dt, 0.0, NULL),
               later = turntable_drift(0.98, dt, 0.1, &slip);
        ck_assert_msg(all < (dt < 0.002 ? 2e-7 : 5e-6), "dt %g: held box moved %g m", dt, all);
        ck_assert_msg(later < 1e-11, "dt %g: held box crept %g m after 0.1 s", dt, later);
        printf("# turntable, dt %g: the stuck box's slip speed after 0.1 s at most %.3g m/s\n", dt,
               slip);
        ck_assert_msg(slip < 3e-2 * dt * dt, "dt %g: the stuck box's slip speed %g m/s", dt, slip);
        double off = turntable_drift(1.02, dt, 0.0, NULL);
        ck_assert_msg(off > 0.5, "dt %g: above the limit the box moved only %g m", dt, off);
    }
}
END_TEST

/* A box set down on a conveyor belt (config/scenes/conveyor.yaml, a kinematic belt at V): the
 * belt's friction brings it to V and the belt does work m·V² on the world, exactly (its
 * horizontal impulse is m·V and the belt moves at V; half becomes the box's kinetic energy, half
 * is lost to friction), whatever μ_k and the step. The world's energy less that work rises in a
 * step by no more than the solve's residual G can account for: the box's velocities are the
 * solve's iterate (a body held by the belt is not corrected by M⁻¹·G, docs/world.md), whose
 * energy differs from the impulses' work by |ν·G| ≤ m·s·(r + 1e-9·s), s = |v| + |ω|·r_g, r the
 * step's residual (fr_world_solver_stats: M⁻¹G, the angular part at the radius of gyration r_g,
 * less its rounding floor of 1e-9 of the speed); with 1e-12 of the energy for rounding.
 * The work of kinematic bodies once went uncounted: the run summary said 0 J, and a kinematic
 * paddle hitting a box was stopped as a numerical failure. Settling once let the belt drag the
 * box 1.4 mm and gave up. */
START_TEST(test_conveyor_work)
{
    const double m = 2.0, Vs[2] = {1.0, 2.5}, mus[2] = {0.3, 0.8};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 2; c++) {
            const double dt = DTS[k], V = Vs[c], mu = mus[c];
            const char *sets[] = {
                setf("world.dt=%g", dt), setf("bodies.belt.velocity=[%.17g, 0, 0]", V),
                setf("materials.0.mu_s=%.17g", mu), setf("materials.0.mu_k=%.17g", mu)};
            fr_scene *s = load("config/scenes/conveyor.yaml", sets, 4);
            fr_world *w = fr_scene_world(s);
            fr_body_id b = body(w, "box");
            ck_assert_msg(fr_world_settle_note(w)[0] == '\0', "dt %g V %g: %s", dt, V,
                          fr_world_settle_note(w));
            fr_world_energy e0, e1;
            fr_world_energy_get(w, &e0);
            const double scale = e0.total;
            double mass;
            fr_mat3 I;
            fr_body_get_mass(w, b, &mass, &I);
            const double rg = sqrt((I.m[0][0] + I.m[1][1] + I.m[2][2]) / (2.0 * mass));
            double over = -INFINITY, gain = 0.0, allowed = 0.0;
            const long n = (long)((V / (mu * 9.81) + 0.5) / dt);
            fr_vec3 v, av;
            for (long i = 0; i < n; i++) {
                step(w);
                fr_world_energy_get(w, &e1);
                fr_world_solver_stats st;
                fr_world_solver_stats_get(w, &st);
                fr_body_get_velocity(w, b, &v, &av);
                const double sp = fr_v3_norm(v) + fr_v3_norm(av) * rg;
                const double bound = mass * sp * (st.residual + 1e-9 * sp) + 1e-12 * scale;
                const double g1 = (e1.total - e1.work) - (e0.total - e0.work);
                if (g1 - bound > over) over = g1 - bound, gain = g1, allowed = bound;
                e0 = e1;
            }
            ck_assert_msg(fabs(v.x - V) < 1e-8, "dt %g V %g: box at %.12g m/s", dt, V, v.x);
            ck_assert_msg(fabs(e1.work - m * V * V) < 1e-8 * m * V * V,
                          "dt %g V %g mu %g: the belt did %.12g J, m·V² = %g J", dt, V, mu, e1.work,
                          m * V * V);
            printf("# conveyor dt %g V %g: gain %g allowed %g\n", dt, V, gain, allowed);
            ck_assert_msg(over <= 0.0,
                          "dt %g V %g: energy less work rose %g J in a step (%g J "
                          "allowed by the residual)",
                          dt, V, gain, allowed);
            fr_scene_destroy(s);
        }
}
END_TEST

/* A w × 2w × h block (1 kg) on a slope with μ = 1.5 (it cannot slide) tips once tan θ exceeds
 * w/h: at 0.9 and 0.98·w/h it stands (tilt stays below 1°), at 1.02·w/h it falls over (tilt past
 * 45°);
 * likewise a square-based block turned 45°, a corner downhill, about √2·w/h.
 * Through the fall and its landing the total energy (kinetic, gravity, contact) never rises by
 * more than the per-step error of the implicit step's energy audit. Blocks h = 3w from 1 cm to
 * 0.2 m at dt 1 and 5 ms, squat blocks h = w of 5 mm (1 and 5 ms) and 1 cm (5 ms), and a domino
 * 8 mm × 16 mm × 5 cm at 1 ms; slender blocks 5 mm × 1 cm × 10 cm (h = 20w) and 3 mm × 6 mm ×
 * 30 cm (h = 100w) at 5 ms, the latter at 1 ms too: the penalty law's compliance lowers a block's
 * threshold by about
 * 2·√(2·δ·h)/w, the stance cap (fr_contact_stance_depth) keeps δ near 2e-5·w²/h, and a level
 * patch's quadrature lets the centre of pressure come near the edge (docs/contact.md §5, §8:
 * measured 0.982–0.997 of w/h; without the cap 0.925 for 1 cm at 5 ms; with the 4-point
 * quadrature a 5 mm block h = w tipped at 0.977 at 5 ms, rocked over by its first step; the
 * slender blocks tipped at 0.953 (h = 20w) and 0.86 (h = 100w) at 5 ms while the cap's floor
 * was δ/40; with it at δ/4000, 0.985 and 0.981, and the domino at 5 ms 0.986). */
START_TEST(test_tips_at_w_over_h)
{
    const double g = 9.81;
    /* corner: a square base w × w turned 45° about the slope's normal, a corner downhill, whose
     * static limit is tan θ = √2·w/h (the quadrature's points on the principal axes reached a
     * corner's direction at 0.66 of its distance, and a 5 cm cube tipped at 0.927 of it at 5 ms) */
    const struct {
        double w, hw, dt;
        bool corner;
    } cases[] = {{0.2, 3, 0.001},       {0.02, 3, 0.001},       {0.01, 3, 0.001},
                 {0.2, 3, 0.005},       {0.02, 3, 0.005},       {0.01, 3, 0.005},
                 {0.005, 1, 0.001},     {0.005, 1, 0.005},      {0.01, 1, 0.005},
                 {0.008, 6.25, 0.001},  {0.05, 1, 0.005, true}, {0.05, 1, 0.001, true},
                 {0.1, 3, 0.005, true}, {0.1, 3, 0.001, true},  {0.005, 20, 0.005},
                 {0.003, 100, 0.005},   {0.003, 100, 0.001}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int run = 0; run < 3; run++) {
            const double w_ = cases[k].w, h = cases[k].hw * w_, dt = cases[k].dt;
            const double lim = (cases[k].corner ? sqrt(2.0) : 1.0) * w_ / h;
            /* it stands at 0.9 and at 0.98 of its limit (a body that rocks over can tip below
             * the limit at one angle and not at the next), and falls at 1.02 (a corner stands to
             * 0.97 of its limit only: measured 0.975–0.986, §8) */
            const int side = run == 2;
            const double t = (run == 0 ? 0.9 : side ? 1.02 : cases[k].corner ? 0.97 : 0.98) * lim;
            const double th = atan(t);
            fr_scene *s = tipping_block(dt, th, w_, cases[k].corner ? w_ : 2 * w_, h,
                                        cases[k].corner ? M_PI / 4 : 0.0);
            fr_world *w = fr_scene_world(s);
            fr_body_id b = body(w, "block");
            fr_pose p0;
            fr_body_get_pose(w, b, &p0);
            double tilt_max = 0, gain_max = 0, e_scale = 1.0 * g * h;
            fr_world_energy e0, e1;
            fr_world_energy_get(w, &e0);
            /* a fall takes about √(h/g)·ln(…) ≈ 1.5 s for the 0.6 m block, less when smaller */
            const double T = w_ > 0.1 ? 4.0 : 2.0;
            for (long i = 0; i < (long)(T / dt); i++) {
                step(w);
                fr_world_energy_get(w, &e1);
                gain_max = fmax(gain_max, (e1.total - e1.work) - (e0.total - e0.work));
                e0 = e1;
                fr_pose p;
                fr_body_get_pose(w, b, &p);
                tilt_max = fmax(tilt_max, fr_q_angle_between(p.q, p0.q));
            }
            if (side)
                ck_assert_msg(tilt_max > M_PI / 4,
                              "w %g dt %g%s, tan = 1.02 of the limit: tilt only %g deg", w_, dt,
                              cases[k].corner ? " corner" : "", tilt_max * 180 / M_PI);
            else
                ck_assert_msg(tilt_max < M_PI / 180,
                              "w %g dt %g%s, tan = %g of the limit: tilted %g deg", w_, dt,
                              cases[k].corner ? " corner" : "", t / lim, tilt_max * 180 / M_PI);
            /* per step at most 1e-4 of m·g·h (the property test's measured worst for boxes is
             * below 1e-4 of its energy scale) */
            ck_assert_msg(gain_max <= 1e-4 * e_scale,
                          "w %g dt %g tan %g: energy rose %g J in a step", w_, dt, t, gain_max);
            fr_scene_destroy(s);
        }
}
END_TEST

/* Small blocks tipping over on the slope at a 5 ms tick (docs/world.md, "Substeps"): the 28 of
 * 1500 random blocks (2–32 mm wide, h/w 3–100, yawed or not, tan θ 1.0–1.4 times w/h, μ above
 * tan θ) whose largest one-step rise of energy less work was above 1e-3 of m·g·h with the tick
 * taken in one step (at most 6.3e-3; each at most 6.4 mm wide: a step's turn of 0.1–0.3 rad met
 * the next corner's landing late). In the substeps they ask for (2–4), through the fall and its
 * landing, a tick's rise stays within the bound of test_tips_at_w_over_h, 1e-4 of m·g·h
 * (measured below 3e-5 taken a step at a time). */
START_TEST(test_small_blocks_tip_without_gain)
{
    static const double cases[][6] = {
        /* sx, sy, sz (m), yaw (rad), μ, tan θ */
        {0.00361, 0.00668, 0.01211, 0.5261, 0.8154, 0.39721},
        {0.00206, 0.00343, 0.00698, 0.1957, 0.7756, 0.33094},
        {0.00460, 0.01115, 0.01718, 0.2079, 1.2440, 0.36928},
        {0.00239, 0.00503, 0.02645, 0.7405, 0.6601, 0.12299},
        {0.00235, 0.00645, 0.01365, 0.6355, 1.4221, 0.21867},
        {0.00233, 0.00561, 0.00923, 0.4556, 0.9093, 0.34729},
        {0.00204, 0.00377, 0.01243, 0.2586, 1.0115, 0.20979},
        {0.00229, 0.00344, 0.01110, 0.5011, 1.3466, 0.23508},
        {0.00213, 0.00339, 0.01134, 0.1564, 1.1522, 0.23783},
        {0.00230, 0.00436, 0.01398, 0.1213, 0.5492, 0.22968},
        {0.00249, 0.00597, 0.01315, 0.4902, 0.8279, 0.22570},
        {0.00262, 0.00619, 0.01437, 0.1052, 0.7488, 0.22061},
        {0.00318, 0.00725, 0.01197, 0.1269, 0.9272, 0.36996},
        {0.00495, 0.00505, 0.03026, 0.1726, 0.7517, 0.19341},
        {0.00221, 0.00296, 0.00734, 0.3154, 1.2589, 0.39926},
        {0.00638, 0.01250, 0.02700, 0.3311, 1.0178, 0.27181},
        {0.00599, 0.00926, 0.02296, 0.2804, 1.3243, 0.28197},
        {0.00374, 0.00553, 0.01947, 0.3387, 1.5121, 0.21436},
        {0.00335, 0.00636, 0.01029, 0.3597, 1.6102, 0.37713},
        {0.00219, 0.00476, 0.01597, 0.3451, 0.5077, 0.16948},
        {0.00362, 0.01001, 0.01147, 0.0433, 1.4448, 0.38248},
        {0.00370, 0.00944, 0.02149, 0.1538, 0.8178, 0.22373},
        {0.00235, 0.00286, 0.00766, 0.3541, 0.8510, 0.34429},
        {0.00205, 0.00251, 0.19870, 0.0000, 0.5554, 0.01329},
        {0.00239, 0.00340, 0.01282, 0.1244, 0.6556, 0.25646},
        {0.00593, 0.01307, 0.02846, 0.0580, 1.1994, 0.26688},
        {0.00341, 0.00864, 0.01473, 0.1438, 1.3473, 0.30476},
        {0.00467, 0.01224, 0.01917, 0.4494, 1.0771, 0.32015},
    };
    const double g = 9.81;
    double worst = 0.0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const double *c = cases[k], th = atan(c[5]), dt = 0.005;
        const char *sets[] = {
            setf("world.dt=%g", dt),
            setf("world.gravity=[%.17g, 0, %.17g]", g * sin(th), -g * cos(th)),
            setf("materials.0.mu_s=%.17g", c[4]),
            setf("materials.0.mu_k=%.17g", c[4]),
            setf("materials.1.mu_s=%.17g", c[4]),
            setf("materials.1.mu_k=%.17g", c[4]),
            setf("bodies.block.shapes.0.size=[%.17g, %.17g, %.17g]", c[0], c[1], c[2]),
            setf("bodies.block.position=[0, 0, %.17g]", c[2] / 2),
            setf("bodies.block.rpy=[0, 0, %.17g]", c[3])};
        fr_scene *s = load("config/scenes/slope.yaml", sets, 9);
        fr_world *w = fr_scene_world(s);
        ck_assert_int_gt(fr_world_substeps(w, NULL), 1);
        double m;
        fr_body_get_mass(w, body(w, "block"), &m, NULL);
        const double scale = m * g * c[2];
        const double gain = worst_rise(w, 2.0);
        ck_assert_msg(gain <= 1e-4 * scale, "case %zu: energy rose %g of m g h in a tick", k,
                      gain / scale);
        worst = fmax(worst, gain / scale);
        fr_scene_destroy(s);
    }
    printf("# small blocks tipping at a 5 ms tick: worst rise %g of m g h\n", worst);
}
END_TEST

/* The explicit contact step (world.contact.implicit = false: each step's force from its start)
 * keeps its friction: a slab given v0 along the ground stops after v0²/(2μg), to the explicit
 * step's own error, the speed's last step v0·h (measured 0.98 and 0.95 mm, about v0·h/2), and then
 * holds still. A bond capped at the energy its last step left in it, the step's start in the
 * explicit step, lost the motion's stretch at every step: the slab slid on at v0. */
START_TEST(test_explicit_slide_stops)
{
    const double g = 9.81, dt = 0.001, v0 = 2.0, mus[2] = {0.4, 1.0};
    for (int k = 0; k < 2; k++) {
        const double mu = mus[k];
        const char *sets[10];
        int ns = flat_ground(sets, dt, mu, mu);
        sets[ns++] = "world.contact.implicit=false";
        sets[ns++] = "bodies.block.shapes.0.size=[0.5, 0.5, 0.1]";
        sets[ns++] = "bodies.block.position=[-10, 0, 0.05]";
        sets[ns++] = setf("bodies.block.velocity=[%.17g, 0, 0]", v0);
        fr_world *w;
        fr_body_id b;
        fr_pose p0, p1, p2;
        fr_scene *s = slide_scene(sets, ns, &w, &b, &p0);
        const double d_pred = v0 * v0 / (2 * mu * g), t_stop = v0 / (mu * g);
        step_n(w, (long)((t_stop + 0.5) / dt));
        fr_body_get_pose(w, b, &p1);
        step_n(w, (long)(1.0 / dt));
        fr_body_get_pose(w, b, &p2);
        const double d = p1.p.x - p0.p.x;
        printf("# explicit slide, mu %g: %.6g m, predicted %.6g m\n", mu, d, d_pred);
        ck_assert_msg(fabs(d - d_pred) <= v0 * dt, "mu %g: slid %g m, predicted %g m", mu, d,
                      d_pred);
        ck_assert_msg(fabs(p2.p.x - p1.p.x) <= 1e-6, "mu %g: moved %g m after it stopped", mu,
                      p2.p.x - p1.p.x);
        fr_scene_destroy(s);
    }
}
END_TEST

/* Landings found late (docs/contact.md §5): blocks tipped over their static limit (24 slopes each)
 * tumble down their slope for 2 s, landing on a face or edge at every quarter turn and turning up
 * to 0.14 rad in a step at 1 ms. Their energy less the work done may not rise by more than
 * test_tips_at_w_over_h's 1e-4 of m·g·h in any step, at either step (the 5 ms tick in the rule's
 * substeps).
 * - A 5 × 10 × 5 mm block at tan θ 1.02–1.07 of w/h: without the correction 12 of the 24 runs at
 *   1 ms rose by 3e-4 to 0.76 of m·g·h in a step (the model rebuilt at a landing held 10³–10⁵
 *   times the energy the last step predicted); with the approach's impulse alone 3 (up to
 *   3e-3); without the hold after the step one at 5 ms (0.011); holding without first taking all
 *   of a lone pair's approach, 3 at 1 ms (up to 1.1); with both, none.
 * - 6 × 6 × 7.5 mm and 9 × 6 × 11 mm blocks at 1.02–1.25 of w/h (found by random tipped boxes,
 *   scripts/experiments/contact/tipsweep.py): with the hold taking the rise along the normal alone,
 *   up to 1.3e-3 and 2.2e-4 of m·g·h (the landing's release goes into the block's turn, which a
 *   normal impulse at the contact point cannot take); with the pressure's couples too, measured
 *   below 1e-13. */
START_TEST(test_tumbling_block_never_gains)
{
    const double g = 9.81;
    const struct {
        double w, d, h, lo, hi; /* m; tan θ from lo to hi of w/h */
    } blocks[3] = {{0.005, 0.010, 0.005, 1.02, 1.07},
                   {0.006, 0.006, 0.0075, 1.02, 1.25},
                   {0.009, 0.006, 0.011, 1.02, 1.25}};
    double worst = 0.0;
    long late = 0, held = 0;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 24; k++)
            for (int d = 0; d < 2; d++) {
                const double dt = d ? 0.005 : 0.001, w_ = blocks[c].w, h = blocks[c].h;
                const double f = blocks[c].lo + (blocks[c].hi - blocks[c].lo) * k / 23.0;
                const double th = atan(f * w_ / h);
                fr_scene *s = tipping_block(dt, th, w_, blocks[c].d, h, 0.0);
                fr_world *w = fr_scene_world(s);
                fr_body_id b = body(w, "block");
                double m;
                fr_body_get_mass(w, b, &m, NULL);
                const double scale = m * g * h;
                fr_pose p0, p;
                fr_body_get_pose(w, b, &p0);
                const double gain = worst_rise(w, 2.0);
                fr_body_get_pose(w, b, &p);
                /* (it fell over, its centre moving down the slope by w or more; the 5 mm block
                 * tumbled on: a dozen quarter turns and more) */
                ck_assert_msg(p.p.x - p0.p.x > (c > 0 ? w_ : 0.1),
                              "block %d tan %g dt %g: went %g m", c, tan(th), dt, p.p.x - p0.p.x);
                ck_assert_msg(gain <= 1e-4 * scale,
                              "block %d tan %g dt %g: energy rose %g of m g h in a step", c,
                              tan(th), dt, gain / scale);
                worst = fmax(worst, gain / scale);
                fr_world_solver_stats st;
                fr_world_solver_stats_get(w, &st);
                late += st.late;
                held += st.late_held > 0.0;
                fr_scene_destroy(s);
            }
    ck_assert_int_gt(late, 0);
    printf("# tumbling blocks, 144 runs: worst rise %g of m g h; %ld landings found late, "
           "%ld runs held after the step\n",
           worst, late, held);
}
END_TEST

/* The stick-slip rig's exact piecewise solution: stuck, the spring force F rises at k·V until it
 * reaches μ_s·m·g; slipping, F = μ_k·m·g + A cos ωt + B sin ωt with ω = √(k/m),
 * A = (μ_s − μ_k)·m·g, B = k·V/ω, and the block's velocity v = V − F'/k returns to zero at
 * ωt = 2π − 2·atan(Δω/V), Δ = A/k. Peak and trough are μ_k·m·g ± √(A² + B²), both reached while
 * it slips (the peak exceeds μ_s·m·g when V/ω is not small against Δ), and the next stick lasts
 * (μ_s·m·g − F_end)/(k·V). */
typedef struct {
    double peak, trough, slip, stick;
} stick_slip_cycle;

static stick_slip_cycle stick_slip_exact(double m, double k, double V, double mu_s, double mu_k,
                                         double g)
{
    double om = sqrt(k / m), A = (mu_s - mu_k) * m * g, B = k * V / om, D = A / k;
    double phi = 2 * M_PI - 2 * atan(D * om / V);
    double f_end = mu_k * m * g + A * cos(phi) + B * sin(phi);
    stick_slip_cycle c = {mu_k * m * g + hypot(A, B), mu_k * m * g - hypot(A, B), phi / om,
                          (mu_s * m * g - f_end) / (k * V)};
    return c;
}

/* The rig of config/scenes/stick-slip.yaml; with `link` the weight is a robot's link
 * (tests/physics/scenes/stick-slip-link.yaml, 1 kg), whose contacts are solved in its tree step. */
static void stick_slip_rig(double m, double k, double V, double mu_s, double mu_k, double dt,
                           bool link)
{
    const double g = 9.81;
    stick_slip_cycle ex = stick_slip_exact(m, k, V, mu_s, mu_k, g);
    if (link) ck_assert_double_eq(m, 1.0);
    const char *sets[] = {setf("world.dt=%g", dt),
                          setf("materials.0.mu_s=%.17g", mu_s),
                          setf("materials.0.mu_k=%.17g", mu_k),
                          setf("springs.0.stiffness=%.17g", k),
                          setf("springs.0.anchor_velocity=[%.17g, 0, 0]", V),
                          setf("bodies.weight.mass=%.17g", m)};
    fr_scene *s =
        load(link ? "tests/physics/scenes/stick-slip-link.yaml" : "config/scenes/stick-slip.yaml",
             sets, link ? 5 : 6);
    fr_world *w = fr_scene_world(s);
    fr_body_id b = body(w, link ? "block/box" : "weight");
    int spring;
    ck_assert_int_eq(fr_world_find_spring(w, "pull", &spring), FR_OK);
    /* phases from the slip speed at the middle of the weight's base (0.1 m below its centre; the
     * centre also moves when the block rocks as its friction changes): slipping while faster
     * than 1e-5 m/s, ten times the solve's tolerance (the block crosses it within microseconds
     * of a phase change) */
    double period = ex.slip + ex.stick;
    long n = (long)(6 * period / dt) + 1;
    int slipping = 0, cycles = 0;
    long t_stick = -1, t_slip = -1, t_change = -1;
    fr_vec3 v_prev = fr_v3_zero();
    double fmax_ = -1e300, fmin_ = 1e300;
    stick_slip_cycle got[8];
    for (long i = 0; i < n && cycles < 8; i++) {
        step(w);
        fr_vec3 F, v, av;
        fr_world_spring_state(w, spring, &F, NULL);
        fr_body_get_velocity(w, b, &v, &av);
        v = fr_v3_add(v, fr_v3_cross(av, fr_v3(0, 0, -0.1)));
        /* (a slip that reverses has ended inside the step: the analytic slip ends where the
         * velocity returns to zero) */
        int now = hypot(v.x, v.y) > 1e-5 && !(slipping && v.x * v_prev.x + v.y * v_prev.y < 0.0);
        /* (a link's contact is softer, κ 12: the block rocks on it after a slip, its base moving
         * faster than 1e-5 m/s for up to 13 ms; there the contact's own state tells the phase) */
        if (link) now = fr_world_contact_slip(w, b, FR_BODY_NULL, NULL) == 1;
        v_prev = v;
        fmax_ = fmax(fmax_, F.x);
        fmin_ = fmin(fmin_, F.x);
        /* a phase changes when the new state lasts two steps, dated from its first: a slip that
         * reverses and sticks again loads the bond from μ_k·N one way to the spring's pull the
         * other, and the bond's elastic give (ΔF/k_f) is a step's motion of up to 5e-5 m/s */
        if (now == slipping) {
            t_change = -1;
            continue;
        }
        if (t_change < 0) {
            t_change = i;
            continue;
        }
        const long i0 = t_change;
        t_change = -1;
        if (now) { /* a slip starts */
            t_slip = i0;
        } else { /* a slip ends: a cycle is a whole stick and the slip after it */
            if (t_stick >= 0 && t_slip > t_stick) {
                got[cycles] = (stick_slip_cycle){fmax_, fmin_, (double)(i0 - t_slip) * dt,
                                                 (double)(t_slip - t_stick) * dt};
                cycles++;
            }
            t_stick = i0;
            fmax_ = -1e300, fmin_ = 1e300;
        }
        slipping = now;
    }
    ck_assert_msg(cycles >= 2, "m %g k %g V %g dt %g: %d full stick-slip cycles", m, k, V, dt,
                  cycles);
    /* phases to the step's quantisation, one step at each end; where the slip ends with a pull
     * above μ_k·m·g the bond sticks again by taking μ_s for the whole step in which the slip
     * reverses: one step more. The bond breaks away at μ_s·m·g·(1 + FR_CONTACT_STICK_SLACK). */
    const double f_end = mu_s * m * g - ex.stick * k * V;
    const double tol_t = (fabs(f_end) > mu_k * m * g ? 3.0 : 2.0) * dt;
    ex.stick += FR_CONTACT_STICK_SLACK * mu_s * m * g / (k * V);
    /* the first cycle starts from rest with the spring slack; compare the later ones */
    for (int c = 1; c < cycles; c++) {
        /* (the issue asks for 5 %; the step achieves better.) Forces to 1 % of the peak: the
         * oscillation's discretisation error, ω·h ≤ 2 %, halved by the step's symmetry as
         * measured (≤ 0.2 %); phases to the step's quantisation (one step at each end) */
        ck_assert_msg(fabs(got[c].peak - ex.peak) <= 0.01 * ex.peak,
                      "m %g k %g V %g dt %g: peak %g vs %g", m, k, V, dt, got[c].peak, ex.peak);
        ck_assert_msg(fabs(got[c].trough - ex.trough) <= 0.01 * ex.peak,
                      "m %g k %g V %g dt %g: trough %g vs %g", m, k, V, dt, got[c].trough,
                      ex.trough);
        ck_assert_msg(fabs(got[c].slip - ex.slip) <= tol_t,
                      "m %g k %g V %g dt %g: slip %g s vs %g s", m, k, V, dt, got[c].slip, ex.slip);
        ck_assert_msg(fabs(got[c].stick - ex.stick) <= tol_t,
                      "m %g k %g V %g dt %g: stick %g s vs %g s", m, k, V, dt, got[c].stick,
                      ex.stick);
    }
    fr_scene_destroy(s);
}

static void stick_slip_check(double m, double k, double V, double mu_s, double mu_k, double dt)
{
    stick_slip_rig(m, k, V, mu_s, mu_k, dt, false);
}

START_TEST(test_stick_slip_exact)
{
    /* V/ω ≪ Δ: the short formulas' regime (slip ≈ half a period) */
    stick_slip_check(1.0, 100, 0.02, 0.6, 0.4, 0.0005);
    /* V/ω = 0.03 m > Δ = 0.0196 m: the slip lasts well beyond half a period */
    stick_slip_check(1.0, 100, 0.3, 0.6, 0.4, 0.0005);
    /* the rig, m 0.5 kg, k 1000 N/m, V 0.1 m/s: V/ω = 2.2 mm, Δ = 1.0 mm */
    stick_slip_check(0.5, 1000, 0.1, 0.6, 0.4, 0.0005);
    /* μ_k far below μ_s: the slip overshoots until the spring pulls back by 3.9 N, more than
     * μ_k·m·g (0.98 N), less than μ_s·m·g (5.9 N): at rest again the block must stick, not slide
     * back under μ_k (it did, at 0.25 m/s, until a reversed slip re-stuck the bond) */
    stick_slip_check(1.0, 100, 0.05, 0.6, 0.1, 0.0005);
    stick_slip_check(1.0, 100, 0.05, 0.6, 0.1, 0.001);
    stick_slip_check(2.0, 400, 0.1, 0.9, 0.2, 0.001);
}
END_TEST

/* The same on a robot's link, whose friction is solved inside its tree's step (src/world/robots.c):
 * breakaway, the slip, and the re-stick of a reversed slip (without which it slid back for 1.02 s
 * instead of 0.33 s; re-stuck, its fixed-point iteration swung from side to side until it took
 * the sticking bond's tangent). */
START_TEST(test_stick_slip_on_a_link)
{
    stick_slip_rig(1.0, 100, 0.05, 0.6, 0.4, 0.0005, true);
    stick_slip_rig(1.0, 100, 0.3, 0.6, 0.4, 0.0005, true);
    stick_slip_rig(1.0, 100, 0.05, 0.6, 0.1, 0.0005, true);
    stick_slip_rig(1.0, 100, 0.05, 0.6, 0.1, 0.001, true);
}
END_TEST

/* A motor's torque limit holds with a load on what it drives, and its work is counted: a table
 * (I_zz = 64 kg·m², tests/physics/scenes/motor-table.yaml) whose hinge motor gives at most
 * 6.4 N·m spins up carrying a stuck 1 kg box at α = 6.4/I_total, and the world's energy rises by
 * the motor's work, never more. The joint projection after the contact solve once applied the whole
 * torque again (α doubled) and counted none of that work. */
START_TEST(test_motor_limit_with_load)
{
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {setf("world.dt=%g", DTS[k])};
        fr_scene *s = load("tests/physics/scenes/motor-table.yaml", sets, 1);
        fr_world *w = fr_scene_world(s);
        /* (while settling the motor holds the table: driving it, it carried the box away and
         * the settle gave up) */
        ck_assert_msg(fr_world_settle_note(w)[0] == '\0', "%s", fr_world_settle_note(w));
        const double I = 64.0 + 1.0 * (0.5 * 0.5 + 0.1 * 0.1 / 6.0), T = 6.4;
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        const long n = (long)(2.0 / DTS[k] + 0.5);
        for (long i = 0; i < n; i++) step(w);
        fr_world_energy_get(w, &e1);
        fr_vec3 v, om;
        fr_body_get_velocity(w, body(w, "table"), &v, &om);
        const double want = T / I * (double)n * DTS[k];
        ck_assert_msg(fabs(fabs(om.z) - want) < 1e-5 * want,
                      "dt %g: table at %.9g rad/s, %.9g expected", DTS[k], fabs(om.z), want);
        /* no energy beyond the motor's work; the stuck box's contact may damp a little (its
         * implicit step: 7e-5 of the work at 5 ms) */
        const double W = e1.work - e0.work, gain = (e1.total - e0.total) - W;
        ck_assert_msg(gain <= 1e-9 * W && gain >= -1e-3 * W,
                      "dt %g: energy rose %g J, the motor did %g J", DTS[k], e1.total - e0.total,
                      W);
        fr_scene_destroy(s);
    }
    /* a motor holding a loaded arm still (tests/physics/scenes/motor-arm.yaml) does no work: the
     * projection's share was once booked as an impulse of its own, −6.9e-5 J a step at 1 ms */
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {setf("world.dt=%g", DTS[k])};
        fr_scene *s = load("tests/physics/scenes/motor-arm.yaml", sets, 1);
        fr_world *w = fr_scene_world(s);
        fr_world_energy e0, e1;
        fr_world_energy_get(w, &e0);
        for (long i = 0; i < (long)(1.0 / DTS[k] + 0.5); i++) step(w);
        fr_world_energy_get(w, &e1);
        ck_assert_msg(fabs(e1.work - e0.work) < 1e-9, "dt %g: the holding motor did %g J", DTS[k],
                      e1.work - e0.work);
        ck_assert_msg(fabs(e1.total - e0.total) < 1e-9, "dt %g: the held arm's energy moved %g J",
                      DTS[k], e1.total - e0.total);
        /* settled, nothing of the placement is left to report (the joint's projection after the
         * settle's last contact stage once read as 3.56 J of overlap) */
        ck_assert_double_eq(e1.placement, 0.0);
        fr_scene_destroy(s);
    }
}
END_TEST

/* The seed paper's column (1 × 1 × 2 m, 1 kg blocks), jittered ±1 mm, 100 and 200 blocks at
 * dt 5 ms, three jitter seeds each: it stands 10 s, the top drifts less than 1 cm and never
 * rises above its start, the touching placement (the settle lowers it by the blocks' rest
 * depths, 2 mm at 200 blocks). Measured from the settled pose instead, the top rose by up to
 * 1.1e-10 m: the column's slow sway (a period of about 15 s) can outlast the settle's 5 s, and
 * the run then starts with blocks at up to 1e-6 m/s (a new user's trial, 2026-11-29: with the
 * bound (settle tolerance + solve tolerance)·h of 5.5e-12 m, the test held for its first seed
 * only). */
START_TEST(test_tall_columns)
{
    const int counts[] = {100, 200}, seeds[] = {1, 7, 42};
    double rose_settled = -1e300;
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 3; k++) {
            const char *sets[] = {"world.dt=0.005", setf("bodies.block.repeat.count=%d", counts[c]),
                                  "bodies.block.repeat.jitter=[0.001, 0.001, 0]",
                                  setf("bodies.block.repeat.seed=%d", seeds[k]),
                                  "world.settle_tolerance=1e-9"};
            fr_scene *s = load("config/scenes/column.yaml", sets, 5);
            fr_world *w = fr_scene_world(s);
            char name[32];
            snprintf(name, sizeof name, "block%d", counts[c] - 1);
            fr_body_id top = body(w, name);
            /* placed at 1 + 2·i m (config/scenes/column.yaml) */
            const double z_placed = 1.0 + 2.0 * (counts[c] - 1);
            fr_pose p0, p;
            fr_body_get_pose(w, top, &p0);
            double zmax = -1e300, drift = 0;
            for (long i = 0; i < 2000; i++) {
                step(w);
                fr_body_get_pose(w, top, &p);
                zmax = fmax(zmax, p.p.z);
                drift = fmax(drift, fr_v3_dist(p.p, p0.p));
            }
            ck_assert_msg(zmax <= z_placed, "%d blocks, seed %d: top rose %g m above its placement",
                          counts[c], seeds[k], zmax - z_placed);
            ck_assert_msg(drift < 0.01, "%d blocks, seed %d: top drifted %g m", counts[c], seeds[k],
                          drift);
            rose_settled = fmax(rose_settled, zmax - p0.p.z);
            fr_scene_destroy(s);
        }
    printf("# tall columns: the top at most %g m above its settled pose\n", rose_settled);
}
END_TEST

/* The geometry's tangent within a tick's time (docs/contact.md §5, "Its cost in a tick"): a row of
 * 50 tall blocks (h/w 2) on a 12° slope at 5 ms, jittered ±1 mm and released from their touching
 * placement without the settle, come to rest on lifted patches (the slope puts each block's load
 * beyond the middle third of its base), all asking to be measured in the same steps (without a
 * budget: 50 in a step); no step measures more than one, the others wait and are measured in turn,
 * and every block stays where it was placed. (Until 2026-11-29 a jittered column served. Its
 * patches are uniform, taken for lifted only because their thickest point was misread:
 * docs/contact.md §5, "Offset slabs were read as lifted".) */
START_TEST(test_tangents_within_a_tick)
{
    enum { N = 50 };
    const char *sets[] = {
        "world.dt=0.005",
        "world.gravity=[2.0, 0, -9.6]",
        "probes=[]",
        "world.settle=false",
        "bodies.ground.shapes.0.size=[4, 60, 1]",
        "bodies.block.position=[0, -12, 0.2]",
        "bodies.block.shapes.0.size=[0.2, 0.2, 0.4]",
        "bodies.block.repeat={count: 50, offset: [0, 0.5, 0], jitter: [0.001, 0.001, 0]}"};
    fr_scene *s = load("config/scenes/slope.yaml", sets, 8);
    fr_world *w = fr_scene_world(s);
    fr_body_id id[N];
    fr_pose p0[N], p;
    for (int b = 0; b < N; b++) {
        id[b] = body(w, setf("block%d", b));
        fr_body_get_pose(w, id[b], &p0[b]);
    }
    fr_world_solver_stats st;
    fr_world_solver_stats_get(w, &st);
    long measured = st.tangents, most = 0, steps_measuring = 0;
    double drift = 0.0;
    for (long i = 0; i < 2000; i++) {
        step(w);
        fr_world_solver_stats_get(w, &st);
        const long k = st.tangents - measured;
        most = k > most ? k : most;
        steps_measuring += k > 0;
        measured = st.tangents;
    }
    for (int b = 0; b < N; b++) {
        fr_body_get_pose(w, id[b], &p);
        drift = fmax(drift, fr_v3_dist(p.p, p0[b].p));
    }
    fr_scene_destroy(s);
    ck_assert_msg(most == 1, "%ld measurements in a step", most);
    /* (measured: 40 over the 10 s; each block's pair again when its model is built anew) */
    ck_assert_msg(measured >= N / 2, "%ld measurements", measured);
    ck_assert_msg(drift < 0.01, "a block drifted %g m", drift);
    printf("# blocks on a slope without the settle: %ld measurements in %ld steps, drift %g m\n",
           measured, steps_measuring, drift);
}
END_TEST

/* Dissimilar materials and masses: a light slab (0.2 kg, μ 0.2/0.15) slides on a heavy block
 * (20 kg, μ 0.8/0.6) that rests on the ground; the slab's stop distance follows the pair's μ_k
 * from fr_contact_params_combine, and the heavy block does not move (its ground friction
 * holds). */
START_TEST(test_dissimilar_pair)
{
    for (int k = 0; k < 2; k++) {
        const double dt = DTS[k], v0 = 1.0, g = 9.81;
        const char *sets[] = {
            setf("world.dt=%g", dt),
            "world.gravity=[0, 0, -9.81]",
            "materials.0.mu_s=0.8",
            "materials.0.mu_k=0.6",
            "materials.1.mu_s=0.2",
            "materials.1.mu_k=0.15",
            "probes=[]",
            setf("bodies=[{name: ground, type: static, position: [0, 0, -0.5], shapes: [{type: "
                 "box, size: [40, 4, 1], material: ground}]}, {name: heavy, mass: 20, position: "
                 "[0, 0, 0.25], shapes: [{type: box, size: [4, 1, 0.5], material: ground}]}, "
                 "{name: slab, mass: 0.2, position: [-1.5, 0, 0.525], velocity: [%g, 0, 0], "
                 "shapes: [{type: box, size: [0.3, 0.3, 0.05], material: block}]}]",
                 v0)};
        fr_scene *s = load("config/scenes/slope.yaml", sets, 8);
        fr_world *w = fr_scene_world(s);
        fr_body_id slab = body(w, "slab"), heavy = body(w, "heavy");
        fr_contact_material ma = {0, 0, 0.8, 0.6}, mb = {0, 0, 0.2, 0.15};
        fr_contact_params cp;
        ck_assert_int_eq(fr_contact_params_combine(&ma, &mb, 0.2 * 20 / 20.2, dt, &cp), FR_OK);
        const double d_pred = v0 * v0 / (2 * cp.mu_k * g);
        fr_pose p0, p, h0, h1;
        fr_body_get_pose(w, slab, &p0);
        fr_body_get_pose(w, heavy, &h0);
        for (long i = 0; i < (long)(1.5 / dt); i++) step(w);
        fr_body_get_pose(w, slab, &p);
        fr_body_get_pose(w, heavy, &h1);
        double d = p.p.x - p0.p.x;
        /* the heavy block's bond gives (μ_s·N on it is 6× the slab's pull) by its elastic
         * compliance only: the slab's friction over the bond stiffness, micrometres */
        ck_assert_msg(fabs(h1.p.x - h0.p.x) < 1e-5, "dt %g: heavy block moved %g m", dt,
                      h1.p.x - h0.p.x);
        ck_assert_msg(fabs(d - d_pred) <= 0.01 * cp.mu_k * g * dt * dt + 1e-9 * d_pred,
                      "dt %g: slid %.9g m, predicted %.9g (mu_k %g)", dt, d, d_pred, cp.mu_k);
        /* at rest on the heavy block the slab sinks to the pair's rest depth: the mass-scaled
         * law (as in test_physics.c's test_rest_depth) with the pair's reduced mass and the
         * smaller silhouette (the slab's 0.3 × 0.3 m), measured in the heavy block's frame */
        const fr_world_def *def = fr_world_get_def(w);
        const double m_red = 0.2 * 20 / 20.2, aref = 0.09;
        double kv = def->contact_kappa * m_red / (dt * dt * aref);
        double ds = def->contact_stiffen * g * dt * dt / def->contact_kappa;
        double depth_pred = fr_contact_depth_of_pressure(kv, ds, 0.2 * g / aref);
        fr_vec3 rel = fr_q_unrotate(h1.q, fr_v3_sub(p.p, h1.p));
        double depth = 0.25 + 0.025 - rel.z;
        /* to the solve's tolerance τ·h and rounding (test_rest_depth) */
        ck_assert_msg(fabs(depth - depth_pred) <= def->solver_tolerance * dt + 1e-9 * depth_pred,
                      "dt %g: slab rests %.6g m deep, predicted %.6g m", dt, depth, depth_pred);
        fr_scene_destroy(s);
    }
}
END_TEST

/* Largest displacement of any body from its place at t = 1 s over the next `t` − 1 s, and from
 * its start; `sets` as for the scene. */
static void hold_scene(const char *rel, const char *const *sets, int n, double t, double *since1,
                       double *since0)
{
    fr_scene *s = load(rel, sets, n);
    fr_world *w = fr_scene_world(s);
    const int nb = fr_world_body_count(w);
    const double dt = fr_world_get_def(w)->dt;
    fr_pose *p0 = calloc((size_t)nb, sizeof *p0), *p1 = calloc((size_t)nb, sizeof *p1);
    ck_assert_ptr_nonnull(p0);
    ck_assert_ptr_nonnull(p1);
    for (int i = 0; i < nb; i++) fr_body_get_pose(w, fr_world_body_at(w, i), &p0[i]);
    const long n1 = (long)(1.0 / dt + 0.5), nt = (long)(t / dt + 0.5);
    *since1 = *since0 = 0.0;
    for (long k = 1; k <= nt; k++) {
        step(w);
        for (int i = 0; i < nb; i++) {
            fr_pose p;
            fr_body_get_pose(w, fr_world_body_at(w, i), &p);
            if (k == n1) p1[i] = p;
            if (k > n1) *since1 = fmax(*since1, fr_v3_dist(p.p, p1[i].p));
            *since0 = fmax(*since0, fr_v3_dist(p.p, p0[i].p));
        }
    }
    free(p0), free(p1);
    fr_scene_destroy(s);
}

/* The rigid-IPC robustness scenes (seed 002's arch and card house), generated exactly touching
 * (scripts/scenes/generate.py): a 25-stone arch and a two-level card house stand 10 s at dt 1 ms
 * and 5 ms, settled or from the raw placement: after the first second no body moves by more than
 * 1 µm (measured: below 4e-7 m for the arch, 1e-11 m for the cards), and none moves more than
 * 1 cm from where it was placed (the contacts' compression: 0.2 mm for the arch at 5 ms, whose
 * mass-scaled contacts are 25 times softer than at 1 ms; a collapse moves decimetres). Without
 * friction both fall within 1.5 s: it is friction that holds them. */
START_TEST(test_arch_and_card_house)
{
    const char *scenes[] = {"config/scenes/arch.yaml", "config/scenes/cardhouse.yaml"};
    const char *mat[] = {"materials.stone", "materials.card"};
    for (int sc = 0; sc < 2; sc++) {
        for (int k = 0; k < 2; k++)
            for (int settle = 0; settle < 2; settle++) {
                const char *sets[] = {setf("world.dt=%g", DTS[k]),
                                      settle ? "world.settle=true" : "world.settle=false"};
                double s1, s0;
                hold_scene(scenes[sc], sets, 2, 10.0, &s1, &s0);
                ck_assert_msg(s1 < 1e-6, "%s dt %g settle %d: moved %g m after 1 s", scenes[sc],
                              DTS[k], settle, s1);
                ck_assert_msg(s0 < 1e-2, "%s dt %g settle %d: moved %g m from its placement",
                              scenes[sc], DTS[k], settle, s0);
            }
        const char *sets[] = {setf("%s.mu_s=0", mat[sc]), setf("%s.mu_k=0", mat[sc])};
        double s1, s0;
        hold_scene(scenes[sc], sets, 2, 1.5, &s1, &s0);
        ck_assert_msg(s0 > 0.01, "%s without friction: moved only %g m", scenes[sc], s0);
    }
}
END_TEST

/* Friction at a loose solver tolerance (world.contact.tolerance): a bond takes a slip of up to
 * min(tolerance, 1e-9 m/s) as zero (src/world/contacts.c, STICK_SPEED_MAX), not the tolerance
 * itself, whose force let a bond hold above μ_s·N for good once a held body's velocities were the
 * solve's own (docs/world.md, "Momentum"): a block at μ 0.56 stayed on the 30° slope at 1e-6 and
 * 1e-5 m/s, and the stick-slip rig's bond held 1.0·N at μ_s 0.6 at 1e-4 (a new user's trial,
 * session 36). The rig's largest |F_t|/F_n over 10 s stays within 1 % of μ_s at 1e-6, 1e-5 and
 * 1e-4 (measured 0.5999, 0.5999, 0.5998; with every body corrected by its residual, as before,
 * 0.616, 0.607, 0.641) and reaches it. On the slope, after 5 s: the block at μ 0.56 (0.15 m/s²)
 * slides as at the default tolerance to 1e-3 at 1e-6 to 1e-4 (measured 1.2e-6, 2.3e-5, 5.1e-5;
 * before, 3.4e-2 at 1e-4), and at μ 0.5748 (its material at 0.56 on the ground's 0.59: 0.022 m/s²)
 * to 1e-4 at 1e-6 and 1e-5 (measured 5.5e-6, 6.8e-6; before, 3.2e-3 and 1.6e-2). */
START_TEST(test_loose_tolerance_friction)
{
    const double tols[3] = {1e-6, 1e-5, 1e-4};
    for (int k = 0; k < 3; k++) {
        const char *sets[] = {setf("world.contact.tolerance=%g", tols[k])};
        fr_scene *s = load("config/scenes/stick-slip.yaml", sets, 1);
        fr_world *w = fr_scene_world(s);
        fr_body_id wt = body(w, "weight"), tb = body(w, "table");
        const double dt = fr_world_get_def(w)->dt;
        double most = 0.0;
        for (long i = 0; i < (long)(10.0 / dt); i++) {
            step(w);
            const fr_vec3 f = fr_world_contact_force(w, wt, tb);
            if (i * dt > 0.1 && f.z > 0.0) most = fmax(most, hypot(f.x, f.y) / f.z);
        }
        printf("# stick-slip at tolerance %g: largest |F_t|/F_n %.5f (mu_s 0.6)\n", tols[k], most);
        ck_assert_msg(most <= 0.6 * 1.01 && most >= 0.6 * 0.99, "tolerance %g: |F_t|/F_n %.5f",
                      tols[k], most);
        fr_scene_destroy(s);
    }
    /* the block's way down the slope after 5 s at each tolerance, against the default's */
    static const struct {
        int both; /* μ 0.56 on both materials, else on the block's only */
        double tol, rel;
    } cases[] = {
        {1, 1e-6, 1e-3}, {1, 1e-5, 1e-3}, {1, 1e-4, 1e-3}, {0, 1e-6, 1e-4}, {0, 1e-5, 1e-4}};
    double ref[2] = {0, 0};
    for (int k = -2; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        const int both = k < 0 ? k + 2 : cases[k].both;
        const char *sets[] = {setf("world.contact.tolerance=%g", k < 0 ? 1e-10 : cases[k].tol),
                              "materials.1.mu_s=0.56", "materials.1.mu_k=0.56",
                              "materials.0.mu_s=0.56", "materials.0.mu_k=0.56"};
        fr_scene *s = load("config/scenes/slope.yaml", sets, both ? 5 : 3);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "block");
        fr_pose p0, p1;
        fr_body_get_pose(w, b, &p0);
        step_n(w, (long)(5.0 / fr_world_get_def(w)->dt + 0.5));
        fr_body_get_pose(w, b, &p1);
        const double x = fr_v3_dist(p0.p, p1.p);
        fr_scene_destroy(s);
        if (k < 0) {
            ref[both] = x;
            ck_assert_double_gt(x, 0.1);
            continue;
        }
        printf("# slope, mu %s, tolerance %g: %.9g m in 5 s, %.3g off the default's\n",
               both ? "0.56" : "0.5748", cases[k].tol, x, fabs(x - ref[both]) / ref[both]);
        ck_assert_msg(fabs(x - ref[both]) <= cases[k].rel * ref[both], "tolerance %g: %g m, not %g",
                      cases[k].tol, x, ref[both]);
    }
    /* μ 0.57 on both at 1e-4 and 1 ms: 0.062 m/s², 6.2e-5 m/s a step, below the tolerance: every
     * step still takes a Newton iteration (solve.c), which takes the acceleration. Within 1e-3 of
     * ½·a·t² after 10 s (measured 1.6e-5; taken as solved without one, it never moved; with such
     * a step's bodies corrected by their residual, 1.7 % short; with every body corrected at
     * every step, 32 % short). */
    {
        const char *sets[] = {"world.contact.tolerance=1e-4", "materials.1.mu_s=0.57",
                              "materials.1.mu_k=0.57", "materials.0.mu_s=0.57",
                              "materials.0.mu_k=0.57"};
        fr_scene *s = load("config/scenes/slope.yaml", sets, 5);
        fr_world *w = fr_scene_world(s);
        fr_body_id b = body(w, "block");
        const fr_vec3 g = fr_world_get_def(w)->gravity;
        const double a = g.x + 0.57 * g.z; /* (sin θ − μ·cos θ)·g, z down */
        fr_pose p0, p1;
        fr_body_get_pose(w, b, &p0);
        step_n(w, (long)(10.0 / fr_world_get_def(w)->dt + 0.5));
        fr_body_get_pose(w, b, &p1);
        const double x = p1.p.x - p0.p.x, want = 0.5 * a * 100.0;
        printf("# slope, mu 0.57, tolerance 1e-4: %.6g m in 10 s, 1/2 a t^2 = %.6g m\n", x, want);
        ck_assert_msg(fabs(x - want) <= 1e-3 * want, "%g m, not %g", x, want);
        fr_scene_destroy(s);
    }
}
END_TEST

static Suite *friction_suite(void)
{
    Suite *s = suite_create("friction");
    TCase *tc = tcase_create("friction");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_slide_stops);
    tcase_add_test(tc, test_slide_stops_any_direction);
    tcase_add_test(tc, test_slide_stop_never_gains);
    tcase_add_test(tc, test_explicit_slide_stops);
    tcase_add_test(tc, test_carried_block_slides);
    tcase_add_test(tc, test_landing_slides);
    tcase_add_test(tc, test_spin_down);
    tcase_add_test(tc, test_slope_slides);
    tcase_add_test(tc, test_slope_no_creep);
    tcase_add_test(tc, test_slope_exact_limit);
    tcase_add_test(tc, test_small_bodies_hold);
    tcase_add_test(tc, test_rocking_bodies_hold);
    tcase_add_test(tc, test_substepped_bodies_hold);
    tcase_add_test(tc, test_small_blocks_tip_without_gain);
    tcase_add_test(tc, test_tumbling_block_never_gains);
    tcase_add_test(tc, test_turntable_holds);
    tcase_add_test(tc, test_stick_slip_on_a_link);
    tcase_add_test(tc, test_motor_limit_with_load);
    tcase_add_test(tc, test_conveyor_work);
    tcase_add_test(tc, test_tips_at_w_over_h);
    tcase_add_test(tc, test_stick_slip_exact);
    tcase_add_test(tc, test_tall_columns);
    tcase_add_test(tc, test_recorded_sweep_holds);
    tcase_add_test(tc, test_tangents_within_a_tick);
    tcase_add_test(tc, test_dissimilar_pair);
    tcase_add_test(tc, test_arch_and_card_house);
    tcase_add_test(tc, test_loose_tolerance_friction);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(friction_suite)
