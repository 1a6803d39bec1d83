/*
 * fureru sweep (docs/experiments.md): a parameter sweep as a list of `fureru run --fast` command
 * lines (runnable unchanged by GNU parallel or a Slurm array), run locally on all cores when
 * asked, and gathered into one CSV and one plot of a measured quantity against the swept
 * parameter, with the theory when the scene has an analysis.
 *
 *   DIR/sweep.yaml    what the sweep is (a different sweep never writes into the same DIR)
 *   DIR/commands.txt  one command line per run
 *   DIR/runs.csv      run number, its log, its values
 *   DIR/runs/NNN.csv  the logs (and their sidecars; NNN.out holds what the run printed)
 *   DIR/results.csv   one row per run: the values and the measured quantities (and theory)
 *   DIR/results.pdf, .svg, .png
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fureru/base.h"
#include "fureru/scene.h"
#include "lab.h"
#include "files.h"

enum { EXIT_RUNTIME = 1, EXIT_BADINPUT = 2, MAX_AXES = 8 };

extern char **environ;

typedef struct axis {
    char *path;    /* the --set path */
    char **values; /* its values, as given */
    int n;
} axis;

typedef struct sweep {
    char scene[PATH_MAX];
    char dir[PATH_MAX];
    char exe[PATH_MAX];
    axis axes[MAX_AXES];
    int naxes;
    long nruns;
    const char *duration, *log_every; /* passed through, or NULL */
} sweep;

/* ---------------------------------------------------------------- values */

int fri_split_values(const char *s, char ***out)
{
    int cap = 8, n = 0, depth = 0;
    char quote = 0;
    char **v = malloc(sizeof *v * (size_t)cap);
    if (!v) return -1;
    const char *start = s;
    for (const char *p = s;; p++) {
        char c = *p;
        if (quote) {
            if (c == quote) quote = 0;
            if (c) continue;
        } else if (c == '"' || c == '\'') {
            quote = c;
            continue;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        }
        if (c == 0 || (c == ',' && depth == 0 && !quote)) {
            while (*start == ' ') start++;
            size_t len = (size_t)(p - start);
            while (len && start[len - 1] == ' ') len--;
            if (n + 1 >= cap) {
                char **nv = realloc(v, sizeof *v * (size_t)(cap *= 2));
                if (!nv) break;
                v = nv;
            }
            v[n++] = strndup(start, len);
            start = p + 1;
        }
        if (!c) break;
    }
    v[n] = NULL;
    *out = v;
    return n;
}

/* a number for a plot axis: the value itself, or the length of a [x, y, z] list */
static bool value_number(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end != s && *end == 0) {
        *out = v;
        return true;
    }
    if (s[0] != '[') return false;
    double sum = 0;
    const char *p = s + 1;
    for (;;) {
        double x = strtod(p, &end);
        if (end == p) return false;
        sum += x * x;
        p = end;
        while (*p == ' ') p++;
        if (*p == ']') break;
        if (*p++ != ',') return false;
    }
    *out = sqrt(sum);
    return true;
}

/* ---------------------------------------------------------------- the run list */

static void put_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* the value index of each axis for run r (the first axis varies slowest) */
static void run_indices(const sweep *sw, long r, int *idx)
{
    for (int a = sw->naxes - 1; a >= 0; a--) {
        idx[a] = (int)(r % sw->axes[a].n);
        r /= sw->axes[a].n;
    }
}

static void log_path(const sweep *sw, long r, char *buf, size_t n)
{
    snprintf(buf, n, "%.3900s/runs/%03ld.csv", sw->dir, r + 1);
}

/* argv of run r (strings owned by sw or by the static buffers of the caller's array) */
static int run_argv(const sweep *sw, long r, char **argv, char *setbuf, size_t setlen, char *logbuf)
{
    int idx[MAX_AXES], k = 0;
    run_indices(sw, r, idx);
    argv[k++] = (char *)sw->exe;
    argv[k++] = "run";
    argv[k++] = (char *)sw->scene;
    argv[k++] = "--fast";
    argv[k++] = "--headless";
    if (sw->duration) {
        argv[k++] = "--duration";
        argv[k++] = (char *)sw->duration;
    }
    if (sw->log_every) {
        argv[k++] = "--log-every";
        argv[k++] = (char *)sw->log_every;
    }
    char *p = setbuf;
    for (int a = 0; a < sw->naxes; a++) {
        argv[k++] = "--set";
        int w = snprintf(p, setlen - (size_t)(p - setbuf), "%s=%s", sw->axes[a].path,
                         sw->axes[a].values[idx[a]]);
        argv[k++] = p;
        p += w + 1;
    }
    argv[k++] = "--log";
    log_path(sw, r, logbuf, PATH_MAX);
    argv[k++] = logbuf;
    argv[k] = NULL;
    return k;
}

