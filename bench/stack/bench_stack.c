/*
 * Block stacks, fureru vs ODE 0.16 side by side in one process (seed paper Fig. 3–4, widened):
 * a column, a pyramid or a wall of N blocks 1 m × 1 m × 2 m, 1 kg, on a static ground; time per
 * step of each engine (warm-up excluded, every step timed, mean and median; the median over the
 * repetitions is reported) and whether the stack still stands at the end of the run.
 *
 *   bench_stack [options]                  the table on stdout, one CSV row per case with --csv
 *   bench_stack --callgrind ENGINE [...]   column of --n blocks stepped --steps times in ENGINE
 *                                          only; the stepping is inside bench_measured_steps()
 *                                          (for valgrind --tool=callgrind --toggle-collect=...)
 * Options are listed by --help; docs/benchmarks.md explains the settings and the criteria.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define MAXLIST 64

enum scene_kind { SCENE_COLUMN, SCENE_PYRAMID, SCENE_WALL, NSCENES };
static const char *const scene_names[NSCENES] = {"column", "pyramid", "wall"};

typedef struct options {
    bench_settings s;
    int scenes[NSCENES], nscenes;
    double ns[MAXLIST], dts[MAXLIST];
    int nn, ndt;
    int engines[BENCH_NENGINES], nengines;
    double warmup;     /* s simulated, untimed */
    double seconds;    /* s simulated, timed */
    int reps;          /* repetitions (the median is reported) */
    double budget;     /* s of wall time per run before it is cut short */
    double jitter;     /* m, sideways offsets of the blocks (deterministic, same in every engine) */
    int step_max_n;    /* dWorldStep is skipped above this many blocks */
    const char *csv;   /* output path or NULL */
    int callgrind;     /* engine kind, or −1 */
    int cg_steps;      /* measured steps in --callgrind mode */
    int cg_warm_steps; /* untimed steps before them */
} options;

/* ---------------------------------------------------------------- scenes */

typedef struct block {
    fr_pose pose; /* initial */
    fr_vec3 size; /* m */
} block;

/* Deterministic uniform number in [−1, 1) from (i, k) (splitmix64). */
static double jitter_unit(int i, int k)
{
    uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull + (uint64_t)k * 0xbf58476d1ce4e5b9ull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 4503599627370496.0 - 1.0;
}

static const fr_vec3 BLOCK = {1.0, 1.0, 2.0}; /* m: x, y, height */
static const double BLOCK_MASS = 1.0;         /* kg */
static const double GAP = 0.1;                /* m between neighbours in a pyramid or wall row */
static const double REST_WINDOW = 0.5;        /* s at the end of a run where speeds are watched */
static const double REST_SPEED = 0.05;        /* m/s: a stack faster than this is not at rest */

/* Pose of block i of an n-block scene, its size and mass. */
static fr_pose scene_block(int scene, int n, int i, fr_vec3 *size, double *mass)
{
    fr_pose p = fr_pose_identity();
    *size = BLOCK;
    *mass = BLOCK_MASS;
    if (scene == SCENE_COLUMN) {
        p.p = fr_v3(0, 0, 0.5 * BLOCK.z + BLOCK.z * i);
    } else if (scene == SCENE_PYRAMID) {
        int base = 1;
        while (base * (base + 1) / 2 < n) base++;
        int row = 0, k = i;
        while (k >= base - row) {
            k -= base - row;
            row++;
        }
        double pitch = BLOCK.x + GAP;
        p.p = fr_v3(pitch * (k + 0.5 * row - 0.5 * (base - 1)), 0, 0.5 * BLOCK.z + BLOCK.z * row);
    } else {
        /* running bond of bricks 2 m long (x), 1 m deep, 1 m high (the blocks on their side);
         * odd rows are shifted by half a brick and closed by a half brick (1 m, 0.5 kg) at each
         * end, so that no brick overhangs its support */
        *size = fr_v3(BLOCK.z, BLOCK.y, BLOCK.x);
        int w = (int)ceil(sqrt((double)n));
        if (w < 2) w = 2;
        int row = 0, k = i;
        while (k >= w + row % 2) {
            k -= w + row % 2;
            row++;
        }
        const double pitch = size->x + GAP, z = 0.5 * size->z + size->z * row;
        if (row % 2 == 0) {
            p.p = fr_v3(pitch * (k - 0.5 * (w - 1)), 0, z);
        } else if (k == 0 || k == w) {
            double end = 0.5 * pitch * (w - 2) + 0.5 * size->x + GAP + 0.25 * size->x;
            size->x *= 0.5;
            *mass *= 0.5;
            p.p = fr_v3(k == 0 ? -end : end, 0, z);
        } else {
            p.p = fr_v3(pitch * (k - 1 - 0.5 * (w - 2)), 0, z);
        }
    }
    return p;
}

