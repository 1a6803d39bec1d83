/* drivers/virtual: the simulated hand against the analytic mass-spring-damper response, the
 * encoder (quantisation, latency), determinism, force records and the real-time rules. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frtest.h"
#include "interpose.h"
#include "fureru/base.h"
#include "fureru/haptic.h"
#include "fureru/virtual.h"

#include <complex.h> /* last: its I macro clashes with parameter names in math.h */

#define REQUIRE_MSG(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) ck_assert_msg(cond, __VA_ARGS__);                                             \
    } while (0)

/* Test hand: m = 0.1 kg, b = 2 N·s/m, k = 200 N/m → σ = 10 /s, ω_d = √1900 rad/s. */
static const double M = 0.1, B = 2.0, K = 200.0;

static fr_virtual_params base_params(void)
{
    fr_virtual_params p;
    fr_virtual_params_default(&p);
    p.hand.mass = M;
    p.hand.damping = B;
    p.hand.stiffness = K;
    p.encoder.resolution = 0;
    p.encoder.latency = 0;
    p.encoder.velocity = FR_VVEL_TRUE;
    return p;
}

static fr_device *open_dev(const fr_virtual_params *p)
{
    fr_device *dev = NULL;
    fr_diag d;
    int err = fr_virtual_open(p, &dev, &d);
    ck_assert_msg(err == FR_OK, "open: %s: %s", d.field, d.msg);
    return dev;
}

static const fr_device_cmd ZERO = {{0, 0, 0}, {0, 0, 0}};

static fr_vec3 true_pos(fr_device *dev)
{
    fr_device_state s;
    fr_virtual_true_state(dev, &s);
    return s.pose.p;
}

/* ------------------------------------------------------------------ analytic responses */

static double sigma(void)
{
    return B / (2 * M);
}
static double omega_d(void)
{
    return sqrt(K / M - sigma() * sigma());
}
/* Free response of m ẍ + b ẋ + k x = 0 from x(0) = 1, ẋ(0) = 0. */
static double free_unit(double t)
{
    double s = sigma(), w = omega_d();
    return exp(-s * t) * (cos(w * t) + s / w * sin(w * t));
}
/* Response to a velocity jump of 1 (impulse response × m): ė(0) = 1, e(0) = 0. */
static double g_jump(double t)
{
    return t < 0 ? 0.0 : exp(-sigma() * t) * sin(omega_d() * t) / omega_d();
}

/* m ẍ + b ẋ + k x = k u + b u̇ with u = c + Re(A e^{jωt}), from x(0) = x0, ẋ(0) = v0. */
static double sine_response(double t, double c, double complex A, double w, double x0, double v0)
{
    double complex H = (K + I * B * w) / (K - M * w * w + I * B * w);
    double complex P = H * A;
    double xp = c + creal(P * cexp(I * w * t));
    double xp0 = c + creal(P), vp0 = creal(I * w * P);
    double c1 = x0 - xp0, c2 = (v0 - vp0 + sigma() * c1) / omega_d();
    return xp + exp(-sigma() * t) * (c1 * cos(omega_d() * t) + c2 * sin(omega_d() * t));
}

/* Bound on the error of the cubic-Hermite target input: |x^(4)| ≤ f4 gives position error
 * h⁴/384·f4 and velocity error √3/216·h³·f4 (Birkhoff–Priver), so the input error is at most
 * k·that + b·that, and the response error is at most ‖impulse response‖₁ = 1/(m ω_d σ) times it. */
static double hermite_bound(double h, double f4)
{
    double du = K * pow(h, 4) / 384.0 * f4 + B * sqrt(3.0) / 216.0 * pow(h, 3) * f4;
    return du / (M * omega_d() * sigma());
}

/* ------------------------------------------------------------------ the hand follows */

