/*
 * The constraint stage (docs/constraint.md): joints between free bodies and, in the constraint
 * contact mode, the contacts of free bodies, as rows of one bounded LCP w = Aλ + b solved by
 * projected Gauss–Seidel/SOR (src/constraint). It runs after the forces of the step are known
 * (contacts, springs, robots) and before integration: the impulses λ enter the bodies' forces as
 * Jᵀλ/dt, so the integrator's velocity update reproduces v* + M⁻¹Jᵀλ. After integration the
 * equality rows' position drift is projected out (post-stabilisation).
 */
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

/* ---------------------------------------------------------------- set-up */

/* Unbounded (joint) rows solved as one exact block in each sweep when there are at most this
 * many (fr_constraint_opts.direct_max): a world sizes its block for 6 rows a joint (at least 96,
 * at most FRI_DIRECT_MAX). The factor works inside the rows' envelope (src/constraint/pgs.c):
 * O(n·b²) for a chain's band of b rows, up to O(n³/6) for rows all coupled. */
#define FRI_DIRECT_MIN 96
#define FRI_DIRECT_MAX 384

static int direct_rows(const fr_world_def *def)
{
    int n = def->max_joints > FRI_DIRECT_MAX / 6 ? FRI_DIRECT_MAX : 6 * def->max_joints;
    return n < FRI_DIRECT_MIN ? FRI_DIRECT_MIN : n;
}

size_t fri_world_constraint_memory(const fr_world_def *def)
{
    size_t rows = (size_t)def->max_joints * FRI_JOINT_ROWS;
    if (def->contact_mode == FR_CONTACT_MODE_CONSTRAINT)
        rows += (size_t)def->max_contacts * FRI_CPTS * 3;
    size_t n = (size_t)def->max_bodies;
    return (size_t)def->max_joints * sizeof(fri_joint) +
           n * (3 * sizeof(int) + sizeof(uint64_t) + sizeof(fri_island) + sizeof(fr_cbody) +
                sizeof(fr_svec)) +
           rows * (sizeof(fr_crow) + 2 * sizeof(int)) +
           fr_constraint_work_size(direct_rows(def)) * sizeof(double) + 12 * 64;
}

int fri_world_constraint_init(fr_world *w)
{
    const fr_world_def *d = &w->def;
    w->max_crows = d->max_joints * FRI_JOINT_ROWS;
    if (d->contact_mode == FR_CONTACT_MODE_CONSTRAINT)
        w->max_crows += d->max_contacts * FRI_CPTS * 3;
    int n = d->max_bodies;
    w->joints = d->max_joints > 0 ? FR_ARENA_NEW(&w->arena, fri_joint, d->max_joints) : NULL;
    w->cb_of_slot = FR_ARENA_NEW(&w->arena, int, n);
    w->cb_slot = FR_ARENA_NEW(&w->arena, int, n);
    w->cbodies = FR_ARENA_NEW(&w->arena, fr_cbody, n);
    w->cb_vstar = FR_ARENA_NEW(&w->arena, fr_svec, n);
    w->crows = w->max_crows > 0 ? FR_ARENA_NEW(&w->arena, fr_crow, w->max_crows) : NULL;
    w->crow_owner = w->max_crows > 0 ? FR_ARENA_NEW(&w->arena, int, w->max_crows) : NULL;
    w->crow_slot = w->max_crows > 0 ? FR_ARENA_NEW(&w->arena, int, w->max_crows) : NULL;
    w->crow_kin = w->max_crows > 0 ? FR_ARENA_NEW(&w->arena, double, w->max_crows) : NULL;
    w->cwork = FR_ARENA_NEW(&w->arena, double, fr_constraint_work_size(direct_rows(d)));
    w->isl_up = FR_ARENA_NEW(&w->arena, int, n);
    w->isl_stamp = FR_ARENA_NEW(&w->arena, uint64_t, n);
    w->isl = FR_ARENA_NEW(&w->arena, fri_island, n);
    if (!w->cwork || !w->isl_up || !w->isl_stamp || !w->isl || (d->max_joints > 0 && !w->joints) ||
        !w->cb_of_slot || !w->cb_slot || !w->cbodies || !w->cb_vstar ||
        (w->max_crows > 0 && (!w->crows || !w->crow_owner || !w->crow_slot || !w->crow_kin)))
        return FR_ERR_NOMEM;
    for (int i = 0; i < n; i++) w->cb_of_slot[i] = -1, w->isl_stamp[i] = 0;
    return FR_OK;
}

fr_joint_def fr_joint_def_default(int type)
{
    fr_joint_def d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.frame_a = d.frame_b = fr_pose_identity();
    d.length = -1.0;
    d.lo = -INFINITY;
    d.hi = INFINITY;
    return d;
}

static fr_pose body_pose(const fr_world *w, fr_body_id id)
{
    int s = fri_body_slot(w, id);
    return s < 0 ? fr_pose_identity() : w->state[s].pose;
}

/* A rotation whose z axis is the unit vector z. */
static fr_quat frame_of_axis(fr_vec3 z)
{
    fr_vec3 x = fr_v3_perp(z), y = fr_v3_cross(z, x);
    fr_mat3 R;
    for (int i = 0; i < 3; i++) {
        R.m[i][0] = fr_v3_get(x, i);
        R.m[i][1] = fr_v3_get(y, i);
        R.m[i][2] = fr_v3_get(z, i);
    }
    return fr_m3_to_q(R);
}

int fr_joint_def_at(const fr_world *w, fr_joint_def *def, fr_vec3 anchor, fr_vec3 axis)
{
    if (!w || !def || !fr_v3_isfinite(anchor) || !fr_v3_isfinite(axis)) return FR_ERR_INVAL;
    if (fri_body_slot(w, def->a) < 0) return FR_ERR_STALE;
    if (!fr_body_id_is_null(def->b) && fri_body_slot(w, def->b) < 0) return FR_ERR_STALE;
    double n = fr_v3_norm(axis);
    fr_pose F = {anchor, n > 0 ? frame_of_axis(fr_v3_scale(axis, 1.0 / n)) : fr_q_identity()};
    def->frame_a = fr_pose_mul(fr_pose_inverse(body_pose(w, def->a)), F);
    def->frame_b = fr_pose_mul(fr_pose_inverse(body_pose(w, def->b)), F);
    return FR_OK;
}

/* ---------------------------------------------------------------- a joint's geometry */

typedef struct jgeo {
    int sa, sb;     /* body slots (−1: the world) */
    fr_vec3 ca, cb; /* centres of mass */
    fr_pose Fa, Fb; /* the joint frames in the world */
    fr_vec3 xa, ya, za, zb;
    fr_vec3 d; /* anchor b − anchor a */
} jgeo;

static void joint_geo(const fr_world *w, const fri_joint *j, jgeo *g)
{
    g->sa = fri_body_slot(w, j->def.a);
    g->sb = fr_body_id_is_null(j->def.b) ? -1 : fri_body_slot(w, j->def.b);
    fr_pose pa = g->sa >= 0 ? w->state[g->sa].pose : fr_pose_identity();
    fr_pose pb = g->sb >= 0 ? w->state[g->sb].pose : fr_pose_identity();
    g->ca = pa.p;
    g->cb = pb.p;
    g->Fa = fr_pose_mul(pa, j->def.frame_a);
    g->Fb = fr_pose_mul(pb, j->def.frame_b);
    g->xa = fr_q_rotate(g->Fa.q, fr_v3(1, 0, 0));
    g->ya = fr_q_rotate(g->Fa.q, fr_v3(0, 1, 0));
    g->za = fr_q_rotate(g->Fa.q, fr_v3(0, 0, 1));
    g->zb = fr_q_rotate(g->Fb.q, fr_v3(0, 0, 1));
    g->d = fr_v3_sub(g->Fb.p, g->Fa.p);
}

