/* The fureru command line. Exit status: 0 success, 1 runtime failure, 2 bad input. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "fureru/base.h"
#include "fureru/scene.h"
#include "fureru/server.h"
#include "fureru/urdf.h"
#include "cpus.h"
#include "lab.h"
#include "progress.h"
#include "server_internal.h"
#include "view.h"
#ifdef FR_HAVE_VIEWER
#include "viewer.h"
#endif

/* What the viewer needs from the command line. */
typedef struct viewer_cfg {
    const char *screenshot; /* write one frame at the end of the run and exit */
    fr_device *mouse;       /* the mouse device, when it is the run's device */
    int width, height;
} viewer_cfg;

enum { EXIT_RUNTIME = 1, EXIT_BADINPUT = 2 };

static void usage(FILE *out)
{
    fprintf(
        out,
        "fureru %s: a haptic-rate rigid-body simulation server\n"
        "\n"
        "usage:\n"
        "  fureru run SCENE [options]   run a scene (1 kHz real time unless --fast); SCENE is a\n"
        "                               file or the name of an installed scene (stick-slip)\n"
        "  fureru check SCENE|ROBOT.urdf [--set K=V ...] [--strict] [--package-path DIR]\n"
        "                               parse and validate a scene (or a robot) only\n"
        "  fureru analyse LOG.csv [--out DIR] [--no-plot]\n"
        "                               analyse a log from its sidecar alone: report and plots\n"
        "  fureru sweep SCENE --set K=V1,V2,... [--set ...] --out DIR [--run] [--jobs N]\n"
        "               [--duration S] [--log-every N]\n"
        "                               write (and with --run, run and gather) a sweep\n"
        "  fureru sweep --gather DIR    gather a sweep's runs into a CSV and a plot\n"
        "  fureru replay FILE [--fast] [--log FILE.csv] [...]\n"
        "                               re-run a recorded session (run --record) bit for bit\n"
        "  fureru mesh FILE [--scale S] [--hull-vertices N] [--write OUT.stl|.obj|.dae]\n"
        "                               the collision hull a mesh becomes (and write it)\n"
        "  fureru device list           drivers, device files and attached hardware\n"
        "  fureru device calibrate SPEC hold the grip at the home pose, then run this\n"
        "  fureru --help | --version\n"
        "\n"
        "run options:\n"
        "  --duration S     simulated seconds to run (default: the scene's world.duration)\n"
        "  --fast           as fast as possible, no real-time pacing; deterministic\n"
        "  --headless       no viewer (the default when there is no display); with a\n"
        "                   display the viewer opens and, unless --device names one, the\n"
        "                   mouse is the device when the scene's is the simulated hand\n"
        "  --log FILE.csv   write the state every logged tick as CSV (folders are created),\n"
        "                   and what made it to FILE.csv.meta.yaml\n"
        "  --log-every N    log one tick in N (default 1), and the last (or the one the\n"
        "                   energy audit failed)\n"
        "  --allow-drops    records a real-time run could not log in time (counted, and marked\n"
        "                   in the CSV's log.lost column) do not make the run fail\n"
        "  --set PATH=VALUE override a scene value, e.g. --set world.dt=0.002\n"
        "                   --set bodies.box.mass=2 (see docs/scenes.md); repeatable\n"
        "                   (world.settle, on by default, lets touching bodies take their\n"
        "                   loads before the run; --set world.settle=false starts as placed)\n"
        "  --device SPEC    haptic device: a name (virtual, mouse, ...) or a device file;\n"
        "                   overrides the scene's device.spec (see config/devices/)\n"
        "  --no-rt          do not try SCHED_FIFO and mlockall\n"
        "  --spin US        sleep until US microseconds before each deadline, then wait\n"
        "                   busy: the tick starts on a warm CPU (costs US/period of a CPU;\n"
        "                   0 to 1000, at most 0.9 of the period is spun; none with --fast)\n"
        "  --screenshot FILE.png  run to the end (fast) and write the viewer's picture of\n"
        "                   the last instant (needs a display; xvfb-run without one)\n"
        "  --screenshot-at T  the instant of the picture: run T simulated seconds\n"
        "  --size WxH       the picture's size (default 1280x720)\n"
        "  --record FILE    record the session (device samples, viewer commands) for\n"
        "                   fureru replay\n"
        "  --log-energy     add the columns energy, work and energy.gain (J) to the log\n"
        "  --energy-tolerance X  a tick whose rise of energy less work exceeds X times the\n"
        "                   scene's energy scale (plus the robots' joint work in that tick)\n"
        "                   ends the run as a numerical failure\n"
        "                   (default 0.25; docs/world.md, \"Energy\")\n"
        "\n"
        "replay options:\n"
        "  --fast, --headless, --no-rt, --log FILE.csv, --log-every N, --log-energy\n"
        "                   as for run; the scene, its --set values and the duration come\n"
        "                   from the recording (a changed scene file is refused)\n"
        "\n"
        "robot options (run and check):\n"
        "  --package-path DIR  where package://PKG/... in URDF files is looked for first\n"
        "                   (DIR/PKG, DIR itself when named PKG, or PKG below DIR); repeatable;\n"
        "                   then $ROS_PACKAGE_PATH, then the URDF's own ancestors\n"
        "  --strict         URDF warnings (repairs, ignored elements) are errors\n"
        "\n"
        "mesh options:\n"
        "  --scale S        scale the mesh's coordinates (default 1)\n"
        "  --hull-vertices N  at most N hull vertices (default 32; 0: the whole hull)\n"
        "  --write OUT      write the hull as STL, OBJ or Collada (by the extension)\n"
        "\n"
        "analyse options:\n"
        "  --out DIR        write the report and plots to DIR (default: beside the log)\n"
        "  --no-plot        the report only\n"
        "\n"
        "sweep options:\n"
        "  --set PATH=V1,V2,...  the values of one scene path (brackets kept whole:\n"
        "                   --set springs.pull.anchor_velocity=[0.02,0,0],[0.05,0,0]);\n"
        "                   several --set make every combination\n"
        "  --out DIR        the sweep's folder: commands.txt, runs/, results.csv, plots\n"
        "  --run            run the commands here, then gather\n"
        "  --jobs N         runs at once with --run (default: every CPU)\n"
        "  --gather DIR     gather the runs of a sweep that ran elsewhere\n"
        "  --duration S, --log-every N   passed to every run\n"
        "\n"
        "environment:\n"
        "  FURERU_DATA_DIR  the folder with scenes/, devices/, robots/ (default: beside the\n"
        "                   installed program, else the source tree); FURERU_DEVICE_DIR the\n"
        "                   device folder alone; FURERU_LOG_RING the log ring's size in\n"
        "                   records (a power of two, default 8192)\n"
        "\n"
        "exit status: 0 success, 1 runtime failure, 2 bad input\n",
        fr_version());
}

