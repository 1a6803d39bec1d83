/* World lifetime, bodies and the step pipeline. */
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

fr_world_def fr_world_def_default(void)
{
    return (fr_world_def){
        .dt = 0.001,
        .gravity = {0.0, 0.0, -9.81},
        .max_bodies = 1024,
        .max_shapes = 2048,
        .max_contacts = 8192,
        .max_springs = 64,
        .max_robots = 8,
        .max_materials = 32,
        .max_shape_faces = 256,
        .contact_kappa = 100,
        .contact_beta = 10,
        .contact_link_kappa = 12,
        .contact_link_beta = 6,
        .contact_stiffen = 1,
        .contact_time = 0,
        .contact_implicit = true,
        .implicit_iterations = 100,
        .solver_tolerance = 1e-10,
        .max_fill = 0,
        .reuse_contacts = true,
        .reuse_factor = true,
        .revise_robots = true,
        .max_joints = 64,
        .contact_mode = FR_CONTACT_MODE_PENALTY,
        .constraint_omega = 1.0,
        .constraint_iterations = 200,
        .constraint_tolerance = 1e-9,
    };
}

fr_body_def fr_body_def_default(void)
{
    fr_body_def d;
    memset(&d, 0, sizeof d);
    d.type = FR_BODY_DYNAMIC;
    d.mass = 1.0;
    d.inertia = fr_m3_diag(fr_v3(1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0));
    d.pose = fr_pose_identity();
    return d;
}

int fr_world_create(const fr_world_def *def, fr_world **out)
{
    if (!def || !out) return FR_ERR_INVAL;
    if (!(def->dt > 0) || !isfinite(def->dt) || !fr_v3_isfinite(def->gravity) ||
        def->max_bodies < 1 || def->max_shapes < 0 || def->max_contacts < 0 ||
        def->max_springs < 0 || def->max_materials < 1 || def->max_robots < 0 ||
        def->max_shape_faces < 4 || !(def->contact_kappa > 0) || !(def->contact_beta >= 0) ||
        !isfinite(def->contact_kappa) || !isfinite(def->contact_beta) ||
        !(def->contact_link_kappa > 0) || !(def->contact_link_beta >= 0) ||
        !isfinite(def->contact_link_kappa) || !isfinite(def->contact_link_beta) ||
        !(def->contact_stiffen >= 0) || !isfinite(def->contact_stiffen) ||
        !(def->contact_time >= 0) || !isfinite(def->contact_time) || def->implicit_iterations < 1 ||
        !(def->solver_tolerance > 0) || !isfinite(def->solver_tolerance) || def->max_fill < 0 ||
        def->max_joints < 0 || def->contact_mode < FR_CONTACT_MODE_PENALTY ||
        def->contact_mode > FR_CONTACT_MODE_CONSTRAINT || !(def->constraint_omega >= 0) ||
        !(def->constraint_omega < 2) || def->constraint_iterations < 0 ||
        !(def->constraint_tolerance >= 0) || !isfinite(def->constraint_tolerance) ||
        def->substeps < 0 || def->substeps > FR_WORLD_SUBSTEPS_MAX)
        return FR_ERR_RANGE;
    fr_world tmp;
    memset(&tmp, 0, sizeof tmp);
    int n = def->max_bodies;
    size_t bytes = fri_world_solve_memory(def) + 8 * 64 + sizeof(fr_world) +
                   (size_t)n * (sizeof(fri_body_model) + sizeof(fri_body_state) + sizeof(uint32_t) +
                                sizeof(bool) + 2 * sizeof(int)) +
                   16 * 64 + fri_world_contact_memory(def) + fri_world_constraint_memory(def) +
                   (size_t)(def->max_robots + 1) * sizeof(fri_robot) + (size_t)n * sizeof(int) +
                   128;
    int err = fr_arena_init(&tmp.arena, bytes);
    if (err) return err;
    fr_world *w = FR_ARENA_NEW(&tmp.arena, fr_world, 1);
    *w = tmp;
    w->arena = tmp.arena;
    w->def = *def;
    w->h = def->dt;
    w->nsub = 1;
    w->settle_steps = -1;
    w->cap = n;
    w->model = FR_ARENA_NEW(&w->arena, fri_body_model, n);
    w->state = FR_ARENA_NEW(&w->arena, fri_body_state, n);
    w->gen = FR_ARENA_NEW(&w->arena, uint32_t, n);
    w->alive = FR_ARENA_NEW(&w->arena, bool, n);
    w->free_slots = FR_ARENA_NEW(&w->arena, int, n);
    w->order = FR_ARENA_NEW(&w->arena, int, n);
    if (!w->model || !w->state || !w->gen || !w->alive || !w->free_slots || !w->order) {
        fr_arena a = w->arena;
        fr_arena_destroy(&a);
        return FR_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) w->gen[i] = 1;
    err = fri_world_contact_init(w);
    if (!err) err = fri_world_solve_init(w);
    if (!err) err = fri_world_robot_init(w);
    if (!err) err = fri_world_constraint_init(w);
    if (err) {
        fri_world_contact_destroy(w);
        fr_arena a = w->arena;
        fr_arena_destroy(&a);
        return err;
    }
    *out = w;
    return FR_OK;
}

