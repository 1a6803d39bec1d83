/*
 * Bullet's rigid-body world (btDiscreteDynamicsWorld with btSequentialImpulseConstraintSolver,
 * double precision) behind a C interface for bench/common/engine.c: what a user who does not
 * pick fureru or ODE would pick today. Built when Meson finds bullet-float64 and a C++ compiler
 * (BENCH_HAVE_BULLET); engine.c reports the engine as unavailable otherwise.
 */
#ifndef BENCH_ENGINE_BULLET_H
#define BENCH_ENGINE_BULLET_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_bullet bench_bullet;

/* mu: the friction of every contact (Bullet multiplies the two bodies' coefficients: each gets
 * √mu); iters: the sequential-impulse solver's iterations (<= 0: Bullet's default, 10). */
bench_bullet *bench_bullet_create(double dt, const double gravity[3], double mu, int iters);
void bench_bullet_destroy(bench_bullet *b);
/* The ground: a static half-space z < 0 (btStaticPlaneShape). */
int bench_bullet_add_ground(bench_bullet *b);
/* A dynamic box of full size size[3], mass kg, at p[3] with orientation q = (w, x, y, z);
 * returns its index or < 0. */
int bench_bullet_add_box(bench_bullet *b, const double size[3], double mass, const double p[3],
                         const double q[4]);
/* A force on the body's centre of mass for the next step only. */
void bench_bullet_apply_force(bench_bullet *b, int body, const double f[3]);
/* One step of dt (no substeps, no interpolation). */
int bench_bullet_step(bench_bullet *b);
/* p[3], q[4] = (w, x, y, z); v[3]. */
void bench_bullet_pose(const bench_bullet *b, int body, double p[3], double q[4]);
void bench_bullet_vel(const bench_bullet *b, int body, double v[3]);
/* After the last step: manifolds with contacts, their points and the deepest penetration (m). */
void bench_bullet_contacts(const bench_bullet *b, int *pairs, int *points, double *max_pen);

#ifdef __cplusplus
}
#endif

#endif
