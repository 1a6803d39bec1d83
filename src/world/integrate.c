/* Rigid-body integration: symplectic Euler for translation (along a slide, the step's mean
 * velocity); for rotation an angular impulse
 * followed by the implicit midpoint rule on the torque-free Euler equations (see world.h). */
#include "world_internal.h"

/*
 * Torque-free step in the body frame: the implicit midpoint rule on dL/dt = L × ω, ω = I⁻¹L.
 * With h = dt/2 and Lm = (L0 + L1)/2 it reads (1 + h[ωm]×) Lm = L0, ωm = I⁻¹Lm; we solve that for
 * Lm by Newton with backtracking (so large h|ω| cannot overshoot), then L1 = 2Lm − L0. The map
 * L0 → L1 is the Cayley rotation (1 + hΩ)⁻¹(1 − hΩ), Ω = [ωm]×: a rotation by −2·atan(h|ωm|)
 * about ωm, so the body turns by +2·atan(h|ωm|) about ωm and R·L stays fixed in the world.
 * Returns false when Newton does not converge (the caller halves the step).
 */
static fr_vec3 mid_residual(const fr_mat3 *Iinv, fr_vec3 Lm, fr_vec3 L0, double h)
{
    return fr_v3_sub(fr_v3_add(Lm, fr_v3_scale(fr_v3_cross(fr_m3_mulv(*Iinv, Lm), Lm), h)), L0);
}

static bool midpoint_solve(const fr_mat3 *Iinv, fr_vec3 L0, double dt, fr_vec3 *Lm_out)
{
    const double h = 0.5 * dt, tol = 1e-15 * fr_v3_norm(L0);
    fr_vec3 Lm = L0;
    fr_vec3 F = mid_residual(Iinv, Lm, L0, h);
    double fn = fr_v3_norm(F);
    /* slow turning (h|ω| small, a resting body's): the fixed point Lm ← L0 − h·ωm × Lm contracts
     * by about h|ω| per step, and two or three of them reach the tolerance without Newton's
     * Jacobian; taken only while they contract tenfold */
    for (int it = 0; it < 4 && fn > tol; it++) {
        fr_vec3 trial = fr_v3_sub(Lm, F);
        fr_vec3 Ft = mid_residual(Iinv, trial, L0, h);
        double ftn = fr_v3_norm(Ft);
        if (!(ftn <= 0.1 * fn)) break;
        Lm = trial;
        F = Ft;
        fn = ftn;
    }
    for (int it = 0; it < 30 && fn > tol; it++) {
        fr_vec3 wm = fr_m3_mulv(*Iinv, Lm);
        /* dF/dLm = 1 + h([ωm]× − [Lm]× I⁻¹) */
        fr_mat3 J =
            fr_m3_add(fr_m3_identity(),
                      fr_m3_scale(fr_m3_sub(fr_m3_skew(wm), fr_m3_mul(fr_m3_skew(Lm), *Iinv)), h));
        fr_mat3 Ji;
        if (!fr_m3_inverse(J, &Ji)) return false;
        fr_vec3 step = fr_m3_mulv(Ji, F);
        double t = 1.0;
        for (int ls = 0; ls < 30; ls++, t *= 0.5) {
            fr_vec3 trial = fr_v3_mad(Lm, -t, step);
            fr_vec3 Ft = mid_residual(Iinv, trial, L0, h);
            double ftn = fr_v3_norm(Ft);
            if (ftn < fn || ftn <= tol) {
                Lm = trial;
                F = Ft;
                fn = ftn;
                break;
            }
        }
    }
    if (!(fn <= 1e-12 * fr_v3_norm(L0)) && fn > 0) return false;
    *Lm_out = Lm;
    return true;
}

/* Rotate the body (orientation q, body momentum *Lb) torque-free over dt; halves the step when
 * the implicit solve fails, down to dt/16. */
