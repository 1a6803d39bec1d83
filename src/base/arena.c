#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fureru/base.h"

enum { FR_ARENA_ALIGN = 64 };
/* From this size on an arena is mapped, not allocated and cleared: the kernel's pages are zero
 * already and come when first used, so a world sized for 10^5 bodies is created in
 * milliseconds instead of writing gigabytes of zeros it may never use (a real-time run's
 * mlockall still brings every page in before the first tick). Smaller arenas are cleared at
 * once, which also faults their pages in before the tick thread starts. */
#define FR_ARENA_MAP_BYTES ((size_t)64 << 20)

int fr_arena_init(fr_arena *a, size_t size)
{
    a->used = 0;
    a->size = 0;
    a->base = NULL;
    if (size == 0) return FR_OK;
    size = (size + FR_ARENA_ALIGN - 1) & ~(size_t)(FR_ARENA_ALIGN - 1);
    if (size >= FR_ARENA_MAP_BYTES) {
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return FR_ERR_NOMEM;
        a->base = m;
        a->size = size;
        return FR_OK;
    }
    a->base = aligned_alloc(FR_ARENA_ALIGN, size);
    if (!a->base) return FR_ERR_NOMEM;
    memset(a->base, 0, size);
    a->size = size;
    return FR_OK;
}

void fr_arena_destroy(fr_arena *a)
{
    if (a->base && a->size >= FR_ARENA_MAP_BYTES)
        munmap(a->base, a->size);
    else
        free(a->base);
    a->base = NULL;
    a->size = a->used = 0;
}

void *fr_arena_alloc(fr_arena *a, size_t size)
{
    size_t start = (a->used + FR_ARENA_ALIGN - 1) & ~(size_t)(FR_ARENA_ALIGN - 1);
    if (size == 0) size = 1;
    if (start > a->size || size > a->size - start) return NULL;
    a->used = start + size;
    return a->base + start; /* zeroed at init and never reused */
}
