/* The device registry: spec resolution, device files, the safety section, listing. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fureru/base.h"
#include "fureru/devices.h"

const char *const fr_devreg_common_keys[] = {"driver", "name", "description", "safety", NULL};

const fr_driver_entry *fr_devreg_find(const fr_devreg *reg, const char *driver)
{
    if (!reg || !driver) return NULL;
    for (int i = 0; i < reg->n_drivers; i++)
        if (reg->drivers[i] && strcmp(reg->drivers[i]->name, driver) == 0) return reg->drivers[i];
    return NULL;
}

void fr_device_close(fr_device *dev)
{
    if (dev && dev->ops && dev->ops->close) dev->ops->close(dev);
}

int fr_devreg_check_unknown(const fr_cfg_node *root, const char *const *driver_keys, fr_diag *d)
{
    const char *all[128];
    int n = 0;
    for (int i = 0; fr_devreg_common_keys[i]; i++) all[n++] = fr_devreg_common_keys[i];
    for (int i = 0; driver_keys && driver_keys[i] && n < 127; i++) all[n++] = driver_keys[i];
    all[n] = NULL;
    return fr_cfg_check_unknown(root, all, d);
}

int fr_devreg_safety_from_cfg(const fr_cfg_node *m, fr_safety_params *p, fr_diag *d)
{
    static const char *const keys[] = {
        "max_force",     "max_torque",   "force_rate", "torque_rate",      "engage_force",
        "engage_torque", "engage_ticks", "ramp_time",  "watchdog_timeout", NULL};
    fr_safety_params_default(p);
    if (!m) return FR_OK;
    if (fr_cfg_node_kind(m) != FR_CFG_MAP)
        return fr_cfg_error(m, d, FR_ERR_PARSE, "expected a mapping of safety parameters");
    long ticks = p->engage_ticks;
    int err = 0;
    if (!err) err = fr_cfg_double_in(m, "max_force", p->max_force, 0, 1e6, &p->max_force, d);
    if (!err) err = fr_cfg_double_in(m, "max_torque", p->max_torque, 0, 1e6, &p->max_torque, d);
    if (!err)
        err = fr_cfg_double(m, "force_rate", p->force_rate, FR_CFG_POSITIVE, &p->force_rate, d);
    if (!err)
        err = fr_cfg_double(m, "torque_rate", p->torque_rate, FR_CFG_POSITIVE, &p->torque_rate, d);
    if (!err)
        err =
            fr_cfg_double(m, "engage_force", p->engage_force, FR_CFG_POSITIVE, &p->engage_force, d);
    if (!err)
        err = fr_cfg_double(m, "engage_torque", p->engage_torque, FR_CFG_POSITIVE,
                            &p->engage_torque, d);
    if (!err) err = fr_cfg_int(m, "engage_ticks", ticks, 0, 100000, &ticks, d);
    if (!err) err = fr_cfg_double_in(m, "ramp_time", p->ramp_time, 0, 600, &p->ramp_time, d);
    if (!err)
        err = fr_cfg_double_in(m, "watchdog_timeout", p->watchdog_timeout, 1e-4, 10,
                               &p->watchdog_timeout, d);
    if (!err) err = fr_cfg_check_unknown(m, keys, d);
    p->engage_ticks = (int)ticks;
    return err;
}

/* ------------------------------------------------------------------ opening */

static void driver_list(const fr_devreg *reg, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < reg->n_drivers && len + 2 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", reg->drivers[i]->name);
}