START_TEST(test_hold_free_response)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_HOLD;
    p.traj.point = fr_v3(0.01, -0.02, 0.03);
    p.hand.has_start = true;
    p.hand.start = fr_v3(0.02, -0.02, 0.0);
    fr_device *dev = open_dev(&p);
    double worst = 0;
    for (int k = 1; k <= 3000; k++) {
        fr_device_write(dev, &ZERO);
        double t = k * p.dt;
        fr_vec3 x = true_pos(dev);
        double ex = fabs(x.x - (0.01 + 0.01 * free_unit(t)));
        double ez = fabs(x.z - (0.03 - 0.03 * free_unit(t)));
        worst = fmax(worst, fmax(ex, ez));
        ck_assert(x.y == -0.02); /* starts on target in y: stays there exactly */
    }
    ck_assert_msg(worst <= 1e-14, "worst %g", worst); /* exact discretisation: rounding only */
    fr_device_close(dev);
}
END_TEST

/* A constant force: the exact step response at every tick, F/k at rest. */
START_TEST(test_constant_force_displacement)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_HOLD;
    p.traj.point = fr_v3(0, 0, 0.05);
    fr_device *dev = open_dev(&p);
    fr_device_cmd c = {fr_v3(1.5, -0.4, -3.0), fr_v3_zero()};
    double worst = 0;
    for (int k = 1; k <= 5000; k++) {
        fr_device_write(dev, &c);
        double t = k * p.dt, s = 1.0 - free_unit(t);
        fr_vec3 x = true_pos(dev);
        worst = fmax(worst, fabs(x.x - 1.5 / K * s));
        worst = fmax(worst, fabs(x.y + 0.4 / K * s));
        worst = fmax(worst, fabs(x.z - (0.05 - 3.0 / K * s)));
    }
    ck_assert_msg(worst <= 1e-15, "worst %g", worst);
    fr_vec3 x = true_pos(dev);
    ck_assert_rel(x.x, 1.5 / K, 1e-12, 0);
    ck_assert_rel(x.y, -0.4 / K, 1e-12, 0);
    ck_assert_rel(x.z, 0.05 - 3.0 / K, 1e-12, 0);
    fr_device_close(dev);
}
END_TEST

/* Line: corners on ticks, so the response is the exact superposition of corner transients. */
START_TEST(test_line_follows)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_LINE;
    p.traj.from = fr_v3(-0.03, 0.0, 0.01);
    p.traj.to = fr_v3(0.03, 0.02, 0.01);
    double L = fr_v3_dist(p.traj.from, p.traj.to), T = 1.2;
    p.traj.speed = L / T;
    fr_device *dev = open_dev(&p);
    fr_vec3 dir = fr_v3_scale(fr_v3_sub(p.traj.to, p.traj.from), 1.0 / L);
    double worst = 0, worst_late = 0;
    for (int k = 1; k <= 6000; k++) {
        fr_device_write(dev, &ZERO);
        double t = k * p.dt;
        /* target: triangle wave */
        int n = (int)floor(t / T + 1e-9);
        double u = t - n * T, s = n % 2 == 0 ? p.traj.speed * u : L - p.traj.speed * u;
        fr_vec3 xt = fr_v3_mad(p.traj.from, s, dir);
        /* corners: the velocity jumps by ∓2·speed·dir at t = jT */
        double e = 0;
        for (int j = 1; j * T <= t + 1e-9; j++)
            e -= (j % 2 ? -2.0 : 2.0) * p.traj.speed * g_jump(t - j * T);
        fr_vec3 want = fr_v3_mad(xt, e, dir);
        double err = fr_v3_dist(true_pos(dev), want);
        worst = fmax(worst, err);
        /* after the transient (0.8 s after a corner: e^{-8}) the hand is on the line */
        if (u > 0.8) worst_late = fmax(worst_late, fr_v3_dist(true_pos(dev), xt));
    }
    ck_assert_msg(worst <= 1e-12, "worst %g", worst);
    /* late error: the transient's envelope 2v/ω_d·e^{-σ·0.8}, summed over past corners */
    double env = 2 * p.traj.speed / omega_d() * exp(-sigma() * 0.8) / (1 - exp(-sigma() * T));
    ck_assert_msg(worst_late <= env, "late %g > %g", worst_late, env);
    fr_device_close(dev);
}
END_TEST

