/* src/haptic coupling: the implicit virtual coupling against the closed-form solution of the
 * backward-Euler recurrence, an exact discrete energy identity, the explicit form's eigenvalues,
 * the world-hook contract, the workspace transform (round trips, power conservation, felt
 * stiffness), stretch limits, NaN handling and the real-time rules. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "frtest.h"
#include "interpose.h"
#include "fureru/base.h"
#include "fureru/coupling.h"

#include <complex.h> /* after fureru's headers, which name parameters I */
#undef I

#define REQUIRE_MSG(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) ck_assert_msg(cond, __VA_ARGS__);                                             \
    } while (0)

static const double DT = 1e-3;

static fr_device_desc desc_make(int dof, double kmax, double bmax)
{
    fr_device_desc d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "test");
    strcpy(d.driver, "fake");
    d.dof_sensed = d.dof_forced = dof;
    d.max_force = 10.0;
    d.max_torque = dof == 6 ? 1.0 : 0.0;
    d.max_stiffness = kmax;
    d.max_damping = bmax;
    d.max_rot_stiffness = dof == 6 ? kmax : 0.0;
    d.max_rot_damping = dof == 6 ? bmax : 0.0;
    d.workspace_min = fr_v3(-0.1, -0.1, -0.1);
    d.workspace_max = fr_v3(0.1, 0.1, 0.1);
    return d;
}

static fr_device_state dev_at(fr_vec3 p, fr_vec3 v)
{
    fr_device_state s;
    memset(&s, 0, sizeof s);
    s.pose = (fr_pose){p, fr_q_identity()};
    s.vel = v;
    s.status = FR_DEVICE_OK;
    return s;
}

/* A coupling with exactly the given gains (felt at the device), unlimited, on a device whose
 * maxima allow them. */
static void coupling_make(fr_coupling *c, int dof, double K, double B, double Kr, double Br,
                          fr_workspace ws)
{
    fr_device_desc d = desc_make(dof, fmax(K, Kr) + 1, fmax(B, Br) + 1);
    fr_coupling_params p;
    fr_coupling_params_default(&p, &d);
    p.stiffness = K;
    p.damping = B;
    p.rot_stiffness = Kr;
    p.rot_damping = Br;
    p.max_force = p.max_torque = INFINITY;
    p.workspace = ws;
    ck_assert_int_eq(fr_coupling_init(c, &p, &d, DT), FR_OK);
}

/* The world's step for one body as documented: every other force F_o is known, the coupling is
 * solved and added, then symplectic Euler with the implicit linear damping. */
typedef struct ref_body {
    double m, lam;
    fr_vec3 x, v;
} ref_body;

static fr_vec3 ref_step(ref_body *b, const fr_coupling_drive *d, fr_vec3 F_o)
{
    fr_coupling_body cb;
    memset(&cb, 0, sizeof cb);
    cb.mass = b->m;
    cb.lin_damping = b->lam;
    cb.vel = b->v;
    cb.force = F_o;
    fr_vec3 F;
    fr_coupling_solve(d, DT, &cb, &F, NULL, NULL, NULL);
    b->v = fr_v3_scale(fr_v3_mad(b->v, DT / b->m, fr_v3_add(F_o, F)), 1.0 / (1.0 + DT * b->lam));
    b->x = fr_v3_mad(b->x, DT, b->v);
    return F;
}

/* The explicit coupling for comparison: force from the current state, then symplectic Euler. */
static void explicit_step(ref_body *b, double k, double c, fr_vec3 xd)
{
    fr_vec3 F = fr_v3_sub(fr_v3_scale(fr_v3_sub(xd, b->x), k), fr_v3_scale(b->v, c));
    b->v = fr_v3_mad(b->v, DT / b->m, F);
    b->x = fr_v3_mad(b->x, DT, b->v);
}

/* ------------------------------------------------------------------ implicit recurrence */

/* Closed form of backward Euler for m ë = −k e − c ė from rest: e_n = A z1ⁿ + B z2ⁿ with
 * z = 1/(1 − s dt) for the continuous roots s, or (c1 + c2 n) zⁿ for a double root. */
typedef struct closed_form {
    double complex z1, z2, A, B;
    bool dbl;
    double z, c1, c2;
} closed_form;

static closed_form closed_make(double m, double k, double c, double e0)
{
    closed_form f;
    memset(&f, 0, sizeof f);
    double D = m + DT * c + DT * DT * k;
    double e1 = e0 * (1.0 - DT * DT * k / D); /* first step from rest, by hand */
    double disc = c * c - 4.0 * k * m;
    if (disc == 0.0) {
        f.dbl = true;
        f.z = 1.0 / (1.0 + DT * c / (2.0 * m));
        f.c1 = e0;
        f.c2 = e1 / f.z - e0;
        return f;
    }
    double complex sq = csqrt((double complex)disc);
    double complex s1 = (-c + sq) / (2.0 * m), s2 = (-c - sq) / (2.0 * m);
    f.z1 = 1.0 / (1.0 - s1 * DT);
    f.z2 = 1.0 / (1.0 - s2 * DT);
    f.A = (e1 - e0 * f.z2) / (f.z1 - f.z2);
    f.B = e0 - f.A;
    return f;
}

static double closed_eval(const closed_form *f, int n)
{
    if (f->dbl) return (f->c1 + f->c2 * n) * pow(f->z, n);
    return creal(f->A * cpow(f->z1, n) + f->B * cpow(f->z2, n));
}

/* Fixed device at xd, proxy from rest at xd + e0 dir; the coupling's discrete response along
 * every axis against the closed form, for n steps. Returns the largest |e_n|/|e0|. */
static double run_against_closed_form(double m, double k, double c, int n, double tol)
{
    const fr_vec3 xd = fr_v3(0.1, -0.2, 0.05), dir = fr_v3(0.6, -0.8, 0.0);
    const double e0 = 0.01;
    fr_coupling cp;
    coupling_make(&cp, 3, k, c, 0, 0, fr_workspace_identity());
    ref_body b = {m, 0.0, fr_v3_mad(xd, e0, dir), fr_v3_zero()};
    closed_form f = closed_make(m, k, c, e0);
    fr_device_state ds = dev_at(xd, fr_v3_zero());
    double emax = 1.0;
    for (int i = 1; i <= n; i++) {
        fr_pose pb = {b.x, fr_q_identity()};
        ck_assert_int_eq(fr_coupling_update(&cp, &ds, &pb), 0);
        ref_step(&b, &cp.drive, fr_v3_zero());
        double want = closed_eval(&f, i);
        for (int a = 0; a < 3; a++) {
            double got = fr_v3_get(fr_v3_sub(b.x, xd), a), w = want * fr_v3_get(dir, a);
            /* rounding: x carries ~1e-16 |xd| absolute, plus n steps of relative error */
            REQUIRE_MSG(fabs(got - w) <= tol * e0,
                        "k dt²/m %g, c %g, step %d axis %d: %.17g vs closed form %.17g",
                        k * DT * DT / m, c, i, a, got, w);
        }
        emax = fmax(emax, fabs(want) / e0);
    }
    return emax;
}

