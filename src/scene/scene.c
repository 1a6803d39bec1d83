/* Scene files → world. Every value is validated here so that the world only ever sees sane
 * input, and every error names file, line, column and field (docs/scenes.md is the schema). */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/scene.h"
#include "fureru/urdf.h"
#include "scene_internal.h"
#include "robots.h"

static const char *const top_keys[] = {"name",    "description", "world",  "materials", "bodies",
                                       "springs", "probes",      "device", "robots",    "analysis",
                                       "joints",  "viewer",      "loops",  NULL};
static const char *const device_keys[] = {"spec",     "proxy",     "workspace",
                                          "coupling", "passivity", NULL};
static const char *const workspace_keys[] = {"scale", "position", "orientation", "rpy", NULL};
static const char *const coupling_keys[] = {"stiffness", "damping", NULL};
static const char *const world_keys[] = {"dt",       "gravity", "duration",    "spare_bodies",
                                         "contact",  "settle",  "settle_time", "settle_tolerance",
                                         "substeps", NULL};
/* clang-format off */
static const char *const contact_keys[] = {
    "kappa",      "beta",   "time",      "stiffen",      "link_kappa",      "link_beta", "implicit",
    "iterations", "sweeps", "tolerance", "max_contacts", "max_shape_faces", "max_fill",
    "mode", "constraint_iterations", "constraint_omega", "constraint_tolerance", "reuse_contacts", "reuse_factor", "revise_robots", NULL};
/* clang-format on */
static const char *const contact_modes[] = {"penalty", "constraint", NULL};
static const char *const material_keys[] = {"name", "stiffness", "damping", "mu_s", "mu_k", NULL};
static const char *const body_keys[] = {
    "name",        "type",   "mass",     "density",          "inertia",        "position",
    "orientation", "rpy",    "velocity", "angular_velocity", "linear_damping", "angular_damping",
    "shapes",      "repeat", NULL};
static const char *const repeat_keys[] = {"count", "offset", "jitter", "seed", NULL};
static const char *const shape_keys[] = {
    "type",        "size", "radius",   "length", "resolution", "points",        "position",
    "orientation", "rpy",  "material", "group",  "mask",       "hull_vertices", NULL};
static const char *const spring_keys[] = {
    "name",      "body",    "point",       "anchor",   "anchor_velocity",
    "stiffness", "damping", "rest_length", "implicit", NULL};
static const char *const spring_modes[] = {"auto", "false", "true", NULL};
static const char *const probe_keys[] = {"name", "type", "spring", "body", "other", NULL};
static const char *const body_types[] = {"static", "kinematic", "dynamic", NULL};
static const char *const shape_types[] = {"box", "sphere", "capsule", "cylinder", "convex", NULL};
static const char *const probe_types[] = {"spring", "contact", NULL};

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

