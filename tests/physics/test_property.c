/*
 * Energy audit over random scenes (issue 8): boxes and convex hulls dropped, tumbled, slid and
 * stacked on a static ground, every one placed exactly touching or in the air as a user would
 * place it (no pre-settling), μ_s in [0, 1.5] and μ_k <= μ_s, masses 0.01–100 kg, sizes
 * 1 cm–2 m, speeds up to 5 m/s (spins up to 5 m/s at the body's radius), dt 1 ms or 5 ms.
 * Each scene runs 1 s; after every step the world's energy balance (fr_world_energy_get:
 * kinetic + gravity + contact and spring elastic energy, less the work done on the world) must
 * not rise by more than a stated share of the scene's energy scale, nothing may go NaN or fail,
 * and no body may end up inside the ground.
 *
 * The scene's energy scale E is its initial mechanical energy measured from the ground:
 * Σ m·(g·(z + R) + ½·v² + ½·(ω·R)²) (R the body's bounding radius): no scene can hold more.
 *
 * Measured on 2026-11-29 (session 39), with a bond described anew capped at what it held
 * (docs/contact.md §3) and the late landings' hold taking the pressure's couples (§5): boxes only
 * 9.91e-6; any scene 0.00827 (scene 605; 0.0285, scene 850, before); 3 scenes above 1e-3 and
 * none above 1e-2 (3 above 1e-3 before); piles 0.00114, 1 above 1e-3 (0.0015, 2, before).
 *
 * Stated tolerances (docs/contact.md §8). They are measured, not derived: the gains that remain
 * come from the contact model being rebuilt from the geometry at each step's start (the sliver
 * patch of a sharp hull vertex or of crossing edges, a light body squeezed under one 100 times
 * heavier, a hull tumbling at tens of rad/s), an error of the method that has no closed form. On
 * this generator, and over κ = 95…102 (the same scenes, other trajectories):
 * - a scene of boxes only: its largest one-step gain <= GAIN_BOXES·E (measured worst 2.8e-5,
 *   2.7e-5–1.2e-4 over the κ with the geometry's tangent and the stance cap's floor at δ/4000,
 *   2026-11-28: κ 97 4.4e-5, κ 102 1.18e-4; 2.5e-5–3.5e-5 without the tangent; 3.6e-5–6.4e-5
 *   on principal axes, before 2026-12-01;
 *   2.7e-5–2.9e-5 with the 4-point quadrature of before 2026-11-30,
 *   docs/contact.md §5; 1.7e-4 while its points stayed near the edges of tilted patches; 7.4e-3
 *   before the contact band stopped at the thinner body's width; 6.5e-5 while the stance cap,
 *   fr_contact_stance_depth, was taken by moving pairs too);
 * - any scene: <= GAIN_ALL·E (measured worst 0.0031, scene 30, with the geometry's tangent of
 *   docs/contact.md §5 and the floor at δ/4000; 0.0025–0.031 over the κ; 0.0071 with the floor
 *   at δ/40; 0.0025–0.025 over the κ without the tangent, 0.002–0.040 on
 *   principal axes, before 2026-12-01; 0.012–0.12 with the
 *   4-point quadrature, the worst scene 149: three hulls and a box collapsing at 1 ms, whose
 *   landings are found at a step's start millimetres deep). This is the extreme of a chaotic
 *   set: the bound was 0.1, which the code of 2026-11-27 exceeded at κ = 101 (0.117; 0.047–0.117
 *   over the κ), so it held by the draw of the trajectories, not with a margin; it is set above
 *   the worst over the κ, and the two counts below keep the tail honest;
 * - at most MAX_SEVERE scenes gain more than GAIN_SEVERE·E in some step (measured 0; 0–1 over
 *   the κ; 1–5 before the band's points took their own depths, docs/contact.md §5);
 * - at most MAX_SHARE of the scenes gain more than GAIN_TYPICAL·E in some step (measured 0.5 %,
 * 0.4–0.9 % over the κ; 0.6 % with the floor at δ/40; 0.5 % without the geometry's tangent; 0.5–1.0
 * % over the κ, all with hulls; 0.5–1.3 % on principal axes; 0.5–1.3 % with the 4-point
 * quadrature, 1.7–2.1 % on 2026-11-27). Bodies end inside the ground by at most SINK_MAX of their
 * radius, each body's lowest point taken at its highest over the last 0.1 s (measured 0.011;
 * 0.008–0.096 over the κ; 0.0075–0.082 on principal axes). A contact or solver bug that adds energy
 * (a momentum correction applied to an unconverged step, friction that pushes, a model that misses
 * a face landing within the step) breaks these by orders of magnitude; so does a NaN.
 */
#include <stdlib.h>

#include "frtest.h"
#include "ground.h"
#include "fureru/world.h"

