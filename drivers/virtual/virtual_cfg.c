/* The virtual device's section of a device file (see config/devices/virtual.yaml) and its
 * registry entry. Every error names file, line, column and field. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fureru/base.h"
#include "fureru/virtual.h"
#include "vtraj.h"

static const char *const root_keys[] = {"dof",     "dt",         "limits", "hand",
                                        "encoder", "trajectory", "record", NULL};

/* A sub-mapping (NULL when absent); an error when present but not a mapping. */
static int section(const fr_cfg_node *root, const char *key, const fr_cfg_node **out, fr_diag *d)
{
    *out = fr_cfg_get(root, key);
    if (*out && fr_cfg_node_kind(*out) == FR_CFG_NULL) *out = NULL; /* `key:` with nothing */
    if (*out && fr_cfg_node_kind(*out) != FR_CFG_MAP)
        return fr_cfg_error(*out, d, FR_ERR_PARSE, "expected a mapping");
    return FR_OK;
}

/* > 0 and ≤ max. */
static int pos_max(const fr_cfg_node *m, const char *key, double def, double max, double *out,
                   fr_diag *d)
{
    int err = fr_cfg_double(m, key, def, FR_CFG_POSITIVE, out, d);
    if (!err && *out > max)
        return fr_cfg_error(fr_cfg_get(m, key), d, FR_ERR_RANGE, "must be <= %g, got %g", max,
                            *out);
    return err;
}

/* The node to blame for a cross-field error: key's node, else the section, else the root. */
static const fr_cfg_node *blame(const fr_cfg_node *m, const char *key, const fr_cfg_node *fb)
{
    const fr_cfg_node *n = m ? fr_cfg_get(m, key) : NULL;
    return n ? n : m ? m : fb;
}

static int quat(const fr_cfg_node *m, const char *key, fr_quat def, fr_quat *out, fr_diag *d)
{
    double dv[4] = {def.w, def.x, def.y, def.z}, v[4];
    int err = fr_cfg_doubles(m, key, 4, dv, FR_CFG_ANY, v, d);
    if (err) return err;
    fr_quat q = fr_q(v[0], v[1], v[2], v[3]);
    if (!(fr_q_norm(q) > 1e-6))
        return fr_cfg_error(fr_cfg_get(m, key), d, FR_ERR_RANGE,
                            "must be a non-zero quaternion [w, x, y, z]");
    *out = fr_q_normalize(q);
    return FR_OK;
}

static int parse_limits(const fr_cfg_node *m, fr_device_desc *ds, fr_diag *d)
{
    static const char *const keys[] = {"max_force",     "max_torque",        "max_stiffness",
                                       "max_damping",   "max_rot_stiffness", "max_rot_damping",
                                       "workspace_min", "workspace_max",     NULL};
    int err = 0;
    if (!err) err = pos_max(m, "max_force", ds->max_force, 1e6, &ds->max_force, d);
    if (!err) err = fr_cfg_double_in(m, "max_torque", ds->max_torque, 0, 1e6, &ds->max_torque, d);
    if (!err)
        err = fr_cfg_double(m, "max_stiffness", ds->max_stiffness, FR_CFG_NONNEGATIVE,
                            &ds->max_stiffness, d);
    if (!err)
        err = fr_cfg_double(m, "max_damping", ds->max_damping, FR_CFG_NONNEGATIVE, &ds->max_damping,
                            d);
    if (!err)
        err = fr_cfg_double(m, "max_rot_stiffness", ds->max_rot_stiffness, FR_CFG_NONNEGATIVE,
                            &ds->max_rot_stiffness, d);
    if (!err)
        err = fr_cfg_double(m, "max_rot_damping", ds->max_rot_damping, FR_CFG_NONNEGATIVE,
                            &ds->max_rot_damping, d);
    if (!err) err = fr_cfg_vec3(m, "workspace_min", ds->workspace_min, &ds->workspace_min, d);
    if (!err) err = fr_cfg_vec3(m, "workspace_max", ds->workspace_max, &ds->workspace_max, d);
    if (!err &&
        !(ds->workspace_min.x < ds->workspace_max.x && ds->workspace_min.y < ds->workspace_max.y &&
          ds->workspace_min.z < ds->workspace_max.z))
        return fr_cfg_error(blame(m, "workspace_max", m), d, FR_ERR_RANGE,
                            "workspace_max must exceed workspace_min on every axis");
    if (!err) err = fr_cfg_check_unknown(m, keys, d);
    return err;
}

