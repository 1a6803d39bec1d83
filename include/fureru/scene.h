/*
 * fureru scene files: YAML → a built world plus what the server needs to run it (duration,
 * device, probes). The schema, with every field's default, is in docs/scenes.md.
 */
#ifndef FURERU_SCENE_H
#define FURERU_SCENE_H

#include <stdio.h>

#include "fureru/config.h"
#include "fureru/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_scene fr_scene;

/* Load, apply `--set` overrides (PATH=VALUE strings, in order), validate and build the world.
 * On error returns a negative FR_ERR_* with *d naming file, line, column and field. */
int fr_scene_load(const char *path, const char *const *sets, int nsets, fr_scene **out, fr_diag *d);

/* The same with the options of robots' URDF files. */
typedef struct fr_scene_opts {
    const char *const *sets; /* --set PATH=VALUE, in order */
    int nsets;
    const char *const *package_paths; /* --package-path DIR: where package:// looks first */
    int npackage_paths;
    bool strict;         /* --strict: URDF warnings are errors */
    fr_diag_list *diags; /* receives the URDFs' warnings and notes, and every error of a URDF
                            that fails (NULL: none kept) */
    fr_settle_progress_fn settle_progress; /* told how far world.settle has come (NULL: none) */
    void *settle_user;
} fr_scene_opts;
int fr_scene_load_opts(const char *path, const fr_scene_opts *o, fr_scene **out, fr_diag *d);
void fr_scene_destroy(fr_scene *s);

fr_world *fr_scene_world(fr_scene *s);
const char *fr_scene_path(const fr_scene *s);
const char *fr_scene_name(const fr_scene *s);
double fr_scene_duration(const fr_scene *s); /* s, default run length (world.duration) */

/* Values to log, from the scene's `probes` section. */
enum fr_probe_type {
    FR_PROBE_SPRING = 0, /* force a spring exerts on its body: NAME.fx NAME.fy NAME.fz */
    FR_PROBE_CONTACT =
        1, /* contact force on `body` (from `other`, or from all): NAME.fx .. NAME.fz */
};
typedef struct fr_scene_probe {
    char name[48];
    int type;         /* enum fr_probe_type */
    int spring;       /* FR_PROBE_SPRING: spring index */
    fr_body_id body;  /* FR_PROBE_CONTACT */
    fr_body_id other; /* FR_PROBE_CONTACT; null = every body */
} fr_scene_probe;
/* The haptic device of a scene (`device` section) and how it is coupled to the world. */
typedef struct fr_scene_device {
    bool present;      /* the section exists */
    char spec[512];    /* device name or file; "" = the default (attached hardware, else virtual) */
    fr_body_id proxy;  /* body moved through the virtual coupling; null = none (device idles) */
    double scale;      /* world metres per device metre */
    fr_pose workspace; /* device frame in the world: x_w = p + scale·R·x_d */
    double stiffness;  /* coupling stiffness felt at the device, N/m; < 0 = half the device's max */
    double damping; /* coupling damping felt at the device, N·s/m; < 0 = half the device's max */
    bool passivity; /* time-domain passivity controller on the device port (default on) */
} fr_scene_device;
const fr_scene_device *fr_scene_get_device(const fr_scene *s);

/* The viewer's section (docs/scenes.md, "viewer"): where the camera starts. */
typedef struct fr_scene_viewer {
    bool has_camera; /* viewer.camera given; else the viewer frames the scene itself */
    fr_vec3 target;  /* m, the point the camera orbits and looks at */
    double distance; /* m from the target */
    double yaw;      /* degrees about +z: 0 = the camera on the −y side looking along +y */
    double pitch;    /* degrees above the horizon (positive: looking down) */
    double fov;      /* vertical field of view, degrees */
} fr_scene_viewer;
const fr_scene_viewer *fr_scene_get_viewer(const fr_scene *s);
int fr_scene_probe_count(const fr_scene *s);
const fr_scene_probe *fr_scene_probe_at(const fr_scene *s, int i);

/* The experiment the scene is (its `analysis` section; docs/scenes.md), with its parameters
 * taken from the built world, so that a log's analysis needs nothing but the log's sidecar. */
enum fr_analysis_type {
    FR_ANALYSIS_NONE = 0,
    FR_ANALYSIS_STICK_SLIP = 1, /* a body dragged through a spring at constant speed */
};
/* ω·dt (ω = √(k/m)) of a spring on a body beyond which the step resolves its oscillation
 * coarsely: a stick-slip rig's phases came out 2 % off at 0.1, 8 % at 0.2 and 16 % at 0.63.
 * `fureru check`/`run` warn of such a spring, `fureru analyse` notes it; beyond it, or beyond a
 * damper's c·dt/m of the same, a spring's `implicit: auto` steps it implicitly where it can (a
 * free body pulled at its centre of mass, rest length 0): the explicit step's energy swings by
 * about ω·dt of the spring's (4 % of a run's scale in one tick at 0.2; failing the audit from
 * 0.5) and diverges from 2, the implicit one damps (docs/scenes.md `springs[]`) */
#define FR_SPRING_COARSE_WDT 0.1

typedef struct fr_scene_analysis {
    int type;          /* enum fr_analysis_type */
    char probe[48];    /* the spring probe whose force is analysed (columns PROBE.fx .. .fz) */
    char spring[48];   /* its spring */
    char body[48];     /* the body the spring pulls */
    char on[48];       /* the body it slides on */
    fr_vec3 direction; /* unit, the drive direction: the analysed force is the probe's along it */
    double m;          /* kg, mass of the pulled body */
    double k;          /* N/m, spring stiffness */
    double c;          /* N·s/m, spring damping (the theory is for c = 0) */
    double v;          /* m/s, drive speed (|anchor_velocity|) */
    double mu_s, mu_k; /* friction coefficients of the body–`on` pair (the world's combination) */
    /* gravity's parts: along the support's normal (its body's z axis: what presses the body on
     * it), along the drive, and across the drive within the support's plane, m/s² */
    double g, g_drive, g_side;
} fr_scene_analysis;
const fr_scene_analysis *fr_scene_get_analysis(const fr_scene *s);

/* The --set assignments the scene was loaded with, in order. */
int fr_scene_set_count(const fr_scene *s);
const char *fr_scene_set_at(const fr_scene *s, int i);
/* The scene file as it was built (after --set), as YAML (fr_cfg_write). */
void fr_scene_write_yaml(const fr_scene *s, FILE *out, int indent);

#ifdef __cplusplus
}
#endif
#endif
