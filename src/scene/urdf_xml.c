/* URDF parsing helpers: where an element or attribute is in the text, diagnostics that name it
 * (errors, warnings, notes, unknown elements listed once), and attribute readers that report a
 * bad value and go on. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

bool fri_is_elem(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* ---------------------------------------------------------------- locations */

/* XPath-like name of an element: /robot/joint[@name='knee']/limit, with [k] for repeated
 * siblings. */
static void node_path(const xmlNode *n, char *buf, size_t size)
{
    const xmlNode *chain[32];
    int depth = 0;
    for (const xmlNode *p = n; p && p->type == XML_ELEMENT_NODE && depth < 32; p = p->parent)
        chain[depth++] = p;
    size_t used = 0;
    buf[0] = 0;
    for (int i = depth - 1; i >= 0 && used < size; i--) {
        const xmlNode *e = chain[i];
        xmlChar *nm = xmlGetProp(e, (const xmlChar *)"name");
        int idx = 0, count = 0;
        if (!nm && e->parent)
            for (const xmlNode *s = e->parent->children; s; s = s->next)
                if (s->type == XML_ELEMENT_NODE && !xmlStrcmp(s->name, e->name)) {
                    count++;
                    if (s == e) idx = count;
                }
        int k;
        if (nm && i < depth - 1)
            k = snprintf(buf + used, size - used, "/%s[@name='%s']", (const char *)e->name,
                         (const char *)nm);
        else if (count > 1)
            k = snprintf(buf + used, size - used, "/%s[%d]", (const char *)e->name, idx);
        else
            k = snprintf(buf + used, size - used, "/%s", (const char *)e->name);
        if (nm) xmlFree(nm);
        if (k < 0) break;
        used += (size_t)k;
    }
}

/* libxml2 only records the line where a start tag ends: find the tag (and the attribute) in the
 * text from there. */
void fri_urdf_locate(const fri_urdf_parser *p, const xmlNode *n, const char *attr, int *line,
                     int *col)
{
    long ln = xmlGetLineNo(n);
    *line = ln > 0 ? (int)ln : 0;
    *col = 0;
    if (!p->text || ln <= 0) return;
    size_t off = 0;
    for (long l = 1; l < ln && off < p->len; off++)
        if (p->text[off] == '\n') l++;
    size_t eol = off;
    while (eol < p->len && p->text[eol] != '\n') eol++;
    size_t nlen = strlen((const char *)n->name);
    size_t start = (size_t)-1;
    for (size_t i = eol; i-- > 0;) {
        if (p->text[i] != '<' || i + 1 + nlen > p->len) continue;
        if (strncmp(p->text + i + 1, (const char *)n->name, nlen)) continue;
        char c = i + 1 + nlen < p->len ? p->text[i + 1 + nlen] : '>';
        if (isspace((unsigned char)c) || c == '>' || c == '/') {
            start = i;
            break;
        }
    }
    if (start == (size_t)-1) return;
    size_t at = start;
    if (attr) {
        size_t alen = strlen(attr);
        char quote = 0;
        for (size_t i = start + 1 + nlen; i < p->len; i++) {
            char c = p->text[i];
            if (quote) {
                if (c == quote) quote = 0;
                continue;
            }
            if (c == '"' || c == '\'') {
                quote = c;
                continue;
            }
            if (c == '>') break;
            if (isspace((unsigned char)p->text[i - 1]) && i + alen <= p->len &&
                !strncmp(p->text + i, attr, alen)) {
                size_t k = i + alen;
                while (k < p->len && isspace((unsigned char)p->text[k])) k++;
                if (k < p->len && p->text[k] == '=') {
                    at = i;
                    break;
                }
            }
        }
    }
    int l = 1;
    size_t bol = 0;
    for (size_t i = 0; i < at; i++)
        if (p->text[i] == '\n') {
            l++;
            bol = i + 1;
        }
    *line = l;
    *col = (int)(at - bol) + 1;
}

/* ---------------------------------------------------------------- diagnostics */

static void fill(const fri_urdf_parser *p, fr_diag *d, const xmlNode *n, const char *attr,
                 int severity, const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->severity = severity;
    snprintf(d->file, sizeof d->file, "%s", p->file);
    if (n) {
        fri_urdf_locate(p, n, attr, &d->line, &d->col);
        char path[240];
        node_path(n, path, sizeof path);
        snprintf(d->field, sizeof d->field, "%.200s%s%.40s", path, attr ? "/@" : "",
                 attr ? attr : "");
    }
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
}

static void record(fri_urdf_parser *p, const fr_diag *d, int err)
{
    if (d->severity == FR_DIAG_ERROR) {
        if (!p->nerrors) {
            p->first_error = *d;
            p->first_err_code = err;
        }
        p->nerrors++;
    }
    fr_diag_list_add(&p->diags, d); /* out of memory: the count above still fails the load */
}

