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

/* Below this many entries the threads cost more than they save (the CPU
 * backend on 16 threads: 10% slower for a 1536-atom water box's 0.5M
 * angular entries, 5-10% faster from 12288 atoms; RESULTS.md). */
#define PARALLEL_MIN_ENTRIES (1 << 20)
#define MAX_PARTS 64

/* Parts worth cutting n entries into: one per thread, and no more counts
 * (parts x keys) than entries, so the scratch never outgrows the index. */
static int64_t parts_for(const mlff_thread_pool *pool, int64_t n, int64_t n_keys)
{
    int64_t parts = mlff_thread_pool_size(pool);
    if (parts > MAX_PARTS)
        parts = MAX_PARTS;
    if (n_keys > 0 && parts > n / n_keys)
        parts = n / n_keys;
    return n < PARALLEL_MIN_ENTRIES || parts < 2 ? 1 : parts;
}

size_t mlff_counting_sort_scratch(const mlff_thread_pool *pool, int64_t n, int64_t n_keys)
{
    const int64_t parts = parts_for(pool, n, n_keys);
    return parts < 2 ? 0 : (size_t)(parts * n_keys);
}

typedef struct sort_job {
    const int32_t *keys;
    int64_t stride, n, n_keys, parts;
    int32_t *offsets, *items;
    int32_t *counts;      /* [parts][n_keys]: counts, then each part's cursors */
    int64_t bad[MAX_PARTS]; /* per part: first entry out of range, or -1 */
} sort_job;

static int64_t part_begin(const sort_job *j, int64_t p)
{
    return j->n * p / j->parts;
}

static int64_t key_begin(const sort_job *j, int64_t p)
{
    return j->n_keys * p / j->parts;
}

/* The steps below run on the pool with the job as `extra`. */
static void count_part(const void *task, void *extra, int64_t p0, int64_t p1)
{
    (void)task;
    sort_job *j = extra;
    for (int64_t p = p0; p < p1; p++) {
        int32_t *count = j->counts + p * j->n_keys;
        memset(count, 0, (size_t)j->n_keys * sizeof *count);
        j->bad[p] = -1;
        for (int64_t e = part_begin(j, p); e < part_begin(j, p + 1); e++) {
            const int32_t k = j->keys[e * j->stride];
            if (k < 0 || k >= j->n_keys) {
                j->bad[p] = e;
                break;
            }
            count[k]++;
        }
    }
}

/* offsets[k + 1] = entries with key k, over all parts (keys cut into ranges). */
static void total_keys(const void *task, void *extra, int64_t r0, int64_t r1)
{
    (void)task;
    const sort_job *j = extra;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t k = key_begin(j, r); k < key_begin(j, r + 1); k++) {
            int32_t total = 0;
            for (int64_t p = 0; p < j->parts; p++)
                total += j->counts[p * j->n_keys + k];
            j->offsets[k + 1] = total;
        }
}

/* Each part's cursor for key k: after the entries of k in earlier parts. */
static void place_parts(const void *task, void *extra, int64_t r0, int64_t r1)
{
    (void)task;
    const sort_job *j = extra;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t k = key_begin(j, r); k < key_begin(j, r + 1); k++) {
            int32_t cursor = j->offsets[k];
            for (int64_t p = 0; p < j->parts; p++) {
                int32_t *c = &j->counts[p * j->n_keys + k];
                const int32_t count = *c;
                *c = cursor;
                cursor += count;
            }
        }
}

static void fill_part(const void *task, void *extra, int64_t p0, int64_t p1)
{
    (void)task;
    const sort_job *j = extra;
    for (int64_t p = p0; p < p1; p++) {
        int32_t *cursor = j->counts + p * j->n_keys;
        for (int64_t e = part_begin(j, p); e < part_begin(j, p + 1); e++)
            j->items[cursor[j->keys[e * j->stride]]++] = (int32_t)e;
    }
}

int64_t mlff_counting_sort_parallel(const int32_t *keys, int64_t stride, int64_t n, int64_t n_keys,
                                    int32_t *offsets, int32_t *items, mlff_thread_pool *pool, int32_t *scratch)
{
    sort_job j = {keys, stride, n, n_keys, parts_for(pool, n, n_keys), offsets, items, scratch, {0}};
    if (j.parts < 2 || !scratch)
        return mlff_counting_sort(keys, stride, n, n_keys, offsets, items);
    mlff_thread_pool_for(pool, j.parts, 2, count_part, NULL, &j);
    for (int64_t p = 0; p < j.parts; p++)
        if (j.bad[p] >= 0)
            return j.bad[p];
    mlff_thread_pool_for(pool, j.parts, 2, total_keys, NULL, &j);
    offsets[0] = 0;
    for (int64_t k = 0; k < n_keys; k++)
        offsets[k + 1] += offsets[k];
    mlff_thread_pool_for(pool, j.parts, 2, place_parts, NULL, &j);
    mlff_thread_pool_for(pool, j.parts, 2, fill_part, NULL, &j);
    return -1;
}
