/*
 * The SPIDAR fr_device: read() turns the latest counts into a pose, write() turns a wrench into
 * tensions and DAC values for the device thread. Both run on the tick thread and only touch
 * preallocated memory, atomics and the triple buffers: no allocation, lock, wait or I/O.
 *
 * calibrate() (main thread) and read()/write() exclude each other with an atomic ownership
 * flag: read/write never wait for it (they report STALE / return FR_ERR_LOCKED instead);
 * calibrate waits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/base.h"
#include "spidar_internal.h"

typedef struct spidar_dev {
    fr_device dev; /* first: fr_device* and spidar_dev* are the same address */
    fr_spidar_config cfg;
    fr_spidar_hooks hooks;
    fri_spidar_link link;
    fri_spidar_transport *tr; /* NULL for a kinematic device */
    _Atomic int busy;
    _Atomic uint64_t pose_faults;
    uint64_t feed_seq; /* kinematic device: producer's sequence */

    /* Owned by whoever holds busy (the tick thread in normal operation). */
    fr_spidar_calib cal;
    int calibrated;
    int have_sample;
    int64_t counts[FR_SPIDAR_MAX_STRINGS];
    double lengths[FR_SPIDAR_MAX_STRINGS];
    fr_pose pose;
    fr_vec3 vel, angvel;
    int64_t sample_ns;
    uint64_t seq;
    uint32_t buttons;
    int pose_bad;
    double residual;
    fr_spidar_kin kin;
    int seen_status;
    unsigned seen_epoch;
    double t_last[FR_SPIDAR_MAX_STRINGS];
    int16_t dac_last[FR_SPIDAR_CHANNELS];
    int last_min;
    int64_t stale_ns;
    double residual_limit;
} spidar_dev;

static spidar_dev *impl_of(fr_device *d)
{
    return (spidar_dev *)d;
}

static int acquire(spidar_dev *S)
{
    int expected = 0;
    return atomic_compare_exchange_strong(&S->busy, &expected, 1);
}
static void release(spidar_dev *S)
{
    atomic_store(&S->busy, 0);
}

/* Pose, velocity and kinematics from one sample's counts. */
static void process_counts(spidar_dev *S, const int64_t *ch_count, int64_t t_ns, uint32_t pio,
                           uint64_t seq)
{
    const fr_spidar_config *c = &S->cfg;
    int n = c->n_strings;
    for (int i = 0; i < n; i++) S->counts[i] = ch_count[c->motor[i].channel];
    if (!S->calibrated && c->calibrate_on_open) {
        fr_spidar_calibrate_counts(c, S->counts, c->home, &S->cal);
        S->calibrated = 1;
        S->pose = c->home;
    }
    fr_spidar_counts_to_lengths(c, &S->cal, S->counts, S->lengths);
    fr_pose prev = S->pose, np = S->pose;
    int r;
    if (n == 4) {
        np.q = c->home.q;
        r = fr_spidar_position_closed_form(c, S->lengths, &np.p);
        if (r == FR_OK) {
            fr_spidar_kin k;
            fr_spidar_kinematics(c, np, &k);
            double s = 0;
            for (int i = 0; i < n; i++)
                s += (k.length[i] - S->lengths[i]) * (k.length[i] - S->lengths[i]);
            S->residual = sqrt(s / n);
        }
    } else {
        r = fr_spidar_pose_solve(c, S->lengths, S->pose, c->gn_iterations, 0.0, &np, NULL,
                                 &S->residual);
        /* A large jump (start-up, after a fault) needs more iterations than a tick's few:
         * bounded extra work, only then. */
        if (r == FR_OK && !(S->residual <= S->residual_limit))
            r = fr_spidar_pose_solve(c, S->lengths, np, FRI_SPIDAR_GN_CATCHUP, 0.0, &np, NULL,
                                     &S->residual);
    }
    /* Lengths that no pose explains (counter restarted, string slipped) are a fault. */
    S->pose_bad = r != FR_OK || !(S->residual <= S->residual_limit);
    if (S->pose_bad) atomic_fetch_add(&S->pose_faults, 1);
    if (r == FR_OK) {
        /* t_ns is when the board's sample can first have been taken (its request's
         * submission), not its reception: a completion the host saw late followed by a prompt
         * one would otherwise put the motion of the whole delay into a short dt (a spike). */
        if (S->have_sample && t_ns > S->sample_ns) {
            double dt = (double)(t_ns - S->sample_ns) * 1e-9;
            double a = 1.0 - exp(-2.0 * M_PI * c->vel_cutoff * dt);
            fr_vec3 v = fr_v3_scale(fr_v3_sub(np.p, prev.p), 1.0 / dt);
            S->vel = fr_v3_add(S->vel, fr_v3_scale(fr_v3_sub(v, S->vel), a));
            if (n == 8) {
                fr_vec3 w = fr_v3_scale(fr_q_log(fr_q_mul(np.q, fr_q_conj(prev.q))), 1.0 / dt);
                S->angvel = fr_v3_add(S->angvel, fr_v3_scale(fr_v3_sub(w, S->angvel), a));
            }
        }
        S->pose = np;
        fr_spidar_kinematics(c, S->pose, &S->kin);
    }
    S->sample_ns = t_ns;
    S->seq = seq;
    S->buttons = pio;
    S->have_sample = 1;
}

