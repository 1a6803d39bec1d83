/*
 * Friction experiments, fureru vs ODE 0.16 side by side (docs/benchmarks.md):
 *
 *   bench_friction slope [options]      a block on a slope of angle θ with μ_s = μ_k = tan θ ± dμ:
 *                                       distance crept / slid in 10 s against the exact answer
 *                                       (0 when μ > tan θ; ½·g(sin θ − μ cos θ)·t² when μ < tan θ)
 *   bench_friction stickslip [options]  a block pulled through a spring whose far end moves at V:
 *                                       the spring force at every tick, to a CSV, and its peaks,
 *                                       troughs, stick and slip times against experiments.md §2
 *
 * The slope is made by tilting gravity by θ about y (the block stays on a horizontal ground), which
 * is the same mechanics without a slanted ground in either engine: "down the slope" is +x.
 * Block: 0.5 m × 0.5 m × 0.2 m, 1 kg (as in tests/contact's rig). ODE has a single μ; it gets
 * μ_s unless --ode-mu is given.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "sawtooth.h"

#define MAXLIST 16

static const fr_vec3 BOX = {0.5, 0.5, 0.2}; /* m */
static const double MASS = 1.0;             /* kg */
static const double G = 9.81;               /* m/s² */

typedef struct options {
    bench_settings s;
    double dts[MAXLIST];
    int ndt;
    int engines[BENCH_NENGINES], nengines;
    const char *out; /* output directory for CSV files, or NULL */
    /* slope */
    double theta_deg, dmu, seconds;
    /* stick-slip */
    double mus, muk, k, v, c, duration, ode_mu;
} options;

static bench_engine *block_on_ground(int kind, const bench_settings *s)
{
    bench_engine *e = bench_engine_create(kind, s);
    if (!e) return NULL;
    fr_pose p = fr_pose_identity();
    p.p = fr_v3(0, 0, 0.5 * BOX.z);
    if (bench_engine_add_ground(e, 50.0) != 0 || bench_engine_add_box(e, BOX, MASS, p) != 0) {
        bench_engine_destroy(e);
        return NULL;
    }
    return e;
}

static FILE *open_out(const options *o, const char *name, double dt)
{
    if (!o->out) return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s_dt%gms.csv", o->out, name, dt * 1e3);
    FILE *f = fopen(path, "w");
    if (!f) perror(path);
    return f;
}

/* ---------------------------------------------------------------- slope */