static fr_server *volatile g_server;

static void on_signal(int sig)
{
    (void)sig;
    fr_server *s = g_server;
    if (s) fr_server_request_stop(s); /* an atomic store: async-signal-safe */
#ifdef FR_HAVE_VIEWER
    fri_viewer_request_close(); /* Ctrl-C ends the run and closes the window */
#endif
}

/* When an energy failure is the placement's overlap coming out (the first tick found at least
 * half of the rise stored in overlapping contacts), say so. */
static const char *placement_hint(const fr_server_stats *st)
{
    static char hint[256];
    hint[0] = '\0';
    if (st->energy.placement > 0.0 && st->energy.placement >= 0.5 * st->energy.fault.gain)
        snprintf(hint, sizeof hint,
                 "; the placement overlaps: its contacts held %.6g J at the start (place the "
                 "bodies touching; world.settle pushes out what it can, and its note says what "
                 "it could not)",
                 st->energy.placement);
    return hint;
}

/* A gain at a long internal step: landings found late (docs/contact.md §8, docs/robots.md "Hard
 * landings at long steps"; the hexapod dropped 2 m fails at 5 ms, holds at 2.5 ms) */
#define STEP_HINT_H 2e-3 /* s */
static const char *step_hint(const fr_world *w, const fr_server_stats *st)
{
    static char hint[320];
    hint[0] = '\0';
    const double dt = fr_world_get_def(w)->dt;
    const int n = fr_world_substeps(w, NULL);
    if (st->energy.placement > 0.0 && st->energy.placement >= 0.5 * st->energy.fault.gain)
        return hint; /* (placement_hint says it) */
    if (!(dt / n > STEP_HINT_H)) return hint;
    const int more = n * (int)ceil(dt / n / STEP_HINT_H);
    snprintf(hint, sizeof hint,
             "; at an internal step of %.3g ms a hard landing may be found late, deep in one "
             "step (docs/contact.md §8; docs/robots.md \"Hard landings at long steps\"): "
             "world.substeps %d (steps of %.3g ms) or a shorter world.dt may hold it",
             1e3 * dt / n, more, 1e3 * dt / more);
    return hint;
}

static int bad_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "fureru: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "Try 'fureru --help'.\n");
    return EXIT_BADINPUT;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* fureru check ROBOT.urdf: every error, warning and note of the file, then what was loaded. */
