/* The fureru command line. Exit status: 0 success, 1 runtime failure, 2 bad input. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fureru/base.h"
#include "fureru/scene.h"
#include "fureru/server.h"
#include "lab.h"

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
        "  fureru check SCENE [--set K=V ...]\n"
        "                               parse and validate a scene only\n"
        "  fureru analyse LOG.csv [--out DIR] [--no-plot]\n"
        "                               analyse a log from its sidecar alone: report and plots\n"
        "  fureru sweep SCENE --set K=V1,V2,... [--set ...] --out DIR [--run] [--jobs N]\n"
        "               [--duration S] [--log-every N]\n"
        "                               write (and with --run, run and gather) a sweep\n"
        "  fureru sweep --gather DIR    gather a sweep's runs into a CSV and a plot\n"
        "  fureru device list           drivers, device files and attached hardware\n"
        "  fureru device calibrate SPEC hold the grip at the home pose, then run this\n"
        "  fureru --help | --version\n"
        "\n"
        "run options:\n"
        "  --duration S     simulated seconds to run (default: the scene's world.duration)\n"
        "  --fast           as fast as possible, no real-time pacing; deterministic\n"
        "  --headless       no viewer (the default when there is no display)\n"
        "  --log FILE.csv   write the state every logged tick as CSV (folders are created),\n"
        "                   and what made it to FILE.csv.meta.yaml\n"
        "  --log-every N    log one tick in N (default 1)\n"
        "  --set PATH=VALUE override a scene value, e.g. --set world.dt=0.002\n"
        "                   --set bodies.box.mass=2 (see docs/scenes.md); repeatable\n"
        "  --device SPEC    haptic device: a name (virtual, ...) or a device file; overrides\n"
        "                   the scene's device.spec (see config/devices/)\n"
        "  --no-rt          do not try SCHED_FIFO and mlockall\n"
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
        "                   device folder alone\n"
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
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    fr_server_opts opts = fr_server_opts_default();
    bool headless = false;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int nsets = 0, rc = 0;
    if (!sets) return EXIT_RUNTIME;
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
        case 'h':
            usage(stdout);
            free(sets);
            return 0;
        default:
            rc = EXIT_BADINPUT;
        }
        if (rc) {
            free(sets);
            return rc;
        }
    }
    if (optind != argc - 1) {
        free(sets);
        return bad_usage(optind >= argc ? "missing SCENE" : "unexpected argument",
                         optind < argc - 1 ? argv[optind + 1] : NULL);
    }
    char scene_buf[PATH_MAX + 64];
    const char *path = fri_lab_find_scene(argv[optind], scene_buf, sizeof scene_buf);
    opts.headless = headless;
    opts.argv = (const char *const *)full_argv;
    opts.progress = isatty(STDERR_FILENO) ? stderr : NULL;

    fr_diag d;
    fr_scene *scene = NULL;
    int err = fr_scene_load(path, sets, nsets, &scene, &d);
    free(sets);
    if (err) {
        fr_diag_print(&d, stderr);
        return err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    if (check_only) {
        printf("%s: ok (%d bodies, dt %g s, duration %g s)\n", path,
               fr_world_body_count(fr_scene_world(scene)),
               fr_world_get_def(fr_scene_world(scene))->dt, fr_scene_duration(scene));
        fr_scene_destroy(scene);
        return 0;
    }

    fr_server *srv = NULL;
    err = fr_server_create(scene, &opts, &srv, &d);
    if (err) {
        fr_diag_print(&d, stderr);
        fr_scene_destroy(scene);
        return err == FR_ERR_IO || err == FR_ERR_NOMEM ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    if (!opts.headless && (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY")))
        fprintf(stderr, "fureru: this build has no viewer yet; running headless\n");
    g_server = srv;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    err = fr_server_run(srv);
    fr_server_print_summary(srv, stdout);
    fflush(stdout);
    if (err) fprintf(stderr, "fureru: run failed: %s\n", fr_strerror(err));
    g_server = NULL;
    fr_server_destroy(srv);
    fr_scene_destroy(scene);
    return err ? EXIT_RUNTIME : 0;
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
    if (!strcmp(cmd, "run")) return cmd_run_or_check(argc - 1, argv + 1, false, typed);
    if (!strcmp(cmd, "check")) return cmd_run_or_check(argc - 1, argv + 1, true, typed);
    if (!strcmp(cmd, "device")) return cmd_device(argc - 1, argv + 1);
    if (!strcmp(cmd, "analyse") || !strcmp(cmd, "analyze"))
        return fri_lab_analyse_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return fri_lab_sweep_main(argc - 1, argv + 1);
    return bad_usage("unknown command", cmd);
}
