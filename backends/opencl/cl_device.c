/* Finding OpenCL devices: every platform, every device, ordered by type
 * (GPUs first, then accelerators, then CPUs such as PoCL), never by
 * platform order, which differs between machines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"
#include "backends/common/lowering.h"

#define MAX_DEVICES 64

typedef struct found_device {
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
} found_device;

static int type_rank(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return 0;
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return 1;
    return 2;
}

static int by_type(const void *a, const void *b)
{
    const found_device *x = a, *y = b;
    return type_rank(x->type) - type_rank(y->type);
}

/* All devices, GPUs first (a stable order within a rank: insertion sort). */
static int find_devices(found_device *out, int cap)
{
    cl_uint n_platforms = 0;
    if (clGetPlatformIDs(0, NULL, &n_platforms) != CL_SUCCESS || n_platforms == 0)
        return 0;
    cl_platform_id platforms[16];
    if (n_platforms > 16)
        n_platforms = 16;
    if (clGetPlatformIDs(n_platforms, platforms, NULL) != CL_SUCCESS)
        return 0;
    int n = 0;
    for (cl_uint p = 0; p < n_platforms; p++) {
        cl_device_id devices[16];
        cl_uint n_devices = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &n_devices) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < n_devices && d < 16 && n < cap; d++) {
            out[n].platform = platforms[p];
            out[n].device = devices[d];
            clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof out[n].type, &out[n].type, NULL);
            n++;
        }
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && by_type(&out[j - 1], &out[j]) > 0; j--) {
            found_device t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static void device_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
        buf[0] = 0;
    buf[size - 1] = 0;
}

static const char *type_word(cl_device_type t)
{
    return (t & CL_DEVICE_TYPE_GPU) ? "gpu" : (t & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator" : "cpu";
}

void cl_list_devices(char *buf, size_t size)
{
    found_device devices[MAX_DEVICES];
    const int n = find_devices(devices, MAX_DEVICES);
    for (int k = 0; k < n; k++) {
        char name[256], platform[256], version[256];
        device_string(devices[k].device, CL_DEVICE_NAME, name, sizeof name);
        device_string(devices[k].device, CL_DEVICE_VERSION, version, sizeof version);
        platform[0] = 0;
        clGetPlatformInfo(devices[k].platform, CL_PLATFORM_NAME, sizeof platform, platform, NULL);
        platform[sizeof platform - 1] = 0;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "opencl %d: %s (%s, %s, %s)\n", k, name, platform, version,
                 type_word(devices[k].type));
    }
}

int cl_count_devices(int *gpus)
{
    found_device devices[MAX_DEVICES];
    const int n = find_devices(devices, MAX_DEVICES);
    *gpus = 0;
    while (*gpus < n && type_rank(devices[*gpus].type) == 0)
        ++*gpus;
    return n;
}

static int has_extension(cl_device_id d, const char *ext)
{
    size_t size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS || size == 0)
        return 0;
    char *list = malloc(size + 1);
    if (!list)
        return 0;
    int found = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, list, NULL) == CL_SUCCESS) {
        list[size] = 0;
        found = strstr(list, ext) != NULL;
    }
    free(list);
    return found;
}

/* Vendor extensions that tell a device's subgroup width and free memory. */
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#define CL_DEVICE_GLOBAL_FREE_MEMORY_AMD 0x4039

