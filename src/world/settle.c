/*
 * Settling before the first step (include/fureru/world.h fr_world_settle, docs/world.md
 * "Settling"): a relaxation of the bodies placed at rest by ordinary implicit steps with kinetic
 * damping (the bodies are stopped whenever their kinetic energy has passed a peak), friction
 * holding. Build time only: it allocates.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settle_internal.h"

typedef struct held {
    fr_pose pose;
    fr_vec3 vel, angvel;
} held;

/* Is slot i in a modelled pair (touching, overlapping, or about to close within the step)? A
 * body at rest further from everything is in the air. */
static bool supported(const fr_world *w, int i)
{
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (p->slot_a == i || p->slot_b == i) return true;
    }
    return false;
}

static double gyration_radius(const fr_world *w, int i)
{
    const fr_mat3 *I = &w->model[i].inertia;
    return sqrt((I->m[0][0] + I->m[1][1] + I->m[2][2]) / w->model[i].mass);
}

/* Whether the body is slender: its largest principal moment over its least above 1.6 (a square
 * rod 1.5 times as tall as it is wide) */
static bool slender_body(const fr_world *w, int i)
{
    fr_vec3 ev;
    fr_mat3 V;
    fr_m3_eigen_sym(w->model[i].inertia, &ev, &V);
    return ev.x > 0.0 && ev.z > 1.6 * ev.x;
}

int fr_world_settle_steps(const fr_world *w)
{
    return w ? w->settle_steps : -1;
}

bool fr_world_settling(const fr_world *w)
{
    return w && w->settling;
}

/* what a settling body may travel (times its radius of gyration) or turn (rad) */
#define SETTLE_MAX_MOVE 1e-2
/* the note's rocking hint: bodies this small (radius of gyration, m; a 3 cm cube's is 1.2 cm) at
 * steps this long (s) rock on their contacts (docs/contact.md §8) */
#define ROCK_HINT_RG 0.012
#define ROCK_HINT_DT 2e-3

/* The settle's note from byte `at` on (truncated to its buffer); returns where it ends. */
static int note_at(fr_world *w, int at, const char *fmt, ...)
{
    if (at < 0 || (size_t)at >= sizeof w->settle_note) return at;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->settle_note + at, sizeof w->settle_note - (size_t)at, fmt, ap);
    va_end(ap);
    return n < 0 ? at : at + n;
}

static const char *body_name(const fr_world *w, int i)
{
    return w->model[i].long_name ? w->model[i].long_name : w->model[i].name;
}

/* Among the contacts of the last step: the settling body lying deepest in another relative to
 * its radius of gyration (that share returned; −1 in *body when none), the other body and the
 * depth (m). */
static double deepest_now(const fr_world *w, const bool *settles, int *body, int *other,
                          double *depth)
{
    double worst = 0.0;
    *body = *other = -1;
    *depth = 0.0;
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        const double d = fmax(0.0, p->model.max_depth0);
        for (int s = 0; s < 2; s++) {
            const int i = s ? p->slot_b : p->slot_a, o = s ? p->slot_a : p->slot_b;
            if (!settles[i] || !(d > 0.0)) continue;
            const double rel = d / gyration_radius(w, i);
            if (rel > worst) worst = rel, *body = i, *other = o, *depth = d;
        }
    }
    return worst;
}

/* A settled pair that carries more than its law stiffens for (more than about 1100 times the
 * weight of the pair's reduced mass, whose gains the mass-scaled law takes) rests deep, in the
 * law's linear continuation: a 10 g box under a 100 kg one of the same footprint, without friction,
 * sat still for 1-6 s and was then squeezed out at 6-9 m/s (a new user's trial; docs/contact.md §8;
 * the mechanism is not measured). Said in the note, the worst such pair by its load over the
 * lighter body's weight. */
#define OVERLOAD 1000.0 /* e^7 − 1 ≈ 1100 (the law's STIFFEN_XMAX), rounded down */
static void overload_note(fr_world *w)
{
    const double g = fr_v3_norm(w->def.gravity);
    const fri_pair *worst = NULL;
    double worst_r = 0.0;
    int light = -1;
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        const fr_contact_model *m = &p->model;
        if (!p->modeled || !p->mass_scaled || !(m->ds > 0.0) || !(g > 0.0)) continue;
        const double ma = w->model[p->slot_a].mass, mb = w->model[p->slot_b].mass;
        const bool da = w->model[p->slot_a].type == FR_BODY_DYNAMIC;
        const bool db = w->model[p->slot_b].type == FR_BODY_DYNAMIC;
        if (!da && !db) continue;
        const int l = da && (!db || ma <= mb) ? p->slot_a : p->slot_b;
        /* the law's gains are the reduced mass's, as pair_params takes it (docs/contact.md §4) */
        const double m_red = fr_contact_reduced_mass(ma, mb);
        const double r = m->n0 / (m_red * g);
        if (r > OVERLOAD && r > worst_r) worst_r = r, worst = p, light = l;
    }
    if (!worst) return;
    const int at = (int)strlen(w->settle_note);
    note_at(w, at,
            "%sthe contact of '%s' on '%s' carries %.3g times the weight of '%s', more than "
            "its law stiffens for (about 1100): it rests %.3g m deep, and without friction a "
            "body so loaded has been seen squeezed out sideways (docs/contact.md §8)",
            at ? "; " : "", body_name(w, light),
            body_name(w, light == worst->slot_a ? worst->slot_b : worst->slot_a), worst_r,
            body_name(w, light), worst->model.max_depth0);
}

