/* URDF meshes: package:// and file names resolved (every place looked at is reported when none
 * has the file), mesh files read through assimp (Collada units and up axis honoured), and the
 * convex hull simplified to a vertex budget with its volume error reported. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/scene.h>

#include "files.h"
#include "urdf_internal.h"

/* ---------------------------------------------------------------- resolving names */

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Places looked at, for the error. */
typedef struct looked {
    char **place;
    int n, cap;
} looked;

static void look(looked *l, const char *fmt, const char *a, const char *b, const char *c)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        char **t = realloc(l->place, sizeof *t * (size_t)cap);
        if (!t) return;
        l->place = t;
        l->cap = cap;
    }
    char buf[8800];
    snprintf(buf, sizeof buf, fmt, a, b, c);
    l->place[l->n] = strdup(buf);
    if (l->place[l->n]) l->n++;
}

static bool try_path(char *out, size_t n, const char *dir, const char *rest)
{
    int k = snprintf(out, n, "%s%s", dir, rest);
    return k > 0 && (size_t)k < n && file_exists(out);
}

/* A directory named pkg up to `depth` levels below dir (hidden directories skipped). */
static bool crawl(const char *dir, const char *pkg, const char *rest, int depth, char *out,
                  size_t n)
{
    if (depth <= 0) return false;
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[4096];
        int k = snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (k < 0 || (size_t)k >= sizeof sub || !dir_exists(sub)) continue;
        if (!strcmp(e->d_name, pkg) && try_path(out, n, sub, rest))
            found = true;
        else
            found = crawl(sub, pkg, rest, depth - 1, out, n);
    }
    closedir(d);
    return found;
}

/* dir itself when it is named pkg, then pkg inside dir. */
static bool try_package(const char *dir, const char *pkg, const char *rest, char *out, size_t n,
                        looked *l)
{
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    if (!strcmp(base, pkg)) {
        look(l, "%s%s", dir, rest, NULL);
        if (try_path(out, n, dir, rest)) return true;
    }
    look(l, "%s/%s%s", dir, pkg, rest);
    char pd[4400];
    snprintf(pd, sizeof pd, "%s/%s", dir, pkg);
    return try_path(out, n, pd, rest);
}

/* One search root for package://pkg/rest: root itself when named pkg, root/pkg, or a pkg folder
 * up to 3 levels below. */
static bool search_root(const char *root, const char *pkg, const char *rest, char *out, size_t n,
                        looked *l)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", root);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') dir[--len] = 0;
    if (try_package(dir, pkg, rest, out, n, l)) return true;
    look(l, "%s/**/%s%s (up to 3 levels down)", dir, pkg, rest);
    return crawl(dir, pkg, rest, 3, out, n);
}

/* Resolve a mesh filename: package://PKG/REST, file://ABS, absolute, or relative to dir. */
static bool resolve_mesh(const fri_urdf_parser *p, const char *fn, char *out, size_t n, looked *l)
{
    if (!strncmp(fn, "file://", 7)) {
        snprintf(out, n, "%s", fn + 7);
        look(l, "%s", out, NULL, NULL);
        return file_exists(out);
    }
    if (strncmp(fn, "package://", 10)) {
        if (fn[0] == '/' || !p->dir || !p->dir[0])
            snprintf(out, n, "%s", fn);
        else
            snprintf(out, n, "%s/%s", p->dir, fn);
        look(l, "%s", out, NULL, NULL);
        return file_exists(out);
    }
    const char *pkg0 = fn + 10;
    const char *slash = strchr(pkg0, '/');
    if (!slash || slash == pkg0) return false;
    char pkg[256];
    snprintf(pkg, sizeof pkg, "%.*s", (int)(slash - pkg0), pkg0);
    const char *rest = slash; /* "/meshes/a.stl" */
    for (int i = 0; i < p->o->npackage_paths; i++)
        if (search_root(p->o->package_paths[i], pkg, rest, out, n, l)) return true;
    const char *rpp = p->o->ros_package_path ? getenv("ROS_PACKAGE_PATH") : NULL;
    if (rpp) {
        char *copy = strdup(rpp), *save = NULL;
        bool found = false;
        for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok && !found;
             tok = strtok_r(NULL, ":", &save))
            if (tok[0]) found = search_root(tok, pkg, rest, out, n, l);
        free(copy);
        if (found) return true;
    }
    /* the ancestor rule: the URDF sits somewhere inside its package (or next to it) */
    char cur[4096];
    snprintf(cur, sizeof cur, "%s", p->dir && p->dir[0] ? p->dir : ".");
    char *abs = realpath(cur, NULL);
    if (abs) {
        snprintf(cur, sizeof cur, "%s", abs);
        free(abs);
    }
    for (;;) {
        if (try_package(cur, pkg, rest, out, n, l)) return true;
        char *up = strrchr(cur, '/');
        if (!up || up == cur) break;
        *up = 0;
    }
    return false;
}

