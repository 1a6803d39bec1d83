/*
 * The viewer's model of the view, without OpenGL: the orbit camera, the mouse device and what the
 * mouse and keys do (src/render; the window in viewer.c feeds GLFW's events to these functions,
 * and tests script the same calls).
 *
 * Camera: it orbits `target` at `distance`; yaw (degrees about +z) 0 puts the camera on the −y
 * side looking along +y, 90 on the +x side; pitch (degrees) above the horizon, positive looking
 * down. Perspective with a vertical field of view `fov`; pixels have their origin at the top left.
 *
 * Mouse device: a 3-DOF device whose grip is where the mouse puts it. The viewer writes the grip
 * position (device frame) into a lock-free buffer; the tick thread reads the newest one. It goes
 * through the same coupling, passivity controller and safety chain as any device.
 *
 * Mouse: left drag orbits, right drag (or shift + left) pans, the wheel zooms. With the mouse
 * device, ctrl + left drag moves the grip in the plane through the pointer facing the camera, and
 * ctrl + wheel moves it in depth (towards or away from the camera).
 */
#ifndef FR_RENDER_VIEW_H
#define FR_RENDER_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "fureru/coupling.h"
#include "fureru/device.h"
#include "fureru/math.h"
#include "snapshot.h"

typedef struct fri_camera {
    fr_vec3 target;
    double distance, yaw, pitch, fov; /* m, degrees */
} fri_camera;

/* Eye position and the camera's axes (right, up, forward: unit, world). */
void fri_camera_frame(const fri_camera *c, fr_vec3 *eye, fr_vec3 *right, fr_vec3 *up, fr_vec3 *fwd);
/* Column-major 4×4 view and projection matrices (OpenGL conventions) for a w × h viewport. */
void fri_camera_matrices(const fri_camera *c, int w, int h, float view[16], float proj[16]);
/* Pixel (x right, y down) of a world point; false when it is behind the camera. */
bool fri_camera_project(const fri_camera *c, int w, int h, fr_vec3 p, double *px, double *py);
/* The ray through a pixel: origin (the eye) and unit direction. */
void fri_camera_ray(const fri_camera *c, int w, int h, double px, double py, fr_vec3 *o,
                    fr_vec3 *dir);
/* A camera that frames the model's bodies at their poses (the scene gave none). */
fri_camera fri_camera_frame_scene(const fri_snap_model *m, const fr_pose *poses);

/* ---------------------------------------------------------------- the mouse device */

/* Open the mouse device (3 DOF; limits like the simulated device's: 10 N, 3000 N/m, 20 N·s/m,
 * workspace ±0.1 m) for a world step dt. */
int fri_mouse_open(double dt, fr_device **out);
/* The viewer: put the grip at p (device frame, m; clamped to the workspace). Any one thread. */
void fri_mouse_set(fr_device *dev, fr_vec3 p);
/* Where the grip is (the last set), device frame. */
fr_vec3 fri_mouse_get(const fr_device *dev);
bool fri_is_mouse(const fr_device *dev);

/* ---------------------------------------------------------------- input */

enum { FRI_MOD_SHIFT = 1, FRI_MOD_CTRL = 2, FRI_MOD_ALT = 4 };
enum { FRI_BUTTON_LEFT = 0, FRI_BUTTON_RIGHT = 1, FRI_BUTTON_MIDDLE = 2 };

typedef struct fri_view {
    fri_camera cam, home;
    int width, height; /* window, pixels */
    const fri_snap_model *model;
    fr_device *mouse; /* the mouse device, or NULL (a real device: the mouse moves only the
                         camera) */
    fr_workspace ws;  /* device → world */
    /* drag state */
    int dragging; /* 0 none, 1 orbit, 2 pan, 3 pointer */
    double last_x, last_y;
    fr_vec3 grab_world;    /* pointer drag: the world point under the mouse on the plane */
    double plane_depth;    /* pointer drag: distance of the plane from the eye along fwd */
    fr_vec3 pointer_world; /* the grip in the world, as the viewer last put it */
    bool pointer_set;
} fri_view;

void fri_view_init(fri_view *v, const fri_snap_model *m, const fri_camera *cam, int w, int h,
                   fr_device *mouse);
/* The pointer's current world position from a snapshot (before the first drag). */
void fri_view_sync_pointer(fri_view *v, const fri_snap *sn);
void fri_view_button(fri_view *v, int button, bool press, int mods, double x, double y);
void fri_view_motion(fri_view *v, double x, double y);
void fri_view_scroll(fri_view *v, double dy, int mods);

#endif
