/* URDF files → a validated robot description (links in tree order, joints, collision geometry)
 * and from it an articulated tree. Every error names file, line, column, element and attribute.
 * Start-up only. */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "fureru/urdf.h"

struct fr_urdf {
    char *name;
    int nlinks;
    fr_urdf_link *links;   /* tree order */
    fr_urdf_joint *joints; /* [nlinks]: joint into link i; valid when has_joint[i] */
    bool *has_joint;
};

/* Parse state: what is needed to locate an error. */
typedef struct parser {
    const char *file; /* as given (messages) */
    const char *dir;  /* for meshes */
    const char *text;
    size_t len;
    fr_diag *d;
} parser;

/* A link or joint while parsing, in document order. */
typedef struct raw_link {
    fr_urdf_link l;
    fr_urdf_collision *cols;
    xmlNode *node;
    int parent_joint; /* raw joint index, -1 */
    int tree_index;
} raw_link;

typedef struct raw_joint {
    fr_urdf_joint j;
    char *parent_name, *child_name;
    xmlNode *node, *parent_node, *child_node;
} raw_joint;

/* ---------------------------------------------------------------- locations */

static bool is_elem(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

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

/* Line and column of an element's start tag or of one of its attributes, found in the text: libxml2
 * only records the line where a start tag ends. */
static void locate(const parser *p, const xmlNode *n, const char *attr, int *line, int *col)
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

static int perr(const parser *p, const xmlNode *n, const char *attr, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int perr(const parser *p, const xmlNode *n, const char *attr, int err, const char *fmt, ...)
{
    fr_diag *d = p->d;
    memset(d, 0, sizeof *d);
    snprintf(d->file, sizeof d->file, "%s", p->file);
    if (n) {
        locate(p, n, attr, &d->line, &d->col);
        char path[200];
        node_path(n, path, sizeof path);
        snprintf(d->field, sizeof d->field, "%s%s%s", path, attr ? "/@" : "", attr ? attr : "");
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return err;
}

/* ---------------------------------------------------------------- attributes */

static xmlNode *child_elem(const xmlNode *n, const char *name, int *count)
{
    xmlNode *first = NULL;
    int c = 0;
    for (xmlNode *k = n->children; k; k = k->next)
        if (is_elem(k, name)) {
            if (!first) first = k;
            c++;
        }
    if (count) *count = c;
    return first;
}

/* At most one child of that name. */
static int single_child(const parser *p, const xmlNode *n, const char *name, xmlNode **out)
{
    int c;
    *out = child_elem(n, name, &c);
    if (c > 1) {
        xmlNode *second = NULL;
        int seen = 0;
        for (xmlNode *k = n->children; k && !second; k = k->next)
            if (is_elem(k, name) && ++seen == 2) second = k;
        return perr(p, second, NULL, FR_ERR_PARSE, "more than one <%s> in <%s>", name,
                    (const char *)n->name);
    }
    return FR_OK;
}

/* The attribute's value (malloc'd) or NULL when absent. */
static char *attr_str(const xmlNode *n, const char *attr)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (!v) return NULL;
    char *s = strdup((const char *)v);
    xmlFree(v);
    return s;
}

static int required_str(const parser *p, const xmlNode *n, const char *attr, char **out)
{
    *out = attr_str(n, attr);
    if (!*out)
        return perr(p, n, attr, FR_ERR_PARSE, "missing required attribute '%s' of <%s>", attr,
                    (const char *)n->name);
    if (!(*out)[0]) {
        free(*out);
        *out = NULL;
        return perr(p, n, attr, FR_ERR_PARSE, "attribute '%s' of <%s> must not be empty", attr,
                    (const char *)n->name);
    }
    return FR_OK;
}

/* Parse up to `max` whitespace-separated finite numbers. */
static int parse_numbers(const parser *p, const xmlNode *n, const char *attr, const char *s,
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
            return perr(p, n, attr, FR_ERR_PARSE, "'%.*s' is not a number (in %s=\"%s\")",
                        (int)(tok_end - c), c, attr, s);
        }
        if (!isfinite(x))
            return perr(p, n, attr, FR_ERR_RANGE, "%s must be finite, got '%.*s'", attr,
                        (int)(end - c), c);
        if (got < want) v[got] = x;
        got++;
        c = end;
    }
    if (got != want)
        return perr(p, n, attr, FR_ERR_PARSE, "%s needs %d number%s, got %d (\"%s\")", attr, want,
                    want > 1 ? "s" : "", got, s);
    return FR_OK;
}

enum { ANY = 0, POSITIVE = 1, NONNEG = 2 };

static int attr_double(const parser *p, const xmlNode *n, const char *attr, bool required,
                       double def, int range, double *out)
{
    char *s = attr_str(n, attr);
    *out = def;
    if (!s) {
        if (!required) return FR_OK;
        return perr(p, n, attr, FR_ERR_PARSE, "missing required attribute '%s' of <%s>", attr,
                    (const char *)n->name);
    }
    int err = parse_numbers(p, n, attr, s, out, 1);
    free(s);
    if (err) return err;
    if (range == POSITIVE && !(*out > 0))
        return perr(p, n, attr, FR_ERR_RANGE, "%s must be > 0, got %g", attr, *out);
    if (range == NONNEG && !(*out >= 0))
        return perr(p, n, attr, FR_ERR_RANGE, "%s must be >= 0, got %g", attr, *out);
    return FR_OK;
}