/* An overlap the settle pushes out first: deeper than PUSH_DS stiffening depths of the pair's law
 * (beyond its linear turn at 7, where a loaded contact rests: what is deeper holds far more than
 * the load; a 2 × 2 × 6 m block placed 2.7 mm into its slope, below 1e-3 of its size, held
 * 1.3e8 J and left at 2.7 m/s), or 1e-3 of the body's radius of gyration for a linear law. */
#define PUSH_DS 20.0
/* ... and the push goes on until none is deeper than PUSH_DS_END of them (stopped at 20, a box
 * pushed out of a wall held 1.7e-4 J at the run's first tick, 100 times its contact at rest) */
#define PUSH_DS_END 0.5
static bool needs_push(const fr_world *w, const fri_pair *p, const bool *settles, double nds)
{
    const double d = p->model.max_depth0;
    if (!(d > 0.0) || (!settles[p->slot_a] && !settles[p->slot_b])) return false;
    if (p->model.ds > 0.0) return d > nds * p->model.ds;
    const int i = settles[p->slot_a] ? p->slot_a : p->slot_b;
    return d > 1e-3 * gyration_radius(w, i);
}

/* The settling bodies placed into another beyond 1e-3 of their size other than `deep` (whom
 * the note names), after the note's byte `at`: of two capsules placed alike into the ground the
 * note named one (a new user's trial) */
static int others_placed(fr_world *w, int at, int deep, const int *partner, const bool *settles,
                         const double *overlap)
{
    enum { LISTED = 6 };
    int n = 0;
    for (int j = 0; j < w->norder; j++) {
        const int i = w->order[j];
        if (i == deep || !settles[i] || !(overlap[i] > 1e-3 * gyration_radius(w, i))) continue;
        if (n < LISTED)
            at = note_at(w, at, "%s'%s' into '%s' (%.3g m deep)",
                         n ? ", " : "; also placed into another: ", body_name(w, i),
                         body_name(w, partner[i]), overlap[i]);
        n++;
    }
    if (n > LISTED) at = note_at(w, at, " and %d more", n - LISTED);
    return at;
}

/* What the push-out before the settle did, at the note's byte `at`: the body placed deepest into
 * another (relative to its size; −1: none) and how far it was pushed (m), or the one still
 * deepest in another. (The intersection's extent along its normal overstates how deep a body
 * lies in a corner or on a plate through it: the push's distance is said instead.) */
static int pushed_note(fr_world *w, int at, int deep, const int *partner, double pushed_by,
                       int still, int still_o, double still_d, const char *sep, const bool *settles,
                       const double *overlap)
{
    if (deep < 0) return at;
    if (still >= 0)
        at = note_at(w, at,
                     "%s'%s' was placed into '%s' and could not be pushed out: '%s' is still "
                     "%.3g m into '%s'",
                     sep, body_name(w, deep), body_name(w, partner[deep]), body_name(w, still),
                     still_d, body_name(w, still_o));
    else
        at = note_at(w, at, "%s'%s' pushed out of '%s' by %.3g m", sep, body_name(w, deep),
                     body_name(w, partner[deep]), pushed_by);
    return others_placed(w, at, deep, partner, settles, overlap);
}

/* The settling body placed furthest into another relative to its size, beyond 1e-3 of it (its
 * radius of gyration), or −1. */
static int deepest_overlap(const fr_world *w, const bool *settles, const double *overlap)
{
    int deep = -1;
    double worst = 0.0;
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (!settles[i]) continue;
        double rel = overlap[i] / gyration_radius(w, i);
        if (rel > 1e-3 && rel > worst) worst = rel, deep = i;
    }
    return deep;
}

/* The travel a settling body's contacts ask of it to carry their static loads (docs/world.md
 * "Settling", "Soft materials"): with a material's stiffness a 1 kg 0.2 m cube on a 1e5 N/m³
 * pair sinks 4.9 mm, three times 1e-2 of its radius of gyration, and the settle gave up on it,
 * its note blaming the placement (a user's trial). Each settling body's weight, with what rests on
 * it, goes down through the contacts that hold it up (whose normal pushes it against gravity),
 * shared as the contacts' stiffnesses k·A times their normals' upward share (a flat face's
 * supports then sink alike); each such contact's depth is where its law carries its share's
 * normal part over the patch's area (fr_contact_depth_of_pressure: exact for a flat face on a
 * flat face), and a body sinks by the deepest of its supports' depths with what sinks under them
 * (a stack's top by the compressions below it added up), into give[] (m, per slot). Bodies are
 * taken from the highest (by the centre of mass against gravity) down, so a body resting on one
 * whose centre lies higher passes it no load (under-counted: the settle then gives up on it as
 * before). The mass-scaled law's pairs count with their stiffness in the shares but sink by
 * nothing here: their rest depth (g·dt²/κ, stiffened; 0.3 µm for a 1 cm cube at 5 ms) is within
 * the 1e-2 of r_g, and such scenes settle bit for bit as they did. */