/* The hinge angle about a's z (unwrapped next to `near`). */
static double hinge_angle(const jgeo *g, double near)
{
    fr_quat r = fr_q_mul(fr_q_conj(g->Fa.q), g->Fb.q);
    double th = 2.0 * atan2(r.z, r.w);
    double k = round((near - th) / (2.0 * M_PI));
    return th + 2.0 * M_PI * k;
}

/* The joint's free coordinate at the geometry. */
static double joint_position(const fri_joint *j, const jgeo *g)
{
    switch (j->def.type) {
    case FR_CJOINT_HINGE:
        return hinge_angle(g, j->position);
    case FR_CJOINT_SLIDER:
        return fr_v3_dot(g->d, g->za);
    case FR_CJOINT_DISTANCE:
        return fr_v3_norm(g->d);
    default:
        return 0.0;
    }
}

/* The relative rotation error of b's frame from a's, world rotation vector. */
static fr_vec3 rotation_error(const jgeo *g)
{
    fr_quat e = fr_q_mul(g->Fb.q, fr_q_conj(g->Fa.q));
    if (e.w < 0) e = fr_q(-e.w, -e.x, -e.y, -e.z);
    return fr_q_log(e);
}

/* ---------------------------------------------------------------- rows */

enum row_kind { ROW_EQ, ROW_LO, ROW_HI, ROW_MOTOR, ROW_SPRING };

static int body_index(fr_world *w, int slot, bool position)
{
    if (slot < 0) return -1;
    /* a robot link: its tree (loops.c); in the re-projection after the contact solve the tree's
     * step is done and its links are taken as moving kinematically */
    if (w->model[slot].type == FR_BODY_LINK)
        return w->creproject ? -1 : fri_loop_body(w, slot, position);
    if (w->model[slot].type != FR_BODY_DYNAMIC) return -1;
    int k = w->cb_of_slot[slot];
    if (k >= 0) return k;
    k = w->ncb++;
    w->cb_of_slot[slot] = k;
    w->cb_slot[k] = slot;
    const fri_body_model *m = &w->model[slot];
    const fri_body_state *s = &w->state[slot];
    fr_mat3 R = fr_q_to_m3(s->pose.q);
    fr_cbody *b = &w->cbodies[k];
    b->ndof = 0;
    b->dq = NULL;
    b->inv_mass = m->inv_mass;
    b->inv_inertia = fr_m3_rotate(R, m->inv_inertia);
    b->dnu = fr_sv_zero();
    const double h = w->h;
    if (w->creproject && w->sys_index[slot] >= 0) { /* solved by the contact step already */
        w->cb_vstar[k] = fr_sv(s->angvel, s->vel);
        return k;
    }
    /* the velocity the step would reach without the impulses */
    fr_vec3 v = fr_v3_add(s->vel, fr_v3_scale(fr_v3_mad(w->def.gravity, m->inv_mass, s->force), h));
    fr_vec3 om = fr_v3_add(s->angvel, fr_m3_mulv(b->inv_inertia, fr_v3_scale(s->torque, h)));
    w->cb_vstar[k] = fr_sv(om, v);
    return k;
}

static void reset_bodies(fr_world *w)
{
    w->cstamp++; /* a new build of rows: the trees' cached Jacobians are stale */
    for (int k = 0; k < w->ncb; k++) {
        int s = w->cb_slot[k];
        if (s >= 0)
            w->cb_of_slot[s] = -1;
        else
            w->robots[-s - 1].cb = -1;
    }
    w->ncb = 0;
}

/* Row builder state: velocity rows (the step) or position rows (the projection). */
typedef struct rowctx {
    bool position;
    double max_err; /* position: largest equality error met */
    bool collect;   /* the equality rows gathered for the implicit solve (jr_*) instead */
    bool bad;       /* collect: a row the solve cannot take (a robot link's, or too many) */
} rowctx;

/* An equality row for the implicit contact solve (fri_world_joint_eq_rows). */
static void collect_row(fr_world *w, rowctx *rc, int owner, int slot, int kind, double C,
                        const fr_joint_def *def, int sa, fr_svec ja, int sb, fr_svec jb)
{
    int d[2] = {-1, -1};
    double c = 0.0;
    for (int side = 0; side < 2; side++) {
        const int s = side ? sb : sa;
        if (s < 0) continue;
        const int type = w->model[s].type;
        if (type == FR_BODY_LINK) {
            rc->bad = true;
            return;
        }
        if (type == FR_BODY_DYNAMIC)
            d[side] = s;
        else if (type == FR_BODY_KINEMATIC)
            c += fr_sv_dot(side ? jb : ja, fri_body_nu(w, s));
    }
    if (d[0] < 0 && d[1] < 0) return;
    if (w->njr >= w->max_jr) {
        rc->bad = true;
        return;
    }
    const int k = w->njr++;
    w->jr_sa[k] = d[0];
    w->jr_sb[k] = d[1];
    w->jr_ja[k] = ja;
    w->jr_jb[k] = jb;
    w->jr_c[k] = w->jr_kin[k] = c;
    w->jr_owner[k] = owner;
    w->jr_slot[k] = slot;
    w->jr_kind[k] = FRI_JR_EQ;
    w->jr_lo[k] = -INFINITY;
    w->jr_hi[k] = INFINITY;
    w->jr_lam1[k] = owner >= 0 && owner < w->njoints ? w->joints[owner].lam[slot] : 0.0;
    const double h = w->h;
    if (kind == ROW_LO || kind == ROW_HI) {
        /* speculative, as the stage's row: the limit met within the step, not passed */
        w->jr_c[k] += C / h;
        w->jr_kind[k] = kind == ROW_LO ? FRI_JR_LO : FRI_JR_HI;
        if (kind == ROW_LO)
            w->jr_lo[k] = 0.0;
        else
            w->jr_hi[k] = 0.0;
    } else if (kind == ROW_MOTOR) {
        w->jr_c[k] -= w->settling ? 0.0 : def->motor_speed;
        w->jr_kind[k] = FRI_JR_MOTOR;
        w->jr_lo[k] = -def->motor_max * h;
        w->jr_hi[k] = def->motor_max * h;
    }
}

