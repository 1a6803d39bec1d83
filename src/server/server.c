/* The tick loop, the logger thread and the run summary. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "fureru/coupling.h"
#include "fureru/joints.h"
#include "fureru/spidar.h"
#include "fureru/virtual.h"
#include "audit.h"
#include "cpus.h"
#include "guard.h"
#include "log.h"
#include "meta.h"
#include "progress.h"
#include "server_internal.h"
#include "snapshot.h"
#include "timing.h"

static const char *const body_cols[] = {"px", "py", "pz", "qw", "qx", "qy", "qz",
                                        "vx", "vy", "vz", "wx", "wy", "wz"};
enum { BODY_COLS = 13 };

struct fr_server {
    fr_scene *scene;
    fr_world *world;
    fr_server_opts opts;
    uint64_t total_ticks;

    /* logging (log.c) and the sidecar next to the log (meta.c) */
    fri_log log;
    int ncols;
    char **col_names;
    int nlog_bodies;
    fr_body_id *log_bodies;
    int nlog_joints;
    struct fri_log_joint {
        int robot, qi, vi; /* 1-DOF joint: index in q and in qd */
    } * log_joints;

    /* timing, owned by the tick thread until joined */
    fri_hist *lat, *step;
    uint64_t overruns, ticks;
    int max_contacts; /* most contacts in one tick */
    double max_pen;   /* deepest penetration seen, m */
    double wall;
    double tick_cpu_time; /* s of CPU time the tick thread used */
    int tick_error;
    _Atomic uint64_t progress; /* ticks done, for the progress line (relaxed) */

    atomic_bool stop;
    bool sched_fifo, mem_locked;
    int dma_fd;  /* /dev/cpu_dma_latency, held open during a real-time run */
    bool pinned; /* the tick thread has a CPU to itself */
    int tick_cpu;
    _Atomic pid_t tick_tid; /* set once the tick thread has pinned itself (0 before) */
    char others_cpus[64];   /* where our other threads run, as a CPU list ("0", "0-2") */
    fri_cpus_moved moved;   /* threads taken off the tick's CPU during the run (cpus.h) */
    char sched_note[160];

    /* haptic device and its coupling to the proxy body */
    fr_device *dev;
    fr_safety safety;
    int coupling; /* world spring index of the coupling, −1 = none */
    fr_body_id proxy;
    double proxy_mass; /* kg */
    fr_coupling cp;    /* workspace mapping, implicit drive, user force */
    fr_vec3 drive_tv;  /* m/s, world: the coupling anchor's velocity this tick (damper limited) */
    fr_passivity po;   /* time-domain passivity observer/controller on the device port */
    bool passivity;
    fr_vec3 last_dev_pos; /* device frame, for the passivity observer's Δx */
    bool have_last_dev;
    fr_device_state dev_state;
    fr_device_cmd dev_cmd;    /* what the world asks for */
    fr_device_cmd safety_out; /* what the device was sent */
    uint64_t device_faults;
    atomic_bool running;

    /* the energy audit (audit.c) and the last tick's rise of energy − work, J */
    fri_audit audit;
    /* J: the largest one-tick rise of energy less work since the last logged row (--log-every),
     * −∞ while no tick has been taken since */
    double energy_gain;

    /* the divergence guard (guard.c) and what it did */
    fri_guard guard;
    bool haptic_reset;   /* this tick: the proxy was put back, the user gets no force */
    bool interrupted;    /* stopped by fr_server_request_stop (a signal) before the end */
    double stopped_at;   /* simulated time of the stop, s */
    bool device_stopped; /* the device was put at minimum tension by a fault or a stop */
    /* snapshots for viewers (src/snapshot): the constant model and the buffer, published every
     * tick; the last ticks' timing travels with them */
    fri_snap_model model;
    fri_tbuf snaps;
    bool snap_checksum; /* the tick side writes a checksum into every snapshot (tests) */
    float recent_lat[FRI_SNAP_RECENT], recent_step[FRI_SNAP_RECENT], recent_felt[FRI_SNAP_RECENT];
    uint64_t recent_head; /* ticks timed so far; entry (n − 1) % RECENT is the newest */
    int *slot_map;        /* world body slot → model body index */
    int nslot_map;

    /* record and replay (record.h) and the viewer's commands */
    fri_server_ext ext;
    fr_device *dev_given; /* ext.device until setup_device takes it */
    fr_safety_params sp;
    fri_log rec;
    bool recording;
    uint64_t replay_cmd; /* next recorded command to apply */
    enum { CMDQ = 64 } cmdq_cap_;
    struct fri_cmd {
        int code;
        double value;
    } cmdq[CMDQ];
    _Alignas(64) atomic_uint_fast64_t cmd_head;
    _Alignas(64) atomic_uint_fast64_t cmd_tail;
    bool paused;
    uint64_t iter;       /* loop ticks so far, paused ones included */
    uint64_t spin_late;  /* spin: the sleep woke after the deadline */
    double cpu_busy0[2]; /* /proc/stat of the tick CPU at the start: busy and total, s */
    double others_share; /* other threads' share of the tick CPU during the run, −1 unknown */
    bool stop_in_tick;   /* the stop request came while a tick ran */
    int single_steps;    /* steps to take while paused */
    double slowmo;

    /* test hook: runs once on the tick thread when start-up is done */
    void (*tick_hook)(void *);
    void *tick_hook_arg;
    pthread_t tick_thread;
};

static const fr_driver_entry *const g_drivers[] = {&fr_virtual_driver, &fr_spidar_driver};

const fr_devreg *fr_server_devices(void)
{
    static fr_devreg reg;
    static char dir[1024];
    if (!reg.drivers) {
        const char *env = getenv("FURERU_DEVICE_DIR"); /* the device folder alone */
        if (env && env[0])
            snprintf(dir, sizeof dir, "%s", env);
        else
            snprintf(dir, sizeof dir, "%s/devices", fr_data_dir());
        reg.drivers = g_drivers;
        reg.n_drivers = (int)(sizeof g_drivers / sizeof g_drivers[0]);
        reg.config_dir = dir;
    }
    return &reg;
}

fr_server_opts fr_server_opts_default(void)
{
    return (fr_server_opts){.duration = 0,
                            .fast = false,
                            .headless = true,
                            .log_path = NULL,
                            .log_every = 1,
                            .realtime_sched = true,
                            .log_ring_records = 8192,
                            .energy_tolerance = 0.25,
                            .log_energy = false,
                            .spin = 0.0};
}

static int add_col(fr_server *s, const char *name)
{
    char *c = strdup(name);
    if (!c) return FR_ERR_NOMEM;
    s->col_names[s->ncols++] = c;
    return FR_OK;
}

static int setup_log(fr_server *s, fr_diag *d)
{
    int nb = fr_world_body_count(s->world);
    int nr = fr_world_robot_count(s->world), nj = 0;
    for (int r = 0; r < nr; r++) nj += fr_tree_nlinks(fr_world_robot_tree(s->world, r));
    s->log_bodies = calloc((size_t)nb + 1, sizeof *s->log_bodies);
    s->log_joints = calloc((size_t)nj + 1, sizeof *s->log_joints);
    int np = fr_scene_probe_count(s->scene);
    s->col_names =
        calloc(17 + (size_t)nb * BODY_COLS + 3 * (size_t)nj + 5 * (size_t)np, sizeof *s->col_names);
    if (!s->log_bodies || !s->log_joints || !s->col_names) return FR_ERR_NOMEM;
    int err = add_col(s, "t");
    for (int k = 0; !err && k < nb; k++) {
        fr_body_id id = fr_world_body_at(s->world, k);
        /* dynamic bodies, and the floating bases of robots (their link bodies, "ROBOT/LINK") */
        bool base = false;
        for (int r = 0; r < nr; r++) {
            const fr_tree *t = fr_world_robot_tree(s->world, r);
            if (fr_tree_link_def(t, 0)->type == FR_JOINT_FREE &&
                fr_body_id_eq(fr_world_robot_link_body(s->world, r, 0), id))
                base = true;
        }
        if (fr_body_type(s->world, id) != FR_BODY_DYNAMIC && !base) continue;
        s->log_bodies[s->nlog_bodies++] = id;
        for (int c = 0; !err && c < BODY_COLS; c++) {
            char name[80];
            snprintf(name, sizeof name, "%s.%s", fr_body_name(s->world, id), body_cols[c]);
            err = add_col(s, name);
        }
    }
    /* joints: NAME.q NAME.qd NAME.tau for every 1-DOF joint, NAME = ROBOT/JOINT */
    for (int r = 0; !err && r < nr; r++) {
        const fr_tree *t = fr_world_robot_tree(s->world, r);
        for (int l = 0; !err && l < fr_tree_nlinks(t); l++) {
            const fr_link_def *ld = fr_tree_link_def(t, l);
            if (ld->type != FR_JOINT_REVOLUTE && ld->type != FR_JOINT_PRISMATIC) continue;
            s->log_joints[s->nlog_joints++] =
                (struct fri_log_joint){r, fr_tree_link_q_index(t, l), fr_tree_link_v_index(t, l)};
            static const char *const jc[] = {"q", "qd", "tau"};
            for (int c = 0; !err && c < 3; c++) {
                char name[128];
                snprintf(name, sizeof name, "%s/%s.%s", fr_world_robot_name(s->world, r),
                         ld->joint_name ? ld->joint_name : "joint", jc[c]);
                err = add_col(s, name);
            }
        }
    }
    for (int k = 0; !err && k < np; k++) {
        /* a contact probe also says whether the pair slides (1), sticks (0) or carries nothing
         * (−1), and the slip speed (m/s): the stick-slip phases directly */
        static const char *const fc[] = {"fx", "fy", "fz", "sliding", "slip_speed"};
        const fr_scene_probe *pr = fr_scene_probe_at(s->scene, k);
        int ncols = pr->type == FR_PROBE_SPRING ? 3 : 5;
        for (int c = 0; !err && c < ncols; c++) {
            char name[80];
            snprintf(name, sizeof name, "%s.%s", pr->name, fc[c]);
            err = add_col(s, name);
        }
    }
    if (s->dev) {
        static const char *const dc[] = {"device.px", "device.py", "device.pz",
                                         "device.vx", "device.vy", "device.vz",
                                         "device.fx", "device.fy", "device.fz"};
        for (int c = 0; !err && c < 9; c++) err = add_col(s, dc[c]);
    }
    if (s->opts.log_energy) {
        /* total energy, work done from outside and the tick's rise of their difference, J */
        static const char *const ec[] = {"energy", "work", "energy.gain"};
        for (int c = 0; !err && c < 3; c++) err = add_col(s, ec[c]);
    }
    /* records dropped just before this row (a full ring in real time): gaps are marked in the
     * CSV itself */
    if (!err) err = add_col(s, "log.lost");
    if (err) return err;
    int cap = s->opts.log_ring_records > 0 ? s->opts.log_ring_records : 8192;
    if (cap & (cap - 1))
        return fr_diag_set(d, FR_ERR_INVAL, "", 0, 0, "", "log ring size must be a power of two");
    /* the ring holds at most FRI_LOG_RING_BYTES: a scene of 10^5 logged bodies would otherwise
     * ask for 85 GB; a wide record gets fewer slots (at least 64) */
    while (cap > 64 && (double)cap * s->ncols * sizeof(double) > FRI_LOG_RING_BYTES) cap /= 2;
    if ((err = fri_log_init(&s->log, s->ncols, cap, s->opts.fast))) return err;
    if (s->opts.log_path) {
        err = fri_log_open(&s->log, s->opts.log_path, (const char *const *)s->col_names, d);
        if (!err) err = fri_meta_write(s->opts.log_path, s->scene, &s->opts, s->ncols, d);
    }
    return err;
}

