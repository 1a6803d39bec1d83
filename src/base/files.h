/* Small file-system helpers for the modules that write files (server logs, lab outputs). */
#ifndef FR_BASE_FILES_H
#define FR_BASE_FILES_H

/* mkdir -p of the folders leading to a file; 0 or an errno. */
int fri_make_parent_dirs(const char *path);

#endif
