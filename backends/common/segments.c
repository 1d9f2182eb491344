#include "segments.h"

#include <stdlib.h>
#include <string.h>

#include "core/counting_sort.h"
#include "lowering.h"

typedef struct segment_spec {
    const mlff_index_shadow *keys, *map;
    int64_t stride, map_stride, n_entries, n_keys;
    int64_t map_rows; /* rows of the map tensor */
    int keys_in_order, map_in_order; /* known by construction (mlff_exec_tensor.ascending) */
    int symmetric; /* mlff_segments.symmetric */
} segment_spec;

/* Which index of a node is sorted (its `part`th: a pair_vectors_vjp of
 * two lists has two), and how (see the kernels in shaders/). */
static int spec_for(const mlff_exec_node *n, int part, segment_spec *s)
{
    memset(s, 0, sizeof *s);
    if (n->output.rows == 0 || part >= mlff_node_segment_lists(n->op, &n->attrs, n->n_inputs))
        return 0; /* nothing to sum into (an empty node, see core/plan.c) */
    int keys, map = -1;       /* inputs */
    int64_t per_row = 1;      /* entries per row of keys: both columns, or column 0 */
    switch (n->op) {
    case MLFF_OP_SCATTER_ADD_ROWS: /* rows by target */
        keys = 1;
        break;
    case MLFF_OP_PAIR_VECTORS_VJP: /* both atoms of every pair, entry 2p + side */
        keys = 2 * part + 1;
        per_row = 2;
        s->symmetric = n->inputs[keys].symmetric;
        break;
    case MLFF_OP_PAIR_SHIFTS_VJP: /* pairs by center */
        keys = 2;
        break;
    case MLFF_OP_ANI_RADIAL: /* pairs by center */
        keys = 1;
        break;
    case MLFF_OP_ANI_RADIAL_JVP: /* pairs by center (after the tangent) */
        keys = 2;
        break;
    case MLFF_OP_ANI_ANGULAR_JVP: /* triples by the center of their first pair */
        keys = 3;
        map = 2;
        break;
    case MLFF_OP_ANI_ANGULAR_VJP_JVP: /* both pairs of every triple, entry 2t + side, whatever made them */
        keys = 3;
        per_row = 2;
        break;
    case MLFF_OP_ANI_ANGULAR: /* triples by the center of their first pair; the radial pairs by center */
        keys = part ? 7 : 2;
        map = part ? -1 : 1;
        break;
    case MLFF_OP_ANI_ANGULAR_VJP: /* both pairs of every triple, entry 2t + side */
        if (n->attrs.i[1])
            return 0; /* pair_triples' triples: the kernel finds a pair's own */
        keys = 3;
        per_row = 2;
        break;
    default:
        return 0;
    }
    const mlff_exec_tensor *k = &n->inputs[keys];
    s->keys = k->buffer;
    s->n_keys = n->output.rows;
    s->n_entries = per_row * k->rows;
    s->stride = k->cols / per_row;
    s->keys_in_order = k->ascending && per_row == 1; /* column 0 alone */
    if (map >= 0) {
        const mlff_exec_tensor *m = &n->inputs[map];
        s->map = m->buffer;
        s->map_stride = m->cols;
        s->map_rows = m->rows;
        s->map_in_order = m->ascending;
    }
    return 1;
}

int mlff_index_shadow_write(mlff_index_shadow *b, size_t offset, const void *src, size_t bytes)
{
    if (b->data && offset + bytes <= b->known && memcmp((char *)b->data + offset, src, bytes) == 0)
        return 0;
    if (!b->data && b->keep && offset == 0 && (b->data = malloc(b->size ? b->size : 1)) != NULL)
        b->known = 0; /* no copy (out of memory) only costs transfers */
    if (b->data) {
        memcpy((char *)b->data + offset, src, bytes);
        if (offset <= b->known && offset + bytes > b->known)
            b->known = offset + bytes;
    }
    b->sources[0] = b->sources[1] = NULL;
    b->version++;
    return 1;
}