START_TEST(test_circle_follows)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_CIRCLE;
    p.traj.center = fr_v3(0.01, 0.0, -0.02);
    p.traj.radius = 0.02;
    p.traj.plane = FR_VPLANE_YZ; /* e1 = y, e2 = z */
    p.traj.period = 0.5;
    fr_device *dev = open_dev(&p);
    double w = 2 * M_PI / p.traj.period, r = p.traj.radius;
    double bound = hermite_bound(p.dt, r * pow(w, 4)) + 1e-13;
    double worst = 0, worst_ss = 0;
    double complex H = (K + I * B * w) / (K - M * w * w + I * B * w);
    for (int k = 1; k <= 4000; k++) {
        fr_device_write(dev, &ZERO);
        double t = k * p.dt;
        fr_vec3 x = true_pos(dev);
        /* y = c + r cos ωt, z = c + r sin ωt = c + Re(−j r e^{jωt}); start on the circle */
        double y = sine_response(t, 0.0, r, w, r, 0.0);
        double z = sine_response(t, -0.02, -I * r, w, -0.02, r * w);
        worst = fmax(worst, fmax(fabs(x.y - y), fabs(x.z - z)));
        ck_assert(x.x == 0.01);
        if (t > 3.0) { /* after the transient (e^{-30}): the steady state H(jω) */
            double ys = creal(H * r * cexp(I * w * t)),
                   zs = -0.02 + creal(-I * H * r * cexp(I * w * t));
            worst_ss = fmax(worst_ss, fmax(fabs(x.y - ys), fabs(x.z - zs)));
        }
    }
    ck_assert_msg(worst <= bound, "worst %g > bound %g", worst, bound);
    ck_assert_msg(worst_ss <= bound + 1e-14, "steady %g > %g", worst_ss, bound);
    /* the bound is tight enough to matter: the response differs from the target by far more */
    ck_assert(cabs(H - 1.0) * r > 1e6 * bound);
    fr_device_close(dev);
}
END_TEST

START_TEST(test_poke_follows)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_POKE;
    p.traj.start = fr_v3(0.0, 0.01, 0.02);
    p.traj.direction = fr_v3(0, 3, -4); /* normalised at open: (0, 0.6, -0.8) */
    p.traj.depth = 0.03;
    p.traj.period = 0.8;
    fr_device *dev = open_dev(&p);
    double w = 2 * M_PI / p.traj.period, a = p.traj.depth / 2;
    double bound = hermite_bound(p.dt, a * pow(w, 4)) + 1e-13;
    double worst = 0;
    for (int k = 1; k <= 4000; k++) {
        fr_device_write(dev, &ZERO);
        double t = k * p.dt;
        /* along the axis: s(t) = a − a cos ωt from s = 0 at rest */
        double s = sine_response(t, a, -a, w, 0.0, 0.0);
        fr_vec3 want = fr_v3_mad(p.traj.start, s, fr_v3(0, 0.6, -0.8));
        worst = fmax(worst, fr_v3_dist(true_pos(dev), want));
    }
    ck_assert_msg(worst <= bound, "worst %g > bound %g", worst, bound);
    fr_device_close(dev);
}
END_TEST

static char *write_temp(const char *text)
{
    static char path[8][64];
    static int next;
    char *pth = path[next++ % 8];
    snprintf(pth, sizeof path[0], "/tmp/fureru-vtest-XXXXXX");
    int fd = mkstemp(pth);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return pth;
}

