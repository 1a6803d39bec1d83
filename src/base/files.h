/* Small file-system helpers for the modules that write files (server logs, lab outputs). */
#ifndef FR_BASE_FILES_H
#define FR_BASE_FILES_H

#include <stdio.h>

/* mkdir -p of the folders leading to a file; 0 or an errno. */
int fri_make_parent_dirs(const char *path);
/* One argument for a POSIX shell: as it is when that is safe, else in single quotes. */
void fri_put_shell_word(FILE *f, const char *w);

/* Input files are bounded (docs/scenes.md, "Limits"): a scene or device file, a URDF, a mesh or a
 * trajectory must be a regular file (not a FIFO, a device such as /dev/zero or a folder) no
 * larger than its limit, so that no input can make fureru read or allocate without end. */
#define FRI_MAX_YAML_BYTES ((size_t)16 << 20)  /* scene and device files, sidecars */
#define FRI_MAX_URDF_BYTES ((size_t)64 << 20)  /* URDF robots */
#define FRI_MAX_MESH_BYTES ((size_t)256 << 20) /* meshes (STL, OBJ, Collada, ...) */
#define FRI_MAX_CSV_BYTES  ((size_t)256 << 20) /* recorded device trajectories */

/* Whether path is a regular file of at most limit bytes (it is opened without blocking, so a
 * FIFO never hangs); FR_OK, or an FR_ERR_* with what is wrong in msg (without the path). */
int fri_check_input(const char *path, size_t limit, char *msg, size_t msz);
/* Read a whole input file (checked as above) into a NUL-terminated buffer *out (free it);
 * FR_OK, or an FR_ERR_* with what failed in msg (without the path). */
int fri_read_input(const char *path, size_t limit, char **out, size_t *len, char *msg, size_t msz);

#endif
