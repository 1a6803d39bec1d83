/* Gait controller (seed 004 §4.3): foot tips on ellipses (flat stance, lifted half-ellipse swing)
 * in the body frame, legs in phase groups, per-leg damped-least-squares IK with a posture pull in
 * the null space, joint PD targets for the tree's implicit PD. */
#include <stdlib.h>
#include <string.h>

#include "fureru/control.h"

/* One entry of a leg's chain, from the body (exclusive) down to the foot link. */
typedef struct chain_joint {
    int link;
    fr_joint_type type; /* FIXED, REVOLUTE or PRISMATIC */
    fr_pose jp;         /* joint frame in the parent link frame */
    fr_vec3 axis;
    int qi, vi; /* indices in q and qd (-1 for fixed) */
    bool var;   /* a leg joint (solved by IK) rather than a body joint (read from q) */
    bool limited;
    double lo, hi;
} chain_joint;

typedef struct leg {
    int n;
    chain_joint c[FR_GAIT_MAX_CHAIN];
    double q[FR_GAIT_MAX_CHAIN];     /* IK solution (var entries) */
    double qprev[FR_GAIT_MAX_CHAIN]; /* previous step's, for the velocity target */
    double qnom[FR_GAIT_MAX_CHAIN];  /* initial posture */
    fr_vec3 tip;                     /* foot tip in the foot link */
    fr_vec3 neutral;                 /* body frame, on the stance line */
    fr_vec3 target;                  /* body frame */
    fr_vec3 swing_start;
    fr_vec3 ik_tip; /* tip at the IK solution */
    double phase;
    bool stance;
} leg;

struct fr_gait {
    fr_gait_def def;
    leg legs[FR_GAIT_MAX_LEGS];
    int body_qi[FR_GAIT_MAX_BODY], body_vi[FR_GAIT_MAX_BODY];
    double body_q0[FR_GAIT_MAX_BODY];
    double t;
    double activity; /* 0..1: how much the feet lift (fades to 0 when idle, with stand_idle) */
    bool started;
    double residual;
};

fr_gait_def fr_gait_def_default(void)
{
    fr_gait_def d;
    memset(&d, 0, sizeof d);
    d.body_link = 0;
    d.period = 0.6;
    d.duty = 0.5;
    d.step_height = 0.03;
    d.height = 0;
    d.max_stride = 0.1;
    d.ramp = 0.5;
    d.leg_kp = 200;
    d.leg_kd = 2;
    d.body_kp = 400;
    d.body_kd = 4;
    d.ik_iters = 2;
    d.ik_lambda = 0.005;
    d.ik_posture = 0.1;
    d.stand_idle = true;
    return d;
}

static bool is_ancestor(const fr_tree *t, int anc, int link)
{
    for (int j = link; j >= 0; j = fr_tree_link_def(t, j)->parent)
        if (j == anc) return true;
    return false;
}

/* The chain's frames: the foot tip in the body frame, and each variable joint's axis and origin
 * (body frame) for the Jacobian. q: values per chain entry for the leg joints; body joints are
 * read from tree_q (the tree's q), or from q too when tree_q is NULL. */
static fr_vec3 chain_fk(const leg *L, const double *q, const double *tree_q, fr_vec3 *axis,
                        fr_vec3 *origin)
{
    fr_pose T = fr_pose_identity();
    for (int k = 0; k < L->n; k++) {
        const chain_joint *c = &L->c[k];
        T = fr_pose_mul(T, c->jp);
        if (c->type == FR_JOINT_FIXED) continue;
        double v = c->var || !tree_q ? q[k] : tree_q[c->qi];
        fr_vec3 a = fr_q_rotate(T.q, c->axis);
        if (axis) {
            axis[k] = a;
            origin[k] = T.p;
        }
        /* (the tree's axes are unit: the product drifts from unit by ulps, not normalised) */
        if (c->type == FR_JOINT_REVOLUTE)
            T.q = fr_q_mul(T.q, fr_q_axis_angle(c->axis, v));
        else
            T.p = fr_v3_mad(T.p, v, a);
    }
    return fr_pose_apply(T, L->tip);
}

static void clamp_leg(leg *L, double *q)
{
    for (int k = 0; k < L->n; k++) {
        const chain_joint *c = &L->c[k];
        if (!c->var || !c->limited) continue;
        if (q[k] < c->lo) q[k] = c->lo;
        if (q[k] > c->hi) q[k] = c->hi;
    }
}

