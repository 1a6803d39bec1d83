/* src/articulated: tree builder, data allocation and small queries (energy, momentum, points). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

fr_link_def fr_link_def_default(void)
{
    return (fr_link_def){
        .name = NULL,
        .joint_name = NULL,
        .parent = -1,
        .type = FR_JOINT_REVOLUTE,
        .joint_pose = fr_pose_identity(),
        .axis = fr_v3(0, 0, 1),
        .mass = 1.0,
        .com = fr_v3_zero(),
        .inertia = fr_m3_diag(fr_v3(1e-3, 1e-3, 1e-3)),
        .damping = 0.0,
        .armature = 0.0,
        .limited = false,
        .q_min = -INFINITY,
        .q_max = INFINITY,
        .limit_k = 0.0,
        .limit_d = 0.0,
        .effort_limit = INFINITY,
        .kp = 0.0,
        .kd = 0.0,
        .max_velocity = 0.0,
        .mimic_joint = NULL,
        .mimic_multiplier = 1.0,
        .mimic_offset = 0.0,
        .q0 = 0.0,
        .q0_rot = fr_q_identity(),
        .q0_pos = fr_v3_zero(),
    };
}

fr_tree *fr_tree_create(void)
{
    return calloc(1, sizeof(fr_tree));
}

void fr_tree_destroy(fr_tree *t)
{
    if (!t) return;
    for (int i = 0; i < t->n; i++) {
        free((char *)t->links[i].def.name);
        free((char *)t->links[i].def.joint_name);
        free((char *)t->links[i].def.mimic_joint);
    }
    free(t->links);
    free(t->mimic_links);
    free(t);
}

static char *dup_name(const char *s, const char *prefix, int i)
{
    char buf[32];
    if (!s) {
        snprintf(buf, sizeof buf, "%s%d", prefix, i);
        s = buf;
    }
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static int joint_nq(fr_joint_type t)
{
    static const int nq[] = {0, 1, 1, 4, 7};
    return nq[t];
}
static int joint_nv(fr_joint_type t)
{
    static const int nv[] = {0, 1, 1, 3, 6};
    return nv[t];
}

/* The inertia must be symmetric positive semi-definite (Cholesky of I + εI as a cheap test). */
static bool inertia_ok(double m, fr_mat3 I)
{
    if (!(m >= 0.0) || !isfinite(m)) return false;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (!isfinite(I.m[i][j])) return false;
            if (fabs(I.m[i][j] - I.m[j][i]) > 1e-9 * (fabs(I.m[i][j]) + 1e-12)) return false;
        }
    double eps = 1e-12 * (fr_m3_trace(I) + 1e-30);
    fr_mat3 J = fr_m3_add(I, fr_m3_diag(fr_v3(eps, eps, eps)));
    fr_vec3 x;
    return fr_m3_solve_spd(J, fr_v3(1, 1, 1), &x);
}

