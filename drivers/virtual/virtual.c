/* The virtual device: hand model, trajectories, encoder, latency and force records. The model
 * and its rules are described in include/fureru/virtual.h. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"
#include "fureru/virtual.h"
#include "vtraj.h"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "set_minimum must be async-signal-safe");

typedef struct vdev {
    fr_device dev;
    fr_virtual_params p;
    fri_vtraj traj;
    double phi[2][6]; /* rows x and v of exp(A dt) for z = [x, v, d0, d1, d2, d3] */
    /* hand state */
    uint64_t writes;
    double t; /* s = writes·dt */
    fr_vec3 x, v;
    fr_quat q;
    fr_vec3 w;
    /* measurement */
    fr_vec3 meas_prev; /* previous quantised position (difference velocity) */
    fr_vec3 vel_f;     /* filtered velocity */
    double alpha;      /* low-pass coefficient */
    fr_device_state *ring;
    int ring_n, ring_head;
    bool fresh; /* a write since the last read */
    /* records */
    fr_virtual_record *rec;
    size_t rec_cap, rec_head, rec_n;
    /* counters */
    uint64_t reads, nonfinite, rec_lost;
    _Atomic uint64_t minimum_calls;
} vdev;

static const fr_device_ops vops;

bool fr_virtual_is(const fr_device *dev)
{
    return dev && dev->ops == &vops;
}

static vdev *as_v(const fr_device *dev)
{
    return fr_virtual_is(dev) ? (vdev *)dev->impl : NULL;
}

/* ------------------------------------------------------------------ defaults */

void fr_virtual_params_default(fr_virtual_params *p)
{
    memset(p, 0, sizeof *p);
    p->dof = 3;
    p->dt = 1e-3;
    fr_device_desc *d = &p->desc;
    d->max_force = 10.0;
    d->max_torque = 0.5;
    d->max_stiffness = 3000.0;
    d->max_damping = 20.0;
    d->max_rot_stiffness = 5.0;
    d->max_rot_damping = 0.05;
    d->workspace_min = fr_v3(-0.1, -0.1, -0.1);
    d->workspace_max = fr_v3(0.1, 0.1, 0.1);
    p->hand.mass = 0.15;
    p->hand.damping = 3.0;
    p->hand.stiffness = 200.0;
    p->hand.inertia = 2e-4;
    p->hand.rot_damping = 0.02;
    p->hand.rot_stiffness = 1.0;
    p->encoder.resolution = 1.66555e-5;
    p->encoder.latency = 1;
    p->encoder.velocity = FR_VVEL_DIFFERENCE;
    p->encoder.velocity_cutoff = 100.0;
    p->traj.type = FR_VTRAJ_POKE;
    p->traj.start = fr_v3(0, 0, 0.02);
    p->traj.direction = fr_v3(0, 0, -1);
    p->traj.depth = 0.03;
    p->traj.period = 2.0;
    p->traj.speed = 0.05;
    p->traj.radius = 0.02;
    p->traj.plane = FR_VPLANE_XY;
    p->traj.from = fr_v3(-0.03, 0, 0);
    p->traj.to = fr_v3(0.03, 0, 0);
    p->traj.loop = true;
    p->traj.orientation = fr_q_identity();
    p->record.capacity = 65536;
}

/* ------------------------------------------------------------------ exact discretisation */

/* exp(M) for a 6×6 matrix by scaling and squaring of a Taylor series (start-up only). */
static void expm6(const double M[6][6], double E[6][6])
{
    double norm = 0;
    for (int i = 0; i < 6; i++) {
        double r = 0;
        for (int j = 0; j < 6; j++) r += fabs(M[i][j]);
        norm = fmax(norm, r);
    }
    int s = 0;
    while (norm > 0.25 && s < 60) {
        norm *= 0.5;
        s++;
    }
    double B[6][6], T[6][6], U[6][6];
    double scale = ldexp(1.0, -s);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            B[i][j] = M[i][j] * scale;
            T[i][j] = (i == j);
            E[i][j] = (i == j);
        }
    for (int k = 1; k <= 30; k++) { /* T = T·B/k, E += T */
        double mx = 0;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double acc = 0;
                for (int l = 0; l < 6; l++) acc += T[i][l] * B[l][j];
                U[i][j] = acc / k;
            }
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                T[i][j] = U[i][j];
                E[i][j] += T[i][j];
                mx = fmax(mx, fabs(T[i][j]));
            }
        if (mx < 1e-300) break;
    }
    for (int r = 0; r < s; r++) {
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double acc = 0;
                for (int l = 0; l < 6; l++) acc += E[i][l] * E[l][j];
                U[i][j] = acc;
            }
        memcpy(E, U, sizeof U);
    }
}