/* A recorded trajectory of waypoints on ticks (no loop): the exact piecewise-linear response. */
START_TEST(test_csv_follows)
{
    static const double wt[] = {0.0, 0.5, 1.2, 2.0, 2.6};
    static const double wx[][3] = {
        {0, 0, 0}, {0.01, 0, 0.005}, {0.01, 0.02, 0.0}, {-0.01, 0.01, 0.0}, {-0.01, 0.01, 0.01}};
    char text[1024] = "# waypoints\nt,x,y,z\n";
    for (int i = 0; i < 5; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%g, %g, %g, %g\n", wt[i] + 3.0,
                 wx[i][0], wx[i][1], wx[i][2]); /* times start at 3 s: shifted to 0 */
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_CSV;
    snprintf(p.traj.file, sizeof p.traj.file, "%s", write_temp(text));
    p.traj.loop = false;
    p.traj.offset = fr_v3(0, 0, 0.1);
    fr_device *dev = open_dev(&p);
    double worst = 0;
    for (int k = 1; k <= 4000; k++) {
        fr_device_write(dev, &ZERO);
        double t = k * p.dt;
        for (int c = 0; c < 3; c++) {
            /* target: linear between waypoints, then hold */
            double xt = wx[4][c];
            for (int i = 0; i < 4; i++)
                if (t >= wt[i] && t < wt[i + 1])
                    xt = wx[i][c] + (wx[i + 1][c] - wx[i][c]) * (t - wt[i]) / (wt[i + 1] - wt[i]);
            double e = 0;
            for (int j = 1; j <= 4; j++) { /* velocity jump at waypoint j */
                double vin = (wx[j][c] - wx[j - 1][c]) / (wt[j] - wt[j - 1]);
                double vout = j < 4 ? (wx[j + 1][c] - wx[j][c]) / (wt[j + 1] - wt[j]) : 0.0;
                e -= (vout - vin) * g_jump(t - wt[j]);
            }
            double off = c == 2 ? 0.1 : 0.0;
            worst = fmax(worst, fabs(fr_v3_get(true_pos(dev), c) - (xt + e + off)));
        }
    }
    ck_assert_msg(worst <= 1e-12, "worst %g", worst);
    unlink(p.traj.file);
    fr_device_close(dev);
}
END_TEST

/* Looping csv with orientation: the target interpolates (slerp) and wraps; a 6-DOF hand
 * holding still under a torque rests at angle |τ|/k_r. */
START_TEST(test_csv_orientation_and_torque)
{
    double a = 0.6; /* rad about z at t = 1 */
    char text[512];
    snprintf(text, sizeof text, "0,0,0,0,1,0,0,0\n1,0.02,0,0,%.17g,0,0,%.17g\n2,0,0,0,1,0,0,0\n",
             cos(a / 2), sin(a / 2));
    fr_virtual_params p = base_params();
    p.dof = 6;
    p.traj.type = FR_VTRAJ_CSV;
    snprintf(p.traj.file, sizeof p.traj.file, "%s", write_temp(text));
    p.traj.loop = true;
    fr_device *dev = open_dev(&p);
    fr_pose pose;
    fr_vec3 vel;
    fr_virtual_target(dev, 0.5, &pose, &vel);
    ck_assert_rel(pose.p.x, 0.01, 1e-14, 0);
    ck_assert_rel(vel.x, 0.02, 1e-14, 0);
    ck_assert_rel(fr_q_angle_between(pose.q, fr_q_identity()), a / 2, 1e-12, 0);
    fr_virtual_target(dev, 4.25, &pose, &vel); /* wraps: = t 0.25 */
    ck_assert_rel(pose.p.x, 0.005, 1e-12, 0);
    ck_assert_rel(fr_q_angle_between(pose.q, fr_q_identity()), a / 4, 1e-12, 0);
    fr_virtual_target(dev, 1.5, &pose, &vel);
    ck_assert_rel(vel.x, -0.02, 1e-14, 0);
    fr_device_close(dev);
    unlink(p.traj.file);

    /* rest under torque */
    p = base_params();
    p.dof = 6;
    p.traj.type = FR_VTRAJ_HOLD;
    p.traj.orientation = fr_q_axis_angle(fr_v3(1, 0, 0), 0.3);
    dev = open_dev(&p);
    ck_assert_int_eq(dev->desc.dof_forced, 6);
    fr_vec3 tau = fr_v3(0.1, -0.2, 0.25);
    fr_device_cmd c = {fr_v3_zero(), tau};
    for (int k = 0; k < 20000; k++) fr_device_write(dev, &c);
    fr_device_state s;
    fr_device_read(dev, &s);
    fr_quat want = fr_q_mul(fr_q_exp(fr_v3_scale(tau, 1.0 / p.hand.rot_stiffness)),
                            p.traj.orientation); /* k_r log(q_t q⁻¹) + τ = 0 */
    ck_assert_msg(fr_q_angle_between(s.pose.q, want) < 1e-9, "off by %g",
                  fr_q_angle_between(s.pose.q, want));
    ck_assert(fr_v3_norm(s.angvel) < 1e-9);
    fr_device_close(dev);
}
END_TEST