START_TEST(test_critical_no_overshoot)
{
    /* K from a typical device, a light proxy, continuous critical damping B = 2√(Km) gives the
     * discrete double root z = 1/(1 + ω dt) and e_n = e0 zⁿ (1 + n ωdt/(1 + ωdt)): monotone,
     * never crossing zero */
    const double m = 0.05, K = 1500.0, B = fr_coupling_critical_damping(K, m);
    const fr_vec3 xd = fr_v3(0.02, 0.03, -0.01), dir = fr_v3(0, 0, 1);
    const double e0 = -0.02;
    fr_coupling cp;
    coupling_make(&cp, 3, K, B, 0, 0, fr_workspace_identity());
    ref_body b = {m, 0.0, fr_v3_mad(xd, e0, dir), fr_v3_zero()};
    const double w = sqrt(K / m), z = 1.0 / (1.0 + w * DT), a = w * DT / (1.0 + w * DT);
    fr_device_state ds = dev_at(xd, fr_v3_zero());
    double prev = fabs(e0);
    for (int n = 1; n <= 3000; n++) {
        fr_pose pb = {b.x, fr_q_identity()};
        fr_coupling_update(&cp, &ds, &pb);
        ref_step(&b, &cp.drive, fr_v3_zero());
        double e = b.x.z - xd.z, want = e0 * pow(z, n) * (1.0 + n * a);
        REQUIRE_MSG(fabs(e - want) <= 1e-12 * fabs(e0), "step %d: %.17g vs %.17g", n, e, want);
        /* no overshoot: same sign as e0 and shrinking (to the rounding of x near xd) */
        REQUIRE_MSG(e * e0 >= -4 * DBL_EPSILON * fabs(xd.z), "overshoot at %d: %g", n, e);
        REQUIRE_MSG(fabs(e) <= prev + 4 * DBL_EPSILON * fabs(xd.z), "not monotone at %d", n);
        REQUIRE_MSG(b.x.x == xd.x && b.x.y == xd.y, "off-axis motion at %d", n);
        prev = fabs(e);
    }
    ck_assert(prev < 1e-9 * fabs(e0)); /* settled: x_b = x_d */
}
END_TEST

START_TEST(test_closed_form_all_regimes)
{
    /* under-, critically and over-damped, from soft to K dt²/m = 1e4 */
    const double m = 0.01;
    const double kappas[] = {1e-2, 1.0, 4.0, 1e2, 1e4};
    const double zetas[] = {0.0, 0.1, 1.0, 3.0};
    for (size_t i = 0; i < sizeof kappas / sizeof *kappas; i++)
        for (size_t j = 0; j < sizeof zetas / sizeof *zetas; j++) {
            double k = kappas[i] * m / (DT * DT);
            double c = zetas[j] * fr_coupling_critical_damping(k, m);
            double emax = run_against_closed_form(m, k, c, 2000, 1e-11);
            /* from rest the implicit energy never grows (test_energy_identity): |e_n| ≤ |e0| */
            ck_assert(emax <= 1.0 + 1e-12);
        }
}
END_TEST

START_TEST(test_energy_identity_and_explicit_divergence)
{
    /* Backward Euler on a spring-damper: with E = ½ m|v|² + ½ k|e|²,
     *   E⁺ − E = −½ m|v⁺ − v|² − ½ k|e⁺ − e|² − dt c |v⁺|²  (≤ 0: bounded for any k dt²/m).
     * The explicit form (force from the current state) has the eigenvalues of
     *   λ² − (2 − κ − γ) λ + (1 − γ) = 0,  κ = k dt²/m, γ = c dt/m,
     * and diverges when κ > 4 − 2γ: its measured growth per step must equal max|λ|. */
    const double m = 0.002;
    const fr_vec3 xd = fr_v3(0.01, 0.02, 0.03);
    const double kappas[] = {0.5, 3.9, 4.2, 10.0, 1e2, 1e4};
    for (size_t i = 0; i < sizeof kappas / sizeof *kappas; i++) {
        const double kap = kappas[i], k = kap * m / (DT * DT);
        const double gam = kap > 4 ? 0.0 : 0.05, c = gam * m / DT;
        fr_coupling cp;
        coupling_make(&cp, 3, k, c, 0, 0, fr_workspace_identity());
        fr_device_state ds = dev_at(xd, fr_v3_zero());
        ref_body imp = {m, 0, fr_v3(0.02, 0.0, 0.03), fr_v3(0.1, -0.3, 0.2)};
        ref_body exp_ = imp;
        const double E0 =
            0.5 * m * fr_v3_norm2(imp.v) + 0.5 * k * fr_v3_norm2(fr_v3_sub(imp.x, xd));
        for (int n = 0; n < 5000; n++) {
            fr_pose pb = {imp.x, fr_q_identity()};
            fr_coupling_update(&cp, &ds, &pb);
            fr_vec3 e = fr_v3_sub(imp.x, xd), v = imp.v;
            double E = 0.5 * m * fr_v3_norm2(v) + 0.5 * k * fr_v3_norm2(e);
            if (E < 1e-16 * E0) break; /* decayed to the rounding of the positions */
            ref_step(&imp, &cp.drive, fr_v3_zero());
            fr_vec3 e1 = fr_v3_sub(imp.x, xd);
            double E1 = 0.5 * m * fr_v3_norm2(imp.v) + 0.5 * k * fr_v3_norm2(e1);
            double rhs = -0.5 * m * fr_v3_norm2(fr_v3_sub(imp.v, v)) -
                         0.5 * k * fr_v3_norm2(fr_v3_sub(e1, e)) - DT * c * fr_v3_norm2(imp.v);
            /* rounding of e (absolute ~eps |xd|) bounds how well the identity can hold */
            double tol = 1e-9 * E + 8 * k * DBL_EPSILON * fr_v3_norm(xd) * fr_v3_norm(e);
            REQUIRE_MSG(fabs((E1 - E) - rhs) <= tol, "κ %g step %d: ΔE %.17g vs %.17g", kap, n,
                        E1 - E, rhs);
            REQUIRE_MSG(E1 <= E + tol, "κ %g: implicit energy grew at %d", kap, n);
        }
        /* explicit */
        double tr = 2.0 - kap - gam, det = 1.0 - gam, disc = tr * tr - 4.0 * det;
        double rho = disc >= 0 ? (fabs(tr) + sqrt(disc)) / 2.0 : sqrt(det);
        double e_prev = 0, ratio = 0;
        int steps = kap > 4 ? (int)fmin(5000, 200.0 / log10(rho)) : 5000;
        double emax = 0;
        for (int n = 0; n < steps; n++) {
            e_prev = exp_.x.x - xd.x;
            explicit_step(&exp_, k, c, xd);
            double e = exp_.x.x - xd.x;
            ratio = fabs(e / e_prev);
            emax = fmax(emax, fr_v3_norm(fr_v3_sub(exp_.x, xd)));
        }
        if (kap > 4 - 2 * gam) {
            ck_assert_msg(rho > 1.0, "κ %g should be unstable", kap);
            ck_assert_rel(ratio, rho, 1e-9, 0);
            ck_assert(emax > 1e100); /* diverged */
        } else {
            ck_assert_msg(rho <= 1.0, "κ %g should be stable", kap);
            ck_assert(emax < 1.0); /* bounded (from |e0| ≈ 0.01 and v0 ≈ 0.4 m/s) */
        }
    }
}
END_TEST