/* Open the device spec names (a simulated device gets the world's dt). */
static int open_device(fr_server *s, const fr_devreg *reg, const char *spec, double dt,
                       fr_safety_params *sp, fr_diag *d)
{
    /* a simulated device steps with the world: give it the same dt when it takes one. Only a
     * driver that refuses the key itself goes without: a device invalid at the world's dt is
     * reported (it was opened at its own dt, silently: a 6-DOF hand unstable at 10 ms ran its
     * 0.7 s poke over 7 s of the world's time) */
    char dtset[64];
    snprintf(dtset, sizeof dtset, "dt=%.17g", dt);
    const char *sets[] = {dtset};
    fr_diag scratch = {0};
    int nsets = fr_devreg_check(reg, spec, sets, 1, sp, &scratch) == FR_OK ||
                        strcmp(scratch.field, "dt") != 0
                    ? 1
                    : 0;
    return fr_devreg_open(reg, spec, sets, nsets, &s->dev, sp, d);
}

/* Open the device (scene's device section or --device) and couple it to the proxy body with an
 * implicit spring: gains given at the device are divided by scale² in the world, so the user feels
 * exactly the configured stiffness and damping (power is conserved by the mapping). */
static int setup_device(fr_server *s, fr_diag *d)
{
    const fr_scene_device *sd = fr_scene_get_device(s->scene);
    s->coupling = -1;
    if (!sd->present && !s->opts.device && !s->dev_given) return FR_OK;
    const fr_devreg *reg = fr_server_devices();
    double dt = fr_world_get_def(s->world)->dt;
    fr_safety_params sp;
    const char *spec = s->opts.device ? s->opts.device : sd->spec;
    if (!spec || !spec[0]) spec = fr_devreg_default_spec(reg);
    int err;
    if (s->dev_given) {
        s->dev = s->dev_given;
        s->dev_given = NULL;
        spec = s->dev->desc.name;
        if (s->ext.safety)
            sp = *s->ext.safety;
        else
            fr_safety_params_default(&sp);
    } else if ((err = open_device(s, reg, spec, dt, &sp, d))) {
        return err;
    }
    s->sp = sp;
    err = fr_safety_init(&s->safety, &s->dev->desc, &sp, dt);
    if (err)
        return fr_diag_set(d, err, spec, 0, 0, "safety", "bad safety parameters: %s",
                           fr_strerror(err));
    fr_coupling_params cpp;
    fr_coupling_params_default(&cpp, &s->dev->desc);
    if (sd->present) {
        cpp.workspace.scale = sd->scale;
        cpp.workspace.rot = sd->workspace.q;
        cpp.workspace.offset = sd->workspace.p;
        if (sd->stiffness >= 0) cpp.stiffness = sd->stiffness;
        if (sd->damping >= 0) cpp.damping = sd->damping;
    }
    cpp.rotation = false; /* the proxy is coupled in translation (its shapes need not be round) */
    err = fr_coupling_init(&s->cp, &cpp, &s->dev->desc, dt);
    const bool renderable =
        !(s->dev->desc.max_stiffness > 0 && cpp.stiffness > s->dev->desc.max_stiffness) &&
        !(s->dev->desc.max_damping > 0 && cpp.damping > s->dev->desc.max_damping);
    if (err && !renderable)
        return fr_diag_set(d, err, fr_scene_path(s->scene), 0, 0, "device.coupling",
                           "coupling %g N/m, %g N·s/m is not renderable by '%s' (at most %g N/m, "
                           "%g N·s/m)",
                           cpp.stiffness, cpp.damping, s->dev->desc.name,
                           s->dev->desc.max_stiffness, s->dev->desc.max_damping);
    if (err)
        return fr_diag_set(d, err, fr_scene_path(s->scene), 0, 0, "device.workspace",
                           "the workspace (scale %g) is invalid for '%s': %s", cpp.workspace.scale,
                           s->dev->desc.name, fr_strerror(err));
    fr_passivity_params pp;
    fr_passivity_params_default(&pp, &s->dev->desc, dt);
    s->passivity = sd->present ? sd->passivity : true;
    if ((err = fr_passivity_init(&s->po, &pp)))
        return fr_diag_set(d, err, spec, 0, 0, "passivity", "bad passivity parameters");
    if (!fr_body_id_is_null(sd->proxy)) {
        s->proxy = sd->proxy;
        fr_body_get_mass(s->world, sd->proxy, &s->proxy_mass, NULL);
        fr_pose pp0;
        fr_body_get_pose(s->world, sd->proxy, &pp0);
        /* the drive is an implicit spring in the world (the hook fr_coupling_solve describes) */
        fr_spring_def spd = {.body = sd->proxy, .anchor = pp0.p, .implicit = true};
        snprintf(spd.name, sizeof spd.name, "device-coupling");
        err = fr_world_add_spring(s->world, &spd, &s->coupling);
        if (err)
            return fr_diag_set(d, err, fr_scene_path(s->scene), 0, 0, "device.proxy",
                               "cannot couple the device: %s", fr_strerror(err));
    }
    return FR_OK;
}

