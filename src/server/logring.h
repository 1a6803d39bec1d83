/* Single-producer single-consumer ring of fixed-size log records (arrays of doubles). */
#ifndef FR_SERVER_LOGRING_H
#define FR_SERVER_LOGRING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fri_logring {
    double *data; /* capacity × ncols */
    int ncols;
    uint64_t mask;                          /* capacity − 1 (capacity a power of two) */
    _Alignas(64) atomic_uint_fast64_t head; /* next slot the producer writes */
    _Alignas(64) atomic_uint_fast64_t tail; /* next slot the consumer reads */
} fri_logring;

int fri_logring_init(fri_logring *r, int ncols, int capacity);
void fri_logring_destroy(fri_logring *r);

/* Producer: a slot to fill, or NULL when full; then commit. */
static inline double *fri_logring_reserve(fri_logring *r)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - t > r->mask) return NULL;
    return r->data + (size_t)(h & r->mask) * (size_t)r->ncols;
}
static inline void fri_logring_commit(fri_logring *r)
{
    atomic_fetch_add_explicit(&r->head, 1, memory_order_release);
}
/* Consumer: the oldest record, or NULL when empty; then release. */
static inline const double *fri_logring_peek(fri_logring *r)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    if (t == h) return NULL;
    return r->data + (size_t)(t & r->mask) * (size_t)r->ncols;
}
static inline void fri_logring_release(fri_logring *r)
{
    atomic_fetch_add_explicit(&r->tail, 1, memory_order_release);
}

#endif
