/* The CPU backend: host buffers, a pool of threads, and every op as a plain C kernel.
 * It is the numerical reference that the other backends are tested against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "backends/common/memory_limits.h"

static int cpu_count_devices(int *gpus)
{
    *gpus = 0;
    return 1;
}

/* The processor's name (Linux's /proc/cpuinfo), or "cpu". */
static void processor_name(char *name, size_t size)
{
    snprintf(name, size, "cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon)
            continue;
        snprintf(name, size, "%s", colon + 1 + (colon[1] == ' '));
        name[strcspn(name, "\n")] = 0;
        break;
    }
    if (f)
        fclose(f);
}

/* Linux's estimate of the memory available without swapping, or 0. */
static uint64_t available_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

static int cpu_device_info(int index, mlff_device_info *info)
{
    if (index != 0)
        return 0;
    memset(info, 0, sizeof *info);
    info->api = "cpu";
    processor_name(info->name, sizeof info->name);
    /* Its thresholds follow the cores there are, not only the processor's kind. */
    snprintf(info->identity, sizeof info->identity, "cpus=%d", mlff_available_threads());
    snprintf(info->driver, sizeof info->driver, "mlff's own kernels, %d threads", mlff_available_threads());
    info->has_fp64 = 1;
    info->memory = mlff_host_memory();
    info->memory_free = available_memory();
    info->largest_buffer = MLFF_MAX_BUFFER_BYTES;
    info->compute_units = (uint32_t)mlff_available_threads();
    return 1;
}

static void cpu_opened_device(const mlff_backend *be, mlff_device_info *info)
{
    (void)be;
    cpu_device_info(0, info);
}

static void cpu_list_devices(char *buf, size_t size)
{
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "cpu 0: %d threads\n", mlff_available_threads());
}

static mlff_status cpu_open(const mlff_backend_options *opts, mlff_backend **out, mlff_error *err)
{
    if (opts->device_index > 0)
        return mlff_fail(err, MLFF_ERROR_DEVICE, "cpu: there is only device 0");
    mlff_backend *be = calloc(1, sizeof *be);
    if (!be)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory");
    be->pool = opts->pool;
    if (!be->pool) {
        const int n = opts->n_threads > 0 ? opts->n_threads : mlff_available_threads();
        if (!(be->pool = mlff_thread_pool_create(n))) {
            free(be);
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: cannot start %d threads", n);
        }
        be->owns_pool = 1;
    }
    be->n_threads = mlff_thread_pool_size(be->pool);
    memcpy(be->kernels, cpu_plain_kernels, sizeof be->kernels);
    be->kernels[0][MLFF_OP_LINEAR] = cpu_linear_f32;
    be->kernels[0][MLFF_OP_LINEAR_VJP] = cpu_linear_vjp_f32;
    be->kernels[0][MLFF_OP_CELU_MLP] = cpu_celu_mlp_f32;
    be->kernels[0][MLFF_OP_CELU_MLP_VJP] = cpu_celu_mlp_vjp_f32;
    be->kernels[0][MLFF_OP_CELU] = cpu_celu_f32;
    be->kernels[0][MLFF_OP_CELU_VJP] = cpu_celu_vjp_f32;
    be->kernels[0][MLFF_OP_ANI_RADIAL] = cpu_ani_radial_f32;
    be->kernels[0][MLFF_OP_ANI_RADIAL_VJP] = cpu_ani_radial_vjp_f32;
    be->kernels[0][MLFF_OP_ANI_ANGULAR] = cpu_ani_angular_f32;
    be->kernels[0][MLFF_OP_ANI_ANGULAR_VJP] = cpu_ani_angular_vjp_f32;
    snprintf(be->description, sizeof be->description, "cpu: %d thread%s", be->n_threads,
             be->n_threads == 1 ? "" : "s");
    *out = be;
    return MLFF_OK;
}

static void cpu_close(mlff_backend *be)
{
    if (!be)
        return;
    if (be->owns_pool)
        mlff_thread_pool_destroy(be->pool);
    cpu_arena_free(&be->arena);
    free(be);
}

static const char *cpu_describe(const mlff_backend *be)
{
    return be->description;
}