static int write_lists(const sweep *sw)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/commands.txt", sw->dir);
    FILE *cmd = fopen(path, "w");
    snprintf(path, sizeof path, "%s/runs.csv", sw->dir);
    FILE *idx = fopen(path, "w");
    if (!cmd || !idx) {
        if (cmd) fclose(cmd);
        if (idx) fclose(idx);
        return -1;
    }
    fputs("run,log", idx);
    for (int a = 0; a < sw->naxes; a++) {
        fputc(',', idx);
        put_csv_field(idx, sw->axes[a].path);
    }
    fputc('\n', idx);
    for (long r = 0; r < sw->nruns; r++) {
        char *argv[64], sets[8192], logp[PATH_MAX];
        int argc = run_argv(sw, r, argv, sets, sizeof sets, logp);
        for (int i = 0; i < argc; i++) {
            if (i) fputc(' ', cmd);
            fri_put_shell_word(cmd, argv[i]);
        }
        fputc('\n', cmd);
        int vi[MAX_AXES];
        run_indices(sw, r, vi);
        fprintf(idx, "%ld,", r + 1);
        put_csv_field(idx, logp);
        for (int a = 0; a < sw->naxes; a++) {
            fputc(',', idx);
            put_csv_field(idx, sw->axes[a].values[vi[a]]);
        }
        fputc('\n', idx);
    }
    int e1 = fclose(cmd), e2 = fclose(idx);
    return e1 || e2 ? -1 : 0;
}

/* sweep.yaml: the definition; a DIR that holds a different one is refused */
static int write_definition(const sweep *sw, fr_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return FR_ERR_NOMEM;
    fputs("# fureru sweep: what this folder holds (docs/experiments.md)\nscene: ", m);
    fr_cfg_write_string(sw->scene, m);
    fprintf(m, "\nruns: %ld\nduration: ", sw->nruns);
    fr_cfg_write_string(sw->duration ? sw->duration : "the scene's", m);
    fputs("\nlog_every: ", m);
    fr_cfg_write_string(sw->log_every ? sw->log_every : "1", m);
    fputs("\nset:\n", m);
    for (int a = 0; a < sw->naxes; a++) {
        fputs("  - path: ", m);
        fr_cfg_write_string(sw->axes[a].path, m);
        fputs("\n    values: [", m);
        for (int i = 0; i < sw->axes[a].n; i++) {
            if (i) fputs(", ", m);
            fr_cfg_write_string(sw->axes[a].values[i], m);
        }
        fputs("]\n", m);
    }
    fclose(m);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.yaml", sw->dir);
    FILE *old = fopen(path, "r");
    if (old) {
        char *prev = malloc(len + 2);
        size_t got = prev ? fread(prev, 1, len + 1, old) : 0;
        fclose(old);
        bool same = prev && got == len && memcmp(prev, text, len) == 0;
        free(prev);
        if (!same) {
            free(text);
            return fr_diag_set(d, FR_ERR_INVAL, path, 0, 0, "",
                               "this folder holds a different sweep; give another --out (its "
                               "logs and plots are kept)");
        }
    }
    FILE *f = fopen(path, "w");
    int err = !f || fwrite(text, 1, len, f) != len;
    if (f && fclose(f)) err = 1;
    free(text);
    return err ? fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot write: %s", strerror(errno))
               : FR_OK;
}

/* ---------------------------------------------------------------- running them here */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* a run whose sidecar reports success is not run again (a sweep resumes) */
static bool run_done(const sweep *sw, long r)
{
    char logp[PATH_MAX], meta[PATH_MAX + 16];
    log_path(sw, r, logp, sizeof logp);
    snprintf(meta, sizeof meta, "%s.meta.yaml", logp);
    FILE *f = fopen(meta, "r");
    if (!f) return false;
    char line[512];
    bool ok = false;
    while (fgets(line, sizeof line, f))
        if (!strcmp(line, "  status: ok\n")) ok = true;
    fclose(f);
    return ok;
}

