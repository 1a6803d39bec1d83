/*
 * Constraint rows on articulated trees (docs/constraint.md, "Rows on articulated trees"): joints
 * whose body is a robot link (link–body, link–world, link–link of one tree: a closed loop, or of
 * two trees) and the URDF mimic joints, in the world's constraint solver.
 *
 * A tree is one generalised body of the solver: its velocity is qd, a row's side on it is the
 * row's spatial block j at the link body's centre of mass pulled back through the link's
 * Jacobian, g = J_linkᵀ j (nv), and its response column is gt = R g with R the tree's inverse
 * inertia from the articulated-body recursion (fr_tree_impulse_response: O(n) per row, no mass
 * matrix formed). A_ii = g·gt exactly; a sweep's row update costs O(nv) (w_i = g·Δqd, then
 * Δqd += gt·Δλ). The velocity stage runs at the step's start configuration q0 with the
 * articulated inertias of the tree's own (Euler) step, so an impulse acts on the step as a force
 * inside it would, implicit PD, hard limits and contact inertias included; the tree's qd⁺ then
 * gets Δqd and its positions are integrated again from q0. The position projection uses
 * R = M(q)⁻¹ at the current configuration and moves q ⊕ Δ.
 */
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

int fri_world_constraint_reserve(fr_world *w, int extra)
{
    if (extra <= 0) return FR_OK;
    int n = w->max_crows + extra;
    fr_crow *rows = calloc((size_t)n, sizeof *rows);
    int *own = calloc((size_t)n, sizeof *own), *slot = calloc((size_t)n, sizeof *slot);
    double *kin = calloc((size_t)n, sizeof *kin);
    if (!rows || !own || !slot || !kin) {
        free(rows);
        free(own);
        free(slot);
        free(kin);
        return FR_ERR_NOMEM;
    }
    free(w->crows_heap);
    free(w->crow_owner_heap);
    free(w->crow_slot_heap);
    free(w->crow_kin_heap);
    w->crows = w->crows_heap = rows;
    w->crow_owner = w->crow_owner_heap = own;
    w->crow_slot = w->crow_slot_heap = slot;
    w->crow_kin = w->crow_kin_heap = kin;
    w->max_crows = n;
    return FR_OK;
}

void fri_world_loops_destroy(fr_world *w)
{
    for (int j = 0; j < w->njoints; j++) {
        free(w->joints[j].gbuf);
        w->joints[j].gbuf = NULL;
    }
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        free(rb->cdq);
        free(rb->mim_fv);
        rb->cdq = NULL;
        rb->mim_fv = NULL;
    }
    free(w->crows_heap);
    free(w->crow_owner_heap);
    free(w->crow_slot_heap);
    free(w->crow_kin_heap);
    w->crows_heap = NULL;
    w->crow_owner_heap = w->crow_slot_heap = NULL;
    w->crow_kin_heap = NULL;
}

/* The robot's buffers (one block): Δqd, qd*, the Jacobian scratch and its mimic constraints. */
static int robot_buffers(fri_robot *rb, int nmim)
{
    if (rb->cdq) return FR_OK;
    int nv = fr_tree_nv(rb->tree);
    size_t nd = (size_t)nv * 14 + (size_t)nmim * (3 + 2 * (size_t)nv) + 1;
    rb->cdq = calloc(nd, sizeof(double));
    rb->mim_fv = calloc(4 * (size_t)nmim + 1, sizeof(int));
    if (!rb->cdq || !rb->mim_fv) {
        free(rb->cdq);
        free(rb->mim_fv);
        rb->cdq = NULL;
        rb->mim_fv = NULL;
        return FR_ERR_NOMEM;
    }
    rb->cqd_star = rb->cdq + nv;
    rb->cjac = rb->cqd_star + nv;
    rb->mim_mult = rb->cjac + 12 * (size_t)nv;
    rb->mim_off = rb->mim_mult + nmim;
    rb->mim_lam = rb->mim_off + nmim;
    rb->mim_buf = rb->mim_lam + nmim;
    rb->cjac_stamp[0] = rb->cjac_stamp[1] = -1;
    rb->mim_lv = rb->mim_fv + nmim;
    rb->mim_fq = rb->mim_lv + nmim;
    rb->mim_lq = rb->mim_fq + nmim;
    rb->cb = -1;
    return FR_OK;
}

