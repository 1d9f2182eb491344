/* Growing a heap array by 1.5x (and never shrinking it): the lists of the
 * batch path are reused from call to call. */
#ifndef MLFF_CORE_GROW_H
#define MLFF_CORE_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Makes every *arrays[k] (of elems[k] bytes per element) hold at least `need`
 * elements (one at least): the columns of one table (per-atom or per-pair
 * data), sharing one capacity. 0 when out of memory; the arrays grown so far stay valid, and the
 * capacity is unchanged, so the next call grows the rest. */
static inline int mlff_grow_columns(void **const arrays[], const size_t elems[], int n, int64_t *capacity,
                                    int64_t need)
{
    /* Room for one at least: a grown array is never NULL, even for none
     * (memcpy and memset take no NULL, even for no bytes). */
    if (need < 1)
        need = 1;
    if (need <= *capacity)
        return 1;
    const int64_t cap = need + need / 2 + 16;
    for (int k = 0; k < n; k++) {
        void *p = realloc(*arrays[k], (size_t)cap * elems[k]);
        if (!p)
            return 0;
        *arrays[k] = p;
    }
    *capacity = cap;
    return 1;
}

/* The same for one array; 0 when out of memory (the array is then unchanged). */
static inline int mlff_grow(void **array, int64_t *capacity, int64_t need, size_t elem)
{
    void **const arrays[1] = {array};
    return mlff_grow_columns(arrays, &elem, 1, capacity, need);
}

#endif
