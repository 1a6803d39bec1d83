/* src/server: the tick thread neither allocates, locks, blocks nor prints after start-up;
 * logs are complete; fast runs are deterministic. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "frtest.h"
#include "fureru/server.h"
#include "interpose.h"
#include "server_internal.h"

static void arm_on_tick_thread(void *arg)
{
    (void)arg;
    fri_watch_thread(pthread_self());
    fri_watch_arm();
}

static fr_scene *load(const char *rel)
{
    fr_scene *sc = NULL;
    fr_diag d;
    int err = fr_scene_load(frtest_path(rel), NULL, 0, &sc, &d);
    ck_assert_msg(err == FR_OK, "%s", d.msg);
    return sc;
}

/* the log and its sidecar */
static void unlink_log(const char *path)
{
    char meta[4096];
    snprintf(meta, sizeof meta, "%s.meta.yaml", path);
    unlink(path);
    unlink(meta);
}

START_TEST(test_tick_thread_is_clean)
{
    if (!fri_watch_available()) return; /* sanitizer build: the sanitizer owns malloc */
    fr_scene *sc = load("config/scenes/default.yaml");
    char path[] = "/tmp/fureru-test-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fr_server_opts o = fr_server_opts_default();
    o.duration = 0.3; /* real time, paced by clock_nanosleep */
    o.log_path = path;
    o.log_ring_records = 64; /* small: exercise the ring wrap while the logger drains */
    /* a logger starved on a loaded machine drops records (counted below; the tick never waits
     * for it): that is not what this test is about, and without this the run failed with
     * FR_ERR_FULL at a load average of 10 */
    o.allow_drops = true;
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    fri_server_set_tick_hook(s, arm_on_tick_thread, NULL);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    fri_watch_counts c = fri_watch_disarm();
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    ck_assert_int_eq(st.ticks, 300);
    ck_assert_int_eq(c.allocs, 0);
    ck_assert_int_eq(c.frees, 0);
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.waits, 0);
    ck_assert_int_eq(c.io, 0);
    ck_assert_int_eq(c.yields, 0);
    ck_assert_int_eq(c.syscalls, 0); /* real time: no futex wake for the logger either */
    ck_assert_int_eq(st.latency.count, 300);
    /* every tick plus the initial state was logged unless the ring overflowed (counted) */
    ck_assert_int_eq(st.log_records + st.log_dropped, 301);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
    unlink_log(path);
}
END_TEST

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void run_fast(const char *path, int every)
{
    fr_scene *sc = load("config/scenes/spinning.yaml");
    fr_server_opts o = fr_server_opts_default();
    o.fast = true;
    o.duration = 2.0;
    o.log_every = every;
    o.log_path = path;
    o.log_ring_records = 16; /* tiny: fast mode must wait for the logger, never drop */
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    ck_assert_int_eq(st.log_dropped, 0);
    ck_assert_int_eq(st.log_records, 1 + 2000 / every);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
}

