/*
 * The SPIDAR driver's real libusb path against an emulated board (umockdev_spidar.c), run under
 * umockdev-wrapper. A test thread plays the 1 kHz tick thread (read, write, sleep to an
 * absolute deadline). Checked: the reported pose against the emulated grip (within the
 * quantisation bound), the DAC values the board receives against the tension QP, fault
 * injection (unplug, timeout, short packet, stall, garbage) → minimum tension within 2 ticks,
 * a clear error naming the libusb code, and recovery/reconnection; set_minimum and close; the
 * Simple board; and read/write without allocation, lock, wait or I/O while the device thread
 * runs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/base.h"
#include "interpose.h"
#include "test_spidar_common.h"
#include "umockdev_spidar.h"

#define TICK_NS 1000000LL

typedef struct rig {
    fru_emu *emu;
    fr_device *dev;
    fr_spidar_config cfg;
    int64_t next;
    int64_t tick_start; /* when the current tick began */
    pthread_mutex_t mu;
    char log[16384];
    size_t log_len;
} rig;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void rig_log(void *user, const char *msg)
{
    rig *r = user;
    pthread_mutex_lock(&r->mu);
    size_t n = strlen(msg);
    if (r->log_len + n + 2 < sizeof r->log) {
        memcpy(r->log + r->log_len, msg, n);
        r->log_len += n;
        r->log[r->log_len++] = '\n';
        r->log[r->log_len] = '\0';
    }
    pthread_mutex_unlock(&r->mu);
    if (getenv("FR_SPIDAR_VERBOSE")) fprintf(stderr, "%.3f spidar: %s\n", mono_ns() * 1e-6, msg);
}

static int rig_log_has(rig *r, const char *needle)
{
    pthread_mutex_lock(&r->mu);
    int has = strstr(r->log, needle) != NULL;
    pthread_mutex_unlock(&r->mu);
    return has;
}

static fr_spidar_config usb_config(int six, int board)
{
    fr_spidar_config c;
    fr_spidar_config_default(&c, six ? FR_SPIDAR_PRESET_G6X3R : FR_SPIDAR_PRESET_SPIDAR4);
    c.board = board;
    /* as a server would run it (where permitted): the timing checks below are about the
     * driver, not about how busy the machine is */
    c.thread_priority = 40;
    c.motor[1].count_sign = -1; /* exercise the per-motor signs */
    c.motor[2].volt_sign = -1;
    return c;
}

/* The emulated board alone (present); NULL emulator means "not under umockdev-wrapper". */
static void rig_emu(rig *r, int six, int board)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    r->cfg = usb_config(six, board);
    r->emu = fru_emu_new(board, &r->cfg, 1);
    ck_assert_msg(r->emu != NULL, "run this test through umockdev-wrapper");
}