static void show_progress(bool tty, long done, long total, int running, int failed, double t0)
{
    if (!tty) return;
    double el = now_s() - t0;
    int width = 30, fill = total ? (int)(width * done / total) : width;
    fprintf(stderr, "\rsweep: [");
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '-', stderr);
    fprintf(stderr, "] %ld/%ld runs, %d running, %d failed, %.0f s", done, total, running, failed,
            el);
    if (done > 0 && done < total)
        fprintf(stderr, ", about %.0f s left", el / done * (total - done));
    fputs("\033[K", stderr);
    fflush(stderr);
}

static int run_all(const sweep *sw, int jobs)
{
    bool tty = isatty(STDERR_FILENO);
    pid_t *pids = calloc((size_t)sw->nruns, sizeof *pids);
    if (!pids) return -1;
    long next = 0, done = 0;
    int running = 0, failed = 0;
    double t0 = now_s();
    for (long r = 0; r < sw->nruns; r++)
        if (run_done(sw, r)) {
            pids[r] = -1;
            done++;
        }
    if (done && !tty) printf("sweep: %ld of %ld runs already done\n", done, sw->nruns);
    while (done < sw->nruns) {
        while (running < jobs && next < sw->nruns) {
            if (pids[next] == -1) {
                next++;
                continue;
            }
            char *argv[64], sets[8192], logp[PATH_MAX], outp[PATH_MAX + 8];
            run_argv(sw, next, argv, sets, sizeof sets, logp);
            snprintf(outp, sizeof outp, "%.*s.out", (int)strlen(logp) - 4, logp);
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, outp, O_WRONLY | O_CREAT | O_TRUNC,
                                             0644);
            posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
            posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
            int e = posix_spawn(&pids[next], sw->exe, &fa, NULL, argv, environ);
            posix_spawn_file_actions_destroy(&fa);
            if (e) {
                fprintf(stderr, "\nsweep: cannot start run %ld: %s\n", next + 1, strerror(e));
                pids[next] = -1;
                failed++;
                done++;
            } else {
                running++;
            }
            next++;
        }
        show_progress(tty, done, sw->nruns, running, failed, t0);
        int status;
        pid_t p = waitpid(-1, &status, 0);
        if (p < 0) break;
        for (long r = 0; r < sw->nruns; r++) {
            if (pids[r] != p) continue;
            pids[r] = -1;
            running--;
            done++;
            bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (!ok) failed++;
            if (!tty || !ok)
                printf("%ssweep: run %ld/%ld %s\n", tty ? "\r\033[K" : "", r + 1, sw->nruns,
                       ok ? "done" : "FAILED (see runs/NNN.out)");
        }
    }
    show_progress(tty, done, sw->nruns, running, failed, t0);
    if (tty) fputs("\n", stderr);
    free(pids);
    return failed;
}

/* ---------------------------------------------------------------- gathering */

typedef struct row {
    char **values; /* per axis */
    char log[PATH_MAX];
    bool ok;
    char status[160]; /* the sidecar's, or why there is none */
    bool stick;
    fri_stickslip ss;
    double ticks, sim_time, wall_time, rtf, step_mean, step_p99, max_pen, max_contacts;
} row;

static int read_index(const char *dir, char ***paths, int *naxes, row **rows, long *nrows)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    long n = 0, rcap = 16;
    row *rs = calloc((size_t)rcap, sizeof *rs);
    int na = 0;
    char **ax = NULL;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        /* CSV fields: the same splitting as values, with double quotes */
        char **fields;
        int nf = fri_split_values(line, &fields);
        for (int i = 0; i < nf; i++) { /* unquote "..." */
            char *s = fields[i];
            size_t len = strlen(s);
            if (len >= 2 && s[0] == '"' && s[len - 1] == '"') {
                char *w = s;
                for (size_t j = 1; j + 1 < len; j++) {
                    *w++ = s[j];
                    if (s[j] == '"' && s[j + 1] == '"') j++;
                }
                *w = 0;
            }
        }
        if (!ax && nf >= 2) {
            na = nf - 2;
            ax = calloc((size_t)na + 1, sizeof *ax);
            for (int a = 0; ax && a < na; a++) ax[a] = strdup(fields[a + 2]);
        } else if (ax && nf == na + 2) {
            if (n == rcap) {
                row *nr = realloc(rs, sizeof *rs * (size_t)(rcap *= 2));
                if (!nr) break;
                rs = nr;
            }
            memset(&rs[n], 0, sizeof rs[n]);
            snprintf(rs[n].log, sizeof rs[n].log, "%s", fields[1]);
            rs[n].values = calloc((size_t)na + 1, sizeof *rs[n].values);
            for (int a = 0; a < na; a++) rs[n].values[a] = strdup(fields[a + 2]);
            n++;
        }
        for (int i = 0; i < nf; i++) free(fields[i]);
        free(fields);
    }
    free(line);
    fclose(f);
    *paths = ax;
    *naxes = na;
    *rows = rs;
    *nrows = n;
    return ax ? 0 : -1;
}

