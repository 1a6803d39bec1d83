/*
 * An emulated SPIDAR USB board (Sh4 0x0CEC:0x0205 or Simple 0x0CEC:0x0203) for tests run under
 * umockdev-wrapper: a umockdev testbed with one USB device whose usbdevfs ioctls are answered by
 * a "handle-ioctl" handler. The grip moves where the test puts it; the board reports the encoder
 * counts of that pose and records every DAC packet it receives. Faults can be injected.
 *
 * The protocol and the counts are written here from docs/haptics.md §9, independently
 * of the driver's board tables. Thread-safe: the handler runs on umockdev's thread.
 */
#ifndef UMOCKDEV_SPIDAR_H
#define UMOCKDEV_SPIDAR_H

#include <stddef.h>
#include <stdint.h>

#include "fureru/spidar.h"

typedef enum fru_mode {
    FRU_NORMAL = 0,
    FRU_TIMEOUT, /* IN requests are never answered (libusb times them out) */
    FRU_SHORT,   /* IN answered with 10 bytes */
    FRU_STALL,   /* IN answered with -EPIPE until the mode changes */
    FRU_GARBAGE, /* IN answered with random bytes */
} fru_mode;

typedef struct fru_out {
    int64_t t_ns; /* CLOCK_MONOTONIC when received */
    int16_t dac[8];
} fru_out;

typedef struct fru_stats {
    long in_answered, clear_halt_in, clear_halt_out, init_direction, init_clear, latches;
    long submits_refused;      /* SUBMITURB while unplugged */
    long in_late;              /* IN answers held back by fru_emu_late_in() */
    long init_held;            /* init packets whose answer fru_emu_hold_init() held or lost */
    int64_t sample_latency_ns; /* the longest a sample can have been taken after the host stamped
                                  it (its request's submission): since the host's previous
                                  ioctl was answered; fru_emu_reset_sample_latency() */
} fru_stats;

typedef struct fru_emu fru_emu;

/* NULL when not running under umockdev-wrapper (or the testbed cannot be set up). With
 * present = 0 the board appears only at the first fru_emu_replug(). */
fru_emu *fru_emu_new(int board, const fr_spidar_config *geometry, int present);
void fru_emu_free(fru_emu *e);
void fru_emu_set_pose(fru_emu *e, fr_pose grip); /* at once */
/* Move the grip from where it is now to `to` at speed (m/s) and rot_speed (rad/s), in real
 * time; returns the duration (s). */
double fru_emu_move(fru_emu *e, fr_pose to, double speed, double rot_speed);
void fru_emu_set_pio(fru_emu *e, uint32_t pio);
/* The next IN answer (after those already held back, up to 4 in all) reaches the host ns later
 * than it would (its sample taken as usual: the Sh4 at the IN's submission, the Simple board at
 * the latch), as if the host's device thread had been preempted in between (the answer is held
 * in the reap). */
void fru_emu_late_in(fru_emu *e, int64_t ns);
/* The answers to the next count init packets (the Simple board's A2 commands, sent by the
 * synchronous exchange at open) come ns after the packet was sent, as if the host had been slow
 * to see them; ns < 0: never, and the board did not get the packet (lost). libusb times out
 * whatever it waits for longer than its timeout. count 0 ends it. */
void fru_emu_hold_init(fru_emu *e, int count, int64_t ns);
/* Restart fru_stats.sample_latency_ns. */
void fru_emu_reset_sample_latency(fru_emu *e);
/* The emulated grip's pose now (on its way, during a move). */
fr_pose fru_emu_grip(fru_emu *e);
/* Change the behaviour; fru_emu_fault_time() then reports when the first faulty answer (or
 * withheld answer) happened, 0 before. */
void fru_emu_set_mode(fru_emu *e, fru_mode m);
int64_t fru_emu_fault_time(fru_emu *e);
/* Every ioctl fails with ENODEV and a "remove" uevent goes out; fru_emu_fault_time() then
 * reports the first ENODEV answer (when the host can first notice). */
void fru_emu_unplug(fru_emu *e);
void fru_emu_replug(fru_emu *e); /* back, "add" uevent */
/* Shift the counters (per motor) for good, as a board that restarted or slipped would. */
void fru_emu_jump_counters(fru_emu *e, const int64_t jump[8]);
/* DAC packets received so far; copies entries [from, from + max) into out, returns the total. */
size_t fru_emu_outs(fru_emu *e, size_t from, fru_out *out, size_t max);
fru_stats fru_emu_get_stats(fru_emu *e);
/* The minimum-tension DAC vector the emulated board expects (from the geometry config). */
void fru_emu_min_dac(fru_emu *e, int16_t dac[8]);

#endif
