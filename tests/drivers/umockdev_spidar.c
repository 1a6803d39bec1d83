/* The emulated SPIDAR board: see umockdev_spidar.h. */
#include "umockdev_spidar.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* <sys/ioctl.h> before <linux/usbdevice_fs.h> (tooling.md) */
#include <sys/ioctl.h>

#include <linux/usbdevice_fs.h>
#include <umockdev.h>

#define SYSPATH  "/devices/pci0000:00/0000:00:14.0/usb1/1-1"
#define DEVNODE  "/dev/bus/usb/001/002"
#define MAX_OUTS 400000

typedef struct urb_entry {
    UMockdevIoctlData *data; /* the resolved struct usbdevfs_urb (our reference) */
    int in;                  /* IN endpoint */
    int64_t due_ns;          /* not reaped before this (INT64_MAX: never, the answer is lost) */
    int64_t counts[8];       /* Sh4 IN: the sample, taken at the submission */
} urb_entry;

struct fru_emu {
    UMockdevTestbed *tb;
    UMockdevIoctlBase *handler;
    int board; /* FR_SPIDAR_BOARD_SH4 or _SIMPLE */
    fr_spidar_config geo;
    pthread_mutex_t mu;
    fr_pose pose;             /* where a move started (or the grip rests) */
    fr_pose target;           /* where it ends */
    int64_t move_t0, move_ns; /* when it started, how long it takes */
    int rt_done;
    uint32_t pio;
    double home_len[8];
    int64_t base[8];
    fru_mode mode;
    int unplugged, added;
    int64_t fault_t;
    urb_entry flying[64];
    int n_flying;
    UMockdevIoctlData *discarded[64];
    int n_discarded;
    fru_out *outs;
    size_t n_outs;
    fru_stats st;
    uint32_t latched[8];
    uint64_t rng;
    int64_t late_q[4]; /* fru_emu_late_in(): the next answers' delays, in order */
    int n_late;
    int64_t last_done_ns; /* when the last ioctl was answered */
    int hold_init_n;      /* fru_emu_hold_init() */
    int64_t hold_init_ns;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* String length from the geometry, written out here rather than taken from the driver. */
static double string_length(const fr_spidar_config *g, int i, fr_pose p)
{
    fr_quat q = g->n_strings == 4 ? g->home.q : p.q;
    fr_vec3 a = fr_v3_add(fr_q_rotate(q, g->motor[i].attach), p.p);
    return fr_v3_dist(g->motor[i].position, a);
}

/* The grip now: on its way from pose to target, in real time (like a hand, however late the
 * test thread runs). The orientation turns the short way round: q and −q are one rotation, so
 * the relative quaternion is taken with w ≥ 0 (an angle of at most π; the path then ends on
 * −target, the same orientation). */
static fr_pose grip_now(fru_emu *e)
{
    if (e->move_ns <= 0) return e->target;
    double a = (double)(now_ns() - e->move_t0) / (double)e->move_ns;
    if (a >= 1.0) return e->target;
    if (a < 0.0) a = 0.0;
    fr_quat rel = fr_q_mul(e->target.q, fr_q_conj(e->pose.q));
    if (rel.w < 0) rel = fr_q(-rel.w, -rel.x, -rel.y, -rel.z);
    fr_vec3 rv = fr_q_log(rel);
    return (fr_pose){fr_v3_lerp(e->pose.p, e->target.p, a),
                     fr_q_mul(fr_q_exp(fr_v3_scale(rv, a)), e->pose.q)};
}

/* Encoder counts per channel as the host should see them after unwrapping (and negation). */
static void host_counts(fru_emu *e, int64_t out[8])
{
    memset(out, 0, sizeof(int64_t) * 8);
    fr_pose g = grip_now(e);
    for (int i = 0; i < e->geo.n_strings; i++) {
        double d = (string_length(&e->geo, i, g) - e->home_len[i]) / e->geo.length_per_count;
        out[e->geo.motor[i].channel] =
            e->base[i] + (int64_t)nearbyint(e->geo.motor[i].count_sign * d);
    }
}

/* c: the Sh4's counts (taken when its IN was submitted); the Simple board sends its latch. */
static void fill_sample(fru_emu *e, uint8_t *b, int len, const int64_t c[8])
{
    memset(b, 0, (size_t)len);
    if (e->board == FR_SPIDAR_BOARD_SH4) {
        for (int ch = 0; ch < 8; ch++) {
            uint16_t raw = (uint16_t)(-c[ch]); /* the host negates the 16-bit counter */
            b[16 + 2 * ch] = (uint8_t)raw, b[17 + 2 * ch] = (uint8_t)(raw >> 8);
            uint16_t ad = (uint16_t)(100 * ch);
            b[32 + 2 * ch] = (uint8_t)ad, b[33 + 2 * ch] = (uint8_t)(ad >> 8);
        }
        b[48] = (uint8_t)e->pio, b[49] = (uint8_t)(e->pio >> 8);
    } else {
        for (int ch = 0; ch < 8; ch++) {
            uint32_t raw = e->latched[ch];
            b[3 * ch] = (uint8_t)raw, b[3 * ch + 1] = (uint8_t)(raw >> 8),
                  b[3 * ch + 2] = (uint8_t)(raw >> 16);
        }
        b[24] = (uint8_t)e->pio;
    }
}

/* An initialisation packet (the Simple board's A2 commands; the Sh4 has none). */
static int is_init(const fru_emu *e, const uint8_t *b, int len)
{
    return e->board == FR_SPIDAR_BOARD_SIMPLE && len >= 3 && b[0] == 0xA2;
}

/* A sample is taken now. The host stamped it before submitting its request, after the answer
 * to its previous ioctl (one device thread makes them all, one at a time): the stamp is no
 * earlier than that answer, which bounds how long after its stamp the sample was taken. */
static void note_sample(fru_emu *e)
{
    int64_t d = now_ns() - e->last_done_ns;
    if (e->last_done_ns && d > e->st.sample_latency_ns) e->st.sample_latency_ns = d;
}

static void handle_out(fru_emu *e, const uint8_t *b, int len)
{
    int16_t dac[8];
    int off = -1;
    if (e->board == FR_SPIDAR_BOARD_SH4 && len >= 18 && b[0] == 0x01 && b[1] == 0x0E)
        off = 2;
    else if (e->board == FR_SPIDAR_BOARD_SIMPLE && len >= 17 && b[0] == 0x52)
        off = 1;
    if (off >= 0) {
        for (int ch = 0; ch < 8; ch++)
            dac[ch] = (int16_t)(uint16_t)(b[off + 2 * ch] | (b[off + 2 * ch + 1] << 8));
        if (e->n_outs < MAX_OUTS) {
            e->outs[e->n_outs].t_ns = now_ns();
            memcpy(e->outs[e->n_outs].dac, dac, sizeof dac);
            e->n_outs++;
        }
        return;
    }
    if (e->board == FR_SPIDAR_BOARD_SIMPLE) {
        if (len >= 1 && b[0] == 0x51) {
            int64_t c[8];
            host_counts(e, c);
            for (int ch = 0; ch < 8; ch++) e->latched[ch] = (uint32_t)c[ch] & 0xFFFFFFu;
            e->st.latches++;
            note_sample(e);
        } else if (len >= 3 && b[0] == 0xA2 && b[1] == 0x1A && b[2] == 0xFF) {
            e->st.init_direction++;
        } else if (len >= 3 && b[0] == 0xA2 && b[1] == 0x19 && b[2] == 0xFF) {
            e->st.init_clear++;
        }
    }
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void complete_reap(UMockdevIoctlClient *c, UMockdevIoctlData *arg, UMockdevIoctlData *urb)
{
    UMockdevIoctlData *p = umockdev_ioctl_data_resolve(arg, 0, sizeof(gpointer), NULL);
    umockdev_ioctl_data_set_ptr(p, 0, urb);
    umockdev_ioctl_client_complete(c, 0, 0);
    g_object_unref(p);
    umockdev_ioctl_data_unref(urb);
}

/* The first ENODEV answer is when an unplug becomes visible to the host. */
static int nodev(fru_emu *e)
{
    if (!e->fault_t) e->fault_t = now_ns();
    return ENODEV;
}

static gboolean on_ioctl(UMockdevIoctlBase *h, UMockdevIoctlClient *c, gpointer user)
{
    (void)h;
    fru_emu *e = user;
    if (!e->rt_done) {
        /* The board is hardware: it answers whatever else the host is busy with. (Raise
         * umockdev's handler thread like a device thread; without permission, carry on.) */
        struct sched_param sp = {.sched_priority = 45};
        pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
        e->rt_done = 1;
    }
    int64_t t_in = now_ns();
    gulong req = umockdev_ioctl_client_get_request(c);
    UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(c);
    gboolean handled = TRUE;
    UMockdevIoctlData *late = NULL; /* an IN answer to complete only after late_ns */
    int64_t late_ns = 0;
    pthread_mutex_lock(&e->mu);
    switch (req) {
    case USBDEVFS_GET_CAPABILITIES: {
        UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(guint32), NULL);
        *(guint32 *)d->data = USBDEVFS_CAP_BULK_SCATTER_GATHER | USBDEVFS_CAP_BULK_CONTINUATION |
                              USBDEVFS_CAP_NO_PACKET_SIZE_LIM | USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
        umockdev_ioctl_client_complete(c, e->unplugged ? -1 : 0, e->unplugged ? nodev(e) : 0);
        g_object_unref(d);
        break;
    }
    case USBDEVFS_CLEAR_HALT: {
        UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(unsigned int), NULL);
        unsigned ep = *(unsigned int *)d->data;
        g_object_unref(d);
        if (e->unplugged) {
            umockdev_ioctl_client_complete(c, -1, nodev(e));
            break;
        }
        if (ep & 0x80)
            e->st.clear_halt_in++;
        else
            e->st.clear_halt_out++;
        umockdev_ioctl_client_complete(c, 0, 0);
        break;
    }
    case USBDEVFS_CLAIMINTERFACE:
    case USBDEVFS_RELEASEINTERFACE:
    case USBDEVFS_DISCONNECT_CLAIM:
    case USBDEVFS_RESETEP:
    case USBDEVFS_RESET:
        umockdev_ioctl_client_complete(c, e->unplugged ? -1 : 0, e->unplugged ? nodev(e) : 0);
        break;
    case USBDEVFS_GETDRIVER:
    case USBDEVFS_IOCTL:
        umockdev_ioctl_client_complete(c, -1, e->unplugged ? nodev(e) : ENODATA);
        break;
    case USBDEVFS_SUBMITURB: {
        if (e->unplugged || e->n_flying == 64) {
            e->st.submits_refused++;
            umockdev_ioctl_client_complete(c, -1, e->unplugged ? nodev(e) : ENOMEM);
            break;
        }
        UMockdevIoctlData *u =
            umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_urb), NULL);
        struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u->data;
        int in = (urb->endpoint & 0x80) != 0;
        /* The handler runs in the client's process: the buffer pointer is valid here, and
         * reading it directly saves umockdev a round trip per transfer. */
        int64_t due = 0;
        if (!in && e->hold_init_n > 0 && is_init(e, urb->buffer, urb->buffer_length)) {
            e->hold_init_n--;
            e->st.init_held++;
            due = e->hold_init_ns < 0 ? INT64_MAX : now_ns() + e->hold_init_ns;
        }
        if (!in && due != INT64_MAX) handle_out(e, urb->buffer, urb->buffer_length);
        urb_entry en = {u, in, due, {0}};
        /* The Sh4 answers the host controller's first poll after the submission, however late
         * the host then reaps: the sample is taken now. */
        if (in && e->board == FR_SPIDAR_BOARD_SH4) {
            host_counts(e, en.counts);
            note_sample(e);
        }
        e->flying[e->n_flying++] = en;
        umockdev_ioctl_client_complete(c, 0, 0);
        break;
    }
    case USBDEVFS_REAPURB:
    case USBDEVFS_REAPURBNDELAY: {
        if (e->n_discarded) {
            UMockdevIoctlData *u = e->discarded[0];
            memmove(e->discarded, e->discarded + 1,
                    sizeof(e->discarded[0]) * (size_t)--e->n_discarded);
            struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u->data;
            urb->status = e->unplugged ? -nodev(e) : -ENOENT;
            urb->actual_length = 0;
            complete_reap(c, arg, u);
            break;
        }
        int pick = -1;
        int64_t t_reap = now_ns();
        for (int i = 0; i < e->n_flying && pick < 0; i++) {
            if (e->flying[i].due_ns > t_reap && !e->unplugged) continue; /* held or lost */
            if (e->flying[i].in && !e->unplugged && e->mode == FRU_TIMEOUT) {
                if (!e->fault_t) e->fault_t = now_ns();
                continue; /* never answered */
            }
            pick = i;
        }
        if (pick < 0) {
            umockdev_ioctl_client_complete(c, -1, e->unplugged ? nodev(e) : EAGAIN);
            break;
        }
        urb_entry en = e->flying[pick];
        memmove(e->flying + pick, e->flying + pick + 1,
                sizeof(e->flying[0]) * (size_t)(e->n_flying - pick - 1));
        e->n_flying--;
        struct usbdevfs_urb *urb = (struct usbdevfs_urb *)en.data->data;
        if (e->unplugged) {
            urb->status = -nodev(e);
            urb->actual_length = 0;
        } else if (!en.in) {
            urb->status = 0;
            urb->actual_length = urb->buffer_length;
        } else if (e->mode == FRU_STALL) {
            if (!e->fault_t) e->fault_t = now_ns();
            urb->status = -EPIPE;
            urb->actual_length = 0;
        } else {
            uint8_t *buf = urb->buffer; /* same process, see SUBMITURB */
            int len = urb->buffer_length;
            fill_sample(e, buf, len, en.counts);
            if (e->mode == FRU_SHORT) {
                if (!e->fault_t) e->fault_t = now_ns();
                len = 10;
            } else if (e->mode == FRU_GARBAGE) {
                if (!e->fault_t) e->fault_t = now_ns();
                for (int k = 0; k < len; k++) buf[k] = (uint8_t)xorshift(&e->rng);
            } else {
                e->st.in_answered++;
            }
            urb->status = 0;
            urb->actual_length = len;
            if (e->n_late > 0) { /* the sample is taken, the host sees it later */
                late = en.data;
                late_ns = e->late_q[0];
                memmove(e->late_q, e->late_q + 1, sizeof(e->late_q[0]) * (size_t)--e->n_late);
                e->st.in_late++;
                break;
            }
            complete_reap(c, arg, en.data);
            break;
        }
        complete_reap(c, arg, en.data);
        break;
    }
    case USBDEVFS_DISCARDURB: {
        gulong addr = (gulong)(*(void **)arg->data);
        int found = 0;
        for (int i = 0; i < e->n_flying; i++)
            if (e->flying[i].data->client_addr == addr) {
                e->discarded[e->n_discarded++] = e->flying[i].data;
                memmove(e->flying + i, e->flying + i + 1,
                        sizeof(e->flying[0]) * (size_t)(e->n_flying - i - 1));
                e->n_flying--;
                found = 1;
                break;
            }
        umockdev_ioctl_client_complete(c, found ? 0 : -1, found ? 0 : EINVAL);
        break;
    }
    default:
        handled = FALSE;
        break;
    }
    if (!late) e->last_done_ns = t_in; /* the answer goes out after this */
    pthread_mutex_unlock(&e->mu);
    if (late) {
        struct timespec ts = {(time_t)(late_ns / 1000000000), (long)(late_ns % 1000000000)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        int64_t t_out = now_ns();
        complete_reap(c, arg, late);
        pthread_mutex_lock(&e->mu);
        e->last_done_ns = t_out;
        pthread_mutex_unlock(&e->mu);
    }
    return handled;
}