/* Append a row between slots sa, sb with blocks ja, jb and error C (m or rad) of a kind. */
static fr_crow *add_row(fr_world *w, rowctx *rc, int owner, int slot, int sa, fr_svec ja, int sb,
                        fr_svec jb, double C, int kind, const fr_joint_def *def)
{
    const double h = w->h;
    if (rc->collect) {
        if (kind != ROW_SPRING) collect_row(w, rc, owner, slot, kind, C, def, sa, ja, sb, jb);
        return NULL;
    }
    if (rc->position) {
        if (kind == ROW_MOTOR || kind == ROW_SPRING) return NULL;
        if (kind == ROW_LO && C >= 0) return NULL;
        if (kind == ROW_HI && C <= 0) return NULL;
        rc->max_err = fmax(rc->max_err, fabs(C));
    }
    int ia = body_index(w, sa, rc->position), ib = body_index(w, sb, rc->position);
    if (ia < 0 && ib < 0) return NULL; /* nothing moves */
    if (w->ncrows >= w->max_crows) {
        w->cstats.dropped++;
        return NULL;
    }
    int i = w->ncrows++;
    fr_crow *r = &w->crows[i];
    memset(r, 0, sizeof *r);
    w->crow_owner[i] = owner;
    w->crow_slot[i] = slot;
    w->crow_kin[i] = 0.0;
    if (ia < 0 && sa >= 0 && w->model[sa].type == FR_BODY_KINEMATIC)
        w->crow_kin[i] += fr_sv_dot(ja, fri_body_nu(w, sa));
    if (ib < 0 && sb >= 0 && w->model[sb].type == FR_BODY_KINEMATIC)
        w->crow_kin[i] += fr_sv_dot(jb, fri_body_nu(w, sb));
    r->a = ia;
    r->b = ib;
    r->ja = ja;
    r->jb = jb;
    r->normal = -1;
    r->lo = -INFINITY;
    r->hi = INFINITY;
    if (kind == ROW_LO) r->lo = 0.0;
    if (kind == ROW_HI) r->hi = 0.0;
    double jv = 0.0;
    if ((ia >= 0 && w->cbodies[ia].ndof > 0) || (ib >= 0 && w->cbodies[ib].ndof > 0))
        jv = fri_loop_sides(w, r, owner, slot, sa, sb);
    else if (!rc->position) {
        if (ia >= 0)
            jv += fr_sv_dot(ja, w->cb_vstar[ia]);
        else if (sa >= 0)
            jv += fr_sv_dot(ja, fri_body_nu(w, sa)); /* kinematic: its set motion */
        if (ib >= 0)
            jv += fr_sv_dot(jb, w->cb_vstar[ib]);
        else if (sb >= 0)
            jv += fr_sv_dot(jb, fri_body_nu(w, sb));
    }
    if (rc->position) {
        r->rhs = C;
        return r;
    }
    r->rhs = jv;
    switch (kind) {
    case ROW_LO:
    case ROW_HI:
        r->rhs += C / h;
        break; /* speculative: the limit is reached, not passed */
    case ROW_MOTOR:
        /* while the world settles a motor holds its joint (at most its force) instead of driving
         * it: a motor-driven table turning under a box would make the box travel */
        r->rhs -= w->settling ? 0.0 : def->motor_speed;
        r->lo = -def->motor_max * h;
        r->hi = def->motor_max * h;
        break;
    case ROW_SPRING: {
        double s = h * def->stiffness + def->damping;
        r->cfm = 1.0 / (h * s);
        r->rhs += def->stiffness * C / s;
        break;
    }
    default:
        break;
    }
    return r;
}

/* Rows making the world points p (on a) and p (on b) agree along direction e. */
static fr_crow *point_row(fr_world *w, rowctx *rc, int owner, int slot, const jgeo *g, fr_vec3 e,
                          double C, int kind, fr_vec3 arm_a)
{
    fr_vec3 rb = fr_v3_sub(g->Fb.p, g->cb);
    fr_svec ja = fr_sv(fr_v3_neg(fr_v3_cross(arm_a, e)), fr_v3_neg(e));
    fr_svec jb = fr_sv(fr_v3_cross(rb, e), e);
    return add_row(w, rc, owner, slot, g->sa, ja, g->sb, jb, C, kind, NULL);
}

static fr_crow *angle_row(fr_world *w, rowctx *rc, int owner, int slot, const jgeo *g, fr_vec3 e,
                          double C, int kind, const fr_joint_def *def)
{
    return add_row(w, rc, owner, slot, g->sa, fr_sv(fr_v3_neg(e), fr_v3_zero()), g->sb,
                   fr_sv(e, fr_v3_zero()), C, kind, def);
}

/* A distance joint of length 0 (rigid: `length`; with a spring: `rest`) has no direction: it
 * is solved as a ball joint (fr_world_add_joint makes a length below FRI_DIST_MIN exactly 0). A
 * pure damper keeps its radial row. */
#define FRI_DIST_MIN 1e-9 /* m */
static bool distance_is_point(const fr_joint_def *def)
{
    if (def->type != FR_CJOINT_DISTANCE) return false;
    if (def->stiffness > 0) return def->rest == 0.0;
    return def->damping > 0 ? false : def->length == 0.0;
}

/* The rows of joint j; row slots are fixed per joint so the impulses warm-start. */
static void joint_rows(fr_world *w, rowctx *rc, int j)
{
    fri_joint *jt = &w->joints[j];
    const fr_joint_def *def = &jt->def;
    jgeo g;
    joint_geo(w, jt, &g);
    if (g.sa < 0 || (!fr_body_id_is_null(def->b) && g.sb < 0)) return; /* a body was removed */
    const fr_vec3 E[3] = {fr_v3(1, 0, 0), fr_v3(0, 1, 0), fr_v3(0, 0, 1)};
    const fr_vec3 arm_a = fr_v3_sub(g.Fa.p, g.ca); /* a's anchor from a's centre */
    int type = def->type;
    if (type == FR_CJOINT_BALL || type == FR_CJOINT_HINGE || type == FR_CJOINT_FIXED)
        for (int k = 0; k < 3; k++)
            point_row(w, rc, j, k, &g, E[k], fr_v3_get(g.d, k), ROW_EQ, arm_a);
    if (type == FR_CJOINT_FIXED || type == FR_CJOINT_SLIDER) {
        fr_vec3 th = rotation_error(&g);
        for (int k = 0; k < 3; k++)
            angle_row(w, rc, j, 3 + k, &g, E[k], fr_v3_get(th, k), ROW_EQ, def);
    }
    if (type == FR_CJOINT_HINGE) {
        fr_vec3 c = fr_v3_cross(g.za, g.zb);
        angle_row(w, rc, j, 3, &g, g.xa, fr_v3_dot(c, g.xa), ROW_EQ, def);
        angle_row(w, rc, j, 4, &g, g.ya, fr_v3_dot(c, g.ya), ROW_EQ, def);
    }
    /* the slider's axis is a's: b's anchor moves across it with a's rotation about its centre */
    const fr_vec3 arm_ab = fr_v3_sub(g.Fb.p, g.ca);
    if (type == FR_CJOINT_SLIDER) {
        point_row(w, rc, j, 0, &g, g.xa, fr_v3_dot(g.d, g.xa), ROW_EQ, arm_ab);
        point_row(w, rc, j, 1, &g, g.ya, fr_v3_dot(g.d, g.ya), ROW_EQ, arm_ab);
    }
    if (type != FR_CJOINT_HINGE && type != FR_CJOINT_SLIDER && type != FR_CJOINT_DISTANCE) return;
    /* the free coordinate: its direction, limits, motor, spring */
    double x = joint_position(jt, &g);
    fr_vec3 dir = g.za;
    if (type == FR_CJOINT_DISTANCE) {
        double n = fr_v3_norm(g.d);
        dir = n > 1e-12 ? fr_v3_scale(g.d, 1.0 / n) : g.za;
        /* with a stiffness or damping the length row is the spring's (a soft distance) */
        bool soft = def->stiffness > 0 || def->damping > 0;
        fr_vec3 rb = fr_v3_sub(g.Fb.p, g.cb);
        if (distance_is_point(def)) {
            /* length 0: the anchors coincide, a ball joint's rows (soft: the spring −k·d); one
             * row along a made-up direction left the others free, and the projection undid
             * their motion while the velocity stayed (a body "moving" at 1 m/s, held still) */
            for (int k = 0; k < 3; k++)
                add_row(w, rc, j, k, g.sa,
                        fr_sv(fr_v3_neg(fr_v3_cross(arm_a, E[k])), fr_v3_neg(E[k])), g.sb,
                        fr_sv(fr_v3_cross(rb, E[k]), E[k]), fr_v3_get(g.d, k),
                        soft ? ROW_SPRING : ROW_EQ, def);
        } else {
            add_row(w, rc, j, 6, g.sa, fr_sv(fr_v3_neg(fr_v3_cross(arm_a, dir)), fr_v3_neg(dir)),
                    g.sb, fr_sv(fr_v3_cross(rb, dir), dir), x - (soft ? def->rest : def->length),
                    soft ? ROW_SPRING : ROW_EQ, def);
        }
    }
    for (int kind = ROW_LO; kind <= ROW_SPRING; kind++) {
        double C = 0.0;
        if (kind == ROW_LO) {
            if (!def->limit || !isfinite(def->lo)) continue;
            C = x - def->lo;
        } else if (kind == ROW_HI) {
            if (!def->limit || !isfinite(def->hi)) continue;
            C = x - def->hi;
        } else if (kind == ROW_MOTOR) {
            if (!def->motor) continue;
        } else {
            if (type == FR_CJOINT_DISTANCE || !(def->stiffness > 0 || def->damping > 0)) continue;
            C = x - def->rest;
        }
        int slot = kind == ROW_LO ? 7 : kind == ROW_HI ? 8 : kind == ROW_MOTOR ? 9 : 10;
        if (type == FR_CJOINT_HINGE)
            angle_row(w, rc, j, slot, &g, dir, C, kind, def);
        else if (type == FR_CJOINT_SLIDER)
            add_row(w, rc, j, slot, g.sa,
                    fr_sv(fr_v3_neg(fr_v3_cross(arm_ab, dir)), fr_v3_neg(dir)), g.sb,
                    fr_sv(fr_v3_cross(fr_v3_sub(g.Fb.p, g.cb), dir), dir), C, kind, def);
        else {
            fr_vec3 rb = fr_v3_sub(g.Fb.p, g.cb);
            add_row(w, rc, j, slot, g.sa, fr_sv(fr_v3_neg(fr_v3_cross(arm_a, dir)), fr_v3_neg(dir)),
                    g.sb, fr_sv(fr_v3_cross(rb, dir), dir), C, kind, def);
        }
    }
}