static int sp_read(fr_device *d, fr_device_state *out)
{
    spidar_dev *S = impl_of(d);
    if (!acquire(S)) { /* calibrating: the previous state, marked stale */
        out->pose = S->cfg.home;
        out->vel = out->angvel = fr_v3_zero();
        out->buttons = 0;
        out->status = FR_DEVICE_STALE;
        out->seq = 0;
        return FR_OK;
    }
    unsigned epoch = atomic_load(&S->link.epoch);
    int link = atomic_load(&S->link.state);
    int fresh = fri_tbuf_take(&S->link.sample_box);
    if (fresh) {
        const fri_spidar_sample *s = &S->link.sample_slot[S->link.sample_box.front];
        process_counts(S, s->count, s->t_ns, s->pio, s->seq);
    }
    int status;
    if (link == FR_DEVICE_DISCONNECTED)
        status = FR_DEVICE_DISCONNECTED;
    else if (link == FR_DEVICE_FAULT || S->pose_bad)
        status = FR_DEVICE_FAULT;
    else if (!S->have_sample)
        status = FR_DEVICE_STALE;
    else if (S->tr && fri_now_ns() - S->sample_ns > S->stale_ns)
        status = FR_DEVICE_FAULT; /* samples stopped or old (however late they arrived) */
    else
        status = fresh ? FR_DEVICE_OK : FR_DEVICE_STALE;
    S->seen_status = status;
    S->seen_epoch = epoch;
    out->pose = S->pose;
    out->vel = S->vel;
    out->angvel = S->angvel;
    out->buttons = S->buttons;
    out->status = status;
    out->seq = S->seq;
    release(S);
    return FR_OK;
}

static void post_minimum(spidar_dev *S, unsigned epoch)
{
    fri_spidar_command *c = &S->link.command_slot[S->link.command_box.back];
    memcpy(c->dac, S->link.min_dac, sizeof c->dac);
    c->minimum = 1;
    c->epoch = epoch;
    c->t_ns = fri_now_ns();
    fri_tbuf_publish(&S->link.command_box);
    for (int i = 0; i < S->cfg.n_strings; i++) S->t_last[i] = S->cfg.tension_min;
    memcpy(S->dac_last, S->link.min_dac, sizeof S->dac_last);
    S->last_min = 1;
}

