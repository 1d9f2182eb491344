#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "core/counting_sort.h"

#define ARENA_ALIGN 64

void *cpu_arena_alloc(cpu_arena *a, size_t bytes)
{
    bytes = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (a->used + bytes <= a->capacity) {
        void *p = a->base + a->used;
        a->used += bytes;
        return p;
    }
    /* Does not fit: serve from a block of its own now, and grow the arena
     * at the next reset so that the next time it fits. */
    if (a->n_spill == a->cap_spill) {
        int cap = a->cap_spill ? 2 * a->cap_spill : 8;
        void **s = realloc(a->spill, (size_t)cap * sizeof *s);
        if (!s)
            return NULL;
        a->spill = s;
        a->cap_spill = cap;
    }
    void *p = aligned_alloc(ARENA_ALIGN, bytes);
    if (!p)
        return NULL;
    a->spill[a->n_spill++] = p;
    a->overflow += bytes;
    return p;
}

void cpu_arena_reset(cpu_arena *a)
{
    if (a->n_spill) {
        for (int k = 0; k < a->n_spill; k++)
            free(a->spill[k]);
        a->n_spill = 0;
        size_t cap = a->capacity + a->overflow;
        cap += cap / 2;
        cap = (cap + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
        void *p = aligned_alloc(ARENA_ALIGN, cap);
        if (p) {
            free(a->base);
            a->base = p;
            a->capacity = cap;
        }
        a->overflow = 0;
    }
    a->used = 0;
}

void cpu_arena_free(cpu_arena *a)
{
    cpu_arena_reset(a);
    free(a->base);
    free(a->spill);
    memset(a, 0, sizeof *a);
}

mlff_status cpu_csr_build(mlff_backend *be, const int32_t *keys, int64_t stride, int64_t n,
                          int64_t n_keys, cpu_csr *out, mlff_error *err)
{
    if (n >= INT32_MAX || n_keys >= INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "cpu: %lld index entries in one evaluation is more than 32-bit offsets hold; "
                         "split the batch", (long long)n);
    out->offsets = cpu_arena_alloc(&be->arena, (size_t)(n_keys + 1) * sizeof *out->offsets);
    out->items = cpu_arena_alloc(&be->arena, (size_t)(n > 0 ? n : 1) * sizeof *out->items);
    const size_t scratch_size = mlff_counting_sort_scratch(be->pool, n, n_keys);
    int32_t *scratch = scratch_size ? cpu_arena_alloc(&be->arena, scratch_size * sizeof *scratch) : NULL;
    if (!out->offsets || !out->items || (scratch_size && !scratch))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory for an index sort");
    const int64_t bad = mlff_counting_sort_parallel(keys, stride, n, n_keys, out->offsets, out->items, be->pool, scratch);
    if (bad >= 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "cpu: index %d of entry %lld is out of range [0, %lld)",
                         keys[bad * stride], (long long)bad, (long long)n_keys);
    return MLFF_OK;
}

mlff_status cpu_triples_by_center(mlff_backend *be, const int32_t *pairs, const int32_t *triples,
                                  int64_t n_triples, int64_t atoms, cpu_csr *out, mlff_error *err)
{
    int32_t *center = cpu_arena_alloc(&be->arena, (size_t)(n_triples > 0 ? n_triples : 1) * sizeof *center);
    if (!center)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory for angular terms");
    for (int64_t t = 0; t < n_triples; t++)
        center[t] = pairs[2 * triples[2 * t]];
    return cpu_csr_build(be, center, 1, n_triples, atoms, out, err);
}