static void make_phi(vdev *v)
{
    double m = v->p.hand.mass, b = v->p.hand.damping, k = v->p.hand.stiffness, h = v->p.dt;
    double A[6][6] = {{0}};
    A[0][1] = 1;
    A[1][0] = -k / m;
    A[1][1] = -b / m;
    A[1][2] = 1 / m;
    A[2][3] = A[3][4] = A[4][5] = 1;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) A[i][j] *= h;
    double E[6][6];
    expm6(A, E);
    memcpy(v->phi, E, sizeof v->phi);
}

/* One axis over one step: target Hermite data (p0, v0) → (p1, v1), force f held. */
static inline void step_axis(const vdev *v, double *x, double *xd, double p0, double v0, double p1,
                             double v1, double f)
{
    double h = v->p.dt, k = v->p.hand.stiffness, b = v->p.hand.damping;
    double a2 = (3.0 * (p1 - p0) / h - 2.0 * v0 - v1) / h;
    double a3 = (2.0 * (p0 - p1) / h + v0 + v1) / (h * h);
    double z[6] = {
        *x,          *xd, k * p0 + b * v0 + f, k * v0 + 2.0 * b * a2, 2.0 * k * a2 + 6.0 * b * a3,
        6.0 * k * a3};
    double xn = 0, vn = 0;
    for (int j = 0; j < 6; j++) {
        xn += v->phi[0][j] * z[j];
        vn += v->phi[1][j] * z[j];
    }
    *x = xn;
    *xd = vn;
}

/* ------------------------------------------------------------------ measurement */

static inline double quantise(double x, double q)
{
    return q > 0 ? floor(x / q + 0.5) * q : x;
}

static fr_device_state measure(vdev *v, bool first)
{
    fr_device_state s;
    memset(&s, 0, sizeof s);
    double q = v->p.encoder.resolution;
    fr_vec3 pq = fr_v3(quantise(v->x.x, q), quantise(v->x.y, q), quantise(v->x.z, q));
    if (v->p.encoder.velocity == FR_VVEL_TRUE) {
        s.vel = v->v;
    } else {
        fr_vec3 raw =
            first ? fr_v3_zero() : fr_v3_scale(fr_v3_sub(pq, v->meas_prev), 1.0 / v->p.dt);
        v->vel_f = first ? raw : fr_v3_mad(v->vel_f, v->alpha, fr_v3_sub(raw, v->vel_f));
        s.vel = v->vel_f;
    }
    v->meas_prev = pq;
    s.pose.p = pq;
    s.pose.q = v->p.dof >= 6 ? v->q : fr_q_identity();
    s.angvel = v->p.dof >= 6 ? v->w : fr_v3_zero();
    s.status = FR_DEVICE_OK;
    s.seq = v->writes;
    return s;
}

/* ------------------------------------------------------------------ device ops */

static int v_read(fr_device *dev, fr_device_state *out)
{
    vdev *v = dev->impl;
    int oldest = v->ring_head + 1 == v->ring_n ? 0 : v->ring_head + 1;
    *out = v->ring[oldest];
    out->status = v->fresh || v->reads == 0 ? FR_DEVICE_OK : FR_DEVICE_STALE;
    v->fresh = false;
    v->reads++;
    return FR_OK;
}