/* The snapshot model: every body with its shapes (by reference), the device's map. */
static int setup_snapshots(fr_server *s)
{
    fri_snap_model *m = &s->model;
    int nb = fr_world_body_count(s->world);
    snprintf(m->scene, sizeof m->scene, "%s", fr_scene_name(s->scene));
    m->dt = fr_world_get_def(s->world)->dt;
    m->gravity = fr_world_get_def(s->world)->gravity;
    m->bodies = calloc((size_t)nb + 1, sizeof *m->bodies);
    if (!m->bodies) return FR_ERR_NOMEM;
    m->nbodies = nb;
    for (int k = 0; k < nb; k++) {
        fr_body_id id = fr_world_body_at(s->world, k);
        fri_snap_body *b = &m->bodies[k];
        snprintf(b->name, sizeof b->name, "%s", fr_body_name(s->world, id));
        int t = fr_body_type(s->world, id);
        b->kind = t == FR_BODY_DYNAMIC ? FRI_SNAP_DYNAMIC
                  : t == FR_BODY_LINK  ? FRI_SNAP_LINK
                                       : FRI_SNAP_STATIC;
        if (s->coupling >= 0 && fr_body_id_eq(id, s->proxy)) b->kind = FRI_SNAP_PROXY;
    }
    /* the shapes in one pass over the world's (linear: 10⁵ bodies load in seconds) */
    uint32_t maxidx = 0;
    for (int k = 0; k < nb; k++) {
        uint32_t ix = fr_world_body_at(s->world, k).index1;
        if (ix > maxidx) maxidx = ix;
    }
    int *kof = malloc(sizeof(int) * ((size_t)maxidx + 1));
    if (!kof) return FR_ERR_NOMEM;
    for (uint32_t i = 0; i <= maxidx; i++) kof[i] = -1;
    for (int k = 0; k < nb; k++) kof[fr_world_body_at(s->world, k).index1] = k;
    const int ns = fr_world_shape_count(s->world);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < nb && pass == 1; k++) {
            fri_snap_body *b = &m->bodies[k];
            b->shapes = calloc((size_t)b->nshapes + 1, sizeof *b->shapes);
            if (!b->shapes) {
                free(kof);
                return FR_ERR_NOMEM;
            }
            b->nshapes = 0;
        }
        for (int j = 0; j < ns; j++) {
            fr_body_id bid;
            fr_pose local;
            const fr_shape *sh = fr_world_shape_at(s->world, j, &bid, &local);
            int k = bid.index1 <= maxidx ? kof[bid.index1] : -1;
            if (!sh || k < 0 || !fr_body_id_eq(bid, fr_world_body_at(s->world, k))) continue;
            fri_snap_body *b = &m->bodies[k];
            if (pass == 1) b->shapes[b->nshapes] = (fri_snap_shape){.shape = sh, .local = local};
            b->nshapes++;
        }
    }
    free(kof);
    if (s->dev) {
        m->has_device = true;
        m->ws_scale = s->cp.p.workspace.scale;
        m->ws_rot = s->cp.p.workspace.rot;
        m->ws_offset = s->cp.p.workspace.offset;
        m->dev_min = s->dev->desc.workspace_min;
        m->dev_max = s->dev->desc.workspace_max;
    }
    fr_vec3 lo = fr_v3(1e30, 1e30, 1e30), hi = fr_v3(-1e30, -1e30, -1e30);
    double mass = 0.0;
    for (int k = 0; k < nb; k++) {
        fr_body_id id = fr_world_body_at(s->world, k);
        if (m->bodies[k].kind == FRI_SNAP_STATIC) continue;
        double mk = 0.0;
        fr_body_get_mass(s->world, id, &mk, NULL);
        if (isfinite(mk) && mk > 0) mass += mk;
        fr_pose p;
        fr_body_get_pose(s->world, id, &p);
        lo = fr_v3(fmin(lo.x, p.p.x), fmin(lo.y, p.p.y), fmin(lo.z, p.p.z));
        hi = fr_v3(fmax(hi.x, p.p.x), fmax(hi.y, p.p.y), fmax(hi.z, p.p.z));
    }
    m->size = lo.x < 1e30 ? fmax(0.05, 0.5 * fr_v3_norm(fr_v3_sub(hi, lo))) : 0.5;
    m->weight = fmax(0.1, mass * fr_v3_norm(m->gravity));
    for (int k = 0; k < nb; k++) {
        int i1 = (int)fr_world_body_at(s->world, k).index1;
        if (i1 > s->nslot_map) s->nslot_map = i1;
    }
    s->slot_map = malloc(((size_t)s->nslot_map + 1) * sizeof *s->slot_map);
    if (!s->slot_map) return FR_ERR_NOMEM;
    for (int i = 0; i < s->nslot_map; i++) s->slot_map[i] = -1;
    for (int k = 0; k < nb; k++) s->slot_map[fr_world_body_at(s->world, k).index1 - 1] = k;
    int maxc = fr_world_get_def(s->world)->max_contacts;
    if (maxc > 4096) maxc = 4096;
    int err = fri_tbuf_init(&s->snaps, fri_snap_size(nb, maxc), FRI_SERVER_SNAP_READERS);
    if (err) return err;
    fri_snap_layout(&s->snaps, nb, maxc);
    const char *ck = getenv("FURERU_SNAPSHOT_CHECKSUM");
    s->snap_checksum = ck && ck[0] == '1';
    return FR_OK;
}

static int model_index(const fr_server *s, fr_body_id id)
{
    return id.index1 > 0 && (int)id.index1 <= s->nslot_map ? s->slot_map[id.index1 - 1] : -1;
}

/* Fill the back snapshot from the world and publish it (tick thread: no allocation or lock). */
static void publish_snapshot(fr_server *s, uint64_t iter, unsigned flags)
{
    fri_snap *sn = fri_tbuf_back(&s->snaps);
    sn->seq = fri_tbuf_published(&s->snaps) + 1;
    (void)iter;
    sn->tick = s->iter;
    sn->steps = s->ticks;
    sn->time = fr_world_time(s->world);
    sn->flags = flags;
    sn->slowmo = 1.0;
    fr_pose *bp = fri_snap_bodies(sn);
    for (int k = 0; k < sn->nbodies; k++)
        fr_body_get_pose(s->world, fr_world_body_at(s->world, k), &bp[k]);
    int nc = fr_world_contact_count(s->world), n = 0;
    fri_snap_contact *sc = fri_snap_contacts(sn);
    for (int i = 0; i < nc && n < sn->max_contacts; i++) {
        fr_body_id a, b;
        const fr_contact_result *r = fr_world_contact(s->world, i, &a, &b);
        if (!r || !r->in_contact) continue;
        fri_snap_contact *c = &sc[n++];
        c->point = r->point;
        c->normal = r->normal;
        c->force = r->force_b;
        c->depth = r->max_depth;
        c->sliding = r->sliding;
        c->body_a = model_index(s, a);
        c->body_b = model_index(s, b);
        const fr_contact_model *cm = fr_world_contact_model(s->world, i);
        if (cm) {
            c->t1 = cm->t1, c->t2 = cm->t2;
            c->area = cm->area, c->ax = cm->ax, c->ay = cm->ay;
            c->ixx = cm->ixx, c->ixy = cm->ixy, c->iyy = cm->iyy;
        } else {
            c->t1 = c->t2 = fr_v3_zero();
            c->area = c->ax = c->ay = c->ixx = c->ixy = c->iyy = 0.0;
        }
    }
    sn->ncontacts = n;
    if (s->dev) {
        sn->flags |= FRI_SNAP_HAS_DEVICE;
        if (s->coupling >= 0) {
            fr_pose pp;
            fr_body_get_pose(s->world, s->proxy, &pp);
            sn->proxy = pp.p;
            fr_world_spring_state(s->world, s->coupling, &sn->coupling_force, &sn->pointer);
            if (s->cp.drive.active) {
                sn->flags |= FRI_SNAP_COUPLED;
                sn->pointer = s->cp.drive.target;
            }
        }
        sn->felt = s->safety_out.force;
        sn->felt_world = fr_q_rotate(s->cp.p.workspace.rot, sn->felt);
        sn->max_force = s->dev->desc.max_force;
    }
    sn->overruns = s->overruns;
    fr_world_energy e;
    fr_world_energy_get(s->world, &e);
    sn->energy = e.total;
    sn->work = e.work;
    uint64_t h = s->recent_head;
    int nr = h < FRI_SNAP_RECENT ? (int)h : FRI_SNAP_RECENT;
    for (int i = 0; i < nr; i++) {
        int j = (int)((h - 1 - (uint64_t)i) % FRI_SNAP_RECENT);
        sn->recent_latency_us[i] = s->recent_lat[j];
        sn->recent_step_us[i] = s->recent_step[j];
        sn->recent_felt[i] = s->recent_felt[j];
    }
    sn->recent_n = nr;
    sn->recent_tick = h;
    sn->checksum = s->snap_checksum ? fri_snap_checksum(sn) : 0;
    fri_tbuf_publish(&s->snaps);
}

int fri_server_command(fr_server *s, int code, double value)
{
    uint64_t h = atomic_load_explicit(&s->cmd_head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&s->cmd_tail, memory_order_acquire);
    if (h - t >= CMDQ) return FR_ERR_FULL;
    s->cmdq[h % CMDQ] = (struct fri_cmd){code, value};
    atomic_store_explicit(&s->cmd_head, h + 1, memory_order_release);
    return FR_OK;
}

void fri_server_replay_stats(const fr_server *s, uint64_t *mismatches, double *max_diff,
                             uint64_t *compared)
{
    *mismatches = *compared = 0;
    *max_diff = 0;
    if (s->ext.replay && s->dev) fri_rec_device_stats(s->dev, mismatches, max_diff, compared);
}

/* One record of the recording (tick thread). */
static void record_push(fr_server *s, const double *vals)
{
    double *r = fri_log_reserve(&s->rec);
    if (!r) return; /* counted as dropped: the recording will be refused on replay */
    memcpy(r, vals, sizeof(double) * FRI_REC_COLS);
    fri_log_commit(&s->rec);
}

static void apply_command(fr_server *s, int code, double value, bool record)
{
    switch (code) {
    case FRI_CMD_PAUSE:
        s->paused = value != 0.0;
        break;
    case FRI_CMD_STEP:
        if (s->paused) s->single_steps++;
        break;
    case FRI_CMD_SLOWMO:
        if (value >= 1.0 && value <= 1000.0) s->slowmo = value;
        break;
    default:
        return;
    }
    if (record && s->recording) {
        double v[FRI_REC_COLS] = {FRI_REC_COMMAND, (double)s->ticks, 0, (double)code, value};
        record_push(s, v);
    }
}

/* The viewer's commands, and on replay the recorded ones due before this step. */
static void take_commands(fr_server *s)
{
    uint64_t t = atomic_load_explicit(&s->cmd_tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&s->cmd_head, memory_order_acquire);
    for (; t != h; t++) {
        struct fri_cmd c = s->cmdq[t % CMDQ];
        /* on replay the viewer only changes the pace; the recorded commands are replayed */
        apply_command(s, c.code, c.value, !s->ext.replay);
    }
    atomic_store_explicit(&s->cmd_tail, t, memory_order_release);
    const fri_rec *rp = s->ext.replay;
    while (rp && s->replay_cmd < rp->ncmds && rp->cmds[s->replay_cmd].step <= s->ticks) {
        const fri_rec_command *c = &rp->cmds[s->replay_cmd++];
        /* a fast replay does not pause: the steps are what matter */
        if (!s->opts.fast || c->code == FRI_CMD_SLOWMO) apply_command(s, c->code, c->value, false);
    }
}

fri_tbuf *fri_server_snapshots(fr_server *s)
{
    return &s->snaps;
}

