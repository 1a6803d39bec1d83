/* Internal layout of fr_world, shared by the world's source files. */
#ifndef FR_WORLD_INTERNAL_H
#define FR_WORLD_INTERNAL_H

#include "fureru/world.h"

/* Constant per body once added (the model). */
typedef struct fri_body_model {
    char name[48];
    int type;
    double mass, inv_mass; /* kg, 1/kg (0 for static/kinematic) */
    fr_mat3 inertia;       /* body axes, about the COM */
    fr_mat3 inv_inertia;
    double lin_damping, ang_damping;
} fri_body_model;

/* Mutable per body (the state). */
typedef struct fri_body_state {
    fr_pose pose;
    fr_vec3 vel, angvel;
    fr_vec3 force, torque; /* accumulated for the current step, world frame */
} fri_body_state;

struct fr_world {
    fr_world_def def;
    fr_arena arena;
    bool locked;
    double time;
    uint64_t steps;

    int cap;    /* body slots */
    int nslots; /* slots ever used (high-water mark) */
    fri_body_model *model;
    fri_body_state *state;
    uint32_t *gen;
    bool *alive;
    int *free_slots; /* stack of removed slots */
    int nfree;
    int *order; /* live slots in creation order */
    int norder;
};

/* Integrate every dynamic and kinematic body over dt with its accumulated force and torque. */
void fri_world_integrate(fr_world *w);

/* Slot of a valid id, or −1. */
static inline int fri_body_slot(const fr_world *w, fr_body_id id)
{
    if (id.index1 == 0 || id.index1 > (uint32_t)w->nslots) return -1;
    int i = (int)id.index1 - 1;
    return w->alive[i] && w->gen[i] == id.gen ? i : -1;
}

#endif
