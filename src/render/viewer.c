/* The viewer's window and drawing (viewer.h): GLFW, OpenGL 3.3 core, FreeType for the HUD. */
#define GL_GLEXT_PROTOTYPES
#include "viewer.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <ft2build.h>
#include <png.h>
#include FT_FREETYPE_H

#include "fureru/base.h"
#include "fureru/coupling.h"

/* ---------------------------------------------------------------- colours */

static const float SKY_TOP[3] = {0.52f, 0.66f, 0.84f}, SKY_LOW[3] = {0.78f, 0.85f, 0.95f};
static const float C_STATIC[4] = {0.74f, 0.74f, 0.71f, 1};
static const float C_LINK[4] = {0.36f, 0.50f, 0.74f, 1};
static const float C_PROXY[4] = {0.10f, 0.72f, 0.78f, 1};
static const float C_POINTER[4] = {1.00f, 0.85f, 0.00f, 1};
static const float C_FELT[4] = {0.92f, 0.00f, 0.92f, 1};
static const float C_CFORCE[4] = {0.90f, 0.10f, 0.08f, 1};
static const float C_NORMAL[4] = {0.10f, 0.75f, 0.15f, 1};
static const float C_PATCH[4] = {0.95f, 0.95f, 0.20f, 1};
static const float C_SPRING[4] = {0.20f, 0.20f, 0.20f, 1};
static const float PALETTE[][4] = {{0.90f, 0.45f, 0.15f, 1}, {0.85f, 0.25f, 0.30f, 1},
                                   {0.55f, 0.75f, 0.20f, 1}, {0.95f, 0.65f, 0.10f, 1},
                                   {0.65f, 0.40f, 0.80f, 1}, {0.85f, 0.55f, 0.35f, 1}};

/* ---------------------------------------------------------------- GL helpers */

typedef struct mesh {
    GLuint vao, vbo;
    int n;
} mesh;

static void mesh_upload(mesh *m, const float *data, int nverts)
{
    glGenVertexArrays(1, &m->vao);
    glGenBuffers(1, &m->vbo);
    glBindVertexArray(m->vao);
    glBindBuffer(GL_ARRAY_BUFFER, m->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)nverts * 6 * (GLsizeiptr)sizeof(float), data,
                 GL_STATIC_DRAW);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)0);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    m->n = nverts;
}

static void put(float **w, fr_vec3 p, fr_vec3 n)
{
    float *o = *w;
    o[0] = (float)p.x, o[1] = (float)p.y, o[2] = (float)p.z;
    o[3] = (float)n.x, o[4] = (float)n.y, o[5] = (float)n.z;
    *w += 6;
}

/* A shape's polytope as triangles; round shapes get smooth normals. */
static int mesh_from_shape(mesh *m, const fr_shape *s)
{
    const fr_polytope *P = &s->poly;
    int ntri = 0;
    for (int f = 0; f < P->nfaces; f++) ntri += P->face_count[f] - 2;
    float *buf = malloc((size_t)ntri * 18 * sizeof(float) + 1), *w = buf;
    if (!buf) return FR_ERR_NOMEM;
    for (int f = 0; f < P->nfaces; f++) {
        const int *L = P->loop + P->face_start[f];
        fr_vec3 fn = P->normal[f];
        bool flat = s->type == FR_SHAPE_BOX || s->type == FR_SHAPE_CONVEX ||
                    (s->type == FR_SHAPE_CYLINDER && fabs(fn.z) > 0.9);
        for (int k = 1; k + 1 < P->face_count[f]; k++) {
            int idx[3] = {L[0], L[k], L[k + 1]};
            for (int c = 0; c < 3; c++) {
                fr_vec3 v = P->verts[idx[c]], n = fn;
                if (!flat) {
                    fr_vec3 a = fr_v3_zero();
                    if (s->type == FR_SHAPE_CAPSULE)
                        a.z = fmin(fmax(v.z, -s->half_length), s->half_length);
                    else if (s->type == FR_SHAPE_CYLINDER)
                        a.z = v.z;
                    n = fr_v3_normalize(fr_v3_sub(v, a));
                }
                put(&w, v, n);
            }
        }
    }
    mesh_upload(m, buf, ntri * 3);
    free(buf);
    return FR_OK;
}

/* Unit primitives for overlays: sphere (radius 1), cylinder and cone (radius 1, z 0..1). */
static void mesh_sphere(mesh *m)
{
    enum { NU = 24, NV = 12 };
    float *buf = malloc(NU * NV * 6 * 6 * sizeof(float)), *w = buf;
    const double PI = 3.14159265358979;
    for (int i = 0; i < NU; i++)
        for (int j = 0; j < NV; j++) {
            fr_vec3 q[4];
            for (int c = 0; c < 4; c++) {
                double u = 2 * PI * (i + (c == 1 || c == 2)) / NU;
                double v = PI * (j + (c >= 2)) / NV - PI / 2;
                q[c] = fr_v3(cos(v) * cos(u), cos(v) * sin(u), sin(v));
            }
            int t[6] = {0, 1, 2, 0, 2, 3};
            for (int c = 0; c < 6; c++) put(&w, q[t[c]], q[t[c]]);
        }
    mesh_upload(m, buf, NU * NV * 6);
    free(buf);
}

static void mesh_cyl_cone(mesh *m, bool cone)
{
    enum { N = 20 };
    float *buf = malloc(N * 12 * 6 * sizeof(float)), *w = buf;
    const double PI = 3.14159265358979;
    int n = 0;
    for (int i = 0; i < N; i++) {
        double a0 = 2 * PI * i / N, a1 = 2 * PI * (i + 1) / N;
        fr_vec3 b0 = fr_v3(cos(a0), sin(a0), 0), b1 = fr_v3(cos(a1), sin(a1), 0);
        fr_vec3 t0 = cone ? fr_v3(0, 0, 1) : fr_v3(b0.x, b0.y, 1);
        fr_vec3 t1 = cone ? fr_v3(0, 0, 1) : fr_v3(b1.x, b1.y, 1);
        fr_vec3 n0 = fr_v3_normalize(fr_v3(b0.x, b0.y, cone ? 1 : 0));
        fr_vec3 n1 = fr_v3_normalize(fr_v3(b1.x, b1.y, cone ? 1 : 0));
        put(&w, b0, n0), put(&w, b1, n1), put(&w, t1, n1);
        put(&w, b0, n0), put(&w, t1, n1), put(&w, t0, n0);
        put(&w, fr_v3_zero(), fr_v3(0, 0, -1)), put(&w, b1, fr_v3(0, 0, -1)),
            put(&w, b0, fr_v3(0, 0, -1));
        n += 9;
    }
    mesh_upload(m, buf, n);
    free(buf);
}

