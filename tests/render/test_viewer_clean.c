/*
 * With the viewer drawing at full rate on its own thread (under Xvfb: Mesa's software OpenGL),
 * the tick thread still never allocates, frees, locks, waits, does I/O or makes a system call
 * after start-up (the interposition of tests/common, watching the tick thread only), and every
 * tick is on time as before: the viewer only reads snapshots. And with more than one CPU no
 * thread of the process but the tick thread may run on the tick's CPU while the run lasts: not
 * the viewer, not the threads its OpenGL driver starts with every CPU allowed, not a thread the
 * application started before the run; their sets come back after it.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "cpus.h"
#include "frtest.h"
#include "fureru/server.h"
#include "interpose.h"
#include "server_internal.h"
#include "viewer.h"

static void arm_on_tick_thread(void *arg)
{
    (void)arg;
    fri_watch_thread(pthread_self());
    fri_watch_arm();
}

typedef struct vt {
    fri_viewer_opts o;
    int err;
    char msg[256];
} vt;

static void *viewer_main(void *arg)
{
    vt *v = arg;
    v->err = fri_viewer_run(&v->o, v->msg, sizeof v->msg);
    return NULL;
}

static int on_command(void *ctx, int code, double value)
{
    return fri_server_command(ctx, code, value);
}

START_TEST(test_tick_thread_clean_with_viewer)
{
    fr_scene *sc = NULL;
    fr_diag d;
    ck_assert_int_eq(fr_scene_load(frtest_path("config/scenes/default.yaml"), NULL, 0, &sc, &d),
                     FR_OK);
    fr_server_opts o = fr_server_opts_default();
    o.duration = 1.0; /* real time */
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    fri_server_set_tick_hook(s, arm_on_tick_thread, NULL);
    _Atomic long frames = 0;
    vt v = {.o = {.snaps = fri_server_snapshots(s),
                  .model = fri_server_model(s),
                  .camera = fr_scene_get_viewer(sc),
                  .command = on_command,
                  .ctx = s,
                  .frames = &frames}};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, viewer_main, &v), 0);
    /* the viewer is drawing (the server published its start before the run) */
    for (int i = 0; i < 20000 && atomic_load(&frames) < 1 && !v.err; i++) usleep(1000);
    ck_assert_msg(atomic_load(&frames) >= 1, "the viewer did not start: %s", v.msg);
    long before = atomic_load(&frames);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    long during = atomic_load(&frames) - before;
    fri_watch_counts c = fri_watch_disarm();
    fri_viewer_request_close();
    pthread_join(th, NULL);
    ck_assert_msg(v.err == FR_OK, "viewer: %s", v.msg);
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    fprintf(stderr, "# %ld frames drawn during %llu ticks; wake-up p99 %.1f us, step p99 %.1f us\n",
            during, (unsigned long long)st.ticks, st.latency.p99 * 1e6, st.step.p99 * 1e6);
    ck_assert_int_gt(during, 2); /* it really drew while the ticks ran */
    ck_assert_uint_eq(st.ticks, 1000);
    if (fri_watch_available()) {
        ck_assert_int_eq(c.allocs, 0);
        ck_assert_int_eq(c.frees, 0);
    }
    ck_assert_int_eq(c.locks, 0);
    ck_assert_int_eq(c.waits, 0);
    ck_assert_int_eq(c.io, 0);
    ck_assert_int_eq(c.yields, 0);
    ck_assert_int_eq(c.syscalls, 0);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
}
END_TEST

/* Placement: the tick thread's id (from its hook) and what a watcher thread saw meanwhile. */
typedef struct placement {
    _Atomic pid_t tick;
    atomic_bool done;
    int tick_cpu;
    long samples, bad; /* samples taken; threads other than the tick's found on its CPU */
    long tick_bad;     /* samples where the tick thread could run elsewhere */
    char offender[64]; /* the first such thread's name */
    cpu_set_t start;   /* the watcher's own set before the run */
    bool restored;     /* the watcher's set after the run equals it */
} placement;

static void note_tick(void *arg)
{
    placement *p = arg;
    atomic_store(&p->tick, fri_cpus_tid());
}

static void sample_threads(placement *p)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    pid_t tick = atomic_load(&p->tick);
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0) continue;
        cpu_set_t set;
        if (sched_getaffinity(tid, sizeof set, &set) != 0) continue; /* it ended */
        if (tid == tick) {
            if (!CPU_ISSET(p->tick_cpu, &set) || CPU_COUNT(&set) != 1) p->tick_bad++;
        } else if (CPU_ISSET(p->tick_cpu, &set)) {
            if (!p->bad++) {
                char path[64];
                snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
                FILE *f = fopen(path, "r");
                if (!f || !fgets(p->offender, sizeof p->offender, f))
                    snprintf(p->offender, sizeof p->offender, "thread %d", (int)tid);
                if (f) fclose(f);
            }
        }
    }
    closedir(d);
    p->samples++;
}

