/*
 * The stick-slip analysis of a log (docs/experiments.md): the spring probe's force along the drive
 * through the sawtooth detector, against the theory of a block of mass m pulled through a spring
 * k whose end moves at V, with static μ_s > kinetic μ_k:
 *   for V/ω small against Δ = (μ_s − μ_k)·m·g/k: peak μ_s·m·g, trough (2μ_k − μ_s)·m·g,
 *   stick 2(μ_s − μ_k)·m·g/(k·V), slip π·√(m/k), period = stick + slip; the analysis takes the
 *   exact piecewise solution (theory(), below) for any V.
 * Everything comes from the log's sidecar; `fureru analyse LOG` prints the table, writes it next
 * to the log and plots the force with the theory (PDF, SVG, PNG).
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fureru/base.h"
#include "fureru/scene.h"
#include "lab.h"
#include "files.h"

enum { EXIT_RUNTIME = 1, EXIT_BADINPUT = 2 };

static int read_params(const fr_cfg_node *a, fri_stickslip *s, fr_diag *d)
{
    int err = fr_cfg_string(a, "probe", "", s->probe, sizeof s->probe, d);
    double dir[3];
    static const double xdir[3] = {1, 0, 0};
    if (!err) err = fr_cfg_doubles(a, "direction", 3, xdir, FR_CFG_ANY, dir, d);
    if (!err) err = fr_cfg_double(a, "m", 0, FR_CFG_POSITIVE, &s->m, d);
    if (!err) err = fr_cfg_double(a, "k", 0, FR_CFG_POSITIVE, &s->k, d);
    if (!err) err = fr_cfg_double(a, "V", 0, FR_CFG_POSITIVE, &s->v, d);
    if (!err) err = fr_cfg_double(a, "mu_s", 0, FR_CFG_NONNEGATIVE, &s->mu_s, d);
    if (!err) err = fr_cfg_double(a, "mu_k", 0, FR_CFG_NONNEGATIVE, &s->mu_k, d);
    if (!err) err = fr_cfg_double(a, "g", 0, FR_CFG_POSITIVE, &s->g, d);
    if (!err) err = fr_cfg_double(a, "g_drive", 0.0, FR_CFG_ANY, &s->g_drive, d);
    if (err) return err;
    const fr_cfg_node *fc = fr_cfg_get(a, "force_columns");
    if (fr_cfg_node_kind(fc) != FR_CFG_SEQ || fr_cfg_node_len(fc) != 3)
        return fr_cfg_error(fc ? fc : a, d, FR_ERR_PARSE, "'force_columns' must list 3 columns");
    for (int i = 0; i < 3; i++) {
        const char *c = fr_cfg_node_scalar(fr_cfg_node_item(fc, i));
        snprintf(s->columns[i], sizeof s->columns[i], "%s", c ? c : "");
    }
    s->dir = fr_v3(dir[0], dir[1], dir[2]);
    return FR_OK;
}

/* The exact piecewise solution (the short formulas above are its limit V/ω ≪ Δ): stuck, the
 * spring force F rises at k·V to μ_s·m·g; slipping, F = μ_k·m·g + A cos ωt + B sin ωt with
 * ω = √(k/m), A = (μ_s − μ_k)·m·g, B = k·V/ω, until the block's velocity V − F'/k returns to zero
 * at ωt = 2π − 2·atan(Δω/V), Δ = A/k; peak and trough μ_k·m·g ± √(A² + B²); the next stick lasts
 * (μ_s·m·g − F_end)/(k·V). (A rig fast enough that V/ω is not small against Δ slips well beyond
 * half a period and peaks above μ_s·m·g: the short formulas are off by tens of per cent there.)
 * g is gravity's part along the support's normal; its part g_d along the drive pulls the block
 * with the spring, so every force level is m·g_d lower (the times are not changed). */
static void theory(fri_stickslip *s)
{
    double mg = s->m * s->g;
    const double om = sqrt(s->k / s->m), A = (s->mu_s - s->mu_k) * mg, B = s->k * s->v / om;
    const double phi = 2 * M_PI - 2 * atan(A / s->k * om / s->v);
    const double f_end = s->mu_k * mg + A * cos(phi) + B * sin(phi);
    s->peak = s->mu_k * mg + hypot(A, B) - s->m * s->g_drive;
    s->trough = s->mu_k * mg - hypot(A, B) - s->m * s->g_drive;
    /* (with mu_s = mu_k this is 0 but for rounding, 3e-18 s, which read as an error of 3e16 %) */
    s->stuck = s->mu_s > s->mu_k ? (s->mu_s * mg - f_end) / (s->k * s->v) : 0.0;
    s->slipping = phi / om;
    s->period = s->slipping + s->stuck;
    /* the detector's phases are the force's: it falls from the peak to the trough over half an
     * oscillation, π/ω, for any V, and rises for the rest of the period (the block sticks for
     * part of that rise and slips for the rest: the slip itself lasts φ/ω) */
    s->slip = M_PI / om;
    s->stick = s->period - s->slip;
    /* the detector's hysteresis: a quarter of the theoretical drop (1 % of m·g without one) */
    s->h = s->peak > s->trough ? 0.25 * (s->peak - s->trough) : 0.01 * mg;
}