static GLuint compile(GLenum type, const char *src, char *msg, size_t n)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        glGetShaderInfoLog(s, (GLsizei)n, NULL, msg);
        return 0;
    }
    return s;
}

static GLuint program(const char *vs, const char *fs, char *msg, size_t n)
{
    GLuint v = compile(GL_VERTEX_SHADER, vs, msg, n),
           f = v ? compile(GL_FRAGMENT_SHADER, fs, msg, n) : 0;
    if (!v || !f) return 0;
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    GLint ok;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        glGetProgramInfoLog(p, (GLsizei)n, NULL, msg);
        return 0;
    }
    return p;
}

static const char *MESH_VS =
    "#version 330 core\n"
    "layout(location=0) in vec3 aPos; layout(location=1) in vec3 aNrm;\n"
    "uniform mat4 uVP; uniform mat4 uModel; uniform mat3 uNrm;\n"
    "out vec3 vPos; out vec3 vNrm;\n"
    "void main(){ vec4 w = uModel*vec4(aPos,1.0); vPos=w.xyz; vNrm=uNrm*aNrm;"
    " gl_Position=uVP*w; }\n";
static const char *MESH_FS =
    "#version 330 core\n"
    "in vec3 vPos; in vec3 vNrm; out vec4 frag;\n"
    "uniform vec4 uColor; uniform int uMode; uniform vec3 uEye; uniform vec3 uLight;\n"
    "void main(){\n"
    " if(uMode==1){ frag=uColor; return; }\n"
    " vec3 n=normalize(vNrm); if(!gl_FrontFacing) n=-n;\n"
    " float d=max(dot(n,uLight),0.0); float hemi=0.5+0.5*n.z;\n"
    " vec3 c=uColor.rgb*(0.30+0.25*hemi+0.55*d);\n"
    " vec3 v=normalize(uEye-vPos); vec3 h=normalize(v+uLight);\n"
    " c+=vec3(0.12)*pow(max(dot(n,h),0.0),40.0);\n"
    " if(uMode==2 && n.z>0.9){\n"
    "  vec2 q=vPos.xy/0.1; vec2 g=abs(fract(q+0.5)-0.5)/max(fwidth(q),1e-6);\n"
    "  vec2 Q=vPos.xy; vec2 G=abs(fract(Q+0.5)-0.5)/max(fwidth(Q),1e-6);\n"
    "  float a=0.22*(1.0-min(min(g.x,g.y),1.0))+0.35*(1.0-min(min(G.x,G.y),1.0));\n"
    "  c=mix(c,vec3(0.30,0.30,0.30),a);\n"
    " }\n"
    " frag=vec4(c,uColor.a);\n"
    "}\n";
static const char *HUD_VS = "#version 330 core\n"
                            "layout(location=0) in vec2 aPos; layout(location=1) in vec2 aUV;\n"
                            "uniform vec2 uScreen; out vec2 vUV;\n"
                            "void main(){ vUV=aUV; gl_Position=vec4(aPos.x/uScreen.x*2.0-1.0,"
                            " 1.0-aPos.y/uScreen.y*2.0, 0.0, 1.0); }\n";
static const char *HUD_FS =
    "#version 330 core\n"
    "in vec2 vUV; out vec4 frag; uniform sampler2D uTex; uniform vec4 uColor; uniform int uTex2;\n"
    "void main(){ frag = uTex2==1 ? vec4(uColor.rgb, uColor.a*texture(uTex,vUV).r) : uColor; }\n";

/* ---------------------------------------------------------------- the viewer's state */

enum { HIST = 4096 };

typedef struct glyph {
    float u0, v0, u1, v1;
    int w, h, left, top;
} glyph;

typedef struct viewer {
    const fri_viewer_opts *o;
    const fri_snap_model *m;
    GLFWwindow *win;
    GLuint prog, hud;
    GLint u_vp, u_model, u_nrm, u_color, u_mode, u_eye, u_light;
    GLint h_screen, h_color, h_tex;
    mesh **shapes; /* per body, per shape */
    mesh sphere, cyl, cone;
    GLuint dyn_vao, dyn_vbo; /* lines (3-D) */
    GLuint hud_vao, hud_vbo; /* HUD quads and plots (2-D) */
    GLuint font_tex;
    glyph glyphs[96];
    int font_px, font_adv, font_line;
    bool have_font;
    fri_view view;
    unsigned char *snap; /* a private copy of the newest snapshot */
    size_t snap_size;
    bool have_snap;
    float vp[16];
    fr_vec3 eye, light;
    /* overlays and keys */
    bool show_contacts, show_forces, show_patches, show_frames, show_keys, paused;
    double slowmo;
    int shot_count;
    /* HUD history (merged from the snapshots' recent timing) */
    uint64_t seen;   /* timed ticks merged (the newest + 1) */
    uint64_t merged; /* entries merged (a screenshot has only the last snapshot's) */
    float lat[HIST], step[HIST], felt[HIST];
    double fps_t[64], fps_sim[64];
    uint64_t fps_steps[64];
    int fps_n, fps_i;
    char glfw_err[256];
} viewer;

static viewer *g_err_viewer;
static atomic_bool g_close_request;

void fri_viewer_request_close(void)
{
    atomic_store(&g_close_request, true);
}
static char g_glfw_err[256];
static void on_glfw_error(int code, const char *desc)
{
    snprintf(g_glfw_err, sizeof g_glfw_err, "GLFW error %d: %s", code, desc);
}

/* ---------------------------------------------------------------- matrices */

static void mat_mul(const float *a, const float *b, float *out)
{
    float r[16];
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 4; i++) {
            float s = 0;
            for (int k = 0; k < 4; k++) s += a[k * 4 + i] * b[c * 4 + k];
            r[c * 4 + i] = s;
        }
    memcpy(out, r, sizeof r);
}

/* Model matrix of a pose with a per-axis scale (applied first). */
static void mat_pose(fr_pose p, fr_vec3 sc, float *M)
{
    fr_vec3 ex = fr_q_rotate(p.q, fr_v3(sc.x, 0, 0)), ey = fr_q_rotate(p.q, fr_v3(0, sc.y, 0)),
            ez = fr_q_rotate(p.q, fr_v3(0, 0, sc.z));
    float R[16] = {
        (float)ex.x, (float)ex.y, (float)ex.z, 0, (float)ey.x,  (float)ey.y,  (float)ey.z,  0,
        (float)ez.x, (float)ez.y, (float)ez.z, 0, (float)p.p.x, (float)p.p.y, (float)p.p.z, 1};
    memcpy(M, R, sizeof R);
}

