/*
 * Pixel checks of a viewer screenshot (TAP): usage
 *   pixcheck PICTURE.png LOG.csv SCENE GX,GY [--set K=V ...]
 * The picture is `fureru run SCENE --screenshot PICTURE.png --log LOG.csv` (the log's last row is
 * the state drawn). The camera comes from the scene's viewer.camera and the projection is done
 * here on its own (a pinhole camera from yaw, pitch, distance and field of view, as
 * docs/scenes.md states them), not with the viewer's code. Checked where the projection says:
 *  - every dynamic body's centre is drawn in its colour (the viewer's palette by body index,
 *    hue within 25°, saturated), robot bases in the links' blue;
 *  - the ground at (GX, GY, 0) (a point away from bodies and shadows) is grey: unsaturated and
 *    light, not the sky's blue;
 *  - with a device: the pointer (the device position mapped by the scene's workspace) is yellow
 *    and the felt-force arrow's middle (FRI_VIEW_FELT_SCALE × scale m/N from the pointer) magenta.
 * Prints the pixel of each item so that two cameras can be compared ("at X Y").
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/coupling.h"
#include "fureru/scene.h"

static int W, H;
static unsigned char *img;
static int n, fails;

static int load_png(const char *path)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&im, path)) return -1;
    im.format = PNG_FORMAT_RGB;
    img = malloc(PNG_IMAGE_SIZE(im));
    if (!img || !png_image_finish_read(&im, NULL, img, 0, NULL)) return -1;
    W = (int)im.width, H = (int)im.height;
    return 0;
}

static void ok(int good, const char *fmt, const char *what, double x, double y, const char *why)
{
    (void)fmt;
    printf("%s %d - %s at %.0f %.0f%s%s\n", good ? "ok" : "not ok", ++n, what, x, y,
           why[0] ? ": " : "", why);
    if (!good) fails++;
}

static void hsv(const unsigned char *p, double *h, double *s, double *v)
{
    double r = p[0] / 255.0, g = p[1] / 255.0, b = p[2] / 255.0;
    double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), d = mx - mn;
    *v = mx;
    *s = mx > 0 ? d / mx : 0;
    if (d <= 0) {
        *h = 0;
        return;
    }
    double hh = mx == r ? fmod((g - b) / d, 6.0) : mx == g ? (b - r) / d + 2 : (r - g) / d + 4;
    *h = hh * 60.0;
    if (*h < 0) *h += 360.0;
}

/* The camera of docs/scenes.md. */
static fr_scene_viewer cam;
static bool project(fr_vec3 p, double *px, double *py)
{
    const double D = 3.14159265358979323846 / 180.0;
    double cy = cos(cam.yaw * D), sy = sin(cam.yaw * D), cp = cos(cam.pitch * D),
           sp = sin(cam.pitch * D);
    fr_vec3 eye = {cam.target.x + cam.distance * sy * cp, cam.target.y - cam.distance * cy * cp,
                   cam.target.z + cam.distance * sp};
    fr_vec3 f = {-sy * cp, cy * cp, -sp}; /* towards the target */
    fr_vec3 r = {cy, sy, 0};              /* f × z, normalised */
    fr_vec3 u = {-sp * sy, sp * cy, cp};  /* r × f */
    fr_vec3 d = {p.x - eye.x, p.y - eye.y, p.z - eye.z};
    double xc = d.x * r.x + d.y * r.y + d.z * r.z, yc = d.x * u.x + d.y * u.y + d.z * u.z,
           zc = d.x * f.x + d.y * f.y + d.z * f.z;
    if (zc <= 0) return false;
    double k = (H / 2.0) / tan(0.5 * cam.fov * D);
    *px = W / 2.0 + k * xc / zc;
    *py = H / 2.0 - k * yc / zc;
    return *px >= 0 && *py >= 0 && *px < W && *py < H;
}

/* Does a pixel within `rad` of (x, y) pass `test`? */
typedef int (*pix_test)(const unsigned char *p, const void *arg);
static int near(double x, double y, int rad, pix_test t, const void *arg)
{
    for (int dy = -rad; dy <= rad; dy++)
        for (int dx = -rad; dx <= rad; dx++) {
            int X = (int)lround(x) + dx, Y = (int)lround(y) + dy;
            if (X < 0 || Y < 0 || X >= W || Y >= H) continue;
            if (t(img + 3 * ((size_t)Y * W + X), arg)) return 1;
        }
    return 0;
}

static int is_hue(const unsigned char *p, const void *arg)
{
    const double *want = arg; /* hue, min saturation */
    double h, s, v;
    hsv(p, &h, &s, &v);
    double dh = fabs(h - want[0]);
    if (dh > 180) dh = 360 - dh;
    return s >= want[1] && v > 0.12 && dh <= 25.0;
}

static int is_ground(const unsigned char *p, const void *arg)
{
    (void)arg;
    double h, s, v;
    hsv(p, &h, &s, &v);
    return s < 0.09 && v > 0.35 && v < 0.95;
}

static int is_yellow(const unsigned char *p, const void *arg)
{
    (void)arg;
    return p[0] > 200 && p[1] > 170 && p[2] < 90;
}

static int is_magenta(const unsigned char *p, const void *arg)
{
    (void)arg;
    return p[0] > 170 && p[2] > 170 && p[1] < 90;
}

/* the viewer's colours (src/render/viewer.c) */
static const double PALETTE[][3] = {{0.90, 0.45, 0.15}, {0.85, 0.25, 0.30}, {0.55, 0.75, 0.20},
                                    {0.95, 0.65, 0.10}, {0.65, 0.40, 0.80}, {0.85, 0.55, 0.35}};
static const double LINK[3] = {0.36, 0.50, 0.74};