void mlff_index_shadow_invalidate(mlff_index_shadow *b)
{
    free(b->data);
    b->data = NULL;
    b->known = 0;
    b->sources[0] = b->sources[1] = NULL;
    b->version++;
}

int mlff_index_shadow_written_by(mlff_index_shadow *b, const mlff_exec_node *n)
{
    if (n->op != MLFF_OP_PAIR_TRIPLES) {
        mlff_index_shadow_invalidate(b);
        return 0;
    }
    const mlff_index_shadow *in[2] = {n->inputs[0].buffer, n->inputs[1].buffer};
    int same = 1;
    for (int k = 0; k < 2; k++) {
        ((mlff_index_shadow *)in[k])->keep = 1; /* to see that a rewrite changed nothing */
        same &= b->sources[k] == in[k] && b->source_versions[k] == in[k]->version;
    }
    if (same)
        return 1;
    mlff_index_shadow_invalidate(b);
    for (int k = 0; k < 2; k++) {
        b->sources[k] = in[k];
        b->source_versions[k] = in[k]->version;
    }
    return 0;
}

void mlff_segments_init(mlff_segment_cache *c, void *backend, const mlff_segment_ops *ops, const mlff_tuning *t)
{
    memset(c, 0, sizeof *c);
    c->backend = backend;
    c->ops = ops;
    mlff_segments_use_tuning(c, t);
}

void mlff_segments_use_tuning(mlff_segment_cache *c, const mlff_tuning *t)
{
    c->on_device = t->segment_sort != MLFF_SEGMENT_SORT_HOST;
    c->fused_pairs_below = t->segment_sort == MLFF_SEGMENT_SORT_DEVICE_UNFUSED ? 0 : t->sort_fused_pairs;
}

size_t mlff_grown_capacity(size_t capacity, size_t need)
{
    const size_t grown = capacity + capacity / 2, padded = need + need / 4;
    return grown > padded ? grown : padded;
}

size_t mlff_grown_capacity_within(size_t capacity, size_t need, size_t most)
{
    const size_t grown = mlff_grown_capacity(capacity, need);
    return grown < most ? grown : need > most ? need : most;
}

/* The same index sorted the same way. Its sizes may have changed (pair
 * counts drift in MD), which rebuilds the slot in place, reusing its buffers. */
static int same_spec(const mlff_segments *g, const segment_spec *s)
{
    return g->keys == s->keys && g->map == s->map && g->stride == s->stride && g->map_stride == s->map_stride &&
           g->symmetric == s->symmetric;
}

static mlff_status grow(int32_t **array, size_t *capacity, size_t need, mlff_error *err)
{
    if (need <= *capacity)
        return MLFF_OK;
    const size_t cap = mlff_grown_capacity(*capacity, need);
    int32_t *a = realloc(*array, cap * sizeof *a);
    if (!a)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory sorting an index");
    *array = a;
    *capacity = cap;
    return MLFF_OK;
}

/* Stable counting sort of the entries by key. */
static mlff_status sort(mlff_segments *g, const segment_spec *s, mlff_error *err)
{
    if (s->n_entries >= INT32_MAX || s->n_keys >= INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "%lld index entries in one evaluation is more than 32-bit offsets hold; split the batch",
                         (long long)s->n_entries);
    const size_t n_keys = (size_t)s->n_keys, n = (size_t)s->n_entries;
    mlff_status st = grow(&g->offsets, &g->capacity_offsets, n_keys + 1, err);
    if (st == MLFF_OK)
        st = grow(&g->items, &g->capacity_items, n ? n : 1, err);
    if (st == MLFF_OK && s->map)
        st = grow(&g->mapped, &g->capacity_mapped, n ? n : 1, err);
    if (st != MLFF_OK)
        return st;
    /* Keys read through a map (the system of a pair's atom, the center of a
     * triple's pair) are looked up first; one out of the map's range becomes -1. */
    const int32_t *keys = s->keys->data;
    int64_t stride = s->stride;
    if (s->map) {
        const int64_t map_entries = (int64_t)(s->map->size / sizeof(int32_t));
        for (size_t e = 0; e < n; e++) {
            const int64_t k = (int64_t)keys[(int64_t)e * stride] * s->map_stride;
            g->mapped[e] = k >= 0 && k < map_entries ? s->map->data[k] : -1;
        }
        keys = g->mapped;
        stride = 1;
    }
    const int64_t bad = mlff_counting_sort(keys, stride, s->n_entries, s->n_keys, g->offsets, g->items);
    if (bad >= 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "index %d of entry %lld is out of range [0, %lld)",
                         keys[bad * stride], (long long)bad, (long long)s->n_keys);
    return MLFF_OK;
}

