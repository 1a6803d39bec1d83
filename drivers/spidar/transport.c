/*
 * SPIDAR USB transport over libusb-1.0.
 *
 * One device thread owns the libusb context and runs its event loop (libusb's event-thread
 * pattern): every usb_period it sends one command packet (OUT) and reads one sample (IN, after
 * a request packet on boards that need one), all asynchronously. It exchanges the latest sample
 * and the latest command with the tick thread through triple buffers (spidar_internal.h) and
 * reports its state through atomics.
 *
 * Faults (transfer error, timeout, stall, short packet, implausible counters) set the link to
 * FAULT and bump the epoch, so the next OUT carries the minimum tension and commands computed
 * before the fault are ignored; recover_samples good samples in a row clear the fault. An
 * unplug (LIBUSB_TRANSFER_NO_DEVICE, LIBUSB_ERROR_NO_DEVICE or a hotplug "left" event) closes
 * the handle; the thread then re-opens the board every reconnect_interval, or at once on a
 * hotplug "arrived" event, and starts again at minimum tension.
 */
#include <errno.h>
#include <libusb.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/base.h"
#include "spidar_internal.h"

int64_t fri_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct fri_spidar_transport {
    fr_spidar_config cfg;
    const fri_spidar_board *board;
    fr_spidar_hooks hooks;
    fri_spidar_link *link;

    libusb_context *ctx;
    libusb_device_handle *handle;
    libusb_hotplug_callback_handle hotplug;
    int hotplug_registered;
    pthread_t thread;
    int thread_started;
    _Atomic int stop;

    /* Device-thread state. */
    struct libusb_transfer *xout, *xreq, *xin;
    int out_busy, req_busy, in_busy;
    int out_is_min;
    unsigned sent_epoch;
    int urgent_out;
    int64_t period_ns, stale_ns, command_ns, reconnect_ns;
    unsigned timeout_ms;
    int64_t next_out_ns, next_in_ns, next_connect_ns;
    int64_t in_submit_ns; /* the sample in flight is taken at the board after this */
    int in_stale_flagged;
    int need_disconnect, need_clear_out, need_clear_in, hotplug_arrived;
    int first_open_done;
    fri_unwrap unwrap[FR_SPIDAR_CHANNELS];
    uint32_t cand[FR_SPIDAR_CHANNELS]; /* the last implausible sample's counters */
    int cand_valid, cand_run;
    int64_t cand_ns;      /* the candidate was taken at the board after this */
    int64_t last_good_ns; /* the last good sample was taken at the board after this */
    int have_ref;
    uint64_t seq;
    int good_run;
    struct {
        uint64_t shape;
        int64_t t_ns;
        unsigned long suppressed;
    } logged[4]; /* recent message shapes, for rate limiting */
    int64_t events_log_ns;

    /* Readable from other threads. */
    _Atomic uint64_t samples, packets_out, min_packets, reconnects;
    _Atomic uint64_t faults[FR_SPIDAR_FAULT_COUNT_];
    _Atomic int last_fault, last_libusb, recal_advised;
    pthread_mutex_t err_mu;
    char last_error[160];

    uint8_t out_buf[FRI_SPIDAR_MAX_PACKET];
    uint8_t req_buf[FRI_SPIDAR_MAX_PACKET];
    uint8_t in_buf[FRI_SPIDAR_MAX_PACKET];
};

