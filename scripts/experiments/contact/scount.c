/* scount SCENE SECONDS [K=V ...]: steps a scene and prints the solver's counts per step (pair
 * models advanced, geometry tangents measured). TIME=1: also each step's thread CPU time, and its
 * quantiles over steps by how many tangents were measured in them */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "scene_args.h"
#include "fureru/world.h"
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv)
{
    fr_scene *s = scene_args_load(argc, argv, "SCENE SECONDS [K=V ...]");
    if (!s) return 1;
    const int timing = getenv("TIME") != NULL;
    fr_world *w = fr_scene_world(s);
    long n = (long)(atof(argv[2]) / fr_world_get_def(w)->dt + 0.5);
    fr_world_solver_stats a, b, c;
    double *t = calloc(n, sizeof *t), *tk[4];
    long nk[4] = {0};
    for (int k = 0; k < 4; k++) tk[k] = calloc(n, sizeof *t);
    fr_world_solver_stats_get(w, &a);
    c = a;
    for (long i = 0; i < n; i++) {
        const double t0 = now();
        fr_world_step(w);
        t[i] = now() - t0;
        if (!timing) continue;
        fr_world_solver_stats_get(w, &b);
        int k = (int)(b.tangents - c.tangents);
        if (getenv("MOST") && k > 1) printf("step %ld: %d tangents\n", i, k);
        k = k > 3 ? 3 : k;
        tk[k][nk[k]++] = t[i];
        c = b;
    }
    fr_world_solver_stats_get(w, &b);
    if (getenv("TOP")) { /* the body named so: where it ended */
        fr_pose p;
        fr_body_id id;
        fr_world_find_body(w, getenv("TOP"), &id);
        fr_body_get_pose(w, id, &p);
        printf("%s at %.9g %.9g %.9g\n", getenv("TOP"), p.p.x, p.p.y, p.p.z);
    }
    printf("%s: %ld steps, advanced %.2f, tangents %.3f, newton %.2f per step\n", argv[1], n,
           (double)(b.advanced - a.advanced) / n, (double)(b.tangents - a.tangents) / n,
           (double)(b.newton_iterations - a.newton_iterations) / n);
    if (timing) {
        qsort(t, n, sizeof *t, cmp);
        printf("step CPU: p50 %.1f us p99 %.1f us max %.1f us\n", 1e6 * t[n / 2],
               1e6 * t[(long)(0.99 * n)], 1e6 * t[n - 1]);
        for (int k = 0; k < 4; k++) {
            if (!nk[k]) continue;
            qsort(tk[k], nk[k], sizeof *t, cmp);
            printf("  %d%s tangents: %ld steps, p50 %.1f us p99 %.1f us max %.1f us\n", k,
                   k == 3 ? "+" : "", nk[k], 1e6 * tk[k][nk[k] / 2],
                   1e6 * tk[k][(long)(0.99 * nk[k])], 1e6 * tk[k][nk[k] - 1]);
        }
    }
    fr_scene_destroy(s);
    return 0;
}
