/* Small file-system helpers for the modules that write files (server logs, lab outputs). */
#ifndef FR_BASE_FILES_H
#define FR_BASE_FILES_H

#include <stdio.h>

/* mkdir -p of the folders leading to a file; 0 or an errno. */
int fri_make_parent_dirs(const char *path);
/* One argument for a POSIX shell: as it is when that is safe, else in single quotes. */
void fri_put_shell_word(FILE *f, const char *w);

#endif