void fr_world_destroy(fr_world *w)
{
    if (!w) return;
    fri_world_robot_destroy(w);
    fri_world_contact_destroy(w);
    fr_arena a = w->arena; /* the world lives inside its own arena */
    fr_arena_destroy(&a);
}

const fr_world_def *fr_world_get_def(const fr_world *w)
{
    return &w->def;
}

static bool inertia_valid(const fr_mat3 *I)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (!isfinite(I->m[i][j]) ||
                fabs(I->m[i][j] - I->m[j][i]) > 1e-9 * (fabs(I->m[i][j]) + 1e-300))
                return false;
    fr_vec3 e;
    fr_mat3 V;
    fr_m3_eigen_sym(*I, &e, &V);
    /* positive principal moments obeying the triangle inequality (a real mass distribution) */
    double tol = 1e-12 * (e.x + e.y + e.z);
    return e.x > 0 && e.x + e.y >= e.z - tol;
}

int fr_world_add_body(fr_world *w, const fr_body_def *def, fr_body_id *out)
{
    if (!def) return FR_ERR_INVAL;
    if (def->type < FR_BODY_STATIC || def->type > FR_BODY_DYNAMIC) return FR_ERR_INVAL;
    return fri_world_add_body_internal(w, def, out);
}

int fri_world_add_body_internal(fr_world *w, const fr_body_def *def, fr_body_id *out)
{
    if (w->locked) return FR_ERR_LOCKED;
    if (!fr_v3_isfinite(def->pose.p) || !fr_q_isfinite(def->pose.q) ||
        fr_q_norm(def->pose.q) < 1e-9 || !fr_v3_isfinite(def->vel) || !fr_v3_isfinite(def->angvel))
        return FR_ERR_RANGE;
    if (def->type == FR_BODY_DYNAMIC &&
        (!(def->mass > 0) || !isfinite(def->mass) || !inertia_valid(&def->inertia)))
        return FR_ERR_RANGE;
    if (!(def->lin_damping >= 0) || !(def->ang_damping >= 0)) return FR_ERR_RANGE;
    int slot;
    if (w->nfree > 0)
        slot = w->free_slots[--w->nfree];
    else if (w->nslots < w->cap)
        slot = w->nslots++;
    else
        return FR_ERR_FULL;
    fri_body_model *m = &w->model[slot];
    memset(m, 0, sizeof *m);
    memcpy(m->name, def->name, sizeof m->name);
    m->name[sizeof m->name - 1] = 0;
    m->type = def->type;
    m->lin_damping = def->lin_damping;
    m->ang_damping = def->ang_damping;
    m->robot = m->link = m->parent_link = -1;
    if (def->type == FR_BODY_LINK) m->mass = def->mass; /* for contact stiffness only */
    if (def->type == FR_BODY_DYNAMIC) {
        m->mass = def->mass;
        m->inv_mass = 1.0 / def->mass;
        m->inertia = def->inertia;
        fr_m3_inverse(def->inertia, &m->inv_inertia);
    }
    fri_body_state *s = &w->state[slot];
    memset(s, 0, sizeof *s);
    s->pose = (fr_pose){def->pose.p, fr_q_normalize(def->pose.q)};
    if (def->type != FR_BODY_STATIC) {
        s->vel = def->vel;
        s->angvel = def->angvel;
    }
    s->vel0 = s->vel;
    s->angvel0 = s->angvel;
    s->placed = w->steps + 1;
    w->alive[slot] = true;
    w->order[w->norder++] = slot;
    if (out) *out = (fr_body_id){(uint32_t)slot + 1, w->gen[slot]};
    return FR_OK;
}

