/*
 * Segments: how the GPU backends run ops that sum many entries into one row
 * (scatters, pair gradients, ANI features) without float atomics, which many
 * devices (PoCL among them) lack, and deterministically. The entries are
 * sorted by target with a stable counting sort (a CSR); each work-item then
 * owns one target and sums its entries in entry order, as the CPU backend does.
 *
 * The keys are index tensors (pairs, triples, systems, element lists), which
 * always come from the host; the sort runs on the host from a copy kept
 * beside the device buffer, and only when that index changed (so a
 * neighbour list reused through the Verlet skin is sorted once). The backend
 * uploads the result to device buffers it keeps per slot and reuses.
 */
#ifndef MLFF_BACKENDS_SEGMENTS_H
#define MLFF_BACKENDS_SEGMENTS_H

#include <stdint.h>

#include "../backend.h"

/* The first member of a GPU backend's buffer: the host copy of an index. */
typedef struct mlff_index_shadow {
    int32_t *data;    /* host copy, or NULL until first needed */
    size_t size;      /* bytes of the buffer */
    uint64_t version; /* bumped on every write */
} mlff_index_shadow;

/* One sorted index (a slot of the cache below). */
typedef struct mlff_segments {
    const mlff_index_shadow *keys, *map; /* key(e) = map[keys[e * stride] * map_stride] or keys[e * stride] */
    int64_t stride, map_stride, n_entries, n_keys;
    uint64_t keys_version, map_version, last_use;
    int32_t *offsets, *items; /* the CSR: [n_keys + 1], [n_entries] */
    int32_t *mapped;          /* keys looked up through the map */
    size_t capacity_offsets, capacity_items, capacity_mapped;
    void *device;             /* the backend's copy */
} mlff_segments;

#define MLFF_SEGMENT_SLOTS 48

typedef struct mlff_segment_cache {
    mlff_segments slots[MLFF_SEGMENT_SLOTS];
    uint64_t clock;
    void *backend;
    /* Fills b->data from the device (an index the device wrote). */
    mlff_status (*read_shadow)(void *backend, mlff_index_shadow *b, mlff_error *err);
    /* Copies g->offsets and g->items to the device (kept in g->device). */
    mlff_status (*upload)(void *backend, mlff_segments *g, mlff_error *err);
    void (*release)(void *backend, mlff_segments *g);
} mlff_segment_cache;

/* The segments node n sums by, sorted if needed; *out is NULL for an op
 * without segments. */
mlff_status mlff_segments_for(mlff_segment_cache *c, const mlff_exec_node *n, const mlff_segments **out,
                              mlff_error *err);

/* Sorts what the nodes will ask mlff_segments_for for, side by side on the
 * pool (a no-op without threads): the host's share of a GPU evaluation is
 * mostly these sorts. Nodes whose sort this leaves out sort when they come. */
mlff_status mlff_segments_prepare(mlff_segment_cache *c, const mlff_exec_node *nodes, int n_nodes,
                                  mlff_thread_pool *pool, mlff_error *err);

/* A buffer freed (and maybe another allocated at its address) must not
 * match a stale slot. */
void mlff_segments_forget(mlff_segment_cache *c, const mlff_index_shadow *b);
void mlff_segments_free_all(mlff_segment_cache *c);

/* What a buffer's new contents do to its host copy: equal contents change
 * nothing (returns 0: skip the transfer); else the copy and version follow. */
int mlff_index_shadow_write(mlff_index_shadow *b, size_t offset, const void *src, size_t bytes);
/* The device wrote the buffer: the host copy is stale. */
void mlff_index_shadow_invalidate(mlff_index_shadow *b);

/* Capacity for need entries: 1.5x on growth, and 25% headroom from the
 * start, because pair and triple counts drift a little every MD step. */
size_t mlff_grown_capacity(size_t capacity, size_t need);

#endif
