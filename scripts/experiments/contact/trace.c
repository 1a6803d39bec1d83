/* trace sx sy sz yaw mass dt deg eps NSTEP: per step the block's tilt and its pair's model */
#include <stdio.h>
#ifndef ROOT
#define ROOT "."
#endif
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "fureru/scene.h"
#include "slope_case.h"
#include "fureru/world.h"
#include "fureru/contact.h"
#include "world/world_internal.h"
int main(int argc, char **argv)
{
    if (argc < 10) {
        fprintf(stderr, "usage: %s sx sy sz yaw mass dt deg eps NSTEP\n", argv[0]);
        return 2;
    }
    double sx, sy, sz, dt, mu;
    fr_scene *s = slope_case_args(argv, 1, &sx, &sy, &sz, &dt, &mu);
    if (!s) return 1;
    long nstep = atol(argv[9]);
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