static void draw_mesh(viewer *v, const mesh *m, const float *M, const float *color, int mode)
{
    /* normal matrix: the inverse transpose of R·diag(s) is R·diag(1/s): columns over |column|² */
    float N[9];
    for (int c = 0; c < 3; c++) {
        float l =
            sqrtf(M[c * 4] * M[c * 4] + M[c * 4 + 1] * M[c * 4 + 1] + M[c * 4 + 2] * M[c * 4 + 2]);
        l = l > 0 ? 1.0f / l : 0.0f;
        for (int r = 0; r < 3; r++) N[c * 3 + r] = M[c * 4 + r] * l * l;
    }
    glUniformMatrix4fv(v->u_model, 1, GL_FALSE, M);
    glUniformMatrix3fv(v->u_nrm, 1, GL_FALSE, N);
    glUniform4fv(v->u_color, 1, color);
    glUniform1i(v->u_mode, mode);
    glBindVertexArray(m->vao);
    glDrawArrays(GL_TRIANGLES, 0, m->n);
}

/* A pose whose z axis runs from a to b. */
static fr_pose pose_along(fr_vec3 a, fr_vec3 b, double *len)
{
    fr_vec3 d = fr_v3_sub(b, a);
    *len = fr_v3_norm(d);
    fr_vec3 z = fr_v3(0, 0, 1), u = *len > 0 ? fr_v3_scale(d, 1.0 / *len) : z;
    fr_vec3 ax = fr_v3_cross(z, u);
    double s = fr_v3_norm(ax), c = fr_v3_dot(z, u);
    fr_quat q = s > 1e-12 ? fr_q_axis_angle(fr_v3_scale(ax, 1.0 / s), atan2(s, c))
                : c > 0   ? fr_q_identity()
                          : fr_q(0, 1, 0, 0);
    return (fr_pose){a, q};
}

static void draw_rod(viewer *v, fr_vec3 a, fr_vec3 b, double r, const float *color, int mode)
{
    double len;
    fr_pose p = pose_along(a, b, &len);
    if (len <= 0) return;
    float M[16];
    mat_pose(p, fr_v3(r, r, len), M);
    draw_mesh(v, &v->cyl, M, color, mode);
}

static void draw_arrow(viewer *v, fr_vec3 a, fr_vec3 b, double r, const float *color)
{
    double len;
    fr_pose p = pose_along(a, b, &len);
    if (len <= 1e-9) return;
    double head = fmin(0.35 * len, 4.0 * r);
    float M[16];
    mat_pose(p, fr_v3(r, r, len - head), M);
    draw_mesh(v, &v->cyl, M, color, 1);
    fr_pose ph = {fr_v3_add(a, fr_q_rotate(p.q, fr_v3(0, 0, len - head))), p.q};
    mat_pose(ph, fr_v3(2.2 * r, 2.2 * r, head), M);
    draw_mesh(v, &v->cone, M, color, 1);
}

static void draw_ball(viewer *v, fr_vec3 c, double r, const float *color, int mode)
{
    float M[16];
    mat_pose((fr_pose){c, fr_q_identity()}, fr_v3(r, r, r), M);
    draw_mesh(v, &v->sphere, M, color, mode);
}

static void draw_lines(viewer *v, const float *xyz, int n, const float *color, GLenum mode)
{
    float I[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    float N[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    glUniformMatrix4fv(v->u_model, 1, GL_FALSE, I);
    glUniformMatrix3fv(v->u_nrm, 1, GL_FALSE, N);
    glUniform4fv(v->u_color, 1, color);
    glUniform1i(v->u_mode, 1);
    glBindVertexArray(v->dyn_vao);
    glBindBuffer(GL_ARRAY_BUFFER, v->dyn_vbo);
    float *buf = malloc((size_t)n * 6 * sizeof(float));
    if (!buf) return;
    for (int i = 0; i < n; i++) {
        memcpy(buf + 6 * i, xyz + 3 * i, 3 * sizeof(float));
        buf[6 * i + 3] = buf[6 * i + 4] = 0, buf[6 * i + 5] = 1;
    }
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)n * 6 * (GLsizeiptr)sizeof(float), buf,
                 GL_STREAM_DRAW);
    free(buf);
    glDrawArrays(mode, 0, n);
}

/* ---------------------------------------------------------------- HUD */

static void load_font(viewer *v)
{
    const char *env = getenv("FURERU_FONT");
    const char *cands[] = {env && env[0] ? env : NULL,
                           "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                           "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", NULL};
    FT_Library ft;
    if (FT_Init_FreeType(&ft)) return;
    FT_Face face = NULL;
    for (int i = 0; i < 3 && !face; i++)
        if (cands[i] && FT_New_Face(ft, cands[i], 0, &face)) face = NULL;
    if (!face) {
        fprintf(stderr, "fureru: viewer: no font found (fonts-dejavu-core); the HUD has no text\n");
        FT_Done_FreeType(ft);
        return;
    }
    v->font_px = 14;
    FT_Set_Pixel_Sizes(face, 0, (FT_UInt)v->font_px);
    enum { CELL = 24, COLS = 16, ROWS = 6 };
    int W = CELL * COLS, H = CELL * ROWS;
    unsigned char *atlas = calloc((size_t)W * H, 1);
    for (int c = 32; c < 127 && atlas; c++) {
        if (FT_Load_Char(face, (FT_ULong)c, FT_LOAD_RENDER)) continue;
        FT_GlyphSlot g = face->glyph;
        int cx = ((c - 32) % COLS) * CELL, cy = ((c - 32) / COLS) * CELL;
        int bw = (int)g->bitmap.width < CELL ? (int)g->bitmap.width : CELL;
        int bh = (int)g->bitmap.rows < CELL ? (int)g->bitmap.rows : CELL;
        for (int y = 0; y < bh; y++)
            memcpy(atlas + (size_t)(cy + y) * W + cx, g->bitmap.buffer + y * g->bitmap.pitch,
                   (size_t)bw);
        glyph *gl = &v->glyphs[c - 32];
        gl->w = bw, gl->h = bh, gl->left = g->bitmap_left, gl->top = g->bitmap_top;
        gl->u0 = (float)cx / W, gl->v0 = (float)cy / H;
        gl->u1 = (float)(cx + bw) / W, gl->v1 = (float)(cy + bh) / H;
        if (c == 'M') v->font_adv = (int)(g->advance.x >> 6);
    }
    v->font_line = v->font_px + 4;
    glGenTextures(1, &v->font_tex);
    glBindTexture(GL_TEXTURE_2D, v->font_tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, W, H, 0, GL_RED, GL_UNSIGNED_BYTE, atlas);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    free(atlas);
    FT_Done_Face(face);
    FT_Done_FreeType(ft);
    v->have_font = v->font_adv > 0;
}

static void hud_draw(viewer *v, const float *xyuv, int n, const float *color, GLenum mode,
                     bool textured)
{
    glUseProgram(v->hud);
    glUniform4fv(v->h_color, 1, color);
    glUniform1i(v->h_tex, textured ? 1 : 0);
    glBindVertexArray(v->hud_vao);
    glBindBuffer(GL_ARRAY_BUFFER, v->hud_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)n * 4 * (GLsizeiptr)sizeof(float), xyuv,
                 GL_STREAM_DRAW);
    glDrawArrays(mode, 0, n);
}