/* ---------------------------------------------------------------- reading */

/* The shortest decimal (6 to 9 significant digits) that gives f back: what a text format said
 * before assimp stored it in single precision (exact for binary formats up to f's own rounding). */
static double decimal_of(float f)
{
    char b[40];
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(b, sizeof b, "%.*g", digits, (double)f);
        double d = strtod(b, NULL);
        if ((float)d == f) return d;
    }
    return (double)f;
}

typedef struct m4 {
    double m[3][4]; /* rows of an affine transform */
} m4;

static m4 m4_of(const struct aiMatrix4x4 *a)
{
    const float *r[3] = {&a->a1, &a->b1, &a->c1};
    m4 out;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) out.m[i][j] = decimal_of(r[i][j]);
    return out;
}

static m4 m4_mul(const m4 *a, const m4 *b)
{
    m4 o;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++) {
            double s = j == 3 ? a->m[i][3] : 0.0;
            for (int k = 0; k < 3; k++) s += a->m[i][k] * b->m[k][j];
            o.m[i][j] = s;
        }
    }
    return o;
}

typedef struct pointbuf {
    fr_vec3 *p;
    int n, cap;
    int *tri; /* triangles (fans of the faces), 3 indices into p each; NULL: not gathered */
    int ntri, tricap;
    bool nonfinite, nomem;
} pointbuf;

static void add_triangle(pointbuf *b, int i, int j, int k)
{
    if (b->ntri == b->tricap) {
        int cap = b->tricap ? 2 * b->tricap : 256;
        int *t = realloc(b->tri, sizeof *t * 3 * (size_t)cap);
        if (!t) {
            b->nomem = true;
            return;
        }
        b->tri = t;
        b->tricap = cap;
    }
    b->tri[3 * b->ntri] = i;
    b->tri[3 * b->ntri + 1] = j;
    b->tri[3 * b->ntri + 2] = k;
    b->ntri++;
}

static void walk(const struct aiScene *s, const struct aiNode *node, const m4 *parent,
                 fr_vec3 scale, pointbuf *b)
{
    m4 T = m4_of(&node->mTransformation);
    m4 M = m4_mul(parent, &T);
    for (unsigned k = 0; k < node->mNumMeshes && !b->nomem; k++) {
        const struct aiMesh *mesh = s->mMeshes[node->mMeshes[k]];
        const int base = b->n;
        if (b->n + (int)mesh->mNumVertices > b->cap) {
            int cap = b->cap ? b->cap : 256;
            while (cap < b->n + (int)mesh->mNumVertices) cap *= 2;
            fr_vec3 *t = realloc(b->p, sizeof *t * (size_t)cap);
            if (!t) {
                b->nomem = true;
                return;
            }
            b->p = t;
            b->cap = cap;
        }
        for (unsigned v = 0; v < mesh->mNumVertices; v++) {
            const struct aiVector3D *a = &mesh->mVertices[v];
            double x[3] = {decimal_of(a->x), decimal_of(a->y), decimal_of(a->z)}, w[3];
            for (int i = 0; i < 3; i++)
                w[i] = M.m[i][0] * x[0] + M.m[i][1] * x[1] + M.m[i][2] * x[2] + M.m[i][3];
            fr_vec3 pt = fr_v3_mul(fr_v3(w[0], w[1], w[2]), scale);
            if (!fr_v3_isfinite(pt)) b->nonfinite = true;
            b->p[b->n++] = pt;
        }
        for (unsigned f = 0; f < mesh->mNumFaces && !b->nomem; f++) {
            const struct aiFace *fc = &mesh->mFaces[f];
            bool inside = true;
            for (unsigned v = 0; v < fc->mNumIndices; v++)
                inside = inside && fc->mIndices[v] < mesh->mNumVertices;
            for (unsigned v = 1; inside && v + 1 < fc->mNumIndices && !b->nomem; v++)
                add_triangle(b, base + (int)fc->mIndices[0], base + (int)fc->mIndices[v],
                             base + (int)fc->mIndices[v + 1]);
        }
    }
    for (unsigned c = 0; c < node->mNumChildren && !b->nomem; c++)
        walk(s, node->mChildren[c], &M, scale, b);
}