/* ------------------------------------------------------------------ the encoder */

START_TEST(test_quantisation_half_count)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_CIRCLE;
    p.traj.plane = FR_VPLANE_ZX;
    p.traj.center = fr_v3(0.003, -0.0071, 0.011);
    p.encoder.resolution = 1e-4;
    p.encoder.velocity = FR_VVEL_DIFFERENCE;
    p.encoder.velocity_cutoff = 0;
    const double q = p.encoder.resolution;
    fr_device *dev = open_dev(&p);
    frtest_rng rng = {3};
    fr_vec3 prev = fr_v3_zero();
    long differ = 0;
    for (int k = 0; k < 20000; k++) {
        fr_device_cmd c = {fr_v3(frtest_uniform(&rng, -2, 2), frtest_uniform(&rng, -2, 2),
                                 frtest_uniform(&rng, -2, 2)),
                           fr_v3_zero()};
        fr_device_write(dev, &c);
        fr_device_state s;
        fr_device_read(dev, &s);
        fr_vec3 x = true_pos(dev);
        for (int i = 0; i < 3; i++) {
            double rep = fr_v3_get(s.pose.p, i), tru = fr_v3_get(x, i);
            REQUIRE_MSG(fabs(rep - tru) <= 0.5 * q * (1 + 1e-9), "axis %d: %g vs %g", i, rep, tru);
            double counts = rep / q;
            REQUIRE_MSG(fabs(counts - round(counts)) < 1e-6, "not on a count: %.17g", counts);
            if (rep != tru) differ++;
        }
        if (k > 0) { /* difference velocity of the reported positions */
            fr_vec3 want = fr_v3_scale(fr_v3_sub(s.pose.p, prev), 1.0 / p.dt);
            REQUIRE_MSG(fr_v3_dist(s.vel, want) <= 1e-9 * fmax(1.0, fr_v3_norm(want)), "vel");
        }
        prev = s.pose.p;
    }
    ck_assert_int_gt(differ, 50000); /* the quantiser is active */
    fr_device_close(dev);
}
END_TEST

/* Latency N: the reported stream is the undelayed one shifted by exactly N writes. */
START_TEST(test_latency_exact)
{
    const int N = 7;
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_CIRCLE;
    p.encoder.resolution = 1e-5;
    p.encoder.velocity = FR_VVEL_DIFFERENCE;
    p.encoder.velocity_cutoff = 50;
    fr_device *d0 = open_dev(&p);
    p.encoder.latency = N;
    fr_device *dn = open_dev(&p);
    enum { T = 3000 };
    static fr_device_state s0[T], sn[T];
    frtest_rng rng = {11};
    for (int k = 0; k < T; k++) {
        fr_device_read(d0, &s0[k]);
        fr_device_read(dn, &sn[k]);
        fr_device_cmd c = {fr_v3(frtest_uniform(&rng, -1, 1), 0, frtest_uniform(&rng, -1, 1)),
                           fr_v3_zero()};
        fr_device_write(d0, &c);
        fr_device_write(dn, &c);
    }
    for (int k = 0; k < T; k++) {
        const fr_device_state *want = &s0[k >= N ? k - N : 0];
        REQUIRE_MSG(memcmp(&sn[k].pose, &want->pose, sizeof want->pose) == 0 &&
                        memcmp(&sn[k].vel, &want->vel, sizeof want->vel) == 0 &&
                        sn[k].seq == want->seq,
                    "tick %d", k);
    }
    ck_assert(memcmp(&s0[N].pose, &s0[N - 1].pose, sizeof s0[0].pose) != 0); /* it moves */
    fr_device_close(d0);
    fr_device_close(dn);
}
END_TEST

START_TEST(test_stale_status)
{
    fr_virtual_params p = base_params();
    fr_device *dev = open_dev(&p);
    fr_device_state s;
    fr_device_read(dev, &s);
    ck_assert_int_eq(s.status, FR_DEVICE_OK);
    fr_device_read(dev, &s);
    ck_assert_int_eq(s.status, FR_DEVICE_STALE);
    fr_device_write(dev, &ZERO);
    fr_device_read(dev, &s);
    ck_assert_int_eq(s.status, FR_DEVICE_OK);
    ck_assert_uint_eq(s.seq, 1);
    ck_assert(fr_virtual_time(dev) == p.dt);
    fr_device_close(dev);
}
END_TEST