/* Open the emulator and the driver. */
static void rig_open(rig *r, int six, int board)
{
    rig_emu(r, six, board);
    fr_spidar_hooks hooks = {rig_log, r};
    int err = fr_spidar_open_hooks(&r->cfg, &hooks, &r->dev);
    ck_assert_msg(err == FR_OK, "fr_spidar_open: %s\n%s", fr_strerror(err), r->log);
    r->next = mono_ns();
    /* the tick thread runs SCHED_FIFO in the server (where permitted) */
    struct sched_param sp = {.sched_priority = 30};
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

static void rig_close(rig *r)
{
    if (r->dev) r->dev->ops->close(r->dev);
    r->dev = NULL;
    fru_emu_free(r->emu);
    pthread_mutex_destroy(&r->mu);
}

/* Sleep to the next 1 ms deadline (a late tick restarts the schedule, as a loop that counts
 * overruns would), then read and, with cmd, write. */
static void rig_tick(rig *r, fr_device_state *st, const fr_device_cmd *cmd)
{
    r->next += TICK_NS;
    struct timespec ts = {(time_t)(r->next / 1000000000), (long)(r->next % 1000000000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    r->tick_start = mono_ns();
    if (r->tick_start > r->next + 5 * TICK_NS) r->next = r->tick_start;
    ck_assert_int_eq(fr_device_read(r->dev, st), FR_OK);
    if (cmd) fr_device_write(r->dev, cmd);
}

static int status_ok(int s)
{
    return s == FR_DEVICE_OK || s == FR_DEVICE_STALE;
}

static void wait_ok(rig *r, int max_ticks)
{
    fr_device_state st;
    for (int k = 0; k < max_ticks; k++) {
        rig_tick(r, &st, NULL);
        if (st.status == FR_DEVICE_OK) return;
    }
    ck_abort_msg("device not OK after %d ticks (status %d)\n%s", max_ticks, st.status, r->log);
}

static double pose_bound(const fr_spidar_config *c, fr_pose p)
{
    return c->n_strings == 8 ? tsp_pinv_norm_6dof(c, p) * c->length_per_count / 2 * sqrt(8.0)
                             : tsp_bound_3dof(c, p.p, c->length_per_count);
}

/* Move the emulated grip there like a hand would (0.3 m/s, 3 rad/s, in real time) and wait
 * until the driver reports it (within the bound). */
static void move_to(rig *r, fr_pose p)
{
    fr_device_state st;
    double dur = fru_emu_move(r->emu, p, 0.3, 3.0);
    for (int k = 0; k < (int)(dur * 1000); k++) rig_tick(r, &st, NULL);
    double bound = pose_bound(&r->cfg, p), err = INFINITY;
    for (int k = 0; k < 500; k++) {
        rig_tick(r, &st, NULL);
        err = tsp_pose_err(st.pose, p);
        if (st.status == FR_DEVICE_OK && err <= bound) return;
    }
    ck_abort_msg("pose error %.3g > bound %.3g (status %d)\n%s", err, bound, st.status, r->log);
}

static int dac_eq(const int16_t *a, const int16_t *b)
{
    return memcmp(a, b, sizeof(int16_t) * 8) == 0;
}

/* Write cmd every tick until the board has received the DAC values the driver computed for the
 * reported pose; returns them in dac_out. Every packet received meanwhile is either those
 * values, the minimum, or (before the first expected one) an older command. */
static void drive_until_received(rig *r, const fr_device_cmd *cmd, int16_t dac_out[8],
                                 fr_pose *pose_out)
{
    fr_device_state st;
    int16_t mind[8], exp[8];
    fru_emu_min_dac(r->emu, mind);
    static fru_out outs[4096];
    size_t seen = fru_emu_outs(r->emu, 0, NULL, 0);
    int got = 0;
    for (int k = 0; k < 1000 && got < 5; k++) {
        rig_tick(r, &st, cmd);
        if (!status_ok(st.status)) continue;
        /* what the driver must have sent: the QP at the reported pose */
        fr_spidar_kin kin;
        fr_spidar_kinematics(&r->cfg, st.pose, &kin);
        double t[8];
        ck_assert_int_eq(
            fr_spidar_tension_solve(&r->cfg, &kin, cmd->force, cmd->torque, NULL, t, NULL), FR_OK);
        fr_spidar_tension_to_dac(&r->cfg, t, exp);
        double tl[8];
        int16_t dl[8];
        int mn;
        fr_spidar_last_output(r->dev, tl, dl, &mn);
        if (mn) continue;
        ck_assert(dac_eq(dl, exp));
        size_t n = fru_emu_outs(r->emu, seen, outs, 4096);
        for (size_t i = 0; i < n - seen && i < 4096; i++) {
            if (dac_eq(outs[i].dac, exp)) {
                got++;
            } else if (got) {
                ck_assert_msg(dac_eq(outs[i].dac, mind), "unexpected DAC packet after the "
                                                         "expected one");
            }
        }
        seen = n;
        *pose_out = st.pose;
    }
    ck_assert_msg(got >= 5, "the board did not receive the commanded DAC values\n%s", r->log);
    memcpy(dac_out, exp, sizeof exp);
}

/* ---------------------------------------------------------------- pose and forces */

static void pose_and_forces(int six, int board, uint64_t seed)
{
    rig r;
    rig_open(&r, six, board);
    frtest_rng rng = {seed};
    wait_ok(&r, 1000);
    for (int k = 0; k < 12; k++) {
        fr_pose p = tsp_rand_pose(&rng, &r.cfg, 0.4);
        move_to(&r, p);
        fr_device_cmd cmd = {fr_v3_scale(tsp_rand_dir(&rng), frtest_uniform(&rng, 0.5, 4)),
                             fr_v3_scale(tsp_rand_dir(&rng), frtest_uniform(&rng, 0, 0.05))};
        int16_t exp[8];
        fr_pose est;
        drive_until_received(&r, &cmd, exp, &est);
        /* the received tensions act on the real grip: decode, and compare the wrench with the
         * one the driver planned at its estimate (DAC rounding and pose error only) */
        double trx[8], half = 0.5 / (r.cfg.dac_per_volt * r.cfg.volts_per_newton);
        fr_spidar_dac_to_tension(&r.cfg, exp, trx);
        fr_spidar_kin kt, ke;
        fr_spidar_kinematics(&r.cfg, p, &kt);
        fr_spidar_kinematics(&r.cfg, est, &ke);
        fr_vec3 ft = fr_v3_zero(), fe = fr_v3_zero();
        double slack = 0;
        for (int i = 0; i < r.cfg.n_strings; i++) {
            ck_assert(trx[i] >= r.cfg.tension_min - half && trx[i] <= r.cfg.tension_max + half);
            ft = fr_v3_mad(ft, trx[i], kt.u[i]);
            fe = fr_v3_mad(fe, trx[i], ke.u[i]);
            slack += trx[i] * fr_v3_dist(kt.u[i], ke.u[i]);
        }
        ck_assert_double_le(fr_v3_dist(ft, fe), slack + 1e-12);
    }
    /* smooth motion and a healthy board: no protocol fault at all */
    fr_spidar_info info;
    ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
    ck_assert_uint_eq(info.faults[FR_SPIDAR_FAULT_GARBAGE], 0);
    ck_assert_uint_eq(info.faults[FR_SPIDAR_FAULT_SHORT], 0);
    ck_assert_uint_eq(info.faults[FR_SPIDAR_FAULT_STALL], 0);
    ck_assert_uint_eq(info.faults[FR_SPIDAR_FAULT_UNPLUGGED], 0);
    ck_assert_uint_eq(info.faults[FR_SPIDAR_FAULT_POSE], 0);
    ck_assert_uint_gt(info.samples, 100);
    if (board == FR_SPIDAR_BOARD_SIMPLE) { /* init once, a latch before every read */
        fru_stats es = fru_emu_get_stats(r.emu);
        ck_assert_int_eq(es.init_direction, 1);
        ck_assert_int_eq(es.init_clear, 1);
        ck_assert_int_ge(es.latches, es.in_answered);
    }
    /* buttons come through */
    fru_emu_set_pio(r.emu, 0xA5); /* Simple: bits 4-7 are the rotary switch, not buttons */
    fr_device_state st;
    for (int k = 0; k < 20; k++) rig_tick(&r, &st, NULL);
    ck_assert_uint_eq(st.buttons, board == FR_SPIDAR_BOARD_SIMPLE ? 0x05u : 0xA5u);
    rig_close(&r);
}

START_TEST(test_sh4_pose_and_forces_3dof)
{
    pose_and_forces(0, FR_SPIDAR_BOARD_SH4, 101);
}
END_TEST

START_TEST(test_sh4_pose_and_forces_6dof)
{
    pose_and_forces(1, FR_SPIDAR_BOARD_SH4, 102);
}
END_TEST

START_TEST(test_simple_board)
{
    pose_and_forces(1, FR_SPIDAR_BOARD_SIMPLE, 103);
}
END_TEST

/* A host late for a sample (its device thread preempted between the board taking the sample
 * and the completion) while the grip moves fast: the next, prompt sample shows the motion of
 * the whole delay, which is no jump. Each board: the Sh4 samples at the IN, the Simple board
 * at the latch request before it. */
START_TEST(test_late_samples)
{
    const int boards[2] = {FR_SPIDAR_BOARD_SH4, FR_SPIDAR_BOARD_SIMPLE};
    rig r;
    rig_open(&r, 0, boards[_i]);
    wait_ok(&r, 1000);
    /* along the diagonal towards motor 0 and back: that string moves about as fast as the grip */
    fr_pose a = {fr_v3(-0.015, -0.015, -0.017), r.cfg.home.q};
    fr_pose b = {fr_v3(0.015, 0.015, 0.017), r.cfg.home.q};
    move_to(&r, a);
    fr_device_state st;
    for (int m = 0; m < 6; m++) {
        /* 1.5 m/s, half of max_string_speed; an 8 ms late answer makes the next sample move
         * about 700 counts, where its 0.5 ms since the late one's reception would allow 270 */
        double dur = fru_emu_move(r.emu, m % 2 ? a : b, 1.5, 3.0);
        int ticks = (int)(dur * 1000);
        for (int k = 0; k < ticks + 5; k++) {
            if (k == ticks / 4) fru_emu_late_in(r.emu, 8 * TICK_NS);
            rig_tick(&r, &st, NULL);
        }
    }
    move_to(&r, b);
    ck_assert_int_eq(fru_emu_get_stats(r.emu).in_late, 6);
    fr_spidar_info info;
    ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
    ck_assert_msg(info.faults[FR_SPIDAR_FAULT_GARBAGE] == 0, "%lu GARBAGE faults\n%s",
                  (unsigned long)info.faults[FR_SPIDAR_FAULT_GARBAGE], r.log);
    ck_assert_int_eq(info.recalibration_advised, 0);
    rig_close(&r);
}
END_TEST

/* The velocity during a constant-speed move with an IN answer seen 8 ms late and the next
 * 1.5 ms late (the board prompt, the host late). The filter v̂ ← v̂ + a_k (Δp_k/Δt_k − v̂), a_k = 1 −
 * exp(−ω Δt_k), ω = 2π vel_cutoff, makes v̂ − v a weighted sum of (f_k − f_{k−1})/Δt_k, where f_k is
 * the sample's position error: the quantisation (|e| ≤ E) plus v times the time from its timestamp
 * to when the board took it (within [0, J]). The weights a_k/Δt_k · Π_{j>k}(1 − a_j) do not
 * decrease in k and end at a_n/Δt_n ≤ ω, so summation by parts bounds that sum by ω times the
 * range of f: |v̂ − v| ≤ ω (2E + |v| J) + the start's transient. With the samples timed by their
 * request J is the host's delay from the stamp to the board, which the emulated board bounds
 * (fru_stats.sample_latency_ns); timed by their reception, J would include the 8 ms
 * (the late sample's Δt of 8.5 ms carries 0.5 ms of motion: a dip to about 0.1 |v|; a
 * prompt one after a late one puts the delay's motion into a short Δt: a spike). */
START_TEST(test_velocity_late_sample)
{
    const int boards[2] = {FR_SPIDAR_BOARD_SH4, FR_SPIDAR_BOARD_SIMPLE};
    rig r;
    rig_open(&r, 0, boards[_i]);
    wait_ok(&r, 1000);
    const double speed = 0.3;
    const int64_t late = 8 * TICK_NS, late2 = 3 * TICK_NS / 2;
    fr_pose a = {fr_v3(-0.015, -0.015, -0.017), r.cfg.home.q};
    fr_pose b = {fr_v3(0.015, 0.015, 0.017), r.cfg.home.q};
    double E = 0; /* the position quantisation bound along the way */
    for (int k = 0; k <= 20; k++)
        E = fmax(E, tsp_bound_3dof(&r.cfg, fr_v3_lerp(a.p, b.p, k / 20.0), r.cfg.length_per_count));
    /* J: the emulated board samples when the Simple board's latch request or the Sh4's IN
     * reaches it, and the driver stamps a sample right before submitting that request, after
     * its previous ioctl was answered: the board measures the bound (sample_latency_ns; the
     * host's scheduling, about 0.1 ms on a quiet host, more on a loaded one) */
    const double omega = 2 * M_PI * r.cfg.vel_cutoff;
    double J = 0, J_max = 0;
    move_to(&r, a);
    fr_device_state st;
    double worst = 0, worst_bound = 0;
    for (int m = 0; m < 4; m++) {
        for (int k = 0; k < 50; k++) rig_tick(&r, &st, NULL); /* at rest: v̂ settles */
        fr_pose from = m % 2 ? b : a, to = m % 2 ? a : b;
        fru_emu_reset_sample_latency(r.emu);
        int64_t t0 = mono_ns();
        double dur = fru_emu_move(r.emu, to, speed, 3.0);
        fr_vec3 v = fr_v3_scale(fr_v3_sub(to.p, from.p), 1.0 / dur);
        int late_sent = 0;
        for (;;) {
            rig_tick(&r, &st, NULL);
            J = (double)fru_emu_get_stats(r.emu).sample_latency_ns * 1e-9; /* read after */
            J_max = fmax(J_max, J);
            double t = (double)(r.tick_start - t0) * 1e-9;
            if (t >= dur) break;
            if (!late_sent && t >= dur / 2) {
                /* 8 ms, and the next answer too 1.5 ms late, so that some tick sees the late
                 * sample alone (whatever the ticks' phase), then a prompt one */
                fru_emu_late_in(r.emu, late);
                fru_emu_late_in(r.emu, late2);
                late_sent = 1;
            }
            /* the transient from rest: |v̂ − v| ≤ |v| + 4ωE when the move starts, decaying
             * from the first sample taken after it (the tick's sample was requested at most
             * late + late2 + stale_timeout before the tick, the longest gap in this test) */
            double since = t - (double)(late + late2) * 1e-9 - r.cfg.stale_timeout;
            if (since < 10 / omega) continue;
            double bound = omega * (2 * E + fr_v3_norm(v) * J) +
                           exp(-omega * since) * (fr_v3_norm(v) + 4 * omega * E);
            double err = fr_v3_dist(st.vel, v);
            if (err / bound > worst / fmax(worst_bound, 1e-300)) worst = err, worst_bound = bound;
            ck_assert_msg(err <= bound,
                          "move %d, %.1f ms in: velocity (%.4f %.4f %.4f) m/s, the grip's (%.4f "
                          "%.4f %.4f): %.4f m/s off > bound %.4f (E %.2g m, J %.3g ms)\n%s",
                          m, t * 1e3, st.vel.x, st.vel.y, st.vel.z, v.x, v.y, v.z, err, bound, E,
                          J * 1e3, r.log);
        }
        ck_assert(late_sent);
        for (int k = 0; k < 20; k++) rig_tick(&r, &st, NULL);
    }
    fru_stats es = fru_emu_get_stats(r.emu);
    ck_assert_int_eq(es.in_late, 8);
    if (getenv("FR_SPIDAR_VERBOSE"))
        fprintf(stderr,
                "velocity: worst %.4f m/s off, bound %.4f (|v| %.2f m/s, E %.3g m); J up to "
                "%.3f ms\n",
                worst, worst_bound, speed, E, J_max * 1e3);
    rig_close(&r);
}
END_TEST

/* ---------------------------------------------------------------- open */

/* The open's synchronous init exchange (the Simple board's two init packets) on a host slow to
 * see an answer: one answer lost, one later than the first attempt's timeout (both retried),
 * every answer lost (a clear error naming the packet after the last attempt; the board got
 * nothing but the minimum tension, and with require_device = 0 the device comes up once the
 * board answers again). */
START_TEST(test_init_retry)
{
    rig r;
    rig_emu(&r, 0, FR_SPIDAR_BOARD_SIMPLE);
    const int64_t first_ms = (int64_t)(4 * r.cfg.io_timeout * 1000 + 0.5);
    fr_spidar_hooks hooks = {rig_log, &r};
    int16_t mind[8];
    fru_emu_min_dac(r.emu, mind);
    if (_i == 0)
        fru_emu_hold_init(r.emu, 1, -1);
    else if (_i == 1)
        fru_emu_hold_init(r.emu, 1, 3 * first_ms * 1000000);
    else
        fru_emu_hold_init(r.emu, 1000000, -1);
    int64_t t0 = mono_ns();
    int err = fr_spidar_open_hooks(&r.cfg, &hooks, &r.dev);
    double took = (double)(mono_ns() - t0) * 1e-6;
    fru_stats es = fru_emu_get_stats(r.emu);
    static fru_out outs[4096];
    size_t n = fru_emu_outs(r.emu, 0, outs, 4096);
    if (getenv("FR_SPIDAR_VERBOSE"))
        fprintf(stderr, "init case %d: open %s in %.1f ms\n%s", _i, fr_strerror(err), took, r.log);
    if (_i < 2) {
        ck_assert_msg(err == FR_OK, "open: %s\n%s", fr_strerror(err), r.log);
        ck_assert_int_eq(es.init_held, 1);
        /* the lost packet never reached the board; the late one did, and the retry resent it */
        ck_assert_int_eq(es.init_direction, _i == 0 ? 1 : 2);
        ck_assert_int_eq(es.init_clear, 1);
        ck_assert_msg(
            rig_log_has(&r, "init packet 0 (3 bytes to OUT 0x02): LIBUSB_ERROR_TIMEOUT") &&
                rig_log_has(&r, "(attempt 1 of 3)") && rig_log_has(&r, "initialised at attempt 2"),
            "%s", r.log);
        ck_assert_double_ge(took, (double)first_ms);
        r.next = mono_ns();
        wait_ok(&r, 1000);
        move_to(&r, (fr_pose){fr_v3(0.01, -0.005, 0.008), r.cfg.home.q});
        n = fru_emu_outs(r.emu, 0, outs, 4096);
        ck_assert_uint_gt(n, 0);
        ck_assert(dac_eq(outs[0].dac, mind)); /* the first DAC packet: the minimum */
        rig_close(&r);
        return;
    }
    /* every attempt failed: FRI_SPIDAR_INIT_ATTEMPTS of them, timeouts 1, 2 and 4 times the
     * first; the last one named */
    ck_assert_int_eq(err, FR_ERR_IO);
    ck_assert_ptr_null(r.dev);
    ck_assert_int_eq(es.init_held, 3);
    ck_assert_int_eq(es.init_direction + es.init_clear, 0);
    ck_assert_int_eq(es.in_answered, 0);
    char want[160];
    snprintf(want, sizeof want,
             "open simple 0cec:0203: initialisation failed after 3 attempts: init packet 0 (3 "
             "bytes to OUT 0x02): LIBUSB_ERROR_TIMEOUT after %lld ms, 0 of 3 bytes confirmed",
             (long long)(4 * first_ms));
    ck_assert_msg(rig_log_has(&r, want), "no \"%s\" in\n%s", want, r.log);
    ck_assert_msg(rig_log_has(&r, "minimum-tension packet: sent"), "%s", r.log);
    ck_assert_double_ge(took, (double)(7 * first_ms));
    /* minimum tension throughout: the only DAC packet the board got is the minimum */
    ck_assert_uint_eq(n, 1);
    ck_assert(dac_eq(outs[0].dac, mind));
    /* not required: the open succeeds, the device stays disconnected (at minimum) while the
     * board keeps losing its init packets, and comes up once it answers again */
    r.cfg.require_device = 0;
    ck_assert_int_eq(fr_spidar_open_hooks(&r.cfg, &hooks, &r.dev), FR_OK);
    r.next = mono_ns();
    fr_device_state st;
    fr_device_cmd cmd = {fr_v3(1.0, 0.5, 0), fr_v3_zero()};
    for (int k = 0; k < 300; k++) {
        rig_tick(&r, &st, &cmd);
        ck_assert_int_eq(st.status, FR_DEVICE_DISCONNECTED);
    }
    fr_spidar_info info;
    ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
    ck_assert_msg(strstr(info.last_error, "initialisation failed after 3 attempts"), "%s",
                  info.last_error);
    n = fru_emu_outs(r.emu, 0, outs, 4096);
    ck_assert_uint_gt(n, 1);
    for (size_t i = 0; i < n && i < 4096; i++) ck_assert(dac_eq(outs[i].dac, mind));
    fru_emu_hold_init(r.emu, 0, 0);
    wait_ok(&r, 3000);
    ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
    ck_assert_uint_eq(info.reconnects, 1);
    rig_close(&r);
}
END_TEST

/* The emulated grip turns the short way round, whichever sign the target quaternion has: every
 * orientation on the way lies on the shorter arc and turns at the speed asked for. */
START_TEST(test_emu_short_arc)
{
    fr_spidar_config cfg = usb_config(1, FR_SPIDAR_BOARD_SH4);
    fru_emu *e = fru_emu_new(FR_SPIDAR_BOARD_SH4, &cfg, 1);
    ck_assert_msg(e != NULL, "run this test through umockdev-wrapper");
    frtest_rng rng = {77};
    for (int m = 0; m < 6; m++) {
        fr_quat q0 = fr_q_axis_angle(tsp_rand_dir(&rng), frtest_uniform(&rng, 0, 3));
        fr_quat q1 =
            fr_q_mul(fr_q_axis_angle(tsp_rand_dir(&rng), frtest_uniform(&rng, 0.3, 3)), q0);
        /* the same orientation: the target's sign decides which way a naive path turns */
        if (m % 2) q1 = fr_q(-q1.w, -q1.x, -q1.y, -q1.z);
        double th = fr_q_angle_between(q0, q1), rot_speed = 6.0; /* th ≤ π */
        fru_emu_set_pose(e, (fr_pose){fr_v3_zero(), q0});
        int64_t t_before = mono_ns(); /* the move starts between these two */
        double dur = fru_emu_move(e, (fr_pose){fr_v3_zero(), q1}, 1.0, rot_speed);
        int64_t t_after = mono_ns();
        ck_assert_double_eq_tol(dur, th / rot_speed, 1e-9);
        for (;;) {
            int64_t t1 = mono_ns();
            fr_quat g = fru_emu_grip(e).q;
            int64_t t2 = mono_ns();
            double a0 = fr_q_angle_between(q0, g), a1 = fr_q_angle_between(g, q1);
            ck_assert_msg(a0 + a1 <= th + 1e-9, "move %d: %.9f + %.9f rad, off the %.9f rad arc", m,
                          a0, a1, th);
            /* 1e-7: the move's duration is whole nanoseconds */
            ck_assert_double_le(a0, rot_speed * (double)(t2 - t_before) * 1e-9 + 1e-7);
            ck_assert_double_ge(a0, fmin(th, rot_speed * (double)(t1 - t_after) * 1e-9) - 1e-7);
            if ((double)(t1 - t_before) * 1e-9 > dur) break;
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
    }
    fru_emu_free(e);
}
END_TEST

/* ---------------------------------------------------------------- faults */

typedef struct fault_case {
    const char *name;
    int mode;          /* fru_mode, or -1 for unplug */
    const char *error; /* text the error must contain */
    int kind;          /* enum fr_spidar_fault */
} fault_case;

static const fault_case faults[] = {
    {"unplug", -1, "NO_DEVICE", FR_SPIDAR_FAULT_UNPLUGGED},
    {"timeout", FRU_TIMEOUT, "LIBUSB_ERROR_TIMEOUT", FR_SPIDAR_FAULT_TIMEOUT},
    {"short", FRU_SHORT, "short packet: 10 of 512 bytes", FR_SPIDAR_FAULT_SHORT},
    {"stall", FRU_STALL, "LIBUSB_TRANSFER_STALL", FR_SPIDAR_FAULT_STALL},
    {"garbage", FRU_GARBAGE, "garbage", FR_SPIDAR_FAULT_GARBAGE},
};

static void run_fault(int which)
{
    const fault_case *fc = &faults[which];
    rig r;
    rig_open(&r, 0, FR_SPIDAR_BOARD_SH4);
    wait_ok(&r, 1000);
    fr_pose p = {fr_v3(0.01, -0.005, 0.008), r.cfg.home.q};
    move_to(&r, p);
    fr_device_cmd cmd = {fr_v3(2.0, -1.0, 0.5), fr_v3_zero()};
    int16_t exp[8], mind[8];
    fr_pose est;
    drive_until_received(&r, &cmd, exp, &est);
    fru_emu_min_dac(r.emu, mind);

    /* inject */
    size_t out_before = fru_emu_outs(r.emu, 0, NULL, 0);
    if (fc->mode < 0)
        fru_emu_unplug(r.emu);
    else
        fru_emu_set_mode(r.emu, (fru_mode)fc->mode);
    fr_device_state st;
    int64_t tf = 0, t_detect = 0;
    int ticks_after = 0;
    /* A timeout shows only once stale_timeout has passed without a sample. */
    int64_t grace = fc->mode == FRU_TIMEOUT ? (int64_t)(r.cfg.stale_timeout * 1e9) : 0;
    for (int k = 0; k < 2000 && !t_detect; k++) {
        rig_tick(&r, &st, &cmd);
        if (!tf) tf = fru_emu_fault_time(r.emu);
        if (tf && r.tick_start >= tf + grace) ticks_after++;
        if (tf && !status_ok(st.status)) t_detect = mono_ns(); /* the minimum is posted */
        if (ticks_after >= 2)
            ck_assert_msg(!status_ok(st.status),
                          "%s: still status %d on the 2nd tick after the fault\n%s", fc->name,
                          st.status, r.log);
    }
    ck_assert_msg(t_detect, "%s: never detected\n%s", fc->name, r.log);
    if (getenv("FR_SPIDAR_VERBOSE"))
        fprintf(stderr, "%s: status changed on the tick %.2f ms after the fault (grace %.1f ms)\n",
                fc->name, (double)(t_detect - tf) * 1e-6, (double)grace * 1e-6);
    /* hold the fault 50 ms */
    for (int k = 0; k < 50; k++) {
        rig_tick(&r, &st, &cmd);
        ck_assert(!status_ok(st.status));
    }
    ck_assert_int_eq(st.status, fc->mode < 0 ? FR_DEVICE_DISCONNECTED : FR_DEVICE_FAULT);
    ck_assert_int_eq(fr_device_write(r.dev, &cmd),
                     fc->mode < 0 ? FR_ERR_DISCONNECTED : FR_ERR_DEVICE);
    /* Every packet the board receives 2 ticks after the fault carries the minimum. Timing
     * alone cannot be the whole check on a shared machine (a packet built just before the
     * fault can reach the board late), so also causally: once the minimum is posted, only the
     * one packet possibly in flight may still carry a force. */
    static fru_out outs[100000];
    size_t n = fru_emu_outs(r.emu, out_before, outs, 100000) - out_before;
    size_t mins = 0, late = 0, after_post = 0;
    for (size_t i = 0; i < n && i < 100000; i++) {
        if (outs[i].t_ns >= t_detect && after_post++ > 0)
            ck_assert_msg(dac_eq(outs[i].dac, mind),
                          "%s: force packet %.2f ms after the minimum was posted", fc->name,
                          (double)(outs[i].t_ns - t_detect) * 1e-6);
        if (outs[i].t_ns < tf + grace + 2 * TICK_NS) continue;
        if (dac_eq(outs[i].dac, mind))
            mins++;
        else
            late++;
    }
    ck_assert_msg(late <= 1, "%s: %zu force packets 2 ticks after the fault", fc->name, late);
    if (late && getenv("FR_SPIDAR_VERBOSE"))
        fprintf(stderr, "%s: one force packet reached the board late\n", fc->name);
    if (fc->mode < 0)
        ck_assert_uint_eq(mins, 0); /* nothing reaches an unplugged board */
    else
        ck_assert_uint_gt(mins, 10);
    /* a clear error */
    fr_spidar_info info;
    ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
    ck_assert_uint_gt(info.faults[fc->kind], 0);
    ck_assert_msg(rig_log_has(&r, fc->error), "%s: no message with \"%s\" in\n%s", fc->name,
                  fc->error, r.log);

    /* the device comes back: status OK again, then the forces */
    size_t out_back = fru_emu_outs(r.emu, 0, NULL, 0);
    if (fc->mode < 0)
        fru_emu_replug(r.emu);
    else
        fru_emu_set_mode(r.emu, FRU_NORMAL);
    wait_ok(&r, 3000);
    if (fc->mode < 0) {
        /* after a reconnection the first packet is the minimum */
        size_t m = fru_emu_outs(r.emu, out_back, outs, 1) - out_back;
        ck_assert_uint_gt(m, 0);
        ck_assert(dac_eq(outs[0].dac, mind));
        ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
        ck_assert_uint_eq(info.reconnects, 1);
        ck_assert_int_eq(info.recalibration_advised, 1);
    }
    if (fc->mode == FRU_STALL) ck_assert_int_gt(fru_emu_get_stats(r.emu).clear_halt_in, 0);
    drive_until_received(&r, &cmd, exp, &est);
    ck_assert_double_le(tsp_pose_err(est, p), pose_bound(&r.cfg, p));
    rig_close(&r);
}

START_TEST(test_faults)
{
    run_fault(_i);
}
END_TEST

/* Counters that jump and stay (a board that restarted, a string that slipped): garbage at
 * first, then followed again with recalibration advised; the lengths then fit no pose, so the
 * device stays at minimum until calibrate() at the home pose. */
START_TEST(test_counter_jump_and_calibrate)
{
    rig r;
    rig_open(&r, 0, FR_SPIDAR_BOARD_SH4);
    wait_ok(&r, 1000);
    fr_device_cmd cmd = {fr_v3(1.0, 0.5, 0), fr_v3_zero()};
    int16_t exp[8], mind[8];
    fr_pose est;
    drive_until_received(&r, &cmd, exp, &est);
    fru_emu_min_dac(r.emu, mind);
    const int64_t jump[8] = {5000, -12000, 300, 25000};
    fru_emu_jump_counters(r.emu, jump);
    fr_device_state st;
    fr_spidar_info info;
    int fault_ticks = 0;
    for (int k = 0; k < 300; k++) {
        rig_tick(&r, &st, &cmd);
        fault_ticks += !status_ok(st.status);
    }
    ck_assert_int_eq(st.status, FR_DEVICE_FAULT); /* still: no pose fits */
    ck_assert_int_ge(fault_ticks, 290);
    ck_assert_int_eq(fr_spidar_get_info(r.dev, &info), FR_OK);
    ck_assert_uint_gt(info.faults[FR_SPIDAR_FAULT_GARBAGE], 0);
    ck_assert_uint_gt(info.faults[FR_SPIDAR_FAULT_POSE], 0);
    ck_assert_int_eq(info.recalibration_advised, 1);
    ck_assert_msg(rig_log_has(&r, "following them again"), "%s", r.log);
    /* the board got the minimum meanwhile */
    static fru_out outs[1];
    size_t n = fru_emu_outs(r.emu, 0, NULL, 0);
    fru_emu_outs(r.emu, n - 1, outs, 1);
    ck_assert(dac_eq(outs[0].dac, mind));
    /* the grip is at home: calibrate, and the device is right again */
    ck_assert_int_eq(r.dev->ops->calibrate(r.dev), FR_OK);
    wait_ok(&r, 1000);
    fr_pose p = {fr_v3(0.01, 0.005, -0.008), r.cfg.home.q};
    move_to(&r, p);
    drive_until_received(&r, &cmd, exp, &est);
    rig_close(&r);
}
END_TEST

/* ---------------------------------------------------------------- minimum, close, absence */

START_TEST(test_set_minimum_and_close)
{
    rig r;
    rig_open(&r, 1, FR_SPIDAR_BOARD_SH4);
    wait_ok(&r, 1000);
    fr_device_cmd cmd = {fr_v3(0, 0, 3.0), fr_v3(0.02, 0, 0)};
    int16_t exp[8], mind[8];
    fr_pose est;
    drive_until_received(&r, &cmd, exp, &est);
    fru_emu_min_dac(r.emu, mind);
    /* set_minimum from another context (no read/write in between): the OUT in flight (if any)
     * may still carry the force, every later one carries the minimum */
    size_t before = fru_emu_outs(r.emu, 0, NULL, 0);
    int64_t t0 = mono_ns();
    fr_device_set_minimum(r.dev);
    static fru_out outs[256];
    size_t n = 0;
    for (int k = 0; k < 2000 && n < 8; k++) { /* 8 packets, however loaded the machine is */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        n = fru_emu_outs(r.emu, before, outs, 256) - before;
    }
    size_t first_min = n;
    for (size_t i = 0; i < n && i < 256; i++)
        if (dac_eq(outs[i].dac, mind)) {
            first_min = i;
            break;
        }
    ck_assert_msg(first_min <= 1, "%zu force packets after set_minimum", first_min);
    for (size_t i = first_min; i < n && i < 256; i++) ck_assert(dac_eq(outs[i].dac, mind));
    ck_assert_uint_gt(n - first_min, 5);
    if (getenv("FR_SPIDAR_VERBOSE"))
        fprintf(stderr, "set_minimum: first minimum packet after %.2f ms\n",
                (double)(outs[first_min].t_ns - t0) * 1e-6);
    /* writes resume the force only once read has seen the new epoch */
    drive_until_received(&r, &cmd, exp, &est);
    /* close: the last packet the board got is the minimum */
    r.dev->ops->close(r.dev);
    r.dev = NULL;
    n = fru_emu_outs(r.emu, 0, NULL, 0);
    fru_emu_outs(r.emu, n - 1, outs, 1);
    ck_assert(dac_eq(outs[0].dac, mind));
    rig_close(&r);
}
END_TEST

START_TEST(test_absent_board)
{
    rig r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.mu, NULL);
    r.cfg = usb_config(0, FR_SPIDAR_BOARD_SH4);
    r.emu = fru_emu_new(FR_SPIDAR_BOARD_SH4, &r.cfg, 0);
    ck_assert_msg(r.emu != NULL, "run this test through umockdev-wrapper");
    fr_spidar_hooks hooks = {rig_log, &r};
    ck_assert_int_eq(fr_spidar_open_hooks(&r.cfg, &hooks, &r.dev), FR_ERR_NOTFOUND);
    ck_assert(rig_log_has(&r, "no sh4 board 0cec:0205"));
    r.cfg.require_device = 0;
    ck_assert_int_eq(fr_spidar_open_hooks(&r.cfg, &hooks, &r.dev), FR_OK);
    r.next = mono_ns();
    fr_device_state st;
    for (int k = 0; k < 20; k++) rig_tick(&r, &st, NULL);
    ck_assert_int_eq(st.status, FR_DEVICE_DISCONNECTED);
    fru_emu_replug(r.emu); /* plugged in later */
    wait_ok(&r, 3000);
    fr_pose p = {fr_v3(-0.01, 0.004, 0.0), r.cfg.home.q};
    move_to(&r, p);
    rig_close(&r);
}
END_TEST

/* ---------------------------------------------------------------- hot path */

START_TEST(test_hot_path_with_transport)
{
    if (!fri_watch_available()) return; /* sanitizer build */
    rig r;
    rig_open(&r, 1, FR_SPIDAR_BOARD_SH4);
    wait_ok(&r, 1000);
    fr_device_cmd cmd = {fr_v3(1, 1, 1), fr_v3(0, 0.01, 0)};
    fr_device_state st;
    int ok = 0;
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    int64_t next = mono_ns();
    for (int k = 0; k < 10000 && ok < 200; k++) { /* until 200 full read+write ticks */
        next += TICK_NS;
        while (mono_ns() < next) { /* spin: no sleeping call while armed */
        }
        fr_device_read(r.dev, &st);
        ok += st.status == FR_DEVICE_OK;
        fr_device_write(r.dev, &cmd);
    }
    fri_watch_counts n = fri_watch_disarm();
    ck_assert_int_ge(ok, 200);
    ck_assert_int_eq(n.allocs, 0);
    ck_assert_int_eq(n.frees, 0);
    ck_assert_int_eq(n.locks, 0);
    ck_assert_int_eq(n.waits, 0);
    ck_assert_int_eq(n.io, 0);
    rig_close(&r);
}
END_TEST

static Suite *spidar_usb_suite(void)
{
    Suite *s = suite_create("spidar_usb");
    TCase *tc = tcase_create("usb");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sh4_pose_and_forces_3dof);
    tcase_add_test(tc, test_sh4_pose_and_forces_6dof);
    tcase_add_test(tc, test_simple_board);
    tcase_add_loop_test(tc, test_late_samples, 0, 2);
    tcase_add_loop_test(tc, test_velocity_late_sample, 0, 2);
    tcase_add_loop_test(tc, test_faults, 0, (int)(sizeof faults / sizeof faults[0]));
    tcase_add_test(tc, test_counter_jump_and_calibrate);
    tcase_add_test(tc, test_set_minimum_and_close);
    tcase_add_test(tc, test_absent_board);
    tcase_add_test(tc, test_hot_path_with_transport);
    suite_add_tcase(s, tc);
    TCase *to = tcase_create("open");
    tcase_set_timeout(to, 60);
    tcase_add_loop_test(to, test_init_retry, 0, 3);
    tcase_add_test(to, test_emu_short_arc);
    suite_add_tcase(s, to);
    return s;
}

FRTEST_MAIN(spidar_usb_suite)