static void rotate_free(const fr_mat3 *Iinv, fr_quat *q, fr_vec3 *Lb, double dt, int depth)
{
    fr_vec3 Lm;
    if (!midpoint_solve(Iinv, *Lb, dt, &Lm)) {
        if (depth < 4) {
            rotate_free(Iinv, q, Lb, 0.5 * dt, depth + 1);
            rotate_free(Iinv, q, Lb, 0.5 * dt, depth + 1);
            return;
        }
        Lm = *Lb; /* last resort: explicit rotation at the current rate */
    }
    fr_vec3 wm = fr_m3_mulv(*Iinv, Lm);
    double n = fr_v3_norm(wm);
    if (n == 0.0) return;
    double angle = 2.0 * atan(0.5 * dt * n);
    fr_vec3 rot = fr_v3_scale(wm, angle / n);
    /* L1 = R(−rot)·L0 exactly, so that world momentum is kept to round-off */
    const fr_quat e = fr_q_exp(rot);
    *Lb = fr_q_unrotate(e, *Lb);
    *q = fr_q_normalize(fr_q_mul(*q, e));
}

void fri_rotate_free(const fr_mat3 *Iinv, fr_quat *q, fr_vec3 *Lb, double dt)
{
    rotate_free(Iinv, q, Lb, dt, 0);
}

/*
 * Where a body slides, the forces along its slide are kinetic friction (μ_k·N), gravity's share
 * and springs: smooth over the step, unlike the stiff normal law and a sticking bond. Moved by its
 * end velocity (the symplectic step) it falls ½·a·h² short of the exact path each step, and a
 * slide stopped short of v²/(2μg) by v·h/2 (2.5 % at 1 m/s, μ 0.5, 5 ms). So along the plane of
 * its contacts its position follows the mean of the step's start and end velocities (exact for
 * constant forces, second order), and in the step where its slip ends (it re-sticks) that mean
 * over the part of the step it still slid, τ = |Δv|/a with a the last step's deceleration. The
 * normal keeps the backward-Euler position that damps the stiff law. Bodies held by a sticking
 * bond, by joints or by contacts with different normals keep the symplectic step, and so do the
 * bodies of an island nothing holds (fri_world_sys_free): two bodies sliding on each other in
 * free space, each moved by its own correction, lost 4.4e-7 of their angular momentum at a loose
 * tolerance (test_collision_conserves_momentum).
 */
enum { FRI_SLIDE_NONE, FRI_SLIDE_SLIP, FRI_SLIDE_RESTICK, FRI_SLIDE_HELD };
#define SLIDE_NORMAL_SHARE 0.1

static void slide_merge(fri_slide *sl, int kind, fr_vec3 n)
{
    if (sl->kind == FRI_SLIDE_HELD) return;
    if (sl->kind == FRI_SLIDE_NONE) {
        sl->kind = kind;
        sl->n = n;
        return;
    }
    if (fabs(fr_v3_dot(sl->n, n)) < 1.0 - 1e-9) kind = FRI_SLIDE_HELD; /* a second plane */
    if (kind > sl->kind) sl->kind = kind;
}

/* The root of body k's cluster (path halving). */
static int slide_find(fri_slide *sl, int k)
{
    while (sl[k].root != k) {
        sl[k].root = sl[sl[k].root].root;
        k = sl[k].root;
    }
    return k;
}

static void slide_union(fri_slide *sl, int a, int b)
{
    a = slide_find(sl, a), b = slide_find(sl, b);
    if (a == b) return;
    sl[b].root = a;
    sl[a].m += sl[b].m;
}

/* A loaded bond between two bodies of the implicit system that held through the step. */
static bool stuck_inside(const fri_pair *p, int ka, int kb)
{
    return ka >= 0 && kb >= 0 && p->modeled && p->resp.normal > 0.0 && !p->resp.slip &&
           !p->model.sliding;
}

