/* YAML documents with positions, overrides and typed getters (see include/fureru/config.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fureru/base.h"
#include "fureru/config.h"
#include "files.h"

struct fr_cfg_node {
    fr_cfg_kind kind;
    char *scalar;
    bool quoted; /* a quoted scalar is a string, never a number or bool */
    int n, cap;
    char **keys;           /* map keys (n) */
    fr_cfg_node **items;   /* map values or sequence items (n) */
    int line, col;         /* value position, 1-based */
    int key_line, key_col; /* position of this node's key in its parent map */
    bool used;             /* fetched by a getter (for unknown-key checks) */
    const char *file;      /* origin: the file name, or "--set" */
    char *path;
    fr_cfg_node *parent;
};

struct fr_cfg_doc {
    char *file;
    char *set_origin; /* "--set" */
    fr_cfg_node *root;
};

/* ------------------------------------------------------------------ diagnostics */

int fr_diag_set(fr_diag *d, int err, const char *file, int line, int col, const char *field,
                const char *fmt, ...)
{
    if (!d) return err;
    d->severity = FR_DIAG_ERROR;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    d->col = col;
    snprintf(d->field, sizeof d->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return err;
}

void fr_diag_print(const fr_diag *d, FILE *out)
{
    if (d->file[0]) {
        fprintf(out, "%s", d->file);
        if (d->line > 0) fprintf(out, ":%d:%d", d->line, d->col);
        fprintf(out, ": ");
    }
    fprintf(out, "%s: ",
            d->severity == FR_DIAG_WARNING ? "warning"
            : d->severity == FR_DIAG_NOTE  ? "note"
                                           : "error");
    if (d->field[0]) fprintf(out, "field '%s': ", d->field);
    fprintf(out, "%s\n", d->msg);
}

void fr_diag_list_init(fr_diag_list *l)
{
    memset(l, 0, sizeof *l);
}

void fr_diag_list_free(fr_diag_list *l)
{
    if (!l) return;
    free(l->items);
    memset(l, 0, sizeof *l);
}

int fr_diag_list_add(fr_diag_list *l, const fr_diag *d)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        fr_diag *t = realloc(l->items, sizeof *t * (size_t)cap);
        if (!t) return FR_ERR_NOMEM;
        l->items = t;
        l->cap = cap;
    }
    l->items[l->n++] = *d;
    if (d->severity == FR_DIAG_ERROR) l->nerrors++;
    if (d->severity == FR_DIAG_WARNING) l->nwarnings++;
    return FR_OK;
}

void fr_diag_list_print(const fr_diag_list *l, FILE *out)
{
    for (int i = 0; l && i < l->n; i++) fr_diag_print(&l->items[i], out);
}

/* ------------------------------------------------------------------ nodes */

static fr_cfg_node *node_new(fr_cfg_kind kind, const char *file, int line, int col)
{
    fr_cfg_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->file = file;
    n->line = line;
    n->col = col;
    return n;
}

static void node_free(fr_cfg_node *n)
{
    if (!n) return;
    for (int i = 0; i < n->n; i++) {
        if (n->keys) free(n->keys[i]);
        node_free(n->items[i]);
    }
    free(n->keys);
    free(n->items);
    free(n->scalar);
    free(n->path);
    free(n);
}

static int node_push(fr_cfg_node *n, char *key, fr_cfg_node *child)
{
    if (n->n == n->cap) {
        int cap = n->cap ? 2 * n->cap : 4;
        fr_cfg_node **items = realloc(n->items, sizeof *items * (size_t)cap);
        if (!items) return FR_ERR_NOMEM;
        n->items = items;
        if (n->kind == FR_CFG_MAP) {
            char **keys = realloc(n->keys, sizeof *keys * (size_t)cap);
            if (!keys) return FR_ERR_NOMEM;
            n->keys = keys;
        }
        n->cap = cap;
    }
    if (n->kind == FR_CFG_MAP) n->keys[n->n] = key;
    n->items[n->n++] = child;
    child->parent = n;
    return FR_OK;
}

/* The `name` scalar of a map item, or NULL. */
static const char *item_name(const fr_cfg_node *n)
{
    if (!n || n->kind != FR_CFG_MAP) return NULL;
    for (int i = 0; i < n->n; i++)
        if (strcmp(n->keys[i], "name") == 0 && n->items[i]->kind == FR_CFG_SCALAR)
            return n->items[i]->scalar;
    return NULL;
}