int fr_world_remove_body(fr_world *w, fr_body_id id)
{
    if (w->locked) return FR_ERR_LOCKED;
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (w->model[i].type == FR_BODY_LINK && w->model[i].robot >= 0) return FR_ERR_INVAL;
    fri_world_remove_body_shapes(w, id);
    for (int k = 0; k < w->nsprings; k++)
        if (fr_body_id_eq(w->springs[k].def.body, id))
            w->springs[k].def.stiffness = w->springs[k].def.damping = 0;
    w->alive[i] = false;
    w->gen[i]++;
    w->free_slots[w->nfree++] = i;
    for (int k = 0; k < w->norder; k++)
        if (w->order[k] == i) {
            memmove(&w->order[k], &w->order[k + 1], sizeof(int) * (size_t)(w->norder - k - 1));
            w->norder--;
            break;
        }
    return FR_OK;
}

bool fr_body_is_valid(const fr_world *w, fr_body_id id)
{
    return fri_body_slot(w, id) >= 0;
}

int fr_world_find_body(const fr_world *w, const char *name, fr_body_id *out)
{
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const char *nm = w->model[i].long_name ? w->model[i].long_name : w->model[i].name;
        if (strcmp(nm, name) == 0) {
            *out = (fr_body_id){(uint32_t)i + 1, w->gen[i]};
            return FR_OK;
        }
    }
    return FR_ERR_NOTFOUND;
}

int fr_world_body_count(const fr_world *w)
{
    return w->norder;
}

fr_body_id fr_world_body_at(const fr_world *w, int k)
{
    if (k < 0 || k >= w->norder) return FR_BODY_NULL;
    int i = w->order[k];
    return (fr_body_id){(uint32_t)i + 1, w->gen[i]};
}

int fri_world_fault(fr_world *w, const char *what, const char *name, const char *quantity,
                    double value)
{
    fr_world_fault *f = &w->fault;
    f->code = FR_ERR_NUMERIC;
    f->time = w->time;
    snprintf(f->what, sizeof f->what, "%s '%s'", what, name);
    snprintf(f->quantity, sizeof f->quantity, "%s", quantity);
    f->value = value;
    return FR_ERR_NUMERIC;
}

const fr_world_fault *fr_world_get_fault(const fr_world *w)
{
    return &w->fault;
}

/* Free bodies that went non-finite or absurdly fast (robot links follow their trees, checked in
 * robots.c). O(bodies), no allocation. */
