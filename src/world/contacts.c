/* The contact stage: the broad phase, each pair's model (built from the geometry or advanced) and
 * its commit after the step. Materials and shapes are in shapes.c, the queries on the last step's
 * contacts in contact_queries.c. */
#include <stddef.h>
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
    b += nc * (sizeof(fri_pair) + 4 * sizeof(int)) + hs * sizeof(int);
    b += (size_t)def->max_springs * sizeof(fri_spring) + (ns + 1) * sizeof(int);
    b += 2 * fr_collide_memory(def->max_shape_faces); /* (the band's polyhedron: less) */
    /* the late landings' islands (late.c) */
    b += ((size_t)def->max_bodies + 1) *
         (sizeof(int) + 2 * sizeof(uint64_t) + 1 + 2 * sizeof(double));
    return b + 38 * 64;
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
    w->gt_queue = FR_ARENA_NEW(a, int, nc);
    uint32_t hs = pow2_at_least((uint32_t)(2 * nc + 2));
    w->hash = FR_ARENA_NEW(a, int, hs);
    w->hmask = hs - 1;
    w->springs = FR_ARENA_NEW(a, fri_spring, def->max_springs);
    w->proxy_shape = FR_ARENA_NEW(a, int, def->max_shapes + 1);
    w->late_up = FR_ARENA_NEW(a, int, w->cap + 1);
    w->late_stamp = FR_ARENA_NEW(a, uint64_t, w->cap + 1);
    w->late_seen = FR_ARENA_NEW(a, uint64_t, w->cap + 1);
    w->late_state = FR_ARENA_NEW(a, unsigned char, w->cap + 1);
    w->late_e = FR_ARENA_NEW(a, double, w->cap + 1);
    w->late_u = FR_ARENA_NEW(a, double, w->cap + 1);
    w->late_order = FR_ARENA_NEW(a, int, nc);
    if (!w->late_up || !w->late_stamp || !w->late_seen || !w->late_state || !w->late_e ||
        !w->late_u || !w->late_order)
        return FR_ERR_NOMEM;
    if (!w->proxy_shape || !w->shapes || !w->materials || !w->sap_pairs || !w->pairs ||
        !w->pair_free || !w->active || !w->contacts || !w->gt_queue || !w->hash || !w->springs)
        return FR_ERR_NOMEM;
    for (uint32_t i = 0; i < hs; i++) w->hash[i] = -1;
    /* a record is written when it is taken (pair_find_or_add): the table's pages, 8 records per
     * shape, are not touched before they are needed (10⁵ boxes asked for 2.7 GB up front) */
    for (int i = 0; i < nc; i++) w->pair_free[i] = nc - 1 - i; /* pop order 0, 1, 2, ... */
    w->npair_free = nc;
    int err = fr_collide_work_init(&w->cw, def->max_shape_faces, a);
    if (!err) err = fr_polyhedron_out_init(&w->poly, def->max_shape_faces, a);
    if (!err) err = fr_polyhedron_out_init(&w->band, def->max_shape_faces, a);
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
    fr_contact_body cb = {s->pose, s->vel, s->angvel, fr_v3_zero(), fri_body_p_lo(s)};
    const int type = w->model[slot].type;
    if (type == FR_BODY_STATIC) cb.v = cb.w = fr_v3_zero();
    /* free and kinematic bodies turn about their centre of mass (integrate.c): a kinematic one
     * at its set rate, a free one at about its current rate while that is steady (not while a
     * collision spins it up: the drift then is a guess that put energy into tumbling hulls); a
     * link's point moves with its tree's joints, which this does not describe */
    if (type == FR_BODY_KINEMATIC || (type == FR_BODY_DYNAMIC && s->steady_turn))
        cb.turn = fr_v3_scale(s->angvel, w->h);
    return cb;
}

/* A free body's curved shape rolls about its centre (a sphere) or its axis (a cylinder or a
 * capsule): its last step's turn about it, for the bond read (fr_contact_body.roll_turn) */
static void body_roll(const fr_world *w, const fri_shape_inst *s, int slot, fr_contact_body *cb)
{
    if (w->model[slot].type != FR_BODY_DYNAMIC) return;
    const fr_vec3 th = w->state[slot].turn_last;
    const int type = s->shape->type;
    if (type == FR_SHAPE_SPHERE) {
        cb->roll_turn = th;
        cb->roll_kind = 1;
    } else if (type == FR_SHAPE_CYLINDER || type == FR_SHAPE_CAPSULE) {
        const fr_vec3 ax = fr_q_rotate(s->world.q, fr_v3(0.0, 0.0, 1.0));
        cb->roll_turn = fr_v3_scale(ax, fr_v3_dot(ax, th));
        cb->roll_axis = ax;
        cb->roll_kind = 2;
    } else {
        return;
    }
    cb->roll_o = s->world.p;
}

/*
 * A rolling shape's polytope met as its surface would be: a cylinder's (or a capsule's on its
 * side) pose turned about its axis so that the side face nearest to facing the other body along
 * d (world, unit, outwards from it) faces it exactly. The step's model takes a turn about the axis
 * as leaving the volume unchanged (pair_roll); met at its facets, the wheel's centre rose and fell
 * by r·(1 − cos(π/N)) a facet against that model, and each rebuild found a depth the model had not
 * seen: a lone wheel rolling on flat ground lost 90 % of its energy in 3 s, and a car of 0.29 kg
 * wheels under 31.3 kg, joined in the step's solve, left the ground for 1–2 steps a facet and hit
 * it with 5.6 times its load. It rolls on the face's plane, at the polygon's inradius. Not for a
 * sphere (docs/contact.md §5, "Spheres"): met at one face kept through a contact (session 45,
 * reverted), a ball turning 0.35 rad a step or more gained energy, its friction pushing along
 * its slip, and balls hopped at the seams between floor tiles and lost speed in a V-groove.
 * Returns false where it does not apply (an end face).
 */
