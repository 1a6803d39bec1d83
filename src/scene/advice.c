/* Advice the loader gives about what the step cannot resolve in a scene as placed (a warning,
 * the run goes on): a slender body standing on its end at a long step (docs/contact.md §8). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fureru/collision.h"
#include "fureru/contact.h"
#include "scene_internal.h"

/* The tipping error the scene warns from, of w/h (issue 8's requirement: within 2 %, less the
 * estimate's own error: a 4 mm × 20 cm rod at 1 ms, estimated 1.7 %, tips 1.9 % early), and
 * the estimate the step it suggests aims at: where the stance cap takes over at a shorter step,
 * the error settles near 1.3–1.9 %, not in proportion to dt */
#define TIP_ADVICE_REL    0.018
#define TIP_ADVICE_TARGET 0.014
/* the estimate's constant, measured: 2.15·√(2·δ·h)/w is within 0.7 % of w/h of where 3 mm to
 * 0.2 m blocks (h/w 3 to 100) tip at 5 ms (a 3 mm × 30 cm rod: 13.6 % against 13.8 %), 0.5 %
 * at 1 ms, when the stance cap's floor was δ/40. With it at δ/4000 (2026-11-28) only rods
 * beyond h/w 100 are warned: a 2 mm × 30 cm one, estimated 2.1 %, tips 2.8 % early at 5 ms and
 * 2.1 % at 3.4 ms and at 1 ms */
#define TIP_LEAN 2.15

/* Small bodies on a steep slope at a long step rock at their friction or tipping limit (a
 * period-2 the step does not damp, docs/contact.md §8): of 3280 bodies placed touching at their
 * friction limit, 22 crept or tipped, all at 5 ms, 1.6 mm to 2.7 cm, on slopes of 19–57°; none
 * of 5 cm and more, none at 1 ms (a new user's trial found 1 of 1299 at 1 ms). With the
 * geometry's tangent (docs/contact.md §5) 6 still do, at 5 ms, 2.6 mm to 1.5 cm, 22–58°; with
 * the stance cap's floor at δ/4000, 4; in the substeps the rule asks (world.substeps 0, the
 * default; docs/world.md "Substeps"), none: warned only where world.substeps is set to fewer
 * than the rule asks for the body (a trial found a 25 mm cube at 5 ms told to take substeps the
 * rule does not give it). */
#define SMALL_ADVICE_SLOPE (15.0 * M_PI / 180) /* rad */

static void advise_small(fri_scene *sc, const fr_cfg_node *b, const char *body,
                         const fr_shape *shape, fr_vec3 down, fr_vec3 nf, const fr_world_def *def)
{
    fri_tip_advice *t = &sc->tip;
    if (def->substeps == 0 || t->nsmall >= FRI_TIP_ADVICE_MAX) return;
    if (t->nsmall > 0 && t->small[t->nsmall - 1].node == b) return; /* a repeat's copies */
    const double slope = acos(fmax(-1.0, fmin(1.0, fr_v3_dot(nf, fr_v3_normalize(down)))));
    if (!(slope >= SMALL_ADVICE_SLOPE)) return;
    double least, size;
    fr_shape_widths(shape, &least, &size);
    /* (the body's least width is its widest shape's: at least this one's, asking no more) */
    if (!(fr_world_substeps_for_width(def, least) > def->substeps)) return;
    t->small[t->nsmall].node = b;
    t->small[t->nsmall].size = size;
    t->small[t->nsmall].slope = slope;
    t->small[t->nsmall].width = least;
    snprintf(t->small[t->nsmall].name, sizeof t->small[t->nsmall].name, "%s", body);
    t->nsmall++;
}

/* The free bodies' least widths as the substep rule takes them (a body's widest shape's least
 * width), gathered shape by shape: the narrowest body, for the advice on the rule's cap. */