/* How far the pulled body tilted and rose over the log (from its logged pose, when it is): a
 * block that tips over, or that the spring lifts off its support, gives a sawtooth the theory
 * does not describe (a new user's rigs did both and read −92 % and +56 % without a word). */
static void body_motion(fri_logfile *lf, const fr_cfg_node *a, fri_stickslip *s)
{
    char body[48], names[5][64];
    if (fr_cfg_string(a, "body", "", body, sizeof body, NULL) || !body[0]) return;
    static const char *const suffix[5] = {"pz", "qw", "qx", "qy", "qz"};
    const char *cols[5];
    for (int c = 0; c < 5; c++) {
        snprintf(names[c], sizeof names[c], "%s.%s", body, suffix[c]);
        if (!fri_logfile_has(lf, names[c])) return;
        cols[c] = names[c];
    }
    double *v[5] = {NULL, NULL, NULL, NULL, NULL};
    long n = 0;
    uint64_t hash;
    if (fri_logfile_read(lf, cols, 5, v, &n, &hash, NULL) == FR_OK && n > 0) {
        s->max_tilt = s->max_rise = 0.0;
        for (long i = 0; i < n; i++) {
            /* the angle of q0⁻¹·q: 2·acos|q0·q| */
            double dot =
                fabs(v[1][0] * v[1][i] + v[2][0] * v[2][i] + v[3][0] * v[3][i] + v[4][0] * v[4][i]);
            s->max_tilt = fmax(s->max_tilt, 2.0 * acos(fmin(1.0, dot)));
            s->max_rise = fmax(s->max_rise, v[0][i] - v[0][0]);
        }
    }
    for (int c = 0; c < 5; c++) free(v[c]);
}

/* The sidecar's optional facts: the spring's damping, the step, how the run ended. */
static void read_run(const fr_cfg_node *root, const fr_cfg_node *a, fri_stickslip *s)
{
    s->c = 0.0;
    s->dt = NAN;
    s->status[0] = 0;
    s->log_records = -1;
    s->log_every = 1;
    fr_cfg_double(a, "c", 0.0, FR_CFG_ANY, &s->c, NULL);
    fr_cfg_double(fr_cfg_get(root, "run"), "dt", NAN, FR_CFG_ANY, &s->dt, NULL);
    long every = 1;
    if (fr_cfg_int(fr_cfg_get(root, "run"), "log_every", 1, 1, LONG_MAX, &every, NULL) == FR_OK)
        s->log_every = every;
    s->ts = s->dt * (double)s->log_every;
    const fr_cfg_node *res = fr_cfg_get(root, "result");
    if (fr_cfg_string(res, "status", "", s->status, sizeof s->status, NULL)) s->status[0] = 0;
    long rec = -1;
    if (fr_cfg_int(res, "log_records", -1, -1, LONG_MAX, &rec, NULL) == FR_OK) s->log_records = rec;
}

/* The contact probe between the pulled body and its support, from the scene in the sidecar:
 * its `sliding` column gives the block's own stick and slip phases. */
static void find_sliding(const fri_logfile *lf, const fr_cfg_node *root, const fr_cfg_node *a,
                         fri_stickslip *s)
{
    char body[48], on[48];
    s->sliding_col[0] = 0;
    if (fr_cfg_string(a, "body", "", body, sizeof body, NULL) ||
        fr_cfg_string(a, "on", "", on, sizeof on, NULL) || !body[0] || !on[0])
        return;
    const fr_cfg_node *probes = fr_cfg_get(fr_cfg_get(root, "scene"), "probes");
    for (int i = 0; i < fr_cfg_node_len(probes); i++) {
        const fr_cfg_node *p = fr_cfg_node_item(probes, i);
        char type[16], name[48], pb[48], po[48];
        if (fr_cfg_string(p, "type", "", type, sizeof type, NULL) || strcmp(type, "contact") ||
            fr_cfg_string(p, "name", "", name, sizeof name, NULL) ||
            fr_cfg_string(p, "body", "", pb, sizeof pb, NULL) ||
            fr_cfg_string(p, "other", "", po, sizeof po, NULL))
            continue;
        if (!((!strcmp(pb, body) && !strcmp(po, on)) || (!strcmp(pb, on) && !strcmp(po, body))))
            continue;
        char col[64];
        snprintf(col, sizeof col, "%s.sliding", name);
        if (fri_logfile_has(lf, col)) {
            snprintf(s->sliding_col, sizeof s->sliding_col, "%s", col);
            return;
        }
    }
}