/* ------------------------------------------------------------------ determinism and records */

typedef struct run_out {
    fr_device_state st[4000];
    fr_virtual_record rec[4000];
    fr_vec3 sent[4000];
} run_out;

/* A closed loop like the server's: read → wall force → safety chain → write, simulated time. */
static void closed_loop(run_out *o)
{
    fr_virtual_params p;
    fr_virtual_params_default(&p); /* quantisation, latency 1, filtered difference velocity */
    p.traj.type = FR_VTRAJ_CIRCLE;
    p.traj.plane = FR_VPLANE_ZX;
    p.traj.center = fr_v3(0, 0, 0.005);
    p.encoder.latency = 2;
    fr_device *dev = open_dev(&p);
    fr_safety s;
    fr_safety_params sp;
    fr_safety_params_default(&sp);
    sp.ramp_time = 0.2;
    ck_assert_int_eq(fr_safety_init(&s, &dev->desc, &sp, p.dt), FR_OK);
    for (int k = 0; k < 4000; k++) {
        uint64_t now = (uint64_t)k * 1000000u;
        fr_device_read(dev, &o->st[k]);
        double z = o->st[k].pose.p.z;
        fr_device_cmd c = {fr_v3(0, 0, z < 0 ? -2000.0 * z - 5.0 * o->st[k].vel.z : 0.0),
                           fr_v3_zero()};
        fr_safety_feed(&s, now);
        fr_device_cmd out;
        fr_safety_apply(&s, &c, now, &out);
        o->sent[k] = out.force;
        fr_device_write(dev, &out);
    }
    ck_assert_uint_eq(fr_virtual_record_count(dev), 4000);
    for (size_t i = 0; i < 4000; i++) fr_virtual_record_get(dev, i, &o->rec[i]);
    fr_device_close(dev);
}

START_TEST(test_deterministic_and_recorded)
{
    run_out *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    closed_loop(a);
    closed_loop(b);
    ck_assert(memcmp(a, b, sizeof *a) == 0); /* bit-identical */
    int pushed = 0;
    for (int k = 0; k < 4000; k++) {
        /* the recorded force is the one written, bit for bit, at its time */
        ck_assert(memcmp(&a->rec[k].force, &a->sent[k], sizeof(fr_vec3)) == 0);
        ck_assert(a->rec[k].t == k * 1e-3);
        if (a->sent[k].z > 0.5) pushed++;
    }
    ck_assert_int_gt(pushed, 100); /* the wall did push */
    free(a);
    free(b);
}
END_TEST

START_TEST(test_record_ring_and_csv)
{
    char dump[64];
    snprintf(dump, sizeof dump, "/tmp/fureru-vrec-%d.csv", (int)getpid());
    fr_virtual_params p = base_params();
    p.record.capacity = 100;
    snprintf(p.record.csv, sizeof p.record.csv, "%s", dump);
    fr_device *dev = open_dev(&p);
    frtest_rng rng = {17};
    static fr_device_cmd sent[250];
    for (int k = 0; k < 250; k++) {
        sent[k] = (fr_device_cmd){fr_v3(frtest_uniform(&rng, -9, 9), frtest_uniform(&rng, -9, 9),
                                        frtest_uniform(&rng, -9, 9)),
                                  fr_v3(frtest_uniform(&rng, -1, 1), 0, 0)};
        if (k == 200) sent[k].force.y = NAN;
        int err = fr_device_write(dev, &sent[k]);
        ck_assert_int_eq(err, k == 200 ? FR_ERR_NUMERIC : FR_OK);
    }
    ck_assert_uint_eq(fr_virtual_record_count(dev), 100);
    for (size_t i = 0; i < 100; i++) {
        fr_virtual_record r;
        ck_assert_int_eq(fr_virtual_record_get(dev, i, &r), FR_OK);
        ck_assert(memcmp(&r.force, &sent[150 + i].force, sizeof r.force) == 0);
        ck_assert(memcmp(&r.torque, &sent[150 + i].torque, sizeof r.torque) == 0);
    }
    fr_virtual_record r;
    ck_assert_int_eq(fr_virtual_record_get(dev, 100, &r), FR_ERR_RANGE);
    fr_virtual_stats st;
    fr_virtual_get_stats(dev, &st);
    ck_assert_uint_eq(st.writes, 250);
    ck_assert_uint_eq(st.nonfinite, 1);
    ck_assert_uint_eq(st.records_lost, 150);
    fr_device_close(dev); /* dumps */
    FILE *f = fopen(dump, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "t,fx,fy,fz,tx,ty,tz,x,y,z\n");
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        double v[10];
        char *s = line;
        for (int i = 0; i < 10; i++) {
            v[i] = strtod(s, &s);
            if (*s == ',') s++;
        }
        const fr_device_cmd *c = &sent[150 + n];
        ck_assert(v[0] == (150 + n) * p.dt);
        ck_assert(v[1] == c->force.x && (v[2] == c->force.y || (isnan(v[2]) && n == 50)) &&
                  v[3] == c->force.z && v[4] == c->torque.x);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 100);
    unlink(dump);
}
END_TEST

