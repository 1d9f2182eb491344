/* The Vulkan backend: device, shared layouts, buffers, and running a node
 * list as pipelines generated for it (vk_shader.c), recorded once and
 * replayed (vk_record.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static void vk_close(mlff_backend *be);

/* One set layout for every pipeline: VK_BINDINGS storage buffers, then the
 * dispatch's slot of the table of dispatches, a uniform buffer at a dynamic
 * offset (shaders/vulkan/dispatch.glsl). */
static mlff_status create_layouts(mlff_backend *be, mlff_error *err)
{
    VkDescriptorSetLayoutBinding bindings[VK_LAYOUT_BINDINGS];
    for (uint32_t k = 0; k < VK_LAYOUT_BINDINGS; k++)
        bindings[k] = (VkDescriptorSetLayoutBinding){
            k, k == VK_BIND_DISPATCH ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
            VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    const VkDescriptorSetLayoutCreateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = VK_LAYOUT_BINDINGS,
        .pBindings = bindings,
    };
    VkResult r = vkCreateDescriptorSetLayout(be->device, &set_info, NULL, &be->set_layout);
    if (r != VK_SUCCESS)
        return vk_fail(err, r, "vkCreateDescriptorSetLayout");
    const VkPipelineLayoutCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &be->set_layout,
    };
    if ((r = vkCreatePipelineLayout(be->device, &info, NULL, &be->pipeline_layout)) != VK_SUCCESS)
        return vk_fail(err, r, "vkCreatePipelineLayout");
    const size_t align = (size_t)be->props.limits.minUniformBufferOffsetAlignment;
    be->table_slot = (VK_SLOT_WORDS * sizeof(uint32_t) + align - 1) / align * align;
    return MLFF_OK;
}

static mlff_status create_commands(mlff_backend *be, mlff_error *err)
{
    const VkCommandPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = be->queue_family,
    };
    VkResult r = vkCreateCommandPool(be->device, &pool, NULL, &be->command_pool);
    if (r != VK_SUCCESS)
        return vk_fail(err, r, "vkCreateCommandPool");
    const VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = be->command_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    if ((r = vkAllocateCommandBuffers(be->device, &alloc, &be->transfer)) != VK_SUCCESS)
        return vk_fail(err, r, "vkAllocateCommandBuffers");
    const VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(be->device, &fence, NULL, &be->fence)) != VK_SUCCESS)
        return vk_fail(err, r, "vkCreateFence");
    return MLFF_OK;
}

vk_gemm vk_gemm_for(const mlff_backend *be, const mlff_exec_node *n)
{
    static const vk_gemm forced[] = {[MLFF_VULKAN_GEMM_ROWS] = VK_GEMM_ROWS, [MLFF_VULKAN_GEMM_TILED] = VK_GEMM_TILED,
                                     [MLFF_VULKAN_GEMM_SUBGROUP] = VK_GEMM_SUBGROUP,
                                     [MLFF_VULKAN_GEMM_DIRECT] = VK_GEMM_DIRECT};
    const mlff_tuning *t = &be->tuning;
    if (t->vulkan_gemm != MLFF_VULKAN_GEMM_AUTO)
        return forced[t->vulkan_gemm];
    /* A record without the tiled GEMM (CPU implementations, which run
     * barriers in loops slowly): the shader without them. */
    if (t->vulkan_tiled_gemm_from_tiles < 0 && t->vulkan_vjp_tiled_from_tiles < 0)
        return be->has_shuffle ? VK_GEMM_SUBGROUP : VK_GEMM_DIRECT;
    const int64_t from = n->op == MLFF_OP_LINEAR_VJP ? t->vulkan_vjp_tiled_from_tiles : t->vulkan_tiled_gemm_from_tiles;
    return from >= 0 && mlff_tiled_gemm_tiles(n, MLFF_TILED_GEMM_TS) >= from ? VK_GEMM_TILED : VK_GEMM_ROWS;
}

/* A form the device cannot run, for the context's error. */
static mlff_status check_tuning(const mlff_backend *be, const mlff_tuning *t, mlff_error *err)
{
    if (t->vulkan_gemm == MLFF_VULKAN_GEMM_SUBGROUP && !be->has_shuffle)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "vulkan_gemm=subgroup: the device has no subgroup shuffles in compute shaders "
                         "(or subgroups of %u lanes, which do not divide %d)", be->subgroup_size, VK_GROUP_1D);
    if (t->mlp == MLFF_MLP_WIDE && !be->mlp_wide_fits)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "mlp=wide: the device runs work-groups of %u items at most",
                         be->props.limits.maxComputeWorkGroupInvocations);
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        if (key->fixed && be->allocations && mlff_tuning_get(t, key) != mlff_tuning_get(&be->tuning, key))
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "vulkan: %s cannot change once the device holds "
                             "buffers", key->key);
    }
    return MLFF_OK;
}