static double scene_extent(int scene, int n)
{
    double r = 0;
    for (int i = 0; i < n; i++) {
        fr_vec3 size;
        double m;
        fr_pose p = scene_block(scene, n, i, &size, &m);
        r = fmax(r, fabs(p.p.x) + size.x);
    }
    return r;
}

/* The scene in one engine; every block is moved sideways by up to ±jitter (m, the same offsets
 * in every engine) so that a perfectly aligned stack cannot stand by symmetry alone. */
static bench_engine *scene_build(int kind, const bench_settings *s0, int scene, int n,
                                 double jitter, block *init)
{
    bench_settings s = *s0;
    s.max_bodies = n;
    bench_engine *e = bench_engine_create(kind, &s);
    if (!e) return NULL;
    if (bench_engine_add_ground(e, scene_extent(scene, n) + 20.0) != 0) goto fail;
    for (int i = 0; i < n; i++) {
        double m;
        init[i].pose = scene_block(scene, n, i, &init[i].size, &m);
        init[i].pose.p.x += jitter * jitter_unit(i, 0);
        init[i].pose.p.y += jitter * jitter_unit(i, 1);
        if (bench_engine_add_box(e, init[i].size, m, init[i].pose) != i) goto fail;
    }
    return e;
fail:
    bench_engine_destroy(e);
    return NULL;
}

/* ---------------------------------------------------------------- one run */

typedef struct run_result {
    double mean, median; /* s per step over the timed steps (wall clock) */
    double cpu_median;   /* s per step, the thread's CPU clock (less swayed by a shared machine) */
    int steps;           /* timed steps done */
    bool cut, exploded;  /* stopped by the wall budget / non-finite or runaway state */
    int fallen;          /* blocks moved > 0.5 m sideways, tilted > 0.3 rad or sunk > half
                            their height */
    double top_drift;    /* m, horizontal drift of the block that started highest */
    double max_tilt;     /* rad, over all blocks */
    double sink;         /* m, how far the top block came down (compression of the stack) */
    double max_pen;      /* m, deepest contact at the end */
    double max_speed;    /* m/s, fastest block over the last REST_WINDOW s (jitter, bounce) */
    int pairs, points;   /* contacts at the end */
    long ode_msgs;       /* ODE messages raised during the run (LCP failures) */
} run_result;

static bool pose_sane(fr_pose p)
{
    return fr_v3_isfinite(p.p) && fr_q_isfinite(p.q) && fr_v3_norm(p.p) < 1e5;
}

static void assess(const bench_engine *e, const block *init, int n, run_result *r)
{
    int top = 0;
    for (int i = 1; i < n; i++)
        if (init[i].pose.p.z > init[top].pose.p.z) top = i;
    r->fallen = 0;
    r->max_tilt = 0;
    for (int i = 0; i < n; i++) {
        fr_pose p = bench_engine_pose(e, i);
        if (!pose_sane(p)) {
            r->exploded = true;
            r->fallen = n;
            r->top_drift = r->max_tilt = r->sink = NAN;
            return;
        }
        fr_vec3 d = fr_v3_sub(p.p, init[i].pose.p);
        double dh = hypot(d.x, d.y);
        /* angle between the block's (initial) vertical axis and the world's */
        fr_vec3 up0 = fr_q_unrotate(init[i].pose.q, fr_v3(0, 0, 1));
        double c = fr_q_rotate(p.q, up0).z;
        double tilt = acos(fmax(-1.0, fmin(1.0, c)));
        r->max_tilt = fmax(r->max_tilt, tilt);
        /* sideways by half a block width, tipped, or sunk into the blocks below (a collapse
         * straight down that a perfectly symmetric column can do without tilting) */
        if (dh > 0.5 * BLOCK.x || tilt > 0.3 || -d.z > 0.5 * init[i].size.z) r->fallen++;
        if (i == top) {
            r->top_drift = dh;
            r->sink = -d.z;
        }
    }
    r->max_pen = bench_engine_max_penetration(e);
    r->pairs = bench_engine_contact_pairs(e);
    r->points = bench_engine_contact_points(e);
}

