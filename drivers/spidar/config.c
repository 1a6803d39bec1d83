/* SPIDAR configuration: presets, validation and setting fields by key. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"
#include "spidar_internal.h"

/* Springhead describes its frames in DirectX axes (x right, y up, z away from the user);
 * fureru is z up, y away: swap y and z (this also turns the left-handed frame right-handed). */
static double snap(double v)
{
    return fabs(v) < 1e-12 ? 0.0 : v; /* cos 45° · a − sin 45° · a leaves dust */
}
static fr_vec3 from_dx(double x, double y, double z)
{
    return fr_v3(snap(x), snap(z), snap(y));
}

/* Rotation about the DirectX y (vertical) axis, applied in DirectX coordinates. */
static void rot_dx_y(double deg, double *x, double *z)
{
    double a = deg * M_PI / 180.0, c = cos(a), s = sin(a);
    double nx = c * *x + s * *z, nz = -s * *x + c * *z;
    *x = nx;
    *z = nz;
}

static void common_defaults(fr_spidar_config *c)
{
    memset(c, 0, sizeof *c);
    c->board = FR_SPIDAR_BOARD_SH4;
    c->length_per_count = 1.66555e-5;
    c->volts_per_newton = 0.365296803653; /* 0.008 m / 0.0438 N·m/A / 0.5 A/V */
    c->tension_min = 0.3;
    c->tension_max = 20.0;
    c->dac_per_volt = 415.0;
    c->dac_limit = 32767;
    c->home = fr_pose_identity();
    c->calibrate_on_open = 1;
    c->w_force = 1.0;
    c->w_torque = 6.0;
    c->w_reg = 1e-3;
    c->w_smooth = 0.0;
    c->gn_damping = 1e-4;
    c->gn_iterations = 2;
    c->gn_max_step = 0.02;
    c->gn_max_rot = 0.3;
    c->vel_cutoff = 50.0;
    c->max_stiffness = 2000.0;
    c->max_damping = 10.0;
    c->usb_index = 0;
    c->usb_period = 0.0005;
    c->io_timeout = 0.010;
    c->stale_timeout = 0.002;
    c->command_timeout = 0.005;
    c->reconnect_interval = 0.05;
    c->recover_samples = 10;
    c->max_string_speed = 3.0;
    c->thread_priority = 81; /* above the tick thread (80): a sample must never wait for it */
    c->require_device = 1;
}

void fr_spidar_config_default(fr_spidar_config *c, enum fr_spidar_preset preset)
{
    common_defaults(c);
    if (preset == FR_SPIDAR_PRESET_G6X3R) {
        /* Cyverse aluminium frame 0.12 × 0.152 × 0.12 m, ping-pong-ball grip of 45 mm, the
         * frame turned by -45° about the vertical (Springhead "SpidarG6X3R"). */
        const double PX = 0.06, PY = 0.076, PZ = 0.06, GX = 0.0225, GY = 0.0225;
        const double mp[8][3] = {{-PX, -PY, PZ}, {PX, -PY, PZ}, {PX, -PY, -PZ}, {-PX, -PY, -PZ},
                                 {-PX, PY, PZ},  {PX, PY, PZ},  {PX, PY, -PZ},  {-PX, PY, -PZ}};
        const double kp[8][3] = {{-GX, 0, 0}, {GX, 0, 0}, {0, -GY, 0}, {0, -GY, 0},
                                 {-GX, 0, 0}, {GX, 0, 0}, {0, GY, 0},  {0, GY, 0}};
        snprintf(c->name, sizeof c->name, "spidar-g6-x3r");
        c->n_strings = 8;
        for (int i = 0; i < 8; i++) {
            double x = mp[i][0], y = mp[i][1], z = mp[i][2];
            rot_dx_y(-45.0, &x, &z);
            c->motor[i].position = from_dx(x, y, z);
            x = kp[i][0], y = kp[i][1], z = kp[i][2];
            rot_dx_y(-45.0, &x, &z);
            c->motor[i].attach = from_dx(x, y, z);
            c->motor[i].count_sign = (i >= 2 && i <= 5) ? -1 : 1;
            c->motor[i].volt_sign = 1;
            c->motor[i].channel = i;
        }
        c->max_force = 10.0;
        c->max_torque = 0.2;
        c->max_rot_stiffness = 2.0;
        c->max_rot_damping = 0.02;
        /* reachable: the turned frame's faces are 0.06 m from the centre along the diagonals,
         * the grip's radius is 0.0225 m. Every wrench direction (1 N, 0.01 N·m) is producible
         * only in a smaller core, about ±0.01 m and 0.3 rad (see test_force_closure_core). */
        c->workspace_min = fr_v3(-0.025, -0.025, -0.045);
        c->workspace_max = fr_v3(0.025, 0.025, 0.045);
    } else {
        /* SPIDAR-4: a 0.12 (x) × 0.12 (y) × 0.14 (z) m frame, motors on alternate corners
         * (a tetrahedron), the strings tied to one point of the grip. */
        const double hx = 0.06, hy = 0.06, hz = 0.07;
        const double s[4][3] = {{1, 1, 1}, {-1, -1, 1}, {-1, 1, -1}, {1, -1, -1}};
        snprintf(c->name, sizeof c->name, "spidar-4");
        c->n_strings = 4;
        for (int i = 0; i < 4; i++) {
            c->motor[i].position = fr_v3(s[i][0] * hx, s[i][1] * hy, s[i][2] * hz);
            c->motor[i].attach = fr_v3_zero();
            c->motor[i].count_sign = 1;
            c->motor[i].volt_sign = 1;
            c->motor[i].channel = i;
        }
        c->w_torque = 0.0;
        c->max_force = 5.0;
        c->max_torque = 0.0;
        /* strings only pull: the grip must stay inside the motors' tetrahedron, whose
         * largest centred box is a third of the frame; keep a margin from its faces */
        c->workspace_min = fr_v3(-0.018, -0.018, -0.02);
        c->workspace_max = fr_v3(0.018, 0.018, 0.02);
    }
}