/* True when the host copy shows b[e * stride] never decreasing for e < n. */
static int column_ascending(const mlff_index_shadow *b, int64_t stride, int64_t n)
{
    if (n <= 0)
        return 1;
    if (!b->data || (size_t)((n - 1) * stride + 1) * sizeof(int32_t) > b->known)
        return 0; /* not known: unsorted */
    for (int64_t e = 1; e < n; e++)
        if (b->data[e * stride] < b->data[(e - 1) * stride])
            return 0;
    return 1;
}

/* True when the keys are in order already, so that the stable sort is the
 * identity and only the offsets are left to compute: most indices are, by
 * construction (pair lists by center, the triples built from them, element
 * lists: mlff_exec_tensor.ascending), or as their host copy shows (systems). */
static int keys_ascending(const segment_spec *s)
{
    if (s->map && !s->map_in_order && !column_ascending(s->map, s->map_stride, s->map_rows))
        return 0;
    return s->keys_in_order || column_ascending(s->keys, s->stride, s->n_entries);
}

/* The same stable sort on the device: a least-significant-digit radix sort
 * (shaders/segment_sort.kernel) of the keys, with the entries as values;
 * for keys in order already, one launch that lists the entries in order and
 * finds the offsets. */
static mlff_status sort_on_device(mlff_segment_cache *c, mlff_segments *g, const segment_spec *s, mlff_error *err)
{
    if (s->n_entries >= INT32_MAX || s->n_keys >= INT32_MAX || s->stride * s->n_entries >= INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "%lld index entries in one evaluation is more than 32-bit offsets hold; split the batch",
                         (long long)s->n_entries);
    const int64_t n = s->n_entries, blocks = (n + MLFF_SORT_GROUP - 1) / MLFF_SORT_GROUP;
    const int64_t counts = MLFF_SORT_BINS * blocks, tiles = (counts + MLFF_SCAN_TILE - 1) / MLFF_SCAN_TILE;
    const int in_order = keys_ascending(s);
    const size_t scratch[MLFF_SORT_SCRATCH] = {(size_t)n, (size_t)n, (size_t)n, (size_t)n, (size_t)counts,
                                               (size_t)tiles};
    const size_t none[MLFF_SORT_SCRATCH] = {1, 1, 1, 1, 1, 1};
    mlff_status st = c->ops->sort_reserve(c->backend, g, in_order ? none : scratch, err);
    if (st != MLFF_OK)
        return st;
    const int64_t map_entries = s->map ? (int64_t)(s->map->size / sizeof(int32_t)) : 0;
    mlff_sort_launch l = {
        .keys = s->keys,
        .map = s->map ? s->map : s->keys,
        .args = {(int32_t)n, (int32_t)s->n_keys, (int32_t)s->stride, (int32_t)s->map_stride,
                 (int32_t)(map_entries < INT32_MAX ? map_entries : INT32_MAX), 0},
    };
    if (in_order) {
        c->in_order++;
        l.kernel = MLFF_SORT_IN_ORDER;
        l.to_items = 1;
        l.items = n + 1;
        return c->ops->sort_launch(c->backend, g, &l, err);
    }
    /* Keys are in [0, n_keys] (n_keys: out of range, sorted last). */
    int passes = 1;
    while (passes * MLFF_SORT_BITS < 31 && ((int64_t)1 << (passes * MLFF_SORT_BITS)) <= s->n_keys)
        passes++;
    const struct {
        mlff_sort_kernel kernel;
        int64_t items;
    } per_pass[] = {{MLFF_SORT_COUNT, blocks * MLFF_SORT_GROUP},
                    {MLFF_SORT_TILE_SUMS, tiles * MLFF_SORT_GROUP},
                    {MLFF_SORT_SCAN_TILES, MLFF_SORT_GROUP},
                    {MLFF_SORT_SCAN, tiles * MLFF_SORT_GROUP},
                    {MLFF_SORT_SCATTER, blocks * MLFF_SORT_GROUP}};
    if (n > 0) {
        l.kernel = MLFF_SORT_KEYS; /* into pair 0 */
        l.from = 1;
        l.items = n;
        st = c->ops->sort_launch(c->backend, g, &l, err);
    }
    for (int pass = 0; n > 0 && pass < passes && st == MLFF_OK; pass++) {
        l.from = pass % 2;
        l.to_items = pass == passes - 1;
        l.args[5] = pass * MLFF_SORT_BITS;
        for (size_t k = 0; k < sizeof per_pass / sizeof *per_pass && st == MLFF_OK; k++) {
            l.kernel = per_pass[k].kernel;
            l.items = per_pass[k].items;
            st = c->ops->sort_launch(c->backend, g, &l, err);
        }
    }
    if (st != MLFF_OK)
        return st;
    l.kernel = MLFF_SORT_OFFSETS; /* from the sorted keys */
    l.from = n > 0 ? passes % 2 : 0;
    l.to_items = 0;
    l.items = s->n_keys + 1;
    return c->ops->sort_launch(c->backend, g, &l, err);
}