static bool ends_with_ci(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

/* Collada's <up_axis> (the COLLADA default is Y_UP): 0 x, 1 y, 2 z. */
static int collada_up_axis(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    char buf[65536];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    const char *a = strstr(buf, "<up_axis>");
    if (!a) return 1;
    a += 9;
    while (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r') a++;
    return *a == 'X' ? 0 : *a == 'Z' ? 2 : 1;
}

/* One line of a PLY header in the form PLY gives it ("ply", "format ascii 1.0", "element
 * vertex 8", "property float x", "property list uchar int vertex_indices", "comment …",
 * "obj_info …", "end_header"); line 1 must be "ply". */
static bool ply_header_line(const char *l, int ln)
{
    static const char *const types[] = {"char",  "uchar",  "short",   "ushort", "int",   "uint",
                                        "float", "double", "int8",    "uint8",  "int16", "uint16",
                                        "int32", "uint32", "float32", "float64"};
    const size_t nt = sizeof types / sizeof types[0];
    char a[64], b[64], c[64], d[64], e[64];
    if (ln == 1) return !strcmp(l, "ply");
    if (!strncmp(l, "comment", 7) && (l[7] == 0 || l[7] == ' ' || l[7] == '\t')) return true;
    if (!strncmp(l, "obj_info", 8) && (l[8] == 0 || l[8] == ' ' || l[8] == '\t')) return true;
    if (!strcmp(l, "end_header")) return true;
    int n = sscanf(l, "%63s %63s %63s %63s %63s", a, b, c, d, e);
    if (n == 3 && !strcmp(a, "format"))
        return (!strcmp(b, "ascii") || !strcmp(b, "binary_little_endian") ||
                !strcmp(b, "binary_big_endian")) &&
               !strcmp(c, "1.0");
    if (n == 3 && !strcmp(a, "element")) {
        for (const char *q = c; *q; q++)
            if (*q < '0' || *q > '9') return false;
        return true;
    }
    bool t1 = false, t2 = false, t3 = false;
    for (size_t i = 0; i < nt; i++) {
        if (n >= 2 && !strcmp(b, types[i])) t1 = true;
        if (n >= 3 && !strcmp(c, types[i])) t2 = true;
        if (n >= 4 && !strcmp(d, types[i])) t3 = true;
    }
    if (n == 3 && !strcmp(a, "property")) return t1;
    if (n == 5 && !strcmp(a, "property") && !strcmp(b, "list")) return t2 && t3;
    return false;
}

/* A binary STL is an 80-byte header, a face count and 50 bytes per face: assimp takes a file
 * as binary only when its size is exactly that, and any other as ASCII, so a count that
 * disagrees with the size (a truncated file, bytes appended) got its "Failed to determine STL
 * storage representation" and no word of the count. An ASCII STL starts with "solid" and has
 * no NUL byte among its first 500 (a binary header may start with "solid" too). */
static bool binary_stl_fits(const char *buf, size_t got, long size, char *bad, size_t nb)
{
    uint32_t n = 0;
    if (size >= 84 && got >= 84) {
        memcpy(&n, buf + 80, 4);
        if (84.0 + 50.0 * n == (double)size) return true;
    }
    const char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!strncmp(p, "solid", 5) && memchr(buf, 0, got < 500 ? got : 500) == NULL) return true;
    if (size < 84)
        snprintf(bad, nb,
                 "its %ld bytes are neither an ASCII STL (\"solid ...\") nor a binary STL (an "
                 "84-byte header, then 50 bytes a face)",
                 size);
    else
        snprintf(bad, nb,
                 "its binary STL header declares %" PRIu32 " faces in %ld bytes (%" PRIu32
                 " faces take 84 + 50·%" PRIu32 " = %.0f bytes)",
                 n, size, n, n, 84.0 + 50.0 * n);
    return false;
}

/*
 * Formats whose header declares how many vertices and faces follow (OFF, PLY): assimp reserves
 * for the declared counts before it reads them, so a header claiming 10^82 faces in a 107-byte
 * file ran it out of memory (found by the mesh fuzzer). No element takes less than a byte, so a
 * count above the file's size is a lie; the header is checked against it first, and a PLY
 * header for lines PLY does not have. false with a message naming what is wrong.
 */
static bool header_counts_fit(const char *path, char *bad, size_t nb)
{
    FILE *f = fopen(path, "rb");
    if (!f) return true; /* (assimp says why it cannot read it) */
    char buf[65536];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fclose(f);
    buf[got] = 0;
    if (size < 0) return true;
    if (ends_with_ci(path, ".stl") && !binary_stl_fits(buf, got, size, bad, nb)) return false;
    const double limit = (double)size;
    const char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!strncasecmp(p, "ply", 3)) {
        /* every header line one PLY has, in its form, up to "end_header" (assimp's reader looped
         * for ever on a header whose "end_header" a byte had turned into "ent_header", and read
         * out of bounds on one whose "float" had become "flot": the fuzzer) */
        const char *line = p;
        for (int ln = 1;; ln++) {
            const char *nl = strchr(line, '\n');
            if (!nl) {
                snprintf(bad, nb, "its PLY header has no end_header line");
                return false;
            }
            char l[256];
            size_t len = (size_t)(nl - line) < sizeof l - 1 ? (size_t)(nl - line) : sizeof l - 1;
            memcpy(l, line, len);
            l[len] = 0;
            if (len > 0 && l[len - 1] == '\r') l[--len] = 0;
            if (!ply_header_line(l, ln)) {
                snprintf(bad, nb, "its PLY header's line %d is not a PLY header line", ln);
                return false;
            }
            if (!strcmp(l, "end_header")) break;
            line = nl + 1;
        }
        /* "element <name> <count>" lines up to "end_header" */
        for (const char *e = strstr(p, "element");
             e && (!strstr(p, "end_header") || e < strstr(p, "end_header"));
             e = strstr(e + 7, "element")) {
            char name[64];
            double n;
            if (sscanf(e, "element %63s %lf", name, &n) == 2 && !(n <= limit)) {
                snprintf(bad, nb, "its header declares %.3g '%s' elements in %ld bytes", n, name,
                         size);
                return false;
            }
        }
        return true;
    }
    /* OFF, read token for token as assimp 5.2.5 reads it: after blank and '#' lines the
     * prefixes ST, C, N, 4 and n (each optional, in that order), then the keyword OFF, optional
     * too. Without it the prefix characters came from the counts themselves ("4 4 6" reads as 4
     * vertices and 6 faces). After n a dimension comes first, then the vertex and face counts.
     * A 300-byte .off file without the keyword declaring 7.8e55 vertices (wrapped to 32 bits)
     * ran assimp out of memory (the fuzzer). */
    const char *q = p;
    bool dim = false;
    while (*q == '#' || *q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
        if (*q++ == '#')
            while (*q && *q != '\n') q++;
    if (q[0] == 'S' && q[1] == 'T') q += 2;
    if (*q == 'C') q++;
    if (*q == 'N') q++;
    if (*q == '4') q++;
    if (*q == 'n') {
        dim = true;
        q++;
    }
    if (!strncmp(q, "OFF", 3))
        q += 3;
    else if (!ends_with_ci(path, ".off"))
        return true;
    double c[3];
    int got_n = 0;
    while (*q && got_n < 3) {
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') q++;
        if (*q == '#') {
            while (*q && *q != '\n') q++;
            continue;
        }
        char *end;
        double v = strtod(q, &end);
        if (end == q) break;
        c[got_n++] = v;
        q = end;
    }
    for (int i = dim; i < got_n && i < 2 + dim; i++)
        if (!(c[i] <= limit)) {
            snprintf(bad, nb, "its header declares %.3g %s in %ld bytes", c[i],
                     i == dim ? "vertices" : "faces", size);
            return false;
        }
    return true;
}

static const fr_vec3 *weld_points; /* (qsort's comparison has no argument for them) */
static int cmp_point(const void *a, const void *b)
{
    const fr_vec3 *x = &weld_points[*(const int *)a], *y = &weld_points[*(const int *)b];
    if (x->x != y->x) return x->x < y->x ? -1 : 1;
    if (x->y != y->y) return x->y < y->y ? -1 : 1;
    return (x->z > y->z) - (x->z < y->z);
}

static int cmp_edge(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* The mesh's own volume, m³: the signed volumes of its triangles' tetrahedra with the origin
 * added up, when the mesh is closed and its faces consistently turned (every edge, the vertices
 * welded where equal, met once each way); NAN when it is not (an open or flipped surface has no
 * volume to compare a hull's with). */
static double closed_volume(const pointbuf *b)
{
    if (b->ntri < 4) return NAN;
    int *order = malloc(sizeof *order * (size_t)b->n), *id = malloc(sizeof *id * (size_t)b->n);
    long long *fw = malloc(sizeof *fw * 3 * (size_t)b->ntri);
    long long *bw = malloc(sizeof *bw * 3 * (size_t)b->ntri);
    double vol = NAN;
    if (order && id && fw && bw) {
        for (int i = 0; i < b->n; i++) order[i] = i;
        weld_points = b->p;
        qsort(order, (size_t)b->n, sizeof *order, cmp_point);
        for (int i = 0, cur = -1; i < b->n; i++) {
            if (i == 0 || cmp_point(&order[i - 1], &order[i])) cur++;
            id[order[i]] = cur;
        }
        double v6 = 0.0;
        int ne = 0;
        for (int t = 0; t < b->ntri; t++) {
            const int *T = b->tri + 3 * t;
            const int ring[4] = {id[T[0]], id[T[1]], id[T[2]], id[T[0]]};
            if (ring[0] == ring[1] || ring[1] == ring[2] || ring[2] == ring[0]) continue;
            v6 += fr_v3_dot(b->p[T[0]], fr_v3_cross(b->p[T[1]], b->p[T[2]]));
            for (int k = 0; k < 3; k++, ne++) {
                fw[ne] = (long long)ring[k] << 32 | ring[k + 1];
                bw[ne] = (long long)ring[k + 1] << 32 | ring[k];
            }
        }
        /* closed and consistently turned: the edges are the reverses' multiset */
        qsort(fw, (size_t)ne, sizeof *fw, cmp_edge);
        qsort(bw, (size_t)ne, sizeof *bw, cmp_edge);
        bool closed = ne > 0;
        for (int i = 0; closed && i < ne; i++) closed = fw[i] == bw[i];
        if (closed) vol = fabs(v6) / 6.0;
    }
    free(order);
    free(id);
    free(fw);
    free(bw);
    return vol;
}

int fr_mesh_load_points(const char *path, fr_vec3 scale, fr_vec3 **pts_out, int *np_out, char *msg,
                        size_t msz)
{
    return fr_mesh_load(path, scale, pts_out, np_out, NULL, msg, msz);
}

int fr_mesh_load(const char *path, fr_vec3 scale, fr_vec3 **pts_out, int *np_out, double *volume,
                 char *msg, size_t msz)
{
    if (volume) *volume = NAN;
    *pts_out = NULL;
    *np_out = 0;
    char bad[256];
    int cerr = fri_check_input(path, FRI_MAX_MESH_BYTES, bad, sizeof bad);
    if (cerr) {
        snprintf(msg, msz, "mesh '%s': %s", path, bad);
        return cerr;
    }
    if (!header_counts_fit(path, bad, sizeof bad)) {
        snprintf(msg, msz, "mesh '%s': %s", path, bad);
        return FR_ERR_PARSE;
    }
    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) {
        snprintf(msg, msz, "mesh '%s': out of memory", path);
        return FR_ERR_NOMEM;
    }
    /* the up axis is turned here, exactly (assimp would turn it into its own y-up) */
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
    const struct aiScene *s = aiImportFileExWithProperties(path, 0, NULL, props);
    aiReleasePropertyStore(props);
    if (!s || !s->mRootNode) {
        const char *why = aiGetErrorString();
        bool unknown = why && strstr(why, "suitable reader");
        snprintf(msg, msz, "mesh '%s': cannot read it: %s%s", path, why ? why : "?",
                 unknown ? " (formats: Collada .dae, .obj, .stl, .ply, glTF .gltf/.glb and "
                           "others assimp reads)"
                         : "");
        if (s) aiReleaseImport(s);
        return unknown ? FR_ERR_UNSUPPORTED : FR_ERR_PARSE;
    }
    m4 M = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    if (ends_with_ci(path, ".dae")) {
        /* Collada: turn the file's up axis into z (rotations by ±90°, exact) */
        int up = collada_up_axis(path);
        if (up == 1) /* Y_UP (right x, up y, in z): (x, y, z) → (x, −z, y) */
            M = (m4){{{1, 0, 0, 0}, {0, 0, -1, 0}, {0, 1, 0, 0}}};
        else if (up == 0) /* X_UP (right −y, up x, in z): (x, y, z) → (−y, −z, x) */
            M = (m4){{{0, -1, 0, 0}, {0, 0, -1, 0}, {1, 0, 0, 0}}};
    }
    pointbuf b = {0};
    walk(s, s->mRootNode, &M, scale, &b);
    aiReleaseImport(s);
    if (volume && !b.nomem && !b.nonfinite) *volume = closed_volume(&b);
    free(b.tri);
    int err = FR_OK;
    if (b.nomem) {
        snprintf(msg, msz, "out of memory reading '%s'", path);
        err = FR_ERR_NOMEM;
    } else if (b.nonfinite) {
        snprintf(msg, msz, "mesh '%s' has a non-finite vertex", path);
        err = FR_ERR_PARSE;
    } else if (b.n < 4) {
        snprintf(msg, msz, "mesh '%s': %d vertices; a convex hull needs at least 4", path, b.n);
        err = FR_ERR_PARSE;
    }
    if (err) {
        free(b.p);
        return err;
    }
    *pts_out = b.p;
    *np_out = b.n;
    return FR_OK;
}

bool fr_mesh_concave_warning(double mesh_volume, double hull_volume, char *msg, size_t n)
{
    if (!(mesh_volume > 0.0) || !(hull_volume > mesh_volume * (1.0 + FR_MESH_CONCAVE_REL)))
        return false;
    snprintf(msg, n,
             "the mesh is not convex: its convex hull, which is what collides, has %.3g %% more "
             "volume than the mesh (%.4g against %.4g cm³); split it into convex parts to keep "
             "its shape",
             100.0 * (hull_volume - mesh_volume) / mesh_volume, hull_volume * 1e6,
             mesh_volume * 1e6);
    return true;
}

bool fr_mesh_units_warning(double extent, const char *how_to_scale, char *msg, size_t n)
{
    if (!(extent > FR_MESH_MM_EXTENT)) return false;
    snprintf(msg, n,
             "its hull is %.4g m across: a mesh in millimetres read as metres? (%s scales it "
             "to metres)",
             extent, how_to_scale);
    return true;
}

/* ---------------------------------------------------------------- hull simplification */

static int farthest_from(const fr_vec3 *v, int n, fr_vec3 a)
{
    int best = 0;
    double d = -1;
    for (int i = 0; i < n; i++) {
        double e = fr_v3_norm2(fr_v3_sub(v[i], a));
        if (e > d) {
            d = e;
            best = i;
        }
    }
    return best;
}

int fr_hull_simplify(const fr_vec3 *pts, int n, int max_verts, fr_vec3 **out, int *nout,
                     double *vol, double *vol_full, int *nfull)
{
    *out = NULL;
    *nout = 0;
    fr_shape *full;
    int err = fr_shape_create_convex(pts, n, &full);
    if (err) return err;
    const fr_polytope *F = &full->poly;
    int m = F->nverts;
    if (vol_full) *vol_full = F->volume;
    if (nfull) *nfull = m;
    fr_vec3 *keep = malloc(sizeof *keep * (size_t)(m + 1));
    bool *used = calloc((size_t)m + 1, sizeof *used);
    if (!keep || !used) {
        free(keep);
        free(used);
        fr_shape_destroy(full);
        return FR_ERR_NOMEM;
    }
    if (max_verts <= 0 || m <= max_verts) {
        memcpy(keep, F->verts, sizeof *keep * (size_t)m);
        *out = keep;
        *nout = m;
        if (vol) *vol = F->volume;
        free(used);
        fr_shape_destroy(full);
        return FR_OK;
    }
    if (max_verts < 4) max_verts = 4;
    const fr_vec3 *V = F->verts;
    /* a large first tetrahedron: two far-apart vertices, the one farthest from their line, the
     * one farthest from their plane */
    int a = farthest_from(V, m, V[0]);
    int b = farthest_from(V, m, V[a]);
    fr_vec3 ab = fr_v3_normalize(fr_v3_sub(V[b], V[a]));
    int c = -1, dd = -1;
    double best = -1;
    for (int i = 0; i < m; i++) {
        fr_vec3 r = fr_v3_sub(V[i], V[a]);
        double e = fr_v3_norm2(fr_v3_sub(r, fr_v3_scale(ab, fr_v3_dot(r, ab))));
        if (e > best) best = e, c = i;
    }
    fr_vec3 nrm = fr_v3_normalize(fr_v3_cross(fr_v3_sub(V[b], V[a]), fr_v3_sub(V[c], V[a])));
    best = -1;
    for (int i = 0; i < m; i++) {
        double e = fabs(fr_v3_dot(fr_v3_sub(V[i], V[a]), nrm));
        if (e > best) best = e, dd = i;
    }
    int k = 0;
    int first[4] = {a, b, c, dd};
    for (int i = 0; i < 4; i++)
        if (!used[first[i]]) {
            used[first[i]] = true;
            keep[k++] = V[first[i]];
        }
    double v_simple = 0;
    /* then the vertex farthest outside the current hull, until the budget is spent */
    for (;;) {
        fr_shape *h;
        err = fr_shape_create_convex(keep, k, &h);
        if (err) break;
        v_simple = h->poly.volume;
        if (k >= max_verts) {
            fr_shape_destroy(h);
            break;
        }
        int pick = -1;
        double far = 0;
        for (int i = 0; i < m; i++) {
            if (used[i]) continue;
            double out_d = -INFINITY;
            for (int f = 0; f < h->poly.nfaces; f++) {
                double e = fr_v3_dot(h->poly.normal[f], V[i]) - h->poly.offset[f];
                if (e > out_d) out_d = e;
            }
            if (out_d > far) far = out_d, pick = i;
        }
        fr_shape_destroy(h);
        if (pick < 0) break; /* every vertex inside already */
        used[pick] = true;
        keep[k++] = V[pick];
    }
    free(used);
    fr_shape_destroy(full);
    if (err) {
        free(keep);
        return err;
    }
    *out = keep;
    *nout = k;
    if (vol) *vol = v_simple;
    return FR_OK;
}

int fr_hull_volume_match(fr_vec3 *pts, int n, double volume, double *scale)
{
    fr_shape *h;
    int err = fr_shape_create_convex(pts, n, &h);
    if (err) return err;
    double s = cbrt(volume / h->poly.volume);
    fr_vec3 c = h->poly.centroid;
    fr_shape_destroy(h);
    for (int i = 0; i < n; i++) pts[i] = fr_v3_add(c, fr_v3_scale(fr_v3_sub(pts[i], c), s));
    if (scale) *scale = s;
    return FR_OK;
}

/* ---------------------------------------------------------------- the <mesh> element */

int fri_urdf_parse_mesh(fri_urdf_parser *p, const xmlNode *shape, fr_urdf_collision *c)
{
    char *fn;
    int err = fri_required_str(p, shape, "filename", &fn);
    fr_vec3 scale;
    int e = fri_attr_vec3(p, shape, "scale", false, fr_v3(1, 1, 1), &scale);
    if (err || e) {
        free(fn);
        return err ? err : e;
    }
    if (!(scale.x != 0 && scale.y != 0 && scale.z != 0)) {
        free(fn);
        return fri_urdf_err(p, shape, "scale", FR_ERR_RANGE, "scale factors must not be 0");
    }
    if (!strncmp(fn, "package://", 10)) {
        /* package://PKG/REST: PKG must be there, and something after it */
        char *pkg = fn + 10;
        size_t extra = strspn(pkg, "/");
        const char *slash = strchr(pkg + extra, '/');
        if (!pkg[extra] || !slash || !slash[1]) {
            err = fri_urdf_err(p, shape, "filename", FR_ERR_PARSE,
                               "mesh file '%s': %s (expected package://PACKAGE/PATH)", fn,
                               !pkg[extra] ? "it names no package and no file"
                                           : "it names no file after the package");
            free(fn);
            return err;
        }
        if (extra) {
            /* package:///PKG/REST (talos_full_v2.urdf): the package name is empty. ROS 2's
             * resource_retriever refuses it ("Package name must not be empty"), ROS 1's finds no
             * package ''; Pinocchio joins the rest to its package directories, which reads it
             * as package://PKG/REST. So does fureru, with a warning. */
            fri_urdf_warn(p, shape, "filename",
                          "mesh file '%s': the package name is empty (%zu slash%s too many after "
                          "'package://'; ROS's resource_retriever refuses it): read as "
                          "'package://%s'",
                          fn, extra, extra == 1 ? "" : "es", pkg + extra);
            memmove(pkg, pkg + extra, strlen(pkg + extra) + 1);
        }
    }
    char path[4096];
    looked l = {0};
    if (!resolve_mesh(p, fn, path, sizeof path, &l)) {
        char where[400] = "";
        size_t used = 0;
        for (int i = 0; i < l.n && used < sizeof where; i++) {
            int k = snprintf(where + used, sizeof where - used, "%s%s", i ? "; " : "", l.place[i]);
            if (k < 0) break;
            used += (size_t)k;
        }
        err = fri_urdf_err(p, shape, "filename", FR_ERR_NOTFOUND,
                           "mesh file '%s' not found; looked at %d place%s%s: %s%s", fn, l.n,
                           l.n == 1 ? "" : "s", l.n > 1 ? " (each in a note below)" : "", where,
                           used >= sizeof where ? "..." : "");
        for (int i = 0; l.n > 1 && i < l.n; i++)
            fri_urdf_note(p, shape, "filename", "looked for '%s' at %s", fn, l.place[i]);
    }
    for (int i = 0; i < l.n; i++) free(l.place[i]);
    free(l.place);
    if (err) {
        free(fn);
        return err;
    }
    free(fn);
    char msg[600];
    fr_vec3 *pts;
    int np;
    double mesh_volume;
    if ((err = fr_mesh_load(path, scale, &pts, &np, &mesh_volume, msg, sizeof msg)))
        return fri_urdf_err(p, shape, "filename", err, "%s", msg);
    fr_vec3 *hv;
    int nh;
    err = fr_hull_simplify(pts, np, p->o->hull_vertices, &hv, &nh, &c->hull_volume,
                           &c->hull_volume_full, &c->hull_vertices_full);
    free(pts);
    if (err == FR_ERR_NOMEM) return err;
    if (err)
        return fri_urdf_err(p, shape, "filename", FR_ERR_RANGE,
                            "mesh '%s': cannot build a convex hull of its %d vertices (flat or "
                            "degenerate): %s",
                            path, np, fr_strerror(err));
    if (nh < c->hull_vertices_full) {
        /* the inscribed hull is smaller: scale it about its centroid to the full hull's volume,
         * as the curved shapes' polytopes are (contact forces come from volumes) */
        double inscribed = c->hull_volume, s = 1;
        if ((err = fr_hull_volume_match(hv, nh, c->hull_volume_full, &s))) {
            free(hv);
            return err;
        }
        c->hull_volume = c->hull_volume_full;
        fri_urdf_note(p, shape, "filename",
                      "mesh '%s': hull simplified from %d to %d vertices: the inscribed hull has "
                      "%.3g %% less volume (%.4g of %.4g cm³); scaled by %.5f about its centroid "
                      "to the full volume",
                      path, c->hull_vertices_full, nh,
                      100.0 * (c->hull_volume_full - inscribed) / c->hull_volume_full,
                      inscribed * 1e6, c->hull_volume_full * 1e6, s);
        c->hull_volume_inscribed = inscribed;
    } else {
        c->hull_volume_inscribed = c->hull_volume;
    }
    c->points = hv;
    c->npoints = nh;
    /* a non-convex mesh silently became its hull (a torus's has 81 % more volume: a new
     * user's trial) */
    if (fr_mesh_concave_warning(mesh_volume, c->hull_volume_full, msg, sizeof msg))
        fri_urdf_warn(p, shape, "filename", "mesh '%s': %s", path, msg);
    c->mesh_path = strdup(path);
    return c->mesh_path ? FR_OK : FR_ERR_NOMEM;
}

/* The greatest extent of a collision's shape, m (a mesh's over its hull's box). */
static double collision_extent(const fr_urdf_collision *c)
{
    switch (c->type) {
    case FR_URDF_BOX:
        return fmax(c->size.x, fmax(c->size.y, c->size.z));
    case FR_URDF_SPHERE:
        return 2.0 * c->radius;
    case FR_URDF_CYLINDER:
        return fmax(2.0 * c->radius, c->length);
    case FR_URDF_CAPSULE:
        return c->length + 2.0 * c->radius;
    default:
        break;
    }
    fr_vec3 lo = fr_v3(INFINITY, INFINITY, INFINITY), hi = fr_v3_neg(lo);
    for (int i = 0; i < c->npoints; i++) {
        lo = fr_v3(fmin(lo.x, c->points[i].x), fmin(lo.y, c->points[i].y),
                   fmin(lo.z, c->points[i].z));
        hi = fr_v3(fmax(hi.x, c->points[i].x), fmax(hi.y, c->points[i].y),
                   fmax(hi.z, c->points[i].z));
    }
    return c->npoints ? fmax(hi.x - lo.x, fmax(hi.y - lo.y, hi.z - lo.z)) : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A mesh whose size says millimetres read as metres (a 1 kg link of 10 cm had a 100 m hull, and
 * the run failed on the placement's overlap, saying nothing of units: a new user's trial):
 * beyond FR_MESH_MM_EXTENT, or FRI_MM_RATIO times the other links' shapes (their median), or
 * that many times the size its link's inertia gives (√(6·tr I/m), a solid box's diagonal) and a
 * metre at least (a placeholder inertia of a link of a few cm stays under it). */
#define FRI_MM_RATIO 300.0
void fri_urdf_mesh_units(fri_urdf_parser *p, const fri_raw_link *rl, int nl)
{
    int n = 0;
    for (int i = 0; i < nl; i++) n += rl[i].l.ncollisions;
    double *all = malloc(sizeof *all * (size_t)(n + 1)),
           *other = malloc(sizeof *other * (size_t)(n + 1));
    if (!all || !other) {
        free(all);
        free(other);
        return;
    }
    n = 0;
    for (int i = 0; i < nl; i++)
        for (int k = 0; k < rl[i].l.ncollisions; k++) all[n++] = collision_extent(&rl[i].cols[k]);
    for (int i = 0, at = 0; i < nl; at += rl[i].l.ncollisions, i++) {
        const fr_urdf_link *L = &rl[i].l;
        int no = 0;
        for (int k = 0; k < n; k++)
            if (k < at || k >= at + L->ncollisions) other[no++] = all[k];
        qsort(other, (size_t)no, sizeof *other, cmp_double);
        const double median = no ? other[no / 2] : 0.0;
        const double tr = L->inertia.m[0][0] + L->inertia.m[1][1] + L->inertia.m[2][2];
        const double inertial = L->mass > 0.0 && tr > 0.0 ? sqrt(6.0 * tr / L->mass) : 0.0;
        for (int k = 0; k < L->ncollisions; k++) {
            const fr_urdf_collision *c = &rl[i].cols[k];
            if (c->type != FR_URDF_MESH || !rl[i].col_mesh || !rl[i].col_mesh[k]) continue;
            const double e = all[at + k];
            char why[160] = "", msg[400];
            if (e > FR_MESH_MM_EXTENT)
                snprintf(why, sizeof why, "beyond %g m", FR_MESH_MM_EXTENT);
            else if (median > 0.0 && e > FRI_MM_RATIO * median)
                snprintf(why, sizeof why,
                         "%.0f times the other links' shapes (%.3g m, their median)", e / median,
                         median);
            else if (inertial > 0.0 && e > FRI_MM_RATIO * inertial && e > 1.0)
                snprintf(why, sizeof why,
                         "%.0f times the size its link's inertia gives (%.3g m for %g kg)",
                         e / inertial, inertial, L->mass);
            if (!why[0]) continue;
            snprintf(msg, sizeof msg,
                     "mesh '%s': its hull is %.4g m across, %s: a mesh in "
                     "millimetres read as metres? (the <mesh> element's scale=\"0.001 0.001 "
                     "0.001\" scales it to metres)",
                     c->mesh_path, e, why);
            fri_urdf_warn(p, rl[i].col_mesh[k], "filename", "%s", msg);
        }
    }
    free(all);
    free(other);
}
