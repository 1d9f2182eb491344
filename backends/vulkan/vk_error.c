/* Vulkan results as messages; out-of-memory results become a status. */
#include "vk_internal.h"

const char *vk_result_name(VkResult r)
{
    switch (r) {
#define NAME(x) \
    case x:     \
        return #x;
        NAME(VK_SUCCESS)
        NAME(VK_NOT_READY)
        NAME(VK_TIMEOUT)
        NAME(VK_INCOMPLETE)
        NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
        NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        NAME(VK_ERROR_INITIALIZATION_FAILED)
        NAME(VK_ERROR_DEVICE_LOST)
        NAME(VK_ERROR_MEMORY_MAP_FAILED)
        NAME(VK_ERROR_LAYER_NOT_PRESENT)
        NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
        NAME(VK_ERROR_FEATURE_NOT_PRESENT)
        NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
        NAME(VK_ERROR_TOO_MANY_OBJECTS)
        NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
        NAME(VK_ERROR_FRAGMENTED_POOL)
        NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
        NAME(VK_ERROR_INVALID_SHADER_NV)
#undef NAME
    default:
        return "VK_ERROR_UNKNOWN";
    }
}

mlff_status vk_fail(mlff_error *err, VkResult r, const char *what)
{
    const int oom = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY;
    return mlff_fail(err, oom ? MLFF_ERROR_OUT_OF_MEMORY : MLFF_ERROR_DEVICE, "vulkan: %s failed: %s (%d)", what,
                     vk_result_name(r), (int)r);
}
