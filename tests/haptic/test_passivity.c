/* src/haptic passivity: the Colgate–Schenkel bound, the Hannaford–Ryu observer/controller
 * recurrences by hand, and a simulated 1-DOF device (mass, physical damping, zero-order hold at
 * T = 1 ms, encoder quantisation Δ = 1.7e-5 m) held by a modelled hand against a sampled wall
 * F = −K x − B (x_k − x_{k−1})/T, with energies integrated in continuous time.
 *
 * Hand model (stated): the hand's mass is rigidly on the handle (included in m = 0.2 kg); the arm
 * is a spring k_h = 200 N/m and damper b_h = 0.3 N·s/m to a reference x_r(t) that moves from
 * 2 mm outside the wall at 24 mm/s for 0.5 s and then holds 10 mm inside it (a light grip pushing
 * with ≈ 2 N). Device: m = 0.2 kg, b = 1 N·s/m. Wall damping B = 0.2 N·s/m, so
 * K_max = 2(b − |B|)/T = 1600 N/m. Continuous dynamics between samples by RK4 with 50 substeps
 * (ω h ≤ 0.01, error far below the quantities asserted). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/coupling.h"

#define REQUIRE_MSG(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) ck_assert_msg(cond, __VA_ARGS__);                                             \
    } while (0)

static const double T = 1e-3;       /* s */
static const double QUANT = 1.7e-5; /* m per count */

/* ------------------------------------------------------------------ Colgate–Schenkel */

START_TEST(test_kmax)
{
    ck_assert_double_eq_tol(fr_passivity_kmax(1.0, 0.0, 1e-3), 2000.0, 1e-9);
    ck_assert_double_eq_tol(fr_passivity_kmax(1.0, -0.2, 1e-3), 1600.0, 1e-9);
    ck_assert_double_eq(fr_passivity_kmax(1.0, 1.5, 1e-3), 0.0);
    ck_assert(isnan(fr_passivity_kmax(1.0, 0.0, 0.0)));
    ck_assert(isnan(fr_passivity_kmax(NAN, 0.0, 1e-3)));
    frtest_rng r = {31};
    for (int i = 0; i < 10000; i++) {
        double b = frtest_uniform(&r, 0.01, 10), B = frtest_uniform(&r, -b, b);
        double Ts = pow(10, frtest_uniform(&r, -4, -2));
        double K = fr_passivity_kmax(b, B, Ts);
        /* b = K T/2 + |B| at the bound */
        ck_assert_rel(K * Ts / 2 + fabs(B), b, 1e-12, 1e-12);
        ck_assert(fr_passivity_colgate(K * (1 - 1e-9), B, b, Ts));
        ck_assert(!fr_passivity_colgate(K * (1 + 1e-9), B, b, Ts));
    }
}
END_TEST

/* ------------------------------------------------------------------ the recurrences by hand */

static fr_passivity po_make(int mode, double amax)
{
    fr_passivity po;
    fr_passivity_params p = {T, amax, mode};
    ck_assert_int_eq(fr_passivity_init(&po, &p), FR_OK);
    return po;
}

START_TEST(test_recurrences_by_hand)
{
    /* a short script of displacements and environment forces, booked by hand in each mode */
    const fr_vec3 dx[] = {
        {1e-4, 0, 0}, {2e-4, 1e-4, 0}, {-3e-4, 0, 0}, {0, 0, 0}, {-1e-4, 0, 2e-5}};
    const fr_vec3 fe[] = {{-1, 0, 0}, {2, 0.5, 0}, {3, 0, 0}, {-0.5, 0, 0}, {4, 0, -1}};
    const double amax = 5.0;
    for (int mode = 0; mode < 3; mode++) {
        fr_passivity po = po_make(mode, amax);
        double E = 0, alpha = 0;
        fr_vec3 vprev = fr_v3_zero(), feprev = fr_v3_zero(), foprev = fr_v3_zero();
        for (int n = 0; n < 5; n++) {
            fr_vec3 v = fr_v3_scale(dx[n], 1 / T);
            double credit = T * alpha * fr_v3_norm2(vprev);
            if (mode == FR_PASSIVITY_LITERAL) E += -T * fr_v3_dot(fe[n], v) + credit;
            if (mode == FR_PASSIVITY_ZOH) E += -T * fr_v3_dot(feprev, v) + credit;
            if (mode == FR_PASSIVITY_MEASURED) E += -T * fr_v3_dot(foprev, v);
            alpha = 0;
            if (E < 0) {
                double v2 = fr_v3_norm2(v);
                alpha = v2 > 0 ? fmin(amax, -E / (T * v2)) : amax;
            }
            fr_vec3 want = fr_v3_sub(fe[n], fr_v3_scale(v, alpha));
            fr_vec3 f = fe[n];
            fr_passivity_step(&po, dx[n], &f);
            ck_assert_rel(po.E, E, 1e-12, 1e-15);
            ck_assert_rel(po.alpha, alpha, 1e-12, 1e-15);
            for (int a = 0; a < 3; a++)
                ck_assert_rel(fr_v3_get(f, a), fr_v3_get(want, a), 1e-12, 1e-12);
            vprev = v;
            feprev = fe[n];
            foprev = want;
        }
        ck_assert_int_eq(po.stats.ticks, 5);
    }
}
END_TEST