/* Damped least squares towards the target with a posture pull in the (approximate) null space:
 * Δq = Jᵀy + (z − JᵀA⁻¹Jz), A = JJᵀ + λ²I, Ay = e, z = k(q_nom − q). */
static void solve_leg(const fr_gait *g, leg *L, const double *tree_q)
{
    fr_vec3 axis[FR_GAIT_MAX_CHAIN], origin[FR_GAIT_MAX_CHAIN], col[FR_GAIT_MAX_CHAIN];
    double lam2 = g->def.ik_lambda * g->def.ik_lambda;
    for (int it = 0; it < g->def.ik_iters; it++) {
        fr_vec3 p = chain_fk(L, L->q, tree_q, axis, origin);
        fr_vec3 e = fr_v3_sub(L->target, p);
        fr_mat3 A = fr_m3_diag(fr_v3(lam2, lam2, lam2));
        fr_vec3 Jz = fr_v3_zero();
        double z[FR_GAIT_MAX_CHAIN];
        for (int k = 0; k < L->n; k++) {
            const chain_joint *c = &L->c[k];
            if (!c->var) continue;
            col[k] = c->type == FR_JOINT_REVOLUTE ? fr_v3_cross(axis[k], fr_v3_sub(p, origin[k]))
                                                  : axis[k];
            A = fr_m3_add(A, fr_m3_outer(col[k], col[k]));
            z[k] = g->def.ik_posture * (L->qnom[k] - L->q[k]);
            Jz = fr_v3_mad(Jz, z[k], col[k]);
        }
        /* one factor for both right-hand sides */
        double Lf[9], y[3] = {e.x, e.y, e.z}, w[3] = {Jz.x, Jz.y, Jz.z};
        memcpy(Lf, A.m, sizeof Lf);
        if (!fr_chol_factor(Lf, 3)) return;
        fr_chol_solve(Lf, 3, y);
        fr_chol_solve(Lf, 3, w);
        for (int k = 0; k < L->n; k++) {
            if (!L->c[k].var) continue;
            double dq = fr_v3_dot(col[k], fr_v3(y[0], y[1], y[2])) + z[k] -
                        fr_v3_dot(col[k], fr_v3(w[0], w[1], w[2]));
            if (dq > 0.5) dq = 0.5;
            if (dq < -0.5) dq = -0.5;
            L->q[k] += dq;
        }
        clamp_leg(L, L->q);
    }
    L->ik_tip = chain_fk(L, L->q, tree_q, NULL, NULL);
}

