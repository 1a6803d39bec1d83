/*
 * Work kept between steps (docs/world.md, "Work kept between steps"): resting contacts' models
 * advanced from the last step's and the Newton matrix's last factor tried first must give the
 * motion of the world that builds every model from the geometry and factors every iterate.
 * Shipped resting scenes, from their touching start, at dt 1 and 5 ms: every body's position in
 * both runs agrees to the solve's own tolerance accumulated over the run (each step's velocities
 * are right to τ, so positions to τ·h per step; measured ≤ 7.2e-13 m of 2e-10 m), and the kept
 * work is really used.
 */
#include <stdarg.h>
#include <stdio.h>

#include "scene_util.h"

typedef struct run {
    fr_scene *s;
    fr_world *w;
} run;

/* reuse: 1 the contacts' models, 2 the factor, 3 both */
static run open_run(const char *rel, double dt, int reuse, const char *extra)
{
    static char b[3][128];
    snprintf(b[0], sizeof b[0], "world.dt=%g", dt);
    snprintf(b[1], sizeof b[1], "world.contact.reuse_contacts=%s", reuse & 1 ? "true" : "false");
    snprintf(b[2], sizeof b[2], "world.contact.reuse_factor=%s", reuse & 2 ? "true" : "false");
    const char *sets[4] = {b[0], b[1], b[2], extra};
    run r;
    r.s = load(rel, sets, extra ? 4 : 3);
    r.w = fr_scene_world(r.s);
    return r;
}

START_TEST(test_reuse_same_motion)
{
    static const struct {
        const char *scene, *extra;
    } cases[] = {
        {"config/scenes/column.yaml", "bodies.block.repeat.jitter=[0.001, 0.001, 0]"},
        {"config/scenes/column.yaml", "bodies.block.repeat.count=30"},
        {"config/scenes/cardhouse.yaml", NULL},
    };
    /* (Not the arch or the poked blocks: they amplify any change at the solve's tolerance by
     * themselves — the arch moves by 3.5e-8 m, the blocks by millimetres when only τ changes
     * from 1e-10 to 1e-11 m/s — so a trajectory cannot be compared there; the friction tests run
     * them, with the kept work, against their physical outcomes.) */
    const double dts[2] = {0.005, 0.001};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int d = 0; d < 2; d++) {
            run a = open_run(cases[c].scene, dts[d], 3, cases[c].extra);
            run b = open_run(cases[c].scene, dts[d], 0, cases[c].extra);
            const long steps = (long)(2.0 / dts[d]);
            const int nb = fr_world_body_count(a.w);
            double worst = 0.0;
            for (long i = 0; i < steps; i++) {
                step_n(a.w, 1);
                step_n(b.w, 1);
                for (int k = 0; k < nb; k++) {
                    /* bodies by index in both worlds: the same scene, the same order */
                    fr_pose pa, pb;
                    fr_body_get_pose(a.w, fr_world_body_at(a.w, k), &pa);
                    fr_body_get_pose(b.w, fr_world_body_at(b.w, k), &pb);
                    worst = fmax(worst, fr_v3_dist(pa.p, pb.p));
                }
            }
            const fr_world_def *def = fr_world_get_def(a.w);
            const double allow = (double)steps * def->solver_tolerance * def->dt;
            fr_world_solver_stats sa, sb;
            fr_world_solver_stats_get(a.w, &sa);
            fr_world_solver_stats_get(b.w, &sb);
            printf(
                "# %s dt %g: positions agree to %.3g m (allowed %.3g); %ld pair models advanced, "
                "%ld factorisations (%ld without), %ld chord steps\n",
                cases[c].scene, dts[d], worst, allow, sa.advanced, sa.factorisations,
                sb.factorisations, sa.chord_steps);
            ck_assert_msg(worst <= allow, "%s dt %g: positions differ by %g m (allowed %g)",
                          cases[c].scene, dts[d], worst, allow);
            /* the kept work is used: most resting pairs advanced, fewer factorisations */
            ck_assert_int_eq(sb.advanced, 0);
            ck_assert_int_eq(sb.chord_steps, 0);
            ck_assert_int_gt(sa.advanced, 0);
            /* (kept factors only for systems of 16 bodies or more: solve.c, FAC_MIN_BODIES) */
            if (sa.bodies >= 16) {
                ck_assert_int_gt(sa.chord_steps, 0);
                ck_assert_int_lt(sa.factorisations, sb.factorisations);
            } else {
                ck_assert_int_eq(sa.chord_steps, 0);
            }
            fr_scene_destroy(a.s);
            fr_scene_destroy(b.s);
        }
}
END_TEST

static Suite *reuse_suite(void)
{
    Suite *s = suite_create("reuse");
    TCase *tc = tcase_create("reuse");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_reuse_same_motion);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(reuse_suite)
