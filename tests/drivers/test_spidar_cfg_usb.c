/* The SPIDAR registry entry against an emulated board (umockdev_spidar.c), run under
 * umockdev-wrapper: probe() sees an Sh4 or a Simple board only when one is enumerated, and a
 * device file opened through the registry reaches the board (or fails at `board:` without one). */
#include <string.h>
#include <time.h>

#include "frtest.h"
#include "fureru/base.h"
#include "fureru/devices.h"
#include "fureru/spidar.h"
#include "umockdev_spidar.h"

static fr_devreg make_reg(void)
{
    static const fr_driver_entry *const drivers[] = {&fr_spidar_driver};
    return (fr_devreg){drivers, 1, NULL};
}

static fr_spidar_config geometry(void)
{
    fr_spidar_config c;
    fr_spidar_config_default(&c, FR_SPIDAR_PRESET_SPIDAR4);
    return c;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Read until the status is OK (at most 3 s); returns the last state. */
static fr_device_state read_until_ok(fr_device *dev)
{
    fr_device_state s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < 3000; k++) {
        ck_assert_int_eq(fr_device_read(dev, &s), FR_OK);
        if (s.status == FR_DEVICE_OK) break;
        sleep_ms(1);
    }
    return s;
}

START_TEST(test_probe)
{
    fr_spidar_config g = geometry();
    const int boards[2] = {FR_SPIDAR_BOARD_SH4, FR_SPIDAR_BOARD_SIMPLE};
    for (int k = 0; k < 2; k++) {
        fru_emu *e = fru_emu_new(boards[k], &g, 0);
        ck_assert_msg(e != NULL, "run this test through umockdev-wrapper");
        ck_assert_int_eq(fr_spidar_driver.probe(), 0); /* nothing enumerated yet */
        fru_emu_replug(e);
        ck_assert_int_eq(fr_spidar_driver.probe(), 1);
        ck_assert_int_eq(fr_spidar_driver.probe(), 1); /* and nothing was claimed */
        fru_emu_free(e);
    }
    fr_devreg reg = make_reg();
    fru_emu *e = fru_emu_new(FR_SPIDAR_BOARD_SH4, &g, 1);
    ck_assert_str_eq(fr_devreg_default_spec(&reg), "spidar");
    fru_emu_free(e);
}
END_TEST

START_TEST(test_open_through_registry)
{
    fr_spidar_config g = geometry();
    fr_devreg reg = make_reg();
    const char *file = frtest_path("config/devices/spidar-4.yaml");
    fr_device *dev = NULL;
    fr_diag d;

    /* absent: located at `board`; with usb.require_device: 0 it opens and waits */
    fru_emu *e = fru_emu_new(FR_SPIDAR_BOARD_SH4, &g, 0);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(fr_devreg_open(&reg, file, NULL, 0, &dev, NULL, &d), FR_ERR_NOTFOUND);
    ck_assert_str_eq(d.field, "board");
    ck_assert_ptr_nonnull(strstr(d.msg, "0cec:0205"));
    const char *wait[] = {"usb.require_device=0"};
    ck_assert_int_eq(fr_devreg_open(&reg, file, wait, 1, &dev, NULL, &d), FR_OK);
    fru_emu_replug(e);
    fr_device_state s = read_until_ok(dev);
    ck_assert_int_eq(s.status, FR_DEVICE_OK);
    fr_device_close(dev);
    fru_emu_free(e);

    /* present: the first sample defines the home pose (calibrate_on_open: 1 in the file) */
    e = fru_emu_new(FR_SPIDAR_BOARD_SH4, &g, 1);
    ck_assert_int_eq(fr_devreg_open(&reg, file, NULL, 0, &dev, NULL, &d), FR_OK);
    ck_assert_str_eq(dev->desc.name, "spidar-4");
    ck_assert_int_eq(dev->desc.dof_sensed, 3);
    s = read_until_ok(dev);
    ck_assert_int_eq(s.status, FR_DEVICE_OK);
    ck_assert(fr_v3_dist(s.pose.p, g.home.p) == 0.0);
    fr_device_close(dev);
    fru_emu_free(e);

    /* the Simple board, chosen by --set */
    e = fru_emu_new(FR_SPIDAR_BOARD_SIMPLE, &g, 1);
    const char *simple[] = {"board=simple"};
    ck_assert_int_eq(fr_devreg_open(&reg, file, simple, 1, &dev, NULL, &d), FR_OK);
    s = read_until_ok(dev);
    ck_assert_int_eq(s.status, FR_DEVICE_OK);
    fr_device_close(dev);
    fru_emu_free(e);
}
END_TEST

static Suite *spidar_cfg_usb_suite(void)
{
    Suite *s = suite_create("spidar_cfg_usb");
    TCase *tc = tcase_create("spidar_cfg_usb");
    tcase_add_test(tc, test_probe);
    tcase_add_test(tc, test_open_through_registry);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

FRTEST_MAIN(spidar_cfg_usb_suite)