/* The same CSR for the pairs of a symmetric list (mlff_exec_tensor.symmetric), without a
 * sort: an atom's segment holds twice its run of pairs by center, and each
 * entry's place in it follows from the runs (sort_pairs). */
static mlff_status symmetric_on_device(mlff_segment_cache *c, mlff_segments *g, const segment_spec *s,
                                       mlff_error *err)
{
    if (s->n_entries >= INT32_MAX || s->n_keys >= INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "%lld index entries in one evaluation is more than 32-bit offsets hold; split the batch",
                         (long long)s->n_entries);
    const size_t scratch[MLFF_SORT_SCRATCH] = {1, 1, 1, 1, 1, 1};
    mlff_status st = c->ops->sort_reserve(c->backend, g, scratch, err);
    const int64_t pairs = s->n_entries / 2;
    const int fused = pairs < c->fused_pairs_below;
    mlff_sort_launch l = {
        .kernel = MLFF_SORT_PAIRS,
        .keys = s->keys,
        .map = s->keys,
        .to_items = 1,
        .args = {(int32_t)s->n_entries, (int32_t)s->n_keys, 1, 0, 0, fused},
        .items = pairs + 1,
    };
    if (st == MLFF_OK)
        st = c->ops->sort_launch(c->backend, g, &l, err);
    if (st == MLFF_OK && !fused && pairs > 0) {
        l.kernel = MLFF_SORT_PAIR_ENTRIES;
        l.items = pairs;
        st = c->ops->sort_launch(c->backend, g, &l, err);
    }
    c->in_order++;
    return st;
}

static mlff_status ensure_shadow(mlff_segment_cache *c, const mlff_index_shadow *b, mlff_error *err)
{
    if (c->on_device) {
        ((mlff_index_shadow *)b)->keep = 1; /* for the next write to compare with */
        return MLFF_OK;
    }
    return b->data ? MLFF_OK : c->ops->read_shadow(c->backend, (mlff_index_shadow *)b, err);
}