int fri_urdf_err(fri_urdf_parser *p, const xmlNode *n, const char *attr, int err, const char *fmt,
                 ...)
{
    fr_diag d;
    va_list ap;
    va_start(ap, fmt);
    fill(p, &d, n, attr, FR_DIAG_ERROR, fmt, ap);
    va_end(ap);
    record(p, &d, err);
    return err;
}

void fri_urdf_warn(fri_urdf_parser *p, const xmlNode *n, const char *attr, const char *fmt, ...)
{
    fr_diag d;
    va_list ap;
    va_start(ap, fmt);
    fill(p, &d, n, attr, p->o->strict ? FR_DIAG_ERROR : FR_DIAG_WARNING, fmt, ap);
    va_end(ap);
    if (p->o->strict) {
        size_t k = strlen(d.msg);
        snprintf(d.msg + k, sizeof d.msg - k, " [--strict]");
    }
    record(p, &d, FR_ERR_PARSE);
}

void fri_urdf_note(fri_urdf_parser *p, const xmlNode *n, const char *attr, const char *fmt, ...)
{
    fr_diag d;
    va_list ap;
    va_start(ap, fmt);
    fill(p, &d, n, attr, FR_DIAG_NOTE, fmt, ap);
    va_end(ap);
    record(p, &d, 0);
}

void fri_urdf_unknown(fri_urdf_parser *p, const xmlNode *n)
{
    for (int i = 0; i < p->nunknown; i++)
        if (!strcmp(p->unknown[i].name, (const char *)n->name)) {
            p->unknown[i].count++;
            return;
        }
    if (p->nunknown == p->cap_unknown) {
        int cap = p->cap_unknown ? 2 * p->cap_unknown : 8;
        fri_unknown *t = realloc(p->unknown, sizeof *t * (size_t)cap);
        if (!t) return;
        p->unknown = t;
        p->cap_unknown = cap;
    }
    fri_unknown *u = &p->unknown[p->nunknown];
    u->name = strdup((const char *)n->name);
    if (!u->name) return;
    fri_urdf_locate(p, n, NULL, &u->line, &u->col);
    char path[240];
    node_path(n, path, sizeof path);
    snprintf(u->field, sizeof u->field, "%s", path);
    u->count = 1;
    p->nunknown++;
}

void fri_urdf_flush_unknown(fri_urdf_parser *p)
{
    for (int i = 0; i < p->nunknown; i++) {
        fri_unknown *u = &p->unknown[i];
        fr_diag d;
        memset(&d, 0, sizeof d);
        d.severity = p->o->strict ? FR_DIAG_ERROR : FR_DIAG_WARNING;
        snprintf(d.file, sizeof d.file, "%s", p->file);
        d.line = u->line;
        d.col = u->col;
        snprintf(d.field, sizeof d.field, "%s", u->field);
        if (u->count > 1)
            snprintf(d.msg, sizeof d.msg, "unknown element <%s> ignored (%d times; the first here)",
                     u->name, u->count);
        else
            snprintf(d.msg, sizeof d.msg, "unknown element <%s> ignored", u->name);
        if (p->o->strict) {
            size_t k = strlen(d.msg);
            snprintf(d.msg + k, sizeof d.msg - k, " [--strict]");
        }
        record(p, &d, FR_ERR_PARSE);
        free(u->name);
    }
    free(p->unknown);
    p->unknown = NULL;
    p->nunknown = p->cap_unknown = 0;
}

/* ---------------------------------------------------------------- attributes */

xmlNode *fri_child_elem(const xmlNode *n, const char *name, int *count)
{
    xmlNode *first = NULL;
    int c = 0;
    for (xmlNode *k = n->children; k; k = k->next)
        if (fri_is_elem(k, name)) {
            if (!first) first = k;
            c++;
        }
    if (count) *count = c;
    return first;
}

int fri_single_child(fri_urdf_parser *p, const xmlNode *n, const char *name, xmlNode **out)
{
    int c;
    *out = fri_child_elem(n, name, &c);
    if (c > 1) {
        xmlNode *second = NULL;
        int seen = 0;
        for (xmlNode *k = n->children; k && !second; k = k->next)
            if (fri_is_elem(k, name) && ++seen == 2) second = k;
        return fri_urdf_err(p, second, NULL, FR_ERR_PARSE, "more than one <%s> in <%s>", name,
                            (const char *)n->name);
    }
    return FR_OK;
}

char *fri_attr_str(const xmlNode *n, const char *attr)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (!v) return NULL;
    char *s = strdup((const char *)v);
    xmlFree(v);
    return s;
}