const fri_snap_model *fri_server_model(const fr_server *s)
{
    return &s->model;
}

int fr_server_create(fr_scene *scene, const fr_server_opts *opts, fr_server **out, fr_diag *d)
{
    return fri_server_create_ext(scene, opts, NULL, out, d);
}

/* The recording: its head now, its records from the tick thread through a writer thread. */
static int setup_recording(fr_server *s, fr_diag *d)
{
    if (!s->ext.record_path) return FR_OK;
    double duration = (double)s->total_ticks * fr_world_get_def(s->world)->dt;
    char *head = fri_rec_header(s->scene, s->ext.package_paths, s->ext.npackage_paths,
                                s->ext.strict, duration, s->dev, &s->sp);
    if (!head) return FR_ERR_NOMEM;
    int err = fri_log_init(&s->rec, FRI_REC_COLS, 16384, s->opts.fast);
    if (!err) err = fri_log_open_binary(&s->rec, s->ext.record_path, head, d);
    free(head);
    if (!err) {
        memset(s->rec.ring.data, 0, sizeof(double) * FRI_REC_COLS * (s->rec.ring.mask + 1));
        s->recording = true;
    }
    return err;
}

int fri_server_create_ext(fr_scene *scene, const fr_server_opts *opts, const fri_server_ext *ext,
                          fr_server **out, fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    if (!scene || !opts || !out || opts->log_every < 1) {
        if (ext && ext->device) fr_device_close(ext->device);
        if (opts && opts->log_every < 1)
            return fr_diag_set(d, FR_ERR_RANGE, "", 0, 0, "--log-every", "must be >= 1");
        return FR_ERR_INVAL;
    }
    fr_server *s = calloc(1, sizeof *s);
    if (!s) {
        if (ext && ext->device) fr_device_close(ext->device);
        return FR_ERR_NOMEM;
    }
    if (ext) s->ext = *ext;
    s->dev_given = s->ext.device;
    s->ext.device = NULL;
    s->slowmo = 1.0;
    atomic_init(&s->cmd_head, 0);
    atomic_init(&s->cmd_tail, 0);
    s->scene = scene;
    s->world = fr_scene_world(scene);
    s->opts = *opts;
    double duration = opts->duration > 0 ? opts->duration : fr_scene_duration(scene);
    double dt = fr_world_get_def(s->world)->dt;
    s->total_ticks = (uint64_t)llround(duration / dt);
    if (s->ext.replay) s->total_ticks = s->ext.replay->steps;
    s->dma_fd = -1;
    s->lat = calloc(1, sizeof *s->lat);
    s->step = calloc(1, sizeof *s->step);
    atomic_init(&s->stop, false);
    atomic_init(&s->running, false);
    atomic_init(&s->progress, 0);
    int err = (!s->lat || !s->step) ? FR_ERR_NOMEM : setup_device(s, d);
    if (!err && !(opts->energy_tolerance > 0.0))
        err = fr_diag_set(d, FR_ERR_RANGE, "", 0, 0, "--energy-tolerance", "must be > 0");
    if (!err) err = fri_audit_init(&s->audit, s->world, opts->energy_tolerance);
    if (!err) err = setup_log(s, d);
    if (!err) err = setup_snapshots(s);
    if (!err) publish_snapshot(s, 0, 0); /* a viewer can start before the run */
    if (!err) err = setup_recording(s, d);
    if (!err) {
        /* touch every page now so the tick thread never takes a first-touch page fault */
        memset(s->lat, 0, sizeof *s->lat);
        memset(s->step, 0, sizeof *s->step);
        memset(s->log.ring.data, 0,
               sizeof(double) * (size_t)s->ncols * (size_t)(s->log.ring.mask + 1));
    }
    if (err) {
        fr_server_destroy(s);
        /* a message without a file is about the scene's own sections (device, options) */
        if (!d->file[0]) snprintf(d->file, sizeof d->file, "%s", fr_scene_path(scene));
        if (!d->msg[0]) snprintf(d->msg, sizeof d->msg, "%s", fr_strerror(err));
        return err;
    }
    *out = s;
    return FR_OK;
}

/* The driver a device spec resolves to (devices.h: a file, config_dir/SPEC.yaml, or a driver
 * name), "" when it cannot be told. */
static void spec_driver(const fr_devreg *reg, const char *spec, char *out, size_t len)
{
    out[0] = 0;
    char path[1200];
    size_t n = strlen(spec);
    bool file = strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".yaml")) ||
                (n > 4 && !strcmp(spec + n - 4, ".yml"));
    if (file)
        snprintf(path, sizeof path, "%s", spec);
    else
        snprintf(path, sizeof path, "%s/%s.yaml", reg->config_dir ? reg->config_dir : ".", spec);
    fr_cfg_doc *doc = NULL;
    fr_diag d;
    if (fr_cfg_load_file(path, &doc, &d) == FR_OK) {
        const char *drv = fr_cfg_node_scalar(fr_cfg_get(fr_cfg_root(doc), "driver"));
        snprintf(out, len, "%s", drv ? drv : "");
        fr_cfg_free(doc);
    } else if (!file) {
        snprintf(out, len, "%s", spec);
    }
}

int fr_server_check(fr_scene *scene, const fr_server_opts *opts, bool *device_opened, fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    *device_opened = false;
    const fr_scene_device *sd = fr_scene_get_device(scene);
    if (sd->present || opts->device) {
        const fr_devreg *reg = fr_server_devices();
        const char *spec = opts->device ? opts->device : sd->spec;
        if (!spec || !spec[0]) spec = fr_devreg_default_spec(reg);
        fr_safety_params sp;
        int err = fr_devreg_check(reg, spec, NULL, 0, &sp, d);
        if (err) {
            if (!d->file[0]) snprintf(d->file, sizeof d->file, "%s", fr_scene_path(scene));
            return err;
        }
        char drv[64];
        spec_driver(reg, spec, drv, sizeof drv);
        if (strcmp(drv, "virtual") != 0) return FR_OK; /* hardware is not touched by check */
        *device_opened = true;
    }
    /* everything fr_server_create validates (a simulated device is opened and coupled), with
     * no log file written */
    fr_server_opts o = *opts;
    o.log_path = NULL;
    o.progress = NULL;
    fr_server *srv = NULL;
    int err = fr_server_create(scene, &o, &srv, d);
    fr_server_destroy(srv);
    return err;
}

void fri_server_set_tick_hook(fr_server *s, void (*hook)(void *), void *arg)
{
    s->tick_hook = hook;
    s->tick_hook_arg = arg;
}

void fr_server_request_stop(fr_server *s)
{
    atomic_store(&s->stop, true);
    if (s->dev) fr_safety_stop_signal(&s->safety, s->dev); /* async-signal-safe */
}

static inline int64_t ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}
static inline void ts_add(struct timespec *t, int64_t ns)
{
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000) {
        t->tv_nsec -= 1000000000;
        t->tv_sec++;
    }
    while (t->tv_nsec < 0) {
        t->tv_nsec += 1000000000;
        t->tv_sec--;
    }
}

/* One log record of the world's current state. */
static void push_record(fr_server *s)
{
    double *r = fri_log_reserve(&s->log); /* fast mode: waits for room; real time: may drop */
    if (!r) return;
    int c = 0;
    r[c++] = fr_world_time(s->world);
    for (int k = 0; k < s->nlog_bodies; k++) {
        fr_pose p;
        fr_vec3 v, w;
        fr_body_get_pose(s->world, s->log_bodies[k], &p);
        fr_body_get_velocity(s->world, s->log_bodies[k], &v, &w);
        double vals[BODY_COLS] = {p.p.x, p.p.y, p.p.z, p.q.w, p.q.x, p.q.y, p.q.z,
                                  v.x,   v.y,   v.z,   w.x,   w.y,   w.z};
        memcpy(r + c, vals, sizeof vals);
        c += BODY_COLS;
    }
    for (int k = 0; k < s->nlog_joints; k++) {
        const struct fri_log_joint *j = &s->log_joints[k];
        const fr_tree_data *td = fr_world_robot_data(s->world, j->robot);
        r[c++] = td->q[j->qi];
        r[c++] = td->qd[j->vi];
        r[c++] = td->tau_out[j->vi];
    }
    int np = fr_scene_probe_count(s->scene);
    for (int k = 0; k < np; k++) {
        const fr_scene_probe *p = fr_scene_probe_at(s->scene, k);
        fr_vec3 f = fr_v3_zero();
        if (p->type == FR_PROBE_SPRING)
            fr_world_spring_state(s->world, p->spring, &f, NULL);
        else
            f = fr_world_contact_force(s->world, p->body, p->other);
        r[c++] = f.x;
        r[c++] = f.y;
        r[c++] = f.z;
        if (p->type != FR_PROBE_SPRING) {
            double speed = 0.0;
            r[c++] = fr_world_contact_slip(s->world, p->body, p->other, &speed);
            r[c++] = speed;
        }
    }
    if (s->dev) {
        const fr_device_state *ds = &s->dev_state;
        const fr_device_cmd *dc = &s->safety_out;
        double dv[9] = {ds->pose.p.x, ds->pose.p.y, ds->pose.p.z, ds->vel.x,  ds->vel.y,
                        ds->vel.z,    dc->force.x,  dc->force.y,  dc->force.z};
        memcpy(r + c, dv, sizeof dv);
        c += 9;
    }
    if (s->opts.log_energy) {
        fr_world_energy e;
        fr_world_energy_get(s->world, &e);
        r[c++] = e.total;
        r[c++] = e.work;
        r[c++] = s->energy_gain > -INFINITY ? s->energy_gain : 0.0;
        s->energy_gain = -INFINITY;
    }
    r[c++] = (double)s->log.pending_lost;
    s->log.pending_lost = 0;
    fri_log_commit(&s->log);
}

