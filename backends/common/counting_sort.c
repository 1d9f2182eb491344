#include "counting_sort.h"

#include <string.h>

int64_t mlff_counting_sort(const int32_t *keys, int64_t stride, int64_t n, int64_t n_keys, int32_t *offsets,
                           int32_t *items)
{
    memset(offsets, 0, (size_t)(n_keys + 1) * sizeof *offsets);
    for (int64_t e = 0; e < n; e++) {
        const int32_t k = keys[e * stride];
        if (k < 0 || k >= n_keys)
            return e;
        offsets[k + 1]++;
    }
    for (int64_t t = 0; t < n_keys; t++)
        offsets[t + 1] += offsets[t];
    /* Fill with a moving cursor per key; restore the offsets afterwards. */
    for (int64_t e = 0; e < n; e++)
        items[offsets[keys[e * stride]]++] = (int32_t)e;
    for (int64_t t = n_keys; t > 0; t--)
        offsets[t] = offsets[t - 1];
    offsets[0] = 0;
    return -1;
}