START_TEST(test_fast_runs_identical_and_complete)
{
    char a[] = "/tmp/fureru-a-XXXXXX", b[] = "/tmp/fureru-b-XXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    run_fast(a, 1);
    run_fast(b, 1);
    size_t la, lb;
    char *ca = slurp(a, &la), *cb = slurp(b, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert(memcmp(ca, cb, la) == 0);
    /* header: t, then 13 columns per dynamic body in scene order */
    ck_assert(
        strncmp(ca,
                "t,minor.px,minor.py,minor.pz,minor.qw,minor.qx,minor.qy,minor.qz,minor.vx,"
                "minor.vy,minor.vz,minor.wx,minor.wy,minor.wz,intermediate.px",
                strlen("t,minor.px,minor.py,minor.pz,minor.qw,minor.qx,minor.qy,minor.qz,minor.vx,"
                       "minor.vy,minor.vz,minor.wx,minor.wy,minor.wz,intermediate.px")) == 0);
    int lines = 0;
    for (size_t i = 0; i < la; i++) lines += ca[i] == '\n';
    ck_assert_int_eq(lines, 1 + 2001);
    free(ca);
    free(cb);
    run_fast(a, 10);
    ca = slurp(a, &la);
    lines = 0;
    for (size_t i = 0; i < la; i++) lines += ca[i] == '\n';
    ck_assert_int_eq(lines, 1 + 201);
    free(ca);
    unlink_log(a);
    unlink_log(b);
}
END_TEST

/* The reading end of a FIFO that starts reading only after a pause: a logger that cannot keep
 * up, whatever the machine. */
typedef struct slow_reader {
    const char *path;
    long lines;
} slow_reader;

static void *read_slowly(void *arg)
{
    slow_reader *r = arg;
    FILE *f = fopen(r->path, "r");
    if (!f) return NULL;
    struct timespec pause = {0, 200000000}; /* 0.2 s: the simulation fills the ring long before */
    nanosleep(&pause, NULL);
    int c;
    while ((c = getc(f)) != EOF) r->lines += c == '\n';
    fclose(f);
    return NULL;
}

/* A fast run whose logger is slower than the simulation (its file is a pipe read late): the tick
 * thread sleeps on a futex until there is room (no spinning in sched_yield), nothing is lost. */
START_TEST(test_fast_run_blocks_for_the_logger)
{
    if (!fri_watch_available()) return;
    fr_scene *sc = load("config/scenes/stick-slip.yaml");
    char dir[] = "/tmp/fureru-block-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/log.csv", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    slow_reader rd = {path, 0};
    pthread_t reader;
    ck_assert_int_eq(pthread_create(&reader, NULL, read_slowly, &rd), 0);
    fr_server_opts o = fr_server_opts_default();
    o.fast = true;
    o.duration = 2.0;
    o.log_path = path;
    o.log_ring_records = 16;
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    fri_server_set_tick_hook(s, arm_on_tick_thread, NULL);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    fri_watch_counts c = fri_watch_disarm();
    pthread_join(reader, NULL);
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    ck_assert_int_eq(st.log_records, 2001);
    ck_assert_int_eq(st.log_dropped, 0);
    ck_assert_int_eq(rd.lines, 1 + 2001);
    ck_assert_int_gt(st.log_waits, 0);
    ck_assert_int_eq(c.yields, 0);
    ck_assert_int_gt(c.syscalls, 0); /* futex waits */
    ck_assert_int_eq(c.allocs, 0);
    ck_assert_int_eq(c.io, 0);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
    unlink_log(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_stop_request)
{
    fr_scene *sc = load("config/scenes/default.yaml");
    fr_server_opts o = fr_server_opts_default();
    o.fast = true;
    o.duration = 1e6; /* would take hours */
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    fr_server_request_stop(s);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    ck_assert_int_eq(st.ticks, 0);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
}
END_TEST

static long resident_pages(void)
{
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
    fclose(f);
    return res;
}

static long g_rss_at_start;
static void note_rss(void *arg)
{
    (void)arg;
    g_rss_at_start = resident_pages();
}

/* Memory is fixed once the run has started: the process's resident set (all threads, memory
 * locked) does not grow over a real-time run with a device and a log. */
START_TEST(test_memory_fixed_after_startup)
{
    if (!fri_watch_available()) return; /* sanitizer build: its shadow memory grows as it likes */
    fr_scene *sc = load("config/scenes/default.yaml");
    char path[] = "/tmp/fureru-test-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fr_server_opts o = fr_server_opts_default();
    o.duration = 1.5;
    o.log_path = path;
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    fri_server_set_tick_hook(s, note_rss, NULL);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    long end = resident_pages();
    ck_assert_int_gt(g_rss_at_start, 0);
    ck_assert_msg(end == g_rss_at_start, "resident pages %ld at start-up, %ld at the end",
                  g_rss_at_start, end);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
    unlink_log(path);
}
END_TEST

/* The log says what the world was: a fast run of the stick-slip rig logged every 7th tick with
 * --log-energy, read back, equals, value for value (the log writes shortest round-trip numbers),
 * the same scene stepped here without the server: time, every body's pose and velocity, the
 * probes' forces, energy, work and the largest one-tick gain since the last row (once the logged
 * tick's alone, which hid the 6 ticks between rows: a new user's trial), and a last row with the
 * end's state (1000 ticks are not a multiple of 7; it was left out). */
START_TEST(test_csv_matches_world)
{
    char path[] = "/tmp/fureru-csv-XXXXXX";
    close(mkstemp(path));
    fr_scene *sc = load("config/scenes/stick-slip.yaml");
    fr_server_opts o = fr_server_opts_default();
    o.fast = true;
    o.duration = 1.0;
    o.log_every = 7;
    o.log_path = path;
    o.log_energy = true;
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    fr_server_destroy(s);
    fr_scene_destroy(sc);

    size_t len;
    char *csv = slurp(path, &len);
    /* the header's columns */
    char *save = NULL, *line = strtok_r(csv, "\n", &save);
    ck_assert_ptr_nonnull(line);
    char *names[256];
    int ncol = 0;
    char *hs = NULL;
    for (char *c = strtok_r(line, ",", &hs); c && ncol < 256; c = strtok_r(NULL, ",", &hs))
        names[ncol++] = c;
    sc = load("config/scenes/stick-slip.yaml");
    fr_world *w = fr_scene_world(sc);
    fr_world_energy e0;
    fr_world_energy_get(w, &e0);
    double level = e0.total - e0.work;
    long tick = 0, rows = 0;
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save), rows++) {
        double v[256];
        int n = 0;
        char *vs = NULL;
        for (char *c = strtok_r(line, ",", &vs); c && n < 256; c = strtok_r(NULL, ",", &vs))
            v[n++] = strtod(c, NULL);
        ck_assert_int_eq(n, ncol);
        /* step the world to the logged tick (row 0 is the start) */
        double gain = rows == 0 ? 0.0 : -INFINITY; /* the largest since the last row */
        /* (the run's 1000 ticks end between two rows: a last row has the end's state) */
        for (long target = rows * 7 < 1000 ? rows * 7 : 1000; tick < target; tick++) {
            ck_assert_int_eq(fr_world_step(w), FR_OK);
            fr_world_energy e;
            fr_world_energy_get(w, &e);
            gain = fmax(gain, (e.total - e.work) - level);
            level = e.total - e.work;
        }
        fr_world_energy e;
        fr_world_energy_get(w, &e);
        ck_assert_double_eq(v[0], fr_world_time(w));
        int checked = 1;
        for (int c = 1; c < ncol; c++) {
            char name[128];
            snprintf(name, sizeof name, "%s", names[c]);
            char *dot = strrchr(name, '.');
            const char *q = "";
            if (dot) *dot = 0, q = dot + 1;
            double want = NAN;
            fr_body_id b;
            if (!strcmp(names[c], "energy")) want = e.total;
            if (!strcmp(names[c], "work")) want = e.work;
            if (!strcmp(names[c], "energy.gain")) want = gain;
            if (!strcmp(names[c], "log.lost")) want = 0; /* a fast run never drops */
            if (isnan(want) && fr_world_find_body(w, name, &b) == FR_OK) {
                fr_pose p;
                fr_vec3 lv, av;
                fr_body_get_pose(w, b, &p);
                fr_body_get_velocity(w, b, &lv, &av);
                const char *k[] = {"px", "py", "pz", "qw", "qx", "qy", "qz",
                                   "vx", "vy", "vz", "wx", "wy", "wz"};
                double x[] = {p.p.x, p.p.y, p.p.z, p.q.w, p.q.x, p.q.y, p.q.z,
                              lv.x,  lv.y,  lv.z,  av.x,  av.y,  av.z};
                for (int i = 0; i < 13; i++)
                    if (!strcmp(q, k[i])) want = x[i];
            }
            for (int pi = 0; isnan(want) && pi < fr_scene_probe_count(sc); pi++) {
                const fr_scene_probe *pr = fr_scene_probe_at(sc, pi);
                if (strcmp(pr->name, name)) continue;
                fr_vec3 f = fr_v3_zero();
                double speed = 0.0;
                int sliding = 0;
                if (pr->type == FR_PROBE_SPRING) {
                    fr_world_spring_state(w, pr->spring, &f, NULL);
                } else {
                    f = fr_world_contact_force(w, pr->body, pr->other);
                    sliding = fr_world_contact_slip(w, pr->body, pr->other, &speed);
                }
                want = !strcmp(q, "fx")           ? f.x
                       : !strcmp(q, "fy")         ? f.y
                       : !strcmp(q, "fz")         ? f.z
                       : !strcmp(q, "sliding")    ? (double)sliding
                       : !strcmp(q, "slip_speed") ? speed
                                                  : NAN;
            }
            ck_assert_msg(!isnan(want), "column %s not recognised", names[c]);
            ck_assert_msg(v[c] == want, "tick %ld, %s: logged %.17g, world %.17g", tick, names[c],
                          v[c], want);
            checked++;
        }
        ck_assert_int_eq(checked, ncol);
    }
    ck_assert_int_eq(rows, 1 + 1000 / 7 + 1); /* the start, every 7th tick, the end */
    free(csv);
    fr_scene_destroy(sc);
    unlink_log(path);
}
END_TEST