/* Everything a tick does, in order (ARCHITECTURE.md): commands, device, physics, coupling,
 * safety, device command, snapshot, log. Devices and viewers attach here in later stages. */
/* Device → coupling drive: the sample is mapped into the world (x_w = o + scale·R·x_d) and
 * becomes the implicit spring's anchor; a rejected sample (fault, NaN) holds the last target. */
static int device_in(fr_server *s)
{
    fr_device_read(s->dev, &s->dev_state);
    if (s->dev_state.status == FR_DEVICE_DISCONNECTED || s->dev_state.status == FR_DEVICE_FAULT)
        s->device_faults++;
    if (s->coupling < 0) return FR_OK;
    fr_pose proxy;
    fr_body_get_pose(s->world, s->proxy, &proxy);
    fr_coupling_update(&s->cp, &s->dev_state, &proxy);
    const fr_coupling_drive *dr = &s->cp.drive;
    bool abandon = false;
    const fr_scene_device *sd = fr_scene_get_device(s->scene);
    /* the guard compares the proxy with the grip's own point (cp.x_d), not with the drive's
     * target, which the stretch limit keeps within max_force/K of the proxy */
    if (dr->active && fri_guard_proxy(&s->guard, s->world, s->proxy, s->cp.x_d, s->cp.v_d,
                                      sd->present ? sd->scale : 1.0, &abandon)) {
        /* a runaway proxy: the haptic path degrades first (docs/haptics.md, "Faults"). Too
         * far from the grip, it is put at the grip's point; too fast, it is stopped where it
         * is (near the grip: moved onto a grip that is inside geometry it would be thrown out
         * of the overlap, a new user's 38 J). Either way it takes the grip's velocity, at most
         * the guard's speed limit (a grip that jerked at 37 m/s gave its speed to the proxy). An
         * outside intervention: the energy audit takes what this tick adds as work done on the
         * world, not as a numerical failure. */
        const double sc = sd->present ? sd->scale : 1.0, vmax = FRI_GUARD_SLIP_SPEED * sc;
        fr_vec3 v = s->cp.v_d;
        double vn = fr_v3_norm(v);
        if (!(vn <= vmax)) v = vn > 0 && isfinite(vn) ? fr_v3_scale(v, vmax / vn) : fr_v3_zero();
        fr_world_set_spring_gains(s->world, s->coupling, 0.0, 0.0);
        if (s->guard.last_far) fr_body_set_pose(s->world, s->proxy, (fr_pose){s->cp.x_d, proxy.q});
        fr_body_set_velocity(s->world, s->proxy, v, fr_v3_zero());
        s->haptic_reset = true;
        s->audit.outside = true;
        return abandon ? FR_ERR_NUMERIC : FR_OK;
    }
    if (dr->active) {
        /* the damper's part kept within the force limit too, as the spring's stretch is (the
         * coupling shortens it): a grip jerked 9 cm in 0.1 ms asked c·Δv of the proxy, threw it,
         * and three resets in a second ended a new user's session */
        fr_vec3 tv = dr->target_vel, vp;
        fr_body_get_velocity(s->world, s->proxy, &vp, NULL);
        const fr_vec3 dv = fr_v3_sub(tv, vp);
        const double fd = dr->c * fr_v3_norm(dv);
        if (fd > s->cp.max_f) tv = fr_v3_mad(vp, s->cp.max_f / fd, dv);
        fr_world_set_spring_gains(s->world, s->coupling, dr->k, dr->c);
        fr_world_set_spring_anchor(s->world, s->coupling, dr->target, tv);
        s->drive_tv = tv;
    } else {
        fr_world_set_spring_gains(s->world, s->coupling, 0.0, 0.0); /* no hand yet: proxy free */
    }
    return FR_OK;
}

/* Coupling force → the user (the exact opposite of the force on the proxy, in the device frame),
 * through the passivity controller and the safety chain. */
static void device_out(fr_server *s, uint64_t now_ns, bool step_ok)
{
    fr_device_cmd cmd = {fr_v3_zero(), fr_v3_zero()};
    if (s->coupling >= 0 && s->cp.drive.active && !s->haptic_reset) {
        /* the proxy's own weight is the simulation's business, not the user's: compensate it so
         * a free proxy feels weightless and only contacts push back */
        fr_vec3 fw;
        fr_world_spring_state(s->world, s->coupling, &fw, NULL);
        fw = fr_v3_mad(fw, s->proxy_mass, fr_world_get_def(s->world)->gravity);
        fr_coupling_output_applied(&s->cp, fw, fr_v3_zero(), &cmd);
    }
    bool fresh = s->dev_state.status == FR_DEVICE_OK;
    fr_vec3 x = s->dev_state.pose.p;
    if (s->passivity && fresh && fr_v3_isfinite(x)) {
        fr_vec3 dx = s->have_last_dev ? fr_v3_sub(x, s->last_dev_pos) : fr_v3_zero();
        fr_passivity_step(&s->po, dx, &cmd.force);
        s->last_dev_pos = x;
        s->have_last_dev = true;
    }
    s->dev_cmd = cmd;
    /* While the chain waits to engage, its gate also hears the coupling's spring alone (with the
     * weight compensated): a proxy flying at its stretch limit towards a grip inside a box asks
     * for nothing, its spring and damper cancelling, and the gate opened there; the ramp then
     * pushed the hand 12 mm out of the box, and the passivity controller spent the next 15 s
     * taking that energy back in a 0.8 N, 110 Hz buzz on the still hand. The output stays the
     * minimum while disengaged, whatever the gate hears. */
    fr_device_cmd gate = cmd;
    if (s->coupling >= 0 && s->cp.drive.active && !s->haptic_reset &&
        s->safety.mode == FR_SAFETY_MODE_DISENGAGED) {
        fr_vec3 fw, vb;
        fr_world_spring_state(s->world, s->coupling, &fw, NULL);
        fr_body_get_velocity(s->world, s->proxy, &vb, NULL);
        fw = fr_v3_sub(fw, fr_v3_scale(fr_v3_sub(s->drive_tv, vb), s->cp.drive.c));
        fw = fr_v3_mad(fw, s->proxy_mass, fr_world_get_def(s->world)->gravity);
        const fr_vec3 fs = fr_workspace_force_to_device(&s->cp.p.workspace, fr_v3_neg(fw));
        if (!(fr_v3_norm(fs) <= fr_v3_norm(gate.force))) gate.force = fs;
    }
    if (fresh && step_ok) fr_safety_feed(&s->safety, now_ns);
    fr_safety_apply(&s->safety, &gate, now_ns, &s->safety_out);
    fr_device_write(s->dev, &s->safety_out);
    if (s->passivity) fr_passivity_commit(&s->po, s->safety_out.force);
}

static int do_tick(fr_server *s, uint64_t tick, uint64_t now_ns)
{
    s->haptic_reset = false;
    const fri_rec *rp = s->ext.replay;
    if (rp && rp->has_device && tick < rp->nsamples) now_ns = rp->samples[tick].now_ns;
    int err = s->dev ? device_in(s) : FR_OK;
    if (!err) err = fr_world_step(s->world);
    bool audit_failed = false;
    if (!err) {
        double before = s->audit.level;
        err = fri_audit_tick(&s->audit, s->world);
        s->energy_gain = fmax(s->energy_gain, s->audit.level - before);
        audit_failed = err != FR_OK;
    }
    if (!err) err = fri_guard_world(&s->guard, s->world, s->log_bodies, s->nlog_bodies);
    if (err && s->dev) {
        /* any fault: the device to minimum tension in this very tick, before anything else */
        fr_safety_stop(&s->safety, s->dev);
        s->device_stopped = true;
    }
    /* the tick the audit failed has its row whatever --log-every says: its state is finite, and
     * without it a user saw the rows up to the tick before and had to run again to the failure's
     * time (a new user's trial) */
    if (audit_failed) push_record(s);
    if (err && s->dev) return err;
    if (s->dev) device_out(s, now_ns, err == FR_OK);
    if (s->dev && s->recording) {
        const fr_device_state *ds = &s->dev_state;
        const fr_device_cmd *f = &s->safety_out;
        double v[FRI_REC_COLS] = {FRI_REC_DEVICE,
                                  (double)tick,
                                  fri_rec_u64(now_ns),
                                  ds->pose.p.x,
                                  ds->pose.p.y,
                                  ds->pose.p.z,
                                  ds->pose.q.w,
                                  ds->pose.q.x,
                                  ds->pose.q.y,
                                  ds->pose.q.z,
                                  ds->vel.x,
                                  ds->vel.y,
                                  ds->vel.z,
                                  ds->angvel.x,
                                  ds->angvel.y,
                                  ds->angvel.z,
                                  (double)ds->buttons,
                                  (double)ds->status,
                                  fri_rec_u64(ds->seq),
                                  f->force.x,
                                  f->force.y,
                                  f->force.z,
                                  f->torque.x,
                                  f->torque.y,
                                  f->torque.z,
                                  0.0};
        record_push(s, v);
    }
    if (err) return err;
    int nc = fr_world_contact_count(s->world);
    double pen = fr_world_max_penetration(s->world);
    if (nc > s->max_contacts) s->max_contacts = nc;
    if (pen > s->max_pen) s->max_pen = pen;
    if ((tick + 1) % (uint64_t)s->opts.log_every == 0) push_record(s);
    publish_snapshot(s, tick + 1, s->paused ? FRI_SNAP_PAUSED : 0);
    return FR_OK;
}

