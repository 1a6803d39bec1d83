/* libFuzzer harness: the URDF loader (XML, robot model, repairs), from text. Meshes it names
 * are looked for in the harness's scratch folder (and not found). */
#include <stdlib.h>
#include <string.h>

#include "fureru/urdf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *xml = malloc(size + 1);
    if (!xml) return 0;
    memcpy(xml, data, size);
    xml[size] = 0;
    fr_diag_list diags;
    fr_diag_list_init(&diags);
    fr_urdf_opts o = fr_urdf_opts_default();
    o.diags = &diags;
    fr_urdf *u = NULL;
    fr_diag d;
    if (fr_urdf_load_text(xml, "fuzz.urdf", fr_fuzz_dir(), &o, &u, &d) == FR_OK) fr_urdf_destroy(u);
    fr_diag_list_free(&diags);
    free(xml);
    return 0;
}
