/*
 * The settle's robots (src/world/settle.c, settle_robots.c): their joint states and commands at
 * the start, kept while the settle steps and restored when it gives up. Build time only.
 */
#ifndef FRI_SETTLE_INTERNAL_H
#define FRI_SETTLE_INTERNAL_H

#include "world_internal.h"

/* The robots' joint states at the start, one block: q then qd of each robot, and their PD
 * commands (kp, kd, q_ref, qd_ref, tau), which the controllers' hold sets while settling. */
typedef struct fri_settle_robots {
    double *buf;
    double *cmd;
    fr_pose *root; /* each robot's root link's pose at the start */
    double *size; /* each robot's extent: the farthest a link's centre of mass lies from the root */
    bool *touched; /* whether it has touched anything yet (a robot in the air is held) */
} fri_settle_robots;

int fri_settle_robots_save(fr_world *w, fri_settle_robots *rs);
/* Back to the start's joint positions (with_q; a frozen robot's always: the constraint stage may
 * have moved its joints) and rates, or the rates set to zero; only robot `only` when >= 0. */
void fri_settle_robots_reset_one(fr_world *w, const fri_settle_robots *rs, bool with_q, bool rates,
                                 int only);
void fri_settle_robots_reset(fr_world *w, const fri_settle_robots *rs, bool with_q, bool rates);
/* Does a contact of this step touch one of robot r's links? */
bool fri_settle_robot_supported(const fr_world *w, int r);
/* After a settle that gave up: the robots' commands as they were, and nothing carried over from
 * the settle's steps (the run then starts as without settling). */
void fri_settle_robots_restore_commands(fr_world *w, const fri_settle_robots *rs);
void fri_settle_robots_free(fri_settle_robots *rs);

#endif