/* Snapshots: a reader thread takes the newest snapshot over and over during a run; every one it
 * sees is whole (the tick side's checksum), they never go back in time, and the last one (marked
 * finished) holds exactly the world's final poses and contact forces. */
typedef struct snap_reader {
    fr_server *s;
    atomic_bool stop;
    uint64_t reads, torn, backwards, last_seq;
    bool saw_finished;
} snap_reader;

static void *snap_reader_main(void *arg)
{
    snap_reader *r = arg;
    fri_tbuf *b = fri_server_snapshots(r->s);
    while (!atomic_load(&r->stop)) {
        int slot;
        const fri_snap *sn = fri_tbuf_acquire(b, &slot);
        if (!sn) continue;
        if (fri_snap_checksum(sn) != sn->checksum) r->torn++;
        if (sn->seq < r->last_seq) r->backwards++;
        r->last_seq = sn->seq;
        if (sn->flags & FRI_SNAP_FINISHED) r->saw_finished = true;
        r->reads++;
        fri_tbuf_release(b, slot);
    }
    return NULL;
}

START_TEST(test_snapshots)
{
    setenv("FURERU_SNAPSHOT_CHECKSUM", "1", 1);
    fr_scene *sc = load("config/scenes/default.yaml");
    fr_server_opts o = fr_server_opts_default();
    o.duration = 1.0;
    o.fast = true;
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    unsetenv("FURERU_SNAPSHOT_CHECKSUM");
    snap_reader r[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].s = s;
        atomic_init(&r[i].stop, false);
        ck_assert_int_eq(pthread_create(&th[i], NULL, snap_reader_main, &r[i]), 0);
    }
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    for (int i = 0; i < 2; i++) {
        /* let the reader see the last snapshot */
        for (int k = 0; k < 1000 && !r[i].saw_finished; k++) usleep(1000);
        atomic_store(&r[i].stop, true);
        pthread_join(th[i], NULL);
        ck_assert_uint_gt(r[i].reads, 0);
        ck_assert_uint_eq(r[i].torn, 0);
        ck_assert_uint_eq(r[i].backwards, 0);
        ck_assert(r[i].saw_finished);
    }
    /* one at create (a viewer may start before the run), one at the start, one per tick, the
     * finished one */
    fri_tbuf *b = fri_server_snapshots(s);
    ck_assert_uint_eq(fri_tbuf_published(b), 1 + 1 + 1000 + 1);
    int slot;
    const fri_snap *sn = fri_tbuf_acquire(b, &slot);
    ck_assert_ptr_nonnull(sn);
    fr_world *w = fr_scene_world(sc);
    const fri_snap_model *m = fri_server_model(s);
    ck_assert_int_eq(m->nbodies, fr_world_body_count(w));
    ck_assert_int_eq(sn->nbodies, m->nbodies);
    ck_assert_double_eq(sn->time, fr_world_time(w));
    ck_assert_uint_eq(sn->steps, 1000);
    const fr_pose *bp = fri_snap_bodies_c(sn);
    int nshapes = 0;
    for (int k = 0; k < sn->nbodies; k++) {
        fr_pose p;
        fr_body_get_pose(w, fr_world_body_at(w, k), &p);
        ck_assert_mem_eq(&p, &bp[k], sizeof p);
        nshapes += m->bodies[k].nshapes;
    }
    ck_assert_int_gt(nshapes, sn->nbodies - 1);
    /* contacts: the same forces as the world's, on real bodies */
    int nc = 0;
    for (int i = 0; i < fr_world_contact_count(w); i++) {
        const fr_contact_result *cr = fr_world_contact(w, i, NULL, NULL);
        if (!cr->in_contact) continue;
        const fri_snap_contact *c = &fri_snap_contacts_c(sn)[nc++];
        ck_assert_mem_eq(&c->force, &cr->force_b, sizeof c->force);
        ck_assert_int_ge(c->body_a, 0);
        ck_assert_int_ge(c->body_b, 0);
    }
    ck_assert_int_eq(sn->ncontacts, nc);
    ck_assert_int_gt(nc, 0);
    /* the device: felt force = what the safety chain sent */
    ck_assert(sn->flags & FRI_SNAP_HAS_DEVICE);
    ck_assert_uint_eq(sn->recent_n, FRI_SNAP_RECENT);
    fri_tbuf_release(b, slot);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
}
END_TEST

