/* Whole hexapod world step (contacts + gait controller + ABA + link sync) of
 * config/scenes/hexapod.yaml: median / p90 / max wall-clock time per step, and, for callgrind,
 * a mode that only runs a given number of steps (callgrind.sh subtracts a zero-step run).
 *   bench_robot SCENE [--steps N] [--warmup S] [--only world|gait] [--set PATH=VALUE ...]
 * --only gait times fr_gait_update alone (on the walking robot's state, restored each call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/control.h"
#include "fureru/scene.h"
#include "scene/robots.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *scene = NULL, *only = "world";
    const char *sets[32];
    int nsets = 0;
    long steps = 20000;
    double warmup = 1.0;
    bool timing = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = atol(argv[++i]);
            timing = false; /* callgrind mode: no clocks, just the work */
        } else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--set") && i + 1 < argc && nsets < 32)
            sets[nsets++] = argv[++i];
        else if (argv[i][0] == '-' || scene) {
            fprintf(stderr, "bench_robot: unknown or incomplete argument '%s'\n", argv[i]);
            scene = NULL;
            break;
        } else
            scene = argv[i];
    }
    if (!scene || steps < 0 || (timing && steps < 1)) {
        fprintf(stderr, "usage: bench_robot SCENE [--steps N] [--only world|gait]\n");
        return 2;
    }
    fr_scene *s;
    fr_diag d;
    if (fr_scene_load(scene, sets, nsets, &s, &d)) {
        fr_diag_print(&d, stderr);
        return 2;
    }
    fr_world *w = fr_scene_world(s);
    for (long k = 0; k < (long)(warmup / fr_world_get_def(w)->dt); k++)
        if (fr_world_step(w)) return 1;
    bool gait_only = !strcmp(only, "gait");
    fr_gait *g = fri_scene_robot_gait((fri_scene *)s, "hexapod");
    const fr_tree *t = fr_world_robot_tree(w, 0);
    fr_tree_data *td = fr_world_robot_data(w, 0);
    if (gait_only && !g) {
        fprintf(stderr, "no gait controller on a robot named 'hexapod'\n");
        return 2;
    }
    double *lat = timing ? malloc(sizeof(double) * (size_t)steps) : NULL;
    fr_world_solver_stats st0, st1;
    fr_world_solver_stats_get(w, &st0);
    double dt = fr_world_get_def(w)->dt;
    for (long k = 0; k < steps; k++) {
        double t0 = timing ? now() : 0;
        if (gait_only)
            fr_gait_update(g, t, td, dt);
        else if (fr_world_step(w))
            return 1;
        if (timing) lat[k] = now() - t0;
    }
    fr_world_solver_stats_get(w, &st1);
    if (!timing && !gait_only && steps > 0) /* (callgrind mode: the work, no clocks) */
        printf("%s: %ld world steps untimed, %.3f articulated steps and %.3f revisions per step, "
               "%ld steps unconverged\n",
               scene, steps, (double)(st1.tree_steps - st0.tree_steps) / (double)steps,
               (double)(st1.tree_revisions - st0.tree_revisions) / (double)steps,
               st1.unconverged - st0.unconverged);
    if (timing) {
        qsort(lat, (size_t)steps, sizeof *lat, cmp);
        printf("%s %s: %ld steps, median %.2f us, p90 %.2f us, p99 %.2f us, max %.2f us "
               "(contacts at the end: %d)\n",
               scene, gait_only ? "gait controller" : "world step", steps, 1e6 * lat[steps / 2],
               1e6 * lat[steps * 9 / 10], 1e6 * lat[steps * 99 / 100], 1e6 * lat[steps - 1],
               fr_world_contact_count(w));
        if (!gait_only)
            printf("  per step: %.3f articulated steps, %.3f revisions of one; %ld steps "
                   "unconverged\n",
                   (double)(st1.tree_steps - st0.tree_steps) / (double)steps,
                   (double)(st1.tree_revisions - st0.tree_revisions) / (double)steps,
                   st1.unconverged - st0.unconverged);
        free(lat);
    }
    fr_scene_destroy(s);
    return 0;
}
