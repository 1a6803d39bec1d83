/* Forbidden-call interposition for tests; see interpose.h. */
#include "interpose.h"

#if defined(FR_SANITIZE)

bool fri_watch_available(void)
{
    return false;
}
void fri_watch_thread(pthread_t t)
{
    (void)t;
}
void fri_watch_arm(void) {}
fri_watch_counts fri_watch_disarm(void)
{
    return (fri_watch_counts){0};
}

#else

#include <dlfcn.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_int g_armed;
static pthread_t g_thread;
static atomic_long g_allocs, g_frees, g_locks, g_waits, g_io, g_yields, g_syscalls;

bool fri_watch_available(void)
{
    return true;
}
void fri_watch_thread(pthread_t t)
{
    g_thread = t;
}

void fri_watch_arm(void)
{
    atomic_store(&g_allocs, 0);
    atomic_store(&g_frees, 0);
    atomic_store(&g_locks, 0);
    atomic_store(&g_waits, 0);
    atomic_store(&g_io, 0);
    atomic_store(&g_yields, 0);
    atomic_store(&g_syscalls, 0);
    atomic_store(&g_armed, 1);
}

fri_watch_counts fri_watch_disarm(void)
{
    atomic_store(&g_armed, 0);
    return (fri_watch_counts){atomic_load(&g_allocs),  atomic_load(&g_frees),
                              atomic_load(&g_locks),   atomic_load(&g_waits),
                              atomic_load(&g_io),      atomic_load(&g_yields),
                              atomic_load(&g_syscalls)};
}

static inline void note(atomic_long *c)
{
    if (atomic_load_explicit(&g_armed, memory_order_relaxed) &&
        pthread_equal(pthread_self(), g_thread))
        atomic_fetch_add(c, 1);
}

#define REAL(name) real_##name
#define LOOKUP(name)                                                                               \
    do {                                                                                           \
        if (!REAL(name)) *(void **)(&REAL(name)) = dlsym(RTLD_NEXT, #name);                        \
    } while (0)

void *malloc(size_t n)
{
    note(&g_allocs);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    note(&g_allocs);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    note(&g_allocs);
    return __libc_realloc(p, n);
}
void free(void *p)
{
    if (p) note(&g_frees);
    __libc_free(p);
}
void *aligned_alloc(size_t al, size_t n)
{
    note(&g_allocs);
    return __libc_memalign(al, n);
}
void *memalign(size_t al, size_t n)
{
    note(&g_allocs);
    return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n)
{
    note(&g_allocs);
    void *p = __libc_memalign(al, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

static int (*real_pthread_mutex_lock)(pthread_mutex_t *);
int pthread_mutex_lock(pthread_mutex_t *m)
{
    note(&g_locks);
    LOOKUP(pthread_mutex_lock);
    return real_pthread_mutex_lock(m);
}
static int (*real_pthread_mutex_trylock)(pthread_mutex_t *);
int pthread_mutex_trylock(pthread_mutex_t *m)
{
    note(&g_locks);
    LOOKUP(pthread_mutex_trylock);
    return real_pthread_mutex_trylock(m);
}
static int (*real_pthread_rwlock_rdlock)(pthread_rwlock_t *);
int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    note(&g_locks);
    LOOKUP(pthread_rwlock_rdlock);
    return real_pthread_rwlock_rdlock(l);
}
static int (*real_pthread_rwlock_wrlock)(pthread_rwlock_t *);
int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    note(&g_locks);
    LOOKUP(pthread_rwlock_wrlock);
    return real_pthread_rwlock_wrlock(l);
}
static int (*real_pthread_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    note(&g_waits);
    LOOKUP(pthread_cond_wait);
    return real_pthread_cond_wait(c, m);
}
static int (*real_pthread_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
                                          const struct timespec *);
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    note(&g_waits);
    LOOKUP(pthread_cond_timedwait);
    return real_pthread_cond_timedwait(c, m, t);
}
static int (*real_sem_wait)(sem_t *);
int sem_wait(sem_t *s)
{
    note(&g_waits);
    LOOKUP(sem_wait);
    return real_sem_wait(s);
}
static int (*real_poll)(struct pollfd *, nfds_t, int);
int poll(struct pollfd *f, nfds_t n, int t)
{
    note(&g_waits);
    LOOKUP(poll);
    return real_poll(f, n, t);
}
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
    note(&g_waits);
    LOOKUP(select);
    return real_select(n, r, w, e, t);
}
static int (*real_sched_yield)(void);
int sched_yield(void)
{
    note(&g_yields);
    LOOKUP(sched_yield);
    return real_sched_yield();
}
/* raw system calls (futex waits and wakes): the six argument registers are passed through */
static long (*real_syscall)(long, ...);
long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    note(&g_syscalls);
    LOOKUP(syscall);
    return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
static int (*real_nanosleep)(const struct timespec *, struct timespec *);
int nanosleep(const struct timespec *a, struct timespec *b)
{
    note(&g_waits);
    LOOKUP(nanosleep);
    return real_nanosleep(a, b);
}
static int (*real_usleep)(useconds_t);
int usleep(useconds_t u)
{
    note(&g_waits);
    LOOKUP(usleep);
    return real_usleep(u);
}
static ssize_t (*real_read)(int, void *, size_t);
ssize_t read(int fd, void *b, size_t n)
{
    note(&g_io);
    LOOKUP(read);
    return real_read(fd, b, n);
}
static ssize_t (*real_write)(int, const void *, size_t);
ssize_t write(int fd, const void *b, size_t n)
{
    note(&g_io);
    LOOKUP(write);
    return real_write(fd, b, n);
}
static int (*real_vfprintf)(FILE *, const char *, va_list);
int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    note(&g_io);
    LOOKUP(vfprintf);
    return real_vfprintf(f, fmt, ap);
}
int vprintf(const char *fmt, va_list ap)
{
    return vfprintf(stdout, fmt, ap);
}
int fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}
int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return r;
}
static size_t (*real_fwrite)(const void *, size_t, size_t, FILE *);
size_t fwrite(const void *p, size_t a, size_t b, FILE *f)
{
    note(&g_io);
    LOOKUP(fwrite);
    return real_fwrite(p, a, b, f);
}
static int (*real_fputs)(const char *, FILE *);
int fputs(const char *s, FILE *f)
{
    note(&g_io);
    LOOKUP(fputs);
    return real_fputs(s, f);
}
static int (*real_puts)(const char *);
int puts(const char *s)
{
    note(&g_io);
    LOOKUP(puts);
    return real_puts(s);
}
static int (*real_fputc)(int, FILE *);
int fputc(int c, FILE *f)
{
    note(&g_io);
    LOOKUP(fputc);
    return real_fputc(c, f);
}
int putchar(int c)
{
    return fputc(c, stdout);
}
static int (*real_fflush)(FILE *);
int fflush(FILE *f)
{
    note(&g_io);
    LOOKUP(fflush);
    return real_fflush(f);
}

#endif