/* The joints' rows at the step's start for the implicit contact solve (jr_*): equality, limit
 * and motor rows (not the soft ones); their count, or 0 when there are none or the solve cannot
 * take them all (a row on a robot link, or more than max_jr), which then leaves every joint to
 * this stage alone. */
int fri_world_joint_eq_rows(fr_world *w)
{
    w->njr = 0;
    w->jr_overflow = false;
    if (w->njoints == 0 || w->max_jr == 0) return 0;
    rowctx rc = {false, 0.0, true, false};
    for (int j = 0; j < w->njoints && !rc.bad; j++) joint_rows(w, &rc, j);
    w->jr_overflow = rc.bad && w->njr >= w->max_jr;
    if (rc.bad) w->njr = 0;
    return w->njr;
}

/* ---------------------------------------------------------------- joints: the public side */

/* The free coordinate at the bodies' current poses; a hinge's angle is taken in the turn that
 * lies within its limit when one does ([3, 4] rad holds a hinge at −3 rad as 3.28). */
static double start_position(const fr_world *w, const fr_joint_def *def)
{
    fri_joint t;
    memset(&t, 0, sizeof t);
    t.def = *def;
    jgeo g;
    joint_geo(w, &t, &g);
    double x = joint_position(&t, &g);
    if (def->type == FR_CJOINT_HINGE && def->limit && (x < def->lo || x > def->hi)) {
        double turns =
            x < def->lo ? ceil((def->lo - x) / (2.0 * M_PI)) : -ceil((x - def->hi) / (2.0 * M_PI));
        double y = x + 2.0 * M_PI * turns;
        if (y >= def->lo && y <= def->hi) x = y;
    }
    return x;
}

int fr_joint_def_position(const fr_world *w, const fr_joint_def *def, double *out)
{
    if (!w || !def || !out) return FR_ERR_INVAL;
    if (fri_body_slot(w, def->a) < 0) return FR_ERR_STALE;
    if (!fr_body_id_is_null(def->b) && fri_body_slot(w, def->b) < 0) return FR_ERR_STALE;
    *out = start_position(w, def);
    return FR_OK;
}

int fr_world_add_joint(fr_world *w, const fr_joint_def *def, int *out)
{
    if (!w || !def) return FR_ERR_INVAL;
    if (w->locked) return FR_ERR_LOCKED;
    if (def->type < FR_CJOINT_BALL || def->type > FR_CJOINT_DISTANCE) return FR_ERR_INVAL;
    int sa = fri_body_slot(w, def->a);
    int sb = fr_body_id_is_null(def->b) ? -1 : fri_body_slot(w, def->b);
    if (sa < 0 || (!fr_body_id_is_null(def->b) && sb < 0)) return FR_ERR_STALE;
    if (sa == sb) return FR_ERR_INVAL;
    /* a robot link moves with its tree (loops.c): as a side it is as movable as a body */
    int ta = w->model[sa].type, tb = sb >= 0 ? w->model[sb].type : FR_BODY_STATIC;
    bool dyn =
        ta == FR_BODY_DYNAMIC || ta == FR_BODY_LINK || tb == FR_BODY_DYNAMIC || tb == FR_BODY_LINK;
    if (!dyn) return FR_ERR_INVAL;
    /* a ball or fixed joint has no free coordinate to limit, drive or spring */
    bool free_coord = def->type == FR_CJOINT_HINGE || def->type == FR_CJOINT_SLIDER ||
                      def->type == FR_CJOINT_DISTANCE;
    if (!free_coord && (def->limit || def->motor || def->stiffness != 0 || def->damping != 0))
        return FR_ERR_INVAL;
    if (!fr_v3_isfinite(def->frame_a.p) || !fr_q_isfinite(def->frame_a.q) ||
        !fr_v3_isfinite(def->frame_b.p) || !fr_q_isfinite(def->frame_b.q) ||
        !(def->stiffness >= 0) || !(def->damping >= 0) || !isfinite(def->stiffness) ||
        !isfinite(def->damping) || !isfinite(def->rest) || !isfinite(def->motor_speed) ||
        !(def->motor_max >= 0) || (def->limit && !(def->lo <= def->hi)) || isnan(def->length) ||
        (def->type == FR_CJOINT_DISTANCE && def->rest < 0))
        return FR_ERR_RANGE;
    /* a motor faster than the world lets a joint or a body move diverges at its first step */
    double top = def->type == FR_CJOINT_HINGE ? FR_WORLD_MAX_JOINT_SPEED : FR_WORLD_MAX_SPEED;
    if (def->motor && !(fabs(def->motor_speed) <= top)) return FR_ERR_RANGE;
    if (w->njoints >= w->def.max_joints) return FR_ERR_FULL;
    fr_joint_def d = *def;
    d.name[sizeof d.name - 1] = 0;
    d.frame_a.q = fr_q_normalize(def->frame_a.q);
    d.frame_b.q = fr_q_normalize(def->frame_b.q);
    double x = start_position(w, &d);
    if (d.type == FR_CJOINT_DISTANCE) {
        if (d.length < 0) d.length = x;
        if (d.length < FRI_DIST_MIN) d.length = 0.0; /* (a ball joint, distance_is_point) */
        if (d.rest < FRI_DIST_MIN) d.rest = 0.0;
    }
    /* a limit that excludes the start: the speculative row would close the gap in one step,
     * 0.5 rad in 1 ms, and the energy went from 0.54 J to 15 kJ */
    if (d.limit && (x < d.lo - FR_JOINT_START_TOL || x > d.hi + FR_JOINT_START_TOL))
        return FR_ERR_RANGE;
    /* the spring's start energy must be a number (rest 1e300 rad made the first impulse NaN) */
    double stretch = distance_is_point(&d) ? x : x - d.rest;
    if (!isfinite(d.stiffness * stretch * stretch)) return FR_ERR_RANGE;
    int j = w->njoints;
    fri_joint *jt = &w->joints[j];
    memset(jt, 0, sizeof *jt);
    jt->def = d;
    int err = fri_loop_joint_init(w, jt, sa, sb);
    if (err) return err;
    jt->position = x;
    w->njoints++;
    if (out) *out = j;
    return FR_OK;
}

