#include <stdio.h>
#ifndef ROOT
#define ROOT "."
#endif
#include <stdlib.h>
#include <math.h>
#include "fureru/scene.h"
#include "slope_case.h"
#include "fureru/world.h"
#include "fureru/math.h"
/* csweep < cases (sx sy sz yaw mass dt th eps): creep |x(11)-x(1)| per line */
int main(void)
{
    double sx, sy, sz, yaw, mass, dt, thd, eps;
    while (scanf("%lf %lf %lf %lf %lf %lf %lf %lf", &sx, &sy, &sz, &yaw, &mass, &dt, &thd, &eps) ==
           8) {
        fr_scene *s = slope_case_load(sx, sy, sz, yaw, mass, dt, thd, eps, 0);
        if (!s) continue;
        fr_world *w = fr_scene_world(s);
        fr_body_id bid;
        fr_world_find_body(w, "block", &bid);
        long N = (long)(11 / dt + 0.5), N1 = (long)(1 / dt + 0.5);
        fr_pose p1 = {0}, p;
        int rc = 0;
        for (long i = 0; i < N && !rc; i++) {
            if (fr_world_step(w) < 0) rc = 1;
            if (i + 1 == N1) fr_body_get_pose(w, bid, &p1);
            if (getenv("EVERY") && i + 1 > N1 && (i + 1 - N1) % (long)(1 / dt + 0.5) == 0) {
                fr_body_get_pose(w, bid, &p);
                printf("  t %.1f d %.3e\n", (i + 1) * dt, fr_v3_norm(fr_v3_sub(p.p, p1.p)));
            }
        }
        fr_body_get_pose(w, bid, &p);
        double d = fr_v3_norm(fr_v3_sub(p.p, p1.p));
        const char *sn = fr_world_settle_note(w);
        printf("%g %g %g %.4f %g %g %.2f %g  d %.3e rc %d settle %s\n", sx, sy, sz, yaw, mass, dt,
               thd, eps, d, rc, sn && *sn ? "FAIL" : "ok");
        fflush(stdout);
        fr_scene_destroy(s);
    }
}