static int check_bodies(fr_world *w)
{
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (w->model[i].type != FR_BODY_DYNAMIC) continue;
        const fri_body_state *s = &w->state[i];
        const char *nm = w->model[i].long_name ? w->model[i].long_name : w->model[i].name;
        if (!fr_v3_isfinite(s->pose.p) || !fr_q_isfinite(s->pose.q))
            return fri_world_fault(w, "body", nm, "position", NAN);
        double v = fr_v3_norm(s->vel), om = fr_v3_norm(s->angvel);
        if (!(v <= FR_WORLD_MAX_SPEED)) return fri_world_fault(w, "body", nm, "velocity (m/s)", v);
        if (!(om <= FR_WORLD_MAX_SPIN))
            return fri_world_fault(w, "body", nm, "angular velocity (rad/s)", om);
    }
    return FR_OK;
}

/*
 * The substeps the bodies need (docs/world.md, "Substeps"). A step's turn of a body and the
 * penalty law's compliance (its stiffening depth, g·h²/κ) scale with g·h²: a body whose least
 * width is under FR_WORLD_SUBSTEP_WIDTH·g·h² rocked on its contacts, crept at its friction limit
 * and met its landings late (docs/contact.md §8). Its least width is its widest shape's least
 * width across its faces (fri_shape_inst.thin).
 */
int fr_world_substeps_for_width(const fr_world_def *def, double width)
{
    const double g = fr_v3_norm(def->gravity);
    if (!(g > 0.0)) return 1;
    if (!(width > 0.0)) return 1000000000;
    /* the least n with width >= W·g·(dt/n)² (the 1e-12 keeps a width at the threshold at its n) */
    const double need = ceil(def->dt * sqrt(FR_WORLD_SUBSTEP_WIDTH * g / width) * (1.0 - 1e-12));
    return need > 1e9 ? 1000000000 : need < 1.0 ? 1 : (int)need;
}

/* A body's least width is its widest shape's least width across its faces (fri_shape_inst.thin) */
void fri_world_body_widths(const fr_world *w, double *width)
{
    for (int i = 0; i < w->nslots; i++) width[i] = 0.0;
    for (int k = 0; k < w->nshapes; k++) {
        const fri_shape_inst *s = &w->shapes[k];
        int b = s->proxy >= 0 ? fri_body_slot(w, s->body) : -1;
        if (b >= 0 && w->model[b].type == FR_BODY_DYNAMIC) width[b] = fmax(width[b], s->thin);
    }
}

/* The rule over the free bodies (the narrowest asks the most), whatever world.substeps says */
static int substeps_rule(fr_world *w, fr_body_id *who, double *who_width)
{
    *who = (fr_body_id){0};
    *who_width = 0.0;
    if (!(fr_v3_norm(w->def.gravity) > 0.0)) return 1;
    double *width = w->sys_rg; /* scratch here (the implicit solve sets it at each step) */
    fri_world_body_widths(w, width);
    int n = 1;
    for (int k = 0; k < w->norder; k++) {
        const int i = w->order[k];
        if (!(width[i] > 0.0)) continue;
        const int m = fr_world_substeps_for_width(&w->def, width[i]);
        if (m > n) n = m, *who = (fr_body_id){(uint32_t)i + 1, w->gen[i]}, *who_width = width[i];
    }
    return n;
}

/* The substeps taken: world.substeps when set, else the rule's, at most FR_WORLD_SUBSTEPS_MAX */
static int substeps_taken(const fr_world_def *def, int asked)
{
    if (def->substeps > 0) return def->substeps;
    return asked > FR_WORLD_SUBSTEPS_MAX ? FR_WORLD_SUBSTEPS_MAX : asked;
}

void fri_world_fix_substeps(fr_world *w)
{
    if (w->sub_fixed) return;
    w->sub_asked = substeps_rule(w, &w->sub_body, &w->sub_width);
    w->nsub = substeps_taken(&w->def, w->sub_asked);
    w->h = w->def.dt / w->nsub;
    w->sub_fixed = true;
}

