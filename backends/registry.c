/* The one list of backends (registry.h). */
#include "registry.h"

#include <stddef.h>
#include <string.h>

static const mlff_backend_entry backends[] = {
#ifdef MLFF_HAVE_OPENCL
    {"opencl", MLFF_DEVICE_OPENCL, &mlff_backend_opencl, NULL, 1},
#else
    {"opencl", MLFF_DEVICE_OPENCL, NULL, "built without OpenCL (no OpenCL headers or CLBlast at build time)", 1},
#endif
#ifdef MLFF_HAVE_VULKAN
    {"vulkan", MLFF_DEVICE_VULKAN, &mlff_backend_vulkan, NULL, 1},
#else
    {"vulkan", MLFF_DEVICE_VULKAN, NULL, "built without Vulkan (no Vulkan headers or shaderc at build time)", 1},
#endif
    {"cpu", MLFF_DEVICE_CPU, &mlff_backend_cpu, NULL, 0},
};

const mlff_backend_entry *mlff_backend_list(int *n)
{
    *n = (int)(sizeof backends / sizeof *backends);
    return backends;
}

const mlff_backend_entry *mlff_backend_of_kind(mlff_device_kind kind)
{
    for (size_t k = 0; k < sizeof backends / sizeof *backends; k++)
        if (backends[k].kind == kind)
            return &backends[k];
    return NULL;
}

const mlff_backend_iface *mlff_backend_named(const char *name)
{
    for (size_t k = 0; k < sizeof backends / sizeof *backends; k++)
        if (!strcmp(backends[k].name, name))
            return backends[k].iface;
    return NULL;
}
