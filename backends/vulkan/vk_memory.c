/*
 * Buffers and transfers. Where the device offers host-visible device-local
 * memory in a heap about as large as its device-local memory (integrated
 * GPUs, CPUs, discrete GPUs with resizable BAR), every buffer lives there
 * and transfers are plain copies, except large reads of memory the host
 * does not cache; elsewhere buffers are device-local. Other transfers go
 * through one staging buffer, in cached host memory where there is such.
 * The record's vulkan_staging=on forces the device-local path (so that CI
 * tests it on lavapipe).
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "backends/common/memory_limits.h"

/* Uniform and indirect: the table of dispatches (vk_record.c). */
static const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                        VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                                        VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;

/* The first memory type allowed by `bits` that has all of `want`; -1 if none. */
static int find_type(const VkPhysicalDeviceMemoryProperties *m, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t k = 0; k < m->memoryTypeCount; k++)
        if ((bits & (1u << k)) && (m->memoryTypes[k].propertyFlags & want) == want)
            return (int)k;
    return -1;
}

static VkDeviceSize largest_device_heap(const VkPhysicalDeviceMemoryProperties *m)
{
    VkDeviceSize most = 0;
    for (uint32_t k = 0; k < m->memoryHeapCount; k++)
        if ((m->memoryHeaps[k].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && m->memoryHeaps[k].size > most)
            most = m->memoryHeaps[k].size;
    return most;
}

mlff_status vk_memory_init(mlff_backend *be, mlff_error *err)
{
    /* The memory types a storage buffer may use (the same for every size). */
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 256, .usage = usage};
    VkBuffer probe;
    VkResult r = vkCreateBuffer(be->device, &info, NULL, &probe);
    if (r != VK_SUCCESS)
        return vk_fail(err, r, "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(be->device, probe, &req);
    vkDestroyBuffer(be->device, probe, NULL);

    const VkPhysicalDeviceMemoryProperties *m = &be->memory_props;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int host_type = find_type(m, req.memoryTypeBits, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (host_type < 0)
        host_type = find_type(m, req.memoryTypeBits, host);
    int device_type = find_type(m, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    const int shared_type = find_type(m, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
    if (host_type < 0)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: the device has no host-visible coherent memory");
    if (device_type < 0)
        device_type = host_type;
    be->local_type = (uint32_t)device_type;
    be->shared_type = -1;
    if (shared_type >= 0 && m->memoryHeaps[m->memoryTypes[shared_type].heapIndex].size >= largest_device_heap(m) / 2)
        be->shared_type = shared_type;
    be->host_type = (uint32_t)host_type;
    vk_memory_use_tuning(be);
    return MLFF_OK;
}

void vk_memory_use_tuning(mlff_backend *be)
{
    const VkPhysicalDeviceMemoryProperties *m = &be->memory_props;
    be->mapped = be->shared_type >= 0 && !be->tuning.vulkan_staging;
    be->device_type = be->mapped ? (uint32_t)be->shared_type : be->local_type;
    be->mapped_cached =
        be->mapped && (m->memoryTypes[be->device_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
}

size_t vk_largest_buffer(const mlff_backend *be)
{
    uint64_t most = be->props.limits.maxStorageBufferRange;
    if (be->max_allocation && be->max_allocation < most)
        most = be->max_allocation;
    return (size_t)most;
}

void vk_memory_limits(const mlff_backend *be, mlff_memory_limits *limits)
{
    mlff_memory_limits_for(be->is_gpu, largest_device_heap(&be->memory_props), be->memory_free_at_open,
                           vk_largest_buffer(be), limits);
}

mlff_status vk_buffer_create(mlff_backend *be, vk_buffer *b, size_t bytes, vk_memory where, mlff_error *err)
{
    memset(b, 0, sizeof *b);
    const VkDeviceSize size = bytes ? bytes : 4;
    if (size > be->props.limits.maxStorageBufferRange || (be->max_allocation && size > be->max_allocation))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY,
                         "vulkan: a buffer of %zu bytes is larger than the device binds (maxStorageBufferRange %u); "
                         "split the batch or use a smaller system",
                         bytes, be->props.limits.maxStorageBufferRange);
    const VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = usage};
    VkResult r = vkCreateBuffer(be->device, &info, NULL, &b->buffer);
    if (r != VK_SUCCESS) {
        b->buffer = VK_NULL_HANDLE;
        return vk_fail(err, r, "vkCreateBuffer");
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(be->device, b->buffer, &req);
    const uint32_t type = where == VK_MEMORY_HOST || (where == VK_MEMORY_MAPPED && !be->mapped) ? be->host_type
                                                                                             : be->device_type;
    const VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    r = vkAllocateMemory(be->device, &alloc, NULL, &b->memory);
    if (r == VK_SUCCESS)
        r = vkBindBufferMemory(be->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && (be->memory_props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        r = vkMapMemory(be->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
        vk_buffer_destroy(be, b);
        return vk_fail(err, r, "allocating device memory");
    }
    b->host.size = bytes;
    be->allocations++;
    return MLFF_OK;
}

void vk_buffer_destroy(mlff_backend *be, vk_buffer *b)
{
    if (b->buffer)
        vkDestroyBuffer(be->device, b->buffer, NULL);
    if (b->memory)
        vkFreeMemory(be->device, b->memory, NULL); /* unmaps too */
    free(b->host.data);
    memset(b, 0, sizeof *b);
}

mlff_status vk_buffer_grow(mlff_backend *be, vk_buffer *b, size_t *capacity, size_t need, size_t entry,
                           vk_memory where, mlff_error *err)
{
    if (need <= *capacity && b->buffer)
        return MLFF_OK;
    if (b->buffer && be->n_pending > 0) {
        mlff_status s = vk_run(be, err); /* dispatches pending may bind the old buffer */
        if (s != MLFF_OK)
            return s;
    }
    return vk_buffer_reserve(be, b, capacity, need, entry, where, err);
}

mlff_status vk_buffer_reserve(mlff_backend *be, vk_buffer *b, size_t *capacity, size_t need, size_t entry,
                              vk_memory where, mlff_error *err)
{
    if (need <= *capacity && b->buffer)
        return MLFF_OK;
    const size_t cap = mlff_grown_capacity_within(*capacity, need, vk_largest_buffer(be) / entry);
    vk_buffer_destroy(be, b);
    be->epoch++; /* recordings may bind the old buffer */
    *capacity = 0;
    mlff_status s = vk_buffer_create(be, b, cap * entry, where, err);
    if (s == MLFF_OK)
        *capacity = cap;
    return s;
}

mlff_status vk_staging_reserve(mlff_backend *be, size_t bytes, mlff_error *err)
{
    if (bytes <= be->staging_size)
        return MLFF_OK;
    const size_t size = mlff_grown_capacity_within(be->staging_size, bytes, vk_largest_buffer(be));
    vk_buffer_destroy(be, &be->staging);
    be->staging_size = 0;
    mlff_status s = vk_buffer_create(be, &be->staging, size, VK_MEMORY_HOST, err);
    if (s == MLFF_OK)
        be->staging_size = size;
    return s;
}

/* The host reads a discrete GPU's mapped memory (resizable BAR) uncached,
 * at tens of MB/s (a 1536-atom box's forces, 18 KB: 0.3 ms on the H200):
 * more than this goes through the (cached) staging buffer, a copy and a
 * wait (tens of microseconds). */
#define UNCACHED_READ_MOST 1024

mlff_status vk_read_later(mlff_backend *be, const vk_buffer *b, size_t offset, void *dst, size_t bytes,
                          mlff_error *err)
{
    if (!bytes)
        return MLFF_OK;
    const int staged = !(b->mapped && (be->mapped_cached || bytes <= UNCACHED_READ_MOST));
    /* The reads queued share one staging buffer: a read that would take it
     * past the largest buffer waits for those before it. */
    if (staged && be->readback_bytes && (be->readback_bytes + 15) / 16 * 16 + bytes > vk_largest_buffer(be)) {
        mlff_status s = vk_run(be, err);
        if (s != MLFF_OK)
            return s;
    }
    if (!mlff_grow((void **)&be->readbacks, &be->cap_readbacks, be->n_readbacks + 1, sizeof *be->readbacks))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory queueing a read");
    vk_readback *r = &be->readbacks[be->n_readbacks++];
    *r = (vk_readback){.src = b, .offset = offset, .bytes = bytes, .dst = dst, .staged = staged};
    if (r->staged) {
        r->staged_at = (be->readback_bytes + 15) / 16 * 16;
        be->readback_bytes = r->staged_at + bytes;
    }
    return MLFF_OK;
}

mlff_status vk_read(mlff_backend *be, const vk_buffer *b, size_t offset, void *dst, size_t bytes, mlff_error *err)
{
    mlff_status s = vk_read_later(be, b, offset, dst, bytes, err);
    return s == MLFF_OK ? vk_run(be, err) : s;
}

/* be->transfer, for copies recorded between these two; the second makes
 * them visible to the host and to later shaders. */
static mlff_status begin_copies(mlff_backend *be, mlff_error *err)
{
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VkResult r = vkBeginCommandBuffer(be->transfer, &begin);
    return r == VK_SUCCESS ? MLFF_OK : vk_fail(err, r, "vkBeginCommandBuffer");
}

static mlff_status end_copies(mlff_backend *be, mlff_error *err)
{
    const VkMemoryBarrier barrier = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
    };
    vkCmdPipelineBarrier(be->transfer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, NULL, 0,
                         NULL);
    VkResult r = vkEndCommandBuffer(be->transfer);
    return r == VK_SUCCESS ? MLFF_OK : vk_fail(err, r, "vkEndCommandBuffer");
}

mlff_status vk_readbacks_record(mlff_backend *be, VkCommandBuffer *out, mlff_error *err)
{
    *out = VK_NULL_HANDLE;
    if (!be->readback_bytes)
        return MLFF_OK;
    mlff_status s = vk_staging_reserve(be, be->readback_bytes, err);
    if (s == MLFF_OK)
        s = begin_copies(be, err);
    if (s != MLFF_OK)
        return s;
    /* The dispatches before (a recording ends with a barrier to transfers)
     * or earlier submissions wrote the sources. */
    for (int k = 0; k < be->n_readbacks; k++) {
        const vk_readback *rb = &be->readbacks[k];
        const VkBufferCopy region = {.srcOffset = rb->offset, .dstOffset = rb->staged_at, .size = rb->bytes};
        if (rb->staged)
            vkCmdCopyBuffer(be->transfer, rb->src->buffer, be->staging.buffer, 1, &region);
    }
    if ((s = end_copies(be, err)) == MLFF_OK)
        *out = be->transfer;
    return s;
}

void vk_readbacks_deliver(mlff_backend *be, int arrived)
{
    for (int k = 0; arrived && k < be->n_readbacks; k++) {
        const vk_readback *rb = &be->readbacks[k];
        const char *from = rb->staged ? (const char *)be->staging.mapped + rb->staged_at
                                      : (const char *)rb->src->mapped + rb->offset;
        memcpy(rb->dst, from, rb->bytes);
    }
    be->n_readbacks = 0;
    be->readback_bytes = 0;
}

/* The host polls the fence for the record's vulkan_fence_spin_us before it
 * blocks: a blocked wait may return tens of microseconds after polling
 * would have, as long as a small molecule's kernels take. */
static VkResult wait_for_fence(mlff_backend *be)
{
    if (be->tuning.vulkan_fence_spin_us > 0) {
        const double until = mlff_seconds() + 1e-6 * (double)be->tuning.vulkan_fence_spin_us;
        VkResult r;
        while ((r = vkGetFenceStatus(be->device, be->fence)) == VK_NOT_READY && mlff_seconds() < until)
            ;
        if (r != VK_NOT_READY)
            return r;
    }
    return vkWaitForFences(be->device, 1, &be->fence, VK_TRUE, UINT64_MAX);
}

mlff_status vk_submit_and_wait(mlff_backend *be, const VkCommandBuffer *cmds, uint32_t n, mlff_error *err)
{
    const VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cmds};
    VkResult r = vkResetFences(be->device, 1, &be->fence);
    if (r == VK_SUCCESS)
        r = vkQueueSubmit(be->queue, 1, &submit, be->fence);
    if (r == VK_SUCCESS)
        r = wait_for_fence(be);
    return r == VK_SUCCESS ? MLFF_OK : vk_fail(err, r, "running commands");
}

mlff_status vk_copy(mlff_backend *be, VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset,
                    size_t bytes, mlff_error *err)
{
    mlff_status s = begin_copies(be, err);
    if (s != MLFF_OK)
        return s;
    const VkBufferCopy region = {.srcOffset = src_offset, .dstOffset = dst_offset, .size = bytes};
    vkCmdCopyBuffer(be->transfer, src, dst, 1, &region);
    s = end_copies(be, err);
    return s == MLFF_OK ? vk_submit_and_wait(be, &be->transfer, 1, err) : s;
}
