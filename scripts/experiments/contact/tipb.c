/* tipb sx sy sz yaw dt mu [T]: the slope's tan θ at which the block tips, as a fraction of its
 * static limit (the distance from the base's centre to its edge along the slope over half the
 * height: (w/h)/cos ψ for a square base yawed by ψ <= 45°), by bisection; a
 * block has tipped when it has turned more than 0.2 rad within T s (default 3) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "fureru/scene.h"
#include "fureru/world.h"
#include "fureru/math.h"
#include "slope_case.h"
static int tips(double sx, double sy, double sz, double yaw, double dt, double mu, double tn,
                double T)
{
    const double th = atan(tn), deg = th * 180 / M_PI;
    fr_scene *s = slope_case_load(sx, sy, sz, yaw, 1, dt, deg, mu - tn, 0);
    if (!s) exit(1);
    fr_world *w = fr_scene_world(s);
    fr_body_id b;
    fr_world_find_body(w, "block", &b);
    fr_pose p0, p;
    fr_body_get_pose(w, b, &p0);
    int tipped = 0;
    const int verbose = getenv("VERBOSE") != NULL;
    if (verbose) printf("settle: %s\n", fr_world_settle_note(w));
    for (long i = 0; i < (long)(T / dt + 0.5) && !tipped; i++) {
        if (fr_world_step(w) < 0) tipped = 1;
        fr_body_get_pose(w, b, &p);
        fr_quat d = fr_q_mul(p.q, fr_q_conj(p0.q));
        /* the turn about any axis but the slope's normal (z) */
        if (2 * hypot(d.x, d.y) > 0.2) tipped = 1;
        if (verbose && (i % (long)(0.1 / dt) == 0 || tipped))
            printf("t %.3f tilt %.3e yaw %.3e dx %.3e %.3e\n", (i + 1) * dt, 2 * hypot(d.x, d.y),
                   2 * d.z, p.p.x - p0.p.x, p.p.y - p0.p.y);
    }
    fr_scene_destroy(s);
    return tipped;
}
int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: tipb sx sy sz yaw dt mu [T]\n");
        return 2;
    }
    const double sx = atof(argv[1]), sy = atof(argv[2]), sz = atof(argv[3]), yaw = atof(argv[4]);
    const double dt = atof(argv[5]), mu = atof(argv[6]), T = argc > 7 ? atof(argv[7]) : 3.0;
    /* where the centre of mass's line, moving down the slope, leaves the base: the rectangle's
     * boundary along the slope's direction at the yaw (not its extent there, the corner's) */
    const double c = fabs(cos(yaw)), sn = fabs(sin(yaw));
    const double lim = fmin(c > 0.0 ? sx / c : INFINITY, sn > 0.0 ? sy / sn : INFINITY) / sz;
    if (getenv("F")) {
        const double f = atof(getenv("F"));
        printf("f %g tips %d\n", f, tips(sx, sy, sz, yaw, dt, mu, f * lim, T));
        return 0;
    }
    double lo = 0.5, hi = 1.05;
    for (int it = 0; it < 12; it++) {
        const double f = 0.5 * (lo + hi);
        if (tips(sx, sy, sz, yaw, dt, mu, f * lim, T))
            hi = f;
        else
            lo = f;
    }
    printf("%g %g %g yaw %g dt %g: tips at %.4f of tan = %.4f\n", sx, sy, sz, yaw, dt,
           0.5 * (lo + hi), lim);
    return 0;
}