static void say(fri_spidar_transport *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(fri_spidar_transport *t, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (t->hooks.log)
        t->hooks.log(t->hooks.user, msg);
    else
        fprintf(stderr, "spidar: %s\n", msg);
}

static int fault_status(int kind)
{
    return kind == FR_SPIDAR_FAULT_UNPLUGGED ? FR_DEVICE_DISCONNECTED : FR_DEVICE_FAULT;
}

/* Record a fault: minimum tension at once, the message kept for fr_spidar_get_info. */
static void fault(fri_spidar_transport *t, int kind, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fault(fri_spidar_transport *t, int kind, int code, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    atomic_fetch_add(&t->faults[kind], 1);
    atomic_store(&t->last_fault, kind);
    atomic_store(&t->last_libusb, code);
    pthread_mutex_lock(&t->err_mu);
    snprintf(t->last_error, sizeof t->last_error, "%s", msg);
    pthread_mutex_unlock(&t->err_mu);

    int want = fault_status(kind);
    int s = atomic_load(&t->link->state);
    if (s == FR_DEVICE_OK || want == FR_DEVICE_DISCONNECTED) atomic_store(&t->link->state, want);
    atomic_fetch_add(&t->link->epoch, 1);
    t->good_run = 0;
    t->urgent_out = 1;

    /* A persistent fault repeats every cycle: log a message once, then at most once a second.
     * Messages that differ only in their numbers count as the same. */
    uint64_t shape = 1469598103934665603ull ^ (uint64_t)kind;
    for (const char *c = msg; *c; c++)
        if ((*c < '0' || *c > '9') && *c != '-' && *c != '.')
            shape = (shape ^ (uint8_t)*c) * 1099511628211ull;
    int64_t now = fri_now_ns();
    int slot = 0;
    for (int i = 0; i < 4; i++) {
        if (t->logged[i].shape == shape) {
            slot = i;
            break;
        }
        if (t->logged[i].t_ns < t->logged[slot].t_ns) slot = i; /* else the oldest */
    }
    if (t->logged[slot].shape == shape && now - t->logged[slot].t_ns <= 1000000000) {
        t->logged[slot].suppressed++;
        return;
    }
    if (t->logged[slot].shape == shape && t->logged[slot].suppressed)
        say(t, "%s (%lu similar messages suppressed)", msg, t->logged[slot].suppressed);
    else
        say(t, "%s", msg);
    t->logged[slot].shape = shape;
    t->logged[slot].t_ns = now;
    t->logged[slot].suppressed = 0;
}

static void lost(fri_spidar_transport *t, int code, const char *what)
{
    if (!t->need_disconnect)
        fault(t, FR_SPIDAR_FAULT_UNPLUGGED, code, "%s: %s: device unplugged", what,
              libusb_error_name(code));
    t->need_disconnect = 1;
}

/* ---------------------------------------------------------------- callbacks */

static void transfer_failed(fri_spidar_transport *t, struct libusb_transfer *x, const char *dir)
{
    int st = (int)x->status;
    switch (x->status) {
    case LIBUSB_TRANSFER_CANCELLED:
        break; /* we asked for it */
    case LIBUSB_TRANSFER_NO_DEVICE:
        lost(t, st, dir);
        break;
    case LIBUSB_TRANSFER_STALL:
        if (x->endpoint & 0x80)
            t->need_clear_in = 1;
        else
            t->need_clear_out = 1;
        fault(t, FR_SPIDAR_FAULT_STALL, st, "%s 0x%02x: %s: endpoint stalled", dir, x->endpoint,
              libusb_error_name(st));
        break;
    case LIBUSB_TRANSFER_TIMED_OUT:
        fault(t, FR_SPIDAR_FAULT_TIMEOUT, st, "%s 0x%02x: %s after %u ms", dir, x->endpoint,
              libusb_error_name(st), t->timeout_ms);
        break;
    default:
        fault(t, FR_SPIDAR_FAULT_TRANSFER, st, "%s 0x%02x: %s", dir, x->endpoint,
              libusb_error_name(st));
        break;
    }
}

static void submit_failed(fri_spidar_transport *t, int r, const char *dir, uint8_t ep)
{
    if (r == LIBUSB_ERROR_NO_DEVICE)
        lost(t, r, dir);
    else
        fault(t, FR_SPIDAR_FAULT_TRANSFER, r, "%s 0x%02x: submit failed: %s", dir, ep,
              libusb_error_name(r));
}

static void LIBUSB_CALL out_done(struct libusb_transfer *x)
{
    fri_spidar_transport *t = x->user_data;
    t->out_busy = 0;
    if (x->status != LIBUSB_TRANSFER_COMPLETED) {
        transfer_failed(t, x, "OUT");
        return;
    }
    if (x->actual_length != x->length) {
        fault(t, FR_SPIDAR_FAULT_TRANSFER, (int)x->status, "OUT 0x%02x: %s but only %d of %d bytes",
              x->endpoint, libusb_error_name((int)x->status), x->actual_length, x->length);
        return;
    }
    atomic_fetch_add(&t->packets_out, 1);
    if (t->out_is_min) atomic_fetch_add(&t->min_packets, 1);
}

/* The largest counter change a string can make in dt_ns (at most 10 ms counted). */
static double plausible_counts(const fri_spidar_transport *t, int64_t dt_ns)
{
    double dt = fmin((double)dt_ns * 1e-9, 0.01) + 2.0 * t->cfg.usb_period;
    return t->cfg.max_string_speed * dt / t->cfg.length_per_count + 2.0;
}

static void accept_sample(fri_spidar_transport *t, const uint8_t *buf, int len)
{
    const fri_spidar_board *b = t->board;
    const fr_spidar_config *c = &t->cfg;
    int64_t now = fri_now_ns();
    /* The board takes a sample between the submission of its request (or of the IN) and the
     * IN's completion, but the host may see the completion much later (a preempted device
     * thread, a loaded host). Two samples are therefore at most `now` minus the earlier one's
     * submission apart: timed by their reception instead, a completion seen late would make
     * the next, prompt sample look like a jump. The sample carries the same time (for the
     * velocity and the stale check, device.c). */
    int64_t taken_after = t->in_submit_ns;
    fri_spidar_raw raw;
    if (len < b->in_min || b->parse(buf, len, &raw) != FR_OK) {
        fault(t, FR_SPIDAR_FAULT_SHORT, LIBUSB_TRANSFER_COMPLETED,
              "IN 0x%02x: short packet: %d of %d bytes (LIBUSB_TRANSFER_COMPLETED)", b->ep_in, len,
              b->in_len);
        return;
    }
    /* Plausibility: no string pays out faster than max_string_speed. The time allowed for is
     * capped, so that a long burst of garbage never becomes plausible. */
    if (t->have_ref) {
        int bad_ch = -1;
        int64_t bad_d = 0;
        double allowed = plausible_counts(t, now - t->last_good_ns);
        for (int i = 0; i < c->n_strings && bad_ch < 0; i++) {
            int ch = c->motor[i].channel;
            int64_t d = fri_unwrap_delta(raw.counter[ch], t->unwrap[ch].last, b->counter_bits);
            if ((double)(d < 0 ? -d : d) > allowed) bad_ch = ch, bad_d = d;
        }
        if (bad_ch >= 0) {
            /* Counters that jumped and then move plausibly from where they landed (a board
             * reset, a long outage while the grip moved) are followed again after
             * recover_samples such samples; random garbage never is. */
            int consistent = t->cand_valid;
            double step = plausible_counts(t, now - t->cand_ns);
            for (int i = 0; i < c->n_strings && consistent; i++) {
                int ch = c->motor[i].channel;
                int64_t d = fri_unwrap_delta(raw.counter[ch], t->cand[ch], b->counter_bits);
                consistent = (double)(d < 0 ? -d : d) <= step;
            }
            t->cand_run = consistent ? t->cand_run + 1 : 0;
            memcpy(t->cand, raw.counter, sizeof t->cand);
            t->cand_valid = 1;
            t->cand_ns = taken_after;
            if (t->cand_run < c->recover_samples) {
                fault(t, FR_SPIDAR_FAULT_GARBAGE, LIBUSB_TRANSFER_COMPLETED,
                      "IN 0x%02x: garbage: channel %d jumped %lld counts in at most %.1f ms, "
                      "at most %.0f plausible (LIBUSB_TRANSFER_COMPLETED)",
                      b->ep_in, bad_ch, (long long)bad_d, (double)(now - t->last_good_ns) * 1e-6,
                      allowed);
                return;
            }
            atomic_store(&t->recal_advised, 1);
            say(t, "counters jumped and stayed consistent: following them again "
                   "(recalibration advised)");
        }
    }
    t->cand_valid = 0;
    t->cand_run = 0;
    fri_spidar_link *L = t->link;
    fri_spidar_sample *s = &L->sample_slot[L->sample_box.back];
    for (int ch = 0; ch < FR_SPIDAR_CHANNELS; ch++) {
        fri_unwrap_apply(&t->unwrap[ch], raw.counter[ch], b->counter_bits, b->negate);
        s->count[ch] = t->unwrap[ch].count;
        s->adc[ch] = raw.adc[ch];
    }
    s->pio = raw.pio & b->button_mask;
    s->status = raw.status;
    s->t_ns = taken_after;
    s->seq = ++t->seq;
    fri_tbuf_publish(&L->sample_box);
    t->have_ref = 1;
    t->last_good_ns = taken_after;
    atomic_fetch_add(&t->samples, 1);
    if (++t->good_run >= c->recover_samples && atomic_load(&L->state) == FR_DEVICE_FAULT) {
        atomic_store(&L->state, FR_DEVICE_OK);
        atomic_fetch_add(&L->epoch, 1);
        say(t, "link recovered after %d good samples", t->good_run);
    }
}

static void LIBUSB_CALL in_done(struct libusb_transfer *x)
{
    fri_spidar_transport *t = x->user_data;
    t->in_busy = 0;
    if (x->status != LIBUSB_TRANSFER_COMPLETED) {
        transfer_failed(t, x, "IN");
        return;
    }
    accept_sample(t, x->buffer, x->actual_length);
}

static int submit_in(fri_spidar_transport *t)
{
    libusb_fill_bulk_transfer(t->xin, t->handle, t->board->ep_in, t->in_buf, t->board->in_len,
                              in_done, t, t->timeout_ms);
    int r = libusb_submit_transfer(t->xin);
    if (r < 0) {
        submit_failed(t, r, "IN", t->board->ep_in);
        return r;
    }
    t->in_busy = 1;
    return 0;
}

static void LIBUSB_CALL req_done(struct libusb_transfer *x)
{
    fri_spidar_transport *t = x->user_data;
    t->req_busy = 0;
    if (x->status != LIBUSB_TRANSFER_COMPLETED) {
        transfer_failed(t, x, "OUT (request)");
        return;
    }
    if (!t->need_disconnect && !atomic_load(&t->stop)) submit_in(t);
}

static int LIBUSB_CALL hotplug_cb(libusb_context *ctx, libusb_device *dev, libusb_hotplug_event ev,
                                  void *user)
{
    (void)ctx;
    fri_spidar_transport *t = user;
    if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED)
        t->hotplug_arrived = 1;
    else if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT && t->handle &&
             libusb_get_device(t->handle) == dev)
        lost(t, LIBUSB_ERROR_NO_DEVICE, "hotplug");
    return 0;
}