static void hud_rect(viewer *v, float x, float y, float w, float h, const float *color)
{
    float q[24] = {x, y, 0, 0, x + w, y,     0, 0, x + w, y + h, 0, 0,
                   x, y, 0, 0, x + w, y + h, 0, 0, x,     y + h, 0, 0};
    hud_draw(v, q, 6, color, GL_TRIANGLES, false);
}

static void hud_text(viewer *v, float x, float y, const char *s, const float *color)
{
    if (!v->have_font) return;
    size_t n = strlen(s);
    float *q = malloc(n * 24 * sizeof(float) + 1);
    if (!q) return;
    int k = 0;
    for (size_t i = 0; i < n; i++, x += (float)v->font_adv) {
        int c = (unsigned char)s[i];
        if (c < 33 || c > 126) continue;
        const glyph *g = &v->glyphs[c - 32];
        float x0 = x + (float)g->left, y0 = y - (float)g->top;
        float x1 = x0 + (float)g->w, y1 = y0 + (float)g->h;
        float t[24] = {x0, y0, g->u0, g->v0, x1, y0, g->u1, g->v0, x1, y1, g->u1, g->v1,
                       x0, y0, g->u0, g->v0, x1, y1, g->u1, g->v1, x0, y1, g->u0, g->v1};
        memcpy(q + 24 * k++, t, sizeof t);
    }
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, v->font_tex);
    hud_draw(v, q, 6 * k, color, GL_TRIANGLES, true);
    free(q);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The p99 of the last n entries of a ring. */
static double ring_p99(const float *ring, uint64_t seen, int n)
{
    if (seen == 0) return 0;
    if ((uint64_t)n > seen) n = (int)seen;
    static float tmp[HIST];
    for (int i = 0; i < n; i++) tmp[i] = ring[(seen - 1 - (uint64_t)i) % HIST];
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_float);
    return tmp[(int)(0.99 * (n - 1))];
}

static void merge_recent(viewer *v, const fri_snap *sn)
{
    uint64_t newest = sn->recent_tick; /* timed ticks so far: entry i is tick newest − 1 − i */
    for (int i = sn->recent_n - 1; i >= 0; i--) {
        uint64_t t = newest - 1 - (uint64_t)i;
        if (t < v->seen) continue;
        v->lat[t % HIST] = sn->recent_latency_us[i];
        v->step[t % HIST] = sn->recent_step_us[i];
        v->felt[t % HIST] = sn->recent_felt[i];
        v->seen = t + 1;
        v->merged++;
    }
}

static void draw_hud(viewer *v, const fri_snap *sn, int w, int h)
{
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(v->hud);
    glUniform2f(v->h_screen, (float)w, (float)h);
    const float panel[4] = {0.05f, 0.06f, 0.08f, 0.62f}, white[4] = {0.95f, 0.95f, 0.95f, 1},
                dim[4] = {0.75f, 0.78f, 0.82f, 1};
    int lh = v->have_font ? v->font_line : 16;
    char line[12][160];
    int nl = 0;
    /* rates over the last second of the viewer's clock */
    double rtf = 0, rate = 0;
    if (v->fps_n >= 2) {
        int a = (v->fps_i - v->fps_n + 64) % 64, b = (v->fps_i - 1 + 64) % 64;
        double dtw = v->fps_t[b] - v->fps_t[a];
        if (dtw > 0) {
            rtf = (v->fps_sim[b] - v->fps_sim[a]) / dtw;
            rate = (double)(v->fps_steps[b] - v->fps_steps[a]) / dtw;
        }
    }
    double felt = fr_v3_norm(sn->felt);
    snprintf(line[nl++], 160, "%s   t = %.3f s%s", v->m->scene, sn->time,
             (sn->flags & FRI_SNAP_FINISHED) ? "   [finished]"
             : (sn->flags & FRI_SNAP_PAUSED) ? "   [paused]"
                                             : "");
    if (v->fps_n >= 2)
        snprintf(line[nl++], 160, "real-time factor %.2f   %.0f ticks/s%s", rtf, rate,
                 v->slowmo > 1 ? "   (slow motion)" : "");
    else /* a screenshot: one frame, no rates */
        snprintf(line[nl++], 160, "tick %llu   dt %.3g ms", (unsigned long long)sn->steps,
                 v->m->dt * 1e3);
    snprintf(line[nl++], 160, "wake-up p99 %.0f us   step p99 %.0f us   overruns %llu",
             ring_p99(v->lat, v->seen, 1000), ring_p99(v->step, v->seen, 1000),
             (unsigned long long)sn->overruns);
    snprintf(line[nl++], 160, "energy %.4g J   work %.4g J   contacts %d", sn->energy, sn->work,
             sn->ncontacts);
    if (sn->flags & FRI_SNAP_HAS_DEVICE)
        snprintf(line[nl++], 160, "felt force %.2f N  (%+.2f %+.2f %+.2f)%s", felt, sn->felt.x,
                 sn->felt.y, sn->felt.z, v->view.mouse ? "   device: mouse (ctrl+drag)" : "");
    float pw = 560, ph = (float)(nl * lh + 10);
    hud_rect(v, 8, 8, pw, ph, panel);
    for (int i = 0; i < nl; i++)
        hud_text(v, 16, 8 + (float)(lh * (i + 1)), line[i], i == 0 ? white : dim);
    /* the oscilloscope of the felt force: the last 2 s */
    if ((sn->flags & FRI_SNAP_HAS_DEVICE) && v->merged > 4 * FRI_SNAP_RECENT) {
        float gx = 8, gy = 8 + ph + 6, gw = 360, gh = 90;
        hud_rect(v, gx, gy, gw, gh, panel);
        double fmax = sn->max_force > 0 ? sn->max_force : 10;
        int n = v->seen < 2000 ? (int)v->seen : 2000;
        float *pts = malloc((size_t)(n + 1) * 4 * sizeof(float));
        if (pts && n > 1) {
            for (int i = 0; i < n; i++) {
                float f = v->felt[(v->seen - (uint64_t)n + (uint64_t)i) % HIST];
                pts[4 * i] = gx + gw * (float)i / 1999.0f;
                pts[4 * i + 1] = gy + gh - 4 - (gh - 8) * (float)fmin(1.0, f / fmax);
                pts[4 * i + 2] = pts[4 * i + 3] = 0;
            }
            hud_draw(v, pts, n, C_FELT, GL_LINE_STRIP, false);
        }
        free(pts);
        char lab[64];
        snprintf(lab, sizeof lab, "|felt| 0..%.0f N, 2 s", fmax);
        hud_text(v, gx + 6, gy + (float)lh, lab, dim);
    }
    if (v->show_keys) {
        static const char *const keys[] = {
            "space pause/resume   n single step   s slow motion",
            "c contacts  f forces  p patches  b body frames",
            "r camera home   x screenshot   h keys   esc quit",
            "mouse: drag orbit, right/shift drag pan, wheel zoom",
            "ctrl+drag moves the pointer (mouse device), ctrl+wheel depth"};
        int nk = 5;
        float kh = (float)(nk * lh + 10);
        hud_rect(v, 8, (float)h - kh - 8, 520, kh, panel);
        for (int i = 0; i < nk; i++)
            hud_text(v, 16, (float)h - kh - 8 + (float)(lh * (i + 1)), keys[i], dim);
    }
    glEnable(GL_DEPTH_TEST);
}

