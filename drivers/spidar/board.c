/*
 * SPIDAR USB board protocols, one table per board type (layouts in docs/haptics.md §9, from the
 * public history of Springhead before 2012).
 */
#include <string.h>

#include "fureru/base.h"
#include "spidar_internal.h"

static void put_i16(uint8_t *b, int16_t v)
{
    uint16_t u = (uint16_t)v;
    b[0] = (uint8_t)(u & 0xff);
    b[1] = (uint8_t)(u >> 8);
}
static uint32_t get_u16(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8);
}

/* ---------------------------------------------------------------- Sh4: 0x0CEC:0x0205 */

enum { SH4_LEN = 512 };

static int sh4_init(int k, int first_open, uint8_t *buf)
{
    (void)k, (void)first_open, (void)buf;
    return 0; /* the pipe reset (clear halt) is done by the transport */
}

/* 01 0E, then 8 × int16 LE DAC values; the packet is a whole 512-byte bulk packet. */
static int sh4_command(const int16_t dac[FR_SPIDAR_CHANNELS], uint8_t *buf)
{
    memset(buf, 0, SH4_LEN);
    buf[0] = 0x01;
    buf[1] = 0x0E;
    for (int c = 0; c < FR_SPIDAR_CHANNELS; c++) put_i16(buf + 2 + 2 * c, dac[c]);
    return SH4_LEN;
}

static int sh4_request(uint8_t *buf)
{
    (void)buf;
    return 0;
}

/* 16–31 counters (uint16 LE), 32–47 A/D (24/4096 V per digit), 48–49 PIO, 50–53 status. */
static int sh4_parse(const uint8_t *b, int len, fri_spidar_raw *out)
{
    if (len < 54) return FR_ERR_PARSE;
    for (int c = 0; c < FR_SPIDAR_CHANNELS; c++) {
        out->counter[c] = get_u16(b + 16 + 2 * c);
        out->adc[c] = (double)get_u16(b + 32 + 2 * c) * (24.0 / 4096.0);
    }
    out->pio = get_u16(b + 48);
    out->status = get_u16(b + 50) | (get_u16(b + 52) << 16);
    return FR_OK;
}

/* ---------------------------------------------------------------- Simple: 0x0CEC:0x0203 */

static int simple_init(int k, int first_open, uint8_t *buf)
{
    if (k == 0) { /* encoder direction */
        buf[0] = 0xA2, buf[1] = 0x1A, buf[2] = 0xFF;
        return 3;
    }
    if (k == 1 && first_open) { /* clear the counters, only once: they carry the calibration */
        buf[0] = 0xA2, buf[1] = 0x19, buf[2] = 0xFF;
        return 3;
    }
    return 0;
}

static int simple_command(const int16_t dac[FR_SPIDAR_CHANNELS], uint8_t *buf)
{
    buf[0] = 0x52;
    for (int c = 0; c < FR_SPIDAR_CHANNELS; c++) put_i16(buf + 1 + 2 * c, dac[c]);
    return 1 + 2 * FR_SPIDAR_CHANNELS;
}

static int simple_request(uint8_t *buf)
{
    buf[0] = 0x51; /* latch the counters; the next IN reads them */
    return 1;
}

/* 8 × 24-bit signed LE counts, byte 24 PIO (bits 4–7: the rotary switch). */
static int simple_parse(const uint8_t *b, int len, fri_spidar_raw *out)
{
    if (len < 25) return FR_ERR_PARSE;
    for (int c = 0; c < FR_SPIDAR_CHANNELS; c++) {
        const uint8_t *p = b + 3 * c;
        out->counter[c] = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
        out->adc[c] = 0.0;
    }
    out->pio = b[24];
    out->status = 0;
    return FR_OK;
}

static const fri_spidar_board boards[] = {
    {
        .name = "sh4",
        .vid = 0x0CEC,
        .pid = 0x0205,
        .ep_out = 0x02,
        .ep_in = 0x86,
        .in_len = SH4_LEN,
        .in_min = 54,
        .counter_bits = 16,
        .negate = 1,
        .button_mask = 0x00FF,
        .build_init = sh4_init,
        .build_command = sh4_command,
        .build_request = sh4_request,
        .parse = sh4_parse,
    },
    {
        .name = "simple",
        .vid = 0x0CEC,
        .pid = 0x0203,
        .ep_out = 0x02,
        .ep_in = 0x86,
        .in_len = 32,
        .in_min = 25,
        .counter_bits = 24,
        .negate = 0,
        .button_mask = 0x000F,
        .build_init = simple_init,
        .build_command = simple_command,
        .build_request = simple_request,
        .parse = simple_parse,
    },
};

const fri_spidar_board *fri_spidar_board_get(int board)
{
    if (board == FR_SPIDAR_BOARD_SH4) return &boards[0];
    if (board == FR_SPIDAR_BOARD_SIMPLE) return &boards[1];
    return NULL;
}