double fri_world_joint_spring_energy(const fr_world *w)
{
    double e = 0.0;
    for (int j = 0; j < w->njoints; j++) {
        const fri_joint *jt = &w->joints[j];
        if (!(jt->def.stiffness > 0)) continue;
        jgeo g;
        joint_geo(w, jt, &g);
        if (g.sa < 0 || (!fr_body_id_is_null(jt->def.b) && g.sb < 0)) continue;
        /* the coordinate the rows' −k·(x − rest) acts on: a zero-length distance's is the
         * anchors' separation vector, whose length is x */
        double s = joint_position(jt, &g) - (distance_is_point(&jt->def) ? 0.0 : jt->def.rest);
        e += 0.5 * jt->def.stiffness * s * s;
    }
    return e;
}

bool fri_world_joined(const fr_world *w, int sa, int sb)
{
    for (int j = 0; j < w->njoints; j++) {
        int ja = fri_body_slot(w, w->joints[j].def.a), jb = fri_body_slot(w, w->joints[j].def.b);
        if ((ja == sa && jb == sb) || (ja == sb && jb == sa)) return true;
    }
    return false;
}

int fr_world_joint_count(const fr_world *w)
{
    return w->njoints;
}

int fr_world_find_joint(const fr_world *w, const char *name, int *out)
{
    for (int j = 0; j < w->njoints; j++)
        if (strcmp(w->joints[j].def.name, name) == 0) {
            *out = j;
            return FR_OK;
        }
    return FR_ERR_NOTFOUND;
}

int fr_world_set_joint_motor(fr_world *w, int j, bool enable, double speed, double max)
{
    if (j < 0 || j >= w->njoints) return FR_ERR_INVAL;
    if (!isfinite(speed) || !(max >= 0) || !isfinite(max)) return FR_ERR_RANGE;
    fr_joint_def *d = &w->joints[j].def;
    if (d->type != FR_CJOINT_HINGE && d->type != FR_CJOINT_SLIDER && d->type != FR_CJOINT_DISTANCE)
        return FR_ERR_INVAL;
    double top = d->type == FR_CJOINT_HINGE ? FR_WORLD_MAX_JOINT_SPEED : FR_WORLD_MAX_SPEED;
    if (enable && !(fabs(speed) <= top)) return FR_ERR_RANGE;
    d->motor = enable;
    d->motor_speed = speed;
    d->motor_max = max;
    return FR_OK;
}

int fr_world_joint_state(const fr_world *w, int j, fr_joint_state *out)
{
    if (j < 0 || j >= w->njoints || !out) return FR_ERR_INVAL;
    const fri_joint *jt = &w->joints[j];
    *out = (fr_joint_state){jt->position,   jt->rate,  jt->error, jt->motor_force,
                            jt->motor_work, jt->force, jt->torque};
    return FR_OK;
}

void fr_world_constraint_stats_get(const fr_world *w, fr_world_constraint_stats *out)
{
    *out = w->cstats;
    out->direct_rows = direct_rows(&w->def);
    out->solve_rows = w->max_jr;
}

/* ---------------------------------------------------------------- contacts as rows */

/* The constraint pair's rows: per point a normal row (λ >= 0; the separation closed within the
 * step and a fifth of an overlap beyond FRI_CONTACT_SLOP taken out per step) and two friction rows
 * bounded by ±μ·λ_normal. */
#define FRI_CONTACT_SLOP       1e-5 /* m */
#define FRI_CONTACT_ERP        0.2
#define FRI_CONTACT_SLIP_SPEED 1e-6 /* m/s: a pair moving faster along its surface slides */
static void contact_rows(fr_world *w, int rec)
{
    fri_pair *p = &w->pairs[rec];
    const fr_contact_model *m = &p->model;
    const double h = w->h;
    int sa = p->slot_a, sb = p->slot_b;
    const fr_vec3 ca = w->state[sa].pose.p, cb = w->state[sb].pose.p;
    double mu = p->cslide ? m->mu_k : m->mu_s;
    if (w->settling) mu = FRI_SETTLE_MU;
    rowctx rc = {false, 0.0};
    for (int k = 0; k < p->cn; k++) {
        fr_vec3 pt = fr_v3_add(
            m->point, fr_v3_add(fr_v3_scale(m->t1, p->cx[k]), fr_v3_scale(m->t2, p->cy[k])));
        fr_vec3 ra = fr_v3_sub(pt, ca), rb = fr_v3_sub(pt, cb);
        /* warm start from the nearest point of the last step */
        double lam[3] = {0, 0, 0}, best = INFINITY;
        for (int q = 0; q < p->cn_prev; q++) {
            double dx = p->cx_prev[q] - p->cx[k], dy = p->cy_prev[q] - p->cy[k];
            double d2 = dx * dx + dy * dy;
            if (d2 < best) best = d2, memcpy(lam, p->clam_prev[q], sizeof lam);
        }
        const fr_vec3 dirs[3] = {m->normal, m->t1, m->t2};
        int normal_row = -1;
        for (int d = 0; d < 3; d++) {
            fr_vec3 e = dirs[d];
            fr_crow *r = add_row(w, &rc, -(rec + 1), 3 * k + d, sa,
                                 fr_sv(fr_v3_neg(fr_v3_cross(ra, e)), fr_v3_neg(e)), sb,
                                 fr_sv(fr_v3_cross(rb, e), e), 0.0, d == 0 ? ROW_LO : ROW_EQ, NULL);
            if (!r) break;
            r->lambda = lam[d];
            if (d == 0) {
                double s = p->csep[k];
                /* add_row put C/h = 0 in; the separation's own bias: */
                if (s > 0)
                    r->rhs += s / h;
                else if (s + FRI_CONTACT_SLOP < 0)
                    r->rhs += FRI_CONTACT_ERP * (s + FRI_CONTACT_SLOP) / h;
                normal_row = (int)(r - w->crows);
            } else {
                r->normal = normal_row;
                r->mu = mu;
            }
        }
    }
}

/* ---------------------------------------------------------------- free islands' momentum */

static int isl_root(fr_world *w, int s)
{
    while (w->isl_up[s] != s) s = w->isl_up[s] = w->isl_up[w->isl_up[s]];
    return s;
}

static bool isl_member(const fr_world *w, int s, uint64_t stamp)
{
    return s >= 0 && w->model[s].type == FR_BODY_DYNAMIC && w->isl_stamp[s] == stamp;
}

/* A body's angular momentum about c, m·(x − c) × v + I ω. */
static fr_vec3 body_momentum(const fr_world *w, int s, fr_vec3 c)
{
    const fri_body_state *b = &w->state[s];
    fr_mat3 Iw = fr_m3_rotate(fr_q_to_m3(b->pose.q), w->model[s].inertia);
    return fr_v3_add(fr_v3_scale(fr_v3_cross(fr_v3_sub(b->pose.p, c), b->vel), w->model[s].mass),
                     fr_m3_mulv(Iw, b->angvel));
}

