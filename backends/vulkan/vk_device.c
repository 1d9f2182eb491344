/*
 * Instance, device choice and logical device. Devices are ranked by type
 * (discrete GPU, integrated, virtual, other), never by enumeration order; CPU
 * implementations (lavapipe) only when Vulkan was asked for by name.
 *
 * MLFF_VULKAN_VALIDATION=1 (mlff_backend_options.vulkan_validation) loads
 * VK_LAYER_KHRONOS_validation and turns every warning or error it reports
 * into a failed call (for the test suite).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT type,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    mlff_backend *be = user;
    if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)) {
        if (be->validation_errors++ == 0)
            snprintf(be->validation_message, sizeof be->validation_message, "%s", data->pMessage);
    }
    return VK_FALSE;
}

static int layer_present(const char *name)
{
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, NULL);
    VkLayerProperties *layers = calloc(n ? n : 1, sizeof *layers);
    int found = 0;
    if (layers && vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
        for (uint32_t k = 0; k < n && !found; k++)
            found = !strcmp(layers[k].layerName, name);
    free(layers);
    return found;
}

static VkResult create_instance(VkInstance *instance, int validation)
{
    const VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "mlff",
        .pEngineName = "mlff",
        .apiVersion = VK_API_VERSION_1_1,
    };
    const char *layers[] = {VALIDATION_LAYER};
    const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    const VkInstanceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
        .enabledLayerCount = validation ? 1 : 0,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = validation ? 1 : 0,
        .ppEnabledExtensionNames = extensions,
    };
    return vkCreateInstance(&info, NULL, instance);
}

/* Lower is better; -1: unusable (no compute queue, or older than 1.1). */
static int rank_of(VkPhysicalDevice d, const VkPhysicalDeviceProperties *p, int allow_cpu, uint32_t *family)
{
    if (p->apiVersion < VK_API_VERSION_1_1)
        return -1;
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &n, NULL);
    VkQueueFamilyProperties q[16];
    if (n > 16)
        n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &n, q);
    int found = -1;
    for (uint32_t k = 0; k < n && found < 0; k++)
        if (q[k].queueFlags & VK_QUEUE_COMPUTE_BIT)
            found = (int)k;
    if (found < 0)
        return -1;
    *family = (uint32_t)found;
    switch (p->deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return allow_cpu ? 4 : -1;
    default:
        return 3;
    }
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "CPU";
    default:
        return "other";
    }
}

/* The usable devices, best first (stable among equals). */
static int ranked_devices(VkInstance instance, int allow_cpu, VkPhysicalDevice *out, uint32_t *families, int most)
{
    uint32_t n = 0;
    if (vkEnumeratePhysicalDevices(instance, &n, NULL) != VK_SUCCESS || n == 0)
        return 0;
    VkPhysicalDevice all[32];
    if (n > 32)
        n = 32;
    vkEnumeratePhysicalDevices(instance, &n, all);
    int ranks[32];
    uint32_t all_families[32];
    for (uint32_t k = 0; k < n; k++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(all[k], &p);
        ranks[k] = rank_of(all[k], &p, allow_cpu, &all_families[k]);
    }
    int count = 0;
    for (int rank = 0; rank <= 4; rank++)
        for (uint32_t k = 0; k < n && count < most; k++)
            if (ranks[k] == rank) {
                families[count] = all_families[k];
                out[count++] = all[k];
            }
    return count;
}

void vk_list_devices(char *buf, size_t size)
{
    VkInstance instance;
    size_t len = strlen(buf);
    if (create_instance(&instance, 0) != VK_SUCCESS) {
        snprintf(buf + len, size - len, "vulkan: no Vulkan driver\n");
        return;
    }
    VkPhysicalDevice devices[32];
    uint32_t families[32];
    const int n = ranked_devices(instance, 1, devices, families, 32);
    for (int k = 0; k < n; k++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devices[k], &p);
        len = strlen(buf);
        snprintf(buf + len, size - len, "vulkan %d: %s (%s, Vulkan %u.%u)\n", k, p.deviceName,
                 type_name(p.deviceType), VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion));
    }
    if (n == 0) {
        len = strlen(buf);
        snprintf(buf + len, size - len, "vulkan: no device with compute\n");
    }
    vkDestroyInstance(instance, NULL);
}