static int parse_inertia(const fr_cfg_node *n, fr_mat3 *I, fr_diag *d)
{
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
        if (fr_cfg_node_kind(qn) != FR_CFG_SEQ || fr_cfg_node_len(qn) != 4)
            return fr_cfg_error(qn, d, FR_ERR_PARSE, "expected a quaternion [w, x, y, z]");
        err = fr_cfg_doubles(map, "orientation", 4, NULL, FR_CFG_ANY, q, d);
        if (err) return err;
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

/* ---------------------------------------------------------------- shapes */

/* A shape in the body's reference frame, before the body frame is moved to the centre of mass. */
typedef struct pending_shape {
    fr_shape *shape;
    fr_pose local;
    int material;
    uint32_t group, mask;
} pending_shape;

static int positive_len(const fr_cfg_node *sh, const char *key, double *out, fr_diag *d,
                        bool required)
{
    const fr_cfg_node *n = fr_cfg_get(sh, key);
    if (!n && required)
        return fr_cfg_error(sh, d, FR_ERR_PARSE, "missing required field '%s'", key);
    return fr_cfg_double(sh, key, *out, FR_CFG_POSITIVE, out, d);
}

/* A convex shape's hull, simplified as a URDF mesh's is (src/scene/urdf_mesh.c: at most
 * hull_vertices vertices, FR_URDF_HULL_VERTICES by default, 0 the whole hull; the inscribed hull
 * scaled to the full one's volume) with a note saying so: three spheres of 5114 points stepped in
 * 1.3 ms (p50) and overran every tick of a 1 kHz run, unsimplified and unsaid (a new user's
 * trial); with 32 vertices, 18 µs. */
static int convex_shape(const fr_cfg_node *sh, const fr_cfg_node *pn, const fr_vec3 *pts, int np,
                        fri_scene *sc, fr_shape **out, fr_diag *d)
{
    long budget;
    int err = fr_cfg_int(sh, "hull_vertices", FR_URDF_HULL_VERTICES, 0, 100000, &budget, d);
    if (err) return err;
    if (budget > 0 && budget < 4)
        return fr_cfg_error(fr_cfg_get(sh, "hull_vertices"), d, FR_ERR_RANGE,
                            "hull_vertices must be 0 (the whole hull) or >= 4");
    fr_vec3 *hv = NULL;
    int nh = 0, nfull = 0;
    double vol = 0.0, vol_full = 0.0, s = 1.0;
    err = fr_hull_simplify(pts, np, (int)budget, &hv, &nh, &vol, &vol_full, &nfull);
    if (err == FR_ERR_NOMEM) return fr_cfg_error(pn, d, err, "out of memory");
    if (err)
        return fr_cfg_error(
            pn, d, FR_ERR_RANGE,
            "cannot build a convex hull of these %d points (flat or degenerate): %s", np,
            fr_strerror(err));
    if (nh < nfull) err = fr_hull_volume_match(hv, nh, vol_full, &s);
    if (!err) err = fr_shape_create_convex(hv, nh, out);
    free(hv);
    if (err) return fr_cfg_error(pn, d, err, "cannot create the shape: %s", fr_strerror(err));
    if (nh < nfull && sc->opts && sc->opts->diags) {
        fr_diag nd;
        fr_cfg_error(pn, &nd, 0,
                     "convex shape of %d points: hull simplified from %d to %d vertices: the "
                     "inscribed hull has %.3g %% less volume (%.4g of %.4g cm³); scaled by %.5f "
                     "about its centroid to the full volume (hull_vertices: 0 keeps the whole "
                     "hull)",
                     np, nfull, nh, 100.0 * (vol_full - vol) / vol_full, vol * 1e6, vol_full * 1e6,
                     s);
        nd.severity = FR_DIAG_NOTE;
        fr_diag_list_add(sc->opts->diags, &nd);
    }
    return FR_OK;
}

static int parse_shape(const fr_cfg_node *sh, fri_scene *sc, pending_shape *ps, fr_diag *d)
{
    memset(ps, 0, sizeof *ps); /* before any return: the caller frees ps->shape on error */
    if (fr_cfg_node_kind(sh) != FR_CFG_MAP)
        return fr_cfg_error(sh, d, FR_ERR_PARSE, "each shape must be a mapping");
    const fr_cfg_node *tn = fr_cfg_get(sh, "type");
    if (!tn) return fr_cfg_error(sh, d, FR_ERR_PARSE, "missing required field 'type'");
    int type, err;
    if ((err = fr_cfg_enum(sh, "type", shape_types, 0, &type, d))) return err;
    long res;
    if ((err = fr_cfg_int(sh, "resolution", 0, 0, 64, &res, d))) return err;
    const fr_cfg_node *hn = fr_cfg_get(sh, "hull_vertices");
    if (hn && type != 4)
        return fr_cfg_error(hn, d, FR_ERR_PARSE, "'hull_vertices' is for convex shapes");
    double radius = 0.5, length = 1.0;
    switch (type) {
    case 0: {
        const fr_cfg_node *sn = fr_cfg_get(sh, "size");
        if (!sn)
            return fr_cfg_error(sh, d, FR_ERR_PARSE,
                                "missing required field 'size' ([x, y, z] full extents, m)");
        double s[3];
        if ((err = fr_cfg_doubles(sh, "size", 3, NULL, FR_CFG_POSITIVE, s, d))) return err;
        err = fr_shape_create_box(fr_v3(s[0] / 2, s[1] / 2, s[2] / 2), &ps->shape);
        break;
    }
    case 1:
        if ((err = positive_len(sh, "radius", &radius, d, true))) return err;
        if (res > 32)
            return fr_cfg_error(fr_cfg_get(sh, "resolution"), d, FR_ERR_RANGE,
                                "a sphere's resolution is at most 32 (%ld given)", res);
        err = fr_shape_create_sphere(radius, (int)res, &ps->shape);
        break;
    case 2:
    case 3:
        if ((err = positive_len(sh, "radius", &radius, d, true))) return err;
        if ((err = positive_len(sh, "length", &length, d, true))) return err;
        if (res > 0 && res < (type == 2 ? 4 : 3))
            return fr_cfg_error(fr_cfg_get(sh, "resolution"), d, FR_ERR_RANGE,
                                "a %s's resolution is 0 (default) or at least %d (%ld given)",
                                type == 2 ? "capsule" : "cylinder", type == 2 ? 4 : 3, res);
        err = type == 2 ? fr_shape_create_capsule(radius, length / 2, (int)res, &ps->shape)
                        : fr_shape_create_cylinder(radius, length / 2, (int)res, &ps->shape);
        break;
    default: {
        const fr_cfg_node *pn = fr_cfg_get(sh, "points");
        int np = fr_cfg_node_len(pn);
        if (!pn || fr_cfg_node_kind(pn) != FR_CFG_SEQ || np < 4)
            return fr_cfg_error(pn ? pn : sh, d, FR_ERR_PARSE,
                                "'points' must be a list of at least 4 [x, y, z] points");
        fr_vec3 *pts = calloc((size_t)np, sizeof *pts);
        if (!pts) return FR_ERR_NOMEM;
        for (int i = 0; i < np; i++) {
            const fr_cfg_node *p = fr_cfg_node_item(pn, i);
            if (fr_cfg_node_kind(p) != FR_CFG_SEQ || fr_cfg_node_len(p) != 3) {
                free(pts);
                return fr_cfg_error(p, d, FR_ERR_PARSE, "expected a point [x, y, z]");
            }
            double v[3];
            for (int k = 0; k < 3; k++)
                if ((err = fr_cfg_node_double(fr_cfg_node_item(p, k), &v[k], d))) {
                    free(pts);
                    return err;
                }
            pts[i] = fr_v3(v[0], v[1], v[2]);
        }
        err = convex_shape(sh, pn, pts, np, sc, &ps->shape, d);
        free(pts);
        if (err) return err;
        break;
    }
    }
    if (err) return fr_cfg_error(sh, d, err, "cannot create the shape: %s", fr_strerror(err));
    if ((err = fri_scene_parse_pose(sh, &ps->local, d))) return err;
    ps->material = 0;
    const fr_cfg_node *mn = fr_cfg_get(sh, "material");
    if (mn) {
        char name[48];
        if ((err = fr_cfg_string(sh, "material", "", name, sizeof name, d))) return err;
        if (fr_world_find_material(sc->world, name, &ps->material) != FR_OK) {
            /* the names there are (a --set that renamed one was not seen in the file) */
            char have[256] = "";
            const fr_cfg_node *ms = fr_cfg_get(fr_cfg_root(sc->doc), "materials");
            for (int i = 0; i < fr_cfg_node_len(ms); i++) {
                const fr_cfg_node *nn = fr_cfg_get(fr_cfg_node_item(ms, i), "name");
                const char *v = fr_cfg_node_scalar(nn);
                const size_t at = strlen(have);
                if (v && at + 4 < sizeof have)
                    snprintf(have + at, sizeof have - at, "%s'%s'%s", at ? ", " : "", v,
                             fr_cfg_node_from_set(nn) ? " (by --set)" : "");
            }
            return fr_cfg_error(mn, d, FR_ERR_NOTFOUND,
                                "no material named '%s' in 'materials' (it has %s)", name,
                                have[0] ? have : "none");
        }
    }
    long group, mask;
    if ((err = fr_cfg_int(sh, "group", 1, 0, 0xffffffffL, &group, d))) return err;
    if ((err = fr_cfg_int(sh, "mask", 0xffffffffL, 0, 0xffffffffL, &mask, d))) return err;
    ps->group = (uint32_t)group;
    ps->mask = (uint32_t)mask;
    return fr_cfg_check_unknown(sh, shape_keys, d);
}

/* Mass, centre of mass and inertia (about it, reference axes) of shapes at a density. */
static void shapes_mass(const pending_shape *ps, int n, double density, double *mass, fr_vec3 *com,
                        fr_mat3 *I)
{
    double M = 0;
    fr_vec3 C = fr_v3_zero();
    double mi[64];
    fr_vec3 ci[64];
    fr_mat3 Ii[64];
    for (int i = 0; i < n; i++) {
        fr_vec3 c;
        fr_mat3 Is;
        fr_shape_mass(ps[i].shape, density, &mi[i], &c, &Is);
        fr_mat3 R = fr_q_to_m3(ps[i].local.q);
        ci[i] = fr_pose_apply(ps[i].local, c);
        Ii[i] = fr_m3_rotate(R, Is);
        M += mi[i];
        C = fr_v3_mad(C, mi[i], ci[i]);
    }
    C = fr_v3_scale(C, 1.0 / M);
    fr_mat3 It = fr_m3_zero();
    for (int i = 0; i < n; i++) {
        fr_vec3 dd = fr_v3_sub(ci[i], C);
        fr_mat3 par =
            fr_m3_sub(fr_m3_scale(fr_m3_identity(), fr_v3_norm2(dd)), fr_m3_outer(dd, dd));
        It = fr_m3_add(It, fr_m3_add(Ii[i], fr_m3_scale(par, mi[i])));
    }
    *mass = M;
    *com = C;
    *I = It;
}

/* ---------------------------------------------------------------- bodies */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Add a body name to the scene's set: FR_OK, FR_ERR_PARSE when it is there already. */
static int name_add(fri_scene *sc, const char *name)
{
    if (2 * (sc->body_names_n + 1) > sc->body_names_cap) {
        size_t cap = sc->body_names_cap ? 2 * sc->body_names_cap : 64;
        char **t = calloc(cap, sizeof *t);
        if (!t) return FR_ERR_NOMEM;
        for (size_t i = 0; i < sc->body_names_cap; i++) {
            char *k = sc->body_names[i];
            if (!k) continue;
            size_t j = name_hash(k) & (cap - 1);
            while (t[j]) j = (j + 1) & (cap - 1);
            t[j] = k;
        }
        free(sc->body_names);
        sc->body_names = t;
        sc->body_names_cap = cap;
    }
    size_t j = name_hash(name) & (sc->body_names_cap - 1);
    for (; sc->body_names[j]; j = (j + 1) & (sc->body_names_cap - 1))
        if (!strcmp(sc->body_names[j], name)) return FR_ERR_PARSE;
    if (!(sc->body_names[j] = strdup(name))) return FR_ERR_NOMEM;
    sc->body_names_n++;
    return FR_OK;
}

/* A repeated body's shapes, parsed once (at its first copy) and cloned for the others. */
typedef struct shape_templates {
    pending_shape ps[64];
    int n;     /* -1: none yet */
    bool keep; /* record them at the next copy */
} shape_templates;

static void templates_free(shape_templates *t)
{
    for (int i = 0; i < t->n; i++) fr_shape_destroy(t->ps[i].shape);
    t->n = -1;
}

static int parse_body_one(const fr_cfg_node *b, fri_scene *sc, const char *name, fr_vec3 offset,
                          shape_templates *tm, fr_diag *d)
{
    fr_body_def def = fr_body_def_default();
    snprintf(def.name, sizeof def.name, "%s", name);
    int err = name_add(sc, def.name);
    if (err == FR_ERR_PARSE)
        return fr_cfg_error(fr_cfg_get(b, "name"), d, FR_ERR_PARSE, "duplicate body name '%s'",
                            def.name);
    if (err) return fr_cfg_error(b, d, err, "out of memory");
    if ((err = fr_cfg_enum(b, "type", body_types, FR_BODY_DYNAMIC, &def.type, d))) return err;
    const fr_cfg_node *mn = fr_cfg_get(b, "mass"), *dn = fr_cfg_get(b, "density"),
                      *in = fr_cfg_get(b, "inertia");
    if ((err = fr_cfg_double_in(b, "mass", 1.0, FRI_SCENE_MIN_MASS, FRI_SCENE_MAX_MASS, &def.mass,
                                d)))
        return err;
    double density = 0;
    if ((err = fr_cfg_double(b, "density", 0.0, FR_CFG_POSITIVE, &density, d))) return err;
    if (dn && (mn || in))
        return fr_cfg_error(
            dn, d, FR_ERR_PARSE,
            "give 'density' (mass and inertia from the shapes) or 'mass'/'inertia', not both");
    fr_pose ref; /* the body's reference frame, where its shapes are given */
    if ((err = fri_scene_parse_pose(b, &ref, d))) return err;
    ref.p = fr_v3_add(ref.p, offset);
    if ((err = fr_cfg_vec3(b, "velocity", fr_v3_zero(), &def.vel, d))) return err;
    if ((err = fr_cfg_vec3(b, "angular_velocity", fr_v3_zero(), &def.angvel, d))) return err;
    /* what the first step would call a divergence is refused here, so check says it too */
    if (!(fr_v3_norm(def.vel) <= FR_WORLD_MAX_SPEED))
        return fr_cfg_error(fr_cfg_get(b, "velocity"), d, FR_ERR_RANGE,
                            "speed %g m/s above FR_WORLD_MAX_SPEED (%g m/s)", fr_v3_norm(def.vel),
                            FR_WORLD_MAX_SPEED);
    if (!(fr_v3_norm(def.angvel) <= FR_WORLD_MAX_SPIN))
        return fr_cfg_error(fr_cfg_get(b, "angular_velocity"), d, FR_ERR_RANGE,
                            "spin %g rad/s above FR_WORLD_MAX_SPIN (%g rad/s)",
                            fr_v3_norm(def.angvel), FR_WORLD_MAX_SPIN);
    if (!(fr_v3_norm(ref.p) <= FRI_SCENE_MAX_POSITION))
        return fr_cfg_error(fr_cfg_get(b, "position") ? fr_cfg_get(b, "position") : b, d,
                            FR_ERR_RANGE, "%.10g m from the origin: at most %g m",
                            fr_v3_norm(ref.p), FRI_SCENE_MAX_POSITION);
    if ((err = fr_cfg_double(b, "linear_damping", 0.0, FR_CFG_NONNEGATIVE, &def.lin_damping, d)))
        return err;
    if ((err = fr_cfg_double(b, "angular_damping", 0.0, FR_CFG_NONNEGATIVE, &def.ang_damping, d)))
        return err;

    const fr_cfg_node *shn = fr_cfg_get(b, "shapes");
    if (shn && fr_cfg_node_kind(shn) != FR_CFG_SEQ)
        return fr_cfg_error(shn, d, FR_ERR_PARSE, "'shapes' must be a list");
    int ns = fr_cfg_node_len(shn);
    if (ns > 64) return fr_cfg_error(shn, d, FR_ERR_RANGE, "at most 64 shapes per body");
    pending_shape ps[64];
    int made = 0;
    for (int i = 0; i < ns && !err; i++) {
        if (tm && tm->n == ns) { /* a later copy: the first copy's shapes, cloned exactly */
            ps[i] = tm->ps[i];
            err = fr_shape_clone(tm->ps[i].shape, &ps[i].shape);
            if (err) err = fr_cfg_error(fr_cfg_node_item(shn, i), d, err, "out of memory");
        } else {
            err = parse_shape(fr_cfg_node_item(shn, i), sc, &ps[i], d);
        }
        if (!err)
            made++;
        else if (ps[i].shape)
            fr_shape_destroy(ps[i].shape);
    }
    if (!err && tm && tm->keep) {
        tm->keep = false;
        tm->n = 0;
        for (int i = 0; i < made && !err; i++) {
            tm->ps[i] = ps[i];
            if ((err = fr_shape_clone(ps[i].shape, &tm->ps[i].shape)))
                err = fr_cfg_error(b, d, err, "out of memory");
            else
                tm->n++;
        }
        if (err) templates_free(tm);
    }
    fr_vec3 com = fr_v3_zero();
    if (!err) {
        if (in) {
            err = parse_inertia(in, &def.inertia, d);
        } else if (dn || (ns > 0 && def.type == FR_BODY_DYNAMIC)) {
            if (ns == 0)
                err = fr_cfg_error(dn, d, FR_ERR_PARSE,
                                   "'density' needs 'shapes' to compute mass from");
            else {
                double m;
                fr_mat3 I;
                shapes_mass(ps, ns, dn ? density : 1.0, &m, &com, &I);
                if (dn) {
                    def.mass = m;
                    def.inertia = I;
                } else {
                    def.inertia = fr_m3_scale(I, def.mass / m); /* uniform density, given mass */
                }
            }
        } else {
            double r = 0.05, s = 0.4 * def.mass * r * r; /* a uniform solid sphere of radius 5 cm */
            def.inertia = fr_m3_diag(fr_v3(s, s, s));
        }
    }
    fr_body_id id = FR_BODY_NULL;
    if (!err) {
        /* the body frame sits at the centre of mass, with the reference frame's axes */
        def.pose = (fr_pose){fr_pose_apply(ref, com), ref.q};
        err = fr_world_add_body(sc->world, &def, &id);
        if (err)
            err = fr_cfg_error(b, d, err, "cannot add body '%s': %s", def.name, fr_strerror(err));
    }
    for (int i = 0; i < made; i++) {
        if (!err) {
            fr_shape_def sd = fr_shape_def_default(ps[i].shape);
            sd.local = (fr_pose){fr_v3_sub(ps[i].local.p, com), ps[i].local.q};
            sd.material = ps[i].material;
            sd.group = ps[i].group;
            sd.mask = ps[i].mask;
            int e = fr_body_add_shape(sc->world, id, &sd);
            if (e == FR_OK && def.type == FR_BODY_DYNAMIC)
                fri_scene_advise_tipping(sc, b, def.name, ps[i].shape,
                                         fr_q_mul(def.pose.q, sd.local.q), sd.material);
            if (e == FR_OK) continue;
            err = fr_cfg_error(
                fr_cfg_node_item(shn, i), d, e, "cannot attach the shape: %s%s", fr_strerror(e),
                e == FR_ERR_FULL
                    ? " (raise world.contact.max_shape_faces or use a lower resolution)"
                    : "");
        }
        fr_shape_destroy(ps[i].shape);
    }
    if (err) return err;
    if (sc->nbodies_ref < FRI_SCENE_MAX_REF) {
        sc->body_ref[sc->nbodies_ref].id = id;
        sc->body_ref[sc->nbodies_ref].com = com;
        sc->body_ref[sc->nbodies_ref].material = ns > 0 ? ps[0].material : 0;
        sc->nbodies_ref++;
    }
    return FR_OK;
}

static int parse_body(const fr_cfg_node *b, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(b) != FR_CFG_MAP)
        return fr_cfg_error(b, d, FR_ERR_PARSE, "each body must be a mapping");
    const fr_cfg_node *nn = fr_cfg_get(b, "name");
    if (!nn) return fr_cfg_error(b, d, FR_ERR_PARSE, "missing required field 'name'");
    char name[40];
    int err = fr_cfg_string(b, "name", "", name, sizeof name, d);
    if (err) return err;
    if (!name[0]) return fr_cfg_error(nn, d, FR_ERR_RANGE, "name must not be empty");
    for (const char *c = name; *c; c++)
        if (*c == '.' || *c == ',' || *c == ' ')
            return fr_cfg_error(nn, d, FR_ERR_RANGE,
                                "name must not contain '.', ',' or spaces (it names CSV columns)");
    const fr_cfg_node *rn = fr_cfg_get(b, "repeat");
    long count = 1, seed = 1;
    fr_vec3 offset = fr_v3_zero(), jitter = fr_v3_zero();
    if (rn) {
        if (fr_cfg_node_kind(rn) != FR_CFG_MAP)
            return fr_cfg_error(rn, d, FR_ERR_PARSE,
                                "'repeat' must be a mapping with 'count' and 'offset'");
        if ((err = fr_cfg_int(rn, "count", 1, 1, 100000, &count, d))) return err;
        if ((err = fr_cfg_vec3(rn, "offset", fr_v3_zero(), &offset, d))) return err;
        if ((err = fr_cfg_vec3(rn, "jitter", fr_v3_zero(), &jitter, d))) return err;
        if (jitter.x < 0 || jitter.y < 0 || jitter.z < 0)
            return fr_cfg_error(fr_cfg_get(rn, "jitter"), d, FR_ERR_RANGE, "jitter must be >= 0");
        if ((err = fr_cfg_int(rn, "seed", 1, 0, 0x7fffffffL, &seed, d))) return err;
        if ((err = fr_cfg_check_unknown(rn, repeat_keys, d))) return err;
    }
    shape_templates tm = {.n = -1, .keep = count > 1};
    for (long i = 0; i < count; i++) {
        char full[48];
        if (rn)
            snprintf(full, sizeof full, "%.32s%ld", name, i % 1000000);
        else
            snprintf(full, sizeof full, "%s", name);
        /* copy i: i·offset plus a reproducible random shift in [−jitter, jitter] (splitmix64) */
        fr_vec3 shift = fr_v3_scale(offset, (double)i);
        uint64_t state = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i;
        double u[3];
        for (int k = 0; k < 3; k++) {
            uint64_t z = (state += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            u[k] = 2.0 * ((double)(z >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
        }
        shift = fr_v3_add(shift, fr_v3(u[0] * jitter.x, u[1] * jitter.y, u[2] * jitter.z));
        if ((err = parse_body_one(b, sc, full, shift, count > 1 ? &tm : NULL, d)) ||
            (i == 0 && (err = fr_cfg_check_unknown(b, body_keys, d))))
            break;
    }
    templates_free(&tm);
    return err;
}

/* ---------------------------------------------------------------- materials, springs, probes */

static int parse_material(const fr_cfg_node *m, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(m) != FR_CFG_MAP)
        return fr_cfg_error(m, d, FR_ERR_PARSE, "each material must be a mapping");
    char name[48];
    const fr_cfg_node *nn = fr_cfg_get(m, "name");
    if (!nn) return fr_cfg_error(m, d, FR_ERR_PARSE, "missing required field 'name'");
    int err = fr_cfg_string(m, "name", "", name, sizeof name, d);
    if (err) return err;
    fr_contact_material mat;
    if ((err = fr_cfg_double_in(m, "stiffness", 0.0, 0.0, FRI_SCENE_MAX_GAIN, &mat.stiffness, d)))
        return err;
    if ((err = fr_cfg_double_in(m, "damping", 0.0, 0.0, FRI_SCENE_MAX_GAIN, &mat.damping, d)))
        return err;
    if ((err = fr_cfg_double(m, "mu_s", 0.5, FR_CFG_NONNEGATIVE, &mat.mu_s, d))) return err;
    const fr_cfg_node *kn = fr_cfg_get(m, "mu_k");
    if ((err = fr_cfg_double(m, "mu_k", mat.mu_s, FR_CFG_NONNEGATIVE, &mat.mu_k, d))) return err;
    if (mat.mu_k > mat.mu_s) {
        /* (named where the user typed it: a --set of mu_s was blamed on mu_k's line alone) */
        const fr_cfg_node *sn = fr_cfg_get(m, "mu_s");
        return fr_cfg_error(kn, d, FR_ERR_RANGE, "mu_k (%g) must not exceed mu_s (%g%s%s)",
                            mat.mu_k, mat.mu_s, fr_cfg_node_from_set(sn) ? ", given by --set " : "",
                            fr_cfg_node_from_set(sn) ? fr_cfg_node_path(sn) : "");
    }
    if ((err = fr_cfg_check_unknown(m, material_keys, d))) return err;
    int idx;
    if (strcmp(name, "default") == 0) return fr_world_set_material(sc->world, 0, &mat);
    if (fr_world_find_material(sc->world, name, &idx) == FR_OK)
        return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate material name '%s'", name);
    err = fr_world_add_material(sc->world, name, &mat, NULL);
    if (err) return fr_cfg_error(m, d, err, "cannot add material: %s", fr_strerror(err));
    return FR_OK;
}

static int find_body(const fr_cfg_node *map, const char *key, fri_scene *sc, bool required,
                     fr_body_id *out, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    *out = FR_BODY_NULL;
    if (!n)
        return required ? fr_cfg_error(map, d, FR_ERR_PARSE, "missing required field '%s'", key)
                        : FR_OK;
    char name[48];
    int err = fr_cfg_string(map, key, "", name, sizeof name, d);
    if (err) return err;
    if (fr_world_find_body(sc->world, name, out) != FR_OK)
        return fr_cfg_error(n, d, FR_ERR_NOTFOUND, "no body named '%s'", name);
    return FR_OK;
}

/* A point given in a body's reference frame → the body frame (origin at the centre of mass). */
static fr_vec3 ref_to_body(const fri_scene *sc, fr_body_id id, fr_vec3 p)
{
    for (int i = 0; i < sc->nbodies_ref; i++)
        if (fr_body_id_eq(sc->body_ref[i].id, id)) return fr_v3_sub(p, sc->body_ref[i].com);
    return p;
}

static int parse_spring(const fr_cfg_node *s, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(s) != FR_CFG_MAP)
        return fr_cfg_error(s, d, FR_ERR_PARSE, "each spring must be a mapping");
    fr_spring_def def;
    memset(&def, 0, sizeof def);
    const fr_cfg_node *nn = fr_cfg_get(s, "name");
    if (!nn) return fr_cfg_error(s, d, FR_ERR_PARSE, "missing required field 'name'");
    int err = fr_cfg_string(s, "name", "", def.name, sizeof def.name, d);
    if (err) return err;
    int dup;
    if (fr_world_find_spring(sc->world, def.name, &dup) == FR_OK)
        return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate spring name '%s'", def.name);
    if ((err = find_body(s, "body", sc, true, &def.body, d))) return err;
    fr_vec3 pt;
    if ((err = fr_cfg_vec3(s, "point", fr_v3_zero(), &pt, d))) return err;
    def.local_point = ref_to_body(sc, def.body, pt);
    if ((err = fr_cfg_vec3(s, "anchor", fr_v3_zero(), &def.anchor, d))) return err;
    if ((err = fr_cfg_vec3(s, "anchor_velocity", fr_v3_zero(), &def.anchor_vel, d))) return err;
    if ((err = fr_cfg_double_in(s, "stiffness", 100.0, 0.0, FRI_SCENE_MAX_GAIN, &def.stiffness, d)))
        return err;
    if ((err = fr_cfg_double_in(s, "damping", 0.0, 0.0, FRI_SCENE_MAX_GAIN, &def.damping, d)))
        return err;
    if ((err = fr_cfg_double(s, "rest_length", 0.0, FR_CFG_NONNEGATIVE, &def.rest_length, d)))
        return err;
    int mode;
    if ((err = fr_cfg_enum(s, "implicit", spring_modes, 0, &mode, d))) return err;
    if ((err = fr_cfg_check_unknown(s, spring_keys, d))) return err;
    /* ω·dt of the spring on its body alone, when the body is a free one: ω = √(k/m), or for a
     * spring off the centre of mass the turn it drives, √(k·r²/I) about the body's softest axis,
     * if faster (a new user's 2 kg box on 8e4 N/m, 0.1 m off centre, spun up to 400 rad/s and
     * gained 1.8 kJ at 1 ms, which the check called resolved); and c·dt/m of its damper */
    double mass = 0.0, dt = fr_world_get_def(sc->world)->dt, wdt = 0.0, cdt = 0.0;
    fr_mat3 inertia;
    if (fr_body_type(sc->world, def.body) == FR_BODY_DYNAMIC &&
        fr_body_get_mass(sc->world, def.body, &mass, &inertia) == FR_OK && mass > 0) {
        double om2 = def.stiffness / mass;
        const double r2 = fr_v3_norm2(def.local_point);
        const double imin =
            fmin(inertia.m[0][0], fmin(inertia.m[1][1], inertia.m[2][2])); /* (body axes) */
        if (r2 > 0.0 && imin > 0.0) om2 = fmax(om2, def.stiffness * r2 / imin);
        wdt = sqrt(om2) * dt;
        cdt = def.damping * dt / mass;
    }
    /* the implicit step takes the force at the step's end: a free body's spring of rest length
     * 0 at its centre of mass */
    const bool can = fr_body_type(sc->world, def.body) == FR_BODY_DYNAMIC &&
                     def.rest_length == 0.0 && fr_v3_norm(def.local_point) <= 1e-12;
    if (mode == 2 && !can)
        return fr_cfg_error(fr_cfg_get(s, "implicit"), d, FR_ERR_PARSE,
                            "spring '%s': an implicit spring must pull a dynamic body at its "
                            "centre of mass with rest_length 0",
                            def.name);
    def.implicit = mode == 2 ||
                   (mode == 0 && can && (wdt > FR_SPRING_COARSE_WDT || cdt > FR_SPRING_COARSE_WDT));
    if (def.implicit) def.local_point = fr_v3_zero();
    int index;
    err = fr_world_add_spring(sc->world, &def, &index);
    if (err) return fr_cfg_error(s, d, err, "cannot add spring: %s", fr_strerror(err));
    if (sc->opts && sc->opts->diags && !def.implicit && !(wdt > FR_SPRING_COARSE_WDT) &&
        cdt > FR_SPRING_COARSE_WDT) {
        /* an explicit damper beyond c·dt/m 2 diverges (a new user's 1 kg on 2500 N·s/m at
         * 1 ms failed the audit at 13 ms, check silent) */
        fr_diag wd;
        fr_cfg_error(fr_cfg_get(s, "damping"), &wd, 0,
                     "spring '%s' on body '%s' (%g kg): its damper's c·dt/m is %.3g; stepped "
                     "explicitly (it is not at the body's centre of mass with rest_length 0) it "
                     "overshoots%s; world.dt at most %.3g ms resolves it",
                     def.name, fr_body_name(sc->world, def.body), mass, cdt,
                     cdt >= 2.0 ? " and grows without bound from 2" : "",
                     1e3 * FR_SPRING_COARSE_WDT * mass / def.damping);
        wd.severity = FR_DIAG_WARNING;
        fr_diag_list_add(sc->opts->diags, &wd);
    }
    if (sc->opts && sc->opts->diags && wdt > FR_SPRING_COARSE_WDT) {
        const double om = wdt / dt;
        fr_diag wd;
        if (def.implicit)
            /* stable at any step, but it damps (a new user's stick-slip rig at ω·dt 0.63) */
            fr_cfg_error(fr_cfg_get(s, "stiffness"), &wd, 0,
                         "spring '%s' on body '%s' (%g kg) oscillates at ω = %.4g rad/s: a "
                         "step of %.4g ms is %.3g of 1/ω; the spring is stepped implicitly "
                         "(stable, but it damps and slows that oscillation: a "
                         "stick-slip sawtooth's phases off by several %%); world.dt at most "
                         "%.3g ms resolves it",
                         def.name, fr_body_name(sc->world, def.body), mass, om, dt * 1e3, wdt,
                         1e3 * FR_SPRING_COARSE_WDT / om);
        else
            /* the explicit step's energy swings by about ω·dt of the spring's, and it diverges
             * beyond ω·dt 2 (a new user's 50 g block on 1e5 N/m at 5 ms: 50 m/s in a tick) */
            fr_cfg_error(fr_cfg_get(s, "stiffness"), &wd, 0,
                         "spring '%s' on body '%s' (%g kg) oscillates at ω = %.4g rad/s: a "
                         "step of %.4g ms is %.3g of 1/ω; the spring is stepped explicitly (it "
                         "is not at the body's centre of mass with rest_length 0), whose energy "
                         "swings by about that share of its own%s "
                         "(a stick-slip sawtooth's phases off by several %%); world.dt at most "
                         "%.3g ms resolves it",
                         def.name, fr_body_name(sc->world, def.body), mass, om, dt * 1e3, wdt,
                         wdt >= 2.0 ? " and grows without bound from 2" : "",
                         1e3 * FR_SPRING_COARSE_WDT / om);
        wd.severity = FR_DIAG_WARNING;
        fr_diag_list_add(sc->opts->diags, &wd);
    }
    if (index >= 0 && index < FRI_SCENE_MAX_SPRINGS) {
        sc->springs[index] = def;
        if (index >= sc->nsprings) sc->nsprings = index + 1;
    }
    return FR_OK;
}

static int parse_probe(const fr_cfg_node *p, fri_scene *sc, fr_diag *d)
{
    if (fr_cfg_node_kind(p) != FR_CFG_MAP)
        return fr_cfg_error(p, d, FR_ERR_PARSE, "each probe must be a mapping");
    if (sc->nprobes >= FRI_SCENE_MAX_PROBES)
        return fr_cfg_error(p, d, FR_ERR_FULL, "at most %d probes", FRI_SCENE_MAX_PROBES);
    fr_scene_probe *pr = &sc->probes[sc->nprobes];
    memset(pr, 0, sizeof *pr);
    const fr_cfg_node *nn = fr_cfg_get(p, "name");
    if (!nn) return fr_cfg_error(p, d, FR_ERR_PARSE, "missing required field 'name'");
    int err = fr_cfg_string(p, "name", "", pr->name, sizeof pr->name, d);
    if (err) return err;
    for (int i = 0; i < sc->nprobes; i++)
        if (!strcmp(sc->probes[i].name, pr->name))
            return fr_cfg_error(nn, d, FR_ERR_PARSE, "duplicate probe name '%s'", pr->name);
    const fr_cfg_node *tn = fr_cfg_get(p, "type");
    if (!tn)
        return fr_cfg_error(p, d, FR_ERR_PARSE,
                            "missing required field 'type' (spring or contact)");
    if ((err = fr_cfg_enum(p, "type", probe_types, 0, &pr->type, d))) return err;
    if (pr->type == FR_PROBE_SPRING) {
        const fr_cfg_node *sn = fr_cfg_get(p, "spring");
        if (!sn) return fr_cfg_error(p, d, FR_ERR_PARSE, "missing required field 'spring'");
        char name[48];
        if ((err = fr_cfg_string(p, "spring", "", name, sizeof name, d))) return err;
        if (fr_world_find_spring(sc->world, name, &pr->spring) != FR_OK)
            return fr_cfg_error(sn, d, FR_ERR_NOTFOUND, "no spring named '%s'", name);
    } else {
        if ((err = find_body(p, "body", sc, true, &pr->body, d))) return err;
        if ((err = find_body(p, "other", sc, false, &pr->other, d))) return err;
    }
    if ((err = fr_cfg_check_unknown(p, probe_keys, d))) return err;
    sc->nprobes++;
    return FR_OK;
}

static int parse_device(const fr_cfg_node *dv, fri_scene *sc, fr_diag *d)
{
    fr_scene_device *out = &sc->device;
    memset(out, 0, sizeof *out);
    out->scale = 1.0;
    out->workspace = fr_pose_identity();
    out->passivity = true;
    if (!dv) return FR_OK;
    if (fr_cfg_node_kind(dv) != FR_CFG_MAP)
        return fr_cfg_error(dv, d, FR_ERR_PARSE, "'device' must be a mapping");
    out->present = true;
    int err;
    if ((err = fr_cfg_string(dv, "spec", "", out->spec, sizeof out->spec, d))) return err;
    /* a device file (a spec the registry reads as a path: a '/' or a .yaml/.yml suffix) is found
     * relative to the scene, as a robot's URDF is (it was looked for in the working directory:
     * a scene run from another folder failed with "hold-press.yaml: error: cannot open") */
    size_t sl = strlen(out->spec);
    bool spec_file = strchr(out->spec, '/') || (sl > 5 && !strcmp(out->spec + sl - 5, ".yaml")) ||
                     (sl > 4 && !strcmp(out->spec + sl - 4, ".yml"));
    if (spec_file && out->spec[0] != '/') {
        char dir[sizeof sc->path], path[sizeof out->spec];
        snprintf(dir, sizeof dir, "%s", sc->path);
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dirname(dir), out->spec) >= sizeof path)
            return fr_cfg_error(fr_cfg_get(dv, "spec"), d, FR_ERR_RANGE,
                                "the device file's path, relative to the scene, is too long");
        memcpy(out->spec, path, sizeof path);
    }
    if ((err = fr_cfg_bool(dv, "passivity", true, &out->passivity, d))) return err;
    if ((err = find_body(dv, "proxy", sc, false, &out->proxy, d))) return err;
    if (!fr_body_id_is_null(out->proxy) && fr_body_type(sc->world, out->proxy) != FR_BODY_DYNAMIC)
        return fr_cfg_error(fr_cfg_get(dv, "proxy"), d, FR_ERR_RANGE,
                            "the proxy must be a dynamic body");
    const fr_cfg_node *ws = fr_cfg_get(dv, "workspace");
    if (ws && fr_cfg_node_kind(ws) != FR_CFG_MAP)
        return fr_cfg_error(ws, d, FR_ERR_PARSE, "'workspace' must be a mapping");
    if ((err = fr_cfg_double(ws, "scale", 1.0, FR_CFG_POSITIVE, &out->scale, d))) return err;
    if ((err = fri_scene_parse_pose(ws, &out->workspace, d))) return err;
    if ((err = fr_cfg_check_unknown(ws, workspace_keys, d))) return err;
    const fr_cfg_node *cp = fr_cfg_get(dv, "coupling");
    if (cp && fr_cfg_node_kind(cp) != FR_CFG_MAP)
        return fr_cfg_error(cp, d, FR_ERR_PARSE, "'coupling' must be a mapping");
    /* (−1 when not given: the device's default; a given 0 is 0, a pure damper or an undamped
     * spring — it read as "not given", and a new user's K = 0 ran the defaults unannounced) */
    if ((err = fr_cfg_double(cp, "stiffness", -1.0, FR_CFG_NONNEGATIVE, &out->stiffness, d)))
        return err;
    if ((err = fr_cfg_double(cp, "damping", -1.0, FR_CFG_NONNEGATIVE, &out->damping, d)))
        return err;
    if ((err = fr_cfg_check_unknown(cp, coupling_keys, d))) return err;
    return fr_cfg_check_unknown(dv, device_keys, d);
}

