/* Scene files → world. Every value is validated here so that the world only ever sees sane
 * input, and every error names file, line, column and field (docs/scenes.md is the schema). */
#include <stdlib.h>
#include <string.h>

#include "fureru/scene.h"
#include "scene_internal.h"

static const char *const top_keys[] = {"name", "description", "world", "bodies", NULL};
static const char *const world_keys[] = {"dt", "gravity", "duration", "spare_bodies", NULL};
static const char *const body_keys[] = {"name",
                                        "type",
                                        "mass",
                                        "inertia",
                                        "position",
                                        "orientation",
                                        "rpy",
                                        "velocity",
                                        "angular_velocity",
                                        "linear_damping",
                                        "angular_damping",
                                        NULL};
static const char *const body_types[] = {"static", "kinematic", "dynamic", NULL};

/* Principal moments of a symmetric inertia must be positive and obey the triangle inequality
 * (I1 + I2 >= I3): otherwise no mass distribution has them. */
static int check_inertia(const fr_cfg_node *n, const fr_mat3 *I, fr_diag *d)
{
    fr_vec3 e;
    fr_mat3 V;
    fr_m3_eigen_sym(*I, &e, &V);
    if (!(e.x > 0))
        return fr_cfg_error(n, d, FR_ERR_RANGE,
                            "inertia must be positive definite (smallest principal moment %g)",
                            e.x);
    if (e.x + e.y < e.z * (1 - 1e-12))
        return fr_cfg_error(n, d, FR_ERR_RANGE,
                            "principal moments %g, %g, %g violate the triangle inequality "
                            "(%g + %g < %g): no real body has this inertia",
                            e.x, e.y, e.z, e.x, e.y, e.z);
    return FR_OK;
}

static int parse_inertia(const fr_cfg_node *body, double mass, fr_mat3 *I, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(body, "inertia");
    if (!n) {
        /* default: a uniform solid sphere of radius 0.05 m */
        double r = 0.05, s = 0.4 * mass * r * r;
        *I = fr_m3_diag(fr_v3(s, s, s));
        return FR_OK;
    }
    int len = fr_cfg_node_len(n);
    if (fr_cfg_node_kind(n) != FR_CFG_SEQ || (len != 3 && len != 6))
        return fr_cfg_error(n, d, FR_ERR_PARSE,
                            "expected [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (kg·m²)");
    double v[6] = {0};
    for (int i = 0; i < len; i++) {
        int err = fr_cfg_node_double(fr_cfg_node_item(n, i), &v[i], d);
        if (err) return err;
        if (i < 3 && !(v[i] > 0))
            return fr_cfg_error(fr_cfg_node_item(n, i), d, FR_ERR_RANGE,
                                "diagonal moment must be > 0, got %g", v[i]);
    }
    *I = (fr_mat3){{{v[0], v[3], v[4]}, {v[3], v[1], v[5]}, {v[4], v[5], v[2]}}};
    return check_inertia(n, I, d);
}

int fri_scene_parse_pose(const fr_cfg_node *map, fr_pose *pose, fr_diag *d)
{
    int err = fr_cfg_vec3(map, "position", fr_v3_zero(), &pose->p, d);
    if (err) return err;
    const fr_cfg_node *qn = fr_cfg_get(map, "orientation");
    const fr_cfg_node *rn = fr_cfg_get(map, "rpy");
    if (qn && rn)
        return fr_cfg_error(rn, d, FR_ERR_PARSE, "give either 'orientation' or 'rpy', not both");
    pose->q = fr_q_identity();
    if (qn) {
        double q[4];
        err = fr_cfg_doubles(map, "orientation", 4, NULL, FR_CFG_ANY, q, d);
        if (err) {
            if (!d->msg[0] || strstr(d->msg, "list of 4"))
                fr_cfg_error(qn, d, FR_ERR_PARSE, "expected a quaternion [w, x, y, z]");
            return err;
        }
        double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (fabs(n - 1.0) > 1e-3)
            return fr_cfg_error(qn, d, FR_ERR_RANGE,
                                "quaternion [w, x, y, z] must have unit length (got %g)", n);
        pose->q = fr_q_normalize(fr_q(q[0], q[1], q[2], q[3]));
    } else if (rn) {
        fr_vec3 r;
        err = fr_cfg_vec3(map, "rpy", fr_v3_zero(), &r, d);
        if (err) return err;
        pose->q = fr_q_from_rpy(r.x, r.y, r.z);
    }
    return FR_OK;
}

