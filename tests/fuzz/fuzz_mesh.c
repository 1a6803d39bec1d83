/* libFuzzer harness: the mesh readers (through assimp) and the hull that follows. The first
 * byte picks the file's extension, the rest is the file. */
#include <stdlib.h>

#include "fureru/urdf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"m.stl", "m.obj", "m.ply", "m.dae", "m.off", "m.gltf"};
    if (size < 1) return 0;
    char path[600];
    if (fr_fuzz_write(names[data[0] % 6], data + 1, size - 1, path, sizeof path)) return 0;
    fr_vec3 *pts = NULL, *hv = NULL;
    int np = 0, nh = 0, nfull = 0;
    char msg[600];
    if (fr_mesh_load_points(path, fr_v3(1, 1, 1), &pts, &np, msg, sizeof msg) == FR_OK) {
        double vol, vol_full;
        if (np <= 20000 &&
            fr_hull_simplify(pts, np, 32, &hv, &nh, &vol, &vol_full, &nfull) == FR_OK)
            free(hv);
        free(pts);
    }
    return 0;
}
