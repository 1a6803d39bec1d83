/* Target trajectories of the virtual device: hold, line, circle, poke, recorded csv. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"
#include "files.h"
#include "vtraj.h"

static int bad(fr_diag *d, const char *field, const char *msg)
{
    return fr_diag_set(d, FR_ERR_RANGE, "", 0, 0, field, "%s", msg);
}

int fri_vtraj_validate(const fr_virtual_params *p, fr_diag *d)
{
    const struct fr_vtraj_params *t = &p->traj;
    if (!fr_q_isfinite(t->orientation) || !(fr_q_norm(t->orientation) > 1e-6))
        return bad(d, "trajectory.orientation", "must be a non-zero quaternion [w, x, y, z]");
    switch (t->type) {
    case FR_VTRAJ_HOLD:
        if (!fr_v3_isfinite(t->point)) return bad(d, "trajectory.point", "must be finite");
        return FR_OK;
    case FR_VTRAJ_LINE:
        if (!fr_v3_isfinite(t->from) || !fr_v3_isfinite(t->to))
            return bad(d, "trajectory.to", "must be finite");
        if (!(fr_v3_dist(t->from, t->to) > 0))
            return bad(d, "trajectory.to", "must differ from trajectory.from");
        if (!(isfinite(t->speed) && t->speed > 0)) return bad(d, "trajectory.speed", "must be > 0");
        return FR_OK;
    case FR_VTRAJ_CIRCLE:
        if (!fr_v3_isfinite(t->center)) return bad(d, "trajectory.center", "must be finite");
        if (!(isfinite(t->radius) && t->radius > 0))
            return bad(d, "trajectory.radius", "must be > 0");
        if (t->plane < FR_VPLANE_XY || t->plane > FR_VPLANE_ZX)
            return bad(d, "trajectory.plane", "must be xy, yz or zx");
        if (!(isfinite(t->period) && t->period > 0))
            return bad(d, "trajectory.period", "must be > 0");
        return FR_OK;
    case FR_VTRAJ_POKE:
        if (!fr_v3_isfinite(t->start)) return bad(d, "trajectory.start", "must be finite");
        if (!fr_v3_isfinite(t->direction) || !(fr_v3_norm(t->direction) > 1e-12))
            return bad(d, "trajectory.direction", "must be a non-zero vector");
        if (!(isfinite(t->depth) && t->depth >= 0))
            return bad(d, "trajectory.depth", "must be >= 0");
        if (!(isfinite(t->period) && t->period > 0))
            return bad(d, "trajectory.period", "must be > 0");
        return FR_OK;
    case FR_VTRAJ_CSV:
        if (!t->file[0]) return bad(d, "trajectory.file", "a csv file is required");
        if (!fr_v3_isfinite(t->offset)) return bad(d, "trajectory.offset", "must be finite");
        return FR_OK;
    default:
        return bad(d, "trajectory.type", "unknown trajectory type");
    }
}

/* ------------------------------------------------------------------ csv */

static const char *const csv_cols[] = {"t", "x", "y", "z", "qw", "qx", "qy", "qz"};

static int csv_err(fr_diag *d, int err, const char *file, int line, int col, int field,
                   const char *msg)
{
    return fr_diag_set(d, err, file, line, col, field >= 0 && field < 8 ? csv_cols[field] : "row",
                       "%s", msg);
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return false;
    return true;
}