static void read_result(row *r)
{
    char meta[PATH_MAX + 16];
    snprintf(meta, sizeof meta, "%s.meta.yaml", r->log);
    fr_cfg_doc *doc;
    fr_diag d;
    snprintf(r->status, sizeof r->status, "not run: no sidecar");
    if (fr_cfg_load_file(meta, &doc, &d) != FR_OK) return;
    const fr_cfg_node *res = fr_cfg_get(fr_cfg_root(doc), "result");
    if (fr_cfg_string(res, "status", "", r->status, sizeof r->status, &d) || !r->status[0])
        snprintf(r->status, sizeof r->status, "no result: still running, or killed");
    r->ok = !strcmp(r->status, "ok");
    fr_cfg_double(res, "ticks", NAN, FR_CFG_ANY, &r->ticks, &d);
    fr_cfg_double(res, "sim_time", NAN, FR_CFG_ANY, &r->sim_time, &d);
    fr_cfg_double(res, "wall_time", NAN, FR_CFG_ANY, &r->wall_time, &d);
    fr_cfg_double(res, "real_time_factor", NAN, FR_CFG_ANY, &r->rtf, &d);
    fr_cfg_double(res, "step_mean", NAN, FR_CFG_ANY, &r->step_mean, &d);
    fr_cfg_double(res, "step_p99", NAN, FR_CFG_ANY, &r->step_p99, &d);
    fr_cfg_double(res, "max_penetration", NAN, FR_CFG_ANY, &r->max_pen, &d);
    fr_cfg_double(res, "max_contacts", NAN, FR_CFG_ANY, &r->max_contacts, &d);
    const fr_cfg_node *an = fr_cfg_get(fr_cfg_root(doc), "analysis");
    bool stick = fr_cfg_node_kind(an) == FR_CFG_MAP;
    fr_cfg_free(doc);
    if (stick && r->ok) r->stick = fri_stickslip_analyse(r->log, &r->ss, NULL, NULL, NULL, &d) == 0;
}

/* 10 significant digits: a median of times on a 1 ms grid is 0.157, not its sum's
 * 0.15700000000000003 (the logs keep the exact doubles) */
static void put_num(FILE *f, double v)
{
    if (isnan(v))
        fputs("nan", f);
    else
        fprintf(f, "%.10g", v);
}

/* The x axis over [xmin, xmax]: logarithmic when the values span a decade or more (V = 0.01,
 * 0.1, 1 on a linear axis bunched two runs at its left end, which began at −0.2), a range
 * around a single value (not gnuplot's "empty x range"), else gnuplot's own. */
static void x_axis(double xmin, double xmax, char *buf, size_t n)
{
    if (xmin == xmax && isfinite(xmin)) {
        const double pad = xmin != 0 ? 0.1 * fabs(xmin) : 1.0;
        snprintf(buf, n, "set xrange [%.17g:%.17g]", xmin - pad, xmin + pad);
    } else if (xmin > 0 && isfinite(xmax) && xmax >= 10 * xmin) {
        snprintf(buf, n, "set logscale x 10\nset autoscale xfix\nset xrange [*:*]");
    } else {
        snprintf(buf, n, "set xrange [*:*]");
    }
}

/* which analysis parameter varies over the runs (stick-slip): 0 V, 1 m, 2 k, 3 mu_s, 4 mu_k */
static const char *const ss_param_label[] = {"drive speed V (m/s)", "mass m (kg)",
                                             "spring stiffness k (N/m)", "static friction μ_s",
                                             "kinetic friction μ_k"};
