/*
 * Contact timings: ns per fr_contact_eval (normal force, friction, linearisation) for sets of
 * pre-computed intersection polyhedra, and for fr_collide_pair + fr_contact_eval together.
 * Each set holds NPAIR pairs with their own persistent state; best of 3 runs of ~0.2 s.
 *   bench_contact              all sets, wall clock
 *   bench_contact only K N     N evaluations of set K (0..4) and nothing else (for callgrind:
 *                              instructions per evaluation = Ir of fr_contact_eval / N)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fureru/collision.h"
#include "fureru/contact.h"

#define NPAIR 64

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static double urand(double lo, double hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

typedef struct pairset {
    const fr_shape *a, *b;
    fr_pose pa[NPAIR], pb[NPAIR];
    fr_contact_body ba[NPAIR], bb[NPAIR];
    fr_polyhedron_out poly[NPAIR];
    fr_collide_cache cache[NPAIR];
    fr_contact_state st[NPAIR];
} pairset;

static volatile double sink;

/* A set: shape a placed with its lowest point `depth` into shape b (a box, top face at z = 0),
 * tilted by up to `tilt` rad, moving slowly. */
static void make_set(pairset *s, const fr_shape *a, const fr_shape *b, double tilt, double depth,
                     fr_collide_work *w, int max_faces)
{
    s->a = a, s->b = b;
    for (int i = 0; i < NPAIR; i++) {
        fr_vec3 ax = fr_v3_normalize(fr_v3(urand(-1, 1), urand(-1, 1), 0));
        fr_quat q = fr_q_mul(fr_q_axis_angle(ax, urand(0, tilt)),
                             fr_q_axis_angle(fr_v3(0, 0, 1), urand(0, 6.283)));
        double lo = fr_v3_dot(
            fr_q_rotate(q, fr_shape_support(a, fr_q_unrotate(q, fr_v3(0, 0, -1)))), fr_v3(0, 0, 1));
        s->pa[i] = (fr_pose){fr_v3(urand(-0.1, 0.1), urand(-0.1, 0.1), -lo - depth), q};
        s->pb[i] = (fr_pose){fr_v3(0, 0, -b->half.z), fr_q_identity()};
        s->ba[i] = (fr_contact_body){s->pa[i], fr_v3(urand(-0.01, 0.01), 0, 0), fr_v3(0, 0, 0.01)};
        s->bb[i] = (fr_contact_body){s->pb[i], fr_v3_zero(), fr_v3_zero()};
        fr_polyhedron_out_init(&s->poly[i], max_faces, NULL);
        fr_collide_cache_reset(&s->cache[i]);
        fr_collide_pair(a, s->pa[i], b, s->pb[i], &s->cache[i], w, &s->poly[i]);
        fr_contact_state_reset(&s->st[i]);
    }
}

static void report(const char *name, pairset *s, const fr_contact_params *p, fr_collide_work *w,
                   fr_polyhedron_out *scratch)
{
    double nv = 0, nf = 0;
    int vmin = 1 << 30, vmax = 0;
    for (int i = 0; i < NPAIR; i++) {
        nv += s->poly[i].nverts, nf += s->poly[i].nfaces;
        if (s->poly[i].nverts < vmin) vmin = s->poly[i].nverts;
        if (s->poly[i].nverts > vmax) vmax = s->poly[i].nverts;
    }
    fr_contact_result r;
    double best = INFINITY, best_all = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        long calls = 0;
        double t0 = now(), t;
        do {
            for (int i = 0; i < NPAIR; i++) {
                fr_contact_eval(p, &s->poly[i], &s->ba[i], &s->bb[i], &s->st[i], &r);
                sink += r.normal_force;
            }
            calls += NPAIR;
        } while ((t = now()) - t0 < 0.2);
        best = fmin(best, (t - t0) / calls * 1e9);
        calls = 0;
        t0 = now();
        do {
            for (int i = 0; i < NPAIR; i++) {
                fr_collide_pair(s->a, s->pa[i], s->b, s->pb[i], &s->cache[i], w, scratch);
                fr_contact_eval(p, scratch, &s->ba[i], &s->bb[i], &s->st[i], &r);
                sink += r.normal_force;
            }
            calls += NPAIR;
        } while ((t = now()) - t0 < 0.2);
        best_all = fmin(best_all, (t - t0) / calls * 1e9);
    }
    printf("%-28s verts %4.1f (%d-%d) faces %4.1f: contact %6.0f ns/pair, collide+contact %6.0f "
           "ns/pair\n",
           name, nv / NPAIR, vmin, vmax, nf / NPAIR, best, best_all);
}

int main(int argc, char **argv)
{
    int only = argc >= 4 && !strcmp(argv[1], "only") ? atoi(argv[2]) : -1;
    long count = only >= 0 ? atol(argv[3]) : 0;
    fr_shape *box = NULL, *ground = NULL, *sphere = NULL;
    fr_shape_create_box(fr_v3(0.5, 0.5, 1.0), &box); /* the paper's 1 × 1 × 2 block */
    fr_shape_create_box(fr_v3(5, 5, 0.5), &ground);
    fr_shape_create_sphere(0.3, 0, &sphere);
    const fr_shape *all[3] = {box, ground, sphere};
    int mf = fr_shapes_max_faces(all, 3);
    fr_collide_work w;
    fr_polyhedron_out scratch;
    if (fr_collide_work_init(&w, mf, NULL) || fr_polyhedron_out_init(&scratch, mf, NULL)) return 1;
    static pairset s;
    fr_contact_params p = fr_contact_params_scaled(1.0, 0.001, 0, -1, 0.6, 0.4);
    const char *names[5] = {"block flat on ground box", "block stacked on block",
                            "block tilted (edge)", "block tilted (corner)",
                            "sphere (f=3) on ground box"};
    const fr_shape *as[5] = {box, box, box, box, sphere},
                   *bs[5] = {ground, box, ground, ground, ground};
    const double tilt[5] = {0.0, 0.01, 0.05, 0.6, 3.0}, depth[5] = {1e-3, 1e-2, 2e-3, 5e-3, 5e-3};
    if (only >= 0 && only < 5) {
        make_set(&s, as[only], bs[only], tilt[only], depth[only], &w, mf);
        fr_contact_result r;
        for (long i = 0; i < count; i++) {
            int k = (int)(i % NPAIR);
            fr_contact_eval(&p, &s.poly[k], &s.ba[k], &s.bb[k], &s.st[k], &r);
            sink += r.normal_force;
        }
        return 0;
    }
    printf("fr_contact_eval, %d pairs per set, best of 3\n", NPAIR);
    for (int k = 0; k < 5; k++) {
        make_set(&s, as[k], bs[k], tilt[k], depth[k], &w, mf);
        report(names[k], &s, &p, &w, &scratch);
    }
    printf("(checksum %g)\n", sink);
    return 0;
}