static void add_device(fru_emu *e)
{
    int sh4 = e->board == FR_SPIDAR_BOARD_SH4;
    char desc[2048];
    /* device descriptor: USB 2.0, vendor class, EP0 64 bytes, VID 0cec, PID 0205/0203; one
     * configuration with one interface and two bulk endpoints of 512 bytes: OUT 0x02, IN 0x86 */
    snprintf(desc, sizeof desc,
             "P: " SYSPATH "\n"
             "N: bus/usb/001/002\n"
             "E: SUBSYSTEM=usb\nE: DEVTYPE=usb_device\nE: DRIVER=usb\n"
             "E: BUSNUM=001\nE: DEVNUM=002\nE: DEVNAME=" DEVNODE "\n"
             "A: busnum=1\\n\nA: devnum=2\\n\nA: idVendor=0cec\\n\nA: idProduct=%s\\n\n"
             "A: speed=480\\n\nA: bConfigurationValue=1\\n\n"
             "H: descriptors=12010002ff000040ec0c%s0001000000010902200001010080320904000002ffffff00"
             "0705020200020007058602000200\n",
             sh4 ? "0205" : "0203", sh4 ? "0502" : "0302");
    GError *err = NULL;
    if (!umockdev_testbed_add_from_string(e->tb, desc, &err)) {
        fprintf(stderr, "umockdev_testbed_add_from_string: %s\n", err ? err->message : "?");
        g_clear_error(&err);
    }
    e->added = 1;
}

