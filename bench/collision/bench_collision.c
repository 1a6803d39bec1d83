/*
 * Collision timings: ns per narrow-phase pair (box–box overlapping, resting, separated; convex
 * hulls; curved shapes against a box), the Muller–Preparata hull against qhull on the same dual
 * points, and sweep-and-prune updates for N = 100 … 10000 boxes moving a little.
 *   bench_collision            all of it
 *   bench_collision CASE N [SIDE]  only N calls of one case (box–box resting, separated or
 *                              overlapping; convex: 30-point hulls; sphere: f = 2 on a box),
 *                              with warm caches: for callgrind; SIDE sets MP's side rule
 *                              (fr_collide_work.side: 1 never the invisible side)
 *   bench_collision sap N      100 sweep-and-prune updates of N boxes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libqhull_r/qhull_ra.h>

#include "fureru/collision.h"

#define PI 3.14159265358979323846

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
static fr_quat rand_q(void)
{
    return fr_q_normalize(fr_q(urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)));
}

typedef struct pairset {
    const fr_shape *a, *b;
    fr_pose pa, pb;
} pairset;

static fr_collide_work W;
static fr_polyhedron_out O;
static volatile double sink;

/* ns per call over n pairs, repeated until ~0.2 s; best of 3 */
static double time_pairs(pairset *p, int n, bool cached, int *hits)
{
    fr_collide_cache *c = calloc((size_t)n, sizeof *c);
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        long calls = 0;
        int h = 0;
        for (int i = 0; i < n; i++) fr_collide_cache_reset(&c[i]);
        if (cached) /* warm the caches */
            for (int i = 0; i < n; i++)
                fr_collide_pair(p[i].a, p[i].pa, p[i].b, p[i].pb, &c[i], &W, &O);
        double t0 = now(), t;
        do {
            for (int i = 0; i < n; i++) {
                if (!cached) fr_collide_cache_reset(&c[i]);
                h += fr_collide_pair(p[i].a, p[i].pa, p[i].b, p[i].pb, &c[i], &W, &O) == 1;
                sink += O.volume;
            }
            calls += n;
            t = now();
        } while (t - t0 < 0.2);
        best = fmin(best, (t - t0) / calls * 1e9);
        *hits = (int)(h * (double)n / calls + 0.5);
    }
    free(c);
    return best;
}

static void report(const char *name, pairset *p, int n)
{
    int h1, h2;
    double cold = time_pairs(p, n, false, &h1), warm = time_pairs(p, n, true, &h2);
    printf("%-44s %8.0f ns cold  %8.0f ns cached   (%d/%d overlap)\n", name, cold, warm, h2, n);
}

/* qhull on the dual points of a pair (the literal Muller–Preparata), ns per hull */
static double time_qhull_dual(pairset *p, int n)
{
    double t0 = now();
    long calls = 0;
    FILE *errf = fopen("/dev/null", "w");
    do {
        for (int i = 0; i < n; i++) {
            if (fr_collide_pair(p[i].a, p[i].pa, p[i].b, p[i].pb, NULL, &W, &O) != 1) continue;
            fr_vec3 c = O.interior;
            int m = 0;
            static coordT pts[3 * 4096];
            const fr_polytope *P[2] = {&p[i].a->poly, &p[i].b->poly};
            fr_pose T[2] = {p[i].pa, p[i].pb};
            for (int s = 0; s < 2; s++)
                for (int f = 0; f < P[s]->nfaces; f++) {
                    fr_vec3 nn = fr_q_rotate(T[s].q, P[s]->normal[f]);
                    double d = P[s]->offset[f] + fr_v3_dot(nn, T[s].p) - fr_v3_dot(nn, c);
                    pts[3 * m] = nn.x / d;
                    pts[3 * m + 1] = nn.y / d;
                    pts[3 * m + 2] = nn.z / d;
                    m++;
                }
            qhT qh_qh, *qh = &qh_qh;
            qh_zero(qh, errf);
            char cmd[] = "qhull";
            qh_new_qhull(qh, 3, m, pts, False, cmd, NULL, errf);
            int a, b;
            qh_freeqhull(qh, !qh_ALL);
            qh_memfreeshort(qh, &a, &b);
            calls++;
        }
    } while (now() - t0 < 0.3);
    fclose(errf);
    return (now() - t0) / (calls ? calls : 1) * 1e9;
}

static fr_shape *hull(int n, double size)
{
    fr_vec3 pts[64];
    for (int i = 0; i < n; i++) {
        fr_vec3 p;
        do p = fr_v3(urand(-1, 1), urand(-1, 1), urand(-1, 1));
        while (fr_v3_norm(p) > 1 || fr_v3_norm(p) < 0.8);
        pts[i] = fr_v3_scale(p, size);
    }
    fr_shape *s;
    fr_shape_create_convex(pts, n, &s);
    return s;
}