/* ------------------------------------------------------------------ the world's hook */

START_TEST(test_hook_contract)
{
    /* The formula the world reproduces (docs/haptics.md), computed independently here:
     * v⁺ = (m v + dt (F_o + K (x_d⁺ − x_b) + B v_d)) / (m (1 + dt λ) + dt B + dt² K) */
    frtest_rng r = {11};
    for (int it = 0; it < 2000; it++) {
        double m = pow(10, frtest_uniform(&r, -4, 1)),
               lam = it % 3 ? 0.0 : frtest_uniform(&r, 0, 5);
        double K = pow(10, frtest_uniform(&r, 0, 4)), B = frtest_uniform(&r, 0, 30);
        fr_vec3 xd = fr_v3(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1), 0.3);
        fr_vec3 vd = fr_v3(frtest_uniform(&r, -1, 1), 0.2, frtest_uniform(&r, -1, 1));
        fr_vec3 xb = fr_v3(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1), 0.1);
        fr_vec3 vb = fr_v3(frtest_uniform(&r, -2, 2), frtest_uniform(&r, -2, 2), 0.5);
        fr_vec3 Fo = fr_v3(frtest_uniform(&r, -9, 9), 1.0, -9.81 * m);
        fr_coupling cp;
        coupling_make(&cp, 3, K, B, 0, 0, fr_workspace_identity());
        fr_device_state ds = dev_at(xd, vd);
        fr_pose pb = {xb, fr_q_identity()};
        ck_assert_int_eq(fr_coupling_update(&cp, &ds, &pb), 0);
        fr_coupling_body cb;
        memset(&cb, 0, sizeof cb);
        cb.mass = m;
        cb.lin_damping = lam;
        cb.vel = vb;
        cb.force = Fo;
        fr_vec3 F, vn;
        fr_coupling_solve(&cp.drive, DT, &cb, &F, NULL, &vn, NULL);
        double den = m * (1 + DT * lam) + DT * B + DT * DT * K;
        fr_vec3 want = fr_v3_scale(
            fr_v3_add(fr_v3_scale(vb, m),
                      fr_v3_scale(fr_v3_add(fr_v3_add(Fo, fr_v3_scale(fr_v3_sub(xd, xb), K)),
                                            fr_v3_scale(vd, B)),
                                  DT)),
            1.0 / den);
        /* the world's own update with F added reproduces v⁺ */
        fr_vec3 vw = fr_v3_scale(fr_v3_mad(vb, DT / m, fr_v3_add(Fo, F)), 1.0 / (1 + DT * lam));
        /* and the coupling force is the spring-damper at the next state */
        fr_vec3 xn = fr_v3_mad(xb, DT, vn);
        fr_vec3 Fn =
            fr_v3_add(fr_v3_scale(fr_v3_sub(xd, xn), K), fr_v3_scale(fr_v3_sub(vd, vn), B));
        fr_vec3 Fe;
        fr_coupling_eval(&cp.drive, DT, vn, fr_v3_zero(), &Fe, NULL);
        double vs = fr_v3_norm(want) + fr_v3_norm(vb) + 1e-3, fs = fr_v3_norm(F) + 1e-3;
        for (int a = 0; a < 3; a++) {
            REQUIRE_MSG(fabs(fr_v3_get(vn, a) - fr_v3_get(want, a)) <= 1e-13 * vs, "v⁺ %d", it);
            REQUIRE_MSG(fabs(fr_v3_get(vw, a) - fr_v3_get(want, a)) <= 1e-12 * vs, "world %d", it);
            /* |F| can be much smaller than its terms K·|x| (cancellation): scale by the terms */
            double ts = K * (fr_v3_norm(xd) + fr_v3_norm(xb)) + B * (fr_v3_norm(vd) + vs) + fs;
            REQUIRE_MSG(fabs(fr_v3_get(Fn, a) - fr_v3_get(F, a)) <= 1e-13 * ts, "F %d", it);
            REQUIRE_MSG(fabs(fr_v3_get(Fe, a) - fr_v3_get(F, a)) <= 1e-13 * ts, "eval %d", it);
        }
    }
}
END_TEST

