/*
 * Energy audit over random jointed mechanisms in contact with a static ground (docs/world.md,
 * "Joints in the implicit step"), the counterpart of tests/physics/test_property.c. 300 seeded
 * scenes, each one mechanism:
 * - a chain (8 in 20) of 2–12 links (boxes, capsules, cylinders; half lengths 3–25 cm) bent in a
 *   plane by up to 40° at each joint, link masses 0.01–10 kg log-uniform with up to 100 between
 *   neighbours, joined by hinges (3 in 5; axis along the plane's normal, across it or between) or
 *   ball joints; a hinge has a limit, a motor (|speed| <= 3 rad/s, at most 0.1–2 times the
 *   lighter link's weight at its half length) and a spring (k 0.2–5 times that torque per rad,
 *   light damping), each with chance 1/3;
 * - such a chain hanging at rest by its first link (3 in 20), high enough to swing onto the
 *   ground: from a world point (`pinned chain`) or from a kinematic crane moving horizontally at
 *   0.2–1 m/s (`dragged chain`: its drive's work is booked in `work`, as the motors' is);
 * - a car (5 in 20): a box chassis (0.2–20 kg) on 3 or 4 hinge-jointed cylinder wheels, chassis/
 *   wheel mass 1–100, half the cars driving every wheel by a motor (rim speed <= 1.5 m/s, torque
 *   0.05–0.5 of the car's weight per wheel at the rim); some thrown rolling;
 * - a ragdoll (4 in 20): torso box, head on a ball joint, arms and legs on ball joints with
 *   elbow and knee hinges (limits, motors, springs as above), parts 0.01–0.5 of the torso's mass;
 * upright (turned about z), lying or turned any way, placed touching the ground (the polytope's
 * lowest vertex at z = 0), dropped from up to 0.5 m, thrown at up to 3 m/s or spun (rim speed
 * up to 3 m/s) as one rigid body; μ_s in [0, 1.5], μ_k in [0.3, 1]·μ_s; dt 1 or 5 ms; 1 or 2 s.
 *
 * E, the scene's energy scale, is test_property.c's, Σ m·(g·(z + R) + ½·v² + ½·(ω·R)²), plus the
 * joints' springs' energy at the start and the most work done on the world (fr_world_energy.work:
 * the engine books the motors' and a kinematic side's drive's work there, src/world/
 * constraints.c and solve.c `jr_book`). After every step energy − work (less the overlap energy
 * the first step finds, fr_world_energy.placement) must not rise by more than GAIN[kind][dt]·E in
 * a step nor above its start, no step may fail or give a NaN, no joint's error
 * (fr_world_joint_state) may pass JOINT_ERR_MAX, and no body may end inside the ground by more
 * than SINK_MAX of its radius (its lowest point at its highest over the last 0.1 s).
 *
 * Measured on 2026-11-30 (session 45, after the motors' fix below), the worst one-step gain / E
 * by kind and dt:
 *   chain         1 ms 7.37e-5 (scene 184, 62 scenes)  5 ms 0.0011  (scene 50, 62)
 *   pinned chain  1 ms 2.52e-7 (scene 241, 9)          5 ms 4.83e-5 (scene 254, 12)
 *   dragged chain 1 ms 2.29e-6 (scene 293, 9)          5 ms 5.98e-6 (scene 104, 15)
 *   car           1 ms 9.87e-7 (scene 168, 32)         5 ms 2.4e-5  (scene 70, 36)
 *   ragdoll       1 ms 4.53e-4 (scene 239, 35)         5 ms 0.0136  (scene 242, 28)
 * 2 scenes above 1e-3 and 1 above 1e-2; largest joint error 1.0e-10 (the projection's tolerance,
 * joints.h); deepest end 0.0124 of a radius. The tolerances are 2–3 times these. Like
 * test_property.c's, the gains are extremes of chaotic sets (landings found late, docs/contact.md
 * §5): another draw of the generator moves them (FR_JPROP_SEED, below). The dragged chain's at
 * 1 ms (0 before: scene 293, 0.9 mJ of its 399 J in step 1425; 2 motors, 2 springs) came with
 * the revisions that only let rows leave after JR_PASSES (solve.c jr_revise_onto); not looked
 * into further.
 *
 * What it found (session 45): a motor row of the contact solve left past its force when the solve
 * ran into its last iterations (kept for the inner solve, where the limits and motors were not
 * revised) booked that impulse, and the projection after the solve (fri_world_constraints_mid),
 * whose bounds then held no impulse at all, took it back against the joints alone: a ragdoll's
 * 30 g shin pressed by its torso went from 3.1 to 31 J of kinetic energy in a step (scene 225
 * here, 53.9 E; scenes 80 and 140, 0.192 and 0.111 E, then open; 9 scenes above 1e-2 and 21–25
 * failing per draw on the code before this session). The limits and motors are now revised in
 * those last iterations too, and the projection's bounds always hold a zero impulse. Before that
 * fix the worst gains were chain 0.0195/0.0168, car 7.89e-5/0.00437, ragdoll 8.88e-4/0.0225.
 *
 * Open, on other draws (FR_JPROP_SURVEY=1 runs a draw through): FR_JPROP_SEED=0x1, scene 278, a
 * chain of 11 dropped (1 ms): links 9 and 11 fold onto each other about link 10 at 1.65 m/s, and
 * the step before met them only as a 9e-12 m² sliver 0.36 mm apart: found 1.29 mm deep (3.4e5 N,
 * 79.7 J), 0.116 of E in a step (a landing found late, docs/contact.md §5); FR_JPROP_SEED=
 * 0x51de0000: 4 scenes just past their bounds (a ragdoll 0.0043 and 0.0032 at 1 ms, a dragged
 * chain 3.85e-5 at 5 ms, a pinned one 2.2e-6 at 1 ms).
 *
 * Injected bugs it catches (FR_JPROP_SURVEY=1 counts the checks each fails): the joints' rows
 * left out of the contact solve (solve.c `w->njr = 0`: 118 checks, chains gain up to 11.3 E,
 * bodies end 0.26 R deep); a motor's share in `jr_book` with its sign flipped (`jt->lam[...] -=
 * lam`: 32, a ragdoll 8.3 E); the motors' work after the projection not booked (constraints.c:
 * 10, cars at 1 ms up to 7.5e-4); a kinematic side's drive's work in `jr_book` with its sign
 * flipped (`w->work += lam·kin`: 4, the dragged chains, 2.2e-5–8.9e-4).
 *
 * FR_JPROP_ONLY=N runs scene N alone (printing it), FR_JPROP_TRACE=FROM:TO prints its energy and
 * contacts over those steps, FR_JPROP_VERBOSE prints every scene.
 */