/* ---------------------------------------------------------------- device thread */

static void submit_out(fri_spidar_transport *t, int64_t now)
{
    fri_spidar_link *L = t->link;
    fri_tbuf_take(&L->command_box);
    const fri_spidar_command *c = &L->command_slot[L->command_box.front];
    unsigned ep = atomic_load(&L->epoch);
    int use_min = c->minimum || c->epoch != ep || atomic_load(&L->state) != FR_DEVICE_OK ||
                  now - c->t_ns > t->command_ns;
    int len = t->board->build_command(use_min ? L->min_dac : c->dac, t->out_buf);
    libusb_fill_bulk_transfer(t->xout, t->handle, t->board->ep_out, t->out_buf, len, out_done, t,
                              t->timeout_ms);
    int r = libusb_submit_transfer(t->xout);
    if (r < 0) {
        submit_failed(t, r, "OUT", t->board->ep_out);
        return;
    }
    t->out_busy = 1;
    t->out_is_min = use_min;
    t->sent_epoch = ep;
    t->urgent_out = 0;
}

/* The sample's time is read right before its request (or IN) is submitted: the latest time
 * the host knows the board cannot have taken it before. */
static void submit_sample_request(fri_spidar_transport *t)
{
    int len = t->board->build_request(t->req_buf);
    t->in_stale_flagged = 0;
    if (len <= 0) {
        t->in_submit_ns = fri_now_ns();
        submit_in(t);
        return;
    }
    libusb_fill_bulk_transfer(t->xreq, t->handle, t->board->ep_out, t->req_buf, len, req_done, t,
                              t->timeout_ms);
    t->in_submit_ns = fri_now_ns();
    int r = libusb_submit_transfer(t->xreq);
    if (r < 0) {
        submit_failed(t, r, "OUT (request)", t->board->ep_out);
        return;
    }
    t->req_busy = 1;
}

