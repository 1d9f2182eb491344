/*
 * Segments: how the GPU backends run ops that sum many entries into one row
 * (scatters, pair gradients, ANI features) without float atomics, which many
 * devices (PoCL among them) lack, and deterministically. The entries are
 * sorted by target with a stable sort (a CSR); a work-item (or a work-group,
 * lowering.h) then owns one target and sums its entries in entry order, as
 * the CPU backend does (a group: in a fixed tree).
 *
 * The keys are index tensors (pairs, triples, systems, element lists). The
 * sort runs on the device, a radix sort from the index's device buffer
 * (shaders/segment_sort.kernel), or with the record's segment_sort=host
 * on the host from a copy kept beside the buffer, uploaded after; both give the
 * same CSR. Either way it runs only when that index changed: a host copy
 * of the index is kept to see that a rewrite changed nothing (a molecule's
 * pairs, call after call), which then costs neither a transfer nor a sort.
 * Most changed indices are in order already: the graph knows it for pair
 * lists by center, the triples built from them and element lists
 * (mlff_exec_tensor.ascending), the host copy shows it for others (systems),
 * and the device then only finds where each key starts (1 launch instead
 * of a radix sort's 2 + 5 a pass). The pair gradients' entries by atom of
 * a symmetric pair list (mlff_exec_tensor.symmetric) are placed where the
 * sort would put them without one (1 launch; 2 from the record's
 * sort_fused_pairs pairs, where each entry finding its runs itself costs
 * more than a launch).
 */
#ifndef MLFF_BACKENDS_SEGMENTS_H
#define MLFF_BACKENDS_SEGMENTS_H

#include <stdint.h>

#include "backends/backend.h"
#include "core/tuning.h"

/* The first member of a GPU backend's buffer: the host copy of an index. */
typedef struct mlff_index_shadow {
    int32_t *data;    /* host copy, or NULL until first needed */
    size_t size;      /* bytes of the buffer */
    size_t known;     /* bytes from the start that data mirrors */
    int keep;         /* sorted by on the device: keep a copy from the next write on */
    uint64_t version; /* bumped on every write */
    /* Written by a pair_triples node: its inputs and their versions then. */
    const struct mlff_index_shadow *sources[2];
    uint64_t source_versions[2];
} mlff_index_shadow;

/* The most indices one node sums by (lowering.h, mlff_node_segment_lists). */
#define MLFF_NODE_SEGMENTS 2

/* One sorted index (a slot of the cache below). */
typedef struct mlff_segments {
    const mlff_index_shadow *keys, *map; /* key(e) = map[keys[e * stride] * map_stride] or keys[e * stride] */
    int64_t stride, map_stride, n_entries, n_keys;
    int symmetric; /* a symmetric pair list (mlff_exec_tensor.symmetric): the same CSR, made without a sort */
    uint64_t keys_version, map_version, last_use;
    int32_t *offsets, *items; /* the CSR: [n_keys + 1], [n_entries] */
    int32_t *mapped;          /* keys looked up through the map */
    size_t capacity_offsets, capacity_items, capacity_mapped;
    void *device;             /* the backend's copy */
} mlff_segments;

#define MLFF_SEGMENT_SLOTS 48

/* The device sort's kernels, in the order they run, and its shapes (the
 * #defines of shaders/segment_sort.kernel). */
typedef enum mlff_sort_kernel {
    MLFF_SORT_KEYS,
    MLFF_SORT_COUNT,
    MLFF_SORT_TILE_SUMS,
    MLFF_SORT_SCAN_TILES,
    MLFF_SORT_SCAN,
    MLFF_SORT_SCATTER,
    MLFF_SORT_OFFSETS,
    MLFF_SORT_IN_ORDER, /* keys in order already: KEYS and OFFSETS in one launch */
    MLFF_SORT_PAIRS,        /* a symmetric pair list (no sort): twice where each center's run begins,
                             * and with few pairs each pair's two entries where the sort puts them */
    MLFF_SORT_PAIR_ENTRIES, /* ... else those entries, from the offsets */
    MLFF_SORT_KERNELS
} mlff_sort_kernel;
#define MLFF_SORT_GROUP 256
#define MLFF_SORT_BITS 8
#define MLFF_SORT_BINS (1 << MLFF_SORT_BITS)
#define MLFF_SCAN_TILE (4 * MLFF_SORT_GROUP)

/* The device sort's scratch buffers, reused between sorts: two pairs of
 * keys and values (the passes read one pair and write the other), the
 * digit counts per block and their tile sums. */
typedef enum mlff_sort_scratch {
    MLFF_SCRATCH_KEYS,       /* + pair (0 or 1) */
    MLFF_SCRATCH_VALUES = 2, /* + pair */
    MLFF_SCRATCH_COUNTS = 4,
    MLFF_SCRATCH_TILES,
    MLFF_SORT_SCRATCH
} mlff_sort_scratch;