#include <stdlib.h>
#include <string.h>

#include "frtest.h"
#include "ground.h"
#include "fureru/joints.h"
#include "fureru/world.h"

#define NSCENES       300
#define MAXB          16
#define MAXJ          16
#define SINK_MAX      0.05  /* of the body's radius, over the last 0.1 s */
#define JOINT_ERR_MAX 2e-10 /* m or rad, after any step */
#define GAIN_TYPICAL  1e-3
#define MAX_TYPICAL   6
#define GAIN_SEVERE   1e-2
#define MAX_SEVERE    3
#define RES_CYL       24 /* sides of a cylinder's prism */
#define RES_CAP       12 /* sides of a capsule's */

enum kind { CHAIN, PINNED, CAR, RAGDOLL, DRAGGED, NKINDS };
/* a scene's largest one-step gain of energy − work, / E, by kind and dt (1 ms, 5 ms) */
static const double GAIN[NKINDS][2] = {{2e-4, 3e-3},   /* chain: measured 7.37e-5, 0.0011 */
                                       {5e-7, 1.5e-4}, /* pinned chain: 2.52e-7, 4.83e-5 */
                                       {2e-6, 6e-5},   /* car: 9.87e-7, 2.4e-5 */
                                       {1.5e-3, 0.04}, /* ragdoll: 4.53e-4, 0.0136 */
                                       {5e-6, 2e-5}};  /* dragged chain: 2.29e-6, 5.98e-6 */
/* open: failures kept in the generator, reported, not bounded (the header; none now) */
static const int open_scenes[] = {-1};

static double log_uniform(frtest_rng *r, double lo, double hi)
{
    return exp(frtest_uniform(r, log(lo), log(hi)));
}

enum shape_kind { S_BOX, S_CAPSULE, S_CYLINDER };
static const char *const shape_names[] = {"box", "capsule", "cylinder"};

typedef struct jbody {
    int shape;    /* enum shape_kind */
    fr_vec3 half; /* box: half extents; capsule, cylinder: (radius, half length along z, 0) */
    double m;
    fr_pose pose; /* the shape's centre (= centre of mass) */
    fr_vec3 vel, angvel;
    double sr; /* capsule, cylinder: the radius that holds its polytope (placement) */
} jbody;

typedef struct jjoint {
    int type, a, b; /* b < 0: the world */
    fr_vec3 anchor, axis;
    bool limit, motor;
    double lo, hi, speed, fmax, k, c, rest;
} jjoint;

static const char *const kind_names[] = {"chain", "pinned chain", "car", "ragdoll",
                                         "dragged chain"};
enum motion { TOUCH, DROP, THROW, SPIN, NMOTIONS, HANGING = NMOTIONS };
static const char *const motion_names[] = {"touching", "dropped", "thrown", "spun", "hanging"};

typedef struct jscene {
    int kind, motion;
    double dt, T, mus, muk;
    int nb, nj, motors, limits, springs;
    bool drag; /* a pinned chain's pin is a kinematic body moving at drag_v, not the world */
    fr_vec3 drag_v;
    jbody b[MAXB];
    jjoint j[MAXJ];
} jscene;

/* The shape's extent below its centre along world −z at orientation q (the true shape; poly:
 * the capsule's or cylinder's polytope, whose vertices lie outside it), m. */
static double low_extent(const jbody *b, fr_quat q, bool poly)
{
    const fr_vec3 ex = fr_q_rotate(q, fr_v3(1, 0, 0)), ey = fr_q_rotate(q, fr_v3(0, 1, 0)),
                  ez = fr_q_rotate(q, fr_v3(0, 0, 1));
    if (b->shape == S_BOX)
        return fabs(ex.z) * b->half.x + fabs(ey.z) * b->half.y + fabs(ez.z) * b->half.z;
    const double r = poly ? b->sr : b->half.x, hl = b->half.y;
    if (b->shape == S_CAPSULE) return fabs(ez.z) * hl + r;
    return fabs(ez.z) * hl + r * sqrt(fmax(0.0, 1.0 - ez.z * ez.z));
}

static double bound_radius(const jbody *b)
{
    if (b->shape == S_BOX) return fr_v3_norm(b->half);
    if (b->shape == S_CAPSULE) return b->half.x + b->half.y;
    return hypot(b->half.x, b->half.y);
}

/* The rotation taking z onto the unit vector d. */
static fr_quat q_from_z(fr_vec3 d)
{
    fr_vec3 ax = fr_v3_cross(fr_v3(0, 0, 1), d);
    double s = fr_v3_norm(ax), c = d.z;
    if (s < 1e-12) return c > 0 ? fr_q_identity() : fr_q_axis_angle(fr_v3(1, 0, 0), M_PI);
    return fr_q_axis_angle(fr_v3_scale(ax, 1.0 / s), atan2(s, c));
}