static int v_write(fr_device *dev, const fr_device_cmd *cmd)
{
    vdev *v = dev->impl;
    fr_vec3 f = cmd->force, tq = cmd->torque;
    int ret = FR_OK;
    if (!fr_v3_isfinite(f) || !fr_v3_isfinite(tq)) { /* never let a NaN into the hand */
        v->nonfinite++;
        ret = FR_ERR_NUMERIC;
    }
    /* record what was received */
    fr_virtual_record *r = &v->rec[v->rec_head];
    if (v->rec_cap) {
        *r = (fr_virtual_record){v->t, f, tq, v->x};
        v->rec_head = v->rec_head + 1 == v->rec_cap ? 0 : v->rec_head + 1;
        if (v->rec_n < v->rec_cap)
            v->rec_n++;
        else
            v->rec_lost++;
    }
    if (ret) f = tq = fr_v3_zero();

    /* translation: exact response to the Hermite-interpolated target */
    double t0 = v->t, t1 = (double)(v->writes + 1) * v->p.dt;
    fr_vec3 p0, v0, p1, v1;
    fri_vtraj_step(&v->traj, t0, t1, &p0, &v0, &p1, &v1);
    step_axis(v, &v->x.x, &v->v.x, p0.x, v0.x, p1.x, v1.x, f.x);
    step_axis(v, &v->x.y, &v->v.y, p0.y, v0.y, p1.y, v1.y, f.y);
    step_axis(v, &v->x.z, &v->v.z, p0.z, v0.z, p1.z, v1.z, f.z);

    /* rotation: semi-implicit Euler on the exponential map */
    if (v->p.dof >= 6) {
        fr_quat qt;
        fr_vec3 wt;
        fri_vtraj_orient(&v->traj, t0, &qt, &wt);
        fr_vec3 e = fr_q_log(fr_q_mul(qt, fr_q_conj(v->q))); /* world-frame error, ≤ π */
        fr_vec3 acc =
            fr_v3_add(fr_v3_scale(e, v->p.hand.rot_stiffness),
                      fr_v3_add(fr_v3_scale(fr_v3_sub(wt, v->w), v->p.hand.rot_damping), tq));
        v->w = fr_v3_mad(v->w, v->p.dt / v->p.hand.inertia, acc);
        v->q = fr_q_normalize(fr_q_mul(fr_q_exp(fr_v3_scale(v->w, v->p.dt)), v->q));
    }
    v->writes++;
    v->t = t1;

    v->ring_head = v->ring_head + 1 == v->ring_n ? 0 : v->ring_head + 1;
    v->ring[v->ring_head] = measure(v, false);
    v->fresh = true;
    return ret;
}

static void v_set_minimum(fr_device *dev)
{
    /* Nothing is held between writes (each write is one zero-order-hold step), so minimum is
     * the next write's business; count the call (atomic: signal handlers). */
    vdev *v = dev->impl;
    atomic_fetch_add_explicit(&v->minimum_calls, 1, memory_order_relaxed);
}

static void v_close(fr_device *dev)
{
    if (!dev) return;
    vdev *v = dev->impl;
    if (v->p.record.csv[0]) {
        int err = fr_virtual_record_dump(dev, v->p.record.csv);
        if (err)
            fprintf(stderr, "fureru: virtual device: cannot write %s: %s\n", v->p.record.csv,
                    fr_strerror(err));
    }
    fri_vtraj_free(&v->traj);
    free(v->ring);
    free(v->rec);
    free(v);
}

static const fr_device_ops vops = {v_read, v_write, v_set_minimum, NULL, v_close};

/* ------------------------------------------------------------------ open */

static int bad(fr_diag *d, int err, const char *field, const char *msg)
{
    return fr_diag_set(d, err, "", 0, 0, field, "%s", msg);
}