int fr_devreg_open_node(const fr_devreg *reg, const fr_cfg_node *root, const char *file,
                        const char *base_dir, bool dry_run, fr_device **out,
                        fr_safety_params *safety, fr_diag *d)
{
    if (out) *out = NULL;
    if (!reg || !root) return FR_ERR_INVAL;
    if (!dry_run && !out) return FR_ERR_INVAL;
    if (fr_cfg_node_kind(root) != FR_CFG_MAP)
        return fr_cfg_error(root, d, FR_ERR_PARSE, "a device description must be a mapping");
    char known[256];
    driver_list(reg, known, sizeof known);
    const fr_cfg_node *dn = fr_cfg_get(root, "driver");
    if (!dn)
        return fr_diag_set(d, FR_ERR_PARSE, file ? file : "", fr_cfg_node_line(root),
                           fr_cfg_node_col(root), "driver", "missing key 'driver' (one of: %s)",
                           known);
    char driver[32], name[64], descr[192];
    int err = fr_cfg_string(root, "driver", "", driver, sizeof driver, d);
    if (err) return err;
    const fr_driver_entry *e = fr_devreg_find(reg, driver);
    if (!e)
        return fr_cfg_error(dn, d, FR_ERR_NOTFOUND, "unknown driver '%s' (known: %s)", driver,
                            known);
    if ((err = fr_cfg_string(root, "name", "", name, sizeof name, d))) return err;
    if ((err = fr_cfg_string(root, "description", "", descr, sizeof descr, d))) return err;
    fr_safety_params sp;
    if ((err = fr_devreg_safety_from_cfg(fr_cfg_get(root, "safety"), &sp, d))) return err;

    fr_driver_ctx ctx = {file ? file : "", base_dir ? base_dir : ".", dry_run};
    fr_device *dev = NULL;
    err = e->open(root, &ctx, dry_run ? NULL : &dev, d);
    if (err) return err;
    /* a safety net for drivers that forget their own check */
    err = fr_devreg_check_unknown(root, NULL, d);
    if (err) {
        fr_device_close(dev);
        return err;
    }
    if (dev && name[0]) snprintf(dev->desc.name, sizeof dev->desc.name, "%s", name);
    if (safety) *safety = sp;
    if (out)
        *out = dev;
    else
        fr_device_close(dev);
    return FR_OK;
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void dir_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, n, ".");
    else if (slash == path)
        snprintf(buf, n, "/");
    else
        snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

static int load_spec(const fr_devreg *reg, const char *spec, const char *const *sets, int n_sets,
                     bool dry_run, fr_device **out, fr_safety_params *safety, fr_diag *d)
{
    if (!reg || !spec || !spec[0]) return FR_ERR_INVAL;
    char path[1024] = "";
    if (strchr(spec, '/') || has_suffix(spec, ".yaml") || has_suffix(spec, ".yml")) {
        snprintf(path, sizeof path, "%s", spec);
    } else if (reg->config_dir) {
        char cand[1024];
        snprintf(cand, sizeof cand, "%s/%s.yaml", reg->config_dir, spec);
        if (is_file(cand)) snprintf(path, sizeof path, "%s", cand);
    }
    fr_cfg_doc *doc = NULL;
    int err;
    char base[1024] = ".";
    if (path[0]) {
        err = fr_cfg_load_file(path, &doc, d);
        if (err) return err;
        dir_of(path, base, sizeof base);
    } else if (fr_devreg_find(reg, spec)) {
        char text[96], name[96];
        snprintf(text, sizeof text, "driver: %s\n", spec);
        snprintf(name, sizeof name, "<driver %s>", spec);
        err = fr_cfg_load_string(text, name, &doc, d);
        if (err) return err;
    } else {
        char known[256], files[512] = "";
        driver_list(reg, known, sizeof known);
        fr_devreg_file list[32];
        int n = 0;
        if (fr_devreg_list_files(reg, list, 32, &n) == FR_OK) {
            size_t len = 0;
            for (int i = 0; i < n && i < 32 && len + 2 < sizeof files; i++)
                len += (size_t)snprintf(files + len, sizeof files - len, "%s%s", i ? ", " : "",
                                        list[i].name);
        }
        return fr_diag_set(d, FR_ERR_NOTFOUND, "", 0, 0, "device",
                           "no device '%s' (drivers: %s; device files: %s)", spec, known,
                           files[0] ? files : "none");
    }
    for (int i = 0; i < n_sets; i++) {
        err = fr_cfg_set(doc, sets[i], d);
        if (err) {
            fr_cfg_free(doc);
            return err;
        }
    }
    err = fr_devreg_open_node(reg, fr_cfg_root(doc), fr_cfg_doc_file(doc), base, dry_run, out,
                              safety, d);
    fr_cfg_free(doc);
    return err;
}

int fr_devreg_open(const fr_devreg *reg, const char *spec, const char *const *sets, int n_sets,
                   fr_device **out, fr_safety_params *safety, fr_diag *d)
{
    if (!out) return FR_ERR_INVAL;
    return load_spec(reg, spec, sets, n_sets, false, out, safety, d);
}

