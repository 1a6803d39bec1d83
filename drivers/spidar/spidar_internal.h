/* Internal interfaces of the SPIDAR driver: board protocol tables, counter unwrapping, the
 * lock-free mailboxes and the transport. Exposed to the tests, not installed. */
#ifndef FURERU_SPIDAR_INTERNAL_H
#define FURERU_SPIDAR_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fureru/spidar.h"

/* ---------------------------------------------------------------- board protocol tables */

#define FRI_SPIDAR_MAX_PACKET 512

/* One board sample, as parsed from an IN packet. */
typedef struct fri_spidar_raw {
    uint32_t counter[FR_SPIDAR_CHANNELS]; /* raw counter values, counter_bits wide */
    double adc[FR_SPIDAR_CHANNELS];       /* V */
    uint32_t pio;                         /* digital inputs */
    uint32_t status;                      /* board status word */
} fri_spidar_raw;

typedef struct fri_spidar_board {
    const char *name;
    uint16_t vid, pid;
    uint8_t ep_out, ep_in;
    int in_len;       /* bytes requested per IN transfer */
    int in_min;       /* shortest IN packet that carries a whole sample */
    int counter_bits; /* 16 or 24 */
    int negate;       /* 1: the host negates the counter */
    uint32_t button_mask;
    /* Init packet k (0, 1, ...) into buf; returns its length, 0 when there are no more.
     * first_open is 1 only the first time the board is opened in this process. */
    int (*build_init)(int k, int first_open, uint8_t *buf);
    /* The command packet with 8 channel DAC values; returns its length. */
    int (*build_command)(const int16_t dac[FR_SPIDAR_CHANNELS], uint8_t *buf);
    /* A packet to send before each IN (0 = none). */
    int (*build_request)(uint8_t *buf);
    /* Parse an IN packet; FR_OK or FR_ERR_PARSE (too short). */
    int (*parse)(const uint8_t *buf, int len, fri_spidar_raw *out);
} fri_spidar_board;

/* The table for a board type, NULL for FR_SPIDAR_BOARD_NONE or an unknown type. */
const fri_spidar_board *fri_spidar_board_get(int board);

/* Counter unwrapping: the board's counter_bits-wide counter into a 64-bit count, shortest
 * delta (a string never moves half the counter range between two samples). */
typedef struct fri_unwrap {
    int64_t count;
    uint32_t last;
    int valid; /* 0 until the first sample */
} fri_unwrap;
/* Signed difference raw − last in the counter's modular arithmetic. */
static inline int64_t fri_unwrap_delta(uint32_t raw, uint32_t last, int bits)
{
    uint32_t mask = bits >= 32 ? 0xffffffffu : ((1u << bits) - 1u);
    uint32_t d = (raw - last) & mask;
    int64_t s = (int64_t)d;
    if (d & (1u << (bits - 1))) s -= (int64_t)mask + 1;
    return s;
}
static inline void fri_unwrap_apply(fri_unwrap *u, uint32_t raw, int bits, int negate)
{
    if (!u->valid) {
        int64_t d = fri_unwrap_delta(raw, 0, bits); /* sign-extended first value */
        u->count = negate ? -d : d;
        u->valid = 1;
    } else {
        int64_t d = fri_unwrap_delta(raw, u->last, bits);
        u->count += negate ? -d : d;
    }
    u->last = raw;
}

/* ---------------------------------------------------------------- triple buffer */

/* set_minimum is called from signal-handler paths and read/write must not lock: the atomics
 * used must be lock-free. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic int must be lock-free");

/*
 * Single-producer single-consumer latest-value mailbox: three slots, the producer owns one
 * (back), the consumer one (front), the third (mid) is exchanged atomically with a "fresh" bit.
 * Wait-free on both sides, no torn reads, no data race: slot contents are handed over by the
 * acq_rel exchange.
 */
#define FRI_TBUF_FRESH 4u
typedef struct fri_tbuf {
    _Atomic unsigned mid;
    unsigned back;  /* producer's slot */
    unsigned front; /* consumer's slot */
} fri_tbuf;
static inline void fri_tbuf_init(fri_tbuf *t)
{
    t->back = 0;
    atomic_init(&t->mid, 1u);
    t->front = 2;
}
/* Producer: after filling slot[t->back], publish it. */
static inline void fri_tbuf_publish(fri_tbuf *t)
{
    t->back =
        atomic_exchange_explicit(&t->mid, t->back | FRI_TBUF_FRESH, memory_order_acq_rel) & 3u;
}
/* Consumer: true when a newer slot was taken; slot[t->front] is the newest either way. */
static inline bool fri_tbuf_take(fri_tbuf *t)
{
    if (!(atomic_load_explicit(&t->mid, memory_order_acquire) & FRI_TBUF_FRESH)) return false;
    t->front = atomic_exchange_explicit(&t->mid, t->front, memory_order_acq_rel) & 3u;
    return true;
}

/* ---------------------------------------------------------------- transport */

/* Device thread → tick thread. */
typedef struct fri_spidar_sample {
    int64_t count[FR_SPIDAR_CHANNELS]; /* unwrapped, per channel */
    double adc[FR_SPIDAR_CHANNELS];
    uint32_t pio, status;
    int64_t t_ns; /* CLOCK_MONOTONIC: the board took the sample after this (the submission of
                     its request), not when the host happened to see it */
    uint64_t seq; /* 1, 2, ... */
} fri_spidar_sample;

/* Tick thread → device thread. */
typedef struct fri_spidar_command {
    int16_t dac[FR_SPIDAR_CHANNELS];
    int minimum;    /* 1: send the minimum instead */
    unsigned epoch; /* the transport epoch the command was computed under */
    int64_t t_ns;   /* CLOCK_MONOTONIC when posted */
} fri_spidar_command;

typedef struct fri_spidar_transport fri_spidar_transport;

/* Shared between the transport and the device layer. */
typedef struct fri_spidar_link {
    fri_tbuf sample_box;
    fri_spidar_sample sample_slot[3];
    fri_tbuf command_box;
    fri_spidar_command command_slot[3];
    _Atomic int state;                   /* enum fr_device_status: OK, FAULT or DISCONNECTED */
    _Atomic unsigned epoch;              /* bumped by every event that must drop to minimum */
    int16_t min_dac[FR_SPIDAR_CHANNELS]; /* constant after open */
} fri_spidar_link;

int64_t fri_now_ns(void);

/* Extra Gauss-Newton iterations a read may spend when the residual says the estimate is far
 * off (each step is capped by gn_max_step / gn_max_rot). */
#define FRI_SPIDAR_GN_CATCHUP 30

/* Tries of the open's pipe reset and init packets (a loaded host can make a synchronous transfer
 * miss its timeout once); the first allows 4 io_timeout per transfer, each next one twice the
 * previous. */
#define FRI_SPIDAR_INIT_ATTEMPTS 3

/* Open the USB transport; on success the device thread runs. */
int fri_spidar_transport_open(const fr_spidar_config *cfg, const fr_spidar_hooks *hooks,
                              fri_spidar_link *link, fri_spidar_transport **out);
/* Stop the thread after sending the minimum, release everything. */
void fri_spidar_transport_close(fri_spidar_transport *t);
void fri_spidar_transport_info(fri_spidar_transport *t, fr_spidar_info *out);

#endif