/* The block's phases from the sliding flag: every whole run of 0s (stuck) and 1s (slipping)
 * between two changes (the first and the last, cut by the log's ends, are left out). */
static void phases(const double *t, const double *sl, long n, fri_stickslip *s)
{
    double *stuck = malloc(sizeof *stuck * (size_t)(n + 1));
    double *slip = malloc(sizeof *slip * (size_t)(n + 1));
    int ns = 0, nl = 0;
    if (stuck && slip) {
        long start = -1; /* the first sample of the current run, after the first change */
        for (long i = 1; i < n; i++) {
            if ((sl[i] > 0.5) == (sl[i - 1] > 0.5)) continue;
            if (start >= 0) {
                if (sl[start] > 0.5)
                    slip[nl++] = t[i] - t[start];
                else
                    stuck[ns++] = t[i] - t[start];
            }
            start = i;
        }
    }
    s->stuck_med = fri_median_range(stuck, ns, &s->stuck_lo, &s->stuck_hi);
    s->slipping_med = fri_median_range(slip, nl, &s->slipping_lo, &s->slipping_hi);
    free(stuck);
    free(slip);
}

int fri_stickslip_analyse(const char *csv, fri_stickslip *out, double **t_out, double **f_out,
                          long *n_out, fr_diag *d)
{
    memset(out, 0, sizeof *out);
    fri_logfile lf;
    int err = fri_logfile_open(csv, &lf, d);
    const fr_cfg_node *a = err ? NULL : fr_cfg_get(fr_cfg_root(lf.doc), "analysis");
    if (!err && (fr_cfg_node_kind(a) != FR_CFG_MAP)) {
        err = fr_diag_set(d, FR_ERR_UNSUPPORTED, lf.meta, 0, 0, "analysis",
                          "the log's scene has no 'analysis' section: nothing to analyse");
    }
    if (!err) {
        char type[32];
        err = fr_cfg_string(a, "type", "", type, sizeof type, d);
        if (!err && strcmp(type, "stick-slip"))
            err = fr_cfg_error(fr_cfg_get(a, "type"), d, FR_ERR_UNSUPPORTED,
                               "unknown analysis '%s' (this fureru knows stick-slip)", type);
    }
    if (!err) err = read_params(a, out, d);
    if (!err) {
        read_run(fr_cfg_root(lf.doc), a, out);
        find_sliding(&lf, fr_cfg_root(lf.doc), a, out);
    }
    double *col[5] = {NULL, NULL, NULL, NULL, NULL};
    long n = 0;
    if (!err) {
        const char *cols[5] = {"t", out->columns[0], out->columns[1], out->columns[2],
                               out->sliding_col};
        err = fri_logfile_read(&lf, cols, out->sliding_col[0] ? 5 : 4, col, &n, &out->hash, d);
    }
    out->max_tilt = out->max_rise = NAN;
    if (!err) body_motion(&lf, a, out);
    fri_logfile_close(&lf);
    if (err) {
        for (int c = 0; c < 5; c++) free(col[c]);
        return err;
    }
    out->t_span = n > 0 ? col[0][n - 1] - col[0][0] : 0.0;
    out->stuck_med = out->slipping_med = NAN;
    if (col[4]) phases(col[0], col[4], n, out);
    free(col[4]);
    /* the force along the drive, in place of fx */
    for (long i = 0; i < n; i++)
        col[1][i] = col[1][i] * out->dir.x + col[2][i] * out->dir.y + col[3][i] * out->dir.z;
    free(col[2]);
    free(col[3]);
    theory(out);
    out->samples = n;
    fri_sawtooth_analyze(col[0], col[1], (int)n, out->h, 0.0, &out->r, NULL);
    if (t_out) {
        *t_out = col[0];
        *f_out = col[1];
        *n_out = n;
    } else {
        free(col[0]);
        free(col[1]);
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- the command */

/* Forces against the theory's drop peak − trough (a trough near zero made a 0.4 N miss read
 * −9 %, and a negative one −329 %); times against their own theory. */
static double err_pct(double measured, double theory, double scale)
{
    return 100 * (measured - theory) / scale;
}

/* Spring damping ratio below which the rig counts as undamped (1e-6 N s/m read as damping) */
#define DAMPED_RATIO 1e-3
/* Steps a stick must span to be timed to about 2 % (a stick of 28 steps came out 4.5 % long) */
#define STICK_STEPS 50

const char *const fri_stickslip_note_names[FRI_SS_NOTES] = {
    "failed",       "cut-short", "damped",      "coarse-step",    "too-short",
    "never-sticks", "not-flat",  "slides-back", "coarse-sampling"};

/* The run ended on an error (a run stopped by the user, "interrupted", holds good rows) */
static bool stickslip_failed(const fri_stickslip *s)
{
    return s->status[0] && strcmp(s->status, "ok") && strncmp(s->status, "interrupted", 11);
}

/* A stick shorter than STICK_STEPS samples: with --log-every N > 1 the sampling times it, not
 * the step (a new user's log every 10 ms was told to shorten a 1 ms step) */
static bool stick_short(const fri_stickslip *s)
{
    return s->mu_s > s->mu_k && s->stuck < STICK_STEPS * s->ts;
}

/* The force's fall (half an oscillation, where its peak and trough are) over too few samples */
static bool fall_sampled(const fri_stickslip *s)
{
    return s->log_every > 1 && M_PI * sqrt(s->m / s->k) < STICK_STEPS * s->ts;
}

int fri_stickslip_notes(const fri_stickslip *s)
{
    const double om = sqrt(s->k / s->m);
    const bool failed = stickslip_failed(s);
    int n = 0;
    if (failed) n |= 1 << FRI_SS_FAILED;
    if (s->log_records > s->samples) n |= 1 << FRI_SS_CUT;
    if (s->c / (2.0 * sqrt(s->k * s->m)) > DAMPED_RATIO) n |= 1 << FRI_SS_DAMPED;
    if (om * s->dt > FR_SPRING_COARSE_WDT || (s->log_every == 1 && stick_short(s)))
        n |= 1 << FRI_SS_COARSE;
    if (s->log_every > 1 && (stick_short(s) || fall_sampled(s))) n |= 1 << FRI_SS_SAMPLING;
    if (s->r.cycles < 2 && !failed) n |= 1 << FRI_SS_SHORT;
    if (!(s->mu_s > s->mu_k)) n |= 1 << FRI_SS_NOSTICK;
    if (s->mu_s > 0.0 && !(s->mu_k > 0.0)) n |= 1 << FRI_SS_BACKSLIP;
    /* (a block sliding flat rocks by far less than a degree on its contact) */
    if (s->max_tilt > 5.0 * M_PI / 180.0 || s->max_rise > 1e-3) n |= 1 << FRI_SS_NOTFLAT;
    return n;
}

/* Why the theory may not be the rig's: run notes, printed after the table. */
static void print_notes(FILE *o, const fri_stickslip *s)
{
    const int n = fri_stickslip_notes(s);
    const double om = sqrt(s->k / s->m);
    if (n & 1 << FRI_SS_FAILED)
        fprintf(o,
                "  THE RUN FAILED (%s): the log ends at t = %.6g s, and the numbers above are "
                "of what it holds\n",
                s->status, s->t_span);
    if (n & 1 << FRI_SS_CUT)
        fprintf(o, "  THE LOG IS CUT SHORT: the run wrote %ld records, the file holds %ld\n",
                s->log_records, s->samples);
    if (n & 1 << FRI_SS_DAMPED)
        fprintf(o,
                "  DAMPED SPRING: c = %g N s/m (damping ratio %.3g): the theory is for an "
                "undamped spring, so the errors above measure the rig's damping, not the "
                "friction\n",
                s->c, s->c / (2.0 * sqrt(s->k * s->m)));
    if (n & 1 << FRI_SS_COARSE) {
        /* the cause first (a new user read "a slip's half oscillation spans 314 steps" first
         * and missed that the stick, 5 steps, was the reason); a stick is the sampling's when
         * the log skips steps (COARSE SAMPLING) */
        const bool slip_coarse = om * s->dt > FR_SPRING_COARSE_WDT;
        const bool stick_coarse = s->log_every == 1 && stick_short(s);
        const double dt_ok =
            fmin(FR_SPRING_COARSE_WDT / om, stick_coarse ? s->stuck / STICK_STEPS : INFINITY);
        fprintf(o, "  COARSE STEP: dt = %g ms;", 1e3 * s->dt);
        if (stick_coarse)
            fprintf(o,
                    " a stick spans only %.3g steps (fewer than %d): the step times it to a "
                    "step;",
                    s->stuck / s->dt, STICK_STEPS);
        if (slip_coarse)
            fprintf(o,
                    " omega = sqrt(k/m) = %.4g rad/s, omega*dt %.3g: a slip's half oscillation "
                    "spans only %.3g steps, which shortens and damps it;",
                    om, om * s->dt, M_PI / (om * s->dt));
        fprintf(o, " world.dt <= %.3g ms resolves %s\n", 1e3 * dt_ok,
                slip_coarse && stick_coarse ? "both" : "it");
    }
    if (n & 1 << FRI_SS_SAMPLING) {
        const bool stick = stick_short(s), fall = fall_sampled(s);
        const double half = M_PI / om;
        fprintf(o,
                "  COARSE SAMPLING: the log holds one step in %ld (--log-every %ld), a sample "
                "every %g ms, and its times are read to a sample, not to the step;",
                s->log_every, s->log_every, 1e3 * s->ts);
        if (stick)
            fprintf(o, " a stick spans only %.3g samples (fewer than %d);", s->stuck / s->ts,
                    STICK_STEPS);
        if (fall)
            fprintf(o,
                    " the force's fall (half an oscillation) spans only %.3g samples, and its "
                    "peaks and troughs fall between them (up to %.3g N short);",
                    half / s->ts, 0.5 * (s->peak - s->trough) * (1.0 - cos(0.5 * om * s->ts)));
        const double ts_ok =
            fmin(stick ? s->stuck : INFINITY, fall ? half : INFINITY) / STICK_STEPS;
        const long every = (long)floor(ts_ok / s->dt * (1.0 + 1e-9));
        if (every >= 1)
            fprintf(o, " --log-every %ld or less resolves it (world.dt is not the limit)\n", every);
        else
            fprintf(o,
                    " a sample every %.3g ms resolves it: --log-every 1 with world.dt <= "
                    "%.3g ms\n",
                    1e3 * ts_ok, 1e3 * ts_ok);
    }
    if (n & 1 << FRI_SS_SHORT) {
        /* the first slip comes once the spring has loaded from zero to μ_s·m·g */
        const double first = (s->mu_s * s->g - s->g_drive) * s->m / (s->k * s->v);
        fprintf(o,
                "  TOO SHORT: %d slip%s in %.4g s of log; the first comes at about %.4g s (the "
                "spring loaded from zero), then one every %.4g s: --duration %.4g gives three "
                "more\n",
                s->r.cycles, s->r.cycles == 1 ? "" : "s", s->t_span, first, s->period,
                ceil(first + 3.0 * s->period + 1.0));
    }
    if (n & 1 << FRI_SS_BACKSLIP)
        fprintf(o, "  mu_k = 0: a slip ends with the spring pulling back at -mu_s*m*g, exactly the "
                   "static limit the other way, where sticking and sliding back both hold; the "
                   "theory assumes it sticks, the block may slide back and forth instead (a new "
                   "user's rig did, and read none for the stick)\n");
    if (n & 1 << FRI_SS_NOSTICK)
        fprintf(o, "  mu_s = mu_k: the block never sticks (its speed only touches zero once a "
                   "period)\n");
    if (s->max_tilt > 5.0 * M_PI / 180.0)
        fprintf(o,
                "  NOT A FLAT SLIDE: the pulled body turned by up to %.3g degrees (it tipped, "
                "rolled over or left its support): the theory is for a block sliding flat, so "
                "the errors above measure the rig, not the friction\n",
                s->max_tilt * 180.0 / M_PI);
    else if (n & 1 << FRI_SS_NOTFLAT)
        fprintf(o,
                "  NOT A FLAT SLIDE: the pulled body rose up to %.3g mm above its start and "
                "turned %.3g degrees (tipping onto an edge, or lifted by the spring): the "
                "theory is for a block sliding flat\n",
                1e3 * s->max_rise, s->max_tilt * 180.0 / M_PI);
}

/* One row. na: why an error against the theory means nothing (NULL when it does); sampled:
 * how far the sampling alone may move it, in % of the theory (0 when not worth a mention),
 * printed after the error (signed for a force, whose sample falls short one way). Returns
 * whether it printed that. */
static bool print_row(FILE *o, const char *name, double x, double lo, double hi, double th,
                      double scale, const char *na, double sampled, bool signed_mark)
{
    char spread[48] = "-"; /* one token: the columns after it stay in place for scripts */
    if (!isnan(lo) && !isnan(hi)) snprintf(spread, sizeof spread, "%.6g..%.6g", lo, hi);
    if (isnan(x))
        fprintf(o, "  %-14s %12s %-25s %12.6g %10s", name, "none", spread, th, "-");
    else if (na)
        fprintf(o, "  %-14s %12.6g %-25s %12.6g %10s  (%s)", name, x, spread, th, "n/a", na);
    else
        fprintf(o, "  %-14s %12.6g %-25s %12.6g %+9.2f%%", name, x, spread, th,
                err_pct(x, th, scale));
    const bool mark = sampled != 0.0 && !na && !isnan(x);
    if (mark && signed_mark)
        fprintf(o, "  sampling %+.2g%%", sampled);
    else if (mark)
        fprintf(o, "  sampling %.2g%%", sampled);
    fputc('\n', o);
    return mark;
}

/* Times: one sample in % of the theory, when that is more than 100/STICK_STEPS % */
static double time_sampled(const fri_stickslip *s, double th)
{
    const double r = 100.0 * s->ts / th;
    return th > 0 && r > 100.0 / STICK_STEPS ? r : 0.0;
}

/* Peak and trough: how far short of the oscillation's extreme a sample may be, in % of the
 * drop (when above 0.1 %) */
static double force_sampled(const fri_stickslip *s)
{
    const double amp = 0.5 * (s->peak - s->trough), om = sqrt(s->k / s->m);
    const double r =
        isnan(s->ts) ? 0.0 : 100.0 * amp * (1.0 - cos(0.5 * om * s->ts)) / (s->peak - s->trough);
    return r > 0.1 ? r : 0.0;
}

static void print_table(FILE *o, const char *csv, const fri_stickslip *s)
{
    fprintf(o, "stick-slip analysis of %s (probe %s, force along [%g, %g, %g])\n", csv, s->probe,
            s->dir.x, s->dir.y, s->dir.z);
    fprintf(o, "  from the sidecar: m %g kg, k %g N/m, V %g m/s, mu_s %g, mu_k %g, g %g m/s^2",
            s->m, s->k, s->v, s->mu_s, s->mu_k, s->g);
    if (s->g_drive != 0.0) fprintf(o, " (along the drive %g)", s->g_drive);
    if (!isnan(s->dt)) fprintf(o, ", dt %g ms", 1e3 * s->dt);
    if (s->log_every > 1 && !isnan(s->ts))
        fprintf(o, ", a row every %ld steps (%g ms)", s->log_every, 1e3 * s->ts);
    if (s->c > 0) fprintf(o, ", damping %g N s/m", s->c);
    fputc('\n', o);
    fprintf(o, "  %-14s %12s %-25s %12s %10s\n", "quantity", "measured", "min..max (cycles)",
            "theory", "error");
    /* the force's swing, the scale of the force errors */
    const double drop = s->peak - s->trough > 0 ? s->peak - s->trough : s->mu_s * s->m * s->g;
    const double fs = force_sampled(s);
    bool sampled = false;
    sampled |=
        print_row(o, "peak (N)", s->r.peak, s->r.lo[0], s->r.hi[0], s->peak, drop, NULL, -fs, true);
    sampled |= print_row(o, "trough (N)", s->r.trough, s->r.lo[1], s->r.hi[1], s->trough, drop,
                         NULL, fs, true);
    sampled |= print_row(o, "rise (s)", s->r.stick, s->r.lo[2], s->r.hi[2], s->stick, s->stick,
                         NULL, time_sampled(s, s->stick), false);
    sampled |= print_row(o, "fall (s)", s->r.slip, s->r.lo[3], s->r.hi[3], s->slip, s->slip, NULL,
                         time_sampled(s, s->slip), false);
    sampled |= print_row(o, "period (s)", s->r.period, s->r.lo[4], s->r.hi[4], s->period, s->period,
                         NULL, time_sampled(s, s->period), false);
    if (s->sliding_col[0]) {
        /* mu_s = mu_k: the block never sticks, so the flag's runs are not the theory's phases
         * (its speed touches zero once a period: 1-sample "sticks" between runs of several
         * periods read +499 %); a theory of ~0 gives no relative error */
        const bool nostick = !(s->mu_s > s->mu_k);
        const char *na_stuck = nostick                       ? "mu_s = mu_k: never sticks"
                               : s->stuck < 1e-9 * s->period ? "the theory is ~0"
                                                             : NULL;
        sampled |= print_row(o, "stuck (s)", s->stuck_med, s->stuck_lo, s->stuck_hi, s->stuck,
                             s->stuck, na_stuck, time_sampled(s, s->stuck), false);
        sampled |=
            print_row(o, "slipping (s)", s->slipping_med, s->slipping_lo, s->slipping_hi,
                      s->slipping, s->slipping, nostick ? "mu_s = mu_k: slides throughout" : NULL,
                      time_sampled(s, s->slipping), false);
    }
    fprintf(o,
            "  errors: forces in %% of the theory's drop peak - trough (%.4g N), times in %% of "
            "their theory; the median over the cycles\n",
            drop);
    if (sampled)
        fprintf(o,
                "  sampling N%%: what the log's sampling (a row every %g ms) alone may make of "
                "a row's error: one sample, for a time; how far short of the oscillation's "
                "extreme a sampled peak or trough may fall, for a force\n",
                1e3 * s->ts);
    fprintf(o,
            "  rise and fall are the force's, between the detected peaks and troughs; stuck and "
            "slipping are the block's, from the contact probe's %s column\n",
            s->sliding_col[0] ? s->sliding_col : "sliding (not in this log)");
    fprintf(o,
            "  %d slips and %d troughs in %ld samples (hysteresis %g N); mean force over the "
            "second half %.4g N (sd %.3g N)\n",
            s->r.cycles, s->r.troughs, s->samples, s->h, s->r.mean, s->r.sd);
    print_notes(o, s);
}

/* the report next to the plots: what was analysed, and the log's hash naming the run */
static int write_report(const char *path, const char *csv, const fri_stickslip *s)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# fureru analyse: stick-slip\nlog_hash: %016llx\n", (unsigned long long)s->hash);
    print_table(f, csv, s);
    return fclose(f);
}

/* the hash a report records, 0 when there is none */
static unsigned long long report_hash(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long h = 0;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "log_hash: %llx", &h) == 1) break;
    fclose(f);
    return h;
}