static fr_quat random_rotation(frtest_rng *r)
{
    return fr_q_normalize(fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                               frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
}

static fr_shape *make_shape(const jbody *b);

static int add_jbody(jscene *sc, int shape, fr_vec3 half, double m, fr_vec3 p, fr_quat q)
{
    ck_assert_int_lt(sc->nb, MAXB);
    jbody *b = &sc->b[sc->nb];
    memset(b, 0, sizeof *b);
    b->shape = shape;
    b->half = half;
    b->m = m;
    b->pose = (fr_pose){p, q};
    if (shape != S_BOX) {
        fr_shape *s = make_shape(b);
        b->sr = s->support_radius;
        fr_shape_destroy(s);
    }
    return sc->nb++;
}

static jjoint *add_jjoint(jscene *sc, int type, int a, int b, fr_vec3 anchor, fr_vec3 axis)
{
    ck_assert_int_lt(sc->nj, MAXJ);
    jjoint *j = &sc->j[sc->nj++];
    memset(j, 0, sizeof *j);
    j->type = type;
    j->a = a;
    j->b = b;
    j->anchor = anchor;
    j->axis = fr_v3_normalize(axis);
    return j;
}

/* A limit, motor or spring (or none) on a hinge between bodies of masses ma, mb whose centres
 * are la, lb from it: torques of the order of the lighter one's weight at its arm. */
static void dress_hinge(jscene *sc, frtest_rng *r, jjoint *j, double m, double l, double lo,
                        double hi)
{
    const double g = 9.81, tq = m * g * l;
    if (frtest_next(r) % 3 == 0) {
        j->limit = true;
        j->lo = lo;
        j->hi = hi;
        sc->limits++;
    }
    if (frtest_next(r) % 3 == 0) {
        j->motor = true;
        j->speed = frtest_uniform(r, -3, 3);
        j->fmax = tq * frtest_uniform(r, 0.1, 2.0);
        sc->motors++;
    }
    if (frtest_next(r) % 3 == 0) {
        j->k = tq * frtest_uniform(r, 0.2, 5.0);
        j->c = j->k * frtest_uniform(r, 0.0, 0.05);
        j->rest = frtest_uniform(r, -0.3, 0.3);
        sc->springs++;
    }
}

/* A chain of 2–12 links bent within a horizontal plane by up to 40° at each joint, its first
 * link's start at the origin; pinned: held there by a joint to the world. */
static void gen_chain(jscene *sc, frtest_rng *r, bool pinned)
{
    const int n = 2 + (int)(frtest_next(r) % 11);
    double L[12], m[12];
    for (int i = 0; i < n; i++) L[i] = frtest_uniform(r, 0.03, 0.25);
    m[0] = log_uniform(r, 0.01, 10);
    for (int i = 1; i < n; i++)
        m[i] = fmin(10.0, fmax(0.01, m[i - 1] * pow(10.0, frtest_uniform(r, -2, 2))));
    fr_vec3 start = fr_v3_zero();
    double phi = 0.0;
    for (int i = 0; i < n; i++) {
        if (i > 0) phi += frtest_uniform(r, -0.7, 0.7);
        const fr_vec3 d = fr_v3(cos(phi), sin(phi), 0);
        double t = frtest_uniform(r, 0.15, 0.45) * L[i];
        if (i > 0) t = fmin(t, 0.45 * L[i - 1]);
        if (i + 1 < n) t = fmin(t, 0.45 * L[i + 1]);
        t = fmax(0.005, fmin(t, 0.06));
        const int shape = (int)(frtest_next(r) % 3);
        const fr_vec3 half = shape == S_BOX ? fr_v3(t * frtest_uniform(r, 0.6, 1.0), t, L[i])
                                            : fr_v3(t, fmax(0.2 * L[i], L[i] - t), 0);
        /* (a capsule's caps reach to its ends: its half length is L − t) */
        const fr_quat q =
            fr_q_mul(q_from_z(d), fr_q_axis_angle(fr_v3(0, 0, 1), frtest_uniform(r, 0, M_PI)));
        const int id = add_jbody(sc, shape, half, m[i], fr_v3_mad(start, L[i], d), q);
        const bool hinge = frtest_next(r) % 5 < 3;
        if (i > 0 || pinned) {
            fr_vec3 axis = fr_v3(0, 0, 1); /* folding in the chain's plane */
            const int pick = (int)(frtest_next(r) % 3);
            if (pick == 1) axis = fr_v3_cross(d, fr_v3(0, 0, 1)); /* up and down */
            if (pick == 2) {
                const double a = frtest_uniform(r, 0, 2 * M_PI);
                axis = fr_v3_add(fr_v3_scale(fr_v3(0, 0, 1), cos(a)),
                                 fr_v3_scale(fr_v3_cross(d, fr_v3(0, 0, 1)), sin(a)));
            }
            jjoint *j = add_jjoint(sc, hinge ? FR_CJOINT_HINGE : FR_CJOINT_BALL, id,
                                   i > 0 ? id - 1 : -1, start, axis);
            const double ml = i > 0 ? fmin(m[i], m[i - 1]) : m[i];
            if (hinge)
                dress_hinge(sc, r, j, ml, L[i], -frtest_uniform(r, 0.2, 1.5),
                            frtest_uniform(r, 0.2, 1.5));
        }
        start = fr_v3_mad(start, 2 * L[i], d);
    }
}

/* A box chassis on 3 or 4 hinge-jointed cylinder wheels (axles along y), the wheels' centres at
 * the origin's height; some with every wheel driven by a motor. */
static void gen_car(jscene *sc, frtest_rng *r)
{
    const double hx = frtest_uniform(r, 0.1, 0.5), hy = frtest_uniform(r, 0.06, 0.3),
                 rw = frtest_uniform(r, 0.03, 0.15), hw = frtest_uniform(r, 0.01, 0.04);
    const double hz = fmin(frtest_uniform(r, 0.02, 0.08), 0.8 * rw);
    const double M = log_uniform(r, 0.2, 20), mw = fmax(0.01, M / log_uniform(r, 1, 100));
    const int nw = 3 + (int)(frtest_next(r) % 2);
    const int chassis = add_jbody(sc, S_BOX, fr_v3(hx, hy, hz), M, fr_v3_zero(), fr_q_identity());
    const double xw = fmax(hx * frtest_uniform(r, 0.6, 1.0), rw + 0.01), yw = hy + hw + 0.005;
    const bool motor = frtest_next(r) % 2;
    const double speed = frtest_uniform(r, -1.5, 1.5) / rw;
    const double tq = (M + nw * mw) * 9.81 * rw / nw * frtest_uniform(r, 0.05, 0.5);
    const fr_quat qw = fr_q_axis_angle(fr_v3(1, 0, 0), -M_PI / 2); /* z onto y */
    for (int k = 0; k < nw; k++) {
        fr_vec3 c =
            k < 2 ? fr_v3(-xw, k ? yw : -yw, 0) : fr_v3(xw, nw == 3 ? 0 : (k == 3 ? yw : -yw), 0);
        const int id = add_jbody(sc, S_CYLINDER, fr_v3(rw, hw, 0), mw, c, qw);
        jjoint *j = add_jjoint(sc, FR_CJOINT_HINGE, chassis, id, c, fr_v3(0, 1, 0));
        if (motor) {
            j->motor = true;
            j->speed = speed;
            j->fmax = tq;
            sc->motors++;
        }
    }
}

/* A ragdoll in a T-pose: torso, head (ball), upper arms (ball) and forearms (elbow hinges),
 * thighs (ball) and shins (knee hinges), the torso's centre at the origin. */
static void gen_ragdoll(jscene *sc, frtest_rng *r)
{
    const double s = frtest_uniform(r, 0.3, 1.0);
    const double mt = log_uniform(r, 0.5, 10);
    const fr_vec3 th = fr_v3_scale(fr_v3(0.15, 0.09, 0.25), s);
    const int torso = add_jbody(sc, S_BOX, th, mt, fr_v3_zero(), fr_q_identity());
#define PART_MASS fmax(0.01, mt *pow(10.0, frtest_uniform(r, -2, -0.3)))
    /* head: a capsule or box on a ball joint at the neck */
    const double hr = 0.07 * s;
    const int hshape = frtest_next(r) % 2 ? S_CAPSULE : S_BOX;
    const int head =
        add_jbody(sc, hshape, hshape == S_BOX ? fr_v3(hr, hr, hr * 1.2) : fr_v3(hr, 0.3 * hr, 0),
                  PART_MASS, fr_v3(0, 0, th.z + 0.01 * s + 1.3 * hr), fr_q_identity());
    add_jjoint(sc, FR_CJOINT_BALL, head, torso, fr_v3(0, 0, th.z + 0.005 * s), fr_v3(0, 0, 1));
    const double ar = 0.035 * s, al = 0.13 * s; /* a limb segment's radius, half length */
    for (int side = -1; side <= 1; side += 2) {
        /* arms along ±x at the shoulders */
        const fr_vec3 sh = fr_v3(side * (th.x + 0.01 * s), 0, th.z - ar - 0.01 * s);
        const fr_quat qa = q_from_z(fr_v3(side, 0, 0));
        const int ua = add_jbody(sc, S_CAPSULE, fr_v3(ar, al - ar, 0), PART_MASS,
                                 fr_v3_add(sh, fr_v3(side * al, 0, 0)), qa);
        add_jjoint(sc, FR_CJOINT_BALL, ua, torso, sh, fr_v3(0, 0, 1));
        const fr_vec3 el = fr_v3_add(sh, fr_v3(side * 2 * al, 0, 0));
        const double m_f = PART_MASS;
        const int fa =
            add_jbody(sc, frtest_next(r) % 2 ? S_CAPSULE : S_CYLINDER, fr_v3(0.9 * ar, al - ar, 0),
                      m_f, fr_v3_add(el, fr_v3(side * al, 0, 0)), qa);
        jjoint *je = add_jjoint(sc, FR_CJOINT_HINGE, fa, ua, el, fr_v3(0, 0, side));
        dress_hinge(sc, r, je, m_f, al, -0.05, frtest_uniform(r, 1.0, 2.5));
        /* legs down from the hips */
        const double lr = 0.05 * s, ll = 0.2 * s;
        const fr_vec3 hip = fr_v3(side * 0.08 * s, 0, -th.z - 0.005 * s);
        const fr_quat ql = q_from_z(fr_v3(0, 0, -1));
        const int thigh =
            add_jbody(sc, frtest_next(r) % 2 ? S_CAPSULE : S_BOX, fr_v3(lr, ll - lr, 0), PART_MASS,
                      fr_v3_add(hip, fr_v3(0, 0, -ll)), ql);
        if (sc->b[thigh].shape == S_BOX) sc->b[thigh].half = fr_v3(lr * 0.8, lr * 0.8, ll);
        add_jjoint(sc, FR_CJOINT_BALL, thigh, torso, hip, fr_v3(0, 0, 1));
        const fr_vec3 kn = fr_v3_add(hip, fr_v3(0, 0, -2 * ll));
        const double m_s = PART_MASS;
        const int shin = add_jbody(sc, S_CAPSULE, fr_v3(0.8 * lr, ll - 0.8 * lr, 0), m_s,
                                   fr_v3_add(kn, fr_v3(0, 0, -ll)), ql);
        jjoint *jk = add_jjoint(sc, FR_CJOINT_HINGE, shin, thigh, kn, fr_v3(1, 0, 0));
        dress_hinge(sc, r, jk, m_s, ll, -frtest_uniform(r, 1.5, 2.4), 0.05);
    }
#undef PART_MASS
}

/* Turn the mechanism by q about the origin, set it down so that its lowest point is at height
 * h, and give it the rigid motion (V at its centre of mass, ω). */
static void place(jscene *sc, fr_quat q, double h, fr_vec3 V, fr_vec3 om)
{
    for (int i = 0; i < sc->nb; i++) {
        sc->b[i].pose.p = fr_q_rotate(q, sc->b[i].pose.p);
        sc->b[i].pose.q = fr_q_normalize(fr_q_mul(q, sc->b[i].pose.q));
    }
    for (int k = 0; k < sc->nj; k++) {
        sc->j[k].anchor = fr_q_rotate(q, sc->j[k].anchor);
        sc->j[k].axis = fr_q_rotate(q, sc->j[k].axis);
    }
    double low = INFINITY, mass = 0.0;
    fr_vec3 C = fr_v3_zero();
    for (int i = 0; i < sc->nb; i++) {
        low = fmin(low, sc->b[i].pose.p.z - low_extent(&sc->b[i], sc->b[i].pose.q, true));
        C = fr_v3_mad(C, sc->b[i].m, sc->b[i].pose.p);
        mass += sc->b[i].m;
    }
    C = fr_v3_scale(C, 1.0 / mass);
    const fr_vec3 up = fr_v3(0, 0, h - low);
    for (int i = 0; i < sc->nb; i++) {
        jbody *b = &sc->b[i];
        b->pose.p = fr_v3_add(b->pose.p, up);
        b->vel = fr_v3_add(b->vel,
                           fr_v3_add(V, fr_v3_cross(om, fr_v3_sub(b->pose.p, fr_v3_add(C, up)))));
        b->angvel = fr_v3_add(b->angvel, om);
    }
    for (int k = 0; k < sc->nj; k++) sc->j[k].anchor = fr_v3_add(sc->j[k].anchor, up);
}

/* The sc-th random scene. */
static void generate(jscene *sc, uint64_t seed)
{
    frtest_rng r = {seed};
    memset(sc, 0, sizeof *sc);
    sc->dt = (frtest_next(&r) & 1) ? 0.001 : 0.005;
    sc->T = (frtest_next(&r) & 1) ? 1.0 : 2.0;
    sc->mus = frtest_uniform(&r, 0.0, 1.5);
    sc->muk = sc->mus * frtest_uniform(&r, 0.3, 1.0);
    const uint64_t k = frtest_next(&r) % 20;
    sc->kind = k < 8 ? CHAIN : k < 11 ? PINNED : k < 16 ? CAR : RAGDOLL;
    sc->motion = (int)(frtest_next(&r) % NMOTIONS);
    if (sc->kind == CHAIN || sc->kind == PINNED) gen_chain(sc, &r, sc->kind == PINNED);
    if (sc->kind == CAR) gen_car(sc, &r);
    if (sc->kind == RAGDOLL) gen_ragdoll(sc, &r);
    /* its size, for the spin */
    double R = 0.0;
    for (int i = 0; i < sc->nb; i++)
        R = fmax(R, fr_v3_norm(sc->b[i].pose.p) + bound_radius(&sc->b[i]));
    if (sc->kind == PINNED) {
        /* hung from a world point high enough for part of it to reach the ground, at rest */
        double len = 0.0;
        for (int i = 0; i < sc->nb; i++)
            len += 2 * fr_v3_norm(fr_v3_sub(sc->b[i].pose.p, sc->j[i].anchor));
        const fr_quat q = fr_q_axis_angle(fr_v3(0, 0, 1), frtest_uniform(&r, 0, 2 * M_PI));
        place(sc, q, 0.0, fr_v3_zero(), fr_v3_zero());
        const double lift = frtest_uniform(&r, 0.3, 0.9) * len;
        for (int i = 0; i < sc->nb; i++) sc->b[i].pose.p.z += lift;
        for (int j = 0; j < sc->nj; j++) sc->j[j].anchor.z += lift;
        sc->motion = HANGING;
        if (frtest_next(&r) % 2) {
            const double a = frtest_uniform(&r, 0, 2 * M_PI);
            sc->drag = true;
            sc->kind = DRAGGED;
            sc->drag_v = fr_v3_scale(fr_v3(cos(a), sin(a), 0), frtest_uniform(&r, 0.2, 1.0));
        }
        return;
    }
    /* upright (a car on its wheels, a ragdoll standing, a chain flat) turned about z, or any way */
    fr_quat q = fr_q_axis_angle(fr_v3(0, 0, 1), frtest_uniform(&r, 0, 2 * M_PI));
    const uint64_t turn = frtest_next(&r) % 4;
    if (turn == 0) q = random_rotation(&r);
    if (turn == 1 && sc->kind == RAGDOLL)
        q = fr_q_mul(q, fr_q_axis_angle(fr_v3(1, 0, 0), M_PI / 2));
    double h = 0.0;
    fr_vec3 V = fr_v3_zero(), om = fr_v3_zero();
    if (sc->motion != TOUCH) h = frtest_uniform(&r, 0.0, sc->motion == DROP ? 0.5 : 0.3);
    if (sc->motion == THROW) {
        const fr_vec3 d = fr_v3_normalize(fr_v3(
            frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 0.5)));
        V = fr_v3_scale(d, frtest_uniform(&r, 0, 3));
    }
    if (sc->motion == SPIN) {
        const fr_vec3 a = fr_v3_normalize(
            fr_v3(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1)));
        om = fr_v3_scale(a, frtest_uniform(&r, 0, 3) / R);
    }
    place(sc, q, h, V, om);
    if (sc->kind == CAR && sc->motion == THROW && turn != 0 && frtest_next(&r) % 2) {
        /* rolling instead: along the car's x, its wheels turning with the ground */
        const fr_vec3 ex = fr_q_rotate(q, fr_v3(1, 0, 0)), ey = fr_q_rotate(q, fr_v3(0, 1, 0));
        const double v = frtest_uniform(&r, -3, 3);
        for (int i = 0; i < sc->nb; i++) {
            sc->b[i].vel = fr_v3_scale(ex, v);
            sc->b[i].angvel = i ? fr_v3_scale(ey, v / sc->b[1].half.x) : fr_v3_zero();
        }
    }
}

