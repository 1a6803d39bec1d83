/* Rigid-body integration: symplectic Euler for translation; for rotation an angular impulse
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

int fri_world_integrate(fr_world *w)
{
    const double dt = w->def.dt;
    const fr_vec3 g = w->def.gravity;
    int err = fri_world_solve(w); /* new velocities of the bodies in the implicit system */
    if (err) return err;
    fri_world_constraints_mid(w); /* joints on those bodies see the solve's response */
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_model *m = &w->model[i];
        fri_body_state *s = &w->state[i];
        if (m->type == FR_BODY_STATIC) continue;
        if (w->sys_index[i] >= 0) {
            /* the solve fixed the impulses; the positions follow, and the rotation is the same
             * momentum-conserving implicit-midpoint rotation free bodies get (gyroscopic term) */
            if (m->lin_damping > 0) s->vel = fr_v3_scale(s->vel, 1.0 / (1.0 + dt * m->lin_damping));
            s->pose.p = fr_v3_mad(s->pose.p, dt, s->vel);
            fr_vec3 Lb = fr_m3_mulv(m->inertia, fr_q_unrotate(s->pose.q, s->angvel));
            if (m->ang_damping > 0) Lb = fr_v3_scale(Lb, 1.0 / (1.0 + dt * m->ang_damping));
            rotate_free(&m->inv_inertia, &s->pose.q, &Lb, dt, 0);
            s->angvel = fr_q_rotate(s->pose.q, fr_m3_mulv(m->inv_inertia, Lb));
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
        } else {
            /* kinematic: follow the set velocities exactly */
            s->pose.q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(s->angvel, dt)), s->pose.q));
        }
        s->pose.p = fr_v3_mad(s->pose.p, dt, s->vel);
        s->force = fr_v3_zero();
        s->torque = fr_v3_zero();
        s->imp_k = s->imp_c = 0.0;
        s->imp_f = fr_v3_zero();
    }
    return FR_OK;
}
