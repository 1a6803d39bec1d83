/*
 * Watch one thread for forbidden calls: allocation, mutex locks, blocking waits and output.
 * The test executable interposes malloc & co., pthread_mutex_lock, pthread_cond_wait, sem_wait,
 * read/write, poll, nanosleep, sched_yield, syscall() and stdio output; when the watched thread
 * calls one while armed, a counter goes up. Sanitizer builds replace malloc themselves, so there
 * the allocation counters are unavailable (fri_watch_available() says so) and such tests skip that
 * check.
 */
#ifndef FR_TEST_INTERPOSE_H
#define FR_TEST_INTERPOSE_H

#include <pthread.h>
#include <stdbool.h>

typedef struct fri_watch_counts {
    long allocs; /* malloc, calloc, realloc, aligned allocations */
    long frees;
    long locks;    /* pthread_mutex_lock/trylock, pthread_rwlock_*lock */
    long waits;    /* pthread_cond_wait, sem_wait, poll, select, nanosleep, usleep, sleep */
    long io;       /* read, write and stdio output */
    long yields;   /* sched_yield (a spin) */
    long syscalls; /* syscall(), e.g. a futex wait or wake */
} fri_watch_counts;

bool fri_watch_available(void);
/* Watch the given thread (or the caller with pthread_self()). */
void fri_watch_thread(pthread_t t);
/* Zero the counters and start counting. */
void fri_watch_arm(void);
/* Stop counting and return what was seen since arm. */
fri_watch_counts fri_watch_disarm(void);

/* In a Check test: assert the watched thread did none of it (allocations only where they can be
 * counted). */
#define FRI_WATCH_ASSERT_QUIET(c)                                                                  \
    do {                                                                                           \
        if (fri_watch_available()) {                                                               \
            ck_assert_int_eq((c).allocs, 0);                                                       \
            ck_assert_int_eq((c).frees, 0);                                                        \
        }                                                                                          \
        ck_assert_int_eq((c).locks, 0);                                                            \
        ck_assert_int_eq((c).io, 0);                                                               \
        ck_assert_int_eq((c).waits, 0);                                                            \
    } while (0)

#endif