/* One launch of a sort kernel over `items` work-items in groups of
 * MLFF_SORT_GROUP. It reads the scratch pair `from` (keys and values) and
 * writes the other pair, or its values into the slot's items when
 * to_items. args: entries, keys, stride, map stride, map entries (0: no
 * map), shift. */
typedef struct mlff_sort_launch {
    mlff_sort_kernel kernel;
    const mlff_index_shadow *keys, *map; /* map is keys when there is none */
    int from, to_items;
    int32_t args[6];
    int64_t items;
} mlff_sort_launch;

/* What a GPU backend does for the cache. */
typedef struct mlff_segment_ops {
    /* Fills b->data from the device (an index the device wrote). */
    mlff_status (*read_shadow)(void *backend, mlff_index_shadow *b, mlff_error *err);
    /* Copies g->offsets and g->items to the device (kept in g->device). */
    mlff_status (*upload)(void *backend, mlff_segments *g, mlff_error *err);
    void (*release)(void *backend, mlff_segments *g);
    /* Sorting on the device: the scratch buffers of at least entries[k]
     * int32 each and g's device arrays for its sizes, then each launch in turn. */
    mlff_status (*sort_reserve)(void *backend, mlff_segments *g, const size_t entries[MLFF_SORT_SCRATCH],
                                mlff_error *err);
    mlff_status (*sort_launch)(void *backend, mlff_segments *g, const mlff_sort_launch *l, mlff_error *err);
} mlff_segment_ops;

typedef struct mlff_segment_cache {
    mlff_segments slots[MLFF_SEGMENT_SLOTS];
    uint64_t clock;
    void *backend;
    const mlff_segment_ops *ops; /* NULL until initialised */
    int on_device;  /* the record's segment_sort: device or host */
    /* Symmetric lists of fewer pairs take one launch: the record's
     * sort_fused_pairs, or 0 with segment_sort=device_unfused (the tests'
     * way to the other form). */
    int64_t fused_pairs_below;
    uint64_t sorts; /* indices sorted: a backend checks its flag of bad keys only after device sorts */
    uint64_t in_order; /* ... of which on the device with their keys in order already (no radix passes) */
} mlff_segment_cache;

/* An empty cache for backend, sorting where the record says. */
void mlff_segments_init(mlff_segment_cache *c, void *backend, const mlff_segment_ops *ops, const mlff_tuning *t);
/* The record's choices (before anything was sorted). */
void mlff_segments_use_tuning(mlff_segment_cache *c, const mlff_tuning *t);

/* The segments node n sums by, sorted if needed (lowering.h,
 * mlff_node_segment_lists): out[k] NULL beyond them. */
mlff_status mlff_segments_for(mlff_segment_cache *c, const mlff_exec_node *n,
                              const mlff_segments *out[MLFF_NODE_SEGMENTS], mlff_error *err);

/* Host sorts: sorts what the nodes will ask mlff_segments_for for, side by
 * side on the pool (a no-op without threads or when sorting on the device).
 * Nodes whose sort this leaves out sort when they come. */
mlff_status mlff_segments_prepare(mlff_segment_cache *c, const mlff_exec_node *nodes, int n_nodes,
                                  mlff_thread_pool *pool, mlff_error *err);

/* A buffer freed (and maybe another allocated at its address) must not
 * match a stale slot. */
void mlff_segments_forget(mlff_segment_cache *c, const mlff_index_shadow *b);
/* Releases every slot (nothing before mlff_segments_init). */
void mlff_segments_free_all(mlff_segment_cache *c);

/* What a buffer's new contents do to its host copy: equal contents change
 * nothing (returns 0: skip the transfer); else the copy and version follow. */
int mlff_index_shadow_write(mlff_index_shadow *b, size_t offset, const void *src, size_t bytes);
/* The device wrote the buffer: the host copy is stale. */
void mlff_index_shadow_invalidate(mlff_index_shadow *b);
/* Node n is about to write buffer b (b is the shadow at its start): as
 * invalidate, unless n builds an index from indices alone (pair_triples)
 * that are what they were when it last wrote b, and nothing wrote b since:
 * then b holds what n would write, what was sorted by b stays valid, and
 * this returns 1: n need not run (a molecule's triples, call after call). */
int mlff_index_shadow_written_by(mlff_index_shadow *b, const mlff_exec_node *n);

/* Capacity for need entries: 1.5x on growth, and 25% headroom from the
 * start, because pair and triple counts drift a little every MD step. */
size_t mlff_grown_capacity(size_t capacity, size_t need);
/* The same, at most `most` (a device's largest buffer), and at least need. */
size_t mlff_grown_capacity_within(size_t capacity, size_t need, size_t most);

#endif