static double ss_param(const fri_stickslip *s, int which)
{
    const double p[] = {s->v, s->m, s->k, s->mu_s, s->mu_k};
    return p[which];
}

static int plot_results(const char *dir, char **paths, int naxes, const row *rows, long n,
                        bool stick)
{
    (void)naxes;
    char base[PATH_MAX + 16];
    snprintf(base, sizeof base, "%s/results", dir);
    FILE *gp = fri_plot_open();
    if (!gp) return 1;
    char body[8192];
    if (stick) {
        /* x: the first analysis parameter that varies; theory as a curve when only it varies */
        int xv = -1, nvary = 0;
        const fri_stickslip *s0 = NULL;
        for (long i = 0; i < n; i++)
            if (rows[i].stick && !s0) s0 = &rows[i].ss;
        for (int w = 0; w < 5 && s0; w++)
            for (long i = 0; i < n; i++)
                if (rows[i].stick && ss_param(&rows[i].ss, w) != ss_param(s0, w)) {
                    if (xv < 0) xv = w;
                    nvary++;
                    break;
                }
        /* none of them varies (a sweep over dt, say): the first swept value, when numbers */
        bool by_axis = false;
        if (xv < 0) {
            double x;
            by_axis = true;
            for (long i = 0; i < n; i++)
                if (rows[i].stick && !value_number(rows[i].values[0], &x)) by_axis = false;
            xv = 0;
        }
        /* the stick time: the block's own (the contact probe's sliding column) when every run
         * logged it, else the force's rise; the theory to match */
        bool own = true;
        for (long i = 0; i < n; i++)
            if (rows[i].stick && !rows[i].ss.sliding_col[0]) own = false;
        fputs("$runs << EOD\n", gp);
        double xmin = INFINITY, xmax = -INFINITY;
        for (long i = 0; i < n; i++) {
            if (!rows[i].stick) continue;
            const fri_stickslip *s = &rows[i].ss;
            double x = ss_param(s, xv);
            if (by_axis) value_number(rows[i].values[0], &x);
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            fprintf(gp, "%.17g %.17g %.17g %.17g %.17g\n", x, own ? s->stuck_med : s->r.stick,
                    s->r.period, own ? s->stuck : s->stick, s->period);
        }
        fputs("EOD\n", gp);
        char theory[1024];
        if (nvary == 1 && xv == 0 && !by_axis && s0) {
            /* as functions of V: stuck 2(μ_s − μ_k)·m·g/(k·V) exactly; the period adds the slip
             * of the exact solution, (2π − 2·atan(Δ·ω/V))/ω, Δ = (μ_s − μ_k)·m·g/k */
            const double c = 2 * (s0->mu_s - s0->mu_k) * s0->m * s0->g / s0->k;
            const double om = sqrt(s0->k / s0->m), D = 0.5 * c;
            snprintf(theory, sizeof theory,
                     "  [%.17g:%.17g] %.17g/x with lines lw 1.2 dt 2 lc rgb '#c0392b' "
                     "title 'stick time, theory 2(μ_s − μ_k) m g / (k V)', \\\n"
                     "  [%.17g:%.17g] %.17g/x + (2*pi - 2*atan(%.17g/x))/%.17g with lines lw 1.2 "
                     "dt 2 lc rgb '#1f4e9c' title 'period, theory (exact)'\n",
                     xmin, xmax, c, xmin, xmax, c, D * om, om);
        } else {
            snprintf(theory, sizeof theory,
                     "  $runs using 1:4 with linespoints lw 1.2 dt 2 pt 1 lc rgb '#c0392b' "
                     "title 'stick time, theory', \\\n"
                     "  $runs using 1:5 with linespoints lw 1.2 dt 2 pt 1 lc rgb '#1f4e9c' "
                     "title 'period, theory'\n");
        }
        char fixed[512] = "", xlabel[600];
        if (s0 && (nvary == 1 || by_axis)) {
            /* the parameters that stay put (the one along x left out) */
            char part[5][64];
            snprintf(part[0], sizeof part[0], "V = %g m/s", s0->v);
            snprintf(part[1], sizeof part[1], "m = %g kg", s0->m);
            snprintf(part[2], sizeof part[2], "k = %g N/m", s0->k);
            snprintf(part[3], sizeof part[3], "μ_s = %g", s0->mu_s);
            snprintf(part[4], sizeof part[4], "μ_k = %g", s0->mu_k);
            size_t len = (size_t)snprintf(fixed, sizeof fixed, "' . \"\\n\" . '{/*0.85 ");
            for (int w = 0, first = 1; w < 5 && len < sizeof fixed; w++)
                if (by_axis || w != xv) {
                    len += (size_t)snprintf(fixed + len, sizeof fixed - len, "%s%s",
                                            first ? "" : ", ", part[w]);
                    first = 0;
                }
            if (len < sizeof fixed) snprintf(fixed + len, sizeof fixed - len, "}");
        } else if (nvary > 1)
            snprintf(fixed, sizeof fixed,
                     "' . \"\\n\" . '{/*0.85 %d of m, k, V, μ_s, μ_k vary: the points mix "
                     "them (results.csv lists every run)}",
                     nvary);
        if (by_axis)
            fri_plot_escape(paths[0], xlabel, sizeof xlabel);
        else
            snprintf(xlabel, sizeof xlabel, "%s", ss_param_label[xv]);
        char xrange[128];
        x_axis(xmin, xmax, xrange, sizeof xrange);
        snprintf(body, sizeof body,
                 "set title 'Stick-slip sweep: stick time and period against the %s%s'\n"
                 "set xlabel '%s'\nset ylabel 'time (s)'\nset grid lc rgb '#dddddd'\n"
                 "set key below box samplen 2\n%s\nset yrange [0:*]\n"
                 "set offsets graph 0.05, graph 0.05, 0, 0\n"
                 "plot $runs using 1:3 with points pt 7 ps 1.1 lc rgb '#1f4e9c' "
                 "title 'period, measured (median)', \\\n"
                 "  $runs using 1:2 with points pt 5 ps 1.1 lc rgb '#c0392b' "
                 "title '%s, measured (median)', \\\n%s",
                 by_axis   ? xlabel
                 : xv == 0 ? "drive speed"
                           : ss_param_label[xv],
                 fixed, xlabel, xrange, own ? "the block''s stick time" : "force rise", theory);
    } else {
        /* no analysis: the mean step time against the first swept value */
        char p0[512];
        fri_plot_escape(paths[0], p0, sizeof p0);
        fputs("$runs << EOD\n", gp);
        double xmin = INFINITY, xmax = -INFINITY;
        for (long i = 0; i < n; i++) {
            double x;
            if (!rows[i].ok || !value_number(rows[i].values[0], &x)) continue;
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            fprintf(gp, "%.17g %.17g %.17g\n", x, 1e6 * rows[i].step_mean, rows[i].rtf);
        }
        fputs("EOD\n", gp);
        char xrange[128];
        x_axis(xmin, xmax, xrange, sizeof xrange);
        snprintf(body, sizeof body,
                 "set title 'Sweep: mean step time against %s'\nset xlabel '%s'\n"
                 "set ylabel 'mean step time (µs)'\nset grid lc rgb '#dddddd'\n"
                 "set key top left box opaque\nset offsets graph 0.05, graph 0.05, 0, 0\n"
                 "%s\nset yrange [0:*]\n"
                 "plot $runs using 1:2 with linespoints pt 7 lw 1.2 lc rgb '#1f4e9c' "
                 "title 'mean step time (fast mode)'\n",
                 p0, p0, xrange);
    }
    fri_plot_outputs(gp, base, body);
    int rc = fri_plot_close(gp);
    if (rc == 0) printf("sweep: plots %s.pdf, %s.svg, %s.png\n", base, base, base);
    return rc;
}