static int run_once(int kind, const options *o, int scene, int n, double dt, run_result *r)
{
    memset(r, 0, sizeof *r);
    bench_settings s = o->s;
    s.dt = dt;
    block *init = calloc((size_t)n, sizeof *init);
    bench_engine *e = init ? scene_build(kind, &s, scene, n, o->jitter, init) : NULL;
    if (!e) {
        free(init);
        return -1;
    }
    const int nwarm = (int)lround(o->warmup / dt), nstep = (int)lround(o->seconds / dt);
    const int nrest = (int)lround(REST_WINDOW / dt);
    double *t = malloc(sizeof *t * (size_t)(nstep > 0 ? nstep : 1));
    double *c = malloc(sizeof *c * (size_t)(nstep > 0 ? nstep : 1));
    const long msgs0 = bench_ode_messages();
    const double start = bench_now();
    int err = 0;
    /* a run over budget in its warm-up still times a step or two (then it is cut) */
    for (int i = 0; i < nwarm && !err && bench_now() - start < 0.5 * o->budget; i++)
        err = bench_engine_step(e);
    int done = 0;
    double total = 0;
    for (; done < nstep && !err; done++) {
        double c0 = bench_cpu_now(), t0 = bench_now();
        err = bench_engine_step(e);
        double t1 = bench_now(), c1 = bench_cpu_now();
        t[done] = t1 - t0;
        c[done] = c1 - c0;
        total += t[done];
        if (done >= nstep - nrest)
            for (int i = 0; i < n; i++)
                r->max_speed = fmax(r->max_speed, fr_v3_norm(bench_engine_vel(e, i)));
        if (t1 - start > o->budget) {
            r->cut = true;
            done++;
            break;
        }
        if ((done & 63) == 63 && !pose_sane(bench_engine_pose(e, n - 1))) {
            done++;
            break;
        }
    }
    if (err) {
        fprintf(stderr, "%s %s n=%d dt=%g: step failed (%d)\n", bench_engine_names[kind],
                scene_names[scene], n, dt, err);
        r->exploded = true;
    }
    r->steps = done;
    r->ode_msgs = bench_ode_messages() - msgs0;
    r->mean = done ? total / done : NAN;
    r->median = bench_median(t, done);
    r->cpu_median = bench_median(c, done);
    assess(e, init, n, r);
    free(t);
    free(c);
    free(init);
    bench_engine_destroy(e);
    return 0;
}

/* ---------------------------------------------------------------- table and CSV */

typedef struct row {
    int scene, n, engine;
    double dt;
    bool skipped;
    int reps;
    double mean, median, min_mean; /* s: medians over repetitions, and the best mean */
    double cpu_median;             /* s: median over repetitions of the CPU-time medians */
    run_result last;               /* state checks and counts from the last repetition */
} row;

static void print_header(void)
{
    printf("%-8s %4s %6s %-10s %11s %11s %11s %6s %6s %5s %5s %8s %8s %8s %9s %8s %6s\n", "scene",
           "n", "dt_ms", "engine", "mean_us", "median_us", "cpu_med_us", "us/blk", "stands", "rest",
           "fall", "drift_m", "tilt_deg", "sink_m", "maxpen_m", "vmax_m/s", "pairs");
}

static const char *stand_word(const run_result *r)
{
    if (r->exploded) return "EXPL";
    return r->fallen ? "no" : "yes";
}