int vk_count_devices(int *gpus)
{
    VkInstance instance;
    *gpus = 0;
    if (create_instance(&instance, 0) != VK_SUCCESS)
        return 0;
    VkPhysicalDevice devices[32];
    uint32_t families[32];
    const int n = ranked_devices(instance, 1, devices, families, 32);
    for (int k = 0; k < n; k++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devices[k], &p);
        *gpus += p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                 p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                 p.deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
    }
    vkDestroyInstance(instance, NULL);
    return n;
}

static mlff_status create_messenger(mlff_backend *be, mlff_error *err)
{
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(be->instance, "vkCreateDebugUtilsMessengerEXT");
    if (!create)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: validation asked for, but VK_EXT_debug_utils is missing");
    const VkDebugUtilsMessengerCreateInfoEXT info = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation,
        .pUserData = be,
    };
    VkResult r = create(be->instance, &info, NULL, &be->messenger);
    return r == VK_SUCCESS ? MLFF_OK : vk_fail(err, r, "vkCreateDebugUtilsMessengerEXT");
}

static int has_device_extension(VkPhysicalDevice d, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(d, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return 0;
    VkExtensionProperties *list = calloc(n, sizeof *list);
    int found = 0;
    if (list && vkEnumerateDeviceExtensionProperties(d, NULL, &n, list) == VK_SUCCESS)
        for (uint32_t k = 0; k < n && !found; k++)
            found = !strcmp(list[k].extensionName, name);
    free(list);
    return found;
}

static void identity_of(const VkPhysicalDeviceProperties *p, char *buf, size_t size)
{
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned k = 0; k < VK_UUID_SIZE; k++)
        snprintf(uuid + 2 * k, 3, "%02x", p->pipelineCacheUUID[k]);
    snprintf(buf, size, "vendor %#x device %#x driver %#x api %#x uuid %s", p->vendorID, p->deviceID,
             p->driverVersion, p->apiVersion, uuid);
}

/* `extensions`: also what device extensions tell (memory budget, subgroup
 * sizes), which an open device with the validation layer leaves out: the
 * layer may object to structures of extensions it did not enable. */
static void fill_info(VkPhysicalDevice d, int index, int extensions, mlff_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->api = "vulkan";
    info->index = index;
    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sizes = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
    VkPhysicalDeviceSubgroupProperties subgroups = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
                                                 .pNext = &subgroups};
    const int size_control = extensions && has_device_extension(d, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    if (size_control)
        subgroups.pNext = &sizes;
    VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
    vkGetPhysicalDeviceProperties2(d, &props2);
    const VkPhysicalDeviceProperties *p = &props2.properties;
    snprintf(info->name, sizeof info->name, "%s", p->deviceName);
    identity_of(p, info->identity, sizeof info->identity);
    snprintf(info->driver, sizeof info->driver, "driver %#x, Vulkan %u.%u.%u", p->driverVersion,
             VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion),
             VK_API_VERSION_PATCH(p->apiVersion));
    info->vendor = p->vendorID;
    info->is_gpu = p->deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    VkPhysicalDeviceFeatures features;
    vkGetPhysicalDeviceFeatures(d, &features);
    info->has_fp64 = features.shaderFloat64 == VK_TRUE;
    uint64_t largest = p->limits.maxStorageBufferRange;
    if (m3.maxMemoryAllocationSize && m3.maxMemoryAllocationSize < largest)
        largest = m3.maxMemoryAllocationSize;
    info->largest_buffer = largest;
    info->subgroup_min = info->subgroup_max = subgroups.subgroupSize;
    if (size_control && sizes.minSubgroupSize) {
        info->subgroup_min = sizes.minSubgroupSize;
        info->subgroup_max = sizes.maxSubgroupSize;
    }
    /* Memory: the device-local heaps, and what VK_EXT_memory_budget says
     * this process may still take of them. */
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    const int has_budget = extensions && has_device_extension(d, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    VkPhysicalDeviceMemoryProperties2 memory = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                                .pNext = has_budget ? &budget : NULL};
    vkGetPhysicalDeviceMemoryProperties2(d, &memory);
    const VkPhysicalDeviceMemoryProperties *m = &memory.memoryProperties;
    size_t len = 0;
    for (uint32_t k = 0; k < m->memoryHeapCount; k++) {
        const int local = (m->memoryHeaps[k].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
        if (local) {
            info->memory += m->memoryHeaps[k].size;
            if (has_budget && budget.heapBudget[k] > budget.heapUsage[k])
                info->memory_free += budget.heapBudget[k] - budget.heapUsage[k];
        }
        if (len < sizeof info->memory_note)
            len += (size_t)snprintf(info->memory_note + len, sizeof info->memory_note - len, "%sheap %u: %.1f GiB%s",
                                    k ? ", " : "", k, (double)m->memoryHeaps[k].size / (1 << 30),
                                    local ? " device-local" : "");
    }
    if (extensions && !has_budget && len < sizeof info->memory_note)
        snprintf(info->memory_note + len, sizeof info->memory_note - len, " (no VK_EXT_memory_budget: free unknown)");
}