/* ---------------------------------------------------------------- the scene */

static void draw_scene(viewer *v, const fri_snap *sn, int w, int h)
{
    /* sky: a gradient drawn as a full-screen quad */
    glDisable(GL_DEPTH_TEST);
    glUseProgram(v->hud);
    glUniform2f(v->h_screen, (float)w, (float)h);
    glUniform1i(v->h_tex, 0);
    float sky[24] = {0, 0, 0, 0, (float)w, 0,        0, 0, (float)w, (float)h, 0, 0,
                     0, 0, 0, 0, (float)w, (float)h, 0, 0, 0,        (float)h, 0, 0};
    for (int i = 0; i < 4; i++) {
        /* two halves: top colour to bottom colour */
        (void)i;
    }
    const float top[4] = {SKY_TOP[0], SKY_TOP[1], SKY_TOP[2], 1};
    const float low[4] = {SKY_LOW[0], SKY_LOW[1], SKY_LOW[2], 1};
    hud_draw(v, sky, 6, low, GL_TRIANGLES, false);
    float band[24] = {0,        0,
                      0,        0,
                      (float)w, 0,
                      0,        0,
                      (float)w, (float)h * 0.35f,
                      0,        0,
                      0,        0,
                      0,        0,
                      (float)w, (float)h * 0.35f,
                      0,        0,
                      0,        (float)h * 0.35f,
                      0,        0};
    hud_draw(v, band, 6, top, GL_TRIANGLES, false);
    glEnable(GL_DEPTH_TEST);

    float view[16], proj[16];
    fri_camera_matrices(&v->view.cam, w, h, view, proj);
    mat_mul(proj, view, v->vp);
    fr_vec3 right, up, fwd;
    fri_camera_frame(&v->view.cam, &v->eye, &right, &up, &fwd);
    v->light = fr_v3_normalize(fr_v3(0.35, -0.45, 1.0));
    glUseProgram(v->prog);
    glUniformMatrix4fv(v->u_vp, 1, GL_FALSE, v->vp);
    glUniform3f(v->u_eye, (float)v->eye.x, (float)v->eye.y, (float)v->eye.z);
    glUniform3f(v->u_light, (float)v->light.x, (float)v->light.y, (float)v->light.z);

    const fr_pose *poses = fri_snap_bodies_c(sn);
    const fri_snap_model *m = v->m;
    /* bodies */
    for (int k = 0; k < m->nbodies; k++) {
        const fri_snap_body *b = &m->bodies[k];
        const float *col = b->kind == FRI_SNAP_STATIC ? C_STATIC
                           : b->kind == FRI_SNAP_LINK ? C_LINK
                           : b->kind == FRI_SNAP_PROXY
                               ? C_PROXY
                               : PALETTE[k % (int)(sizeof PALETTE / sizeof PALETTE[0])];
        for (int i = 0; i < b->nshapes; i++) {
            float M[16];
            mat_pose(fr_pose_mul(poses[k], b->shapes[i].local), fr_v3(1, 1, 1), M);
            draw_mesh(v, &v->shapes[k][i], M, col, b->kind == FRI_SNAP_STATIC ? 2 : 0);
        }
    }
    /* planar shadows of the moving bodies on z = 0 (once per pixel: the stencil) */
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glEnable(GL_STENCIL_TEST);
    glClear(GL_STENCIL_BUFFER_BIT);
    glStencilFunc(GL_EQUAL, 0, 0xff);
    glStencilOp(GL_KEEP, GL_KEEP, GL_INCR);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(-1.0f, -4.0f);
    glDepthMask(GL_FALSE);
    const float shadow[4] = {0.0f, 0.0f, 0.05f, 0.33f};
    double lx = v->light.x / v->light.z, ly = v->light.y / v->light.z;
    float S[16] = {1, 0, 0, 0, 0, 1, 0, 0, (float)-lx, (float)-ly, 0, 0, 0, 0, 0.0005f, 1};
    for (int k = 0; k < m->nbodies; k++) {
        const fri_snap_body *b = &m->bodies[k];
        if (b->kind == FRI_SNAP_STATIC) continue;
        for (int i = 0; i < b->nshapes; i++) {
            float M[16], SM[16];
            fr_pose p = fr_pose_mul(poses[k], b->shapes[i].local);
            if (p.p.z < -0.01) continue;
            mat_pose(p, fr_v3(1, 1, 1), M);
            mat_mul(S, M, SM);
            draw_mesh(v, &v->shapes[k][i], SM, shadow, 1);
        }
    }
    glDepthMask(GL_TRUE);
    glDisable(GL_POLYGON_OFFSET_FILL);
    glDisable(GL_STENCIL_TEST);
    glDisable(GL_BLEND);

    double sz = m->size;
    /* contacts */
    const fri_snap_contact *cs = fri_snap_contacts_c(sn);
    for (int i = 0; i < sn->ncontacts; i++) {
        const fri_snap_contact *c = &cs[i];
        if (v->show_contacts) {
            draw_ball(v, c->point, 0.012 * sz, C_NORMAL, 1);
            draw_arrow(v, c->point, fr_v3_add(c->point, fr_v3_scale(c->normal, 0.12 * sz)),
                       0.004 * sz, C_NORMAL);
        }
        if (v->show_forces) {
            /* the force on the moving body of the pair (on B unless B is static) */
            fr_vec3 F = c->force;
            if (c->body_b >= 0 && m->bodies[c->body_b].kind == FRI_SNAP_STATIC)
                F = fr_v3_scale(F, -1.0);
            double l = fr_v3_norm(F) / m->weight * sz;
            if (l > 1e-4)
                draw_arrow(v, c->point, fr_v3_add(c->point, fr_v3_scale(F, l / fr_v3_norm(F))),
                           0.006 * sz, C_CFORCE);
        }
        if (v->show_patches && c->area > 0) {
            /* the ellipse with the patch's area and second moments about its centroid */
            double a = c->ixx, b = c->ixy, d = c->iyy;
            double tr = 0.5 * (a + d), det = sqrt(fmax(0.0, 0.25 * (a - d) * (a - d) + b * b));
            double l1 = tr + det, l2 = fmax(tr - det, 0.0);
            double th = 0.5 * atan2(2 * b, a - d);
            /* an ellipse with semi-axes (p, q) has I = A p²/4 along p: p = 2 sqrt(I/A) */
            double p1 = 2 * sqrt(l1 / c->area), p2 = 2 * sqrt(l2 / c->area);
            fr_vec3 ctr = fr_v3_add(
                c->point, fr_v3_add(fr_v3_scale(c->t1, c->ax), fr_v3_scale(c->t2, c->ay)));
            float loop[3 * 33];
            for (int s = 0; s < 33; s++) {
                double ang = 2 * 3.14159265358979 * s / 32;
                double x = p1 * cos(ang), y = p2 * sin(ang);
                double X = x * cos(th) - y * sin(th), Y = x * sin(th) + y * cos(th);
                fr_vec3 q = fr_v3_add(ctr, fr_v3_add(fr_v3_scale(c->t1, X), fr_v3_scale(c->t2, Y)));
                q = fr_v3_add(q, fr_v3_scale(c->normal, 0.001 * sz));
                loop[3 * s] = (float)q.x, loop[3 * s + 1] = (float)q.y,
                         loop[3 * s + 2] = (float)q.z;
            }
            draw_lines(v, loop, 33, C_PATCH, GL_LINE_STRIP);
        }
    }
    /* body frames */
    if (v->show_frames) {
        for (int k = 0; k < m->nbodies; k++) {
            if (m->bodies[k].kind == FRI_SNAP_STATIC) continue;
            static const float cx[4] = {0.9f, 0.1f, 0.1f, 1}, cy[4] = {0.1f, 0.8f, 0.1f, 1},
                               cz[4] = {0.1f, 0.2f, 0.9f, 1};
            const float *cc[3] = {cx, cy, cz};
            for (int a = 0; a < 3; a++) {
                fr_vec3 e = fr_v3_zero();
                ((double *)&e)[a] = 0.08 * sz;
                fr_vec3 t = fr_pose_apply(poses[k], e);
                float seg[6] = {(float)poses[k].p.x, (float)poses[k].p.y, (float)poses[k].p.z,
                                (float)t.x,          (float)t.y,          (float)t.z};
                draw_lines(v, seg, 2, cc[a], GL_LINES);
            }
        }
    }
    /* the pointer, the proxy's spring and the felt force */
    if (sn->flags & FRI_SNAP_HAS_DEVICE) {
        double r = 0.02 * sz;
        for (int k = 0; k < m->nbodies; k++)
            if (m->bodies[k].kind == FRI_SNAP_PROXY && m->bodies[k].nshapes)
                r = 0.6 * m->bodies[k].shapes[0].shape->bound_radius;
        fr_vec3 ptr = sn->pointer;
        if (v->view.mouse && v->view.pointer_set) ptr = v->view.pointer_world;
        draw_rod(v, ptr, sn->proxy, 0.12 * r, C_SPRING, 0);
        /* the hand is always in sight: the pointer and its felt force are drawn over whatever
         * hides them (the pointer is often inside what it presses) */
        glDisable(GL_DEPTH_TEST);
        draw_ball(v, ptr, r, C_POINTER, 1);
        double fl = FRI_VIEW_FELT_SCALE * (m->ws_scale > 0 ? m->ws_scale : 1.0);
        fr_vec3 tip = fr_v3_add(ptr, fr_v3_scale(sn->felt_world, fl));
        draw_arrow(v, ptr, tip, 0.3 * r, C_FELT);
        glEnable(GL_DEPTH_TEST);
    }
}

