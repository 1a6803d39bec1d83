/* The SPIDAR driver's registry entry: a YAML device file (config/devices/spidar*.yaml) into an
 * fr_spidar_config, located errors, and the hardware probe. Start-up only. */
#ifdef FR_HAVE_LIBUSB
#include <libusb.h>
#endif
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/devices.h"
#include "spidar_cfg.h"
#include "spidar_internal.h"

/* ---------------------------------------------------------------- key tables */

enum ktype {
    K_NUM,   /* finite double in [lo, hi] ((lo, hi] with open_lo) */
    K_INT,   /* integer in [lo, hi] */
    K_FLAG,  /* 0, 1, true or false */
    K_VEC3,  /* [x, y, z] */
    K_QUAT,  /* [w, x, y, z], non-zero (normalised by fr_spidar_config_set) */
    K_NAME,  /* non-empty string < 64 characters */
    K_BOARD, /* none | sh4 | simple */
};

typedef struct keyspec {
    const char *key; /* key in its section; fr_spidar_config_set gets "section.key" */
    enum ktype type;
    double lo, hi;
    int open_lo; /* 1: lo itself is excluded */
} keyspec;

#define BIG 1e300 /* "no upper bound" that still excludes Inf (already refused as not finite) */

/* The ranges are fr_spidar_config_validate's rules, checked here key by key so that an error
 * points at the value; upper bounds only catch unit mistakes. */
static const keyspec root_specs[] = {
    {"name", K_NAME, 0, 0, 0},
    {"board", K_BOARD, 0, 0, 0},
    {"length_per_count", K_NUM, 0, 1e-2, 1},
    {"volts_per_newton", K_NUM, 0, 1e3, 1},
    {"tension_min", K_NUM, 0, 1e3, 0},
    {"tension_max", K_NUM, 0, 1e3, 1},
    {"dac_per_volt", K_NUM, 0, 1e6, 1},
    {"dac_limit", K_INT, 1, 32767, 0},
    {"calibrate_on_open", K_FLAG, 0, 0, 0},
    {NULL, K_NUM, 0, 0, 0},
};
static const keyspec home_specs[] = {
    {"position", K_VEC3, 0, 0, 0},
    {"orientation", K_QUAT, 0, 0, 0},
    {NULL, K_NUM, 0, 0, 0},
};
static const keyspec tension_specs[] = {
    {"w_force", K_NUM, 0, BIG, 1},  {"w_torque", K_NUM, 0, BIG, 0}, {"w_reg", K_NUM, 0, BIG, 1},
    {"w_smooth", K_NUM, 0, BIG, 0}, {NULL, K_NUM, 0, 0, 0},
};
static const keyspec pose_specs[] = {
    {"damping", K_NUM, 0, BIG, 0},  {"iterations", K_INT, 1, 1000, 0}, {"max_step", K_NUM, 0, 1, 1},
    {"max_rot", K_NUM, 0, M_PI, 1}, {"vel_cutoff", K_NUM, 0, 1e5, 1},  {NULL, K_NUM, 0, 0, 0},
};
static const keyspec limits_specs[] = {
    {"max_force", K_NUM, 0, 1e6, 1},
    {"max_torque", K_NUM, 0, 1e6, 0},
    {"max_stiffness", K_NUM, 0, BIG, 0},
    {"max_damping", K_NUM, 0, BIG, 0},
    {"max_rot_stiffness", K_NUM, 0, BIG, 0},
    {"max_rot_damping", K_NUM, 0, BIG, 0},
    {"workspace_min", K_VEC3, 0, 0, 0},
    {"workspace_max", K_VEC3, 0, 0, 0},
    {NULL, K_NUM, 0, 0, 0},
};
static const keyspec usb_specs[] = {
    {"index", K_INT, 0, 127, 0},
    {"period", K_NUM, 0, 0.1, 1},
    {"io_timeout", K_NUM, 0.001, 10, 0},
    {"stale_timeout", K_NUM, 0, 10, 1},
    {"command_timeout", K_NUM, 0, 10, 1},
    {"reconnect_interval", K_NUM, 0, 60, 1},
    {"recover_samples", K_INT, 1, 1000000, 0},
    {"max_string_speed", K_NUM, 0, 1e3, 1},
    {"thread_priority", K_INT, 0, 99, 0},
    {"require_device", K_FLAG, 0, 0, 0},
    {NULL, K_NUM, 0, 0, 0},
};
static const keyspec motor_specs[] = {
    {"position", K_VEC3, 0, 0, 0},
    {"attach", K_VEC3, 0, 0, 0},
    {"count_sign", K_INT, -1, 1, 0},
    {"volt_sign", K_INT, -1, 1, 0},
    {"channel", K_INT, 0, FR_SPIDAR_CHANNELS - 1, 0},
    {NULL, K_NUM, 0, 0, 0},
};