fru_emu *fru_emu_new(int board, const fr_spidar_config *geo, int present)
{
    fru_emu *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->outs = calloc(MAX_OUTS, sizeof(fru_out));
    e->board = board;
    e->geo = *geo;
    e->pose = e->target = geo->home;
    e->rng = 0x9E3779B97F4A7C15ull;
    pthread_mutex_init(&e->mu, NULL);
    for (int i = 0; i < geo->n_strings; i++) {
        e->home_len[i] = string_length(geo, i, geo->home);
        /* start the counters near the wrap so that motion crosses it */
        e->base[i] = board == FR_SPIDAR_BOARD_SH4 ? -(65530 - 7 * i) : 8388600 - 3 * i;
    }
    e->tb = umockdev_testbed_new();
    if (!e->tb || !umockdev_in_mock_environment()) {
        fprintf(stderr, "not running under umockdev-wrapper\n");
        fru_emu_free(e);
        return NULL;
    }
    e->handler = umockdev_ioctl_base_new();
    g_signal_connect(e->handler, "handle-ioctl", G_CALLBACK(on_ioctl), e);
    GError *err = NULL;
    if (!umockdev_testbed_attach_ioctl(e->tb, DEVNODE, e->handler, &err)) {
        fprintf(stderr, "umockdev_testbed_attach_ioctl: %s\n", err ? err->message : "?");
        g_clear_error(&err);
        fru_emu_free(e);
        return NULL;
    }
    if (present) add_device(e);
    return e;
}