/* Programmatic validation (config files are checked with positions before this). */
static int validate(const fr_virtual_params *p, fr_diag *d)
{
    if (p->dof != 3 && p->dof != 6) return bad(d, FR_ERR_RANGE, "dof", "must be 3 or 6");
    if (!(isfinite(p->dt) && p->dt > 0 && p->dt <= 0.1))
        return bad(d, FR_ERR_RANGE, "dt", "must be in (0, 0.1] s");
    if (!(isfinite(p->hand.mass) && p->hand.mass > 0))
        return bad(d, FR_ERR_RANGE, "hand.mass", "must be > 0");
    if (!(isfinite(p->hand.damping) && p->hand.damping >= 0))
        return bad(d, FR_ERR_RANGE, "hand.damping", "must be >= 0");
    if (!(isfinite(p->hand.stiffness) && p->hand.stiffness >= 0))
        return bad(d, FR_ERR_RANGE, "hand.stiffness", "must be >= 0");
    if (!(fri_vhand_rate(p) <= FRI_VHAND_MAX_RATE))
        return fr_diag_set(d, FR_ERR_RANGE, "", 0, 0, "hand.stiffness",
                           "hand too stiff or damped for its mass at dt = %g s: (stiffness + "
                           "damping + 1)·dt/mass = %g, at most %g (the exact step's error grows "
                           "with it)",
                           p->dt, fri_vhand_rate(p), FRI_VHAND_MAX_RATE);
    if (p->dof == 6) {
        double I = p->hand.inertia, kr = p->hand.rot_stiffness, br = p->hand.rot_damping;
        if (!(isfinite(I) && I > 0)) return bad(d, FR_ERR_RANGE, "hand.inertia", "must be > 0");
        if (!(isfinite(kr) && kr >= 0 && isfinite(br) && br >= 0))
            return bad(d, FR_ERR_RANGE, "hand.rot_stiffness", "rotational gains must be >= 0");
        /* semi-implicit Euler is stable iff b h/I < 2 and k h²/I < 4 − 2 b h/I */
        double h = p->dt;
        if (!(kr * h * h / I + 2.0 * br * h / I < 4.0))
            return bad(d, FR_ERR_RANGE, "hand.rot_stiffness",
                       "rotational hand unstable at this dt (need k h²/I + 2 b h/I < 4)");
    }
    if (!(isfinite(p->encoder.resolution) && p->encoder.resolution >= 0 &&
          p->encoder.resolution <= 0.01))
        return bad(d, FR_ERR_RANGE, "encoder.resolution", "must be in [0, 0.01] m");
    if (p->encoder.latency < 0 || p->encoder.latency > 100000)
        return bad(d, FR_ERR_RANGE, "encoder.latency", "must be in [0, 100000] ticks");
    if (!(isfinite(p->encoder.velocity_cutoff) && p->encoder.velocity_cutoff >= 0))
        return bad(d, FR_ERR_RANGE, "encoder.velocity_cutoff", "must be >= 0");
    if (p->record.capacity < 0 || p->record.capacity > 100000000)
        return bad(d, FR_ERR_RANGE, "record.capacity", "must be in [0, 1e8]");
    const fr_device_desc *ds = &p->desc;
    if (!(isfinite(ds->max_force) && ds->max_force > 0 && ds->max_force <= 1e6 &&
          isfinite(ds->max_torque) && ds->max_torque >= 0 && ds->max_torque <= 1e6))
        return bad(d, FR_ERR_RANGE, "limits", "max_force must be in (0, 1e6], max_torque [0, 1e6]");
    return fri_vtraj_validate(p, d);
}

int fr_virtual_open(const fr_virtual_params *pin, fr_device **out, fr_diag *d)
{
    *out = NULL;
    int err = validate(pin, d);
    if (err) return err;
    vdev *v = calloc(1, sizeof *v);
    if (!v) return FR_ERR_NOMEM;
    v->p = *pin;
    err = fri_vtraj_init(&v->traj, &v->p, d);
    if (err) {
        fri_vtraj_free(&v->traj);
        free(v);
        return err;
    }
    v->ring_n = v->p.encoder.latency + 1;
    v->ring = calloc((size_t)v->ring_n, sizeof *v->ring);
    v->rec_cap = (size_t)v->p.record.capacity;
    v->rec = calloc(v->rec_cap ? v->rec_cap : 1, sizeof *v->rec);
    if (!v->ring || !v->rec) {
        fri_vtraj_free(&v->traj);
        free(v->ring);
        free(v->rec);
        free(v);
        return FR_ERR_NOMEM;
    }
    memset(v->rec, 0, (v->rec_cap ? v->rec_cap : 1) * sizeof *v->rec); /* touch the pages now */
    make_phi(v);
    v->alpha = v->p.encoder.velocity_cutoff > 0
                   ? 1.0 - exp(-2.0 * M_PI * v->p.encoder.velocity_cutoff * v->p.dt)
                   : 1.0;

    /* initial state: at the target (or hand.start) with the target's velocity */
    fr_pose pose;
    fri_vtraj_eval(&v->traj, 0.0, &pose.p, &v->v);
    v->x = v->p.hand.has_start ? v->p.hand.start : pose.p;
    fr_vec3 w0;
    fri_vtraj_orient(&v->traj, 0.0, &v->q, &w0);
    v->w = v->p.dof >= 6 ? w0 : fr_v3_zero();
    fr_device_state s0 = measure(v, true);
    for (int i = 0; i < v->ring_n; i++) v->ring[i] = s0;
    atomic_init(&v->minimum_calls, 0);

    v->dev.ops = &vops;
    v->dev.impl = v;
    v->dev.desc = v->p.desc;
    if (!v->dev.desc.name[0]) snprintf(v->dev.desc.name, sizeof v->dev.desc.name, "virtual");
    snprintf(v->dev.desc.driver, sizeof v->dev.desc.driver, "virtual");
    v->dev.desc.dof_sensed = v->dev.desc.dof_forced = v->p.dof;
    if (v->p.dof < 6) v->dev.desc.max_torque = 0.0;
    /* a sample read at tick n reports the motion made under write n−1−latency */
    if (!(v->dev.desc.latency > 0)) v->dev.desc.latency = v->p.encoder.latency * v->p.dt;
    *out = &v->dev;
    return FR_OK;
}