static void assign_paths(fr_cfg_node *n, const char *path)
{
    free(n->path);
    n->path = strdup(path);
    size_t len = strlen(path);
    for (int i = 0; i < n->n; i++) {
        char buf[1024];
        if (n->kind == FR_CFG_MAP) {
            snprintf(buf, sizeof buf, "%s%s%s", path, len ? "." : "", n->keys[i]);
        } else {
            const char *name = item_name(n->items[i]);
            if (name)
                snprintf(buf, sizeof buf, "%s[%s]", path, name);
            else
                snprintf(buf, sizeof buf, "%s[%d]", path, i);
        }
        assign_paths(n->items[i], buf);
    }
}

/* ------------------------------------------------------------------ loading */

/* Bounds on what a document may become (docs/scenes.md, "Limits"): nesting is refused at the
 * event that opens level 65, before the parser has read further; aliases are expanded by copying
 * and all the copies of one document together may make at most FR_CFG_MAX_ALIAS_NODES nodes. */
enum { CFG_MAX_DEPTH = 64, FR_CFG_MAX_ALIAS_NODES = 100000 };

typedef struct anchor {
    char *name;
    fr_cfg_node *node; /* NULL while the anchored node is still open */
} anchor;

typedef struct frame {
    fr_cfg_node *node;
    char *key; /* a map's key waiting for its value */
    int key_line, key_col;
    anchor *pending; /* the anchor naming this node, completed when it closes */
} frame;

typedef struct loader {
    yaml_parser_t parser;
    const char *file;
    frame stack[CFG_MAX_DEPTH + 2];
    int depth;
    anchor *anchors;
    int nanchors, capanchors;
    long alias_nodes;
    fr_cfg_node *root;
    fr_diag *d;
} loader;

static fr_cfg_node *node_copy(const fr_cfg_node *n, long *budget)
{
    if (--*budget < 0) return NULL;
    fr_cfg_node *c = node_new(n->kind, n->file, n->line, n->col);
    if (!c) return NULL;
    c->quoted = n->quoted;
    if (n->scalar && !(c->scalar = strdup(n->scalar))) goto fail;
    for (int i = 0; i < n->n; i++) {
        fr_cfg_node *ci = node_copy(n->items[i], budget);
        char *k = n->kind == FR_CFG_MAP ? strdup(n->keys[i]) : NULL;
        if (!ci || (n->kind == FR_CFG_MAP && !k) || node_push(c, k, ci)) {
            free(k);
            node_free(ci);
            goto fail;
        }
        ci->key_line = n->items[i]->key_line;
        ci->key_col = n->items[i]->key_col;
    }
    return c;
fail:
    node_free(c);
    return NULL;
}

static int cmp_key_index(const void *pa, const void *pb, void *keys)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    int c = strcmp(((char **)keys)[a], ((char **)keys)[b]);
    return c ? c : (a > b) - (a < b);
}

/* A duplicate key of a closed map (the first repeated one in file order): O(n log n). */
static int check_duplicates(loader *L, const fr_cfg_node *n, const char *path)
{
    int dup = -1, first = -1;
    if (n->n <= 16) {
        for (int j = 1; j < n->n && dup < 0; j++)
            for (int i = 0; i < j; i++)
                if (!strcmp(n->keys[i], n->keys[j])) {
                    dup = j;
                    first = i;
                    break;
                }
    } else {
        int *ix = malloc(sizeof *ix * (size_t)n->n);
        if (!ix) return FR_ERR_NOMEM;
        for (int i = 0; i < n->n; i++) ix[i] = i;
        qsort_r(ix, (size_t)n->n, sizeof *ix, cmp_key_index, n->keys);
        for (int i = 1; i < n->n; i++)
            if (!strcmp(n->keys[ix[i - 1]], n->keys[ix[i]]) && (dup < 0 || ix[i] < dup)) {
                dup = ix[i];
                first = ix[i - 1];
                while (i + 1 < n->n && !strcmp(n->keys[ix[i]], n->keys[ix[i + 1]])) i++;
            }
        free(ix);
    }
    if (dup < 0) return FR_OK;
    char full[512];
    snprintf(full, sizeof full, "%.300s%s%.200s", path, path[0] ? "." : "", n->keys[dup]);
    return fr_diag_set(L->d, FR_ERR_PARSE, L->file, n->items[dup]->key_line, n->items[dup]->key_col,
                       full, "duplicate key (first at line %d)", n->items[first]->key_line);
}