#define WHY(...)                                                                                   \
    do {                                                                                           \
        if (why && why_size) snprintf(why, why_size, __VA_ARGS__);                                 \
    } while (0)

int fr_spidar_config_validate(const fr_spidar_config *c, char *why, size_t why_size)
{
    if (why && why_size) why[0] = '\0';
    if (!c) return FR_ERR_INVAL;
    if (c->n_strings != 4 && c->n_strings != 8) {
        WHY("strings must be 4 or 8, not %d", c->n_strings);
        return FR_ERR_RANGE;
    }
    if (c->board != FR_SPIDAR_BOARD_NONE && !fri_spidar_board_get(c->board)) {
        WHY("unknown board type %d", c->board);
        return FR_ERR_RANGE;
    }
    unsigned used = 0;
    for (int i = 0; i < c->n_strings; i++) {
        const fr_spidar_motor *m = &c->motor[i];
        if (!fr_v3_isfinite(m->position) || !fr_v3_isfinite(m->attach)) {
            WHY("motors.%d: position/attach not finite", i);
            return FR_ERR_INVAL;
        }
        if ((m->count_sign != 1 && m->count_sign != -1) ||
            (m->volt_sign != 1 && m->volt_sign != -1)) {
            WHY("motors.%d: count_sign and volt_sign must be +1 or -1", i);
            return FR_ERR_RANGE;
        }
        if (m->channel < 0 || m->channel >= FR_SPIDAR_CHANNELS || (used & (1u << m->channel))) {
            WHY("motors.%d: channel %d out of 0..7 or used twice", i, m->channel);
            return FR_ERR_RANGE;
        }
        used |= 1u << m->channel;
    }
    if (!(c->length_per_count > 0) || !(c->volts_per_newton > 0) || !(c->dac_per_volt > 0)) {
        WHY("length_per_count, volts_per_newton and dac_per_volt must be > 0");
        return FR_ERR_RANGE;
    }
    if (!(c->tension_min >= 0) || !(c->tension_max > c->tension_min) || !isfinite(c->tension_max)) {
        WHY("need 0 <= tension_min < tension_max");
        return FR_ERR_RANGE;
    }
    if (c->dac_limit < 1 || c->dac_limit > 32767) {
        WHY("dac_limit must be in 1..32767");
        return FR_ERR_RANGE;
    }
    if (!(c->w_force > 0) || !(c->w_reg > 0) || !(c->w_smooth >= 0) ||
        (c->n_strings == 8 && !(c->w_torque > 0)) || !(c->w_torque >= 0)) {
        WHY("tension weights: w_force > 0, w_reg > 0, w_smooth >= 0, w_torque > 0 for 6-DOF");
        return FR_ERR_RANGE;
    }
    if (!(c->gn_damping >= 0) || c->gn_iterations < 1 || !(c->gn_max_step > 0) ||
        !(c->gn_max_rot > 0) || !(c->vel_cutoff > 0)) {
        WHY("pose: damping >= 0, iterations >= 1, max_step, max_rot, vel_cutoff > 0");
        return FR_ERR_RANGE;
    }
    if (!fr_v3_isfinite(c->home.p) || !fr_q_isfinite(c->home.q) ||
        fabs(fr_q_norm(c->home.q) - 1.0) > 1e-6) {
        WHY("home pose must be finite with a unit quaternion");
        return FR_ERR_INVAL;
    }
    if (c->board != FR_SPIDAR_BOARD_NONE) {
        if (!(c->usb_period > 0 && c->usb_period <= 0.1) || !(c->io_timeout >= 0.001) ||
            !(c->stale_timeout > 0) || !(c->command_timeout > 0) || !(c->reconnect_interval > 0) ||
            c->recover_samples < 1 || !(c->max_string_speed > 0) || c->usb_index < 0 ||
            c->thread_priority < 0 || c->thread_priority > 99) {
            WHY("usb: period in (0, 0.1], io_timeout >= 1 ms, timeouts, reconnect_interval, "
                "max_string_speed > 0, recover_samples >= 1, thread_priority 0..99");
            return FR_ERR_RANGE;
        }
    }
    /* Geometry: the strings must determine the pose at home. */
    fr_spidar_kin k;
    fr_spidar_kinematics(c, c->home, &k);
    for (int i = 0; i < c->n_strings; i++)
        if (!(k.length[i] > 1e-6)) {
            WHY("motors.%d: string has zero length at the home pose", i);
            return FR_ERR_INVAL;
        }
    if (c->n_strings == 4) {
        fr_vec3 x;
        if (fr_spidar_position_closed_form(c, k.length, &x) != FR_OK) {
            WHY("the 4 motor points are coplanar: position is not determined");
            return FR_ERR_INVAL;
        }
    } else {
        /* AᵀA (6×6) must be positive definite. */
        double A[36] = {0};
        for (int i = 0; i < 8; i++) {
            double r[6] = {k.u[i].x, k.u[i].y, k.u[i].z, k.m[i].x, k.m[i].y, k.m[i].z};
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++) A[a * 6 + b] += r[a] * r[b];
        }
        if (!fr_chol_factor(A, 6)) {
            WHY("the 8 strings do not determine the grip pose at home (rank < 6)");
            return FR_ERR_INVAL;
        }
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- set by key */

enum ftype { F_DOUBLE, F_INT, F_VEC3, F_QUAT, F_NAME, F_BOARD, F_SIGN };
typedef struct field {
    const char *key;
    enum ftype type;
    size_t off;
} field;

#define FLD(k, t, m)                                                                               \
    {                                                                                              \
        k, t, offsetof(fr_spidar_config, m)                                                        \
    }
static const field fields[] = {
    FLD("name", F_NAME, name),
    FLD("board", F_BOARD, board),
    FLD("strings", F_INT, n_strings),
    FLD("length_per_count", F_DOUBLE, length_per_count),
    FLD("volts_per_newton", F_DOUBLE, volts_per_newton),
    FLD("tension_min", F_DOUBLE, tension_min),
    FLD("tension_max", F_DOUBLE, tension_max),
    FLD("dac_per_volt", F_DOUBLE, dac_per_volt),
    FLD("dac_limit", F_INT, dac_limit),
    FLD("home.position", F_VEC3, home.p),
    FLD("home.orientation", F_QUAT, home.q),
    FLD("calibrate_on_open", F_INT, calibrate_on_open),
    FLD("tension.w_force", F_DOUBLE, w_force),
    FLD("tension.w_torque", F_DOUBLE, w_torque),
    FLD("tension.w_reg", F_DOUBLE, w_reg),
    FLD("tension.w_smooth", F_DOUBLE, w_smooth),
    FLD("pose.damping", F_DOUBLE, gn_damping),
    FLD("pose.iterations", F_INT, gn_iterations),
    FLD("pose.max_step", F_DOUBLE, gn_max_step),
    FLD("pose.max_rot", F_DOUBLE, gn_max_rot),
    FLD("pose.vel_cutoff", F_DOUBLE, vel_cutoff),
    FLD("limits.max_force", F_DOUBLE, max_force),
    FLD("limits.max_torque", F_DOUBLE, max_torque),
    FLD("limits.max_stiffness", F_DOUBLE, max_stiffness),
    FLD("limits.max_damping", F_DOUBLE, max_damping),
    FLD("limits.max_rot_stiffness", F_DOUBLE, max_rot_stiffness),
    FLD("limits.max_rot_damping", F_DOUBLE, max_rot_damping),
    FLD("limits.workspace_min", F_VEC3, workspace_min),
    FLD("limits.workspace_max", F_VEC3, workspace_max),
    FLD("usb.index", F_INT, usb_index),
    FLD("usb.period", F_DOUBLE, usb_period),
    FLD("usb.io_timeout", F_DOUBLE, io_timeout),
    FLD("usb.stale_timeout", F_DOUBLE, stale_timeout),
    FLD("usb.command_timeout", F_DOUBLE, command_timeout),
    FLD("usb.reconnect_interval", F_DOUBLE, reconnect_interval),
    FLD("usb.recover_samples", F_INT, recover_samples),
    FLD("usb.max_string_speed", F_DOUBLE, max_string_speed),
    FLD("usb.thread_priority", F_INT, thread_priority),
    FLD("usb.require_device", F_INT, require_device),
};

static const field motor_fields[] = {
    {"position", F_VEC3, offsetof(fr_spidar_motor, position)},
    {"attach", F_VEC3, offsetof(fr_spidar_motor, attach)},
    {"count_sign", F_SIGN, offsetof(fr_spidar_motor, count_sign)},
    {"volt_sign", F_SIGN, offsetof(fr_spidar_motor, volt_sign)},
    {"channel", F_INT, offsetof(fr_spidar_motor, channel)},
};

/* Parse up to n numbers separated by commas/spaces, optionally in brackets; exactly n wanted. */
static int parse_numbers(const char *s, double *out, int n)
{
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    int bracket = (*p == '[');
    if (bracket) p++;
    for (int i = 0; i < n; i++) {
        while (isspace((unsigned char)*p) || (i > 0 && *p == ',')) p++;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(v)) return FR_ERR_PARSE;
        out[i] = v;
        p = end;
    }
    while (isspace((unsigned char)*p)) p++;
    if (bracket) {
        if (*p != ']') return FR_ERR_PARSE;
        p++;
        while (isspace((unsigned char)*p)) p++;
    }
    return *p == '\0' ? FR_OK : FR_ERR_PARSE;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (end == s || *end || errno == ERANGE || v < -2147483647L || v > 2147483647L)
        return FR_ERR_PARSE;
    *out = (int)v;
    return FR_OK;
}

