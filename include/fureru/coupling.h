/*
 * fureru haptic: virtual coupling between the device and a proxy body in the world
 * (fr_coupling, fr_workspace) and time-domain passivity (fr_passivity, Colgate–Schenkel bound).
 * Formulas, defaults and the per-tick order are in docs/haptics.md.
 *
 * Virtual coupling (Colgate, Stanley & Brown 1995; Adams & Hannaford 1999). The device pose is
 * mapped into the world by a workspace transform (scale s, rotation R, offset o). A spring-damper
 * joins that target to a proxy body (the user's hand in the world):
 *   on the proxy   F = k (x_d − x_b) + c (v_d − v_b)             (world frame)
 *   to the user    F_dev = s Rᵀ (−F),  τ_dev = Rᵀ (−τ)           (device frame)
 * so F_dev·v_dev = (−F)·v_world exactly (power is conserved by the mapping) and the stiffness
 * felt at the device is K = s² k. Gains are given as felt at the device (K, B, ...), checked
 * against the device description (never above its max_stiffness / max_damping), and converted
 * to world gains k = K/s², c = B/s² (rotation gains are unscaled).
 *
 * Implicit coupling (seed 000, "Implicitのバネダンパ": λ = −K(q + w[t+1]Δt) − B w[t+1]). The
 * proxy-side force is evaluated at the proxy's next state x_b⁺ = x_b + dt v_b⁺:
 *   F_c = k (x_d⁺ − x_b − dt v_b⁺) + c (v_d − v_b⁺)
 * With every other force F_o of the step (gravity m g included) and the world's symplectic Euler
 * (v⁺ = (v + dt (F_o + F_c)/m) / (1 + dt λ), x⁺ = x + dt v⁺, λ = the body's lin_damping):
 *   v_b⁺ = (m v_b + dt (F_o + k (x_d⁺ − x_b) + c v_d)) / (m (1 + dt λ) + dt c + dt² k)
 * fr_coupling_solve() returns that F_c; the world adds it to the proxy's force accumulator after
 * every other force of the step is known and before integrating (see fr_coupling_solve), which
 * reproduces v_b⁺ to rounding. A stiff k is then stable for any proxy mass at any dt (backward
 * Euler: |z| = 1/|1 − s dt| < 1), where the explicit form diverges for k dt²/m > 4 − 2 c dt/m.
 * Rotation (6-DOF) is the same with the rotation-vector error θ = log(q_d q_b⁻¹) (world) and
 * θ⁺ ≈ θ − dt ω⁺, solved with the proxy's world inertia (exact for a spherical inertia; the
 * gyroscopic term is left out of the linearisation).
 *
 * Per-tick order (the server's tick thread; none of these allocate, lock, print or block):
 *   1. fr_device_read(dev, &ds)
 *   2. fr_coupling_update(&cp, &ds, &proxy_pose)          → cp.drive (target and gains)
 *   3. fr_world_step(): after all other forces on the proxy are accumulated and before the
 *      integration, F_c, τ_c = fr_coupling_solve(&cp.drive, dt, &body) are added to the proxy.
 *   4. fr_coupling_output(&cp, v_b⁺, ω_b⁺, &cmd)          → −F_c, −τ_c in the device frame
 *   5. fr_passivity_step(&po, dx_dev, &cmd.force)         (and the rotational port for torque)
 *   6. fr_safety_feed / fr_safety_apply(&safety, &cmd, now, &out); fr_device_write(dev, &out)
 *   7. fr_passivity_commit(&po, out.force)                (what was really rendered)
 *
 * NaN and faults: a device sample with status DISCONNECTED or FAULT, or any non-finite number
 * in the pose or velocities, or a zero quaternion, is rejected: the coupling keeps its last
 * accepted target (holding still: target velocity 0), so the proxy is held where the hand was
 * and never jumps; the user force for that tick is zero (the hand's position is unknown). Before
 * the first accepted sample the drive is inactive (the proxy is free) and the output is zero.
 * A non-finite proxy pose or velocity (a broken world) makes the drive inactive and the output
 * zero. No rejected value is ever stored, so the coupling state stays finite.
 */
#ifndef FURERU_COUPLING_H
#define FURERU_COUPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "fureru/device.h"
#include "fureru/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- workspace transform */