/* A NaN write is applied as zero force (and recorded as received). */
START_TEST(test_nonfinite_write_is_zero)
{
    fr_virtual_params p = base_params();
    p.traj.type = FR_VTRAJ_CIRCLE;
    fr_device *a = open_dev(&p), *b = open_dev(&p);
    fr_device_cmd bad = {fr_v3(NAN, 1, 1), fr_v3(0, INFINITY, 0)};
    for (int k = 0; k < 100; k++) {
        ck_assert_int_eq(fr_device_write(a, &bad), FR_ERR_NUMERIC);
        fr_device_write(b, &ZERO);
    }
    fr_vec3 xa = true_pos(a), xb = true_pos(b);
    ck_assert(memcmp(&xa, &xb, sizeof xa) == 0);
    fr_device_close(a);
    fr_device_close(b);
}
END_TEST

/* ------------------------------------------------------------------ real-time rules */

static fr_device *g_dev; /* test-only: for the signal handler */
static void on_sig(int sig)
{
    (void)sig;
    fr_device_set_minimum(g_dev);
}

START_TEST(test_no_alloc_no_lock)
{
    fr_virtual_params p;
    fr_virtual_params_default(&p);
    p.dof = 6;
    p.encoder.latency = 5;
    fr_device *dev = open_dev(&p);
    fr_safety s;
    fr_safety_params sp;
    fr_safety_params_default(&sp);
    ck_assert_int_eq(fr_safety_init(&s, &dev->desc, &sp, p.dt), FR_OK);
    g_dev = dev;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sig;
    sigaction(SIGUSR2, &sa, &old);
    bool watch = fri_watch_available();
    if (watch) {
        fri_watch_thread(pthread_self());
        fri_watch_arm();
    }
    for (int k = 0; k < 20000; k++) {
        fr_device_state st;
        fr_device_read(dev, &st);
        fr_device_cmd c = {fr_v3(0, 0, -st.pose.p.z * 100), fr_v3(0.01, 0, 0)};
        fr_safety_feed(&s, (uint64_t)k * 1000000u);
        fr_safety_write(&s, dev, &c, (uint64_t)k * 1000000u, NULL);
        if (k % 5000 == 0) fr_device_set_minimum(dev);
    }
    fri_watch_counts cnt = watch ? fri_watch_disarm() : (fri_watch_counts){0};
    raise(SIGUSR2);
    sigaction(SIGUSR2, &old, NULL);
    ck_assert_int_eq(cnt.allocs, 0);
    ck_assert_int_eq(cnt.frees, 0);
    ck_assert_int_eq(cnt.locks, 0);
    ck_assert_int_eq(cnt.waits, 0);
    ck_assert_int_eq(cnt.io, 0);
    fr_virtual_stats vs;
    fr_virtual_get_stats(dev, &vs);
    ck_assert_uint_eq(vs.minimum_calls, 5);
    ck_assert_uint_eq(vs.writes, 20000);
    fr_device_close(dev);
}
END_TEST

/* ------------------------------------------------------------------ open errors */