static double hue_of(const double *c)
{
    unsigned char p[3] = {(unsigned char)(c[0] * 255), (unsigned char)(c[1] * 255),
                          (unsigned char)(c[2] * 255)};
    double h, s, v;
    hsv(p, &h, &s, &v);
    return h;
}

int main(int argc, char **argv)
{
    double gx = 0, gy = 0;
    if (argc < 5 || sscanf(argv[4], "%lf,%lf", &gx, &gy) != 2) {
        fprintf(stderr, "usage: pixcheck PICTURE.png LOG.csv SCENE GX,GY [--set K=V ...]\n");
        return 2;
    }
    if (load_png(argv[1])) {
        printf("not ok 1 - cannot read %s\n1..1\n", argv[1]);
        return 1;
    }
    const char *sets[32];
    int nsets = 0;
    for (int i = 5; i + 1 < argc && nsets < 32; i += 2)
        if (!strcmp(argv[i], "--set")) sets[nsets++] = argv[i + 1];
    fr_scene *sc = NULL;
    fr_diag d;
    if (fr_scene_load(argv[3], sets, nsets, &sc, &d)) {
        printf("not ok 1 - scene: %s\n1..1\n", d.msg);
        return 1;
    }
    cam = *fr_scene_get_viewer(sc);
    /* the log's header and last row */
    FILE *f = fopen(argv[2], "r");
    static char head[1 << 20], row[1 << 20], line[1 << 20];
    if (!f || !fgets(head, sizeof head, f)) return 1;
    while (fgets(line, sizeof line, f)) memcpy(row, line, sizeof line);
    fclose(f);
    char *names[4096];
    double vals[4096];
    int nc = 0;
    for (char *t = strtok(head, ",\n"); t && nc < 4096; t = strtok(NULL, ",\n")) names[nc++] = t;
    int nv = 0;
    for (char *t = strtok(row, ",\n"); t && nv < 4096; t = strtok(NULL, ",\n"))
        vals[nv++] = strtod(t, NULL);
    fr_world *w = fr_scene_world(sc);
    /* bodies */
    for (int k = 0; k < fr_world_body_count(w); k++) {
        fr_body_id id = fr_world_body_at(w, k);
        const char *nm = fr_body_name(w, id);
        int type = fr_body_type(w, id);
        char key[128];
        snprintf(key, sizeof key, "%s.px", nm);
        int c = -1;
        for (int i = 0; i < nc; i++)
            if (!strcmp(names[i], key)) c = i;
        if (c < 0 || c + 2 >= nv) continue;
        const fr_scene_device *sd = fr_scene_get_device(sc);
        if (sd->present && fr_body_id_eq(sd->proxy, id)) continue; /* under the pointer */
        fr_vec3 p = {vals[c], vals[c + 1], vals[c + 2]};
        double x, y;
        char what[160];
        snprintf(what, sizeof what, "body %s", nm);
        if (!project(p, &x, &y)) continue;
        const double *col =
            type == FR_BODY_LINK || type == FR_BODY_KINEMATIC ? LINK : PALETTE[k % 6];
        if (strchr(nm, '/')) col = LINK; /* a robot's base */
        double want[2] = {hue_of(col), 0.25};
        char why[80];
        const unsigned char *px = img + 3 * ((size_t)lround(y) * W + lround(x));
        snprintf(why, sizeof why, "want hue %.0f, pixel %d,%d,%d", want[0], px[0], px[1], px[2]);
        ok(near(x, y, 2, is_hue, want), "", what, x, y, why);
    }
    /* the ground */
    {
        double x, y;
        fr_vec3 g = {gx, gy, 0.0};
        if (project(g, &x, &y)) {
            const unsigned char *px = img + 3 * ((size_t)lround(y) * W + lround(x));
            char why[80];
            snprintf(why, sizeof why, "pixel %d,%d,%d", px[0], px[1], px[2]);
            ok(near(x, y, 1, is_ground, NULL), "", "ground", x, y, why);
        } else {
            ok(0, "", "ground (not in the picture)", 0, 0, "");
        }
    }
    /* the pointer and the felt force */
    const fr_scene_device *sd = fr_scene_get_device(sc);
    int cx = -1, cf = -1;
    for (int i = 0; i < nc; i++) {
        if (!strcmp(names[i], "device.px")) cx = i;
        if (!strcmp(names[i], "device.fx")) cf = i;
    }
    if (sd->present && cx >= 0 && cf >= 0) {
        fr_workspace ws = {sd->scale, sd->workspace.q, sd->workspace.p};
        fr_vec3 pd = {vals[cx], vals[cx + 1], vals[cx + 2]};
        fr_vec3 fd = {vals[cf], vals[cf + 1], vals[cf + 2]};
        fr_vec3 pw = fr_workspace_point_to_world(&ws, pd);
        fr_vec3 fw = fr_q_rotate(ws.rot, fd);
        double x, y;
        if (project(pw, &x, &y))
            ok(near(x, y, 3, is_yellow, NULL), "", "pointer", x, y, "");
        else
            ok(0, "", "pointer (not in the picture)", 0, 0, "");
        double L = 0.02 * ws.scale; /* FRI_VIEW_FELT_SCALE */
        fr_vec3 mid = fr_v3_add(pw, fr_v3_scale(fw, 0.6 * L));
        double fx, fy;
        if (project(mid, &fx, &fy) && hypot(fx - x, fy - y) > 12)
            ok(near(fx, fy, 3, is_magenta, NULL), "", "felt-force arrow", fx, fy, "");
        else
            ok(0, "", "felt-force arrow (too short or outside)", fx, fy, "");
    }
    printf("1..%d\n", n);
    fr_scene_destroy(sc);
    free(img);
    return fails ? 1 : 0;
}
