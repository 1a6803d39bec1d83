/* fureru and ODE behind one small interface (see engine.h). */
#include "engine.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ode/ode.h>

#include "fureru/world.h"

#ifdef BENCH_HAVE_BULLET
#include "engine_bullet.h"
#endif

const char *const bench_engine_names[BENCH_NENGINES] = {"fureru", "ode_quick", "ode_step", "bullet",
                                                        "fureru_lcp"};

bool bench_engine_available(int kind)
{
#ifdef BENCH_HAVE_BULLET
    return kind >= 0 && kind < BENCH_NENGINES;
#else
    return kind >= 0 && kind < BENCH_NENGINES && kind != BENCH_BULLET;
#endif
}

int bench_engine_parse(const char *name)
{
    for (int i = 0; i < BENCH_NENGINES; i++)
        if (strcmp(name, bench_engine_names[i]) == 0) return i;
    if (strcmp(name, "ode") == 0) return BENCH_ODE_QUICK;
    return -1;
}

bench_settings bench_settings_default(void)
{
    return (bench_settings){
        .dt = 0.005,
        .gravity = {0, 0, -9.8},
        .mu_s = 0.5,
        .mu_k = 0.5,
        .max_bodies = 1024,
        .fr_kappa = 0,
        .fr_beta = -1,
        .fr_implicit = -1,
        .fr_iters = 0,
        .fr_reuse_contacts = -1,
        .fr_reuse_factor = -1,
        .ode_mu = -1,
        .ode_erp = 0.2,
        .ode_cfm = 1e-5,
        .ode_iters = 20,
        .ode_contacts = 4,
        .ode_surface_layer = 0.001,
        .ode_max_correcting_vel = 0.1,
        .ode_sap = 0,
        .bt_iters = 0,
    };
}

typedef struct bench_spring {
    int body;
    fr_vec3 anchor, anchor_vel;
    double k, c;
    fr_vec3 force; /* last applied, N */
} bench_spring;

#define MAX_SPRINGS      8
#define MAX_ODE_CONTACTS 16

struct bench_engine {
    int kind;        /* BENCH_FURERU for both fureru modes */
    int public_kind; /* as created */
    bench_settings s;
    int nbodies;
    /* fureru */
    fr_world *w;
    fr_body_id *ids;
    /* ODE */
    dWorldID world;
    dSpaceID space;
    dJointGroupID group;
    dBodyID *bodies;
    /* Bullet */
#ifdef BENCH_HAVE_BULLET
    bench_bullet *bt;
#endif
    long steps;
    int pairs, points;
    double max_depth;
    bench_spring springs[MAX_SPRINGS];
    int nsprings;
};

/* The handler has no user pointer, hence a process-wide counter (a benchmark, not the library). */
static long ode_messages;

static void ode_message(int num, const char *msg, va_list ap)
{
    (void)num;
    (void)msg;
    (void)ap;
    ode_messages++;
}

long bench_ode_messages(void)
{
    return ode_messages;
}

void bench_engine_global_init(void)
{
    dSetMessageHandler(ode_message);
    dInitODE2(0);
    dAllocateODEDataForThread(dAllocateMaskAll);
}

void bench_engine_global_cleanup(void)
{
    dCloseODE();
}

fr_world *bench_engine_world(bench_engine *e)
{
    return e->kind == BENCH_FURERU ? e->w : NULL;
}

int bench_engine_kind(const bench_engine *e)
{
    return e->public_kind;
}

/* ---------------------------------------------------------------- creation */