static void try_realtime(fr_server *s)
{
    if (s->opts.fast || !s->opts.realtime_sched) {
        snprintf(s->sched_note, sizeof s->sched_note, "%s",
                 s->opts.fast ? "fast mode" : "disabled");
        return;
    }
    if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) s->mem_locked = true;
    /* the CPU fr_server_run chose for us (the others run the logger and the supervisor) */
    if (s->pinned) {
        cpu_set_t mine;
        CPU_ZERO(&mine);
        CPU_SET(s->tick_cpu, &mine);
        if (pthread_setaffinity_np(pthread_self(), sizeof mine, &mine) != 0)
            s->pinned = false;
        else
            atomic_store(&s->tick_tid, fri_cpus_tid()); /* the supervisor sweeps the others */
    }
    struct sched_param sp = {.sched_priority = 80};
    int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (e == 0)
        s->sched_fifo = true;
    else
        snprintf(s->sched_note, sizeof s->sched_note,
                 "SCHED_FIFO refused (%s); running SCHED_OTHER", strerror(e));
}

static void prefault_stack(void)
{
    volatile unsigned char buf[64 * 1024];
    for (size_t i = 0; i < sizeof buf; i += 4096) buf[i] = 0;
}

static void *tick_main(void *arg)
{
    fr_server *s = arg;
    pthread_setname_np(pthread_self(), "fureru-tick"); /* start-up: ps -L tells them apart */
    try_realtime(s);
    prefault_stack();
    if (s->tick_hook) s->tick_hook(s->tick_hook_arg);

    const int64_t period = llround(fr_world_get_def(s->world)->dt * 1e9);
    int64_t spin_ns = s->opts.fast ? 0 : llround(s->opts.spin * 1e9);
    /* at most 90 % of the period: a SCHED_FIFO thread busy for more than 95 % of a second
     * (/proc/sys/kernel/sched_rt_runtime_us) is throttled for the rest of it (measured: 53 ms
     * stalls with 950 us of 1 ms) */
    if (spin_ns > period * 9 / 10) spin_ns = period * 9 / 10;
    struct timespec start, next, now, done;
    clock_gettime(CLOCK_MONOTONIC, &start);
    next = start;
    push_record(s); /* the initial state, t = 0 */
    publish_snapshot(s, 0, 0);
    while (s->ticks < s->total_ticks) {
        if (atomic_load_explicit(&s->stop, memory_order_relaxed)) {
            s->interrupted = true;
            s->stopped_at = fr_world_time(s->world);
            if (s->dev) {
                fr_safety_stop(&s->safety, s->dev);
                s->device_stopped = true;
            }
            break;
        }
        uint64_t iter = ++s->iter;
        if (!s->opts.fast) {
            ts_add(&next, s->slowmo == 1.0 ? period : llround((double)period * s->slowmo));
            if (spin_ns > 0) {
                /* sleep to spin_ns before the deadline, then wait for it busy: the CPU does not
                 * halt and the tick starts on a warm core (clock_gettime is a vDSO call) */
                struct timespec wake = next;
                ts_add(&wake, -spin_ns);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) == EINTR) {
                }
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (ts_ns(&now) > ts_ns(&next)) s->spin_late++;
                while (ts_ns(&now) < ts_ns(&next)) clock_gettime(CLOCK_MONOTONIC, &now);
            } else {
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
                }
                clock_gettime(CLOCK_MONOTONIC, &now);
            }
            fri_hist_add(s->lat, ts_ns(&now) - ts_ns(&next));
        } else {
            clock_gettime(CLOCK_MONOTONIC, &now);
        }
        take_commands(s);
        if (s->paused && s->single_steps == 0) {
            /* paused: no step, no device exchange (the watchdog drops the device to minimum);
             * the viewer still gets a snapshot every tick */
            publish_snapshot(s, iter, FRI_SNAP_PAUSED);
            if (s->opts.fast) {
                struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL); /* fast mode is not real time: do not spin */
            }
            continue;
        }
        if (s->single_steps > 0) s->single_steps--;
        uint64_t tick = s->ticks;
        uint64_t now_ns = s->opts.fast ? (uint64_t)tick * (uint64_t)period : (uint64_t)ts_ns(&now);
        int err = do_tick(s, tick, now_ns);
        clock_gettime(CLOCK_MONOTONIC, &done);
        fri_hist_add(s->step, ts_ns(&done) - ts_ns(&now));
        int ri = (int)(s->recent_head % FRI_SNAP_RECENT);
        s->recent_lat[ri] = s->opts.fast ? 0.0f : (float)(ts_ns(&now) - ts_ns(&next)) * 1e-3f;
        s->recent_step[ri] = (float)(ts_ns(&done) - ts_ns(&now)) * 1e-3f;
        s->recent_felt[ri] = s->dev ? (float)fr_v3_norm(s->safety_out.force) : 0.0f;
        s->recent_head++;
        s->ticks++;
        /* a stop requested during the tick may have reached its safety chain (the signal drops
         * the device at once): the recording leaves that tick out */
        if (atomic_load_explicit(&s->stop, memory_order_relaxed)) s->stop_in_tick = true;
        atomic_store_explicit(&s->progress, s->ticks, memory_order_relaxed);
        if (err) {
            s->tick_error = err;
            break;
        }
        if (!s->opts.fast && ts_ns(&done) > ts_ns(&next) + period) {
            s->overruns++;
            /* behind by more than a period: restart the schedule from now rather than bursting */
            next = done;
        }
    }
    /* records dropped after the last one kept: a final row (the state at the end, waiting for
     * room now that the run is over) carries their count, so every loss is marked in the CSV;
     * so does the end's state that --log-every N left out (the summary's end energy has its row;
     * a failed tick's only where the audit failed it, do_tick) */
    const bool unlogged = !s->tick_error && s->ticks % (uint64_t)s->opts.log_every != 0;
    if (s->log.pending_lost || unlogged) {
        s->log.blocking = true;
        push_record(s);
    }
    publish_snapshot(s, s->ticks, FRI_SNAP_FINISHED); /* the last one says the run is over */
    clock_gettime(CLOCK_MONOTONIC, &done);
    s->wall = (double)(ts_ns(&done) - ts_ns(&start)) * 1e-9;
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    s->tick_cpu_time = (double)cpu.tv_sec + 1e-9 * (double)cpu.tv_nsec;
    atomic_store(&s->running, false);
    return NULL;
}

/* Busy and total time of one CPU so far (/proc/stat, in clock ticks → s); false if unreadable. */
static bool cpu_times(int cpu, double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return false;
    char line[512], want[32];
    snprintf(want, sizeof want, "cpu%d ", cpu);
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, want, strlen(want)) != 0) continue;
        unsigned long long v[10] = {0};
        int n = sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
                       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        if (n < 5) break;
        double hz = (double)sysconf(_SC_CLK_TCK);
        unsigned long long all = 0;
        for (int i = 0; i < 8 && i < n; i++) all += v[i]; /* guest time is in user already */
        *total = (double)all / hz;
        *busy = (double)(all - v[3] - v[4]) / hz; /* less idle and iowait */
        found = true;
    }
    fclose(f);
    return found;
}

int fri_server_tick_cpu_plan(const fr_server *s)
{
    return s->opts.fast || !s->opts.realtime_sched ? -1 : fri_cpus_tick_choice();
}

/* A CPU set as a list: "0", "0-2", "0,2-3". */
static void cpu_list(const cpu_set_t *set, char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && len < n; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set)) e++;
        int w = e > c ? snprintf(out + len, n - len, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(out + len, n - len, "%s%d", len ? "," : "", c);
        if (w < 0) break;
        len += (size_t)w;
        c = e;
    }
}

/* With two or more CPUs and real-time scheduling, the tick thread gets the last CPU to itself:
 * the logger and the supervisor (this thread) stay off it, so the tick's wake-up never has to
 * preempt one of our own threads (measured: it halves the wake-up latency on a 2-vCPU VM); the
 * supervisor also sweeps every other thread of the process off it during the run (cpus.h). */
static bool plan_cpus(fr_server *s, cpu_set_t *saved)
{
    int cpu = fri_server_tick_cpu_plan(s);
    if (cpu < 0 || pthread_getaffinity_np(pthread_self(), sizeof *saved, saved) != 0) return false;
    if (!fri_cpus_keep_off(cpu)) return false;
    cpu_set_t others;
    if (pthread_getaffinity_np(pthread_self(), sizeof others, &others) != 0) return false;
    cpu_list(&others, s->others_cpus, sizeof s->others_cpus);
    s->tick_cpu = cpu;
    s->pinned = true;
    return true;
}

/* As soon as the tick thread has pinned itself, then every 0.2 s of the run (the supervisor's
 * 5 ms loop): threads started since, e.g. by an OpenGL driver with every CPU allowed, leave the
 * tick's CPU. */
static void sweep_cpus(fr_server *s, int loop, int *next)
{
    pid_t tick = atomic_load(&s->tick_tid);
    if (!tick || loop < *next) return;
    fri_cpus_sweep(s->tick_cpu, tick, &s->moved);
    *next = loop + 40;
}