int fr_tree_add_link(fr_tree *t, const fr_link_def *def)
{
    if (!t || !def) return FR_ERR_INVAL;
    if (t->final) return FR_ERR_LOCKED;
    int i = t->n;
    if (def->parent < -1 || def->parent >= i) return FR_ERR_INVAL;
    if ((unsigned)def->type > FR_JOINT_FREE) return FR_ERR_INVAL;
    if (!inertia_ok(def->mass, def->inertia) || !fr_v3_isfinite(def->com)) return FR_ERR_INVAL;
    fr_vec3 axis = def->axis;
    if (def->type == FR_JOINT_REVOLUTE || def->type == FR_JOINT_PRISMATIC) {
        double n = fr_v3_norm(axis);
        if (!(n > 1e-12) || !isfinite(n)) return FR_ERR_INVAL;
        axis = fr_v3_scale(axis, 1.0 / n);
    }
    if (def->limited && !(def->q_min <= def->q_max)) return FR_ERR_INVAL;
    if (!(def->damping >= 0) || !(def->armature >= 0) || !(def->limit_k >= 0) ||
        !(def->limit_d >= 0) || !(def->effort_limit >= 0) || !(def->max_velocity >= 0))
        return FR_ERR_INVAL;
    if (def->mimic_joint && (!isfinite(def->mimic_multiplier) || !isfinite(def->mimic_offset) ||
                             (def->type != FR_JOINT_REVOLUTE && def->type != FR_JOINT_PRISMATIC)))
        return FR_ERR_INVAL;
    if (def->name && fr_tree_link_find(t, def->name) >= 0) return FR_ERR_INVAL;
    if (def->joint_name && fr_tree_joint_find(t, def->joint_name) >= 0) return FR_ERR_INVAL;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        fri_link *nl = realloc(t->links, sizeof(fri_link) * (size_t)cap);
        if (!nl) return FR_ERR_NOMEM;
        t->links = nl;
        t->cap = cap;
    }
    fri_link *l = &t->links[i];
    memset(l, 0, sizeof *l);
    l->def = *def;
    l->def.axis = axis;
    l->def.joint_pose.q = fr_q_normalize(def->joint_pose.q);
    l->def.q0_rot = fr_q_normalize(def->q0_rot);
    l->def.name = dup_name(def->name, "link", i);
    l->def.joint_name = dup_name(def->joint_name, "joint", i);
    l->def.mimic_joint = def->mimic_joint ? dup_name(def->mimic_joint, "", 0) : NULL;
    if (!l->def.name || !l->def.joint_name || (def->mimic_joint && !l->def.mimic_joint)) {
        free((char *)l->def.name);
        free((char *)l->def.joint_name);
        free((char *)l->def.mimic_joint);
        return FR_ERR_NOMEM;
    }
    /* generated names must not clash either */
    for (int k = 0; k < i; k++)
        if (!strcmp(t->links[k].def.name, l->def.name) ||
            !strcmp(t->links[k].def.joint_name, l->def.joint_name)) {
            free((char *)l->def.name);
            free((char *)l->def.joint_name);
            free((char *)l->def.mimic_joint);
            return FR_ERR_INVAL;
        }
    l->parent = def->parent;
    l->mimic = -1;
    l->type = def->type;
    l->nq = joint_nq(def->type);
    l->nv = joint_nv(def->type);
    l->XT = fr_xf_from_pose(l->def.joint_pose);
    fr_quat jq = l->def.joint_pose.q;
    l->XT_rot_id = jq.x == 0.0 && jq.y == 0.0 && jq.z == 0.0; /* E_T is exactly 1 */
    l->Ic_diag =
        def->inertia.m[0][1] == 0.0 && def->inertia.m[0][2] == 0.0 && def->inertia.m[1][2] == 0.0;
    l->axis_kind = -1;
    l->axis_sign = 1.0;
    if (def->type == FR_JOINT_REVOLUTE)
        for (int k = 0; k < 3; k++)
            if (fabs(fr_v3_get(axis, k)) == 1.0 && fr_v3_get(axis, (k + 1) % 3) == 0.0 &&
                fr_v3_get(axis, (k + 2) % 3) == 0.0) {
                l->axis_kind = k;
                l->axis_sign = fr_v3_get(axis, k);
            }
    l->I = fr_rbi_make(def->mass, def->com, def->inertia);
    switch (def->type) {
    case FR_JOINT_REVOLUTE:
        l->S[0] = fr_sv(axis, fr_v3_zero());
        break;
    case FR_JOINT_PRISMATIC:
        l->S[0] = fr_sv(fr_v3_zero(), axis);
        break;
    case FR_JOINT_SPHERICAL:
    case FR_JOINT_FREE:
        for (int k = 0; k < l->nv; k++) {
            l->S[k] = fr_sv_zero();
            fr_sv_set(&l->S[k], k, 1.0);
        }
        break;
    case FR_JOINT_FIXED:
        break;
    }
    t->n++;
    return i;
}