/* The path of the next value the open containers receive (for messages). */
static void open_path(const loader *L, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < L->depth && k + 1 < len; i++) {
        const frame *f = &L->stack[i];
        if (f->node->kind == FR_CFG_MAP && f->key)
            k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? "." : "", f->key);
        else if (f->node->kind == FR_CFG_SEQ)
            k += (size_t)snprintf(buf + k, len - k, "[%d]", f->node->n);
        if (k >= len) k = len - 1;
    }
}

/* Attach a finished node to the open container (or make it the root). */
static int attach(loader *L, fr_cfg_node *c, int line, int col)
{
    if (L->depth == 0) {
        L->root = c;
        return FR_OK;
    }
    frame *f = &L->stack[L->depth - 1];
    if (f->node->kind == FR_CFG_SEQ) {
        c->key_line = c->line;
        c->key_col = c->col;
        if (node_push(f->node, NULL, c)) {
            node_free(c);
            return FR_ERR_NOMEM;
        }
        return FR_OK;
    }
    if (!f->key) { /* c is a key */
        if (c->kind != FR_CFG_SCALAR && c->kind != FR_CFG_NULL) {
            node_free(c);
            return fr_diag_set(L->d, FR_ERR_PARSE, L->file, line, col, "",
                               "mapping keys must be plain scalars");
        }
        f->key = c->scalar ? c->scalar : strdup("");
        c->scalar = NULL;
        f->key_line = line;
        f->key_col = col;
        node_free(c);
        return f->key ? FR_OK : FR_ERR_NOMEM;
    }
    c->key_line = f->key_line;
    c->key_col = f->key_col;
    if (node_push(f->node, f->key, c)) {
        node_free(c);
        return FR_ERR_NOMEM;
    }
    f->key = NULL;
    return FR_OK;
}

static int add_anchor(loader *L, const unsigned char *name, anchor **out)
{
    *out = NULL;
    if (!name) return FR_OK;
    if (L->nanchors == L->capanchors) {
        int cap = L->capanchors ? 2 * L->capanchors : 8;
        anchor *t = realloc(L->anchors, sizeof *t * (size_t)cap);
        if (!t) return FR_ERR_NOMEM;
        L->anchors = t;
        L->capanchors = cap;
    }
    anchor *a = &L->anchors[L->nanchors];
    if (!(a->name = strdup((const char *)name))) return FR_ERR_NOMEM;
    a->node = NULL;
    L->nanchors++;
    *out = a;
    return FR_OK;
}

static fr_cfg_node *scalar_node(loader *L, const yaml_event_t *e, int line, int col)
{
    const char *v = (const char *)e->data.scalar.value;
    bool plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    bool is_null = plain && (!e->data.scalar.length || !strcmp(v, "~") || !strcmp(v, "null"));
    fr_cfg_node *n = node_new(is_null ? FR_CFG_NULL : FR_CFG_SCALAR, L->file, line, col);
    if (!n) return NULL;
    n->scalar = strndup(v, e->data.scalar.length);
    n->quoted = !plain;
    if (!n->scalar) {
        node_free(n);
        return NULL;
    }
    return n;
}

