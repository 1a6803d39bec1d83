/* The CSV log's writer thread, the fast-mode futex hand-off and the folders a log needs. */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fureru/base.h"
#include "files.h"
#include "log.h"
#include "record.h"

enum { LOG_IDLE_NS = 20000000 }; /* the logger's longest sleep: 20 ms (8192 records = 8 s) */

static void futex_wait(_Atomic uint32_t *word, uint32_t seen, long timeout_ns)
{
    struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen, timeout_ns ? &ts : NULL, NULL,
            0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint64_t pending(const fri_log *l)
{
    return atomic_load_explicit(&l->ring.head, memory_order_acquire) -
           atomic_load_explicit(&l->ring.tail, memory_order_acquire);
}

int fri_log_init(fri_log *l, int ncols, int capacity, bool blocking)
{
    memset(l, 0, sizeof *l);
    int err = fri_logring_init(&l->ring, ncols, capacity);
    if (err) return err;
    l->ncols = ncols;
    l->blocking = blocking;
    l->row = malloc((size_t)ncols * (FR_FORMAT_DOUBLE_MAX + 1) + 2);
    if (!l->row) return FR_ERR_NOMEM;
    atomic_init(&l->done, false);
    atomic_init(&l->error, 0);
    atomic_init(&l->space_seq, 0);
    atomic_init(&l->producer_waiting, 0);
    atomic_init(&l->data_seq, 0);
    atomic_init(&l->consumer_waiting, 0);
    return FR_OK;
}

int fri_log_open(fri_log *l, const char *path, const char *const *names, fr_diag *d)
{
    int e = fri_make_parent_dirs(path);
    if (e)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot create the log's folder: %s",
                           strerror(e));
    l->file = fopen(path, "w");
    if (!l->file)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot open log file: %s",
                           strerror(errno));
    setvbuf(l->file, NULL, _IOFBF, 1 << 20);
    for (int c = 0; c < l->ncols; c++) fprintf(l->file, "%s%s", c ? "," : "", names[c]);
    fputc('\n', l->file);
    return FR_OK;
}

int fri_log_open_binary(fri_log *l, const char *path, const char *header, fr_diag *d)
{
    int e = fri_make_parent_dirs(path);
    if (e)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot create the folder: %s",
                           strerror(e));
    l->file = fopen(path, "wb");
    if (!l->file)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot open: %s", strerror(errno));
    setvbuf(l->file, NULL, _IOFBF, 1 << 20);
    fputs(header, l->file);
    l->binary = true;
    l->hash = FRI_REC_HASH_SEED;
    return FR_OK;
}

static void write_row(fri_log *l, const double *r)
{
    if (l->binary) {
        size_t n = (size_t)l->ncols * sizeof *r;
        l->hash = fri_rec_hash(l->hash, r, n);
        if (fwrite(r, 1, n, l->file) != n && !atomic_load(&l->error))
            atomic_store(&l->error, errno ? errno : EIO);
        return;
    }
    char *p = l->row;
    for (int c = 0; c < l->ncols; c++) {
        p += fr_format_double(r[c], p);
        *p++ = ',';
    }
    p[-1] = '\n';
    size_t n = (size_t)(p - l->row);
    if (fwrite(l->row, 1, n, l->file) != n && !atomic_load(&l->error))
        atomic_store(&l->error, errno ? errno : EIO);
}

static void *logger_main(void *arg)
{
    fri_log *l = arg;
    uint64_t half = (l->ring.mask + 1) / 2;
    for (;;) {
        const double *r = fri_logring_peek(&l->ring);
        if (!r) {
            if (atomic_load(&l->done) && !fri_logring_peek(&l->ring)) break;
            /* nothing to do: sleep until the producer signals a batch (fast mode) or 20 ms */
            uint32_t seen = atomic_load(&l->data_seq);
            atomic_store(&l->consumer_waiting, 1);
            if (!fri_logring_peek(&l->ring) && !atomic_load(&l->done))
                futex_wait(&l->data_seq, seen, LOG_IDLE_NS);
            atomic_store(&l->consumer_waiting, 0);
            continue;
        }
        if (l->file) write_row(l, r);
        l->written++;
        fri_logring_release(&l->ring);
        atomic_thread_fence(memory_order_seq_cst); /* pairs with the producer's before it sleeps */
        if (atomic_load_explicit(&l->producer_waiting, memory_order_relaxed) &&
            pending(l) <= half) {
            atomic_fetch_add(&l->space_seq, 1);
            futex_wake(&l->space_seq);
        }
    }
    if (l->file && fflush(l->file) != 0 && !atomic_load(&l->error)) atomic_store(&l->error, errno);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    l->cpu = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    return NULL;
}

int fri_log_start(fri_log *l)
{
    if (pthread_create(&l->thread, NULL, logger_main, l) != 0) return FR_ERR_NOMEM;
    l->started = true;
    return FR_OK;
}

double *fri_log_reserve(fri_log *l)
{
    double *r = fri_logring_reserve(&l->ring);
    if (r) return r;
    if (!l->blocking) {
        l->dropped++;
        return NULL;
    }
    /* fast mode is not real time: sleep until the logger has made room, never drop */
    l->waits++;
    for (;;) {
        uint32_t seen = atomic_load(&l->space_seq);
        atomic_store(&l->producer_waiting, 1); /* seq_cst: the logger sees it or we see room */
        if ((r = fri_logring_reserve(&l->ring))) break;
        futex_wait(&l->space_seq, seen, 100000000);
    }
    atomic_store(&l->producer_waiting, 0);
    return r;
}

void fri_log_commit(fri_log *l)
{
    fri_logring_commit(&l->ring);
    if (!l->blocking) return; /* real time: no system calls on the tick thread */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t batch = (l->ring.mask + 1) / 8;
    if (atomic_load_explicit(&l->consumer_waiting, memory_order_relaxed) &&
        pending(l) >= (batch ? batch : 1)) {
        atomic_fetch_add(&l->data_seq, 1);
        futex_wake(&l->data_seq);
    }
}

int fri_log_finish(fri_log *l)
{
    if (l->started) {
        atomic_store(&l->done, true);
        atomic_fetch_add(&l->data_seq, 1);
        futex_wake(&l->data_seq);
        pthread_join(l->thread, NULL);
        l->started = false;
    }
    if (l->file && l->binary && !atomic_load(&l->error)) {
        fri_rec_trailer t = {{0}, l->written, l->hash, l->dropped, l->trailer_steps};
        memcpy(t.magic, FRI_REC_END, sizeof t.magic);
        if (fwrite(&t, sizeof t, 1, l->file) != 1) atomic_store(&l->error, errno ? errno : EIO);
    }
    if (l->file) {
        if (fclose(l->file) != 0 && !atomic_load(&l->error)) atomic_store(&l->error, errno);
        l->file = NULL;
    }
    return atomic_load(&l->error) ? FR_ERR_IO : FR_OK;
}

void fri_log_destroy(fri_log *l)
{
    if (l->started) fri_log_finish(l);
    if (l->file) fclose(l->file);
    l->file = NULL;
    fri_logring_destroy(&l->ring);
    free(l->row);
    l->row = NULL;
}