static bool roll_snap(const fri_shape_inst *s, fr_vec3 d, fri_shape_inst *out)
{
    if (s->shape->type == FR_SHAPE_SPHERE) return false;
    const fr_polytope *P = &s->shape->poly;
    fr_vec3 dir = fr_q_unrotate(s->world.q, d);
    dir.z = 0.0;
    if (!(fr_v3_norm2(dir) > 0.5)) return false; /* (within 45° of the axis) */
    dir = fr_v3_normalize(dir);
    int best = -1;
    double most = -INFINITY;
    for (int f = 0; f < P->nfaces; f++) {
        const double c = fr_v3_dot(P->normal[f], dir);
        if (c > most) most = c, best = f;
    }
    if (best < 0 || !(fabs(P->normal[best].z) < 1e-9)) return false; /* (a cap's face) */
    fr_vec3 fn = P->normal[best];
    fn.z = 0.0;
    fn = fr_v3_normalize(fn);
    const fr_quat turn =
        fr_q_axis_angle(fr_v3(0.0, 0.0, 1.0), atan2(fr_v3_cross(fn, dir).z, fr_v3_dot(fn, dir)));
    *out = *s;
    out->world.q = fr_q_normalize(fr_q_mul(s->world.q, turn));
    return true;
}

/* A new pair's direction from A to B (unit; zero when none): between the true shapes' closest
 * points, or the polytopes' separating axis where they touch or overlap (as speculative) */
static fr_vec3 pair_direction(const fri_shape_inst *sa, const fri_shape_inst *sb)
{
    fr_gjk_result gr;
    fr_gjk_distance(sa->shape, sa->world, sb->shape, sb->world, NULL, &gr);
    const double size = fmin(sa->shape->bound_radius, sb->shape->bound_radius);
    fr_vec3 n = gr.distance > 1e-6 * size ? fr_v3_normalize(fr_v3_sub(gr.pb, gr.pa))
                                          : fr_polytope_sat_normal(&sa->shape->poly, sa->world,
                                                                   &sb->shape->poly, sb->world);
    return fr_v3_isfinite(n) && fr_v3_norm2(n) > 0.5 ? n : fr_v3_zero();
}

/* Which side of the pair rolls on the other (0: A, 1: B), −1 when neither or both do, or the
 * roller is not a free body, or a robot's link takes part (its contacts do not roll). */
static int roll_side(const fr_world *w, const fri_shape_inst *sa, const fri_shape_inst *sb, int ba,
                     int bb);

/* A pair of two rolling shapes (balls on balls, logs on logs, a ball on a cylinder) is taken as
 * faceted: the pressure can act along n through both centres only where n runs through them,
 * which a polytope's patch normal does not (a facet's angle off at the default resolution), and
 * through a point under one centre it turned the other: a pyramid of four balls placed at rest
 * walked 2–6 cm in 3 s and a row of five crept (a new user's trial). Faceted, the pile rests as
 * polytopes do. A shape that rolls: */
static bool rolls(const fri_shape_inst *s)
{
    const int t = s->shape->type;
    return t == FR_SHAPE_SPHERE || t == FR_SHAPE_CYLINDER || t == FR_SHAPE_CAPSULE;
}

static int roll_side(const fr_world *w, const fri_shape_inst *sa, const fri_shape_inst *sb, int ba,
                     int bb)
{
    const bool ra = rolls(sa), rb = rolls(sb);
    if (ra == rb) return -1;
    if (w->model[ba].type == FR_BODY_LINK || w->model[bb].type == FR_BODY_LINK) return -1;
    const int side = ra ? 0 : 1;
    return w->model[side ? bb : ba].type == FR_BODY_DYNAMIC ? side : -1;
}

/* Both sides' rolling shapes: the one side's (a link's contacts do not roll, and two rolling
 * shapes are faceted: pair_roll) */
static void bodies_roll(const fr_world *w, const fri_shape_inst *sa, const fri_shape_inst *sb,
                        int ba, int bb, fr_contact_body *ca, fr_contact_body *cb)
{
    const bool ra = rolls(sa), rb = rolls(sb);
    if (ra == rb) return; /* (neither: the common case; or both: faceted, rolls) */
    if (w->model[ba].type == FR_BODY_LINK || w->model[bb].type == FR_BODY_LINK) {
        /* (the bond read still takes a free body's rolling arc out, as it did) */
        if (ra) body_roll(w, sa, ba, ca);
        if (rb) body_roll(w, sb, bb, cb);
        ca->roll_kind = cb->roll_kind = 0;
        return;
    }
    if (ra) body_roll(w, sa, ba, ca);
    if (rb) body_roll(w, sb, bb, cb);
}

static void pair_params(fr_world *w, fri_pair *p, int ba, int bb)
{
    const fri_shape_inst *sa = &w->shapes[p->sa], *sb = &w->shapes[p->sb];
    double m_red = fr_contact_reduced_mass(w->model[ba].mass, w->model[bb].mass);
    const fr_contact_material *ma = &w->materials[sa->material].m,
                              *mb = &w->materials[sb->material].m;
    /* integrated implicitly (free bodies in the world's solve, robot links inside ABA) the
     * contact can be much stiffer than the explicit step allows (world.contact.kappa) */
    const bool implicit = w->def.contact_implicit;
    const bool link = w->model[ba].type == FR_BODY_LINK || w->model[bb].type == FR_BODY_LINK;
    double kappa = link ? w->def.contact_link_kappa : w->def.contact_kappa;
    if (!link && w->def.contact_time > 0) {
        double r = w->h / w->def.contact_time;
        kappa = r * r;
    }
    double beta = link ? w->def.contact_link_beta : w->def.contact_beta;
    if (!implicit) {
        kappa = fmin(kappa, FR_CONTACT_KAPPA);
        beta = fmin(beta, FR_CONTACT_BETA);
    }
    if (fr_contact_params_combine_ex(ma, mb, m_red, w->h, kappa, beta, &p->params) != FR_OK)
        p->params = fr_contact_params_scaled(m_red, w->h, kappa, beta, 0.0, 0.0);
    p->mass_scaled = p->params.law == FR_CONTACT_MEAN_DEPTH;
    if (p->params.law == FR_CONTACT_MEAN_DEPTH) {
        /* Mass-scaled gains with a Winkler (volume) law: pressure = k·depth everywhere on the
         * patch, so a tipping block's pressure centre moves as it physically would; k is chosen
         * so that the largest patch the pair can form (the smaller silhouette, A_ref) gives the
         * mass-scaled stiffness κ·m_red/dt². */
        double aref = fmin(sa->silhouette, sb->silhouette);
        if (aref > 0) {
            p->params.law = FR_CONTACT_VOLUME;
            p->params.stiff_n /= aref;
            p->params.damp_n /= aref;
            p->params.stiff_t /= aref;
            p->params.damp_t /= aref;
        }
        /* The law stiffens beyond the rest depth of m_red under gravity (docs/world.md), so a
         * contact's stiffness follows the load it carries. Robot links keep the linear law with
         * their own κ, β: their contacts are solved inside ABA with the other body's velocity
         * known (one tree step per iteration), and their mass-scaled stiffness already uses the
         * whole robot's mass (the load their feet carry). */
        double g = fr_v3_norm(w->def.gravity);
        if (!(g > 0)) g = FR_CONTACT_RAMP_G;
        if (implicit && w->def.contact_stiffen > 0 && !link)
            p->params.stiffen_depth = w->def.contact_stiffen * g * w->h * w->h / kappa;
    }
}