static void pump(fri_spidar_transport *t, int64_t max_ns)
{
    struct timeval tv = {0, (suseconds_t)(max_ns / 1000)};
    int r = libusb_handle_events_timeout_completed(t->ctx, &tv, NULL);
    if (r < 0 && r != LIBUSB_ERROR_INTERRUPTED) {
        int64_t now = fri_now_ns();
        if (now - t->events_log_ns > 1000000000) {
            say(t, "libusb_handle_events: %s", libusb_error_name(r));
            t->events_log_ns = now;
        }
    }
}

/* Cancel what is in flight and wait (at most 200 ms) for the callbacks. */
static void drain(fri_spidar_transport *t)
{
    struct libusb_transfer *xs[3] = {t->xout, t->xreq, t->xin};
    int *busy[3] = {&t->out_busy, &t->req_busy, &t->in_busy};
    for (int i = 0; i < 3; i++)
        if (*busy[i]) {
            int r = libusb_cancel_transfer(xs[i]);
            if (r < 0 && r != LIBUSB_ERROR_NOT_FOUND)
                say(t, "cancel transfer: %s", libusb_error_name(r));
        }
    int64_t end = fri_now_ns() + 200000000;
    while ((t->out_busy || t->req_busy || t->in_busy) && fri_now_ns() < end) pump(t, 2000000);
    if (t->out_busy || t->req_busy || t->in_busy)
        say(t, "transfers still in flight after cancel; closing anyway");
}