int fr_tree_finalize(fr_tree *t)
{
    if (!t || t->n == 0) return FR_ERR_INVAL;
    if (t->final) return FR_OK;
    /* mimic joints: the joint followed must be another 1-DOF joint that follows none */
    int nm = 0;
    for (int i = 0; i < t->n; i++) {
        fri_link *l = &t->links[i];
        if (!l->def.mimic_joint) continue;
        int m = fr_tree_joint_find(t, l->def.mimic_joint);
        if (m < 0 || m == i || t->links[m].nv != 1 || t->links[m].def.mimic_joint)
            return FR_ERR_INVAL;
        l->mimic = m;
        nm++;
    }
    free(t->mimic_links);
    t->mimic_links = nm ? malloc(sizeof(int) * (size_t)nm) : NULL;
    if (nm && !t->mimic_links) return FR_ERR_NOMEM;
    t->nmimic = 0;
    for (int i = 0; i < t->n; i++)
        if (t->links[i].mimic >= 0) t->mimic_links[t->nmimic++] = i;
    int nq = 0, nv = 0, nd = 0;
    for (int i = 0; i < t->n; i++) {
        fri_link *l = &t->links[i];
        l->qi = nq;
        l->vi = nv;
        l->dinv_off = nd;
        nq += l->nq;
        nv += l->nv;
        nd += l->nv * l->nv;
    }
    t->nq = nq;
    t->nv = nv;
    t->ndinv = nd;
    t->final = true;
    return FR_OK;
}

int fr_tree_nlinks(const fr_tree *t)
{
    return t->n;
}
int fr_tree_nq(const fr_tree *t)
{
    return t->nq;
}
int fr_tree_nv(const fr_tree *t)
{
    return t->nv;
}

int fr_tree_link_find(const fr_tree *t, const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->links[i].def.name, name)) return i;
    return -1;
}

int fr_tree_joint_find(const fr_tree *t, const char *joint_name)
{
    if (!joint_name) return -1;
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->links[i].def.joint_name, joint_name)) return i;
    return -1;
}

const fr_link_def *fr_tree_link_def(const fr_tree *t, int i)
{
    return (i >= 0 && i < t->n) ? &t->links[i].def : NULL;
}
int fr_tree_link_q_index(const fr_tree *t, int i)
{
    return t->links[i].qi;
}
int fr_tree_link_v_index(const fr_tree *t, int i)
{
    return t->links[i].vi;
}
int fr_tree_link_nv(const fr_tree *t, int i)
{
    return t->links[i].nv;
}

/* ---------------------------------------------------------------- data */

/* One carve routine for both sizing (a == NULL: count) and allocation. */
typedef struct carver {
    fr_arena *a;
    size_t bytes;
    bool fail;
} carver;

static void *carve(carver *cv, size_t size)
{
    size_t s = size ? size : 1;
    cv->bytes += (s + 63) & ~(size_t)63;
    if (!cv->a) return NULL;
    void *p = fr_arena_alloc(cv->a, size);
    if (!p) cv->fail = true;
    return p;
}
#define CARVE(cv, type, n) ((type *)carve((cv), sizeof(type) * (size_t)(n)))