static void track_width(fri_tip_advice *t, const fr_cfg_node *b, const char *body,
                        const fr_shape *shape)
{
    double least, greatest;
    fr_shape_widths(shape, &least, &greatest);
    if (t->cur.node && strcmp(t->cur.name, body) == 0) {
        t->cur.width = fmax(t->cur.width, least);
    } else {
        if (t->cur.node && (!t->thin.node || t->cur.width < t->thin.width)) t->thin = t->cur;
        t->cur.node = b;
        t->cur.width = least;
        snprintf(t->cur.name, sizeof t->cur.name, "%s", body);
    }
    for (int i = 0; i < t->nsmall; i++)
        if (strcmp(t->small[i].name, body) == 0) t->small[i].width = t->cur.width;
}

/* A contact so stiff that its body rests less than STIFF_ADVICE times the thickness the
 * intersection resolves (fr_polytope_intersect: 1e-9 of the smaller polytope's radius, plus
 * 1e-11 of both, below which a patch counts as touching) is not seen at rest: a 0.2 m, 1 kg
 * block on a rubber of 1e12 N/m³ rests 2.5e-10 m deep against 2.8e-10 resolved, pivoted on an
 * edge while stuck and broke away at 0.62 of μ_s·N (a new user's trial, docs/contact.md §8; 1.2 kg
 * and more, or 8e11 N/m³ and less, were right) */
#define STIFF_ADVICE 3.0

static void advise_stiff(fri_scene *sc, const fr_cfg_node *b, const char *body,
                         const fr_shape *shape, const fr_contact_material *m, double ds, double g)
{
    if (sc->tip.stiff_warned) return;
    fr_body_id id;
    double mass = 0.0, least = 0.0, greatest = 0.0;
    if (fr_world_find_body(sc->world, body, &id) != FR_OK ||
        fr_body_get_mass(sc->world, id, &mass, NULL) != FR_OK || !(mass > 0.0))
        return;
    fr_shape_widths(shape, &least, &greatest);
    /* the rest depth on a rigid support: the material's law over the smallest face it may stand
     * on (least²: a slab on its broad side rests shallower), or the mass-scaled law's at its own
     * weight, δ_s·ln 2 */
    const double rest =
        m->stiffness > 0.0 ? mass * g / (m->stiffness * least * least) : ds * log(2.0);
    const double thin = 1e-9 * shape->poly.radius; /* (the support's share unknown here) */
    if (!(rest < STIFF_ADVICE * thin)) return;
    fr_diag wd;
    fr_cfg_error(
        b, &wd, 0,
        "body '%s' rests about %.2g m deep in its contacts (%s), within %.0f times the "
        "%.2g m (or more) the intersection resolves: at rest its contact may not be seen, and "
        "static friction may break early (docs/contact.md §8); a softer contact keeps it "
        "resolved",
        body, rest, m->stiffness > 0.0 ? "its material's stiffness" : "world.contact.kappa",
        STIFF_ADVICE, thin);
    wd.severity = FR_DIAG_WARNING;
    fr_diag_list_add(sc->opts->diags, &wd);
    sc->tip.stiff_warned = true;
}

/* A slender body standing on a slope turned from square to it (a corner leading down) tips
 * early at any step: measured (a new user's trial, 2026-11-28; docs/contact.md §5, "What the new
 * floor costs") 4 × 4 × 200 mm turned 20° 2.1–2.2 %, 30° 2.5–2.7 %, 45° 4.3–4.9 % at 5 and 1 ms,
 * 3 × 3 × 300 mm turned 45° 5.6–6.4 %, 10 × 10 × 100 mm turned 45° 2.5–2.8 %; cubes turned 45°
 * within 2 % (1.6–1.9 %). Warned from h/w TURN_ADVICE_HW and TURN_ADVICE_DEG off the nearest
 * side's normal. */
#define TURN_ADVICE_HW  5.0
#define TURN_ADVICE_DEG 20.0

