/*
 * The index sort behind every scatter: the parallel one must give exactly
 * the serial one (the entries of each key in entry order), for short and
 * long indices, few and many keys, strided keys, and catch a key out of
 * range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/counting_sort.h"
#include "tests/common/check.h"
#include "op_cases.h"

static void check_size(mlff_thread_pool *pool, int64_t n, int64_t n_keys, int64_t stride)
{
    test_rng rng = {0x2545f4914f6cdd1dULL ^ (uint64_t)n};
    int32_t *keys = malloc((size_t)(n * stride) * sizeof *keys);
    int32_t *off[2] = {malloc((size_t)(n_keys + 1) * sizeof(int32_t)), malloc((size_t)(n_keys + 1) * sizeof(int32_t))};
    int32_t *items[2] = {malloc((size_t)n * sizeof(int32_t)), malloc((size_t)n * sizeof(int32_t))};
    const size_t scratch_size = mlff_counting_sort_scratch(pool, n, n_keys);
    int32_t *scratch = malloc((scratch_size ? scratch_size : 1) * sizeof *scratch);
    CHECK(keys && off[0] && off[1] && items[0] && items[1] && scratch, "out of memory");
    for (int64_t e = 0; e < n * stride; e++)
        keys[e] = (int32_t)(test_uniform(&rng, 0, (double)n_keys - 1e-9));
    const int64_t serial = mlff_counting_sort(keys, stride, n, n_keys, off[0], items[0]);
    const int64_t parallel = mlff_counting_sort_parallel(keys, stride, n, n_keys, off[1], items[1], pool, scratch);
    const int same = serial == -1 && parallel == -1 && !memcmp(off[0], off[1], (size_t)(n_keys + 1) * sizeof(int32_t)) &&
                     !memcmp(items[0], items[1], (size_t)n * sizeof(int32_t));
    printf("%-4s %8lld entries, %7lld keys, stride %lld: %s\n", same ? "ok" : "FAIL", (long long)n,
           (long long)n_keys, (long long)stride, scratch_size ? "in parallel" : "serial");
    CHECK(same, "parallel sort of %lld entries differs from the serial one", (long long)n);
    /* A key out of range is found (the first one, as the serial sort reports). */
    keys[(n - 3) * stride] = (int32_t)n_keys;
    keys[(n / 2) * stride] = -1;
    const int64_t bad = mlff_counting_sort_parallel(keys, stride, n, n_keys, off[1], items[1], pool, scratch);
    CHECK(bad == n / 2, "out-of-range key: reported entry %lld, not %lld", (long long)bad, (long long)(n / 2));
    free(keys);
    free(off[0]);
    free(off[1]);
    free(items[0]);
    free(items[1]);
    free(scratch);
}

int main(void)
{
    mlff_thread_pool *pool = mlff_thread_pool_create(3);
    CHECK(pool, "no threads");
    check_size(pool, 1000, 17, 1);
    check_size(pool, 1 << 21, 1000, 1);
    check_size(pool, 3000001, 250000, 2);
    check_size(pool, 1 << 20, 600000, 1); /* more keys than entries per part: serial */
    mlff_thread_pool_destroy(pool);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