int fr_devreg_check(const fr_devreg *reg, const char *spec, const char *const *sets, int n_sets,
                    fr_safety_params *safety, fr_diag *d)
{
    return load_spec(reg, spec, sets, n_sets, true, NULL, safety, d);
}

const char *fr_devreg_default_spec(const fr_devreg *reg)
{
    for (int i = 0; reg && i < reg->n_drivers; i++) {
        const fr_driver_entry *e = reg->drivers[i];
        if (e && e->probe && e->probe() > 0) return e->name;
    }
    return "virtual";
}

/* ------------------------------------------------------------------ listing */

static int cmp_files(const void *a, const void *b)
{
    return strcmp(((const fr_devreg_file *)a)->name, ((const fr_devreg_file *)b)->name);
}

static void read_file_info(const fr_devreg *reg, fr_devreg_file *f)
{
    fr_cfg_doc *doc = NULL;
    fr_diag d;
    f->err = fr_cfg_load_file(f->path, &doc, &d);
    if (f->err) return;
    const fr_cfg_node *root = fr_cfg_root(doc);
    const char *drv = fr_cfg_node_scalar(fr_cfg_get(root, "driver"));
    const char *des = fr_cfg_node_scalar(fr_cfg_get(root, "description"));
    snprintf(f->driver, sizeof f->driver, "%s", drv ? drv : "");
    snprintf(f->description, sizeof f->description, "%s", des ? des : "");
    f->known = fr_devreg_find(reg, f->driver) != NULL;
    if (!drv) f->err = FR_ERR_PARSE;
    fr_cfg_free(doc);
}

int fr_devreg_list_files(const fr_devreg *reg, fr_devreg_file *out, int max, int *n_total)
{
    *n_total = 0;
    if (!reg || !reg->config_dir) return FR_OK;
    DIR *dir = opendir(reg->config_dir);
    if (!dir) return FR_ERR_IO;
    int cap = 16, n = 0;
    fr_devreg_file *all = calloc((size_t)cap, sizeof *all);
    if (!all) {
        closedir(dir);
        return FR_ERR_NOMEM;
    }
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".yaml")) continue;
        size_t len = strlen(de->d_name) - 5;
        if (len == 0 || len >= sizeof all[0].name) continue;
        if (n == cap) {
            fr_devreg_file *m = realloc(all, sizeof *all * (size_t)cap * 2);
            if (!m) break;
            all = m;
            cap *= 2;
        }
        fr_devreg_file *f = &all[n];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%.*s", (int)len, de->d_name);
        snprintf(f->path, sizeof f->path, "%.400s/%.100s", reg->config_dir, de->d_name);
        if (!is_file(f->path)) continue;
        n++;
    }
    closedir(dir);
    qsort(all, (size_t)n, sizeof *all, cmp_files);
    for (int i = 0; i < n; i++) read_file_info(reg, &all[i]);
    for (int i = 0; i < n && i < max; i++) out[i] = all[i];
    *n_total = n;
    free(all);
    return FR_OK;
}

void fr_devreg_print(const fr_devreg *reg, FILE *out)
{
    fprintf(out, "Drivers:\n");
    for (int i = 0; reg && i < reg->n_drivers; i++) {
        const fr_driver_entry *e = reg->drivers[i];
        const char *hw = !e->probe        ? ""
                         : e->probe() > 0 ? "  [hardware attached]"
                                          : "  [no hardware]";
        fprintf(out, "  %-12s %s%s\n", e->name, e->summary ? e->summary : "", hw);
    }
    int n = 0;
    if (!reg || !reg->config_dir) return;
    if (fr_devreg_list_files(reg, NULL, 0, &n) != FR_OK) {
        fprintf(out, "Device files: cannot read %s\n", reg->config_dir);
        return;
    }
    fr_devreg_file *files = calloc((size_t)(n ? n : 1), sizeof *files);
    if (!files) return;
    fr_devreg_list_files(reg, files, n, &n);
    fprintf(out, "Device files (%s):\n", reg->config_dir);
    for (int i = 0; i < n; i++) {
        const fr_devreg_file *f = &files[i];
        if (f->err)
            fprintf(out, "  %-20s (unreadable: %s)\n", f->name, fr_strerror(f->err));
        else
            fprintf(out, "  %-20s driver %-8s%s %s\n", f->name, f->driver,
                    f->known ? "" : " (driver not built in)", f->description);
    }
    free(files);
}