typedef struct support {
    double h;    /* the upper body's height against gravity, m */
    int s, o;    /* the body held up, the one under it */
    double u, k; /* the share of the normal along −gravity on s; k·A·u (N/m) */
    const fri_pair *p;
} support;

/* (ties by the body, then the pair: the same order on every platform's qsort) */
static int higher_first(const void *a, const void *b)
{
    const support *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? 1 : -1;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->p > y->p) - (x->p < y->p);
}

static void compliance_travel(const fr_world *w, const bool *settles, const bool *touched,
                              support **buf, int *cap, double *load, double *wsum, double *give,
                              double *tilt)
{
    for (int i = 0; i < w->nslots; i++) {
        load[i] = settles[i] && touched[i] ? w->model[i].mass : 0.0;
        wsum[i] = give[i] = tilt[i] = 0.0;
    }
    const double g = fr_v3_norm(w->def.gravity);
    if (!(g > 0.0) || w->ncontacts <= 0) return;
    const fr_vec3 up = fr_v3_scale(w->def.gravity, -1.0 / g);
    if (w->ncontacts > *cap) {
        support *nb = realloc(*buf, sizeof *nb * (size_t)w->ncontacts);
        if (!nb) return; /* (out of memory: no compliance allowed, as before) */
        *buf = nb, *cap = w->ncontacts;
    }
    support *sp = *buf;
    int n = 0;
    for (int c = 0; c < w->ncontacts; c++) {
        const fri_pair *p = &w->pairs[w->contacts[c]];
        if (!p->modeled || !(p->model.k > 0.0) || !(p->model.area > 0.0)) continue;
        /* (B is pushed along +n, A along −n) */
        const double un = fr_v3_dot(p->model.normal, up);
        const int s = un > 0.0 ? p->slot_b : p->slot_a, o = un > 0.0 ? p->slot_a : p->slot_b;
        const double u = fabs(un);
        if (!(u > 0.0) || !settles[s] || !touched[s]) continue;
        sp[n] = (support){fr_v3_dot(w->state[s].pose.p, up), s, o, u,
                          p->model.k * p->model.area * u,    p};
        wsum[s] += sp[n].k;
        n++;
    }
    qsort(sp, (size_t)n, sizeof *sp, higher_first);
    /* down: each body's weight and what it carries, shared among its supports; then up, each
     * support's depth under its share's normal part */
    for (int c = 0; c < n; c++)
        if (settles[sp[c].o] && touched[sp[c].o])
            load[sp[c].o] += load[sp[c].s] * sp[c].k / wsum[sp[c].s];
    for (int c = n - 1; c >= 0; c--) {
        const fri_pair *p = sp[c].p;
        const double N = g * load[sp[c].s] * sp[c].k / wsum[sp[c].s] * sp[c].u;
        const double t = p->mass_scaled ? 0.0
                                        : fr_contact_depth_of_pressure(p->model.k, p->model.ds,
                                                                       N / p->model.area);
        /* (a patch of half-width a, about √A/2, tilts by at most t/a before a side lifts: an
         * off-centre load or a slope's friction turns the body on it by about that, with what
         * turns under it, and moves its centre by that turn times its distance from the patch) */
        const double turn = tilt[sp[c].o] + 2.0 * t / sqrt(p->model.area);
        const double arm = fr_v3_dist(w->state[sp[c].s].pose.p, p->model.point);
        tilt[sp[c].s] = fmax(tilt[sp[c].s], turn);
        give[sp[c].s] = fmax(give[sp[c].s], give[sp[c].o] + t + turn * arm);
    }
}

/* Steps with gravity and friction off, the settling bodies stopped after each, until no overlap
 * needs a push (needs_push; at most PUSH_STEPS): the placement's overlaps pushed out. A free body
 * keeps the orientation it was placed with and moves in a step no further than it lies in
 * another at the step's start (`reach`, m, per slot; the scan's overlaps at first): unbounded, a
 * box with a 5 mm plate through it was pushed 34 cm where 3 cm would do, a thicker plate tipped
 * it onto an edge, a curved shape's polytope was turned 13°, and a spring dragged its body
 * sideways (a new user's trial). A body in a joint moves as the step moves it. The body still
 * deepest in another is returned. */