/* Returns whether any body's position is corrected (a resting stack's step skips the rest). */
static bool slide_corrections(fr_world *w)
{
    const double h = w->h;
    bool any = false;
    for (int c = 0; c < w->ncontacts && !any; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        any = p->modeled && p->resp.normal > 0.0 && (p->resp.slip || p->model.sliding);
    }
    if (!any) {
        for (int k = 0; k < w->nsys; k++) {
            fri_body_state *s = &w->state[w->sys_slot[k]];
            s->slide_acc = fr_v3_zero();
            s->slide_spin = 0.0;
        }
        return false;
    }
    for (int k = 0; k < w->nsys; k++)
        w->sys_slide[k] = (fri_slide){.m = w->model[w->sys_slot[k]].mass, .root = k};
    /* Bodies stuck to each other move as one (a block carried on a block that slides): their
     * bonds' forces are what keeps them together at the cluster's constant deceleration, so the
     * cluster slides (or is held) by its contacts with everything else. */
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        const int ka = w->sys_index[p->slot_a], kb = w->sys_index[p->slot_b];
        if (stuck_inside(p, ka, kb)) slide_union(w->sys_slide, ka, kb);
    }
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!p->modeled || !(p->resp.normal > 0.0)) continue;
        const int ka = w->sys_index[p->slot_a], kb = w->sys_index[p->slot_b];
        if (stuck_inside(p, ka, kb)) continue;
        /* (a slide that ends stuck, under μ_k or taken again under μ_s) */
        int kind = p->resp.slip       ? FRI_SLIDE_SLIP
                   : p->model.sliding ? FRI_SLIDE_RESTICK
                                      : FRI_SLIDE_HELD;
        const double fk = kind == FRI_SLIDE_RESTICK ? p->model.mu_k * p->resp.normal : 0.0;
        for (int side = 0; side < 2; side++) {
            const int k = side ? kb : ka;
            if (k < 0) continue;
            fri_slide *r = &w->sys_slide[slide_find(w->sys_slide, k)];
            slide_merge(r, kind, p->model.normal);
            r->fk += fk;
        }
    }
    /* a spring's force changes with the position: there the symplectic step's own accuracy is
     * better (a stick-slip's oscillating slip starts and ends at rest, and its amplitude is kept
     * to 1e-5 of it; the mean velocity gained 2e-3) */
    for (int i = 0; i < w->nsprings; i++) {
        const int slot = fri_body_slot(w, w->springs[i].def.body);
        if (slot >= 0 && w->sys_index[slot] >= 0)
            w->sys_slide[slide_find(w->sys_slide, w->sys_index[slot])].kind = FRI_SLIDE_HELD;
    }
    for (int k = 0; k < w->nsys; k++) /* joints (or constraint contacts) on a member */
        if (w->cb_of_slot[w->sys_slot[k]] >= 0)
            w->sys_slide[slide_find(w->sys_slide, k)].kind = FRI_SLIDE_HELD;
    for (int k = 0; k < w->nsys; k++) {
        fri_slide *sl = &w->sys_slide[k];
        const fri_slide *rt = &w->sys_slide[slide_find(w->sys_slide, k)];
        const int slot = w->sys_slot[k];
        fri_body_state *s = &w->state[slot];
        fr_vec3 acc = s->slide_acc;
        const double alpha = s->slide_spin;
        s->slide_acc = fr_v3_zero();
        s->slide_spin = 0.0;
        if (rt->kind != FRI_SLIDE_SLIP && rt->kind != FRI_SLIDE_RESTICK) continue;
        if (fri_world_sys_free(w, k)) continue;
        sl->n = rt->n;
        fr_vec3 dv = fr_v3_sub(s->vel0, s->vel);
        const double dvn = fr_v3_dot(dv, sl->n);
        dv = fr_v3_mad(dv, -dvn, sl->n);
        /* an impact is no slide: its normal force, and the friction μ·N with it, changes within
         * the step (and two bodies moved by their own mean velocities would no longer keep their
         * angular momentum); a steady slide's normal force balances the load, and an impact's
         * normal change is at least 1/μ times its tangential one (and beyond the noise of a
         * spin on the spot, which has no tangential change) */
        const bool impact = fabs(dvn) > SLIDE_NORMAL_SHARE * fr_v3_norm(dv) &&
                            fabs(dvn) > 1e-3 * fr_v3_norm(w->def.gravity) * h;
        if (rt->m > w->model[slot].mass) {
            /* a cluster moves as one rigid piece: the same translation for every member, by
             * the mean of its momentum's change (bodies moved by their own corrections, or
             * one moved and another not, would move against each other: a random scene's
             * stuck hulls gained 0.095 of its energy); an impact of any member spoils it */
            fri_slide *r = &w->sys_slide[slide_find(w->sys_slide, k)];
            if (impact) {
                r->kind = FRI_SLIDE_HELD;
                continue;
            }
            r->mdv = fr_v3_mad(r->mdv, w->model[slot].mass, dv);
            r->macc = fr_v3_mad(r->macc, w->model[slot].mass, acc);
            if (rt->kind == FRI_SLIDE_SLIP) s->slide_acc = fr_v3_scale(dv, -1.0 / h);
            continue;
        }
        if (impact) continue;
        /* the spin about n (the spin friction μ·N·r̄ is constant over the step as well) */
        const double dwn = fr_v3_dot(sl->n, fr_v3_sub(s->angvel0, s->angvel));
        double tau = h, tau_w = h;
        if (rt->kind == FRI_SLIDE_SLIP) {
            s->slide_acc = fr_v3_scale(dv, -1.0 / h);
            s->slide_spin = -dwn / h;
        } else {
            tau_w = alpha * dwn < 0.0 ? fmin(h, fabs(dwn / alpha)) : 0.0;
            /* the slip ended inside the step, at the last step's deceleration; in a slide's
             * first step at kinetic friction's (with gravity's share along the plane) */
            const double dvt = fr_v3_norm(dv);
            double a = 0.0;
            if (dvt > 0.0) {
                const fr_vec3 u = fr_v3_scale(dv, 1.0 / dvt); /* along the slip */
                a = fr_v3_norm2(acc) > 0.0 ? -fr_v3_dot(acc, u)
                                           : rt->fk / rt->m - fr_v3_dot(w->def.gravity, u);
            }
            tau = a > 0.0 ? fmin(h, dvt / a) : 0.0;
        }
        sl->d = fr_v3_scale(dv, 0.5 * tau);
        sl->dth = 0.5 * tau_w * dwn;
    }
    for (int k = 0; k < w->nsys; k++) { /* the clusters' common translation */
        fri_slide *sl = &w->sys_slide[k];
        const fri_slide *rt = &w->sys_slide[slide_find(w->sys_slide, k)];
        if (!(rt->m > w->model[w->sys_slot[k]].mass)) continue;
        sl->dth = 0.0;
        sl->d = fr_v3_zero();
        const fr_vec3 dv = fr_v3_scale(rt->mdv, 1.0 / rt->m);
        const double dvt = fr_v3_norm(dv);
        double tau = rt->kind == FRI_SLIDE_SLIP ? h : 0.0;
        if (rt->kind == FRI_SLIDE_RESTICK && dvt > 0.0) { /* as a single body's, above */
            const fr_vec3 u = fr_v3_scale(dv, 1.0 / dvt);
            const double a = fr_v3_norm2(rt->macc) > 0.0
                                 ? -fr_v3_dot(rt->macc, u) / rt->m
                                 : rt->fk / rt->m - fr_v3_dot(w->def.gravity, u);
            tau = a > 0.0 ? fmin(h, dvt / a) : 0.0;
        }
        sl->d = fr_v3_scale(dv, 0.5 * tau);
    }
    return true;
}