static void render(viewer *v, int w, int h)
{
    glViewport(0, 0, w, h);
    glClearColor(SKY_LOW[0], SKY_LOW[1], SKY_LOW[2], 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT);
    if (!v->have_snap) return;
    const fri_snap *sn = (const fri_snap *)v->snap;
    draw_scene(v, sn, w, h);
    if (!v->o->no_hud) draw_hud(v, sn, w, h);
}

/* Copy the newest snapshot (the slot is held only for the copy). */
static bool take_snapshot(viewer *v)
{
    int slot;
    const void *p = fri_tbuf_acquire(v->o->snaps, &slot);
    if (!p) return false;
    memcpy(v->snap, p, v->snap_size);
    fri_tbuf_release(v->o->snaps, slot);
    v->have_snap = true;
    const fri_snap *sn = (const fri_snap *)v->snap;
    if (sn->checksum && fri_snap_checksum(sn) != sn->checksum)
        fprintf(stderr, "fureru: viewer: a torn snapshot (checksum) at tick %llu\n",
                (unsigned long long)sn->tick);
    merge_recent(v, sn);
    v->paused = (sn->flags & FRI_SNAP_PAUSED) != 0;
    return true;
}

int fri_write_png(const char *path, const unsigned char *rgb, int w, int h)
{
    FILE *f = fopen(path, "wb");
    if (!f) return FR_ERR_IO;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return FR_ERR_IO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(rgb + (size_t)y * 3 * w));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return fclose(f) == 0 ? FR_OK : FR_ERR_IO;
}