static int attr_vec3(const parser *p, const xmlNode *n, const char *attr, bool required,
                     fr_vec3 def, fr_vec3 *out)
{
    char *s = attr_str(n, attr);
    *out = def;
    if (!s) {
        if (!required) return FR_OK;
        return perr(p, n, attr, FR_ERR_PARSE, "missing required attribute '%s' of <%s>", attr,
                    (const char *)n->name);
    }
    double v[3];
    int err = parse_numbers(p, n, attr, s, v, 3);
    free(s);
    if (err) return err;
    *out = fr_v3(v[0], v[1], v[2]);
    return FR_OK;
}

/* <origin xyz rpy> child of n (identity when absent). */
static int parse_origin(const parser *p, const xmlNode *n, fr_pose *out)
{
    xmlNode *o;
    int err = single_child(p, n, "origin", &o);
    *out = fr_pose_identity();
    if (err || !o) return err;
    fr_vec3 xyz, rpy;
    if ((err = attr_vec3(p, o, "xyz", false, fr_v3_zero(), &xyz))) return err;
    if ((err = attr_vec3(p, o, "rpy", false, fr_v3_zero(), &rpy))) return err;
    *out = (fr_pose){xyz, fr_q_from_rpy(rpy.x, rpy.y, rpy.z)};
    return FR_OK;
}

/* ---------------------------------------------------------------- meshes */

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Resolve a mesh filename: package://PKG/REST, file://ABS, absolute, or relative to dir. */
static int resolve_mesh(const char *dir, const char *fn, char *out, size_t n)
{
    if (!strncmp(fn, "file://", 7)) {
        snprintf(out, n, "%s", fn + 7);
        return file_exists(out) ? FR_OK : FR_ERR_NOTFOUND;
    }
    if (!strncmp(fn, "package://", 10)) {
        const char *pkg = fn + 10;
        const char *slash = strchr(pkg, '/');
        if (!slash) return FR_ERR_NOTFOUND;
        size_t plen = (size_t)(slash - pkg);
        char cur[4096];
        snprintf(cur, sizeof cur, "%s", dir && dir[0] ? dir : ".");
        char *abs = realpath(cur, NULL);
        if (abs) {
            snprintf(cur, sizeof cur, "%s", abs);
            free(abs);
        }
        for (;;) {
            const char *base = strrchr(cur, '/');
            base = base ? base + 1 : cur;
            if (strlen(base) == plen && !strncmp(base, pkg, plen)) {
                int k = snprintf(out, n, "%s%s", cur, slash);
                if (k > 0 && (size_t)k < n && file_exists(out)) return FR_OK;
            }
            int k = snprintf(out, n, "%s/%.*s%s", cur, (int)plen, pkg, slash);
            if (k > 0 && (size_t)k < n && file_exists(out)) return FR_OK;
            char *up = strrchr(cur, '/');
            if (!up || up == cur) break;
            *up = 0;
        }
        return FR_ERR_NOTFOUND;
    }
    if (fn[0] == '/' || !dir || !dir[0])
        snprintf(out, n, "%s", fn);
    else
        snprintf(out, n, "%s/%s", dir, fn);
    return file_exists(out) ? FR_OK : FR_ERR_NOTFOUND;
}

static int push_point(fr_vec3 **pts, int *np, int *cap, fr_vec3 v)
{
    if (*np == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        fr_vec3 *q = realloc(*pts, sizeof *q * (size_t)nc);
        if (!q) return FR_ERR_NOMEM;
        *pts = q;
        *cap = nc;
    }
    (*pts)[(*np)++] = v;
    return FR_OK;
}