static void advise_turned(fri_scene *sc, const fr_cfg_node *b, const char *body,
                          const fr_shape *shape, fr_vec3 nf, fr_vec3 down, double w, double h)
{
    const fr_polytope *P = &shape->poly;
    fri_tip_advice *t = &sc->tip;
    if (t->nturned >= FRI_TIP_ADVICE_MAX || !(h >= TURN_ADVICE_HW * w)) return;
    /* the side faces' normals (square to the stance face's): the one nearest downhill */
    double best = -1.0;
    for (int f = 0; f < P->nfaces; f++)
        if (fabs(fr_v3_dot(P->normal[f], nf)) < 0.1)
            best = fmax(best, fabs(fr_v3_dot(P->normal[f], down)));
    if (!(best >= 0.0)) return;
    const double turn = acos(fmin(1.0, best)) * 180.0 / M_PI;
    if (!(turn >= TURN_ADVICE_DEG)) return;
    t->turned[t->nturned].node = b;
    snprintf(t->turned[t->nturned].name, sizeof t->turned[t->nturned].name, "%s", body);
    t->turned[t->nturned].shape = shape;
    t->turned[t->nturned].nf = nf;
    t->turned[t->nturned].w = w;
    t->turned[t->nturned].h = h;
    t->turned[t->nturned].turn = turn;
    t->nturned++;
}

/* Whether a shape of the world rests on its stance face (normal nf, shape frame) on another
 * body's shape as placed: within RESTS_GAP of its height of it, the two facing each other along
 * nf within RESTS_DEG. The slope was the stance face's tilt from gravity alone, so a rod hanging
 * in the air over flat ground, turned, "stood turned 34° from square to the slope" (a new user's
 * trial); a body on flat ground resting on an edge or corner stands on no slope either. */
#define RESTS_GAP 0.01
#define RESTS_DEG 5.0
static bool rests_on_face(const fri_scene *sc, const fr_shape *shape, fr_vec3 nf, double h)
{
    const fr_world *w = sc->world;
    const int n = fr_world_shape_count(w);
    fr_body_id self = FR_BODY_NULL;
    fr_pose local, body;
    int k0 = -1;
    for (int k = 0; k < n && k0 < 0; k++)
        if (fr_world_shape_at(w, k, &self, &local) == shape) k0 = k;
    if (k0 < 0 || fr_body_get_pose(w, self, &body) != FR_OK) return false;
    const fr_pose pa = fr_pose_mul(body, local);
    const fr_vec3 down = fr_q_rotate(pa.q, nf); /* the stance face's outward normal, world */
    for (int k = 0; k < n; k++) {
        fr_body_id other;
        fr_pose lb, bb;
        const fr_shape *s = fr_world_shape_at(w, k, &other, &lb);
        if (!s || fr_body_id_eq(other, self) || fr_body_get_pose(w, other, &bb) != FR_OK) continue;
        const fr_pose pb = fr_pose_mul(bb, lb);
        fr_gjk_result g;
        fr_gjk_distance(shape, pa, s, pb, NULL, &g);
        if (!(g.distance <= RESTS_GAP * h)) continue;
        /* towards the other shape: along the closest points, or (touching, overlapping) the
         * separating axis of the faces */
        const fr_vec3 to = g.distance > 0.0 && !g.overlap
                               ? fr_v3_normalize(fr_v3_sub(g.pb, g.pa))
                               : fr_polytope_sat_normal(&shape->poly, pa, &s->poly, pb);
        if (fr_v3_dot(to, down) >= cos(RESTS_DEG * M_PI / 180.0)) return true;
    }
    return false;
}

/* the first slender body turned on a slope that its stance face rests on (bodies after it in the
 * file may be its support: judged once all are placed) */
static void advise_turned_finish(fri_scene *sc)
{
    fri_tip_advice *t = &sc->tip;
    for (int i = 0; i < t->nturned && !t->turn_warned; i++) {
        if (!rests_on_face(sc, t->turned[i].shape, t->turned[i].nf, t->turned[i].h)) continue;
        fr_diag wd;
        fr_cfg_error(t->turned[i].node, &wd, 0,
                     "body '%s' is %.3g mm wide and %.3g mm tall and stands turned %.0f° from "
                     "square to the slope as placed: slender bodies turned so tip 2–6 %% before "
                     "their static limit, at 1 ms as at 5 ms (docs/contact.md §5, \"What the new "
                     "floor costs\")",
                     t->turned[i].name, t->turned[i].w * 1e3, t->turned[i].h * 1e3,
                     t->turned[i].turn);
        wd.severity = FR_DIAG_WARNING;
        fr_diag_list_add(sc->opts->diags, &wd);
        t->turn_warned = true;
    }
}