static void print_row(const row *w)
{
    if (w->skipped) {
        printf("%-8s %4d %6.1f %-10s %11s\n", scene_names[w->scene], w->n, w->dt * 1e3,
               bench_engine_names[w->engine], "skipped");
        return;
    }
    const run_result *r = &w->last;
    printf("%-8s %4d %6.1f %-10s %11.2f %11.2f %11.2f %6.2f %6s %5s %5d %8.4f %8.3f %8.4f %9.5f "
           "%8.4f %6d%s%s\n",
           scene_names[w->scene], w->n, w->dt * 1e3, bench_engine_names[w->engine], w->mean * 1e6,
           w->median * 1e6, w->cpu_median * 1e6, w->median * 1e6 / w->n, stand_word(r),
           r->max_speed < REST_SPEED ? "yes" : "no", r->fallen, r->top_drift,
           r->max_tilt * 180 / M_PI, r->sink, r->max_pen, r->max_speed, r->pairs,
           r->cut ? "  (cut)" : "", r->ode_msgs ? "  (LCP msgs)" : "");
}

static void csv_header(FILE *f)
{
    fprintf(f, "scene,n,dt,engine,reps,steps,mean_us,median_us,min_mean_us,stands,fallen,"
               "at_rest,top_drift_m,max_tilt_deg,sink_m,max_pen_m,max_speed,pairs,points,cut,"
               "exploded,ode_msgs,cpu_median_us\n");
}

static void csv_row(FILE *f, const row *w)
{
    if (w->skipped) return;
    const run_result *r = &w->last;
    fprintf(f,
            "%s,%d,%g,%s,%d,%d,%.4f,%.4f,%.4f,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%d,%d,%d,%ld,"
            "%.4f\n",
            scene_names[w->scene], w->n, w->dt, bench_engine_names[w->engine], w->reps, r->steps,
            w->mean * 1e6, w->median * 1e6, w->min_mean * 1e6, !r->fallen && !r->exploded,
            r->fallen, r->max_speed < REST_SPEED, r->top_drift, r->max_tilt * 180 / M_PI, r->sink,
            r->max_pen, r->max_speed, r->pairs, r->points, r->cut, r->exploded, r->ode_msgs,
            w->cpu_median * 1e6);
}

/* ---------------------------------------------------------------- callgrind mode */

/* The only code valgrind counts (--toggle-collect=bench_measured_steps). */
__attribute__((noinline)) int bench_measured_steps(bench_engine *e, int steps);
__attribute__((noinline)) int bench_measured_steps(bench_engine *e, int steps)
{
    int err = 0;
    for (int i = 0; i < steps && !err; i++) err = bench_engine_step(e);
    return err;
}

/* FNV-1a over the bits of every body's pose and velocity: two builds that step the same scene
 * to the same bits print the same hash (checks that an optimisation changed no result). */
static uint64_t state_hash(const bench_engine *e, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        fr_pose p = bench_engine_pose(e, i);
        fr_vec3 v = bench_engine_vel(e, i);
        const double x[10] = {p.p.x, p.p.y, p.p.z, p.q.w, p.q.x, p.q.y, p.q.z, v.x, v.y, v.z};
        const unsigned char *b = (const unsigned char *)x;
        for (size_t k = 0; k < sizeof x; k++) h = (h ^ b[k]) * 1099511628211ull;
    }
    return h;
}

