/* Shapes, materials, the contact stage (broad phase → narrow phase → penalty forces) and springs.
 */
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

static int sap_pairs_cap(const fr_world_def *def)
{
    return 2 * def->max_contacts + 64;
}

size_t fri_world_contact_memory(const fr_world_def *def)
{
    size_t nc = (size_t)def->max_contacts, ns = (size_t)def->max_shapes;
    size_t hs = pow2_at_least((uint32_t)(2 * def->max_contacts + 2));
    size_t b = 0;
    b += ns * sizeof(fri_shape_inst) + (size_t)def->max_materials * sizeof(fri_material);
    b += (size_t)sap_pairs_cap(def) * sizeof(fr_sap_pair);
    b += nc * (sizeof(fri_pair) + 3 * sizeof(int)) + hs * sizeof(int);
    b += (size_t)def->max_springs * sizeof(fri_spring) + (ns + 1) * sizeof(int);
    b += fr_collide_memory(def->max_shape_faces);
    b += (2 * nc + 1) * sizeof(fr_mat6 *) + 64;
    return b + 32 * 64;
}

int fri_world_contact_init(fr_world *w)
{
    const fr_world_def *def = &w->def;
    fr_arena *a = &w->arena;
    int nc = def->max_contacts;
    w->shapes = FR_ARENA_NEW(a, fri_shape_inst, def->max_shapes);
    w->materials = FR_ARENA_NEW(a, fri_material, def->max_materials);
    w->max_sap_pairs = sap_pairs_cap(def);
    w->sap_pairs = FR_ARENA_NEW(a, fr_sap_pair, w->max_sap_pairs);
    w->pairs = FR_ARENA_NEW(a, fri_pair, nc);
    w->pair_free = FR_ARENA_NEW(a, int, nc);
    w->active = FR_ARENA_NEW(a, int, nc);
    w->contacts = FR_ARENA_NEW(a, int, nc);
    uint32_t hs = pow2_at_least((uint32_t)(2 * nc + 2));
    w->hash = FR_ARENA_NEW(a, int, hs);
    w->hmask = hs - 1;
    w->springs = FR_ARENA_NEW(a, fri_spring, def->max_springs);
    w->proxy_shape = FR_ARENA_NEW(a, int, def->max_shapes + 1);
    w->sys_T = FR_ARENA_NEW(a, const fr_mat6 *, 2 * (size_t)nc + 1);
    if (!w->proxy_shape || !w->sys_T || !w->shapes || !w->materials || !w->sap_pairs || !w->pairs ||
        !w->pair_free || !w->active || !w->contacts || !w->hash || !w->springs)
        return FR_ERR_NOMEM;
    for (uint32_t i = 0; i < hs; i++) w->hash[i] = -1;
    for (int i = 0; i < nc; i++) {
        w->pairs[i].sa = -1;
        w->pair_free[i] = nc - 1 - i; /* pop order 0, 1, 2, ... */
    }
    w->npair_free = nc;
    int err = fr_collide_work_init(&w->cw, def->max_shape_faces, a);
    if (!err) err = fr_polyhedron_out_init(&w->poly, def->max_shape_faces, a);
    if (!err) err = fr_sap_create(&w->sap, def->max_shapes > 0 ? def->max_shapes : 1, 1, NULL);
    if (err) return err;
    /* material 0: mass-scaled gains, μ = 0.5 */
    snprintf(w->materials[0].name, sizeof w->materials[0].name, "default");
    w->materials[0].m = (fr_contact_material){0.0, 0.0, 0.5, 0.5};
    w->nmaterials = 1;
    return FR_OK;
}

void fri_world_contact_destroy(fr_world *w)
{
    for (int i = 0; i < w->nshapes; i++) fr_shape_destroy(w->shapes[i].shape);
    w->nshapes = 0;
    fr_sap_destroy(w->sap);
    w->sap = NULL;
}