/* The islands of free bodies joined to each other only, and their angular momentum about their
 * centres before the projection. Returns the stamp that marks their bodies (0: none). */
static uint64_t islands_begin(fr_world *w)
{
    const uint64_t stamp = ++w->isl_clock; /* never reset (the settle restarts steps) */
    bool any = false;
    for (int j = 0; j < w->njoints; j++) {
        const fr_joint_def *d = &w->joints[j].def;
        int side[2] = {fri_body_slot(w, d->a),
                       fr_body_id_is_null(d->b) ? -1 : fri_body_slot(w, d->b)};
        for (int k = 0; k < 2; k++) {
            int s = side[k];
            if (s < 0 || w->model[s].type != FR_BODY_DYNAMIC || w->isl_stamp[s] == stamp) continue;
            w->isl_stamp[s] = stamp;
            w->isl_up[s] = s;
            memset(&w->isl[s], 0, sizeof w->isl[s]);
            any = true;
        }
    }
    if (!any) return 0;
    for (int j = 0; j < w->njoints; j++) {
        const fr_joint_def *d = &w->joints[j].def;
        int sa = fri_body_slot(w, d->a);
        int sb = fr_body_id_is_null(d->b) ? -1 : fri_body_slot(w, d->b);
        bool ma = isl_member(w, sa, stamp), mb = isl_member(w, sb, stamp);
        if (ma && mb) {
            int ra = isl_root(w, sa), rb = isl_root(w, sb);
            if (ra != rb) {
                w->isl_up[ra] = rb;
                w->isl[rb].anchored = w->isl[rb].anchored || w->isl[ra].anchored;
            }
        } else if (ma || mb) { /* the world, a static, kinematic or link side */
            w->isl[isl_root(w, ma ? sa : sb)].anchored = true;
        }
    }
    for (int k = 0; k < w->norder; k++) {
        int s = w->order[k];
        if (!isl_member(w, s, stamp)) continue;
        fri_island *I = &w->isl[isl_root(w, s)];
        I->m += w->model[s].mass;
        I->mx = fr_v3_mad(I->mx, w->model[s].mass, w->state[s].pose.p);
    }
    for (int k = 0; k < w->norder; k++) {
        int s = w->order[k];
        if (!isl_member(w, s, stamp)) continue;
        fri_island *I = &w->isl[isl_root(w, s)];
        I->c = fr_v3_scale(I->mx, 1.0 / I->m);
        I->L0 = fr_v3_add(I->L0, body_momentum(w, s, I->c));
    }
    return stamp;
}

/* The projection moves positions and orientations but not velocities, so it changes a spinning
 * island's angular momentum by Σ m·δx × v + δI·ω: pulling a ring's links back from the chords
 * they took onto their circle takes about ½(ω·dt)² of it a step (a 12-link free ring lost 15 % in
 * 10 s at 5 ms). A free island (joined to nothing but its own free bodies) gets it back by a
 * rigid rotation μ of its velocities about its centre, which every joint allows (J·u stays 0) and
 * which leaves its momentum and centre alone: I_c μ = L0 − L. An island tied to the world
 * exchanges angular momentum with it and is left alone. */
static void islands_end(fr_world *w, uint64_t stamp)
{
    for (int k = 0; k < w->norder; k++) {
        int s = w->order[k];
        if (!isl_member(w, s, stamp)) continue;
        fri_island *I = &w->isl[isl_root(w, s)];
        if (I->anchored) continue;
        fr_vec3 d = fr_v3_sub(w->state[s].pose.p, I->c);
        fr_mat3 par =
            fr_m3_sub(fr_m3_scale(fr_m3_diag(fr_v3(1, 1, 1)), fr_v3_dot(d, d)), fr_m3_outer(d, d));
        fr_mat3 Ib = fr_m3_rotate(fr_q_to_m3(w->state[s].pose.q), w->model[s].inertia);
        I->Ic = fr_m3_add(I->Ic, fr_m3_add(Ib, fr_m3_scale(par, w->model[s].mass)));
        I->L1 = fr_v3_add(I->L1, body_momentum(w, s, I->c));
    }
    for (int k = 0; k < w->norder; k++) { /* each root's μ, kept in its L1 */
        int s = w->order[k];
        if (!isl_member(w, s, stamp) || isl_root(w, s) != s || w->isl[s].anchored) continue;
        fri_island *I = &w->isl[s];
        fr_vec3 mu;
        if (!fr_m3_solve_spd(I->Ic, fr_v3_sub(I->L0, I->L1), &mu)) mu = fr_v3_zero();
        I->L1 = mu;
    }
    for (int k = 0; k < w->norder; k++) {
        int s = w->order[k];
        if (!isl_member(w, s, stamp)) continue;
        const fri_island *I = &w->isl[isl_root(w, s)];
        if (I->anchored) continue;
        fri_body_state *b = &w->state[s];
        b->vel = fr_v3_add(b->vel, fr_v3_cross(I->L1, fr_v3_sub(b->pose.p, I->c)));
        b->angvel = fr_v3_add(b->angvel, I->L1);
    }
}

/* ---------------------------------------------------------------- the stage */

static fr_constraint_opts solver_opts(const fr_world *w)
{
    fr_constraint_opts o = fr_constraint_opts_default();
    if (w->def.constraint_omega > 0) o.omega = w->def.constraint_omega;
    if (w->def.constraint_iterations > 0) o.max_iterations = w->def.constraint_iterations;
    if (w->def.constraint_tolerance > 0) o.tolerance = w->def.constraint_tolerance;
    /* a mechanism's joint rows (unbounded) as one exact block per sweep */
    o.direct_max = direct_rows(&w->def);
    o.work = w->cwork;
    return o;
}