static int gather(const char *dir)
{
    char **paths;
    int naxes;
    row *rows;
    long n;
    if (read_index(dir, &paths, &naxes, &rows, &n) != 0) {
        fprintf(stderr, "fureru: %s/runs.csv: not a sweep folder (fureru sweep writes it)\n", dir);
        return EXIT_BADINPUT;
    }
    bool stick = false;
    long ok = 0;
    for (long i = 0; i < n; i++) {
        read_result(&rows[i]);
        stick |= rows[i].stick;
        ok += rows[i].ok;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "fureru: cannot write %s: %s\n", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    fputs("run", f);
    for (int a = 0; a < naxes; a++) {
        fputc(',', f);
        put_csv_field(f, paths[a]);
    }
    fputs(",status", f);
    if (stick)
        fputs(",V,m,k,mu_s,mu_k,cycles,peak,peak_theory,trough,trough_theory,rise,"
              "rise_theory,fall,fall_theory,period,period_theory,stuck,stuck_theory,slipping,"
              "slipping_theory,notes",
              f);
    fputs(",ticks,sim_time,wall_time,real_time_factor,step_mean,step_p99,max_contacts,"
          "max_penetration\n",
          f);
    for (long i = 0; i < n; i++) {
        const row *r = &rows[i];
        fprintf(f, "%ld", i + 1);
        for (int a = 0; a < naxes; a++) {
            fputc(',', f);
            put_csv_field(f, r->values[a]);
        }
        fputs(r->ok ? ",ok" : ",failed", f);
        if (stick) {
            const fri_stickslip *s = &r->ss;
            double v[] = {s->v,        s->m,         s->k,      s->mu_s,         s->mu_k,
                          s->r.cycles, s->r.peak,    s->peak,   s->r.trough,     s->trough,
                          s->r.stick,  s->stick,     s->r.slip, s->slip,         s->r.period,
                          s->period,   s->stuck_med, s->stuck,  s->slipping_med, s->slipping};
            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
                fputc(',', f);
                put_num(f, r->stick ? v[k] : NAN);
            }
            /* what analyse would note for the run (a coarse step read +7330 % unflagged) */
            fputc(',', f);
            const int notes = r->stick ? fri_stickslip_notes(s) : 0;
            for (int b = 0, first = 1; b < FRI_SS_NOTES; b++)
                if (notes & 1 << b) {
                    fprintf(f, "%s%s", first ? "" : ";", fri_stickslip_note_names[b]);
                    first = 0;
                }
        }
        double g[] = {r->ticks,     r->sim_time, r->wall_time,    r->rtf,
                      r->step_mean, r->step_p99, r->max_contacts, r->max_pen};
        for (size_t k = 0; k < sizeof g / sizeof g[0]; k++) {
            fputc(',', f);
            put_num(f, g[k]);
        }
        fputc('\n', f);
    }
    fclose(f);
    printf("sweep: %ld of %ld runs gathered into %s\n", ok, n, path);
    /* said here, not left to gnuplot's warnings about data it was not given */
    for (long i = 0; i < n; i++)
        if (!rows[i].ok)
            printf("sweep: run %ld failed (%s): its row has no results, the plot leaves it out\n",
                   i + 1, rows[i].status);
    int rc = ok ? plot_results(dir, paths, naxes, rows, n, stick) : 0;
    for (long i = 0; i < n; i++) {
        for (int a = 0; a < naxes; a++) free(rows[i].values[a]);
        free(rows[i].values);
    }
    free(rows);
    for (int a = 0; a < naxes; a++) free(paths[a]);
    free(paths);
    return ok == n && rc >= 0 ? 0 : EXIT_RUNTIME;
}