/* ---------------------------------------------------------------- materials and shapes */

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

static fr_pose shape_pose(const fr_world *w, const fri_shape_inst *s)
{
    int b = fri_body_slot(w, s->body);
    return fr_pose_mul(w->state[b].pose, s->local);
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
    s->silhouette = polytope_silhouette(&def->shape->poly);
    int proxy = fr_sap_insert(w->sap, fr_shape_aabb(s->shape, shape_pose(w, s)), def->group,
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

/* ---------------------------------------------------------------- pair table */

static inline uint32_t pair_hash(int a, int b)
{
    uint64_t k = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

/* Record of (a, b), creating it when absent; −1 when the table is full. */
static int pair_find_or_add(fr_world *w, int a, int b, bool *created)
{
    uint32_t h = pair_hash(a, b) & w->hmask;
    for (;;) {
        int r = w->hash[h];
        if (r < 0) break;
        if (w->pairs[r].sa == a && w->pairs[r].sb == b) {
            *created = false;
            return r;
        }
        h = (h + 1) & w->hmask;
    }
    if (w->npair_free == 0) return -1;
    int r = w->pair_free[--w->npair_free];
    w->hash[h] = r;
    fri_pair *p = &w->pairs[r];
    memset(p, 0, sizeof *p);
    p->sa = a;
    p->sb = b;
    p->dense = w->nactive;
    w->active[w->nactive++] = r;
    *created = true;
    return r;
}

static void pair_remove(fr_world *w, int r)
{
    fri_pair *p = &w->pairs[r];
    /* linear-probing deletion with backward shift: no tombstones */
    uint32_t h = pair_hash(p->sa, p->sb) & w->hmask;
    while (w->hash[h] != r) h = (h + 1) & w->hmask;
    uint32_t hole = h;
    for (uint32_t j = (hole + 1) & w->hmask; w->hash[j] >= 0; j = (j + 1) & w->hmask) {
        const fri_pair *q = &w->pairs[w->hash[j]];
        uint32_t home = pair_hash(q->sa, q->sb) & w->hmask;
        /* move q into the hole when its home is not cyclically within (hole, j] */
        bool between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            w->hash[hole] = w->hash[j];
            hole = j;
        }
    }
    w->hash[hole] = -1;
    int last = w->active[--w->nactive];
    w->active[p->dense] = last;
    w->pairs[last].dense = p->dense;
    p->sa = p->sb = -1;
    w->pair_free[w->npair_free++] = r;
}

/* ---------------------------------------------------------------- the contact stage */

static fr_contact_body contact_body(const fr_world *w, int slot)
{
    const fri_body_state *s = &w->state[slot];
    fr_contact_body cb = {s->pose, s->vel, s->angvel};
    if (w->model[slot].type == FR_BODY_STATIC) cb.v = cb.w = fr_v3_zero();
    return cb;
}

static void pair_params(fr_world *w, fri_pair *p, int ba, int bb)
{
    const fri_shape_inst *sa = &w->shapes[p->sa], *sb = &w->shapes[p->sb];
    double m_red = fr_contact_reduced_mass(w->model[ba].mass, w->model[bb].mass);
    const fr_contact_material *ma = &w->materials[sa->material].m,
                              *mb = &w->materials[sb->material].m;
    if (fr_contact_params_combine(ma, mb, m_red, w->def.dt, &p->params) != FR_OK ||
        p->params.law == FR_CONTACT_MEAN_DEPTH) {
        /* Mass-scaled gains with a Winkler (volume) law: pressure = k·depth everywhere on the
         * patch, so a tipping block's pressure centre moves as it physically would; k is chosen
         * so that the largest patch the pair can form (the smaller silhouette, A_ref) gives the
         * stable mass-scaled stiffness κ·m_red/dt²: no patch can make it stiffer. */
        /* integrated implicitly (free bodies in the world's solve, robot links inside ABA) the
         * contact can be much stiffer than the explicit step allows (world.contact.kappa) */
        bool implicit = w->def.contact_implicit;
        double kappa =
            implicit ? w->def.contact_kappa : fmin(w->def.contact_kappa, FR_CONTACT_KAPPA);
        double beta = implicit ? w->def.contact_beta : fmin(w->def.contact_beta, FR_CONTACT_BETA);
        p->params = fr_contact_params_scaled(m_red, w->def.dt, kappa, beta,
                                             sqrt(ma->mu_s * mb->mu_s), sqrt(ma->mu_k * mb->mu_k));
        double aref = fmin(sa->silhouette, sb->silhouette);
        if (aref > 0) {
            p->params.law = FR_CONTACT_VOLUME;
            p->params.stiff_n /= aref;
            p->params.damp_n /= aref;
            p->params.stiff_t /= aref;
            p->params.damp_t /= aref;
        }
    }
}

static inline fr_svec body_nu(const fr_world *w, int slot)
{
    if (w->model[slot].type == FR_BODY_STATIC) return fr_sv_zero();
    return fr_sv(w->state[slot].angvel, w->state[slot].vel);
}

static fr_mat6 m6_lincomb(double a, const fr_mat6 *x, double b, const fr_mat6 *y)
{
    fr_mat6 r;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) r.m[i][j] = a * x->m[i][j] + b * y->m[i][j];
    return r;
}

/* Twist at a point r away from the centre of mass: (ω; v − r × ω). */
static inline fr_svec twist_at(fr_svec nu, fr_vec3 r)
{
    return fr_sv(nu.ang, fr_v3_sub(nu.lin, fr_v3_cross(r, nu.ang)));
}

/* A wrench at a point r away from the centre of mass, about the centre: (n + r × f; f). */
static inline fr_svec wrench_about_com(fr_svec w, fr_vec3 r)
{
    return fr_sv(fr_v3_add(w.ang, fr_v3_cross(r, w.lin)), w.lin);
}

static void sys_touch(fr_world *w, int i)
{
    if (w->sys_on[i]) return;
    w->sys_on[i] = true;
    w->sys_A[i] = fr_m6_zero();
    w->sys_b[i] = fr_sv_zero();
}

/*
 * A pair's share of the linearly implicit step (docs/contact.md §5):
 *   (M + Σ h·D̃ + h²·K̃)·ν' = M·ν + h·(F + W) + Σ h·D̃·ν
 * with S = h·D + h²·K about the contact point and X_i ν_i the twist of body i there. Body i gets
 * X_iᵀ S X_i on its diagonal and h·(±X_iᵀ D (X_a ν_a − X_b ν_b)) on its right-hand side. When both
 * bodies are dynamic the pair is coupled (S_ab = −X_aᵀ S X_b, for the Gauss–Seidel sweeps);
 * otherwise the other body moves as it moves now, −S_ij ν_j on the right-hand side.
 */
/* A robot link's share of the implicit step: it enters the tree's ABA as an external wrench and an
 * external inertia (fr_tree_add_ext_inertia), with the other body's velocity taken as known.
 * The impulse at the contact point is ±h·D·Δ + S·(t_o − t_l⁺); with t_l⁺ = X·(ν + h·a) this is the
 * force (±h·D·Δ + S·t_o − S·t_l)/h − (XᵀSX)·a: the first part about the origin joins f_ext,
 * XᵀSX (X: (ω; v_origin) ↦ twist at the point) joins the link's inertia. */
static void implicit_link_side(fr_world *w, int l, int o, const fr_mat6 *S, fr_svec hDd,
                               fr_vec3 point)
{
    const double h = w->def.dt;
    const fri_body_model *m = &w->model[l];
    if (m->robot < 0) return;
    fr_tree_data *td = w->robots[m->robot].data;
    fr_svec tl = twist_at(body_nu(w, l), fr_v3_sub(point, w->state[l].pose.p));
    fr_svec to = twist_at(body_nu(w, o), fr_v3_sub(point, w->state[o].pose.p));
    fr_svec f = fr_sv_scale(fr_sv_add(hDd, fr_m6_mulv(S, fr_sv_sub(to, tl))), 1.0 / h);
    fr_tree_add_ext_force(td, m->link, point, f.lin);
    fr_tree_add_ext_torque(td, m->link, f.ang);
    fr_mat6 I;
    fr_contact_blocks(S, point, fr_v3_zero(), fr_v3_zero(), &I, NULL, NULL);
    fr_tree_add_ext_inertia(td, m->link, &I);
}

static void implicit_pair(fr_world *w, fri_pair *p, int ba, int bb)
{
    const double h = w->def.dt;
    bool da = w->model[ba].type == FR_BODY_DYNAMIC, db = w->model[bb].type == FR_BODY_DYNAMIC;
    bool la = w->model[ba].type == FR_BODY_LINK, lb = w->model[bb].type == FR_BODY_LINK;
    p->coupled = false;
    if (!da && !db && !la && !lb) return;
    fr_vec3 ca = w->state[ba].pose.p, cb = w->state[bb].pose.p;
    fr_vec3 ra = fr_v3_sub(p->res.point, ca), rb = fr_v3_sub(p->res.point, cb);
    fr_mat6 S = m6_lincomb(h, &p->res.D, h * h, &p->res.K);
    fr_svec va = body_nu(w, ba), vb = body_nu(w, bb);
    fr_svec dtw = fr_sv_sub(twist_at(va, ra), twist_at(vb, rb)); /* relative twist at the point */
    fr_svec Dd = fr_sv_scale(fr_m6_mulv(&p->res.D, dtw), h);     /* h·D·(X_a ν_a − X_b ν_b) */
    p->coupled = da && db;
    if (p->coupled) {
        fr_mat6 Saa, Sbb;
        fr_contact_blocks(&S, p->res.point, ca, cb, &Saa, &p->S_ab, &Sbb);
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) p->S_ba.m[r][c] = p->S_ab.m[c][r];
        sys_touch(w, ba);
        sys_touch(w, bb);
        fr_m6_add(&w->sys_A[ba], &Saa);
        fr_m6_add(&w->sys_A[bb], &Sbb);
        w->sys_b[ba] = fr_sv_add(w->sys_b[ba], wrench_about_com(Dd, ra));
        w->sys_b[bb] = fr_sv_sub(w->sys_b[bb], wrench_about_com(Dd, rb));
        return;
    }
    if (la) implicit_link_side(w, ba, bb, &S, Dd, p->res.point);
    if (lb) implicit_link_side(w, bb, ba, &S, fr_sv_neg(Dd), p->res.point);
    if (!da && !db) return;
    /* one dynamic side d against a body o that keeps its velocity: its own block and
     * h·(±X_dᵀ D Δ) − S_do ν_o = ±X_dᵀ (h D Δ) + X_dᵀ S X_o ν_o on the right-hand side */
    int d = da ? ba : bb, o = da ? bb : ba;
    fr_vec3 rd = da ? ra : rb, ro = da ? rb : ra;
    double sign = da ? 1.0 : -1.0;
    fr_mat6 Sdd;
    fr_contact_blocks(&S, p->res.point, w->state[d].pose.p, w->state[d].pose.p, &Sdd, NULL, NULL);
    sys_touch(w, d);
    fr_m6_add(&w->sys_A[d], &Sdd);
    fr_svec So = fr_m6_mulv(&S, twist_at(body_nu(w, o), ro));
    fr_svec rhs = fr_sv_add(fr_sv_scale(Dd, sign), So);
    w->sys_b[d] = fr_sv_add(w->sys_b[d], wrench_about_com(rhs, rd));
}

