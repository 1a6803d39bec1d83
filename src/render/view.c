/* The orbit camera, the mouse device and the mouse's meaning (view.h). */
#include "view.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/coupling.h"

static const double DEG = 3.14159265358979323846 / 180.0;

void fri_camera_frame(const fri_camera *c, fr_vec3 *eye, fr_vec3 *right, fr_vec3 *up, fr_vec3 *fwd)
{
    double y = c->yaw * DEG, p = c->pitch * DEG;
    fr_vec3 off = fr_v3(sin(y) * cos(p), -cos(y) * cos(p), sin(p));
    fr_vec3 e = fr_v3_add(c->target, fr_v3_scale(off, c->distance));
    fr_vec3 f = fr_v3_scale(off, -1.0);
    fr_vec3 r = fr_v3_normalize(fr_v3_cross(f, fr_v3(0, 0, 1)));
    fr_vec3 u = fr_v3_cross(r, f);
    if (eye) *eye = e;
    if (right) *right = r;
    if (up) *up = u;
    if (fwd) *fwd = f;
}

static void clip_range(const fri_camera *c, double *n, double *f)
{
    *n = fmax(1e-3, 0.02 * c->distance);
    *f = 200.0 * c->distance + 10.0;
}

void fri_camera_matrices(const fri_camera *c, int w, int h, float view[16], float proj[16])
{
    fr_vec3 e, r, u, f;
    fri_camera_frame(c, &e, &r, &u, &f);
    float V[16] = {(float)r.x,
                   (float)u.x,
                   (float)-f.x,
                   0,
                   (float)r.y,
                   (float)u.y,
                   (float)-f.y,
                   0,
                   (float)r.z,
                   (float)u.z,
                   (float)-f.z,
                   0,
                   (float)-fr_v3_dot(r, e),
                   (float)-fr_v3_dot(u, e),
                   (float)fr_v3_dot(f, e),
                   1};
    memcpy(view, V, sizeof V);
    double n, fa;
    clip_range(c, &n, &fa);
    double t = 1.0 / tan(0.5 * c->fov * DEG), a = (double)w / (double)(h > 0 ? h : 1);
    float P[16] = {(float)(t / a),
                   0,
                   0,
                   0,
                   0,
                   (float)t,
                   0,
                   0,
                   0,
                   0,
                   (float)(-(fa + n) / (fa - n)),
                   -1,
                   0,
                   0,
                   (float)(-2.0 * fa * n / (fa - n)),
                   0};
    memcpy(proj, P, sizeof P);
}

bool fri_camera_project(const fri_camera *c, int w, int h, fr_vec3 p, double *px, double *py)
{
    fr_vec3 e, r, u, f;
    fri_camera_frame(c, &e, &r, &u, &f);
    fr_vec3 d = fr_v3_sub(p, e);
    double z = fr_v3_dot(d, f);
    if (z <= 0) return false;
    double t = 1.0 / tan(0.5 * c->fov * DEG), a = (double)w / (double)h;
    double nx = fr_v3_dot(d, r) * t / (a * z), ny = fr_v3_dot(d, u) * t / z;
    *px = (nx + 1.0) * 0.5 * w;
    *py = (1.0 - ny) * 0.5 * h;
    return true;
}

void fri_camera_ray(const fri_camera *c, int w, int h, double px, double py, fr_vec3 *o,
                    fr_vec3 *dir)
{
    fr_vec3 e, r, u, f;
    fri_camera_frame(c, &e, &r, &u, &f);
    double t = 1.0 / tan(0.5 * c->fov * DEG), a = (double)w / (double)h;
    double nx = 2.0 * px / w - 1.0, ny = 1.0 - 2.0 * py / h;
    fr_vec3 d = fr_v3_add(f, fr_v3_add(fr_v3_scale(r, nx * a / t), fr_v3_scale(u, ny / t)));
    *o = e;
    *dir = fr_v3_normalize(d);
}

fri_camera fri_camera_frame_scene(const fri_snap_model *m, const fr_pose *poses)
{
    fri_camera c = {fr_v3_zero(), 1.0, 30.0, 25.0, 45.0};
    fr_vec3 lo = fr_v3(1e30, 1e30, 1e30), hi = fr_v3(-1e30, -1e30, -1e30);
    int n = 0;
    for (int k = 0; k < m->nbodies; k++) {
        if (m->bodies[k].kind == FRI_SNAP_STATIC) continue;
        for (int i = 0; i < m->bodies[k].nshapes; i++) {
            const fri_snap_shape *s = &m->bodies[k].shapes[i];
            fr_vec3 cpos = fr_pose_apply(poses[k], s->local.p);
            double r = s->shape->bound_radius;
            lo = fr_v3(fmin(lo.x, cpos.x - r), fmin(lo.y, cpos.y - r), fmin(lo.z, cpos.z - r));
            hi = fr_v3(fmax(hi.x, cpos.x + r), fmax(hi.y, cpos.y + r), fmax(hi.z, cpos.z + r));
            n++;
        }
    }
    if (!n) return c;
    c.target = fr_v3_scale(fr_v3_add(lo, hi), 0.5);
    double rad = 0.5 * fr_v3_norm(fr_v3_sub(hi, lo));
    c.distance = fmax(0.3, 1.2 * rad / tan(0.5 * c.fov * DEG));
    return c;
}