static int load_csv(fri_vtraj *tr, const char *path, fr_vec3 offset, fr_diag *d)
{
    char why[256];
    int cerr = fri_check_input(path, FRI_MAX_CSV_BYTES, why, sizeof why);
    if (cerr) return fr_diag_set(d, cerr, path, 0, 0, "trajectory.file", "%s", why);
    FILE *f = fopen(path, "r");
    if (!f)
        return fr_diag_set(d, errno == ENOENT ? FR_ERR_NOTFOUND : FR_ERR_IO, path, 0, 0,
                           "trajectory.file", "cannot open: %s", strerror(errno));
    char line[4096];
    int lineno = 0, ncols = 0, cap = 0, err = FR_OK;
    bool header_allowed = true;
    double t_first = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            err = csv_err(d, FR_ERR_PARSE, path, lineno, 1, -1, "line too long");
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        const char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (!*s || *s == '#') continue;
        double vals[8];
        int n = 0;
        const char *c = line;
        bool is_header = false;
        for (;;) {
            while (*c == ' ' || *c == '\t') c++;
            int col = (int)(c - line) + 1;
            char *end;
            errno = 0;
            double val = strtod(c, &end);
            const char *e = end;
            while (*e == ' ' || *e == '\t') e++;
            if (end == c || (*e && *e != ',')) {
                if (header_allowed && n == 0 && isalpha((unsigned char)*c)) {
                    is_header = true;
                    break;
                }
                err = csv_err(d, FR_ERR_PARSE, path, lineno, col, n, "expected a number");
                break;
            }
            if (!isfinite(val)) {
                err = csv_err(d, FR_ERR_RANGE, path, lineno, col, n, "must be finite");
                break;
            }
            if (n == 8) {
                err = csv_err(d, FR_ERR_PARSE, path, lineno, col, -1,
                              "too many columns (t, x, y, z[, qw, qx, qy, qz])");
                break;
            }
            if (n == 0 && tr->n > 0 && !(val - t_first > tr->t[tr->n - 1])) {
                err =
                    csv_err(d, FR_ERR_PARSE, path, lineno, col, 0, "times must increase strictly");
                break;
            }
            vals[n++] = val;
            if (!*e) break;
            c = e + 1;
            if (blank(c)) {
                err =
                    csv_err(d, FR_ERR_PARSE, path, lineno, (int)(c - line) + 1, n, "missing value");
                break;
            }
        }
        if (err) break;
        header_allowed = false;
        if (is_header) continue;
        if (n != 4 && n != 8) {
            err = csv_err(d, FR_ERR_PARSE, path, lineno, 1, -1,
                          "expected 4 columns (t, x, y, z) or 8 (with qw, qx, qy, qz)");
            break;
        }
        if (ncols && n != ncols) {
            err = csv_err(d, FR_ERR_PARSE, path, lineno, 1, -1,
                          "column count differs from the first row");
            break;
        }
        ncols = n;
        if (n == 8) {
            fr_quat q = fr_q(vals[4], vals[5], vals[6], vals[7]);
            if (!(fr_q_norm(q) > 1e-6)) {
                err = csv_err(d, FR_ERR_RANGE, path, lineno, 1, 4, "quaternion must be non-zero");
                break;
            }
        }
        if (tr->n == cap) {
            int nc = cap ? 2 * cap : 256;
            double *t = realloc(tr->t, sizeof *t * (size_t)nc);
            if (t) tr->t = t;
            fr_vec3 *p = realloc(tr->p, sizeof *p * (size_t)nc);
            if (p) tr->p = p;
            fr_quat *q = realloc(tr->q, sizeof *q * (size_t)nc);
            if (q) tr->q = q;
            if (!t || !p || !q) {
                err = FR_ERR_NOMEM;
                break;
            }
            cap = nc;
        }
        if (tr->n == 0) t_first = vals[0];
        tr->t[tr->n] = vals[0] - t_first;
        tr->p[tr->n] = fr_v3_add(fr_v3(vals[1], vals[2], vals[3]), offset);
        fr_quat q =
            n == 8 ? fr_q_normalize(fr_q(vals[4], vals[5], vals[6], vals[7])) : fr_q_identity();
        /* keep consecutive quaternions in the same hemisphere so interpolation is shortest */
        if (tr->n > 0) {
            fr_quat o = tr->q[tr->n - 1];
            if (o.w * q.w + o.x * q.x + o.y * q.y + o.z * q.z < 0) q = fr_q(-q.w, -q.x, -q.y, -q.z);
        }
        tr->q[tr->n] = q;
        tr->n++;
    }
    fclose(f);
    if (!err && tr->n < 2)
        err = csv_err(d, FR_ERR_PARSE, path, lineno, 1, -1, "at least two rows are needed");
    if (!err && ncols == 4) {
        free(tr->q);
        tr->q = NULL;
    }
    if (!err) tr->dur = tr->t[tr->n - 1];
    return err;
}