static const char *const viewer_keys[] = {"camera", NULL};
static const char *const camera_keys[] = {"target", "distance", "yaw", "pitch", "fov", NULL};

/* viewer: {camera: {target, distance, yaw, pitch, fov}} (docs/scenes.md) */
static int parse_viewer(const fr_cfg_node *v, fri_scene *sc, fr_diag *d)
{
    fr_scene_viewer *out = &sc->viewer;
    memset(out, 0, sizeof *out);
    out->distance = 1.0;
    out->yaw = 30.0;
    out->pitch = 25.0;
    out->fov = 45.0;
    if (!v) return FR_OK;
    if (fr_cfg_node_kind(v) != FR_CFG_MAP)
        return fr_cfg_error(v, d, FR_ERR_PARSE, "'viewer' must be a mapping");
    const fr_cfg_node *c = fr_cfg_get(v, "camera");
    int err;
    if (c) {
        if (fr_cfg_node_kind(c) != FR_CFG_MAP)
            return fr_cfg_error(c, d, FR_ERR_PARSE, "'camera' must be a mapping");
        out->has_camera = true;
        if ((err = fr_cfg_vec3(c, "target", fr_v3_zero(), &out->target, d))) return err;
        if ((err = fr_cfg_double(c, "distance", 1.0, FR_CFG_POSITIVE, &out->distance, d)))
            return err;
        if ((err = fr_cfg_double_in(c, "yaw", 30.0, -360.0, 360.0, &out->yaw, d))) return err;
        if ((err = fr_cfg_double_in(c, "pitch", 25.0, -89.0, 89.0, &out->pitch, d))) return err;
        if ((err = fr_cfg_double_in(c, "fov", 45.0, 5.0, 150.0, &out->fov, d))) return err;
        if ((err = fr_cfg_check_unknown(c, camera_keys, d))) return err;
    }
    return fr_cfg_check_unknown(v, viewer_keys, d);
}