int fri_world_constraints(fr_world *w)
{
    fr_world_constraint_stats *cs = &w->cstats;
    cs->rows = cs->contact_points = cs->iterations = 0;
    cs->residual = 0.0;
    reset_bodies(w);
    w->ncrows = 0;
    rowctx rc = {false, 0.0};
    for (int j = 0; j < w->njoints; j++) {
        int first = w->ncrows;
        joint_rows(w, &rc, j);
        for (int i = first; i < w->ncrows; i++)
            w->crows[i].lambda = w->joints[j].lam[w->crow_slot[i]];
    }
    fri_loop_mimic_rows(w, false, &rc.max_err);
    for (int c = 0; c < w->ncontacts; c++) {
        int rec = w->contacts[c];
        if (!w->pairs[rec].cmode) continue;
        cs->contact_points += w->pairs[rec].cn;
        contact_rows(w, rec);
    }
    if (w->ncrows == 0) {
        fri_loop_finish(w, false);
        return FR_OK;
    }
    fr_constraint_opts o = solver_opts(w);
    fr_constraint_stats st;
    int err = fr_constraint_solve(w->cbodies, w->ncb, w->crows, w->ncrows, &o, &st);
    if (err) {
        fri_loop_finish(w, false);
        return err == FR_ERR_NUMERIC ? fri_world_fault(w, "constraint", "stage", "impulse", NAN)
                                     : err;
    }
    cs->rows = w->ncrows;
    cs->iterations = st.iterations;
    cs->residual = st.residual;
    cs->steps++;
    if (!st.converged) cs->unconverged++;
    if (st.iterations > cs->max_iterations) cs->max_iterations = st.iterations;
    if (st.residual > cs->max_residual) cs->max_residual = st.residual;
    const double h = w->h;
    /* the impulses as forces over the step: the integrator then reaches v* + M⁻¹Jᵀλ */
    for (int k = 0; k < w->ncb; k++) {
        int s = w->cb_slot[k];
        if (s < 0) continue; /* a tree: its qd⁺ and positions below (fri_loop_finish) */
        const fri_body_model *m = &w->model[s];
        fri_body_state *bs = &w->state[s];
        const fr_cbody *b = &w->cbodies[k];
        fr_mat3 R = fr_q_to_m3(bs->pose.q);
        fr_mat3 Iw = fr_m3_rotate(R, m->inertia);
        bs->force = fr_v3_add(bs->force, fr_v3_scale(b->dnu.lin, m->mass / h));
        bs->torque = fr_v3_add(bs->torque, fr_v3_scale(fr_m3_mulv(Iw, b->dnu.ang), 1.0 / h));
    }
    /* impulses back to their owners; the joints' wrenches and the motors' work */
    for (int j = 0; j < w->njoints; j++) {
        w->joints[j].force = w->joints[j].torque = fr_v3_zero();
        w->joints[j].motor_force = 0.0;
    }
    for (int i = 0; i < w->ncrows; i++) {
        const fr_crow *r = &w->crows[i];
        int owner = w->crow_owner[i], slot = w->crow_slot[i];
        if (owner >= w->def.max_joints) {
            /* a mimic row: its force joins the tree's joint forces, as the tree's own solve
             * reports it (tau_out, and through it the joints' work) */
            fri_robot *rb = &w->robots[owner - w->def.max_joints];
            rb->mim_lam[slot] = r->lambda;
            rb->data->tau_out[rb->mim_fv[slot]] += r->lambda / h;
            rb->data->tau_out[rb->mim_lv[slot]] -= rb->mim_mult[slot] * r->lambda / h;
        } else if (owner >= 0) {
            fri_joint *jt = &w->joints[owner];
            jt->lam[slot] = r->lambda;
            jt->force = fr_v3_mad(jt->force, r->lambda / h, r->jb.lin);
            jt->torque = fr_v3_mad(jt->torque, r->lambda / h, r->jb.ang);
            /* a kinematic side moves at its set motion whatever the load: the row's impulse on
             * it, against that motion, is its drive's work on the world (a crane lifting a load
             * on a joint; a motor's row counts its own below) */
            if (!(slot == 9 && jt->def.motor)) w->work -= r->lambda * w->crow_kin[i];
            if (slot == 9 && jt->def.motor) {
                /* work of the motor's force over the step, h·F·(rate + rate⁺)/2 */
                double r0 = 0.0, r1 = 0.0;
                for (int side = 0; side < 2; side++) {
                    int bi = side ? r->b : r->a;
                    if (bi < 0) continue;
                    fr_svec J = side ? r->jb : r->ja;
                    const double *g = side ? r->gb : r->ga;
                    r0 += fri_loop_side_rate(w, bi, J, g, false);
                    r1 += fri_loop_side_rate(w, bi, J, g, true);
                }
                double dw = 0.5 * r->lambda * (r0 + r1);
                jt->motor_force = r->lambda / h;
                jt->motor_rate0 = r0;
                jt->motor_dw = dw;
                jt->motor_work += dw;
                w->work += dw; /* (not the robots' joint_work: a motor's is exact) */
            }
        } else {
            fri_pair *p = &w->pairs[-owner - 1];
            p->clam[slot / 3][slot % 3] = r->lambda;
        }
    }
    /* a constraint pair slides (μ_k next step) when its points still move along the surface
     * after the solve, which converged friction rows within their bounds never let them */
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        if (p->cmode) p->cslide = false;
    }
    fri_loop_finish(w, false); /* the trees take their impulses */
    for (int i = 0; i < w->ncrows; i++) {
        int owner = w->crow_owner[i];
        if (owner >= 0 || w->crow_slot[i] % 3 == 0 || w->settling) continue;
        fri_pair *p = &w->pairs[-owner - 1];
        if (fabs(fr_constraint_w(w->cbodies, &w->crows[i])) > FRI_CONTACT_SLIP_SPEED)
            p->cslide = true;
    }
    return FR_OK;
}

/*
 * A joint whose body is in the implicit contact solve (penalty contacts, implicit springs) has its
 * impulses fixed before that solve, which sees them as given forces and may move the body across
 * the joint (a link of a chain hitting the ground). So once the solve has set those bodies' new
 * velocities, their joints' rows are solved once more (integrate.c calls this between the
 * velocities and the positions): the solved bodies at their new velocities, the other bodies at
 * the velocity the step will give them; the correction goes to the solved bodies' velocities and
 * to the others' forces. A projection: it only removes energy. Soft (spring) rows are forces
 * already applied, not constraints: they are left out.
 */
void fri_world_constraints_mid(fr_world *w)
{
    bool any = false;
    for (int j = 0; j < w->njoints && !any; j++) {
        int sa = fri_body_slot(w, w->joints[j].def.a), sb = fri_body_slot(w, w->joints[j].def.b);
        any = (sa >= 0 && w->sys_index[sa] >= 0) || (sb >= 0 && w->sys_index[sb] >= 0);
    }
    if (!any) return;
    w->creproject = true;
    reset_bodies(w);
    w->ncrows = 0;
    rowctx rc = {false, 0.0};
    for (int j = 0; j < w->njoints; j++) joint_rows(w, &rc, j);
    int k = 0;
    for (int i = 0; i < w->ncrows; i++)
        if (w->crows[i].cfm == 0.0) {
            w->crows[k] = w->crows[i];
            w->crow_owner[k] = w->crow_owner[i];
            w->crow_slot[k] = w->crow_slot[i];
            k++;
        }
    w->ncrows = k;
    const double h = w->h;
    /* a motor has spent part of its torque in the first solve: the projection may use the rest
     * (it applied its whole torque once more, twice the motor's max on a table carrying a box,
     * and that work went uncounted) */
    for (int i = 0; i < w->ncrows; i++) {
        int owner = w->crow_owner[i];
        if (w->crow_slot[i] != 9 || owner < 0 || owner >= w->def.max_joints) continue;
        const fri_joint *jt = &w->joints[owner];
        /* (bounds that hold no impulse at all, a motor the solve left past its force, would
         * force one here, against the joints alone: the projection takes none then) */
        w->crows[i].lo = fmin(0.0, -jt->def.motor_max * h - jt->lam[9]);
        w->crows[i].hi = fmax(0.0, jt->def.motor_max * h - jt->lam[9]);
    }
    fr_constraint_opts o = solver_opts(w);
    fr_constraint_stats st;
    if (w->ncrows > 0 &&
        fr_constraint_solve(w->cbodies, w->ncb, w->crows, w->ncrows, &o, &st) == FR_OK) {
        /* the motors' work over the step now: their whole impulse times the rate's mean over it,
         * from the start to the end the projection leaves (what the first solve booked with the
         * rate it predicted is taken back: booked as an impulse of its own, the correction made
         * a motor holding a loaded arm still do work every step) */
        for (int i = 0; i < w->ncrows; i++) {
            int owner = w->crow_owner[i];
            if (owner >= 0 && owner < w->def.max_joints && w->crow_slot[i] != 9) {
                /* a kinematic side's drive works through the projection's impulse too */
                fri_joint *jk = &w->joints[owner];
                const fr_crow *rk = &w->crows[i];
                jk->force = fr_v3_mad(jk->force, rk->lambda / h, rk->jb.lin);
                jk->torque = fr_v3_mad(jk->torque, rk->lambda / h, rk->jb.ang);
                w->work -= rk->lambda * w->crow_kin[i];
            }
            if (w->crow_slot[i] != 9 || owner < 0 || owner >= w->def.max_joints) continue;
            fri_joint *jt = &w->joints[owner];
            const fr_crow *r = &w->crows[i];
            const double rate1 = fr_constraint_w(w->cbodies, r) + jt->def.motor_speed;
            const double dw =
                0.5 * (jt->lam[9] + r->lambda) * (jt->motor_rate0 + rate1) - jt->motor_dw;
            jt->motor_dw += dw;
            jt->lam[9] += r->lambda;
            jt->motor_force += r->lambda / h;
            jt->motor_work += dw;
            w->work += dw;
        }
        for (int b = 0; b < w->ncb; b++) {
            int s = w->cb_slot[b];
            fri_body_state *bs = &w->state[s];
            const fr_cbody *cb = &w->cbodies[b];
            if (w->sys_index[s] >= 0) {
                bs->angvel = fr_v3_add(bs->angvel, cb->dnu.ang);
                bs->vel = fr_v3_add(bs->vel, cb->dnu.lin);
            } else {
                const fri_body_model *m = &w->model[s];
                fr_mat3 Iw = fr_m3_rotate(fr_q_to_m3(bs->pose.q), m->inertia);
                bs->force = fr_v3_add(bs->force, fr_v3_scale(cb->dnu.lin, m->mass / h));
                bs->torque =
                    fr_v3_add(bs->torque, fr_v3_scale(fr_m3_mulv(Iw, cb->dnu.ang), 1.0 / h));
            }
        }
    }
    w->creproject = false;
    reset_bodies(w);
    w->ncrows = 0;
}