static int run_callgrind(const options *o)
{
    int n = (int)o->ns[0];
    block *init = calloc((size_t)n, sizeof *init);
    bench_settings s = o->s;
    s.dt = o->dts[0];
    bench_engine *e = scene_build(o->callgrind, &s, o->scenes[0], n, o->jitter, init);
    if (!e) return 1;
    int err = 0;
    for (int i = 0; i < o->cg_warm_steps && !err; i++) err = bench_engine_step(e);
    fr_world *w = bench_engine_world(e);
    fr_world_solver_stats st0 = {0}, st1 = {0};
    if (w) fr_world_solver_stats_get(w, &st0);
    if (!err) err = bench_measured_steps(e, o->cg_steps);
    if (w) {
        /* where a cost per step comes from: Newton iterations, fresh factors and their fill */
        fr_world_solver_stats_get(w, &st1);
        double k = 1.0 / (o->cg_steps > 0 ? o->cg_steps : 1);
        printf("solver: evaluations %.2f, newton %.2f, factorisations %.2f, chord %.2f, analyses "
               "%ld, advanced "
               "%.1f, tangents %.2f per step; factor blocks %d for %d bodies, %d couplings\n",
               k * (double)(st1.evaluations - st0.evaluations),
               k * (double)(st1.newton_iterations - st0.newton_iterations),
               k * (double)(st1.factorisations - st0.factorisations),
               k * (double)(st1.chord_steps - st0.chord_steps), st1.analyses - st0.analyses,
               k * (double)(st1.advanced - st0.advanced), k * (double)(st1.tangents - st0.tangents),
               st1.factor_blocks, st1.bodies, st1.couplings);
    }
    run_result r = {0};
    assess(e, init, n, &r);
    printf("callgrind %s %s n=%d dt=%g warm=%d steps=%d err=%d stands=%s drift=%.4f m "
           "hash=%016llx\n",
           bench_engine_names[o->callgrind], scene_names[o->scenes[0]], n, s.dt, o->cg_warm_steps,
           o->cg_steps, err, stand_word(&r), r.top_drift, (unsigned long long)state_hash(e, n));
    bench_engine_destroy(e);
    free(init);
    return err ? 1 : 0;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
    puts("bench_stack [options]\n"
         "  --scenes LIST      column,pyramid,wall (default column)\n"
         "  --n LIST           block counts (default 3,6,13,25,50,100,200,400)\n"
         "  --dt LIST          steps in s (default 0.005,0.001)\n"
         "  --engines LIST     fureru,ode_quick,ode_step,bullet (default: all in this build)\n"
         "  --warmup S         untimed simulated seconds first (default 0.5)\n"
         "  --seconds S        timed simulated seconds (default 2.5)\n"
         "  --reps R           repetitions, median reported (default 3)\n"
         "  --budget S         wall seconds per run before it is cut short (default 20)\n"
         "  --jitter M         random sideways offset of each block, up to ±M m (default 0.001)\n"
         "  --step-max-n N     skip dWorldStep above N blocks (default 100)\n"
         "  --csv PATH         write one CSV row per case\n"
         "  --mu MU            friction, both engines (default 0.5)\n"
         "  --ode-mu MU        ODE's mu only (e.g. inf, as in ODE's demo_boxstack)\n"
         "  --fr-kappa K --fr-beta B   fureru gain factors (default: the world's)\n"
         "  --fr-implicit 0|1 --fr-iters N   fureru's linearly implicit contact step and its\n"
         "                     Gauss-Seidel sweeps (default: the world's)\n"
         "  --fr-reuse-contacts 0|1 --fr-reuse-factor 0|1   fureru's work kept between steps\n"
         "                     (advanced contact models, kept factors; default: on)\n"
         "  --ode-erp E --ode-cfm C --ode-iters I --ode-contacts C --ode-layer M\n"
         "  --ode-maxvel V (<=0: infinite) --ode-sap\n"
         "  --bt-iters I       Bullet's solver iterations (default: Bullet's, 10)\n"
         "  --callgrind ENGINE [--steps S] [--warm-steps W]   one engine, first scene/n/dt");
}

static int parse_names(const char *arg, const char *const *names, int nnames, int *out, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int k = -1;
        for (int i = 0; i < nnames; i++)
            if (strcmp(tok, names[i]) == 0) k = i;
        if (k < 0 && names == bench_engine_names) k = bench_engine_parse(tok);
        if (k < 0 || n >= max) {
            fprintf(stderr, "unknown name '%s'\n", tok);
            return -1;
        }
        out[n++] = k;
    }
    return n;
}

