/* Virtual coupling between the device and the proxy body, with the workspace transform and the
 * implicit (backward-Euler) proxy-side force. See include/fureru/coupling.h and docs/haptics.md. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/coupling.h"

/* ---------------------------------------------------------------- workspace */

fr_workspace fr_workspace_identity(void)
{
    return (fr_workspace){1.0, fr_q_identity(), fr_v3_zero()};
}

int fr_workspace_check(const fr_workspace *ws)
{
    if (!ws) return FR_ERR_INVAL;
    if (!(isfinite(ws->scale) && ws->scale > 0)) return FR_ERR_RANGE;
    if (!fr_q_isfinite(ws->rot) || !(fabs(fr_q_norm(ws->rot) - 1.0) <= 1e-9)) return FR_ERR_RANGE;
    if (!fr_v3_isfinite(ws->offset)) return FR_ERR_RANGE;
    return FR_OK;
}

fr_vec3 fr_workspace_point_to_world(const fr_workspace *ws, fr_vec3 p)
{
    return fr_v3_add(fr_v3_scale(fr_q_rotate(ws->rot, p), ws->scale), ws->offset);
}
fr_vec3 fr_workspace_point_to_device(const fr_workspace *ws, fr_vec3 p)
{
    return fr_v3_scale(fr_q_unrotate(ws->rot, fr_v3_sub(p, ws->offset)), 1.0 / ws->scale);
}
fr_vec3 fr_workspace_vel_to_world(const fr_workspace *ws, fr_vec3 v)
{
    return fr_v3_scale(fr_q_rotate(ws->rot, v), ws->scale);
}
fr_vec3 fr_workspace_vel_to_device(const fr_workspace *ws, fr_vec3 v)
{
    return fr_v3_scale(fr_q_unrotate(ws->rot, v), 1.0 / ws->scale);
}
fr_quat fr_workspace_rot_to_world(const fr_workspace *ws, fr_quat q)
{
    return fr_q_mul(ws->rot, q);
}
fr_quat fr_workspace_rot_to_device(const fr_workspace *ws, fr_quat q)
{
    return fr_q_mul(fr_q_conj(ws->rot), q);
}
fr_vec3 fr_workspace_angvel_to_world(const fr_workspace *ws, fr_vec3 w)
{
    return fr_q_rotate(ws->rot, w);
}
fr_vec3 fr_workspace_angvel_to_device(const fr_workspace *ws, fr_vec3 w)
{
    return fr_q_unrotate(ws->rot, w);
}
fr_vec3 fr_workspace_force_to_device(const fr_workspace *ws, fr_vec3 f)
{
    return fr_v3_scale(fr_q_unrotate(ws->rot, f), ws->scale);
}
fr_vec3 fr_workspace_force_to_world(const fr_workspace *ws, fr_vec3 f)
{
    return fr_v3_scale(fr_q_rotate(ws->rot, f), 1.0 / ws->scale);
}
fr_vec3 fr_workspace_torque_to_device(const fr_workspace *ws, fr_vec3 t)
{
    return fr_q_unrotate(ws->rot, t);
}
fr_vec3 fr_workspace_torque_to_world(const fr_workspace *ws, fr_vec3 t)
{
    return fr_q_rotate(ws->rot, t);
}

/* ---------------------------------------------------------------- set-up */

static double limit_or_inf(double x)
{
    return x > 0 ? x : INFINITY;
}

void fr_coupling_params_default(fr_coupling_params *p, const fr_device_desc *desc)
{
    const double m = FR_COUPLING_DEFAULT_MARGIN;
    memset(p, 0, sizeof *p);
    p->stiffness = m * desc->max_stiffness;
    p->damping = m * desc->max_damping;
    p->rotation = desc->dof_sensed == 6 && desc->dof_forced == 6;
    p->rot_stiffness = p->rotation ? m * desc->max_rot_stiffness : 0.0;
    p->rot_damping = p->rotation ? m * desc->max_rot_damping : 0.0;
    p->max_force = limit_or_inf(desc->max_force);
    p->max_torque = limit_or_inf(desc->max_torque);
    p->workspace = fr_workspace_identity();
}

/* 0 ≤ x ≤ max, both finite (a device that declares a negative or NaN maximum renders nothing). */
static bool gain_ok(double x, double max)
{
    return isfinite(x) && x >= 0 && isfinite(max) && x <= max;
}

