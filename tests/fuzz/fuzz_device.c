/* libFuzzer harness: device files (the registry and the drivers' settings), validated as
 * `fureru run` does before opening a device (a dry run: no hardware is touched). */
#include "fureru/devices.h"
#include "fureru/spidar.h"
#include "fureru/virtual.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const fr_driver_entry *const drivers[] = {&fr_virtual_driver, &fr_spidar_driver};
    fr_devreg reg = {.drivers = drivers, .n_drivers = 2, .config_dir = fr_fuzz_dir()};
    char path[600];
    if (fr_fuzz_write("device.yaml", data, size, path, sizeof path)) return 0;
    fr_safety_params sp;
    fr_diag d;
    const char *sets[] = {"dt=0.001"};
    fr_devreg_check(&reg, path, sets, 1, &sp, &d);
    return 0;
}
