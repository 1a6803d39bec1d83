/*
 * The mouse device through the viewer's input path: a scripted ctrl + drag (fri_view_button /
 * fri_view_motion, what the window's GLFW callbacks call) moves the pointer to the right across
 * the picture while the server runs in real time; the hand behind the pointer pushes a 1 kg block
 * (tests/render/mouse-push.yaml). The block must move along +x (the picture's right with this
 * camera), the felt force must point back (−x) while it is pushed, and never exceed the safety
 * chain's cap (2 N here), which must have been hit (the coupling pushes the block with more).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frtest.h"
#include "fureru/server.h"
#include "server_internal.h"
#include "view.h"

static void *run_thread(void *arg)
{
    return (void *)(intptr_t)fr_server_run(arg);
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

typedef struct seen {
    fr_vec3 block0, block;
    double min_fx, max_felt, fx_sum;
    int pushing;
} seen;

static void look(fr_server *s, int block, seen *o, bool first)
{
    int slot;
    fri_tbuf *b = fri_server_snapshots(s);
    const fri_snap *sn = fri_tbuf_acquire(b, &slot);
    if (!sn) return;
    fr_vec3 p = fri_snap_bodies_c(sn)[block].p;
    if (first) o->block0 = p;
    o->block = p;
    double felt = fr_v3_norm(sn->felt);
    if (felt > o->max_felt) o->max_felt = felt;
    if (sn->felt.x < o->min_fx) o->min_fx = sn->felt.x;
    if (p.x - o->block0.x > 0.002) { /* the block moves: it is being pushed */
        o->fx_sum += sn->felt.x;
        o->pushing++;
    }
    fri_tbuf_release(b, slot);
}

START_TEST(test_mouse_drag_pushes_block)
{
    fr_scene *sc = NULL;
    fr_diag d;
    ck_assert_int_eq(fr_scene_load(frtest_path("tests/render/mouse-push.yaml"), NULL, 0, &sc, &d),
                     FR_OK);
    fr_device *mouse;
    ck_assert_int_eq(fri_mouse_open(1e-3, &mouse), FR_OK);
    fr_safety_params sp;
    fr_safety_params_default(&sp);
    sp.max_force = 2.0; /* the cap the felt force must respect */
    sp.ramp_time = 0.1;
    fr_server_opts o = fr_server_opts_default();
    o.duration = 2.6;
    o.realtime_sched = false;
    fri_server_ext ext = {.device = mouse, .safety = &sp};
    fr_server *s;
    ck_assert_int_eq(fri_server_create_ext(sc, &o, &ext, &s, &d), FR_OK);
    const fri_snap_model *m = fri_server_model(s);
    int block = -1;
    for (int k = 0; k < m->nbodies; k++)
        if (!strcmp(m->bodies[k].name, "block")) block = k;
    ck_assert_int_ge(block, 0);
    const fr_scene_viewer *sv = fr_scene_get_viewer(sc);
    fri_camera cam = {sv->target, sv->distance, sv->yaw, sv->pitch, sv->fov};
    fri_view v;
    fri_view_init(&v, m, &cam, 1280, 720, mouse);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, run_thread, s), 0);
    sleep_ms(300); /* the hand rests; the safety chain engages */
    seen obs = {0};
    look(s, block, &obs, true);
    /* grab the pointer where it is drawn */
    fri_view_sync_pointer(&v, NULL);
    double x, y;
    ck_assert(fri_camera_project(&v.cam, 1280, 720, v.pointer_world, &x, &y));
    fri_view_button(&v, FRI_BUTTON_LEFT, true, FRI_MOD_CTRL, x, y);
    /* drag right by the pixels that make 9 cm (the mouse's workspace is ±10 cm) at the pointer's
     * depth, over 1.2 s */
    double x2, y2;
    fr_vec3 goal = fr_v3_add(v.pointer_world, fr_v3(0.09, 0, 0));
    ck_assert(fri_camera_project(&v.cam, 1280, 720, goal, &x2, &y2));
    for (int i = 1; i <= 120; i++) {
        fri_view_motion(&v, x + (x2 - x) * i / 120.0, y + (y2 - y) * i / 120.0);
        sleep_ms(10);
        look(s, block, &obs, false);
    }
    for (int i = 0; i < 50; i++) { /* hold */
        sleep_ms(10);
        look(s, block, &obs, false);
    }
    fri_view_button(&v, FRI_BUTTON_LEFT, false, FRI_MOD_CTRL, x2, y2);
    /* the pointer went where the drag put it: 9 cm along +x */
    ck_assert_double_lt(fabs(v.pointer_world.x - goal.x), 1e-3);
    void *ret;
    pthread_join(th, &ret);
    ck_assert_int_eq((int)(intptr_t)ret, FR_OK);
    fr_server_stats st;
    fr_server_get_stats(s, &st);
    fprintf(stderr,
            "# block moved %.4f m (y %.4f), pushed in %d samples, mean felt fx %.3f N, min fx "
            "%.3f N, max |felt| %.3f N, safety capped %llu ticks\n",
            obs.block.x - obs.block0.x, obs.block.y - obs.block0.y, obs.pushing,
            obs.pushing ? obs.fx_sum / obs.pushing : 0.0, obs.min_fx, obs.max_felt,
            (unsigned long long)st.safety.capped);
    ck_assert_double_gt(obs.block.x - obs.block0.x, 0.01); /* it moved along the drag */
    ck_assert_int_gt(obs.pushing, 10);
    ck_assert_double_lt(obs.fx_sum / obs.pushing, -0.5); /* felt: back against the push */
    ck_assert_double_le(obs.max_felt, 2.0 + 1e-9);       /* never above the cap */
    ck_assert_uint_gt(st.safety.capped, 0);              /* which the push reached */
    fr_server_destroy(s);
    fr_scene_destroy(sc);
}
END_TEST

static Suite *mouse_suite(void)
{
    Suite *s = suite_create("mouse");
    TCase *tc = tcase_create("drag");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_mouse_drag_pushes_block);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(mouse_suite)
