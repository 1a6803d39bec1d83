/* Robots in scene files: URDF → tree + link shapes + controller, sized before the world exists
 * and added to it afterwards. Schema and defaults: docs/robots.md. */
#include <fnmatch.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/urdf.h"
#include "robots.h"

enum { CTL_NONE = 0, CTL_PD, CTL_GAIT, CTL_HAND };

typedef struct robot_ent {
    char name[48];
    const fr_cfg_node *node; /* the YAML entry (alive while the scene builds) */
    fr_urdf *urdf;
    fr_tree *tree; /* until the world takes it */
    int nshapes;
    fr_shape **shapes; /* until attached */
    int *shape_link;
    fr_pose *shape_local; /* in the link body's frame (centre of mass, link axes) */
    const fr_cfg_node *material_node;
    char material[48];
    bool self_collide;
    int ctl;
    fr_gait *gait;
    fr_hand *hand;
    bool hand_target_given;
    fr_vec3 hand_target;
    fr_quat hand_rot;
    double *pd_kp, *pd_kd, *pd_q; /* [nv], [nv], [nq]; NAN = keep */
    int world_index;
} robot_ent;

typedef struct fri_scene_robots {
    int n;
    robot_ent *r;
    fri_robots_capacity cap;
} fri_scene_robots;

static const char *const robot_keys[] = {"name",
                                         "urdf",
                                         "position",
                                         "orientation",
                                         "rpy",
                                         "fixed_base",
                                         "joints",
                                         "self_collide",
                                         "material",
                                         "sphere_resolution",
                                         "armature",
                                         "controller",
                                         "cylinder_resolution",
                                         "merge_fixed",
                                         "hull_vertices",
                                         "velocity_limits",
                                         NULL};
static const char *const ctl_types[] = {"none", "pd", "gait", "hand", NULL};
static const char *const pd_keys[] = {"type", "kp", "kd", "targets", "gains", NULL};
static const char *const gait_keys[] = {
    "type",   "speed",      "lateral", "turn_rate",  "period", "duty",    "step_height",
    "height", "max_stride", "ramp",    "leg_kp",     "leg_kd", "body_kp", "body_kd",
    "body",   "legs",       "ik",      "stand_idle", NULL};
static const char *const leg_keys[] = {"hip", "foot", "tip", "phase", NULL};
static const char *const body_keys[] = {"joint", "amplitude", "phase", NULL};
static const char *const ik_keys[] = {"iterations", "lambda", "posture", NULL};
static const char *const hand_keys[] = {"type",       "link",         "point",    "base",
                                        "target",     "target_rpy",   "lambda",   "max_speed",
                                        "iterations", "gravity_comp", "integral", "posture",
                                        "kp",         "kd",           NULL};

static void ent_free(robot_ent *e)
{
    fr_urdf_destroy(e->urdf);
    fr_tree_destroy(e->tree);
    for (int i = 0; i < e->nshapes; i++) fr_shape_destroy(e->shapes[i]);
    free(e->shapes);
    free(e->shape_link);
    free(e->shape_local);
    fr_gait_destroy(e->gait);
    fr_hand_destroy(e->hand);
    free(e->pd_kp);
    free(e->pd_kd);
    free(e->pd_q);
}

/* ---------------------------------------------------------------- joint name patterns */

/* Each key of `map` is a joint name or a glob pattern (fnmatch: *, ?, [..]); calls fn for every
 * movable 1-DOF joint it matches, in tree order. A key matching nothing is an error. */