void fru_emu_free(fru_emu *e)
{
    if (!e) return;
    if (e->tb && e->handler) {
        GError *err = NULL;
        if (!umockdev_testbed_detach_ioctl(e->tb, DEVNODE, &err)) g_clear_error(&err);
    }
    for (int i = 0; i < e->n_flying; i++) umockdev_ioctl_data_unref(e->flying[i].data);
    for (int i = 0; i < e->n_discarded; i++) umockdev_ioctl_data_unref(e->discarded[i]);
    if (e->handler) g_object_unref(e->handler);
    if (e->tb) g_object_unref(e->tb);
    pthread_mutex_destroy(&e->mu);
    free(e->outs);
    free(e);
}

void fru_emu_set_pose(fru_emu *e, fr_pose p)
{
    pthread_mutex_lock(&e->mu);
    e->pose = e->target = p;
    e->move_ns = 0;
    pthread_mutex_unlock(&e->mu);
}

double fru_emu_move(fru_emu *e, fr_pose to, double speed, double rot_speed)
{
    pthread_mutex_lock(&e->mu);
    e->pose = grip_now(e);
    e->target = to;
    double t =
        fmax(fr_v3_dist(e->pose.p, to.p) / speed, fr_q_angle_between(e->pose.q, to.q) / rot_speed);
    e->move_t0 = now_ns();
    e->move_ns = (int64_t)(t * 1e9);
    pthread_mutex_unlock(&e->mu);
    return t;
}