/* ------------------------------------------------------------------ set-up */

int fri_vtraj_init(fri_vtraj *tr, const fr_virtual_params *p, fr_diag *d)
{
    memset(tr, 0, sizeof *tr);
    const struct fr_vtraj_params *t = &p->traj;
    tr->type = t->type;
    tr->orient = fr_q_normalize(t->orientation);
    switch (t->type) {
    case FR_VTRAJ_HOLD:
        tr->a = t->point;
        break;
    case FR_VTRAJ_LINE:
        tr->a = t->from;
        tr->b = t->to;
        tr->dir = fr_v3_normalize(fr_v3_sub(t->to, t->from));
        tr->speed = t->speed;
        tr->half = fr_v3_dist(t->from, t->to) / t->speed;
        break;
    case FR_VTRAJ_CIRCLE:
    case FR_VTRAJ_POKE:
        tr->period = t->period;
        tr->omega = 2.0 * M_PI / t->period;
        if (t->type == FR_VTRAJ_CIRCLE) {
            tr->c = t->center;
            tr->r = t->radius;
            fr_vec3 ex = fr_v3(1, 0, 0), ey = fr_v3(0, 1, 0), ez = fr_v3(0, 0, 1);
            tr->e1 = t->plane == FR_VPLANE_XY ? ex : t->plane == FR_VPLANE_YZ ? ey : ez;
            tr->e2 = t->plane == FR_VPLANE_XY ? ey : t->plane == FR_VPLANE_YZ ? ez : ex;
        } else {
            tr->a = t->start;
            tr->dir = fr_v3_normalize(t->direction);
            tr->depth = t->depth;
        }
        break;
    case FR_VTRAJ_CSV:
        tr->loop = t->loop;
        return load_csv(tr, t->file, t->offset, d);
    default:
        return bad(d, "trajectory.type", "unknown trajectory type");
    }
    return FR_OK;
}

void fri_vtraj_free(fri_vtraj *tr)
{
    free(tr->t);
    free(tr->p);
    free(tr->q);
    tr->t = NULL;
    tr->p = NULL;
    tr->q = NULL;
    tr->n = 0;
}

/* ------------------------------------------------------------------ evaluation */

/* Line: piece n (even: from → to, odd: back) as a linear function of time. */
static void line_piece(const fri_vtraj *tr, double n, double t, fr_vec3 *p, fr_vec3 *v)
{
    double s = tr->speed * (t - n * tr->half); /* distance along the piece */
    bool fwd = fmod(n, 2.0) == 0.0;
    *p = fwd ? fr_v3_mad(tr->a, s, tr->dir) : fr_v3_mad(tr->b, -s, tr->dir);
    *v = fr_v3_scale(tr->dir, fwd ? tr->speed : -tr->speed);
}