/* How far any point of a body can move in one step, for a shape of bounding radius r, m: its
 * speed and spin, and what gravity adds over the step. */
static double reach(const fr_world *w, int slot, double r)
{
    if (w->model[slot].type == FR_BODY_STATIC) return 0.0;
    const fri_body_state *s = &w->state[slot];
    const double h = w->h;
    return h * (fr_v3_norm(s->vel) + fr_v3_norm(s->angvel) * r + h * fr_v3_norm(w->def.gravity));
}

/* Broad-phase box of a shape: grown by twice its reach over the step (the velocity changes within
 * it) and a skin, so that pairs about to touch are reported a step early. */
void fri_world_shapes_placed(fr_world *w, fr_body_id id)
{
    /* (a static body's proxies are not moved at each step: fr_body_set_pose moves them here) */
    for (int k = 0; k < w->nshapes; k++) {
        fri_shape_inst *s = &w->shapes[k];
        if (s->proxy < 0 || !s->is_static || !fr_body_id_eq(s->body, id)) continue;
        s->world = fri_shape_pose(w, s);
        fr_sap_move(w->sap, s->proxy, fr_shape_aabb(s->shape, s->world));
    }
}

static fr_aabb fat_aabb(const fr_world *w, const fri_shape_inst *s, int slot)
{
    fr_aabb b = fr_shape_aabb(s->shape, s->world);
    double r = s->shape->bound_radius + fr_v3_norm(s->local.p);
    double m = 2.0 * reach(w, slot, r) + 1e-6 * s->shape->bound_radius;
    b.lo = fr_v3_sub(b.lo, fr_v3(m, m, m));
    b.hi = fr_v3_add(b.hi, fr_v3(m, m, m));
    return b;
}

static void apply(fr_world *w, int slot, fr_svec wr)
{
    if (w->model[slot].type != FR_BODY_DYNAMIC && w->model[slot].type != FR_BODY_LINK) return;
    w->state[slot].force = fr_v3_add(w->state[slot].force, wr.lin);
    w->state[slot].torque = fr_v3_add(w->state[slot].torque, wr.ang);
}

/* A wrench at a point r away from the centre of mass, about the centre: (τ + r × f; f). */
static inline fr_svec wrench_about_com(fr_svec wr, fr_vec3 r)
{
    return fr_sv(fr_v3_add(wr.ang, fr_v3_cross(r, wr.lin)), wr.lin);
}

/*
 * A pair that does not overlap: when the shapes are closer than the distance they can close in
 * one step, the pair gets a speculative model, built from the intersection with B moved towards
 * A by that distance plus a small virtual overlap (so that a face touching a face has its full
 * patch); the implicit step then lets it carry load as soon as the gap closes, inside the step
 * (a body released touching takes its weight on the first step, without a free fall and an
 * impact). Returns 1 with w->poly and *gap set, 0 when the pair is too far, or an error.
 */
static int speculative(fr_world *w, fri_pair *p, const fri_shape_inst *sa, const fri_shape_inst *sb,
                       double *gap, fr_vec3 *normal)
{
    double ra = sa->shape->bound_radius + fr_v3_norm(sa->local.p);
    double rb = sb->shape->bound_radius + fr_v3_norm(sb->local.p);
    double size = fmin(sa->shape->bound_radius, sb->shape->bound_radius);
    double lim = 2.0 * (reach(w, p->slot_a, ra) + reach(w, p->slot_b, rb)) + 1e-6 * size;
    if (p->cache.state == 1 && p->cache.distance > lim) return 0; /* a lower bound: too far */
    fr_gjk_result gr;
    fr_gjk_distance(sa->shape, sa->world, sb->shape, sb->world, NULL, &gr);
    /* GJK measures the true shapes; a curved shape's polytope lies within `slack` of it */
    const double slack = sa->slack + sb->slack;
    if (!(gr.distance - slack <= lim)) return 0;
    fr_vec3 n;
    if (gr.distance > 1e-6 * size)
        n = fr_v3_normalize(fr_v3_sub(gr.pb, gr.pa));
    else if (p->st.active)
        n = p->st.normal;
    else
        n = fr_polytope_sat_normal(&sa->shape->poly, sa->world, &sb->shape->poly, sb->world);
    if (!fr_v3_isfinite(n) || !(fr_v3_norm2(n) > 0.5)) return 0;
    const double virt = 1e-5 * size; /* virtual overlap: enough for a well-formed patch */
    fr_pose moved = sb->world;
    moved.p = fr_v3_mad(moved.p, -(gr.distance + virt + slack), n);
    int hit = fr_polytope_intersect(&sa->shape->poly, sa->world, &sb->shape->poly, moved, &w->cw,
                                    &w->poly);
    if (hit <= 0) return hit;
    *gap = gr.distance + virt + slack;
    *normal = n;
    return 1;
}

/* How much stiffer a resting pair's law may get in a step on its way to its stance cap, and
 * below how many stiffening depths of motion over the step a pair counts as resting (0.25 mm at
 * 5 ms: a block starting to tip moves less; a block counted moving from one stiffening depth
 * took the uncapped law as it leaned and tipped at 0.909 of w/h instead of 0.985) */