/* One event; 1 at the end of the first document. */
static int on_event(loader *L, yaml_event_t *e, int *done)
{
    int line = (int)e->start_mark.line + 1, col = (int)e->start_mark.column + 1, err;
    switch (e->type) {
    case YAML_STREAM_START_EVENT:
    case YAML_DOCUMENT_START_EVENT:
    case YAML_NO_EVENT:
        return FR_OK;
    case YAML_DOCUMENT_END_EVENT:
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return FR_OK;
    case YAML_SCALAR_EVENT: {
        anchor *a;
        const frame *top = L->depth ? &L->stack[L->depth - 1] : NULL;
        if (e->data.scalar.anchor && top && top->node->kind == FR_CFG_MAP && !top->key)
            return fr_diag_set(L->d, FR_ERR_PARSE, L->file, line, col, "",
                               "anchors on mapping keys are not supported");
        if ((err = add_anchor(L, e->data.scalar.anchor, &a))) return err;
        fr_cfg_node *n = scalar_node(L, e, line, col);
        if (!n) return FR_ERR_NOMEM;
        if (a) a->node = n;
        return attach(L, n, line, col);
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)e->data.alias.anchor;
        const anchor *a = NULL;
        for (int i = L->nanchors - 1; i >= 0 && !a; i--)
            if (!strcmp(L->anchors[i].name, name)) a = &L->anchors[i];
        if (!a)
            return fr_diag_set(L->d, FR_ERR_PARSE, L->file, line, col, "",
                               "alias '*%s' names no anchor before it", name);
        if (!a->node)
            return fr_diag_set(L->d, FR_ERR_PARSE, L->file, line, col, "",
                               "alias '*%s' refers to a node that contains it", name);
        long budget = FR_CFG_MAX_ALIAS_NODES - L->alias_nodes, before = budget;
        fr_cfg_node *c = node_copy(a->node, &budget);
        if (!c && budget < 0)
            return fr_diag_set(L->d, FR_ERR_RANGE, L->file, line, col, "",
                               "aliases expand to more than %d nodes (an alias bomb?)",
                               FR_CFG_MAX_ALIAS_NODES);
        if (!c) return FR_ERR_NOMEM;
        L->alias_nodes += before - budget;
        c->line = line;
        c->col = col;
        return attach(L, c, line, col);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        if (L->depth >= CFG_MAX_DEPTH) {
            char path[512];
            open_path(L, path, sizeof path);
            return fr_diag_set(L->d, FR_ERR_PARSE, L->file, line, col, path,
                               "nesting deeper than %d levels", CFG_MAX_DEPTH);
        }
        if (L->depth > 0) {
            frame *f = &L->stack[L->depth - 1];
            if (f->node->kind == FR_CFG_MAP && !f->key)
                return fr_diag_set(L->d, FR_ERR_PARSE, L->file, line, col, "",
                                   "mapping keys must be plain scalars");
        }
        bool seq = e->type == YAML_SEQUENCE_START_EVENT;
        anchor *a;
        if ((err = add_anchor(L, seq ? e->data.sequence_start.anchor : e->data.mapping_start.anchor,
                              &a)))
            return err;
        fr_cfg_node *n = node_new(seq ? FR_CFG_SEQ : FR_CFG_MAP, L->file, line, col);
        if (!n) return FR_ERR_NOMEM;
        L->stack[L->depth++] = (frame){.node = n, .pending = a};
        return FR_OK;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        frame f = L->stack[--L->depth];
        free(f.key);
        if (f.node->kind == FR_CFG_MAP) {
            char path[512];
            open_path(L, path, sizeof path);
            if ((err = check_duplicates(L, f.node, path))) {
                node_free(f.node);
                return err;
            }
        }
        if (f.pending) f.pending->node = f.node;
        return attach(L, f.node, f.node->line, f.node->col);
    }
    }
    return FR_OK;
}

/* Parse text into a node tree; errors located in `file`. One document only: a second one (after
 * `---`) is an error, not silently dropped. */
static int parse_text(const char *text, size_t len, const char *file, fr_cfg_node **out, fr_diag *d)
{
    loader *L = calloc(1, sizeof *L);
    *out = NULL;
    if (!L) return FR_ERR_NOMEM;
    L->file = file;
    L->d = d;
    if (!yaml_parser_initialize(&L->parser)) {
        free(L);
        return FR_ERR_NOMEM;
    }
    yaml_parser_set_input_string(&L->parser, (const unsigned char *)text, len);
    int err = FR_OK, done = 0;
    while (!err && !done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&L->parser, &e)) {
            yaml_parser_t *p = &L->parser;
            err = p->error == YAML_MEMORY_ERROR
                      ? fr_diag_set(d, FR_ERR_NOMEM, file, 0, 0, "", "out of memory parsing YAML")
                      : fr_diag_set(d, FR_ERR_PARSE, file, (int)p->problem_mark.line + 1,
                                    (int)p->problem_mark.column + 1, "", "YAML syntax: %s%s%s",
                                    p->problem ? p->problem : "unknown problem",
                                    p->context ? " " : "", p->context ? p->context : "");
            break;
        }
        err = on_event(L, &e, &done);
        yaml_event_delete(&e);
    }
    /* after the first document: only the end of the stream may follow */
    while (!err && L->parser.stream_end_produced == 0) {
        yaml_event_t e;
        if (!yaml_parser_parse(&L->parser, &e)) {
            yaml_parser_t *p = &L->parser;
            err = fr_diag_set(d, FR_ERR_PARSE, file, (int)p->problem_mark.line + 1,
                              (int)p->problem_mark.column + 1, "", "YAML syntax: %s%s%s",
                              p->problem ? p->problem : "unknown problem", p->context ? " " : "",
                              p->context ? p->context : "");
            break;
        }
        if (e.type == YAML_DOCUMENT_START_EVENT)
            err = fr_diag_set(d, FR_ERR_PARSE, file, (int)e.start_mark.line + 1,
                              (int)e.start_mark.column + 1, "",
                              "a second YAML document ('---'): give one document only");
        bool end = e.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&e);
        if (end) break;
    }
    while (L->depth > 0) {
        frame *f = &L->stack[--L->depth];
        free(f->key);
        node_free(f->node);
    }
    for (int i = 0; i < L->nanchors; i++) free(L->anchors[i].name);
    free(L->anchors);
    yaml_parser_delete(&L->parser);
    if (err)
        node_free(L->root);
    else
        *out = L->root;
    free(L);
    if (err == FR_ERR_NOMEM)
        fr_diag_set(d, err, file, 0, 0, "", "out of memory building the YAML tree");
    return err;
}