/* ---------------------------------------------------------------- the mouse device */

typedef struct mouse_grip {
    fr_vec3 p;
} mouse_grip;

typedef struct mouse_dev {
    fr_device dev;
    fri_tbuf grip; /* viewer → tick thread (one reader) */
    double dt;
    fr_vec3 last, vel;
    bool have_last;
    uint64_t seq;
    _Atomic uint64_t set_count;
    fr_vec3 last_set; /* viewer side */
} mouse_dev;

static int m_read(fr_device *dev, fr_device_state *out)
{
    mouse_dev *m = (mouse_dev *)dev;
    int slot;
    const mouse_grip *g = fri_tbuf_acquire(&m->grip, &slot);
    fr_vec3 p = fr_v3_zero();
    if (g) {
        p = g->p;
        fri_tbuf_release(&m->grip, slot);
    }
    /* velocity: the difference over the tick, low-passed (a mouse moves in jumps at the
     * display's rate) at about 30 Hz */
    fr_vec3 raw = m->have_last ? fr_v3_scale(fr_v3_sub(p, m->last), 1.0 / m->dt) : fr_v3_zero();
    double a = 1.0 - exp(-2.0 * 3.14159265358979 * 30.0 * m->dt);
    m->vel = fr_v3_add(m->vel, fr_v3_scale(fr_v3_sub(raw, m->vel), a));
    m->last = p;
    m->have_last = true;
    memset(out, 0, sizeof *out);
    out->pose.p = p;
    out->pose.q = fr_q_identity();
    out->vel = m->vel;
    out->status = FR_DEVICE_OK;
    out->seq = ++m->seq;
    return FR_OK;
}

static int m_write(fr_device *dev, const fr_device_cmd *c)
{
    (void)dev;
    (void)c; /* a mouse renders no force: the viewer draws it */
    return FR_OK;
}

static void m_minimum(fr_device *dev)
{
    (void)dev;
}

static void m_close(fr_device *dev)
{
    if (!dev) return;
    mouse_dev *m = (mouse_dev *)dev;
    fri_tbuf_destroy(&m->grip);
    free(m);
}

static const fr_device_ops mouse_ops = {m_read, m_write, m_minimum, NULL, m_close};

int fri_mouse_open(double dt, fr_device **out)
{
    mouse_dev *m = calloc(1, sizeof *m);
    if (!m) return FR_ERR_NOMEM;
    if (fri_tbuf_init(&m->grip, sizeof(mouse_grip), 1)) {
        free(m);
        return FR_ERR_NOMEM;
    }
    m->dt = dt > 0 ? dt : 1e-3;
    m->dev.ops = &mouse_ops;
    m->dev.impl = m;
    fr_device_desc *d = &m->dev.desc;
    snprintf(d->name, sizeof d->name, "mouse");
    snprintf(d->driver, sizeof d->driver, "mouse");
    d->dof_sensed = d->dof_forced = 3;
    d->max_force = 10.0;
    d->max_stiffness = 3000.0;
    d->max_damping = 20.0;
    d->workspace_min = fr_v3(-0.1, -0.1, -0.1);
    d->workspace_max = fr_v3(0.1, 0.1, 0.1);
    atomic_init(&m->set_count, 0);
    fri_mouse_set(&m->dev, fr_v3_zero());
    *out = &m->dev;
    return FR_OK;
}

bool fri_is_mouse(const fr_device *dev)
{
    return dev && dev->ops == &mouse_ops;
}

void fri_mouse_set(fr_device *dev, fr_vec3 p)
{
    mouse_dev *m = (mouse_dev *)dev;
    const fr_device_desc *d = &dev->desc;
    p = fr_v3(fmin(fmax(p.x, d->workspace_min.x), d->workspace_max.x),
              fmin(fmax(p.y, d->workspace_min.y), d->workspace_max.y),
              fmin(fmax(p.z, d->workspace_min.z), d->workspace_max.z));
    mouse_grip *g = fri_tbuf_back(&m->grip);
    g->p = p;
    fri_tbuf_publish(&m->grip);
    m->last_set = p;
}

fr_vec3 fri_mouse_get(const fr_device *dev)
{
    return ((const mouse_dev *)dev)->last_set;
}

/* ---------------------------------------------------------------- input */