START_TEST(test_hook_rotation)
{
    /* ((1 + dt λr) I + dt (Br + dt Kr)) ω⁺ = I ω + dt (τ_o + Kr θ + Br ω_d), τ_c = the rotational
     * spring-damper at θ⁺ = θ − dt ω⁺, for random world inertias */
    frtest_rng r = {12};
    for (int it = 0; it < 1000; it++) {
        double Kr = pow(10, frtest_uniform(&r, -2, 2)), Br = frtest_uniform(&r, 0, 2);
        double lr = it % 2 ? 0.0 : frtest_uniform(&r, 0, 3);
        fr_coupling cp;
        coupling_make(&cp, 6, 10, 1, Kr, Br, fr_workspace_identity());
        fr_quat qd = fr_q_normalize(fr_q(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1),
                                         frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1)));
        fr_quat qb = fr_q_normalize(fr_q(frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1),
                                         frtest_uniform(&r, -1, 1), frtest_uniform(&r, -1, 1)));
        fr_device_state ds = dev_at(fr_v3_zero(), fr_v3_zero());
        ds.pose.q = qd;
        ds.angvel = fr_v3(frtest_uniform(&r, -3, 3), 1, 0);
        fr_pose pb = {fr_v3_zero(), qb};
        ck_assert_int_eq(fr_coupling_update(&cp, &ds, &pb), 0);
        /* θ really takes qb onto qd (world frame, shortest way) */
        fr_quat back = fr_q_mul(fr_q_exp(cp.drive.rot_err), qb);
        ck_assert(fr_q_angle_between(back, qd) < 1e-12);
        ck_assert(fr_v3_norm(cp.drive.rot_err) <= M_PI + 1e-12);
        fr_vec3 ev = fr_v3(pow(10, frtest_uniform(&r, -6, -2)), pow(10, frtest_uniform(&r, -6, -2)),
                           pow(10, frtest_uniform(&r, -6, -2)));
        fr_mat3 R = fr_q_to_m3(qb);
        fr_coupling_body cb;
        memset(&cb, 0, sizeof cb);
        cb.mass = 1;
        cb.inertia = fr_m3_rotate(R, fr_m3_diag(ev));
        cb.ang_damping = lr;
        cb.angvel = fr_v3(frtest_uniform(&r, -5, 5), frtest_uniform(&r, -5, 5), 2);
        cb.torque = fr_v3(0.01, -0.02, frtest_uniform(&r, -0.1, 0.1));
        fr_vec3 T, wn;
        fr_coupling_solve(&cp.drive, DT, &cb, NULL, &T, NULL, &wn);
        /* residual of the linear system, and L⁺ = (Iω + dt(τ_o + τ_c))/(1 + dt λr) = I ω⁺ */
        fr_vec3 T0 = fr_v3_add(fr_v3_scale(cp.drive.rot_err, Kr), fr_v3_scale(ds.angvel, Br));
        fr_vec3 lhs = fr_v3_add(fr_m3_mulv(fr_m3_scale(cb.inertia, 1 + DT * lr), wn),
                                fr_v3_scale(wn, DT * (Br + DT * Kr)));
        fr_vec3 rhs =
            fr_v3_add(fr_m3_mulv(cb.inertia, cb.angvel), fr_v3_scale(fr_v3_add(cb.torque, T0), DT));
        double sc = fr_v3_norm(rhs) + fr_v3_norm(lhs) + 1e-18;
        ck_assert(fr_v3_norm(fr_v3_sub(lhs, rhs)) <= 1e-12 * sc);
        fr_vec3 L1 = fr_v3_scale(
            fr_v3_add(fr_m3_mulv(cb.inertia, cb.angvel), fr_v3_scale(fr_v3_add(cb.torque, T), DT)),
            1.0 / (1 + DT * lr));
        ck_assert(fr_v3_norm(fr_v3_sub(L1, fr_m3_mulv(cb.inertia, wn))) <= 1e-12 * sc);
        fr_vec3 Tn = fr_v3_add(fr_v3_scale(fr_v3_mad(cp.drive.rot_err, -DT, wn), Kr),
                               fr_v3_scale(fr_v3_sub(ds.angvel, wn), Br));
        ck_assert(fr_v3_norm(fr_v3_sub(Tn, T)) <=
                  1e-12 * (Kr * M_PI + Br * (fr_v3_norm(wn) + 3) + fr_v3_norm(T)));
    }
}
END_TEST

START_TEST(test_rotation_converges_like_translation)
{
    /* A spherical proxy rotated about a fixed axis: the world's rotation update
     * (ω⁺ from the solve, q⁺ = exp(dt ω⁺) q) keeps the error on that axis, so the angle follows
     * the same backward-Euler recurrence as a translation of "mass" I: closed form, no overshoot
     * with critical gains, and bounded at Kr dt²/I = 1e4 */
    const fr_vec3 axis = fr_v3_normalize(fr_v3(1, 2, -2));
    const fr_quat qd = fr_q_axis_angle(fr_v3_normalize(fr_v3(0, 1, 1)), 0.7);
    const double th0 = 0.4;
    const double cases[][2] = {{1e-3, 1.0}, {1e-3, 0.3}, {1e-8, 1.0}, {1e-9, 0.0}};
    for (int ci = 0; ci < 4; ci++) {
        double I = cases[ci][0], zeta = cases[ci][1];
        double Kr = (ci >= 2 ? 1e4 : 2.0) * I / (DT * DT);
        if (ci == 0) Kr = 2.0;
        double Br = zeta * fr_coupling_critical_damping(Kr, I);
        fr_coupling cp;
        coupling_make(&cp, 6, 1, 0, Kr, Br, fr_workspace_identity());
        fr_device_state ds = dev_at(fr_v3_zero(), fr_v3_zero());
        ds.pose.q = qd;
        fr_quat q = fr_q_mul(fr_q_axis_angle(axis, -th0), qd); /* θ = +th0 about axis */
        fr_vec3 w = fr_v3_zero();
        closed_form f = closed_make(I, Kr, Br, th0);
        for (int n = 1; n <= 1500; n++) {
            fr_pose pb = {fr_v3_zero(), q};
            fr_coupling_update(&cp, &ds, &pb);
            fr_coupling_body cb;
            memset(&cb, 0, sizeof cb);
            cb.mass = 1;
            cb.inertia = fr_m3_scale(fr_m3_identity(), I);
            cb.angvel = w;
            fr_vec3 T;
            fr_coupling_solve(&cp.drive, DT, &cb, NULL, &T, NULL, NULL);
            w = fr_v3_mad(w, DT / I, T);
            q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(w, DT)), q));
            fr_vec3 th = fr_q_log(fr_q_mul(qd, fr_q_conj(q)));
            double want = closed_eval(&f, n), got = fr_v3_dot(th, axis);
            REQUIRE_MSG(fabs(got - want) <= 1e-9 * th0, "case %d step %d: %.17g vs %.17g", ci, n,
                        got, want);
            REQUIRE_MSG(fr_v3_norm(fr_v3_sub(th, fr_v3_scale(axis, got))) <= 1e-9 * th0,
                        "left the axis");
            REQUIRE_MSG(fabs(got) <= th0 * (1 + 1e-9), "grew");
            if (zeta == 1.0) REQUIRE_MSG(got >= -1e-12, "overshoot at %d", n);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------ workspace */