START_TEST(test_small_velocity_and_nonfinite)
{
    /* α_max small enough that the debt is not repaid at once */
    fr_passivity po = po_make(FR_PASSIVITY_ZOH, 0.5);
    fr_vec3 f = fr_v3(-2, 0, 0);
    fr_passivity_step(&po, fr_v3(1e-3, 0, 0), &f); /* F_e = −2 held next */
    f = fr_v3(-2, 0, 0);
    fr_passivity_step(&po, fr_v3(-1e-3, 0, 0), &f); /* moved back under it: E = −2e-3 J */
    ck_assert_rel(po.E, -2e-3, 1e-12, 0);
    /* |v| → 0 with a debt: α = α_max, no division, no force from it */
    for (double d = 1e-9; d > 1e-320; d *= 1e-30) {
        f = fr_v3(0.5, 0, 0);
        int fl = fr_passivity_step(&po, fr_v3(d, 0, 0), &f);
        ck_assert(fl & FR_PASSIVITY_CAPPED);
        ck_assert_double_eq(po.alpha, 0.5);
        ck_assert(po.E < 0);
        ck_assert(isfinite(f.x) && fabs(f.x - 0.5) <= 0.5 * d / T + DBL_EPSILON);
    }
    f = fr_v3(0.5, 0, 0);
    fr_passivity_step(&po, fr_v3_zero(), &f);
    ck_assert(f.x == 0.5 && po.alpha == 0.5);
    /* non-finite input: nothing booked, force passed through, state finite */
    double E = po.E;
    f = fr_v3(1, 0, 0);
    int fl = fr_passivity_step(&po, fr_v3(NAN, 0, 0), &f);
    ck_assert(fl == FR_PASSIVITY_NONFINITE && po.E == E && f.x == 1 && po.alpha == 0);
    f = fr_v3(INFINITY, 0, 0);
    fl = fr_passivity_step(&po, fr_v3(1e-4, 0, 0), &f);
    ck_assert(fl == FR_PASSIVITY_NONFINITE && po.E == E);
    ck_assert(fr_v3_isfinite(po.fe_prev) && fr_v3_isfinite(po.fout_prev));
    /* huge but finite products keep the books finite */
    f = fr_v3(DBL_MAX, 0, 0);
    fr_passivity_step(&po, fr_v3(1e300, 0, 0), &f);
    f = fr_v3(DBL_MAX, 0, 0);
    fr_passivity_step(&po, fr_v3(-1e300, 0, 0), &f);
    ck_assert(isfinite(po.E));
    ck_assert_int_eq(po.stats.nonfinite, 2);
    fr_passivity_reset(&po);
    ck_assert(po.E == 0 && po.alpha == 0);
    fr_passivity_params bad = {0, 1, 0};
    ck_assert_int_eq(fr_passivity_init(&po, &bad), FR_ERR_RANGE);
    bad = (fr_passivity_params){T, -1, 0};
    ck_assert_int_eq(fr_passivity_init(&po, &bad), FR_ERR_RANGE);
    bad = (fr_passivity_params){T, 1, 7};
    ck_assert_int_eq(fr_passivity_init(&po, &bad), FR_ERR_RANGE);
}
END_TEST

START_TEST(test_commit_books_what_was_rendered)
{
    /* the safety chain scaled the output to 40 %: ZOH books that tick as measured */
    fr_passivity po = po_make(FR_PASSIVITY_ZOH, 5.0);
    fr_vec3 f = fr_v3(3, 0, 0);
    fr_passivity_step(&po, fr_v3(1e-4, 0, 0), &f);
    fr_passivity_commit(&po, fr_v3_scale(f, 0.4));
    double E0 = po.E;
    f = fr_v3(3, 0, 0);
    fr_passivity_step(&po, fr_v3(2e-4, 0, 0), &f);
    ck_assert_rel(po.E - E0, -T * 0.4 * 3 * 0.2, 1e-12, 0);
    /* an unaltered commit changes nothing */
    fr_passivity q = po_make(FR_PASSIVITY_ZOH, 5.0), q2 = q;
    fr_vec3 a = fr_v3(3, 0, 0), b = a;
    fr_passivity_step(&q, fr_v3(1e-4, 0, 0), &a);
    fr_passivity_step(&q2, fr_v3(1e-4, 0, 0), &b);
    fr_passivity_commit(&q2, b);
    a = b = fr_v3(3, 1, 0);
    fr_passivity_step(&q, fr_v3(-2e-4, 0, 0), &a);
    fr_passivity_step(&q2, fr_v3(-2e-4, 0, 0), &b);
    ck_assert(q.E == q2.E && a.x == b.x);
}
END_TEST

/* ------------------------------------------------------------------ the simulated device */

typedef struct sim {
    double m, b, kh, bh; /* device + hand mass, physical damping, arm spring and damper */
    double x, v;         /* m, m/s (continuous) */
    double Win;          /* J: ∫ F_hand v dt, energy the hand put into the device port */
    double Wact;         /* J: ∫ F_act v dt, work of the actuator (> 0: the wall generated) */
} sim;