static int set_field(void *base, const field *f, const char *value)
{
    char *p = (char *)base + f->off;
    double v[4];
    int r, iv;
    switch (f->type) {
    case F_DOUBLE:
        if ((r = parse_numbers(value, v, 1)) != FR_OK) return r;
        *(double *)p = v[0];
        return FR_OK;
    case F_INT:
        if ((r = parse_int(value, &iv)) != FR_OK) return r;
        *(int *)p = iv;
        return FR_OK;
    case F_SIGN:
        if ((r = parse_int(value, &iv)) != FR_OK) return r;
        if (iv != 1 && iv != -1) return FR_ERR_PARSE;
        *(int *)p = iv;
        return FR_OK;
    case F_VEC3:
        if ((r = parse_numbers(value, v, 3)) != FR_OK) return r;
        *(fr_vec3 *)p = fr_v3(v[0], v[1], v[2]);
        return FR_OK;
    case F_QUAT: {
        if ((r = parse_numbers(value, v, 4)) != FR_OK) return r;
        fr_quat q = fr_q(v[0], v[1], v[2], v[3]);
        if (!(fr_q_norm(q) > 1e-9)) return FR_ERR_PARSE;
        *(fr_quat *)p = fr_q_normalize(q);
        return FR_OK;
    }
    case F_NAME: {
        size_t n = strlen(value);
        if (n == 0 || n >= 64) return FR_ERR_PARSE;
        memcpy(p, value, n + 1);
        return FR_OK;
    }
    case F_BOARD:
        if (!strcmp(value, "none"))
            iv = FR_SPIDAR_BOARD_NONE;
        else if (!strcmp(value, "sh4"))
            iv = FR_SPIDAR_BOARD_SH4;
        else if (!strcmp(value, "simple"))
            iv = FR_SPIDAR_BOARD_SIMPLE;
        else
            return FR_ERR_PARSE;
        *(int *)p = iv;
        return FR_OK;
    }
    return FR_ERR_INVAL;
}

int fr_spidar_config_set(fr_spidar_config *cfg, const char *key, const char *value)
{
    if (!cfg || !key || !value) return FR_ERR_INVAL;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(key, fields[i].key)) return set_field(cfg, &fields[i], value);
    if (!strncmp(key, "motors.", 7)) {
        char *end;
        long idx = strtol(key + 7, &end, 10);
        if (end == key + 7 || *end != '.') return FR_ERR_NOTFOUND;
        if (idx < 0 || idx >= FR_SPIDAR_MAX_STRINGS) return FR_ERR_RANGE;
        for (size_t i = 0; i < sizeof motor_fields / sizeof motor_fields[0]; i++)
            if (!strcmp(end + 1, motor_fields[i].key))
                return set_field(&cfg->motor[idx], &motor_fields[i], value);
    }
    return FR_ERR_NOTFOUND;
}
