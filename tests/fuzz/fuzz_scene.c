/* libFuzzer harness: the scene loader, with --set values. The input is a scene file, optionally
 * followed by a line "#%set" and then one --set assignment per line (at most 8). Settling is
 * off (a first --set world.settle=false; the input's own --set may turn it on again): it is the
 * physics, not the loading, and would make every input slow. */
#include <stdlib.h>
#include <string.h>

#include "fureru/scene.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char mark[] = "\n#%set\n";
    const uint8_t *cut = NULL;
    for (size_t i = 0; i + sizeof mark - 1 <= size && !cut; i++)
        if (!memcmp(data + i, mark, sizeof mark - 1)) cut = data + i;
    size_t nscene = cut ? (size_t)(cut - data) : size;
    char path[600];
    if (fr_fuzz_write("scene.yaml", data, nscene, path, sizeof path)) return 0;
    char *sets_text = NULL;
    const char *sets[9] = {"world.settle=false"};
    int nsets = 1;
    if (cut) {
        size_t off = nscene + sizeof mark - 1;
        sets_text = malloc(size - off + 1);
        if (!sets_text) return 0;
        memcpy(sets_text, data + off, size - off);
        sets_text[size - off] = 0;
        char *save = NULL;
        for (char *t = strtok_r(sets_text, "\n", &save); t && nsets < 9;
             t = strtok_r(NULL, "\n", &save))
            sets[nsets++] = t;
    }
    fr_scene *sc = NULL;
    fr_diag d;
    fr_diag_list diags;
    fr_diag_list_init(&diags);
    fr_scene_opts o = {.sets = sets, .nsets = nsets, .diags = &diags};
    if (fr_scene_load_opts(path, &o, &sc, &d) == FR_OK) fr_scene_destroy(sc);
    fr_diag_list_free(&diags);
    free(sets_text);
    return 0;
}