#define NSCENES      1000
#define NPILES       40
#define GAIN_ALL     0.25
#define GAIN_SEVERE  1e-2
#define MAX_SEVERE   4
#define GAIN_BOXES   2e-4
#define GAIN_TYPICAL 1e-3
#define MAX_SHARE    0.015
#define SINK_MAX     0.1 /* of the body's radius, over the last 0.1 s */

static double log_uniform(frtest_rng *r, double lo, double hi)
{
    return exp(frtest_uniform(r, log(lo), log(hi)));
}

typedef struct scene_result {
    double worst_gain; /* J, the largest one-step rise of energy − work */
    double rise;       /* J, the largest rise of energy − work above its start */
    double scale;      /* J, E above */
    double sink;       /* the deepest a body's lowest point stays below the ground over the
                          last 0.1 s, / R */
    int err;           /* fr_world_step's error, or 1 for a NaN */
    int hulls;         /* bodies that are hulls (the others are boxes) */
    long advanced;     /* pair models advanced from the last step's (the work kept between steps) */
    long chord;        /* Newton iterations on a kept factor */
} scene_result;

enum kind { DROP, TUMBLE, SLIDE, STACK };

/* The i-th random body (a box, or a hull of 12 random points in a box) of the scene's kind,
 * 3·i m along x from x0 (stacked: within ±2 mm of x0, on `top`, which it raises), placed
 * touching the ground or the stack, or dropped from up to 0.5 m, slid or tumbled; adds its
 * energy to out->scale. */