int fr_coupling_init(fr_coupling *c, const fr_coupling_params *p, const fr_device_desc *desc,
                     double dt)
{
    if (!c || !p || !desc) return FR_ERR_INVAL;
    if (!(isfinite(dt) && dt > 0)) return FR_ERR_RANGE;
    int err = fr_workspace_check(&p->workspace);
    if (err) return err;
    if (!gain_ok(p->stiffness, desc->max_stiffness) || !gain_ok(p->damping, desc->max_damping))
        return FR_ERR_RANGE;
    if (!(p->max_force > 0) || !(p->max_torque > 0)) return FR_ERR_RANGE; /* +inf allowed */
    const bool torque_out = desc->dof_forced == 6;
    if (p->rotation) {
        if (desc->dof_sensed != 6) return FR_ERR_UNSUPPORTED;
        /* a device that renders no torque cannot be destabilised by rotational gains: the proxy
         * side is implicit, so there they are only bounded to be finite */
        double mk = torque_out ? desc->max_rot_stiffness : DBL_MAX;
        double mc = torque_out ? desc->max_rot_damping : DBL_MAX;
        if (!gain_ok(p->rot_stiffness, mk) || !gain_ok(p->rot_damping, mc)) return FR_ERR_RANGE;
    }
    memset(c, 0, sizeof *c);
    c->p = *p;
    c->p.workspace.rot = fr_q_normalize(p->workspace.rot);
    c->dt = dt;
    const double s = p->workspace.scale;
    /* K_dev = s² k: the device sees displacements 1/s smaller and forces s larger */
    c->k = p->stiffness / (s * s);
    c->c = p->damping / (s * s);
    c->kr = p->rotation ? p->rot_stiffness : 0.0;
    c->cr = p->rotation ? p->rot_damping : 0.0;
    c->max_f = p->max_force / s;
    c->max_t = p->max_torque;
    c->torque_out = torque_out && p->rotation;
    c->q_d = fr_q_identity();
    return FR_OK;
}

void fr_coupling_reset(fr_coupling *c)
{
    fr_coupling_stats st = c->stats;
    fr_coupling_params p = c->p;
    double dt = c->dt, k = c->k, cc = c->c, kr = c->kr, cr = c->cr, mf = c->max_f, mt = c->max_t;
    bool to = c->torque_out;
    memset(c, 0, sizeof *c);
    c->p = p;
    c->dt = dt;
    c->k = k;
    c->c = cc;
    c->kr = kr;
    c->cr = cr;
    c->max_f = mf;
    c->max_t = mt;
    c->torque_out = to;
    c->q_d = fr_q_identity();
    c->stats = st;
}

/* ---------------------------------------------------------------- per tick */

/* Map the sample to the world; false (and nothing written) when it cannot be used. */
static bool accept_sample(const fr_coupling *c, const fr_device_state *s, fr_vec3 *x, fr_vec3 *v,
                          fr_quat *q, fr_vec3 *w)
{
    if (!s || (s->status != FR_DEVICE_OK && s->status != FR_DEVICE_STALE)) return false;
    const fr_workspace *ws = &c->p.workspace;
    *x = fr_workspace_point_to_world(ws, s->pose.p);
    *v = fr_workspace_vel_to_world(ws, s->vel);
    /* checked after mapping so that a finite sample that overflows is rejected too */
    if (!fr_v3_isfinite(*x) || !fr_v3_isfinite(*v)) return false;
    if (c->p.rotation) {
        double n = fr_q_norm(s->pose.q);
        if (!(fabs(n - 1.0) <= 0.1)) return false; /* NaN, zero or garbage */
        *q = fr_workspace_rot_to_world(ws, fr_q_normalize(s->pose.q));
        *w = fr_workspace_angvel_to_world(ws, s->angvel);
        if (!fr_q_isfinite(*q) || !fr_v3_isfinite(*w)) return false;
    }
    return true;
}