static int run_slope(const options *o)
{
    const double th = o->theta_deg * M_PI / 180.0, tan_th = tan(th);
    const double mus[2] = {tan_th + o->dmu, tan_th - o->dmu};
    FILE *sum = NULL;
    if (o->out) {
        char path[1024];
        snprintf(path, sizeof path, "%s/slope.csv", o->out);
        sum = fopen(path, "w");
        if (!sum) {
            perror(path);
            return 1;
        }
        fprintf(sum, "engine,dt,theta_deg,mu,x_1s_m,x_end_m,creep_m,creep_speed_mm_s,"
                     "expected_x_end_m,verdict\n");
    }
    printf("# slope θ = %.4f° (tan θ = %.6f), %g s, block %g×%g×%g m %g kg, g = %g\n", o->theta_deg,
           tan_th, o->seconds, BOX.x, BOX.y, BOX.z, MASS, G);
    printf(
        "# creep = x(end) − x(1 s) (after the contact has settled), 'sticks' when < 1 µm; speed\n"
        "# over the last half; exact: 0 when μ >= tan θ, else ½·g(sin θ − μ cos θ)·t²\n");
    printf("%-10s %6s %8s %12s %12s %12s %14s %12s  %s\n", "engine", "dt_ms", "mu", "x_1s_m",
           "x_end_m", "creep_m", "creep_mm/s", "exact_x_m", "verdict");
    for (int di = 0; di < o->ndt; di++) {
        double dt = o->dts[di];
        const int nsteps = (int)lround(o->seconds / dt), n1 = (int)lround(1.0 / dt);
        /* trace: t, then x of each engine at μ_hi and μ_lo */
        FILE *tr = open_out(o, "slope_trace", dt);
        double *xs = calloc((size_t)(nsteps + 1) * (size_t)(2 * o->nengines), sizeof *xs);
        for (int ei = 0; ei < o->nengines; ei++)
            for (int mi = 0; mi < 2; mi++) {
                int kind = o->engines[ei];
                bench_settings s = o->s;
                s.dt = dt;
                s.gravity = fr_v3(G * sin(th), 0, -G * cos(th));
                s.mu_s = s.mu_k = mus[mi];
                s.ode_mu = -1;
                s.max_bodies = 1;
                bench_engine *e = block_on_ground(kind, &s);
                if (!e) return 1;
                const double x0 = bench_engine_pose(e, 0).p.x;
                double x1 = 0, xh = 0;
                int col = 2 * ei + mi;
                for (int i = 0; i < nsteps; i++) {
                    if (bench_engine_step(e) != 0) break;
                    double x = bench_engine_pose(e, 0).p.x - x0;
                    xs[(size_t)(i + 1) * (size_t)(2 * o->nengines) + (size_t)col] = x;
                    if (i + 1 == n1) x1 = x;
                    if (i + 1 == nsteps / 2) xh = x;
                }
                double xend = bench_engine_pose(e, 0).p.x - x0;
                double a = G * (sin(th) - mus[mi] * cos(th));
                double exact = a > 0 ? 0.5 * a * o->seconds * o->seconds : 0.0;
                double creep = xend - x1, speed = (xend - xh) / (0.5 * o->seconds) * 1e3;
                /* sticking: the contact's elastic set-up in the first second is not creep */
                const char *verdict =
                    a > 0 ? (fabs(xend - exact) < 0.05 * exact ? "slides" : "slides, a off")
                          : (fabs(creep) < 1e-6 ? "sticks" : "CREEPS");
                printf("%-10s %6.1f %8.4f %12.3e %12.3e %12.3e %14.5f %12.4f  %s\n",
                       bench_engine_names[kind], dt * 1e3, mus[mi], x1, xend, creep, speed, exact,
                       verdict);
                if (sum)
                    fprintf(sum, "%s,%g,%.6f,%.6f,%.6e,%.6e,%.6e,%.6e,%.6f,%s\n",
                            bench_engine_names[kind], dt, o->theta_deg, mus[mi], x1, xend, creep,
                            speed, exact, verdict);
                bench_engine_destroy(e);
            }
        if (tr) {
            fprintf(tr, "t");
            for (int ei = 0; ei < o->nengines; ei++)
                fprintf(tr, ",%s_hi,%s_lo", bench_engine_names[o->engines[ei]],
                        bench_engine_names[o->engines[ei]]);
            fprintf(tr, "\n");
            int every = (int)lround(0.01 / dt); /* 100 rows a second are plenty for x(t) */
            if (every < 1) every = 1;
            for (int i = 0; i <= nsteps; i += every) {
                fprintf(tr, "%.4f", i * dt);
                for (int c = 0; c < 2 * o->nengines; c++)
                    fprintf(tr, ",%.9e", xs[(size_t)i * (size_t)(2 * o->nengines) + (size_t)c]);
                fprintf(tr, "\n");
            }
            fclose(tr);
        }
        free(xs);
    }
    if (sum) fclose(sum);
    return 0;
}

/* ---------------------------------------------------------------- stick-slip */