/* min and max of each bucket, in time order: the sawtooth's extremes survive the thinning */
static void put_force_data(FILE *gp, const double *t, const double *f, long n)
{
    long b = n > 8000 ? (n + 3999) / 4000 : 1;
    fputs("$force << EOD\n", gp);
    char bt[FR_FORMAT_DOUBLE_MAX], bf[FR_FORMAT_DOUBLE_MAX];
    for (long i = 0; i < n; i += b) {
        long lo = i, hi = i;
        for (long j = i; j < i + b && j < n; j++) {
            if (f[j] < f[lo]) lo = j;
            if (f[j] > f[hi]) hi = j;
        }
        long first = lo < hi ? lo : hi, second = lo < hi ? hi : lo;
        for (int k = 0; k < (first == second ? 1 : 2); k++) {
            long j = k ? second : first;
            fr_format_double(t[j], bt);
            fr_format_double(f[j], bf);
            fprintf(gp, "%s %s\n", bt, bf);
        }
    }
    fputs("EOD\n", gp);
}

void fri_stickslip_yrange(const fri_stickslip *s, const double *f, long n, double *lo, double *hi)
{
    const double kinetic = (s->mu_k * s->g - s->g_drive) * s->m;
    double a = fmin(0.0, fmin(s->trough, kinetic)), b = fmax(s->peak, kinetic);
    for (long i = 0; i < n; i++)
        if (isfinite(f[i])) {
            a = fmin(a, f[i]);
            b = fmax(b, f[i]);
        }
    const double span = b - a > 0 ? b - a : 1.0;
    /* room above for the peaks' markers; below only when the force goes negative */
    *lo = a < 0 ? a - 0.08 * span : 0.0;
    *hi = b + 0.15 * span;
}