void fri_view_init(fri_view *v, const fri_snap_model *m, const fri_camera *cam, int w, int h,
                   fr_device *mouse)
{
    memset(v, 0, sizeof *v);
    v->cam = v->home = *cam;
    v->width = w;
    v->height = h;
    v->model = m;
    v->mouse = m->has_device ? mouse : NULL;
    v->ws = (fr_workspace){m->ws_scale > 0 ? m->ws_scale : 1.0, m->ws_rot, m->ws_offset};
}

void fri_view_sync_pointer(fri_view *v, const fri_snap *sn)
{
    if (!v->mouse || v->dragging == 3) return;
    v->pointer_world = fr_workspace_point_to_world(&v->ws, fri_mouse_get(v->mouse));
    v->pointer_set = true;
    (void)sn;
}

static void move_pointer_to(fri_view *v, double x, double y)
{
    fr_vec3 o, dir, e, r, u, f;
    fri_camera_ray(&v->cam, v->width, v->height, x, y, &o, &dir);
    fri_camera_frame(&v->cam, &e, &r, &u, &f);
    double den = fr_v3_dot(dir, f);
    if (den <= 1e-9) return;
    fr_vec3 pw = fr_v3_add(o, fr_v3_scale(dir, v->plane_depth / den));
    /* keep the offset between the grab point and the pointer: no jump when the drag starts */
    fr_vec3 target = fr_v3_add(v->pointer_world, fr_v3_sub(pw, v->grab_world));
    v->grab_world = pw;
    fri_mouse_set(v->mouse, fr_workspace_point_to_device(&v->ws, target));
    v->pointer_world = fr_workspace_point_to_world(&v->ws, fri_mouse_get(v->mouse));
}

void fri_view_button(fri_view *v, int button, bool press, int mods, double x, double y)
{
    v->last_x = x, v->last_y = y;
    if (!press) {
        v->dragging = 0;
        return;
    }
    if (button == FRI_BUTTON_LEFT && (mods & FRI_MOD_CTRL) && v->mouse) {
        fr_vec3 e, f;
        fri_camera_frame(&v->cam, &e, NULL, NULL, &f);
        v->pointer_world = fr_workspace_point_to_world(&v->ws, fri_mouse_get(v->mouse));
        v->plane_depth = fr_v3_dot(fr_v3_sub(v->pointer_world, e), f);
        if (v->plane_depth < 1e-3) v->plane_depth = v->cam.distance;
        fr_vec3 o, dir;
        fri_camera_ray(&v->cam, v->width, v->height, x, y, &o, &dir);
        v->grab_world = fr_v3_add(o, fr_v3_scale(dir, v->plane_depth / fr_v3_dot(dir, f)));
        v->dragging = 3;
    } else if (button == FRI_BUTTON_RIGHT || button == FRI_BUTTON_MIDDLE ||
               (button == FRI_BUTTON_LEFT && (mods & FRI_MOD_SHIFT))) {
        v->dragging = 2;
    } else if (button == FRI_BUTTON_LEFT) {
        v->dragging = 1;
    }
}

void fri_view_motion(fri_view *v, double x, double y)
{
    double dx = x - v->last_x, dy = y - v->last_y;
    v->last_x = x, v->last_y = y;
    if (v->dragging == 1) {
        v->cam.yaw -= 0.3 * dx;
        v->cam.pitch = fmin(89.0, fmax(-89.0, v->cam.pitch + 0.3 * dy));
    } else if (v->dragging == 2) {
        fr_vec3 r, u;
        fri_camera_frame(&v->cam, NULL, &r, &u, NULL);
        double s = 2.0 * v->cam.distance * tan(0.5 * v->cam.fov * DEG) / v->height;
        v->cam.target =
            fr_v3_add(v->cam.target, fr_v3_add(fr_v3_scale(r, -dx * s), fr_v3_scale(u, dy * s)));
    } else if (v->dragging == 3) {
        move_pointer_to(v, x, y);
    }
}

void fri_view_scroll(fri_view *v, double dy, int mods)
{
    if ((mods & FRI_MOD_CTRL) && v->mouse) {
        /* the grip in depth: 1 cm in the world per wheel step, away from the camera upwards */
        fr_vec3 f;
        fri_camera_frame(&v->cam, NULL, NULL, NULL, &f);
        v->pointer_world = fr_workspace_point_to_world(&v->ws, fri_mouse_get(v->mouse));
        fr_vec3 t = fr_v3_add(v->pointer_world, fr_v3_scale(f, -0.01 * dy));
        fri_mouse_set(v->mouse, fr_workspace_point_to_device(&v->ws, t));
        v->pointer_world = fr_workspace_point_to_world(&v->ws, fri_mouse_get(v->mouse));
        return;
    }
    v->cam.distance *= pow(0.9, dy);
    if (v->cam.distance < 0.01) v->cam.distance = 0.01;
}
