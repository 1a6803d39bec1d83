/*
 * Bodies at their friction limit on slopes, over random shapes, sizes, yaws, masses and slopes
 * (issue 8: "zero creep at μ = tan θ + 0.005 from any start"; docs/contact.md §5 "Which axes",
 * §8 "Small bodies at their friction limit"). Each body is placed touching the slope.yaml ground
 * (gravity tilted by θ), μ_s = μ_k = tan θ or tan θ + 0.005, on a slope up to 0.9 of the one it
 * would tip on (tan θ at most 0.9 of the distance from its centre to where the line down the
 * slope leaves its footprint, over its half-height): after the first second it moves less than
 * 1e-8 m in 9 s (the issue asks for 1 µm; measured at most 3.8e-9 m over 1362 such bodies at 1 ms,
 * typically 1e-10 m: the bond's elastic give under the solve's rounding).
 * - At 1 ms, cubes, bricks (2:1:1), slabs (5:(2.5–5):1) and tall blocks (1:1:2) of 3 mm to 0.5 m.
 * - At 5 ms from 5 cm up only. Smaller bodies at 5 ms fail: 22 of 3280 such runs crept (18 after
 *   their settle gave up on a period-2 rocking, §8), among them 2 of 996 of 2–5 cm.
 * With the quadrature's points on principal axes (before 2026-12-01) both parts fail: at 1 ms an
 * 8.4 cm × 8.4 cm × 17 cm block at 12.7°, μ = tan θ, crept 10 mm (70 of those 3280 crept then).
 */
#include <math.h>
#include <stdio.h>

#include "scene_util.h"

static double creep(const double size[3], double yaw, double mass, double theta, double mu,
                    double dt)
{
    const double g = 9.81;
    char b[10][200];
    snprintf(b[0], 200, "world.dt=%g", dt);
    snprintf(b[1], 200, "world.gravity=[%.17g, 0, %.17g]", g * sin(theta), -g * cos(theta));
    snprintf(b[2], 200, "materials.0.mu_s=%.17g", mu);
    snprintf(b[3], 200, "materials.0.mu_k=%.17g", mu);
    snprintf(b[4], 200, "materials.1.mu_s=%.17g", mu);
    snprintf(b[5], 200, "materials.1.mu_k=%.17g", mu);
    snprintf(b[6], 200, "bodies.block.shapes.0.size=[%.17g, %.17g, %.17g]", size[0], size[1],
             size[2]);
    snprintf(b[7], 200, "bodies.block.position=[0, 0, %.17g]", size[2] / 2);
    snprintf(b[8], 200, "bodies.block.rpy=[0, 0, %.17g]", yaw);
    snprintf(b[9], 200, "bodies.block.mass=%.17g", mass);
    const char *sets[10];
    for (int i = 0; i < 10; i++) sets[i] = b[i];
    fr_scene *s = load("config/scenes/slope.yaml", sets, 10);
    fr_world *w = fr_scene_world(s);
    fr_body_id id = body(w, "block");
    const long n1 = (long)(1.0 / dt + 0.5), n = (long)(10.0 / dt + 0.5);
    fr_pose p1 = {0}, p;
    double worst = 0.0;
    for (long i = 0; i < n; i++) {
        step_n(w, 1);
        fr_body_get_pose(w, id, &p);
        if (i + 1 == n1) p1 = p;
        if (i + 1 > n1) worst = fmax(worst, fr_v3_dist(p.p, p1.p));
    }
    fr_scene_destroy(s);
    return worst;
}

static void random_bodies(unsigned long long seed, int count, double dt, double lo, double hi)
{
    frtest_rng rng = {seed};
    static const double masses[4] = {0.002, 0.05, 1.0, 100.0};
    for (int k = 0; k < count; k++) {
        const double a = exp(frtest_uniform(&rng, log(lo), log(hi)));
        const int shape = (int)frtest_uniform(&rng, 0.0, 4.0);
        double size[3] = {a, a, a}; /* a cube */
        if (shape == 1) size[1] = size[2] = a / 2;
        if (shape == 2) size[1] = a * frtest_uniform(&rng, 0.5, 1.0), size[2] = a / 5;
        if (shape == 3) size[0] = size[1] = a / 2;
        const double yaw =
            frtest_uniform(&rng, 0.0, 1.0) < 0.3 ? 0.0 : frtest_uniform(&rng, 0.0, M_PI / 2);
        /* where the line down the slope (x) leaves the turned footprint */
        const double c = fabs(cos(yaw)), s = fabs(sin(yaw));
        const double exit_x =
            fmin(c > 1e-12 ? size[0] / 2 / c : INFINITY, s > 1e-12 ? size[1] / 2 / s : INFINITY);
        const double th_max = fmin(atan(0.9 * exit_x / (size[2] / 2)), 60.0 * M_PI / 180);
        const double th = frtest_uniform(&rng, 3.0 * M_PI / 180, th_max);
        const double mu = tan(th) + (frtest_uniform(&rng, 0.0, 1.0) < 0.5 ? 0.0 : 0.005);
        const double mass = masses[(int)frtest_uniform(&rng, 0.0, 4.0)];
        const double d = creep(size, yaw, mass, th, mu, dt);
        ck_assert_msg(d < 1e-8,
                      "dt %g: body %d, %g x %g x %g m, yaw %.17g, %g kg, %.17g deg, mu %.17g: "
                      "crept %g m",
                      dt, k, size[0], size[1], size[2], yaw, mass, th * 180 / M_PI, mu, d);
    }
}

START_TEST(test_random_bodies_1ms)
{
    random_bodies(20261201, 150, 0.001, 0.003, 0.5);
}
END_TEST

START_TEST(test_random_bodies_5ms)
{
    random_bodies(20261202, 100, 0.005, 0.05, 0.5);
}
END_TEST

static Suite *slopes_suite(void)
{
    Suite *s = suite_create("slopes");
    TCase *tc = tcase_create("slopes");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_random_bodies_1ms);
    tcase_add_test(tc, test_random_bodies_5ms);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(slopes_suite)
