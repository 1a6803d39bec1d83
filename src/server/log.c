/* The CSV log's writer thread, the fast-mode futex hand-off and the folders a log needs. */
#include <errno.h>
#include <fcntl.h>
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
/* Rows are written in chunks of about this size, and whenever the ring runs empty (so a run's
 * rows reach the file within a few ticks of being logged). */
enum { LOG_FLUSH_BYTES = 1 << 16 };

/* Write the buffer; on failure keep only the whole rows that made it (the file is cut back to
 * the last newline written) and count the rest of the buffer's rows as unwritten. */
static void flush_buf(fri_log *l)
{
    size_t done = 0;
    while (done < l->buflen && !atomic_load(&l->error)) {
        ssize_t n = write(l->fd, l->buf + done, l->buflen - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            atomic_store(&l->error, n < 0 ? errno : ENOSPC);
            break;
        }
        done += (size_t)n;
    }
    if (!atomic_load(&l->error)) {
        l->file_bytes += l->buflen;
        l->written += l->buf_rows;
    } else {
        size_t whole = done;
        while (whole > 0 && l->buf[whole - 1] != '\n') whole--;
        uint64_t rows = 0;
        for (size_t i = 0; i < whole; i++) rows += l->buf[i] == '\n';
        if (whole < done && ftruncate(l->fd, (off_t)(l->file_bytes + whole)) != 0) {
            /* cannot cut the partial row off: it stays, and is said to be partial */
        }
        l->file_bytes += whole;
        l->written += rows;
        l->unwritten += l->buf_rows - rows;
    }
    l->buflen = 0;
    l->buf_rows = 0;
}

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
    l->fd = -1;
    l->row = malloc((size_t)ncols * (FR_FORMAT_DOUBLE_MAX + 1) + 2);
    l->bufcap = LOG_FLUSH_BYTES + (size_t)ncols * (FR_FORMAT_DOUBLE_MAX + 1) + 2;
    l->buf = malloc(l->bufcap);
    if (!l->row || !l->buf) return FR_ERR_NOMEM;
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
    snprintf(l->path, sizeof l->path, "%s", path);
    l->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (l->fd < 0)
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot open log file: %s",
                           strerror(errno));
    l->has_file = true;
    /* the header row, written at once: a log that cannot take even that fails before the run */
    for (int c = 0; c < l->ncols; c++) {
        size_t n = strlen(names[c]);
        if (l->buflen + n + 2 > l->bufcap) break;
        if (c) l->buf[l->buflen++] = ',';
        memcpy(l->buf + l->buflen, names[c], n);
        l->buflen += n;
    }
    l->buf[l->buflen++] = '\n';
    flush_buf(l);
    if (atomic_load(&l->error))
        return fr_diag_set(d, FR_ERR_IO, path, 0, 0, "", "cannot write the log's header: %s",
                           strerror(atomic_load(&l->error)));
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
        l->written++;
        return;
    }
    if (atomic_load(&l->error)) {
        l->unwritten++; /* the file ends at the last whole row: the rest is counted as lost */
        return;
    }
    char *p = l->buf + l->buflen;
    for (int c = 0; c < l->ncols; c++) {
        p += fr_format_double(r[c], p);
        *p++ = ',';
    }
    p[-1] = '\n';
    l->buflen = (size_t)(p - l->buf);
    l->buf_rows++;
    if (l->buflen >= LOG_FLUSH_BYTES) flush_buf(l);
}

static void *logger_main(void *arg)
{
    fri_log *l = arg;
    pthread_setname_np(pthread_self(), "fureru-log"); /* for ps -L and the placement test */
    uint64_t half = (l->ring.mask + 1) / 2;
    for (;;) {
        const double *r = fri_logring_peek(&l->ring);
        if (!r) {
            if (l->has_file && l->buflen) flush_buf(l); /* idle: what is logged goes to disk */
            if (atomic_load(&l->done) && !fri_logring_peek(&l->ring)) break;
            /* nothing to do: sleep until the producer signals a batch (fast mode) or 20 ms */
            uint32_t seen = atomic_load(&l->data_seq);
            atomic_store(&l->consumer_waiting, 1);
            if (!fri_logring_peek(&l->ring) && !atomic_load(&l->done))
                futex_wait(&l->data_seq, seen, LOG_IDLE_NS);
            atomic_store(&l->consumer_waiting, 0);
            continue;
        }
        if (l->has_file || l->binary)
            write_row(l, r);
        else
            l->written++;
        fri_logring_release(&l->ring);
        atomic_thread_fence(memory_order_seq_cst); /* pairs with the producer's before it sleeps */
        if (atomic_load_explicit(&l->producer_waiting, memory_order_relaxed) &&
            pending(l) <= half) {
            atomic_fetch_add(&l->space_seq, 1);
            futex_wake(&l->space_seq);
        }
    }
    if (l->has_file && l->buflen) flush_buf(l);
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
        l->pending_lost++;
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
    if (l->has_file) {
        if (l->buflen) flush_buf(l);
        if (fsync(l->fd) != 0 && errno != EINVAL && errno != EROFS && !atomic_load(&l->error))
            atomic_store(&l->error, errno);
        if (close(l->fd) != 0 && !atomic_load(&l->error)) atomic_store(&l->error, errno);
        l->fd = -1;
        l->has_file = false;
    }
    /* binary mode (a recording): raw rows through stdio, then the trailer */
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
    if (l->started || l->has_file || l->file) fri_log_finish(l);
    fri_logring_destroy(&l->ring);
    free(l->row);
    l->row = NULL;
    free(l->buf);
    l->buf = NULL;
}