#define STANCE_RATE  2.0
#define STANCE_STILL 100.0

/* A polytope with more faces than this keeps its last stance while the direction stays within
 * STANCE_KEEP_DIR (a sphere of resolution 32 took 0.2 s a step to measure; a block's is exact). */
#define STANCE_KEEP_FACES 64
#define STANCE_KEEP_DIR   1e-9

static int shape_stance(fri_shape_inst *s, fr_vec3 n_local, double *wd, double *ht)
{
    const bool keep = s->shape->poly.nfaces > STANCE_KEEP_FACES;
    if (keep && s->stance_kept && fr_v3_dist(n_local, s->stance_n) <= STANCE_KEEP_DIR) {
        *wd = s->stance_w, *ht = s->stance_h;
        return FR_OK;
    }
    int err = fr_shape_stance(s->shape, n_local, wd, ht);
    if (keep && !err) {
        s->stance_n = n_local, s->stance_w = *wd, s->stance_h = *ht;
        s->stance_kept = true;
    }
    return err;
}

/*
 * The stiffening depth's cap for the pair along n (world, unit): the stance of each moving body
 * on the side facing the other (fr_contact_stance_depth: a block on its end near its tipping
 * angle leans on the law's compliance at its edge, the same depth whatever its size); 0 when
 * neither stands on a side narrow enough for it to matter.
 */
static double stance_cap(const fri_pair *p, fri_shape_inst *sa, fri_shape_inst *sb, fr_vec3 n)
{
    const double ds = p->params.stiffen_depth;
    if (!(ds > 0.0) || !(fr_v3_norm2(n) > 0.5)) return 0.0;
    double cap = ds;
    for (int side = 0; side < 2; side++) {
        fri_shape_inst *s = side ? sb : sa;
        if (s->is_static || !(s->stance_floor < ds)) continue;
        double wd, ht;
        if (shape_stance(s, fr_q_unrotate(s->world.q, n), &wd, &ht) == FR_OK)
            cap = fmin(cap, fr_contact_stance_depth(ds, wd, ht));
    }
    return cap < ds ? cap : 0.0;
}

/* m: how far a body's point at radius r may move within the step beyond its start velocity's
 * reach, judged by how much the last step changed its velocity (a body stopped or struck in it
 * starts this one nearly still under forces that no longer balance) */
static double change_reach(const fr_world *w, int slot, double r)
{
    if (w->model[slot].type == FR_BODY_STATIC) return 0.0;
    const fri_body_state *s = &w->state[slot];
    return w->h * (s->dvel + s->dangvel * r);
}

/* How far the pair's bodies can move within the step, m (their reach summed), in *motion what of
 * it is more than gravity's free fall over the step adds (the pair's own motion), and in *change
 * what the last step's change of their velocities may add to that. */
static double pair_reach(const fr_world *w, const fri_pair *p, const fri_shape_inst *sa,
                         const fri_shape_inst *sb, double *motion, double *change)
{
    const double gh = w->h * w->h * fr_v3_norm(w->def.gravity);
    double total = 0.0;
    *motion = *change = 0.0;
    if (w->model[p->slot_a].type != FR_BODY_STATIC) {
        double ra = sa->shape->bound_radius + fr_v3_norm(sa->local.p);
        double r = reach(w, p->slot_a, ra);
        *motion += r - gh, total += r;
        *change += change_reach(w, p->slot_a, ra);
    }
    if (w->model[p->slot_b].type != FR_BODY_STATIC) {
        double rb = sb->shape->bound_radius + fr_v3_norm(sb->local.p);
        double r = reach(w, p->slot_b, rb);
        *motion += r - gh, total += r;
        *change += change_reach(w, p->slot_b, rb);
    }
    return total;
}

/* m/s: how fast the pair's sides close along its model's normal at its point (A into B) */
static double closing(const fr_world *w, const fri_pair *p, int ba, int bb)
{
    const fr_vec3 x = p->model.point;
    double v = 0.0;
    for (int side = 0; side < 2; side++) {
        const int slot = side ? bb : ba;
        const int type = w->model[slot].type;
        if (type == FR_BODY_STATIC) continue;
        const fri_body_state *s = &w->state[slot];
        const fr_vec3 vp = fr_v3_add(s->vel, fr_v3_cross(s->angvel, fr_v3_sub(x, s->pose.p)));
        v += (side ? -1.0 : 1.0) * fr_v3_dot(p->model.normal, vp);
    }
    return v;
}

/*
 * A pair that moves or turns by more than a stiffening depth within the step: its intersection
 * with B moved towards A along n by the patch's own gap g0 plus the distance the pair can close
 * (docs/contact.md §5: the model's band points, so that a face rotating or falling flat within
 * the step meets the ground where it lands, not only where it touched first); `reach` and
 * `motion` are pair_reach's. Returns the band's polyhedron and its gap, or NULL.
 */
static const fr_polyhedron_out *band(fr_world *w, const fri_pair *p, const fri_shape_inst *sa,
                                     const fri_shape_inst *sb, fr_vec3 n, double g0, double reach,
                                     double motion, double *gap)
{
    /* (a robot link's linear law does not stiffen: against a free body, which lands on it as
     * on the ground, or a fixed one it lands on (the caller asks only then), the band starts
     * beyond the link law's rest depth under gravity; a box landing on an edge of the hexapod's
     * back otherwise met its face only at the next step, 1.5 mm deep, and was thrown back) */
    double thr = p->params.stiffen_depth;
    const int ta = w->model[p->slot_a].type, tb = w->model[p->slot_b].type;
    const bool other_free_or_fixed = (ta == FR_BODY_LINK ? tb : ta) == FR_BODY_DYNAMIC ||
                                     (ta == FR_BODY_LINK ? tb : ta) == FR_BODY_STATIC;
    if (!(thr > 0.0) && (ta == FR_BODY_LINK) != (tb == FR_BODY_LINK) && other_free_or_fixed)
        thr = w->h * w->h * fr_v3_norm(w->def.gravity) / w->def.contact_link_kappa;
    if (!(thr > 0.0) || !(fr_v3_norm2(n) > 0.5)) return NULL;
    double g = g0 + reach;
    if (!(motion > thr)) return NULL;
    /* B moved into A by more than the thinner body is thick passes through it there: the band's
     * thickness saturates at that body's, and its fitted depths become the move less the
     * thickness, millimetres off (a 1 cm plate sliding at 2.7 m/s reaches 13.5 mm in a 5 ms
     * step: its band put the lifted end 1.6–3.5 mm above the ground instead of 40 µm, so the end
     * landed unseen and the plate see-sawed; a tilted 2 mm coin went through a 3 mm table). The
     * move stops at the thinner body's least width (half of it made violent hull scenes gain
     * more in the random-scene audit, docs/contact.md §5). */
    g = fmin(g, g0 + fmin(sa->thin, sb->thin));
    fr_pose moved = sb->world;
    moved.p = fr_v3_mad(moved.p, -g, n);
    int hit = fr_polytope_intersect(&sa->shape->poly, sa->world, &sb->shape->poly, moved, &w->cw,
                                    &w->band);
    if (hit != 1) return NULL; /* (a full buffer or a repair failure: the patch alone) */
    *gap = g;
    return &w->band;
}