/* The slot that holds s sorted, or NULL. */
static mlff_segments *valid_slot(mlff_segment_cache *c, const segment_spec *s)
{
    for (int k = 0; k < MLFF_SEGMENT_SLOTS; k++) {
        mlff_segments *g = &c->slots[k];
        if (same_spec(g, s) && g->n_entries == s->n_entries && g->n_keys == s->n_keys &&
            g->keys_version == s->keys->version && (!s->map || g->map_version == s->map->version))
            return g;
    }
    return NULL;
}

/* A slot for s: its old one, else the least recently used (buffers reused);
 * NULL when every slot is taken at this clock tick. */
static mlff_segments *claim_slot(mlff_segment_cache *c, const segment_spec *s)
{
    mlff_segments *slot = NULL;
    for (int k = 0; k < MLFF_SEGMENT_SLOTS && !slot; k++)
        if (same_spec(&c->slots[k], s))
            slot = &c->slots[k];
    if (!slot) {
        slot = &c->slots[0];
        for (int k = 1; k < MLFF_SEGMENT_SLOTS; k++)
            if (c->slots[k].last_use < slot->last_use)
                slot = &c->slots[k];
        if (slot->last_use == c->clock)
            return NULL;
    }
    slot->keys = NULL; /* invalid until sorted and uploaded */
    slot->n_entries = s->n_entries;
    slot->n_keys = s->n_keys;
    slot->last_use = c->clock;
    return slot;
}

/* After a host sort, the device copy; then the slot becomes valid for s. */
static mlff_status publish(mlff_segment_cache *c, mlff_segments *slot, const segment_spec *s, mlff_error *err)
{
    mlff_status st = c->on_device ? MLFF_OK : c->ops->upload(c->backend, slot, err);
    if (st != MLFF_OK)
        return st;
    slot->keys = s->keys;
    slot->map = s->map;
    slot->stride = s->stride;
    slot->map_stride = s->map_stride;
    slot->symmetric = s->symmetric;
    slot->keys_version = s->keys->version;
    slot->map_version = s->map ? s->map->version : 0;
    return MLFF_OK;
}

/* The node's index spec with host copies of its buffers; 0 for an op without segments. */
static int spec_with_shadows(mlff_segment_cache *c, const mlff_exec_node *n, int part, segment_spec *s,
                             mlff_status *st, mlff_error *err)
{
    *st = MLFF_OK;
    if (!spec_for(n, part, s))
        return 0;
    *st = ensure_shadow(c, s->keys, err);
    if (*st == MLFF_OK && s->map)
        *st = ensure_shadow(c, s->map, err);
    return 1;
}

static mlff_status segments_for(mlff_segment_cache *c, const mlff_exec_node *n, int part, const mlff_segments **out,
                                mlff_error *err)
{
    segment_spec s;
    mlff_status st;
    *out = NULL;
    if (!spec_with_shadows(c, n, part, &s, &st, err) || st != MLFF_OK)
        return st;
    c->clock++;
    mlff_segments *slot = valid_slot(c, &s);
    if (!slot) {
        slot = claim_slot(c, &s); /* never NULL: the clock just moved */
        st = !c->on_device ? sort(slot, &s, err)
             : s.symmetric  ? symmetric_on_device(c, slot, &s, err)
                            : sort_on_device(c, slot, &s, err);
        c->sorts++;
        if (st != MLFF_OK || (st = publish(c, slot, &s, err)) != MLFF_OK)
            return st;
    }
    slot->last_use = c->clock;
    *out = slot;
    return MLFF_OK;
}

mlff_status mlff_segments_for(mlff_segment_cache *c, const mlff_exec_node *n,
                              const mlff_segments *out[MLFF_NODE_SEGMENTS], mlff_error *err)
{
    mlff_status st = MLFF_OK;
    for (int part = 0; part < MLFF_NODE_SEGMENTS; part++)
        out[part] = NULL;
    for (int part = 0; part < MLFF_NODE_SEGMENTS && st == MLFF_OK; part++)
        st = segments_for(c, n, part, &out[part], err);
    return st;
}

