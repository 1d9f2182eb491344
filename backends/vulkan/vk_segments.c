/* The Vulkan side of the segments (backends/common/segments.h): host copies
 * of index buffers; each sorted index in host-visible buffers when the host
 * sorts (an upload is a copy, and a recording that binds them stays valid),
 * in device buffers when the device sorts (shaders/segment_sort.kernel,
 * one pipeline per kernel, built at the first sort; its dispatches join the
 * node list's, so an unchanged call replays them with the rest). */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static mlff_status read_shadow(void *backend, mlff_index_shadow *h, mlff_error *err)
{
    if (!(h->data = malloc(h->size ? h->size : 1)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    mlff_status s = vk_read(backend, (const vk_buffer *)h, 0, h->data, h->size, err);
    if (s != MLFF_OK) {
        free(h->data);
        h->data = NULL;
    }
    h->known = h->data ? h->size : 0;
    return s;
}

/* Index entries, where the sorts' side of them lives. */
static mlff_status grow(mlff_backend *be, vk_buffer *b, size_t *capacity, size_t need, mlff_error *err)
{
    const vk_memory where = be->segments.on_device ? VK_MEMORY_DEVICE : VK_MEMORY_MAPPED;
    return vk_buffer_grow(be, b, capacity, need, sizeof(int32_t), where, err);
}

/* g's device arrays for its sizes. */
static mlff_status reserve_slot(mlff_backend *be, mlff_segments *g, mlff_error *err)
{
    vk_segment_buffers *d = g->device;
    if (!d && !(d = g->device = calloc(1, sizeof *d)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    const size_t n_keys = (size_t)g->n_keys, n = (size_t)g->n_entries;
    mlff_status s = grow(be, &d->offsets, &d->capacity_offsets, n_keys + 1, err);
    return s == MLFF_OK ? grow(be, &d->items, &d->capacity_items, n ? n : 1, err) : s;
}

static mlff_status upload(void *backend, mlff_segments *g, mlff_error *err)
{
    mlff_backend *be = backend;
    mlff_status s = reserve_slot(be, g, err);
    if (s != MLFF_OK)
        return s;
    const vk_segment_buffers *d = g->device;
    const size_t n_keys = (size_t)g->n_keys, n = (size_t)g->n_entries;
    memcpy(d->offsets.mapped, g->offsets, (n_keys + 1) * sizeof(int32_t));
    memcpy(d->items.mapped, g->items, n * sizeof(int32_t));
    return MLFF_OK;
}

static void release(void *backend, mlff_segments *g)
{
    vk_segment_buffers *d = g->device;
    if (!d)
        return;
    vk_buffer_destroy(backend, &d->offsets);
    vk_buffer_destroy(backend, &d->items);
    free(d);
    g->device = NULL;
}

static mlff_status build_sort(mlff_backend *be, mlff_error *err)
{
    const char *body = mlff_kernel_source(mlff_vulkan_shaders, "segment_sort");
    if (!body)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "vulkan: the segment sort's kernels are missing");
    mlff_status s = MLFF_OK;
    for (int k = 0; k < MLFF_SORT_KERNELS && s == MLFF_OK; k++) {
        if (be->sort.pipelines[k])
            continue;
        mlff_text src = {0};
        mlff_text_put(&src, "#version 450\n#define SORT_KERNEL %d\n%s%s%s", k,
                      mlff_shader_find(mlff_vulkan_shaders, "dispatch"), mlff_shader_find(mlff_vulkan_shaders, "dialect"),
                      body);
        s = src.failed ? mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory")
                       : vk_pipeline_from_source(be, src.s, &be->sort.pipelines[k], err);
        free(src.s);
    }
    vk_pipeline_cache_save(be);
    if (s == MLFF_OK && !be->sort.flag.buffer && (s = vk_buffer_create(be, &be->sort.flag, sizeof(int32_t),
                                                                         VK_MEMORY_HOST, err)) == MLFF_OK)
        memset(be->sort.flag.mapped, 0, sizeof(int32_t));
    return s;
}

static mlff_status sort_reserve(void *backend, mlff_segments *g, const size_t entries[MLFF_SORT_SCRATCH],
                                mlff_error *err)
{
    mlff_backend *be = backend;
    vk_sort_scratch *x = &be->sort;
    mlff_status s = x->flag.buffer ? MLFF_OK : build_sort(be, err); /* the flag comes last */
    for (int k = 0; k < MLFF_SORT_SCRATCH && s == MLFF_OK; k++)
        s = grow(be, &x->scratch[k], &x->capacity[k], entries[k] ? entries[k] : 1, err);
    return s == MLFF_OK ? reserve_slot(be, g, err) : s;
}

static mlff_status sort_launch(void *backend, mlff_segments *g, const mlff_sort_launch *l, mlff_error *err)
{
    mlff_backend *be = backend;
    const vk_sort_scratch *x = &be->sort;
    const vk_segment_buffers *d = g->device;
    vk_dispatch dispatch;
    memset(&dispatch, 0, sizeof dispatch); /* compared as bytes */
    dispatch.pipeline = x->pipelines[l->kernel];
    dispatch.row = VK_ROW_SORTS;
    const VkBuffer bindings[] = {((const vk_buffer *)l->keys)->buffer,
                                 ((const vk_buffer *)l->map)->buffer,
                                 x->scratch[MLFF_SCRATCH_KEYS + l->from].buffer,
                                 x->scratch[MLFF_SCRATCH_VALUES + l->from].buffer,
                                 x->scratch[MLFF_SCRATCH_KEYS + 1 - l->from].buffer,
                                 l->to_items ? d->items.buffer : x->scratch[MLFF_SCRATCH_VALUES + 1 - l->from].buffer,
                                 x->scratch[MLFF_SCRATCH_COUNTS].buffer,
                                 x->scratch[MLFF_SCRATCH_TILES].buffer,
                                 d->offsets.buffer,
                                 x->flag.buffer};
    _Static_assert(sizeof bindings / sizeof *bindings <= VK_BINDINGS, "the segment sort binds too many buffers");
    memcpy(dispatch.bindings, bindings, sizeof bindings);
    dispatch.writes = 0x3f0u; /* 4 to 9 (segment_sort.kernel): a sort runs beside the nodes that read its keys */
    memcpy(&dispatch.push[2], l->args, sizeof l->args);
    dispatch.groups[1] = dispatch.groups[2] = 1;
    return vk_add_dispatch(be, &dispatch, l->items, MLFF_SORT_GROUP, err);
}

mlff_status vk_segments_check(mlff_backend *be, mlff_error *err)
{
    if (!be->segments.on_device || be->segments.sorts == be->sort.sorts_checked)
        return MLFF_OK;
    be->sort.sorts_checked = be->segments.sorts;
    int32_t *flag = be->sort.flag.mapped;
    if (!flag) /* the sort kernels failed to build (the flag comes last): none ran */
        return MLFF_OK;
    const int32_t bad = *flag;
    if (bad == 0)
        return MLFF_OK;
    *flag = 0;
    return mlff_fail(err, MLFF_ERROR_INTERNAL, "vulkan: entry %d of an index is out of range", bad - 1);
}

void vk_segments_free(mlff_backend *be)
{
    mlff_segments_free_all(&be->segments);
    vk_sort_scratch *x = &be->sort;
    for (int k = 0; k < MLFF_SORT_KERNELS; k++)
        if (x->pipelines[k])
            vkDestroyPipeline(be->device, x->pipelines[k], NULL);
    for (int k = 0; k < MLFF_SORT_SCRATCH; k++)
        vk_buffer_destroy(be, &x->scratch[k]);
    vk_buffer_destroy(be, &x->flag);
    memset(x, 0, sizeof *x);
}

mlff_status vk_segments_init(mlff_backend *be, mlff_error *err)
{
    static const mlff_segment_ops ops = {read_shadow, upload, release, sort_reserve, sort_launch};
    (void)err;
    mlff_segments_init(&be->segments, be, &ops, &be->tuning);
    return MLFF_OK;
}