void fru_emu_set_pio(fru_emu *e, uint32_t pio)
{
    pthread_mutex_lock(&e->mu);
    e->pio = pio;
    pthread_mutex_unlock(&e->mu);
}

void fru_emu_late_in(fru_emu *e, int64_t ns)
{
    pthread_mutex_lock(&e->mu);
    if (ns > 0 && e->n_late < 4) e->late_q[e->n_late++] = ns;
    pthread_mutex_unlock(&e->mu);
}

void fru_emu_hold_init(fru_emu *e, int count, int64_t ns)
{
    pthread_mutex_lock(&e->mu);
    e->hold_init_n = count;
    e->hold_init_ns = ns;
    pthread_mutex_unlock(&e->mu);
}

fr_pose fru_emu_grip(fru_emu *e)
{
    pthread_mutex_lock(&e->mu);
    fr_pose g = grip_now(e);
    pthread_mutex_unlock(&e->mu);
    return g;
}

void fru_emu_reset_sample_latency(fru_emu *e)
{
    pthread_mutex_lock(&e->mu);
    e->st.sample_latency_ns = 0;
    pthread_mutex_unlock(&e->mu);
}

void fru_emu_set_mode(fru_emu *e, fru_mode m)
{
    pthread_mutex_lock(&e->mu);
    e->mode = m;
    e->fault_t = 0;
    pthread_mutex_unlock(&e->mu);
}