int fr_gait_create(const fr_tree *t, const fr_gait_def *def, fr_gait **out)
{
    *out = NULL;
    int n = fr_tree_nlinks(t);
    if (!def || def->body_link < 0 || def->body_link >= n || def->nlegs < 1 ||
        def->nlegs > FR_GAIT_MAX_LEGS || def->nbody < 0 || def->nbody > FR_GAIT_MAX_BODY ||
        !(def->period > 0) || !(def->duty > 0 && def->duty < 1) || !(def->step_height >= 0) ||
        !(def->max_stride > 0) || !(def->ramp >= 0) || !(def->leg_kp >= 0) || !(def->leg_kd >= 0) ||
        !(def->body_kp >= 0) || !(def->body_kd >= 0) || def->ik_iters < 1 ||
        !(def->ik_lambda >= 0) || !(def->ik_posture >= 0 && def->ik_posture <= 1) ||
        !isfinite(def->speed) || !isfinite(def->lateral) || !isfinite(def->turn_rate) ||
        !isfinite(def->height))
        return FR_ERR_INVAL;
    fr_gait *g = calloc(1, sizeof *g);
    if (!g) return FR_ERR_NOMEM;
    g->def = *def;
    int err = FR_OK;
    for (int b = 0; b < def->nbody && !err; b++) {
        int j = def->body_links[b];
        const fr_link_def *ld = j >= 0 && j < n ? fr_tree_link_def(t, j) : NULL;
        if (!ld || (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) ||
            !isfinite(def->body_amp[b]) || !isfinite(def->body_phase[b]))
            err = FR_ERR_INVAL;
        else {
            g->body_qi[b] = fr_tree_link_q_index(t, j);
            g->body_vi[b] = fr_tree_link_v_index(t, j);
            g->body_q0[b] = ld->q0;
        }
    }
    for (int i = 0; i < def->nlegs && !err; i++) {
        const fr_gait_leg_def *ldf = &def->legs[i];
        leg *L = &g->legs[i];
        if (ldf->hip_link < 0 || ldf->hip_link >= n || ldf->foot_link < 0 || ldf->foot_link >= n ||
            ldf->hip_link == def->body_link || !is_ancestor(t, def->body_link, ldf->hip_link) ||
            !is_ancestor(t, ldf->hip_link, ldf->foot_link) || !fr_v3_isfinite(ldf->tip) ||
            !(ldf->phase >= 0 && ldf->phase < 1)) {
            err = FR_ERR_INVAL;
            break;
        }
        /* the path body → foot, collected upwards then reversed */
        int path[64], np = 0;
        for (int j = ldf->foot_link; j != def->body_link && np < 64;
             j = fr_tree_link_def(t, j)->parent)
            path[np++] = j;
        if (np > FR_GAIT_MAX_CHAIN) {
            err = FR_ERR_INVAL;
            break;
        }
        L->n = np;
        bool in_leg = false;
        int nvar = 0;
        for (int k = 0; k < np; k++) {
            int j = path[np - 1 - k];
            const fr_link_def *ld = fr_tree_link_def(t, j);
            chain_joint *c = &L->c[k];
            if (j == ldf->hip_link) in_leg = true;
            if (ld->type != FR_JOINT_FIXED && ld->type != FR_JOINT_REVOLUTE &&
                ld->type != FR_JOINT_PRISMATIC) {
                err = FR_ERR_INVAL;
                break;
            }
            c->link = j;
            c->type = ld->type;
            c->jp = ld->joint_pose;
            c->axis = ld->axis;
            c->qi = ld->type == FR_JOINT_FIXED ? -1 : fr_tree_link_q_index(t, j);
            c->vi = ld->type == FR_JOINT_FIXED ? -1 : fr_tree_link_v_index(t, j);
            c->var = in_leg && ld->type != FR_JOINT_FIXED;
            c->limited = ld->limited;
            c->lo = ld->q_min;
            c->hi = ld->q_max;
            L->q[k] = L->qnom[k] = L->qprev[k] = c->qi >= 0 ? ld->q0 : 0;
            nvar += c->var;
        }
        if (err) break;
        if (nvar < 1) {
            err = FR_ERR_INVAL;
            break;
        }
        /* neutral foot position from the initial posture (body joints at q0 too) */
        L->tip = ldf->tip;
        L->neutral = chain_fk(L, L->q, NULL, NULL, NULL);
        if (def->height > 0) L->neutral.z = -def->height;
        L->target = L->ik_tip = L->swing_start = L->neutral;
        L->phase = ldf->phase;
        L->stance = true;
    }
    g->activity = def->stand_idle ? 0.0 : 1.0;
    if (err) {
        free(g);
        return err;
    }
    *out = g;
    return FR_OK;
}

void fr_gait_destroy(fr_gait *g)
{
    free(g);
}

void fr_gait_set_command(fr_gait *g, double speed, double lateral, double turn_rate)
{
    if (isfinite(speed)) g->def.speed = speed;
    if (isfinite(lateral)) g->def.lateral = lateral;
    if (isfinite(turn_rate)) g->def.turn_rate = turn_rate;
}

static double frac(double x)
{
    return x - floor(x);
}