static fr_tree_data *layout(const fr_tree *t, carver *cv)
{
    int n = t->n, nq = t->nq, nv = t->nv;
    fr_tree_data *d = CARVE(cv, fr_tree_data, 1);
    fri_tree_ws *w = CARVE(cv, fri_tree_ws, 1);
    double *q = CARVE(cv, double, nq), *qd = CARVE(cv, double, nv);
    double *tau = CARVE(cv, double, nv), *q_ref = CARVE(cv, double, nq);
    double *qd_ref = CARVE(cv, double, nv), *kp = CARVE(cv, double, nv);
    double *kd = CARVE(cv, double, nv), *qdd = CARVE(cv, double, nv);
    double *tau_out = CARVE(cv, double, nv), *tau_limit = CARVE(cv, double, nv);
    double *tau_damper = CARVE(cv, double, nv);
    fr_svec *f_ext = CARVE(cv, fr_svec, n), *vel = CARVE(cv, fr_svec, n);
    fr_mat6 *I_ext = CARVE(cv, fr_mat6, n);
    bool *has_I_ext = CARVE(cv, bool, n);
    fr_pose *pose = CARVE(cv, fr_pose, n);
    fri_tree_ws ws = {
        .X0 = CARVE(cv, fr_xform, n),
        .qc = CARVE(cv, double, nq),
        .Sw = CARVE(cv, fr_svec, nv),
        .Iw = CARVE(cv, fri_sym6, n),
        .vw = CARVE(cv, fr_svec, n),
        .c = CARVE(cv, fr_svec, n),
        .a = CARVE(cv, fr_svec, n),
        .pA = CARVE(cv, fr_svec, n),
        .p0 = CARVE(cv, fr_svec, n),
        .IA = CARVE(cv, fri_sym6, n),
        .U = CARVE(cv, fr_svec, nv),
        .W = CARVE(cv, fr_svec, nv),
        .Dinv = CARVE(cv, double, t->ndinv),
        .lu = CARVE(cv, bool, n),
        .piv = CARVE(cv, int, nv),
        .Iv = CARVE(cv, fr_svec, n),
        .hc = CARVE(cv, fr_svec, n),
        .Icw = CARVE(cv, fri_sym6, n),
        .u = CARVE(cv, double, nv),
        .taut = CARVE(cv, double, nv),
        .H = CARVE(cv, double, nv),
        .Hm = CARVE(cv, double, nv),
        .taum = CARVE(cv, double, nv),
        .qdd_p = CARVE(cv, double, nv),
        .lim = CARVE(cv, int, n),
        .lim_hard = CARVE(cv, bool, n),
        .lim_off = CARVE(cv, bool, n),
        .lim_step = CARVE(cv, int, n),
        .sat = CARVE(cv, bool, n),
        .vlim = CARVE(cv, int, n),
        .vlim_k = CARVE(cv, double, n),
        .Xup = CARVE(cv, fr_xform, n),
        .f = CARVE(cv, fr_svec, n),
        .al = CARVE(cv, fr_svec, n),
        .vl = CARVE(cv, fr_svec, n),
        .Ic = CARVE(cv, fr_rbi, n),
        .J = CARVE(cv, double, 6 * nv),
        .vit = CARVE(cv, double, nv),
        .qd0 = CARVE(cv, double, nv),
        .dv_prev = CARVE(cv, double, nv),
        .q0 = CARVE(cv, double, nq),
        .mim_R = CARVE(cv, double, t->nmimic *nv),
        .mim_Ra = CARVE(cv, fr_svec, t->nmimic * n),
        .mim_A = CARVE(cv, double, t->nmimic * t->nmimic),
        .mim_b = CARVE(cv, double, t->nmimic),
        .mim_lambda = CARVE(cv, double, t->nmimic),
        .mim_u = CARVE(cv, double, nv),
        .mim_pA = CARVE(cv, fr_svec, n),
        .path = CARVE(cv, int, n),
        .resp_x = CARVE(cv, double, 3 * nv),
        .rev_qdd = CARVE(cv, double, nv),
        .rev_a = CARVE(cv, fr_svec, n),
    };
    if (!cv->a || cv->fail) return NULL;
    *w = ws;
    *d = (fr_tree_data){.q = q,
                        .qd = qd,
                        .tau = tau,
                        .q_ref = q_ref,
                        .qd_ref = qd_ref,
                        .kp = kp,
                        .kd = kd,
                        .f_ext = f_ext,
                        .I_ext = I_ext,
                        .has_I_ext = has_I_ext,
                        .qdd = qdd,
                        .tau_out = tau_out,
                        .tau_limit = tau_limit,
                        .tau_damper = tau_damper,
                        .pose = pose,
                        .vel = vel,
                        .ws = w};
    return d;
}

size_t fr_tree_data_size(const fr_tree *t)
{
    carver cv = {NULL, 0, false};
    layout(t, &cv);
    return cv.bytes + 64;
}

fr_tree_data *fr_tree_data_create_in(const fr_tree *t, fr_arena *a)
{
    if (!t || !t->final || !a) return NULL;
    carver cv = {a, 0, false};
    fr_tree_data *d = layout(t, &cv);
    if (d) fr_tree_data_reset(t, d);
    return d;
}