static mlff_status vk_set_tuning(mlff_backend *be, const mlff_tuning *t, mlff_error *err)
{
    mlff_status s = check_tuning(be, t, err);
    if (s != MLFF_OK)
        return s;
    if (t != &be->tuning)
        be->tuning = *t;
    be->has_fp64 = mlff_device_fp64(be->device_fp64, t);
    if (!be->allocations)
        vk_memory_use_tuning(be);
    mlff_segments_use_tuning(&be->segments, t);
    be->epoch++; /* the dispatches a node added may differ now */
    vk_describe(be);
    return MLFF_OK;
}

static mlff_status vk_open(const mlff_backend_options *opts, mlff_backend **out, mlff_error *err)
{
    mlff_backend *be = calloc(1, sizeof *be);
    if (!be)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    mlff_kernel_cache_init(&be->cache, opts->cache_dir, opts->log_cache);
    be->pool = opts->pool;
    mlff_profile_init(&be->profile, "Vulkan node lists", opts->profile);
    mlff_status s = vk_open_device(be, opts, err);
    if (s == MLFF_OK) {
        mlff_kernel_cache_for_device(&be->cache, "vulkan", be->props.deviceName, be->identity);
        const VkPhysicalDeviceLimits *l = &be->props.limits;
        be->mlp_wide_fits = l->maxComputeWorkGroupInvocations >= MLFF_MLP_WIDE_THREADS &&
                            l->maxComputeWorkGroupSize[0] >= MLFF_MLP_WIDE_THREADS;
        mlff_tuning_for_device(&be->tuning, "vulkan", be->props.vendorID, be->is_gpu, NULL);
        s = vk_segments_init(be, err);
    }
    if (s == MLFF_OK)
        s = vk_memory_init(be, err);
    if (s == MLFF_OK)
        s = create_layouts(be, err);
    if (s == MLFF_OK)
        s = create_commands(be, err);
    if (s == MLFF_OK)
        s = vk_set_tuning(be, &be->tuning, err);
    if (s != MLFF_OK) {
        vk_close(be);
        return s;
    }
    vk_pipeline_cache_open(be);
    *out = be;
    return MLFF_OK;
}

static void vk_close(mlff_backend *be)
{
    if (!be)
        return;
    mlff_profile_print(&be->profile);
    if (be->device) {
        vkDeviceWaitIdle(be->device);
        vk_pipeline_cache_save(be);
        vk_segments_free(be);
        vk_recordings_free(be);
        vk_cells_free(be);
        vk_buffer_destroy(be, &be->split_sums);
        vk_buffer_destroy(be, &be->mlp_grads);
        vk_kernels_free(be);
        vk_buffer_destroy(be, &be->staging);
        free(be->readbacks);
        if (be->pipeline_cache)
            vkDestroyPipelineCache(be->device, be->pipeline_cache, NULL);
        if (be->fence)
            vkDestroyFence(be->device, be->fence, NULL);
        if (be->command_pool)
            vkDestroyCommandPool(be->device, be->command_pool, NULL);
        if (be->pipeline_layout)
            vkDestroyPipelineLayout(be->device, be->pipeline_layout, NULL);
        if (be->set_layout)
            vkDestroyDescriptorSetLayout(be->device, be->set_layout, NULL);
        vkDestroyDevice(be->device, NULL);
    }
    if (be->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            be->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(be->instance, be->messenger, NULL);
    }
    if (be->instance)
        vkDestroyInstance(be->instance, NULL);
    free(be);
}

static const char *vk_description(const mlff_backend *be)
{
    return be->description;
}

static int vk_supports_dtype(const mlff_backend *be, mlff_dtype dtype)
{
    return mlff_kernels_support_dtype(be->has_fp64, dtype);
}

/* The GEMM shader applies CELU and its derivative on the way out. */
static int vk_fuses(const mlff_backend *be, mlff_op op, mlff_epilogue epilogue, mlff_dtype dtype)
{
    (void)be;
    (void)dtype;
    return mlff_kernels_fuse(op, epilogue);
}

static int vk_is_gpu(const mlff_backend *be)
{
    return be->is_gpu;
}

static mlff_status vk_buffer_alloc(mlff_backend *be, size_t bytes, void **buffer, mlff_error *err)
{
    vk_buffer *b = malloc(sizeof *b);
    if (!b)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    mlff_status s = vk_buffer_create(be, b, bytes, VK_MEMORY_DEVICE, err);
    if (s != MLFF_OK) {
        free(b);
        return s;
    }
    *buffer = b;
    return MLFF_OK;
}

static void vk_buffer_free(mlff_backend *be, void *buffer)
{
    vk_buffer *b = buffer;
    if (!b)
        return;
    mlff_segments_forget(&be->segments, &b->host);
    mlff_error ignored;
    vk_run(be, &ignored); /* dispatches pending may bind it (a failure shows at the next submission) */
    be->n_pending = 0;
    be->epoch++; /* recordings may bind it */
    vk_buffer_destroy(be, b);
    free(b);
}