int fr_server_run(fr_server *s)
{
    cpu_set_t saved;
    memset(&s->moved, 0, sizeof s->moved);
    atomic_store(&s->tick_tid, 0);
    bool restore = plan_cpus(s, &saved); /* the logger inherits the supervisor's CPUs */
    if (fri_log_start(&s->log) != FR_OK) return FR_ERR_NOMEM;
    if (s->recording && fri_log_start(&s->rec) != FR_OK) return FR_ERR_NOMEM;
    int err = FR_OK;
    fri_progress prog;
    fri_progress_start(&prog, s->opts.progress, (double)s->total_ticks);
    s->others_share = -1.0;
    bool have_cpu0 = s->pinned && cpu_times(s->tick_cpu, &s->cpu_busy0[0], &s->cpu_busy0[1]);
    atomic_store(&s->running, true);
    if (pthread_create(&s->tick_thread, NULL, tick_main, s) != 0) {
        atomic_store(&s->running, false);
        err = FR_ERR_NOMEM;
    } else {
        /* supervisor: if the tick thread stalls, the watchdog drops the device to minimum from
         * here without waiting for it (real time only: fast mode has no wall-clock deadline) */
        for (int loop = 0, next_sweep = 0; atomic_load(&s->running); loop++) {
            if (restore) sweep_cpus(s, loop, &next_sweep); /* planned: tick_tid tells it held */
            struct timespec ts = {0, 5000000}; /* 5 ms: well inside the watchdog's timeout */
            nanosleep(&ts, NULL);
            if (s->dev && !s->opts.fast && !s->ext.replay) {
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                fr_safety_watchdog_poll(&s->safety, s->dev, (uint64_t)ts_ns(&now));
            }
            fri_progress_update(&prog,
                                (double)atomic_load_explicit(&s->progress, memory_order_relaxed),
                                fr_world_get_def(s->world)->dt);
        }
        fri_progress_end(&prog);
        pthread_join(s->tick_thread, NULL);
        err = s->tick_error;
        double b1, t1;
        if (have_cpu0 && cpu_times(s->tick_cpu, &b1, &t1) && t1 - s->cpu_busy0[1] > 0.05) {
            /* the tick CPU's busy time less the tick thread's own: everybody else's */
            double others = (b1 - s->cpu_busy0[0]) - s->tick_cpu_time;
            s->others_share = fmax(0.0, others / (t1 - s->cpu_busy0[1]));
        }
    }
    if (s->dev) fr_safety_stop(&s->safety, s->dev); /* every exit path: minimum at once */
    int lerr = fri_log_finish(&s->log);
    if (!err) err = lerr;
    /* lost records fail the run unless the operator accepted them (--allow-drops) */
    if (!err && s->log.dropped && !s->opts.allow_drops) err = FR_ERR_FULL;
    if (s->recording) {
        s->rec.trailer_steps = s->ticks - (s->stop_in_tick && s->ticks > 0);
        lerr = fri_log_finish(&s->rec);
        if (!err) err = lerr;
    }
    if (s->opts.log_path) {
        fr_server_stats st;
        fr_server_get_stats(s, &st);
        fri_meta_append_result(s->opts.log_path, &st, err);
    }
    if (restore) {
        fri_cpus_restore(&s->moved);
        pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    }
    return err;
}

void fr_server_get_stats(const fr_server *s, fr_server_stats *out)
{
    memset(out, 0, sizeof *out);
    out->ticks = s->ticks;
    out->sim_time = fr_world_time(s->world);
    out->wall_time = s->wall;
    out->latency = fri_hist_summary(s->lat);
    out->step = fri_hist_summary(s->step);
    out->overruns = s->overruns;
    out->max_contacts = s->max_contacts;
    out->max_penetration = s->max_pen;
    out->log_records = s->log.written;
    out->log_dropped = s->log.dropped;
    out->log_lost = s->log.dropped + s->log.unwritten;
    out->log_errno = atomic_load(&s->log.error);
    out->log_waits = s->log.waits;
    out->log_cpu = s->log.cpu;
    out->tick_cpu = s->tick_cpu_time;
    out->sched_fifo = s->sched_fifo;
    if (s->dev) {
        snprintf(out->device, sizeof out->device, "%s", s->dev->desc.name);
        out->safety = fr_safety_get_stats(&s->safety);
        out->passivity_active = s->po.stats.active;
        out->passivity_dissipated = s->po.stats.dissipated;
        out->coupling_rejected = s->cp.stats.rejected;
    }
    out->device_faults = s->device_faults;
    out->fault = *fr_world_get_fault(s->world);
    if (!out->fault.code) out->fault = s->guard.fault;
    out->haptic_resets = s->guard.resets;
    out->interrupted = s->interrupted;
    fr_world_get_counters(s->world, &out->contained);
    out->memory_locked = s->mem_locked;
    out->energy = s->audit.stats;
    out->tick_cpu_index = s->pinned ? s->tick_cpu : -1;
    out->others_on_tick_cpu = s->others_share;
    out->spin_late = s->spin_late;
    snprintf(out->sched_note, sizeof out->sched_note, "%s", s->sched_note);
}

static void print_timing(FILE *out, const char *label, const fr_timing *t)
{
    fprintf(out, "  %-16s p50 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us  (n=%llu)\n", label,
            t->p50 * 1e6, t->p99 * 1e6, t->p999 * 1e6, t->max * 1e6, (unsigned long long)t->count);
}

void fri_substeps_describe(const fr_world *w, char *buf, size_t size)
{
    fr_substeps_info si;
    fr_world_substeps_info(w, &si);
    buf[0] = '\0';
    if (si.n <= 1 && si.asked <= 1) return;
    const double dt = fr_world_get_def(w)->dt;
    int at = snprintf(buf, size, "%d step%s of %.4g ms a tick of %g ms", si.n, si.n == 1 ? "" : "s",
                      1e3 * dt / si.n, 1e3 * dt);
    const char *name = si.body.index1 ? fr_body_name(w, si.body) : NULL;
    if (name && !si.set)
        at += snprintf(buf + at, size - (size_t)at,
                       ", for body '%s' (%.3g mm wide at its narrowest, under the %.3g mm a tick "
                       "resolves: w >= %g g h²)",
                       name, 1e3 * si.width, 1e3 * si.resolved, FR_WORLD_SUBSTEP_WIDTH);
    else
        at += snprintf(buf + at, size - (size_t)at, " (world.substeps)");
    if (name && si.asked > si.n && at < (int)size)
        snprintf(
            buf + at, size - (size_t)at,
            "; short of the %d the rule asks%s%s%s: it may rock, creep and land late as a body "
            "too narrow for its step",
            si.asked, si.set ? " for body '" : ", the most taken", si.set ? name : "",
            si.set ? "'" : "");
    /* (docs/world.md, "Substeps") */
}