int fr_coupling_update(fr_coupling *c, const fr_device_state *s, const fr_pose *proxy_pose)
{
    int flags = 0;
    c->stats.updates++;
    fr_vec3 x, v, w = fr_v3_zero();
    fr_quat q = fr_q_identity();
    if (accept_sample(c, s, &x, &v, &q, &w)) {
        c->x_d = x;
        c->v_d = v;
        c->q_d = q;
        c->w_d = w;
        c->have_target = true;
        c->valid = true;
    } else {
        /* hold the last accepted target, standing still */
        flags |= FR_COUPLING_REJECTED;
        c->stats.rejected++;
        c->valid = false;
        c->v_d = fr_v3_zero();
        c->w_d = fr_v3_zero();
    }

    fr_coupling_drive *d = &c->drive;
    memset(d, 0, sizeof *d);
    d->rot_err = fr_v3_zero();
    if (!c->have_target) {
        c->valid = false;
        c->flags = flags | FR_COUPLING_NO_TARGET;
        return c->flags;
    }
    const bool rot = c->p.rotation;
    fr_vec3 stretch = fr_v3_zero();
    if (proxy_pose) stretch = fr_v3_sub(c->x_d, proxy_pose->p);
    if (!proxy_pose || !fr_v3_isfinite(proxy_pose->p) || !fr_v3_isfinite(stretch) ||
        (rot && !(fabs(fr_q_norm(proxy_pose->q) - 1.0) <= 0.1))) {
        c->stats.proxy_bad++;
        c->valid = false;
        c->flags = flags | FR_COUPLING_PROXY_BAD;
        return c->flags;
    }
    bool limited = false;

    /* translation: the spring's force k|stretch| is kept ≤ max_f by moving the target towards
     * the proxy (the drive stays linear in v⁺, so the implicit solve stays exact) */
    d->active = true;
    d->anchor = proxy_pose->p;
    d->target = c->x_d;
    double fs = c->k * fr_v3_norm(stretch);
    if (fs > c->max_f) {
        d->target = fr_v3_add(proxy_pose->p, fr_v3_scale(stretch, c->max_f / fs));
        limited = true;
    }
    d->target_vel = c->v_d;
    d->k = c->k;
    d->c = c->c;

    if (rot) {
        fr_quat qb = fr_q_normalize(proxy_pose->q);
        fr_vec3 th = fr_q_log(fr_q_mul(c->q_d, fr_q_conj(qb))); /* world frame, |θ| ≤ π */
        double ts = c->kr * fr_v3_norm(th);
        if (ts > c->max_t) {
            th = fr_v3_scale(th, c->max_t / ts);
            limited = true;
        }
        d->rot_active = true;
        d->rot_err = th;
        d->target_angvel = c->w_d;
        d->kr = c->kr;
        d->cr = c->cr;
    }
    if (limited) {
        flags |= FR_COUPLING_LIMITED;
        c->stats.limited++;
    }
    c->flags = flags;
    return flags;
}

void fr_coupling_solve(const fr_coupling_drive *d, double dt, const fr_coupling_body *b,
                       fr_vec3 *force, fr_vec3 *torque, fr_vec3 *v_next, fr_vec3 *w_next)
{
    fr_vec3 F = fr_v3_zero(), T = fr_v3_zero();
    const bool movable = b->mass > 0 && isfinite(b->mass);
    const double lam = b->lin_damping > 0 ? b->lin_damping : 0.0;
    const double lam_r = b->ang_damping > 0 ? b->ang_damping : 0.0;

    /* v⁺ = (m v + dt (F_o + F0)) / (m (1 + dt λ) + dt (c + dt k)),  F_c = F0 − (c + dt k) v⁺ */
    fr_vec3 F0 = fr_v3_zero();
    double g = 0.0;
    if (d->active) {
        F0 = fr_v3_add(fr_v3_scale(fr_v3_sub(d->target, d->anchor), d->k),
                       fr_v3_scale(d->target_vel, d->c));
        g = d->c + dt * d->k;
    }
    fr_vec3 vn = b->vel;
    if (movable) {
        fr_vec3 num =
            fr_v3_add(fr_v3_scale(b->vel, b->mass), fr_v3_scale(fr_v3_add(b->force, F0), dt));
        vn = fr_v3_scale(num, 1.0 / (b->mass * (1.0 + dt * lam) + dt * g));
    }
    if (d->active) F = fr_v3_sub(F0, fr_v3_scale(vn, g));

    /* rotation: ((1 + dt λ_r) I + dt (cr + dt kr) 1) ω⁺ = I ω + dt (τ_o + τ0) */
    fr_vec3 T0 = fr_v3_zero();
    double gr = 0.0;
    if (d->rot_active) {
        T0 = fr_v3_add(fr_v3_scale(d->rot_err, d->kr), fr_v3_scale(d->target_angvel, d->cr));
        gr = d->cr + dt * d->kr;
    }
    fr_vec3 wn = b->angvel;
    fr_mat3 A = fr_m3_add(fr_m3_scale(b->inertia, 1.0 + dt * lam_r),
                          fr_m3_scale(fr_m3_identity(), dt * gr));
    fr_vec3 rhs =
        fr_v3_add(fr_m3_mulv(b->inertia, b->angvel), fr_v3_scale(fr_v3_add(b->torque, T0), dt));
    fr_vec3 sol;
    if (fr_m3_solve_spd(A, rhs, &sol) && fr_v3_isfinite(sol)) wn = sol; /* else immovable */
    if (d->rot_active) T = fr_v3_sub(T0, fr_v3_scale(wn, gr));

    /* never hand the world a NaN: a broken input gets no coupling at all */
    if (!fr_v3_isfinite(F)) F = fr_v3_zero();
    if (!fr_v3_isfinite(T)) T = fr_v3_zero();
    if (force) *force = F;
    if (torque) *torque = T;
    if (v_next) *v_next = vn;
    if (w_next) *w_next = wn;
}

