/*
 * Segments: how ops that sum many entries into one row (scatters, pair
 * gradients, ANI features) run without float atomics, which many devices
 * (PoCL among them) lack, and deterministically. The entries are sorted by
 * target with a stable counting sort (a CSR); each work-item then owns one
 * target and sums its entries in entry order, as the CPU backend does.
 *
 * The keys are index tensors (pairs, triples, systems, element lists), which
 * always come from the host; the sort runs on the host from a copy kept
 * beside the buffer, and only when that index changed (so a neighbour list
 * reused through the Verlet skin is sorted once). The result is uploaded to
 * device buffers that are reused across calls.
 */
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"
#include "../common/counting_sort.h"

typedef struct segment_spec {
    const cl_buffer *keys, *map;
    int64_t stride, map_stride, n_entries, n_keys;
} segment_spec;

/* Which index of a node is sorted, and how (see the kernels in shaders/opencl). */
static int spec_for(const mlff_exec_node *n, segment_spec *s)
{
    memset(s, 0, sizeof *s);
    s->n_keys = n->output.rows;
    s->stride = 1;
    const mlff_exec_tensor *in = n->inputs;
    switch (n->op) {
    case MLFF_OP_SCATTER_ADD_ROWS: /* rows by target */
        s->keys = in[1].buffer;
        s->n_entries = in[1].rows;
        return 1;
    case MLFF_OP_PAIR_VECTORS_VJP: /* both atoms of every pair, entry 2p + side */
        s->keys = in[1].buffer;
        s->n_entries = 2 * in[1].rows;
        return 1;
    case MLFF_OP_PAIR_SHIFTS_VJP: /* pairs by the system of their first atom */
        s->keys = in[2].buffer;
        s->stride = 2;
        s->n_entries = in[2].rows;
        s->map = in[3].buffer;
        s->map_stride = 1;
        return 1;
    case MLFF_OP_ANI_RADIAL: /* pairs by center */
        s->keys = in[1].buffer;
        s->stride = 2;
        s->n_entries = in[1].rows;
        return 1;
    case MLFF_OP_ANI_ANGULAR: /* triples by the center of their first pair */
        s->keys = in[2].buffer;
        s->stride = 2;
        s->n_entries = in[2].rows;
        s->map = in[1].buffer;
        s->map_stride = 2;
        return 1;
    case MLFF_OP_ANI_ANGULAR_VJP: /* both pairs of every triple, entry 2t + side */
        s->keys = in[3].buffer;
        s->n_entries = 2 * in[3].rows;
        return 1;
    default:
        return 0;
    }
}

mlff_status cl_buffer_shadow(mlff_backend *be, cl_buffer *b, mlff_error *err)
{
    if (b->shadow)
        return MLFF_OK;
    if (!(b->shadow = malloc(b->size)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    cl_int rc = clEnqueueReadBuffer(be->queue, b->mem, CL_TRUE, 0, b->size, b->shadow, 0, NULL, NULL);
    if (rc != CL_SUCCESS) {
        free(b->shadow);
        b->shadow = NULL;
        return cl_fail(err, rc, "reading an index buffer");
    }
    return MLFF_OK;
}

/* The same index sorted the same way. Its sizes may have changed (pair
 * counts drift in MD), which rebuilds the slot in place, reusing its buffers. */
static int same_spec(const cl_segments *g, const segment_spec *s)
{
    return g->keys == s->keys && g->map == s->map && g->stride == s->stride && g->map_stride == s->map_stride;
}

/* What to allocate for need entries: 1.5x on growth, and 25% headroom from
 * the start, because pair and triple counts drift a little every MD step. */
static size_t grown_capacity(size_t capacity, size_t need)
{
    const size_t grown = capacity + capacity / 2, padded = need + need / 4;
    return grown > padded ? grown : padded;
}

static mlff_status grow_host(int32_t **array, size_t *capacity, size_t need, mlff_error *err)
{
    if (need <= *capacity)
        return MLFF_OK;
    const size_t cap = grown_capacity(*capacity, need);
    int32_t *a = realloc(*array, cap * sizeof *a);
    if (!a)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory sorting an index");
    *array = a;
    *capacity = cap;
    return MLFF_OK;
}

static mlff_status grow_device(mlff_backend *be, cl_mem *mem, size_t *capacity, size_t need, mlff_error *err)
{
    if (need <= *capacity && *mem)
        return MLFF_OK;
    const size_t cap = grown_capacity(*capacity, need);
    if (*mem)
        clReleaseMemObject(*mem);
    cl_int rc;
    *mem = clCreateBuffer(be->context, CL_MEM_READ_ONLY, cap * sizeof(int32_t), NULL, &rc);
    be->allocations++;
    *capacity = *mem ? cap : 0;
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "allocating segment buffers");
}

/* Stable counting sort of the entries by key, then upload. */
static mlff_status build(mlff_backend *be, cl_segments *g, const segment_spec *s, mlff_error *err)
{
    if (s->n_entries >= INT32_MAX || s->n_keys >= INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "opencl: %lld index entries in one evaluation is more than 32-bit offsets "
                         "hold; split the batch", (long long)s->n_entries);
    const size_t n_keys = (size_t)s->n_keys, n = (size_t)s->n_entries;
    mlff_status st = grow_host(&g->host_offsets, &g->host_capacity_keys, n_keys + 1, err);
    if (st == MLFF_OK)
        st = grow_host(&g->host_items, &g->host_capacity_items, n ? n : 1, err);
    if (st == MLFF_OK && s->map)
        st = grow_host(&g->host_keys, &g->host_capacity_mapped, n ? n : 1, err);
    if (st != MLFF_OK)
        return st;
    /* Keys read through a map (the system of a pair's atom, the center of a
     * triple's pair) are looked up first; one out of the map's range becomes -1. */
    const int32_t *keys = s->keys->shadow;
    int64_t stride = s->stride;
    if (s->map) {
        const int64_t map_entries = (int64_t)(s->map->size / sizeof(int32_t));
        for (size_t e = 0; e < n; e++) {
            const int64_t k = (int64_t)keys[(int64_t)e * stride] * s->map_stride;
            g->host_keys[e] = k >= 0 && k < map_entries ? s->map->shadow[k] : -1;
        }
        keys = g->host_keys;
        stride = 1;
    }
    int32_t *off = g->host_offsets, *items = g->host_items;
    const int64_t bad = mlff_counting_sort(keys, stride, s->n_entries, s->n_keys, off, items);
    if (bad >= 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "opencl: index %d of entry %lld is out of range [0, %lld)",
                         keys[bad * stride], (long long)bad, (long long)s->n_keys);

    st = grow_device(be, &g->offsets, &g->capacity_keys, n_keys + 1, err);
    if (st == MLFF_OK)
        st = grow_device(be, &g->items, &g->capacity_items, n ? n : 1, err);
    if (st != MLFF_OK)
        return st;
    /* Not blocking: the host arrays stay untouched until the next call, which
     * comes after this one finished. */
    cl_int rc = clEnqueueWriteBuffer(be->queue, g->offsets, CL_FALSE, 0, (n_keys + 1) * sizeof *off, off, 0,
                                     NULL, NULL);
    if (rc == CL_SUCCESS && n)
        rc = clEnqueueWriteBuffer(be->queue, g->items, CL_FALSE, 0, n * sizeof *items, items, 0, NULL, NULL);
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "uploading segments");
}