/* Device frame → world: x_w = s R x_dev + o; orientations q_w = R q_dev. */
typedef struct fr_workspace {
    double scale;   /* world metres per device metre, > 0 */
    fr_quat rot;    /* R: device axes → world axes, unit quaternion */
    fr_vec3 offset; /* m, world position of the device origin */
} fr_workspace;

fr_workspace fr_workspace_identity(void);
/* FR_OK, or FR_ERR_RANGE when scale is not finite and > 0, rot is not a unit quaternion
 * (|‖q‖ − 1| > 1e-9) or offset is not finite. */
int fr_workspace_check(const fr_workspace *ws);
fr_vec3 fr_workspace_point_to_world(const fr_workspace *ws, fr_vec3 p_dev);  /* s R p + o */
fr_vec3 fr_workspace_point_to_device(const fr_workspace *ws, fr_vec3 p_w);   /* Rᵀ(p − o)/s */
fr_vec3 fr_workspace_vel_to_world(const fr_workspace *ws, fr_vec3 v_dev);    /* s R v */
fr_vec3 fr_workspace_vel_to_device(const fr_workspace *ws, fr_vec3 v_w);     /* Rᵀ v / s */
fr_quat fr_workspace_rot_to_world(const fr_workspace *ws, fr_quat q_dev);    /* R q */
fr_quat fr_workspace_rot_to_device(const fr_workspace *ws, fr_quat q_w);     /* Rᵀ q */
fr_vec3 fr_workspace_angvel_to_world(const fr_workspace *ws, fr_vec3 w_dev); /* R ω */
fr_vec3 fr_workspace_angvel_to_device(const fr_workspace *ws, fr_vec3 w_w);  /* Rᵀ ω */
/* Forces and torques map so that power is the same on both sides (F_dev·v_dev = F_w·v_w). */
fr_vec3 fr_workspace_force_to_device(const fr_workspace *ws, fr_vec3 f_w);   /* s Rᵀ f */
fr_vec3 fr_workspace_force_to_world(const fr_workspace *ws, fr_vec3 f_dev);  /* R f / s */
fr_vec3 fr_workspace_torque_to_device(const fr_workspace *ws, fr_vec3 t_w);  /* Rᵀ τ */
fr_vec3 fr_workspace_torque_to_world(const fr_workspace *ws, fr_vec3 t_dev); /* R τ */

/* ---------------------------------------------------------------- coupling */

/* Default fraction of the device's maximum stiffness/damping used by fr_coupling_params_default. */
#define FR_COUPLING_DEFAULT_MARGIN 0.5

typedef struct fr_coupling_params {
    double stiffness; /* N/m felt at the device, in [0, desc.max_stiffness] */
    double damping;   /* N·s/m felt at the device, in [0, desc.max_damping] */
    double
        rot_stiffness; /* N·m/rad, in [0, desc.max_rot_stiffness] when the device renders torque */
    double rot_damping; /* N·m·s/rad, likewise */
    double max_force;   /* N at the device: the spring's stretch is shortened so that its force
                           stays ≤ this (+inf = no limit); > 0 */
    double max_torque;  /* N·m, likewise for the rotational spring */
    bool rotation;      /* couple orientation too (needs a 6-DOF sensed device) */
    fr_workspace workspace;
} fr_coupling_params;

/* Defaults: gains = FR_COUPLING_DEFAULT_MARGIN × the device's maxima, max_force/max_torque =
 * the device's (+inf when it declares 0), rotation on iff the device senses and renders 6 DOF,
 * identity workspace. */
void fr_coupling_params_default(fr_coupling_params *p, const fr_device_desc *desc);

/* What the world needs to apply the implicit coupling to the proxy in one step (world frame).
 *   F_c = k (target − anchor − dt v⁺) + c (target_vel − v⁺)
 *   τ_c = kr (rot_err − dt ω⁺) + cr (target_angvel − ω⁺)
 * where anchor is the proxy position at the start of the step and rot_err = log(q_d q_b⁻¹) at
 * the start of the step (both after the stretch limits). Inactive parts contribute nothing. */
typedef struct fr_coupling_drive {
    bool active;           /* translational part */
    bool rot_active;       /* rotational part */
    fr_vec3 anchor;        /* m, proxy centre of mass at the start of the step */
    fr_vec3 target;        /* m, device point mapped to the world (x_d⁺) */
    fr_vec3 target_vel;    /* m/s */
    double k, c;           /* N/m, N·s/m (world) */
    fr_vec3 rot_err;       /* rad, rotation vector taking the proxy's orientation to the target */
    fr_vec3 target_angvel; /* rad/s */
    double kr, cr;         /* N·m/rad, N·m·s/rad */
} fr_coupling_drive;