static int parse_args(int argc, char **argv, options *o)
{
    o->s = bench_settings_default();
    o->scenes[0] = SCENE_COLUMN;
    o->nscenes = 1;
    o->nn = bench_parse_list("3,6,13,25,50,100,200,400", o->ns, MAXLIST);
    o->ndt = bench_parse_list("0.005,0.001", o->dts, MAXLIST);
    o->nengines = 0;
    for (int i = 0; i < BENCH_NENGINES; i++)
        if (bench_engine_available(i)) o->engines[o->nengines++] = i;
    o->warmup = 0.5;
    o->seconds = 2.5;
    o->reps = 3;
    o->budget = 20;
    o->jitter = 0.001;
    o->step_max_n = 100;
    o->callgrind = -1;
    o->cg_steps = 200;
    o->cg_warm_steps = 100;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEXT()                                                                                     \
    do {                                                                                           \
        if (!v) {                                                                                  \
            fprintf(stderr, "%s needs a value\n", a);                                              \
            return -1;                                                                             \
        }                                                                                          \
        i++;                                                                                       \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            exit(0);
        } else if (!strcmp(a, "--ode-sap")) {
            o->s.ode_sap = 1;
        } else if (!strcmp(a, "--scenes")) {
            NEXT();
            if ((o->nscenes = parse_names(v, scene_names, NSCENES, o->scenes, NSCENES)) <= 0)
                return -1;
        } else if (!strcmp(a, "--engines")) {
            NEXT();
            if ((o->nengines = parse_names(v, bench_engine_names, BENCH_NENGINES, o->engines,
                                           BENCH_NENGINES)) <= 0)
                return -1;
        } else if (!strcmp(a, "--n")) {
            NEXT();
            if ((o->nn = bench_parse_list(v, o->ns, MAXLIST)) <= 0) return -1;
        } else if (!strcmp(a, "--dt")) {
            NEXT();
            if ((o->ndt = bench_parse_list(v, o->dts, MAXLIST)) <= 0) return -1;
        } else if (!strcmp(a, "--callgrind")) {
            NEXT();
            if ((o->callgrind = bench_engine_parse(v)) < 0) return -1;
        } else {
            NEXT();
            double x = atof(v);
            if (!strcmp(a, "--warmup"))
                o->warmup = x;
            else if (!strcmp(a, "--seconds"))
                o->seconds = x;
            else if (!strcmp(a, "--reps"))
                o->reps = (int)x;
            else if (!strcmp(a, "--budget"))
                o->budget = x;
            else if (!strcmp(a, "--jitter"))
                o->jitter = x;
            else if (!strcmp(a, "--step-max-n"))
                o->step_max_n = (int)x;
            else if (!strcmp(a, "--csv"))
                o->csv = v;
            else if (!strcmp(a, "--mu"))
                o->s.mu_s = o->s.mu_k = x;
            else if (!strcmp(a, "--ode-mu"))
                o->s.ode_mu = x; /* "inf" works: dInfinity */
            else if (!strcmp(a, "--fr-kappa"))
                o->s.fr_kappa = x;
            else if (!strcmp(a, "--fr-beta"))
                o->s.fr_beta = x;
            else if (!strcmp(a, "--fr-implicit"))
                o->s.fr_implicit = (int)x;
            else if (!strcmp(a, "--fr-iters"))
                o->s.fr_iters = (int)x;
            else if (!strcmp(a, "--fr-reuse-contacts"))
                o->s.fr_reuse_contacts = (int)x;
            else if (!strcmp(a, "--fr-reuse-factor"))
                o->s.fr_reuse_factor = (int)x;
            else if (!strcmp(a, "--ode-erp"))
                o->s.ode_erp = x;
            else if (!strcmp(a, "--ode-cfm"))
                o->s.ode_cfm = x;
            else if (!strcmp(a, "--ode-iters"))
                o->s.ode_iters = (int)x;
            else if (!strcmp(a, "--ode-contacts"))
                o->s.ode_contacts = (int)x;
            else if (!strcmp(a, "--ode-layer"))
                o->s.ode_surface_layer = x;
            else if (!strcmp(a, "--ode-maxvel"))
                o->s.ode_max_correcting_vel = x;
            else if (!strcmp(a, "--bt-iters"))
                o->s.bt_iters = (int)x;
            else if (!strcmp(a, "--steps"))
                o->cg_steps = (int)x;
            else if (!strcmp(a, "--warm-steps"))
                o->cg_warm_steps = (int)x;
            else {
                fprintf(stderr, "unknown option %s (see --help)\n", a);
                return -1;
            }
        }
#undef NEXT
    }
    if (o->reps < 1 || o->seconds <= 0 || o->warmup < 0) return -1;
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) {
        usage();
        return 2;
    }
    bench_engine_global_init();
    if (o.callgrind >= 0) {
        int rc = run_callgrind(&o);
        bench_engine_global_cleanup();
        return rc;
    }
    FILE *csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) {
            perror(o.csv);
            return 1;
        }
        csv_header(csv);
    }
    printf("# ODE: erp %g cfm %g quickstep iters %d contacts/pair %d layer %g maxvel %g %s mu %g; "
           "mu %g; fureru kappa %g beta %g implicit %d iters %d reuse contacts %d factor %d "
           "(<= 0, < 0: world defaults)\n",
           o.s.ode_erp, o.s.ode_cfm, o.s.ode_iters, o.s.ode_contacts, o.s.ode_surface_layer,
           o.s.ode_max_correcting_vel, o.s.ode_sap ? "sap" : "hash",
           o.s.ode_mu >= 0 ? o.s.ode_mu : o.s.mu_s, o.s.mu_s, o.s.fr_kappa, o.s.fr_beta,
           o.s.fr_implicit, o.s.fr_iters, o.s.fr_reuse_contacts, o.s.fr_reuse_factor);
    printf(
        "# %g s warm-up + %g s timed (simulated), %d reps, median over reps; blocks offset by up "
        "to ±%g m\n",
        o.warmup, o.seconds, o.reps, o.jitter);
    print_header();
    for (int si = 0; si < o.nscenes; si++)
        for (int di = 0; di < o.ndt; di++)
            for (int ni = 0; ni < o.nn; ni++) {
                int scene = o.scenes[si], n = (int)o.ns[ni];
                double dt = o.dts[di];
                row rows[BENCH_NENGINES];
                double means[BENCH_NENGINES][64], medians[BENCH_NENGINES][64],
                    cpus[BENCH_NENGINES][64];
                memset(rows, 0, sizeof rows);
                int reps = o.reps < 64 ? o.reps : 64;
                /* interleave engines inside each repetition so slow drifts hit all alike */
                for (int rep = 0; rep < reps; rep++)
                    for (int ei = 0; ei < o.nengines; ei++) {
                        int k = o.engines[ei];
                        row *w = &rows[ei];
                        w->scene = scene;
                        w->n = n;
                        w->dt = dt;
                        w->engine = k;
                        if (k == BENCH_ODE_STEP && n > o.step_max_n) {
                            w->skipped = true;
                            continue;
                        }
                        if (w->last.cut || w->last.exploded) continue; /* once is enough */
                        if (run_once(k, &o, scene, n, dt, &w->last)) return 1;
                        means[ei][w->reps] = w->last.mean;
                        medians[ei][w->reps] = w->last.median;
                        cpus[ei][w->reps] = w->last.cpu_median;
                        w->reps++;
                    }
                for (int ei = 0; ei < o.nengines; ei++) {
                    row *w = &rows[ei];
                    if (!w->skipped) {
                        w->min_mean = INFINITY;
                        for (int r = 0; r < w->reps; r++)
                            w->min_mean = fmin(w->min_mean, means[ei][r]);
                        w->mean = bench_median(means[ei], w->reps);
                        w->median = bench_median(medians[ei], w->reps);
                        w->cpu_median = bench_median(cpus[ei], w->reps);
                    }
                    print_row(w);
                    if (csv) csv_row(csv, w);
                }
                /* ratios against fureru */
                int fi = -1;
                for (int ei = 0; ei < o.nengines; ei++)
                    if (rows[ei].engine == BENCH_FURERU) fi = ei;
                if (fi >= 0)
                    for (int ei = 0; ei < o.nengines; ei++)
                        if (ei != fi && !rows[ei].skipped && rows[ei].median > 0)
                            printf("%-8s %4d %6.1f   fureru/%s = %.3f wall, %.3f CPU (median "
                                   "step)\n",
                                   scene_names[scene], n, dt * 1e3,
                                   bench_engine_names[rows[ei].engine],
                                   rows[fi].median / rows[ei].median,
                                   rows[fi].cpu_median / rows[ei].cpu_median);
                fflush(stdout);
                if (csv) fflush(csv);
            }
    if (csv) fclose(csv);
    bench_engine_global_cleanup();
    return 0;
}