static void apply(fr_world *w, int slot, fr_vec3 f, fr_vec3 t)
{
    if (w->model[slot].type != FR_BODY_DYNAMIC && w->model[slot].type != FR_BODY_LINK) return;
    w->state[slot].force = fr_v3_add(w->state[slot].force, f);
    w->state[slot].torque = fr_v3_add(w->state[slot].torque, t);
}

int fri_world_contacts(fr_world *w)
{
    memset(w->sys_on, 0, sizeof(bool) * (size_t)w->nslots);
    w->ncontacts = 0;
    w->max_pen = 0.0;
    if (w->nshapes == 0) return FR_OK;
    /* each shape's world pose once per step (a shape is in several pairs) */
    for (int i = 0; i < w->nshapes; i++) {
        fri_shape_inst *s = &w->shapes[i];
        if (s->proxy < 0) continue;
        s->world = shape_pose(w, s);
        if (!s->is_static) fr_sap_move(w->sap, s->proxy, fr_shape_aabb(s->shape, s->world));
    }
    int npairs = 0;
    if (fr_sap_update(w->sap, w->sap_pairs, w->max_sap_pairs, &npairs) == FR_ERR_FULL) {
        w->pair_overflows += npairs - w->max_sap_pairs;
        npairs = w->max_sap_pairs;
    }
    const uint64_t stamp = w->steps + 1;
    for (int k = 0; k < npairs; k++) {
        int pa = w->sap_pairs[k].a, pb = w->sap_pairs[k].b;
        if (pa < 0 || pb < 0 || pa > w->def.max_shapes || pb > w->def.max_shapes) continue;
        int a = w->proxy_shape[pa], b = w->proxy_shape[pb];
        if (a > b) {
            int t = a;
            a = b;
            b = t;
        }
        const fri_shape_inst *sa = &w->shapes[a], *sb = &w->shapes[b];
        if (sa->proxy < 0 || sb->proxy < 0 || fr_body_id_eq(sa->body, sb->body)) continue;
        int ba = fri_body_slot(w, sa->body), bb = fri_body_slot(w, sb->body);
        if (ba < 0 || bb < 0 || fri_world_links_filtered(w, ba, bb)) continue;
        bool created;
        int r = pair_find_or_add(w, a, b, &created);
        if (r < 0) {
            w->pair_overflows++;
            continue;
        }
        fri_pair *p = &w->pairs[r];
        p->stamp = stamp;
        p->slot_a = ba;
        p->slot_b = bb;
        if (created) {
            pair_params(w, p, ba, bb);
            p->params_ok = fr_contact_params_check(&p->params) == FR_OK;
        }
        int hit = fr_collide_pair(sa->shape, sa->world, sb->shape, sb->world, &p->cache, &w->cw,
                                  &w->poly);
        if (hit < 0) return hit;
        if (hit == 0) {
            if (p->st.active) fr_contact_state_reset(&p->st);
            p->res.in_contact = 0;
            continue;
        }
        fr_contact_body ca = contact_body(w, ba), cb = contact_body(w, bb);
        /* params checked once; the polyhedron is fr_collide_pair's */
        int err = fr_contact_eval_ex(&p->params, &w->poly, &ca, &cb, &p->st, &p->res,
                                     p->params_ok ? FR_CONTACT_EVAL_CHECKED : 0u);
        if (err) return err;
        if (!p->res.in_contact) continue;
        apply(w, ba, p->res.force_a, p->res.torque_a);
        apply(w, bb, p->res.force_b, p->res.torque_b);
        if (w->def.contact_implicit) implicit_pair(w, p, ba, bb);
        w->contacts[w->ncontacts++] = r;
        if (p->res.max_depth > w->max_pen) w->max_pen = p->res.max_depth;
    }
    /* pairs the broad phase no longer reports are forgotten */
    for (int k = w->nactive - 1; k >= 0; k--) {
        int r = w->active[k];
        if (w->pairs[r].stamp != stamp) pair_remove(w, r);
    }
    return FR_OK;
}