static int sp_write(fr_device *d, const fr_device_cmd *cmd)
{
    spidar_dev *S = impl_of(d);
    if (!acquire(S)) return FR_ERR_LOCKED;
    int r = FR_OK;
    int st = S->seen_status;
    if (!cmd || !fr_v3_isfinite(cmd->force) || !fr_v3_isfinite(cmd->torque)) {
        post_minimum(S, S->seen_epoch);
        r = FR_ERR_NUMERIC;
    } else if (!S->have_sample || (st != FR_DEVICE_OK && st != FR_DEVICE_STALE)) {
        post_minimum(S, S->seen_epoch);
        r = st == FR_DEVICE_DISCONNECTED ? FR_ERR_DISCONNECTED : FR_ERR_DEVICE;
    } else {
        double t[FR_SPIDAR_MAX_STRINGS];
        if (fr_spidar_tension_solve(&S->cfg, &S->kin, cmd->force, cmd->torque, S->t_last, t,
                                    NULL) != FR_OK) {
            post_minimum(S, S->seen_epoch);
            r = FR_ERR_NUMERIC;
        } else {
            fri_spidar_command *c = &S->link.command_slot[S->link.command_box.back];
            fr_spidar_tension_to_dac(&S->cfg, t, c->dac);
            c->minimum = 0;
            c->epoch = S->seen_epoch;
            c->t_ns = fri_now_ns();
            fri_tbuf_publish(&S->link.command_box);
            memcpy(S->t_last, t, sizeof(double) * (size_t)S->cfg.n_strings);
            fr_spidar_tension_to_dac(&S->cfg, t, S->dac_last);
            S->last_min = 0;
        }
    }
    release(S);
    return r;
}

static void sp_set_minimum(fr_device *d)
{
    /* Lock-free and async-signal-safe: every command posted before is void from now on. */
    atomic_fetch_add(&impl_of(d)->link.epoch, 1);
}