const fr_scene_viewer *fr_scene_get_viewer(const fr_scene *s)
{
    return &s->viewer;
}

static int parse_list(const fr_cfg_node *root, const char *key, fri_scene *sc, fr_diag *d,
                      int (*fn)(const fr_cfg_node *, fri_scene *, fr_diag *))
{
    const fr_cfg_node *l = fr_cfg_get(root, key);
    if (!l) return FR_OK;
    if (fr_cfg_node_kind(l) != FR_CFG_SEQ)
        return fr_cfg_error(l, d, FR_ERR_PARSE, "'%s' must be a list", key);
    for (int i = 0; i < fr_cfg_node_len(l); i++) {
        int err = fn(fr_cfg_node_item(l, i), sc, d);
        if (err) return err;
    }
    return FR_OK;
}

/* Bodies the scene creates (repeat counts included), for the world's capacity. */
static long count_bodies(const fr_cfg_node *bodies)
{
    long n = 0;
    for (int i = 0; i < fr_cfg_node_len(bodies); i++) {
        const fr_cfg_node *r = fr_cfg_node_item(bodies, i);
        const fr_cfg_node *rep = fr_cfg_node_kind(r) == FR_CFG_MAP ? fr_cfg_get(r, "repeat") : NULL;
        const fr_cfg_node *c = rep ? fr_cfg_get(rep, "count") : NULL;
        double v = 1;
        long cnt = 1;
        if (c && fr_cfg_node_double(c, &v, NULL) == FR_OK && v >= 1 && v <= 100000) cnt = (long)v;
        n += cnt;
    }
    return n;
}