static fr_workspace rand_ws(frtest_rng *r)
{
    fr_workspace ws;
    ws.scale = pow(10, frtest_uniform(r, -1, 1));
    ws.rot = fr_q_normalize(fr_q(frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1),
                                 frtest_uniform(r, -1, 1), frtest_uniform(r, -1, 1)));
    ws.offset = fr_v3(frtest_uniform(r, -2, 2), frtest_uniform(r, -2, 2), frtest_uniform(r, 0, 1));
    return ws;
}

static fr_vec3 rand_v(frtest_rng *r, double s)
{
    return fr_v3(frtest_uniform(r, -s, s), frtest_uniform(r, -s, s), frtest_uniform(r, -s, s));
}

static void near3(fr_vec3 a, fr_vec3 b, double tol, const char *what)
{
    ck_assert_msg(fr_v3_norm(fr_v3_sub(a, b)) <= tol, "%s: |Δ| = %g > %g", what,
                  fr_v3_norm(fr_v3_sub(a, b)), tol);
}

START_TEST(test_workspace_round_trip_and_power)
{
    frtest_rng r = {21};
    for (int it = 0; it < 5000; it++) {
        fr_workspace ws = rand_ws(&r);
        ck_assert_int_eq(fr_workspace_check(&ws), FR_OK);
        fr_vec3 p = rand_v(&r, 0.1), v = rand_v(&r, 1), f = rand_v(&r, 10), w = rand_v(&r, 5);
        fr_vec3 t = rand_v(&r, 1);
        fr_quat q = fr_q_normalize(fr_q(1, frtest_uniform(&r, -1, 1), 0.3, -0.2));
        double s = ws.scale, sp = fr_v3_norm(ws.offset) + s;
        near3(fr_workspace_point_to_device(&ws, fr_workspace_point_to_world(&ws, p)), p,
              1e-14 * sp / s, "point");
        near3(fr_workspace_vel_to_device(&ws, fr_workspace_vel_to_world(&ws, v)), v, 1e-14, "vel");
        near3(fr_workspace_force_to_world(&ws, fr_workspace_force_to_device(&ws, f)), f, 1e-13,
              "force");
        near3(fr_workspace_angvel_to_device(&ws, fr_workspace_angvel_to_world(&ws, w)), w, 1e-13,
              "angvel");
        near3(fr_workspace_torque_to_world(&ws, fr_workspace_torque_to_device(&ws, t)), t, 1e-14,
              "torque");
        ck_assert(
            fr_q_angle_between(fr_workspace_rot_to_device(&ws, fr_workspace_rot_to_world(&ws, q)),
                               q) < 1e-7);
        /* distances scale by s, angles are kept */
        fr_vec3 p2 = rand_v(&r, 0.1);
        ck_assert_rel(
            fr_v3_dist(fr_workspace_point_to_world(&ws, p), fr_workspace_point_to_world(&ws, p2)),
            s * fr_v3_dist(p, p2), 1e-12, 1e-12);
        /* the velocity map is the derivative of the point map */
        double h = 1e-6;
        fr_vec3 fd = fr_v3_scale(fr_v3_sub(fr_workspace_point_to_world(&ws, fr_v3_mad(p, h, v)),
                                           fr_workspace_point_to_world(&ws, p)),
                                 1.0 / h);
        near3(fd, fr_workspace_vel_to_world(&ws, v), 1e-8 * sp * fr_v3_norm(v) / h * 1e-2 + 1e-9,
              "d/dt");
        /* power: F_dev·v_dev = F_w·v_w and τ_dev·ω_dev = τ_w·ω_w */
        fr_vec3 fw = rand_v(&r, 10), tw = rand_v(&r, 1);
        double P_dev = fr_v3_dot(fr_workspace_force_to_device(&ws, fw), v);
        double P_w = fr_v3_dot(fw, fr_workspace_vel_to_world(&ws, v));
        ck_assert_rel(P_dev, P_w, 1e-13, fr_v3_norm(fw) * fr_v3_norm(v) * s);
        double R_dev = fr_v3_dot(fr_workspace_torque_to_device(&ws, tw), w);
        double R_w = fr_v3_dot(tw, fr_workspace_angvel_to_world(&ws, w));
        ck_assert_rel(R_dev, R_w, 1e-13, fr_v3_norm(tw) * fr_v3_norm(w));
    }
    fr_workspace bad = fr_workspace_identity();
    bad.scale = 0;
    ck_assert_int_eq(fr_workspace_check(&bad), FR_ERR_RANGE);
    bad = fr_workspace_identity();
    bad.rot = fr_q(1, 0.1, 0, 0);
    ck_assert_int_eq(fr_workspace_check(&bad), FR_ERR_RANGE);
    bad = fr_workspace_identity();
    bad.offset.y = NAN;
    ck_assert_int_eq(fr_workspace_check(&bad), FR_ERR_RANGE);
}
END_TEST