static void close_handle(fri_spidar_transport *t)
{
    drain(t);
    int r = libusb_release_interface(t->handle, 0);
    if (r < 0 && r != LIBUSB_ERROR_NO_DEVICE && r != LIBUSB_ERROR_NOT_FOUND)
        say(t, "release interface: %s", libusb_error_name(r));
    libusb_close(t->handle);
    t->handle = NULL;
    t->out_busy = t->req_busy = t->in_busy = 0; /* libusb dropped whatever was left */
}

/* One try of the open's exchange: both pipes reset, then the board's init packets, each
 * transfer allowed timeout_ms. LIBUSB_SUCCESS, or the libusb error with what failed in why. */
static int init_exchange(fri_spidar_transport *t, libusb_device_handle *h, unsigned timeout_ms,
                         char *why, size_t why_size)
{
    const fri_spidar_board *b = t->board;
    const uint8_t eps[2] = {b->ep_out, b->ep_in};
    for (int i = 0; i < 2; i++) {
        int r = libusb_clear_halt(h, eps[i]);
        if (r < 0) {
            snprintf(why, why_size, "clear halt 0x%02x: %s", eps[i], libusb_error_name(r));
            return r;
        }
    }
    for (int k = 0;; k++) {
        int len = b->build_init(k, !t->first_open_done, t->out_buf);
        if (len <= 0) return LIBUSB_SUCCESS;
        int done = 0;
        int r = libusb_bulk_transfer(h, b->ep_out, t->out_buf, len, &done, timeout_ms);
        if (r < 0 || done != len) {
            if (r >= 0) r = LIBUSB_ERROR_IO;
            char after[32] = "";
            if (r == LIBUSB_ERROR_TIMEOUT)
                snprintf(after, sizeof after, " after %u ms", timeout_ms);
            snprintf(why, why_size,
                     "init packet %d (%d bytes to OUT 0x%02x): %s%s, %d of %d bytes confirmed", k,
                     len, b->ep_out, libusb_error_name(r), after, done, len);
            return r;
        }
    }
}