static void add_body(fr_world *w, frtest_rng *r, enum kind kind, double x0, int i, double *top,
                     double g, fr_shape **shape, fr_vec3 *com, fr_body_id *id, scene_result *out)
{
    fr_vec3 half =
        fr_v3(log_uniform(r, 0.005, 1), log_uniform(r, 0.005, 1), log_uniform(r, 0.005, 1));
    fr_shape *s = NULL;
    if (frtest_next(r) % 3 == 0) { /* a hull of 12 random points in the box */
        fr_vec3 pts[12];
        for (int k = 0; k < 12; k++)
            pts[k] = fr_v3(frtest_uniform(r, -1, 1) * half.x, frtest_uniform(r, -1, 1) * half.y,
                           frtest_uniform(r, -1, 1) * half.z);
        if (fr_shape_create_convex(pts, 12, &s) != FR_OK) s = NULL;
        out->hulls += s != NULL;
    }
    if (!s) ck_assert_int_eq(fr_shape_create_box(half, &s), FR_OK);
    *shape = s;
    double m = log_uniform(r, 0.01, 100);
    double vol;
    fr_mat3 I;
    fr_shape_mass(s, 1.0, &vol, com, &I);
    fr_body_def bd = fr_body_def_default();
    bd.mass = m;
    bd.inertia = fr_m3_scale(I, m / vol);
    const double R = s->bound_radius;
    fr_quat q = fr_q_identity();
    if (kind == DROP || kind == TUMBLE)
        q = fr_q_normalize(fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                                frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
    /* the shape's lowest and highest points at orientation q, relative to its centre of mass */
    fr_vec3 lo =
        fr_q_rotate(q, fr_v3_sub(fr_shape_support(s, fr_q_unrotate(q, fr_v3(0, 0, -1))), *com));
    fr_vec3 hi =
        fr_q_rotate(q, fr_v3_sub(fr_shape_support(s, fr_q_unrotate(q, fr_v3(0, 0, 1))), *com));
    double x = x0 + (kind == STACK ? frtest_uniform(r, -0.002, 0.002) : 3.0 * i);
    double z = (kind == STACK ? *top : 0.0) - lo.z; /* touching */
    if (kind == DROP || kind == TUMBLE) z += frtest_uniform(r, 0.0, 0.5);
    bd.pose = (fr_pose){fr_v3(x, 0, z), q};
    if (kind == SLIDE) bd.vel = fr_v3(frtest_uniform(r, -5, 5), frtest_uniform(r, -5, 5), 0);
    if (kind == TUMBLE) {
        bd.vel =
            fr_v3(frtest_uniform(r, -5, 5), frtest_uniform(r, -5, 5), frtest_uniform(r, -5, 0));
        fr_vec3 axis = fr_v3_normalize(
            fr_v3(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
        bd.angvel = fr_v3_scale(axis, frtest_uniform(r, 0.0, 5.0 / R));
    }
    if (kind == STACK) *top = z + hi.z;
    ck_assert_int_eq(fr_world_add_body(w, &bd, id), FR_OK);
    fr_shape_def sd = fr_shape_def_default(s);
    sd.local.p = fr_v3_neg(*com); /* the body's origin is its centre of mass */
    ck_assert_int_eq(fr_body_add_shape(w, *id, &sd), FR_OK);
    out->scale +=
        m * (g * (z + R) + 0.5 * fr_v3_norm2(bd.vel) + 0.5 * fr_v3_norm2(bd.angvel) * R * R);
}

#define PILE_MAX 40 /* bodies in a pile scene */

/* One random scene, built and run; returns what the audit needs. A pile is 6–8 such scenes of
 * 3–5 bodies side by side (18–40 bodies: the implicit solve keeps its factors between steps,
 * docs/world.md, "Kept factors"). */
static scene_result run_scene(uint64_t seed, bool pile)
{
    frtest_rng r = {seed};
    scene_result out = {0};
    fr_world_def def = fr_world_def_default();
    def.dt = (frtest_next(&r) & 1) ? 0.001 : 0.005;
    def.max_bodies = pile ? PILE_MAX + 2 : 8;
    def.max_shapes = pile ? PILE_MAX + 2 : 8;
    def.max_contacts = pile ? 512 : 64;
    fr_world *w = NULL;
    ck_assert_int_eq(fr_world_create(&def, &w), FR_OK);
    const double g = fr_v3_norm(def.gravity);
    double mus = frtest_uniform(&r, 0.0, 1.5);
    fr_contact_material mat = {0.0, 0.0, mus, mus * frtest_uniform(&r, 0.3, 1.0)};
    ck_assert_int_eq(fr_world_set_material(w, 0, &mat), FR_OK);

    /* the ground: a static slab whose top is z = 0 */
    add_ground_slab(w, pile ? 80 : 50, 50);

    fr_shape *shapes[PILE_MAX] = {NULL};
    fr_vec3 coms[PILE_MAX];
    fr_body_id ids[PILE_MAX];
    int nb = 0;
    const int ncols = pile ? 6 + (int)(frtest_next(&r) % 3) : 1;
    for (int c = 0; c < ncols; c++) {
        const int nc = pile ? 3 + (int)(frtest_next(&r) % 3) : 1 + (int)(frtest_next(&r) % 4);
        const enum kind kind = (enum kind)(frtest_next(&r) % 4);
        double top = 0.0; /* of the stack so far, m */
        for (int i = 0; i < nc; i++, nb++)
            add_body(w, &r, kind, pile ? -60.0 + 15.0 * c : 0.0, i, &top, g, &shapes[nb], &coms[nb],
                     &ids[nb], &out);
    }

    const long n = (long)(1.0 / def.dt + 0.5);
    fr_world_energy a;
    fr_world_energy_get(w, &a);
    const double e0 = a.total - a.work;
    /* each body's lowest point, its highest over the last 0.1 s (m): a body that ends inside
     * the ground stays there, one caught in an impact at the last step does not (a 1.9 cm box
     * spinning at 92 rad/s, 26° a step at 5 ms, was 3.3 mm deep at t = 1 s and 0.4 mm above the
     * ground a step later) */
    double low_best[PILE_MAX];
    for (int i = 0; i < nb; i++) low_best[i] = -INFINITY;
    const long tail = (long)(0.1 / def.dt + 0.5);
    for (long k = 0; k < n; k++) {
        int err = fr_world_step(w);
        if (err) {
            out.err = err;
            break;
        }
        fr_world_energy b;
        fr_world_energy_get(w, &b);
        if (!isfinite(b.total) || !isfinite(b.work)) {
            out.err = 1;
            break;
        }
        out.worst_gain = fmax(out.worst_gain, (b.total - b.work) - (a.total - a.work));
        for (int i = 0; i < nb && k >= n - tail; i++) {
            fr_pose p;
            fr_body_get_pose(w, ids[i], &p);
            fr_vec3 lo = fr_q_rotate(
                p.q, fr_v3_sub(fr_shape_support(shapes[i], fr_q_unrotate(p.q, fr_v3(0, 0, -1))),
                               coms[i]));
            low_best[i] = fmax(low_best[i], p.p.z + lo.z);
        }
        out.rise = fmax(out.rise, (b.total - b.work) - e0);
        a = b;
    }
    for (int i = 0; i < nb && !out.err; i++)
        out.sink = fmax(out.sink, -low_best[i] / shapes[i]->bound_radius);
    fr_world_solver_stats st;
    fr_world_solver_stats_get(w, &st);
    out.advanced = st.advanced;
    out.chord = st.chord_steps;
    fr_world_destroy(w); /* (and the shapes: the world owns them) */
    return out;
}

START_TEST(test_random_scenes_never_gain_energy)
{
    int above = 0, severe = 0;
    double worst = 0.0, worst_sink = 0.0, worst_boxes = 0.0;
    int worst_at = -1, with_advanced = 0;
    long advanced = 0, chord = 0;
    for (int sc = 0; sc < NSCENES; sc++) {
        scene_result res = run_scene(0x5eed0000ull + (uint64_t)sc, false);
        ck_assert_msg(res.err == 0, "scene %d: step failed (%d)", sc, res.err);
        double rel = res.worst_gain / res.scale;
        ck_assert_msg(rel <= (res.hulls ? GAIN_ALL : GAIN_BOXES),
                      "scene %d (%d hulls): one step gained %.3g J = %.3g of its energy", sc,
                      res.hulls, res.worst_gain, rel);
        ck_assert_msg(res.sink <= SINK_MAX,
                      "scene %d: a body ends %.3g of its radius in the ground", sc, res.sink);
        /* many small gains must not add up either */
        ck_assert_msg(res.rise <= (res.hulls ? GAIN_ALL : GAIN_BOXES) * res.scale,
                      "scene %d: energy rose %.3g J above its start", sc, res.rise);
        if (rel > GAIN_TYPICAL) above++;
        if (rel > GAIN_SEVERE) severe++;
        if (rel > worst) worst = rel, worst_at = sc;
        if (!res.hulls) worst_boxes = fmax(worst_boxes, rel);
        worst_sink = fmax(worst_sink, res.sink);
        advanced += res.advanced, chord += res.chord;
        if (res.advanced > 0) with_advanced++;
    }
    printf(
        "# %d scenes: worst one-step gain %.3g of the scene's energy (scene %d; boxes only %.3g);"
        " %d above %.0e, %d above %.0e; deepest end %.3g of a radius\n",
        NSCENES, worst, worst_at, worst_boxes, above, GAIN_TYPICAL, severe, GAIN_SEVERE,
        worst_sink);
    printf("# the kept work under audit: %ld pair models advanced in %d scenes, %ld chord steps\n",
           advanced, with_advanced, chord);
    /* the audit covers the work kept between steps (docs/world.md), not only fresh models */
    ck_assert_int_gt(with_advanced, NSCENES / 20);
    ck_assert_msg(severe <= MAX_SEVERE, "%d of %d scenes gained more than %.0e of their energy",
                  severe, NSCENES, GAIN_SEVERE);
    ck_assert_msg(above <= MAX_SHARE * NSCENES,
                  "%d of %d scenes gained more than %.0e of their energy", above, NSCENES,
                  GAIN_TYPICAL);
}
END_TEST

/* The same audit over piles of 18–40 bodies, where the solve keeps its factors between steps
 * (chord steps, docs/world.md, "Kept factors"), which the scenes above, of at most 4 bodies, never
 * do: the same bounds per scene (measured worst 0.0012 of a pile's energy, 1 pile of 40 above
 * 1e-3, deepest end 9.4e-4 of a radius; 26654 chord steps). A chord step's solution is the fresh
 * one's to the solve's tolerance (tests/physics/test_reuse.c compares the two); this checks that
 * the piles' energy, with the kept factors and models at work, is audited as the small scenes'. */
START_TEST(test_random_piles_never_gain_energy)
{
    double worst = 0.0, worst_boxes = 0.0, worst_sink = 0.0;
    int worst_at = -1, above = 0;
    long chord = 0;
    for (int sc = 0; sc < NPILES; sc++) {
        scene_result res = run_scene(0x9113000ull + (uint64_t)sc, true);
        ck_assert_msg(res.err == 0, "pile %d: step failed (%d)", sc, res.err);
        const double rel = res.worst_gain / res.scale, bound = res.hulls ? GAIN_ALL : GAIN_BOXES;
        ck_assert_msg(rel <= bound,
                      "pile %d (%d hulls): one step gained %.3g J = %.3g of its energy", sc,
                      res.hulls, res.worst_gain, rel);
        ck_assert_msg(res.rise <= bound * res.scale, "pile %d: energy rose %.3g J above its start",
                      sc, res.rise);
        ck_assert_msg(res.sink <= SINK_MAX, "pile %d: a body ends %.3g of its radius in the ground",
                      sc, res.sink);
        if (rel > worst) worst = rel, worst_at = sc;
        if (!res.hulls) worst_boxes = fmax(worst_boxes, rel);
        if (rel > GAIN_TYPICAL) above++;
        worst_sink = fmax(worst_sink, res.sink);
        chord += res.chord;
    }
    printf("# %d piles: worst one-step gain %.3g of the scene's energy (pile %d; boxes only %.3g); "
           "%d above %.0e; deepest end %.3g of a radius; %ld chord steps\n",
           NPILES, worst, worst_at, worst_boxes, above, GAIN_TYPICAL, worst_sink, chord);
    ck_assert_int_gt(chord, 0); /* the kept factors were at work */
}
END_TEST

static Suite *property_suite(void)
{
    Suite *s = suite_create("property");
    TCase *tc = tcase_create("energy");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_random_scenes_never_gain_energy);
    tcase_add_test(tc, test_random_piles_never_gain_energy);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(property_suite)