fr_tree_data *fr_tree_data_create(const fr_tree *t)
{
    if (!t || !t->final) return NULL;
    fr_arena a;
    if (fr_arena_init(&a, fr_tree_data_size(t)) != FR_OK) return NULL;
    fr_tree_data *d = fr_tree_data_create_in(t, &a);
    if (!d) {
        fr_arena_destroy(&a);
        return NULL;
    }
    d->own = a;
    return d;
}

void fr_tree_data_destroy(fr_tree_data *d)
{
    if (!d) return;
    fr_arena a = d->own; /* d lives inside it */
    if (a.base) fr_arena_destroy(&a);
}

static void set_quat(double *q, fr_quat r)
{
    q[0] = r.w;
    q[1] = r.x;
    q[2] = r.y;
    q[3] = r.z;
}

void fr_tree_data_reset(const fr_tree *t, fr_tree_data *d)
{
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        double *q = d->q + l->qi;
        switch (l->type) {
        case FR_JOINT_REVOLUTE:
        case FR_JOINT_PRISMATIC:
            q[0] = l->def.q0;
            break;
        case FR_JOINT_SPHERICAL:
            set_quat(q, l->def.q0_rot);
            break;
        case FR_JOINT_FREE:
            q[0] = l->def.q0_pos.x;
            q[1] = l->def.q0_pos.y;
            q[2] = l->def.q0_pos.z;
            set_quat(q + 3, l->def.q0_rot);
            break;
        case FR_JOINT_FIXED:
            break;
        }
        for (int k = 0; k < l->nv; k++) {
            d->kp[l->vi + k] = l->def.kp;
            d->kd[l->vi + k] = l->def.kd;
        }
        d->f_ext[i] = fr_sv_zero();
        d->has_I_ext[i] = false;
    }
    /* followers start on their constraint */
    for (int k = 0; k < t->nmimic; k++) {
        const fri_link *l = &t->links[t->mimic_links[k]];
        const fri_link *m = &t->links[l->mimic];
        d->q[l->qi] = l->def.mimic_multiplier * d->q[m->qi] + l->def.mimic_offset;
        d->ws->mim_lambda[k] = 0.0;
    }
    d->velocity_limited = d->mimic_singular = 0;
    d->fault_link = -1;
    d->ws->pos_valid = d->ws->cfg_valid = false;
    memcpy(d->q_ref, d->q, sizeof(double) * (size_t)t->nq);
    for (int k = 0; k < t->nv; k++) d->qd[k] = d->tau[k] = d->qd_ref[k] = d->qdd[k] = 0.0;
    for (int k = 0; k < t->nv; k++)
        d->tau_out[k] = d->tau_limit[k] = d->tau_damper[k] = d->ws->dv_prev[k] = 0.0;
    d->gravity = fr_v3(0, 0, -9.81);
    d->pd_mode = FR_PD_IMPLICIT;
    d->integrator = FR_INTEGRATOR_EULER;
    fr_tree_forward_kinematics(t, d);
}

void fr_tree_data_forget(const fr_tree *t, fr_tree_data *d)
{
    for (int k = 0; k < t->nv; k++)
        d->tau_out[k] = d->tau_limit[k] = d->tau_damper[k] = d->ws->dv_prev[k] = d->qdd[k] = 0.0;
    for (int k = 0; k < t->nmimic; k++) d->ws->mim_lambda[k] = 0.0;
    d->ws->pos_valid = d->ws->cfg_valid = false;
}

/* ---------------------------------------------------------------- external forces */

void fr_tree_add_ext_force(fr_tree_data *d, int link, fr_vec3 p_world, fr_vec3 f_world)
{
    fr_svec *f = &d->f_ext[link];
    f->ang = fr_v3_add(f->ang, fr_v3_cross(p_world, f_world));
    f->lin = fr_v3_add(f->lin, f_world);
}

void fr_tree_add_ext_torque(fr_tree_data *d, int link, fr_vec3 n_world)
{
    d->f_ext[link].ang = fr_v3_add(d->f_ext[link].ang, n_world);
}

void fr_tree_add_ext_inertia(fr_tree_data *d, int link, const fr_mat6 *I)
{
    if (!d->has_I_ext[link]) {
        d->I_ext[link] = *I;
        d->has_I_ext[link] = true;
        return;
    }
    fr_m6_add(&d->I_ext[link], I);
}

