/* Recordings: the head, loading and checking, and the replay device (record.h). */
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fureru/base.h"

uint64_t fri_rec_scene_hash(const fr_scene *scene)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return 0;
    fr_scene_write_yaml(scene, f, 0);
    fclose(f);
    uint64_t h = fri_rec_hash(FRI_REC_HASH_SEED, buf, len);
    free(buf);
    return h;
}

static void put_hex(FILE *f, const char *key, const void *p, size_t n)
{
    fprintf(f, "%s ", key);
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", c[i]);
    fputc('\n', f);
}

char *fri_rec_header(const fr_scene *scene, const char *const *pkgs, int npkgs, bool strict,
                     double duration, const fr_device *dev, const fr_safety_params *sp)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    char abs_scene[PATH_MAX];
    const char *path = fr_scene_path(scene);
    fputs(FRI_REC_MAGIC, f);
    fprintf(f, "# written by fureru %s; replay with: fureru replay FILE\n", fr_version());
    fprintf(f, "scene %s\n", realpath(path, abs_scene) ? abs_scene : path);
    for (int i = 0; i < fr_scene_set_count(scene); i++)
        fprintf(f, "set %s\n", fr_scene_set_at(scene, i));
    for (int i = 0; i < npkgs; i++) {
        char ap[PATH_MAX];
        fprintf(f, "package-path %s\n", realpath(pkgs[i], ap) ? ap : pkgs[i]);
    }
    fprintf(f, "strict %d\n", strict ? 1 : 0);
    fprintf(f, "scene-hash %016llx\n", (unsigned long long)fri_rec_scene_hash(scene));
    fprintf(f, "dt %a\n", fr_world_get_def(fr_scene_world((fr_scene *)scene))->dt);
    fprintf(f, "duration %a\n", duration);
    if (dev) {
        fprintf(f, "device %s\n", dev->desc.name);
        put_hex(f, "device-desc", &dev->desc, sizeof dev->desc);
        put_hex(f, "device-safety", sp, sizeof *sp);
    }
    fprintf(f, "record-size %d\n", FRI_REC_COLS * (int)sizeof(double));
    fputs("data\n", f);
    fclose(f);
    return buf;
}

static bool get_hex(const char *s, void *out, size_t n)
{
    unsigned char *c = out;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
        c[i] = (unsigned char)v;
    }
    return s[2 * n] == '\0';
}

static int push_str(char ***arr, int *n, const char *s)
{
    char **a = realloc(*arr, ((size_t)*n + 2) * sizeof *a);
    if (!a) return FR_ERR_NOMEM;
    *arr = a;
    if (!(a[*n] = strdup(s))) return FR_ERR_NOMEM;
    a[++*n] = NULL;
    return FR_OK;
}

#define BAD(...) (fr_diag_set(d, FR_ERR_PARSE, path, 0, 0, "", __VA_ARGS__))