static int doc_from_text(const char *text, size_t len, const char *name, fr_cfg_doc **out,
                         fr_diag *d)
{
    fr_cfg_doc *doc = calloc(1, sizeof *doc);
    if (!doc) return FR_ERR_NOMEM;
    doc->file = strdup(name);
    doc->set_origin = strdup("--set");
    if (!doc->file || !doc->set_origin) {
        fr_cfg_free(doc);
        return FR_ERR_NOMEM;
    }
    int err = parse_text(text, len, doc->file, &doc->root, d);
    if (err) {
        fr_cfg_free(doc);
        return err;
    }
    if (!doc->root || doc->root->kind == FR_CFG_NULL) {
        node_free(doc->root);
        doc->root = node_new(FR_CFG_MAP, doc->file, 1, 1);
        if (!doc->root) {
            fr_cfg_free(doc);
            return FR_ERR_NOMEM;
        }
    }
    if (doc->root->kind != FR_CFG_MAP) {
        err = fr_diag_set(d, FR_ERR_PARSE, doc->file, doc->root->line, doc->root->col, "",
                          "the document must be a mapping of sections");
        fr_cfg_free(doc);
        return err;
    }
    assign_paths(doc->root, "");
    *out = doc;
    return FR_OK;
}

int fr_cfg_load_string(const char *text, const char *name, fr_cfg_doc **out, fr_diag *d)
{
    return doc_from_text(text, strlen(text), name ? name : "<string>", out, d);
}

int fr_cfg_load_file(const char *path, fr_cfg_doc **out, fr_diag *d)
{
    char *buf, msg[256];
    size_t len;
    int err = fri_read_input(path, FRI_MAX_YAML_BYTES, &buf, &len, msg, sizeof msg);
    if (err) return fr_diag_set(d, err, path, 0, 0, "", "%s", msg);
    if (memchr(buf, '\0', len)) {
        free(buf);
        return fr_diag_set(d, FR_ERR_PARSE, path, 0, 0, "", "binary file (NUL byte)");
    }
    err = doc_from_text(buf, len, path, out, d);
    free(buf);
    if (err == FR_ERR_NOMEM && d && !d->msg[0])
        fr_diag_set(d, err, path, 0, 0, "", "out of memory loading the file");
    return err;
}

void fr_cfg_free(fr_cfg_doc *doc)
{
    if (!doc) return;
    node_free(doc->root);
    free(doc->file);
    free(doc->set_origin);
    free(doc);
}

fr_cfg_node *fr_cfg_root(fr_cfg_doc *doc)
{
    return doc->root;
}
const char *fr_cfg_doc_file(const fr_cfg_doc *doc)
{
    return doc->file;
}

/* ------------------------------------------------------------------ overrides */

/* Values given on the command line have no file position. */
static void clear_positions(fr_cfg_node *n)
{
    n->line = n->col = n->key_line = n->key_col = 0;
    for (int i = 0; i < n->n; i++) clear_positions(n->items[i]);
}

static bool parse_index(const char *s, long *out)
{
    if (!*s) return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < 0) return false;
    *out = v;
    return true;
}

