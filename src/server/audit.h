/* The run's energy audit (docs/world.md "Energy", docs/scenes.md): after every tick, the world's
 * energy less the work done on it must not rise by more than a stated share of the energy the
 * scene holds; a larger rise is a numerical failure, named by the body that gained most. */
#ifndef FR_SERVER_AUDIT_H
#define FR_SERVER_AUDIT_H

#include "fureru/server.h"

typedef struct fri_audit {
    double tolerance;  /* share of the scale a tick may gain (opts.energy_tolerance) */
    int nbodies;       /* dynamic and link bodies audited */
    fr_body_id *ids;   /* [nbodies] */
    double *e;         /* [nbodies] each body's kinetic + potential energy after the last tick, J */
    double *de;        /* [nbodies] its rise over the last tick, J */
    double *own;       /* [nbodies] (culprit's: de before the contacts') */
    double *size;      /* [nbodies] m·|g|·r_g, the body's share of the scale, J */
    double robots;     /* Σ over robots of M·|g|·R (mass, extent), their share of the scale, J */
    double scale;      /* the scale after the last tick (the next tick's), J */
    double level;      /* total − work after the last tick, J */
    double joint_work; /* the robots' joint work so far, J */
    double work;       /* all the work done on the world so far, J */
    bool outside;      /* set before a tick with an outside intervention (a haptic reset puts
                          the proxy at the grip): that tick's rise is work, not a failure */
    double outside_work; /* J: the rises so taken */
    fr_server_energy stats;
} fri_audit;

/* Start-up (allocates): the bodies, their sizes and the energy at the start. */
int fri_audit_init(fri_audit *a, const fr_world *w, double tolerance);
/* After a tick (never allocates): FR_OK, or FR_ERR_NUMERIC with a->stats.fault filled. */
int fri_audit_tick(fri_audit *a, const fr_world *w);
void fri_audit_free(fri_audit *a);

#endif