int fr_world_contact_count(const fr_world *w)
{
    return w->ncontacts;
}

const fr_contact_result *fr_world_contact(const fr_world *w, int i, fr_body_id *a, fr_body_id *b)
{
    if (i < 0 || i >= w->ncontacts) return NULL;
    const fri_pair *p = &w->pairs[w->contacts[i]];
    if (a) *a = w->shapes[p->sa].body;
    if (b) *b = w->shapes[p->sb].body;
    return &p->res;
}

double fr_world_max_penetration(const fr_world *w)
{
    return w->max_pen;
}

fr_vec3 fr_world_contact_force(const fr_world *w, fr_body_id on, fr_body_id by)
{
    fr_vec3 f = fr_v3_zero();
    for (int i = 0; i < w->ncontacts; i++) {
        const fri_pair *p = &w->pairs[w->contacts[i]];
        fr_body_id a = w->shapes[p->sa].body, b = w->shapes[p->sb].body;
        bool any = fr_body_id_is_null(by);
        if (fr_body_id_eq(a, on) && (any || fr_body_id_eq(b, by))) f = fr_v3_add(f, p->res.force_a);
        if (fr_body_id_eq(b, on) && (any || fr_body_id_eq(a, by))) f = fr_v3_add(f, p->res.force_b);
    }
    return f;
}

