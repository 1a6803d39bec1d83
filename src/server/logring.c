#include <stdlib.h>
#include <string.h>

#include "fureru/base.h"
#include "logring.h"

int fri_logring_init(fri_logring *r, int ncols, int capacity)
{
    if (ncols < 1 || capacity < 2 || (capacity & (capacity - 1))) return FR_ERR_INVAL;
    r->data = calloc((size_t)capacity * (size_t)ncols, sizeof(double));
    if (!r->data) return FR_ERR_NOMEM;
    r->ncols = ncols;
    r->mask = (uint64_t)capacity - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return FR_OK;
}

void fri_logring_destroy(fri_logring *r)
{
    free(r->data);
    r->data = NULL;
}