START_TEST(test_felt_stiffness_equal_opposite)
{
    /* Through any workspace transform the user feels −K(x_dev − x_b,dev) − B(v_dev − v_b,dev)
     * with the device-frame gains (the proxy's next state mapped back), torque
     * −Kr θ_dev − Br(ω_dev − ω_b,dev); the command is exactly the opposite of the force on the
     * proxy, and the power at the device equals the power at the proxy's end of the coupling. */
    frtest_rng r = {22};
    for (int it = 0; it < 3000; it++) {
        fr_workspace ws = rand_ws(&r);
        double K = frtest_uniform(&r, 10, 3000), B = frtest_uniform(&r, 0, 20);
        double Kr = frtest_uniform(&r, 0.1, 5), Br = frtest_uniform(&r, 0, 0.05);
        fr_coupling cp;
        coupling_make(&cp, 6, K, B, Kr, Br, ws);
        fr_device_state ds = dev_at(rand_v(&r, 0.05), rand_v(&r, 0.5));
        ds.pose.q = fr_q_normalize(fr_q(1, frtest_uniform(&r, -.3, .3), 0.1, 0));
        ds.angvel = rand_v(&r, 2);
        fr_vec3 xdw = fr_workspace_point_to_world(&ws, ds.pose.p);
        fr_pose pb = {
            fr_v3_add(xdw, rand_v(&r, 0.01 * ws.scale)),
            fr_q_mul(fr_q_exp(rand_v(&r, 0.2)), fr_workspace_rot_to_world(&ws, ds.pose.q))};
        ck_assert_int_eq(fr_coupling_update(&cp, &ds, &pb), 0);
        fr_vec3 vn = rand_v(&r, 0.5 * ws.scale), wn = rand_v(&r, 2);
        fr_device_cmd cmd;
        ck_assert_int_eq(fr_coupling_output(&cp, vn, wn, &cmd), 0);
        /* proxy next state, mapped back to the device */
        fr_vec3 xb_dev = fr_workspace_point_to_device(&ws, fr_v3_mad(pb.p, DT, vn));
        fr_vec3 vb_dev = fr_workspace_vel_to_device(&ws, vn);
        fr_vec3 want = fr_v3_add(fr_v3_scale(fr_v3_sub(ds.pose.p, xb_dev), -K),
                                 fr_v3_scale(fr_v3_sub(ds.vel, vb_dev), -B));
        double fs = K * (fr_v3_norm(ds.pose.p) + fr_v3_norm(xb_dev)) +
                    B * (fr_v3_norm(ds.vel) + fr_v3_norm(vb_dev)) +
                    K * (fr_v3_norm(ws.offset) / ws.scale);
        near3(cmd.force, want, 1e-13 * fs, "felt force");
        /* rotation: θ_dev = Rᵀ θ_w (the error is a rotation vector), θ⁺ = θ − dt ω⁺ */
        fr_vec3 thd = fr_workspace_angvel_to_device(&ws, cp.drive.rot_err);
        fr_vec3 wb_dev = fr_workspace_angvel_to_device(&ws, wn);
        fr_vec3 twant = fr_v3_add(fr_v3_scale(fr_v3_mad(thd, -DT, wb_dev), -Kr),
                                  fr_v3_scale(fr_v3_sub(ds.angvel, wb_dev), -Br));
        near3(cmd.torque, twant, 1e-12 * (Kr + Br * 5), "felt torque");
        /* equal and opposite, bit for bit through the same map */
        fr_vec3 fo = fr_workspace_force_to_device(&cp.p.workspace, fr_v3_neg(cp.proxy_force));
        ck_assert(fo.x == cmd.force.x && fo.y == cmd.force.y && fo.z == cmd.force.z);
        /* power: the user's F·v_dev equals −F_proxy·v_world */
        double Pu = fr_v3_dot(cmd.force, ds.vel);
        double Pw = -fr_v3_dot(cp.proxy_force, fr_workspace_vel_to_world(&ws, ds.vel));
        ck_assert_rel(Pu, Pw, 1e-13, fr_v3_norm(cmd.force) * fr_v3_norm(ds.vel));
        double Qu = fr_v3_dot(cmd.torque, ds.angvel);
        double Qw = -fr_v3_dot(cp.proxy_torque, fr_workspace_angvel_to_world(&ws, ds.angvel));
        ck_assert_rel(Qu, Qw, 1e-13, fr_v3_norm(cmd.torque) * fr_v3_norm(ds.angvel));
        /* the world-reported variant gives the same command */
        fr_device_cmd cmd2;
        fr_coupling_output_applied(&cp, cp.proxy_force, cp.proxy_torque, &cmd2);
        ck_assert(memcmp(&cmd, &cmd2, sizeof cmd) == 0);
    }
}
END_TEST

START_TEST(test_equal_opposite_in_a_run)
{
    /* Over a run with contact-like other forces, the world's proxy momentum changes by exactly
     * dt Σ (F_o + F_c), and −F_c is what the user is sent (world frame, same numbers). */
    fr_workspace ws = {2.0, fr_q_axis_angle(fr_v3(0, 0, 1), 0.5), fr_v3(0.1, 0, 0.2)};
    fr_coupling cp;
    coupling_make(&cp, 3, 2000, 10, 0, 0, ws);
    ref_body b = {0.03, 0.0, fr_workspace_point_to_world(&ws, fr_v3_zero()), fr_v3_zero()};
    fr_vec3 P0 = fr_v3_scale(b.v, b.m), imp = fr_v3_zero(), user = fr_v3_zero();
    for (int n = 0; n < 4000; n++) {
        double t = n * DT;
        fr_vec3 pd = fr_v3(0.03 * sin(3 * t), 0.02 * cos(2 * t), -0.01 * t);
        fr_vec3 vd = fr_v3(0.09 * cos(3 * t), -0.04 * sin(2 * t), -0.01);
        fr_device_state ds = dev_at(pd, vd);
        fr_pose pb = {b.x, fr_q_identity()};
        fr_coupling_update(&cp, &ds, &pb);
        /* a stiff floor under the proxy plus gravity */
        fr_vec3 Fo = fr_v3(0, 0, -9.81 * b.m);
        if (b.x.z < 0.15) Fo.z += 2e3 * (0.15 - b.x.z) - 5 * b.v.z;
        fr_vec3 F = ref_step(&b, &cp.drive, Fo);
        fr_device_cmd cmd;
        fr_coupling_output(&cp, b.v, fr_v3_zero(), &cmd);
        near3(cp.proxy_force, F, 1e-12 * (fr_v3_norm(F) + 2000 * 0.01), "eval vs solve");
        imp = fr_v3_add(imp, fr_v3_scale(fr_v3_add(Fo, F), DT));
        user = fr_v3_add(user, fr_workspace_force_to_world(&ws, cmd.force));
        fr_vec3 reaction = fr_workspace_force_to_world(&ws, cmd.force);
        near3(reaction, fr_v3_neg(F), 1e-13 * (fr_v3_norm(F) + 1), "opposite");
    }
    near3(fr_v3_sub(fr_v3_scale(b.v, b.m), P0), imp, 1e-12, "momentum");
}
END_TEST

/* ------------------------------------------------------------------ set-up, limits, faults */

