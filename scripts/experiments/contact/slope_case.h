/* The experiments' case: config/scenes/slope.yaml with a block of sx × sy × sz m turned `yaw`
 * (rad) about the normal, of `mass` kg, on a slope of `deg` made by tilting gravity, at step dt,
 * μ_s = μ_k = tan θ + eps; placed touching, settled unless `nosettle`. NULL on an error (said). */
#ifndef FR_EXPERIMENTS_SLOPE_CASE_H
#define FR_EXPERIMENTS_SLOPE_CASE_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fureru/scene.h"

#ifndef ROOT
#define ROOT "."
#endif

static fr_scene *slope_case_load(double sx, double sy, double sz, double yaw, double mass,
                                 double dt, double deg, double eps, int nosettle)
{
    double th = deg * M_PI / 180, g = 9.81, mu = tan(th) + eps;
    char b[12][200];
    int n = 0;
    snprintf(b[n++], 200, "world.dt=%g", dt);
    snprintf(b[n++], 200, "world.gravity=[%.17g, 0, %.17g]", g * sin(th), -g * cos(th));
    snprintf(b[n++], 200, "materials.0.mu_s=%.17g", mu);
    snprintf(b[n++], 200, "materials.0.mu_k=%.17g", mu);
    snprintf(b[n++], 200, "materials.1.mu_s=%.17g", mu);
    snprintf(b[n++], 200, "materials.1.mu_k=%.17g", mu);
    snprintf(b[n++], 200, "bodies.block.shapes.0.size=[%.17g, %.17g, %.17g]", sx, sy, sz);
    snprintf(b[n++], 200, "bodies.block.position=[0, 0, %.17g]", sz / 2);
    snprintf(b[n++], 200, "bodies.block.rpy=[0, 0, %.17g]", yaw);
    snprintf(b[n++], 200, "bodies.block.mass=%.17g", mass);
    if (nosettle) snprintf(b[n++], 200, "world.settle=false");
    const char *sets[12];
    for (int i = 0; i < n; i++) sets[i] = b[i];
    fr_scene *s = NULL;
    fr_diag dg;
    if (fr_scene_load(ROOT "/config/scenes/slope.yaml", sets, n, &s, &dg)) {
        printf("loadfail %s\n", dg.msg);
        return NULL;
    }
    return s;
}
/* The same from the command line's sx sy sz yaw mass dt deg eps (argv[1..8]); *sz_out the
 * block's height. */
static fr_scene *slope_case_args(char **argv, int nosettle, double *sx_out, double *sy_out,
                                 double *sz_out, double *dt_out, double *mu_out)
{
    double v[8];
    for (int i = 0; i < 8; i++) v[i] = atof(argv[i + 1]);
    *sx_out = v[0], *sy_out = v[1], *sz_out = v[2], *dt_out = v[5];
    *mu_out = tan(v[6] * M_PI / 180) + v[7];
    return slope_case_load(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], nosettle);
}
#endif