/* A thread of the application, started before the run with every CPU the process has. */
static void *watcher_main(void *arg)
{
    placement *p = arg;
    sched_getaffinity(0, sizeof p->start, &p->start);
    while (!atomic_load(&p->tick) && !atomic_load(&p->done)) usleep(1000);
    usleep(100000); /* the supervisor's first sweep follows the tick's start within ~5 ms */
    while (!atomic_load(&p->done)) {
        sample_threads(p);
        usleep(20000);
    }
    cpu_set_t now;
    p->restored = sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &p->start);
    return NULL;
}

START_TEST(test_viewer_keeps_off_tick_cpu)
{
    fr_scene *sc = NULL;
    fr_diag d;
    ck_assert_int_eq(fr_scene_load(frtest_path("config/scenes/default.yaml"), NULL, 0, &sc, &d),
                     FR_OK);
    fr_server_opts o = fr_server_opts_default();
    o.duration = 1.0; /* real time */
    fr_server *s;
    ck_assert_int_eq(fr_server_create(sc, &o, &s, NULL), FR_OK);
    placement p = {.tick_cpu = fri_server_tick_cpu_plan(s)};
    fri_server_set_tick_hook(s, note_tick, &p);
    /* the viewer as a library user would start it: nobody kept it off the tick's CPU, so the
     * GL driver's threads start with every CPU too */
    _Atomic long frames = 0;
    vt v = {.o = {.snaps = fri_server_snapshots(s),
                  .model = fri_server_model(s),
                  .camera = fr_scene_get_viewer(sc),
                  .command = on_command,
                  .ctx = s,
                  .frames = &frames}};
    pthread_t th, wt;
    ck_assert_int_eq(pthread_create(&th, NULL, viewer_main, &v), 0);
    for (int i = 0; i < 20000 && atomic_load(&frames) < 1 && !v.err; i++) usleep(1000);
    ck_assert_msg(atomic_load(&frames) >= 1, "the viewer did not start: %s", v.msg);
    ck_assert_int_eq(pthread_create(&wt, NULL, watcher_main, &p), 0);
    long before = atomic_load(&frames);
    ck_assert_int_eq(fr_server_run(s), FR_OK);
    long during = atomic_load(&frames) - before;
    atomic_store(&p.done, true);
    pthread_join(wt, NULL);
    fri_viewer_request_close();
    pthread_join(th, NULL);
    ck_assert_msg(v.err == FR_OK, "viewer: %s", v.msg);
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    fr_server_destroy(s);
    fr_scene_destroy(sc);
    if (p.tick_cpu < 0 || st.tick_cpu_index < 0) {
        /* one CPU (or a set without the last one): nothing to keep apart; the run still works */
        fprintf(stderr, "# tick thread not pinned (%ld CPUs online): placement not checked\n",
                sysconf(_SC_NPROCESSORS_ONLN));
        return;
    }
    fprintf(stderr,
            "# %ld frames drawn; %ld samples of every thread: %ld on CPU %d besides the tick "
            "thread\n",
            during, p.samples, p.bad, p.tick_cpu);
    ck_assert_int_gt(during, 2);
    ck_assert_int_gt(p.samples, 10);
    ck_assert_msg(p.bad == 0, "%ld threads found allowed on the tick's CPU %d, first '%s'", p.bad,
                  p.tick_cpu, p.offender);
    ck_assert_int_eq(p.tick_bad, 0);
    /* the sweep gives the application's threads their sets back (the watcher had every CPU) */
    ck_assert_msg(p.restored, "the watcher's CPUs were not given back after the run");
}
END_TEST

/* One CPU (or a set holding only the last one): no CPU is taken from anybody. */
START_TEST(test_one_cpu_keeps_everything)
{
    cpu_set_t all, one;
    ck_assert_int_eq(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    int c = 0;
    while (!CPU_ISSET(c, &all)) c++;
    CPU_SET(c, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    ck_assert_int_eq(fri_cpus_tick_choice(), -1);
    ck_assert(!fri_cpus_keep_off(c)); /* it would leave the thread nowhere to run */
    cpu_set_t now;
    ck_assert_int_eq(sched_getaffinity(0, sizeof now, &now), 0);
    ck_assert(CPU_EQUAL(&now, &one));
    ck_assert_int_eq(sched_setaffinity(0, sizeof all, &all), 0);
}
END_TEST

static Suite *viewer_suite(void)
{
    Suite *s = suite_create("viewer");
    TCase *tc = tcase_create("clean");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tick_thread_clean_with_viewer);
    tcase_add_test(tc, test_viewer_keeps_off_tick_cpu);
    tcase_add_test(tc, test_one_cpu_keeps_everything);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(viewer_suite)
