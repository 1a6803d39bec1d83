/* ktest sx sy sz yaw mass dt deg eps NSTEP: the block's contact stiffness, fresh builds vs the
 * model's own response */
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
#include "stiff_common.h"
struct kctx {
    const fr_contact_model *m0;
    fr_pose pa, pb;
    fr_vec3 com;
    double dt, mu;
};
/* at a perturbed pose: a fresh build, the step's model's response, the grid */
static void keval(fr_pose pp, fr_vec3 rv, fr_vec3 tv, double t[3], double l[3], double x[3],
                  void *user)
{
    const struct kctx *c = user;
    fr_contact_state s2 = PP->st;
    fr_contact_model m1;
    build(BLK ? c->pa : pp, BLK ? pp : c->pb, &s2, &m1);
    nm(&m1, m1.pn0, c->m0, t);
    fr_vec3 om = rv, vc = tv; /* at c0 the rotation moves nothing */
    if (BLK) {
        om = fr_v3_scale(om, -1);
        vc = fr_v3_scale(vc, -1);
    }
    fr_svec tw = {fr_v3_scale(om, 1 / c->dt), fr_v3_scale(vc, 1 / c->dt)};
    double y[6];
    fr_contact_model_local(c->m0, tw, y);
    fr_contact_response r2;
    fr_contact_respond(c->m0, y, c->dt, c->mu, NULL, -1, 0, &r2);
    nm(c->m0, r2.elastic, c->m0, l);
    exact(pp, c->m0, x);
}

int main(int argc, char **argv)
{
    pair_case pc;
    if (pair_case_start(argc, argv, getenv("NOSETTLE") != NULL, &pc)) return 1;
    const int slot = pc.slot;
    const fr_pose pa = pc.pa, pb = pc.pb;
    const fr_vec3 com = pc.com;
    const double sz = pc.sz, dt = pc.dt, mu = pc.mu;
    fr_contact_model m0 = pc.m0;
    printf("block is %s; m0 npts %d area %.3e depth0/ds %.3f qbeta %.3e %.3e\n", BLK ? "B" : "A",
           m0.npts, m0.area, m0.depth0 / m0.ds, m0.qbeta[0], m0.qbeta[1]);
    for (int q = 0; q < 5; q++)
        printf("  q%d (%+.4e,%+.4e) w %.3e t/ds %.4f n0 %.4e\n", q, m0.px[q], m0.py[q], m0.pw[q],
               m0.pt0[q] / m0.ds, m0.pn0[q]);
    double base[3];
    nm(&m0, m0.pn0, &m0, base);
    double be[3];
    exact(W->state[slot].pose, &m0, be);
    printf("base model N %.6e M %+.4e %+.4e | exact N %.6e M %+.4e %+.4e\n", base[0], base[1],
           base[2], be[0], be[1], be[2]);
    double ea = atof(getenv("EA") ? getenv("EA") : "1e-6"), el = ea * sz;
    struct kctx c = {&m0, pa, pb, com, dt, mu};
    stiffness_run(W->state[slot].pose, &m0, ea, el, slot, com, dt, keval, &c);
    return 0;
}
