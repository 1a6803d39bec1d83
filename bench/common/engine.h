/*
 * One small interface over fureru, ODE 0.16 and Bullet 3 (both double precision) so that the
 * benchmarks build the very same scene in each engine, in one process, and step them side by side.
 *
 * What one "step" costs in each engine (what the benchmarks time):
 *   fureru    fr_world_step: sweep and prune, GJK + Muller–Preparata, penalty forces, springs,
 *             integration.
 *   ODE       dSpaceCollide (near callback: dCollide, one dContact joint per point, up to
 *             ode_contacts per geom pair) + dWorldQuickStep or dWorldStep + dJointGroupEmpty;
 *             the emulated springs (dBodyAddForce) are included too.
 *   Bullet    btDiscreteDynamicsWorld::stepSimulation(dt, 0): one step of broad phase (dbvt),
 *             narrow phase (box–box, box–plane manifolds), sequential impulses (10 iterations,
 *             split impulse off: Bullet's defaults) and integration; springs by applyCentralForce.
 *
 * The ground is a static box in fureru (top face at z = 0; fureru has no half-space), a
 * dCreatePlane in ODE (what ODE users do; its box–plane test is the cheapest ODE has) and a
 * btStaticPlaneShape in Bullet. Bullet multiplies the two bodies' friction coefficients: each
 * gets √μ_s.
 * Friction: fureru takes μ_s and μ_k; ODE has one μ (dContactApprox1: Coulomb pyramid scaled by
 * the normal force), which is given μ_s unless ode_mu >= 0.
 */
#ifndef BENCH_ENGINE_H
#define BENCH_ENGINE_H

#include <stdbool.h>

#include "fureru/math.h"
#include "fureru/world.h"

enum bench_engine_kind {
    BENCH_FURERU = 0,
    BENCH_ODE_QUICK = 1,  /* dWorldQuickStep (projected Gauss–Seidel, ode_iters sweeps) */
    BENCH_ODE_STEP = 2,   /* dWorldStep (the "big matrix" Dantzig LCP) */
    BENCH_BULLET = 3,     /* Bullet's btDiscreteDynamicsWorld (sequential impulses), when built */
    BENCH_FURERU_LCP = 4, /* fureru with world.contact.mode constraint (docs/constraint.md) */
    BENCH_NENGINES = 5,
};

extern const char *const bench_engine_names[BENCH_NENGINES]; /* "fureru", "ode_quick", ... */
/* Whether this build has the engine (Bullet is optional). */
bool bench_engine_available(int kind);
int bench_engine_parse(const char *name); /* −1 when unknown */

typedef struct bench_settings {
    double dt;         /* s */
    fr_vec3 gravity;   /* m/s² */
    double mu_s, mu_k; /* friction of every contact */
    int max_bodies;    /* capacity (both engines) */
    /* fureru */
    double fr_kappa, fr_beta; /* fr_world_def.contact_kappa/beta; κ <= 0, β < 0: world defaults */
    int fr_implicit;          /* fr_world_def.contact_implicit: 1 on, 0 off, < 0 world default */
    int fr_iters;             /* fr_world_def.implicit_iterations; <= 0: world default */
    int fr_reuse_contacts;    /* fr_world_def.reuse_contacts: 1 on, 0 off, < 0 world default */
    int fr_reuse_factor;      /* fr_world_def.reuse_factor: likewise */
    /* ODE (defaults from bench_settings_default: see docs/benchmarks.md) */
    double ode_mu;                 /* < 0: use mu_s */
    double ode_erp;                /* dWorldSetERP, 0.2 (ODE default) */
    double ode_cfm;                /* dWorldSetCFM, 1e-5 (demo_boxstack; ODE's own is 1e-10) */
    int ode_iters;                 /* dWorldSetQuickStepNumIterations, 20 (ODE default) */
    int ode_contacts;              /* dCollide max contacts per geom pair, 4 */
    double ode_surface_layer;      /* dWorldSetContactSurfaceLayer, 0.001 m (demo_boxstack) */
    double ode_max_correcting_vel; /* dWorldSetContactMaxCorrectingVel, 0.1 m/s (demo_boxstack);
                                      <= 0: ODE's default (infinite) */
    int ode_sap;                   /* 0 dHashSpace, 1 dSweepAndPruneSpace */
    /* Bullet */
    int bt_iters; /* btContactSolverInfo::m_numIterations; <= 0: Bullet's default (10) */
} bench_settings;

bench_settings bench_settings_default(void);

typedef struct bench_engine bench_engine;

/* Call once before any engine is created (dInitODE2) and once at exit (dCloseODE). */
void bench_engine_global_init(void);
void bench_engine_global_cleanup(void);

/* Messages ODE raised (dMessage, e.g. dWorldStep's "LCP internal error, s <= 0") since start-up:
 * counted (the benchmarks report them per run), not printed. */
long bench_ode_messages(void);

/* NULL on failure (message on stderr). */
bench_engine *bench_engine_create(int kind, const bench_settings *s);
void bench_engine_destroy(bench_engine *e);
/* The fureru world of a fureru engine (NULL for the others), for its solver statistics. */
fr_world *bench_engine_world(bench_engine *e);
int bench_engine_kind(const bench_engine *e);

/* Static ground: the half-space z < 0 (a box of half extents (half_xy, half_xy, 1) in fureru). */
int bench_engine_add_ground(bench_engine *e, double half_xy);
/* A dynamic box of full size `size`, uniform density; returns its index (0, 1, ...) or < 0. */
int bench_engine_add_box(bench_engine *e, fr_vec3 size, double mass, fr_pose pose);
/* Zero-rest-length spring from the body's centre of mass to an anchor moving at anchor_vel:
 * F = k·(anchor(t) − p) + c·(anchor_vel − v), evaluated from the state at the start of each step
 * (fureru: fr_world_add_spring; ODE: the same formula applied with dBodyAddForce). */
int bench_engine_add_spring(bench_engine *e, int body, fr_vec3 anchor, fr_vec3 anchor_vel, double k,
                            double c);

/* One step; < 0 on an engine error. */
int bench_engine_step(bench_engine *e);

fr_pose bench_engine_pose(const bench_engine *e, int body);
fr_vec3 bench_engine_vel(const bench_engine *e, int body);
/* Force the spring exerted on its body in the last step, N. */
fr_vec3 bench_engine_spring_force(const bench_engine *e, int spring);
/* After the last step: touching body pairs (fureru: overlapping shape pairs; ODE: geom pairs
 * with at least one contact), contact points (ODE; fureru: = pairs) and the deepest penetration. */
int bench_engine_contact_pairs(const bench_engine *e);
int bench_engine_contact_points(const bench_engine *e);
double bench_engine_max_penetration(const bench_engine *e);

/* Monotonic clock, s. */
double bench_now(void);
/* The calling thread's CPU time, s (CLOCK_THREAD_CPUTIME_ID). */
double bench_cpu_now(void);
/* Median of a[0..n) (sorts a). */
double bench_median(double *a, int n);
/* Comma-separated list of numbers into out[0..max); returns the count, or −1 on a bad item. */
int bench_parse_list(const char *s, double *out, int max);

#endif