static long count_shapes(const fr_cfg_node *bodies)
{
    long n = 0;
    for (int i = 0; i < fr_cfg_node_len(bodies); i++) {
        const fr_cfg_node *r = fr_cfg_node_item(bodies, i);
        if (fr_cfg_node_kind(r) != FR_CFG_MAP) continue;
        const fr_cfg_node *rep = fr_cfg_get(r, "repeat");
        const fr_cfg_node *c = rep ? fr_cfg_get(rep, "count") : NULL;
        double v = 1;
        long cnt = 1;
        if (c && fr_cfg_node_double(c, &v, NULL) == FR_OK && v >= 1 && v <= 100000) cnt = (long)v;
        n += cnt * fr_cfg_node_len(fr_cfg_get(r, "shapes"));
    }
    return n;
}

/* The most faces any body's shape will have (a sphere of resolution 8 has hundreds), so that the
 * world is made to hold them: 0 where a shape is malformed (parse_shape reports it later). */
static int max_body_shape_faces(const fr_cfg_node *bodies)
{
    int most = 0;
    for (int i = 0; i < fr_cfg_node_len(bodies); i++) {
        const fr_cfg_node *shn = fr_cfg_get(fr_cfg_node_item(bodies, i), "shapes");
        for (int j = 0; j < fr_cfg_node_len(shn); j++) {
            const fr_cfg_node *sh = fr_cfg_node_item(shn, j);
            int type = 0;
            long res = 0;
            if (fr_cfg_node_kind(sh) != FR_CFG_MAP ||
                fr_cfg_enum(sh, "type", shape_types, 0, &type, NULL) ||
                fr_cfg_int(sh, "resolution", 0, 0, 64, &res, NULL))
                continue;
            fr_shape *shape = NULL;
            int faces = 6;
            if (type == 1) fr_shape_create_sphere(1.0, (int)res, &shape);
            if (type == 2) fr_shape_create_capsule(1.0, 1.0, (int)res, &shape);
            if (type == 3) fr_shape_create_cylinder(1.0, 1.0, (int)res, &shape);
            if (type == 4) {
                /* (the simplified hull's: 5000 points sized every contact for 9996 faces) */
                long budget = FR_URDF_HULL_VERTICES;
                int np = fr_cfg_node_len(fr_cfg_get(sh, "points"));
                if (fr_cfg_int(sh, "hull_vertices", budget, 0, 100000, &budget, NULL)) continue;
                if (budget >= 4 && np > budget) np = (int)budget;
                faces = 2 * np - 4;
            }
            if (shape) faces = shape->poly.nfaces;
            fr_shape_destroy(shape);
            if (faces > most) most = faces;
        }
    }
    return most;
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
    /* (the step's length is judged at the finish, in the substeps the bodies ask for) */
    sc->dt_node = fr_cfg_get(w, "dt");
    if ((err = fr_cfg_vec3(w, "gravity", def.gravity, &def.gravity, d))) return err;
    if ((err = fr_cfg_double(w, "duration", 10.0, FR_CFG_POSITIVE, &sc->duration, d))) return err;
    long spare, sub;
    if ((err = fr_cfg_int(w, "spare_bodies", 16, 0, 100000, &spare, d))) return err;
    if ((err = fr_cfg_int(w, "substeps", 0, 0, FR_WORLD_SUBSTEPS_MAX, &sub, d))) return err;
    def.substeps = (int)sub;
    if (sub > 0 && !(def.dt / (double)sub >= 1e-6 * (1.0 - 1e-12)))
        return fr_cfg_error(fr_cfg_get(w, "substeps"), d, FR_ERR_RANGE,
                            "world.substeps %ld makes an internal step of %.3g s (world.dt %g s "
                            "in %ld): below the 1e-06 s a step may take",
                            sub, def.dt / (double)sub, def.dt, sub);
    const fr_cfg_node *c = fr_cfg_get(w, "contact");
    if (c && fr_cfg_node_kind(c) != FR_CFG_MAP)
        return fr_cfg_error(c, d, FR_ERR_PARSE, "'contact' must be a mapping");
    if ((err =
             fr_cfg_double(c, "kappa", def.contact_kappa, FR_CFG_POSITIVE, &def.contact_kappa, d)))
        return err;
    if ((err =
             fr_cfg_double(c, "beta", def.contact_beta, FR_CFG_NONNEGATIVE, &def.contact_beta, d)))
        return err;
    if ((err =
             fr_cfg_double(c, "time", def.contact_time, FR_CFG_NONNEGATIVE, &def.contact_time, d)))
        return err;
    if ((err = fr_cfg_double(c, "stiffen", def.contact_stiffen, FR_CFG_NONNEGATIVE,
                             &def.contact_stiffen, d)))
        return err;
    if ((err = fr_cfg_double(c, "link_kappa", def.contact_link_kappa, FR_CFG_POSITIVE,
                             &def.contact_link_kappa, d)))
        return err;
    if ((err = fr_cfg_double(c, "link_beta", def.contact_link_beta, FR_CFG_NONNEGATIVE,
                             &def.contact_link_beta, d)))
        return err;
    if ((err = fr_cfg_bool(c, "implicit", def.contact_implicit, &def.contact_implicit, d)))
        return err;
    if ((err = fr_cfg_bool(c, "reuse_contacts", def.reuse_contacts, &def.reuse_contacts, d)))
        return err;
    if ((err = fr_cfg_bool(c, "reuse_factor", def.reuse_factor, &def.reuse_factor, d))) return err;
    if ((err = fr_cfg_bool(c, "revise_robots", def.revise_robots, &def.revise_robots, d)))
        return err;
    long iters;
    /* `sweeps` is the older name of `iterations` */
    if ((err = fr_cfg_int(c, "sweeps", def.implicit_iterations, 1, 1000, &iters, d))) return err;
    if ((err = fr_cfg_int(c, "iterations", iters, 1, 1000, &iters, d))) return err;
    def.implicit_iterations = (int)iters;
    if ((err = fr_cfg_double_in(c, "tolerance", def.solver_tolerance, 1e-16, 1.0,
                                &def.solver_tolerance, d)))
        return err;
    long fill;
    if ((err = fr_cfg_int(c, "max_fill", 0, 0, 100000000, &fill, d))) return err;
    def.max_fill = (int)fill;
    long mc, mf;
    if ((err = fr_cfg_int(c, "max_contacts", 0, 0, 10000000, &mc, d))) return err;
    if ((err = fr_cfg_int(c, "max_shape_faces", def.max_shape_faces, 4, 100000, &mf, d)))
        return err;
    def.max_shape_faces = (int)mf;
    /* the constraint solver (docs/constraint.md): contact mode and the PGS/SOR settings */
    if ((err = fr_cfg_enum(c, "mode", contact_modes, def.contact_mode, &def.contact_mode, d)))
        return err;
    long citers;
    if ((err = fr_cfg_int(c, "constraint_iterations", def.constraint_iterations, 1, 100000, &citers,
                          d)))
        return err;
    def.constraint_iterations = (int)citers;
    if ((err = fr_cfg_double_in(c, "constraint_omega", def.constraint_omega, 1e-3, 1.999,
                                &def.constraint_omega, d)))
        return err;
    if ((err = fr_cfg_double_in(c, "constraint_tolerance", def.constraint_tolerance, 1e-16, 1.0,
                                &def.constraint_tolerance, d)))
        return err;
    if ((err = fr_cfg_check_unknown(c, contact_keys, d))) return err;
    bool settle;
    double settle_time, settle_tol;
    if ((err = fr_cfg_bool(w, "settle", true, &settle, d))) return err;
    if ((err = fr_cfg_double(w, "settle_time", 5.0, FR_CFG_NONNEGATIVE, &settle_time, d)))
        return err;
    if ((err = fr_cfg_double(w, "settle_tolerance", 1e-9, FR_CFG_POSITIVE, &settle_tol, d)))
        return err;
    if ((err = fr_cfg_check_unknown(w, world_keys, d))) return err;

    const fr_cfg_node *bodies = fr_cfg_get(root, "bodies");
    if (bodies && fr_cfg_node_kind(bodies) != FR_CFG_SEQ)
        return fr_cfg_error(bodies, d, FR_ERR_PARSE, "'bodies' must be a list");
    const fr_cfg_node *mats = fr_cfg_get(root, "materials");
    if (mats && fr_cfg_node_kind(mats) != FR_CFG_SEQ)
        return fr_cfg_error(mats, d, FR_ERR_PARSE, "'materials' must be a list");
    fr_cfg_get(root, "springs");
    const fr_cfg_node *joints = fr_cfg_get(root, "joints");
    const fr_cfg_node *loops = fr_cfg_get(root, "loops");
    fr_cfg_get(root, "probes");
    const fr_cfg_node *robots = fr_cfg_get(root, "robots");
    fr_cfg_get(root, "device");
    fr_cfg_get(root, "analysis");
    fr_cfg_get(root, "viewer");
    if ((err = fr_cfg_check_unknown(root, top_keys, d))) return err;

    /* robots first: their links and shapes count towards the world's capacities */
    if ((err = fri_scene_robots_prepare(robots, sc, d))) return err;
    fri_robots_capacity rc = fri_scene_robots_capacity(sc);
    long nb = count_bodies(bodies) + rc.bodies, nsh = count_shapes(bodies) + rc.shapes;
    def.max_bodies = (int)(nb + spare > 0 ? nb + spare : 1);
    def.max_shapes = (int)(nsh + 4 * spare);
    /* every shape may touch a handful of others; the table grows with the scene */
    def.max_contacts = mc > 0 ? (int)mc : (int)(8 * nsh + 64);
    if (rc.max_faces > def.max_shape_faces) def.max_shape_faces = rc.max_faces;
    int body_faces = max_body_shape_faces(bodies);
    if (body_faces > def.max_shape_faces) def.max_shape_faces = body_faces;
    if (def.max_shape_faces > mf && fr_cfg_get(c, "max_shape_faces") && sc->opts &&
        sc->opts->diags) {
        /* it sizes the narrow phase for the scene's largest shape, which it cannot refuse or
         * simplify: a smaller value given is raised (8 on a 20-face icosahedron changed nothing,
         * silently: a new user's trial) */
        fr_diag wd;
        fr_cfg_error(fr_cfg_get(c, "max_shape_faces"), &wd, 0,
                     "max_shape_faces %ld raised to %d, the most faces a shape of this scene may "
                     "have: it sizes the narrow phase's buffers and limits no shape (a convex "
                     "shape's hull_vertices, a curved shape's resolution or a robot's "
                     "hull_vertices make shapes smaller)",
                     mf, def.max_shape_faces);
        wd.severity = FR_DIAG_WARNING;
        fr_diag_list_add(sc->opts->diags, &wd);
    }
    if (rc.robots > def.max_robots) def.max_robots = rc.robots;
    def.max_materials = fr_cfg_node_len(mats) + 2;
    def.max_springs = 64;
    int njl = fr_cfg_node_len(joints) + fr_cfg_node_len(loops);
    if (njl > def.max_joints) def.max_joints = njl;
    err = fr_world_create(&def, &sc->world);
    if (err)
        return fr_diag_set(d, err, sc->path, 0, 0, "world", "cannot create world: %s",
                           fr_strerror(err));
    sc->body_ref = calloc((size_t)nb + 1, sizeof *sc->body_ref);
    if (!sc->body_ref) return FR_ERR_NOMEM;
    if ((err = parse_list(root, "materials", sc, d, parse_material))) return err;
    if ((err = parse_list(root, "bodies", sc, d, parse_body))) return err;
    if ((err = fri_scene_robots_build(sc, d))) return err;
    if ((err = parse_list(root, "springs", sc, d, parse_spring))) return err;
    if ((err = parse_list(root, "joints", sc, d, fri_scene_parse_joint))) return err;
    if ((err = parse_list(root, "loops", sc, d, fri_scene_parse_loop))) return err;
    fri_scene_advise_finish(sc, joints);
    if ((err = parse_list(root, "probes", sc, d, parse_probe))) return err;
    if ((err = parse_device(fr_cfg_get(root, "device"), sc, d))) return err;
    if ((err = parse_viewer(fr_cfg_get(root, "viewer"), sc, d))) return err;
    if ((err = fri_scene_parse_analysis(fr_cfg_get(root, "analysis"), sc, d))) return err;
    /* the bodies (robots on a free base too) take their load before the run (docs/scenes.md,
     * world.settle); a settle that runs out of time leaves the state partly settled (it is
     * still a valid start) */
    if (settle) {
        if (sc->opts)
            fr_world_set_settle_progress(sc->world, sc->opts->settle_progress,
                                         sc->opts->settle_user);
        err = fr_world_settle(sc->world, settle_time, settle_tol, NULL);
        fr_world_set_settle_progress(sc->world, NULL, NULL);
        /* (FR_ERR_RANGE: not placed near an equilibrium, the run starts from the placement;
         * fr_world_settle_note says why, and the run's summary repeats it) */
        if (err && err != FR_ERR_UNSUPPORTED && err != FR_ERR_TIMEOUT && err != FR_ERR_RANGE) {
            /* what diverged, and from what placement (the field alone named a setting the user
             * never touched) */
            const fr_world_fault *f = fr_world_get_fault(sc->world);
            const char *note = fr_world_settle_note(sc->world);
            char what[400] = "";
            if (f && f->code)
                snprintf(what, sizeof what, ": %s diverged (%s = %g)", f->what, f->quantity,
                         f->value);
            return fr_diag_set(d, err, sc->path, 0, 0, "world.settle",
                               "settling the bodies before the run failed (%s)%s%s%s",
                               fr_strerror(err), what, note && note[0] ? "; " : "",
                               note ? note : "");
        }
    }
    return FR_OK;
}

