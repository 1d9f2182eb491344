/* The index sort behind every deterministic scatter, shared by the backends:
 * work is split by target, and each target sums its entries in entry order. */
#ifndef MLFF_CORE_COUNTING_SORT_H
#define MLFF_CORE_COUNTING_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "thread_pool.h"

/*
 * Stable counting sort of n entries by key (keys[e * stride], which must lie
 * in [0, n_keys)): the entries with key t are items[offsets[t] ..
 * offsets[t + 1]), in entry order. offsets holds n_keys + 1 values, items n;
 * n and n_keys must be below INT32_MAX. Returns -1, or the first entry whose
 * key is out of range (the output is then meaningless).
 */
int64_t mlff_counting_sort(const int32_t *keys, int64_t stride, int64_t n, int64_t n_keys, int32_t *offsets,
                           int32_t *items);

/*
 * The same result on the pool's threads, for long indices (the CPU
 * backend's scatters; the GPU backends instead sort their indices side by
 * side, one per thread): the entries are cut into parts, one count per part
 * and key. scratch holds
 * mlff_counting_sort_scratch(...) int32 values; with fewer than two parts
 * (a short index, few threads, many keys) it sorts serially.
 */
size_t mlff_counting_sort_scratch(const mlff_thread_pool *pool, int64_t n, int64_t n_keys);
int64_t mlff_counting_sort_parallel(const int32_t *keys, int64_t stride, int64_t n, int64_t n_keys,
                                    int32_t *offsets, int32_t *items, mlff_thread_pool *pool, int32_t *scratch);

#endif