static int parse_hand(const fr_cfg_node *m, const fr_cfg_node *root, fr_virtual_params *p,
                      fr_diag *d)
{
    static const char *const keys[] = {"mass",        "damping",       "stiffness", "inertia",
                                       "rot_damping", "rot_stiffness", "start",     NULL};
    struct fr_vhand_params *h = &p->hand;
    int err = 0;
    if (!err) err = pos_max(m, "mass", h->mass, 1e3, &h->mass, d);
    if (!err) err = fr_cfg_double(m, "damping", h->damping, FR_CFG_NONNEGATIVE, &h->damping, d);
    if (!err)
        err = fr_cfg_double(m, "stiffness", h->stiffness, FR_CFG_NONNEGATIVE, &h->stiffness, d);
    if (!err) err = pos_max(m, "inertia", h->inertia, 1e3, &h->inertia, d);
    if (!err)
        err =
            fr_cfg_double(m, "rot_damping", h->rot_damping, FR_CFG_NONNEGATIVE, &h->rot_damping, d);
    if (!err)
        err = fr_cfg_double(m, "rot_stiffness", h->rot_stiffness, FR_CFG_NONNEGATIVE,
                            &h->rot_stiffness, d);
    if (!err && fr_cfg_get(m, "start")) {
        h->has_start = true;
        err = fr_cfg_vec3(m, "start", h->start, &h->start, d);
    }
    if (!err && !(fri_vhand_rate(p) <= FRI_VHAND_MAX_RATE)) {
        /* blame the largest term the file gave, else the mass */
        const char *key = h->stiffness >= h->damping ? "stiffness" : "damping";
        if (!m || !fr_cfg_get(m, key)) key = "mass";
        return fr_cfg_error(blame(m, key, root), d, FR_ERR_RANGE,
                            "hand too stiff or damped for its mass at dt = %g s: (stiffness + "
                            "damping + 1)·dt/mass = %g, at most %g (the exact step's error grows "
                            "with it)",
                            p->dt, fri_vhand_rate(p), FRI_VHAND_MAX_RATE);
    }
    if (!err && p->dof == 6) {
        double dt = p->dt, I = h->inertia;
        if (!(h->rot_stiffness * dt * dt / I + 2.0 * h->rot_damping * dt / I < 4.0))
            return fr_cfg_error(blame(m, "rot_stiffness", root), d, FR_ERR_RANGE,
                                "rotational hand unstable at dt = %g s (need rot_stiffness·dt²/"
                                "inertia + 2·rot_damping·dt/inertia < 4)",
                                dt);
    }
    if (!err) err = fr_cfg_check_unknown(m, keys, d);
    return err;
}

static int parse_encoder(const fr_cfg_node *m, fr_virtual_params *p, fr_diag *d)
{
    static const char *const keys[] = {"resolution", "latency", "velocity", "velocity_cutoff",
                                       NULL};
    static const char *const vel[] = {"difference", "true", NULL};
    long lat = p->encoder.latency;
    int err = 0;
    if (!err)
        err = fr_cfg_double_in(m, "resolution", p->encoder.resolution, 0, 0.01,
                               &p->encoder.resolution, d);
    if (!err) err = fr_cfg_int(m, "latency", lat, 0, 100000, &lat, d);
    if (!err) err = fr_cfg_enum(m, "velocity", vel, p->encoder.velocity, &p->encoder.velocity, d);
    if (!err)
        err = fr_cfg_double(m, "velocity_cutoff", p->encoder.velocity_cutoff, FR_CFG_NONNEGATIVE,
                            &p->encoder.velocity_cutoff, d);
    if (!err) err = fr_cfg_check_unknown(m, keys, d);
    p->encoder.latency = (int)lat;
    return err;
}