void fr_coupling_eval(const fr_coupling_drive *d, double dt, fr_vec3 v_next, fr_vec3 w_next,
                      fr_vec3 *force, fr_vec3 *torque)
{
    fr_vec3 F = fr_v3_zero(), T = fr_v3_zero();
    if (d->active) {
        /* k (x_d − x_b⁺) + c (v_d − v_b⁺) with x_b⁺ = anchor + dt v⁺ */
        fr_vec3 e = fr_v3_sub(fr_v3_sub(d->target, d->anchor), fr_v3_scale(v_next, dt));
        F = fr_v3_add(fr_v3_scale(e, d->k), fr_v3_scale(fr_v3_sub(d->target_vel, v_next), d->c));
    }
    if (d->rot_active) {
        fr_vec3 e = fr_v3_sub(d->rot_err, fr_v3_scale(w_next, dt));
        T = fr_v3_add(fr_v3_scale(e, d->kr),
                      fr_v3_scale(fr_v3_sub(d->target_angvel, w_next), d->cr));
    }
    if (force) *force = F;
    if (torque) *torque = T;
}

/* The user's command from the coupling force on the proxy (world): equal and opposite. */
static int make_output(fr_coupling *c, fr_vec3 F, fr_vec3 T, fr_device_cmd *cmd)
{
    int flags = c->flags;
    cmd->force = fr_v3_zero();
    cmd->torque = fr_v3_zero();
    c->proxy_force = fr_v3_zero();
    c->proxy_torque = fr_v3_zero();
    if (!c->drive.active) return flags;
    if (!fr_v3_isfinite(F) || !fr_v3_isfinite(T)) {
        c->stats.proxy_bad++;
        return flags | FR_COUPLING_PROXY_BAD;
    }
    c->proxy_force = F;
    c->proxy_torque = c->drive.rot_active ? T : fr_v3_zero();
    if (!c->valid) return flags; /* the hand's position is unknown this tick */
    const fr_workspace *ws = &c->p.workspace;
    cmd->force = fr_workspace_force_to_device(ws, fr_v3_neg(F));
    if (c->torque_out) cmd->torque = fr_workspace_torque_to_device(ws, fr_v3_neg(T));
    if (!fr_v3_isfinite(cmd->force) || !fr_v3_isfinite(cmd->torque)) { /* overflow by s */
        cmd->force = fr_v3_zero();
        cmd->torque = fr_v3_zero();
        c->stats.proxy_bad++;
        return flags | FR_COUPLING_PROXY_BAD;
    }
    return flags;
}

int fr_coupling_output(fr_coupling *c, fr_vec3 v_next, fr_vec3 w_next, fr_device_cmd *cmd)
{
    if (!fr_v3_isfinite(v_next) || (c->drive.rot_active && !fr_v3_isfinite(w_next))) {
        cmd->force = cmd->torque = fr_v3_zero();
        c->proxy_force = c->proxy_torque = fr_v3_zero();
        if (!c->drive.active) return c->flags;
        c->stats.proxy_bad++;
        return c->flags | FR_COUPLING_PROXY_BAD;
    }
    fr_vec3 F, T;
    fr_coupling_eval(&c->drive, c->dt, v_next, w_next, &F, &T);
    return make_output(c, F, T, cmd);
}

int fr_coupling_output_applied(fr_coupling *c, fr_vec3 force, fr_vec3 torque, fr_device_cmd *cmd)
{
    return make_output(c, force, torque, cmd);
}

bool fr_coupling_target(const fr_coupling *c, fr_pose *out)
{
    if (!c->have_target) return false;
    out->p = c->x_d;
    out->q = c->q_d;
    return true;
}