static int sp_calibrate(fr_device *d)
{
    spidar_dev *S = impl_of(d);
    int tries = 0;
    while (!acquire(S)) {
        if (++tries > 10000) return FR_ERR_TIMEOUT;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    if (fri_tbuf_take(&S->link.sample_box)) {
        const fri_spidar_sample *s = &S->link.sample_slot[S->link.sample_box.front];
        process_counts(S, s->count, s->t_ns, s->pio, s->seq);
    }
    int r = FR_OK;
    if (!S->have_sample) {
        r = FR_ERR_DEVICE; /* nothing measured yet */
    } else {
        fr_spidar_calibrate_counts(&S->cfg, S->counts, S->cfg.home, &S->cal);
        S->calibrated = 1;
        S->pose = S->cfg.home;
        S->vel = S->angvel = fr_v3_zero();
        S->pose_bad = 0;
        fr_spidar_counts_to_lengths(&S->cfg, &S->cal, S->counts, S->lengths);
        fr_spidar_kinematics(&S->cfg, S->pose, &S->kin);
        atomic_fetch_add(&S->link.epoch, 1); /* commands for the old pose are void */
    }
    release(S);
    return r;
}

static void sp_close(fr_device *d)
{
    if (!d) return;
    spidar_dev *S = impl_of(d);
    if (S->tr)
        fri_spidar_transport_close(S->tr); /* sends the minimum, joins the device thread */
    else
        post_minimum(S, 0);
    free(S);
}

static const fr_device_ops spidar_ops = {
    .read = sp_read,
    .write = sp_write,
    .set_minimum = sp_set_minimum,
    .calibrate = sp_calibrate,
    .close = sp_close,
};

int fr_spidar_open_hooks(const fr_spidar_config *cfg, const fr_spidar_hooks *hooks, fr_device **out)
{
    if (!out) return FR_ERR_INVAL;
    *out = NULL;
    char why[160];
    int r = fr_spidar_config_validate(cfg, why, sizeof why);
    if (r != FR_OK) {
        char msg[200];
        snprintf(msg, sizeof msg, "invalid configuration: %s", why);
        if (hooks && hooks->log)
            hooks->log(hooks->user, msg);
        else
            fprintf(stderr, "spidar: %s\n", msg);
        return FR_ERR_INVAL;
    }
    spidar_dev *S = calloc(1, sizeof *S);
    if (!S) return FR_ERR_NOMEM;
    S->cfg = *cfg;
    if (hooks) S->hooks = *hooks;
    S->dev.ops = &spidar_ops;
    S->dev.impl = S;
    fr_device_desc *D = &S->dev.desc;
    snprintf(D->name, sizeof D->name, "%s", cfg->name[0] ? cfg->name : "spidar");
    snprintf(D->driver, sizeof D->driver, "spidar");
    D->dof_sensed = D->dof_forced = cfg->n_strings == 8 ? 6 : 3;
    D->max_force = cfg->max_force;
    D->max_torque = cfg->n_strings == 8 ? cfg->max_torque : 0.0;
    D->max_stiffness = cfg->max_stiffness;
    D->max_damping = cfg->max_damping;
    D->max_rot_stiffness = cfg->max_rot_stiffness;
    D->max_rot_damping = cfg->max_rot_damping;
    D->workspace_min = cfg->workspace_min;
    D->workspace_max = cfg->workspace_max;

    atomic_init(&S->busy, 0);
    atomic_init(&S->pose_faults, 0);
    fri_tbuf_init(&S->link.sample_box);
    fri_tbuf_init(&S->link.command_box);
    for (int k = 0; k < 3; k++) S->link.command_slot[k].minimum = 1;
    atomic_init(&S->link.state, FR_DEVICE_OK);
    atomic_init(&S->link.epoch, 1u);
    double tmin[FR_SPIDAR_MAX_STRINGS];
    for (int i = 0; i < cfg->n_strings; i++) tmin[i] = cfg->tension_min, S->t_last[i] = tmin[i];
    fr_spidar_tension_to_dac(cfg, tmin, S->link.min_dac);
    memcpy(S->dac_last, S->link.min_dac, sizeof S->dac_last);
    S->last_min = 1;
    S->pose = cfg->home;
    fr_spidar_kinematics(cfg, S->pose, &S->kin);
    S->seen_status = FR_DEVICE_STALE;
    S->stale_ns = (int64_t)(cfg->stale_timeout * 1e9);
    /* Quantisation alone leaves residuals of about a count; a millimetre means the lengths
     * do not belong to any pose. */
    S->residual_limit = fmax(1e-3, 50.0 * cfg->length_per_count);

    if (cfg->board != FR_SPIDAR_BOARD_NONE) {
        r = fri_spidar_transport_open(cfg, hooks, &S->link, &S->tr);
        if (r != FR_OK) {
            free(S);
            return r;
        }
    }
    *out = &S->dev;
    return FR_OK;
}

int fr_spidar_open(const fr_spidar_config *cfg, fr_device **out)
{
    return fr_spidar_open_hooks(cfg, NULL, out);
}

int fr_spidar_feed_counts(fr_device *d, const int64_t *counts)
{
    if (!d || d->ops != &spidar_ops || !counts) return FR_ERR_INVAL;
    spidar_dev *S = impl_of(d);
    if (S->tr) return FR_ERR_UNSUPPORTED;
    fri_spidar_sample *s = &S->link.sample_slot[S->link.sample_box.back];
    memset(s, 0, sizeof *s);
    for (int i = 0; i < S->cfg.n_strings; i++) s->count[S->cfg.motor[i].channel] = counts[i];
    s->t_ns = fri_now_ns();
    s->seq = ++S->feed_seq;
    fri_tbuf_publish(&S->link.sample_box);
    return FR_OK;
}

int fr_spidar_last_output(fr_device *d, double *tension, int16_t dac[FR_SPIDAR_CHANNELS],
                          int *minimum)
{
    if (!d || d->ops != &spidar_ops) return FR_ERR_INVAL;
    spidar_dev *S = impl_of(d);
    if (tension) memcpy(tension, S->t_last, sizeof(double) * (size_t)S->cfg.n_strings);
    if (dac) memcpy(dac, S->dac_last, sizeof S->dac_last);
    if (minimum) *minimum = S->last_min;
    return FR_OK;
}

int fr_spidar_get_info(fr_device *d, fr_spidar_info *out)
{
    if (!d || d->ops != &spidar_ops || !out) return FR_ERR_INVAL;
    spidar_dev *S = impl_of(d);
    memset(out, 0, sizeof *out);
    if (S->tr)
        fri_spidar_transport_info(S->tr, out);
    else
        out->link = atomic_load(&S->link.state);
    out->faults[FR_SPIDAR_FAULT_POSE] = atomic_load(&S->pose_faults);
    return FR_OK;
}

const char *fr_spidar_fault_name(int f)
{
    static const char *const names[FR_SPIDAR_FAULT_COUNT_] = {
        "none",    "timeout",        "short packet", "stall",
        "garbage", "transfer error", "unplugged",    "inconsistent lengths"};
    return f >= 0 && f < FR_SPIDAR_FAULT_COUNT_ ? names[f] : "unknown";
}