/* csv: which loop (k) and segment (i) device time t falls in; false past the end (no loop). */
static bool csv_locate(const fri_vtraj *tr, double t, double *k, int *i)
{
    double tau = t;
    *k = 0;
    if (tr->loop && tr->dur > 0) {
        *k = floor(t / tr->dur);
        tau = t - *k * tr->dur;
        if (tau >= tr->dur) { /* rounding at a wrap */
            *k += 1;
            tau -= tr->dur;
        }
        if (tau < 0) tau = 0;
    } else if (t >= tr->dur) {
        *i = tr->n - 2;
        return false;
    }
    int lo = 0, hi = tr->n - 1; /* t[lo] <= tau < t[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (tr->t[mid] <= tau)
            lo = mid;
        else
            hi = mid;
    }
    *i = lo;
    return true;
}

static void csv_piece(const fri_vtraj *tr, double k, int i, double t, fr_vec3 *p, fr_vec3 *v)
{
    double span = tr->t[i + 1] - tr->t[i];
    fr_vec3 vel = fr_v3_scale(fr_v3_sub(tr->p[i + 1], tr->p[i]), 1.0 / span);
    double tau = t - k * tr->dur - tr->t[i];
    *p = fr_v3_mad(tr->p[i], tau, vel);
    *v = vel;
}

static void periodic(const fri_vtraj *tr, double t, double *c, double *s)
{
    double th = 2.0 * M_PI * (fmod(t, tr->period) / tr->period);
    *c = cos(th);
    *s = sin(th);
}

void fri_vtraj_eval(const fri_vtraj *tr, double t, fr_vec3 *p, fr_vec3 *v)
{
    double c, s, k;
    int i;
    switch (tr->type) {
    case FR_VTRAJ_LINE:
        line_piece(tr, floor(t / tr->half), t, p, v);
        return;
    case FR_VTRAJ_CIRCLE:
        periodic(tr, t, &c, &s);
        *p = fr_v3_add(tr->c,
                       fr_v3_add(fr_v3_scale(tr->e1, tr->r * c), fr_v3_scale(tr->e2, tr->r * s)));
        *v = fr_v3_scale(fr_v3_sub(fr_v3_scale(tr->e2, c), fr_v3_scale(tr->e1, s)),
                         tr->r * tr->omega);
        return;
    case FR_VTRAJ_POKE:
        periodic(tr, t, &c, &s);
        *p = fr_v3_mad(tr->a, tr->depth * 0.5 * (1.0 - c), tr->dir);
        *v = fr_v3_scale(tr->dir, tr->depth * 0.5 * tr->omega * s);
        return;
    case FR_VTRAJ_CSV:
        if (!csv_locate(tr, t, &k, &i)) {
            *p = tr->p[tr->n - 1];
            *v = fr_v3_zero();
            return;
        }
        csv_piece(tr, k, i, t, p, v);
        return;
    default:
        *p = tr->a;
        *v = fr_v3_zero();
        return;
    }
}

void fri_vtraj_step(const fri_vtraj *tr, double t0, double t1, fr_vec3 *p0, fr_vec3 *v0,
                    fr_vec3 *p1, fr_vec3 *v1)
{
    double tm = 0.5 * (t0 + t1), k;
    int i;
    switch (tr->type) {
    case FR_VTRAJ_LINE: {
        double n = floor(tm / tr->half);
        line_piece(tr, n, t0, p0, v0);
        line_piece(tr, n, t1, p1, v1);
        return;
    }
    case FR_VTRAJ_CSV:
        if (csv_locate(tr, tm, &k, &i)) {
            csv_piece(tr, k, i, t0, p0, v0);
            csv_piece(tr, k, i, t1, p1, v1);
            return;
        }
        break;
    default:
        break;
    }
    fri_vtraj_eval(tr, t0, p0, v0);
    fri_vtraj_eval(tr, t1, p1, v1);
}

void fri_vtraj_orient(const fri_vtraj *tr, double t, fr_quat *q, fr_vec3 *w)
{
    double k;
    int i;
    if (tr->type != FR_VTRAJ_CSV || !tr->q) {
        *q = tr->orient;
        *w = fr_v3_zero();
        return;
    }
    if (!csv_locate(tr, t, &k, &i)) {
        *q = tr->q[tr->n - 1];
        *w = fr_v3_zero();
        return;
    }
    double span = tr->t[i + 1] - tr->t[i];
    fr_vec3 rot = fr_q_log(fr_q_mul(tr->q[i + 1], fr_q_conj(tr->q[i]))); /* world frame */
    double s = (t - k * tr->dur - tr->t[i]) / span;
    *q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(rot, s)), tr->q[i]));
    *w = fr_v3_scale(rot, 1.0 / span);
}