enum { NP = 256 };

static void resting_pairs(pairset *p, const fr_shape *blk)
{
    /* 1 m × 1 m × 2 m blocks stacked, 1 mm penetration, small random tilt and offset */
    for (int i = 0; i < NP; i++) {
        p[i].a = p[i].b = blk;
        p[i].pa = (fr_pose){fr_v3(0, 0, 1), fr_q_axis_angle(fr_v3(0, 0, 1), urand(-0.01, 0.01))};
        fr_quat tilt =
            fr_q_axis_angle(fr_v3_normalize(fr_v3(urand(-1, 1), urand(-1, 1), 0)), urand(0, 2e-4));
        p[i].pb = (fr_pose){fr_v3(urand(-0.01, 0.01), urand(-0.01, 0.01), 3 - 1e-3), tilt};
    }
}

static void sap_bench(int n, int fixed_steps)
{
    fr_sap *sap;
    fr_sap_create(&sap, n, 0, NULL);
    fr_aabb *b = malloc(sizeof(fr_aabb) * (size_t)n);
    fr_vec3 *v = malloc(sizeof(fr_vec3) * (size_t)n);
    /* boxes of 1 m in a slab whose area grows with n: ~constant density */
    double side = sqrt((double)n) * 2.0;
    for (int i = 0; i < n; i++) {
        fr_vec3 c = fr_v3(urand(0, side), urand(0, side), urand(0, 4));
        b[i] = (fr_aabb){fr_v3_sub(c, fr_v3(0.5, 0.5, 0.5)), fr_v3_add(c, fr_v3(0.5, 0.5, 0.5))};
        v[i] = fr_v3(urand(-1e-3, 1e-3), urand(-1e-3, 1e-3), urand(-1e-3, 1e-3));
        fr_sap_insert(sap, b[i], 1, 1, false);
    }
    fr_sap_set_axis(sap, fr_sap_choose_axis(sap));
    int maxp = 20 * n, np;
    fr_sap_pair *pairs = malloc(sizeof(fr_sap_pair) * (size_t)maxp);
    fr_sap_update(sap, pairs, maxp, &np);
    int steps = 0;
    long swaps = 0;
    double t0 = now(), tu = 0;
    do {
        for (int i = 0; i < n; i++) {
            b[i].lo = fr_v3_add(b[i].lo, v[i]);
            b[i].hi = fr_v3_add(b[i].hi, v[i]);
            fr_sap_move(sap, i, b[i]);
        }
        double t1 = now();
        fr_sap_update(sap, pairs, maxp, &np);
        tu += now() - t1;
        swaps += fr_sap_last_swaps(sap);
        steps++;
    } while (fixed_steps ? steps < fixed_steps : now() - t0 < 0.3);
    printf("SAP N = %5d: %9.1f us per update (%6.1f ns/object), %6d pairs, %6.1f swaps/update\n", n,
           tu / steps * 1e6, tu / steps / n * 1e9, np, (double)swaps / steps);
    free(pairs);
    free(b);
    free(v);
    fr_sap_destroy(sap);
}