#define PUSH_STEPS 200
static void push_out(fr_world *w, const bool *settles, const bool *jointed, double *reach,
                     fr_pose *before, fri_spring *springs, int *body, int *other, double *depth)
{
    const fr_vec3 g = w->def.gravity;
    w->def.gravity = fr_v3_zero();
    /* without friction: a box placed into a wall while resting on the floor was held by the
     * floor's friction in the wall (a new user's trial) */
    w->pushing = true;
    *body = -1;
    for (int k = 0; k < PUSH_STEPS; k++) {
        for (int j = 0; j < w->norder; j++) before[w->order[j]] = w->state[w->order[j]].pose;
        /* (the springs' state as the settle keeps it: their anchors where they were) */
        memcpy(springs, w->springs, sizeof *springs * (size_t)w->nsprings);
        int e = fr_world_step(w);
        memcpy(w->springs, springs, sizeof *springs * (size_t)w->nsprings);
        if (e) break;
        for (int j = 0; j < w->norder; j++) {
            int i = w->order[j];
            if (!settles[i]) continue;
            fri_body_state *st = &w->state[i];
            st->vel = st->angvel = fr_v3_zero();
            if (jointed[i]) continue;
            st->pose.q = before[i].q;
            const fr_vec3 d = fr_v3_sub(st->pose.p, before[i].p);
            const double dn = fr_v3_norm(d);
            if (dn > reach[i]) st->pose.p = fr_v3_mad(before[i].p, reach[i] / dn, d);
        }
        deepest_now(w, settles, body, other, depth);
        bool more = false;
        for (int j = 0; j < w->norder; j++) reach[w->order[j]] = 0.0;
        for (int c = 0; c < w->ncontacts; c++) {
            const fri_pair *p = &w->pairs[w->contacts[c]];
            const double d = fmax(0.0, p->model.max_depth0);
            reach[p->slot_a] = fmax(reach[p->slot_a], d);
            reach[p->slot_b] = fmax(reach[p->slot_b], d);
            more = more || needs_push(w, p, settles, PUSH_DS_END);
        }
        if (!more) break;
    }
    w->def.gravity = g;
    w->pushing = false;
}

const char *fr_world_settle_note(const fr_world *w)
{
    return w ? w->settle_note : "";
}

void fr_world_set_settle_progress(fr_world *w, fr_settle_progress_fn fn, void *user)
{
    if (!w) return;
    w->settle_progress = fn;
    w->settle_user = user;
}

