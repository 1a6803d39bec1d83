/*
 * A 1 kg box dropped from 0.5 m onto the ground, stepped for 2 s at 1 ms, its pose printed every
 * 0.25 s: the smallest program on libfureru's public API. Build it against an installed fureru:
 *
 *     cc -std=c11 box-drop.c $(pkg-config --cflags --libs fureru) -o box-drop && ./box-drop
 *
 * The box falls freely (z = 0.5 − g t²/2 until it lands at t ≈ 0.26 s) and then rests with its
 * centre at its half height, 0.1 m, pressed a little into the ground by the penalty contact.
 */
#include <stdio.h>

#include <fureru/fureru.h>

static int check(int err, const char *what)
{
    if (err) fprintf(stderr, "box-drop: %s: %s\n", what, fr_strerror(err));
    return err;
}

int main(void)
{
    fr_world_def wd = fr_world_def_default(); /* dt 1 ms, g = (0, 0, -9.81) */
    wd.max_bodies = 2;
    wd.max_shapes = 2;
    fr_world *w = NULL;
    if (check(fr_world_create(&wd, &w), "world")) return 1;

    /* the ground: a static 10 m × 10 m × 1 m box whose top face is z = 0 */
    fr_shape *ground_shape = NULL, *box_shape = NULL;
    fr_body_def gd = fr_body_def_default();
    snprintf(gd.name, sizeof gd.name, "ground");
    gd.type = FR_BODY_STATIC;
    gd.pose.p = fr_v3(0, 0, -0.5);
    fr_body_id ground, box;
    int err = fr_world_add_body(w, &gd, &ground);
    if (!err) err = fr_shape_create_box(fr_v3(5, 5, 0.5), &ground_shape);
    if (!err) {
        fr_shape_def sd = fr_shape_def_default(ground_shape);
        err = fr_body_add_shape(w, ground, &sd);
    }

    /* the box: 0.2 m cube, 1 kg, its centre 0.5 m up */
    fr_body_def bd = fr_body_def_default();
    snprintf(bd.name, sizeof bd.name, "box");
    bd.mass = 1.0;
    double I = bd.mass * (0.2 * 0.2 + 0.2 * 0.2) / 12; /* kg·m², solid cube about its centre */
    bd.inertia = fr_m3_diag(fr_v3(I, I, I));
    bd.pose.p = fr_v3(0, 0, 0.5);
    if (!err) err = fr_world_add_body(w, &bd, &box);
    if (!err) err = fr_shape_create_box(fr_v3(0.1, 0.1, 0.1), &box_shape);
    if (!err) {
        fr_shape_def sd = fr_shape_def_default(box_shape);
        err = fr_body_add_shape(w, box, &sd);
    }
    if (check(err, "bodies")) {
        fr_world_destroy(w);
        return 1;
    }

    printf("fureru %s: a box dropped on the ground\n", fr_version());
    printf("%8s %10s %10s %10s\n", "t (s)", "x (m)", "y (m)", "z (m)");
    for (int k = 0; k <= 2000; k++) {
        if (k % 250 == 0) {
            fr_pose p;
            fr_body_get_pose(w, box, &p);
            printf("%8.3f %10.6f %10.6f %10.6f\n", fr_world_time(w), p.p.x, p.p.y, p.p.z);
        }
        if (k < 2000 && check(fr_world_step(w), "step")) {
            fr_world_destroy(w);
            return 1;
        }
    }
    fr_world_destroy(w);
    return 0;
}