START_TEST(test_defaults_and_validation)
{
    fr_device_desc d = desc_make(6, 3000, 20);
    fr_coupling_params p;
    fr_coupling_params_default(&p, &d);
    ck_assert_double_eq(p.stiffness, FR_COUPLING_DEFAULT_MARGIN * 3000);
    ck_assert_double_eq(p.damping, FR_COUPLING_DEFAULT_MARGIN * 20);
    ck_assert(p.stiffness <= d.max_stiffness && p.damping <= d.max_damping);
    ck_assert(p.rotation);
    ck_assert_double_eq(p.max_force, d.max_force);
    fr_coupling c;
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d, DT), FR_OK);
    ck_assert_double_eq(c.k, p.stiffness);
    /* gains in the world are K/s² */
    p.workspace.scale = 4.0;
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d, DT), FR_OK);
    ck_assert_double_eq(c.k, p.stiffness / 16);
    ck_assert_double_eq(c.c, p.damping / 16);
    ck_assert_double_eq(c.max_f, d.max_force / 4);
    /* never above the device's maxima */
    fr_coupling_params q = p;
    q.stiffness = nextafter(d.max_stiffness, INFINITY);
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    q = p;
    q.damping = 21;
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    q = p;
    q.rot_stiffness = 3001;
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    q = p;
    q.stiffness = -1;
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    q = p;
    q.damping = NAN;
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    q = p;
    q.max_force = 0;
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d, 0), FR_ERR_RANGE);
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d, NAN), FR_ERR_RANGE);
    ck_assert_int_eq(fr_coupling_init(NULL, &p, &d, DT), FR_ERR_INVAL);
    q = p;
    q.workspace.scale = -1;
    ck_assert_int_eq(fr_coupling_init(&c, &q, &d, DT), FR_ERR_RANGE);
    /* 3-DOF: no rotation by default, and asking for it is unsupported */
    fr_device_desc d3 = desc_make(3, 2000, 10);
    fr_coupling_params_default(&p, &d3);
    ck_assert(!p.rotation);
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d3, DT), FR_OK);
    p.rotation = true;
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d3, DT), FR_ERR_UNSUPPORTED);
    /* a device without declared limits gets no stretch limit */
    d3.max_force = 0;
    fr_coupling_params_default(&p, &d3);
    ck_assert(isinf(p.max_force));
}
END_TEST

START_TEST(test_stretch_limit)
{
    fr_device_desc d = desc_make(6, 3000, 20);
    fr_coupling_params p;
    fr_coupling_params_default(&p, &d);
    p.workspace.scale = 2.0;
    p.max_force = 4.0;   /* N at the device → 2 N on the proxy */
    p.max_torque = 0.25; /* N·m */
    fr_coupling c;
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d, DT), FR_OK);
    fr_device_state ds = dev_at(fr_v3(0.05, -0.02, 0.04), fr_v3_zero());
    ds.pose.q = fr_q_axis_angle(fr_v3(1, 0, 0), 2.0);
    fr_pose pb = {fr_v3(-0.1, 0.3, 0.0), fr_q_identity()};
    int fl = fr_coupling_update(&c, &ds, &pb);
    ck_assert(fl & FR_COUPLING_LIMITED);
    fr_vec3 spring = fr_v3_scale(fr_v3_sub(c.drive.target, c.drive.anchor), c.drive.k);
    ck_assert_rel(fr_v3_norm(spring), 2.0, 1e-14, 0);
    fr_vec3 dir =
        fr_v3_normalize(fr_v3_sub(fr_workspace_point_to_world(&p.workspace, ds.pose.p), pb.p));
    ck_assert(fr_v3_dot(fr_v3_normalize(spring), dir) > 1 - 1e-14);
    ck_assert_rel(fr_v3_norm(c.drive.rot_err) * c.drive.kr, 0.25, 1e-14, 0);
    ck_assert(fr_v3_norm(fr_v3_sub(fr_v3_normalize(c.drive.rot_err), fr_v3(1, 0, 0))) < 1e-12);
    ck_assert_int_eq(c.stats.limited, 1);
    /* within the limit nothing changes */
    pb.p = fr_workspace_point_to_world(&p.workspace, ds.pose.p);
    pb.p.x += 1e-4;
    pb.q = ds.pose.q;
    fl = fr_coupling_update(&c, &ds, &pb);
    ck_assert_int_eq(fl, 0);
    ck_assert(c.drive.target.x == c.x_d.x && c.drive.target.y == c.x_d.y);
}
END_TEST