typedef struct section {
    const char *name;
    const keyspec *specs;
} section;
enum { S_HOME, S_TENSION, S_POSE, S_LIMITS, S_USB, S_COUNT };
static const section sections[S_COUNT] = {
    {"home", home_specs},     {"tension", tension_specs}, {"pose", pose_specs},
    {"limits", limits_specs}, {"usb", usb_specs},
};

/* Top-level keys besides the registry's common ones (driver, name, description, safety). */
static const char *const root_keys[] = {"preset",
                                        "board",
                                        "strings",
                                        "length_per_count",
                                        "volts_per_newton",
                                        "tension_min",
                                        "tension_max",
                                        "dac_per_volt",
                                        "dac_limit",
                                        "calibrate_on_open",
                                        "home",
                                        "motors",
                                        "tension",
                                        "pose",
                                        "limits",
                                        "usb",
                                        NULL};

static const char *const preset_names[] = {"spidar-4", "spidar-g6-x3r", NULL};
static const char *const board_names[] = {"none", "sh4", "simple", NULL}; /* enum order */

/* ---------------------------------------------------------------- values */

static const char *range_text(const keyspec *s, char *buf, size_t n)
{
    if (s->hi >= BIG)
        snprintf(buf, n, "%s %g", s->open_lo ? ">" : ">=", s->lo);
    else
        snprintf(buf, n, "in %c%g, %g]", s->open_lo ? '(' : '[', s->lo, s->hi);
    return buf;
}

/* Read map[spec->key] (present) into text fr_spidar_config_set understands: numbers are printed
 * with 17 significant digits, which strtod reads back to the same double. */
static int read_value(const fr_cfg_node *map, const keyspec *s, char *text, size_t n, fr_diag *d)
{
    const fr_cfg_node *node = fr_cfg_get(map, s->key);
    char rng[64];
    int err;
    switch (s->type) {
    case K_NUM: {
        double v;
        if ((err = fr_cfg_node_double(node, &v, d))) return err;
        if ((s->open_lo ? !(v > s->lo) : !(v >= s->lo)) || v > s->hi)
            return fr_cfg_error(node, d, FR_ERR_RANGE, "must be %s, got %g",
                                range_text(s, rng, sizeof rng), v);
        snprintf(text, n, "%.17g", v);
        return FR_OK;
    }
    case K_INT: {
        long v;
        if ((err = fr_cfg_int(map, s->key, 0, (long)s->lo, (long)s->hi, &v, d))) return err;
        if (s->lo == -1 && s->hi == 1 && v == 0) /* a sign */
            return fr_cfg_error(node, d, FR_ERR_RANGE, "must be +1 or -1, got 0");
        snprintf(text, n, "%ld", v);
        return FR_OK;
    }
    case K_FLAG: {
        bool b;
        long v;
        fr_diag tmp;
        if (fr_cfg_bool(map, s->key, false, &b, &tmp) == FR_OK) {
            v = b;
        } else if (fr_cfg_int(map, s->key, 0, 0, 1, &v, &tmp) != FR_OK) {
            const char *sc = fr_cfg_node_scalar(node);
            return fr_cfg_error(node, d, FR_ERR_PARSE, "expected 0, 1, true or false, got %s%s%s",
                                sc ? "'" : "a ", sc ? sc : "non-scalar", sc ? "'" : "");
        }
        snprintf(text, n, "%ld", v);
        return FR_OK;
    }
    case K_VEC3: {
        fr_vec3 v;
        if ((err = fr_cfg_vec3(map, s->key, fr_v3_zero(), &v, d))) return err;
        snprintf(text, n, "[%.17g, %.17g, %.17g]", v.x, v.y, v.z);
        return FR_OK;
    }
    case K_QUAT: {
        double q[4];
        if ((err = fr_cfg_doubles(map, s->key, 4, NULL, FR_CFG_ANY, q, d))) return err;
        if (!(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) > 1e-6))
            return fr_cfg_error(node, d, FR_ERR_RANGE,
                                "must be a non-zero quaternion [w, x, y, z]");
        snprintf(text, n, "[%.17g, %.17g, %.17g, %.17g]", q[0], q[1], q[2], q[3]);
        return FR_OK;
    }
    case K_NAME: {
        char buf[64];
        if ((err = fr_cfg_string(map, s->key, "", buf, sizeof buf, d))) return err;
        if (!buf[0]) return fr_cfg_error(node, d, FR_ERR_RANGE, "must not be empty");
        snprintf(text, n, "%s", buf);
        return FR_OK;
    }
    case K_BOARD: {
        int b;
        if ((err = fr_cfg_enum(map, s->key, board_names, 0, &b, d))) return err;
        snprintf(text, n, "%s", board_names[b]);
        return FR_OK;
    }
    }
    return FR_ERR_INVAL;
}