/* The proxy body as the world sees it when the coupling is applied (world frame). */
typedef struct fr_coupling_body {
    double mass;           /* kg; ≤ 0 or +inf: immovable (v⁺ = v) */
    fr_mat3 inertia;       /* kg·m² about the centre of mass in world axes (R I_body Rᵀ) */
    double lin_damping;    /* 1/s, the world's implicit v ← v/(1 + dt λ); 0 = none */
    double ang_damping;    /* 1/s, likewise on the angular momentum */
    fr_vec3 vel, angvel;   /* m/s, rad/s at the start of the step */
    fr_vec3 force, torque; /* N, N·m: every other force of the step, gravity (m g) included */
} fr_coupling_body;

enum fr_coupling_flag {
    FR_COUPLING_REJECTED = 1 << 0,  /* the device sample was not used; holding the last one */
    FR_COUPLING_NO_TARGET = 1 << 1, /* no sample accepted yet: drive inactive, output zero */
    FR_COUPLING_LIMITED = 1 << 2,   /* the stretch limit shortened the spring (force or torque) */
    FR_COUPLING_PROXY_BAD = 1 << 3, /* non-finite proxy state: drive inactive, output zero */
};

typedef struct fr_coupling_stats {
    uint64_t updates;  /* calls to fr_coupling_update */
    uint64_t rejected; /* device samples rejected */
    uint64_t limited;  /* updates where a stretch limit acted */
    uint64_t proxy_bad;
} fr_coupling_stats;

typedef struct fr_coupling {
    /* constants (fr_coupling_init) */
    fr_coupling_params p;
    double dt;           /* s, the world step */
    double k, c, kr, cr; /* world-frame gains */
    double max_f, max_t; /* N, N·m: world-frame limits of the spring part */
    bool torque_out;     /* the device renders torque */
    /* tick-thread state */
    bool have_target;        /* a sample was accepted at least once */
    bool valid;              /* the last update accepted its sample and the proxy was finite */
    int flags;               /* fr_coupling_flag mask of the last update */
    fr_vec3 x_d, v_d;        /* m, m/s: last accepted target (world) */
    fr_quat q_d;             /* last accepted target orientation (world) */
    fr_vec3 w_d;             /* rad/s */
    fr_coupling_drive drive; /* for the world's step (fr_coupling_solve) */
    fr_vec3 proxy_force;     /* N: coupling force on the proxy of the last output (world) */
    fr_vec3 proxy_torque;    /* N·m */
    fr_coupling_stats stats;
} fr_coupling;

/* Check p against the device (gains within [0, max], rotation only with a 6-DOF sensed device,
 * limits > 0, workspace valid) and dt (finite, > 0, the world step). FR_ERR_INVAL on NULL,
 * FR_ERR_RANGE on a bad value, FR_ERR_UNSUPPORTED for rotation on a 3-DOF sensed device. */
int fr_coupling_init(fr_coupling *c, const fr_coupling_params *p, const fr_device_desc *desc,
                     double dt);
/* Forget the target (back to "no sample yet"); counters are kept. */
void fr_coupling_reset(fr_coupling *c);

/* Step 2 of the tick: take the device sample and the proxy's pose at the start of the step,
 * write c->drive. Returns the fr_coupling_flag mask. */
int fr_coupling_update(fr_coupling *c, const fr_device_state *s, const fr_pose *proxy_pose);

/* Step 3, inside the world step (pure; any thread): the coupling force and torque to add to the
 * proxy given everything else acting on it in this step, such that the world's ordinary update
 * yields the implicit solution. v_next/w_next (may be NULL) receive the predicted v⁺, ω⁺. */
void fr_coupling_solve(const fr_coupling_drive *d, double dt, const fr_coupling_body *b,
                       fr_vec3 *force, fr_vec3 *torque, fr_vec3 *v_next, fr_vec3 *w_next);

/* The implicit coupling force and torque for a given next proxy velocity (the formula of
 * fr_coupling_drive): what fr_coupling_solve applied, recomputed from the world's v⁺, ω⁺. */
