/*
 * The work memory of the Muller–Preparata intersection (mp.c) and its output, sized for pairs
 * of polytopes with at most max_faces faces each, from an arena (world creation) or malloc.
 * N = 2·max_faces planes, 2N + 8 triangles (a triangulated sphere with N vertices has 2N − 4),
 * horizons of N + 4 edges, 4N + 16 vertex ids; outputs at most 2N + 8 vertices, N faces and 6N
 * indices.
 */
#include <stdlib.h>
#include <string.h>

#include "collision_internal.h"

static size_t al64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static void sizes(int max_faces, int *planes, int *tris, int *hz, int *vids)
{
    int n = 2 * (max_faces > 4 ? max_faces : 4);
    *planes = n;
    *tris = 2 * n + 8;
    *hz = n + 4;
    *vids = 2 * *tris;
}

size_t fr_collide_memory(int max_faces)
{
    int n, t, h, v;
    sizes(max_faces, &n, &t, &h, &v);
    size_t s = 0;
    s += al64(sizeof(fr_vec3) * (size_t)n) + al64(sizeof(double) * (size_t)n) +
         2 * al64(sizeof(int) * (size_t)n);
    s += al64(sizeof(fri_mp_tri) * (size_t)t) + 4 * al64(sizeof(int) * (size_t)t);
    s += al64(sizeof(fri_mp_edge) * (size_t)h) + 2 * al64(sizeof(int) * (size_t)v);
    /* output */
    s += al64(sizeof(fr_vec3) * (size_t)t) + al64(sizeof(int) * 6 * (size_t)n) +
         2 * al64(sizeof(int) * (size_t)n) + al64((size_t)n) + al64(sizeof(fr_vec3) * (size_t)n);
    return s + 64;
}

static void *get(fr_arena *a, size_t bytes)
{
    if (a) return fr_arena_alloc(a, bytes);
    void *p = NULL;
    if (posix_memalign(&p, 64, al64(bytes ? bytes : 1))) return NULL;
    memset(p, 0, bytes);
    return p;
}

void fr_collide_work_free(fr_collide_work *w)
{
    /* only for malloc'ed work: arena memory is released with the arena */
    free(w->pn);
    free(w->pd);
    free(w->plane_mark);
    free(w->plane_edge);
    free(w->tri);
    free(w->stack);
    free(w->free_tri);
    free(w->scratch);
    free(w->scratch_mark);
    free(w->hz);
    free(w->vid_mark);
    free(w->vid_map);
    memset(w, 0, sizeof *w);
}

int fr_collide_work_init(fr_collide_work *w, int max_faces, fr_arena *arena)
{
    memset(w, 0, sizeof *w);
    if (max_faces < 4) max_faces = 4;
    int n, t, h, v;
    sizes(max_faces, &n, &t, &h, &v);
    w->max_planes = n;
    w->max_tris = t;
    w->max_hz = h;
    w->max_vids = v;
    w->pn = get(arena, sizeof(fr_vec3) * (size_t)n);
    w->pd = get(arena, sizeof(double) * (size_t)n);
    w->plane_mark = get(arena, sizeof(int) * (size_t)n);
    w->plane_edge = get(arena, sizeof(int) * (size_t)n);
    w->tri = get(arena, sizeof(fri_mp_tri) * (size_t)t);
    w->stack = get(arena, sizeof(int) * (size_t)t);
    w->free_tri = get(arena, sizeof(int) * (size_t)t);
    w->scratch = get(arena, sizeof(int) * (size_t)t);
    w->scratch_mark = get(arena, sizeof(int) * (size_t)t);
    w->hz = get(arena, sizeof(fri_mp_edge) * (size_t)h);
    w->vid_mark = get(arena, sizeof(int) * (size_t)v);
    w->vid_map = get(arena, sizeof(int) * (size_t)v);
    if (!w->pn || !w->pd || !w->plane_mark || !w->plane_edge || !w->tri || !w->stack ||
        !w->free_tri || !w->scratch || !w->scratch_mark || !w->hz || !w->vid_mark || !w->vid_map) {
        if (!arena) fr_collide_work_free(w);
        return FR_ERR_NOMEM;
    }
    return FR_OK;
}

void fr_polyhedron_out_free(fr_polyhedron_out *o)
{
    free(o->verts);
    free(o->vidx);
    free(o->face_start);
    free(o->face_count);
    free(o->face_owner);
    free(o->face_normal);
    memset(o, 0, sizeof *o);
}

int fr_polyhedron_out_init(fr_polyhedron_out *o, int max_faces, fr_arena *arena)
{
    memset(o, 0, sizeof *o);
    if (max_faces < 4) max_faces = 4;
    int n, t, h, v;
    sizes(max_faces, &n, &t, &h, &v);
    o->max_verts = t;
    o->max_faces = n;
    o->max_idx = 6 * n;
    o->verts = get(arena, sizeof(fr_vec3) * (size_t)t);
    o->vidx = get(arena, sizeof(int) * 6 * (size_t)n);
    o->face_start = get(arena, sizeof(int) * (size_t)n);
    o->face_count = get(arena, sizeof(int) * (size_t)n);
    o->face_owner = get(arena, (size_t)n);
    o->face_normal = get(arena, sizeof(fr_vec3) * (size_t)n);
    if (!o->verts || !o->vidx || !o->face_start || !o->face_count || !o->face_owner ||
        !o->face_normal) {
        if (!arena) fr_polyhedron_out_free(o);
        return FR_ERR_NOMEM;
    }
    return FR_OK;
}