/* Find and open the board; FR_OK, FR_ERR_NOTFOUND, FR_ERR_PERM or FR_ERR_IO. */
static int connect_board(fri_spidar_transport *t, int verbose)
{
    const fri_spidar_board *b = t->board;
    libusb_device **list = NULL;
    ssize_t n = libusb_get_device_list(t->ctx, &list);
    if (n < 0) {
        say(t, "libusb_get_device_list: %s", libusb_error_name((int)n));
        return FR_ERR_IO;
    }
    libusb_device *dev = NULL;
    int seen = 0;
    for (ssize_t i = 0; i < n && !dev; i++) {
        struct libusb_device_descriptor d;
        int r = libusb_get_device_descriptor(list[i], &d);
        if (r < 0) {
            say(t, "libusb_get_device_descriptor: %s", libusb_error_name(r));
            continue;
        }
        if (d.idVendor == b->vid && d.idProduct == b->pid && seen++ == t->cfg.usb_index)
            dev = list[i];
    }
    if (!dev) {
        libusb_free_device_list(list, 1);
        if (verbose)
            say(t, "no %s board %04x:%04x (index %d) found", b->name, b->vid, b->pid,
                t->cfg.usb_index);
        return FR_ERR_NOTFOUND;
    }
    libusb_device_handle *h = NULL;
    int r = libusb_open(dev, &h);
    libusb_free_device_list(list, 1);
    if (r < 0) {
        say(t, "libusb_open %04x:%04x: %s%s", b->vid, b->pid, libusb_error_name(r),
            r == LIBUSB_ERROR_ACCESS ? " (install config/udev/60-fureru-spidar.rules)" : "");
        return r == LIBUSB_ERROR_ACCESS      ? FR_ERR_PERM
               : r == LIBUSB_ERROR_NO_DEVICE ? FR_ERR_NOTFOUND
                                             : FR_ERR_IO;
    }
    r = libusb_set_auto_detach_kernel_driver(h, 1);
    if (r < 0 && r != LIBUSB_ERROR_NOT_SUPPORTED)
        say(t, "auto-detach kernel driver: %s", libusb_error_name(r));
    r = libusb_claim_interface(h, 0);
    if (r < 0) {
        say(t, "claim interface 0: %s%s", libusb_error_name(r),
            r == LIBUSB_ERROR_BUSY ? " (another program has the board)" : "");
        libusb_close(h);
        return r == LIBUSB_ERROR_ACCESS ? FR_ERR_PERM : FR_ERR_IO;
    }
    /* Reset both pipes, then the board's own initialisation: a synchronous exchange on a
     * thread that may not be real-time (the open), which a loaded host can make miss its
     * timeout once. Tried FRI_SPIDAR_INIT_ATTEMPTS times, each time from the pipe reset and
     * with twice the previous timeout; no DAC packet goes out before it succeeds. */
    char why[128] = "";
    unsigned init_ms = 4 * t->timeout_ms;
    int attempt;
    for (attempt = 1; attempt <= FRI_SPIDAR_INIT_ATTEMPTS; attempt++, init_ms *= 2) {
        r = init_exchange(t, h, init_ms, why, sizeof why);
        if (r == LIBUSB_SUCCESS) break;
        if (r == LIBUSB_ERROR_NO_DEVICE || attempt == FRI_SPIDAR_INIT_ATTEMPTS) break;
        say(t, "open %s %04x:%04x: %s (attempt %d of %d); retrying with %u ms", b->name, b->vid,
            b->pid, why, attempt, FRI_SPIDAR_INIT_ATTEMPTS, 2 * init_ms);
    }
    if (r != LIBUSB_SUCCESS) {
        /* The board may still hold a tension from before (another program, a crash): the
         * minimum, best effort, before it is released. */
        int len = b->build_command(t->link->min_dac, t->out_buf), done = 0;
        int rm = libusb_bulk_transfer(h, b->ep_out, t->out_buf, len, &done, init_ms);
        char msg[160];
        snprintf(msg, sizeof msg, "open %s %04x:%04x: initialisation failed after %d attempt%s: %s",
                 b->name, b->vid, b->pid, attempt, attempt == 1 ? "" : "s", why);
        say(t, "%s; minimum-tension packet: %s", msg,
            rm == 0 && done == len ? "sent" : libusb_error_name(rm < 0 ? rm : LIBUSB_ERROR_IO));
        if (rm == 0 && done == len) atomic_fetch_add(&t->min_packets, 1);
        pthread_mutex_lock(&t->err_mu);
        snprintf(t->last_error, sizeof t->last_error, "%s", msg);
        pthread_mutex_unlock(&t->err_mu);
        goto fail;
    }
    if (attempt > 1)
        say(t, "open %s %04x:%04x: initialised at attempt %d", b->name, b->vid, b->pid, attempt);
    t->handle = h;
    t->out_busy = t->req_busy = t->in_busy = 0;
    t->need_disconnect = t->need_clear_in = t->need_clear_out = 0;
    int64_t now = fri_now_ns();
    t->next_out_ns = t->next_in_ns = now;
    t->good_run = 0;
    atomic_store(&t->link->state, t->first_open_done ? FR_DEVICE_FAULT : FR_DEVICE_OK);
    atomic_fetch_add(&t->link->epoch, 1); /* commands from before the (re)connection are void */
    t->urgent_out = 1;
    t->first_open_done = 1;
    return FR_OK;
fail:
    r = libusb_release_interface(h, 0);
    if (r < 0 && r != LIBUSB_ERROR_NO_DEVICE) say(t, "release interface: %s", libusb_error_name(r));
    libusb_close(h);
    return FR_ERR_IO;
}

static void set_priority(fri_spidar_transport *t)
{
    if (t->cfg.thread_priority <= 0) return;
    struct sched_param sp = {.sched_priority = t->cfg.thread_priority};
    int r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (r) say(t, "SCHED_FIFO %d for the device thread: %s", t->cfg.thread_priority, strerror(r));
}