static fr_shape *make_shape(const jbody *b)
{
    fr_shape *s = NULL;
    int err = b->shape == S_BOX       ? fr_shape_create_box(b->half, &s)
              : b->shape == S_CAPSULE ? fr_shape_create_capsule(b->half.x, b->half.y, RES_CAP, &s)
                                      : fr_shape_create_cylinder(b->half.x, b->half.y, RES_CYL, &s);
    ck_assert_int_eq(err, FR_OK);
    return s;
}

static fr_mat3 inertia_of(const jbody *b, const fr_shape *s)
{
    double vol;
    fr_vec3 com;
    fr_mat3 I;
    fr_shape_mass(s, 1.0, &vol, &com, &I);
    return fr_m3_scale(I, b->m / vol);
}

static fr_world *build(const jscene *sc, fr_body_id *ids)
{
    fr_world_def def = fr_world_def_default();
    def.dt = sc->dt;
    /* (the capacities a scene file of these bodies gets, docs/scenes.md: its replay is this run) */
    def.max_bodies = sc->nb + 1 + sc->drag + 16;
    def.max_shapes = sc->nb + 1 + 4 * 16;
    def.max_contacts = 8 * (sc->nb + 1) + 64;
    fr_world *w = NULL;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    fr_contact_material mat = {0.0, 0.0, sc->mus, sc->muk};
    ck_assert_int_eq(fr_world_set_material(w, 0, &mat), FR_OK);
    add_ground_slab(w, 60, 60);
    for (int i = 0; i < sc->nb; i++) {
        const jbody *b = &sc->b[i];
        fr_shape *s = make_shape(b);
        fr_body_def bd = fr_body_def_default();
        snprintf(bd.name, sizeof bd.name, "b%d", i);
        bd.mass = b->m;
        bd.inertia = inertia_of(b, s);
        /* (normalised again, as a scene file's orientation is: its replay is this run) */
        bd.pose = (fr_pose){b->pose.p, fr_q_normalize(b->pose.q)};
        bd.vel = b->vel;
        bd.angvel = b->angvel;
        ck_assert_int_eq(fr_world_add_body(w, &bd, &ids[i]), FR_OK);
        fr_shape_def sd = fr_shape_def_default(s);
        ck_assert_int_eq(fr_body_add_shape(w, ids[i], &sd), FR_OK);
    }
    fr_body_id crane = FR_BODY_NULL;
    if (sc->drag) {
        fr_body_def cd = fr_body_def_default();
        snprintf(cd.name, sizeof cd.name, "crane");
        cd.type = FR_BODY_KINEMATIC;
        cd.pose.p = sc->j[0].anchor;
        cd.vel = sc->drag_v;
        ck_assert_int_eq(fr_world_add_body(w, &cd, &crane), FR_OK);
    }
    for (int k = 0; k < sc->nj; k++) {
        const jjoint *j = &sc->j[k];
        fr_joint_def jd = fr_joint_def_default(j->type);
        snprintf(jd.name, sizeof jd.name, "j%d", k);
        jd.a = ids[j->a];
        jd.b = j->b >= 0 ? ids[j->b] : crane;
        ck_assert_int_eq(fr_joint_def_at(w, &jd, j->anchor, j->axis), FR_OK);
        jd.limit = j->limit;
        jd.lo = j->lo;
        jd.hi = j->hi;
        jd.motor = j->motor;
        jd.motor_speed = j->speed;
        jd.motor_max = j->fmax;
        jd.stiffness = j->k;
        jd.damping = j->c;
        jd.rest = j->rest;
        ck_assert_int_eq(fr_world_add_joint(w, &jd, NULL), FR_OK);
    }
    return w;
}