/* ------------------------------------------------------------------ inspection */

int fr_virtual_get_params(const fr_device *dev, fr_virtual_params *out)
{
    vdev *v = as_v(dev);
    if (!v) return FR_ERR_INVAL;
    *out = v->p;
    return FR_OK;
}

double fr_virtual_time(const fr_device *dev)
{
    vdev *v = as_v(dev);
    return v ? v->t : NAN;
}

int fr_virtual_true_state(const fr_device *dev, fr_device_state *out)
{
    vdev *v = as_v(dev);
    if (!v) return FR_ERR_INVAL;
    memset(out, 0, sizeof *out);
    out->pose.p = v->x;
    out->pose.q = v->p.dof >= 6 ? v->q : fr_q_identity();
    out->vel = v->v;
    out->angvel = v->p.dof >= 6 ? v->w : fr_v3_zero();
    out->status = FR_DEVICE_OK;
    out->seq = v->writes;
    return FR_OK;
}

int fr_virtual_target(const fr_device *dev, double t, fr_pose *pose, fr_vec3 *vel)
{
    vdev *v = as_v(dev);
    if (!v) return FR_ERR_INVAL;
    fr_vec3 w;
    fri_vtraj_eval(&v->traj, t, &pose->p, vel);
    fri_vtraj_orient(&v->traj, t, &pose->q, &w);
    return FR_OK;
}

size_t fr_virtual_record_count(const fr_device *dev)
{
    vdev *v = as_v(dev);
    return v ? v->rec_n : 0;
}

int fr_virtual_record_get(const fr_device *dev, size_t i, fr_virtual_record *out)
{
    vdev *v = as_v(dev);
    if (!v) return FR_ERR_INVAL;
    if (i >= v->rec_n) return FR_ERR_RANGE;
    size_t first = v->rec_n < v->rec_cap ? 0 : v->rec_head;
    size_t k = first + i;
    if (k >= v->rec_cap) k -= v->rec_cap;
    *out = v->rec[k];
    return FR_OK;
}

int fr_virtual_record_dump(const fr_device *dev, const char *path)
{
    vdev *v = as_v(dev);
    if (!v || !path) return FR_ERR_INVAL;
    FILE *f = fopen(path, "w");
    if (!f) return errno == ENOENT ? FR_ERR_NOTFOUND : errno == EACCES ? FR_ERR_PERM : FR_ERR_IO;
    fprintf(f, "t,fx,fy,fz,tx,ty,tz,x,y,z\n");
    for (size_t i = 0; i < v->rec_n; i++) {
        fr_virtual_record r;
        fr_virtual_record_get(dev, i, &r);
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r.t, r.force.x,
                r.force.y, r.force.z, r.torque.x, r.torque.y, r.torque.z, r.hand.x, r.hand.y,
                r.hand.z);
    }
    return fclose(f) == 0 ? FR_OK : FR_ERR_IO;
}

int fr_virtual_get_stats(const fr_device *dev, fr_virtual_stats *out)
{
    vdev *v = as_v(dev);
    if (!v) return FR_ERR_INVAL;
    out->writes = v->writes;
    out->reads = v->reads;
    out->nonfinite = v->nonfinite;
    out->minimum_calls = atomic_load_explicit(&v->minimum_calls, memory_order_relaxed);
    out->records_lost = v->rec_lost;
    return FR_OK;
}