/* A body anchor (its frame, q its corrected orientation) where it was before the correction:
 * x = R_u·a + p_u = R_c·a' + p_c with R_c = E·R_u (E the turn about n) and p_c = p_u + d, so
 * a' = R_cᵀ·(Eᵀ·R_c·a − d); a spin reference turns back the same way. */
static void bond_follow(const fri_slide *sl, fr_quat q, fr_vec3 *anchor, fr_vec3 *axis)
{
    if (fr_v3_norm2(sl->d) == 0.0 && sl->dth == 0.0) return;
    const fr_quat E = fr_q_exp(fr_v3_scale(sl->n, sl->dth));
    *anchor = fr_q_unrotate(q, fr_v3_sub(fr_q_unrotate(E, fr_q_rotate(q, *anchor)), sl->d));
    *axis = fr_q_unrotate(q, fr_q_unrotate(E, fr_q_rotate(q, *axis)));
}

/* A bond's stretch is the bodies' relative displacement since it stuck: a body's position
 * correction moves its anchors with it, so that the correction leaves the stretch as solved. */
static void slide_bonds(fr_world *w)
{
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        if (!p->modeled || !p->st.active) continue;
        const int ka = w->sys_index[p->slot_a], kb = w->sys_index[p->slot_b];
        if (ka >= 0)
            bond_follow(&w->sys_slide[ka], w->state[p->slot_a].pose.q, &p->st.anchor_a,
                        &p->st.axis_a);
        if (kb >= 0)
            bond_follow(&w->sys_slide[kb], w->state[p->slot_b].pose.q, &p->st.anchor_b,
                        &p->st.axis_b);
    }
}