/* the mass-scaled law's stiffening depth at a step h (docs/contact.md §5) */
static double stiffen_depth(const fr_world_def *def, double h)
{
    double kappa = def->contact_kappa;
    if (def->contact_time > 0.0) kappa = (h / def->contact_time) * (h / def->contact_time);
    return def->contact_stiffen * fr_v3_norm(def->gravity) * h * h / kappa;
}

/* Standing on a strip at its edge, a block (stance width ws, tipping over wt, height h) leans
 * into the foundation by about √(δ·h) before it tips: the threshold falls by about
 * 2·√(2·δ·h)/wt, δ the depth the world's contact takes for that stance at the step h (about
 * 1.4 % where the stance cap holds; below its floor, for slender bodies, more, and in proportion
 * to h) */
static double tip_error(const fr_world_def *def, double h_step, double ws, double wt, double h)
{
    return TIP_LEAN * sqrt(2.0 * fr_contact_stance_depth(stiffen_depth(def, h_step), ws, h) * h) /
           wt;
}

/* the world's internal step: dt in the substeps its bodies ask for (docs/world.md) */
static double world_step(const fri_scene *sc)
{
    return fr_world_get_def(sc->world)->dt / fr_world_substeps(sc->world, NULL);
}

void fri_scene_advise_tipping(fri_scene *sc, const fr_cfg_node *b, const char *body,
                              const fr_shape *shape, fr_quat q, int material)
{
    if (!sc->opts || !sc->opts->diags) return;
    track_width(&sc->tip, b, body, shape);
    const fr_world_def *def = fr_world_get_def(sc->world);
    const double g = fr_v3_norm(def->gravity), dt = def->dt;
    if (!def->contact_implicit || !(def->contact_stiffen > 0.0) || !(g > 0.0)) return;
    /* (judged at dt here: the substeps are known once every body is in, at the finish) */
    const double ds = stiffen_depth(def, dt);
    fr_contact_material m;
    if (fr_world_get_material(sc->world, material, &m) != FR_OK) return;
    advise_stiff(sc, b, body, shape, &m, ds, g);
    if (m.stiffness > 0.0) return;
    /* how it stands as placed: on the face that looks most along gravity (a slope made by
     * tilting gravity leaves the block standing on the ground's normal, not on gravity's), its
     * height along that face's normal, its least width across */
    const fr_vec3 down = fr_q_unrotate(q, def->gravity);
    const fr_polytope *P = &shape->poly;
    int f_down = -1;
    for (int f = 0; f < P->nfaces; f++)
        if (f_down < 0 || fr_v3_dot(P->normal[f], down) > fr_v3_dot(P->normal[f_down], down))
            f_down = f;
    if (f_down < 0) return;
    double w, h;
    const fr_vec3 nf = P->normal[f_down];
    if (fr_shape_stance(shape, nf, &w, &h) != FR_OK) return;
    advise_small(sc, b, body, shape, down, nf, def);
    /* (lying on its broad side it stands on no edge) */
    if (!(w > 0.0) || !(h > 1.5 * w)) return;
    /* On a slope (gravity more than 3° off the face's normal) it tips down the slope, over its
     * width that way: 50 mm down a slope and 5 mm across, it was warned by its 5 mm (5.4 %) and
     * tipped 0.7 % early (a new user's trial). On level ground any side may go. The law's depth
     * stays the stance's (the world's cap takes the least width). */
    const fr_vec3 gt = fr_v3_mad(down, -fr_v3_dot(down, nf), nf);
    const bool downhill = fr_v3_norm(gt) > 0.05 * fr_v3_norm(down);
    double wt = w;
    if (downhill) {
        const fr_vec3 d = fr_v3_normalize(gt);
        wt = fr_v3_dot(fr_v3_sub(fr_shape_support(shape, d), fr_shape_support(shape, fr_v3_neg(d))),
                       d);
        if (!(wt >= w)) wt = w;
    }
    /* (a slender body tips on slopes of a degree or two: any slope counts here) */
    if (fr_v3_norm(gt) > 1e-3 * fr_v3_norm(down))
        advise_turned(sc, b, body, shape, nf, fr_v3_normalize(gt), w, h);
    const double e = tip_error(def, dt, w, wt, h);
    if (!(e > TIP_ADVICE_REL)) return;
    fri_tip_advice *t = &sc->tip;
    if (t->node == b) return; /* (a repeated body: its first copy speaks for it) */
    if (t->n < FRI_TIP_ADVICE_MAX) {
        t->cand[t->n] = (fri_tip_candidate){b, "", e, wt, h, w, downhill};
        snprintf(t->cand[t->n].name, sizeof t->cand[t->n].name, "%s", body);
        t->n++;
    }
    t->node = b;
}

