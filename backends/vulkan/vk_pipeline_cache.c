/*
 * The VkPipelineCache on disk (kind "vkpipeline" of the kernel cache, keyed
 * by the device and driver identity). Drivers are not required to survive
 * foreign data, so besides the file's own checks, the data's header must
 * name this device's vendor, device ID and pipelineCacheUUID before the
 * driver sees it; anything else is deleted and the cache starts empty.
 * Saved after every call that created pipelines.
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static mlff_cache_entry_id entry_id(const mlff_backend *be)
{
    const mlff_cache_entry_id id = {"vkpipeline", be->props.deviceName, be->identity, "", "VkPipelineCache"};
    return id;
}

int vk_pipeline_cache_data_matches(const VkPhysicalDeviceProperties *props, const void *data, size_t size)
{
    VkPipelineCacheHeaderVersionOne header;
    if (size < sizeof header)
        return 0;
    memcpy(&header, data, sizeof header);
    return header.headerSize >= sizeof header && header.headerSize <= size &&
           header.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && header.vendorID == props->vendorID &&
           header.deviceID == props->deviceID &&
           memcmp(header.pipelineCacheUUID, props->pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

static VkResult create(mlff_backend *be, const void *data, size_t size)
{
    const VkPipelineCacheCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = size,
        .pInitialData = data,
    };
    return vkCreatePipelineCache(be->device, &info, NULL, &be->pipeline_cache);
}

void vk_pipeline_cache_open(mlff_backend *be)
{
    const mlff_cache_entry_id id = entry_id(be);
    size_t size = 0;
    void *data = mlff_kernel_cache_load(&be->cache, &id, &size);
    if (data && !vk_pipeline_cache_data_matches(&be->props, data, size)) {
        mlff_kernel_cache_reject(&be->cache, &id);
        free(data);
        data = NULL;
    }
    if (data && create(be, data, size) == VK_SUCCESS) {
        free(data);
        return;
    }
    free(data);
    /* Without a pipeline cache pipelines still build (the handle stays null). */
    if (create(be, NULL, 0) != VK_SUCCESS)
        be->pipeline_cache = VK_NULL_HANDLE;
}

void vk_pipeline_cache_save(mlff_backend *be)
{
    if (!be->pipeline_cache_dirty || !be->pipeline_cache || !be->cache.enabled)
        return;
    be->pipeline_cache_dirty = 0;
    size_t size = 0;
    if (vkGetPipelineCacheData(be->device, be->pipeline_cache, &size, NULL) != VK_SUCCESS || size == 0)
        return;
    void *data = malloc(size);
    const mlff_cache_entry_id id = entry_id(be);
    if (data && vkGetPipelineCacheData(be->device, be->pipeline_cache, &size, data) == VK_SUCCESS)
        mlff_kernel_cache_store(&be->cache, &id, data, size);
    free(data);
}