int fr_gait_update(fr_gait *g, const fr_tree *t, fr_tree_data *d, double dt)
{
    (void)t;
    if (!(dt > 0)) return FR_ERR_INVAL;
    const fr_gait_def *D = &g->def;
    g->t += dt;
    /* smooth start: commands, stride and lift fade in */
    double r = D->ramp > 0 ? g->t / D->ramp : 1.0;
    if (r > 1) r = 1;
    r = r * r * (3 - 2 * r);
    double vx = r * D->speed, vy = r * D->lateral, w = r * D->turn_rate;
    double Ts = D->duty * D->period; /* stance time */
    double worst = 0;
    for (int i = 0; i < D->nlegs; i++) {
        const fr_vec3 n = g->legs[i].neutral;
        double fx = vx - w * n.y, fy = vy + w * n.x;
        double s = sqrt(fx * fx + fy * fy) * Ts;
        if (s > worst) worst = s;
    }
    if (worst > D->max_stride) {
        double k = D->max_stride / worst;
        vx *= k;
        vy *= k;
        w *= k;
    }
    /* standing still: with no command the feet stay down (all legs share the load) */
    bool idle = D->stand_idle && D->speed == 0 && D->lateral == 0 && D->turn_rate == 0;
    double fade = dt / (0.5 * D->period);
    g->activity = idle ? fmax(0.0, g->activity - fade) : fmin(1.0, g->activity + fade);
    double lift = r * g->activity * D->step_height;
    double phase = frac(g->t / D->period);
    g->residual = 0;
    for (int i = 0; i < D->nlegs; i++) {
        leg *L = &g->legs[i];
        double ph = frac(phase + L->phase);
        bool stance = ph < D->duty;
        if (stance) {
            /* a foot on the ground moves backwards in the body frame as the body moves */
            fr_vec3 p = L->target;
            double fx = vx - w * p.y, fy = vy + w * p.x;
            L->target = fr_v3(p.x - fx * dt, p.y - fy * dt, L->neutral.z);
        } else {
            if (L->stance) L->swing_start = L->target;
            double u = (ph - D->duty) / (1 - D->duty);
            const fr_vec3 n = L->neutral;
            /* touch down ahead of neutral by half the stance travel at the current command */
            double fx = vx - w * n.y, fy = vy + w * n.x;
            double ex = n.x + 0.5 * fx * Ts, ey = n.y + 0.5 * fy * Ts;
            double s = 0.5 * (1 - cos(M_PI * u));
            L->target =
                fr_v3(L->swing_start.x + (ex - L->swing_start.x) * s,
                      L->swing_start.y + (ey - L->swing_start.y) * s, n.z + lift * sin(M_PI * u));
        }
        L->stance = stance;
        for (int k = 0; k < L->n; k++) L->qprev[k] = L->q[k];
        solve_leg(g, L, d->q);
        double res = fr_v3_norm(fr_v3_sub(L->target, L->ik_tip));
        if (res > g->residual) g->residual = res;
        for (int k = 0; k < L->n; k++) {
            const chain_joint *c = &L->c[k];
            if (!c->var) continue;
            d->q_ref[c->qi] = L->q[k];
            d->qd_ref[c->vi] = g->started ? (L->q[k] - L->qprev[k]) / dt : 0.0;
            d->kp[c->vi] = D->leg_kp;
            d->kd[c->vi] = D->leg_kd;
        }
    }
    double om = 2 * M_PI / D->period;
    for (int b = 0; b < D->nbody; b++) {
        double a = r * D->body_amp[b];
        d->q_ref[g->body_qi[b]] = g->body_q0[b] + a * sin(om * g->t + D->body_phase[b]);
        d->qd_ref[g->body_vi[b]] = a * om * cos(om * g->t + D->body_phase[b]);
        d->kp[g->body_vi[b]] = D->body_kp;
        d->kd[g->body_vi[b]] = D->body_kd;
    }
    g->started = true;
    return FR_OK;
}

/* While the world settles: the joints held at their targets as given (the initial posture), at
 * rest, with the gait's gains; the gait's clock does not run. */
static void gait_hold(const fr_gait *g, fr_tree_data *d)
{
    const fr_gait_def *D = &g->def;
    for (int i = 0; i < D->nlegs; i++) {
        const leg *L = &g->legs[i];
        for (int k = 0; k < L->n; k++) {
            const chain_joint *c = &L->c[k];
            if (!c->var) continue;
            d->qd_ref[c->vi] = 0.0;
            d->kp[c->vi] = D->leg_kp;
            d->kd[c->vi] = D->leg_kd;
        }
    }
    for (int b = 0; b < D->nbody; b++) {
        d->qd_ref[g->body_vi[b]] = 0.0;
        d->kp[g->body_vi[b]] = D->body_kp;
        d->kd[g->body_vi[b]] = D->body_kd;
    }
}

void fr_gait_controller(fr_world *w, int robot, void *user)
{
    if (fr_world_settling(w)) {
        gait_hold((const fr_gait *)user, fr_world_robot_data(w, robot));
        return;
    }
    fr_gait_update((fr_gait *)user, fr_world_robot_tree(w, robot), fr_world_robot_data(w, robot),
                   fr_world_get_def(w)->dt);
}

double fr_gait_time(const fr_gait *g)
{
    return g->t;
}
int fr_gait_leg_count(const fr_gait *g)
{
    return g->def.nlegs;
}
fr_vec3 fr_gait_foot_target(const fr_gait *g, int i)
{
    return i >= 0 && i < g->def.nlegs ? g->legs[i].target : fr_v3_zero();
}
bool fr_gait_leg_in_stance(const fr_gait *g, int i)
{
    return i >= 0 && i < g->def.nlegs && g->legs[i].stance;
}
fr_vec3 fr_gait_foot_ik(const fr_gait *g, int i)
{
    return i >= 0 && i < g->def.nlegs ? g->legs[i].ik_tip : fr_v3_zero();
}
double fr_gait_ik_residual(const fr_gait *g)
{
    return g->residual;
}