START_TEST(test_nan_and_faults)
{
    fr_coupling c;
    coupling_make(&c, 6, 1000, 5, 1, 0.01, fr_workspace_identity());
    fr_pose pb = {fr_v3(0, 0, 0), fr_q_identity()};
    fr_device_cmd cmd;
    /* nothing accepted yet: inactive drive, zero output */
    fr_device_state bad = dev_at(fr_v3(NAN, 0, 0), fr_v3_zero());
    int fl = fr_coupling_update(&c, &bad, &pb);
    ck_assert(fl & FR_COUPLING_REJECTED && fl & FR_COUPLING_NO_TARGET);
    ck_assert(!c.drive.active && !c.drive.rot_active);
    fr_coupling_output(&c, fr_v3_zero(), fr_v3_zero(), &cmd);
    ck_assert(fr_v3_norm(cmd.force) == 0 && fr_v3_norm(cmd.torque) == 0);
    fr_pose tp;
    ck_assert(!fr_coupling_target(&c, &tp));

    fr_device_state good = dev_at(fr_v3(0.01, 0.0, 0.0), fr_v3(0.2, 0, 0));
    good.pose.q = fr_q_axis_angle(fr_v3(0, 0, 1), 0.1);
    ck_assert_int_eq(fr_coupling_update(&c, &good, &pb), 0);
    fr_coupling_drive held = c.drive;
    ck_assert(fr_coupling_target(&c, &tp) && tp.p.x == 0.01);

    /* every kind of bad sample: held target, standing still, zero user force, finite state */
    fr_device_state bads[8];
    for (int i = 0; i < 8; i++) bads[i] = good;
    bads[0].pose.p.y = NAN;
    bads[1].vel.z = INFINITY;
    bads[2].pose.q = fr_q(0, 0, 0, 0);
    bads[3].pose.q.x = NAN;
    bads[4].angvel.x = -NAN;
    bads[5].status = FR_DEVICE_FAULT;
    bads[6].status = FR_DEVICE_DISCONNECTED;
    bads[7].pose.p.x = DBL_MAX; /* finite, but not once scaled... it is finite: accepted below */
    for (int i = 0; i < 7; i++) {
        fl = fr_coupling_update(&c, &bads[i], &pb);
        ck_assert_msg(fl == FR_COUPLING_REJECTED, "bad sample %d: flags %d", i, fl);
        ck_assert(c.drive.active && c.drive.rot_active);
        ck_assert(memcmp(&c.drive.target, &held.target, sizeof held.target) == 0);
        ck_assert(fr_v3_norm(c.drive.target_vel) == 0 && fr_v3_norm(c.drive.target_angvel) == 0);
        ck_assert(fr_v3_isfinite(c.x_d) && fr_v3_isfinite(c.v_d) && fr_q_isfinite(c.q_d));
        fl = fr_coupling_output(&c, fr_v3(0.1, 0, 0), fr_v3_zero(), &cmd);
        ck_assert(fr_v3_norm(cmd.force) == 0 && fr_v3_norm(cmd.torque) == 0);
        ck_assert(fr_v3_norm(c.proxy_force) > 0); /* the proxy is still held */
    }
    ck_assert_int_eq(c.stats.rejected, 8);
    /* STALE is the same sample again: used */
    good.status = FR_DEVICE_STALE;
    ck_assert_int_eq(fr_coupling_update(&c, &good, &pb), 0);
    /* a huge finite sample overflowing in the map is rejected */
    fr_coupling c2;
    fr_workspace ws = fr_workspace_identity();
    ws.scale = 10;
    coupling_make(&c2, 3, 1000, 5, 0, 0, ws);
    fl = fr_coupling_update(&c2, &bads[7], &pb);
    ck_assert(fl & FR_COUPLING_REJECTED);
    /* a broken proxy */
    fr_pose nanp = {fr_v3(0, NAN, 0), fr_q_identity()};
    fl = fr_coupling_update(&c, &good, &nanp);
    ck_assert(fl & FR_COUPLING_PROXY_BAD);
    ck_assert(!c.drive.active);
    fr_coupling_output(&c, fr_v3_zero(), fr_v3_zero(), &cmd);
    ck_assert(fr_v3_norm(cmd.force) == 0);
    fr_coupling_update(&c, &good, &pb);
    fl = fr_coupling_output(&c, fr_v3(NAN, 0, 0), fr_v3_zero(), &cmd);
    ck_assert(fl & FR_COUPLING_PROXY_BAD);
    ck_assert(fr_v3_norm(cmd.force) == 0);
    /* the solve never hands the world a NaN */
    fr_coupling_body cb;
    memset(&cb, 0, sizeof cb);
    cb.mass = 1;
    cb.inertia = fr_m3_identity();
    cb.vel = fr_v3(NAN, 0, 0);
    fr_vec3 F, T;
    fr_coupling_solve(&c.drive, DT, &cb, &F, &T, NULL, NULL);
    ck_assert(fr_v3_isfinite(F) && fr_v3_isfinite(T));
    /* reset forgets the target */
    fr_coupling_reset(&c);
    ck_assert(!fr_coupling_target(&c, &tp));
    ck_assert_int_eq(c.stats.rejected, 8);
}
END_TEST

/* ------------------------------------------------------------------ real-time rules */

START_TEST(test_no_alloc_no_lock)
{
    if (!fri_watch_available()) return; /* sanitizer build */
    fr_device_desc d = desc_make(6, 3000, 20);
    fr_coupling_params p;
    fr_coupling_params_default(&p, &d);
    p.workspace.scale = 3;
    fr_coupling c;
    ck_assert_int_eq(fr_coupling_init(&c, &p, &d, DT), FR_OK);
    fr_passivity po, pr;
    fr_passivity_params pp;
    fr_passivity_params_default(&pp, &d, DT);
    ck_assert_int_eq(fr_passivity_init(&po, &pp), FR_OK);
    fr_passivity_params_default_rot(&pp, &d, DT);
    ck_assert_int_eq(fr_passivity_init(&pr, &pp), FR_OK);
    ref_body b = {0.05, 0.1, fr_v3_zero(), fr_v3_zero()};
    fr_vec3 prev = fr_v3_zero();
    fri_watch_thread(pthread_self());
    fri_watch_arm();
    for (int n = 0; n < 20000; n++) {
        double t = n * DT;
        fr_device_state ds = dev_at(fr_v3(0.01 * sin(t), 0, 0.02), fr_v3(0.01 * cos(t), 0, 0));
        if (n % 97 == 0) ds.pose.p.x = NAN;
        fr_pose pb = {b.x, fr_q_identity()};
        fr_coupling_update(&c, &ds, &pb);
        ref_step(&b, &c.drive, fr_v3(0, 0, -0.5));
        fr_device_cmd cmd;
        fr_coupling_output(&c, b.v, fr_v3_zero(), &cmd);
        fr_vec3 dx = fr_v3_sub(ds.pose.p, prev);
        prev = ds.pose.p;
        fr_passivity_step(&po, dx, &cmd.force);
        fr_passivity_step(&pr, fr_v3_zero(), &cmd.torque);
        fr_passivity_commit(&po, fr_v3_scale(cmd.force, 0.9));
        (void)fr_passivity_kmax(1, 0.1, DT);
    }
    fri_watch_counts k = fri_watch_disarm();
    ck_assert_int_eq(k.allocs, 0);
    ck_assert_int_eq(k.frees, 0);
    ck_assert_int_eq(k.locks, 0);
    ck_assert_int_eq(k.waits, 0);
    ck_assert_int_eq(k.io, 0);
}
END_TEST

static Suite *coupling_suite(void)
{
    Suite *s = suite_create("coupling");
    TCase *tc = tcase_create("coupling");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_critical_no_overshoot);
    tcase_add_test(tc, test_closed_form_all_regimes);
    tcase_add_test(tc, test_energy_identity_and_explicit_divergence);
    tcase_add_test(tc, test_hook_contract);
    tcase_add_test(tc, test_hook_rotation);
    tcase_add_test(tc, test_rotation_converges_like_translation);
    tcase_add_test(tc, test_workspace_round_trip_and_power);
    tcase_add_test(tc, test_felt_stiffness_equal_opposite);
    tcase_add_test(tc, test_equal_opposite_in_a_run);
    tcase_add_test(tc, test_defaults_and_validation);
    tcase_add_test(tc, test_stretch_limit);
    tcase_add_test(tc, test_nan_and_faults);
    tcase_add_test(tc, test_no_alloc_no_lock);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(coupling_suite)
