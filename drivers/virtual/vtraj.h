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