/* ---------------------------------------------------------------- the command */

static void usage_sweep(FILE *o)
{
    fputs("usage: fureru sweep SCENE --set PATH=V1,V2,... [--set ...] --out DIR [--run]\n"
          "                    [--jobs N] [--duration S] [--log-every N]\n"
          "       fureru sweep --gather DIR\n"
          "  writes DIR/commands.txt (one `fureru run --fast` per run, for GNU parallel or a\n"
          "  Slurm array; several --set lists make every combination), runs them here on N\n"
          "  cores with --run (default all), and gathers the runs into DIR/results.csv and a plot\n"
          "  DIR/results.{pdf,svg,png} (after --run, or with --gather once they ran elsewhere)\n",
          o);
}

int fri_lab_sweep_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"set", required_argument, 0, 's'},
                                             {"out", required_argument, 0, 'o'},
                                             {"run", no_argument, 0, 'r'},
                                             {"jobs", required_argument, 0, 'j'},
                                             {"duration", required_argument, 0, 'd'},
                                             {"log-every", required_argument, 0, 'e'},
                                             {"gather", required_argument, 0, 'g'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    sweep sw;
    memset(&sw, 0, sizeof sw);
    const char *out = NULL, *gather_dir = NULL;
    bool run = false;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    optind = 1;
    int c, rc = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1 && !rc) {
        switch (c) {
        case 's': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || sw.naxes == MAX_AXES) {
                fprintf(stderr, "fureru: --set needs PATH=V1,V2,... (at most %d): %s\n", MAX_AXES,
                        optarg);
                rc = EXIT_BADINPUT;
                break;
            }
            axis *a = &sw.axes[sw.naxes++];
            a->path = strndup(optarg, (size_t)(eq - optarg));
            a->n = fri_split_values(eq + 1, &a->values);
            if (a->n < 1) rc = EXIT_BADINPUT;
            break;
        }
        case 'o':
            out = optarg;
            break;
        case 'r':
            run = true;
            break;
        case 'j': {
            char *end;
            jobs = strtol(optarg, &end, 10);
            if (*end || jobs < 1) {
                fprintf(stderr, "fureru: --jobs needs a positive integer: %s\n", optarg);
                rc = EXIT_BADINPUT;
            }
            break;
        }
        case 'd':
            sw.duration = optarg;
            break;
        case 'e':
            sw.log_every = optarg;
            break;
        case 'g':
            gather_dir = optarg;
            break;
        case 'h':
            usage_sweep(stdout);
            return 0;
        default:
            rc = EXIT_BADINPUT;
        }
    }
    if (!rc && gather_dir) {
        if (optind != argc)
            rc = EXIT_BADINPUT;
        else
            return gather(gather_dir);
    }
    if (!rc && (optind != argc - 1 || !out || sw.naxes == 0)) {
        fprintf(stderr,
                "fureru: sweep needs SCENE, at least one --set PATH=V1,V2,... and --out DIR\n");
        rc = EXIT_BADINPUT;
    }
    if (rc) {
        usage_sweep(stderr);
        return rc;
    }
    char sbuf[PATH_MAX + 64];
    const char *scene = fri_lab_find_scene(argv[optind], sbuf, sizeof sbuf);
    if (!realpath(scene, sw.scene)) {
        fprintf(stderr, "fureru: %s: no such scene\n", scene);
        return EXIT_BADINPUT;
    }
    if (!realpath("/proc/self/exe", sw.exe)) return EXIT_RUNTIME;
    sw.nruns = 1;
    for (int a = 0; a < sw.naxes; a++) sw.nruns *= sw.axes[a].n;
    /* every combination must load: bad paths and values fail here, before anything runs */
    for (long r = 0; r < sw.nruns; r++) {
        int idx[MAX_AXES];
        run_indices(&sw, r, idx);
        char sets[MAX_AXES][1024];
        const char *setp[MAX_AXES];
        for (int a = 0; a < sw.naxes; a++) {
            snprintf(sets[a], sizeof sets[a], "%s=%s", sw.axes[a].path, sw.axes[a].values[idx[a]]);
            setp[a] = sets[a];
        }
        fr_scene *sc;
        fr_diag d;
        int err = fr_scene_load(sw.scene, setp, sw.naxes, &sc, &d);
        if (err) {
            fprintf(stderr, "fureru: sweep run %ld:\n", r + 1);
            fr_diag_print(&d, stderr);
            return EXIT_BADINPUT;
        }
        fr_scene_destroy(sc);
    }
    char runs[PATH_MAX + 16];
    snprintf(runs, sizeof runs, "%s/runs/x", out);
    if (fri_make_parent_dirs(runs) != 0 || !realpath(out, sw.dir)) {
        fprintf(stderr, "fureru: cannot create %s/runs: %s\n", out, strerror(errno));
        return EXIT_RUNTIME;
    }
    fr_diag d;
    if (write_definition(&sw, &d) != FR_OK) {
        fr_diag_print(&d, stderr);
        return EXIT_BADINPUT;
    }
    if (write_lists(&sw) != 0) {
        fprintf(stderr, "fureru: cannot write the run lists in %s\n", sw.dir);
        return EXIT_RUNTIME;
    }
    printf("sweep: %ld runs of %s in %s/commands.txt\n", sw.nruns, sw.scene, sw.dir);
    if (!run) {
        printf("  run them here:   fureru sweep ... --run (the same arguments)\n"
               "  or elsewhere:    parallel < %s/commands.txt   (or one line per Slurm array "
               "task)\n"
               "  then gather:     fureru sweep --gather %s\n",
               sw.dir, sw.dir);
        return 0;
    }
    fflush(stdout);
    int failed = run_all(&sw, (int)jobs);
    rc = gather(sw.dir);
    return failed ? EXIT_RUNTIME : rc;
}