/* whether a joint (its a or b) names the body: a jointed body is held by more than its contact */
static bool jointed(const fr_cfg_node *joints, const char *name)
{
    for (int i = 0; i < fr_cfg_node_len(joints); i++) {
        const fr_cfg_node *j = fr_cfg_node_item(joints, i);
        const char *keys[] = {"a", "b"};
        for (int k = 0; k < 2; k++) {
            const char *v = fr_cfg_node_scalar(fr_cfg_get(j, keys[k]));
            if (v && strcmp(v, name) == 0) return true;
        }
    }
    return false;
}

static void advise_small_finish(fri_scene *sc, const fr_cfg_node *joints)
{
    const fri_tip_advice *t = &sc->tip;
    const fr_world_def *def = fr_world_get_def(sc->world);
    int first = -1, count = 0, ask = 0;
    for (int i = 0; i < t->nsmall; i++) {
        if (jointed(joints, t->small[i].name)) continue;
        /* (the substeps the rule asks resolve them: over the 3280-body creep sweep none moved
         * by 1 µm, docs/world.md "Substeps") */
        const int n = fr_world_substeps_for_width(def, t->small[i].width);
        if (!(n > def->substeps)) continue;
        count++;
        if (first < 0) first = i, ask = n;
    }
    if (first < 0) return;
    const int c = first;
    char fix[96];
    if (ask <= FR_WORLD_SUBSTEPS_MAX)
        snprintf(fix, sizeof fix, "world.substeps 0 (the rule's %d substeps for it)", ask);
    else
        snprintf(fix, sizeof fix, "a shorter world.dt (it asks %d substeps, beyond the %d taken)",
                 ask, FR_WORLD_SUBSTEPS_MAX);
    fr_diag wd;
    fr_cfg_error(t->small[c].node, &wd, 0,
                 "body '%s'%s is %.3g mm across and stands %.0f° off gravity as placed (a "
                 "slope): at a step of %.4g ms a body under %.3g mm wide there may rock at its "
                 "friction or tipping limit, then creep or tip (docs/contact.md §8; docs/world.md "
                 "\"Substeps\"); %s holds such bodies",
                 t->small[c].name, count > 1 ? " (and others)" : "", t->small[c].size * 1e3,
                 t->small[c].slope * 180 / M_PI, world_step(sc) * 1e3,
                 1e3 * FR_WORLD_SUBSTEP_WIDTH * fr_v3_norm(def->gravity) * world_step(sc) *
                     world_step(sc),
                 fix);
    wd.severity = FR_DIAG_WARNING;
    fr_diag_list_add(sc->opts->diags, &wd);
}

/* A body narrower than the rule's cap resolves (FR_WORLD_SUBSTEPS_MAX substeps, a trial's 50 µm
 * cube at 5 ms) is taken short of the rule: said, with the tick that holds it */