/* Every key of specs present in map, through fr_spidar_config_set("prefix" + key). */
static int apply_specs(const fr_cfg_node *map, const char *prefix, const keyspec *specs,
                       fr_spidar_config *cfg, fr_diag *d)
{
    for (const keyspec *s = specs; s->key; s++) {
        const fr_cfg_node *node = fr_cfg_get(map, s->key);
        if (!node) continue;
        char text[160], key[64];
        int err = read_value(map, s, text, sizeof text, d);
        if (err) return err;
        snprintf(key, sizeof key, "%s%s", prefix, s->key);
        err = fr_spidar_config_set(cfg, key, text);
        if (err) /* a key the table knows but the config does not: a bug, said as such */
            return fr_cfg_error(node, d, FR_ERR_INVAL, "fr_spidar_config_set(\"%s\", \"%s\"): %s",
                                key, text, fr_strerror(err));
    }
    return FR_OK;
}

static int keys_of(const keyspec *specs, const char **out, int max)
{
    int n = 0;
    for (const keyspec *s = specs; s->key && n < max - 1; s++) out[n++] = s->key;
    out[n] = NULL;
    return n;
}

/* A sub-mapping (NULL when absent or empty); an error when present but not a mapping. */
static int get_section(const fr_cfg_node *root, const char *key, const fr_cfg_node **out,
                       fr_diag *d)
{
    *out = fr_cfg_get(root, key);
    if (*out && fr_cfg_node_kind(*out) == FR_CFG_NULL) *out = NULL;
    if (*out && fr_cfg_node_kind(*out) != FR_CFG_MAP)
        return fr_cfg_error(*out, d, FR_ERR_PARSE, "expected a mapping");
    return FR_OK;
}

static const fr_cfg_node *first_of(const fr_cfg_node *a, const fr_cfg_node *b, const fr_cfg_node *c)
{
    return a ? a : b ? b : c;
}

/* ---------------------------------------------------------------- the motors list */