static mlff_status vk_buffer_write(mlff_backend *be, void *buffer, size_t offset, const void *src, size_t bytes,
                                   mlff_error *err)
{
    vk_buffer *b = buffer;
    /* An index rewritten with the same contents costs neither a transfer nor a sort. */
    if (!mlff_index_shadow_write(&b->host, offset, src, bytes))
        return MLFF_OK;
    mlff_status s = vk_run(be, err); /* dispatches pending come before this write */
    if (s != MLFF_OK)
        return s;
    if (b->mapped) {
        memcpy((char *)b->mapped + offset, src, bytes);
        return MLFF_OK;
    }
    s = vk_staging_reserve(be, bytes, err);
    if (s != MLFF_OK)
        return s;
    memcpy(be->staging.mapped, src, bytes);
    return vk_copy(be, be->staging.buffer, 0, b->buffer, offset, bytes, err);
}

/* Submits what is pending (dispatches, reads) and waits; then the sorts'
 * flag and the validation layer's reports. */
static mlff_status settle(mlff_backend *be, mlff_error *err)
{
    const uint64_t errors_before = be->validation_errors;
    mlff_status s = vk_run(be, err);
    if (s == MLFF_OK)
        s = vk_segments_check(be, err);
    return s == MLFF_OK ? vk_validation_status(be, errors_before, err) : s;
}

static mlff_status vk_buffer_read(mlff_backend *be, const void *buffer, size_t offset, void *dst, size_t bytes,
                                  mlff_error *err)
{
    mlff_status s = vk_read_later(be, buffer, offset, dst, bytes, err);
    return s == MLFF_OK ? settle(be, err) : s;
}

static mlff_status vk_buffer_read_async(mlff_backend *be, const void *buffer, size_t offset, void *dst,
                                        size_t bytes, mlff_error *err)
{
    return vk_read_later(be, buffer, offset, dst, bytes, err);
}

static mlff_status vk_finish(mlff_backend *be, mlff_error *err)
{
    return settle(be, err);
}

/* Leaves the dispatches pending: the reads of the results (or the next
 * write) submit them, in one submission with the reads. */
static mlff_status vk_compute(mlff_backend *be, const mlff_exec_node *nodes, int n_nodes, mlff_error *err)
{
    const uint64_t errors_before = be->validation_errors;
    mlff_profile_begin(&be->profile);
    const double start = be->profile.enabled ? mlff_seconds() : 0;
    mlff_status s = mlff_segments_prepare(&be->segments, nodes, n_nodes, be->pool, err);
    for (int k = 0; k < n_nodes && s == MLFF_OK; k++) {
        const mlff_exec_node *n = &nodes[k];
        const mlff_segments *seg[MLFF_NODE_SEGMENTS];
        /* A host sort by an index that a pending dispatch writes reads it
         * back first, and vk_read runs what is pending. */
        s = mlff_segments_for(&be->segments, n, seg, err);
        if (s == MLFF_OK && !mlff_index_shadow_written_by(&((vk_buffer *)n->output.buffer)->host, n))
            s = vk_add_node_at(be, k, n, seg, err);
    }
    vk_pipeline_cache_save(be);
    if (be->profile.enabled)
        mlff_profile_add(&be->profile, VK_ROW_NODES, "host: node list built", mlff_seconds() - start);
    if (s != MLFF_OK)
        be->n_pending = 0; /* for the next call */
    return s == MLFF_OK ? vk_validation_status(be, errors_before, err) : s;
}

mlff_status vk_validation_status(const mlff_backend *be, uint64_t errors_before, mlff_error *err)
{
    if (be->validation_errors == errors_before)
        return MLFF_OK;
    return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: the validation layer reported %llu problem(s); first: %s",
                     (unsigned long long)(be->validation_errors - errors_before), be->validation_message);
}

static void vk_get_stats(const mlff_backend *be, mlff_backend_stats *stats)
{
    stats->kernel_builds = be->builds;
    stats->cache_hits = be->cache.hits;
    stats->cache_misses = be->cache.misses;
    stats->cache_rejects = be->cache.rejects;
    stats->device_allocations = be->allocations;
    stats->segment_sorts = be->segments.sorts;
    stats->segments_in_order = be->segments.in_order;
    stats->recordings = be->recordings_made;
}

const mlff_backend_iface mlff_backend_vulkan = {
    .name = "vulkan",
    .list_devices = vk_list_devices,
    .count_devices = vk_count_devices,
    .device_info = vk_device_info,
    .open = vk_open,
    .opened_device = vk_opened_device,
    .set_tuning = vk_set_tuning,
    .close = vk_close,
    .describe = vk_description,
    .supports_dtype = vk_supports_dtype,
    .fuses = vk_fuses,
    .is_gpu = vk_is_gpu,
    .second_order = 1,
    .memory_limits = vk_memory_limits,
    .buffer_alloc = vk_buffer_alloc,
    .buffer_free = vk_buffer_free,
    .buffer_write = vk_buffer_write,
    .buffer_read = vk_buffer_read,
    .buffer_read_async = vk_buffer_read_async,
    .finish = vk_finish,
    .compute = vk_compute,
    .cell_kernel = vk_cell_kernel,
    .get_stats = vk_get_stats,
};