int main(int argc, char **argv)
{
    fr_collide_work_init(&W, 1400, NULL);
    fr_polyhedron_out_init(&O, 1400, NULL);
    static pairset p[NP];
    fr_shape *blk;
    fr_shape_create_box(fr_v3(0.5, 0.5, 1), &blk);
    if (argc > 2 && !strcmp(argv[1], "sap")) {
        sap_bench(atoi(argv[2]), 100);
        return 0;
    }
    if (argc > 2) {
        int n = atoi(argv[2]);
        if (argc > 3) W.side = atoi(argv[3]); /* MP's side (fr_collide_work.side) */
        resting_pairs(p, blk);
        fr_shape *hl[8], *sph;
        for (int k = 0; k < 8; k++) hl[k] = hull(30, 0.5);
        fr_shape_create_sphere(0.3, 2, &sph);
        for (int i = 0; i < NP; i++) {
            if (!strcmp(argv[1], "convex")) {
                p[i].a = hl[i % 8];
                p[i].b = hl[(i / 8) % 8];
                p[i].pa = (fr_pose){fr_v3(0, 0, 0), rand_q()};
                p[i].pb = (fr_pose){fr_v3(urand(-0.5, 0.5), urand(-0.5, 0.5), urand(-0.5, 0.5)),
                                    rand_q()};
            }
            if (!strcmp(argv[1], "sphere")) {
                p[i].a = sph;
                p[i].pa = (fr_pose){
                    fr_v3(urand(-0.3, 0.3), urand(-0.3, 0.3), 2 + 0.3 - urand(0.001, 0.05)),
                    rand_q()};
                p[i].pb = (fr_pose){fr_v3(0, 0, 1), fr_q_identity()};
            }
            if (!strcmp(argv[1], "separated")) p[i].pb.p.z += 0.011;
            if (!strcmp(argv[1], "overlapping"))
                p[i].pb = (fr_pose){fr_v3(urand(-0.6, 0.6), urand(-0.6, 0.6), 1 + urand(-0.6, 0.6)),
                                    rand_q()};
        }
        static fr_collide_cache c[NP];
        int h = 0;
        for (int k = 0; k < n; k++)
            h += fr_collide_pair(p[k % NP].a, p[k % NP].pa, p[k % NP].b, p[k % NP].pb, &c[k % NP],
                                 &W, &O);
        printf("%d calls, %d overlaps, %ld planes inserted from the invisible side\n", n, h,
               W.inverted);
        return 0;
    }
    printf("fureru collision benchmark (ns per pair; cold = fresh cache, cached = warm per-pair "
           "cache)\n");
    resting_pairs(p, blk);
    report("box-box resting (1 mm, tilt <= 2e-4 rad)", p, NP);
    for (int i = 0; i < NP; i++) {
        p[i].a = p[i].b = blk;
        p[i].pa = (fr_pose){fr_v3(0, 0, 0), rand_q()};
        p[i].pb = (fr_pose){fr_v3(urand(-0.6, 0.6), urand(-0.6, 0.6), urand(-0.6, 0.6)), rand_q()};
    }
    report("box-box overlapping (random poses)", p, NP);
    for (int i = 0; i < NP; i++) {
        p[i].pa = (fr_pose){fr_v3(0, 0, 1), fr_q_identity()};
        p[i].pb = (fr_pose){fr_v3(urand(-0.1, 0.1), urand(-0.1, 0.1), 3.01),
                            fr_q_axis_angle(fr_v3(0, 0, 1), urand(-1, 1))};
    }
    report("box-box separated (1 cm gap)", p, NP);
    for (int nv = 20; nv <= 40; nv += 20) {
        fr_shape *h[8];
        for (int k = 0; k < 8; k++) h[k] = hull(nv, 0.5);
        for (int i = 0; i < NP; i++) {
            p[i].a = h[i % 8];
            p[i].b = h[(i / 8) % 8];
            p[i].pa = (fr_pose){fr_v3(0, 0, 0), rand_q()};
            p[i].pb =
                (fr_pose){fr_v3(urand(-0.5, 0.5), urand(-0.5, 0.5), urand(-0.5, 0.5)), rand_q()};
        }
        char name[64];
        snprintf(name, sizeof name, "convex-convex %d-point hulls (%d-%d faces)", nv,
                 h[0]->poly.nfaces, h[1]->poly.nfaces);
        report(name, p, NP);
        printf("  qhull on the same dual points: %8.0f ns per hull (ours above includes GJK and "
               "output)\n",
               time_qhull_dual(p, NP));
    }
    resting_pairs(p, blk);
    printf("  box-box resting, qhull on the dual points: %8.0f ns per hull\n",
           time_qhull_dual(p, NP));
    const char *names[3] = {"sphere", "capsule", "cylinder"};
    for (int t = 0; t < 3; t++) {
        fr_shape *s;
        if (t == 0) fr_shape_create_sphere(0.3, 0, &s);
        if (t == 1) fr_shape_create_capsule(0.2, 0.3, 0, &s);
        if (t == 2) fr_shape_create_cylinder(0.3, 0.3, 0, &s);
        for (int i = 0; i < NP; i++) {
            p[i].a = s;
            p[i].b = blk;
            p[i].pa = (fr_pose){
                fr_v3(urand(-0.3, 0.3), urand(-0.3, 0.3), 2 + 0.3 - urand(0.001, 0.05)), rand_q()};
            p[i].pb = (fr_pose){fr_v3(0, 0, 1), fr_q_identity()};
        }
        char name[64];
        snprintf(name, sizeof name, "%s (%d faces) resting on a box", names[t], s->poly.nfaces);
        report(name, p, NP);
    }
    for (int f = 1; f <= 4; f++) {
        fr_shape *s;
        fr_shape_create_sphere(0.3, f, &s);
        for (int i = 0; i < NP; i++) {
            p[i].a = s;
            p[i].b = blk;
            p[i].pa = (fr_pose){
                fr_v3(urand(-0.3, 0.3), urand(-0.3, 0.3), 2 + 0.3 - urand(0.001, 0.05)), rand_q()};
            p[i].pb = (fr_pose){fr_v3(0, 0, 1), fr_q_identity()};
        }
        char name[64];
        snprintf(name, sizeof name, "  sphere f=%d (%d faces) on a box", f, s->poly.nfaces);
        report(name, p, NP);
    }
    for (int n = 100; n <= 10000; n *= 10) sap_bench(n, 0);
    sap_bench(3000, 0);
    printf("MP horizon repairs during the run: %ld\n", W.fixups);
    return 0;
}