void fr_tree_clear_ext(const fr_tree *t, fr_tree_data *d)
{
    for (int i = 0; i < t->n; i++) {
        d->f_ext[i] = fr_sv_zero();
        d->has_I_ext[i] = false;
    }
}

/* ---------------------------------------------------------------- points, energy, momentum */

fr_vec3 fr_tree_point_world(const fr_tree_data *d, int link, fr_vec3 p_local)
{
    return fr_pose_apply(d->pose[link], p_local);
}

fr_vec3 fr_tree_point_velocity(const fr_tree_data *d, int link, fr_vec3 p_world)
{
    const fr_pose T = d->pose[link];
    /* twist in world axes, linear part at the link origin */
    fr_vec3 w = fr_q_rotate(T.q, d->vel[link].ang);
    fr_vec3 v = fr_q_rotate(T.q, d->vel[link].lin);
    return fr_v3_add(v, fr_v3_cross(w, fr_v3_sub(p_world, T.p)));
}

/* A link-frame motion vector as a world motion vector about the world origin (last FK). */
static fr_svec motion_to_world(const fr_tree_data *d, int link, fr_svec m)
{
    const fr_pose T = d->pose[link];
    fr_vec3 w = fr_q_rotate(T.q, m.ang);
    return fr_sv(w, fr_v3_add(fr_q_rotate(T.q, m.lin), fr_v3_cross(T.p, w)));
}

double fr_tree_kinetic_energy(const fr_tree *t, const fr_tree_data *d)
{
    double e = 0.0;
    for (int i = 0; i < t->n; i++)
        e += 0.5 * fr_sv_dot(d->vel[i], fr_rbi_mulv(t->links[i].I, d->vel[i]));
    return e;
}

double fr_tree_rotor_energy(const fr_tree *t, const fr_tree_data *d)
{
    double e = 0.0;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        if (!fri_controllable(l) || !(l->def.armature > 0.0)) continue;
        for (int k = 0; k < l->nv; k++)
            e += 0.5 * l->def.armature * d->qd[l->vi + k] * d->qd[l->vi + k];
    }
    return e;
}

double fr_tree_limit_energy(const fr_tree *t, const fr_tree_data *d)
{
    double e = 0.0;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        /* (as the step engages them: controllable 1-DOF joints) */
        if (!fri_controllable(l) || !l->def.limited || l->nv != 1 || !(l->def.limit_k > 0.0))
            continue;
        const double q = d->q[l->qi];
        const double x = q < l->def.q_min   ? q - l->def.q_min
                         : q > l->def.q_max ? q - l->def.q_max
                                            : 0.0;
        e += 0.5 * l->def.limit_k * x * x;
    }
    return e;
}

double fr_tree_potential_energy(const fr_tree *t, const fr_tree_data *d)
{
    double e = 0.0;
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        fr_vec3 c = fr_pose_apply(d->pose[i], l->def.com);
        e -= l->def.mass * fr_v3_dot(d->gravity, c);
    }
    return e;
}

fr_svec fr_tree_momentum(const fr_tree *t, const fr_tree_data *d)
{
    fr_svec h = fr_sv_zero();
    for (int i = 0; i < t->n; i++) {
        /* the link momentum (about the link origin, link axes) as a world force vector */
        fr_svec hi = fr_rbi_mulv(t->links[i].I, d->vel[i]);
        const fr_pose T = d->pose[i];
        fr_vec3 f = fr_q_rotate(T.q, hi.lin);
        h = fr_sv_add(h, fr_sv(fr_v3_add(fr_q_rotate(T.q, hi.ang), fr_v3_cross(T.p, f)), f));
    }
    return h;
}

fr_vec3 fr_tree_com(const fr_tree *t, const fr_tree_data *d, double *mass)
{
    double m = 0.0;
    fr_vec3 s = fr_v3_zero();
    for (int i = 0; i < t->n; i++) {
        const fri_link *l = &t->links[i];
        s = fr_v3_mad(s, l->def.mass, fr_pose_apply(d->pose[i], l->def.com));
        m += l->def.mass;
    }
    if (mass) *mass = m;
    return m > 0.0 ? fr_v3_scale(s, 1.0 / m) : s;
}