int fr_scene_load(const char *path, const char *const *sets, int nsets, fr_scene **out, fr_diag *d)
{
    fr_scene_opts o = {.sets = sets, .nsets = nsets};
    return fr_scene_load_opts(path, &o, out, d);
}

int fr_scene_load_opts(const char *path, const fr_scene_opts *o, fr_scene **out, fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    memset(d, 0, sizeof *d);
    fri_scene *sc = calloc(1, sizeof *sc);
    if (!sc) return FR_ERR_NOMEM;
    snprintf(sc->path, sizeof sc->path, "%s", path);
    sc->opts = o;
    int err = fr_cfg_load_file(path, &sc->doc, d);
    for (int i = 0; !err && i < o->nsets; i++) err = fr_cfg_set(sc->doc, o->sets[i], d);
    sc->sets = calloc((size_t)o->nsets + 1, sizeof *sc->sets);
    if (!err && !sc->sets) err = FR_ERR_NOMEM;
    for (int i = 0; !err && i < o->nsets; i++, sc->nsets++)
        if (!(sc->sets[i] = strdup(o->sets[i]))) err = FR_ERR_NOMEM;
    if (!err) err = build(sc, fr_cfg_root(sc->doc), d);
    sc->opts = NULL;
    if (err) {
        fr_scene_destroy(sc);
        /* an error no parser described (an allocation that failed): still name the file */
        if (!d->msg[0])
            fr_diag_set(d, err, path, 0, 0, "", "%s",
                        err == FR_ERR_NOMEM ? "out of memory loading the scene" : fr_strerror(err));
        return err;
    }
    *out = sc;
    return FR_OK;
}