static bool ends_with_ci(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

static double rd_f32(const unsigned char *b)
{
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

int fr_mesh_load_points(const char *path, fr_vec3 scale, fr_vec3 **pts_out, int *np_out, char *msg,
                        size_t msz)
{
    *pts_out = NULL;
    *np_out = 0;
    bool stl = ends_with_ci(path, ".stl"), obj = ends_with_ci(path, ".obj");
    if (!stl && !obj) {
        snprintf(msg, msz,
                 "mesh '%s': unsupported format (supported: .stl ASCII or binary, .obj; convert "
                 "Collada/other meshes to STL)",
                 path);
        return FR_ERR_UNSUPPORTED;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, msz, "cannot open mesh '%s': %s", path, strerror(errno));
        return errno == ENOENT ? FR_ERR_NOTFOUND : FR_ERR_IO;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 0 || size > (1L << 30)) {
        fclose(f);
        snprintf(msg, msz, "mesh '%s': cannot read (size)", path);
        return FR_ERR_IO;
    }
    unsigned char *buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        return FR_ERR_NOMEM;
    }
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    if (got != (size_t)size) {
        free(buf);
        snprintf(msg, msz, "mesh '%s': short read", path);
        return FR_ERR_IO;
    }
    buf[size] = 0;
    fr_vec3 *pts = NULL;
    int np = 0, cap = 0, err = FR_OK;
    uint32_t ntri = size >= 84 ? (uint32_t)buf[80] | (uint32_t)buf[81] << 8 |
                                     (uint32_t)buf[82] << 16 | (uint32_t)buf[83] << 24
                               : 0;
    if (stl && size >= 84 && (uint64_t)size == 84 + 50 * (uint64_t)ntri) {
        /* binary: 80-byte header, count, then per triangle normal, 3 vertices, attribute */
        for (uint32_t t = 0; t < ntri && !err; t++) {
            const unsigned char *b = buf + 84 + 50 * (size_t)t + 12;
            for (int k = 0; k < 3 && !err; k++) {
                fr_vec3 v =
                    fr_v3(rd_f32(b + 12 * k), rd_f32(b + 12 * k + 4), rd_f32(b + 12 * k + 8));
                if (!fr_v3_isfinite(v)) {
                    snprintf(msg, msz, "mesh '%s': triangle %u has a non-finite vertex", path,
                             (unsigned)t);
                    err = FR_ERR_PARSE;
                } else
                    err = push_point(&pts, &np, &cap, fr_v3_mul(v, scale));
            }
        }
    } else {
        /* ASCII STL ("vertex x y z") or OBJ ("v x y z"), line by line */
        const char *kw = stl ? "vertex" : "v";
        size_t kwl = strlen(kw);
        const char *c = (const char *)buf;
        if (stl) {
            while (isspace((unsigned char)*c)) c++;
            if (strncmp(c, "solid", 5)) {
                snprintf(msg, msz,
                         "mesh '%s': neither binary STL (size %ld != 84 + 50 × %u triangles) nor "
                         "ASCII STL (no 'solid')",
                         path, size, (unsigned)ntri);
                err = FR_ERR_PARSE;
            }
            c = (const char *)buf;
        }
        int line = 1;
        while (*c && !err) {
            const char *eol = strchr(c, '\n');
            if (!eol) eol = c + strlen(c);
            const char *s = c;
            while (s < eol && isspace((unsigned char)*s)) s++;
            if ((size_t)(eol - s) > kwl && !strncmp(s, kw, kwl) && isspace((unsigned char)s[kwl])) {
                double v[3];
                const char *q = s + kwl;
                for (int k = 0; k < 3 && !err; k++) {
                    char *end;
                    v[k] = strtod(q, &end);
                    if (end == q || end > eol || !isfinite(v[k])) {
                        snprintf(msg, msz, "mesh '%s':%d: bad %s coordinate", path, line, kw);
                        err = FR_ERR_PARSE;
                    }
                    q = end;
                }
                if (!err)
                    err = push_point(&pts, &np, &cap, fr_v3_mul(fr_v3(v[0], v[1], v[2]), scale));
            }
            c = *eol ? eol + 1 : eol;
            line++;
        }
    }
    free(buf);
    if (!err && np < 4) {
        snprintf(msg, msz, "mesh '%s': %d vertices; a convex hull needs at least 4", path, np);
        err = FR_ERR_PARSE;
    }
    if (err) {
        free(pts);
        if (err == FR_ERR_NOMEM) snprintf(msg, msz, "out of memory reading '%s'", path);
        return err;
    }
    *pts_out = pts;
    *np_out = np;
    return FR_OK;
}

/* ---------------------------------------------------------------- links */

static int parse_geometry(const parser *p, const xmlNode *col, fr_urdf_collision *c)
{
    xmlNode *g;
    int err = single_child(p, col, "geometry", &g);
    if (err) return err;
    if (!g) return perr(p, col, NULL, FR_ERR_PARSE, "<collision> needs a <geometry>");
    xmlNode *shape = NULL;
    for (xmlNode *k = g->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (shape) return perr(p, k, NULL, FR_ERR_PARSE, "<geometry> must hold exactly one shape");
        shape = k;
    }
    if (!shape)
        return perr(p, g, NULL, FR_ERR_PARSE,
                    "<geometry> is empty (expected <box>, <sphere>, <cylinder> or <mesh>)");
    if (is_elem(shape, "box")) {
        c->type = FR_URDF_BOX;
        if ((err = attr_vec3(p, shape, "size", true, fr_v3_zero(), &c->size))) return err;
        if (!(c->size.x > 0 && c->size.y > 0 && c->size.z > 0))
            return perr(p, shape, "size", FR_ERR_RANGE, "box sizes must be > 0, got %g %g %g",
                        c->size.x, c->size.y, c->size.z);
    } else if (is_elem(shape, "sphere")) {
        c->type = FR_URDF_SPHERE;
        if ((err = attr_double(p, shape, "radius", true, 0, POSITIVE, &c->radius))) return err;
    } else if (is_elem(shape, "cylinder")) {
        c->type = FR_URDF_CYLINDER;
        if ((err = attr_double(p, shape, "radius", true, 0, POSITIVE, &c->radius))) return err;
        if ((err = attr_double(p, shape, "length", true, 0, POSITIVE, &c->length))) return err;
    } else if (is_elem(shape, "mesh")) {
        c->type = FR_URDF_MESH;
        char *fn;
        if ((err = required_str(p, shape, "filename", &fn))) return err;
        fr_vec3 scale;
        if ((err = attr_vec3(p, shape, "scale", false, fr_v3(1, 1, 1), &scale))) {
            free(fn);
            return err;
        }
        if (!(scale.x != 0 && scale.y != 0 && scale.z != 0)) {
            free(fn);
            return perr(p, shape, "scale", FR_ERR_RANGE, "scale factors must not be 0");
        }
        char path[4096];
        if (resolve_mesh(p->dir, fn, path, sizeof path)) {
            err = perr(p, shape, "filename", FR_ERR_NOTFOUND,
                       "mesh file '%s' not found (looked for '%s')", fn, path);
            free(fn);
            return err;
        }
        free(fn);
        char msg[600];
        fr_vec3 *pts;
        int np;
        if ((err = fr_mesh_load_points(path, scale, &pts, &np, msg, sizeof msg)))
            return perr(p, shape, "filename", err, "%s", msg);
        /* keep only the hull's vertices (and find a degenerate mesh now, with its line) */
        fr_shape *s;
        err = fr_shape_create_convex(pts, np, &s);
        if (err) {
            free(pts);
            return perr(p, shape, "filename", FR_ERR_RANGE,
                        "mesh '%s': cannot build a convex hull of its %d vertices (flat or "
                        "degenerate): %s",
                        path, np, fr_strerror(err));
        }
        fr_vec3 *hv = malloc(sizeof *hv * (size_t)s->poly.nverts);
        if (hv) memcpy(hv, s->poly.verts, sizeof *hv * (size_t)s->poly.nverts);
        c->npoints = s->poly.nverts;
        fr_shape_destroy(s);
        free(pts);
        c->points = hv;
        c->mesh_path = strdup(path);
        if (!hv || !c->mesh_path) return FR_ERR_NOMEM;
    } else {
        return perr(p, shape, NULL, FR_ERR_PARSE,
                    "unknown geometry <%s> (expected box, sphere, cylinder or mesh)",
                    (const char *)shape->name);
    }
    return FR_OK;
}