int vk_device_info(int index, mlff_device_info *info)
{
    VkInstance instance;
    if (index < 0 || create_instance(&instance, 0) != VK_SUCCESS)
        return 0;
    VkPhysicalDevice devices[32];
    uint32_t families[32];
    const int n = ranked_devices(instance, 1, devices, families, 32);
    if (index < n)
        fill_info(devices[index], index, 1, info);
    vkDestroyInstance(instance, NULL);
    return index < n;
}

void vk_opened_device(const mlff_backend *be, mlff_device_info *info)
{
    fill_info(be->physical, be->index, !be->validation, info);
}

void vk_describe(mlff_backend *be)
{
    static const char *const gemm_names[] = {[MLFF_VULKAN_GEMM_AUTO] = "auto", [MLFF_VULKAN_GEMM_ROWS] = "rows",
                                             [MLFF_VULKAN_GEMM_TILED] = "tiled", [MLFF_VULKAN_GEMM_SUBGROUP] = "subgroup",
                                             [MLFF_VULKAN_GEMM_DIRECT] = "direct"};
    const mlff_tuning *t = &be->tuning;
    const VkPhysicalDeviceProperties *p = &be->props;
    char gemm[96];
    if (t->vulkan_gemm != MLFF_VULKAN_GEMM_AUTO)
        snprintf(gemm, sizeof gemm, "%s gemm", gemm_names[t->vulkan_gemm]);
    else if (t->vulkan_tiled_gemm_from_tiles < 0 && t->vulkan_vjp_tiled_from_tiles < 0)
        snprintf(gemm, sizeof gemm, "%s gemm", be->has_shuffle ? "subgroup" : "direct");
    else
        snprintf(gemm, sizeof gemm, "tiled gemm (from %lld tiles, else rows)",
                 (long long)t->vulkan_tiled_gemm_from_tiles);
    snprintf(be->description, sizeof be->description,
             "vulkan %d: %s (%s, Vulkan %u.%u.%u, driver %#x%s, subgroups of %u%s), %s memory, replay %s, %s",
             be->index, p->deviceName, type_name(p->deviceType), VK_API_VERSION_MAJOR(p->apiVersion),
             VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion), p->driverVersion,
             be->has_fp64 ? ", fp64" : "", be->subgroup_size, be->has_shuffle ? " with shuffles" : "",
             be->mapped ? "mapped" : "staged", t->vulkan_replay ? "on" : "off", gemm);
}