void fr_world_substeps_info(const fr_world *w, fr_substeps_info *out)
{
    fr_substeps_info r = {0};
    if (w->sub_fixed) {
        r.asked = w->sub_asked, r.body = w->sub_body, r.width = w->sub_width;
    } else {
        r.asked = substeps_rule((fr_world *)w, &r.body, &r.width);
    }
    r.n = substeps_taken(&w->def, r.asked);
    r.set = w->def.substeps > 0;
    r.resolved = FR_WORLD_SUBSTEP_WIDTH * fr_v3_norm(w->def.gravity) * w->def.dt * w->def.dt;
    *out = r;
}

int fr_world_substeps(const fr_world *w, fr_body_id *body)
{
    fr_substeps_info r;
    fr_world_substeps_info(w, &r);
    if (body) *body = r.set ? (fr_body_id){0} : r.body;
    return r.n;
}

static int step_once(fr_world *w);

int fr_world_step(fr_world *w)
{
    if (w->locked) return FR_ERR_LOCKED;
    fri_world_fix_substeps(w);
    for (w->sub_k = 0; w->sub_k < w->nsub; w->sub_k++) {
        int err = step_once(w);
        if (err) {
            w->sub_k = 0;
            return err;
        }
    }
    w->sub_k = 0;
    return FR_OK;
}

/* One internal step of h: the pipeline */
static int step_once(fr_world *w)
{
    w->locked = true;
    fri_world_energy_begin(w);
    const double seen = w->steps == 0 && !w->settled ? fri_world_contact_energy(w) : 0.0;
    int err = fri_world_contacts(w);
    if (err) {
        if (err == FR_ERR_NUMERIC && !w->fault.code)
            fri_world_fault(w, "contact", "stage", "contact force", NAN);
        w->locked = false;
        return err;
    }
    /* The placement's overlaps (a body placed into another, a curved shape's polytope placed at
     * its true radius, which its vertices reach beyond) hold elastic energy that only this first
     * contact stage finds (docs/world.md, "Energy") */
    if (w->steps == 0 && !w->settled)
        w->placement = fmax(0.0, fri_world_contact_start_energy(w) - seen);
    fri_world_springs(w);
    err = fri_world_robots_step(w);
    if (err) {
        w->locked = false;
        return err;
    }
    /* joints and constraint contacts: their impulses join the forces the integrator applies */
    err = fri_world_constraints(w);
    if (err) {
        w->locked = false;
        return err;
    }
    err = fri_world_integrate(w);
    if (err) {
        w->locked = false;
        return err;
    }
    err = fri_world_constraints_post(w); /* the joints' position drift projected out */
    if (err) {
        w->locked = false;
        return err;
    }
    fri_world_springs_post(w);
    fri_world_robots_sync(w);
    fri_world_contacts_commit(w);
    fri_world_contacts_late(w);
    if ((err = check_bodies(w))) {
        w->locked = false;
        return err;
    }
    fri_world_energy_end(w);
    w->steps++;
    w->time = (double)w->steps * w->h; /* no accumulated round-off in the clock */
    w->locked = false;
    return FR_OK;
}

double fr_world_time(const fr_world *w)
{
    return w->time;
}
uint64_t fr_world_step_count(const fr_world *w)
{
    return w->steps / (uint64_t)w->nsub;
}

const char *fr_body_name(const fr_world *w, fr_body_id id)
{
    int i = fri_body_slot(w, id);
    return i < 0 ? "" : w->model[i].long_name ? w->model[i].long_name : w->model[i].name;
}

int fr_body_type(const fr_world *w, fr_body_id id)
{
    int i = fri_body_slot(w, id);
    return i < 0 ? -1 : w->model[i].type;
}

int fr_body_get_pose(const fr_world *w, fr_body_id id, fr_pose *out)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    *out = w->state[i].pose;
    return FR_OK;
}

int fr_body_set_pose(fr_world *w, fr_body_id id, fr_pose pose)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (w->model[i].type == FR_BODY_LINK) return FR_ERR_INVAL; /* move the robot's joints instead */
    if (!fr_v3_isfinite(pose.p) || !fr_q_isfinite(pose.q) || fr_q_norm(pose.q) < 1e-9)
        return FR_ERR_RANGE;
    w->state[i].pose = (fr_pose){pose.p, fr_q_normalize(pose.q)};
    w->state[i].placed = w->steps + 1;
    if (w->model[i].type == FR_BODY_STATIC) fri_world_shapes_placed(w, id);
    return FR_OK;
}