static int plot(const char *base, const char *csv, const fri_stickslip *s, const double *t,
                const double *f, long n)
{
    FILE *gp = fri_plot_open();
    if (!gp) return 1;
    put_force_data(gp, t, f, n);
    /* the detected extremes */
    double *pt = malloc(sizeof *pt * (size_t)(n + 1) * 4);
    if (!pt) {
        fri_plot_close(gp);
        return -1;
    }
    fri_sawtooth_points pts = {pt, pt + n + 1, pt + 2 * (n + 1), pt + 3 * (n + 1)};
    fri_sawtooth_result r;
    fri_sawtooth_analyze(t, f, (int)n, s->h, 0.0, &r, &pts);
    /* the markers are the force's extremes: the block starts slipping at μ_s·m·g, before the
     * peak (0.137 s, 22 % of the period, at V = 1 m/s with k = 100 N/m, m = 1 kg), and stops
     * after the trough; an empty series is left out (gnuplot warned on a failed run's log) */
    char marks[512] = "";
    if (r.cycles > 0) {
        fputs("$peaks << EOD\n", gp);
        for (int i = 0; i < r.cycles; i++)
            fprintf(gp, "%.17g %.17g\n", pts.peak_t[i], pts.peak_f[i]);
        fputs("EOD\n", gp);
        snprintf(marks, sizeof marks,
                 "  $peaks using 1:2 with points pt 7 ps 0.7 lc rgb "
                 "'#c0392b' title 'force peaks (detected)', \\\n");
    }
    if (r.troughs > 0) {
        fputs("$troughs << EOD\n", gp);
        for (int i = 0; i < r.troughs; i++)
            fprintf(gp, "%.17g %.17g\n", pts.trough_t[i], pts.trough_f[i]);
        fputs("EOD\n", gp);
        size_t len = strlen(marks);
        snprintf(marks + len, sizeof marks - len,
                 "  $troughs using 1:2 with points pt 5 ps 0.6 lc rgb '#1e8449' "
                 "title 'force troughs (detected)', \\\n");
    }
    if (r.cycles == 0 || r.troughs == 0)
        printf("  plot: %s%s detected%s\n", r.cycles == 0 ? "no force peaks" : "no force troughs",
               r.cycles == 0 && r.troughs == 0 ? " or troughs" : "",
               stickslip_failed(s) ? " (the run failed: the plot shows what the log holds)" : "");
    free(pt);
    char name[512], probe[128], body[6144];
    const char *slash = strrchr(csv, '/');
    fri_plot_escape(slash ? slash + 1 : csv, name, sizeof name);
    fri_plot_escape(s->probe, probe, sizeof probe);
    /* the y range holds the signal and every theory line: a trough is negative whenever
     * μ_s > 2μ_k (at −16 N it, its markers and its theory line were cut off at 0) */
    double lo = 0.0, hi = 0.0;
    fri_stickslip_yrange(s, f, n, &lo, &hi);
    snprintf(body, sizeof body,
             "set title 'Stick-slip: spring force on a block dragged at V = %g m/s' . \"\\n\" . "
             "'{/*0.85 m = %g kg, k = %g N/m, μ_s = %g, μ_k = %g, g = %g m/s^2 — log %s}'\n"
             "set xlabel 'time (s)'\nset ylabel 'spring force along the drive (N)'\n"
             "set grid lc rgb '#dddddd'\nset key below vertical maxrows 3 samplen 2 width 2\n"
             "set yrange [%.17g:%.17g]\nset xrange [*:*]\n"
             "plot $force using 1:2 with lines lw 1.3 lc rgb '#1f4e9c' "
             "title 'spring force (probe %s)', \\\n%s"
             "  %.17g with lines dt 2 lw 1.2 lc rgb 'black' "
             "title 'theory peak %.4g N', \\\n"
             "  %.17g with lines dt 3 lw 1.2 lc rgb '#555555' "
             "title 'kinetic level μ_k m g_n − m g_d = %.4g N', \\\n"
             "  %.17g with lines dt 4 lw 1.2 lc rgb '#888888' "
             "title 'theory trough %.4g N'\n",
             s->v, s->m, s->k, s->mu_s, s->mu_k, s->g, name, lo, hi, probe, marks, s->peak, s->peak,
             (s->mu_k * s->g - s->g_drive) * s->m, (s->mu_k * s->g - s->g_drive) * s->m, s->trough,
             s->trough);
    fri_plot_outputs(gp, base, body);
    return fri_plot_close(gp) == 0 ? 0 : -1;
}