/* ---------------------------------------------------------------- springs */

int fr_world_add_spring(fr_world *w, const fr_spring_def *def, int *out)
{
    if (w->locked) return FR_ERR_LOCKED;
    if (!def || fri_body_slot(w, def->body) < 0) return FR_ERR_STALE;
    if (!fr_v3_isfinite(def->local_point) || !fr_v3_isfinite(def->anchor) ||
        !fr_v3_isfinite(def->anchor_vel) || !(def->stiffness >= 0) || !(def->damping >= 0) ||
        !(def->rest_length >= 0) || !isfinite(def->stiffness) || !isfinite(def->damping) ||
        !isfinite(def->rest_length))
        return FR_ERR_RANGE;
    if (def->implicit && (def->rest_length != 0 || fr_v3_norm(def->local_point) != 0))
        return FR_ERR_INVAL;
    if (w->nsprings >= w->def.max_springs) return FR_ERR_FULL;
    fri_spring *s = &w->springs[w->nsprings];
    s->def = *def;
    s->force = fr_v3_zero();
    s->anchor = def->anchor;
    s->driven = false;
    if (out) *out = w->nsprings;
    w->nsprings++;
    return FR_OK;
}

int fr_world_spring_count(const fr_world *w)
{
    return w->nsprings;
}

