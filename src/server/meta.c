/* The sidecar LOG.meta.yaml (meta.h). Numbers are written with fr_format_double, so they read
 * back exactly; strings through fr_cfg_write_string, so YAML reads them back unchanged. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "fureru/base.h"
#include "meta.h"

static void meta_path(char *buf, size_t n, const char *log_path)
{
    snprintf(buf, n, "%s.meta.yaml", log_path);
}

static void put_num(FILE *f, double v)
{
    char b[FR_FORMAT_DOUBLE_MAX];
    fr_format_double(v, b);
    fputs(b, f);
}

static void put_key_num(FILE *f, int indent, const char *key, double v, const char *comment)
{
    fprintf(f, "%*s%s: ", indent, "", key);
    put_num(f, v);
    if (comment) fprintf(f, "  # %s", comment);
    fputc('\n', f);
}

static void put_key_str(FILE *f, int indent, const char *key, const char *v)
{
    fprintf(f, "%*s%s: ", indent, "", key);
    if (v)
        fr_cfg_write_string(v, f);
    else
        fputs("null", f);
    fputc('\n', f);
}

static void put_command(FILE *f, const char *const *argv)
{
    fputs("command: [", f);
    for (int i = 0; argv && argv[i]; i++) {
        if (i) fputs(", ", f);
        fr_cfg_write_string(argv[i], f);
    }
    fputs("]\n", f);
    /* the same as one line a shell runs unchanged */
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    if (!m) return;
    for (int i = 0; argv && argv[i]; i++) {
        if (i) fputc(' ', m);
        fri_put_shell_word(m, argv[i]);
    }
    fclose(m);
    put_key_str(f, 0, "command_line", line);
    free(line);
}

static void put_analysis(FILE *f, const fr_scene_analysis *a)
{
    if (a->type != FR_ANALYSIS_STICK_SLIP) {
        fputs("analysis: null\n", f);
        return;
    }
    fputs("analysis:\n", f);
    put_key_str(f, 2, "type", "stick-slip");
    put_key_str(f, 2, "probe", a->probe);
    fprintf(f, "  force_columns: [%s.fx, %s.fy, %s.fz]\n", a->probe, a->probe, a->probe);
    fputs("  direction: [", f);
    put_num(f, a->direction.x);
    fputs(", ", f);
    put_num(f, a->direction.y);
    fputs(", ", f);
    put_num(f, a->direction.z);
    fputs("]  # the analysed force is the probe's along the drive\n", f);
    put_key_str(f, 2, "spring", a->spring);
    put_key_str(f, 2, "body", a->body);
    put_key_str(f, 2, "on", a->on);
    put_key_num(f, 2, "m", a->m, "kg, mass of the pulled body");
    put_key_num(f, 2, "k", a->k, "N/m, spring stiffness");
    put_key_num(f, 2, "c", a->c, "N s/m, spring damping (the theory is for c = 0)");
    put_key_num(f, 2, "V", a->v, "m/s, drive speed");
    put_key_num(f, 2, "mu_s", a->mu_s, "static friction of the pair");
    put_key_num(f, 2, "mu_k", a->mu_k, "kinetic friction of the pair");
    put_key_num(f, 2, "g", a->g, "m/s^2, gravity along the support's normal (presses the body)");
    put_key_num(f, 2, "g_drive", a->g_drive, "m/s^2, gravity along the drive");
    put_key_num(f, 2, "g_side", a->g_side, "m/s^2, gravity across the drive on the support");
}

