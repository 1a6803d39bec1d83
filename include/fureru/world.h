/*
 * fureru world: rigid bodies, gravity, external forces and the step pipeline.
 *
 * A world is created with fixed capacities (fr_world_def); every array it needs is reserved then,
 * in one arena, so fr_world_step never allocates. Bodies are named by generational ids: removing a
 * body bumps its slot's generation and old ids become stale (FR_ERR_STALE), never dangling.
 *
 * Body frame: a body's frame has its origin at the centre of mass; its axes are arbitrary
 * (the inertia tensor is given in them). Poses are of that frame in world coordinates; linear
 * velocity is the centre of mass's, angular velocity is in world coordinates.
 *
 * Integration (fixed step dt): symplectic Euler for translation (v += dt·a, then x += dt·v).
 * Rotation: forces' torque is applied as an impulse to the world angular momentum; the torque-free
 * part (the gyroscopic term) is integrated implicitly by the implicit midpoint rule on Euler's
 * equations in the body frame, which conserves the body-frame kinetic energy and |L| exactly (both
 * are quadratic invariants); the orientation is then advanced by the exponential map with the
 * rotation that carries L_body back onto the conserved world momentum, so world angular momentum is
 * conserved to round-off and fast asymmetric spinners stay stable.
 */
#ifndef FURERU_WORLD_H
#define FURERU_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "fureru/base.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_world fr_world;

/* Generational id; {0, 0} is null. */
typedef struct fr_body_id {
    uint32_t index1; /* slot index + 1 */
    uint32_t gen;    /* generation of the slot when the id was issued */
} fr_body_id;
#define FR_BODY_NULL ((fr_body_id){0, 0})
static inline bool fr_body_id_is_null(fr_body_id id)
{
    return id.index1 == 0;
}
static inline bool fr_body_id_eq(fr_body_id a, fr_body_id b)
{
    return a.index1 == b.index1 && a.gen == b.gen;
}

enum fr_body_type {
    FR_BODY_STATIC = 0,    /* never moves, infinite mass */
    FR_BODY_KINEMATIC = 1, /* moves with its set velocity, infinite mass */
    FR_BODY_DYNAMIC = 2,
};

typedef struct fr_world_def {
    double dt;        /* s, fixed step */
    fr_vec3 gravity;  /* m/s² */
    int max_bodies;   /* capacity, fixed at creation */
    int max_shapes;   /* collision shapes, all bodies together */
    int max_contacts; /* simultaneously touching shape pairs */
    int max_springs;  /* body–anchor spring elements */
} fr_world_def;

/* dt 1 ms, g = (0, 0, −9.81), room for 1024 bodies. */
fr_world_def fr_world_def_default(void);

typedef struct fr_body_def {
    char name[48];
    int type;           /* enum fr_body_type */
    double mass;        /* kg (dynamic bodies) */
    fr_mat3 inertia;    /* kg·m², about the centre of mass, in body axes */
    fr_pose pose;       /* initial pose of the body frame (origin = centre of mass) */
    fr_vec3 vel;        /* m/s, centre of mass */
    fr_vec3 angvel;     /* rad/s, world frame */
    double lin_damping; /* 1/s, v decays as exp(−c t) (implicit); 0 = none */
    double ang_damping; /* 1/s */
} fr_body_def;

/* A 1 kg unit-cube dynamic body at the origin at rest. */
fr_body_def fr_body_def_default(void);

int fr_world_create(const fr_world_def *def, fr_world **out);
void fr_world_destroy(fr_world *w);
const fr_world_def *fr_world_get_def(const fr_world *w);

/* Structural changes: not allowed while the world steps (FR_ERR_LOCKED); never allocate. */
int fr_world_add_body(fr_world *w, const fr_body_def *def, fr_body_id *out);
int fr_world_remove_body(fr_world *w, fr_body_id id);
bool fr_body_is_valid(const fr_world *w, fr_body_id id);
int fr_world_find_body(const fr_world *w, const char *name, fr_body_id *out);
/* Live bodies in creation order: i in [0, fr_world_body_count). */
int fr_world_body_count(const fr_world *w);
fr_body_id fr_world_body_at(const fr_world *w, int i);

/* Advance one step of dt. */
int fr_world_step(fr_world *w);
double fr_world_time(const fr_world *w); /* s */
uint64_t fr_world_step_count(const fr_world *w);

/* Body access. All return FR_OK or FR_ERR_STALE. */
const char *fr_body_name(const fr_world *w, fr_body_id id); /* "" when stale */
int fr_body_type(const fr_world *w, fr_body_id id);         /* −1 when stale */
int fr_body_get_pose(const fr_world *w, fr_body_id id, fr_pose *out);
int fr_body_set_pose(fr_world *w, fr_body_id id, fr_pose pose);
int fr_body_get_velocity(const fr_world *w, fr_body_id id, fr_vec3 *vel, fr_vec3 *angvel);
int fr_body_set_velocity(fr_world *w, fr_body_id id, fr_vec3 vel, fr_vec3 angvel);
int fr_body_get_mass(const fr_world *w, fr_body_id id, double *mass, fr_mat3 *inertia_body);
/* Accumulated for the next step only: a force at a world point, or a pure torque. */
int fr_body_apply_force(fr_world *w, fr_body_id id, fr_vec3 force, fr_vec3 point_world);
int fr_body_apply_torque(fr_world *w, fr_body_id id, fr_vec3 torque);

/* Diagnostics: totals over dynamic bodies. Momentum about the world origin. */
void fr_world_momentum(const fr_world *w, fr_vec3 *linear, fr_vec3 *angular);
double fr_world_kinetic_energy(const fr_world *w);
/* Angular momentum of one body about its centre of mass, world frame. */
int fr_body_angular_momentum(const fr_world *w, fr_body_id id, fr_vec3 *out);

#ifdef __cplusplus
}
#endif
#endif
