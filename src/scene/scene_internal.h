/* Internal scene state shared by the scene module's files. */
#ifndef FR_SCENE_INTERNAL_H
#define FR_SCENE_INTERNAL_H

#include "fureru/scene.h"

enum { FRI_SCENE_MAX_REF = 1 << 30, FRI_SCENE_MAX_PROBES = 64 };

/* Where a body's reference frame (in which the file gives its shapes and points) sits relative
 * to its centre of mass. */
typedef struct fri_body_ref {
    fr_body_id id;
    fr_vec3 com;  /* centre of mass in the reference frame, m */
    int material; /* material index of its first shape (0, the default, when it has none) */
} fri_body_ref;

enum { FRI_SCENE_MAX_SPRINGS = 64 };

/* Documented bounds of scene values (docs/scenes.md, "Limits"): beyond them a run would only
 * overflow or diverge at its first step, so the scene is refused, by `check` as by `run`. */
#define FRI_SCENE_MIN_MASS     1e-9 /* kg */
#define FRI_SCENE_MAX_MASS     1e9  /* kg */
#define FRI_SCENE_MAX_GAIN     1e12 /* N/m, N·s/m: springs' and materials' stiffness and damping */
#define FRI_SCENE_MAX_POSITION 1e4  /* m from the origin (the run's guard has the same bound) */

/* advice.c: bodies that may tip early at the scene's step, gathered while the bodies load */
#define FRI_TIP_ADVICE_MAX 16
typedef struct fri_tip_candidate {
    const fr_cfg_node *node;
    char name[96];
    double e, w, h; /* the predicted tipping error (of w/h), width it tips over and height, m */
    double ws;      /* its stance's least width, m (the stance cap's) */
    bool downhill;  /* w is the width down the slope (else the least width) */
} fri_tip_candidate;
typedef struct fri_tip_advice {
    fri_tip_candidate cand[FRI_TIP_ADVICE_MAX];
    int n;
    const fr_cfg_node *node; /* the last body node recorded (a repeat's copies are one body) */
    /* small bodies on a steep slope at a long step (advice.c) */
    struct {
        const fr_cfg_node *node;
        char name[96];
        double size, slope; /* greatest extent, m; angle off gravity as placed, rad */
        double width;       /* m, its least width (the substep rule's) */
    } small[FRI_TIP_ADVICE_MAX];
    int nsmall;
    struct {
        const fr_cfg_node *node;
        char name[96];
        double width;  /* m, its least width (its widest shape's, the substep rule's) */
    } cur, thin;       /* the free body being loaded (its shapes come in a row) and the narrowest */
    bool stiff_warned; /* a contact too stiff for the collision's resolution was warned of */
    bool turn_warned;  /* a slender body turned on its slope was warned of */
    /* slender bodies turned from square to the slope their stance face looks at, warned at the
     * finish only where that face rests on another body (advice.c) */
    struct {
        const fr_cfg_node *node;
        char name[96];
        const fr_shape *shape; /* the world's, as attached */
        fr_vec3 nf;            /* the stance face's normal, shape frame */
        double w, h, turn;     /* m, m, degrees */
    } turned[FRI_TIP_ADVICE_MAX];
    int nturned;
} fri_tip_advice;

struct fr_scene {
    char path[1024];
    char name[128];
    double duration; /* s */
    fr_world *world;
    fri_body_ref *body_ref;
    int nbodies_ref;
    fr_scene_probe probes[FRI_SCENE_MAX_PROBES];
    int nprobes;
    fr_scene_device device;
    fr_scene_viewer viewer;
    void *robots;              /* state of robots.c (robots.h) */
    const fr_scene_opts *opts; /* while loading */
    fr_cfg_doc *doc;           /* the scene file after --set, as it was built */
    char **sets;               /* the --set assignments, in order */
    int nsets;
    fr_spring_def springs[FRI_SCENE_MAX_SPRINGS]; /* as parsed, by world spring index */
    int nsprings;
    fr_scene_analysis analysis; /* the `analysis` section, resolved (analysis.c) */
    char **body_names;          /* the bodies' names, open-addressing hash set (duplicates in
                                   O(1): 10^5 repeated bodies load in linear time) */
    size_t body_names_cap, body_names_n;
    fri_tip_advice tip;         /* advice.c's candidates while loading */
    const fr_cfg_node *dt_node; /* world.dt, for the advice on the step's length */
};
typedef struct fr_scene fri_scene;

/* One item of the `joints` section (joints.c). */
int fri_scene_parse_joint(const fr_cfg_node *j, fri_scene *sc, fr_diag *d);
/* The `loops:` section (joints.c): link point ↔ link point, ball or hinge, closing loops through
 * robot trees. */
int fri_scene_parse_loop(const fr_cfg_node *j, fri_scene *sc, fr_diag *d);

/* The `analysis` section, after probes (analysis.c). */
int fri_scene_parse_analysis(const fr_cfg_node *a, fri_scene *sc, fr_diag *d);

/* position + orientation ([w, x, y, z]) or rpy (rad) of a mapping. */
int fri_scene_parse_pose(const fr_cfg_node *map, fr_pose *pose, fr_diag *d);

/* advice.c: a dynamic body's shape, as placed (orientation q in the world), that stands on a
 * narrow side small enough that the mass-scaled contact law lets it lean into an edge and tip
 * more than 2 % before tan θ = w/h at the scene's step is recorded; after the joints are read,
 * the worst of those no joint holds gets a warning (with opts->diags). */
void fri_scene_advise_tipping(fri_scene *sc, const fr_cfg_node *b, const char *body,
                              const fr_shape *shape, fr_quat q, int material);
void fri_scene_advise_finish(fri_scene *sc, const fr_cfg_node *joints);

#endif
