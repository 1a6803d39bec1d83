/* Reading a log (header-plus-rows CSV) and its sidecar LOG.meta.yaml (lab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fureru/base.h"
#include "lab.h"

static void free_names(fri_logfile *lf)
{
    for (int i = 0; i < lf->ncols; i++) free(lf->names[i]);
    free(lf->names);
    lf->names = NULL;
    lf->ncols = 0;
}

void fri_logfile_close(fri_logfile *lf)
{
    fr_cfg_free(lf->doc);
    lf->doc = NULL;
    free_names(lf);
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = 0;
}

int fri_logfile_open(const char *csv, fri_logfile *lf, fr_diag *d)
{
    memset(lf, 0, sizeof *lf);
    snprintf(lf->path, sizeof lf->path, "%s", csv);
    snprintf(lf->meta, sizeof lf->meta, "%s.meta.yaml", csv);
    FILE *f = fopen(csv, "r");
    if (!f)
        return fr_diag_set(d, FR_ERR_NOTFOUND, csv, 0, 0, "", "cannot read the log: %s",
                           strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    fclose(f);
    if (len <= 0) {
        free(line);
        return fr_diag_set(d, FR_ERR_PARSE, csv, 1, 1, "", "empty log (no header row)");
    }
    trim(line);
    int n = 1;
    for (char *p = line; *p; p++) n += *p == ',';
    lf->names = calloc((size_t)n, sizeof *lf->names);
    if (!lf->names) {
        free(line);
        return FR_ERR_NOMEM;
    }
    char *save = NULL;
    for (char *tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!(lf->names[lf->ncols++] = strdup(tok))) {
            free(line);
            return FR_ERR_NOMEM;
        }
    free(line);
    if (access(lf->meta, R_OK) != 0)
        return fr_diag_set(d, FR_ERR_NOTFOUND, lf->meta, 0, 0, "",
                           "no sidecar next to the log (fureru run writes it with --log); without "
                           "it, analyse with scripts/experiments/stick-slip-analyze.sh (in "
                           "fureru's source tree) and the "
                           "parameters by hand");
    return fr_cfg_load_file(lf->meta, &lf->doc, d);
}

static int column(const fri_logfile *lf, const char *name)
{
    for (int i = 0; i < lf->ncols; i++)
        if (!strcmp(lf->names[i], name)) return i;
    return -1;
}

bool fri_logfile_has(const fri_logfile *lf, const char *name)
{
    return column(lf, name) >= 0;
}

int fri_logfile_read(fri_logfile *lf, const char *const *cols, int ncols, double **out, long *nrows,
                     uint64_t *hash, fr_diag *d)
{
    int idx[16];
    if (ncols > 16) return FR_ERR_INVAL;
    for (int c = 0; c < ncols; c++) {
        out[c] = NULL;
        if ((idx[c] = column(lf, cols[c])) < 0)
            return fr_diag_set(d, FR_ERR_NOTFOUND, lf->path, 1, 1, cols[c],
                               "no such column in the log's header");
    }
    FILE *f = fopen(lf->path, "r");
    if (!f)
        return fr_diag_set(d, FR_ERR_IO, lf->path, 0, 0, "", "cannot read the log: %s",
                           strerror(errno));
    long cap = 4096, n = 0;
    for (int c = 0; c < ncols; c++)
        if (!(out[c] = malloc(sizeof **out * (size_t)cap))) goto nomem;
    uint64_t h = 1469598103934665603ull; /* FNV-1a, 64 bit */
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    long row = 0;
    int err = FR_OK;
    while ((len = getline(&line, &lcap, f)) > 0) {
        for (ssize_t i = 0; i < len; i++) h = (h ^ (unsigned char)line[i]) * 1099511628211ull;
        if (row++ == 0) continue; /* the header */
        if (n == cap) {
            cap *= 2;
            for (int c = 0; c < ncols; c++) {
                double *p = realloc(out[c], sizeof *p * (size_t)cap);
                if (!p) {
                    free(line);
                    goto nomem;
                }
                out[c] = p;
            }
        }
        /* walk all the fields once, converting the wanted ones: a row with fewer fields than
         * the header is a log cut short (a last row without its tail read as whole before) */
        const char *p = line;
        int field = 0, got = 0, bad = -1;
        for (;;) {
            for (int c = 0; c < ncols; c++)
                if (idx[c] == field) {
                    char *end;
                    out[c][n] = strtod(p, &end);
                    if (end == p && bad < 0) bad = field;
                    got++;
                }
            const char *comma = strchr(p, ',');
            field++;
            if (!comma) break;
            p = comma + 1;
        }
        if (bad >= 0 && field == lf->ncols) {
            err = fr_diag_set(d, FR_ERR_PARSE, lf->path, (int)row, 1, lf->names[bad],
                              "row %ld: not a number", row);
            break;
        }
        if (got < ncols || field != lf->ncols) {
            const int at = field < lf->ncols ? field : lf->ncols - 1;
            err = fr_diag_set(d, FR_ERR_PARSE, lf->path, (int)row, 1, lf->names[at],
                              field < lf->ncols
                                  ? "row %ld ends after %d of the header's %d fields (the log is "
                                    "cut short or malformed)"
                                  : "row %ld has %d fields, the header %d",
                              row, field, lf->ncols);
            break;
        }
        n++;
    }
    free(line);
    fclose(f);
    *nrows = n;
    if (hash) *hash = h;
    return err;
nomem:
    fclose(f);
    for (int c = 0; c < ncols; c++) {
        free(out[c]);
        out[c] = NULL;
    }
    return FR_ERR_NOMEM;
}

/* A scene by path, or by name from the data directory's scenes/ (fureru run stick-slip). */
const char *fri_lab_find_scene(const char *arg, char *buf, size_t n)
{
    if (access(arg, F_OK) == 0 || strchr(arg, '/')) return arg;
    const char *ext = strlen(arg) > 5 && !strcmp(arg + strlen(arg) - 5, ".yaml") ? "" : ".yaml";
    snprintf(buf, n, "%s/scenes/%s%s", fr_data_dir(), arg, ext);
    return access(buf, F_OK) == 0 ? buf : arg;
}