int fri_world_robot_loops_init(fr_world *w, int r)
{
    fri_robot *rb = &w->robots[r];
    const fr_tree *t = rb->tree;
    rb->cb = -1;
    int nmim = 0;
    for (int i = 0; i < rb->nlinks; i++) {
        const fr_link_def *ld = fr_tree_link_def(t, i);
        if (ld->mimic_joint && fr_tree_joint_find(t, ld->mimic_joint) >= 0) nmim++;
    }
    if (nmim == 0) return FR_OK;
    int err = robot_buffers(rb, nmim);
    if (!err) err = fri_world_constraint_reserve(w, nmim);
    if (err) return err;
    for (int i = 0; i < rb->nlinks; i++) {
        const fr_link_def *ld = fr_tree_link_def(t, i);
        int l = ld->mimic_joint ? fr_tree_joint_find(t, ld->mimic_joint) : -1;
        if (l < 0) continue;
        int k = rb->nmim++;
        rb->mim_fv[k] = fr_tree_link_v_index(t, i);
        rb->mim_lv[k] = fr_tree_link_v_index(t, l);
        rb->mim_fq[k] = fr_tree_link_q_index(t, i);
        rb->mim_lq[k] = fr_tree_link_q_index(t, l);
        rb->mim_mult[k] = ld->mimic_multiplier;
        rb->mim_off[k] = ld->mimic_offset;
    }
    rb->constrained = true;
    rb->data->mimic_external = true; /* the world's solver holds them (loops.c) */
    return FR_OK;
}

int fri_loop_joint_init(fr_world *w, fri_joint *jt, int sa, int sb)
{
    jt->robot_a = jt->robot_b = jt->link_a = jt->link_b = -1;
    jt->gbuf = NULL;
    int nva = 0, nvb = 0;
    if (w->model[sa].type == FR_BODY_LINK) {
        jt->robot_a = w->model[sa].robot;
        jt->link_a = w->model[sa].link;
        nva = fr_tree_nv(w->robots[jt->robot_a].tree);
    }
    if (sb >= 0 && w->model[sb].type == FR_BODY_LINK) {
        jt->robot_b = w->model[sb].robot;
        jt->link_b = w->model[sb].link;
        nvb = fr_tree_nv(w->robots[jt->robot_b].tree);
    }
    if (nva + nvb == 0) return FR_OK;
    for (int side = 0; side < 2; side++) {
        int r = side ? jt->robot_b : jt->robot_a;
        if (r < 0) continue;
        int err = robot_buffers(&w->robots[r], 0);
        if (err) return err;
        w->robots[r].constrained = true;
    }
    jt->gbuf = calloc((size_t)FRI_JOINT_ROWS * 2 * (size_t)(nva + nvb) + 1, sizeof(double));
    return jt->gbuf ? FR_OK : FR_ERR_NOMEM;
}

int fri_loop_body(fr_world *w, int slot, bool position)
{
    int r = w->model[slot].robot;
    if (r < 0 || r >= w->nrobots) return -1;
    fri_robot *rb = &w->robots[r];
    if (!rb->constrained) return -1;
    if (rb->cb >= 0) return rb->cb;
    const fr_tree *t = rb->tree;
    fr_tree_data *d = rb->data;
    int nq = fr_tree_nq(t), nv = fr_tree_nv(t);
    if (!position) {
        /* the tree has stepped to q⁺: keep its qd⁺ as v* and go back to q0 for the rows */
        memcpy(rb->cqd_star, d->qd, sizeof(double) * (size_t)nv);
        memcpy(rb->q_new, d->q, sizeof(double) * (size_t)nq);
        memcpy(d->q, rb->q_save, sizeof(double) * (size_t)nq);
    }
    fr_tree_response_prepare(t, d, !position);
    rb->cjac_stamp[0] = rb->cjac_stamp[1] = -1; /* kinematics redone: Jacobians stale */
    int k = w->ncb++;
    rb->cb = k;
    w->cb_slot[k] = -(r + 1);
    fr_cbody *b = &w->cbodies[k];
    memset(b, 0, sizeof *b);
    memset(rb->cdq, 0, sizeof(double) * (size_t)nv);
    b->ndof = nv;
    b->dq = rb->cdq;
    w->cb_vstar[k] = fr_sv_zero();
    return k;
}