static int check_urdf(const char *path, const char *const *pkgs, int npkgs, bool strict)
{
    fr_diag_list diags;
    fr_diag_list_init(&diags);
    fr_urdf_opts o = fr_urdf_opts_default();
    o.package_paths = pkgs;
    o.npackage_paths = npkgs;
    o.strict = strict;
    o.diags = &diags;
    fr_urdf *u = NULL;
    fr_diag d;
    int err = fr_urdf_load(path, &o, &u, &d);
    fr_diag_list_print(&diags, stderr);
    if (err) {
        if (!diags.n) fr_diag_print(&d, stderr);
        fprintf(stderr, "fureru: %s: %d error%s, %d warning%s\n", path, diags.nerrors,
                diags.nerrors == 1 ? "" : "s", diags.nwarnings, diags.nwarnings == 1 ? "" : "s");
        fr_diag_list_free(&diags);
        return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    int nmimic = 0, nshapes = 0;
    double mass = 0;
    for (int i = 0; i < fr_urdf_link_count(u); i++) {
        const fr_urdf_joint *j = fr_urdf_joint_at(u, i);
        nmimic += j && j->mimic >= 0;
        nshapes += fr_urdf_link_at(u, i)->ncollisions;
        mass += fr_urdf_link_at(u, i)->mass;
    }
    printf("%s: ok: robot '%s', %d links (%d more merged through fixed joints), %d DOF, %.4g kg, "
           "%d collision shapes, %d mimic joint%s, %d warning%s\n",
           path, fr_urdf_name(u), fr_urdf_link_count(u), fr_urdf_frame_count(u), fr_urdf_dof(u),
           mass, nshapes, nmimic, nmimic == 1 ? "" : "s", diags.nwarnings,
           diags.nwarnings == 1 ? "" : "s");
    fr_urdf_destroy(u);
    fr_diag_list_free(&diags);
    return 0;
}

static int run_server(fr_server *srv, fr_scene *scene, const fr_server_opts *o,
                      const viewer_cfg *vc);

static int cmd_run_or_check(int argc, char **argv, bool check_only, char **full_argv)
{
    static const struct option longopts[] = {{"duration", required_argument, 0, 'd'},
                                             {"fast", no_argument, 0, 'f'},
                                             {"headless", no_argument, 0, 'H'},
                                             {"log", required_argument, 0, 'l'},
                                             {"log-every", required_argument, 0, 'e'},
                                             {"set", required_argument, 0, 's'},
                                             {"no-rt", no_argument, 0, 'R'},
                                             {"device", required_argument, 0, 'D'},
                                             {"package-path", required_argument, 0, 'P'},
                                             {"strict", no_argument, 0, 'S'},
                                             {"energy-tolerance", required_argument, 0, 'E'},
                                             {"log-energy", no_argument, 0, 'G'},
                                             {"allow-drops", no_argument, 0, 'A'},
                                             {"record", required_argument, 0, 'r'},
                                             {"screenshot", required_argument, 0, 'X'},
                                             {"screenshot-at", required_argument, 0, 'T'},
                                             {"size", required_argument, 0, 'Z'},
                                             {"spin", required_argument, 0, 'U'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    fr_server_opts opts = fr_server_opts_default();
    bool headless = false;
    const char *record = NULL;
    viewer_cfg vc = {0};
    double shot_at = 0;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    const char **pkgs = calloc((size_t)argc + 1, sizeof *pkgs);
    int nsets = 0, npkgs = 0, rc = 0;
    bool strict = false;
    if (!sets || !pkgs) {
        free(sets);
        free(pkgs);
        return EXIT_RUNTIME;
    }
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (!parse_double(optarg, &opts.duration) || !(opts.duration > 0))
                rc = bad_usage("--duration needs a positive number of seconds", optarg);
            break;
        case 'f':
            opts.fast = true;
            break;
        case 'H':
            headless = true;
            break;
        case 'l':
            opts.log_path = optarg;
            break;
        case 'e': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000000)
                rc = bad_usage("--log-every needs an integer >= 1", optarg);
            opts.log_every = (int)v;
            break;
        }
        case 's':
            sets[nsets++] = optarg;
            break;
        case 'R':
            opts.realtime_sched = false;
            break;
        case 'D':
            opts.device = optarg;
            break;
        case 'P':
            pkgs[npkgs++] = optarg;
            break;
        case 'S':
            strict = true;
            break;
        case 'E':
            if (!parse_double(optarg, &opts.energy_tolerance) || !(opts.energy_tolerance > 0))
                rc = bad_usage("--energy-tolerance needs a positive number", optarg);
            break;
        case 'G':
            opts.log_energy = true;
            break;
        case 'A':
            opts.allow_drops = true;
            break;
        case 'r':
            record = optarg;
            break;
        case 'X':
            vc.screenshot = optarg;
            break;
        case 'U':
            if (!parse_double(optarg, &opts.spin) || opts.spin < 0 || opts.spin > 1000)
                rc = bad_usage("--spin needs microseconds (0 to 1000)", optarg);
            opts.spin *= 1e-6;
            break;
        case 'T':
            if (!parse_double(optarg, &shot_at) || !(shot_at > 0))
                rc = bad_usage("--screenshot-at needs a positive time in seconds", optarg);
            break;
        case 'Z':
            if (sscanf(optarg, "%dx%d", &vc.width, &vc.height) != 2 || vc.width < 16 ||
                vc.height < 16 || vc.width > 8192 || vc.height > 8192)
                rc = bad_usage("--size needs WIDTHxHEIGHT (16..8192)", optarg);
            break;
        case 'h':
            usage(stdout);
            free(sets);
            free(pkgs);
            return 0;
        default:
            rc = EXIT_BADINPUT;
        }
        if (rc) {
            free(sets);
            free(pkgs);
            return rc;
        }
    }
    if (optind != argc - 1) {
        free(sets);
        free(pkgs);
        return bad_usage(optind >= argc ? "missing SCENE" : "unexpected argument",
                         optind < argc - 1 ? argv[optind + 1] : NULL);
    }
    char scene_buf[PATH_MAX + 64];
    const char *path = fri_lab_find_scene(argv[optind], scene_buf, sizeof scene_buf);
    opts.headless = headless;
    /* the log ring's size (records, a power of two): a knob for tests of a stalled logger */
    const char *ring = getenv("FURERU_LOG_RING");
    if (ring && ring[0]) {
        char *end;
        const long r = strtol(ring, &end, 10);
        if (*end || r < 64 || r > (1L << 24) || (r & (r - 1))) {
            free(sets);
            free(pkgs);
            return bad_usage("FURERU_LOG_RING needs a power of two from 64 to 16777216 (records)",
                             ring);
        }
        opts.log_ring_records = (int)r;
    }
    if (shot_at > 0 && !vc.screenshot) {
        free(sets);
        free(pkgs);
        return bad_usage("--screenshot-at needs --screenshot FILE.png", NULL);
    }
    if (vc.screenshot) {
#ifndef FR_HAVE_VIEWER
        free(sets);
        free(pkgs);
        fprintf(stderr, "fureru: --screenshot: this build has no viewer (meson -Dviewer=enabled "
                        "needs GLFW, OpenGL, FreeType and libpng)\n");
        return EXIT_RUNTIME;
#endif
#ifdef FR_HAVE_VIEWER
        if (!fri_viewer_available()) {
            free(sets);
            free(pkgs);
            fprintf(stderr, "fureru: --screenshot needs a display (X11 or Wayland; without one: "
                            "xvfb-run fureru run ...)\n");
            return EXIT_RUNTIME;
        }
#endif
        /* the picture of one instant: run there as fast as possible (deterministic) */
        opts.fast = true;
        if (shot_at > 0) opts.duration = shot_at;
    }
    opts.argv = (const char *const *)full_argv;
    opts.progress = isatty(STDERR_FILENO) ? stderr : NULL;

    size_t plen = strlen(path);
    if (check_only && plen > 5 && !strcasecmp(path + plen - 5, ".urdf")) {
        rc = check_urdf(path, pkgs, npkgs, strict);
        free(sets);
        free(pkgs);
        return rc;
    }

    fr_diag d;
    fr_scene *scene = NULL;
    fr_diag_list diags;
    fr_diag_list_init(&diags);
    /* a long settle (a small dt) says so on stderr instead of running silent */
    fri_progress settling;
    fri_progress_start(&settling, stderr, 0);
    settling.plain = !isatty(STDERR_FILENO);
    fr_scene_opts so = {.sets = sets,
                        .nsets = nsets,
                        .package_paths = pkgs,
                        .npackage_paths = npkgs,
                        .strict = strict,
                        .diags = &diags,
                        .settle_progress = fri_progress_settle,
                        .settle_user = &settling};
    int err = fr_scene_load_opts(path, &so, &scene, &d);
    if (!settling.plain) fri_progress_end(&settling);
    free(sets);
    /* every diagnostic (all errors of a failing URDF, warnings, notes); a URDF's notes only on
     * check, the scene's own (a convex shape simplified) on run too */
    bool printed_first = false;
    for (int i = 0; i < diags.n; i++) {
        const fr_diag *x = &diags.items[i];
        if (x->severity == FR_DIAG_NOTE && !check_only && strcmp(x->file, path)) continue;
        fr_diag_print(x, stderr);
        if (!memcmp(x, &d, sizeof d)) printed_first = true;
    }
    int nwarn = diags.nwarnings, nerr = diags.nerrors;
    fr_diag_list_free(&diags);
    if (err) {
        free(pkgs);
        if (!printed_first) fr_diag_print(&d, stderr);
        if (nerr > 1) fprintf(stderr, "fureru: %d errors\n", nerr);
        return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    if (check_only) {
        /* what run validates after loading the scene: the device, the coupling, the options */
        bool opened = false;
        memset(&d, 0, sizeof d);
        err = fr_server_check(scene, &opts, &opened, &d);
        if (err) {
            fr_diag_print(&d, stderr);
            free(pkgs);
            fr_scene_destroy(scene);
            return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
        }
        free(pkgs);
        /* what the settle did that the run would start from (bodies pushed out of each other,
         * a placement far from an equilibrium): the run's summary says it too */
        const char *note = fr_world_settle_note(fr_scene_world(scene));
        if (note && note[0]) fprintf(stderr, "%s: settle: %s\n", path, note);
        printf("%s: ok (%d bodies, dt %g s, duration %g s", path,
               fr_world_body_count(fr_scene_world(scene)),
               fr_world_get_def(fr_scene_world(scene))->dt, fr_scene_duration(scene));
        fr_body_id sub_body;
        const int nsub = fr_world_substeps(fr_scene_world(scene), &sub_body);
        if (nsub > 1)
            printf(", %d substeps a tick%s%s%s", nsub, sub_body.index1 ? " for '" : "",
                   sub_body.index1 ? fr_body_name(fr_scene_world(scene), sub_body) : "",
                   sub_body.index1 ? "'" : "");
        if (nwarn) printf(", %d warning%s", nwarn, nwarn == 1 ? "" : "s");
        const fr_scene_device *sdv = fr_scene_get_device(scene);
        if ((sdv->present || opts.device) && !opened)
            printf(", device validated from its file, not opened");
        printf(")\n");
        fr_scene_destroy(scene);
        return 0;
    }

    /* the mouse device: asked for, or the default in the viewer when the scene's device is the
     * simulated hand and no other was named */
    const fr_scene_device *sdev = fr_scene_get_device(scene);
    bool want_mouse = opts.device && !strcmp(opts.device, "mouse");
#ifdef FR_HAVE_VIEWER
    if (!opts.device && !vc.screenshot && !opts.headless && fri_viewer_available() &&
        sdev->present && (!sdev->spec[0] || !strcmp(sdev->spec, "virtual")))
        want_mouse = true;
#endif
    fr_safety_params mouse_sp;
    fr_safety_params_default(&mouse_sp);
    if (want_mouse) {
        err = fri_mouse_open(fr_world_get_def(fr_scene_world(scene))->dt, &vc.mouse);
        if (err) {
            free(pkgs);
            fr_scene_destroy(scene);
            return EXIT_RUNTIME;
        }
        opts.device = NULL;
        if (!opts.fast)
            fprintf(stderr, "fureru: device: the mouse (ctrl + drag in the viewer moves the "
                            "pointer; --device virtual for the simulated hand)\n");
    }
    fr_server *srv = NULL;
    fri_server_ext ext = {.device = vc.mouse,
                          .safety = vc.mouse ? &mouse_sp : NULL,
                          .record_path = record,
                          .package_paths = (const char *const *)pkgs,
                          .npackage_paths = npkgs,
                          .strict = strict};
    err = fri_server_create_ext(scene, &opts, &ext, &srv, &d);
    free(pkgs);
    if (err) {
        fr_diag_print(&d, stderr);
        fr_scene_destroy(scene);
        return err == FR_ERR_IO || err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    return run_server(srv, scene, &opts, &vc);
}

/* Run a created server to its end (signals stop it), print the summary; destroys both. */
#ifdef FR_HAVE_VIEWER
typedef struct viewer_thread {
    fri_viewer_opts vo;
    pthread_t th;
    int err;
    char msg[512];
    _Atomic long frames;
    int tick_cpu; /* fri_server_tick_cpu_plan */
} viewer_thread;

static int viewer_command(void *ctx, int code, double value)
{
    return fri_server_command(ctx, code, value);
}

static void viewer_stop(void *ctx)
{
    fr_server_request_stop(ctx);
}

static void *viewer_main(void *arg)
{
    viewer_thread *vt = arg;
    /* off the CPU a real-time run gives the tick thread alone, before the GL context exists:
     * the driver's threads (Mesa's llvmpipe sizes its pool by the CPUs allowed) inherit it */
    fri_cpus_keep_off(vt->tick_cpu);
    pthread_setname_np(pthread_self(), "fureru-viewer");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    vt->vo.frames = &vt->frames;
    vt->err = fri_viewer_run(&vt->vo, vt->msg, sizeof vt->msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (vt->err)
        fprintf(stderr, "fureru: viewer: %s; running headless\n", vt->msg);
    else
        fprintf(stderr, "fureru: viewer: %ld frames in %.1f s (%.1f per second)\n",
                atomic_load(&vt->frames), s, s > 0 ? (double)atomic_load(&vt->frames) / s : 0.0);
    return NULL;
}

static void viewer_opts(fr_server *srv, fr_scene *scene, const viewer_cfg *vc, fri_viewer_opts *vo)
{
    memset(vo, 0, sizeof *vo);
    vo->snaps = fri_server_snapshots(srv);
    vo->model = fri_server_model(srv);
    vo->camera = fr_scene_get_viewer(scene);
    vo->mouse = vc->mouse;
    vo->command = viewer_command;
    vo->stop = viewer_stop;
    vo->ctx = srv;
    vo->width = vc->width;
    vo->height = vc->height;
}
#endif

static int run_server(fr_server *srv, fr_scene *scene, const fr_server_opts *o,
                      const viewer_cfg *vc)
{
    fr_server_opts opts = *o;
    int err;
#ifdef FR_HAVE_VIEWER
    viewer_thread vt;
    bool viewer_on = !opts.headless && !vc->screenshot && fri_viewer_available();
    if (viewer_on) {
        viewer_opts(srv, scene, vc, &vt.vo);
        vt.tick_cpu = fri_server_tick_cpu_plan(srv);
        if (pthread_create(&vt.th, NULL, viewer_main, &vt) != 0) viewer_on = false;
    }
#else
    if (!opts.headless && !vc->screenshot && (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY")))
        fprintf(stderr, "fureru: this build has no viewer (-Dviewer); running headless\n");
#endif
    g_server = srv;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    err = fr_server_run(srv);
    fr_server_print_summary(srv, stdout);
    fflush(stdout);
#ifdef FR_HAVE_VIEWER
    if (!err && vc->screenshot) {
        /* the last snapshot (the end of the run, --screenshot-at) as a picture */
        viewer_opts(srv, scene, vc, &vt.vo);
        vt.vo.screenshot = vc->screenshot;
        if (fri_viewer_run(&vt.vo, vt.msg, sizeof vt.msg) != FR_OK) {
            fprintf(stderr, "fureru: --screenshot: %s\n", vt.msg);
            err = FR_ERR_UNSUPPORTED;
        } else {
            printf("  %-16s %s (%dx%d)\n", "screenshot", vc->screenshot,
                   vc->width > 0 ? vc->width : 1280, vc->height > 0 ? vc->height : 720);
        }
    }
    if (viewer_on) {
        if (!err)
            fprintf(stderr, "fureru: the run is over; close the viewer (or Ctrl-C) to exit\n");
        pthread_join(vt.th, NULL);
    }
#endif
    if (err) {
        fr_server_stats st;
        fr_server_get_stats(srv, &st);
        const fr_world_fault *f = &st.fault;
        if (st.energy.fault.failed)
            fprintf(stderr,
                    "fureru: run failed at t = %.4f s (simulated): body '%s' gained energy: the "
                    "world's energy less work rose %.6g J in one tick (bound %.6g J, "
                    "--energy-tolerance)%s%s (the energy audit: a numerical failure)\n",
                    st.energy.fault.time, st.energy.fault.body, st.energy.fault.gain,
                    st.energy.fault.bound, placement_hint(&st),
                    step_hint(fr_scene_world(scene), &st));
        else if (err == FR_ERR_IO && st.log_errno)
            fprintf(stderr,
                    "fureru: log %s: write failed: %s; %llu records written, %llu lost (the file "
                    "ends with the last whole row)\n",
                    opts.log_path, strerror(st.log_errno), (unsigned long long)st.log_records,
                    (unsigned long long)st.log_lost);
        else if (err == FR_ERR_FULL)
            fprintf(stderr,
                    "fureru: log %s: %llu records dropped: the logger fell behind the tick "
                    "(marked in the log.lost column); log fewer ticks (--log-every) or accept "
                    "the gaps with --allow-drops\n",
                    opts.log_path ? opts.log_path : "(no file)",
                    (unsigned long long)st.log_dropped);
        else if (f->code)
            fprintf(stderr,
                    "fureru: run failed at t = %.4f s (simulated): %s diverged: %s = %g (%s)\n",
                    f->time, f->what, f->quantity, f->value, fr_strerror(err));
        else
            fprintf(stderr, "fureru: run failed: %s\n", fr_strerror(err));
    }
    uint64_t mism = 0, compared = 0;
    double maxd = 0;
    fri_server_replay_stats(srv, &mism, &maxd, &compared);
    if (compared && mism) {
        fprintf(stderr,
                "fureru: replay diverged: the felt force differs from the recording in %llu of "
                "%llu ticks (largest difference %.3g N)\n",
                (unsigned long long)mism, (unsigned long long)compared, maxd);
        if (!err) err = FR_ERR_NUMERIC;
    } else if (compared) {
        printf("  %-16s the felt force equals the recording's in all %llu ticks\n", "replay",
               (unsigned long long)compared);
    }
    g_server = NULL;
    fr_server_destroy(srv);
    fr_scene_destroy(scene);
    return err ? EXIT_RUNTIME : 0;
}

/* fureru replay FILE: the recorded scene with the recorded inputs. */
static int cmd_replay(int argc, char **argv, char **full_argv)
{
    static const struct option longopts[] = {
        {"fast", no_argument, 0, 'f'},      {"headless", no_argument, 0, 'H'},
        {"log", required_argument, 0, 'l'}, {"log-every", required_argument, 0, 'e'},
        {"no-rt", no_argument, 0, 'R'},     {"log-energy", no_argument, 0, 'G'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    fr_server_opts opts = fr_server_opts_default();
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            opts.fast = true;
            break;
        case 'H':
            opts.headless = true;
            break;
        case 'l':
            opts.log_path = optarg;
            break;
        case 'e': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000000)
                return bad_usage("--log-every needs an integer >= 1", optarg);
            opts.log_every = (int)v;
            break;
        }
        case 'R':
            opts.realtime_sched = false;
            break;
        case 'G':
            opts.log_energy = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return EXIT_BADINPUT;
        }
    }
    if (optind != argc - 1)
        return bad_usage(optind >= argc ? "missing FILE" : "unexpected argument",
                         optind < argc - 1 ? argv[optind + 1] : NULL);
    const char *file = argv[optind];
    static fri_rec rec; /* outlives the server (its device reads it) */
    fr_diag d;
    int err = fri_rec_load(file, &rec, &d);
    if (err) {
        fprintf(stderr, "fureru: %s: %s\n", file, d.msg);
        return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    opts.argv = (const char *const *)full_argv;
    opts.progress = isatty(STDERR_FILENO) ? stderr : NULL;
    opts.duration = (double)rec.steps * rec.dt;
    fr_scene *scene = NULL;
    fr_scene_opts so = {.sets = (const char **)rec.sets,
                        .nsets = rec.nsets,
                        .package_paths = (const char **)rec.pkgs,
                        .npackage_paths = rec.npkgs,
                        .strict = rec.strict};
    err = fr_scene_load_opts(rec.scene, &so, &scene, &d);
    if (err) {
        fr_diag_print(&d, stderr);
        fprintf(stderr, "fureru: %s: the recorded scene does not load\n", file);
        fri_rec_free(&rec);
        return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    if (fri_rec_scene_hash(scene) != rec.scene_hash) {
        fprintf(stderr,
                "fureru: %s: the scene %s (with the recorded --set values) is not the one that "
                "was recorded: it changed since\n",
                file, rec.scene);
        fr_scene_destroy(scene);
        fri_rec_free(&rec);
        return EXIT_BADINPUT;
    }
    fri_server_ext ext = {.safety = &rec.safety, .replay = &rec};
    if (rec.has_device && (err = fri_rec_device_open(&rec, &ext.device))) {
        fr_scene_destroy(scene);
        fri_rec_free(&rec);
        return EXIT_RUNTIME;
    }
    fr_server *srv = NULL;
    err = fri_server_create_ext(scene, &opts, &ext, &srv, &d);
    if (err) {
        fr_diag_print(&d, stderr);
        fr_scene_destroy(scene);
        fri_rec_free(&rec);
        return err == FR_ERR_IO || err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    viewer_cfg vc = {0};
    int rc = run_server(srv, scene, &opts, &vc);
    fri_rec_free(&rec);
    return rc;
}

/* The formats --write knows, by extension: 0 binary STL, 1 OBJ, 2 Collada, -1 none of them
 * (an unknown one was written as binary STL under its own name). */
static int hull_format(const char *out)
{
    static const char *const ext[] = {".stl", ".obj", ".dae"};
    size_t n = strlen(out);
    for (int i = 0; i < 3; i++)
        if (n > 4 && !strcasecmp(out + n - 4, ext[i])) return i;
    return -1;
}

/* The convex hull of a polytope as triangles (fans over its faces), to f (closed here). */
static int write_hull(const fr_polytope *P, FILE *f, int format)
{
    bool obj = format == 1, dae = format == 2;
    int ntri = 0;
    for (int fc = 0; fc < P->nfaces; fc++) ntri += P->face_count[fc] - 2;
    if (obj) {
        fprintf(f, "# convex hull written by fureru mesh\n");
        for (int i = 0; i < P->nverts; i++)
            fprintf(f, "v %.9g %.9g %.9g\n", P->verts[i].x, P->verts[i].y, P->verts[i].z);
    } else if (dae) {
        fprintf(f,
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<COLLADA "
                "xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
                "  <asset><unit name=\"meter\" meter=\"1\"/><up_axis>Z_UP</up_axis></asset>\n"
                "  <library_geometries><geometry id=\"hull\" name=\"hull\"><mesh>\n"
                "    <source id=\"hull-p\"><float_array id=\"hull-a\" count=\"%d\">",
                3 * P->nverts);
        for (int i = 0; i < P->nverts; i++)
            fprintf(f, "%s%.9g %.9g %.9g", i ? " " : "", P->verts[i].x, P->verts[i].y,
                    P->verts[i].z);
        fprintf(f,
                "</float_array>\n      <technique_common><accessor source=\"#hull-a\" "
                "count=\"%d\" stride=\"3\"><param name=\"X\" type=\"float\"/><param "
                "name=\"Y\" type=\"float\"/><param name=\"Z\" "
                "type=\"float\"/></accessor></technique_common></source>\n"
                "    <vertices id=\"hull-v\"><input semantic=\"POSITION\" "
                "source=\"#hull-p\"/></vertices>\n"
                "    <triangles count=\"%d\"><input semantic=\"VERTEX\" source=\"#hull-v\" "
                "offset=\"0\"/><p>",
                P->nverts, ntri);
    } else {
        unsigned char hdr[84] = "binary STL: convex hull written by fureru mesh";
        uint32_t nt = (uint32_t)ntri;
        memcpy(hdr + 80, &nt, 4);
        fwrite(hdr, 1, 84, f);
    }
    bool first = true;
    for (int fc = 0; fc < P->nfaces; fc++) {
        const int *L = P->loop + P->face_start[fc];
        for (int k = 1; k + 1 < P->face_count[fc]; k++) {
            int v[3] = {L[0], L[k], L[k + 1]};
            if (obj) {
                fprintf(f, "f %d %d %d\n", v[0] + 1, v[1] + 1, v[2] + 1);
            } else if (dae) {
                fprintf(f, "%s%d %d %d", first ? "" : " ", v[0], v[1], v[2]);
            } else {
                float rec[12];
                rec[0] = (float)P->normal[fc].x, rec[1] = (float)P->normal[fc].y;
                rec[2] = (float)P->normal[fc].z;
                for (int c = 0; c < 3; c++) {
                    rec[3 + 3 * c] = (float)P->verts[v[c]].x;
                    rec[4 + 3 * c] = (float)P->verts[v[c]].y;
                    rec[5 + 3 * c] = (float)P->verts[v[c]].z;
                }
                unsigned char attr[2] = {0, 0};
                fwrite(rec, sizeof rec, 1, f);
                fwrite(attr, 2, 1, f);
            }
            first = false;
        }
    }
    if (dae)
        fprintf(f, "</p></triangles>\n  </mesh></geometry></library_geometries>\n"
                   "  <library_visual_scenes><visual_scene id=\"s\"><node id=\"n\" name=\"n\">"
                   "<instance_geometry url=\"#hull\"/></node></visual_scene>"
                   "</library_visual_scenes>\n  <scene><instance_visual_scene "
                   "url=\"#s\"/></scene>\n</COLLADA>\n");
    bool failed = ferror(f) != 0;
    return fclose(f) == 0 && !failed ? FR_OK : FR_ERR_IO;
}

/* fureru mesh FILE: what a mesh becomes as a collision hull (and the hull written out). */
static int cmd_mesh(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    double scale = 1;
    long budget = FR_URDF_HULL_VERTICES;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
            if (!parse_double(argv[++i], &scale) || scale == 0)
                return bad_usage("--scale needs a non-zero number", argv[i]);
        } else if (!strcmp(argv[i], "--hull-vertices") && i + 1 < argc) {
            char *end;
            budget = strtol(argv[++i], &end, 10);
            if (*end || budget < 0 || (budget > 0 && budget < 4))
                return bad_usage("--hull-vertices needs 0 (all) or an integer >= 4", argv[i]);
        } else if (!strcmp(argv[i], "--write") && i + 1 < argc) {
            out = argv[++i];
            if (hull_format(out) < 0)
                return bad_usage("--write: the hull is written as .stl (binary STL), .obj or "
                                 ".dae (Collada), by the file's extension",
                                 out);
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            return bad_usage("usage: fureru mesh FILE [--scale S] [--hull-vertices N] [--write "
                             "OUT.stl|.obj|.dae]",
                             argv[i]);
        }
    }
    if (!path) return bad_usage("usage: fureru mesh FILE [...]", NULL);
    char msg[600];
    fr_vec3 *pts = NULL, *hv = NULL;
    int np = 0, nh = 0, nfull = 0;
    double mesh_volume;
    int err =
        fr_mesh_load(path, fr_v3(scale, scale, scale), &pts, &np, &mesh_volume, msg, sizeof msg);
    if (err) {
        fprintf(stderr, "fureru: %s\n", msg);
        return EXIT_BADINPUT;
    }
    double vol = 0, vol_full = 0, s = 1;
    err = fr_hull_simplify(pts, np, (int)budget, &hv, &nh, &vol, &vol_full, &nfull);
    free(pts);
    if (err) {
        /* (the URDF loader's words for it: "no convex hull (invalid argument)" said neither) */
        fprintf(stderr,
                "fureru: mesh '%s': cannot build a convex hull of its %d vertices (flat or "
                "degenerate): %s\n",
                path, np, fr_strerror(err));
        free(hv);
        return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    if (nh < nfull) fr_hull_volume_match(hv, nh, vol_full, &s);
    fr_shape *h = NULL;
    FILE *wf = NULL;
    err = fr_shape_create_convex(hv, nh, &h);
    if (!err && out && !(wf = fopen(out, "wb"))) {
        /* (said before the summary, which a failed write printed as if all went well) */
        fprintf(stderr, "fureru: cannot write '%s': %s\n", out, strerror(errno));
        fr_shape_destroy(h);
        free(hv);
        return EXIT_RUNTIME;
    }
    printf("%s: %d vertices read; convex hull %d vertices, %.6g cm^3\n", path, np, nfull,
           vol_full * 1e6);
    if (nh < nfull)
        printf("  simplified to %d vertices: inscribed hull %.6g cm^3 (%.3g %% less), scaled by "
               "%.6f to the full volume\n",
               nh, vol * 1e6, 100 * (vol_full - vol) / vol_full, s);
    if (!err) {
        /* what the URDF loader warns of, said here too (a torus's hull 81 % beyond it and a
         * 100 m box in millimetres went by without a word: a new user's trial) */
        const fr_polytope *P = &h->poly;
        fr_vec3 lo = P->verts[0], hi = P->verts[0];
        for (int i = 1; i < P->nverts; i++) {
            lo = fr_v3(fmin(lo.x, P->verts[i].x), fmin(lo.y, P->verts[i].y),
                       fmin(lo.z, P->verts[i].z));
            hi = fr_v3(fmax(hi.x, P->verts[i].x), fmax(hi.y, P->verts[i].y),
                       fmax(hi.z, P->verts[i].z));
        }
        const fr_vec3 ext = fr_v3_sub(hi, lo);
        if (fr_mesh_concave_warning(mesh_volume, vol_full, msg, sizeof msg))
            fprintf(stderr, "%s: warning: %s\n", path, msg);
        if (fr_mesh_units_warning(fmax(ext.x, fmax(ext.y, ext.z)),
                                  "--scale 0.001 (in a URDF, <mesh scale=\"0.001 0.001 0.001\">)",
                                  msg, sizeof msg))
            fprintf(stderr, "%s: warning: %s\n", path, msg);
    }
    free(hv);
    if (err && wf) fclose(wf);
    if (!err && wf) {
        errno = 0;
        err = write_hull(&h->poly, wf, hull_format(out));
        if (!err) printf("  written to %s (%d faces)\n", out, h->poly.nfaces);
        if (err) {
            fprintf(stderr, "fureru: cannot write '%s': %s\n", out,
                    errno ? strerror(errno) : "write failed");
            fr_shape_destroy(h);
            return EXIT_RUNTIME;
        }
    }
    fr_shape_destroy(h);
    if (err) {
        fprintf(stderr, "fureru: mesh '%s': %s\n", path, fr_strerror(err));
        return EXIT_RUNTIME;
    }
    return 0;
}

static int cmd_device(int argc, char **argv)
{
    const fr_devreg *reg = fr_server_devices();
    if (argc >= 2 && !strcmp(argv[1], "list")) {
        fr_devreg_print(reg, stdout);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "calibrate")) {
        fr_device *dev = NULL;
        fr_safety_params sp;
        fr_diag d;
        int err = fr_devreg_open(reg, argv[2], NULL, 0, &dev, &sp, &d);
        if (err) {
            fr_diag_print(&d, stderr);
            return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
        }
        fr_device_set_minimum(dev);
        if (!dev->ops->calibrate) {
            fprintf(stderr, "fureru: device '%s' (%s) has no calibration\n", dev->desc.name,
                    dev->desc.driver);
            fr_device_close(dev);
            return EXIT_BADINPUT;
        }
        err = dev->ops->calibrate(dev);
        fr_device_state st;
        fr_device_read(dev, &st);
        fr_device_set_minimum(dev);
        fr_device_close(dev);
        if (err) {
            fprintf(stderr, "fureru: calibration of '%s' failed: %s\n", argv[2], fr_strerror(err));
            return EXIT_RUNTIME;
        }
        printf("%s: calibrated; grip at (%.4f, %.4f, %.4f) m\n", argv[2], st.pose.p.x, st.pose.p.y,
               st.pose.p.z);
        return 0;
    }
    return bad_usage("usage: fureru device list | fureru device calibrate SPEC", NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_BADINPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("fureru %s\n", fr_version());
        return 0;
    }
    /* the command line as typed, for the log's sidecar (getopt_long permutes argv) */
    char **typed = calloc((size_t)argc + 1, sizeof *typed);
    if (!typed) return EXIT_RUNTIME;
    memcpy(typed, argv, (size_t)argc * sizeof *typed);
    if (!strcmp(cmd, "run") || !strcmp(cmd, "check")) {
        int rc = cmd_run_or_check(argc - 1, argv + 1, !strcmp(cmd, "check"), typed);
        free(typed);
        return rc;
    }
    if (!strcmp(cmd, "replay")) {
        int rc = cmd_replay(argc - 1, argv + 1, typed);
        free(typed);
        return rc;
    }
    free(typed);
    if (!strcmp(cmd, "device")) return cmd_device(argc - 1, argv + 1);
    if (!strcmp(cmd, "analyse") || !strcmp(cmd, "analyze"))
        return fri_lab_analyse_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return fri_lab_sweep_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "mesh")) return cmd_mesh(argc - 1, argv + 1);
    return bad_usage("unknown command", cmd);
}