/* The scene as a scene file (docs/scenes.md) that `fureru run` replays. */
static void write_yaml(const jscene *sc, const char *tag, int index, const char *dir,
                       const char *why)
{
    char path[512];
    snprintf(path, sizeof path, "%s/jprop-%s%03d.yaml", dir, tag, index);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "# tests/physics/test_property_joints.c scene %s%d: a %s, %s, dt %g ms\n# %s\n", tag,
            index, kind_names[sc->kind], motion_names[sc->motion], sc->dt * 1e3, why);
    fprintf(f, "name: jprop-%s%03d\nworld: {dt: %.17g, duration: %g, settle: false}\n", tag, index,
            sc->dt, sc->T);
    fprintf(f, "materials:\n- {name: m, mu_s: %.17g, mu_k: %.17g}\n", sc->mus, sc->muk);
    fprintf(f, "bodies:\n- name: ground\n  type: static\n  position: [0, 0, -5]\n  shapes:\n"
               "  - {type: box, size: [120, 120, 10], material: m}\n");
    for (int i = 0; i < sc->nb; i++) {
        const jbody *b = &sc->b[i];
        fr_shape *s = make_shape(b);
        const fr_mat3 I = inertia_of(b, s);
        fr_shape_destroy(s);
        fprintf(f, "- name: b%d\n  mass: %.17g\n", i, b->m);
        fprintf(f, "  inertia: [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g]\n", I.m[0][0], I.m[1][1],
                I.m[2][2], I.m[0][1], I.m[0][2], I.m[1][2]);
        fprintf(f, "  position: [%.17g, %.17g, %.17g]\n", b->pose.p.x, b->pose.p.y, b->pose.p.z);
        fprintf(f, "  orientation: [%.17g, %.17g, %.17g, %.17g]\n", b->pose.q.w, b->pose.q.x,
                b->pose.q.y, b->pose.q.z);
        fprintf(f, "  velocity: [%.17g, %.17g, %.17g]\n", b->vel.x, b->vel.y, b->vel.z);
        fprintf(f, "  angular_velocity: [%.17g, %.17g, %.17g]\n", b->angvel.x, b->angvel.y,
                b->angvel.z);
        if (b->shape == S_BOX)
            fprintf(f, "  shapes:\n  - {type: box, size: [%.17g, %.17g, %.17g], material: m}\n",
                    2 * b->half.x, 2 * b->half.y, 2 * b->half.z);
        else
            fprintf(f,
                    "  shapes:\n  - {type: %s, radius: %.17g, length: %.17g, resolution: %d, "
                    "material: m}\n",
                    shape_names[b->shape], b->half.x, 2 * b->half.y,
                    b->shape == S_CAPSULE ? RES_CAP : RES_CYL);
    }
    if (sc->drag)
        fprintf(f,
                "- name: crane\n  type: kinematic\n  position: [%.17g, %.17g, %.17g]\n  "
                "velocity: [%.17g, %.17g, %.17g]\n",
                sc->j[0].anchor.x, sc->j[0].anchor.y, sc->j[0].anchor.z, sc->drag_v.x, sc->drag_v.y,
                sc->drag_v.z);
    fprintf(f, "joints:\n");
    for (int k = 0; k < sc->nj; k++) {
        const jjoint *j = &sc->j[k];
        fprintf(f, "- name: j%d\n  type: %s\n  a: b%d\n", k,
                j->type == FR_CJOINT_HINGE ? "hinge" : "ball", j->a);
        if (j->b >= 0)
            fprintf(f, "  b: b%d\n", j->b);
        else
            fprintf(f, "  b: %s\n", sc->drag ? "crane" : "world");
        fprintf(f, "  anchor: [%.17g, %.17g, %.17g]\n  axis: [%.17g, %.17g, %.17g]\n", j->anchor.x,
                j->anchor.y, j->anchor.z, j->axis.x, j->axis.y, j->axis.z);
        if (j->limit) fprintf(f, "  limit: [%.17g, %.17g]\n", j->lo, j->hi);
        if (j->motor) fprintf(f, "  motor: {speed: %.17g, max: %.17g}\n", j->speed, j->fmax);
        if (j->k > 0)
            fprintf(f, "  spring: {stiffness: %.17g, damping: %.17g, rest: %.17g}\n", j->k, j->c,
                    j->rest);
    }
    fclose(f);
}

