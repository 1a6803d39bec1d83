/* One progress line, rewritten in place with \r (see progress.h). */
#include "progress.h"

#include <math.h>

enum { PROGRESS_AFTER = 2 }; /* s: short runs stay silent */

static double since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

void fri_progress_start(fri_progress *p, FILE *out, double total_ticks)
{
    p->out = out;
    p->total_ticks = total_ticks;
    p->next = PROGRESS_AFTER;
    p->shown = false;
    clock_gettime(CLOCK_MONOTONIC, &p->start);
}

void fri_progress_update(fri_progress *p, double ticks, double dt)
{
    if (!p->out) return;
    double wall = since(&p->start);
    if (wall < p->next) return;
    p->next = wall + 0.25;
    double sim = ticks * dt, total = p->total_ticks * dt;
    double rate = ticks > 0 ? wall / ticks : 0; /* s of wall time per tick */
    fprintf(p->out, "\rfureru: %.1f of %.1f s simulated (%.0f %%), real-time factor %.2f", sim,
            total, p->total_ticks > 0 ? 100 * ticks / p->total_ticks : 0.0,
            wall > 0 ? sim / wall : 0.0);
    if (rate > 0) fprintf(p->out, ", about %.0f s left", (p->total_ticks - ticks) * rate);
    fputs("\033[K", p->out); /* clear the rest of the line */
    fflush(p->out);
    p->shown = true;
}

void fri_progress_settle(void *user, long steps, long max_steps, double dt)
{
    fri_progress *p = user;
    if (!p->out) return;
    double wall = since(&p->start);
    if (wall < p->next) return;
    if (p->plain) {
        if (!p->shown)
            fprintf(p->out,
                    "fureru: settling the bodies before the run (world.settle): %ld of at most %ld "
                    "steps of %g s so far (world.settle=false skips it)\n",
                    steps, max_steps, dt);
        fflush(p->out);
        p->shown = true;
        p->next = INFINITY;
        return;
    }
    p->next = wall + 0.25;
    fprintf(p->out,
            "\rfureru: settling (world.settle): %.3g of at most %.3g s simulated, at most %.0f s "
            "left\033[K",
            (double)steps * dt, (double)max_steps * dt,
            (double)(max_steps - steps) * wall / (double)steps);
    fflush(p->out);
    p->shown = true;
}

void fri_progress_end(fri_progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
    }
}