/* Render into an off-screen framebuffer and write the picture. */
static int screenshot(viewer *v, const char *path, int w, int h)
{
    GLuint fbo, rb[2];
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glGenRenderbuffers(2, rb);
    glBindRenderbuffer(GL_RENDERBUFFER, rb[0]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb[0]);
    glBindRenderbuffer(GL_RENDERBUFFER, rb[1]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER, rb[1]);
    int err = FR_OK;
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        err = FR_ERR_UNSUPPORTED;
    unsigned char *px = malloc((size_t)w * h * 3), *flip = malloc((size_t)w * h * 3);
    if (!px || !flip) err = FR_ERR_NOMEM;
    if (!err) {
        int saved_w = v->view.width, saved_h = v->view.height;
        v->view.width = w, v->view.height = h;
        render(v, w, h);
        glFinish();
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, px);
        for (int y = 0; y < h; y++)
            memcpy(flip + (size_t)y * 3 * w, px + (size_t)(h - 1 - y) * 3 * w, (size_t)3 * w);
        err = fri_write_png(path, flip, w, h);
        v->view.width = saved_w, v->view.height = saved_h;
    }
    free(px);
    free(flip);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteRenderbuffers(2, rb);
    glDeleteFramebuffers(1, &fbo);
    return err;
}

/* ---------------------------------------------------------------- input */

static int mods_of(int glfw_mods)
{
    return ((glfw_mods & GLFW_MOD_SHIFT) ? FRI_MOD_SHIFT : 0) |
           ((glfw_mods & GLFW_MOD_CONTROL) ? FRI_MOD_CTRL : 0) |
           ((glfw_mods & GLFW_MOD_ALT) ? FRI_MOD_ALT : 0);
}

static void on_button(GLFWwindow *w, int button, int action, int mods)
{
    viewer *v = glfwGetWindowUserPointer(w);
    double x, y;
    glfwGetCursorPos(w, &x, &y);
    int b = button == GLFW_MOUSE_BUTTON_LEFT    ? FRI_BUTTON_LEFT
            : button == GLFW_MOUSE_BUTTON_RIGHT ? FRI_BUTTON_RIGHT
                                                : FRI_BUTTON_MIDDLE;
    fri_view_button(&v->view, b, action == GLFW_PRESS, mods_of(mods), x, y);
}

static void on_motion(GLFWwindow *w, double x, double y)
{
    viewer *v = glfwGetWindowUserPointer(w);
    fri_view_motion(&v->view, x, y);
}

static void on_scroll(GLFWwindow *w, double dx, double dy)
{
    (void)dx;
    viewer *v = glfwGetWindowUserPointer(w);
    int mods = (glfwGetKey(w, GLFW_KEY_LEFT_CONTROL) == GLFW_PRESS ||
                glfwGetKey(w, GLFW_KEY_RIGHT_CONTROL) == GLFW_PRESS)
                   ? FRI_MOD_CTRL
                   : 0;
    fri_view_scroll(&v->view, dy, mods);
}

static void command(viewer *v, int code, double value)
{
    if (v->o->command) v->o->command(v->o->ctx, code, value);
}

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods)
{
    (void)scancode, (void)mods;
    if (action != GLFW_PRESS && action != GLFW_REPEAT) return;
    viewer *v = glfwGetWindowUserPointer(w);
    switch (key) {
    case GLFW_KEY_ESCAPE:
    case GLFW_KEY_Q:
        glfwSetWindowShouldClose(w, GLFW_TRUE);
        break;
    case GLFW_KEY_SPACE:
        command(v, FRI_CMD_PAUSE, v->paused ? 0.0 : 1.0);
        break;
    case GLFW_KEY_N:
    case GLFW_KEY_RIGHT:
        command(v, FRI_CMD_STEP, 0.0);
        break;
    case GLFW_KEY_S:
        v->slowmo = v->slowmo >= 10 ? 1 : v->slowmo >= 5 ? 10 : v->slowmo >= 2 ? 5 : 2;
        command(v, FRI_CMD_SLOWMO, v->slowmo);
        break;
    case GLFW_KEY_C:
        v->show_contacts = !v->show_contacts;
        break;
    case GLFW_KEY_F:
        v->show_forces = !v->show_forces;
        break;
    case GLFW_KEY_P:
        v->show_patches = !v->show_patches;
        break;
    case GLFW_KEY_B:
        v->show_frames = !v->show_frames;
        break;
    case GLFW_KEY_H:
        v->show_keys = !v->show_keys;
        break;
    case GLFW_KEY_R:
        v->view.cam = v->view.home;
        break;
    case GLFW_KEY_X:
    case GLFW_KEY_F12: {
        char name[64];
        snprintf(name, sizeof name, "fureru-screenshot-%03d.png", ++v->shot_count);
        int fw, fh;
        glfwGetFramebufferSize(w, &fw, &fh);
        if (screenshot(v, name, fw, fh) == FR_OK)
            fprintf(stderr, "fureru: viewer: wrote %s\n", name);
        break;
    }
    default:
        break;
    }
}

static void on_resize(GLFWwindow *w, int width, int height)
{
    viewer *v = glfwGetWindowUserPointer(w);
    v->view.width = width, v->view.height = height;
}

/* ---------------------------------------------------------------- set-up and the loop */

bool fri_viewer_available(void)
{
    const char *d = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    return (d && d[0]) || (wl && wl[0]);
}

static int setup_gl(viewer *v, char *msg, size_t n)
{
    v->prog = program(MESH_VS, MESH_FS, msg, n);
    v->hud = program(HUD_VS, HUD_FS, msg, n);
    if (!v->prog || !v->hud) return FR_ERR_UNSUPPORTED;
    v->u_vp = glGetUniformLocation(v->prog, "uVP");
    v->u_model = glGetUniformLocation(v->prog, "uModel");
    v->u_nrm = glGetUniformLocation(v->prog, "uNrm");
    v->u_color = glGetUniformLocation(v->prog, "uColor");
    v->u_mode = glGetUniformLocation(v->prog, "uMode");
    v->u_eye = glGetUniformLocation(v->prog, "uEye");
    v->u_light = glGetUniformLocation(v->prog, "uLight");
    v->h_screen = glGetUniformLocation(v->hud, "uScreen");
    v->h_color = glGetUniformLocation(v->hud, "uColor");
    v->h_tex = glGetUniformLocation(v->hud, "uTex2");
    glUseProgram(v->hud);
    glUniform1i(glGetUniformLocation(v->hud, "uTex"), 0);
    const fri_snap_model *m = v->m;
    v->shapes = calloc((size_t)m->nbodies + 1, sizeof *v->shapes);
    if (!v->shapes) return FR_ERR_NOMEM;
    for (int k = 0; k < m->nbodies; k++) {
        v->shapes[k] = calloc((size_t)m->bodies[k].nshapes + 1, sizeof **v->shapes);
        if (!v->shapes[k]) return FR_ERR_NOMEM;
        for (int i = 0; i < m->bodies[k].nshapes; i++)
            if (mesh_from_shape(&v->shapes[k][i], m->bodies[k].shapes[i].shape))
                return FR_ERR_NOMEM;
    }
    mesh_sphere(&v->sphere);
    mesh_cyl_cone(&v->cyl, false);
    mesh_cyl_cone(&v->cone, true);
    glGenVertexArrays(1, &v->dyn_vao);
    glGenBuffers(1, &v->dyn_vbo);
    glBindVertexArray(v->dyn_vao);
    glBindBuffer(GL_ARRAY_BUFFER, v->dyn_vbo);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)0);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    glGenVertexArrays(1, &v->hud_vao);
    glGenBuffers(1, &v->hud_vbo);
    glBindVertexArray(v->hud_vao);
    glBindBuffer(GL_ARRAY_BUFFER, v->hud_vbo);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), (void *)0);
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), (void *)(2 * sizeof(float)));
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    load_font(v);
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_MULTISAMPLE);
    return FR_OK;
}

