/* The Vulkan side of the segments (backends/common/segments.h): host copies
 * of index buffers, and each sorted index in host-visible buffers, so that
 * an upload is a copy and a recording that binds them stays valid. */
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
    return s;
}

/* A new buffer invalidates the recordings (they bind the old one). */
static mlff_status grow(mlff_backend *be, vk_buffer *b, size_t *capacity, size_t need, mlff_error *err)
{
    if (need <= *capacity && b->buffer)
        return MLFF_OK;
    const size_t cap = mlff_grown_capacity(*capacity, need);
    vk_buffer_destroy(be, b);
    be->epoch++;
    *capacity = 0;
    mlff_status s = vk_buffer_create(be, b, cap * sizeof(int32_t), VK_MEMORY_MAPPED, err);
    if (s == MLFF_OK)
        *capacity = cap;
    return s;
}

static mlff_status upload(void *backend, mlff_segments *g, mlff_error *err)
{
    mlff_backend *be = backend;
    vk_segment_buffers *d = g->device;
    if (!d && !(d = g->device = calloc(1, sizeof *d)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    const size_t n_keys = (size_t)g->n_keys, n = (size_t)g->n_entries;
    mlff_status s = grow(be, &d->offsets, &d->capacity_offsets, n_keys + 1, err);
    if (s == MLFF_OK)
        s = grow(be, &d->items, &d->capacity_items, n ? n : 1, err);
    if (s != MLFF_OK)
        return s;
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

void vk_segments_init(mlff_backend *be)
{
    be->segments.backend = be;
    be->segments.read_shadow = read_shadow;
    be->segments.upload = upload;
    be->segments.release = release;
}