bench_engine *bench_engine_create(int kind, const bench_settings *s)
{
    bench_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    /* fureru_lcp is fureru in the constraint contact mode: the same code paths below */
    e->public_kind = kind;
    e->kind = kind == BENCH_FURERU_LCP ? BENCH_FURERU : kind;
    e->s = *s;
    if (kind == BENCH_BULLET) {
#ifdef BENCH_HAVE_BULLET
        const double g[3] = {s->gravity.x, s->gravity.y, s->gravity.z};
        e->bt = bench_bullet_create(s->dt, g, s->mu_s, s->bt_iters);
        if (e->bt) return e;
#else
        fprintf(stderr, "bench: this build has no Bullet (bullet-float64 not found)\n");
#endif
        free(e);
        return NULL;
    }
    if (e->kind == BENCH_FURERU) {
        fr_world_def def = fr_world_def_default();
        def.dt = s->dt;
        def.gravity = s->gravity;
        def.max_bodies = s->max_bodies + 2;
        def.max_shapes = s->max_bodies + 2;
        def.max_contacts = 8 * s->max_bodies + 16;
        def.max_springs = MAX_SPRINGS;
        def.max_materials = 2;
        def.max_shape_faces = 6;
        if (s->fr_kappa > 0) def.contact_kappa = s->fr_kappa;
        if (s->fr_beta >= 0) def.contact_beta = s->fr_beta;
        if (s->fr_implicit >= 0) def.contact_implicit = s->fr_implicit != 0;
        if (s->fr_iters > 0) def.implicit_iterations = s->fr_iters;
        if (s->fr_reuse_contacts >= 0) def.reuse_contacts = s->fr_reuse_contacts != 0;
        if (s->fr_reuse_factor >= 0) def.reuse_factor = s->fr_reuse_factor != 0;
        if (kind == BENCH_FURERU_LCP) def.contact_mode = FR_CONTACT_MODE_CONSTRAINT;
        int err = fr_world_create(&def, &e->w);
        if (err) {
            fprintf(stderr, "fr_world_create: %s\n", fr_strerror(err));
            free(e);
            return NULL;
        }
        fr_contact_material m = {0.0, 0.0, s->mu_s, s->mu_k};
        err = fr_world_set_material(e->w, 0, &m);
        if (err) {
            fprintf(stderr, "fr_world_set_material: %s\n", fr_strerror(err));
            bench_engine_destroy(e);
            return NULL;
        }
        e->ids = calloc((size_t)s->max_bodies, sizeof *e->ids);
    } else {
        dRandSetSeed(
            1); /* QuickStep reorders constraints with ODE's global RNG: same run, same bits */
        e->world = dWorldCreate();
        dWorldSetGravity(e->world, s->gravity.x, s->gravity.y, s->gravity.z);
        dWorldSetERP(e->world, s->ode_erp);
        dWorldSetCFM(e->world, s->ode_cfm);
        dWorldSetQuickStepNumIterations(e->world, s->ode_iters);
        dWorldSetContactSurfaceLayer(e->world, s->ode_surface_layer);
        if (s->ode_max_correcting_vel > 0)
            dWorldSetContactMaxCorrectingVel(e->world, s->ode_max_correcting_vel);
        dWorldSetAutoDisableFlag(e->world, 0); /* fureru never sleeps bodies: time both awake */
        e->space = s->ode_sap ? dSweepAndPruneSpaceCreate(0, dSAP_AXES_XYZ) : dHashSpaceCreate(0);
        e->group = dJointGroupCreate(0);
        e->bodies = calloc((size_t)s->max_bodies, sizeof *e->bodies);
    }
    if (e->kind == BENCH_FURERU ? !e->ids : !e->bodies) {
        bench_engine_destroy(e);
        return NULL;
    }
    return e;
}

void bench_engine_destroy(bench_engine *e)
{
    if (!e) return;
#ifdef BENCH_HAVE_BULLET
    bench_bullet_destroy(e->bt);
#endif
    if (e->w) fr_world_destroy(e->w);
    free(e->ids);
    if (e->world) {
        dJointGroupDestroy(e->group);
        dSpaceDestroy(e->space); /* destroys its geoms */
        dWorldDestroy(e->world);
    }
    free(e->bodies);
    free(e);
}

int bench_engine_add_ground(bench_engine *e, double half_xy)
{
#ifdef BENCH_HAVE_BULLET
    if (e->kind == BENCH_BULLET) return bench_bullet_add_ground(e->bt);
#endif
    if (e->kind != BENCH_FURERU) {
        dCreatePlane(e->space, 0, 0, 1, 0);
        return 0;
    }
    fr_body_def bd = fr_body_def_default();
    snprintf(bd.name, sizeof bd.name, "ground");
    bd.type = FR_BODY_STATIC;
    bd.pose.p = fr_v3(0, 0, -1.0);
    fr_body_id id;
    int err = fr_world_add_body(e->w, &bd, &id);
    fr_shape *sh = NULL;
    if (!err) err = fr_shape_create_box(fr_v3(half_xy, half_xy, 1.0), &sh);
    if (!err) {
        fr_shape_def sd = fr_shape_def_default(sh);
        err = fr_body_add_shape(e->w, id, &sd);
        if (err) fr_shape_destroy(sh);
    }
    if (err) fprintf(stderr, "fureru ground: %s\n", fr_strerror(err));
    return err;
}