mlff_status cl_segments_for(mlff_backend *be, const mlff_exec_node *n, const cl_segments **out,
                            mlff_error *err)
{
    segment_spec s;
    if (!spec_for(n, &s)) {
        *out = NULL;
        return MLFF_OK;
    }
    mlff_status st = cl_buffer_shadow(be, (cl_buffer *)s.keys, err);
    if (st == MLFF_OK && s.map)
        st = cl_buffer_shadow(be, (cl_buffer *)s.map, err);
    if (st != MLFF_OK)
        return st;
    be->use_clock++;
    cl_segments *slot = NULL;
    for (int k = 0; k < CL_SEGMENT_SLOTS && !slot; k++)
        if (same_spec(&be->segments[k], &s))
            slot = &be->segments[k];
    if (slot && slot->n_entries == s.n_entries && slot->n_keys == s.n_keys &&
        slot->keys_version == s.keys->version && (!s.map || slot->map_version == s.map->version)) {
        slot->last_use = be->use_clock;
        *out = slot;
        return MLFF_OK;
    }
    if (!slot) {
        /* The least recently used slot; its buffers are reused. */
        slot = &be->segments[0];
        for (int k = 1; k < CL_SEGMENT_SLOTS; k++)
            if (be->segments[k].last_use < slot->last_use)
                slot = &be->segments[k];
    }
    slot->keys = NULL; /* invalid until built */
    if ((st = build(be, slot, &s, err)) != MLFF_OK)
        return st;
    slot->keys = s.keys;
    slot->map = s.map;
    slot->stride = s.stride;
    slot->map_stride = s.map_stride;
    slot->n_entries = s.n_entries;
    slot->n_keys = s.n_keys;
    slot->keys_version = s.keys->version;
    slot->map_version = s.map ? s.map->version : 0;
    slot->last_use = be->use_clock;
    *out = slot;
    return MLFF_OK;
}

void cl_segments_free_all(mlff_backend *be)
{
    for (int k = 0; k < CL_SEGMENT_SLOTS; k++) {
        cl_segments *g = &be->segments[k];
        if (g->offsets)
            clReleaseMemObject(g->offsets);
        if (g->items)
            clReleaseMemObject(g->items);
        free(g->host_offsets);
        free(g->host_items);
        free(g->host_keys);
        memset(g, 0, sizeof *g);
    }
}

/* A buffer freed and another allocated at the same address must not match a
 * stale slot: forget the slots that name it. */
void cl_segments_forget(mlff_backend *be, const cl_buffer *b)
{
    for (int k = 0; k < CL_SEGMENT_SLOTS; k++)
        if (be->segments[k].keys == b || be->segments[k].map == b)
            be->segments[k].keys = be->segments[k].map = NULL;
}