int fr_world_set_spring_anchor(fr_world *w, int i, fr_vec3 anchor, fr_vec3 anchor_vel)
{
    if (i < 0 || i >= w->nsprings) return FR_ERR_INVAL;
    if (!fr_v3_isfinite(anchor) || !fr_v3_isfinite(anchor_vel)) return FR_ERR_RANGE;
    fri_spring *s = &w->springs[i];
    s->driven = true;
    s->next_anchor = anchor;
    s->def.anchor_vel = anchor_vel;
    return FR_OK;
}

int fr_world_set_spring_gains(fr_world *w, int i, double stiffness, double damping)
{
    if (i < 0 || i >= w->nsprings) return FR_ERR_INVAL;
    if (!(stiffness >= 0) || !(damping >= 0) || !isfinite(stiffness) || !isfinite(damping))
        return FR_ERR_RANGE;
    w->springs[i].def.stiffness = stiffness;
    w->springs[i].def.damping = damping;
    return FR_OK;
}

int fr_world_find_spring(const fr_world *w, const char *name, int *out)
{
    for (int i = 0; i < w->nsprings; i++)
        if (strcmp(w->springs[i].def.name, name) == 0) {
            *out = i;
            return FR_OK;
        }
    return FR_ERR_NOTFOUND;
}