void fr_coupling_eval(const fr_coupling_drive *d, double dt, fr_vec3 v_next, fr_vec3 w_next,
                      fr_vec3 *force, fr_vec3 *torque);

/* Step 4: the device command (device frame) = the opposite of the coupling force on the proxy,
 * evaluated at the proxy's velocities after the step. Zero when the last sample was rejected,
 * before any target, or when v⁺/ω⁺ are not finite. Torque is zero unless the device renders
 * torque and rotation is coupled. Returns the flags of the last update (+ PROXY_BAD). */
int fr_coupling_output(fr_coupling *c, fr_vec3 v_next, fr_vec3 w_next, fr_device_cmd *cmd);
/* Same, from the force and torque the world reports it applied to the proxy (world frame). */
int fr_coupling_output_applied(fr_coupling *c, fr_vec3 force, fr_vec3 torque, fr_device_cmd *cmd);

/* The last accepted target pose in the world (to place the proxy at start-up). False before the
 * first accepted sample. */
bool fr_coupling_target(const fr_coupling *c, fr_pose *out);

/* Critical damping 2√(k m) for stiffness k and mass m (for choosing the proxy-side gains). */
static inline double fr_coupling_critical_damping(double k, double m)
{
    return 2.0 * sqrt(k * m);
}

/* ---------------------------------------------------------------- passivity */

/* Colgate–Schenkel: a device of physical damping b (N·s/m) rendering a sampled wall
 * F = −K x − B (x_k − x_{k−1})/T with period T is passive iff b > K T/2 + |B|; the largest
 * passive stiffness is K_max = 2 (b − |B|)/T (0 when |B| ≥ b). NaN for non-finite or T ≤ 0. */
double fr_passivity_kmax(double b, double B, double T);
bool fr_passivity_colgate(double K, double B, double b, double T); /* b > K T/2 + |B| */

/* How the observer pairs force and motion (docs/haptics.md, "Which force goes with which
 * velocity"). F is the force on the hand, v(n) = Δx(n)/T the motion over the last tick. */
enum fr_passivity_mode {
    /* Default. Hannaford & Ryu's observer with the force paired with the motion it produced:
     * the environment's force F_e(n−1) was held over the interval that v(n) measures:
     *   E(n) = E(n−1) − T F_e(n−1)·v(n) + T α(n−1) |v(n−1)|² */
    FR_PASSIVITY_ZOH = 0,
    /* Hannaford & Ryu 2002 as written, f(n) = −F_e(n):
     *   E(n) = E(n−1) − T F_e(n)·v(n) + T α(n−1) |v(n−1)|²
     * Blind to zero-order-hold energy generation (for a spring-damper wall E(n) =
     * ½K x_n² + (K/2 + B/T) Σ Δx_k² ≥ 0 always); kept for comparison only. */
    FR_PASSIVITY_LITERAL = 1,
    /* Everything measured: the total force held over the interval (the controller's part and,
     * after fr_passivity_commit, the safety chain's changes included):
     *   E(n) = E(n−1) − T F_out(n−1)·v(n)
     * The strictest books: with encoder quantisation a non-passive wall leaves a slowly
     * growing debt (damping stays on); the hand never receives net energy in our tests. */
    FR_PASSIVITY_MEASURED = 2,
};

/* The longest sample delay the observer can pair across (ticks). */
#define FR_PASSIVITY_MAX_DELAY 16

typedef struct fr_passivity_params {
    double period;    /* s, T (the tick) */
    double alpha_max; /* cap on the controller's damping α (N·s/m; N·m·s/rad for torque) */
    int mode;         /* enum fr_passivity_mode */
    /* Ticks between the motion and the sample that reports it (0 ≤ delay ≤
     * FR_PASSIVITY_MAX_DELAY): the Δx given at tick n was made L = delay ticks earlier, while the
     * force output at tick n−1−L was held, so the books pair v(n) with tick n−1−L (ZOH and
     * MEASURED: −T F_out(n−1−L)·v(n), what was held, committed; LITERAL: F_e(n−L)). With L > 0
     * the controller is the late sensor's (fr_passivity_step). A device's declared latency
     * (fr_device_desc.latency) gives it. */
    int delay;
} fr_passivity_params;

/* period T, alpha_max = desc->max_damping (rot: max_rot_damping), FR_PASSIVITY_ZOH,
 * delay = desc->latency in whole ticks, rounded up (capped at FR_PASSIVITY_MAX_DELAY). */
