/* Shared by the fuzz harnesses: a private scratch folder for the files an input becomes. */
#ifndef FR_FUZZ_COMMON_H
#define FR_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A folder of this process (created once, under $TMPDIR or /tmp). */
const char *fr_fuzz_dir(void);
/* Write data to fr_fuzz_dir()/name; its full path in buf. 0 or -1. */
int fr_fuzz_write(const char *name, const uint8_t *data, size_t size, char *buf, size_t len);

#endif