int fri_rec_load(const char *path, fri_rec *r, fr_diag *d)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot open: %s", strerror(errno));
    char line[16384];
    int err = FR_OK, lineno = 0, recsize = 0;
    bool have_desc = false, have_safety = false, have_hash = false, data = false;
    bool have_dt = false;
    while (!err && fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n') {
            err =
                BAD("not a fureru recording (line %d of its head is cut off or too long)", lineno);
            break;
        }
        line[--n] = '\0';
        if (lineno == 1) {
            if (strcmp(line, "fureru-recording 1") != 0)
                err = BAD("not a fureru recording (it does not start with \"fureru-recording 1\")");
            continue;
        }
        if (line[0] == '#') continue;
        if (!strcmp(line, "data")) {
            data = true;
            break;
        }
        char *val = strchr(line, ' ');
        if (!val) {
            err = BAD("line %d of the head is not `key value`: %.60s", lineno, line);
            break;
        }
        *val++ = '\0';
        if (!strcmp(line, "scene"))
            snprintf(r->scene, sizeof r->scene, "%s", val);
        else if (!strcmp(line, "set"))
            err = push_str(&r->sets, &r->nsets, val);
        else if (!strcmp(line, "package-path"))
            err = push_str(&r->pkgs, &r->npkgs, val);
        else if (!strcmp(line, "strict"))
            r->strict = atoi(val) != 0;
        else if (!strcmp(line, "scene-hash"))
            have_hash = sscanf(val, "%llx", (unsigned long long *)&r->scene_hash) == 1;
        else if (!strcmp(line, "dt"))
            have_dt = (r->dt = strtod(val, NULL)) > 0;
        else if (!strcmp(line, "duration"))
            r->duration = strtod(val, NULL);
        else if (!strcmp(line, "device"))
            snprintf(r->device_name, sizeof r->device_name, "%s", val);
        else if (!strcmp(line, "device-desc"))
            have_desc = get_hex(val, &r->desc, sizeof r->desc);
        else if (!strcmp(line, "device-safety"))
            have_safety = get_hex(val, &r->safety, sizeof r->safety);
        else if (!strcmp(line, "record-size"))
            recsize = atoi(val);
        /* unknown keys: a later version's; the record size and the trailer still decide */
    }
    if (!err && lineno == 0) err = BAD("not a fureru recording (the file is empty)");
    if (!err && (!data || !r->scene[0] || !have_hash || !have_dt))
        err = BAD("the recording's head is incomplete (truncated, or not a recording)");
    if (!err && recsize != FRI_REC_COLS * (int)sizeof(double))
        err = BAD("records of %d bytes: written by another fureru version (this one reads %d)",
                  recsize, FRI_REC_COLS * (int)sizeof(double));
    if (!err && r->device_name[0] && !(have_desc && have_safety))
        err = BAD("the device's description in the head is damaged");
    r->has_device = r->device_name[0] != '\0';
    long start = ftell(f);
    if (!err && (fseek(f, 0, SEEK_END) != 0 || start < 0))
        err = fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot read: %s", strerror(errno));
    long end = ftell(f);
    size_t rec = FRI_REC_COLS * sizeof(double);
    fri_rec_trailer t;
    if (!err &&
        (end - start < (long)sizeof t || (size_t)(end - start - (long)sizeof t) % rec != 0 ||
         fseek(f, end - (long)sizeof t, SEEK_SET) != 0 || fread(&t, sizeof t, 1, f) != 1 ||
         memcmp(t.magic, FRI_REC_END, 8) != 0))
        err = BAD("the recording is truncated: it has no end (the run that wrote it did not "
                  "finish, or the file was cut)");
    uint64_t nrec = err ? 0 : (uint64_t)(end - start - (long)sizeof t) / rec;
    if (!err && t.records != nrec)
        err = BAD("the recording is corrupt: its end says %llu records, the file holds %llu",
                  (unsigned long long)t.records, (unsigned long long)nrec);
    if (!err && t.dropped)
        err = BAD("the recording is incomplete: %llu records were dropped while it was written",
                  (unsigned long long)t.dropped);
    double *buf = NULL;
    if (!err) {
        r->steps = t.steps;
        buf = malloc(nrec * rec + 1);
        r->samples = calloc(r->has_device ? t.steps + 1 : 1, sizeof *r->samples);
        r->cmds = calloc(nrec + 1, sizeof *r->cmds);
        if (!buf || !r->samples || !r->cmds) err = FR_ERR_NOMEM;
    }
    if (!err && (fseek(f, start, SEEK_SET) != 0 || fread(buf, rec, nrec, f) != nrec))
        err = fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot read the records");
    if (!err && fri_rec_hash(FRI_REC_HASH_SEED, buf, nrec * rec) != t.hash)
        err = BAD("the recording is corrupt: its records do not match their checksum");
    for (uint64_t i = 0; !err && i < nrec; i++) {
        const double *x = buf + i * FRI_REC_COLS;
        uint64_t step = (uint64_t)x[1];
        if (x[0] == FRI_REC_DEVICE && r->has_device && step == r->nsamples && step < t.steps) {
            fri_rec_sample *s = &r->samples[r->nsamples++];
            s->now_ns = fri_rec_to_u64(x[2]);
            s->state.pose.p = fr_v3(x[3], x[4], x[5]);
            s->state.pose.q = fr_q(x[6], x[7], x[8], x[9]);
            s->state.vel = fr_v3(x[10], x[11], x[12]);
            s->state.angvel = fr_v3(x[13], x[14], x[15]);
            s->state.buttons = (uint32_t)x[16];
            s->state.status = (int)x[17];
            s->state.seq = fri_rec_to_u64(x[18]);
            s->felt.force = fr_v3(x[19], x[20], x[21]);
            s->felt.torque = fr_v3(x[22], x[23], x[24]);
        } else if (x[0] == FRI_REC_DEVICE && r->has_device && step == t.steps &&
                   step == r->nsamples && i + 1 == nrec) {
            /* the tick a stop request interrupted: not part of the session */
        } else if (x[0] == FRI_REC_COMMAND && step <= t.steps) {
            r->cmds[r->ncmds++] = (fri_rec_command){step, (int)x[3], x[4]};
        } else {
            err = BAD("the recording is corrupt: record %llu (kind %g, step %g) is out of order",
                      (unsigned long long)i, x[0], x[1]);
        }
    }
    if (!err && r->has_device && r->nsamples != t.steps)
        err = BAD("the recording is corrupt: %llu device samples for %llu steps",
                  (unsigned long long)r->nsamples, (unsigned long long)t.steps);
    free(buf);
    fclose(f);
    if (err) fri_rec_free(r);
    return err;
}