/* Viewer commands: pause holds the world (snapshots keep coming, marked paused), a single step
 * takes exactly one step, resume runs to the end; every command is in the recording with the
 * step it took effect before, and the recording replays the same steps. */
static void *run_thread(void *arg)
{
    fr_server *s = arg;
    return (void *)(intptr_t)fr_server_run(s);
}

static const fri_snap *newest(fr_server *s, int *slot)
{
    const fri_snap *sn = NULL;
    while (!(sn = fri_tbuf_acquire(fri_server_snapshots(s), slot))) usleep(100);
    return sn;
}

static uint64_t wait_steps(fr_server *s, bool paused, uint64_t at_least)
{
    for (int k = 0; k < 5000; k++) {
        int slot;
        const fri_snap *sn = newest(s, &slot);
        uint64_t st = sn->steps;
        bool p = (sn->flags & FRI_SNAP_PAUSED) != 0;
        fri_tbuf_release(fri_server_snapshots(s), slot);
        if (p == paused && st >= at_least) return st;
        usleep(1000);
    }
    return UINT64_MAX;
}

START_TEST(test_commands_pause_step_recorded)
{
    fr_scene *sc = load("config/scenes/default.yaml");
    char path[] = "/tmp/fureru-rec-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fr_server_opts o = fr_server_opts_default();
    o.duration = 0.5;
    o.realtime_sched = false;
    fri_server_ext ext = {.record_path = path};
    fr_server *s;
    ck_assert_int_eq(fri_server_create_ext(sc, &o, &ext, &s, NULL), FR_OK);
    ck_assert_int_eq(fri_server_command(s, FRI_CMD_PAUSE, 1), FR_OK);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, run_thread, s), 0);
    uint64_t st = wait_steps(s, true, 0);
    ck_assert_uint_eq(st, 0); /* paused before the first step */
    usleep(20000);
    ck_assert_uint_eq(wait_steps(s, true, 0), 0); /* and it stays there */
    ck_assert_int_eq(fri_server_command(s, FRI_CMD_STEP, 0), FR_OK);
    ck_assert_uint_eq(wait_steps(s, true, 1), 1);
    usleep(20000);
    ck_assert_uint_eq(wait_steps(s, true, 1), 1); /* one step only */
    ck_assert_int_eq(fri_server_command(s, FRI_CMD_SLOWMO, 2), FR_OK);
    ck_assert_int_eq(fri_server_command(s, FRI_CMD_PAUSE, 0), FR_OK);
    void *ret;
    pthread_join(th, &ret);
    ck_assert_int_eq((int)(intptr_t)ret, FR_OK);
    fr_server_stats stt;
    fr_server_get_stats(s, &stt);
    ck_assert_uint_eq(stt.ticks, 500);
    /* at half speed the 499 steps after the resume took about 1 s of wall time */
    ck_assert_double_gt(stt.wall_time, 0.9);
    fr_server_destroy(s);
    fri_rec rec;
    fr_diag d;
    ck_assert_int_eq(fri_rec_load(path, &rec, &d), FR_OK);
    ck_assert_uint_eq(rec.steps, 500);
    ck_assert_uint_eq(rec.nsamples, 500);
    ck_assert_uint_eq(rec.ncmds, 4);
    int codes[] = {FRI_CMD_PAUSE, FRI_CMD_STEP, FRI_CMD_SLOWMO, FRI_CMD_PAUSE};
    uint64_t steps[] = {0, 0, 1, 1};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(rec.cmds[i].code, codes[i]);
        ck_assert_uint_eq(rec.cmds[i].step, steps[i]);
    }
    fri_rec_free(&rec);
    unlink(path);
    fr_scene_destroy(sc);
}
END_TEST