typedef struct scene_result {
    double worst_gain; /* J, the largest one-step rise of energy − work */
    double rise;       /* J, the largest rise of energy − work above its start */
    double scale;      /* J */
    double work;       /* J, the motors' work at the end */
    double joint_err;  /* m or rad, the largest joint error after a step */
    double sink;       /* / R, as in test_property.c */
    int err;           /* fr_world_step's error, or 1 for a NaN */
    long at;           /* the step of the worst gain */
    double placement;  /* J */
} scene_result;

/* FR_JPROP_TRACE=FROM:TO: print the energy and the contacts of those steps */
static bool trace(long k)
{
    const char *t = getenv("FR_JPROP_TRACE");
    long from = 0, to = -1;
    if (t && sscanf(t, "%ld:%ld", &from, &to) != 2) to = -1;
    return k >= from && k <= to;
}

static scene_result run_scene(const jscene *sc)
{
    scene_result out = {0};
    fr_body_id ids[MAXB];
    fr_world *w = build(sc, ids);
    const double g = 9.81;
    for (int i = 0; i < sc->nb; i++) {
        const jbody *b = &sc->b[i];
        const double R = bound_radius(b);
        out.scale += b->m * (g * (b->pose.p.z + R) + 0.5 * fr_v3_norm2(b->vel) +
                             0.5 * fr_v3_norm2(b->angvel) * R * R);
    }
    fr_world_energy a;
    fr_world_energy_get(w, &a);
    out.scale += a.spring; /* the joints' springs' */
    double work_max = 0.0;
    const long n = (long)(sc->T / sc->dt + 0.5), tail = (long)(0.1 / sc->dt + 0.5);
    double low_best[MAXB];
    for (int i = 0; i < sc->nb; i++) low_best[i] = -INFINITY;
    double e0 = NAN;
    for (long k = 0; k < n; k++) {
        int err = fr_world_step(w);
        if (err) {
            out.err = err;
            out.at = k;
            break;
        }
        fr_world_energy b;
        fr_world_energy_get(w, &b);
        if (!isfinite(b.total) || !isfinite(b.work)) {
            out.err = 1;
            out.at = k;
            break;
        }
        /* the placement's overlaps (a curved shape's polytope set down at its true radius) are
         * part of the state at t = 0 that the first step finds */
        if (k == 0) a.total += b.placement, e0 = a.total - a.work, out.placement = b.placement;
        const double gain = (b.total - b.work) - (a.total - a.work);
        if (gain > out.worst_gain) out.worst_gain = gain, out.at = k;
        out.rise = fmax(out.rise, (b.total - b.work) - e0);
        work_max = fmax(work_max, b.work);
        for (int j = 0; j < sc->nj; j++) {
            fr_joint_state js;
            ck_assert_int_eq(fr_world_joint_state(w, j, &js), FR_OK);
            out.joint_err = fmax(out.joint_err, isfinite(js.error) ? js.error : INFINITY);
        }
        for (int i = 0; i < sc->nb && k >= n - tail; i++) {
            fr_pose p;
            fr_body_get_pose(w, ids[i], &p);
            low_best[i] = fmax(low_best[i], p.p.z - low_extent(&sc->b[i], p.q, false));
        }
        if (trace(k))
            printf(
                "#   step %ld: total %.9g (kin %.6g pot %.6g contact %.6g spring %.6g) work %.6g "
                "placement %.6g\n",
                k, b.total, b.kinetic, b.potential, b.contact, b.spring, b.work, b.placement);
        if (trace(k)) {
            fr_pose p0;
            fr_body_get_pose(w, ids[0], &p0);
            printf("#     b0 at %.17g %.17g %.17g\n", p0.p.x, p0.p.y, p0.p.z);
        }
        for (int c = 0; trace(k) && c < fr_world_contact_count(w); c++) {
            fr_body_id ba, bb;
            const fr_contact_result *cr = fr_world_contact(w, c, &ba, &bb);
            printf("#     contact %u-%u: E %.6g depth %.3g N %.3g vol %.3g area %.3g\n", ba.index1,
                   bb.index1, fr_world_contact_energy(w, c), cr->max_depth, cr->normal_force,
                   cr->volume, cr->area);
        }
        a = b;
    }
    out.work = a.work;
    out.scale += work_max;
    for (int i = 0; i < sc->nb && !out.err; i++)
        out.sink = fmax(out.sink, -low_best[i] / bound_radius(&sc->b[i]));
    fr_world_destroy(w);
    return out;
}

