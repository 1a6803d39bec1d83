/*
 * The CSV log: the tick thread fills fixed-size records in a lock-free ring (logring.h); a logger
 * thread formats them (fr_format_double: shortest round-trip text) a row at a time and writes
 * them. In real time a full ring drops the record (counted); in fast mode the tick thread blocks
 * on a futex until the logger has freed half the ring, instead of spinning, and wakes a waiting
 * logger once a batch is pending. Start-up (open, start) and shut-down allocate and print; the
 * producer side (reserve, commit) never does, and in real time never makes a system call.
 */
#ifndef FR_SERVER_LOG_H
#define FR_SERVER_LOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fureru/config.h"
#include "logring.h"

/* The log ring's largest size: records × columns × 8 bytes (the ring has fewer slots for a
 * wide record, never fewer than 64). */
#define FRI_LOG_RING_BYTES (64.0 * 1024 * 1024)

typedef struct fri_log {
    fri_logring ring;
    int ncols;
    bool blocking; /* fast mode: wait for space instead of dropping */
    int fd;
    bool has_file; /* the CSV: false: records are counted, not written */
    FILE *file;    /* binary mode (a recording) only */
    char path[1024];
    char *row; /* one formatted row */
    char *buf; /* rows waiting to be written (whole rows only) */
    size_t buflen, bufcap;
    uint64_t buf_rows;   /* rows in buf */
    uint64_t file_bytes; /* bytes on disk, always a whole number of rows */
    pthread_t thread;
    bool started;
    atomic_bool done;
    atomic_int error;            /* errno of a failed write, 0 if none */
    _Atomic uint32_t space_seq;  /* bumped by the logger when it frees space for the producer */
    atomic_int producer_waiting; /* the producer sleeps on space_seq */
    _Atomic uint32_t data_seq;   /* bumped by the producer when a batch is pending */
    atomic_int consumer_waiting; /* the logger sleeps on data_seq */
    uint64_t written;            /* rows written whole to the file (logger thread until joined) */
    uint64_t unwritten;          /* records not written because a write failed (logger) */
    uint64_t dropped;            /* records dropped (producer) */
    uint64_t pending_lost;       /* producer: records dropped since the last record kept (the
                                    CSV's log.lost column of the next row) */
    uint64_t waits;              /* times the producer blocked on a full ring */
    double cpu;                  /* logger thread CPU time, s (after finish) */
    /* binary mode (recordings, record.h): rows are written as raw doubles and hashed; finish
     * appends a trailer with the row count, the hash, the drops and trailer_steps */
    bool binary;
    uint64_t hash;
    uint64_t trailer_steps; /* set before finish */
} fri_log;

/* The ring (capacity a power of two); no file yet. */
int fri_log_init(fri_log *l, int ncols, int capacity, bool blocking);
/* Create the folders leading to path, open it and write the header row. */
int fri_log_open(fri_log *l, const char *path, const char *const *names, fr_diag *d);
/* Binary mode: create the folders, open path and write `header` (the recording's text head). */
int fri_log_open_binary(fri_log *l, const char *path, const char *header, fr_diag *d);
/* Start the logger thread. */
int fri_log_start(fri_log *l);
/* Producer: a record to fill, or NULL when the ring is full in real time (counted as dropped). */
double *fri_log_reserve(fri_log *l);
void fri_log_commit(fri_log *l);
/* Drain what is left, stop the thread, flush, sync and close; FR_ERR_IO when a write failed
 * (l->error holds its errno; the file then ends with the last whole row that was written). */
int fri_log_finish(fri_log *l);
void fri_log_destroy(fri_log *l);

#endif
