/*
 * With the viewer drawing at full rate on its own thread (under Xvfb: Mesa's software OpenGL),
 * the tick thread still never allocates, frees, locks, waits, does I/O or makes a system call
 * after start-up (the interposition of tests/common, watching the tick thread only), and every
 * tick is on time as before: the viewer only reads snapshots.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

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

static Suite *viewer_suite(void)
{
    Suite *s = suite_create("viewer");
    TCase *tc = tcase_create("clean");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tick_thread_clean_with_viewer);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(viewer_suite)
