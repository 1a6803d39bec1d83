/*
 * The viewer: a GLFW window with an OpenGL 3.3 core context that draws the newest snapshot at
 * the display's rate (vsync). It reads only snapshots (src/snapshot) and talks back only through
 * the command callback (pause, step, slow motion) and the mouse device (view.h): it can never
 * delay a tick.
 *
 * Drawn: every body's shapes (the polytopes the contacts use), shaded, with planar shadows on the
 * ground (z = 0) and a metre/decimetre grid on upward faces of static bodies; the pointer (where
 * the device puts the hand, yellow sphere), the proxy and the coupling spring between them (a
 * thin rod), the felt force as a magenta arrow at the pointer (FRI_VIEW_FELT_SCALE × workspace
 * scale metres per newton); overlays: contact points, normals (green), contact forces as red
 * arrows (length = force / the scene's weight × its size), the contact patches (the ellipse of
 * the patch's area and second moments), body frames; a HUD: simulated time, real-time factor,
 * tick rate, wake-up and step p99 over the last second, overruns, energy, the felt force and a
 * 2 s scrolling plot of it, and the key list.
 *
 * Screenshot mode renders one frame of the newest snapshot off screen (any window may stay
 * hidden) and writes it as PNG (libpng).
 */
#ifndef FR_RENDER_VIEWER_H
#define FR_RENDER_VIEWER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "fureru/scene.h"
#include "snapshot.h"
#include "view.h"

#define FRI_VIEW_FELT_SCALE 0.02 /* m of arrow per N of felt force (times the workspace scale) */

typedef struct fri_viewer_opts {
    fri_tbuf *snaps;
    const fri_snap_model *model;
    const fr_scene_viewer *camera; /* the scene's camera (has_camera false: frame the scene) */
    fr_device *mouse;              /* the mouse device when it is the run's device, else NULL */
    int (*command)(void *ctx, int code, double value); /* enum fri_cmd_code (record.h) */
    void (*stop)(void *ctx);                           /* the window was closed */
    void *ctx;
    const char *screenshot; /* write the newest snapshot to this PNG and return */
    int width, height;      /* window or picture size (0: 1280 × 720) */
    bool no_hud;
    _Atomic long *frames; /* if not NULL: the frames drawn so far (updated every frame) */
} fri_viewer_opts;

/* Whether a display can be opened (GLFW initialises). */
bool fri_viewer_available(void);
/* Run the viewer on the calling thread until the window is closed (or, with a screenshot, the
 * picture is written). FR_OK, or an error with a message in msg. */
int fri_viewer_run(const fri_viewer_opts *o, char *msg, size_t msglen);
/* Close the viewer at its next frame (async-signal-safe: an atomic store). */
void fri_viewer_request_close(void);
/* Write RGB pixels (rows top to bottom) as PNG. */
int fri_write_png(const char *path, const unsigned char *rgb, int w, int h);

#endif