static void advise_cap(fri_scene *sc)
{
    fri_tip_advice *t = &sc->tip;
    if (t->cur.node && (!t->thin.node || t->cur.width < t->thin.width)) t->thin = t->cur;
    const fr_world_def *def = fr_world_get_def(sc->world);
    if (!t->thin.node || def->substeps > 0) return;
    const int ask = fr_world_substeps_for_width(def, t->thin.width);
    if (!(ask > FR_WORLD_SUBSTEPS_MAX)) return;
    const double g = fr_v3_norm(def->gravity);
    /* the longest tick whose FR_WORLD_SUBSTEPS_MAX substeps resolve it */
    const double dt_max =
        FR_WORLD_SUBSTEPS_MAX * sqrt(t->thin.width / (FR_WORLD_SUBSTEP_WIDTH * g));
    fr_diag wd;
    fr_cfg_error(t->thin.node, &wd, 0,
                 "body '%s' is %.3g mm wide at its narrowest: the substep rule asks %d substeps "
                 "of world.dt %.4g ms for it, the world takes at most %d (docs/world.md, "
                 "\"Substeps\"), so it may rock, creep and land late as a body too narrow for its "
                 "step; world.dt %.3g ms or less holds it",
                 t->thin.name, t->thin.width * 1e3, ask, def->dt * 1e3, FR_WORLD_SUBSTEPS_MAX,
                 dt_max * 1e3);
    wd.severity = FR_DIAG_WARNING;
    fr_diag_list_add(sc->opts->diags, &wd);
}

/* Contacts are validated up to 5 ms (docs/contact.md §8) at the world's own step, its substeps */
static void advise_step(fri_scene *sc)
{
    const double step = world_step(sc), dt = fr_world_get_def(sc->world)->dt;
    if (!(step > 0.005 + 1e-12)) return;
    char sub[64] = "";
    if (step < dt) snprintf(sub, sizeof sub, " (world.dt %.9g ms in substeps)", dt * 1e3);
    fr_diag wd;
    fr_cfg_error(sc->dt_node, &wd, 0,
                 "a step of %.9g ms%s is beyond the 5 ms the contact model is validated for: "
                 "friction and stacking lose accuracy (a card house needs 30 %% more "
                 "friction at 10 ms; docs/contact.md §8)",
                 step * 1e3, sub);
    wd.severity = FR_DIAG_WARNING;
    fr_diag_list_add(sc->opts->diags, &wd);
}

void fri_scene_advise_finish(fri_scene *sc, const fr_cfg_node *joints)
{
    if (!sc->opts || !sc->opts->diags) return;
    advise_step(sc);
    advise_cap(sc);
    advise_turned_finish(sc);
    advise_small_finish(sc, joints);
    fri_tip_advice *t = &sc->tip;
    const fr_world_def *def = fr_world_get_def(sc->world);
    const double dt = def->dt, step = world_step(sc);
    int worst = -1, count = 0;
    for (int i = 0; i < t->n; i++) {
        if (jointed(joints, t->cand[i].name)) continue;
        /* the error at the world's own step (its substeps) */
        t->cand[i].e = tip_error(def, step, t->cand[i].ws, t->cand[i].w, t->cand[i].h);
        if (!(t->cand[i].e > TIP_ADVICE_REL)) continue;
        count++;
        if (worst < 0 || t->cand[i].e > t->cand[worst].e) worst = i;
    }
    if (worst < 0) return;
    const fri_tip_candidate *c = &t->cand[worst];
    char sub[64] = "";
    if (step < dt) snprintf(sub, sizeof sub, " (world.dt %.4g ms in substeps)", dt * 1e3);
    fr_diag wd;
    fr_cfg_error(
        c->node, &wd, 0,
        "body '%s'%s is %.3g mm wide %s and %.3g mm tall as placed: at a "
        "step of %.4g ms%s the contact lets a block lean into the edge it stands on, so "
        "it tips about %.2g %% before tan θ = w/h (docs/contact.md §8); a step "
        "(world.dt, or world.dt/world.substeps) of at most %.3g ms keeps that under %.0f %%",
        c->name, count > 1 ? " (the worst of several)" : "", c->w * 1e3,
        c->downhill ? "down the slope" : "at its narrowest", c->h * 1e3, step * 1e3, sub,
        100.0 * c->e, 1e3 * step * TIP_ADVICE_TARGET / c->e, 100.0 * TIP_ADVICE_REL);
    wd.severity = FR_DIAG_WARNING;
    fr_diag_list_add(sc->opts->diags, &wd);
}