/* ---------------------------------------------------------------- Jacobian and IK */

void fr_tree_point_jacobian(const fr_tree *t, const fr_tree_data *d, int link, fr_vec3 p_world,
                            double *Jang, double *Jlin)
{
    int nv = t->nv;
    if (Jang) memset(Jang, 0, sizeof(double) * 3 * (size_t)nv);
    if (Jlin) memset(Jlin, 0, sizeof(double) * 3 * (size_t)nv);
    for (int j = link; j >= 0; j = t->links[j].parent) {
        const fri_link *l = &t->links[j];
        for (int k = 0; k < l->nv; k++) {
            /* the joint column as a world motion vector about the world origin */
            fr_svec s = motion_to_world(d, j, l->S[k]);
            fr_vec3 v = fr_v3_add(s.lin, fr_v3_cross(s.ang, p_world));
            int col = l->vi + k;
            if (Jang) {
                Jang[0 * nv + col] = s.ang.x;
                Jang[1 * nv + col] = s.ang.y;
                Jang[2 * nv + col] = s.ang.z;
            }
            if (Jlin) {
                Jlin[0 * nv + col] = v.x;
                Jlin[1 * nv + col] = v.y;
                Jlin[2 * nv + col] = v.z;
            }
        }
    }
}

int fr_tree_ik_dls(const fr_tree *t, fr_tree_data *d, int link, fr_vec3 p_local, int base_link,
                   fr_vec3 dpos, const fr_vec3 *drot, double lambda, double *dtheta)
{
    if (link < 0 || link >= t->n || base_link < -1 || base_link >= t->n || !dtheta)
        return FR_ERR_INVAL;
    int nv = t->nv, m = drot ? 6 : 3;
    double *J = d->ws->J; /* m × nv: rows (rot; pos) or pos */
    memset(J, 0, sizeof(double) * 6 * (size_t)nv);
    memset(dtheta, 0, sizeof(double) * (size_t)nv);
    fr_vec3 p = fr_tree_point_world(d, link, p_local);
    bool reached = base_link == -1;
    for (int j = link; j >= 0; j = t->links[j].parent) {
        if (j == base_link) {
            reached = true;
            break;
        }
        const fri_link *l = &t->links[j];
        for (int k = 0; k < l->nv; k++) {
            fr_svec s = motion_to_world(d, j, l->S[k]);
            fr_vec3 v = fr_v3_add(s.lin, fr_v3_cross(s.ang, p));
            int col = l->vi + k, r = 0;
            if (drot) {
                J[0 * nv + col] = s.ang.x;
                J[1 * nv + col] = s.ang.y;
                J[2 * nv + col] = s.ang.z;
                r = 3;
            }
            J[(r + 0) * nv + col] = v.x;
            J[(r + 1) * nv + col] = v.y;
            J[(r + 2) * nv + col] = v.z;
        }
    }
    if (!reached) return FR_ERR_INVAL; /* base_link is not an ancestor of link */
    double A[36], y[6];
    for (int i = 0; i < m; i++)
        for (int k = 0; k < m; k++) {
            double s = 0.0;
            for (int c = 0; c < nv; c++) s += J[i * nv + c] * J[k * nv + c];
            A[i * m + k] = s + (i == k ? lambda * lambda : 0.0);
        }
    int r = 0;
    if (drot) {
        y[0] = drot->x;
        y[1] = drot->y;
        y[2] = drot->z;
        r = 3;
    }
    y[r + 0] = dpos.x;
    y[r + 1] = dpos.y;
    y[r + 2] = dpos.z;
    if (!fr_chol_factor(A, m)) return FR_ERR_NUMERIC; /* λ = 0 at a singularity */
    fr_chol_solve(A, m, y);
    for (int c = 0; c < nv; c++) {
        double s = 0.0;
        for (int i = 0; i < m; i++) s += J[i * nv + c] * y[i];
        dtheta[c] = s;
    }
    return FR_OK;
}
