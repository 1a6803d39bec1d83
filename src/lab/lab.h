/*
 * fureru as a lab tool (docs/experiments.md): a log analysed from its sidecar alone
 * (`fureru analyse LOG`), parameter sweeps that write their command list, run it and gather the
 * results (`fureru sweep`), and publication plots through gnuplot. Start-up style code: it
 * allocates, reads files, starts processes; nothing here runs on a tick thread.
 */
#ifndef FR_LAB_LAB_H
#define FR_LAB_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fureru/config.h"
#include "fureru/math.h"
#include "sawtooth.h"

/* ---------------------------------------------------------------- logs and their sidecars */

typedef struct fri_logfile {
    char path[4096]; /* the CSV */
    char meta[4200]; /* its sidecar, PATH.meta.yaml */
    fr_cfg_doc *doc; /* the sidecar, parsed */
    int ncols;
    char **names; /* the CSV header */
} fri_logfile;

/* Open a log: its header and its sidecar (an error naming the sidecar when there is none). */
int fri_logfile_open(const char *csv, fri_logfile *lf, fr_diag *d);
void fri_logfile_close(fri_logfile *lf);
/* Read columns (by name) of every row: out[c] gets *nrows values (malloc'd; free them). Also
 * the FNV-1a hash of the file's bytes, which names a run's plots (never overwriting another's). */
int fri_logfile_read(fri_logfile *lf, const char *const *cols, int ncols, double **out, long *nrows,
                     uint64_t *hash, fr_diag *d);
/* Whether the log's header has the column. */
bool fri_logfile_has(const fri_logfile *lf, const char *name);

/* A scene given by path, or by name from the data directory's scenes/ ("stick-slip"): the path to
 * load (buf, or arg itself when it is a file, has a '/' or names nothing installed). */
const char *fri_lab_find_scene(const char *arg, char *buf, size_t n);

/* ---------------------------------------------------------------- stick-slip */

typedef struct fri_stickslip {
    /* from the sidecar's analysis section */
    char probe[48];
    char columns[3][64]; /* PROBE.fx .. .fz */
    fr_vec3 dir;         /* the analysed force is the probe's along it */
    double m, k, v, mu_s, mu_k;
    /* m/s², gravity along the support's normal and along the drive (0 when the sidecar has
     * none; its part across the drive is held by the spring's sideways stretch, not friction:
     * a rig under 0.98 m/s² sideways settles 9.8 mm aside and matches the theory to 0.02 %) */
    double g, g_drive;
    double c;  /* N·s/m, the spring's damping (0 when the sidecar has none) */
    double dt; /* s, the run's step (NaN when the sidecar has none) */
    /* the log's sampling: a row every log_every steps (the sidecar's run.log_every, 1 when it
     * has none), ts = dt·log_every apart: the times are read to one sample */
    long log_every;
    double ts;
    /* the run's end (the sidecar's result section): its status ("" when not recorded) and the
     * records it logged (−1 when not recorded) */
    char status[160];
    long log_records;
    /* theory (docs/experiments.md): the detector's phases (stick = the force's rise, slip its
     * fall) and the block's own (stuck, slipping: the exact solution's) */
    double peak, trough, stick, slip, period, h;
    double stuck, slipping;
    /* measured: the detector's medians and spread over the cycles */
    fri_sawtooth_result r;
    long samples;
    double t_span; /* s, the log's time span */
    /* the block's phases from the contact probe's sliding column, when the log has it */
    char sliding_col[64];
    double stuck_med, stuck_lo, stuck_hi, slipping_med, slipping_lo, slipping_hi;
    uint64_t hash; /* of the CSV */
    /* the pulled body (the sidecar's analysis.body) over the log, when its pose is logged
     * (NaN otherwise): how far it tilted from its first pose (rad) and rose above it (m); the
     * theory is for a block sliding flat on its support */
    double max_tilt, max_rise;
} fri_stickslip;

/* Why the theory may not describe a log's rig (docs/experiments.md): a bit 1 << FRI_SS_* each,
 * named in fri_stickslip_note_names (the sweep's `notes` column); analyse prints them. */
enum {
    FRI_SS_FAILED,   /* the run ended in a failure (the sidecar's status) */
    FRI_SS_CUT,      /* fewer rows than the run wrote */
    FRI_SS_DAMPED,   /* the spring is damped */
    FRI_SS_COARSE,   /* the step is coarse for the spring's oscillation or the stick */
    FRI_SS_SHORT,    /* fewer than two slips */
    FRI_SS_NOSTICK,  /* mu_s = mu_k */
    FRI_SS_NOTFLAT,  /* the body tipped, rolled, rose or left its support */
    FRI_SS_BACKSLIP, /* mu_k = 0: a slip ends at the static limit the other way */
    FRI_SS_SAMPLING, /* --log-every N > 1 samples a stick or a slip too coarsely */
    FRI_SS_NOTES
};
extern const char *const fri_stickslip_note_names[FRI_SS_NOTES];
int fri_stickslip_notes(const fri_stickslip *s);

/* The parameters, the theory and the measured sawtooth of one log (t and the force along the
 * drive are returned in *t, *f when not NULL: malloc'd, *n samples). */
int fri_stickslip_analyse(const char *csv, fri_stickslip *out, double **t, double **f, long *n,
                          fr_diag *d);

/* The stick-slip plot's y range: the force f[0..n) and every theory line (peak, trough and the
 * kinetic level), with 0 (a trough below 0 is shown, not cut off). */
void fri_stickslip_yrange(const fri_stickslip *s, const double *f, long n, double *lo, double *hi);

/* ---------------------------------------------------------------- plots */

/* gnuplot, if installed: NULL when not (with a note on stderr). The caller writes a script that
 * plots once per output; fri_plot_outputs runs `body` for PDF, SVG and PNG of base. */
FILE *fri_plot_open(void);
int fri_plot_close(FILE *gp);
/* set the terminal and output for base.pdf, base.svg, base.png in turn and write body after each */
void fri_plot_outputs(FILE *gp, const char *base, const char *body);
/* A string for a gnuplot single-quoted literal (quotes doubled). */
void fri_plot_quote(FILE *gp, const char *s);
/* A name (file, probe) made literal in gnuplot's enhanced text, where _ ^ { } @ & ~ format. */
void fri_plot_escape(const char *in, char *out, size_t n);

/* ---------------------------------------------------------------- commands */

int fri_lab_analyse_main(int argc, char **argv); /* fureru analyse LOG [--out DIR] [--no-plot] */
int fri_lab_sweep_main(int argc, char **argv);   /* fureru sweep ... (sweep.c) */

/* "0.1, [1, 2, 3], x" → its top-level comma-separated items (brackets and quotes kept whole). */
int fri_split_values(const char *s, char ***out);

#endif