int fri_required_str(fri_urdf_parser *p, const xmlNode *n, const char *attr, char **out)
{
    *out = fri_attr_str(n, attr);
    if (!*out)
        return fri_urdf_err(p, n, attr, FR_ERR_PARSE, "missing required attribute '%s' of <%s>",
                            attr, (const char *)n->name);
    if (!(*out)[0]) {
        free(*out);
        *out = NULL;
        return fri_urdf_err(p, n, attr, FR_ERR_PARSE, "attribute '%s' of <%s> must not be empty",
                            attr, (const char *)n->name);
    }
    return FR_OK;
}

/* Exactly `want` whitespace-separated finite numbers. */
static int parse_numbers(fri_urdf_parser *p, const xmlNode *n, const char *attr, const char *s,
                         double *v, int want)
{
    const char *c = s;
    int got = 0;
    for (;;) {
        while (isspace((unsigned char)*c)) c++;
        if (!*c) break;
        char *end;
        errno = 0;
        double x = strtod(c, &end);
        if (end == c || (*end && !isspace((unsigned char)*end))) {
            const char *tok_end = c;
            while (*tok_end && !isspace((unsigned char)*tok_end)) tok_end++;
            return fri_urdf_err(p, n, attr, FR_ERR_PARSE, "'%.*s' is not a number (in %s=\"%s\")",
                                (int)(tok_end - c), c, attr ? attr : "the text", s);
        }
        if (!isfinite(x))
            return fri_urdf_err(p, n, attr, FR_ERR_RANGE, "%s must be finite, got '%.*s'",
                                attr ? attr : "the number", (int)(end - c), c);
        if (got < want) v[got] = x;
        got++;
        c = end;
    }
    if (got != want)
        return fri_urdf_err(p, n, attr, FR_ERR_PARSE, "%s needs %d number%s, got %d (\"%s\")",
                            attr ? attr : "the text", want, want > 1 ? "s" : "", got, s);
    return FR_OK;
}

int fri_attr_double(fri_urdf_parser *p, const xmlNode *n, const char *attr, bool required,
                    double def, int range, double *out)
{
    char *s = fri_attr_str(n, attr);
    *out = def;
    if (!s) {
        if (!required) return FR_OK;
        return fri_urdf_err(p, n, attr, FR_ERR_PARSE, "missing required attribute '%s' of <%s>",
                            attr, (const char *)n->name);
    }
    double v;
    int err = parse_numbers(p, n, attr, s, &v, 1);
    free(s);
    if (err) return err;
    if (range == FRI_POSITIVE && !(v > 0))
        return fri_urdf_err(p, n, attr, FR_ERR_RANGE, "%s must be > 0, got %g", attr, v);
    if (range == FRI_NONNEG && !(v >= 0))
        return fri_urdf_err(p, n, attr, FR_ERR_RANGE, "%s must be >= 0, got %g", attr, v);
    *out = v;
    return FR_OK;
}

int fri_attr_vec3(fri_urdf_parser *p, const xmlNode *n, const char *attr, bool required,
                  fr_vec3 def, fr_vec3 *out)
{
    char *s = fri_attr_str(n, attr);
    *out = def;
    if (!s) {
        if (!required) return FR_OK;
        return fri_urdf_err(p, n, attr, FR_ERR_PARSE, "missing required attribute '%s' of <%s>",
                            attr, (const char *)n->name);
    }
    double v[3];
    int err = parse_numbers(p, n, attr, s, v, 3);
    free(s);
    if (err) return err;
    *out = fr_v3(v[0], v[1], v[2]);
    return FR_OK;
}

int fri_parse_origin(fri_urdf_parser *p, const xmlNode *n, fr_pose *out)
{
    xmlNode *o;
    int err = fri_single_child(p, n, "origin", &o);
    *out = fr_pose_identity();
    if (!o) return err;
    fr_vec3 xyz, rpy;
    int e1 = fri_attr_vec3(p, o, "xyz", false, fr_v3_zero(), &xyz);
    int e2 = fri_attr_vec3(p, o, "rpy", false, fr_v3_zero(), &rpy);
    *out = (fr_pose){xyz, fr_q_from_rpy(rpy.x, rpy.y, rpy.z)};
    return err ? err : e1 ? e1 : e2;
}

int fri_text_double(fri_urdf_parser *p, const xmlNode *n, double *out)
{
    xmlChar *t = xmlNodeGetContent(n);
    if (!t) return fri_urdf_err(p, n, NULL, FR_ERR_PARSE, "<%s> needs a number", n->name);
    int err = parse_numbers(p, n, NULL, (const char *)t, out, 1);
    xmlFree(t);
    return err;
}