void fr_server_print_summary(const fr_server *s, FILE *out)
{
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    double dt = fr_world_get_def(s->world)->dt;
    fprintf(out, "fureru: scene '%s' (%s)\n", fr_scene_name(s->scene), fr_scene_path(s->scene));
    fprintf(out, "  %-16s %llu (%.3f s simulated, dt %.3g ms)%s\n", "ticks",
            (unsigned long long)st.ticks, st.sim_time, dt * 1e3, s->opts.fast ? ", fast mode" : "");
    fprintf(out, "  %-16s %.3f s, real-time factor %.3f\n", "wall time", st.wall_time,
            st.wall_time > 0 ? st.sim_time / st.wall_time : 0.0);
    if (!s->opts.fast) print_timing(out, "wake-up latency", &st.latency);
    print_timing(out, "step time", &st.step);
    const int nsub = fr_world_substeps(s->world, NULL);
    fprintf(out, "  %-16s %llu%s\n", "overruns", (unsigned long long)st.overruns,
            st.overruns && nsub > 1
                ? " (each tick takes the substeps below: the step time is theirs)"
                : "");
    fprintf(out, "  %-16s %d logged (dynamic bodies and robot bases) of %d\n", "bodies",
            s->nlog_bodies, fr_world_body_count(s->world));
    if (fr_world_robot_count(s->world) > 0)
        fprintf(out, "  %-16s %d, %d joints logged\n", "robots", fr_world_robot_count(s->world),
                s->nlog_joints);
    fprintf(out, "  %-16s at most %d at once, max penetration %.3g mm\n", "contacts",
            st.max_contacts, st.max_penetration * 1e3);
    fr_world_solver_stats ws; /* the implicit contact solve (docs/world.md), when it ran */
    fr_world_solver_stats_get(s->world, &ws);
    if (ws.steps > 0)
        fprintf(out,
                "  %-16s %ld steps, Newton iterations max %d, %ld stopped unconverged; %ld "
                "factorisations, %ld chord steps, %ld pair models advanced (work kept between "
                "steps)\n",
                "implicit solve", ws.steps, ws.max_iterations, ws.unconverged, ws.factorisations,
                ws.chord_steps, ws.advanced);
    if (ws.late > 0)
        fprintf(out,
                "  %-16s %ld landings found late (a rebuilt contact holding more than twice the "
                "energy the last step predicted): %.3g J taken from their approach, %.3g J held "
                "back after the step (docs/contact.md §5)\n",
                "late landings", ws.late, ws.late_paid, ws.late_held);
    if (ws.tree_steps > 0)
        fprintf(out,
                "  %-16s %ld articulated steps and %ld revisions of one over the link contacts' "
                "iterations; %ld steps stopped unconverged (the implicit solve's among them)\n",
                "robot contacts", ws.tree_steps, ws.tree_revisions, ws.unconverged);
    char sub[512];
    fri_substeps_describe(s->world, sub, sizeof sub);
    if (sub[0]) fprintf(out, "  %-16s %s\n", "substeps", sub);
    fr_world_constraint_stats cs; /* the constraint stage (docs/constraint.md), when it ran */
    fr_world_constraint_stats_get(s->world, &cs);
    if (cs.steps > 0)
        fprintf(out,
                "  %-16s %d joints, %d rows in the last step; sweeps max %d, residual max %.3g "
                "m/s, %ld of %ld steps stopped at the sweep limit; joint error max %.3g\n",
                "constraints", fr_world_joint_count(s->world), cs.rows, cs.max_iterations,
                cs.max_residual, cs.unconverged, cs.steps, cs.max_position_error);
    if (cs.solve_left_out > 0) /* (silent, a 66-link rope went 6 mm deep where 65 links held 1) */
        fprintf(out,
                "  %-16s in %ld steps the joints had more than %d rows and were left out of the "
                "contact solve (solved around it: jointed bodies land deeper; docs/world.md "
                "\"Joints in the implicit step\"); in it in %ld steps\n",
                "", cs.solve_left_out, cs.solve_rows, cs.solve_steps);
    if (cs.unconverged > 0) /* the residual is PGS's there: say why and what helps */
        fprintf(out,
                "  %-16s steps at the sweep limit are projected Gauss-Seidel's: joints past the "
                "exact block of %d equality rows, or joints with "
                "constraint contacts; raise world.contact.constraint_iterations or see "
                "docs/constraint.md §2\n",
                "", cs.direct_rows);
    /* whether the run starts settled: friction results differ where it does not (a new user
     * turned it off to test a touching start and could not tell from the summary or --help) */
    const char *note = fr_world_settle_note(s->world);
    const int settled = fr_world_settle_steps(s->world);
    if (note && note[0])
        fprintf(out, "  %-16s %s\n", "settle", note);
    else if (settled > 0)
        fprintf(out,
                "  %-16s %d step%s before the run (world.settle: touching bodies take their loads "
                "first; docs/world.md \"Settling\")\n",
                "settle", settled, settled == 1 ? "" : "s");
    else if (settled < 0)
        fprintf(out,
                "  %-16s off (world.settle: false): the run started from the placement, without "
                "loads\n",
                "settle");
    if (st.fault.code)
        fprintf(out, "  %-16s diverged at t = %.4f s: %s, %s = %g%s\n", "faults", st.fault.time,
                st.fault.what, st.fault.quantity, st.fault.value,
                s->device_stopped ? "; device put at minimum tension in that tick" : "");
    else
        fprintf(out,
                "  %-16s none diverged; contained: %lu motor steps held at a speed limit, %lu "
                "unsolvable mimic steps\n",
                "faults", st.contained.velocity_limited, st.contained.mimic_singular);
    if (st.energy.max_gain > 0.0)
        fprintf(out,
                "  %-16s %.6g J at the start, %.6g J at the end, work done on it %.6g J; largest "
                "one-tick rise %.3g J at t = %.4f s (%.2g of the scale; that tick's bound %.3g J: "
                "%.2g of the scale + its joint work %.3g J); the closest any tick came to its "
                "bound: %.2g of it%s\n",
                "energy", st.energy.start, st.energy.end, st.energy.work, st.energy.max_gain,
                st.energy.max_gain_time, st.energy.max_gain_share, st.energy.max_gain_bound,
                s->opts.energy_tolerance, st.energy.max_gain_joint, st.energy.max_use,
                st.energy.fault.failed ? " -- EXCEEDED" : "");
    else /* (audited every tick: none rose) */
        fprintf(out,
                "  %-16s %.6g J at the start, %.6g J at the end, work done on it %.6g J; no "
                "tick's energy less work rose\n",
                "energy", st.energy.start, st.energy.end, st.energy.work);
    /* (not for round-off: 1e-12 of the scene's energy) */
    if (st.energy.placement > 1e-12 * fmax(1.0, fabs(st.energy.start)))
        fprintf(out,
                "  %-16s the first tick found %.3g J of elastic energy in overlapping contacts "
                "(not in the start's energy)\n",
                "placement", st.energy.placement);
    fprintf(out, "  %-16s %llu records written, %llu dropped, %llu lost%s%s\n", "log",
            (unsigned long long)st.log_records, (unsigned long long)st.log_dropped,
            (unsigned long long)st.log_lost, s->opts.log_path ? " -> " : " (no file)",
            s->opts.log_path ? s->opts.log_path : "");
    if (st.log_errno)
        fprintf(out, "  %-16s writing %s failed: %s; the file ends with the last whole row\n",
                "LOG ERROR", s->opts.log_path ? s->opts.log_path : "", strerror(st.log_errno));
    else if (st.log_dropped)
        fprintf(out,
                "  %-16s %llu records dropped (the logger fell behind); the CSV's log.lost "
                "column counts them before each row%s\n",
                "LOG GAPS", (unsigned long long)st.log_dropped,
                s->opts.allow_drops ? " (--allow-drops)" : "");
    if (s->opts.log_path)
        fprintf(out,
                "  %-16s tick thread %.3f s, logger %.3f s (the tick waited for it %llu times)\n",
                "CPU time", st.tick_cpu, st.log_cpu, (unsigned long long)st.log_waits);
    if (s->dev)
        fprintf(out,
                "  %-16s %s: %llu faults; safety: %llu capped, %llu rate-limited, %llu non-finite, "
                "%llu watchdog trips, engaged %llu times\n",
                "device", st.device, (unsigned long long)st.device_faults,
                (unsigned long long)st.safety.capped, (unsigned long long)st.safety.rate_limited,
                (unsigned long long)st.safety.nonfinite,
                (unsigned long long)st.safety.watchdog_trips,
                (unsigned long long)st.safety.engagements);
    if (s->dev && st.safety.engagements == 0 && st.ticks > 0)
        fprintf(out,
                "  %-16s the device never engaged: the force asked of it, or the coupling's "
                "spring alone, never stayed below %g N (the safety chain's engage gate, "
                "docs/haptics.md); a grip inside geometry holds the spring stretched, a proxy "
                "resting on the coupling asks for its weight\n",
                "NOT ENGAGED", s->safety.engage_force);
    if (s->dev)
        fprintf(out,
                "  %-16s passivity controller active %llu ticks (%.3g J dissipated)%s; "
                "%llu device samples rejected\n",
                "coupling", (unsigned long long)st.passivity_active, st.passivity_dissipated,
                s->passivity ? "" : " [off]", (unsigned long long)st.coupling_rejected);
    if (s->dev && st.haptic_resets)
        fprintf(out,
                "  %-16s %llu haptic resets (runaway proxy put back at the device's point, "
                "coupling released for a tick), first at t = %.4f s, last at t = %.4f s: %s; "
                "the energy audit took %.3g J their ticks added as outside work\n",
                "proxy", (unsigned long long)st.haptic_resets, s->guard.first_reset,
                s->guard.last_reset, s->guard.last_reset_why, s->audit.outside_work);
    if (st.interrupted)
        fprintf(out, "  %-16s at t = %.4f s of %.4f s (stop requested: SIGINT or SIGTERM)%s\n",
                "INTERRUPTED", s->stopped_at, (double)s->total_ticks * dt,
                s->dev ? "; device put at minimum tension" : "");
    if (!s->opts.fast) {
        char where[256] = "";
        if (s->pinned && st.others_on_tick_cpu >= 0.0)
            snprintf(where, sizeof where,
                     ", tick thread pinned to CPU %d, our other threads on CPU %s (%ld moved there "
                     "during the run); other processes used %.0f %% of CPU %d",
                     s->tick_cpu, s->others_cpus, s->moved.total, 100.0 * st.others_on_tick_cpu,
                     s->tick_cpu);
        else if (s->pinned)
            snprintf(where, sizeof where,
                     ", tick thread pinned to CPU %d, our other threads on CPU %s (%ld moved there "
                     "during the run)",
                     s->tick_cpu, s->others_cpus, s->moved.total);
        fprintf(out, "  %-16s %s%s%s\n", "scheduling",
                st.sched_fifo ? "SCHED_FIFO 80" : "SCHED_OTHER",
                st.memory_locked ? ", memory locked" : ", memory not locked", where);
        if (s->opts.spin > 0)
            fprintf(out,
                    "  %-16s the last %.0f us before each deadline waited busy (%.0f %% of a CPU); "
                    "%llu wake-ups came after the deadline\n",
                    "spin", fmin(s->opts.spin, 0.9 * fr_world_get_def(s->world)->dt) * 1e6,
                    100.0 * fmin(0.9, s->opts.spin / fr_world_get_def(s->world)->dt),
                    (unsigned long long)st.spin_late);
    }
    if (st.sched_note[0] && !s->opts.fast) fprintf(out, "  %-16s %s\n", "note", st.sched_note);
}

void fr_server_destroy(fr_server *s)
{
    if (!s) return;
    fri_log_destroy(&s->log);
    if (s->recording) fri_log_destroy(&s->rec);
    if (s->dev_given) fr_device_close(s->dev_given);
    if (s->dma_fd >= 0) close(s->dma_fd);
    if (s->dev) {
        fr_safety_stop(&s->safety, s->dev);
        fr_device_close(s->dev);
    }
    for (int c = 0; c < s->ncols; c++) free(s->col_names[c]);
    free(s->col_names);
    free(s->log_bodies);
    free(s->log_joints);
    fri_audit_free(&s->audit);
    for (int k = 0; k < s->model.nbodies; k++) free(s->model.bodies[k].shapes);
    free(s->model.bodies);
    free(s->slot_map);
    fri_tbuf_destroy(&s->snaps);
    free(s->lat);
    free(s->step);
    free(s);
}

pthread_t fri_server_tick_thread(const fr_server *s)
{
    return s->tick_thread;
}