int fr_cfg_set(fr_cfg_doc *doc, const char *assignment, fr_diag *d)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return fr_diag_set(d, FR_ERR_INVAL, "--set", 0, 0, "", "expected PATH=VALUE, got '%s'",
                           assignment);
    char path[1024];
    size_t plen = (size_t)(eq - assignment);
    if (plen >= sizeof path)
        return fr_diag_set(d, FR_ERR_INVAL, "--set", 0, 0, "", "path too long");
    memcpy(path, assignment, plen);
    path[plen] = 0;
    if (path[0] == '.' || path[plen - 1] == '.' || strstr(path, ".."))
        return fr_diag_set(d, FR_ERR_INVAL, "--set", 0, 0, "",
                           "empty element in the path '%s' (PATH is KEY.KEY..., each non-empty)",
                           path);
    const char *value = eq + 1;

    fr_cfg_node *val = NULL;
    int err = parse_text(value, strlen(value), doc->set_origin, &val, d);
    if (err) {
        snprintf(d->field, sizeof d->field, "%.250s", path);
        d->line = d->col = 0;
        return err;
    }
    if (!val) {
        val = node_new(FR_CFG_NULL, doc->set_origin, 0, 0);
        if (!val) return FR_ERR_NOMEM;
    }
    clear_positions(val);

    fr_cfg_node *cur = doc->root;
    char *save = NULL;
    char *tok = strtok_r(path, ".", &save);
    char walked[1024] = "";
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        size_t wl = strlen(walked);
        snprintf(walked + wl, sizeof walked - wl, "%s%s", wl ? "." : "", tok);
        int idx = -1;
        if (cur->kind == FR_CFG_MAP) {
            for (int i = 0; i < cur->n; i++)
                if (strcmp(cur->keys[i], tok) == 0) idx = i;
            if (idx < 0) {
                fr_cfg_node *c = node_new(next ? FR_CFG_MAP : FR_CFG_NULL, doc->set_origin, 0, 0);
                char *k = strdup(tok);
                if (!c || !k || node_push(cur, k, c)) {
                    free(k);
                    node_free(c);
                    node_free(val);
                    return FR_ERR_NOMEM;
                }
                idx = cur->n - 1;
            }
        } else if (cur->kind == FR_CFG_SEQ) {
            long li;
            if (parse_index(tok, &li)) {
                if (li < cur->n) idx = (int)li;
            } else {
                for (int i = 0; i < cur->n; i++) {
                    const char *nm = item_name(cur->items[i]);
                    if (nm && strcmp(nm, tok) == 0) idx = i;
                }
            }
            if (idx < 0) {
                node_free(val);
                return fr_diag_set(d, FR_ERR_NOTFOUND, "--set", 0, 0, walked,
                                   "no element '%s' in the list (use an index 0..%d or a name)",
                                   tok, cur->n - 1);
            }
        } else {
            node_free(val);
            return fr_diag_set(d, FR_ERR_INVAL, "--set", 0, 0, walked,
                               "cannot descend into a scalar value");
        }
        if (!next) {
            fr_cfg_node *old = cur->items[idx];
            val->key_line = old->key_line;
            val->key_col = old->key_col;
            val->parent = cur;
            cur->items[idx] = val;
            node_free(old);
            break;
        }
        if (cur->items[idx]->kind == FR_CFG_NULL) cur->items[idx]->kind = FR_CFG_MAP;
        cur = cur->items[idx];
        tok = next;
    }
    assign_paths(doc->root, "");
    return FR_OK;
}

/* ------------------------------------------------------------------ inspection */

fr_cfg_kind fr_cfg_node_kind(const fr_cfg_node *n)
{
    return n ? n->kind : FR_CFG_NULL;
}
const char *fr_cfg_node_scalar(const fr_cfg_node *n)
{
    return n && n->kind == FR_CFG_SCALAR ? n->scalar : NULL;
}
int fr_cfg_node_len(const fr_cfg_node *n)
{
    return n && (n->kind == FR_CFG_MAP || n->kind == FR_CFG_SEQ) ? n->n : 0;
}
fr_cfg_node *fr_cfg_node_item(const fr_cfg_node *n, int i)
{
    return n && i >= 0 && i < n->n ? n->items[i] : NULL;
}
bool fr_cfg_node_quoted(const fr_cfg_node *n)
{
    return n && n->kind == FR_CFG_SCALAR && n->quoted;
}

const char *fr_cfg_node_key(const fr_cfg_node *n, int i)
{
    return n && n->kind == FR_CFG_MAP && i >= 0 && i < n->n ? n->keys[i] : NULL;
}
const char *fr_cfg_node_path(const fr_cfg_node *n)
{
    return n && n->path ? n->path : "";
}
int fr_cfg_node_line(const fr_cfg_node *n)
{
    return n ? n->line : 0;
}
int fr_cfg_node_col(const fr_cfg_node *n)
{
    return n ? n->col : 0;
}
bool fr_cfg_node_from_set(const fr_cfg_node *n)
{
    return n && n->file && strcmp(n->file, "--set") == 0;
}