double fri_loop_jacobian(fr_world *w, int slot, fr_svec j, double *g, bool add)
{
    fri_robot *rb = &w->robots[w->model[slot].robot];
    const fr_tree *t = rb->tree;
    int nv = fr_tree_nv(t);
    /* the link's Jacobian at its centre of mass, kept for the joint's other rows (two entries:
     * a loop's rows alternate between its two links); valid while the tree is not moved */
    int e = rb->cjac_slot[0] == slot && rb->cjac_stamp[0] == w->cstamp   ? 0
            : rb->cjac_slot[1] == slot && rb->cjac_stamp[1] == w->cstamp ? 1
                                                                         : -1;
    if (e < 0) {
        e = rb->cjac_next;
        rb->cjac_next ^= 1;
        int link = w->model[slot].link;
        fr_vec3 c = fr_pose_apply(rb->data->pose[link], fr_tree_link_def(t, link)->com);
        double *J = rb->cjac + (size_t)e * 6 * (size_t)nv;
        fr_tree_point_jacobian(t, rb->data, link, c, J, J + 3 * nv);
        double jn = 0.0;
        for (int k = 0; k < 6 * nv; k++) jn += J[k] * J[k];
        rb->cjac_norm[e] = jn;
        rb->cjac_slot[e] = slot;
        rb->cjac_stamp[e] = w->cstamp;
    }
    const double *Ja = rb->cjac + (size_t)e * 6 * (size_t)nv, *Jl = Ja + 3 * nv;
    for (int k = 0; k < nv; k++) {
        double s = j.ang.x * Ja[k] + j.ang.y * Ja[nv + k] + j.ang.z * Ja[2 * nv + k] +
                   j.lin.x * Jl[k] + j.lin.y * Jl[nv + k] + j.lin.z * Jl[2 * nv + k];
        g[k] = add ? g[k] + s : s;
    }
    return fr_sv_dot(j, j) * rb->cjac_norm[e];
}

void fri_loop_response(fr_world *w, int r, const double *g, double *gt)
{
    fri_robot *rb = &w->robots[r];
    int nv = fr_tree_nv(rb->tree);
    bool zero = true;
    for (int k = 0; k < nv && zero; k++) zero = g[k] == 0.0;
    if (zero) /* a row the tree holds (held, constraints.c): nothing to answer */
        memset(gt, 0, sizeof(double) * (size_t)nv);
    else
        fr_tree_impulse_response(rb->tree, rb->data, g, gt);
}

void fri_loop_finish(fr_world *w, bool position)
{
    const double h = w->h;
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        if (rb->cb < 0) continue;
        const fr_tree *t = rb->tree;
        fr_tree_data *d = rb->data;
        int nv = fr_tree_nv(t);
        if (position) {
            fr_tree_integrate_q(t, d->q, rb->cdq, 1.0, d->q);
        } else {
            for (int k = 0; k < nv; k++) d->qd[k] = rb->cqd_star[k] + rb->cdq[k];
            fr_tree_impulse_forces(t, d, rb->cdq, h);
            if (d->integrator == FR_INTEGRATOR_EULER) /* q⁺ = q0 ⊕ qd⁺·dt, as the step does */
                fr_tree_integrate_q(t, rb->q_save, d->qd, h, d->q);
            else /* Verlet's q⁺ came from its mid-step velocity: the impulse's share on top */
                fr_tree_integrate_q(t, rb->q_new, rb->cdq, h, d->q);
        }
        fr_world_robot_sync(w, r);
        rb->cb = -1;
    }
}

/* ---------------------------------------------------------------- rows */

/* A tree side whose Jacobian is round-off next to its parts (|g|² <= 1e-24·ref: the direction
 * the tree's own joints already hold, e.g. a planar loop's out-of-plane rows, or a hinge on a
 * link's own joint axis) moves nothing: exactly zero, so that its 1e-34 diagonal does not make
 * a 1e34 step. */
static void held(double *g, int n, double ref)
{
    double s = 0.0;
    for (int k = 0; k < n; k++) s += g[k] * g[k];
    if (s <= 1e-24 * ref)
        for (int k = 0; k < n; k++) g[k] = 0.0;
}

/* The generalised sides of row r (owner's joint, row slot) on robot links: g = J_linkᵀ·j and
 * gt = R g per tree (a row with both sides on one tree: one side, the Jacobians summed). Returns
 * J·v* of the row (v*: the trees' qd⁺ before the impulses, the other side's v* or set motion). */
double fri_loop_sides(fr_world *w, fr_crow *r, int owner, int slot, int sa, int sb)
{
    fri_joint *jt = &w->joints[owner];
    int nva = jt->robot_a >= 0 ? fr_tree_nv(w->robots[jt->robot_a].tree) : 0;
    int nvb = jt->robot_b >= 0 ? fr_tree_nv(w->robots[jt->robot_b].tree) : 0;
    double *base = jt->gbuf + (size_t)slot * 2 * (size_t)(nva + nvb);
    double *ga = base, *gta = ga + nva, *gb = gta + nva, *gtb = gb + nvb;
    bool one = jt->robot_a >= 0 && jt->robot_a == jt->robot_b;
    double jv = 0.0;
    if (jt->robot_a >= 0) {
        double ref = fri_loop_jacobian(w, sa, r->ja, ga, false);
        if (one) {
            ref += fri_loop_jacobian(w, sb, r->jb, ga, true);
            r->b = -1;
        }
        held(ga, nva, ref);
        fri_loop_response(w, jt->robot_a, ga, gta);
        r->ga = ga;
        r->gta = gta;
        const fri_robot *rb = &w->robots[jt->robot_a];
        for (int k = 0; k < nva; k++) jv += ga[k] * rb->cqd_star[k];
    } else if (r->a >= 0) {
        jv += fr_sv_dot(r->ja, w->cb_vstar[r->a]);
    } else if (sa >= 0) {
        jv += fr_sv_dot(r->ja, fri_body_nu(w, sa));
    }
    if (one) return jv;
    if (jt->robot_b >= 0) {
        held(gb, nvb, fri_loop_jacobian(w, sb, r->jb, gb, false));
        fri_loop_response(w, jt->robot_b, gb, gtb);
        r->gb = gb;
        r->gtb = gtb;
        const fri_robot *rb = &w->robots[jt->robot_b];
        for (int k = 0; k < nvb; k++) jv += gb[k] * rb->cqd_star[k];
    } else if (r->b >= 0) {
        jv += fr_sv_dot(r->jb, w->cb_vstar[r->b]);
    } else if (sb >= 0) {
        jv += fr_sv_dot(r->jb, fri_body_nu(w, sb));
    }
    return jv;
}

