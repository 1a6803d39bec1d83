/* trace sx sy sz yaw mass dt deg eps NSTEP: per step the block's tilt and its pair's model */
#include <stdio.h>
#ifndef ROOT
#define ROOT "."
#endif
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "fureru/scene.h"
#include "fureru/world.h"
#include "fureru/contact.h"
#include "world/world_internal.h"
int main(int argc, char **argv)
{
    double sx = atof(argv[1]), sy = atof(argv[2]), sz = atof(argv[3]), yaw = atof(argv[4]),
           mass = atof(argv[5]), dt = atof(argv[6]), thd = atof(argv[7]), eps = atof(argv[8]);
    long nstep = atol(argv[9]);
    double th = thd * M_PI / 180, g = 9.81, mu = tan(th) + eps;
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
    snprintf(b[n++], 200, "world.settle=false");
    const char *sets[12];
    for (int i = 0; i < n; i++) sets[i] = b[i];
    fr_scene *s = NULL;
    fr_diag dg;
    if (fr_scene_load(ROOT "/config/scenes/slope.yaml", sets, n, &s, &dg)) {
        printf("loadfail %s\n", dg.msg);
        return 1;
    }
    fr_world *W = fr_scene_world(s);
    fr_body_id bid;
    fr_world_find_body(W, "block", &bid);
    fr_pose p0;
    fr_body_get_pose(W, bid, &p0);
    int every = getenv("EVERY") ? atoi(getenv("EVERY")) : 1;
    for (long i = 0; i < nstep; i++) {
        fr_world_step(W);
        if (i % every) continue;
        fr_pose p;
        fr_body_get_pose(W, bid, &p);
        fr_vec3 rv = fr_q_log(fr_q_mul(p.q, fr_q_conj(p0.q)));
        fri_pair *PP = NULL;
        for (int c = 0; c < W->ncontacts; c++) PP = &W->pairs[W->contacts[c]];
        printf("%4ld rot %+.3e %+.3e %+.3e dx %+.3e", i, rv.x, rv.y, rv.z, p.p.x - p0.p.x);
        if (PP && PP->modeled) {
            const fr_contact_model *m = &PP->model;
            fr_vec3 d = fr_v3_sub(m->point, p.p);
            printf(" | c-com %+.3e %+.3e d0/ds %.3f adv %d sl %d |", d.x, d.y, m->depth0 / m->ds,
                   PP->st.sliding, PP->resp.slip);
            for (int q = 0; q < 5; q++) printf(" %.2f", m->pt0[q] / m->ds);
        }
        printf("\n");
    }
    return 0;
}