/* Project the equality rows' position errors out after integration (velocities untouched):
 * Gauss–Newton on C(q) = 0 in the metric M, passes until max |C| <= FRI_PROJECT_TOL. It converges
 * in one or two passes on most mechanisms, but only linearly where the step is nearly singular:
 * a taut chain of light links pulled by a heavy body can lengthen only by moving that body
 * (turning the links lengthens it to second order), so each pass turns the links far for a small
 * error and overshoots (a 50 kg tip on 0.05 kg links at 5 ms: 1e-5..2e-2 m each step, up to 41
 * passes; 4 passes left errors that grew until the chain tore). So the passes go on while
 * needed, up to FRI_PROJECT_PASSES; what a step still cannot close is a fault (below). */
int fri_world_constraints_post(fr_world *w)
{
    fr_world_constraint_stats *cs = &w->cstats;
    cs->projections = 0;
    cs->position_error = 0.0;
    bool mimic = false;
    for (int r = 0; r < w->nrobots; r++) mimic = mimic || w->robots[r].nmim > 0;
    if (w->njoints == 0 && !mimic) return FR_OK;
    fr_constraint_opts o = solver_opts(w);
    o.omega = 1.0;
    o.tolerance = 1e-2 * FRI_PROJECT_TOL;
    double err = 0.0;
    const uint64_t islands = islands_begin(w);
    for (int pass = 0; pass <= FRI_PROJECT_PASSES; pass++) {
        reset_bodies(w);
        w->ncrows = 0;
        rowctx rc = {true, 0.0};
        for (int j = 0; j < w->njoints; j++) joint_rows(w, &rc, j);
        fri_loop_mimic_rows(w, true, &rc.max_err);
        err = rc.max_err;
        if (err <= FRI_PROJECT_TOL || pass == FRI_PROJECT_PASSES || w->ncrows == 0) break;
        fr_constraint_stats st;
        for (int i = 0; i < w->ncrows; i++) w->crows[i].lambda = 0.0;
        if (fr_constraint_solve(w->cbodies, w->ncb, w->crows, w->ncrows, &o, &st)) break;
        fri_loop_finish(w, true); /* the trees: q ⊕ Δ */
        for (int k = 0; k < w->ncb; k++) {
            if (w->cb_slot[k] < 0) continue;
            fri_body_state *bs = &w->state[w->cb_slot[k]];
            const fr_cbody *b = &w->cbodies[k];
            fri_body_move(bs, b->dnu.lin);
            bs->pose.q = fr_q_normalize(fr_q_mul(fr_q_exp(b->dnu.ang), bs->pose.q));
        }
        cs->projections++;
    }
    reset_bodies(w);
    w->ncrows = 0;
    if (islands && cs->projections > 0) islands_end(w, islands);
    cs->position_error = err;
    if (err > cs->max_position_error) cs->max_position_error = err;
    /* the joints' coordinates and rates at the step's end */
    int worst = -1;
    double worst_err = 0.0;
    for (int j = 0; j < w->njoints; j++) {
        fri_joint *jt = &w->joints[j];
        jgeo g;
        joint_geo(w, jt, &g);
        double x = joint_position(jt, &g);
        jt->position = x;
        fr_vec3 wa = g.sa >= 0 ? w->state[g.sa].angvel : fr_v3_zero();
        fr_vec3 wb = g.sb >= 0 ? w->state[g.sb].angvel : fr_v3_zero();
        fr_vec3 va = g.sa >= 0
                         ? fr_v3_add(w->state[g.sa].vel, fr_v3_cross(wa, fr_v3_sub(g.Fb.p, g.ca)))
                         : fr_v3_zero();
        fr_vec3 vb = g.sb >= 0
                         ? fr_v3_add(w->state[g.sb].vel, fr_v3_cross(wb, fr_v3_sub(g.Fb.p, g.cb)))
                         : fr_v3_zero();
        switch (jt->def.type) {
        case FR_CJOINT_HINGE:
            jt->rate = fr_v3_dot(fr_v3_sub(wb, wa), g.za);
            break;
        case FR_CJOINT_SLIDER:
            jt->rate = fr_v3_dot(fr_v3_sub(vb, va), g.za);
            break;
        case FR_CJOINT_DISTANCE: {
            double n = fr_v3_norm(g.d);
            jt->rate = n > 0 ? fr_v3_dot(fr_v3_sub(vb, va), g.d) / n : 0.0;
            break;
        }
        default:
            jt->rate = 0.0;
        }
        /* the equality error of this joint alone (measured only: its links' trees are taken
         * as set, creproject, so that no tree is prepared for rows that are not solved) */
        rowctx rc = {true, 0.0};
        w->creproject = true;
        joint_rows(w, &rc, j);
        w->creproject = false;
        jt->error = rc.max_err;
        reset_bodies(w);
        w->ncrows = 0;
        if (!(jt->error <= worst_err)) worst = j, worst_err = jt->error;
    }
    /* a joint the projection could not close is torn: the step fails, naming it, rather than
     * letting the run go on with bodies that no longer meet (and energy from nowhere). Not while
     * the world settles: a robot stands frozen then and its link bodies are not kept on its
     * tree, so a loop through it reads open (fourbar-robot.yaml: 0.25) */
    if (worst >= 0 && !w->settling && !(worst_err <= FRI_JOINT_FAULT_ERR)) {
        char name[sizeof w->joints[0].def.name];
        if (w->joints[worst].def.name[0])
            snprintf(name, sizeof name, "%s", w->joints[worst].def.name);
        else
            snprintf(name, sizeof name, "#%d", worst);
        return fri_world_fault(w, "joint", name, "joint error (m or rad)", worst_err);
    }
    return FR_OK;
}
