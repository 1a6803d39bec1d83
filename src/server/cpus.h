/*
 * Where our threads run. With two or more CPUs a real-time run gives the tick thread the last
 * CPU to itself: every other thread of the process (the supervisor, the logger, the viewer, the
 * threads OpenGL drivers start on their own with every CPU allowed, e.g. Mesa's shader-cache
 * writer) is kept on the others. fri_cpus_sweep finds the threads that may still use the tick's
 * CPU in /proc/self/task and takes it out of their sets; fri_cpus_restore gives them back.
 * Never called on the tick thread (it opens files and allocates).
 */
#ifndef FR_SERVER_CPUS_H
#define FR_SERVER_CPUS_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#define FRI_CPUS_MOVED_MAX 64 /* threads whose sets a run remembers to restore */

typedef struct fri_cpus_moved {
    int n;
    long total; /* threads moved off the tick's CPU during the run (restored or not) */
    struct {
        pid_t tid;
        cpu_set_t before, after;
    } t[FRI_CPUS_MOVED_MAX];
} fri_cpus_moved;

/* The CPU a pinned tick thread takes: the last online CPU when there are two or more and the
 * calling thread may use it and another one; −1 otherwise (one CPU: nothing to keep apart). */
int fri_cpus_tick_choice(void);
/* Take cpu out of the calling thread's set (so threads it starts inherit that); false when cpu
 * < 0 or the set would be empty (then unchanged). */
bool fri_cpus_keep_off(int cpu);
/* Take cpu out of the set of every thread of this process but keep whose set holds cpu and
 * another CPU (a thread pinned to cpu alone was put there on purpose); remember them in m.
 * Returns how many were moved now. */
int fri_cpus_sweep(int cpu, pid_t keep, fri_cpus_moved *m);
/* Give the moved threads their sets back (those that still exist and were not changed since). */
void fri_cpus_restore(fri_cpus_moved *m);
/* The calling thread's id (gettid). */
pid_t fri_cpus_tid(void);
/* Whether thread tid of this process may run on cpu (false if it does not exist). */
bool fri_cpus_allowed(pid_t tid, int cpu);

#endif