static void usage_analyse(FILE *o)
{
    fputs("usage: fureru analyse LOG.csv [--out DIR] [--no-plot]\n"
          "  analyses a log from `fureru run --log` using only the log and its sidecar\n"
          "  (LOG.csv.meta.yaml): the scene's analysis (stick-slip) against its theory, a report\n"
          "  and plots (PDF, SVG, PNG) named after the log, beside it or in DIR\n",
          o);
}

int fri_lab_analyse_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"out", required_argument, 0, 'o'},
                                             {"no-plot", no_argument, 0, 'n'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *outdir = NULL;
    bool want_plot = true;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'o')
            outdir = optarg;
        else if (c == 'n')
            want_plot = false;
        else if (c == 'h') {
            usage_analyse(stdout);
            return 0;
        } else {
            usage_analyse(stderr);
            return EXIT_BADINPUT;
        }
    }
    if (optind != argc - 1) {
        usage_analyse(stderr);
        return EXIT_BADINPUT;
    }
    const char *csv = argv[optind];
    fri_stickslip s;
    double *t = NULL, *f = NULL;
    long n = 0;
    fr_diag d;
    memset(&d, 0, sizeof d);
    int err = fri_stickslip_analyse(csv, &s, &t, &f, &n, &d);
    if (err) {
        fr_diag_print(&d, stderr);
        return err == FR_ERR_NOMEM || err == FR_ERR_IO ? EXIT_RUNTIME : EXIT_BADINPUT;
    }
    print_table(stdout, csv, &s);
    /* outputs named after the log; a different run's outputs under that name are kept */
    char stem[4096], base[4200], report[4300];
    const char *slash = strrchr(csv, '/');
    const char *file = slash ? slash + 1 : csv;
    size_t len = strlen(file);
    if (len > 4 && !strcmp(file + len - 4, ".csv")) len -= 4;
    if (outdir) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/x", outdir);
        fri_make_parent_dirs(probe);
        snprintf(stem, sizeof stem, "%s/%.*s", outdir, (int)len, file);
    } else {
        snprintf(stem, sizeof stem, "%.*s%.*s", slash ? (int)(slash - csv + 1) : 0, csv, (int)len,
                 file);
    }
    snprintf(base, sizeof base, "%s.stick-slip", stem);
    snprintf(report, sizeof report, "%s.txt", base);
    unsigned long long old = report_hash(report);
    if (old && old != s.hash) {
        snprintf(base, sizeof base, "%s.stick-slip-%08llx", stem,
                 (unsigned long long)(s.hash >> 32));
        snprintf(report, sizeof report, "%s.txt", base);
        printf("  (%s.stick-slip.* belong to another run of this log name: kept)\n", stem);
    }
    int rc = 0;
    if (write_report(report, csv, &s) != 0) {
        fprintf(stderr, "fureru: cannot write %s\n", report);
        rc = EXIT_RUNTIME;
    } else {
        printf("  report: %s\n", report);
    }
    if (want_plot && !rc) {
        int p = plot(base, csv, &s, t, f, n);
        if (p == 0)
            printf("  plots: %s.pdf, %s.svg, %s.png\n", base, base, base);
        else if (p < 0) {
            fprintf(stderr, "fureru: gnuplot failed on %s\n", base);
            rc = EXIT_RUNTIME;
        }
    }
    free(t);
    free(f);
    /* a failed run's log is analysed (its numbers say how far it got) but not passed as good */
    if (!rc && stickslip_failed(&s)) rc = EXIT_RUNTIME;
    return rc;
}
