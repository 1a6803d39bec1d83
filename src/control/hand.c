/* Hand control through the Jacobian (seed 000): the end-effector error becomes a joint-angle
 * correction by damped least squares, added to the PD targets. The error is evaluated at the
 * targets (a kinematic Newton iteration on a private copy of the tree's state), so the targets
 * move smoothly whatever the motors do. */
#include <stdlib.h>
#include <string.h>

#include "fureru/control.h"

struct fr_hand {
    fr_hand_def def;
    int nv, nq;
    fr_tree_data *ik; /* the tree at the targets */
    double *dtheta;   /* [nv] */
    double *tmp;      /* [nv] */
    double *pz;       /* [nv] */
    double *goal;     /* [nq]: θ_goal */
    double *prev;     /* [nq]: θ_goal of the previous step */
    double *home;     /* [nq]: posture at the first update */
    double *J;        /* [6·nv] */
    double *zero;     /* [nv] */
    int nchain;
    int *chain; /* links whose joints move, from the hand up */
    bool started;
    fr_vec3 target_pos, ie_pos, ie_rot;
    fr_quat target_rot;
};

fr_hand_def fr_hand_def_default(void)
{
    return (fr_hand_def){
        .link = 0,
        .point = {0, 0, 0},
        .base_link = -1,
        .orientation = false,
        .lambda = 0.02,
        .max_speed = 5.0,
        .iterations = 2,
        .gravity_comp = true,
        .integral = 0.0,
        .posture = 0.1,
        .kp = 0.0,
        .kd = 0.0,
    };
}