static void teardown(viewer *v)
{
    if (v->shapes) {
        for (int k = 0; k < v->m->nbodies; k++) {
            for (int i = 0; v->shapes[k] && i < v->m->bodies[k].nshapes; i++) {
                glDeleteBuffers(1, &v->shapes[k][i].vbo);
                glDeleteVertexArrays(1, &v->shapes[k][i].vao);
            }
            free(v->shapes[k]);
        }
        free(v->shapes);
    }
    free(v->snap);
    if (v->win) glfwDestroyWindow(v->win);
    glfwTerminate();
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int fri_viewer_run(const fri_viewer_opts *o, char *msg, size_t msglen)
{
    static viewer vv;
    viewer *v = &vv;
    memset(v, 0, sizeof *v);
    v->o = o;
    v->m = o->model;
    v->slowmo = 1;
    v->show_contacts = false;
    v->show_forces = true;
    v->show_patches = true;
    v->show_keys = true;
    g_err_viewer = v;
    snprintf(msg, msglen, "%s", "");
    atomic_store(&g_close_request, false);
    int W = o->width > 0 ? o->width : 1280, H = o->height > 0 ? o->height : 720;
    v->snap_size = o->snaps->slot_size;
    v->snap = malloc(v->snap_size);
    if (!v->snap) return FR_ERR_NOMEM;
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        snprintf(msg, msglen, "cannot open the display (%s)", g_glfw_err);
        free(v->snap);
        return FR_ERR_UNSUPPORTED;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_STENCIL_BITS, 8);
    const char *msaa = getenv("FURERU_VIEWER_SAMPLES");
    /* no multisampling unless asked (FURERU_VIEWER_SAMPLES=4): in software (Mesa's llvmpipe
     * under Xvfb) 4 samples cut the frame rate from 20 to 7 per second on 2 loaded vCPUs */
    glfwWindowHint(GLFW_SAMPLES, o->screenshot ? 0 : msaa ? atoi(msaa) : 0);
    if (o->screenshot) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    char title[200];
    snprintf(title, sizeof title, "fureru: %s", v->m->scene);
    v->win = glfwCreateWindow(o->screenshot ? 64 : W, o->screenshot ? 64 : H, title, NULL, NULL);
    if (!v->win) {
        snprintf(msg, msglen, "no OpenGL 3.3 core context (%s)", g_glfw_err);
        teardown(v);
        return FR_ERR_UNSUPPORTED;
    }
    glfwMakeContextCurrent(v->win);
    glfwSwapInterval(1);
    int err = setup_gl(v, msg, msglen);
    if (err) {
        if (!msg[0]) snprintf(msg, msglen, "OpenGL set-up failed");
        teardown(v);
        return err;
    }
    /* wait for the first snapshot (the tick thread publishes one before its first tick) */
    for (int i = 0; i < 5000 && !take_snapshot(v); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (!v->have_snap) {
        snprintf(msg, msglen, "no snapshot from the simulation");
        teardown(v);
        return FR_ERR_TIMEOUT;
    }
    const fri_snap *sn = (const fri_snap *)v->snap;
    fri_camera cam;
    if (o->camera && o->camera->has_camera)
        cam = (fri_camera){o->camera->target, o->camera->distance, o->camera->yaw, o->camera->pitch,
                           o->camera->fov};
    else
        cam = fri_camera_frame_scene(v->m, fri_snap_bodies_c(sn));
    fri_view_init(&v->view, v->m, &cam, W, H, o->mouse);
    fri_view_sync_pointer(&v->view, sn);
    if (o->screenshot) {
        v->show_keys = false;
        err = screenshot(v, o->screenshot, W, H);
        if (err) snprintf(msg, msglen, "cannot write %s: %s", o->screenshot, fr_strerror(err));
        teardown(v);
        return err;
    }
    glfwSetWindowUserPointer(v->win, v);
    glfwSetMouseButtonCallback(v->win, on_button);
    glfwSetCursorPosCallback(v->win, on_motion);
    glfwSetScrollCallback(v->win, on_scroll);
    glfwSetKeyCallback(v->win, on_key);
    glfwSetWindowSizeCallback(v->win, on_resize);
    int ww, wh;
    glfwGetWindowSize(v->win, &ww, &wh);
    v->view.width = ww, v->view.height = wh;
    double frame_start = now_s();
    long frames = 0;
    while (!glfwWindowShouldClose(v->win) && !atomic_load(&g_close_request)) {
        /* at most 60 frames a second even where swapping does not wait for the display (Xvfb,
         * some drivers): the viewer must not take a CPU the tick thread may need */
        double el = now_s() - frame_start;
        if (el < 1.0 / 60.0) {
            double rest = 1.0 / 60.0 - el;
            struct timespec ts = {0, (long)(rest * 1e9)};
            nanosleep(&ts, NULL);
        }
        frame_start = now_s();
        take_snapshot(v);
        sn = (const fri_snap *)v->snap;
        fri_view_sync_pointer(&v->view, sn);
        v->fps_t[v->fps_i] = now_s();
        v->fps_sim[v->fps_i] = sn->time;
        v->fps_steps[v->fps_i] = sn->steps;
        v->fps_i = (v->fps_i + 1) % 64;
        if (v->fps_n < 64) v->fps_n++;
        int fw, fh;
        glfwGetFramebufferSize(v->win, &fw, &fh);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        render(v, fw, fh);
        glfwSwapBuffers(v->win);
        glfwPollEvents();
        frames++;
        if (o->frames) atomic_store(o->frames, frames);
    }
    if (o->stop) o->stop(o->ctx);
    teardown(v);
    return FR_OK;
}