void fr_scene_destroy(fr_scene *s)
{
    if (!s) return;
    fr_world_destroy(s->world);
    fri_scene_robots_destroy(s);
    free(s->body_ref);
    for (size_t i = 0; i < s->body_names_cap; i++) free(s->body_names[i]);
    free(s->body_names);
    fr_cfg_free(s->doc);
    for (int i = 0; i < s->nsets; i++) free(s->sets[i]);
    free(s->sets);
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
int fr_scene_probe_count(const fr_scene *s)
{
    return s->nprobes;
}
const fr_scene_device *fr_scene_get_device(const fr_scene *s)
{
    return &s->device;
}
const fr_scene_probe *fr_scene_probe_at(const fr_scene *s, int i)
{
    return i >= 0 && i < s->nprobes ? &s->probes[i] : NULL;
}
int fr_scene_set_count(const fr_scene *s)
{
    return s->nsets;
}
const char *fr_scene_set_at(const fr_scene *s, int i)
{
    return i >= 0 && i < s->nsets ? s->sets[i] : NULL;
}
void fr_scene_write_yaml(const fr_scene *s, FILE *out, int indent)
{
    fr_cfg_write(fr_cfg_root(s->doc), out, indent);
}
const fr_scene_analysis *fr_scene_get_analysis(const fr_scene *s)
{
    return &s->analysis;
}