/* FR_JPROP_SURVEY set: every scene runs and each failed check is counted and printed instead
 * of ending the test (what an injected bug breaks, scene by scene) */
static bool survey;
static int survey_failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!survey) {                                                                             \
            ck_assert_msg(cond, __VA_ARGS__);                                                      \
        } else if (!(cond)) {                                                                      \
            survey_failures++;                                                                     \
            printf("# FAILS: ");                                                                   \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

START_TEST(test_random_mechanisms_never_gain_energy)
{
    survey = getenv("FR_JPROP_SURVEY") != NULL;
    const char *dump = getenv("FR_JPROP_DUMP"); /* a folder: write the scenes out of bounds */
    const char *only = getenv("FR_JPROP_ONLY"); /* run one scene */
    /* other draws of the generator (the bounds are this draw's) */
    const uint64_t base =
        getenv("FR_JPROP_SEED") ? strtoull(getenv("FR_JPROP_SEED"), NULL, 0) : 0x70e17000ull;
    double worst[NKINDS][2] = {{0}}, worst_err = 0.0, worst_sink = 0.0;
    int worst_at[NKINDS][2], count[NKINDS][2] = {{0}}, above = 0, severe = 0;
    for (int sc_i = 0; sc_i < NSCENES; sc_i++) {
        if (only && atoi(only) != sc_i) continue;
        jscene sc;
        generate(&sc, base + (uint64_t)sc_i);
        const scene_result res = run_scene(&sc);
        const int c = sc.kind, d = sc.dt > 0.002;
        const double rel = res.worst_gain / res.scale;
        bool open = false;
        for (int k = 0; k < (int)(sizeof open_scenes / sizeof open_scenes[0]); k++)
            open |= open_scenes[k] == sc_i;
        if (only || open || rel > GAIN[c][d] || getenv("FR_JPROP_VERBOSE"))
            printf("# %3d %-12s %-8s dt %g ms %2d bodies %2d joints (%d motors %d limits %d "
                   "springs) mu %.2f: gain %.3g (step %ld) rise %.3g of %.3g J; work %.3g J; "
                   "joint error %.3g; sink %.3g; err %d; placement %.3g%s\n",
                   sc_i, kind_names[c], motion_names[sc.motion], sc.dt * 1e3, sc.nb, sc.nj,
                   sc.motors, sc.limits, sc.springs, sc.mus, rel, res.at, res.rise / res.scale,
                   res.scale, res.work, res.joint_err, res.sink, res.err, res.placement / res.scale,
                   open ? " (open)" : "");
        if (dump &&
            (res.err || rel > GAIN[c][d] || res.joint_err > JOINT_ERR_MAX || res.sink > SINK_MAX)) {
            char why[256];
            snprintf(why, sizeof why,
                     "one-step gain %.3g of E = %.4g J at step %ld, rise %.3g, joint error %.3g, "
                     "sink %.3g, error %d",
                     rel, res.scale, res.at, res.rise / res.scale, res.joint_err, res.sink,
                     res.err);
            char tag[32] = "";
            if (getenv("FR_JPROP_SEED")) snprintf(tag, sizeof tag, "%s-", getenv("FR_JPROP_SEED"));
            write_yaml(&sc, tag, sc_i, dump, why);
        }
        CHECK(res.err == 0, "scene %d: step %ld failed (%d)", sc_i, res.at, res.err);
        CHECK(res.joint_err <= JOINT_ERR_MAX, "scene %d: a joint's error reached %.3g", sc_i,
              res.joint_err);
        CHECK(res.sink <= SINK_MAX, "scene %d: a body ends %.3g of its radius in the ground", sc_i,
              res.sink);
        worst_err = fmax(worst_err, res.joint_err);
        worst_sink = fmax(worst_sink, res.sink);
        if (open) continue;
        CHECK(rel <= GAIN[c][d],
              "scene %d (a %s, %s, dt %g ms): one step gained %.3g J = %.3g of its energy", sc_i,
              kind_names[c], motion_names[sc.motion], sc.dt * 1e3, res.worst_gain, rel);
        CHECK(res.rise <= GAIN[c][d] * res.scale, "scene %d: energy rose %.3g J above its start",
              sc_i, res.rise);
        count[c][d]++;
        if (rel > worst[c][d] || count[c][d] == 1) worst[c][d] = rel, worst_at[c][d] = sc_i;
        if (rel > GAIN_TYPICAL) above++;
        if (rel > GAIN_SEVERE) severe++;
    }
    for (int c = 0; c < NKINDS; c++)
        for (int d = 0; d < 2; d++)
            printf("# %-12s dt %d ms: %3d scenes, worst gain %.3g (scene %d; bound %.3g)\n",
                   kind_names[c], d ? 5 : 1, count[c][d], worst[c][d],
                   count[c][d] ? worst_at[c][d] : -1, GAIN[c][d]);
    printf("# %d above %.0e, %d above %.0e (open scenes aside); largest joint error %.3g; deepest "
           "end %.3g of a radius\n",
           above, GAIN_TYPICAL, severe, GAIN_SEVERE, worst_err, worst_sink);
    CHECK(severe <= MAX_SEVERE, "%d scenes gained more than %.0e of their energy", severe,
          GAIN_SEVERE);
    CHECK(above <= MAX_TYPICAL, "%d scenes gained more than %.0e of their energy", above,
          GAIN_TYPICAL);
    if (survey) printf("# survey: %d checks failed\n", survey_failures);
}
END_TEST

static Suite *property_joints_suite(void)
{
    Suite *s = suite_create("property_joints");
    TCase *tc = tcase_create("energy");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_random_mechanisms_never_gain_energy);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(property_joints_suite)