typedef int (*joint_fn)(robot_ent *e, int link, const fr_cfg_node *val, void *user, fr_diag *d);
static int for_joints(robot_ent *e, const fr_tree *t, const fr_cfg_node *map, joint_fn fn,
                      void *user, fr_diag *d)
{
    if (!map) return FR_OK;
    if (fr_cfg_node_kind(map) != FR_CFG_MAP)
        return fr_cfg_error(map, d, FR_ERR_PARSE,
                            "expected a mapping of joint names (or patterns such as '*_knee') to "
                            "values");
    for (int k = 0; k < fr_cfg_node_len(map); k++) {
        const char *key = fr_cfg_node_key(map, k);
        const fr_cfg_node *val = fr_cfg_node_item(map, k);
        fr_cfg_get(map, key);
        int hits = 0;
        for (int i = 0; i < fr_tree_nlinks(t); i++) {
            const fr_link_def *ld = fr_tree_link_def(t, i);
            if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
            if (fnmatch(key, ld->joint_name, 0)) continue;
            hits++;
            int err = fn(e, i, val, user, d);
            if (err) return err;
        }
        if (!hits)
            return fr_cfg_error(val, d, FR_ERR_NOTFOUND,
                                "'%s' matches no revolute, continuous or prismatic joint of "
                                "robot '%s'",
                                key, e->name);
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- controllers */

/* A link by name, or a link merged into another through fixed joints (its frame in that link:
 * *pose, when given). */
static int link_by_name(const robot_ent *e, const fr_cfg_node *map, const char *key,
                        const fr_tree *t, bool required, int def, int *out, fr_pose *pose,
                        fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    *out = def;
    if (pose) *pose = fr_pose_identity();
    if (!n) {
        if (required)
            return fr_cfg_error(map, d, FR_ERR_PARSE, "missing required field '%s' (a link name)",
                                key);
        return FR_OK;
    }
    char name[1024];
    int err = fr_cfg_string(map, key, "", name, sizeof name, d);
    if (err) return err;
    *out = fr_tree_link_find(t, name);
    if (*out < 0 && e->urdf) *out = fr_urdf_frame_find(e->urdf, name, pose);
    if (*out < 0) return fr_cfg_error(n, d, FR_ERR_NOTFOUND, "no link named '%s'", name);
    return FR_OK;
}

static int parse_gait(robot_ent *e, const fr_tree *t, const fr_cfg_node *c, fr_diag *d)
{
    fr_gait_def g = fr_gait_def_default();
    int err;
    if ((err = fr_cfg_double(c, "speed", g.speed, FR_CFG_ANY, &g.speed, d))) return err;
    if ((err = fr_cfg_double(c, "lateral", g.lateral, FR_CFG_ANY, &g.lateral, d))) return err;
    if ((err = fr_cfg_double(c, "turn_rate", g.turn_rate, FR_CFG_ANY, &g.turn_rate, d))) return err;
    if ((err = fr_cfg_double(c, "period", g.period, FR_CFG_POSITIVE, &g.period, d))) return err;
    if ((err = fr_cfg_double_in(c, "duty", g.duty, 0.05, 0.95, &g.duty, d))) return err;
    if ((err =
             fr_cfg_double(c, "step_height", g.step_height, FR_CFG_NONNEGATIVE, &g.step_height, d)))
        return err;
    if ((err = fr_cfg_double(c, "height", g.height, FR_CFG_NONNEGATIVE, &g.height, d))) return err;
    if ((err = fr_cfg_double(c, "max_stride", g.max_stride, FR_CFG_POSITIVE, &g.max_stride, d)))
        return err;
    if ((err = fr_cfg_double(c, "ramp", g.ramp, FR_CFG_NONNEGATIVE, &g.ramp, d))) return err;
    if ((err = fr_cfg_double(c, "leg_kp", g.leg_kp, FR_CFG_NONNEGATIVE, &g.leg_kp, d))) return err;
    if ((err = fr_cfg_double(c, "leg_kd", g.leg_kd, FR_CFG_NONNEGATIVE, &g.leg_kd, d))) return err;
    if ((err = fr_cfg_double(c, "body_kp", g.body_kp, FR_CFG_NONNEGATIVE, &g.body_kp, d)))
        return err;
    if ((err = fr_cfg_double(c, "body_kd", g.body_kd, FR_CFG_NONNEGATIVE, &g.body_kd, d)))
        return err;
    if ((err = fr_cfg_bool(c, "stand_idle", g.stand_idle, &g.stand_idle, d))) return err;
    const fr_cfg_node *ik = fr_cfg_get(c, "ik");
    if (ik && fr_cfg_node_kind(ik) != FR_CFG_MAP)
        return fr_cfg_error(ik, d, FR_ERR_PARSE, "'ik' must be a mapping");
    long iters;
    if ((err = fr_cfg_int(ik, "iterations", g.ik_iters, 1, 100, &iters, d))) return err;
    g.ik_iters = (int)iters;
    if ((err = fr_cfg_double(ik, "lambda", g.ik_lambda, FR_CFG_NONNEGATIVE, &g.ik_lambda, d)))
        return err;
    if ((err = fr_cfg_double_in(ik, "posture", g.ik_posture, 0, 1, &g.ik_posture, d))) return err;
    if ((err = fr_cfg_check_unknown(ik, ik_keys, d))) return err;

    g.body_link = 0;
    const fr_cfg_node *legs = fr_cfg_get(c, "legs");
    if (!legs || fr_cfg_node_kind(legs) != FR_CFG_SEQ || fr_cfg_node_len(legs) < 1)
        return fr_cfg_error(legs ? legs : c, d, FR_ERR_PARSE,
                            "'legs' must be a list of {hip, foot, tip, phase} (at least one)");
    if (fr_cfg_node_len(legs) > FR_GAIT_MAX_LEGS)
        return fr_cfg_error(legs, d, FR_ERR_RANGE, "at most %d legs", FR_GAIT_MAX_LEGS);
    g.nlegs = fr_cfg_node_len(legs);
    for (int i = 0; i < g.nlegs; i++) {
        const fr_cfg_node *l = fr_cfg_node_item(legs, i);
        if (fr_cfg_node_kind(l) != FR_CFG_MAP)
            return fr_cfg_error(l, d, FR_ERR_PARSE, "each leg must be a mapping");
        fr_gait_leg_def *L = &g.legs[i];
        fr_pose foot;
        if ((err = link_by_name(e, l, "hip", t, true, -1, &L->hip_link, NULL, d))) return err;
        if ((err = link_by_name(e, l, "foot", t, true, -1, &L->foot_link, &foot, d))) return err;
        if ((err = fr_cfg_vec3(l, "tip", fr_v3_zero(), &L->tip, d))) return err;
        L->tip = fr_pose_apply(foot, L->tip);
        if ((err = fr_cfg_double_in(l, "phase", 0, 0, 0.999999, &L->phase, d))) return err;
        if ((err = fr_cfg_check_unknown(l, leg_keys, d))) return err;
        bool ok = false;
        for (int j = L->foot_link; j >= 0; j = fr_tree_link_def(t, j)->parent)
            if (j == L->hip_link) ok = true;
        if (!ok || L->hip_link == 0)
            return fr_cfg_error(l, d, FR_ERR_RANGE,
                                "the foot link must be the hip link or below it, and the hip "
                                "below the base link '%s'",
                                fr_tree_link_def(t, 0)->name);
    }
    const fr_cfg_node *body = fr_cfg_get(c, "body");
    if (body && fr_cfg_node_kind(body) != FR_CFG_SEQ)
        return fr_cfg_error(body, d, FR_ERR_PARSE,
                            "'body' must be a list of {joint, amplitude, phase}");
    if (fr_cfg_node_len(body) > FR_GAIT_MAX_BODY)
        return fr_cfg_error(body, d, FR_ERR_RANGE, "at most %d body joints", FR_GAIT_MAX_BODY);
    g.nbody = fr_cfg_node_len(body);
    for (int i = 0; i < g.nbody; i++) {
        const fr_cfg_node *b = fr_cfg_node_item(body, i);
        if (fr_cfg_node_kind(b) != FR_CFG_MAP)
            return fr_cfg_error(b, d, FR_ERR_PARSE, "each body joint must be a mapping");
        const fr_cfg_node *jn = fr_cfg_get(b, "joint");
        if (!jn) return fr_cfg_error(b, d, FR_ERR_PARSE, "missing required field 'joint'");
        char name[128];
        if ((err = fr_cfg_string(b, "joint", "", name, sizeof name, d))) return err;
        int link = fr_tree_joint_find(t, name);
        if (link < 0) return fr_cfg_error(jn, d, FR_ERR_NOTFOUND, "no joint named '%s'", name);
        const fr_link_def *ld = fr_tree_link_def(t, link);
        if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC)
            return fr_cfg_error(jn, d, FR_ERR_RANGE, "joint '%s' is not a 1-DOF joint", name);
        g.body_links[i] = link;
        if ((err = fr_cfg_double(b, "amplitude", 0, FR_CFG_NONNEGATIVE, &g.body_amp[i], d)))
            return err;
        if ((err = fr_cfg_double(b, "phase", 0, FR_CFG_ANY, &g.body_phase[i], d))) return err;
        if ((err = fr_cfg_check_unknown(b, body_keys, d))) return err;
    }
    if ((err = fr_cfg_check_unknown(c, gait_keys, d))) return err;
    err = fr_gait_create(t, &g, &e->gait);
    if (err)
        return fr_cfg_error(c, d, err,
                            "cannot build the gait: %s (a leg joint that is not 1-DOF, or more "
                            "than %d joints from the base to a foot?)",
                            fr_strerror(err), FR_GAIT_MAX_CHAIN);
    return FR_OK;
}

static int parse_hand(robot_ent *e, const fr_tree *t, const fr_cfg_node *c, fr_diag *d)
{
    fr_hand_def h = fr_hand_def_default();
    int err;
    fr_pose frame;
    if ((err = link_by_name(e, c, "link", t, true, -1, &h.link, &frame, d))) return err;
    if ((err = link_by_name(e, c, "base", t, false, -1, &h.base_link, NULL, d))) return err;
    if ((err = fr_cfg_vec3(c, "point", fr_v3_zero(), &h.point, d))) return err;
    h.point = fr_pose_apply(frame, h.point);
    e->hand_target_given = fr_cfg_get(c, "target") != NULL;
    if ((err = fr_cfg_vec3(c, "target", fr_v3_zero(), &e->hand_target, d))) return err;
    const fr_cfg_node *rn = fr_cfg_get(c, "target_rpy");
    fr_vec3 rpy;
    if ((err = fr_cfg_vec3(c, "target_rpy", fr_v3_zero(), &rpy, d))) return err;
    h.orientation = rn != NULL;
    /* the target is the named frame's orientation: the link's is that times the frame's inverse */
    e->hand_rot = fr_q_mul(fr_q_from_rpy(rpy.x, rpy.y, rpy.z), fr_q_conj(frame.q));
    if ((err = fr_cfg_bool(c, "gravity_comp", h.gravity_comp, &h.gravity_comp, d))) return err;
    if ((err = fr_cfg_double(c, "integral", h.integral, FR_CFG_NONNEGATIVE, &h.integral, d)))
        return err;
    if ((err = fr_cfg_double_in(c, "posture", h.posture, 0, 1, &h.posture, d))) return err;
    if ((err = fr_cfg_double(c, "lambda", h.lambda, FR_CFG_NONNEGATIVE, &h.lambda, d))) return err;
    if ((err = fr_cfg_double(c, "max_speed", h.max_speed, FR_CFG_POSITIVE, &h.max_speed, d)))
        return err;
    long iters;
    if ((err = fr_cfg_int(c, "iterations", h.iterations, 1, 100, &iters, d))) return err;
    h.iterations = (int)iters;
    if ((err = fr_cfg_double(c, "kp", h.kp, FR_CFG_NONNEGATIVE, &h.kp, d))) return err;
    if ((err = fr_cfg_double(c, "kd", h.kd, FR_CFG_NONNEGATIVE, &h.kd, d))) return err;
    if ((err = fr_cfg_check_unknown(c, hand_keys, d))) return err;
    err = fr_hand_create(t, &h, &e->hand);
    if (err)
        return fr_cfg_error(c, d, err,
                            "cannot build the hand controller: %s ('base' must be a link above "
                            "'link')",
                            fr_strerror(err));
    return FR_OK;
}

static int set_gain_pair(robot_ent *e, int link, const fr_cfg_node *val, void *user, fr_diag *d)
{
    const fr_tree *t = user;
    if (fr_cfg_node_kind(val) != FR_CFG_SEQ || fr_cfg_node_len(val) != 2)
        return fr_cfg_error(val, d, FR_ERR_PARSE, "expected [kp, kd]");
    double g[2];
    for (int k = 0; k < 2; k++) {
        int err = fr_cfg_node_double(fr_cfg_node_item(val, k), &g[k], d);
        if (err) return err;
        if (!(g[k] >= 0))
            return fr_cfg_error(fr_cfg_node_item(val, k), d, FR_ERR_RANGE,
                                "gains must be >= 0, got %g", g[k]);
    }
    int vi = fr_tree_link_v_index(t, link);
    e->pd_kp[vi] = g[0];
    e->pd_kd[vi] = g[1];
    return FR_OK;
}

static int set_target(robot_ent *e, int link, const fr_cfg_node *val, void *user, fr_diag *d)
{
    const fr_tree *t = user;
    double v;
    int err = fr_cfg_node_double(val, &v, d);
    if (err) return err;
    const fr_link_def *ld = fr_tree_link_def(t, link);
    if (ld->limited && (v < ld->q_min || v > ld->q_max))
        return fr_cfg_error(val, d, FR_ERR_RANGE,
                            "target %g of joint '%s' is outside its limits [%g, %g]", v,
                            ld->joint_name, ld->q_min, ld->q_max);
    e->pd_q[fr_tree_link_q_index(t, link)] = v;
    return FR_OK;
}

static int parse_pd(robot_ent *e, const fr_tree *t, const fr_cfg_node *c, fr_diag *d)
{
    int nv = fr_tree_nv(t), nq = fr_tree_nq(t);
    e->pd_kp = malloc(sizeof(double) * (size_t)(nv + 1));
    e->pd_kd = malloc(sizeof(double) * (size_t)(nv + 1));
    e->pd_q = malloc(sizeof(double) * (size_t)(nq + 1));
    if (!e->pd_kp || !e->pd_kd || !e->pd_q) return FR_ERR_NOMEM;
    double kp, kd;
    int err;
    if ((err = fr_cfg_double(c, "kp", 0, FR_CFG_NONNEGATIVE, &kp, d))) return err;
    if ((err = fr_cfg_double(c, "kd", 0, FR_CFG_NONNEGATIVE, &kd, d))) return err;
    for (int i = 0; i < nv; i++) e->pd_kp[i] = e->pd_kd[i] = NAN;
    for (int i = 0; i < nq; i++) e->pd_q[i] = NAN;
    for (int i = 0; i < fr_tree_nlinks(t); i++) {
        const fr_link_def *ld = fr_tree_link_def(t, i);
        if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
        e->pd_kp[fr_tree_link_v_index(t, i)] = kp;
        e->pd_kd[fr_tree_link_v_index(t, i)] = kd;
    }
    if ((err = for_joints(e, t, fr_cfg_get(c, "gains"), set_gain_pair, (void *)t, d))) return err;
    if ((err = for_joints(e, t, fr_cfg_get(c, "targets"), set_target, (void *)t, d))) return err;
    return fr_cfg_check_unknown(c, pd_keys, d);
}

/* ---------------------------------------------------------------- prepare */

typedef struct q0_list {
    int n, cap;
    const char **names;
    double *values;
    const fr_cfg_node **nodes;
} q0_list;

static int collect_q0(robot_ent *e, int link, const fr_cfg_node *val, void *user, fr_diag *d)
{
    q0_list *l = user;
    double v;
    int err = fr_cfg_node_double(val, &v, d);
    if (err) return err;
    if (l->n == l->cap) return FR_ERR_FULL;
    l->names[l->n] = fr_tree_link_def(e->tree, link)->joint_name;
    l->values[l->n] = v;
    l->nodes[l->n] = val;
    l->n++;
    return FR_OK;
}

static int prepare_one(robot_ent *e, const fr_cfg_node *rn, fri_scene *sc, const char *scene_dir,
                       fr_diag *d)
{
    e->node = rn;
    e->world_index = -1;
    if (fr_cfg_node_kind(rn) != FR_CFG_MAP)
        return fr_cfg_error(rn, d, FR_ERR_PARSE, "each robot must be a mapping");
    const fr_cfg_node *nn = fr_cfg_get(rn, "name");
    if (!nn) return fr_cfg_error(rn, d, FR_ERR_PARSE, "missing required field 'name'");
    int err = fr_cfg_string(rn, "name", "", e->name, sizeof e->name, d);
    if (err) return err;
    if (!e->name[0]) return fr_cfg_error(nn, d, FR_ERR_RANGE, "name must not be empty");
    for (const char *c = e->name; *c; c++)
        if (*c == '.' || *c == ',' || *c == ' ' || *c == '/')
            return fr_cfg_error(nn, d, FR_ERR_RANGE,
                                "name must not contain '.', ',', '/' or spaces (it names link "
                                "bodies ROBOT/LINK and CSV columns)");
    fri_scene_robots *R = sc->robots;
    for (int i = 0; i < R->n; i++)
        if (&R->r[i] != e && !strcmp(R->r[i].name, e->name))
            return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate robot name '%s'", e->name);
    const fr_cfg_node *un = fr_cfg_get(rn, "urdf");
    if (!un)
        return fr_cfg_error(rn, d, FR_ERR_PARSE,
                            "missing required field 'urdf' (a URDF file, relative to the scene)");
    char rel[2048], path[4096];
    if ((err = fr_cfg_string(rn, "urdf", "", rel, sizeof rel, d))) return err;
    if (rel[0] == '/')
        snprintf(path, sizeof path, "%s", rel);
    else
        snprintf(path, sizeof path, "%s/%s", scene_dir, rel);
    fr_urdf_opts uo = fr_urdf_opts_default();
    const fr_scene_opts *so = sc->opts;
    if (so) {
        uo.package_paths = so->package_paths;
        uo.npackage_paths = so->npackage_paths;
        uo.strict = so->strict;
        uo.diags = so->diags;
    }
    if ((err = fr_cfg_bool(rn, "merge_fixed", uo.merge_fixed, &uo.merge_fixed, d))) return err;
    long hv;
    if ((err = fr_cfg_int(rn, "hull_vertices", uo.hull_vertices, 0, 100000, &hv, d))) return err;
    if (hv > 0 && hv < 4)
        return fr_cfg_error(fr_cfg_get(rn, "hull_vertices"), d, FR_ERR_RANGE,
                            "hull_vertices must be 0 (the whole hull) or >= 4");
    uo.hull_vertices = (int)hv;
    /* before the URDF: the loader checks that every joint moves some inertia in the tree these
     * make (a joint that moves only point masses on its axis is an error unless the armature
     * gives it some) */
    if ((err = fr_cfg_double(rn, "armature", 0, FR_CFG_NONNEGATIVE, &uo.armature, d))) return err;
    if ((err = fr_cfg_bool(rn, "fixed_base", false, &uo.fixed_base, d))) return err;
    if ((err = fr_urdf_load(path, &uo, &e->urdf, d))) {
        if (err == FR_ERR_NOTFOUND && d->line == 0)
            return fr_cfg_error(un, d, err, "URDF file '%s' not found", path);
        return err; /* located in the URDF (all of its errors are in so->diags) */
    }
    fr_urdf_tree_opts o = fr_urdf_tree_opts_default();
    if ((err = fr_cfg_bool(rn, "velocity_limits", o.velocity_limits, &o.velocity_limits, d)))
        return err;
    if ((err = fri_scene_parse_pose(rn, &o.base, d))) return err;
    o.fixed_base = uo.fixed_base;
    if ((err = fr_cfg_bool(rn, "self_collide", false, &e->self_collide, d))) return err;
    o.armature = uo.armature;
    long sres, cres;
    if ((err = fr_cfg_int(rn, "sphere_resolution", 0, 0, 16, &sres, d))) return err;
    if ((err = fr_cfg_int(rn, "cylinder_resolution", 0, 0, 64, &cres, d))) return err;
    if (cres > 0 && cres < 3)
        return fr_cfg_error(fr_cfg_get(rn, "cylinder_resolution"), d, FR_ERR_RANGE,
                            "cylinder_resolution must be 0 (default) or >= 3");
    e->material_node = fr_cfg_get(rn, "material");
    if ((err = fr_cfg_string(rn, "material", "", e->material, sizeof e->material, d))) return err;

    /* a first tree gives the joint names for the `joints` patterns, the second has the q0 */
    if ((err = fr_urdf_build_tree(e->urdf, &o, &e->tree, NULL)))
        return fr_cfg_error(un, d, err, "cannot build the tree of '%s': %s", path,
                            fr_strerror(err));
    q0_list q0 = {0};
    q0.cap = fr_tree_nlinks(e->tree) + 1;
    q0.names = calloc((size_t)q0.cap, sizeof *q0.names);
    q0.values = calloc((size_t)q0.cap, sizeof *q0.values);
    q0.nodes = calloc((size_t)q0.cap, sizeof *q0.nodes);
    if (!q0.names || !q0.values || !q0.nodes) err = FR_ERR_NOMEM;
    const fr_cfg_node *jn = fr_cfg_get(rn, "joints");
    if (!err) err = for_joints(e, e->tree, jn, collect_q0, &q0, d);
    if (!err) {
        /* later patterns override earlier ones: keep the last value of each joint */
        for (int i = 0; i < q0.n; i++)
            for (int k = i + 1; k < q0.n; k++)
                if (q0.names[k] == q0.names[i]) {
                    q0.values[i] = q0.values[k];
                    q0.nodes[i] = q0.nodes[k]; /* (an error names where the value was given) */
                }
        o.q0_names = q0.names;
        o.q0_values = q0.values;
        o.nq0 = q0.n;
        fr_tree *t2 = NULL;
        int bad = -1;
        err = fr_urdf_build_tree(e->urdf, &o, &t2, &bad);
        if (err && bad >= 0) {
            const fr_urdf_joint *j =
                fr_urdf_joint_at(e->urdf, fr_urdf_joint_find(e->urdf, q0.names[bad]));
            err = fr_cfg_error(q0.nodes[bad], d, err,
                               "initial position %g of joint '%s' is outside its limits [%g, %g]",
                               q0.values[bad], q0.names[bad], j ? j->lower : 0, j ? j->upper : 0);
        } else if (err)
            err = fr_cfg_error(un, d, err, "cannot build the tree of '%s': %s", path,
                               fr_strerror(err));
        /* names in q0 point into the first tree: swap only now */
        fr_tree_destroy(e->tree);
        e->tree = t2;
    }
    free(q0.names);
    free(q0.values);
    free(q0.nodes);
    if (err) return err;

    /* link shapes, in the link bodies' frames (origin at the link's centre of mass) */
    int ns = 0;
    for (int i = 0; i < fr_urdf_link_count(e->urdf); i++)
        ns += fr_urdf_link_at(e->urdf, i)->ncollisions;
    e->shapes = calloc((size_t)ns + 1, sizeof *e->shapes);
    e->shape_link = calloc((size_t)ns + 1, sizeof *e->shape_link);
    e->shape_local = calloc((size_t)ns + 1, sizeof *e->shape_local);
    if (!e->shapes || !e->shape_link || !e->shape_local) return FR_ERR_NOMEM;
    for (int i = 0; i < fr_urdf_link_count(e->urdf); i++) {
        const fr_urdf_link *L = fr_urdf_link_at(e->urdf, i);
        for (int k = 0; k < L->ncollisions; k++) {
            const fr_urdf_collision *c = &L->collisions[k];
            int res = c->type == FR_URDF_SPHERE ? (int)sres : (int)cres;
            fr_shape *s;
            err = fr_urdf_collision_shape(c, res, &s);
            if (err)
                return fr_cfg_error(un, d, err,
                                    "cannot create the collision shape of link '%s' (URDF line "
                                    "%d): %s",
                                    L->name, c->line, fr_strerror(err));
            e->shapes[e->nshapes] = s;
            e->shape_link[e->nshapes] = i;
            e->shape_local[e->nshapes] = (fr_pose){fr_v3_sub(c->origin.p, L->com), c->origin.q};
            e->nshapes++;
            if (s->poly.nfaces > R->cap.max_faces) R->cap.max_faces = s->poly.nfaces;
        }
    }
    R->cap.bodies += fr_tree_nlinks(e->tree);
    R->cap.shapes += e->nshapes;
    R->cap.robots++;

    const fr_cfg_node *cn = fr_cfg_get(rn, "controller");
    if (cn) {
        if (fr_cfg_node_kind(cn) != FR_CFG_MAP)
            return fr_cfg_error(cn, d, FR_ERR_PARSE, "'controller' must be a mapping");
        if (!fr_cfg_get(cn, "type"))
            return fr_cfg_error(cn, d, FR_ERR_PARSE,
                                "missing required field 'type' (none, pd, gait or hand)");
        if ((err = fr_cfg_enum(cn, "type", ctl_types, CTL_NONE, &e->ctl, d))) return err;
        switch (e->ctl) {
        case CTL_PD:
            err = parse_pd(e, e->tree, cn, d);
            break;
        case CTL_GAIT:
            err = parse_gait(e, e->tree, cn, d);
            break;
        case CTL_HAND:
            err = parse_hand(e, e->tree, cn, d);
            break;
        default:
            err = fr_cfg_check_unknown(cn, (const char *const[]){"type", NULL}, d);
        }
        if (err) return err;
    }
    return fr_cfg_check_unknown(rn, robot_keys, d);
}

int fri_scene_robots_prepare(const fr_cfg_node *robots_node, fri_scene *sc, fr_diag *d)
{
    fri_scene_robots *R = calloc(1, sizeof *R);
    if (!R) return FR_ERR_NOMEM;
    sc->robots = R;
    if (!robots_node) return FR_OK;
    if (fr_cfg_node_kind(robots_node) != FR_CFG_SEQ)
        return fr_cfg_error(robots_node, d, FR_ERR_PARSE, "'robots' must be a list");
    int n = fr_cfg_node_len(robots_node);
    R->r = calloc((size_t)n + 1, sizeof *R->r);
    if (!R->r) return FR_ERR_NOMEM;
    char *dcopy = strdup(sc->path);
    if (!dcopy) return FR_ERR_NOMEM;
    const char *dir = dirname(dcopy);
    int err = FR_OK;
    for (int i = 0; i < n && !err; i++) {
        R->n = i + 1;
        err = prepare_one(&R->r[i], fr_cfg_node_item(robots_node, i), sc, dir, d);
    }
    free(dcopy);
    return err;
}

fri_robots_capacity fri_scene_robots_capacity(const fri_scene *sc)
{
    const fri_scene_robots *R = sc->robots;
    fri_robots_capacity none = {0};
    return R ? R->cap : none;
}

/* ---------------------------------------------------------------- build */

static int build_one(robot_ent *e, fri_scene *sc, fr_diag *d)
{
    fr_world *w = sc->world;
    int material = 0, err;
    if (e->material[0] && fr_world_find_material(w, e->material, &material) != FR_OK)
        return fr_cfg_error(e->material_node, d, FR_ERR_NOTFOUND,
                            "no material named '%s' in 'materials'", e->material);
    fr_robot_def rd;
    memset(&rd, 0, sizeof rd);
    snprintf(rd.name, sizeof rd.name, "%s", e->name);
    rd.tree = e->tree;
    rd.self_collide = e->self_collide;
    e->tree = NULL; /* the world owns it now, also on error */
    int idx;
    if ((err = fr_world_add_robot(w, &rd, &idx)))
        return fr_cfg_error(e->node, d, err, "cannot add robot '%s': %s", e->name,
                            fr_strerror(err));
    e->world_index = idx;
    for (int k = 0; k < e->nshapes; k++) {
        fr_shape_def sd = fr_shape_def_default(e->shapes[k]);
        sd.local = e->shape_local[k];
        sd.material = material;
        err = fr_body_add_shape(w, fr_world_robot_link_body(w, idx, e->shape_link[k]), &sd);
        if (err)
            return fr_cfg_error(e->node, d, err, "cannot attach a shape of link '%s': %s",
                                fr_urdf_link_at(e->urdf, e->shape_link[k])->name, fr_strerror(err));
        e->shapes[k] = NULL; /* the world's */
    }
    const fr_tree *t = fr_world_robot_tree(w, idx);
    fr_tree_data *td = fr_world_robot_data(w, idx);
    switch (e->ctl) {
    case CTL_PD:
        for (int i = 0; i < fr_tree_nv(t); i++) {
            if (!isnan(e->pd_kp[i])) td->kp[i] = e->pd_kp[i];
            if (!isnan(e->pd_kd[i])) td->kd[i] = e->pd_kd[i];
        }
        for (int i = 0; i < fr_tree_nq(t); i++)
            if (!isnan(e->pd_q[i])) td->q_ref[i] = e->pd_q[i];
        break;
    case CTL_GAIT:
        err = fr_world_set_robot_controller(w, idx, fr_gait_controller, e->gait);
        break;
    case CTL_HAND: {
        fr_vec3 target = e->hand_target;
        if (!e->hand_target_given) {
            /* hold the hand where it starts */
            fr_vec3 perr;
            fr_hand_set_target(e->hand, fr_v3_zero(), e->hand_rot);
            fr_hand_error(e->hand, td, &perr, NULL);
            target = fr_v3_neg(perr);
        }
        fr_hand_set_target(e->hand, target, e->hand_rot);
        err = fr_world_set_robot_controller(w, idx, fr_hand_controller, e->hand);
        break;
    }
    default:
        break;
    }
    if (err) return fr_cfg_error(e->node, d, err, "cannot install the controller");
    fr_world_robot_sync(w, idx);
    if ((err = fr_world_robot_set_contact_masses(w, idx)))
        return fr_cfg_error(e->node, d, err, "cannot compute the contact masses of robot '%s': %s",
                            e->name, fr_strerror(err));
    return FR_OK;
}

int fri_scene_robots_build(fri_scene *sc, fr_diag *d)
{
    fri_scene_robots *R = sc->robots;
    if (!R) return FR_OK;
    for (int i = 0; i < R->n; i++) {
        int err = build_one(&R->r[i], sc, d);
        if (err) return err;
    }
    return FR_OK;
}

void fri_scene_robots_destroy(fri_scene *sc)
{
    fri_scene_robots *R = sc->robots;
    if (!R) return;
    for (int i = 0; i < R->n; i++) ent_free(&R->r[i]);
    free(R->r);
    free(R);
    sc->robots = NULL;
}

static robot_ent *find_ent(fri_scene *sc, const char *robot)
{
    fri_scene_robots *R = sc->robots;
    for (int i = 0; R && i < R->n; i++)
        if (!strcmp(R->r[i].name, robot)) return &R->r[i];
    return NULL;
}

fr_gait *fri_scene_robot_gait(fri_scene *sc, const char *robot)
{
    robot_ent *e = find_ent(sc, robot);
    return e ? e->gait : NULL;
}

fr_hand *fri_scene_robot_hand(fri_scene *sc, const char *robot)
{
    robot_ent *e = find_ent(sc, robot);
    return e ? e->hand : NULL;
}