static void fill_info(const found_device *f, int index, mlff_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->api = "opencl";
    info->index = index;
    info->is_gpu = (f->type & CL_DEVICE_TYPE_GPU) != 0;
    char vendor[256], version[256], platform[256] = "";
    device_string(f->device, CL_DEVICE_NAME, info->name, sizeof info->name);
    device_string(f->device, CL_DEVICE_VENDOR, vendor, sizeof vendor);
    device_string(f->device, CL_DRIVER_VERSION, info->driver, sizeof info->driver);
    device_string(f->device, CL_DEVICE_VERSION, version, sizeof version);
    clGetPlatformInfo(f->platform, CL_PLATFORM_VERSION, sizeof platform, platform, NULL);
    platform[sizeof platform - 1] = 0;
    snprintf(info->identity, sizeof info->identity, "vendor=%s;driver=%s;device_version=%s;platform=%s", vendor,
             info->driver, version, platform);
    cl_uint vendor_id = 0, units = 0;
    clGetDeviceInfo(f->device, CL_DEVICE_VENDOR_ID, sizeof vendor_id, &vendor_id, NULL);
    clGetDeviceInfo(f->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    info->vendor = vendor_id;
    info->compute_units = units;
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(f->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    info->has_fp64 = fp64 != 0 || has_extension(f->device, "cl_khr_fp64");
    cl_ulong memory = 0, largest = 0;
    clGetDeviceInfo(f->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof memory, &memory, NULL);
    clGetDeviceInfo(f->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof largest, &largest, NULL);
    info->memory = memory;
    info->largest_buffer = largest;
    if (has_extension(f->device, "cl_amd_device_attribute_query")) {
        size_t free_kb[2] = {0, 0}; /* KiB: the total free, the largest free block */
        if (clGetDeviceInfo(f->device, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof free_kb, free_kb, NULL) == CL_SUCCESS)
            info->memory_free = (uint64_t)free_kb[0] * 1024;
        cl_uint width = 0;
        if (clGetDeviceInfo(f->device, CL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof width, &width, NULL) == CL_SUCCESS)
            info->subgroup_min = info->subgroup_max = width;
    }
    if (has_extension(f->device, "cl_nv_device_attribute_query")) {
        cl_uint warp = 0;
        if (clGetDeviceInfo(f->device, CL_DEVICE_WARP_SIZE_NV, sizeof warp, &warp, NULL) == CL_SUCCESS)
            info->subgroup_min = info->subgroup_max = warp;
    }
}

int cl_device_info_at(int index, mlff_device_info *info)
{
    found_device devices[MAX_DEVICES];
    const int n = find_devices(devices, MAX_DEVICES);
    if (index < 0 || index >= n)
        return 0;
    fill_info(&devices[index], index, info);
    return 1;
}

void cl_opened_device(const mlff_backend *be, mlff_device_info *info)
{
    const found_device f = {be->platform, be->device, be->type};
    fill_info(&f, be->index, info);
}

void cl_describe(mlff_backend *be)
{
    static const char *const gemm_names[] = {"auto", "own", "clblast", "tiled"}; /* mlff_opencl_gemm */
    snprintf(be->description, sizeof be->description, "opencl %d: %s (%s, driver %s, %s%s), gemm %s", be->index,
             be->name, be->version, be->driver, type_word(be->type), be->has_fp64 ? ", fp64" : "",
             gemm_names[be->tuning.opencl_gemm]);
}

mlff_status cl_choose_device(mlff_backend *be, const mlff_backend_options *opts, mlff_error *err)
{
    found_device devices[MAX_DEVICES];
    const int n = find_devices(devices, MAX_DEVICES);
    int pick = -1;
    if (opts->device_index >= 0) {
        if (opts->device_index >= n)
            return mlff_fail(err, MLFF_ERROR_DEVICE,
                             "opencl: there is no device %d (%d found; `mlff devices` lists them)",
                             opts->device_index, n);
        pick = opts->device_index;
    } else {
        for (int k = 0; k < n && pick < 0; k++)
            if (opts->allow_cpu_devices || type_rank(devices[k].type) < 2)
                pick = k;
    }
    if (pick < 0)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "opencl: no %sdevice found%s",
                         opts->allow_cpu_devices ? "" : "GPU ",
                         n == 0 ? " (no OpenCL platform answered; is an ICD such as pocl-opencl-icd "
                                  "installed, and POCL_CACHE_DIR writable?)"
                                : "");
    const found_device *f = &devices[pick];
    mlff_device_info info;
    fill_info(f, pick, &info);
    be->platform = f->platform;
    be->device = f->device;
    be->type = f->type;
    be->index = pick;
    be->is_gpu = info.is_gpu;
    be->device_fp64 = info.has_fp64;
    be->max_alloc = info.largest_buffer;
    be->global_memory = info.memory;
    cl_uint align_bits = 0;
    clGetDeviceInfo(f->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    be->base_align = align_bits / 8;
    be->compute_units = info.compute_units ? info.compute_units : 1;
    be->vendor_id = info.vendor;
    size_t most_items = 0, item_sizes[16] = {0}; /* dimensions: 3 at least, as many as the device has */
    clGetDeviceInfo(f->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof most_items, &most_items, NULL);
    clGetDeviceInfo(f->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_sizes, item_sizes, NULL);
    be->mlp_wide_fits = most_items >= MLFF_MLP_WIDE_THREADS && item_sizes[0] >= MLFF_MLP_WIDE_THREADS;
    snprintf(be->name, sizeof be->name, "%s", info.name);
    snprintf(be->identity, sizeof be->identity, "%s", info.identity);
    snprintf(be->driver, sizeof be->driver, "%s", info.driver);
    device_string(f->device, CL_DEVICE_VERSION, be->version, sizeof be->version);
    return MLFF_OK;
}