static int cpu_supports_dtype(const mlff_backend *be, mlff_dtype dtype)
{
    (void)be;
    return dtype == MLFF_DTYPE_F32 || dtype == MLFF_DTYPE_F64 || dtype == MLFF_DTYPE_I32;
}

/* The float32 GEMM folds CELU and its derivative in (CELU_MLP_VJP's last GEMM too); the plain loops fold nothing. */
static int cpu_fuses(const mlff_backend *be, mlff_op op, mlff_epilogue epilogue, mlff_dtype dtype)
{
    (void)be;
    return dtype == MLFF_DTYPE_F32 &&
           ((op == MLFF_OP_LINEAR && epilogue == MLFF_EPILOGUE_CELU) ||
            ((op == MLFF_OP_LINEAR_VJP || op == MLFF_OP_CELU_MLP_VJP) && epilogue == MLFF_EPILOGUE_CELU_GRAD));
}

static int cpu_is_gpu(const mlff_backend *be)
{
    (void)be;
    return 0;
}

static void cpu_memory_limits(const mlff_backend *be, mlff_memory_limits *limits)
{
    (void)be;
    mlff_memory_limits_for(0, mlff_host_memory(), 0, 0, limits);
}

static mlff_status cpu_buffer_alloc(mlff_backend *be, size_t bytes, void **buffer, mlff_error *err)
{
    (void)be;
    /* Whole cache lines (aligned_alloc wants a multiple of the alignment), after the header. */
    size_t size = CPU_BUFFER_HEADER + ((bytes + 63) & ~(size_t)63);
    char *block = aligned_alloc(64, size);
    if (!block)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory (%zu bytes)", bytes);
    memset(block, 0, CPU_BUFFER_HEADER);
    *buffer = block + CPU_BUFFER_HEADER;
    return MLFF_OK;
}

static void cpu_buffer_free(mlff_backend *be, void *buffer)
{
    (void)be;
    if (!buffer)
        return;
    cpu_buffer_drop_packs(cpu_buffer_header_of(buffer));
    free((char *)buffer - CPU_BUFFER_HEADER);
}

static mlff_status cpu_buffer_write(mlff_backend *be, void *buffer, size_t offset, const void *src,
                                    size_t bytes, mlff_error *err)
{
    (void)be;
    (void)err;
    cpu_buffer_header_of(buffer)->generation++;
    memcpy((char *)buffer + offset, src, bytes);
    return MLFF_OK;
}

static mlff_status cpu_buffer_read(mlff_backend *be, const void *buffer, size_t offset, void *dst,
                                   size_t bytes, mlff_error *err)
{
    (void)be;
    (void)err;
    memcpy(dst, (const char *)buffer + offset, bytes);
    return MLFF_OK;
}

static mlff_status cpu_compute(mlff_backend *be, const mlff_exec_node *nodes, int n_nodes,
                               mlff_error *err)
{
    for (int k = 0; k < n_nodes; k++) {
        const mlff_exec_node *n = &nodes[k];
        const int type = n->output.dtype == MLFF_DTYPE_F64 ? 1 : 0;
        /* The faster float32 kernels know one direction; T-blocked tangents
         * (core/ops.h) take the plain loops. */
        cpu_kernel_fn kernel = mlff_op_tangents(n->op, &n->attrs) > 1 ? cpu_plain_kernels[type][n->op]
                                                                      : be->kernels[type][n->op];
        if (!kernel)
            return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "cpu: op %s is not implemented",
                             mlff_op_get(n->op)->name);
        cpu_arena_reset(&be->arena);
        mlff_status s = kernel(be, n, err);
        if (s != MLFF_OK)
            return s;
    }
    return MLFF_OK;
}

const mlff_backend_iface mlff_backend_cpu = {
    .name = "cpu",
    .list_devices = cpu_list_devices,
    .count_devices = cpu_count_devices,
    .device_info = cpu_device_info,
    .open = cpu_open,
    .opened_device = cpu_opened_device,
    .close = cpu_close,
    .describe = cpu_describe,
    .supports_dtype = cpu_supports_dtype,
    .fuses = cpu_fuses,
    .is_gpu = cpu_is_gpu,
    .second_order = 1,
    .memory_limits = cpu_memory_limits,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_write = cpu_buffer_write,
    .buffer_read = cpu_buffer_read,
    .compute = cpu_compute,
};