static void run_connected(fri_spidar_transport *t)
{
    int64_t now = fri_now_ns();
    if (t->need_clear_in || t->need_clear_out) {
        /* Only once the endpoint is idle: clearing a halt under a live transfer races it. */
        uint8_t ep = t->need_clear_in ? t->board->ep_in : t->board->ep_out;
        int idle = t->need_clear_in ? !(t->in_busy || t->req_busy) : !t->out_busy;
        if (idle) {
            int r = libusb_clear_halt(t->handle, ep);
            if (r == LIBUSB_ERROR_NO_DEVICE)
                lost(t, r, "clear halt");
            else if (r < 0)
                fault(t, FR_SPIDAR_FAULT_STALL, r, "clear halt 0x%02x: %s", ep,
                      libusb_error_name(r));
            if (t->need_clear_in)
                t->need_clear_in = 0;
            else
                t->need_clear_out = 0;
        }
    }
    if (t->need_disconnect) return;
    if ((t->in_busy || t->req_busy) && !t->in_stale_flagged &&
        now - t->in_submit_ns > t->stale_ns) {
        t->in_stale_flagged = 1;
        fault(t, FR_SPIDAR_FAULT_TIMEOUT, LIBUSB_ERROR_TIMEOUT,
              "IN 0x%02x: %s: no sample for %.1f ms", t->board->ep_in,
              libusb_error_name(LIBUSB_ERROR_TIMEOUT), (double)(now - t->in_submit_ns) * 1e-6);
    }
    if (atomic_load(&t->link->epoch) != t->sent_epoch) t->urgent_out = 1;
    if (!t->out_busy && !t->need_clear_out && (now >= t->next_out_ns || t->urgent_out)) {
        submit_out(t, now);
        t->next_out_ns += t->period_ns;
        if (t->next_out_ns <= now) t->next_out_ns = now + t->period_ns; /* no bursts */
    }
    if (!t->in_busy && !t->req_busy && !t->need_clear_in && !t->need_disconnect &&
        now >= t->next_in_ns) {
        submit_sample_request(t);
        t->next_in_ns += t->period_ns;
        if (t->next_in_ns <= now) t->next_in_ns = now + t->period_ns;
    }
    int64_t next = t->next_out_ns < t->next_in_ns ? t->next_out_ns : t->next_in_ns;
    int64_t wait = next - fri_now_ns();
    if (wait < 0) wait = 0;
    if (wait > t->period_ns) wait = t->period_ns;
    pump(t, wait);
}

static void send_minimum_and_close(fri_spidar_transport *t)
{
    drain(t);
    int len = t->board->build_command(t->link->min_dac, t->out_buf);
    int done = 0;
    int r = libusb_bulk_transfer(t->handle, t->board->ep_out, t->out_buf, len, &done,
                                 4 * t->timeout_ms);
    if (r < 0)
        say(t, "final minimum-tension packet: %s", libusb_error_name(r));
    else
        atomic_fetch_add(&t->min_packets, 1);
    close_handle(t);
}

static void *device_thread(void *arg)
{
    fri_spidar_transport *t = arg;
    set_priority(t);
    while (!atomic_load(&t->stop)) {
        if (t->handle && t->need_disconnect) {
            close_handle(t);
            atomic_store(&t->link->state, FR_DEVICE_DISCONNECTED);
            atomic_fetch_add(&t->link->epoch, 1);
            t->next_connect_ns = fri_now_ns() + t->reconnect_ns;
            say(t, "board closed; reconnecting every %.0f ms", (double)t->reconnect_ns * 1e-6);
            continue;
        }
        if (t->handle) {
            run_connected(t);
            continue;
        }
        int64_t now = fri_now_ns();
        if (t->hotplug_arrived || now >= t->next_connect_ns) {
            t->hotplug_arrived = 0;
            t->next_connect_ns = now + t->reconnect_ns;
            if (connect_board(t, 0) == FR_OK) {
                atomic_fetch_add(&t->reconnects, 1);
                atomic_store(&t->recal_advised, 1);
                say(t, "board reconnected; starting at minimum tension");
                continue;
            }
        }
        int64_t wait = t->next_connect_ns - now;
        if (wait > 10000000) wait = 10000000;
        if (wait < 0) wait = 0;
        pump(t, wait); /* delivers hotplug events */
    }
    if (t->handle) send_minimum_and_close(t);
    return NULL;
}