/* The sorts of one node list, run side by side. */
typedef struct sort_job {
    mlff_segments *slot;
    segment_spec spec;
    mlff_status status;
    mlff_error error;
} sort_job;

static void run_sorts(const void *task, void *unused, int64_t begin, int64_t end)
{
    (void)unused;
    sort_job *jobs = (sort_job *)task;
    for (int64_t k = begin; k < end; k++)
        jobs[k].status = sort(jobs[k].slot, &jobs[k].spec, &jobs[k].error);
}

/* True when a node before node k writes the buffer whose host copy is b. */
static int written_before(const mlff_exec_node *nodes, int k, const mlff_index_shadow *b)
{
    for (int j = 0; b && j < k; j++)
        if (nodes[j].output.buffer == (const void *)b)
            return 1;
    return 0;
}

mlff_status mlff_segments_prepare(mlff_segment_cache *c, const mlff_exec_node *nodes, int n_nodes,
                                  mlff_thread_pool *pool, mlff_error *err)
{
    if (c->on_device || mlff_thread_pool_size(pool) < 2)
        return MLFF_OK; /* each node sorts its own as it comes */
    sort_job *jobs = calloc((size_t)(n_nodes > 0 ? n_nodes : 1) * MLFF_NODE_SEGMENTS, sizeof *jobs);
    if (!jobs)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory sorting indices");
    int n_jobs = 0;
    mlff_status st = MLFF_OK;
    c->clock++;
    for (int k = 0; k < n_nodes && st == MLFF_OK; k++)
        for (int part = 0; part < MLFF_NODE_SEGMENTS && st == MLFF_OK; part++) {
            segment_spec s;
            if (!spec_for(&nodes[k], part, &s) || written_before(nodes, k, s.keys) || written_before(nodes, k, s.map))
                continue; /* no segments, or an index this node list computes: sorted when it is there */
            if (!spec_with_shadows(c, &nodes[k], part, &s, &st, err) || st != MLFF_OK)
                continue;
            mlff_segments *valid = valid_slot(c, &s);
            if (valid) {
                valid->last_use = c->clock; /* not to be taken for another sort of this pass */
                continue;
            }
            int seen = 0;
            for (int j = 0; j < n_jobs && !seen; j++)
                seen = !memcmp(&jobs[j].spec, &s, sizeof s);
            if (!seen && (jobs[n_jobs].slot = claim_slot(c, &s)) != NULL)
                jobs[n_jobs++].spec = s;
        }
    if (st == MLFF_OK)
        mlff_thread_pool_for(pool, n_jobs, 2, run_sorts, jobs, NULL);
    for (int j = 0; j < n_jobs && st == MLFF_OK; j++) {
        if (jobs[j].status != MLFF_OK) {
            *err = jobs[j].error;
            st = jobs[j].status;
        } else {
            st = publish(c, jobs[j].slot, &jobs[j].spec, err);
            c->sorts++;
        }
    }
    free(jobs);
    return st;
}

void mlff_segments_forget(mlff_segment_cache *c, const mlff_index_shadow *b)
{
    for (int k = 0; k < MLFF_SEGMENT_SLOTS; k++)
        if (c->slots[k].keys == b || c->slots[k].map == b)
            c->slots[k].keys = c->slots[k].map = NULL;
}

void mlff_segments_free_all(mlff_segment_cache *c)
{
    if (!c->ops)
        return;
    for (int k = 0; k < MLFF_SEGMENT_SLOTS; k++) {
        mlff_segments *g = &c->slots[k];
        c->ops->release(c->backend, g);
        free(g->offsets);
        free(g->items);
        free(g->mapped);
        memset(g, 0, sizeof *g);
    }
}