/*
 * The turns the pair's curved shape is invariant to (fr_contact_model.roll_s; docs/contact.md §5,
 * "Rolling"): a sphere turning about its centre, a cylinder or capsule about its axis, keeps the
 * volume it fills, so such a turn neither deepens the patch nor meets a pressure couple. The
 * model's points are linear in the step's motion, and a turn carries a point on the tangent of its
 * arc: a ball rolling by θ a step took the ground as tilted by θ under it, its leading band point
 * (0.7 of the radius ahead) dug in once θ reached 0.42 and held the ball's roll there.
 */
static void pair_roll(const fr_world *w, const fri_pair *p, const fri_shape_inst *sa,
                      const fri_shape_inst *sb, fr_contact_model *m)
{
    memset(m->roll_s, 0, sizeof m->roll_s);
    m->roll = false;
    if (rolls(sa) == rolls(sb) || !(m->area > 0.0)) return; /* (two rolling shapes: rolls) */
    /* (free bodies only: a robot's link's contacts are solved inside its tree's step, and a
     * settle that gives up must leave the run the unsettled one step for step; not looked into) */
    if (w->model[p->slot_a].type == FR_BODY_LINK || w->model[p->slot_b].type == FR_BODY_LINK)
        return;
    for (int side = 1; side >= 0; side--) {
        const fri_shape_inst *s = side ? sb : sa;
        const int type = s->shape->type;
        if (type == FR_SHAPE_SPHERE) {
            m->roll_s[0] = 1.0, m->roll_s[1] = 0.0, m->roll_s[2] = 1.0;
            m->roll = true;
            return;
        }
    }
    for (int side = 1; side >= 0; side--) {
        const fri_shape_inst *s = side ? sb : sa;
        const int type = s->shape->type;
        if (type == FR_SHAPE_CYLINDER || type == FR_SHAPE_CAPSULE) {
            const fr_vec3 ax = fr_q_rotate(s->world.q, fr_v3(0.0, 0.0, 1.0));
            const double a1 = fr_v3_dot(ax, m->t1), a2 = fr_v3_dot(ax, m->t2);
            m->roll_s[0] = a1 * a1, m->roll_s[1] = a1 * a2, m->roll_s[2] = a2 * a2;
            m->roll = true;
            return;
        }
    }
}

/* m/s: the most slip a bond's stick allowance takes as zero (fr_contact_model.stick_speed, the
 * solve's tolerance). A loose tolerance let a bond hold its friction above μ_s·N by the force of
 * that slip for good: at 1e-4 m/s a stick-slip rig's bond held 1.0·N at μ_s 0.6, and a block at
 * μ 0.56 stayed on a 30° slope (a new user's trial; session 36). */
#define STICK_SPEED_MAX 1e-9

/*
 * A resting pair's model advanced from the last step's (fr_contact_model_advance) instead of
 * built again from the intersection (docs/world.md, "Work kept between steps"): while the
 * bodies' relative displacement at the patch, accumulated since the model was built, stays below
 * GEO_SLAB_REL of a slab's width (across n; exact along n) or GEO_DRIFT_REL of min(depth, δ_s)
 * for any other patch (first order: a relative force error of at most 3× that), the step ahead
 * cannot add more, and for at most GEO_MAX_AGE steps. A stack at rest moves by picometres per
 * step: the geometry (GJK, Muller–Preparata and the patch integrals, half of a resting stack's
 * step) is then taken once in GEO_MAX_AGE steps.
 */
#define GEO_DRIFT_REL 1e-6
/* A slab between parallel faces (a block on a block) is updated exactly along n: only the motion
 * across n moves its outline, by a relative O(displacement / width): GEO_SLAB_REL of its width. */
#define GEO_SLAB_REL 1e-7
#define GEO_MAX_AGE  64

static double speed_reach(const fr_world *w, int slot, double r)
{
    if (w->model[slot].type == FR_BODY_STATIC) return 0.0;
    const fri_body_state *s = &w->state[slot];
    return w->h * (fr_v3_norm(s->vel) + fr_v3_norm(s->angvel) * r) + change_reach(w, slot, r);
}

static bool advance(fr_world *w, fri_pair *p, const fri_shape_inst *sa, const fri_shape_inst *sb,
                    int ba, int bb)
{
    if (!p->geo_ok || p->geo_age >= GEO_MAX_AGE) return false;
    const double left = p->geo_limit - p->geo_drift;
    double ra = sa->shape->bound_radius + fr_v3_norm(sa->local.p);
    double rb = sb->shape->bound_radius + fr_v3_norm(sb->local.p);
    /* the step ahead: its motion must stay within the allowance (a slab's: a tenth of its depth
     * along n, which the update takes exactly) */
    const double ahead = p->model.slab ? fmax(left, 0.1 * p->model.depth0) : left;
    if (!(speed_reach(w, ba, ra) + speed_reach(w, bb, rb) <= ahead)) return false;
    fr_contact_body ca = contact_body(w, ba), cb = contact_body(w, bb);
    bodies_roll(w, sa, sb, ba, bb, &ca, &cb);
    const fr_contact_body a0 = {.pose = p->geo_pa, .p_lo = p->geo_lo_a};
    const fr_contact_body b0 = {.pose = p->geo_pb, .p_lo = p->geo_lo_b};
    double moved =
        fr_contact_model_advance(&p->params, &a0, &b0, &ca, &cb, left, &p->st, &p->model);
    if (moved < 0.0) return false;
    p->geo_drift += moved;
    p->geo_age++;
    p->geo_pa = ca.pose, p->geo_pb = cb.pose;
    p->geo_lo_a = ca.p_lo, p->geo_lo_b = cb.p_lo;
    w->geo_advanced++;
    return true;
}