/* ---------------------------------------------------------------- open / close / info */

static void destroy(fri_spidar_transport *t)
{
    if (t->hotplug_registered) libusb_hotplug_deregister_callback(t->ctx, t->hotplug);
    if (t->xout) libusb_free_transfer(t->xout);
    if (t->xreq) libusb_free_transfer(t->xreq);
    if (t->xin) libusb_free_transfer(t->xin);
    if (t->ctx) libusb_exit(t->ctx);
    pthread_mutex_destroy(&t->err_mu);
    free(t);
}

int fri_spidar_transport_open(const fr_spidar_config *cfg, const fr_spidar_hooks *hooks,
                              fri_spidar_link *link, fri_spidar_transport **out)
{
    *out = NULL;
    const fri_spidar_board *b = fri_spidar_board_get(cfg->board);
    if (!b) return FR_ERR_INVAL;
    fri_spidar_transport *t = calloc(1, sizeof *t);
    if (!t) return FR_ERR_NOMEM;
    t->cfg = *cfg;
    t->board = b;
    if (hooks) t->hooks = *hooks;
    t->link = link;
    pthread_mutex_init(&t->err_mu, NULL);
    t->period_ns = (int64_t)(cfg->usb_period * 1e9);
    t->stale_ns = (int64_t)(cfg->stale_timeout * 1e9);
    t->command_ns = (int64_t)(cfg->command_timeout * 1e9);
    t->reconnect_ns = (int64_t)(cfg->reconnect_interval * 1e9);
    t->timeout_ms = (unsigned)(cfg->io_timeout * 1000.0 + 0.999);

    int r = libusb_init(&t->ctx);
    if (r < 0) {
        say(t, "libusb_init: %s", libusb_error_name(r));
        t->ctx = NULL;
        destroy(t);
        return FR_ERR_IO;
    }
    t->xout = libusb_alloc_transfer(0);
    t->xreq = libusb_alloc_transfer(0);
    t->xin = libusb_alloc_transfer(0);
    if (!t->xout || !t->xreq || !t->xin) {
        destroy(t);
        return FR_ERR_NOMEM;
    }
    if (libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG)) {
        r = libusb_hotplug_register_callback(
            t->ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED | LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, 0,
            b->vid, b->pid, LIBUSB_HOTPLUG_MATCH_ANY, hotplug_cb, t, &t->hotplug);
        if (r < 0)
            say(t, "hotplug registration: %s (polling instead)", libusb_error_name(r));
        else
            t->hotplug_registered = 1;
    }
    r = connect_board(t, 1);
    if (r != FR_OK) {
        if (cfg->require_device || r == FR_ERR_PERM) {
            destroy(t);
            return r;
        }
        atomic_store(&link->state, FR_DEVICE_DISCONNECTED);
        t->next_connect_ns = fri_now_ns() + t->reconnect_ns;
    }
    r = pthread_create(&t->thread, NULL, device_thread, t);
    if (r) {
        say(t, "pthread_create: %s", strerror(r));
        if (t->handle) close_handle(t);
        destroy(t);
        return FR_ERR_IO;
    }
    t->thread_started = 1;
    *out = t;
    return FR_OK;
}

void fri_spidar_transport_close(fri_spidar_transport *t)
{
    if (!t) return;
    atomic_store(&t->stop, 1);
    if (t->thread_started) {
        int r = pthread_join(t->thread, NULL);
        if (r) say(t, "pthread_join: %s", strerror(r));
    }
    destroy(t);
}

void fri_spidar_transport_info(fri_spidar_transport *t, fr_spidar_info *o)
{
    o->link = atomic_load(&t->link->state);
    o->samples = atomic_load(&t->samples);
    o->packets_out = atomic_load(&t->packets_out);
    o->minimum_packets = atomic_load(&t->min_packets);
    for (int k = 0; k < FR_SPIDAR_FAULT_COUNT_; k++) o->faults[k] = atomic_load(&t->faults[k]);
    o->reconnects = atomic_load(&t->reconnects);
    o->last_fault = atomic_load(&t->last_fault);
    o->last_libusb = atomic_load(&t->last_libusb);
    o->recalibration_advised = atomic_load(&t->recal_advised);
    pthread_mutex_lock(&t->err_mu);
    snprintf(o->last_error, sizeof o->last_error, "%s", t->last_error);
    pthread_mutex_unlock(&t->err_mu);
}
