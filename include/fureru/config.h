/*
 * fureru config: YAML documents with source positions, `--set PATH=VALUE` overrides, typed
 * getters with defaults and ranges, and unknown-key detection. Used by scene and device files so
 * that every error names file, line, column and field. Start-up only (allocates freely).
 *
 * Paths (for --set and in messages): keys joined by '.', sequence elements by index or, for a
 * sequence of mappings that have a `name` key, by that name:
 *   world.dt   bodies.0.mass   bodies.crate.pose.position   materials.steel.mu_s
 * Messages print sequence elements as `bodies[0]` / `bodies[crate]`.
 */
#ifndef FURERU_CONFIG_H
#define FURERU_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A diagnostic: where and what. */
typedef enum fr_diag_severity {
    FR_DIAG_ERROR = 0,
    FR_DIAG_WARNING = 1, /* repaired or ignored; an error under --strict */
    FR_DIAG_NOTE = 2,    /* information (a mesh hull's simplification, ...) */
} fr_diag_severity;

typedef struct fr_diag {
    char file[512];
    int line, col; /* 1-based; 0 when unknown */
    char field[256];
    char msg[512];
    int severity; /* fr_diag_severity; fr_diag_set makes an error */
} fr_diag;

/* Fill a diagnostic (printf-style message) and return err (for `return fr_diag_set(...)`). */
int fr_diag_set(fr_diag *d, int err, const char *file, int line, int col, const char *field,
                const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* "file:line:col: error: field 'x': message" ("warning:", "note:" by severity) */
void fr_diag_print(const fr_diag *d, FILE *out);

/* Every diagnostic of a load, in the order found (start-up only: grows with malloc). */
typedef struct fr_diag_list {
    fr_diag *items;
    int n, cap;
    int nerrors, nwarnings;
} fr_diag_list;
void fr_diag_list_init(fr_diag_list *l);
void fr_diag_list_free(fr_diag_list *l);
/* Append a copy (FR_ERR_NOMEM when it cannot grow; the list stays valid). */
int fr_diag_list_add(fr_diag_list *l, const fr_diag *d);
/* Print them all, one line each. */
void fr_diag_list_print(const fr_diag_list *l, FILE *out);

typedef enum fr_cfg_kind { FR_CFG_NULL, FR_CFG_SCALAR, FR_CFG_MAP, FR_CFG_SEQ } fr_cfg_kind;

typedef struct fr_cfg_doc fr_cfg_doc;
typedef struct fr_cfg_node fr_cfg_node;

int fr_cfg_load_file(const char *path, fr_cfg_doc **out, fr_diag *d);
/* `name` is what messages call the text (e.g. "<string>"). */
int fr_cfg_load_string(const char *text, const char *name, fr_cfg_doc **out, fr_diag *d);
void fr_cfg_free(fr_cfg_doc *doc);
fr_cfg_node *fr_cfg_root(fr_cfg_doc *doc);
const char *fr_cfg_doc_file(const fr_cfg_doc *doc);

/* Apply "PATH=VALUE" (VALUE is YAML: 2.5, [0, 0, -9.8], true, "text"). Missing mapping keys
 * are created; sequence elements must exist. */
int fr_cfg_set(fr_cfg_doc *doc, const char *assignment, fr_diag *d);

/* Node inspection. */
fr_cfg_kind fr_cfg_node_kind(const fr_cfg_node *n);
const char *fr_cfg_node_scalar(const fr_cfg_node *n); /* NULL unless scalar */
int fr_cfg_node_len(const fr_cfg_node *n);            /* map entries or seq items */
fr_cfg_node *fr_cfg_node_item(const fr_cfg_node *n, int i);
const char *fr_cfg_node_key(const fr_cfg_node *n, int i); /* map key i */
bool fr_cfg_node_quoted(const fr_cfg_node *n);            /* a quoted scalar: always a string */
const char *fr_cfg_node_path(const fr_cfg_node *n);       /* for messages, e.g. bodies[1].mass */
int fr_cfg_node_line(const fr_cfg_node *n);
int fr_cfg_node_col(const fr_cfg_node *n);
/* Whether the node's value came from a --set (fr_cfg_set) rather than the file: a message
 * about two fields names the one the user typed on the command line. */
bool fr_cfg_node_from_set(const fr_cfg_node *n);
/* Set a diagnostic located at this node. */
int fr_cfg_error(const fr_cfg_node *n, fr_diag *d, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Write a node as block YAML that fr_cfg_load_* reads back to the same tree (sequences of
 * scalars in flow style, quoted scalars stay quoted). A map or sequence starts on a new line at
 * `indent` spaces; a scalar is written inline. */
void fr_cfg_write(const fr_cfg_node *n, FILE *out, int indent);
/* One string as a YAML scalar: plain when it reads back unchanged, else double-quoted. */
void fr_cfg_write_string(const char *s, FILE *out);

/* Look up key in a map (NULL if absent) and mark it used. map may be NULL (absent section). */
fr_cfg_node *fr_cfg_get(const fr_cfg_node *map, const char *key);
/* Error on any key of map not marked used: "unknown key 'x' (expected one of: a, b, c)". */
int fr_cfg_check_unknown(const fr_cfg_node *map, const char *const *expected, fr_diag *d);

/* Typed getters. Each returns FR_OK and writes *out (the default when the key is absent), or a
 * negative FR_ERR_* with *d naming the node: wrong type, not finite, out of range. */
enum fr_cfg_range {
    FR_CFG_ANY = 0,
    FR_CFG_POSITIVE = 1,    /* > 0 */
    FR_CFG_NONNEGATIVE = 2, /* >= 0 */
};
int fr_cfg_double(const fr_cfg_node *map, const char *key, double def, int range, double *out,
                  fr_diag *d);
/* Within [lo, hi]. */
int fr_cfg_double_in(const fr_cfg_node *map, const char *key, double def, double lo, double hi,
                     double *out, fr_diag *d);
int fr_cfg_int(const fr_cfg_node *map, const char *key, long def, long lo, long hi, long *out,
               fr_diag *d);
int fr_cfg_bool(const fr_cfg_node *map, const char *key, bool def, bool *out, fr_diag *d);
/* Copies into buf (size n); error when longer. */
int fr_cfg_string(const fr_cfg_node *map, const char *key, const char *def, char *buf, size_t n,
                  fr_diag *d);
/* One of names[] (NULL-terminated); *out = its index. */
int fr_cfg_enum(const fr_cfg_node *map, const char *key, const char *const *names, int def,
                int *out, fr_diag *d);
/* A list of exactly n numbers. */
int fr_cfg_doubles(const fr_cfg_node *map, const char *key, int n, const double *def, int range,
                   double *out, fr_diag *d);
int fr_cfg_vec3(const fr_cfg_node *map, const char *key, fr_vec3 def, fr_vec3 *out, fr_diag *d);
/* Parse a scalar node as a finite double. */
int fr_cfg_node_double(const fr_cfg_node *n, double *out, fr_diag *d);

#ifdef __cplusplus
}
#endif
#endif
