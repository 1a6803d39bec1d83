/* Hand control through the Jacobian (seed 000): the end-effector error becomes joint-target
 * increments by damped least squares, integrated into the PD targets of the tree. */
#include <stdlib.h>
#include <string.h>

#include "fureru/control.h"

struct fr_hand {
    fr_hand_def def;
    int nv, nq;
    double *dtheta; /* [nv] */
    int nchain;
    int *chain; /* links whose joints move, from the hand up */
    bool started;
    fr_vec3 target_pos;
    fr_quat target_rot;
};

fr_hand_def fr_hand_def_default(void)
{
    return (fr_hand_def){
        .link = 0,
        .point = {0, 0, 0},
        .base_link = -1,
        .orientation = false,
        .rate = 50.0,
        .lambda = 0.02,
        .max_step = 0.05,
        .kp = 0.0,
        .kd = 0.0,
    };
}

int fr_hand_create(const fr_tree *t, const fr_hand_def *def, fr_hand **out)
{
    *out = NULL;
    int n = fr_tree_nlinks(t);
    if (!def || def->link < 0 || def->link >= n || def->base_link < -1 || def->base_link >= n ||
        !(def->rate > 0) || !(def->lambda >= 0) || !(def->max_step > 0) ||
        !fr_v3_isfinite(def->point))
        return FR_ERR_INVAL;
    int nchain = 0;
    bool reached = def->base_link == -1;
    for (int j = def->link; j >= 0; j = fr_tree_link_def(t, j)->parent) {
        if (j == def->base_link) {
            reached = true;
            break;
        }
        nchain++;
    }
    if (!reached) return FR_ERR_INVAL;
    fr_hand *h = calloc(1, sizeof *h);
    if (!h) return FR_ERR_NOMEM;
    h->def = *def;
    h->nv = fr_tree_nv(t);
    h->nq = fr_tree_nq(t);
    h->dtheta = calloc((size_t)h->nv + 1, sizeof *h->dtheta);
    h->chain = calloc((size_t)nchain + 1, sizeof *h->chain);
    if (!h->dtheta || !h->chain) {
        fr_hand_destroy(h);
        return FR_ERR_NOMEM;
    }
    for (int j = def->link; j >= 0 && j != def->base_link; j = fr_tree_link_def(t, j)->parent)
        h->chain[h->nchain++] = j;
    h->target_rot = fr_q_identity();
    *out = h;
    return FR_OK;
}

void fr_hand_destroy(fr_hand *h)
{
    if (!h) return;
    free(h->dtheta);
    free(h->chain);
    free(h);
}

void fr_hand_set_target(fr_hand *h, fr_vec3 pos, fr_quat rot)
{
    h->target_pos = pos;
    h->target_rot = fr_q_normalize(rot);
}

void fr_hand_error(const fr_hand *h, const fr_tree_data *d, fr_vec3 *pos_err, fr_vec3 *rot_err)
{
    fr_vec3 p = fr_tree_point_world(d, h->def.link, h->def.point);
    if (pos_err) *pos_err = fr_v3_sub(h->target_pos, p);
    if (rot_err) {
        /* world rotation vector taking the link's orientation to the target */
        fr_quat e = fr_q_mul(h->target_rot, fr_q_conj(d->pose[h->def.link].q));
        if (e.w < 0) e = fr_q(-e.w, -e.x, -e.y, -e.z);
        *rot_err = h->def.orientation ? fr_q_log(e) : fr_v3_zero();
    }
}

int fr_hand_update(fr_hand *h, const fr_tree *t, fr_tree_data *d, double dt)
{
    if (!(dt > 0)) return FR_ERR_INVAL;
    if (!h->started) {
        /* θ_goal starts where the arm is */
        for (int k = 0; k < h->nchain; k++) {
            int j = h->chain[k];
            const fr_link_def *ld = fr_tree_link_def(t, j);
            int qi = fr_tree_link_q_index(t, j), vi = fr_tree_link_v_index(t, j);
            int nq = ld->type == FR_JOINT_SPHERICAL ? 4 : fr_tree_link_nv(t, j);
            if (ld->type == FR_JOINT_FREE) continue;
            for (int c = 0; c < nq; c++) d->q_ref[qi + c] = d->q[qi + c];
            for (int c = 0; c < fr_tree_link_nv(t, j); c++) {
                d->qd_ref[vi + c] = 0;
                if (h->def.kp > 0) d->kp[vi + c] = h->def.kp;
                if (h->def.kd > 0) d->kd[vi + c] = h->def.kd;
            }
        }
        h->started = true;
    }
    fr_vec3 ep, er;
    fr_hand_error(h, d, &ep, &er);
    int err = fr_tree_ik_dls(t, d, h->def.link, h->def.point, h->def.base_link, ep,
                             h->def.orientation ? &er : NULL, h->def.lambda, h->dtheta);
    if (err) return err;
    double a = h->def.rate * dt;
    if (a > 1) a = 1;
    double big = 0;
    for (int i = 0; i < h->nv; i++)
        if (fabs(h->dtheta[i]) > big) big = fabs(h->dtheta[i]);
    if (a * big > h->def.max_step) a = h->def.max_step / big;
    /* free joints take no PD: leave their part of q_ref alone */
    for (int k = 0; k < h->nchain; k++) {
        int j = h->chain[k];
        if (fr_tree_link_def(t, j)->type != FR_JOINT_FREE) continue;
        int vi = fr_tree_link_v_index(t, j);
        for (int c = 0; c < 6; c++) h->dtheta[vi + c] = 0;
    }
    fr_tree_integrate_q(t, d->q_ref, h->dtheta, a, d->q_ref);
    for (int k = 0; k < h->nchain; k++) {
        const fr_link_def *ld = fr_tree_link_def(t, h->chain[k]);
        if (!ld->limited || (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC))
            continue;
        int qi = fr_tree_link_q_index(t, h->chain[k]);
        if (d->q_ref[qi] < ld->q_min) d->q_ref[qi] = ld->q_min;
        if (d->q_ref[qi] > ld->q_max) d->q_ref[qi] = ld->q_max;
    }
    return FR_OK;
}

void fr_hand_controller(fr_world *w, int robot, void *user)
{
    fr_hand_update((fr_hand *)user, fr_world_robot_tree(w, robot), fr_world_robot_data(w, robot),
                   fr_world_get_def(w)->dt);
}