static int parse_body(const fr_cfg_node *b, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(b) != FR_CFG_MAP)
        return fr_cfg_error(b, d, FR_ERR_PARSE, "each body must be a mapping");
    fr_body_def def = fr_body_def_default();
    const fr_cfg_node *nn = fr_cfg_get(b, "name");
    if (!nn) return fr_cfg_error(b, d, FR_ERR_PARSE, "missing required field 'name'");
    int err = fr_cfg_string(b, "name", "", def.name, sizeof def.name, d);
    if (err) return err;
    if (!def.name[0]) return fr_cfg_error(nn, d, FR_ERR_RANGE, "name must not be empty");
    fr_body_id dup;
    if (fr_world_find_body(sc->world, def.name, &dup) == FR_OK)
        return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate body name '%s'", def.name);
    if ((err = fr_cfg_enum(b, "type", body_types, FR_BODY_DYNAMIC, &def.type, d))) return err;
    if ((err = fr_cfg_double(b, "mass", 1.0, FR_CFG_POSITIVE, &def.mass, d))) return err;
    if ((err = parse_inertia(b, def.mass, &def.inertia, d))) return err;
    if ((err = fri_scene_parse_pose(b, &def.pose, d))) return err;
    if ((err = fr_cfg_vec3(b, "velocity", fr_v3_zero(), &def.vel, d))) return err;
    if ((err = fr_cfg_vec3(b, "angular_velocity", fr_v3_zero(), &def.angvel, d))) return err;
    if ((err = fr_cfg_double(b, "linear_damping", 0.0, FR_CFG_NONNEGATIVE, &def.lin_damping, d)))
        return err;
    if ((err = fr_cfg_double(b, "angular_damping", 0.0, FR_CFG_NONNEGATIVE, &def.ang_damping, d)))
        return err;
    if ((err = fr_cfg_check_unknown(b, body_keys, d))) return err;
    err = fr_world_add_body(sc->world, &def, NULL);
    if (err) return fr_cfg_error(b, d, err, "cannot add body: %s", fr_strerror(err));
    return FR_OK;
}

static int build(fri_scene *sc, fr_cfg_node *root, fr_diag *d)
{
    int err;
    if ((err = fr_cfg_string(root, "name", "", sc->name, sizeof sc->name, d))) return err;
    char desc[1024];
    if ((err = fr_cfg_string(root, "description", "", desc, sizeof desc, d))) return err;

    const fr_cfg_node *w = fr_cfg_get(root, "world");
    if (w && fr_cfg_node_kind(w) != FR_CFG_MAP)
        return fr_cfg_error(w, d, FR_ERR_PARSE, "'world' must be a mapping");
    fr_world_def def = fr_world_def_default();
    if ((err = fr_cfg_double_in(w, "dt", 0.001, 1e-6, 0.1, &def.dt, d))) return err;
    if ((err = fr_cfg_vec3(w, "gravity", def.gravity, &def.gravity, d))) return err;
    if ((err = fr_cfg_double(w, "duration", 10.0, FR_CFG_POSITIVE, &sc->duration, d))) return err;
    long spare;
    if ((err = fr_cfg_int(w, "spare_bodies", 16, 0, 100000, &spare, d))) return err;
    if ((err = fr_cfg_check_unknown(w, world_keys, d))) return err;

    const fr_cfg_node *bodies = fr_cfg_get(root, "bodies");
    if (bodies && fr_cfg_node_kind(bodies) != FR_CFG_SEQ)
        return fr_cfg_error(bodies, d, FR_ERR_PARSE, "'bodies' must be a list");
    int nb = fr_cfg_node_len(bodies);
    if ((err = fr_cfg_check_unknown(root, top_keys, d))) return err;

    def.max_bodies = nb + (int)spare;
    if (def.max_bodies < 1) def.max_bodies = 1;
    err = fr_world_create(&def, &sc->world);
    if (err)
        return fr_diag_set(d, err, sc->path, 0, 0, "world", "cannot create world: %s",
                           fr_strerror(err));
    for (int i = 0; i < nb; i++)
        if ((err = parse_body(fr_cfg_node_item(bodies, i), sc, d))) return err;
    return FR_OK;
}

int fr_scene_load(const char *path, const char *const *sets, int nsets, fr_scene **out, fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    memset(d, 0, sizeof *d);
    fri_scene *sc = calloc(1, sizeof *sc);
    if (!sc) return FR_ERR_NOMEM;
    snprintf(sc->path, sizeof sc->path, "%s", path);
    fr_cfg_doc *doc = NULL;
    int err = fr_cfg_load_file(path, &doc, d);
    for (int i = 0; !err && i < nsets; i++) err = fr_cfg_set(doc, sets[i], d);
    if (!err) err = build(sc, fr_cfg_root(doc), d);
    fr_cfg_free(doc);
    if (err) {
        fr_scene_destroy(sc);
        return err;
    }
    *out = sc;
    return FR_OK;
}

void fr_scene_destroy(fr_scene *s)
{
    if (!s) return;
    fr_world_destroy(s->world);
    free(s);
}

fr_world *fr_scene_world(fr_scene *s)
{
    return s->world;
}
const char *fr_scene_path(const fr_scene *s)
{
    return s->path;
}
const char *fr_scene_name(const fr_scene *s)
{
    return s->name;
}
double fr_scene_duration(const fr_scene *s)
{
    return s->duration;
}