int fr_body_get_velocity(const fr_world *w, fr_body_id id, fr_vec3 *vel, fr_vec3 *angvel)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (vel) *vel = w->state[i].vel;
    if (angvel) *angvel = w->state[i].angvel;
    return FR_OK;
}

int fr_body_set_velocity(fr_world *w, fr_body_id id, fr_vec3 vel, fr_vec3 angvel)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (!fr_v3_isfinite(vel) || !fr_v3_isfinite(angvel)) return FR_ERR_RANGE;
    if (w->model[i].type == FR_BODY_STATIC || w->model[i].type == FR_BODY_LINK) return FR_ERR_INVAL;
    w->state[i].vel = vel;
    w->state[i].angvel = angvel;
    return FR_OK;
}

int fr_body_get_mass(const fr_world *w, fr_body_id id, double *mass, fr_mat3 *inertia)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (mass) *mass = w->model[i].mass;
    if (inertia) *inertia = w->model[i].inertia;
    return FR_OK;
}

int fr_body_apply_force(fr_world *w, fr_body_id id, fr_vec3 force, fr_vec3 point)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (!fr_v3_isfinite(force) || !fr_v3_isfinite(point)) return FR_ERR_RANGE;
    fri_body_state *s = &w->state[i];
    fr_vec3 t = fr_v3_cross(fr_v3_sub(point, s->pose.p), force);
    s->force = fr_v3_add(s->force, force);
    s->torque = fr_v3_add(s->torque, t);
    s->uforce = fr_v3_add(s->uforce, force);
    s->utorque = fr_v3_add(s->utorque, t);
    return FR_OK;
}

int fr_body_apply_torque(fr_world *w, fr_body_id id, fr_vec3 torque)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    if (!fr_v3_isfinite(torque)) return FR_ERR_RANGE;
    w->state[i].torque = fr_v3_add(w->state[i].torque, torque);
    w->state[i].utorque = fr_v3_add(w->state[i].utorque, torque);
    return FR_OK;
}

static fr_vec3 body_L(const fr_world *w, int i)
{
    const fri_body_state *s = &w->state[i];
    fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
    return fr_q_rotate(s->pose.q, fr_m3_mulv(w->model[i].inertia, wb));
}

int fr_body_angular_momentum(const fr_world *w, fr_body_id id, fr_vec3 *out)
{
    int i = fri_body_slot(w, id);
    if (i < 0) return FR_ERR_STALE;
    *out = body_L(w, i);
    return FR_OK;
}

void fr_world_momentum(const fr_world *w, fr_vec3 *linear, fr_vec3 *angular)
{
    fr_vec3 P = fr_v3_zero(), L = fr_v3_zero();
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (w->model[i].type != FR_BODY_DYNAMIC) continue;
        fr_vec3 p = fr_v3_scale(w->state[i].vel, w->model[i].mass);
        P = fr_v3_add(P, p);
        L = fr_v3_add(L, fr_v3_add(body_L(w, i), fr_v3_cross(w->state[i].pose.p, p)));
    }
    if (linear) *linear = P;
    if (angular) *angular = L;
}

double fr_world_kinetic_energy(const fr_world *w)
{
    double e = 0;
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        if (w->model[i].type != FR_BODY_DYNAMIC) continue;
        const fri_body_state *s = &w->state[i];
        fr_vec3 wb = fr_q_unrotate(s->pose.q, s->angvel);
        e += 0.5 * w->model[i].mass * fr_v3_norm2(s->vel) +
             0.5 * fr_v3_dot(wb, fr_m3_mulv(w->model[i].inertia, wb));
    }
    return e;
}