int bench_engine_add_box(bench_engine *e, fr_vec3 size, double mass, fr_pose pose)
{
    if (e->nbodies >= e->s.max_bodies) return FR_ERR_FULL;
    int i = e->nbodies;
#ifdef BENCH_HAVE_BULLET
    if (e->kind == BENCH_BULLET) {
        const double sz[3] = {size.x, size.y, size.z}, p[3] = {pose.p.x, pose.p.y, pose.p.z},
                     q[4] = {pose.q.w, pose.q.x, pose.q.y, pose.q.z};
        if (bench_bullet_add_box(e->bt, sz, mass, p, q) != i) return FR_ERR_INVAL;
        e->nbodies++;
        return i;
    }
#endif
    if (e->kind == BENCH_FURERU) {
        fr_body_def bd = fr_body_def_default();
        snprintf(bd.name, sizeof bd.name, "b%d", i);
        bd.mass = mass;
        double xx = size.x * size.x, yy = size.y * size.y, zz = size.z * size.z;
        bd.inertia =
            fr_m3_diag(fr_v3(mass / 12 * (yy + zz), mass / 12 * (xx + zz), mass / 12 * (xx + yy)));
        bd.pose = pose;
        int err = fr_world_add_body(e->w, &bd, &e->ids[i]);
        fr_shape *sh = NULL;
        if (!err) err = fr_shape_create_box(fr_v3_scale(size, 0.5), &sh);
        if (!err) {
            fr_shape_def sd = fr_shape_def_default(sh);
            err = fr_body_add_shape(e->w, e->ids[i], &sd);
            if (err) fr_shape_destroy(sh);
        }
        if (err) {
            fprintf(stderr, "fureru box: %s\n", fr_strerror(err));
            return err;
        }
    } else {
        dBodyID b = dBodyCreate(e->world);
        dMass m;
        dMassSetBoxTotal(&m, mass, size.x, size.y, size.z);
        dBodySetMass(b, &m);
        dBodySetPosition(b, pose.p.x, pose.p.y, pose.p.z);
        dQuaternion q = {pose.q.w, pose.q.x, pose.q.y, pose.q.z};
        dBodySetQuaternion(b, q);
        dGeomID g = dCreateBox(e->space, size.x, size.y, size.z);
        dGeomSetBody(g, b);
        e->bodies[i] = b;
    }
    e->nbodies++;
    return i;
}

int bench_engine_add_spring(bench_engine *e, int body, fr_vec3 anchor, fr_vec3 anchor_vel, double k,
                            double c)
{
    if (e->nsprings >= MAX_SPRINGS || body < 0 || body >= e->nbodies) return FR_ERR_INVAL;
    if (e->kind == BENCH_FURERU) {
        fr_spring_def sd;
        memset(&sd, 0, sizeof sd);
        snprintf(sd.name, sizeof sd.name, "spring%d", e->nsprings);
        sd.body = e->ids[body];
        sd.local_point = fr_v3_zero();
        sd.anchor = anchor;
        sd.anchor_vel = anchor_vel;
        sd.stiffness = k;
        sd.damping = c;
        sd.rest_length = 0;
        int idx, err = fr_world_add_spring(e->w, &sd, &idx);
        if (err) return err;
    }
    e->springs[e->nsprings] = (bench_spring){body, anchor, anchor_vel, k, c, fr_v3_zero()};
    return e->nsprings++;
}

/* ---------------------------------------------------------------- stepping */

static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    bench_engine *e = data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (!b1 && !b2) return;
    dContact c[MAX_ODE_CONTACTS];
    int maxc = e->s.ode_contacts < MAX_ODE_CONTACTS ? e->s.ode_contacts : MAX_ODE_CONTACTS;
    int n = dCollide(o1, o2, maxc, &c[0].geom, sizeof(dContact));
    if (n <= 0) return;
    double mu = e->s.ode_mu >= 0 ? e->s.ode_mu : e->s.mu_s;
    e->pairs++;
    e->points += n;
    for (int i = 0; i < n; i++) {
        memset(&c[i].surface, 0, sizeof c[i].surface);
        c[i].surface.mode = dContactApprox1;
        c[i].surface.mu = mu;
        if (c[i].geom.depth > e->max_depth) e->max_depth = c[i].geom.depth;
        dJointID j = dJointCreateContact(e->world, e->group, &c[i]);
        dJointAttach(j, b1, b2);
    }
}

