/*
 * The SPIDAR transport of a build without libusb (meson -Dusb=disabled): kinematic devices
 * (board: none) work as usual; opening a real board fails with FR_ERR_UNSUPPORTED, which
 * spidar_cfg.c turns into a message naming the build option.
 */
#include <time.h>

#include "fureru/base.h"
#include "spidar_internal.h"

int64_t fri_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int fri_spidar_transport_open(const fr_spidar_config *cfg, const fr_spidar_hooks *hooks,
                              fri_spidar_link *link, fri_spidar_transport **out)
{
    (void)cfg;
    (void)hooks;
    (void)link;
    *out = NULL;
    return FR_ERR_UNSUPPORTED;
}

void fri_spidar_transport_close(fri_spidar_transport *t)
{
    (void)t;
}

void fri_spidar_transport_info(fri_spidar_transport *t, fr_spidar_info *out)
{
    (void)t;
    (void)out;
}