/* Principal moments of a symmetric tensor: non-negative and I1 + I2 >= I3. */
static int check_inertia(const parser *p, const xmlNode *n, fr_mat3 I, double mass)
{
    fr_vec3 e;
    fr_mat3 V;
    fr_m3_eigen_sym(I, &e, &V);
    double tol = 1e-9 * (fabs(e.x) + fabs(e.y) + fabs(e.z)) + 1e-300;
    if (e.x < -tol)
        return perr(p, n, NULL, FR_ERR_RANGE,
                    "inertia is not positive semi-definite (principal moments %g, %g, %g)", e.x,
                    e.y, e.z);
    if (e.x + e.y < e.z - tol)
        return perr(p, n, NULL, FR_ERR_RANGE,
                    "principal moments %g, %g, %g violate the triangle inequality (%g + %g < %g): "
                    "no real body has this inertia",
                    e.x, e.y, e.z, e.x, e.y, e.z);
    if (mass == 0 && e.z > 0)
        return perr(p, n, NULL, FR_ERR_RANGE, "a link with zero mass must have zero inertia");
    return FR_OK;
}

static int parse_link(const parser *p, xmlNode *n, raw_link *rl)
{
    memset(rl, 0, sizeof *rl);
    rl->node = n;
    rl->parent_joint = -1;
    rl->tree_index = -1;
    rl->l.line = (int)xmlGetLineNo(n);
    rl->l.inertia = fr_m3_zero();
    char *name;
    int err = required_str(p, n, "name", &name);
    if (err) return err;
    rl->l.name = name;
    xmlNode *in;
    if ((err = single_child(p, n, "inertial", &in))) return err;
    if (in) {
        fr_pose o;
        if ((err = parse_origin(p, in, &o))) return err;
        xmlNode *mn, *inn;
        if ((err = single_child(p, in, "mass", &mn))) return err;
        if (!mn) return perr(p, in, NULL, FR_ERR_PARSE, "<inertial> needs a <mass>");
        if ((err = attr_double(p, mn, "value", true, 0, ANY, &rl->l.mass))) return err;
        if (!(rl->l.mass >= 0))
            return perr(p, mn, "value", FR_ERR_RANGE, "mass must be >= 0 kg, got %g", rl->l.mass);
        if ((err = single_child(p, in, "inertia", &inn))) return err;
        if (!inn) return perr(p, in, NULL, FR_ERR_PARSE, "<inertial> needs an <inertia>");
        static const char *const keys[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
        double v[6];
        for (int k = 0; k < 6; k++)
            if ((err = attr_double(p, inn, keys[k], true, 0, ANY, &v[k]))) return err;
        fr_mat3 I = {{{v[0], v[1], v[2]}, {v[1], v[3], v[4]}, {v[2], v[4], v[5]}}};
        if ((err = check_inertia(p, inn, I, rl->l.mass))) return err;
        /* the tensor is given in the inertial frame: rotate it into link axes */
        rl->l.inertia = fr_m3_rotate(fr_q_to_m3(o.q), I);
        rl->l.com = o.p;
    }
    int nc;
    child_elem(n, "collision", &nc);
    if (nc > 0) {
        rl->cols = calloc((size_t)nc, sizeof *rl->cols);
        if (!rl->cols) return FR_ERR_NOMEM;
    }
    for (xmlNode *k = n->children; k; k = k->next) {
        if (!is_elem(k, "collision")) continue;
        fr_urdf_collision *c = &rl->cols[rl->l.ncollisions++];
        c->line = (int)xmlGetLineNo(k);
        if ((err = parse_origin(p, k, &c->origin))) return err;
        if ((err = parse_geometry(p, k, c))) return err;
    }
    rl->l.collisions = rl->cols;
    return FR_OK;
}

/* ---------------------------------------------------------------- joints */

static const char *const joint_types[] = {"fixed",     "revolute", "continuous",
                                          "prismatic", "floating", NULL};

static int parse_joint(const parser *p, xmlNode *n, raw_joint *rj)
{
    memset(rj, 0, sizeof *rj);
    rj->node = n;
    fr_urdf_joint *j = &rj->j;
    j->line = (int)xmlGetLineNo(n);
    j->effort = j->velocity = INFINITY;
    j->axis = fr_v3(1, 0, 0);
    char *name, *type;
    int err = required_str(p, n, "name", &name);
    if (err) return err;
    j->name = name;
    if ((err = required_str(p, n, "type", &type))) return err;
    int t = -1;
    for (int k = 0; joint_types[k]; k++)
        if (!strcmp(type, joint_types[k])) t = k;
    if (t < 0) {
        err = !strcmp(type, "planar")
                  ? perr(p, n, "type", FR_ERR_UNSUPPORTED,
                         "planar joints are not supported (use two prismatic and one revolute "
                         "joint)")
                  : perr(p, n, "type", FR_ERR_PARSE,
                         "unknown joint type '%s' (expected revolute, continuous, prismatic, "
                         "fixed or floating)",
                         type);
        free(type);
        return err;
    }
    free(type);
    j->type = (fr_urdf_joint_type)t;
    if ((err = parse_origin(p, n, &j->origin))) return err;
    xmlNode *pn, *cn, *an, *ln, *dn;
    if ((err = single_child(p, n, "parent", &pn))) return err;
    if (!pn) return perr(p, n, NULL, FR_ERR_PARSE, "joint '%s' needs a <parent link=...>", name);
    if ((err = required_str(p, pn, "link", &rj->parent_name))) return err;
    rj->parent_node = pn;
    if ((err = single_child(p, n, "child", &cn))) return err;
    if (!cn) return perr(p, n, NULL, FR_ERR_PARSE, "joint '%s' needs a <child link=...>", name);
    if ((err = required_str(p, cn, "link", &rj->child_name))) return err;
    rj->child_node = cn;
    if ((err = single_child(p, n, "axis", &an))) return err;
    if (an && j->type != FR_URDF_FIXED && j->type != FR_URDF_FLOATING) {
        if ((err = attr_vec3(p, an, "xyz", true, fr_v3(1, 0, 0), &j->axis))) return err;
        double len = fr_v3_norm(j->axis);
        if (!(len > 1e-9)) return perr(p, an, "xyz", FR_ERR_RANGE, "axis must not be zero");
        j->axis = fr_v3_scale(j->axis, 1.0 / len);
    }
    if ((err = single_child(p, n, "limit", &ln))) return err;
    bool ranged = j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_PRISMATIC;
    if (ranged && !ln)
        return perr(p, n, NULL, FR_ERR_PARSE,
                    "a %s joint needs a <limit> (lower, upper, effort, "
                    "velocity)",
                    joint_types[t]);
    if (ln && j->type != FR_URDF_FIXED && j->type != FR_URDF_FLOATING) {
        j->has_limit = true;
        if ((err = attr_double(p, ln, "effort", true, 0, NONNEG, &j->effort))) return err;
        if ((err = attr_double(p, ln, "velocity", true, 0, NONNEG, &j->velocity))) return err;
        if (ranged) {
            if ((err = attr_double(p, ln, "lower", false, 0, ANY, &j->lower))) return err;
            if ((err = attr_double(p, ln, "upper", false, 0, ANY, &j->upper))) return err;
            if (j->lower > j->upper)
                return perr(p, ln, "upper", FR_ERR_RANGE, "upper (%g) is below lower (%g)",
                            j->upper, j->lower);
        }
    }
    if ((err = single_child(p, n, "dynamics", &dn))) return err;
    if (dn) {
        if ((err = attr_double(p, dn, "damping", false, 0, NONNEG, &j->damping))) return err;
        if ((err = attr_double(p, dn, "friction", false, 0, NONNEG, &j->friction))) return err;
    }
    return FR_OK;
}

/* ---------------------------------------------------------------- the whole robot */

static void free_collision(fr_urdf_collision *c)
{
    free((void *)c->points);
    free((void *)c->mesh_path);
}

static void free_raw(raw_link *rl, int nl, raw_joint *rj, int nj)
{
    for (int i = 0; i < nl; i++) {
        free((char *)rl[i].l.name);
        for (int k = 0; k < rl[i].l.ncollisions; k++) free_collision(&rl[i].cols[k]);
        free(rl[i].cols);
    }
    for (int i = 0; i < nj; i++) {
        free((char *)rj[i].j.name);
        free(rj[i].parent_name);
        free(rj[i].child_name);
    }
    free(rl);
    free(rj);
}

static int find_raw_link(const raw_link *rl, int nl, const char *name)
{
    for (int i = 0; i < nl; i++)
        if (!strcmp(rl[i].l.name, name)) return i;
    return -1;
}

static int build_from_doc(const parser *p, xmlDoc *doc, fr_urdf **out)
{
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!is_elem(root, "robot"))
        return perr(p, root, NULL, FR_ERR_PARSE, "the root element must be <robot>, got <%s>",
                    root ? (const char *)root->name : "nothing");
    char *rname;
    int err = required_str(p, root, "name", &rname);
    if (err) return err;
    int nl = 0, nj = 0;
    for (xmlNode *k = root->children; k; k = k->next) {
        nl += is_elem(k, "link");
        nj += is_elem(k, "joint");
    }
    raw_link *rl = calloc((size_t)nl + 1, sizeof *rl);
    raw_joint *rj = calloc((size_t)nj + 1, sizeof *rj);
    fr_urdf *u = calloc(1, sizeof *u);
    int il = 0, ij = 0;
    if (!rl || !rj || !u) err = FR_ERR_NOMEM;
    for (xmlNode *k = root->children; k && !err; k = k->next) {
        if (is_elem(k, "link")) {
            err = parse_link(p, k, &rl[il++]);
            if (!err && find_raw_link(rl, il - 1, rl[il - 1].l.name) >= 0)
                err =
                    perr(p, k, "name", FR_ERR_PARSE, "duplicate link name '%s'", rl[il - 1].l.name);
        } else if (is_elem(k, "joint")) {
            err = parse_joint(p, k, &rj[ij++]);
            for (int q = 0; !err && q < ij - 1; q++)
                if (!strcmp(rj[q].j.name, rj[ij - 1].j.name))
                    err = perr(p, k, "name", FR_ERR_PARSE, "duplicate joint name '%s'",
                               rj[ij - 1].j.name);
        }
    }
    if (!err && nl == 0) err = perr(p, root, NULL, FR_ERR_PARSE, "the robot has no <link>");
    /* connect joints to links */
    for (int q = 0; q < nj && !err; q++) {
        raw_joint *J = &rj[q];
        int pi = find_raw_link(rl, nl, J->parent_name);
        int ci = find_raw_link(rl, nl, J->child_name);
        if (pi < 0)
            err = perr(p, J->parent_node, "link", FR_ERR_NOTFOUND,
                       "joint '%s': parent link '%s' is not defined", J->j.name, J->parent_name);
        else if (ci < 0)
            err = perr(p, J->child_node, "link", FR_ERR_NOTFOUND,
                       "joint '%s': child link '%s' is not defined", J->j.name, J->child_name);
        else if (pi == ci)
            err = perr(p, J->child_node, "link", FR_ERR_PARSE,
                       "joint '%s' connects link '%s' to itself", J->j.name, J->child_name);
        else if (rl[ci].parent_joint >= 0)
            err =
                perr(p, J->child_node, "link", FR_ERR_PARSE,
                     "link '%s' is already the child of joint '%s' (line %d): a link has one "
                     "parent joint (closed loops are not supported)",
                     J->child_name, rj[rl[ci].parent_joint].j.name, rj[rl[ci].parent_joint].j.line);
        else if (!strcmp(J->child_name, "world"))
            err = perr(p, J->child_node, "link", FR_ERR_PARSE,
                       "the 'world' link cannot be the child of a joint");
        if (!err) {
            rl[ci].parent_joint = q;
            J->j.parent = pi; /* raw indices for now */
            J->j.child = ci;
        }
    }
    /* the root: the one link without a parent joint ("world" stands for the world frame) */
    int rootl = -1;
    for (int i = 0; i < nl && !err; i++) {
        if (rl[i].parent_joint >= 0) continue;
        if (rootl >= 0)
            err = perr(p, rl[i].node, "name", FR_ERR_PARSE,
                       "link '%s' has no parent joint, but '%s' (line %d) is already the root: a "
                       "robot has one root link",
                       rl[i].l.name, rl[rootl].l.name, rl[rootl].l.line);
        else
            rootl = i;
    }
    if (!err && rootl < 0) {
        /* every link has a parent: the joints form a cycle; name one joint on it */
        int q = rl[0].parent_joint;
        for (int steps = 0; steps < nl; steps++) q = rl[rj[q].j.parent].parent_joint;
        err = perr(p, rj[q].node, NULL, FR_ERR_PARSE,
                   "no root link: joint '%s' closes a cycle (every link has a parent joint)",
                   rj[q].j.name);
    }
    bool world = !err && !strcmp(rl[rootl].l.name, "world");
    if (world && (rl[rootl].l.mass != 0 || rl[rootl].l.ncollisions))
        err = perr(p, rl[rootl].node, NULL, FR_ERR_PARSE,
                   "the root link 'world' stands for the world frame: it cannot have an "
                   "<inertial> or <collision>");
    /* tree order: depth first from the root, children in joint order */
    int *stack = err ? NULL : calloc((size_t)nl + 1, sizeof *stack);
    int norder = 0;
    int *order = err ? NULL : calloc((size_t)nl + 1, sizeof *order);
    if (!err && (!stack || !order)) err = FR_ERR_NOMEM;
    if (!err) {
        int sp = 0;
        stack[sp++] = rootl;
        while (sp > 0) {
            int l = stack[--sp];
            if (!(world && l == rootl)) {
                rl[l].tree_index = norder;
                order[norder++] = l;
            }
            /* push children in reverse joint order so the first joint's child comes first */
            for (int q = nj - 1; q >= 0; q--)
                if (rj[q].j.parent == l && rl[rj[q].j.child].parent_joint == q)
                    stack[sp++] = rj[q].j.child;
        }
        for (int i = 0; i < nl && !err; i++)
            if (i != rootl && rl[i].tree_index < 0) {
                int q = rl[i].parent_joint;
                err = perr(p, rj[q].node, NULL, FR_ERR_PARSE,
                           "link '%s' is not connected to the root '%s': joint '%s' is part of a "
                           "cycle",
                           rl[i].l.name, rl[rootl].l.name, rj[q].j.name);
            }
    }
    free(stack);
    if (!err && norder == 0)
        err = perr(p, root, NULL, FR_ERR_PARSE, "the robot has no link besides 'world'");
    if (!err) {
        u->name = rname;
        rname = NULL;
        u->nlinks = norder;
        u->links = calloc((size_t)norder, sizeof *u->links);
        u->joints = calloc((size_t)norder, sizeof *u->joints);
        u->has_joint = calloc((size_t)norder, sizeof *u->has_joint);
        if (!u->links || !u->joints || !u->has_joint) err = FR_ERR_NOMEM;
    }
    for (int i = 0; i < norder && !err; i++) {
        raw_link *L = &rl[order[i]];
        u->links[i] = L->l;
        L->l.name = NULL; /* moved */
        L->l.ncollisions = 0;
        L->cols = NULL;
        if (L->parent_joint >= 0) {
            raw_joint *J = &rj[L->parent_joint];
            u->joints[i] = J->j;
            u->joints[i].parent = rl[J->j.parent].tree_index; /* -1 for the world link */
            u->joints[i].child = i;
            u->has_joint[i] = true;
            J->j.name = NULL;
        }
    }
    /* a movable joint must carry some mass, or the joint equation is singular */
    for (int i = norder - 1; i >= 0 && !err; i--) {
        double m = 0;
        for (int k = i; k < norder; k++) {
            int a = k;
            while (a > i && u->has_joint[a]) a = u->joints[a].parent;
            if (a == i) m += u->links[k].mass + fr_m3_trace(u->links[k].inertia);
        }
        bool movable = !u->has_joint[i] || u->joints[i].type != FR_URDF_FIXED;
        if (movable && !(m > 0)) {
            raw_link *L = &rl[order[i]];
            err = L->parent_joint >= 0
                      ? perr(p, rj[L->parent_joint].node, NULL, FR_ERR_RANGE,
                             "joint '%s' moves only massless links: give link '%s' (or a link "
                             "below it) an <inertial>",
                             u->joints[i].name, u->links[i].name)
                      : perr(p, L->node, NULL, FR_ERR_RANGE,
                             "the root link '%s' and the links fixed to it have no mass: give it "
                             "an <inertial>",
                             u->links[i].name);
        }
    }
    free(order);
    free(rname);
    free_raw(rl, nl, rj, nj);
    if (err) {
        fr_urdf_destroy(u);
        return err;
    }
    *out = u;
    return FR_OK;
}