int bench_engine_step(bench_engine *e)
{
    const double t = (double)e->steps * e->s.dt; /* time at the start of the step */
    if (e->kind == BENCH_FURERU) {
        int err = fr_world_step(e->w);
        if (err) return err;
        for (int i = 0; i < e->nsprings; i++) {
            fr_vec3 f;
            fr_world_spring_state(e->w, i, &f, NULL);
            e->springs[i].force = f;
        }
        e->steps++;
        return FR_OK;
    }
#ifdef BENCH_HAVE_BULLET
    if (e->kind == BENCH_BULLET) {
        for (int i = 0; i < e->nsprings; i++) {
            bench_spring *sp = &e->springs[i];
            double p[3], q[4], v[3];
            bench_bullet_pose(e->bt, sp->body, p, q);
            bench_bullet_vel(e->bt, sp->body, v);
            fr_vec3 a = fr_v3_mad(sp->anchor, t, sp->anchor_vel);
            fr_vec3 f =
                fr_v3_add(fr_v3_scale(fr_v3(a.x - p[0], a.y - p[1], a.z - p[2]), sp->k),
                          fr_v3_scale(fr_v3(sp->anchor_vel.x - v[0], sp->anchor_vel.y - v[1],
                                            sp->anchor_vel.z - v[2]),
                                      sp->c));
            const double fa[3] = {f.x, f.y, f.z};
            bench_bullet_apply_force(e->bt, sp->body, fa);
            sp->force = f;
        }
        int err = bench_bullet_step(e->bt);
        e->steps++;
        return err;
    }
#endif
    for (int i = 0; i < e->nsprings; i++) {
        bench_spring *sp = &e->springs[i];
        dBodyID b = e->bodies[sp->body];
        const dReal *p = dBodyGetPosition(b), *v = dBodyGetLinearVel(b);
        fr_vec3 a = fr_v3_mad(sp->anchor, t, sp->anchor_vel);
        fr_vec3 f = fr_v3_add(fr_v3_scale(fr_v3(a.x - p[0], a.y - p[1], a.z - p[2]), sp->k),
                              fr_v3_scale(fr_v3(sp->anchor_vel.x - v[0], sp->anchor_vel.y - v[1],
                                                sp->anchor_vel.z - v[2]),
                                          sp->c));
        dBodyAddForce(b, f.x, f.y, f.z);
        sp->force = f;
    }
    e->pairs = e->points = 0;
    e->max_depth = 0;
    dSpaceCollide(e->space, e, near_callback);
    int ok = e->kind == BENCH_ODE_QUICK ? dWorldQuickStep(e->world, e->s.dt)
                                        : dWorldStep(e->world, e->s.dt);
    dJointGroupEmpty(e->group);
    e->steps++;
    return ok ? 0 : FR_ERR_NUMERIC;
}

fr_pose bench_engine_pose(const bench_engine *e, int i)
{
    fr_pose p = fr_pose_identity();
    if (e->kind == BENCH_FURERU) {
        fr_body_get_pose(e->w, e->ids[i], &p);
        return p;
    }
#ifdef BENCH_HAVE_BULLET
    if (e->kind == BENCH_BULLET) {
        double x[3], q[4];
        bench_bullet_pose(e->bt, i, x, q);
        p.p = fr_v3(x[0], x[1], x[2]);
        p.q = fr_q(q[0], q[1], q[2], q[3]);
        return p;
    }
#endif
    const dReal *x = dBodyGetPosition(e->bodies[i]), *q = dBodyGetQuaternion(e->bodies[i]);
    p.p = fr_v3(x[0], x[1], x[2]);
    p.q = fr_q(q[0], q[1], q[2], q[3]);
    return p;
}

fr_vec3 bench_engine_vel(const bench_engine *e, int i)
{
    if (e->kind == BENCH_FURERU) {
        fr_vec3 v = fr_v3_zero(), w;
        fr_body_get_velocity(e->w, e->ids[i], &v, &w);
        return v;
    }
#ifdef BENCH_HAVE_BULLET
    if (e->kind == BENCH_BULLET) {
        double v[3];
        bench_bullet_vel(e->bt, i, v);
        return fr_v3(v[0], v[1], v[2]);
    }
#endif
    const dReal *v = dBodyGetLinearVel(e->bodies[i]);
    return fr_v3(v[0], v[1], v[2]);
}

fr_vec3 bench_engine_spring_force(const bench_engine *e, int i)
{
    return e->springs[i].force;
}

/* What the last step's contacts were: pairs, points and the deepest penetration. */
static void contacts(const bench_engine *e, int *pairs, int *points, double *pen)
{
#ifdef BENCH_HAVE_BULLET
    if (e->kind == BENCH_BULLET) {
        bench_bullet_contacts(e->bt, pairs, points, pen);
        return;
    }
#endif
    if (e->kind == BENCH_FURERU) {
        *pairs = *points = fr_world_contact_count(e->w);
        *pen = fr_world_max_penetration(e->w);
        return;
    }
    *pairs = e->pairs, *points = e->points, *pen = e->max_depth;
}

int bench_engine_contact_pairs(const bench_engine *e)
{
    int pairs, points;
    double pen;
    contacts(e, &pairs, &points, &pen);
    return pairs;
}

int bench_engine_contact_points(const bench_engine *e)
{
    int pairs, points;
    double pen;
    contacts(e, &pairs, &points, &pen);
    return points;
}

double bench_engine_max_penetration(const bench_engine *e)
{
    int pairs, points;
    double pen;
    contacts(e, &pairs, &points, &pen);
    return pen;
}

/* ---------------------------------------------------------------- utilities */

double bench_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *a, int n)
{
    if (n <= 0) return NAN;
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

int bench_parse_list(const char *s, double *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || n >= max) return -1;
        out[n++] = v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}