void fri_rec_free(fri_rec *r)
{
    for (int i = 0; i < r->nsets; i++) free(r->sets[i]);
    for (int i = 0; i < r->npkgs; i++) free(r->pkgs[i]);
    free(r->sets);
    free(r->pkgs);
    free(r->samples);
    free(r->cmds);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- the replay device */

typedef struct replay_dev {
    const fri_rec *r;
    uint64_t next;     /* the sample the next read returns */
    bool pending;      /* a sample was read and its write not compared yet */
    uint64_t compared; /* writes compared */
    uint64_t mismatches;
    double max_diff;
} replay_dev;

static int rd_read(fr_device *dev, fr_device_state *out)
{
    replay_dev *p = dev->impl;
    if (p->next >= p->r->nsamples) {
        *out = p->r->nsamples ? p->r->samples[p->r->nsamples - 1].state : (fr_device_state){0};
        out->status = FR_DEVICE_STALE;
        return FR_OK;
    }
    *out = p->r->samples[p->next++].state;
    p->pending = true;
    return FR_OK;
}

static int rd_write(fr_device *dev, const fr_device_cmd *c)
{
    replay_dev *p = dev->impl;
    if (!p->pending) return FR_OK; /* the server's stop at the end: not part of a step */
    p->pending = false;
    const fr_device_cmd *want = &p->r->samples[p->next - 1].felt;
    p->compared++;
    if (memcmp(&c->force, &want->force, sizeof c->force) ||
        memcmp(&c->torque, &want->torque, sizeof c->torque)) {
        p->mismatches++;
        double e = fr_v3_norm(fr_v3_sub(c->force, want->force));
        if (!(e <= p->max_diff)) p->max_diff = e; /* NaN too */
    }
    return FR_OK;
}

static void rd_minimum(fr_device *dev)
{
    (void)dev;
}

static void rd_close(fr_device *dev)
{
    if (!dev) return;
    free(dev->impl);
    free(dev);
}

static const fr_device_ops rd_ops = {rd_read, rd_write, rd_minimum, NULL, rd_close};

int fri_rec_device_open(const fri_rec *r, fr_device **out)
{
    fr_device *dev = calloc(1, sizeof *dev);
    replay_dev *p = calloc(1, sizeof *p);
    if (!dev || !p) {
        free(dev);
        free(p);
        return FR_ERR_NOMEM;
    }
    p->r = r;
    dev->ops = &rd_ops;
    dev->desc = r->desc;
    dev->impl = p;
    *out = dev;
    return FR_OK;
}

void fri_rec_device_stats(const fr_device *dev, uint64_t *mismatches, double *max_diff,
                          uint64_t *compared)
{
    const replay_dev *p = dev->impl;
    *mismatches = p->mismatches;
    *max_diff = p->max_diff;
    *compared = p->compared;
}
