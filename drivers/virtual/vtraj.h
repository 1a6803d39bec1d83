/* Target trajectories of the virtual device's hand (internal). */
#ifndef FURERU_VTRAJ_H
#define FURERU_VTRAJ_H

#include "fureru/virtual.h"

typedef struct fri_vtraj {
    int type;           /* enum fr_vtraj_type */
    fr_vec3 a, b, dir;  /* line: from, to, unit direction; poke: start, -, unit direction */
    double speed, half; /* line: m/s, s per leg */
    fr_vec3 c, e1, e2;  /* circle */
    double r, period, omega, depth;
    fr_quat orient; /* orientation target without csv quaternions */
    /* csv: times from 0, positions (offset applied), orientations */
    int n;
    double *t;
    fr_vec3 *p;
    fr_quat *q; /* NULL without quaternion columns */
    bool loop;
    double dur;
} fri_vtraj;

/* The hand's step is exp(A·dt) by scaling and squaring, whose error grows with the rate
 * ‖A·dt‖∞ = (stiffness + damping + 1)·dt/mass (SI numbers): the static displacement under a
 * constant force is off by 7e-7 of itself at 1e8, 5e-6 at 1e9, 4e-3 at 1e12 and 3.7 at 1e18
 * (with a steady speed of 2.8 m/s at rest), and beyond ~3e17 the squarings run out and every
 * sample is NaN. A hand faster than FRI_VHAND_MAX_RATE is refused. */
#define FRI_VHAND_MAX_RATE 1e8
static inline double fri_vhand_rate(const fr_virtual_params *p)
{
    return (p->hand.stiffness + p->hand.damping + 1.0) * p->dt / p->hand.mass;
}

/* Parameter checks without file positions (fr_virtual_open on a programmatic params). */
int fri_vtraj_validate(const fr_virtual_params *p, fr_diag *d);
/* Set up (loads the csv; errors name the csv file, line, column and column name). */
int fri_vtraj_init(fri_vtraj *tr, const fr_virtual_params *p, fr_diag *d);
void fri_vtraj_free(fri_vtraj *tr);
/* Position and velocity at t. */
void fri_vtraj_eval(const fri_vtraj *tr, double t, fr_vec3 *p, fr_vec3 *v);
/* Hermite data of the step [t0, t1]: piecewise-linear trajectories use the piece that contains
 * the midpoint at both ends, so a corner on a tick is represented exactly. */
void fri_vtraj_step(const fri_vtraj *tr, double t0, double t1, fr_vec3 *p0, fr_vec3 *v0,
                    fr_vec3 *p1, fr_vec3 *v1);
/* Orientation and angular velocity (world frame) at t. */
void fri_vtraj_orient(const fri_vtraj *tr, double t, fr_quat *q, fr_vec3 *w);

#endif