int fri_meta_write(const char *log_path, const fr_scene *scene, const fr_server_opts *opts,
                   int ncols, fr_diag *d)
{
    char path[PATH_MAX + 16], abs_log[PATH_MAX], abs_scene[PATH_MAX], cwd[PATH_MAX];
    meta_path(path, sizeof path, log_path);
    FILE *f = fopen(path, "w");
    if (!f)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot write the log's sidecar: %s",
                           strerror(errno));
    const fr_world *w = fr_scene_world((fr_scene *)scene);
    double dt = fr_world_get_def(w)->dt;
    fprintf(f, "# What made %s: written by fureru run (docs/scenes.md, \"The sidecar\").\n",
            log_path);
    put_key_str(f, 0, "fureru", fr_version());
    put_key_str(f, 0, "log", realpath(log_path, abs_log) ? abs_log : log_path);
    fprintf(f, "columns: %d\n", ncols);
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32] = "";
    if (gmtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    put_key_str(f, 0, "created", stamp);
    put_key_str(f, 0, "working_directory", getcwd(cwd, sizeof cwd) ? cwd : NULL);
    if (opts->argv) put_command(f, opts->argv);
    const char *sp = fr_scene_path(scene);
    put_key_str(f, 0, "scene_path", realpath(sp, abs_scene) ? abs_scene : sp);
    fputs("set: [", f);
    for (int i = 0; i < fr_scene_set_count(scene); i++) {
        if (i) fputs(", ", f);
        fr_cfg_write_string(fr_scene_set_at(scene, i), f);
    }
    fputs("]\n", f);
    fputs("run:\n", f);
    double duration = opts->duration > 0 ? opts->duration : fr_scene_duration(scene);
    put_key_num(f, 2, "duration", duration, "s simulated");
    put_key_num(f, 2, "dt", dt, "s");
    fprintf(f, "  substeps: %d  # internal steps a tick (docs/world.md, \"Substeps\")\n",
            fr_world_substeps(w, NULL));
    fprintf(f, "  fast: %s\n  log_every: %d\n", opts->fast ? "true" : "false", opts->log_every);
    put_key_str(f, 2, "device", opts->device);
    put_analysis(f, fr_scene_get_analysis(scene));
    fputs("scene:  # the scene file after --set, as it ran\n", f);
    fr_scene_write_yaml(scene, f, 2);
    if (fclose(f) != 0)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot write the log's sidecar: %s",
                           strerror(errno));
    return FR_OK;
}

void fri_meta_append_result(const char *log_path, const fr_server_stats *st, int err)
{
    char path[PATH_MAX + 16];
    meta_path(path, sizeof path, log_path);
    FILE *f = fopen(path, "a");
    if (!f) return;
    fputs("result:  # appended when the run ended\n", f);
    /* what ended it, as the run's message says (an energy gain is not a NaN) */
    char status[400];
    if (!err && st->interrupted) /* (a stop asked for: not the whole run; a sweep must not count
                                     it as finished, a new user's trial) */
        snprintf(status, sizeof status,
                 "interrupted at t = %.6g s (simulated) of the run's duration", st->sim_time);
    else if (!err)
        snprintf(status, sizeof status, "ok");
    else if (st->energy.fault.failed)
        snprintf(status, sizeof status,
                 "energy audit: body '%s' gained %.6g J in one tick at t = %.6g s (bound %.6g J)",
                 st->energy.fault.body, st->energy.fault.gain, st->energy.fault.time,
                 st->energy.fault.bound);
    else if (st->fault.code)
        snprintf(status, sizeof status, "%s diverged at t = %.6g s: %s = %g", st->fault.what,
                 st->fault.time, st->fault.quantity, st->fault.value);
    else
        snprintf(status, sizeof status, "%s", fr_strerror(err));
    put_key_str(f, 2, "status", status);
    fprintf(f, "  ticks: %llu\n", (unsigned long long)st->ticks);
    put_key_num(f, 2, "sim_time", st->sim_time, "s");
    put_key_num(f, 2, "wall_time", st->wall_time, "s");
    put_key_num(f, 2, "real_time_factor", st->wall_time > 0 ? st->sim_time / st->wall_time : 0,
                NULL);
    put_key_num(f, 2, "step_p50", st->step.p50, "s");
    put_key_num(f, 2, "step_p99", st->step.p99, "s");
    put_key_num(f, 2, "step_mean", st->step.mean, "s");
    fprintf(f, "  max_contacts: %d\n", st->max_contacts);
    put_key_num(f, 2, "max_penetration", st->max_penetration, "m");
    fprintf(f, "  log_records: %llu\n  log_dropped: %llu\n", (unsigned long long)st->log_records,
            (unsigned long long)st->log_dropped);
    put_key_num(f, 2, "tick_cpu", st->tick_cpu, "s");
    put_key_num(f, 2, "log_cpu", st->log_cpu, "s");
    fclose(f);
}