/* --spin: the busy wait before each deadline is clean too (clock_gettime is a vDSO call) and the
 * ticks still come at their deadlines. */
START_TEST(test_spin_is_clean)
{
    fr_scene *sc = load("config/scenes/default.yaml");
    fr_server_opts o = fr_server_opts_default();
    o.duration = 0.2;
    o.spin = 300e-6;
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    fri_server_set_tick_hook(s, arm_on_tick_thread, NULL);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    fri_watch_counts c = fri_watch_disarm();
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    ck_assert_int_eq(st.ticks, 200);
    if (fri_watch_available()) {
        ck_assert_int_eq(c.allocs, 0);
        ck_assert_int_eq(c.frees, 0);
    }
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.waits, 0);
    ck_assert_int_eq(c.io, 0);
    ck_assert_int_eq(c.yields, 0);
    ck_assert_int_eq(c.syscalls, 0);
    /* 200 ticks of 1 ms take 0.2 s of wall time: the spin does not run ahead of the deadlines */
    ck_assert_double_gt(st.wall_time, 0.199);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
}
END_TEST

static Suite *server_suite(void)
{
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tick_thread_is_clean);
    tcase_add_test(tc, test_fast_runs_identical_and_complete);
    tcase_add_test(tc, test_csv_matches_world);
    tcase_add_test(tc, test_fast_run_blocks_for_the_logger);
    tcase_add_test(tc, test_stop_request);
    tcase_add_test(tc, test_memory_fixed_after_startup);
    tcase_add_test(tc, test_snapshots);
    tcase_add_test(tc, test_spin_is_clean);
    tcase_add_test(tc, test_commands_pause_step_recorded);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(server_suite)
