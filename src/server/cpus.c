/* Keeping our threads off the tick's CPU (cpus.h). */
#include "cpus.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

pid_t fri_cpus_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

int fri_cpus_tick_choice(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2 || ncpu > CPU_SETSIZE) return -1;
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return -1;
    int last = (int)ncpu - 1;
    if (!CPU_ISSET(last, &mine) || CPU_COUNT(&mine) < 2) return -1;
    return last;
}

bool fri_cpus_keep_off(int cpu)
{
    cpu_set_t set;
    if (cpu < 0 || sched_getaffinity(0, sizeof set, &set) != 0) return false;
    if (!CPU_ISSET(cpu, &set)) return true;
    CPU_CLR(cpu, &set);
    if (CPU_COUNT(&set) == 0) return false;
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

bool fri_cpus_allowed(pid_t tid, int cpu)
{
    cpu_set_t set;
    return sched_getaffinity(tid, sizeof set, &set) == 0 && CPU_ISSET(cpu, &set);
}

int fri_cpus_sweep(int cpu, pid_t keep, fri_cpus_moved *m)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    int moved = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || (pid_t)tid == keep) continue;
        cpu_set_t set;
        if (sched_getaffinity((pid_t)tid, sizeof set, &set) != 0 || !CPU_ISSET(cpu, &set) ||
            CPU_COUNT(&set) < 2)
            continue;
        cpu_set_t before = set;
        CPU_CLR(cpu, &set);
        if (sched_setaffinity((pid_t)tid, sizeof set, &set) != 0) continue;
        moved++;
        m->total++;
        if (m->n < FRI_CPUS_MOVED_MAX) {
            m->t[m->n].tid = (pid_t)tid;
            m->t[m->n].before = before;
            m->t[m->n].after = set;
            m->n++;
        }
    }
    closedir(d);
    return moved;
}

void fri_cpus_restore(fri_cpus_moved *m)
{
    for (int i = 0; i < m->n; i++) {
        cpu_set_t now;
        /* a thread that changed its set since (or a reused id) keeps what it has */
        if (sched_getaffinity(m->t[i].tid, sizeof now, &now) == 0 &&
            CPU_EQUAL(&now, &m->t[i].after))
            sched_setaffinity(m->t[i].tid, sizeof m->t[i].before, &m->t[i].before);
    }
    m->n = 0;
}
