/* The one-line progress of a long run on a terminal: simulated time, real-time factor, time
 * left. Printed by the supervisor thread (fr_server_run), never by the tick thread. */
#ifndef FR_SERVER_PROGRESS_H
#define FR_SERVER_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

typedef struct fri_progress {
    FILE *out; /* NULL: off */
    double total_ticks;
    struct timespec start;
    double next; /* s of wall time of the next update */
    bool shown;
    bool plain; /* the settle's: not a terminal, one line once (fri_progress_settle) */
} fri_progress;

void fri_progress_start(fri_progress *p, FILE *out, double total_ticks);
/* ticks done so far, dt in s; prints from 2 s on, four times a second */
void fri_progress_update(fri_progress *p, double ticks, double dt);
/* clear the line (the summary follows) */
void fri_progress_end(fri_progress *p);
/* The settle before the run (fr_settle_progress_fn, user: a started fri_progress, plain when its
 * out is not a terminal): from 2 s on, on a terminal a line like a run's, else one line once. */
void fri_progress_settle(void *user, long steps, long max_steps, double dt);

#endif