int64_t fru_emu_fault_time(fru_emu *e)
{
    pthread_mutex_lock(&e->mu);
    int64_t t = e->fault_t;
    pthread_mutex_unlock(&e->mu);
    return t;
}

void fru_emu_unplug(fru_emu *e)
{
    pthread_mutex_lock(&e->mu);
    e->unplugged = 1;
    e->fault_t = 0;
    pthread_mutex_unlock(&e->mu);
    umockdev_testbed_uevent(e->tb, "/sys" SYSPATH, "remove");
}

void fru_emu_replug(fru_emu *e)
{
    pthread_mutex_lock(&e->mu);
    e->unplugged = 0;
    e->mode = FRU_NORMAL;
    e->fault_t = 0;
    int added = e->added;
    pthread_mutex_unlock(&e->mu);
    if (added)
        umockdev_testbed_uevent(e->tb, "/sys" SYSPATH, "add");
    else
        add_device(e);
}

void fru_emu_jump_counters(fru_emu *e, const int64_t jump[8])
{
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->geo.n_strings; i++) e->base[i] += jump[i];
    pthread_mutex_unlock(&e->mu);
}

size_t fru_emu_outs(fru_emu *e, size_t from, fru_out *out, size_t max)
{
    pthread_mutex_lock(&e->mu);
    size_t n = e->n_outs;
    for (size_t i = 0; i < max && from + i < n; i++) out[i] = e->outs[from + i];
    pthread_mutex_unlock(&e->mu);
    return n;
}

fru_stats fru_emu_get_stats(fru_emu *e)
{
    pthread_mutex_lock(&e->mu);
    fru_stats s = e->st;
    pthread_mutex_unlock(&e->mu);
    return s;
}

void fru_emu_min_dac(fru_emu *e, int16_t dac[8])
{
    memset(dac, 0, sizeof(int16_t) * 8);
    const fr_spidar_config *g = &e->geo;
    for (int i = 0; i < g->n_strings; i++)
        dac[g->motor[i].channel] = (int16_t)nearbyint(g->motor[i].volt_sign * g->tension_min *
                                                      g->volts_per_newton * g->dac_per_volt);
}
