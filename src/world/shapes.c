/* Materials and shapes: the world's contact materials, the shapes on its bodies (each a broad-phase
 * proxy) and what can be asked of them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

static int check_material(const fr_contact_material *m)
{
    if (!m || !isfinite(m->stiffness) || !isfinite(m->damping) || !isfinite(m->mu_s) ||
        !isfinite(m->mu_k) || m->stiffness < 0 || m->damping < 0 || m->mu_k < 0 ||
        m->mu_k > m->mu_s)
        return FR_ERR_RANGE;
    return FR_OK;
}

int fr_world_add_material(fr_world *w, const char *name, const fr_contact_material *m, int *out)
{
    if (w->locked) return FR_ERR_LOCKED;
    int err = check_material(m);
    if (err) return err;
    if (w->nmaterials >= w->def.max_materials) return FR_ERR_FULL;
    fri_material *mat = &w->materials[w->nmaterials];
    snprintf(mat->name, sizeof mat->name, "%s", name ? name : "");
    mat->m = *m;
    if (out) *out = w->nmaterials;
    w->nmaterials++;
    return FR_OK;
}

int fr_world_set_material(fr_world *w, int index, const fr_contact_material *m)
{
    if (w->locked) return FR_ERR_LOCKED;
    if (index < 0 || index >= w->nmaterials) return FR_ERR_INVAL;
    int err = check_material(m);
    if (err) return err;
    w->materials[index].m = *m;
    return FR_OK;
}

int fr_world_find_material(const fr_world *w, const char *name, int *out)
{
    for (int i = 0; i < w->nmaterials; i++)
        if (strcmp(w->materials[i].name, name) == 0) {
            *out = i;
            return FR_OK;
        }
    return FR_ERR_NOTFOUND;
}

int fr_world_get_material(const fr_world *w, int index, fr_contact_material *out)
{
    if (!w || !out || index < 0 || index >= w->nmaterials) return FR_ERR_INVAL;
    *out = w->materials[index].m;
    return FR_OK;
}

fr_shape_def fr_shape_def_default(fr_shape *shape)
{
    return (fr_shape_def){shape, fr_pose_identity(), 0, 1u, 0xffffffffu};
}

/* Largest projected area of a polytope over its face normals, ½·Σ_f |n·a_f| (a_f the area
 * vectors): no contact patch with this shape can be much larger. */
static double polytope_silhouette(const fr_polytope *p)
{
    double best = 0;
    for (int c = 0; c < p->nfaces; c++) {
        double sum = 0;
        for (int f = 0; f < p->nfaces; f++) {
            const int *lp = p->loop + p->face_start[f];
            fr_vec3 a = fr_v3_zero(), o = p->verts[lp[0]];
            for (int k = 1; k + 1 < p->face_count[f]; k++)
                a = fr_v3_add(a, fr_v3_cross(fr_v3_sub(p->verts[lp[k]], o),
                                             fr_v3_sub(p->verts[lp[k + 1]], o)));
            sum += fabs(fr_v3_dot(p->normal[c], a)) * 0.5;
        }
        best = fmax(best, 0.5 * sum);
    }
    return best;
}

int fr_body_add_shape(fr_world *w, fr_body_id body, const fr_shape_def *def)
{
    if (w->locked) return FR_ERR_LOCKED;
    int b = fri_body_slot(w, body);
    if (b < 0) return FR_ERR_STALE;
    if (!def || !def->shape) return FR_ERR_INVAL;
    if (!fr_v3_isfinite(def->local.p) || !fr_q_isfinite(def->local.q) ||
        fr_q_norm(def->local.q) < 1e-9)
        return FR_ERR_RANGE;
    if (def->material < 0 || def->material >= w->nmaterials) return FR_ERR_INVAL;
    if (def->shape->poly.nfaces > w->def.max_shape_faces) return FR_ERR_FULL;
    if (w->nshapes >= w->def.max_shapes) return FR_ERR_FULL;
    fri_shape_inst *s = &w->shapes[w->nshapes];
    s->shape = def->shape;
    s->local = (fr_pose){def->local.p, fr_q_normalize(def->local.q)};
    s->body = body;
    s->material = def->material;
    s->is_static = w->model[b].type == FR_BODY_STATIC;
    s->stance_kept = false;
    s->silhouette = polytope_silhouette(&def->shape->poly);
    double wide;
    fr_shape_widths(def->shape, &s->thin, &wide);
    /* no stance of the shape can ask for a stiffening depth below this (its width across any
     * normal is at least about half its least width, its height at most its diameter) */
    s->stance_floor =
        FR_CONTACT_STANCE * 0.25 * s->thin * s->thin / (2.0 * def->shape->bound_radius);
    /* how far the polytope strays from the true surface (a long cylinder's is a millimetre or
     * so, not its length: the radii about the origin measure a sphere's alone) */
    s->slack = fr_shape_slack(def->shape);
    int proxy = fr_sap_insert(w->sap, fr_shape_aabb(s->shape, fri_shape_pose(w, s)), def->group,
                              def->mask, s->is_static);
    if (proxy < 0) return proxy;
    if (proxy > w->def.max_shapes) {
        fr_sap_remove(w->sap, proxy);
        return FR_ERR_FULL;
    }
    s->proxy = proxy;
    w->proxy_shape[proxy] = w->nshapes;
    w->nshapes++;
    return FR_OK;
}

void fri_world_remove_body_shapes(fr_world *w, fr_body_id id)
{
    for (int i = 0; i < w->nshapes; i++) {
        fri_shape_inst *s = &w->shapes[i];
        if (s->proxy >= 0 && fr_body_id_eq(s->body, id)) {
            fr_sap_remove(w->sap, s->proxy);
            s->proxy = -1; /* pairs with it are dropped at the next step's sweep */
        }
    }
}

int fr_body_shape_count(const fr_world *w, fr_body_id id)
{
    if (!fr_body_is_valid(w, id)) return 0;
    int n = 0;
    for (int k = 0; k < w->nshapes; k++)
        if (fr_body_id_eq(w->shapes[k].body, id)) n++;
    return n;
}

const fr_shape *fr_body_shape_at(const fr_world *w, fr_body_id id, int i, fr_pose *local)
{
    if (!fr_body_is_valid(w, id) || i < 0) return NULL;
    for (int k = 0; k < w->nshapes; k++) {
        if (!fr_body_id_eq(w->shapes[k].body, id)) continue;
        if (i-- == 0) {
            if (local) *local = w->shapes[k].local;
            return w->shapes[k].shape;
        }
    }
    return NULL;
}

int fr_world_shape_count(const fr_world *w)
{
    return w->nshapes;
}

const fr_shape *fr_world_shape_at(const fr_world *w, int k, fr_body_id *body, fr_pose *local)
{
    if (k < 0 || k >= w->nshapes) return NULL;
    if (body) *body = w->shapes[k].body;
    if (local) *local = w->shapes[k].local;
    return w->shapes[k].shape;
}