int fri_world_integrate(fr_world *w)
{
    const double dt = w->h;
    const fr_vec3 g = w->def.gravity;
    int err = fri_world_solve(w); /* new velocities of the bodies in the implicit system */
    if (err) return err;
    fri_world_constraints_mid(w); /* joints on those bodies see the solve's response */
    const bool slides = slide_corrections(w);
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_model *m = &w->model[i];
        fri_body_state *s = &w->state[i];
        if (m->type == FR_BODY_STATIC) continue;
        if (w->sys_index[i] >= 0) {
            /* the solve fixed the impulses; the positions follow, and the rotation is the same
             * momentum-conserving implicit-midpoint rotation free bodies get (gyroscopic term) */
            if (m->lin_damping > 0) s->vel = fr_v3_scale(s->vel, 1.0 / (1.0 + dt * m->lin_damping));
            fr_vec3 d = fr_v3_scale(s->vel, dt);
            if (slides) d = fr_v3_add(d, w->sys_slide[w->sys_index[i]].d);
            fri_body_move(s, d);
            fr_vec3 Lb = fr_m3_mulv(m->inertia, fr_q_unrotate(s->pose.q, s->angvel));
            if (m->ang_damping > 0) Lb = fr_v3_scale(Lb, 1.0 / (1.0 + dt * m->ang_damping));
            rotate_free(&m->inv_inertia, &s->pose.q, &Lb, dt, 0);
            s->angvel = fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, Lb));
            s->turn_last = fr_v3_scale(s->angvel, dt);
            const fri_slide *sl = &w->sys_slide[w->sys_index[i]];
            if (slides && sl->dth != 0.0) /* (about the centre of mass, ω in the world kept) */
                s->pose.q =
                    fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(sl->n, sl->dth)), s->pose.q));
            s->force = s->torque = s->imp_f = fr_v3_zero();
            s->imp_k = s->imp_c = 0.0;
            continue;
        }
        if (m->type == FR_BODY_LINK) { /* moved by its tree (robots.c) */
            s->force = s->torque = s->imp_f = fr_v3_zero();
            s->imp_k = s->imp_c = 0.0;
            continue;
        }
        if (m->type == FR_BODY_DYNAMIC) {
            fr_vec3 a = fr_v3_mad(g, m->inv_mass, s->force);
            if (s->imp_k > 0 || s->imp_c > 0) {
                /* implicit springs: (m + dt·c + dt²·k)·v⁺ = m·v + dt·(m·g + F + imp_f) */
                double denom = m->mass + dt * s->imp_c + dt * dt * s->imp_k;
                fr_vec3 num =
                    fr_v3_add(fr_v3_scale(s->vel, m->mass),
                              fr_v3_scale(fr_v3_add(fr_v3_scale(a, m->mass), s->imp_f), dt));
                s->vel = fr_v3_scale(num, 1.0 / denom);
            } else {
                s->vel = fr_v3_mad(s->vel, dt, a);
            }
            if (m->lin_damping > 0) s->vel = fr_v3_scale(s->vel, 1.0 / (1.0 + dt * m->lin_damping));
            /* angular impulse in the world, then the torque-free rotation in the body frame */
            fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
            fr_vec3 Lb = fr_m3_mulv(m->inertia, wb);
            Lb = fr_v3_add(Lb, fr_q_unrotate(s->pose.q, fr_v3_scale(s->torque, dt)));
            if (m->ang_damping > 0) Lb = fr_v3_scale(Lb, 1.0 / (1.0 + dt * m->ang_damping));
            rotate_free(&m->inv_inertia, &s->pose.q, &Lb, dt, 0);
            s->angvel = fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, Lb));
            s->turn_last = fr_v3_scale(s->angvel, dt);
        } else {
            /* kinematic: follow the set velocities exactly */
            s->pose.q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(s->angvel, dt)), s->pose.q));
        }
        fri_body_move(s, fr_v3_scale(s->vel, dt));
        s->force = fr_v3_zero();
        s->torque = fr_v3_zero();
        s->imp_k = s->imp_c = 0.0;
        s->imp_f = fr_v3_zero();
    }
    if (slides) slide_bonds(w);
    return FR_OK;
}
