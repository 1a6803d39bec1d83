/* Internal layout of fr_world, shared by the world's source files. */
#ifndef FR_WORLD_INTERNAL_H
#define FR_WORLD_INTERNAL_H

#include "fureru/world.h"

/* Constant per body once added (the model). */
typedef struct fri_body_model {
    char name[48];
    const char *long_name; /* robot links: the whole "ROBOT/LINK" (owned by the robot), or NULL */
    int type;
    double mass, inv_mass; /* kg, 1/kg (0 for static/kinematic) */
    fr_mat3 inertia;       /* body axes, about the COM */
    fr_mat3 inv_inertia;
    double lin_damping, ang_damping;
    int robot, link, parent_link; /* FR_BODY_LINK: which robot and link (−1 otherwise) */
} fri_body_model;

/* Mutable per body (the state). */
typedef struct fri_body_state {
    fr_pose pose;
    fr_vec3 vel, angvel;
    fr_vec3 force, torque; /* accumulated for the current step, world frame */
    /* implicit springs on this body this step: F = imp_f − (imp_c + dt·imp_k)·v⁺ */
    double imp_k, imp_c; /* N/m, N·s/m */
    fr_vec3 imp_f;       /* N */
} fri_body_state;

typedef struct fri_shape_inst {
    fr_shape *shape;
    fr_pose local;
    fr_body_id body;
    int material;
    int proxy;         /* sweep-and-prune proxy, −1 when dead */
    double silhouette; /* largest projected area of the polytope, m² (bounds a contact's area) */
    bool is_static;
    fr_pose world; /* its pose in the world at the current contact stage (set at its start) */
} fri_shape_inst;

typedef struct fri_material {
    char name[48];
    fr_contact_material m;
} fri_material;

/* A shape pair the broad phase reported, with the state that persists while it does. */
typedef struct fri_pair {
    int sa, sb;     /* shape indices, sa < sb; −1 when the record is free */
    uint64_t stamp; /* step at which the broad phase last reported it */
    int dense;      /* position in the world's active list */
    fr_collide_cache cache;
    fr_contact_state st;
    fr_contact_params params;
    fr_contact_result res;
    /* linearly implicit step: h·D + h²·K between A's and B's velocities (both dynamic), and its
     * transpose S_ba (B's block of the system); the Gauss–Seidel sweeps read both */
    fr_mat6 S_ab, S_ba;
    int slot_a, slot_b; /* body slots of sa and sb at the last contact stage */
    bool coupled;
    bool params_ok; /* params pass fr_contact_params_check (set with them, at creation) */
} fri_pair;

typedef struct fri_robot {
    char name[48];
    fr_tree *tree;
    fr_tree_data *data;
    int nlinks;
    fr_body_id *links; /* the link bodies */
    char *names;       /* their names "ROBOT/LINK", one after the other (any length) */
    double total_mass; /* kg */
    bool self_collide;
    fr_controller_fn ctl;
    void *ctl_user;
} fri_robot;

typedef struct fri_spring {
    fr_spring_def def;
    fr_vec3 force;       /* on the body in the last step, N */
    fr_vec3 anchor;      /* at the last step, m */
    bool driven;         /* the anchor is set from outside (fr_world_set_spring_anchor) */
    fr_vec3 next_anchor; /* driven: anchor at the end of the next step, m */
} fri_spring;

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

    /* contact */
    fri_shape_inst *shapes;
    int nshapes;
    int *proxy_shape; /* sweep-and-prune proxy id → shape index */
    fri_material *materials;
    int nmaterials;
    struct fr_sap *sap;
    fr_sap_pair *sap_pairs;
    int max_sap_pairs;
    fri_pair *pairs; /* max_contacts records */
    int *pair_free;  /* stack of free records */
    int npair_free;
    int *hash; /* open addressing (linear probing) → record, −1 empty */
    uint32_t hmask;
    int *active; /* records in use, dense */
    int nactive;
    int *contacts; /* records overlapping at the last step, in evaluation order */
    int ncontacts;
    double max_pen;
    long pair_overflows; /* broad-phase pairs that did not fit (counted, not fatal) */
    fr_collide_work cw;
    fr_polyhedron_out poly;

    fri_spring *springs;
    int nsprings;

    fri_robot *robots;
    int nrobots;
    fr_world_fault fault; /* the step that diverged, if one did */

    /* the linearly implicit contact step: per body slot M + Σ(h·D̃ + h²·K̃) (factored in place),
     * the right-hand side, and which bodies take part this step */
    fr_mat6 *sys_A;
    fr_svec *sys_b;
    bool *sys_on;
    int *sys_adj_start; /* coupled pairs per body: CSR starts into sys_other and sys_T */
    int *sys_cursor;
    int *sys_other; /* per adjacency entry: the other body's slot */
    /* per adjacency entry: the stored transpose of its coupling block (the pair's S_ba for A,
     * S_ab for B), so the sweeps read it without looking up the pair (contacts.c allocates it) */
    const fr_mat6 **sys_T;
};

/* Record a divergence (the step then returns FR_ERR_NUMERIC). */
int fri_world_fault(fr_world *w, const char *what, const char *name, const char *quantity,
                    double value);

/* Robots (robots.c). */
int fri_world_robot_init(fr_world *w);
void fri_world_robot_destroy(fr_world *w);
int fri_world_robots_step(fr_world *w);  /* controllers, then every tree */
void fri_world_robots_sync(fr_world *w); /* link bodies from the trees */
/* Links of one robot that must not touch (same robot without self-collision, or parent–child). */
bool fri_world_links_filtered(const fr_world *w, int slot_a, int slot_b);
/* fr_world_add_body without the public checks on type (links). */
int fri_world_add_body_internal(fr_world *w, const fr_body_def *def, fr_body_id *out);

/* Contact and spring forces of the current state, accumulated into the bodies. */
int fri_world_contacts(fr_world *w);
void fri_world_springs(fr_world *w);
/* After integration: the force implicit springs exerted at the new state. */
void fri_world_springs_post(fr_world *w);
/* Arena bytes the contact machinery needs for a definition. */
size_t fri_world_contact_memory(const fr_world_def *def);
int fri_world_contact_init(fr_world *w);
void fri_world_contact_destroy(fr_world *w);
void fri_world_remove_body_shapes(fr_world *w, fr_body_id id);

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