int fr_hand_create(const fr_tree *t, const fr_hand_def *def, fr_hand **out)
{
    *out = NULL;
    int n = fr_tree_nlinks(t);
    if (!def || def->link < 0 || def->link >= n || def->base_link < -1 || def->base_link >= n ||
        !(def->lambda >= 0) || !(def->max_speed > 0) || def->iterations < 1 ||
        !(def->integral >= 0) || !(def->posture >= 0 && def->posture <= 1) ||
        !fr_v3_isfinite(def->point))
        return FR_ERR_INVAL;
    int nchain = 0;
    bool reached = def->base_link == -1;
    for (int j = def->link; j >= 0; j = fr_tree_link_def(t, j)->parent) {
        if (j == def->base_link) {
            reached = true;
            break;
        }
        if (fr_tree_link_def(t, j)->type == FR_JOINT_FREE) return FR_ERR_INVAL;
        nchain++;
    }
    if (!reached) return FR_ERR_INVAL;
    fr_hand *h = calloc(1, sizeof *h);
    if (!h) return FR_ERR_NOMEM;
    h->def = *def;
    h->nv = fr_tree_nv(t);
    h->nq = fr_tree_nq(t);
    size_t nv1 = (size_t)h->nv + 1, nq1 = (size_t)h->nq + 1;
    h->ik = fr_tree_data_create(t);
    h->dtheta = calloc(nv1, sizeof(double));
    h->tmp = calloc(nv1, sizeof(double));
    h->pz = calloc(nv1, sizeof(double));
    h->zero = calloc(nv1, sizeof(double));
    h->goal = calloc(nq1, sizeof(double));
    h->prev = calloc(nq1, sizeof(double));
    h->home = calloc(nq1, sizeof(double));
    h->J = calloc(6 * nv1, sizeof(double));
    h->chain = calloc((size_t)nchain + 1, sizeof *h->chain);
    if (!h->ik || !h->dtheta || !h->tmp || !h->pz || !h->zero || !h->goal || !h->prev || !h->home ||
        !h->J || !h->chain) {
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
    fr_tree_data_destroy(h->ik);
    free(h->dtheta);
    free(h->tmp);
    free(h->pz);
    free(h->zero);
    free(h->goal);
    free(h->prev);
    free(h->home);
    free(h->J);
    free(h->chain);
    free(h);
}

void fr_hand_set_target(fr_hand *h, fr_vec3 pos, fr_quat rot)
{
    h->target_pos = pos;
    h->target_rot = fr_q_normalize(rot);
}

/* Position and orientation error of the hand in data d towards (pos, rot). */
static void hand_error(const fr_hand *h, const fr_tree_data *d, fr_vec3 pos, fr_quat rot,
                       fr_vec3 *ep, fr_vec3 *er)
{
    *ep = fr_v3_sub(pos, fr_tree_point_world(d, h->def.link, h->def.point));
    /* world rotation vector taking the link's orientation to the target */
    fr_quat e = fr_q_mul(rot, fr_q_conj(d->pose[h->def.link].q));
    if (e.w < 0) e = fr_q(-e.w, -e.x, -e.y, -e.z);
    *er = h->def.orientation ? fr_q_log(e) : fr_v3_zero();
}

void fr_hand_error(const fr_hand *h, const fr_tree_data *d, fr_vec3 *pos_err, fr_vec3 *rot_err)
{
    fr_vec3 ep, er;
    hand_error(h, d, h->target_pos, h->target_rot, &ep, &er);
    if (pos_err) *pos_err = ep;
    if (rot_err) *rot_err = er;
}

/* Entries of link j's joint in q (spherical: 4). */
static int joint_nq(const fr_tree *t, int j)
{
    return fr_tree_link_def(t, j)->type == FR_JOINT_SPHERICAL ? 4 : fr_tree_link_nv(t, j);
}

/* One damped Newton step of the targets towards (pos, rot), at most `cap` per joint entry. */
static int ik_step(fr_hand *h, const fr_tree *t, fr_vec3 pos, fr_quat rot, double cap)
{
    fr_tree_data *ik = h->ik;
    fr_tree_forward_kinematics(t, ik);
    fr_vec3 ep, er;
    hand_error(h, ik, pos, rot, &ep, &er);
    const fr_vec3 *drot = h->def.orientation ? &er : NULL;
    int err = fr_tree_ik_dls(t, ik, h->def.link, h->def.point, h->def.base_link, ep, drot,
                             h->def.lambda, h->dtheta);
    if (err) return err;
    if (h->def.posture > 0) {
        /* null-space pull towards the home posture: z − J⁺(J z) for the 1-DOF joints */
        int nv = h->nv;
        memset(h->tmp, 0, sizeof(double) * (size_t)nv);
        for (int k = 0; k < h->nchain; k++) {
            const fr_link_def *ld = fr_tree_link_def(t, h->chain[k]);
            if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
            int qi = fr_tree_link_q_index(t, h->chain[k]);
            int vi = fr_tree_link_v_index(t, h->chain[k]);
            h->tmp[vi] = h->def.posture * (h->home[qi] - ik->q[qi]);
        }
        fr_vec3 p = fr_tree_point_world(ik, h->def.link, h->def.point);
        double *Jang = h->J, *Jlin = h->J + 3 * nv;
        fr_tree_point_jacobian(t, ik, h->def.link, p, Jang, Jlin);
        fr_vec3 jl = fr_v3_zero(), ja = fr_v3_zero();
        for (int c = 0; c < nv; c++) {
            double z = h->tmp[c];
            if (z == 0) continue;
            jl = fr_v3_add(jl, fr_v3_scale(fr_v3(Jlin[c], Jlin[nv + c], Jlin[2 * nv + c]), z));
            ja = fr_v3_add(ja, fr_v3_scale(fr_v3(Jang[c], Jang[nv + c], Jang[2 * nv + c]), z));
        }
        /* a (nearly) exact projector: a damped one would leak the posture pull into the task
         * and leave a hand error of order (λ/σ)²·|Jz| */
        err = fr_tree_ik_dls(t, ik, h->def.link, h->def.point, h->def.base_link, jl,
                             h->def.orientation ? &ja : NULL, 1e-6, h->pz);
        if (err) return err;
        for (int i = 0; i < nv; i++) h->dtheta[i] += h->tmp[i] - h->pz[i];
    }
    double big = 0;
    for (int i = 0; i < h->nv; i++)
        if (fabs(h->dtheta[i]) > big) big = fabs(h->dtheta[i]);
    fr_tree_integrate_q(t, ik->q, h->dtheta, big > cap ? cap / big : 1.0, ik->q);
    for (int k = 0; k < h->nchain; k++) {
        const fr_link_def *ld = fr_tree_link_def(t, h->chain[k]);
        if (!ld->limited || (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC))
            continue;
        int qi = fr_tree_link_q_index(t, h->chain[k]);
        if (ik->q[qi] < ld->q_min) ik->q[qi] = ld->q_min;
        if (ik->q[qi] > ld->q_max) ik->q[qi] = ld->q_max;
    }
    return FR_OK;
}

int fr_hand_update(fr_hand *h, const fr_tree *t, fr_tree_data *d, double dt)
{
    if (!(dt > 0)) return FR_ERR_INVAL;
    if (!h->started) {
        memcpy(h->home, d->q, sizeof(double) * (size_t)h->nq);
        memcpy(h->goal, d->q, sizeof(double) * (size_t)h->nq);
        for (int k = 0; k < h->nchain; k++) {
            int vi = fr_tree_link_v_index(t, h->chain[k]);
            for (int c = 0; c < fr_tree_link_nv(t, h->chain[k]); c++) {
                if (h->def.kp > 0) d->kp[vi + c] = h->def.kp;
                if (h->def.kd > 0) d->kd[vi + c] = h->def.kd;
            }
        }
        h->started = true;
    }
    /* the IK target, shifted by the integral of the real hand's error */
    fr_vec3 pos = h->target_pos;
    fr_quat rot = h->target_rot;
    if (h->def.integral > 0) {
        fr_vec3 ep, er;
        hand_error(h, d, h->target_pos, h->target_rot, &ep, &er);
        h->ie_pos = fr_v3_mad(h->ie_pos, h->def.integral * dt, ep);
        h->ie_rot = fr_v3_mad(h->ie_rot, h->def.integral * dt, er);
        pos = fr_v3_add(pos, h->ie_pos);
        rot = fr_q_normalize(fr_q_mul(fr_q_exp(h->ie_rot), rot));
    }
    /* the model at the targets: the real state, the moved joints at θ_goal */
    memcpy(h->ik->q, d->q, sizeof(double) * (size_t)h->nq);
    for (int k = 0; k < h->nchain; k++) {
        int qi = fr_tree_link_q_index(t, h->chain[k]);
        for (int c = 0; c < joint_nq(t, h->chain[k]); c++) h->ik->q[qi + c] = h->goal[qi + c];
    }
    memcpy(h->prev, h->goal, sizeof(double) * (size_t)h->nq);
    double cap = h->def.max_speed * dt / h->def.iterations;
    for (int it = 0; it < h->def.iterations; it++) {
        int err = ik_step(h, t, pos, rot, cap);
        if (err) return err;
    }
    for (int k = 0; k < h->nchain; k++) {
        int j = h->chain[k];
        int qi = fr_tree_link_q_index(t, j), vi = fr_tree_link_v_index(t, j);
        for (int c = 0; c < joint_nq(t, j); c++)
            d->q_ref[qi + c] = h->goal[qi + c] = h->ik->q[qi + c];
        const fr_link_def *ld = fr_tree_link_def(t, j);
        bool one = ld->type == FR_JOINT_REVOLUTE || ld->type == FR_JOINT_PRISMATIC;
        for (int c = 0; c < fr_tree_link_nv(t, j); c++)
            d->qd_ref[vi + c] = one ? (h->goal[qi] - h->prev[qi]) / dt : 0.0;
    }
    if (h->def.gravity_comp) {
        /* gravity torques at the current posture, at rest (qd parked in dtheta meanwhile) */
        memcpy(h->dtheta, d->qd, sizeof(double) * (size_t)h->nv);
        memset(d->qd, 0, sizeof(double) * (size_t)h->nv);
        fr_tree_rnea(t, d, h->zero, h->tmp);
        memcpy(d->qd, h->dtheta, sizeof(double) * (size_t)h->nv);
        for (int k = 0; k < h->nchain; k++) {
            int vi = fr_tree_link_v_index(t, h->chain[k]);
            for (int c = 0; c < fr_tree_link_nv(t, h->chain[k]); c++)
                d->tau[vi + c] = h->tmp[vi + c];
        }
    }
    return FR_OK;
}

void fr_hand_controller(fr_world *w, int robot, void *user)
{
    fr_hand_update((fr_hand *)user, fr_world_robot_tree(w, robot), fr_world_robot_data(w, robot),
                   fr_world_get_def(w)->dt);
}