mlff_status vk_open_device(mlff_backend *be, const mlff_backend_options *opts, mlff_error *err)
{
    be->validation = opts->vulkan_validation;
    if (be->validation && !layer_present(VALIDATION_LAYER))
        return mlff_fail(err, MLFF_ERROR_DEVICE,
                         "vulkan: MLFF_VULKAN_VALIDATION is set but %s is not installed (Debian: vulkan-validationlayers)",
                         VALIDATION_LAYER);
    VkResult r = create_instance(&be->instance, be->validation);
    if (r != VK_SUCCESS) {
        be->instance = VK_NULL_HANDLE;
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: no Vulkan driver (vkCreateInstance: %s)", vk_result_name(r));
    }
    mlff_status s = be->validation ? create_messenger(be, err) : MLFF_OK;
    if (s != MLFF_OK)
        return s;
    VkPhysicalDevice devices[32];
    uint32_t families[32];
    const int n = ranked_devices(be->instance, opts->allow_cpu_devices, devices, families, 32);
    const int index = opts->device_index < 0 ? 0 : opts->device_index;
    if (n == 0)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: no usable device (Vulkan 1.1 with a compute queue%s)",
                         opts->allow_cpu_devices ? "" : "; CPU implementations such as lavapipe only with --device vulkan");
    if (index >= n)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: no device %d (%d found)", index, n);
    be->physical = devices[index];
    be->queue_family = families[index];
    VkQueueFamilyProperties queues[16];
    uint32_t n_queues = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(be->physical, &n_queues, queues);
    be->timestamp_bits = be->queue_family < n_queues ? queues[be->queue_family].timestampValidBits : 0;
    vkGetPhysicalDeviceProperties(be->physical, &be->props);
    vkGetPhysicalDeviceMemoryProperties(be->physical, &be->memory_props);
    VkPhysicalDeviceSubgroupProperties subgroups = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
                                                 .pNext = &subgroups};
    VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
    vkGetPhysicalDeviceProperties2(be->physical, &props2);
    be->max_allocation = m3.maxMemoryAllocationSize;
    const VkPhysicalDeviceLimits *limits = &be->props.limits;
    if (limits->maxComputeWorkGroupSize[0] < MLFF_REDUCE_LANES || limits->maxComputeWorkGroupInvocations < MLFF_REDUCE_LANES)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: %s runs at most %u invocations in a work group; mlff needs %d",
                         be->props.deviceName, limits->maxComputeWorkGroupInvocations, MLFF_REDUCE_LANES);
    if (limits->maxPerStageDescriptorStorageBuffers < VK_BINDINGS)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: %s binds at most %u storage buffers to a shader; mlff needs %d",
                         be->props.deviceName, limits->maxPerStageDescriptorStorageBuffers, (int)VK_BINDINGS);
    const VkSubgroupFeatureFlags shuffle = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    be->subgroup_size = subgroups.subgroupSize;
    be->has_shuffle = (subgroups.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                      (subgroups.supportedOperations & shuffle) == shuffle && subgroups.subgroupSize > 0 &&
                      VK_GROUP_1D % subgroups.subgroupSize == 0;
    VkPhysicalDeviceFeatures features;
    vkGetPhysicalDeviceFeatures(be->physical, &features);
    be->device_fp64 = features.shaderFloat64 == VK_TRUE;
    be->is_gpu = be->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;

    const float priority = 1.0f;
    const VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = be->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    /* Enabled where the device has them, whatever the record says (it may
     * turn them off for the kernels only). */
    const VkPhysicalDeviceFeatures enabled = {.shaderFloat64 = be->device_fp64 ? VK_TRUE : VK_FALSE};
    const VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
        .pEnabledFeatures = &enabled,
    };
    if ((r = vkCreateDevice(be->physical, &info, NULL, &be->device)) != VK_SUCCESS) {
        be->device = VK_NULL_HANDLE;
        return vk_fail(err, r, "vkCreateDevice");
    }
    vkGetDeviceQueue(be->device, be->queue_family, 0, &be->queue);
    be->index = index;
    identity_of(&be->props, be->identity, sizeof be->identity);
    /* What the driver says the process could take at the start, for the
     * plans' budget (vk_memory_limits); asked once: not on every call. */
    mlff_device_info opened;
    vk_opened_device(be, &opened);
    be->memory_free_at_open = opened.memory_free;
    return MLFF_OK;
}