void fri_world_pairs_clear(fr_world *w)
{
    for (int k = w->nactive - 1; k >= 0; k--) pair_remove(w, w->active[k]);
    w->ncontacts = 0;
}

int fri_world_contacts(fr_world *w)
{
    w->ncontacts = 0;
    if (w->sub_k == 0) w->max_pen = 0.0; /* (the deepest over a tick's substeps) */
    if (w->nshapes == 0) return FR_OK;
    const bool implicit = w->def.contact_implicit;
    /* each shape's world pose once per step (a shape is in several pairs) */
    for (int i = 0; i < w->nshapes; i++) {
        fri_shape_inst *s = &w->shapes[i];
        if (s->proxy < 0) continue;
        s->world = fri_shape_pose(w, s);
        if (!s->is_static) fr_sap_move(w->sap, s->proxy, fat_aabb(w, s, fri_body_slot(w, s->body)));
    }
    /* the sweep along the axis where the shapes spread most (a column along z, a row along x):
     * along an axis they all share, every shape overlaps every other and the sweep is O(n²) */
    if (w->steps % 32 == 0) fr_sap_set_axis(w->sap, fr_sap_choose_axis(w->sap));
    int npairs = 0;
    if (fr_sap_update(w->sap, w->sap_pairs, w->max_sap_pairs, &npairs) == FR_ERR_FULL) {
        w->pair_overflows += npairs - w->max_sap_pairs;
        npairs = w->max_sap_pairs;
    }
    const uint64_t stamp = w->steps + 1;
    w->gt_nqueue = 0;
    for (int k = 0; k < npairs; k++) {
        int pa = w->sap_pairs[k].a, pb = w->sap_pairs[k].b;
        if (pa < 0 || pb < 0 || pa > w->def.max_shapes || pb > w->def.max_shapes) continue;
        int a = w->proxy_shape[pa], b = w->proxy_shape[pb];
        if (a > b) {
            int t = a;
            a = b;
            b = t;
        }
        fri_shape_inst *sa = &w->shapes[a], *sb = &w->shapes[b];
        if (sa->proxy < 0 || sb->proxy < 0 || fr_body_id_eq(sa->body, sb->body)) continue;
        int ba = fri_body_slot(w, sa->body), bb = fri_body_slot(w, sb->body);
        if (ba < 0 || bb < 0 || fri_world_links_filtered(w, ba, bb) || fri_world_joined(w, ba, bb))
            continue;
        /* a fixed base on the ground: nothing to solve (its force would move nothing, and its
         * elastic energy would count as energy the world does not have) */
        if (fri_world_body_immovable(w, ba) && fri_world_body_immovable(w, bb)) continue;
        bool created;
        int r = pair_find_or_add(w, a, b, &created);
        if (r < 0) {
            w->pair_overflows++;
            continue;
        }
        fri_pair *p = &w->pairs[r];
        /* the last step's solve modelled the pair: a model rebuilt now is measured against the
         * end it predicted ("late", below) */
        const bool solved = !created && p->stamp == w->steps && p->modeled && !p->cmode;
        p->late = 0.0;
        p->late_pred = false;
        p->stamp = stamp;
        p->slot_a = ba;
        p->slot_b = bb;
        p->modeled = false;
        bool was_cmode = p->cmode;
        p->cmode = false;
        p->res.in_contact = 0;
        if (created) {
            pair_params(w, p, ba, bb);
            p->params_ok = fr_contact_params_check(&p->params) == FR_OK;
        }
        if (!p->params_ok) continue;
        double gap = 0.0;
        double pred = -1.0; /* J: the end the last step predicted, for a rebuilt model (late) */
        if (implicit && w->def.reuse_contacts &&
            w->def.contact_mode != FR_CONTACT_MODE_CONSTRAINT && advance(w, p, sa, sb, ba, bb)) {
            pair_roll(w, p, sa, sb, &p->model); /* (the advance may have turned its axes) */
            goto modeled;
        }
        p->geo_ok = false;
        /* a rolling shape met as its surface (roll_snap), about the last step's normal; not
         * while the settle pushes overlaps out, which then pushes out the polytope as placed (a
         * face met lies inside it) */
        fri_shape_inst snapped;
        p->snapped = false;
        const int side = implicit && !w->pushing ? roll_side(w, sa, sb, ba, bb) : -1;
        /* (met so from its first touch: a wheel placed with a vertex down and met at a face from
         * its second step on was 7 % of its radius deeper there) */
        const fr_vec3 rn = side < 0       ? fr_v3_zero()
                           : p->st.active ? p->st.normal
                                          : pair_direction(sa, sb);
        if (side >= 0 && fr_v3_norm2(rn) > 0.5) {
            if (side == 0 && roll_snap(sa, rn, &snapped))
                sa = &snapped, p->snapped = true;
            else if (side == 1 && roll_snap(sb, fr_v3_neg(rn), &snapped))
                sb = &snapped, p->snapped = true;
        }
        if (solved)
            pred = fr_contact_response_energy(&p->model, &p->resp);
        else if (implicit)
            pred = 0.0;
        int hit = fr_collide_pair(sa->shape, sa->world, sb->shape, sb->world, &p->cache, &w->cw,
                                  &w->poly);
        if (hit < 0) return hit;
        fr_vec3 n = p->st.active ? p->st.normal : fr_v3_zero();
        if (hit == 0) {
            hit = speculative(w, p, sa, sb, &gap, &n);
            if (hit < 0) return hit;
        }
        if (hit == 0) {
            if (p->st.active) fr_contact_state_reset(&p->st);
            continue;
        }
        double band_gap = 0.0, motion = 0.0, change = 0.0;
        const double reach_ab = pair_reach(w, p, sa, sb, &motion, &change);
        /* (a link against a fixed body: the band only where its patch is below the largest it
         * can form, below) */
        const int ta = w->model[ba].type, tb = w->model[bb].type;
        const bool link_fixed = (ta == FR_BODY_LINK && tb == FR_BODY_STATIC) ||
                                (tb == FR_BODY_LINK && ta == FR_BODY_STATIC);
        const fr_polyhedron_out *bp = implicit && !link_fixed ? band(w, p, sa, sb, n, gap, reach_ab,
                                                                     motion + change, &band_gap)
                                                              : NULL;
        fr_contact_body ca = contact_body(w, ba), cb = contact_body(w, bb);
        bodies_roll(w, sa, sb, ba, bb, &ca, &cb);
        const bool fresh = !p->st.active; /* a new contact (its state restarts) */
        /* The law's stiffening depth (docs/contact.md §5, "The stance cap"): a pair at rest
         * (its bodies move by less than STANCE_STILL stiffening depths within the step) takes the
         * cap of how its bodies stand along the normal, at once when it first touches (a body
         * placed touching) and else by at most STANCE_RATE a step; a pair that moves takes the
         * uncapped law at once (at the same depth a softer law only gives way). A stiffer law
         * meets a landing found late with more force: with the cap taken whatever the motion, a
         * collapsing column of 2 cm cubes stopped 1.5–2.4 times as many steps unconverged, 7–13 mm
         * deep, and the random scenes' boxes gained up to 6.5e-5 of their energy in a step
         * (2.9e-5 without the cap, and again with it taken at rest only). */
        const double ds0 = p->params.stiffen_depth;
        const bool still = ds0 > 0.0 && !(motion > STANCE_STILL * ds0);
        double ds = ds0, ds_target = ds0;
        if (still && p->st.active) {
            const double cur = p->st.stiffen > 0.0 ? p->st.stiffen : ds0;
            const double cap = stance_cap(p, sa, sb, n);
            ds_target = cap > 0.0 ? cap : ds0;
            ds = ds_target < cur ? fmax(ds_target, cur / STANCE_RATE) : ds_target;
        }
        p->params.stiffen_cap = ds < ds0 ? ds : 0.0;
        const fr_contact_state st0 = p->st;
        int err = fr_contact_model_build(&p->params, &w->poly, gap, bp, band_gap, &ca, &cb, w->h,
                                         &p->st, &p->model);
        if (err) return err;
        if (still && !st0.active && p->model.area > 0.0) {
            /* first touch at rest: built again with its own normal's cap */
            const double cap = stance_cap(p, sa, sb, p->model.normal);
            if (cap > 0.0) {
                ds = ds_target = cap;
                p->params.stiffen_cap = cap;
                p->st = st0;
                err = fr_contact_model_build(&p->params, &w->poly, gap, bp, band_gap, &ca, &cb,
                                             w->h, &p->st, &p->model);
                if (err) return err;
            }
        }
        /* A robot link landing: its patch below the largest the pair can form (a corner, an edge
         * or a ball, whose law the link's area factor stiffens) and closing within the step by
         * more than its mean depth (the patch would more than double), with the band that can
         * close within the step, so that the step meets the face it lands on (a falling H1's
         * pelvis, landing vertex-first, was found 1.2 mm deep holding 444 J against the 5.3 J
         * the step before predicted: 30.6 J from nowhere in one tick). A foot standing on the
         * ground takes none (a band at every step of a walk cost the hexapod 29 % more
         * instructions and kept its tree's steps from being revised). */
        if (implicit && link_fixed && p->model.area > 0.0 &&
            closing(w, p, ba, bb) * w->h > fmax(p->model.depth0, 0.0)) {
            bp = band(w, p, sa, sb, n, gap, reach_ab, motion + change, &band_gap);
            if (bp) {
                p->st = st0;
                err = fr_contact_model_build(&p->params, &w->poly, gap, bp, band_gap, &ca, &cb,
                                             w->h, &p->st, &p->model);
                if (err) return err;
            }
        }
        if (p->st.active) p->st.stiffen = ds;
        /* robot links: the stiffness of the mass the contact moves (docs/robots.md); an advanced
         * model keeps the factor it was built with */
        if (implicit && p->mass_scaled && p->model.area > 0.0 &&
            (w->model[ba].type == FR_BODY_LINK || w->model[bb].type == FR_BODY_LINK))
            fri_world_link_contact_scale(w, p, fmin(sa->silhouette, sb->silhouette), fresh);
        pair_roll(w, p, sa, sb, &p->model);
        /* resting on a lifted patch: the step takes the builds' own tangent (geotangent.c) */
        if (implicit) fri_pair_geometry_tangent(w, r, ca, cb, still && gap == 0.0);
        /* a resting overlap's model may be advanced over the next steps */
        p->geo_ok = implicit && gap == 0.0 && !bp && p->model.npts == FR_CONTACT_PATCH_PTS &&
                    p->model.area > 0.0 && p->model.depth0 > 0.0 && ds == ds_target;
        if (p->geo_ok) {
            p->geo_pa = ca.pose, p->geo_pb = cb.pose;
            p->geo_lo_a = ca.p_lo, p->geo_lo_b = cb.p_lo;
            p->geo_drift = 0.0, p->geo_age = 0;
            /* (a curved or cornered patch: its error is relative to the law's scale too) */
            const double scale =
                p->model.ds > 0.0 ? fmin(p->model.depth0, p->model.ds) : p->model.depth0;
            p->geo_limit =
                p->model.slab ? GEO_SLAB_REL * sqrt(p->model.area) : GEO_DRIFT_REL * scale;
        }
    modeled:
        p->modeled = p->model.area > 0.0;
        if (!p->modeled) continue;
        p->model.stick_speed = fmin(w->def.solver_tolerance, STICK_SPEED_MAX);
        if (w->def.contact_mode == FR_CONTACT_MODE_CONSTRAINT &&
            w->model[ba].type != FR_BODY_LINK && w->model[bb].type != FR_BODY_LINK) {
            /* the constraint contact mode: LCP rows at the polygon's points (constraints.c) */
            p->modeled = false;
            p->cmode = was_cmode;
            memset(&p->resp, 0, sizeof p->resp);
            fri_contact_points(w, p, gap);
            w->contacts[w->ncontacts++] = r;
            continue;
        }
        p->mu = p->model.sliding ? p->model.mu_k : p->model.mu_s;
        p->restuck = false;
        p->held = false;
        if (w->settling) p->mu = w->pushing ? 0.0 : FRI_SETTLE_MU;
        /* (all but the tangent C, the response's bulk, which is filled before it is read) */
        memset(p->resp.w, 0, sizeof p->resp.w);
        memset(&p->resp.normal, 0, sizeof p->resp - offsetof(fr_contact_response, normal));
        w->contacts[w->ncontacts++] = r;
        if (pred >= 0.0) fri_late_measure(w, p, pred);
        if (!implicit) {
            /* explicit: the force of the step's start, applied as it is */
            double y[6];
            fri_pair_local(w, p, fri_body_nu(w, ba), fri_body_nu(w, bb), y);
            fr_contact_respond(&p->model, y, 0.0, p->mu, NULL, -1.0, 0u, &p->resp);
            if (p->resp.slip && p->resp.normal > 0.0 && p->mu > p->model.mu_k) {
                p->mu = p->model.mu_k; /* the bond breaks: kinetic friction */
                fr_contact_respond(&p->model, y, 0.0, p->mu, NULL, -1.0, 0u, &p->resp);
            }
            fr_svec wr = fr_contact_model_wrench(&p->model, p->resp.w);
            apply(w, ba, wrench_about_com(wr, fr_v3_sub(p->model.point, w->state[ba].pose.p)));
            apply(w, bb,
                  fr_sv_neg(wrench_about_com(wr, fr_v3_sub(p->model.point, w->state[bb].pose.p))));
        }
    }
    if (w->gt_nqueue > 0) fri_world_geometry_tangents(w, contact_body);
    fri_late_take(w);
    /* the contacts in the order of their records, so that the solve's passes over them stream
     * through memory (a record is kilobytes; the broad phase reports pairs in sweep order) */
    for (int i = 1; i < w->ncontacts; i++) {
        int r = w->contacts[i], j = i;
        while (j > 0 && w->contacts[j - 1] > r) {
            w->contacts[j] = w->contacts[j - 1];
            j--;
        }
        w->contacts[j] = r;
    }
    /* pairs the broad phase no longer reports are forgotten */
    for (int k = w->nactive - 1; k >= 0; k--) {
        int r = w->active[k];
        if (w->pairs[r].stamp != stamp) pair_remove(w, r);
    }
    return FR_OK;
}