static int parse_traj(const fr_cfg_node *m, const char *base_dir, fr_virtual_params *p, fr_diag *d)
{
    static const char *const types[] = {"hold", "line", "circle", "poke", "csv", NULL};
    static const char *const planes[] = {"xy", "yz", "zx", NULL};
    static const char *const k_hold[] = {"type", "orientation", "point", NULL};
    static const char *const k_line[] = {"type", "orientation", "from", "to", "speed", NULL};
    static const char *const k_circle[] = {"type",  "orientation", "center", "radius",
                                           "plane", "period",      NULL};
    static const char *const k_poke[] = {"type",  "orientation", "start", "direction",
                                         "depth", "period",      NULL};
    static const char *const k_csv[] = {"type", "file", "loop", "offset", NULL};
    struct fr_vtraj_params *t = &p->traj;
    int err = fr_cfg_enum(m, "type", types, t->type, &t->type, d);
    if (!err && t->type != FR_VTRAJ_CSV)
        err = quat(m, "orientation", t->orientation, &t->orientation, d);
    if (err) return err;
    const char *const *keys = k_hold;
    switch (t->type) {
    case FR_VTRAJ_HOLD:
        err = fr_cfg_vec3(m, "point", t->point, &t->point, d);
        break;
    case FR_VTRAJ_LINE:
        keys = k_line;
        if (!err) err = fr_cfg_vec3(m, "from", t->from, &t->from, d);
        if (!err) err = fr_cfg_vec3(m, "to", t->to, &t->to, d);
        if (!err && !(fr_v3_dist(t->from, t->to) > 0))
            return fr_cfg_error(blame(m, "to", m), d, FR_ERR_RANGE, "must differ from 'from'");
        if (!err) err = pos_max(m, "speed", t->speed, 100, &t->speed, d);
        break;
    case FR_VTRAJ_CIRCLE:
        keys = k_circle;
        if (!err) err = fr_cfg_vec3(m, "center", t->center, &t->center, d);
        if (!err) err = pos_max(m, "radius", t->radius, 10, &t->radius, d);
        if (!err) err = fr_cfg_enum(m, "plane", planes, t->plane, &t->plane, d);
        if (!err) err = pos_max(m, "period", t->period, 1e6, &t->period, d);
        break;
    case FR_VTRAJ_POKE:
        keys = k_poke;
        if (!err) err = fr_cfg_vec3(m, "start", t->start, &t->start, d);
        if (!err) err = fr_cfg_vec3(m, "direction", t->direction, &t->direction, d);
        if (!err && !(fr_v3_norm(t->direction) > 1e-12))
            return fr_cfg_error(blame(m, "direction", m), d, FR_ERR_RANGE,
                                "must be a non-zero vector");
        if (!err) err = fr_cfg_double_in(m, "depth", t->depth, 0, 10, &t->depth, d);
        if (!err) err = pos_max(m, "period", t->period, 1e6, &t->period, d);
        break;
    case FR_VTRAJ_CSV: {
        keys = k_csv;
        char file[512];
        const fr_cfg_node *fn = fr_cfg_get(m, "file");
        if (!fn) return fr_cfg_error(m, d, FR_ERR_PARSE, "missing key 'file' (type csv needs one)");
        err = fr_cfg_string(m, "file", "", file, sizeof file, d);
        if (!err && !file[0]) return fr_cfg_error(fn, d, FR_ERR_RANGE, "must not be empty");
        if (!err) {
            int n = file[0] == '/' ? snprintf(t->file, sizeof t->file, "%s", file)
                                   : snprintf(t->file, sizeof t->file, "%s/%s", base_dir, file);
            if (n >= (int)sizeof t->file) return fr_cfg_error(fn, d, FR_ERR_RANGE, "path too long");
            if (access(t->file, R_OK) != 0)
                return fr_cfg_error(fn, d, FR_ERR_NOTFOUND, "cannot read '%s'", t->file);
        }
        if (!err) err = fr_cfg_bool(m, "loop", t->loop, &t->loop, d);
        if (!err) err = fr_cfg_vec3(m, "offset", t->offset, &t->offset, d);
        break;
    }
    default:
        break;
    }
    if (!err) err = fr_cfg_check_unknown(m, keys, d);
    return err;
}

static int parse_record(const fr_cfg_node *m, fr_virtual_params *p, fr_diag *d)
{
    static const char *const keys[] = {"capacity", "csv", NULL};
    int err = fr_cfg_int(m, "capacity", p->record.capacity, 0, 100000000, &p->record.capacity, d);
    if (!err) err = fr_cfg_string(m, "csv", p->record.csv, p->record.csv, sizeof p->record.csv, d);
    if (!err) err = fr_cfg_check_unknown(m, keys, d);
    return err;
}

int fr_virtual_params_from_cfg(const fr_cfg_node *root, const char *base_dir, fr_virtual_params *p,
                               fr_diag *d)
{
    fr_virtual_params_default(p);
    if (!root) return FR_OK;
    if (fr_cfg_node_kind(root) != FR_CFG_MAP)
        return fr_cfg_error(root, d, FR_ERR_PARSE, "expected a mapping");
    long dof = p->dof;
    int err = fr_cfg_int(root, "dof", dof, 3, 6, &dof, d);
    if (!err && dof != 3 && dof != 6)
        return fr_cfg_error(fr_cfg_get(root, "dof"), d, FR_ERR_RANGE, "must be 3 or 6, got %ld",
                            dof);
    p->dof = (int)dof;
    if (!err) err = pos_max(root, "dt", p->dt, 0.1, &p->dt, d);
    const fr_cfg_node *s;
    if (!err && !(err = section(root, "limits", &s, d))) err = parse_limits(s, &p->desc, d);
    if (!err && !(err = section(root, "hand", &s, d))) err = parse_hand(s, root, p, d);
    if (!err && !(err = section(root, "encoder", &s, d))) err = parse_encoder(s, p, d);
    if (!err && !(err = section(root, "trajectory", &s, d)))
        err = parse_traj(s, base_dir ? base_dir : ".", p, d);
    if (!err && !(err = section(root, "record", &s, d))) err = parse_record(s, p, d);
    return err;
}

static int open_cfg(const fr_cfg_node *root, const fr_driver_ctx *ctx, fr_device **out, fr_diag *d)
{
    fr_virtual_params p;
    int err = fr_virtual_params_from_cfg(root, ctx->base_dir, &p, d);
    if (!err) err = fr_devreg_check_unknown(root, root_keys, d);
    if (err) return err;
    if (ctx->dry_run) { /* nothing to protect: open (loads the csv) and close, without a dump */
        fr_device *dev;
        p.record.csv[0] = 0;
        p.record.capacity = 0;
        err = fr_virtual_open(&p, &dev, d);
        if (!err) dev->ops->close(dev);
        return err;
    }
    return fr_virtual_open(&p, out, d);
}

const fr_driver_entry fr_virtual_driver = {
    "virtual", "simulated device held by a simulated hand (scripted or recorded trajectory)",
    open_cfg, NULL};
