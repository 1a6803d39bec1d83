/*
 * fureru device registry: open a device by driver name or from a YAML device file, list the
 * drivers and device files there are, and parse the `safety:` section every device file may
 * carry. Start-up only (allocates, reads files, prints).
 *
 * Drivers register themselves: the registry links no driver. The final executable assembles a
 * table of entries (each driver exports one, e.g. fr_virtual_driver in fureru/virtual.h):
 *     static const fr_driver_entry *const drivers[] = {&fr_virtual_driver, &fr_spidar_driver};
 *     fr_devreg reg = {drivers, 2, "/path/to/devices"};   // fureru uses fr_data_dir()/devices
 *
 * Device file (config/devices/NAME.yaml):
 *     driver: virtual        # required: which entry opens it
 *     name: my-device        # optional: fr_device_desc.name (default: the driver's choice)
 *     description: "..."     # optional: one line for `fureru device list`
 *     safety: {...}          # optional: fr_safety_params (keys below); defaults otherwise
 *     ...                    # everything else belongs to the driver
 * safety keys: max_force (N), max_torque (N·m), force_rate (N/s), torque_rate (N·m/s),
 * engage_force (N), engage_torque (N·m), engage_ticks, ramp_time (s), watchdog_timeout (s).
 * Errors name file, line, column and field (fr_diag), as for scenes: unknown keys, wrong types,
 * out-of-range values, NaN/Inf.
 *
 * A spec (`fureru run --device SPEC`) is resolved as follows:
 *   1. it contains '/' or ends in .yaml/.yml: that file;
 *   2. config_dir/SPEC.yaml exists: that file (so `virtual` opens config/devices/virtual.yaml);
 *   3. SPEC names a driver: that driver with every default;
 *   4. otherwise FR_ERR_NOTFOUND, listing what exists.
 * `--set PATH=VALUE` overrides (paths relative to the device file's root, e.g. hand.mass=0.2)
 * apply in all three cases before anything is read.
 */
#ifndef FURERU_DEVICES_H
#define FURERU_DEVICES_H

#include <stdbool.h>
#include <stdio.h>

#include "fureru/config.h"
#include "fureru/device.h"
#include "fureru/haptic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a driver's open function gets besides the document root. */
typedef struct fr_driver_ctx {
    const char *file;     /* the device file ("" when opened by name), for messages */
    const char *base_dir; /* directory of the device file (relative paths in it), or "." */
    bool dry_run;         /* validate only: parse everything, load referenced files, check
                             unknown keys, but touch no hardware and create no device */
} fr_driver_ctx;

/* Open from the device file's root map (its common keys already consumed). Must read every key
 * it knows and call fr_devreg_check_unknown(root, its_keys, d) before touching hardware. With
 * ctx->dry_run, *out is left NULL. Returns FR_OK or a negative FR_ERR_* with *d set. */
typedef int (*fr_driver_open_fn)(const fr_cfg_node *root, const fr_driver_ctx *ctx, fr_device **out,
                                 fr_diag *d);

typedef struct fr_driver_entry {
    const char *name;       /* the `driver:` value, e.g. "virtual" */
    const char *summary;    /* one line for `fureru device list` */
    fr_driver_open_fn open; /* required */
    /* Optional (NULL = cannot tell): 1 when matching hardware is attached, 0 when not. */
    int (*probe)(void);
} fr_driver_entry;

typedef struct fr_devreg {
    const fr_driver_entry *const *drivers;
    int n_drivers;
    const char *config_dir; /* where NAME.yaml device files live; NULL = none */
} fr_devreg;

/* The keys every device file may have besides the driver's: driver, name, description, safety. */
extern const char *const fr_devreg_common_keys[];

const fr_driver_entry *fr_devreg_find(const fr_devreg *reg, const char *driver);

/* Unknown-key check of a device file's root: allowed = the common keys + driver_keys
 * (NULL-terminated). The message lists both. */
int fr_devreg_check_unknown(const fr_cfg_node *root, const char *const *driver_keys, fr_diag *d);

/* Parse a `safety:` mapping (NULL = all defaults) into p, starting from
 * fr_safety_params_default. */
int fr_devreg_safety_from_cfg(const fr_cfg_node *safety, fr_safety_params *p, fr_diag *d);

/* Resolve spec (see above), apply sets, open the device. *safety (may be NULL) receives the
 * file's safety parameters. */
int fr_devreg_open(const fr_devreg *reg, const char *spec, const char *const *sets, int n_sets,
                   fr_device **out, fr_safety_params *safety, fr_diag *d);
/* The same, validating only (dry run: no device is created). */
int fr_devreg_check(const fr_devreg *reg, const char *spec, const char *const *sets, int n_sets,
                    fr_safety_params *safety, fr_diag *d);
/* Open from a device mapping embedded in another document (e.g. a scene's `device:` section);
 * file/base_dir as in fr_driver_ctx. With dry_run, *out may be NULL. */
int fr_devreg_open_node(const fr_devreg *reg, const fr_cfg_node *root, const char *file,
                        const char *base_dir, bool dry_run, fr_device **out,
                        fr_safety_params *safety, fr_diag *d);

/* Close a device from any driver (ops->close). NULL is fine. */
void fr_device_close(fr_device *dev);

/* The spec `fureru run` uses without --device: the first driver whose probe() says its hardware
 * is attached, else "virtual". */
const char *fr_devreg_default_spec(const fr_devreg *reg);

/* Device files in config_dir, sorted by name. */
typedef struct fr_devreg_file {
    char name[64]; /* the spec: file name without .yaml */
    char path[512];
    char driver[32];       /* the `driver:` value ("" if unreadable) */
    char description[192]; /* the `description:` value, or "" */
    bool known;            /* the driver is in the table */
    int err;               /* FR_OK, or why the file could not be read */
} fr_devreg_file;
/* Fills up to max entries; *n_total = how many files there are. FR_ERR_IO when the directory
 * cannot be read (a NULL config_dir gives zero files). */
int fr_devreg_list_files(const fr_devreg *reg, fr_devreg_file *out, int max, int *n_total);
/* `fureru device list`: drivers (name, summary, hardware attached?) then device files. */
void fr_devreg_print(const fr_devreg *reg, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