int fr_world_settle(fr_world *w, double max_time, double tolerance, int *steps_out)
{
    if (steps_out) *steps_out = 0;
    if (!w || w->locked || w->steps != 0 || !(max_time >= 0.0) || !(tolerance > 0.0))
        return FR_ERR_INVAL;
    w->settle_note[0] = '\0';
    fri_world_fix_substeps(w);
    held *start = calloc((size_t)w->nslots + 1, sizeof *start);
    bool *settles = calloc((size_t)w->nslots + 1, sizeof *settles);
    bool *touched = calloc((size_t)w->nslots + 1, sizeof *touched);
    double *overlap = calloc((size_t)w->nslots + 1, sizeof *overlap);
    int *partner = calloc((size_t)w->nslots + 1, sizeof *partner); /* the deepest's other body */
    bool *jointed = calloc((size_t)w->nslots + 1, sizeof *jointed);
    double *reach = calloc((size_t)w->nslots + 1, sizeof *reach);
    fr_pose *before = calloc((size_t)w->nslots + 1, sizeof *before);
    fri_spring *springs = calloc((size_t)w->nsprings + 1, sizeof *springs);
    /* (compliance_travel's: per slot, the load, the supports' stiffness and the travel) */
    double *load = calloc(4 * (size_t)w->nslots + 1, sizeof *load);
    double *wsum = load + w->nslots, *give = load + 2 * w->nslots, *tilt = load + 3 * w->nslots;
    support *supports = NULL;
    int supports_cap = 0;
    fri_settle_robots rs = {0};
    if (!start || !settles || !touched || !overlap || !partner || !jointed || !reach || !before ||
        !springs || !load || fri_settle_robots_save(w, &rs)) {
        free(start), free(settles), free(touched), free(overlap), free(partner), free(springs);
        free(jointed), free(reach), free(before), free(load);
        fri_settle_robots_free(&rs);
        return FR_ERR_NOMEM;
    }
    for (int k = 0; k < w->norder; k++) {
        int i = w->order[k];
        const fri_body_state *s = &w->state[i];
        start[i] = (held){s->pose, s->vel, s->angvel};
        settles[i] = w->model[i].type == FR_BODY_DYNAMIC;
    }
    const long max_steps = (long)(max_time / w->def.dt + 0.5);
    int err = FR_ERR_TIMEOUT;
    long k = 0;
    double ke_prev = 0.0, last_speed = 0.0;
    int last_fastest = -1; /* the body moving fastest after the last step (slot; −1 a robot) */
    double overlaps = 0.0; /* m, the placements' overlaps added up (a body pushed out carries
                             those resting on it, each pushed out of it in turn) */
    /* Everything stands still while the contacts take their loads, and the velocities come back
     * at the end: a box carried by a turntable, a block given a push, settle like the rest (the
     * first step then starts from loaded contacts: a box co-rotating at 99.6 % of its friction
     * limit, placed unloaded, was flung off by the first steps' load transient), and a kinematic
     * body does not drag or turn what rests on it */
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (w->model[i].type == FR_BODY_KINEMATIC || w->model[i].type == FR_BODY_DYNAMIC)
            w->state[i].vel = w->state[i].angvel = fr_v3_zero();
    }
    fri_settle_robots_reset(w, &rs, false, false);
    w->settling = true;
    /* A body placed into another (deeper than needs_push's PUSH_DS stiffening depths) is pushed
     * out first, with gravity and friction off, and that is the placement the settle starts from
     * and a settle that gives up goes back to. Pushed out by the settle's own steps (friction
     * holding, gravity on) a box placed into a wall while resting on the floor stayed wedged in
     * both; a body placed into another released the overlap's energy where the settle gave up
     * (a can placed 69 mm into its bin's wall thrown out at 50 m/s at 5 ms, a ball of resolution
     * 2 at its true radius on a slope failing the audit in its first tick); and the overlaps
     * widened what the settle let a body travel, so that a block tipping on its slope finished
     * its fall inside the settle (new users' trials). */
    int placed_into = -1, still = -1, still_o = -1;
    double still_d = 0.0;
    bool push = false;
    if (fri_world_contacts(w) == FR_OK) {
        for (int c = 0; c < w->ncontacts; c++) {
            const fri_pair *p = &w->pairs[w->contacts[c]];
            double d = fmax(0.0, p->model.max_depth0);
            push = push || needs_push(w, p, settles, PUSH_DS);
            if (d > overlap[p->slot_a]) overlap[p->slot_a] = d, partner[p->slot_a] = p->slot_b;
            if (d > overlap[p->slot_b]) overlap[p->slot_b] = d, partner[p->slot_b] = p->slot_a;
        }
        placed_into = deepest_overlap(w, settles, overlap);
    }
    /* A robot fixed to the world stays frozen where it was placed: an overlap of its links is
     * not settled, and the run's first step finds it (a UR5 placed with its gripper 2 cm into
     * the ground gained 5.6 kJ in its first tick, reported as a numerical failure) */
    int frozen_into = -1;
    for (int i = 0; i < w->nslots; i++)
        if (w->model[i].type == FR_BODY_LINK && w->robots[w->model[i].robot].settle_frozen &&
            overlap[i] > 0.0 && (frozen_into < 0 || overlap[i] > overlap[frozen_into]))
            frozen_into = i;
    const double frozen_depth = frozen_into >= 0 ? overlap[frozen_into] : 0.0;
    const int frozen_partner = frozen_into >= 0 ? partner[frozen_into] : -1;
    fri_world_pairs_clear(w);
    fr_pose placed = {0};
    double pushed_by = 0.0; /* m, how far the push moved placed_into */
    if (placed_into >= 0) placed = start[placed_into].pose;
    if (push) {
        for (int j = 0; j < w->njoints; j++) {
            const int a = fri_body_slot(w, w->joints[j].def.a);
            const int b = fri_body_slot(w, w->joints[j].def.b);
            if (a >= 0) jointed[a] = true;
            if (b >= 0) jointed[b] = true;
        }
        memcpy(reach, overlap, sizeof *reach * (size_t)w->nslots);
        push_out(w, settles, jointed, reach, before, springs, &still, &still_o, &still_d);
        if (still >= 0 && !(still_d > 1e-3 * gyration_radius(w, still))) still = -1;
        for (int j = 0; j < w->norder; j++) {
            int i = w->order[j];
            if (settles[i])
                start[i].pose = w->state[i].pose;
            else if (w->model[i].type == FR_BODY_DYNAMIC || w->model[i].type == FR_BODY_KINEMATIC)
                w->state[i].pose = start[i].pose;
            w->state[i].vel = w->state[i].angvel = fr_v3_zero();
        }
        fri_settle_robots_reset(w, &rs, true, false);
        fri_world_pairs_clear(w);
        if (placed_into >= 0) pushed_by = fr_v3_dist(start[placed_into].pose.p, placed.p);
    }
    while (k < max_steps) {
        memcpy(springs, w->springs, sizeof *springs * (size_t)w->nsprings);
        int e = fr_world_step(w);
        k++;
        if (w->settle_progress && k % 1024 == 0)
            w->settle_progress(w->settle_user, k, max_steps, w->def.dt);
        if (e) {
            err = e;
            /* say what it diverged from: the deepest placement among this step's contacts (a
             * column placed 75 % into itself said only "settling failed: numerical failure") */
            const fri_pair *deep = NULL;
            for (int c = 0; c < w->ncontacts; c++) {
                const fri_pair *p = &w->pairs[w->contacts[c]];
                if (!deep || p->model.max_depth0 > deep->model.max_depth0) deep = p;
            }
            if (deep && deep->model.max_depth0 > 0.0) {
                const fri_body_model *a = &w->model[deep->slot_a], *b = &w->model[deep->slot_b];
                snprintf(w->settle_note, sizeof w->settle_note,
                         "bodies '%s' and '%s' overlap %.3g m deep at the start (placed into "
                         "each other): place them apart or touching",
                         a->long_name ? a->long_name : a->name,
                         b->long_name ? b->long_name : b->name, deep->model.max_depth0);
            }
            break;
        }
        memcpy(w->springs, springs, sizeof *springs * (size_t)w->nsprings);
        if (k == 1)
            for (int c = 0; c < w->ncontacts; c++) {
                /* what overlap the push left (below its threshold; pushed out, a body travels
                 * that far, which the travel allowed below counts) */
                const fri_pair *p = &w->pairs[w->contacts[c]];
                double d = fmax(0.0, p->model.max_depth0);
                if (d > overlap[p->slot_a]) overlap[p->slot_a] = d, partner[p->slot_a] = p->slot_b;
                if (d > overlap[p->slot_b]) overlap[p->slot_b] = d, partner[p->slot_b] = p->slot_a;
                overlaps += d;
            }
        double fastest = 0.0, ke = 0.0;
        int fastest_at = -1;
        for (int j = 0; j < w->norder; j++) {
            int i = w->order[j];
            fri_body_state *s = &w->state[i];
            const int type = w->model[i].type;
            if (type != FR_BODY_DYNAMIC && type != FR_BODY_KINEMATIC) continue;
            if (type == FR_BODY_KINEMATIC) {
                s->pose = start[i].pose;
                continue;
            }
            if (supported(w, i)) touched[i] = true;
            if (!touched[i]) {
                /* in the air: held where it was (it falls or flies from there when the run
                 * starts). A body that touched once settles on even when a
                 * step lifts it clear (placed 0.1 mm into the ground, it was pushed out at
                 * 0.1 m/s, put back into the overlap and the run began from there). */
                s->pose = start[i].pose;
                s->vel = s->angvel = fr_v3_zero();
                continue;
            }
            /* the speed of a point at the body's radius of gyration: its linear speed and spin */
            double r = gyration_radius(w, i);
            const double sp = fr_v3_norm(s->vel) + r * fr_v3_norm(s->angvel);
            if (sp > fastest) fastest = sp, fastest_at = i;
            ke += w->model[i].mass * (fr_v3_norm2(s->vel) + r * r * fr_v3_norm2(s->angvel));
        }
        for (int r = 0; r < w->nrobots; r++) {
            const fri_robot *rb = &w->robots[r];
            if (rb->settle_frozen) continue;
            if (fri_settle_robot_supported(w, r)) rs.touched[r] = true;
            if (!rs.touched[r]) {
                /* in the air, as a free body: held where it was placed (a robot 10 mm above
                 * the ground was set down on it and started lower, with no word) */
                fri_settle_robots_reset_one(w, &rs, true, false, r);
                continue;
            }
            /* (2·KE over the mass: the squared speed of its mass on average) */
            double e2 = 2.0 * (fr_tree_kinetic_energy(rb->tree, rb->data) +
                               fr_tree_rotor_energy(rb->tree, rb->data));
            /* (converged by its base, whose speed the rest of it follows: its light feet may
             * tremble on their contacts at a few cm/s without moving it) */
            const fri_body_state *root = &w->state[fri_body_slot(w, rb->links[0])];
            const double sp = fr_v3_norm(root->vel) + rs.size[r] * fr_v3_norm(root->angvel);
            if (sp > fastest) fastest = sp, fastest_at = fri_body_slot(w, rb->links[0]);
            ke += e2;
        }
        /* a body that travels or turns by more than a hundredth of its size (or of a radian)
         * (beyond twice the placements' overlaps added up: pushed out, a body flies that
         * far before the kinetic damping stops it, with what rests on it) was not placed near an
         * equilibrium (a block tipping over, a stack falling): that is the run's to simulate, not a
         * settle's; everything goes back to the placement */
        int far = -1;
        double far_d = 0.0, far_a = 0.0;
        /* what rests on a robot rides with its sinking base (a box on the hexapod's back moved
         * 1 mm with it, far beyond its own 0.16 mm) */
        double carried = 0.0;
        for (int r = 0; r < w->nrobots; r++)
            if (!w->robots[r].settle_frozen)
                carried = fmax(carried,
                               fr_v3_dist(w->state[fri_body_slot(w, w->robots[r].links[0])].pose.p,
                                          rs.root[r].p));
        /* (and what its contacts' compliance asks of it to carry its static load, twice: loaded
         * from rest, a spring swings to twice its static depth before the kinetic damping stops
         * it, compliance_travel) */
        compliance_travel(w, settles, touched, &supports, &supports_cap, load, wsum, give, tilt);
        for (int j = 0; j < w->norder && far < 0; j++) {
            int i = w->order[j];
            if (!settles[i]) continue;
            double r = gyration_radius(w, i);
            double dd = fr_v3_dist(w->state[i].pose.p, start[i].pose.p);
            double da = fr_q_angle_between(w->state[i].pose.q, start[i].pose.q);
            /* (pushed out of an overlap a body may also turn, by about the push over its size:
             * a ball 2 mm into a robot's cupped palm turned 0.012 rad) */
            if (dd > SETTLE_MAX_MOVE * r + 2.0 * overlaps + carried + 2.0 * give[i] ||
                da > SETTLE_MAX_MOVE + 2.0 * overlaps / r + 2.0 * tilt[i])
                far = i, far_d = dd, far_a = da;
        }
        /* (a robot by its root link, against its extent: 5e-2 of it, as its joints give under
         * their controllers' gains: the hexapod's thorax sinks 0.3 mm, 0.7 mm with leg_kp 60) */
        for (int r = 0; r < w->nrobots && far < 0; r++) {
            const fri_robot *rb = &w->robots[r];
            if (rb->settle_frozen) continue;
            const int i = fri_body_slot(w, rb->links[0]);
            double dd = fr_v3_dist(w->state[i].pose.p, rs.root[r].p);
            double da = fr_q_angle_between(w->state[i].pose.q, rs.root[r].q);
            if (dd > 5.0 * SETTLE_MAX_MOVE * rs.size[r] + 2.0 * overlaps || da > SETTLE_MAX_MOVE)
                far = i, far_d = dd, far_a = da;
        }
        if (far >= 0) {
            /* a small body at a long step may have rocked there from a placement at rest (a
             * new user's 188 such notes blamed the placement, docs/contact.md §8) */
            const bool small = w->h > ROCK_HINT_DT && gyration_radius(w, far) < ROCK_HINT_RG;
            /* a slender body that turned may have tipped inside its static limit: yawed on a
             * slope, such blocks tip 2-6 % early (a new user's trial, docs/contact.md §5, "What
             * the new floor costs"), and the note blamed the placement */
            const bool slender =
                !small && far_a * gyration_radius(w, far) >= 0.5 * far_d && slender_body(w, far);
            /* (the substeps are suggested only where world.substeps holds the body to fewer
             * than the rule asks for it) */
            char why[320] = "";
            if (small) {
                fri_world_body_widths(w, w->sys_rg); /* (scratch: the solve sets it a step) */
                const int ask = fr_world_substeps_for_width(&w->def, w->sys_rg[far]);
                char sub[96] = "";
                if (w->def.substeps > 0 && ask > w->nsub && ask <= FR_WORLD_SUBSTEPS_MAX)
                    snprintf(sub, sizeof sub,
                             "world.substeps 0 (the rule's %d substeps for it) or ", ask);
                snprintf(why, sizeof why,
                         ", or rocking on its contacts as bodies of a few millimetres do at a "
                         "step this long (docs/contact.md §8; %sworld.dt 1 ms settles most)",
                         sub);
            } else if (slender) {
                snprintf(why, sizeof why,
                         ", or tipping early on its contacts as slender bodies near their tipping "
                         "limit can (docs/contact.md §5)");
            }
            int at = note_at(w, 0,
                             "body '%s' moved %.3g m and turned %.3g rad while settling: not "
                             "placed near an equilibrium%s; the run starts from the placement",
                             body_name(w, far), far_d, far_a, why);
            pushed_note(w, at, placed_into, partner, pushed_by, still, still_o, still_d, ", ",
                        settles, overlap);
            for (int j = 0; j < w->norder; j++) {
                int i = w->order[j];
                w->state[i].pose = start[i].pose;
                w->state[i].vel = w->state[i].angvel = fr_v3_zero();
            }
            fri_settle_robots_reset(w, &rs, true, true);
            fri_world_pairs_clear(w);
            for (int j = 0; j < w->norder; j++) {
                int i = w->order[j];
                w->state[i].vel = start[i].vel;
                w->state[i].angvel = start[i].angvel;
            }
            fri_settle_robots_restore_commands(w, &rs);
            err = FR_ERR_RANGE;
            break;
        }
        last_speed = fastest;
        last_fastest = fastest_at;
        if (fastest <= tolerance) {
            err = FR_OK;
            break;
        }
        /* a body placed into another (deeper than 1e-3 of its size, as the note says, where
         * the push before the settle left it there: a linear law's pair, or one shallower than
         * PUSH_DS stiffening depths) leaves the first step pushed out, and at rest: let fly,
         * it left its support for a few steps, and on a slope its weight carried it downhill by
         * half the overlap (a block 1 mm into a 30° slope moved 0.52 mm along it) */
        for (int j = 0; j < w->norder && k == 1; j++) {
            int i = w->order[j];
            if (settles[i] && overlap[i] > 1e-3 * gyration_radius(w, i))
                w->state[i].vel = w->state[i].angvel = fr_v3_zero();
        }
        /* kinetic damping: past a peak of the kinetic energy the bodies are near a minimum of
         * the potential along their motion; stopping them there converges in a number of steps
         * that grows like the stack's height, not its square */
        if (ke < ke_prev) {
            for (int j = 0; j < w->norder; j++) {
                int i = w->order[j];
                if (settles[i]) w->state[i].vel = w->state[i].angvel = fr_v3_zero();
            }
            fri_settle_robots_reset(w, &rs, false, false);
            ke = 0.0;
        }
        ke_prev = ke;
    }
    w->settling = false;
    /* say so when a body was placed well into another (more than 1e-3 of its size), whatever
     * else is said (with world.settle_time 0 a push went unsaid) */
    if (err == FR_ERR_TIMEOUT && k > 0) {
        /* (named: a new user's 42 such notes said neither which body nor that a small body
         * rocking on its contacts at a long step is the usual cause, docs/contact.md §8) */
        int at = note_at(w, 0,
                         "settling ran out of its %.3g s with bodies still moving at up to %.3g "
                         "m/s ('%s'; world.settle_time, world.settle_tolerance): the run starts "
                         "partly settled",
                         max_time, last_speed,
                         last_fastest >= 0 ? body_name(w, last_fastest) : "a robot");
        pushed_note(w, at, placed_into, partner, pushed_by, still, still_o, still_d, "; ", settles,
                    overlap);
    } else if (err == FR_ERR_TIMEOUT) {
        pushed_note(w, 0, placed_into, partner, pushed_by, still, still_o, still_d, "body ",
                    settles, overlap);
    }
    if (err == FR_OK && still >= 0) {
        /* what the push left deeper than 1e-3 of r_g, a soft material's settle took to its
         * static depth (compliance_travel): it is then pushed out, as far as the settle can say
         * (a 1 kg box placed 30 mm into a 5 kg one at 1e6 N/m³ rested 1.96 mm deep, its load
         * carried, and the note said it was still 10 mm in: a new user's trial) */
        double now = 0.0;
        for (int c = 0; c < w->ncontacts; c++) {
            const fri_pair *p = &w->pairs[w->contacts[c]];
            if ((p->slot_a == still && p->slot_b == still_o) ||
                (p->slot_b == still && p->slot_a == still_o))
                now = fmax(now, p->model.max_depth0);
        }
        if (!(now > 1e-3 * gyration_radius(w, still) + 2.0 * give[still])) still = -1;
    }
    if (err == FR_OK) {
        if (placed_into >= 0 && still >= 0)
            pushed_note(w, 0, placed_into, partner, pushed_by, still, still_o, still_d, "body ",
                        settles, overlap);
        else if (placed_into >= 0)
            others_placed(
                w,
                note_at(w, 0,
                        "body '%s' was placed into '%s': pushed out by %.3g m, then settled, it "
                        "moved %.3g m and turned %.3g rad from its placement",
                        body_name(w, placed_into), body_name(w, partner[placed_into]), pushed_by,
                        fr_v3_dist(w->state[placed_into].pose.p, placed.p),
                        fr_q_angle_between(w->state[placed_into].pose.q, placed.q)),
                placed_into, partner, settles, overlap);
    }
    if (err == FR_OK) overload_note(w);
    /* the velocities the bodies were given (what the settle left is below its tolerance), the
     * kinematic bodies where they were placed */
    for (int j = 0; j < w->norder; j++) {
        int i = w->order[j];
        if (w->model[i].type == FR_BODY_KINEMATIC) w->state[i].pose = start[i].pose;
        if (w->model[i].type == FR_BODY_KINEMATIC || w->model[i].type == FR_BODY_DYNAMIC) {
            w->state[i].vel = start[i].vel;
            w->state[i].angvel = start[i].angvel;
        }
    }
    /* the robots where they settled (a frozen one where it was), at the rates they were given;
     * what they cached is stale (its stamps count the settle's steps, and the clock restarts) */
    fri_settle_robots_reset(w, &rs, false, true);
    for (int r = 0; r < w->nrobots; r++) {
        w->robots[r].settle_frozen = false;
        w->robots[r].resp_stamp = UINT64_MAX;
    }
    for (int k2 = 0; k2 < w->nactive; k2++) w->pairs[w->active[k2]].stamp = 0;
    /* the run starts here */
    w->steps = 0;
    w->time = 0.0;
    w->work = 0.0;
    w->placement = 0.0;
    /* (settled, the contacts hold what the placement asked of them: nothing to report; but for
     * a frozen robot's overlap, which the first step measures as an unsettled start's) */
    w->settled = err != FR_ERR_RANGE && frozen_into < 0;
    if (frozen_into >= 0 && !w->settle_note[0])
        note_at(w, 0,
                "link '%s' of a robot fixed to the world was placed %.3g m into '%s': the "
                "settle cannot move it, and the run starts from that overlap",
                body_name(w, frozen_into), frozen_depth, body_name(w, frozen_partner));
    w->joint_work = 0.0;
    memset(&w->stats, 0, sizeof w->stats);
    memset(&w->cstats, 0, sizeof w->cstats);
    /* the bonds keep what they hold; a pair whose bodies were given velocities across each other
     * starts sliding (fr_contact_model_starts_sliding: a box launched across the ground slows at
     * μ_k·g from its first step, and stops where it would within it), the others static */
    for (int c = 0; c < w->ncontacts; c++) {
        fri_pair *p = &w->pairs[w->contacts[c]];
        double y[6] = {0};
        if (p->modeled)
            fri_pair_local(w, p, fri_body_nu(w, p->slot_a), fri_body_nu(w, p->slot_b), y);
        p->st.sliding = p->modeled && fr_contact_model_starts_sliding(&p->model, y);
        p->res.sliding = p->st.sliding; /* (what a probe logs at t = 0) */
    }
    free(start), free(settles), free(touched), free(overlap), free(partner), free(springs);
    free(jointed), free(reach), free(before), free(load), free(supports);
    fri_settle_robots_free(&rs);
    w->settle_steps = (int)k;
    if (steps_out) *steps_out = (int)k;
    return err;
}