/* The work a kinematic body does on the world through a contact over the step: it moves at its
 * set velocities whatever the load, so the contact's reaction is driven, −h·(F·v + τ·ω) with F, τ
 * the force and torque (about its centre of mass) on it (a paddle hitting a box, a conveyor). */
static double kinematic_work(const fr_world *w, const fri_pair *p)
{
    double work = 0.0;
    for (int side = 0; side < 2; side++) {
        int slot = side ? p->slot_b : p->slot_a;
        if (w->model[slot].type != FR_BODY_KINEMATIC) continue;
        const fri_body_state *s = &w->state[slot];
        fr_vec3 f = side ? p->res.force_b : p->res.force_a;
        fr_vec3 t = side ? p->res.torque_b : p->res.torque_a;
        work -= w->h * (fr_v3_dot(f, s->vel) + fr_v3_dot(t, s->angvel));
    }
    return work;
}

void fri_world_contacts_commit(fr_world *w)
{
    if (w->sub_k == 0) w->max_pen = 0.0;
    for (int i = 0; i < w->ncontacts; i++) {
        fri_pair *p = &w->pairs[w->contacts[i]];
        if (p->cmode) {
            fri_contact_constraint_report(w, p);
            w->work += kinematic_work(w, p);
            continue;
        }
        const fr_contact_model *m = &p->model;
        const fr_contact_response *rs = &p->resp;
        const fri_body_state *A = &w->state[p->slot_a], *B = &w->state[p->slot_b];
        const fr_contact_body ca = contact_body(w, p->slot_a), cb = contact_body(w, p->slot_b);
        fr_contact_model_commit(m, rs, &ca, &cb, &p->st);
        /* an unloaded contact (a speculative one before a landing) restarts its bond: it slides
         * when it is next loaded if the bodies move across each other now (a box landing with a
         * slow sideways speed was held by μ_s at touchdown: 30 % short of its slide) */
        if (!(rs->normal > 0.0) && p->st.active) {
            double y[6];
            fri_pair_local(w, p, fri_body_nu(w, p->slot_a), fri_body_nu(w, p->slot_b), y);
            p->st.sliding = fr_contact_model_starts_sliding(m, y);
        }
        fr_contact_result *res = &p->res;
        memset(res, 0, offsetof(fr_contact_result, K));
        res->in_contact = rs->normal > 0.0 || m->depth0 > 0.0;
        res->sliding = rs->slip;
        fr_svec wr = fr_contact_model_wrench(m, rs->w);
        res->force_a = wr.lin;
        res->torque_a = wrench_about_com(wr, fr_v3_sub(m->point, A->pose.p)).ang;
        res->force_b = fr_v3_neg(wr.lin);
        res->torque_b = fr_v3_neg(wrench_about_com(wr, fr_v3_sub(m->point, B->pose.p)).ang);
        res->point = m->point;
        res->normal = m->normal;
        res->mean_depth = m->depth0;
        res->max_depth = p->st.max_depth;
        res->area = m->area;
        res->volume = m->depth0 > 0.0 ? m->area * m->depth0 : 0.0;
        res->normal_force = rs->normal;
        res->friction_force = fr_v3_add(fr_v3_scale(m->t1, rs->z[0]), fr_v3_scale(m->t2, rs->z[1]));
        res->friction_torque = m->rbar * rs->z[2];
        res->friction_limit = p->mu * rs->normal;
        res->spin_radius = m->rbar;
        if (res->in_contact && res->max_depth > w->max_pen) w->max_pen = res->max_depth;
        w->work += kinematic_work(w, p);
    }
}