START_TEST(test_open_validation)
{
    fr_virtual_params p = base_params();
    fr_device *dev;
    fr_diag d;
    p.hand.mass = 0;
    ck_assert_int_eq(fr_virtual_open(&p, &dev, &d), FR_ERR_RANGE);
    ck_assert_str_eq(d.field, "hand.mass");
    p = base_params();
    p.dof = 6;
    p.hand.inertia = 1e-7;
    p.hand.rot_stiffness = 1.0;
    ck_assert_int_eq(fr_virtual_open(&p, &dev, &d), FR_ERR_RANGE);
    ck_assert_str_eq(d.field, "hand.rot_stiffness");
    /* a hand too fast for its exact step (docs: FRI_VHAND_MAX_RATE); the bound itself passes */
    p = base_params();
    p.hand.stiffness = 4.3e12;
    ck_assert_int_eq(fr_virtual_open(&p, &dev, &d), FR_ERR_RANGE);
    ck_assert_str_eq(d.field, "hand.stiffness");
    p = base_params();
    p.hand.mass = 1e-300;
    ck_assert_int_eq(fr_virtual_open(&p, &dev, &d), FR_ERR_RANGE);
    ck_assert_str_eq(d.field, "hand.stiffness");
    p = base_params();
    p.hand.stiffness = 0.999e8 * p.hand.mass / p.dt - p.hand.damping - 1.0;
    ck_assert_int_eq(fr_virtual_open(&p, &dev, &d), FR_OK);
    fr_device_close(dev);
    p = base_params();
    p.traj.type = FR_VTRAJ_LINE;
    p.traj.to = p.traj.from;
    ck_assert_int_eq(fr_virtual_open(&p, &dev, &d), FR_ERR_RANGE);
    ck_assert_str_eq(d.field, "trajectory.to");
    /* csv errors name the csv file, line, column and column name */
    p = base_params();
    p.traj.type = FR_VTRAJ_CSV;
    const char *bad[][2] = {{"t,x,y,z\n0,0,0,0\n1,0,zz,0\n", "3:5 y"},
                            {"0,0,0,0\n0,1,0,0\n", "2:1 t"},
                            {"0,0,0,0\n1,0,0\n", "2:1 row"},
                            {"0,0,0,0,1,0,0,0\n1,0,0,0,0,0,0,0\n", "2:1 qw"},
                            {"0,0,0,0\n", "1:1 row"},
                            {"0,0,0,0\n1,0,.5e999,0\n", "2:5 y"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(p.traj.file, sizeof p.traj.file, "%s", write_temp(bad[i][0]));
        int err = fr_virtual_open(&p, &dev, &d);
        ck_assert_int_lt(err, 0);
        char got[300];
        snprintf(got, sizeof got, "%d:%d %s", d.line, d.col, d.field);
        ck_assert_msg(strcmp(got, bad[i][1]) == 0, "case %zu: got %s (%s), want %s", i, got, d.msg,
                      bad[i][1]);
        ck_assert_str_eq(d.file, p.traj.file);
        unlink(p.traj.file);
    }
}
END_TEST

static Suite *virtual_suite(void)
{
    Suite *s = suite_create("virtual");
    TCase *tc = tcase_create("hand");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hold_free_response);
    tcase_add_test(tc, test_constant_force_displacement);
    tcase_add_test(tc, test_line_follows);
    tcase_add_test(tc, test_circle_follows);
    tcase_add_test(tc, test_poke_follows);
    tcase_add_test(tc, test_csv_follows);
    tcase_add_test(tc, test_csv_orientation_and_torque);
    suite_add_tcase(s, tc);
    tc = tcase_create("encoder");
    tcase_add_test(tc, test_quantisation_half_count);
    tcase_add_test(tc, test_latency_exact);
    tcase_add_test(tc, test_stale_status);
    suite_add_tcase(s, tc);
    tc = tcase_create("runs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_deterministic_and_recorded);
    tcase_add_test(tc, test_record_ring_and_csv);
    tcase_add_test(tc, test_nonfinite_write_is_zero);
    tcase_add_test(tc, test_no_alloc_no_lock);
    tcase_add_test(tc, test_open_validation);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(virtual_suite)