int fr_world_spring_state(const fr_world *w, int i, fr_vec3 *force, fr_vec3 *anchor)
{
    if (i < 0 || i >= w->nsprings) return FR_ERR_INVAL;
    if (force) *force = w->springs[i].force;
    if (anchor) *anchor = w->springs[i].anchor;
    return FR_OK;
}

void fri_world_springs(fr_world *w)
{
    for (int i = 0; i < w->nsprings; i++) {
        fri_spring *s = &w->springs[i];
        int b = fri_body_slot(w, s->def.body);
        if (b < 0) continue;
        fri_body_state *st = &w->state[b];
        if (!s->driven) s->anchor = fr_v3_mad(s->def.anchor, w->time, s->def.anchor_vel);
        if (s->def.implicit) {
            /* the anchor at the end of the step; the force is taken at the new state */
            fr_vec3 a1 = s->driven
                             ? s->next_anchor
                             : fr_v3_mad(s->def.anchor, w->time + w->def.dt, s->def.anchor_vel);
            if (w->model[b].type == FR_BODY_DYNAMIC) {
                st->imp_k += s->def.stiffness;
                st->imp_c += s->def.damping;
                st->imp_f = fr_v3_add(
                    st->imp_f, fr_v3_add(fr_v3_scale(fr_v3_sub(a1, st->pose.p), s->def.stiffness),
                                         fr_v3_scale(s->def.anchor_vel, s->def.damping)));
            } else {
                s->force =
                    fr_v3_add(fr_v3_scale(fr_v3_sub(a1, st->pose.p), s->def.stiffness),
                              fr_v3_scale(fr_v3_sub(s->def.anchor_vel, st->vel), s->def.damping));
            }
            s->anchor = a1;
            continue;
        }
        if (s->driven) s->anchor = s->next_anchor;
        fr_vec3 r = fr_q_rotate(st->pose.q, s->def.local_point);
        fr_vec3 p = fr_v3_add(st->pose.p, r);
        fr_vec3 d = fr_v3_sub(s->anchor, p);
        double len = fr_v3_norm(d);
        fr_vec3 f = fr_v3_zero();
        fr_vec3 vp = fr_v3_add(st->vel, fr_v3_cross(st->angvel, r));
        fr_vec3 vrel = fr_v3_sub(s->def.anchor_vel, vp);
        if (s->def.rest_length == 0.0) {
            /* zero rest length: a linear (vector) spring, well defined at d = 0 */
            f = fr_v3_add(fr_v3_scale(d, s->def.stiffness), fr_v3_scale(vrel, s->def.damping));
        } else if (len > 0) {
            fr_vec3 u = fr_v3_scale(d, 1.0 / len);
            double mag =
                s->def.stiffness * (len - s->def.rest_length) + s->def.damping * fr_v3_dot(vrel, u);
            f = fr_v3_scale(u, mag);
        }
        s->force = f;
        if (w->model[b].type == FR_BODY_DYNAMIC || w->model[b].type == FR_BODY_LINK) {
            st->force = fr_v3_add(st->force, f);
            st->torque = fr_v3_add(st->torque, fr_v3_cross(r, f));
        }
    }
}

void fri_world_springs_post(fr_world *w)
{
    for (int i = 0; i < w->nsprings; i++) {
        fri_spring *s = &w->springs[i];
        if (!s->def.implicit) continue;
        int b = fri_body_slot(w, s->def.body);
        if (b < 0 || w->model[b].type != FR_BODY_DYNAMIC) continue;
        const fri_body_state *st = &w->state[b];
        /* at the new state: k·(a⁺ − x⁺) + c·(v_a − v⁺) */
        s->force = fr_v3_add(fr_v3_scale(fr_v3_sub(s->anchor, st->pose.p), s->def.stiffness),
                             fr_v3_scale(fr_v3_sub(s->def.anchor_vel, st->vel), s->def.damping));
    }
}