static int parse_motors(const fr_cfg_node *seq, fr_spidar_config *cfg, fr_diag *d)
{
    if (fr_cfg_node_kind(seq) != FR_CFG_SEQ)
        return fr_cfg_error(seq, d, FR_ERR_PARSE,
                            "expected a list of %d motors (one mapping per string)",
                            cfg->n_strings);
    int n = fr_cfg_node_len(seq);
    if (n != cfg->n_strings)
        return fr_cfg_error(seq, d, FR_ERR_RANGE, "expected %d motors (strings: %d), got %d",
                            cfg->n_strings, cfg->n_strings, n);
    const char *keys[8];
    keys_of(motor_specs, keys, 8);
    for (int i = 0; i < n; i++) {
        const fr_cfg_node *m = fr_cfg_node_item(seq, i);
        if (fr_cfg_node_kind(m) != FR_CFG_MAP)
            return fr_cfg_error(m, d, FR_ERR_PARSE,
                                "expected a mapping (position, attach, count_sign, volt_sign, "
                                "channel)");
        char prefix[32];
        snprintf(prefix, sizeof prefix, "motors.%d.", i);
        int err = apply_specs(m, prefix, motor_specs, cfg, d);
        if (!err) err = fr_cfg_check_unknown(m, keys, d);
        if (err) return err;
    }
    /* one motor per channel: blame the later one (the earlier may have been left implicit) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (cfg->motor[i].channel == cfg->motor[j].channel) {
                const fr_cfg_node *m = fr_cfg_node_item(seq, i);
                return fr_cfg_error(first_of(fr_cfg_get(m, "channel"), m, NULL), d, FR_ERR_RANGE,
                                    "channel %d is already used by motors[%d]",
                                    cfg->motor[i].channel, j);
            }
    return FR_OK;
}

/* ---------------------------------------------------------------- the whole file */

int fri_spidar_config_from_cfg(const fr_cfg_node *root, fr_spidar_config *cfg, fr_diag *d)
{
    fr_spidar_config_default(cfg, FR_SPIDAR_PRESET_SPIDAR4);
    if (!root) return FR_OK;
    if (fr_cfg_node_kind(root) != FR_CFG_MAP)
        return fr_cfg_error(root, d, FR_ERR_PARSE, "expected a mapping");

    /* The preset first: it fills every field, the file changes some. */
    const fr_cfg_node *pn = fr_cfg_get(root, "preset"), *sn = fr_cfg_get(root, "strings");
    int preset = FR_SPIDAR_PRESET_SPIDAR4;
    long strings = 4;
    int err = fr_cfg_enum(root, "preset", preset_names, preset, &preset, d);
    if (!err) err = fr_cfg_int(root, "strings", 4, 4, 8, &strings, d);
    if (err) return err;
    if (strings != 4 && strings != 8)
        return fr_cfg_error(sn, d, FR_ERR_RANGE, "must be 4 (3-DOF) or 8 (6-DOF), got %ld",
                            strings);
    if (!pn && sn) preset = strings == 8 ? FR_SPIDAR_PRESET_G6X3R : FR_SPIDAR_PRESET_SPIDAR4;
    fr_spidar_config_default(cfg, (enum fr_spidar_preset)preset);
    /* A custom geometry starts from the preset with as many strings and lists its motors. */
    if (sn && strings != cfg->n_strings)
        return fr_cfg_error(sn, d, FR_ERR_RANGE, "preset %s has %d strings, not %ld",
                            preset_names[preset], cfg->n_strings, strings);
    const fr_cfg_node *motors = fr_cfg_get(root, "motors");
    if (motors && fr_cfg_node_kind(motors) == FR_CFG_NULL) motors = NULL;

    if ((err = apply_specs(root, "", root_specs, cfg, d))) return err;
    if (motors && (err = parse_motors(motors, cfg, d))) return err;
    const fr_cfg_node *sec[S_COUNT];
    for (int k = 0; k < S_COUNT; k++) {
        const char *keys[16];
        char prefix[32];
        keys_of(sections[k].specs, keys, 16);
        snprintf(prefix, sizeof prefix, "%s.", sections[k].name);
        if ((err = get_section(root, sections[k].name, &sec[k], d))) return err;
        if ((err = apply_specs(sec[k], prefix, sections[k].specs, cfg, d))) return err;
        if ((err = fr_cfg_check_unknown(sec[k], keys, d))) return err;
    }

    /* Relations between keys: blame the later key when both are there. */
    const fr_cfg_node *lim = sec[S_LIMITS];
    if (!(cfg->tension_max > cfg->tension_min))
        return fr_cfg_error(
            first_of(fr_cfg_get(root, "tension_max"), fr_cfg_get(root, "tension_min"), root), d,
            FR_ERR_RANGE, "tension_max (%g N) must exceed tension_min (%g N)", cfg->tension_max,
            cfg->tension_min);
    if (cfg->n_strings == 8 && !(cfg->w_torque > 0))
        return fr_cfg_error(first_of(fr_cfg_get(sec[S_TENSION], "w_torque"), sec[S_TENSION], root),
                            d, FR_ERR_RANGE,
                            "must be > 0 for 8 strings (the torque is controlled)");
    fr_vec3 a = cfg->workspace_min, b = cfg->workspace_max;
    if (!(a.x < b.x && a.y < b.y && a.z < b.z))
        return fr_cfg_error(first_of(fr_cfg_get(lim, "workspace_max"),
                                     fr_cfg_get(lim, "workspace_min"), first_of(lim, root, NULL)),
                            d, FR_ERR_RANGE,
                            "workspace_max must exceed workspace_min on every axis");

    /* What only the whole configuration shows (the geometry): at the motors, or at the motor
     * the reason names. */
    char why[160];
    err = fr_spidar_config_validate(cfg, why, sizeof why);
    if (err) {
        const fr_cfg_node *at = first_of(motors, sn, root);
        const char *reason = why;
        int i, used = 0;
        if (motors && sscanf(why, "motors.%d: %n", &i, &used) == 1 && used &&
            fr_cfg_node_item(motors, i)) {
            at = fr_cfg_node_item(motors, i); /* the field names the motor already */
            reason = why + used;
        }
        return fr_cfg_error(at, d, err, "%s", reason);
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- the registry entry */

static int open_cfg(const fr_cfg_node *root, const fr_driver_ctx *ctx, fr_device **out, fr_diag *d)
{
    fr_spidar_config cfg;
    int err = fri_spidar_config_from_cfg(root, &cfg, d);
    if (!err) err = fr_devreg_check_unknown(root, root_keys, d);
    if (err || ctx->dry_run) return err; /* a dry run never looks for the board */
    err = fr_spidar_open(&cfg, out);
    if (!err) return FR_OK;
    const fr_cfg_node *bn = first_of(fr_cfg_get(root, "board"), root, NULL);
    const fri_spidar_board *b = fri_spidar_board_get(cfg.board);
    switch (err) {
    case FR_ERR_NOTFOUND:
        return fr_cfg_error(bn, d, err,
                            "no %s board %04x:%04x attached (usb.require_device: 0 waits for it; "
                            "board: none runs without hardware)",
                            b ? b->name : "?", b ? b->vid : 0, b ? b->pid : 0);
    case FR_ERR_PERM:
        return fr_cfg_error(bn, d, err,
                            "the %s board is attached but not accessible (install "
                            "config/udev/60-fureru-spidar.rules and re-plug it)",
                            b ? b->name : "?");
    case FR_ERR_UNSUPPORTED:
        return fr_cfg_error(bn, d, err,
                            "this fureru was built without USB support (meson -Dusb=disabled): "
                            "only 'board: none' opens");
    default:
        return fr_cfg_error(bn, d, err, "cannot open the SPIDAR: %s", fr_strerror(err));
    }
}

/* 1 when an Sh4 or Simple board is enumerated (nothing is opened or claimed). */
static int probe(void)
{
#ifndef FR_HAVE_LIBUSB
    return 0; /* a build without libusb cannot see boards */
#else
    libusb_context *ctx = NULL;
    if (libusb_init(&ctx) != 0) return 0;
    libusb_device **list = NULL;
    ssize_t n = libusb_get_device_list(ctx, &list);
    static const int boards[] = {FR_SPIDAR_BOARD_SH4, FR_SPIDAR_BOARD_SIMPLE};
    int found = 0;
    for (ssize_t i = 0; i < n && !found; i++) {
        struct libusb_device_descriptor dd;
        if (libusb_get_device_descriptor(list[i], &dd) != 0) continue;
        for (size_t k = 0; k < sizeof boards / sizeof boards[0]; k++) {
            const fri_spidar_board *b = fri_spidar_board_get(boards[k]);
            if (b && dd.idVendor == b->vid && dd.idProduct == b->pid) found = 1;
        }
    }
    if (n >= 0) libusb_free_device_list(list, 1);
    libusb_exit(ctx);
    return found;
#endif
}

const fr_driver_entry fr_spidar_driver = {
    "spidar", "SPIDAR string haptic interface (4-string 3-DOF, 8-string SPIDAR-G 6-DOF), USB",
    open_cfg, probe};
