/* fureru: error codes, version and world-owned memory (arena). */
#ifndef FURERU_BASE_H
#define FURERU_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Errors are negative; 0 is success. fr_strerror() names each one. */
enum fr_error {
    FR_OK = 0,
    FR_ERR_NOMEM = -1,         /* allocation failed (only at start-up) */
    FR_ERR_INVAL = -2,         /* invalid argument */
    FR_ERR_RANGE = -3,         /* value out of its allowed range */
    FR_ERR_IO = -4,            /* file or device I/O failed */
    FR_ERR_PARSE = -5,         /* malformed input file */
    FR_ERR_NOTFOUND = -6,      /* named object, file or device not found */
    FR_ERR_STALE = -7,         /* id refers to an object that no longer exists */
    FR_ERR_FULL = -8,          /* a capacity fixed at start-up is exhausted */
    FR_ERR_LOCKED = -9,        /* world is stepping; structural changes are not allowed */
    FR_ERR_DEVICE = -10,       /* haptic device failure */
    FR_ERR_TIMEOUT = -11,      /* operation timed out */
    FR_ERR_UNSUPPORTED = -12,  /* feature or combination not supported */
    FR_ERR_NUMERIC = -13,      /* NaN/Inf or a diverging simulation detected */
    FR_ERR_DISCONNECTED = -14, /* device unplugged */
    FR_ERR_PERM = -15,         /* permission denied */
};

/* Human-readable text for an FR_* code; never NULL. */
const char *fr_strerror(int err);

/* The library version, "MAJOR.MINOR.PATCH". */
const char *fr_version(void);

/* Shortest round-trip decimal text of a double: the fewest significant digits that strtod reads
 * back as the same value (the closest such; ties to even), "1e-07" style outside [1e-5, 1e17),
 * "nan", "inf", "-inf", "-0" as printf prints them. buf holds at least FR_FORMAT_DOUBLE_MAX
 * bytes; returns the length written (without the terminating NUL). Allocation- and lock-free
 * after the first call (which builds a table). */
#define FR_FORMAT_DOUBLE_MAX 32
int fr_format_double(double v, char *buf);

/* The folder with fureru's data: scenes/, devices/, robots/, udev/ (config/ in the source tree).
 * $FURERU_DATA_DIR when set, else found beside the installed program or library, else the source
 * tree of the build, else the configured DATADIR/fureru. Never NULL. */
const char *fr_data_dir(void);
/* How fr_data_dir() was found, in words ("FURERU_DATA_DIR", "source tree", ...). */
const char *fr_data_dir_origin(void);

/*
 * Arena: one block reserved at start-up, carved by bump allocation. The world and the server own
 * one each so that nothing is allocated once the tick thread runs.
 */
typedef struct fr_arena {
    unsigned char *base;
    size_t size; /* bytes reserved */
    size_t used; /* bytes handed out */
} fr_arena;

int fr_arena_init(fr_arena *a, size_t size);
void fr_arena_destroy(fr_arena *a);
/* Zeroed, aligned to 64 bytes (cache line); NULL when the arena is exhausted. */
void *fr_arena_alloc(fr_arena *a, size_t size);
#define FR_ARENA_NEW(a, type, n) ((type *)fr_arena_alloc((a), sizeof(type) * (size_t)(n)))

#ifdef __cplusplus
}
#endif
#endif
