/*
 * The settle's robots (docs/world.md "Settling"): a robot fixed to the world is frozen at its
 * start while the free bodies settle; a floating one settles with them, held until it touches.
 * Build time only: it allocates.
 */
#include <stdlib.h>
#include <string.h>

#include "settle_internal.h"

static bool robot_floats(const fri_robot *rb)
{
    return fr_tree_link_def(rb->tree, 0)->type == FR_JOINT_FREE;
}

int fri_settle_robots_save(fr_world *w, fri_settle_robots *rs)
{
    size_t n = 0;
    for (int r = 0; r < w->nrobots; r++)
        n += (size_t)(fr_tree_nq(w->robots[r].tree) + fr_tree_nv(w->robots[r].tree));
    rs->buf = calloc(n + 1, sizeof *rs->buf);
    rs->cmd = calloc(3 * n + 1, sizeof *rs->cmd); /* (kp, kd, qd_ref, tau: nv; q_ref: nq) */
    rs->root = calloc((size_t)w->nrobots + 1, sizeof *rs->root);
    rs->size = calloc((size_t)w->nrobots + 1, sizeof *rs->size);
    rs->touched = calloc((size_t)w->nrobots + 1, sizeof *rs->touched);
    if (!rs->buf || !rs->cmd || !rs->root || !rs->size || !rs->touched) return FR_ERR_NOMEM;
    double *p = rs->buf, *c = rs->cmd;
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        int nq = fr_tree_nq(rb->tree), nv = fr_tree_nv(rb->tree);
        memcpy(p, rb->data->q, sizeof(double) * (size_t)nq);
        memcpy(p + nq, rb->data->qd, sizeof(double) * (size_t)nv);
        p += nq + nv;
        const double *src[5] = {rb->data->kp, rb->data->kd, rb->data->qd_ref, rb->data->tau,
                                rb->data->q_ref};
        for (int a = 0; a < 5; a++) {
            int len = a < 4 ? nv : nq;
            memcpy(c, src[a], sizeof(double) * (size_t)len);
            c += len;
        }
        rb->settle_frozen = !robot_floats(rb);
        rs->root[r] = w->state[fri_body_slot(w, rb->links[0])].pose;
        for (int l = 0; l < rb->nlinks; l++)
            rs->size[r] =
                fmax(rs->size[r],
                     fr_v3_dist(w->state[fri_body_slot(w, rb->links[l])].pose.p, rs->root[r].p));
    }
    return FR_OK;
}

void fri_settle_robots_reset_one(fr_world *w, const fri_settle_robots *rs, bool with_q, bool rates,
                                 int only)
{
    const double *p = rs->buf;
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        int nq = fr_tree_nq(rb->tree), nv = fr_tree_nv(rb->tree);
        if (only >= 0 && r != only) {
            p += nq + nv;
            continue;
        }
        if (with_q || rb->settle_frozen) memcpy(rb->data->q, p, sizeof(double) * (size_t)nq);
        if (rates)
            memcpy(rb->data->qd, p + nq, sizeof(double) * (size_t)nv);
        else
            memset(rb->data->qd, 0, sizeof(double) * (size_t)nv);
        p += nq + nv;
        fr_world_robot_sync(w, r);
    }
}

void fri_settle_robots_reset(fr_world *w, const fri_settle_robots *rs, bool with_q, bool rates)
{
    fri_settle_robots_reset_one(w, rs, with_q, rates, -1);
}

bool fri_settle_robot_supported(const fr_world *w, int r)
{
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        for (int side = 0; side < 2; side++) {
            const fri_body_model *m = &w->model[side ? p->slot_b : p->slot_a];
            if (m->type == FR_BODY_LINK && m->robot == r) return true;
        }
    }
    return false;
}

void fri_settle_robots_restore_commands(fr_world *w, const fri_settle_robots *rs)
{
    const double *c = rs->cmd;
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        int nq = fr_tree_nq(rb->tree), nv = fr_tree_nv(rb->tree);
        double *dst[5] = {rb->data->kp, rb->data->kd, rb->data->qd_ref, rb->data->tau,
                          rb->data->q_ref};
        for (int a = 0; a < 5; a++) {
            int len = a < 4 ? nv : nq;
            memcpy(dst[a], c, sizeof(double) * (size_t)len);
            c += len;
        }
        fr_tree_data_forget(rb->tree, rb->data);
        fr_world_robot_sync(w, r);
    }
}

void fri_settle_robots_free(fri_settle_robots *rs)
{
    free(rs->buf), free(rs->cmd), free(rs->root), free(rs->size), free(rs->touched);
}