/* The first XML error (libxml2 reports several; the first is the cause). */
typedef struct xml_first_error {
    bool set;
    int line, col;
    char msg[300];
} xml_first_error;

static void xml_error_cb(void *user, xmlErrorPtr e)
{
    xml_first_error *f = user;
    if (f->set || !e || e->level < XML_ERR_ERROR) return;
    f->set = true;
    f->line = e->line;
    f->col = e->int2;
    snprintf(f->msg, sizeof f->msg, "%s", e->message ? e->message : "malformed XML");
    size_t n = strlen(f->msg);
    while (n > 0 && (f->msg[n - 1] == '\n' || f->msg[n - 1] == ' ')) f->msg[--n] = 0;
}

static int load(const char *text, size_t len, const char *name, const char *dir, fr_urdf **out,
                fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    memset(d, 0, sizeof *d);
    *out = NULL;
    parser p = {.file = name, .dir = dir, .text = text, .len = len, .d = d};
    xmlParserCtxtPtr ctx = xmlNewParserCtxt();
    if (!ctx) return FR_ERR_NOMEM;
    xml_first_error first = {0};
    /* libxml2's error hook is per thread; set it only around this parse */
    xmlSetStructuredErrorFunc(&first, xml_error_cb);
    xmlDoc *doc = xmlCtxtReadMemory(ctx, text, (int)len, name, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                        XML_PARSE_BIG_LINES);
    xmlSetStructuredErrorFunc(NULL, NULL);
    int err;
    if (!doc) {
        err = fr_diag_set(d, FR_ERR_PARSE, name, first.set ? first.line : 0,
                          first.set ? first.col : 0, "", "malformed XML: %s",
                          first.set ? first.msg : "cannot parse");
    } else {
        err = build_from_doc(&p, doc, out);
        xmlFreeDoc(doc);
    }
    xmlFreeParserCtxt(ctx);
    return err;
}

