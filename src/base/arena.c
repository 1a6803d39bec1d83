#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"

enum { FR_ARENA_ALIGN = 64 };

int fr_arena_init(fr_arena *a, size_t size)
{
    a->used = 0;
    a->size = 0;
    a->base = NULL;
    if (size == 0) return FR_OK;
    size = (size + FR_ARENA_ALIGN - 1) & ~(size_t)(FR_ARENA_ALIGN - 1);
    a->base = aligned_alloc(FR_ARENA_ALIGN, size);
    if (!a->base) return FR_ERR_NOMEM;
    memset(a->base, 0, size);
    a->size = size;
    return FR_OK;
}

void fr_arena_destroy(fr_arena *a)
{
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