void fr_passivity_params_default(fr_passivity_params *p, const fr_device_desc *desc, double period);
void fr_passivity_params_default_rot(fr_passivity_params *p, const fr_device_desc *desc,
                                     double period);

enum fr_passivity_flag {
    FR_PASSIVITY_ACTIVE = 1 << 0,    /* α > 0 this tick */
    FR_PASSIVITY_CAPPED = 1 << 1,    /* α hit alpha_max */
    FR_PASSIVITY_NONFINITE = 1 << 2, /* Δx or the force was not finite: nothing updated */
};

typedef struct fr_passivity_stats {
    uint64_t ticks, active, capped, nonfinite;
    double dissipated; /* J: Σ T α(n) |v(n)|², what the controller planned to dissipate */
} fr_passivity_stats;

/* One port (force/velocity, or torque/angular velocity): vector form, one energy for all axes
 * (passivity is a property of the port's total power; per-axis observers would take a passive
 * exchange of energy between axes for generation and damp it). Plain struct, no allocation. */
/* One tick's output, kept until the motion it produced is reported. */
typedef struct fr_passivity_past {
    fr_vec3 fe, fout, v; /* F_e, F_out (or what was committed), v of that tick */
    fr_vec3 vp;          /* the motion predicted for the interval that tick's output was held */
    double alpha;
    bool altered;
} fr_passivity_past;

typedef struct fr_passivity {
    double T, alpha_max;
    int mode;
    int delay, head; /* L; past[head] is the last tick's entry */
    fr_passivity_past past[FR_PASSIVITY_MAX_DELAY + 1];
    double count;      /* m (rad): the smallest displacement component seen (an encoder's count) */
    double E;          /* J: observed energy flowed into the environment (≥ 0: passive so far) */
    double alpha;      /* α(n), N·s/m */
    fr_vec3 v_prev;    /* v(n−1) */
    fr_vec3 fe_prev;   /* F_e(n−1): the environment force requested last tick */
    fr_vec3 fout_prev; /* F_out(n−1): what was output (or committed) last tick */
    bool altered;      /* fr_passivity_commit changed the last output */
    fr_passivity_stats stats;
} fr_passivity;

/* FR_ERR_RANGE unless period > 0, alpha_max ≥ 0 (finite), mode known and delay in range. */
int fr_passivity_init(fr_passivity *po, const fr_passivity_params *p);
/* E = 0, no history (counters kept). */
void fr_passivity_reset(fr_passivity *po);
/* One tick. dx = displacement of the port since the previous call (device frame; m, or the
 * rotation vector log(q(n) q(n−1)⁻¹) for a rotational port); *force = the environment's force on
 * the hand in, the controlled force out: F_out = F_e − α(n) v(n), with
 *   α(n) = 0 if E(n) ≥ 0, else min(alpha_max, −E(n) / (T |v(n)|²)),
 * computed without dividing by a small |v|² (when |v| → 0, α = alpha_max and α v → 0).
 * With delay L > 0 the controller only takes F_e towards zero along the motion predicted for
 * the hold interval, v_p = v(n) + (L + 1)(v(n) − v(n−1)) (a component's change within two of
 * the smallest displacements seen, an encoder's dither, is not extrapolated): when E' < 0 and
 * F_e·v_p > 0,
 *   F_out = F_e − r v_p/|v_p|,  r = min(−E'/(T|v_p|), F_e·v_p/|v_p|, alpha_max |v_p|),
 * E' = E(n) − T Σ_{k<L} F_out(n−1−k)·v_p(n−1−k) (the ticks not yet reported); α(n) = r/|v_p|. A
 * non-finite dx or force leaves E and the history untouched, α = 0, and passes the force
 * through (the safety chain rejects a non-finite one). Returns the fr_passivity_flag mask. */
int fr_passivity_step(fr_passivity *po, fr_vec3 dx, fr_vec3 *force);
/* What was really rendered after the safety chain (optional; without it the output is assumed
 * rendered as computed). In ZOH mode an altered output is booked as measured for that tick. */
void fr_passivity_commit(fr_passivity *po, fr_vec3 force_written);
static inline double fr_passivity_energy(const fr_passivity *po)
{
    return po->E;
}

#ifdef __cplusplus
}
#endif
#endif