int fr_cfg_error(const fr_cfg_node *n, fr_diag *d, int err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fr_diag_set(d, err, n ? n->file : "", n ? n->line : 0, n ? n->col : 0,
                       fr_cfg_node_path(n), "%s", msg);
}

fr_cfg_node *fr_cfg_get(const fr_cfg_node *map, const char *key)
{
    if (!map || map->kind != FR_CFG_MAP) return NULL;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) {
            map->items[i]->used = true;
            return map->items[i];
        }
    return NULL;
}

int fr_cfg_check_unknown(const fr_cfg_node *map, const char *const *expected, fr_diag *d)
{
    if (!map || map->kind != FR_CFG_MAP) return FR_OK;
    for (int i = 0; i < map->n; i++) {
        if (map->items[i]->used) continue;
        char list[400] = "";
        size_t len = 0;
        for (int k = 0; expected && expected[k] && len + 2 < sizeof list; k++)
            len +=
                (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", expected[k]);
        const fr_cfg_node *c = map->items[i];
        /* a known key the reader had no use for (it applies with other settings of the same
         * section): "unknown key 'probe' (expected one of: type, probe, on)" confused a user */
        for (int k = 0; expected && expected[k]; k++)
            if (!strcmp(expected[k], map->keys[i]))
                return fr_diag_set(d, FR_ERR_PARSE, c->file, c->key_line, c->key_col, c->path,
                                   "key '%s' has no effect with the section's other settings "
                                   "(remove it)",
                                   map->keys[i]);
        return fr_diag_set(d, FR_ERR_PARSE, c->file, c->key_line, c->key_col, c->path,
                           "unknown key '%s'%s%s%s", map->keys[i],
                           list[0] ? " (expected one of: " : "", list, list[0] ? ")" : "");
    }
    return FR_OK;
}

/* ------------------------------------------------------------------ typed getters */

static int want_scalar(const fr_cfg_node *n, const char *what, fr_diag *d)
{
    if (n->kind != FR_CFG_SCALAR)
        return fr_cfg_error(n, d, FR_ERR_PARSE, "expected %s, got a %s", what,
                            n->kind == FR_CFG_MAP   ? "mapping"
                            : n->kind == FR_CFG_SEQ ? "list"
                                                    : "null");
    return FR_OK;
}

int fr_cfg_node_double(const fr_cfg_node *n, double *out, fr_diag *d)
{
    int err = want_scalar(n, "a number", d);
    if (err) return err;
    const char *s = n->scalar;
    if (n->quoted)
        return fr_cfg_error(n, d, FR_ERR_PARSE, "expected a number, got the string \"%s\"", s);
    double v;
    if (strcmp(s, ".inf") == 0 || strcmp(s, ".Inf") == 0 || strcmp(s, "+.inf") == 0)
        v = INFINITY;
    else if (strcmp(s, "-.inf") == 0 || strcmp(s, "-.Inf") == 0)
        v = -INFINITY;
    else if (strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0)
        v = NAN;
    else {
        char *end;
        errno = 0;
        v = strtod(s, &end);
        if (end == s || *end)
            return fr_cfg_error(n, d, FR_ERR_PARSE, "expected a number, got '%s'", s);
    }
    if (!isfinite(v))
        return fr_cfg_error(n, d, FR_ERR_RANGE, "must be a finite number, got '%s'", s);
    *out = v;
    return FR_OK;
}

static int check_range(const fr_cfg_node *n, double v, int range, fr_diag *d)
{
    if (range == FR_CFG_POSITIVE && !(v > 0))
        return fr_cfg_error(n, d, FR_ERR_RANGE, "must be > 0, got %g", v);
    if (range == FR_CFG_NONNEGATIVE && !(v >= 0))
        return fr_cfg_error(n, d, FR_ERR_RANGE, "must be >= 0, got %g", v);
    return FR_OK;
}

int fr_cfg_double(const fr_cfg_node *map, const char *key, double def, int range, double *out,
                  fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    if (!n) {
        *out = def;
        return FR_OK;
    }
    double v;
    int err = fr_cfg_node_double(n, &v, d);
    if (!err) err = check_range(n, v, range, d);
    if (!err) *out = v;
    return err;
}

int fr_cfg_double_in(const fr_cfg_node *map, const char *key, double def, double lo, double hi,
                     double *out, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    if (!n) {
        *out = def;
        return FR_OK;
    }
    double v;
    int err = fr_cfg_node_double(n, &v, d);
    if (err) return err;
    if (v < lo || v > hi)
        return fr_cfg_error(n, d, FR_ERR_RANGE, "must be in [%g, %g], got %g", lo, hi, v);
    *out = v;
    return FR_OK;
}

int fr_cfg_int(const fr_cfg_node *map, const char *key, long def, long lo, long hi, long *out,
               fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    if (!n) {
        *out = def;
        return FR_OK;
    }
    int err = want_scalar(n, "an integer", d);
    if (err) return err;
    char *end;
    errno = 0;
    long v = strtol(n->scalar, &end, 10);
    if (n->quoted || end == n->scalar || *end || errno)
        return fr_cfg_error(n, d, FR_ERR_PARSE, "expected an integer, got '%s'", n->scalar);
    if (v < lo || v > hi)
        return fr_cfg_error(n, d, FR_ERR_RANGE, "must be in [%ld, %ld], got %ld", lo, hi, v);
    *out = v;
    return FR_OK;
}

static bool ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

int fr_cfg_bool(const fr_cfg_node *map, const char *key, bool def, bool *out, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    if (!n) {
        *out = def;
        return FR_OK;
    }
    int err = want_scalar(n, "true or false", d);
    if (err) return err;
    const char *s = n->scalar;
    if (!n->quoted && (ieq(s, "true") || ieq(s, "yes") || ieq(s, "on"))) {
        *out = true;
        return FR_OK;
    }
    if (!n->quoted && (ieq(s, "false") || ieq(s, "no") || ieq(s, "off"))) {
        *out = false;
        return FR_OK;
    }
    return fr_cfg_error(n, d, FR_ERR_PARSE, "expected true or false, got '%s'", s);
}

int fr_cfg_string(const fr_cfg_node *map, const char *key, const char *def, char *buf, size_t len,
                  fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    const char *s = def ? def : "";
    if (n) {
        int err = want_scalar(n, "a string", d);
        if (err) return err;
        s = n->scalar;
    }
    if (strlen(s) >= len)
        return fr_cfg_error(n, d, FR_ERR_RANGE, "longer than %zu characters", len - 1);
    memcpy(buf, s, strlen(s) + 1);
    return FR_OK;
}

int fr_cfg_enum(const fr_cfg_node *map, const char *key, const char *const *names, int def,
                int *out, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    if (!n) {
        *out = def;
        return FR_OK;
    }
    int err = want_scalar(n, "a name", d);
    if (err) return err;
    char list[400] = "";
    size_t len = 0;
    for (int k = 0; names[k]; k++) {
        if (strcmp(names[k], n->scalar) == 0) {
            *out = k;
            return FR_OK;
        }
        if (len + 2 < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", names[k]);
    }
    return fr_cfg_error(n, d, FR_ERR_PARSE, "unknown value '%s' (expected one of: %s)", n->scalar,
                        list);
}

int fr_cfg_doubles(const fr_cfg_node *map, const char *key, int count, const double *def, int range,
                   double *out, fr_diag *d)
{
    const fr_cfg_node *n = fr_cfg_get(map, key);
    if (!n) {
        for (int i = 0; i < count; i++) out[i] = def ? def[i] : 0.0;
        return FR_OK;
    }
    if (n->kind != FR_CFG_SEQ || n->n != count)
        return fr_cfg_error(n, d, FR_ERR_PARSE, "expected a list of %d numbers", count);
    double tmp[64];
    if (count > 64) return FR_ERR_INVAL;
    for (int i = 0; i < count; i++) {
        int err = fr_cfg_node_double(n->items[i], &tmp[i], d);
        if (!err) err = check_range(n->items[i], tmp[i], range, d);
        if (err) return err;
    }
    memcpy(out, tmp, sizeof(double) * (size_t)count);
    return FR_OK;
}

int fr_cfg_vec3(const fr_cfg_node *map, const char *key, fr_vec3 def, fr_vec3 *out, fr_diag *d)
{
    double dv[3] = {def.x, def.y, def.z}, v[3];
    int err = fr_cfg_doubles(map, key, 3, dv, FR_CFG_ANY, v, d);
    if (!err) *out = fr_v3(v[0], v[1], v[2]);
    return err;
}