int fr_urdf_load_string(const char *xml, const char *name, const char *base_dir, fr_urdf **out,
                        fr_diag *d)
{
    if (!xml || !out) return FR_ERR_INVAL;
    return load(xml, strlen(xml), name ? name : "<string>", base_dir ? base_dir : ".", out, d);
}

int fr_urdf_load_file(const char *path, fr_urdf **out, fr_diag *d)
{
    fr_diag scratch;
    if (!d) d = &scratch;
    if (!path || !out) return FR_ERR_INVAL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fr_diag_set(d, errno == ENOENT ? FR_ERR_NOTFOUND : FR_ERR_IO, path, 0, 0, "",
                           "cannot open URDF file: %s", strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return FR_ERR_NOMEM;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    bool ioerr = ferror(f);
    fclose(f);
    if (ioerr) {
        free(text);
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot read URDF file");
    }
    text[len] = 0;
    char *dcopy = strdup(path);
    if (!dcopy) {
        free(text);
        return FR_ERR_NOMEM;
    }
    int err = load(text, len, path, dirname(dcopy), out, d);
    free(dcopy);
    free(text);
    return err;
}

void fr_urdf_destroy(fr_urdf *u)
{
    if (!u) return;
    for (int i = 0; i < u->nlinks; i++) {
        free((char *)u->links[i].name);
        for (int k = 0; k < u->links[i].ncollisions; k++)
            free_collision((fr_urdf_collision *)&u->links[i].collisions[k]);
        free((void *)u->links[i].collisions);
        if (u->has_joint && u->has_joint[i]) free((char *)u->joints[i].name);
    }
    free(u->links);
    free(u->joints);
    free(u->has_joint);
    free(u->name);
    free(u);
}

const char *fr_urdf_name(const fr_urdf *u)
{
    return u->name;
}
int fr_urdf_link_count(const fr_urdf *u)
{
    return u->nlinks;
}
const fr_urdf_link *fr_urdf_link_at(const fr_urdf *u, int i)
{
    return i >= 0 && i < u->nlinks ? &u->links[i] : NULL;
}
const fr_urdf_joint *fr_urdf_joint_at(const fr_urdf *u, int i)
{
    return i >= 0 && i < u->nlinks && u->has_joint[i] ? &u->joints[i] : NULL;
}
int fr_urdf_link_find(const fr_urdf *u, const char *name)
{
    for (int i = 0; i < u->nlinks; i++)
        if (!strcmp(u->links[i].name, name)) return i;
    return -1;
}
int fr_urdf_joint_find(const fr_urdf *u, const char *name)
{
    for (int i = 0; i < u->nlinks; i++)
        if (u->has_joint[i] && !strcmp(u->joints[i].name, name)) return i;
    return -1;
}

int fr_urdf_dof(const fr_urdf *u)
{
    int n = 0;
    for (int i = 0; i < u->nlinks; i++) {
        if (!u->has_joint[i]) continue;
        switch (u->joints[i].type) {
        case FR_URDF_FIXED:
            break;
        case FR_URDF_FLOATING:
            n += 6;
            break;
        default:
            n += 1;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- tree */

fr_urdf_tree_opts fr_urdf_tree_opts_default(void)
{
    fr_urdf_tree_opts o;
    memset(&o, 0, sizeof o);
    o.base = fr_pose_identity();
    return o;
}

int fr_urdf_build_tree(const fr_urdf *u, const fr_urdf_tree_opts *o, fr_tree **out, int *bad_q0)
{
    fr_urdf_tree_opts def = fr_urdf_tree_opts_default();
    if (!o) o = &def;
    *out = NULL;
    for (int k = 0; k < o->nq0; k++) {
        int i = fr_urdf_joint_find(u, o->q0_names[k]);
        if (i < 0 || u->joints[i].type == FR_URDF_FIXED || u->joints[i].type == FR_URDF_FLOATING) {
            if (bad_q0) *bad_q0 = k;
            return FR_ERR_NOTFOUND;
        }
        const fr_urdf_joint *j = &u->joints[i];
        bool ranged = j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_PRISMATIC;
        if (!isfinite(o->q0_values[k]) ||
            (ranged && (o->q0_values[k] < j->lower || o->q0_values[k] > j->upper))) {
            if (bad_q0) *bad_q0 = k;
            return FR_ERR_RANGE;
        }
    }
    fr_tree *t = fr_tree_create();
    if (!t) return FR_ERR_NOMEM;
    char root_joint[256];
    int err = FR_OK;
    for (int i = 0; i < u->nlinks && !err; i++) {
        const fr_urdf_link *L = &u->links[i];
        fr_link_def ld = fr_link_def_default();
        ld.name = L->name;
        ld.mass = L->mass;
        ld.com = L->com;
        ld.inertia = L->inertia;
        if (!u->has_joint[i]) {
            snprintf(root_joint, sizeof root_joint, "%s_root", L->name);
            ld.joint_name = root_joint;
            ld.parent = -1;
            if (o->fixed_base) {
                ld.type = FR_JOINT_FIXED;
                ld.joint_pose = o->base;
            } else {
                ld.type = FR_JOINT_FREE;
                ld.q0_pos = o->base.p;
                ld.q0_rot = o->base.q;
            }
        } else {
            const fr_urdf_joint *j = &u->joints[i];
            ld.joint_name = j->name;
            ld.parent = j->parent;
            ld.joint_pose = j->parent < 0 ? fr_pose_mul(o->base, j->origin) : j->origin;
            ld.axis = j->axis;
            ld.damping = j->damping;
            ld.effort_limit = j->effort;
            switch (j->type) {
            case FR_URDF_FIXED:
                ld.type = FR_JOINT_FIXED;
                break;
            case FR_URDF_REVOLUTE:
            case FR_URDF_CONTINUOUS:
                ld.type = FR_JOINT_REVOLUTE;
                break;
            case FR_URDF_PRISMATIC:
                ld.type = FR_JOINT_PRISMATIC;
                break;
            case FR_URDF_FLOATING:
                ld.type = FR_JOINT_FREE;
                /* the link starts where the joint frame is; q is relative to the joint frame */
                ld.q0_pos = fr_v3_zero();
                ld.q0_rot = fr_q_identity();
                break;
            }
            if (j->type == FR_URDF_REVOLUTE || j->type == FR_URDF_PRISMATIC) {
                ld.limited = true;
                ld.q_min = j->lower;
                ld.q_max = j->upper;
            }
            if (ld.type == FR_JOINT_REVOLUTE || ld.type == FR_JOINT_PRISMATIC) {
                ld.armature = o->armature;
                for (int k = 0; k < o->nq0; k++)
                    if (!strcmp(o->q0_names[k], j->name)) ld.q0 = o->q0_values[k];
            } else {
                ld.damping = 0;
                ld.effort_limit = INFINITY;
            }
        }
        int r = fr_tree_add_link(t, &ld);
        if (r < 0) err = r;
    }
    if (!err) err = fr_tree_finalize(t);
    if (err) {
        fr_tree_destroy(t);
        return err;
    }
    *out = t;
    return FR_OK;
}

int fr_urdf_collision_shape(const fr_urdf_collision *c, int resolution, fr_shape **out)
{
    switch (c->type) {
    case FR_URDF_BOX:
        return fr_shape_create_box(fr_v3_scale(c->size, 0.5), out);
    case FR_URDF_SPHERE:
        return fr_shape_create_sphere(c->radius, resolution, out);
    case FR_URDF_CYLINDER:
        return fr_shape_create_cylinder(c->radius, 0.5 * c->length, resolution, out);
    case FR_URDF_MESH:
        return fr_shape_create_convex(c->points, c->npoints, out);
    }
    return FR_ERR_INVAL;
}