static double ref_x(double t)
{
    return t < 0.5 ? -0.002 + 0.024 * t : 0.010;
}
static double ref_v(double t)
{
    return t < 0.5 ? 0.024 : 0.0;
}

static void deriv(const sim *s, const double *y, double F, double t, double *d)
{
    double Fh = s->kh * (ref_x(t) - y[0]) + s->bh * (ref_v(t) - y[1]);
    d[0] = y[1];
    d[1] = (F - s->b * y[1] + Fh) / s->m;
    d[2] = Fh * y[1];
    d[3] = F * y[1];
}

/* One sample period with the force F held (zero-order hold). */
static void sim_tick(sim *s, double t0, double F)
{
    const int sub = 50;
    const double h = T / sub;
    double y[4] = {s->x, s->v, s->Win, s->Wact};
    for (int k = 0; k < sub; k++) {
        double t = t0 + k * h, k1[4], k2[4], k3[4], k4[4], z[4];
        deriv(s, y, F, t, k1);
        for (int i = 0; i < 4; i++) z[i] = y[i] + 0.5 * h * k1[i];
        deriv(s, z, F, t + 0.5 * h, k2);
        for (int i = 0; i < 4; i++) z[i] = y[i] + 0.5 * h * k2[i];
        deriv(s, z, F, t + 0.5 * h, k3);
        for (int i = 0; i < 4; i++) z[i] = y[i] + h * k3[i];
        deriv(s, z, F, t + h, k4);
        for (int i = 0; i < 4; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    s->x = y[0];
    s->v = y[1];
    s->Win = y[2];
    s->Wact = y[3];
}

static double encoder(double x)
{
    return QUANT * floor(x / QUANT);
}

typedef struct run_result {
    double Win_min, Win_end, Wact_end, Wact_half; /* J */
    double vmax_early, vmax_late;                 /* m/s in [1, 2] s and the last 2 s */
    double xmax;                                  /* m, max |x| after the approach */
    double E_min;                                 /* J, observer */
    double eps;      /* J: largest single-interval |T F_e(n−1)·v(n)| */
    double post_min; /* J: min over uncapped ticks of E(n) + T α(n) v(n)² */
    long capped;
} run_result;

/* Device of `s` against the wall (K, B) for `secs`; mode < 0: no passivity controller. */
static run_result run_wall(double K, double B, int mode, double amax, double secs)
{
    sim s = {0.2, 1.0, 200.0, 0.3, -0.002, 0.0, 0.0, 0.0};
    fr_passivity po;
    if (mode >= 0) po = po_make(mode, amax);
    run_result r;
    memset(&r, 0, sizeof r);
    r.post_min = INFINITY;
    double xq_prev = encoder(s.x), fe_prev = 0;
    const long N = lround(secs / T);
    for (long n = 0; n < N; n++) {
        double t = n * T, xq = encoder(s.x), d = xq - xq_prev, v = d / T;
        /* the wall: F = −K x − B (x_k − x_{k−1})/T inside, 0 outside */
        double fe = xq > 0 ? -K * xq - B * v : 0.0;
        double F = fe;
        if (mode >= 0) {
            r.eps = fmax(r.eps, fabs(T * fe_prev * v));
            fr_vec3 f = fr_v3(fe, 0, 0);
            int fl = fr_passivity_step(&po, fr_v3(d, 0, 0), &f);
            F = f.x;
            r.E_min = fmin(r.E_min, po.E);
            if (!(fl & FR_PASSIVITY_CAPPED))
                r.post_min = fmin(r.post_min, po.E + T * po.alpha * v * v);
            else
                r.capped++;
        }
        fe_prev = fe;
        xq_prev = xq;
        sim_tick(&s, t, F);
        if (t >= 1.0 && t < 2.0) r.vmax_early = fmax(r.vmax_early, fabs(s.v));
        if (t >= secs - 2.0) r.vmax_late = fmax(r.vmax_late, fabs(s.v));
        if (t >= 0.5) r.xmax = fmax(r.xmax, fabs(s.x));
        r.Win_min = fmin(r.Win_min, s.Win);
        if (n == N / 2) r.Wact_half = s.Wact;
    }
    r.Win_end = s.Win;
    r.Wact_end = s.Wact;
    return r;
}

START_TEST(test_wall_below_kmax_is_passive)
{
    const double b = 1.0, B = 0.2, Kmax = fr_passivity_kmax(b, B, T);
    ck_assert_double_eq_tol(Kmax, 1600.0, 1e-9);
    run_result r = run_wall(0.9 * Kmax, B, -1, 0, 20.0);
    /* the hand never gets net energy out of the device (it started at rest, nothing stored) */
    ck_assert_msg(r.Win_min >= -1e-12, "energy delivered to the hand: %g J", -r.Win_min);
    /* the wall absorbed energy overall */
    ck_assert(r.Wact_end <= 0);
    /* the contact oscillation decays to the quantisation floor: below one count per 10 ticks */
    ck_assert_msg(r.vmax_late < 0.1 * QUANT / T, "late |v| %g", r.vmax_late);
    ck_assert(r.vmax_late < r.vmax_early);
}
END_TEST

START_TEST(test_wall_above_kmax_generates_energy)
{
    const double B = 0.2, Kmax = fr_passivity_kmax(1.0, B, T);
    ck_assert(!fr_passivity_colgate(3 * Kmax, B, 1.0, T));
    run_result r = run_wall(3 * Kmax, B, -1, 0, 20.0);
    /* a sustained oscillation fed by the wall: the actuator produced net energy, in both halves
     * of the run, and the device pushed energy into the hand */
    ck_assert_msg(r.Wact_half > 0.05 && r.Wact_end - r.Wact_half > 0.05, "Wact %g, %g", r.Wact_half,
                  r.Wact_end);
    ck_assert_msg(r.Win_end < -0.02, "Win %g", r.Win_end);
    ck_assert(r.vmax_late > 0.05);
}
END_TEST

START_TEST(test_literal_observer_is_blind)
{
    /* Hannaford–Ryu as written sees a spring-damper wall as
     * E(n) = ½K x_n² + (K/2 + B/T) Σ Δx_k² ≥ 0 however much the wall generates: it never acts. */
    const double B = 0.2, K = 3 * fr_passivity_kmax(1.0, B, T);
    fr_passivity po = po_make(FR_PASSIVITY_LITERAL, 20.0);
    sim s = {0.2, 1.0, 200.0, 0.3, 0.0, 0.0, 0.0, 0.0}; /* at the surface, nothing stored */
    double xq_prev = encoder(s.x), sumd2 = 0, x0 = xq_prev;
    long n = 0;
    for (; n < 5000 && s.Wact < 0.01; n++) { /* until the wall has generated 10 mJ */
        double xq = encoder(s.x), d = xq - xq_prev, v = d / T;
        double fe = -K * xq - B * v; /* bilateral spring: the identity needs no contact switching */
        fr_vec3 f = fr_v3(fe, 0, 0);
        fr_passivity_step(&po, fr_v3(d, 0, 0), &f);
        sumd2 += d * d;
        double want = 0.5 * K * (xq * xq - x0 * x0) + (K / 2 + B / T) * sumd2;
        REQUIRE_MSG(fabs(po.E - want) <= 1e-9 * (fabs(want) + 0.5 * K * x0 * x0),
                    "tick %ld: E %.17g vs %.17g", n, po.E, want);
        REQUIRE_MSG(po.alpha == 0 && f.x == fe, "the literal controller acted at %ld", n);
        xq_prev = xq;
        sim_tick(&s, 1.0 + n * T, f.x); /* reference held at 10 mm */
    }
    ck_assert_msg(s.Wact >= 0.01, "the wall did generate energy: %g J in %ld ticks", s.Wact, n);
}
END_TEST

START_TEST(test_controller_keeps_books_and_bounds_motion)
{
    const double B = 0.2, Kmax = fr_passivity_kmax(1.0, B, T), amax = 20.0;
    const double mult[] = {3.0, 10.0};
    for (int i = 0; i < 2; i++) {
        double K = mult[i] * Kmax;
        run_result off = run_wall(K, B, -1, 0, 20.0);
        run_result zoh = run_wall(K, B, FR_PASSIVITY_ZOH, amax, 20.0);
        /* books: after the controller's planned dissipation the energy is never negative, and
         * before it never below one interval's exchange ε = max T|F_e(n−1) v(n)| */
        ck_assert_msg(zoh.post_min >= -1e-15, "K %g: E + Tαv² = %g", K, zoh.post_min);
        ck_assert_msg(zoh.E_min >= -zoh.eps, "K %g: E_min %g < −ε = %g", K, zoh.E_min, -zoh.eps);
        ck_assert_msg(zoh.eps < 1e-3 * off.Wact_end, "ε %g", zoh.eps);
        /* motion bounded and far below the uncontrolled oscillation */
        ck_assert_msg(zoh.vmax_late < 0.2 * off.vmax_late, "K %g: |v| %g vs %g", K, zoh.vmax_late,
                      off.vmax_late);
        ck_assert(zoh.xmax < 0.02);
        /* the energy the wall generated is a small fraction of the uncontrolled one */
        ck_assert_msg(zoh.Wact_end < 0.02 * off.Wact_end, "K %g: Wact %g vs %g", K, zoh.Wact_end,
                      off.Wact_end);

        /* measured books: the hand never gets net energy out of the device */
        run_result mea = run_wall(K, B, FR_PASSIVITY_MEASURED, amax, 20.0);
        ck_assert_msg(mea.Win_min >= -1e-9, "K %g: measured mode delivered %g J", K, -mea.Win_min);
        ck_assert(mea.vmax_late < 0.2 * off.vmax_late && mea.xmax < 0.02);
    }
}
END_TEST

START_TEST(test_coupling_renders_a_stiff_world_wall_passively)
{
    /* Virtual coupling: a proxy of 50 g in a world wall of k_w = κ m_p/dt² = 25 000 N/m
     * (15 × K_max, explicit penalty as the world computes it) felt through a coupling with
     * K_c = 0.8 K_max, B_c = B: the device sees at most K_c and stays passive; the steady force
     * over the device's penetration is the series stiffness 1/(1/K_c + 1/k_w). Rendering the same
     * wall directly on the device generates energy. Order per tick as the server's. */
    const double b = 1.0, Bc = 0.2, Kmax = fr_passivity_kmax(b, Bc, T), Kc = 0.8 * Kmax;
    const double mp = 0.05, kw = 0.5 * mp / (T * T), dw = 0.3 * mp / T;
    fr_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.dof_sensed = desc.dof_forced = 3;
    desc.max_force = 10;
    desc.max_stiffness = Kc;
    desc.max_damping = Bc;
    fr_coupling_params cpp;
    fr_coupling_params_default(&cpp, &desc);
    cpp.stiffness = Kc;
    cpp.damping = Bc;
    fr_coupling cp;
    ck_assert_int_eq(fr_coupling_init(&cp, &cpp, &desc, T), FR_OK);
    sim s = {0.2, b, 200.0, 0.3, -0.002, 0.0, 0.0, 0.0};
    fr_vec3 xb = fr_v3(s.x, 0, 0), vb = fr_v3_zero();
    double xq_prev = encoder(s.x), Fsum = 0, xsum = 0, xtrue = 0;
    int nsum = 0;
    const long N = 20000;
    for (long n = 0; n < N; n++) {
        double t = n * T, xq = encoder(s.x);
        fr_device_state ds;
        memset(&ds, 0, sizeof ds);
        ds.pose = (fr_pose){fr_v3(xq, 0, 0), fr_q_identity()};
        ds.vel = fr_v3((xq - xq_prev) / T, 0, 0);
        xq_prev = xq;
        fr_pose pb = {xb, fr_q_identity()};
        ck_assert_int_eq(fr_coupling_update(&cp, &ds, &pb), 0);
        /* the world: the wall's penalty force from the state at the start of the step */
        fr_vec3 Fo = fr_v3_zero();
        if (xb.x > 0) Fo.x = -kw * xb.x - dw * vb.x;
        fr_coupling_body body;
        memset(&body, 0, sizeof body);
        body.mass = mp;
        body.vel = vb;
        body.force = Fo;
        fr_vec3 Fc;
        fr_coupling_solve(&cp.drive, T, &body, &Fc, NULL, NULL, NULL);
        vb = fr_v3_mad(vb, T / mp, fr_v3_add(Fo, Fc));
        xb = fr_v3_mad(xb, T, vb);
        fr_device_cmd cmd;
        ck_assert_int_eq(fr_coupling_output(&cp, vb, fr_v3_zero(), &cmd), 0);
        REQUIRE_MSG(cmd.force.x == -cp.proxy_force.x, "not opposite at %ld", n);
        sim_tick(&s, t, cmd.force.x);
        REQUIRE_MSG(s.Win >= -1e-9, "t %g: the device delivered %g J", t, -s.Win);
        if (t >= N * T - 2.0) {
            Fsum += -cmd.force.x;
            xsum += xq;
            xtrue += s.x;
            nsum++;
        }
    }
    /* steady state: the hand's ≈ 2 N over the device's penetration */
    double F = Fsum / nsum, x = xsum / nsum, Keff = 1.0 / (1.0 / Kc + 1.0 / kw);
    ck_assert(F > 1.0);
    ck_assert_rel(F / x, Keff, 1e-6, 0); /* at rest: exact up to the last counts' motion */
    ck_assert(Keff < Kc);
    ck_assert_rel(F / (xtrue / nsum), Keff, QUANT / (xtrue / nsum), 0);
    /* the same stiffness rendered directly (with the coupling's damping): energy generated */
    run_result direct = run_wall(kw, Bc, -1, 0, 5.0);
    ck_assert_msg(direct.Wact_end > 0.05, "direct wall: %g J", direct.Wact_end);
}
END_TEST

/* A sensor that reports the motion `lat` ticks late (transport, filtering): a lightly damped hand
 * (m = 0.15 kg, b = 0.05 N·s/m, arm spring 1000 N/m to the reference 10 mm inside) against a
 * stiff sampled wall (K = 3000 N/m, B = 0.001 N·s/m) with the output capped at 10 N, as the
 * safety chain does (the cap committed to the observer). `told`: the delay the observer is given
 * (−1: no controller). The new user's trial: a 23 Hz limit cycle at the cap, the hand receiving
 * joules, with the observer pairing each force with a motion made before it was held. */
typedef struct delay_result {
    double Win_min, Win_end;      /* J: energy the hand put into the port (< 0: received) */
    double vrms_early, vrms_late; /* m/s over [1, 2] s and the last second */
    long active;
} delay_result;

static delay_result run_delayed(int lat, int told, double secs)
{
    sim s = {0.15, 0.05, 1000.0, 0.0, -0.002, 0.0, 0.0, 0.0};
    const double K = 3000.0, B = 0.001, cap = 10.0;
    fr_passivity po;
    if (told >= 0) {
        fr_passivity_params p = {T, 20.0, FR_PASSIVITY_ZOH, told};
        ck_assert_int_eq(fr_passivity_init(&po, &p), FR_OK);
    }
    delay_result r;
    memset(&r, 0, sizeof r);
    double hist[FR_PASSIVITY_MAX_DELAY + 1];
    for (int i = 0; i <= lat; i++) hist[i] = encoder(s.x);
    double xq_prev = hist[0], se = 0, sl = 0;
    long ne = 0, nl = 0;
    const long N = lround(secs / T);
    for (long n = 0; n < N; n++) {
        double t = n * T;
        for (int i = lat; i > 0; i--) hist[i] = hist[i - 1];
        hist[0] = encoder(s.x);
        double xq = hist[lat], d = xq - xq_prev, v = d / T; /* the motion lat ticks ago */
        double F = xq > 0 ? -K * xq - B * v : 0.0;
        if (told >= 0) {
            fr_vec3 f = fr_v3(F, 0, 0);
            if (fr_passivity_step(&po, fr_v3(d, 0, 0), &f) & FR_PASSIVITY_ACTIVE) r.active++;
            F = f.x;
        }
        F = fmax(-cap, fmin(cap, F));
        if (told >= 0) fr_passivity_commit(&po, fr_v3(F, 0, 0));
        xq_prev = xq;
        sim_tick(&s, t, F);
        r.Win_min = fmin(r.Win_min, s.Win);
        if (t >= 1.0 && t < 2.0) se += s.v * s.v, ne++;
        if (t >= secs - 1.0) sl += s.v * s.v, nl++;
    }
    r.Win_end = s.Win;
    r.vrms_early = sqrt(se / ne);
    r.vrms_late = sqrt(sl / nl);
    return r;
}

START_TEST(test_delayed_sensor)
{
    for (int lat = 1; lat <= 3; lat++) {
        delay_result off = run_delayed(lat, -1, 5.0), blind = run_delayed(lat, 0, 5.0),
                     on = run_delayed(lat, lat, 5.0);
        /* the loop generates: joules into the hand, the oscillation grows */
        ck_assert_msg(off.Win_min < -0.5 && off.vrms_late > off.vrms_early, "lat %d: off %g J", lat,
                      off.Win_min);
        /* an observer that pairs the force with a motion made before it was held does not see
         * it (the trial's controller: on a few ticks, the hand still gets joules) */
        ck_assert_msg(blind.Win_min < -1.0 && blind.vrms_late > 1.0, "lat %d: blind %g J, %g m/s",
                      lat, blind.Win_min, blind.vrms_late);
        /* paired across the delay: the hand never gets more than quantisation's few mJ (the
         * books' error, docs/haptics.md "Quantisation"), and the oscillation decays */
        ck_assert_msg(on.Win_min > -0.02, "lat %d: the hand received %g J", lat, -on.Win_min);
        ck_assert_msg(on.vrms_late < 0.2 && on.vrms_late < on.vrms_early &&
                          on.vrms_late < 0.05 * blind.vrms_late,
                      "lat %d: rms |v| %g then %g m/s", lat, on.vrms_early, on.vrms_late);
    }
    /* the delay from the device's declared latency: whole ticks, rounded up, capped */
    fr_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.max_damping = 20;
    fr_passivity_params p;
    const double lats[] = {0, 1e-3, 1e-3 * (1 + 1e-9), 1.5e-3, 2e-3, 1.0, -1, NAN};
    const int want[] = {0, 1, 1, 2, 2, FR_PASSIVITY_MAX_DELAY, 0, 0};
    for (int i = 0; i < 8; i++) {
        desc.latency = lats[i];
        fr_passivity_params_default(&p, &desc, T);
        ck_assert_msg(p.delay == want[i], "latency %g: delay %d", lats[i], p.delay);
    }
    fr_passivity po;
    p.delay = -1;
    ck_assert_int_eq(fr_passivity_init(&po, &p), FR_ERR_RANGE);
    p.delay = FR_PASSIVITY_MAX_DELAY + 1;
    ck_assert_int_eq(fr_passivity_init(&po, &p), FR_ERR_RANGE);
}
END_TEST

/* A poke through a late sensor at a long tick (the simulated hand at world.dt 5 ms: its 1-write
 * latency is 5 ms). The hand (mass m, arm spring kh and damper bh to a reference that pokes
 * 17 mm into the wall and back every P s, no device damping) against a one-sided sampled
 * coupling F = min(0, −K x_q − B v_q) on the reported position x_q (L ticks old, encoder counts
 * of 1.66555e-5 m) and the reported velocity v_q (its difference), capped at 10 N: the proxy
 * in contact with a rigid world pushes, it does not pull. `told`: the delay given to the
 * observer (−1: no controller). Continuous hand between samples (RK4, 50 substeps). */
typedef struct poke_cfg {
    double Ts, m, kh, bh, K, B, P;
    int lat;
} poke_cfg;
typedef struct poke_result {
    double got[8]; /* J: energy the hand received in each poke (> 0: the port gave it energy) */
    double dF_rms; /* N: rms change of the output per tick */
    double vrms;   /* m/s over the last poke */
    double books;  /* max over ticks of |E(n) + what the hand received until the reported
                      motion's end| minus the quantisation bound Δ(|F| + Σ|ΔF|): ≤ 0 if exact */
    long active, pushes; /* ticks with the controller on; ticks its output left [0, F_e] */
} poke_result;

static double poke_ref(const poke_cfg *c, double t, double *v)
{
    const double w = 2 * M_PI / c->P, A = 0.0145;
    *v = A * w * sin(w * t);
    return -0.012 + A * (1 - cos(w * t));
}

static void poke_deriv(const poke_cfg *c, const double *y, double F, double t, double *d)
{
    double vr, xr = poke_ref(c, t, &vr);
    double Fh = c->kh * (xr - y[0]) + c->bh * (vr - y[1]);
    d[0] = y[1];
    d[1] = (F + Fh) / c->m;
    d[2] = F * y[1]; /* power the port gives the hand */
}

static poke_result run_poke(const poke_cfg *c, int told, int npokes)
{
    fr_passivity po;
    if (told >= 0) {
        fr_passivity_params p = {c->Ts, 19.0, FR_PASSIVITY_ZOH, told};
        ck_assert_int_eq(fr_passivity_init(&po, &p), FR_OK);
    }
    poke_result r;
    memset(&r, 0, sizeof r);
    const double q = 1.66555e-5, cap = 10.0;
    double y[3] = {-0.012, 0, 0}, hist[FR_PASSIVITY_MAX_DELAY + 1];
    for (int i = 0; i <= c->lat; i++) hist[i] = q * floor(y[0] / q + 0.5);
    double xq_prev = hist[0], F_prev = 0, sd = 0, sv = 0, got_prev = 0, var = 0;
    double wr[FR_PASSIVITY_MAX_DELAY + 2] = {0}; /* received by the end of ticks n−1, n−2, … */
    r.books = -INFINITY;
    long nd = 0, nv = 0;
    const long N = lround(npokes * c->P / c->Ts), per = lround(c->P / c->Ts);
    for (long n = 0; n < N; n++) {
        const double t = n * c->Ts;
        for (int i = c->lat; i > 0; i--) hist[i] = hist[i - 1];
        hist[0] = q * floor(y[0] / q + 0.5);
        const double xq = hist[c->lat], d = xq - xq_prev, vq = d / c->Ts;
        double F = fmin(0.0, -c->K * xq - c->B * vq);
        if (told >= 0) {
            fr_vec3 f = fr_v3(F, 0, 0);
            if (fr_passivity_step(&po, fr_v3(d, 0, 0), &f) & FR_PASSIVITY_ACTIVE) r.active++;
            /* the late-sensor controller only takes F_e towards zero (to the projection's
             * rounding) */
            if (told > 0 && !(f.x * F >= -1e-12 * F * F && fabs(f.x) <= fabs(F))) r.pushes++;
            F = f.x;
            /* E(n) books the ticks up to n−1−told, whose motion has been reported */
            if (n > told) r.books = fmax(r.books, fabs(po.E + wr[told]) - q * (var + cap));
        }
        F = fmax(-cap, fmin(cap, F));
        if (told >= 0) fr_passivity_commit(&po, fr_v3(F, 0, 0));
        xq_prev = xq;
        sd += (F - F_prev) * (F - F_prev), nd++;
        var += fabs(F - F_prev);
        F_prev = F;
        const int sub = 50;
        const double h = c->Ts / sub;
        for (int k = 0; k < sub; k++) {
            double tk = t + k * h, k1[3], k2[3], k3[3], k4[3], z[3];
            poke_deriv(c, y, F, tk, k1);
            for (int i = 0; i < 3; i++) z[i] = y[i] + 0.5 * h * k1[i];
            poke_deriv(c, z, F, tk + 0.5 * h, k2);
            for (int i = 0; i < 3; i++) z[i] = y[i] + 0.5 * h * k2[i];
            poke_deriv(c, z, F, tk + 0.5 * h, k3);
            for (int i = 0; i < 3; i++) z[i] = y[i] + h * k3[i];
            poke_deriv(c, z, F, tk + h, k4);
            for (int i = 0; i < 3; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
        }
        for (int i = FR_PASSIVITY_MAX_DELAY + 1; i > 0; i--) wr[i] = wr[i - 1];
        wr[0] = y[2];
        if (n >= N - per) sv += y[1] * y[1], nv++;
        if ((n + 1) % per == 0 && (n + 1) / per <= 8) {
            r.got[(n + 1) / per - 1] = y[2] - got_prev;
            got_prev = y[2];
        }
    }
    r.dF_rms = sqrt(sd / nd);
    r.vrms = sqrt(sv / nv);
    return r;
}

START_TEST(test_late_sensor_long_tick)
{
    /* {T, m, kh, bh, K, B, P, L}: the shipped default scene's hand and coupling at 5 ms (the
     * simulated hand's defaults, K 1500, B 10), others, and the same hand at 2 and 1 ms */
    const poke_cfg cfgs[] = {
        {5e-3, 0.15, 200, 3.0, 1500, 10.0, 2.0, 1}, {5e-3, 0.137, 230, 2.9, 1370, 8.3, 1.7, 1},
        {5e-3, 0.41, 170, 4.3, 2210, 11.7, 1.3, 1}, {2.5e-3, 0.093, 310, 1.7, 1130, 6.1, 1.9, 2},
        {2e-3, 0.137, 230, 2.9, 1370, 8.3, 1.7, 1}, {1e-3, 0.137, 230, 2.9, 1370, 8.3, 1.7, 1},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        const poke_cfg *c = &cfgs[i];
        const poke_result off = run_poke(c, -1, 5), blind = run_poke(c, 0, 5),
                          on = run_poke(c, c->lat, 5);
        /* paired across the delay, the books are the hand's own energy to the quantisation
         * bound Δ(|F| + Σ|ΔF|) (docs/haptics.md "Quantisation") at every tick */
        ck_assert_msg(on.books <= 0, "cfg %zu: books off by %g J beyond quantisation", i, on.books);
        ck_assert_msg(on.pushes == 0, "cfg %zu: %ld ticks beyond [0, F_e]", i, on.pushes);
        if (c->Ts < 4e-3 && c->lat == 1) {
            /* at 1 and 2 ms the loop loses energy by itself: the controller never acts */
            for (int k = 0; k < 5; k++)
                ck_assert_msg(off.got[k] < 0 && on.got[k] == off.got[k], "cfg %zu poke %d", i, k);
            continue;
        }
        for (int k = 1; k < 5; k++) {
            /* the late sensor's loop gives the hand tens to hundreds of mJ every poke, and
             * paired with the force of the tick before the books do not see it: the controller
             * stays off (the user's trial: active on 17-99 ticks) */
            ck_assert_msg(off.got[k] > 0.02 && blind.got[k] > 0.02 && blind.books > 0.1,
                          "cfg %zu poke %d: off %g J, blind %g J (books off by %g J)", i, k,
                          off.got[k], blind.got[k], blind.books);
            /* with the books paired and the controller taking F_e towards zero, what is left is
             * what it could not foresee: the first tick of each release within a 1-tick-old
             * motion. Asked: at least 30 times less than uncontrolled (measured: 3.1 % and 2.4 %
             * of it in cfg 0 and 1, 0.07 % in cfg 2 and 3) */
            ck_assert_msg(on.got[k] < off.got[k] / 30, "cfg %zu poke %d: %g J (off %g J)", i, k,
                          on.got[k], off.got[k]);
        }
        /* and no buzz: the force changes less per tick than without the controller */
        ck_assert_msg(on.dF_rms < off.dF_rms, "cfg %zu: rms ΔF %g N (off %g N)", i, on.dF_rms,
                      off.dF_rms);
    }
}
END_TEST

/* A hand at rest on a late sensor, the books in debt (as after the start-up ramp), its encoder
 * dithering between two counts: the late controller's extrapolation v + (L + 1)(v − v(n−1)) read
 * up to 5 counts a tick (1.7 N taken away and given back at 1 ms, a buzz); a change within two
 * counts is not extrapolated, so the controller asks at most α_max·count/T, the L = 0
 * controller's own dither (docs/haptics.md §8). */
START_TEST(test_late_sensor_dither)
{
    const double q = 1.66555e-5, amax = 19.0, Fe = 2.3;
    for (int lat = 1; lat <= 3; lat++) {
        fr_passivity po;
        fr_passivity_params p = {T, amax, FR_PASSIVITY_ZOH, lat};
        ck_assert_int_eq(fr_passivity_init(&po, &p), FR_OK);
        /* the hand moves with the force for a while: the port gives it energy */
        for (int n = 0; n < 20; n++) {
            fr_vec3 f = fr_v3(Fe, 0, 0);
            fr_passivity_step(&po, fr_v3(7 * q, 0, 0), &f);
            fr_passivity_commit(&po, f);
        }
        ck_assert(po.E < -1e-4);
        double most = 0;
        long acted = 0;
        for (int n = 0; n < 400; n++) {
            const double d = n % 4 == 0 ? q : n % 4 == 2 ? -q : 0.0; /* +1, 0, −1, 0 counts */
            fr_vec3 f = fr_v3(Fe, 0, 0);
            if (fr_passivity_step(&po, fr_v3(d, 0, 0), &f) & FR_PASSIVITY_ACTIVE) acted++;
            fr_passivity_commit(&po, f);
            most = fmax(most, Fe - f.x);
            ck_assert(f.x >= 0 && f.x <= Fe);
        }
        ck_assert_msg(acted > 0 && most <= amax * q / T * (1 + 1e-9),
                      "L %d: %ld ticks on, %g N taken away (α_max count/T = %g N)", lat, acted,
                      most, amax * q / T);
    }
}
END_TEST

static Suite *passivity_suite(void)
{
    Suite *s = suite_create("passivity");
    TCase *tc = tcase_create("passivity");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kmax);
    tcase_add_test(tc, test_recurrences_by_hand);
    tcase_add_test(tc, test_small_velocity_and_nonfinite);
    tcase_add_test(tc, test_commit_books_what_was_rendered);
    tcase_add_test(tc, test_wall_below_kmax_is_passive);
    tcase_add_test(tc, test_wall_above_kmax_generates_energy);
    tcase_add_test(tc, test_literal_observer_is_blind);
    tcase_add_test(tc, test_controller_keeps_books_and_bounds_motion);
    tcase_add_test(tc, test_coupling_renders_a_stiff_world_wall_passively);
    tcase_add_test(tc, test_delayed_sensor);
    tcase_add_test(tc, test_late_sensor_long_tick);
    tcase_add_test(tc, test_late_sensor_dither);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(passivity_suite)