static int run_stickslip(const options *o)
{
    const double peak_x = o->mus * MASS * G, trough_x = (2 * o->muk - o->mus) * MASS * G;
    const double stick_x = 2 * (o->mus - o->muk) * MASS * G / (o->k * o->v);
    const double slip_x = M_PI * sqrt(MASS / o->k);
    printf("# stick-slip: m %g kg, k %g N/m, V %g m/s, c %g N·s/m, μ_s %g, μ_k %g, %g s "
           "(ODE μ = %g)\n",
           MASS, o->k, o->v, o->c, o->mus, o->muk, o->duration,
           o->ode_mu >= 0 ? o->ode_mu : o->mus);
    printf("# formulas: peak μ_s·m·g = %.4f N, trough (2μ_k − μ_s)·m·g = %.4f N, stick "
           "2(μ_s − μ_k)·m·g/(k·V) = %.4f s, slip π·sqrt(m/k) = %.4f s, period %.4f s\n",
           peak_x, trough_x, stick_x, slip_x, stick_x + slip_x);
    printf("# mean, sd: the spring force over the second half of the run\n");
    printf("%-10s %6s %6s %9s %9s %9s %9s %9s %9s %9s  %s\n", "engine", "dt_ms", "cycles", "peak_N",
           "trough_N", "stick_s", "slip_s", "period_s", "mean_N", "sd_N", "verdict");
    for (int di = 0; di < o->ndt; di++) {
        double dt = o->dts[di];
        const int nsteps = (int)lround(o->duration / dt);
        const int ne = o->nengines;
        double *F = calloc((size_t)nsteps * (size_t)ne, sizeof *F);
        double *X = calloc((size_t)nsteps * (size_t)ne, sizeof *X);
        double *T = calloc((size_t)nsteps, sizeof *T);
        for (int ei = 0; ei < ne; ei++) {
            int kind = o->engines[ei];
            bench_settings s = o->s;
            s.dt = dt;
            s.gravity = fr_v3(0, 0, -G);
            s.mu_s = o->mus;
            s.mu_k = o->muk;
            s.ode_mu = o->ode_mu;
            s.max_bodies = 1;
            bench_engine *e = block_on_ground(kind, &s);
            if (!e) return 1;
            fr_vec3 p0 = bench_engine_pose(e, 0).p;
            bench_engine_add_spring(e, 0, p0, fr_v3(o->v, 0, 0), o->k, o->c);
            for (int i = 0; i < nsteps; i++) {
                if (bench_engine_step(e) != 0) break;
                T[i] = i * dt; /* the force was evaluated from the state at the step's start */
                F[(size_t)i * (size_t)ne + (size_t)ei] = bench_engine_spring_force(e, 0).x;
                X[(size_t)i * (size_t)ne + (size_t)ei] = bench_engine_pose(e, 0).p.x - p0.x;
            }
            bench_engine_destroy(e);
            /* the same analysis as scripts/experiments/sawtooth.awk */
            double *f1 = malloc(sizeof *f1 * (size_t)nsteps);
            for (int i = 0; i < nsteps; i++) f1[i] = F[(size_t)i * (size_t)ne + (size_t)ei];
            fri_sawtooth_result r;
            fri_sawtooth_analyze(T, f1, nsteps, 0.25 * (peak_x - trough_x), 0.0, &r, NULL);
            free(f1);
            const char *verdict = r.cycles >= 2
                                      ? (fabs(r.peak - peak_x) < 0.05 * peak_x &&
                                                 fabs(r.trough - trough_x) < 0.1 * peak_x &&
                                                 fabs(r.stick - stick_x) < 0.1 * stick_x
                                             ? "sawtooth, matches"
                                             : "sawtooth, off the formulas")
                                      : "no stick-slip";
            printf("%-10s %6.1f %6d %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f  %s\n",
                   bench_engine_names[kind], dt * 1e3, r.cycles, r.peak, r.trough, r.stick, r.slip,
                   r.period, r.mean, r.sd, verdict);
        }
        FILE *f = open_out(o, "stickslip", dt);
        if (f) {
            fprintf(f, "t");
            for (int ei = 0; ei < ne; ei++) fprintf(f, ",%s_F", bench_engine_names[o->engines[ei]]);
            for (int ei = 0; ei < ne; ei++) fprintf(f, ",%s_x", bench_engine_names[o->engines[ei]]);
            fprintf(f, "\n");
            for (int i = 0; i < nsteps; i++) {
                fprintf(f, "%.6f", T[i]);
                for (int ei = 0; ei < ne; ei++)
                    fprintf(f, ",%.9g", F[(size_t)i * (size_t)ne + (size_t)ei]);
                for (int ei = 0; ei < ne; ei++)
                    fprintf(f, ",%.9g", X[(size_t)i * (size_t)ne + (size_t)ei]);
                fprintf(f, "\n");
            }
            fclose(f);
        }
        free(F);
        free(X);
        free(T);
    }
    return 0;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
    puts("bench_friction slope|stickslip [options]\n"
         "  --dt LIST            steps in s (default 0.005,0.001)\n"
         "  --engines LIST       fureru,ode_quick,ode_step (default all three)\n"
         "  --out DIR            write CSV files there (slope.csv, slope_trace_dt*.csv,\n"
         "                       stickslip_dt*.csv)\n"
         " slope:     --theta-deg D (default atan(0.5) = 26.565°)  --dmu D (0.005)  --seconds S "
         "(10)\n"
         " stickslip: --mus M (0.6) --muk M (0.4) --k N/m (100) --v m/s (0.01) --c N·s/m (0)\n"
         "            --duration S (30) --ode-mu M (default μ_s)\n"
         " ODE:       --ode-erp E --ode-cfm C --ode-iters I --ode-contacts C --ode-layer M\n"
         "            --ode-maxvel V\n"
         " fureru:    --fr-kappa K --fr-beta B --fr-implicit 0|1 --fr-iters N (default: the\n"
         "            world's)");
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "slope") && strcmp(argv[1], "stickslip"))) {
        usage();
        return 2;
    }
    options o;
    memset(&o, 0, sizeof o);
    o.s = bench_settings_default();
    o.ndt = bench_parse_list("0.005,0.001", o.dts, MAXLIST);
    o.nengines = 0;
    for (int i = 0; i < BENCH_NENGINES; i++)
        if (bench_engine_available(i)) o.engines[o.nengines++] = i;
    o.theta_deg = atan(0.5) * 180.0 / M_PI;
    o.dmu = 0.005;
    o.seconds = 10;
    o.mus = 0.6;
    o.muk = 0.4;
    o.k = 100;
    o.v = 0.01;
    o.c = 0;
    o.duration = 30;
    o.ode_mu = -1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage();
            return 0;
        }
        if (!v) {
            fprintf(stderr, "%s needs a value\n", a);
            return 2;
        }
        i++;
        double x = atof(v);
        if (!strcmp(a, "--dt")) {
            if ((o.ndt = bench_parse_list(v, o.dts, MAXLIST)) <= 0) return 2;
        } else if (!strcmp(a, "--engines")) {
            o.nengines = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = bench_engine_parse(t);
                if (k < 0 || o.nengines >= BENCH_NENGINES) {
                    fprintf(stderr, "unknown engine '%s'\n", t);
                    return 2;
                }
                o.engines[o.nengines++] = k;
            }
        } else if (!strcmp(a, "--out"))
            o.out = v;
        else if (!strcmp(a, "--theta-deg"))
            o.theta_deg = x;
        else if (!strcmp(a, "--dmu"))
            o.dmu = x;
        else if (!strcmp(a, "--seconds"))
            o.seconds = x;
        else if (!strcmp(a, "--mus"))
            o.mus = x;
        else if (!strcmp(a, "--muk"))
            o.muk = x;
        else if (!strcmp(a, "--k"))
            o.k = x;
        else if (!strcmp(a, "--v"))
            o.v = x;
        else if (!strcmp(a, "--c"))
            o.c = x;
        else if (!strcmp(a, "--duration"))
            o.duration = x;
        else if (!strcmp(a, "--ode-mu"))
            o.ode_mu = x;
        else if (!strcmp(a, "--ode-erp"))
            o.s.ode_erp = x;
        else if (!strcmp(a, "--ode-cfm"))
            o.s.ode_cfm = x;
        else if (!strcmp(a, "--ode-iters"))
            o.s.ode_iters = (int)x;
        else if (!strcmp(a, "--ode-contacts"))
            o.s.ode_contacts = (int)x;
        else if (!strcmp(a, "--ode-layer"))
            o.s.ode_surface_layer = x;
        else if (!strcmp(a, "--ode-maxvel"))
            o.s.ode_max_correcting_vel = x;
        else if (!strcmp(a, "--fr-kappa"))
            o.s.fr_kappa = x;
        else if (!strcmp(a, "--fr-beta"))
            o.s.fr_beta = x;
        else if (!strcmp(a, "--fr-implicit"))
            o.s.fr_implicit = (int)x;
        else if (!strcmp(a, "--fr-iters"))
            o.s.fr_iters = (int)x;
        else {
            fprintf(stderr, "unknown option %s\n", a);
            usage();
            return 2;
        }
    }
    printf("# ODE: erp %g cfm %g quickstep iters %d contacts/pair %d layer %g maxvel %g; fureru "
           "kappa %g beta %g implicit %d iters %d (<= 0, < 0: world defaults)\n",
           o.s.ode_erp, o.s.ode_cfm, o.s.ode_iters, o.s.ode_contacts, o.s.ode_surface_layer,
           o.s.ode_max_correcting_vel, o.s.fr_kappa, o.s.fr_beta, o.s.fr_implicit, o.s.fr_iters);
    bench_engine_global_init();
    int rc = !strcmp(argv[1], "slope") ? run_slope(&o) : run_stickslip(&o);
    bench_engine_global_cleanup();
    return rc;
}