/* The mimic constraints of the constrained robots, q_f − m·q_l − o = 0, as rows in generalised
 * coordinates: g = e_f − m·e_l. Velocity rows carry the position error over the step
 * (w = g·qd⁺ + C/dt: with the Euler update q⁺ = q0 + dt·qd⁺ the follower lands on the
 * constraint to round-off, as the tree's own mimic solve does); the projection takes C. */
void fri_loop_mimic_rows(fr_world *w, bool position, double *max_err)
{
    const double h = w->h;
    for (int r = 0; r < w->nrobots; r++) {
        fri_robot *rb = &w->robots[r];
        if (rb->nmim == 0) continue;
        const double *q = rb->data->q;
        if (position && rb->cb < 0) {
            /* the velocity rows land the followers on their constraints to round-off: a tree
             * that no other row moves is prepared for the projection only if one is off */
            double e = 0.0;
            for (int k = 0; k < rb->nmim; k++)
                e = fmax(e, fabs(q[rb->mim_fq[k]] - rb->mim_mult[k] * q[rb->mim_lq[k]] -
                                 rb->mim_off[k]));
            if (e <= FRI_PROJECT_TOL) {
                *max_err = fmax(*max_err, e);
                continue;
            }
        }
        int slot = fri_body_slot(w, rb->links[0]);
        int cb = slot >= 0 ? fri_loop_body(w, slot, position) : -1;
        if (cb < 0) continue;
        int nv = fr_tree_nv(rb->tree);
        for (int k = 0; k < rb->nmim; k++) {
            double C = q[rb->mim_fq[k]] - rb->mim_mult[k] * q[rb->mim_lq[k]] - rb->mim_off[k];
            if (position) *max_err = fmax(*max_err, fabs(C));
            if (w->ncrows >= w->max_crows) {
                w->cstats.dropped++;
                return;
            }
            double *g = rb->mim_buf + (size_t)k * 2 * (size_t)nv, *gt = g + nv;
            memset(g, 0, sizeof(double) * (size_t)nv);
            g[rb->mim_fv[k]] = 1.0;
            g[rb->mim_lv[k]] -= rb->mim_mult[k];
            fri_loop_response(w, r, g, gt);
            int i = w->ncrows++;
            fr_crow *row = &w->crows[i];
            memset(row, 0, sizeof *row);
            w->crow_owner[i] = w->def.max_joints + r;
            w->crow_slot[i] = k;
            row->a = cb;
            row->b = -1;
            row->ga = g;
            row->gta = gt;
            row->normal = -1;
            row->lo = -INFINITY;
            row->hi = INFINITY;
            if (position) {
                row->rhs = C;
            } else {
                row->rhs = rb->cqd_star[rb->mim_fv[k]] -
                           rb->mim_mult[k] * rb->cqd_star[rb->mim_lv[k]] + C / h;
                row->lambda = rb->mim_lam[k];
            }
        }
    }
}

/* The rate J·u of a row's side at the step's start (u0) or end (u⁺), for the motors' work. */
double fri_loop_side_rate(const fr_world *w, int bi, fr_svec J, const double *g, bool end)
{
    const fr_cbody *b = &w->cbodies[bi];
    int s = w->cb_slot[bi];
    if (b->ndof > 0) {
        const fri_robot *rb = &w->robots[-s - 1];
        double x = 0.0;
        for (int k = 0; k < b->ndof; k++)
            x += g[k] * (end ? rb->cqd_star[k] + rb->cdq[k] : rb->qd_save[k]);
        return x;
    }
    if (end) return fr_sv_dot(J, fr_sv_add(w->cb_vstar[bi], b->dnu));
    const fri_body_state *bs = &w->state[s];
    return fr_sv_dot(J, fr_sv(bs->angvel, bs->vel));
}
