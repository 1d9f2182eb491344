/* Growing a heap array by 1.5x (and never shrinking it): the lists of the
 * batch path are reused from call to call. */
#ifndef MLFF_CORE_GROW_H
#define MLFF_CORE_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Makes *array hold at least `need` elements of `elem` bytes; 0 when out of memory
 * (the array is then unchanged). */
static inline int mlff_grow(void **array, int64_t *capacity, int64_t need, size_t elem)
{
    if (need <= *capacity)
        return 1;
    int64_t cap = need + need / 2 + 16;
    void *p = realloc(*array, (size_t)cap * elem);
    if (!p)
        return 0;
    *array = p;
    *capacity = cap;
    return 1;
}

#endif
