/* The OpenCL backend: device choice, buffers, and running a node list as
 * kernels generated for it (cl_program.c) on one in-order queue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"
#include "backends/common/lowering.h"
#include "backends/common/memory_limits.h"

static void cl_close(mlff_backend *be);

/* A form the device cannot run, for the context's error. */
static mlff_status check_tuning(const mlff_backend *be, const mlff_tuning *t, mlff_error *err)
{
    if (t->mlp == MLFF_MLP_LAYERS)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "mlp=layers: OpenCL runs CELU_MLP fused (measured faster there, "
                                                      "bench/RESULTS.md)");
    if (t->mlp == MLFF_MLP_WIDE && !be->mlp_wide_fits)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "mlp=wide: the device runs work-groups of fewer than %d items",
                         MLFF_MLP_WIDE_THREADS);
    return MLFF_OK;
}

static mlff_status cl_set_tuning(mlff_backend *be, const mlff_tuning *t, mlff_error *err)
{
    mlff_status s = check_tuning(be, t, err);
    for (int k = 0; s == MLFF_OK && k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        if (key->fixed && be->allocations && mlff_tuning_get(t, key) != mlff_tuning_get(&be->tuning, key))
            s = mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "opencl: %s cannot change once the device holds buffers",
                          key->key);
    }
    if (s != MLFF_OK)
        return s;
    if (t != &be->tuning)
        be->tuning = *t;
    be->has_fp64 = mlff_device_fp64(be->device_fp64, t);
    be->program_form = cl_program_form(be);
    if (!be->allocations)
        cl_arena_init(be);
    mlff_segments_use_tuning(&be->segments, t);
    cl_describe(be);
    return MLFF_OK;
}

static mlff_status cl_open(const mlff_backend_options *opts, mlff_backend **out, mlff_error *err)
{
    mlff_backend *be = calloc(1, sizeof *be);
    if (!be)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    mlff_profile_init(&be->profile, "OpenCL plan executions", opts->profile);
    mlff_status s = cl_choose_device(be, opts, err);
    cl_int rc = CL_SUCCESS;
    if (s == MLFF_OK) {
        be->context = clCreateContext(NULL, 1, &be->device, NULL, NULL, &rc);
        if (rc == CL_SUCCESS)
            be->queue = clCreateCommandQueue(be->context, be->device,
                                             be->profile.events ? CL_QUEUE_PROFILING_ENABLE : 0, &rc);
        if (rc != CL_SUCCESS)
            s = cl_fail(err, rc, "opening the device");
    }
    if (s != MLFF_OK) {
        cl_close(be);
        return s;
    }
    mlff_kernel_cache_init(&be->cache, opts->cache_dir, opts->log_cache);
    mlff_kernel_cache_for_device(&be->cache, "opencl", be->name, be->identity);
    mlff_tuning_for_device(&be->tuning, "opencl", be->vendor_id, be->is_gpu, NULL);
    if ((s = cl_segments_init(be, err)) != MLFF_OK || (s = cl_set_tuning(be, &be->tuning, err)) != MLFF_OK) {
        cl_close(be);
        return s;
    }
    be->pool = opts->pool;
    *out = be;
    return MLFF_OK;
}

static void cl_close(mlff_backend *be)
{
    if (!be)
        return;
    if (be->queue)
        clFinish(be->queue);
    cl_profile_free(be);
    cl_prepared_free_all(be);
    cl_cells_free(be);
    cl_gemm_free(be);
    cl_segments_free(be);
    cl_pinned_free(be);
    cl_arena_free(be);
    if (be->queue)
        clReleaseCommandQueue(be->queue);
    if (be->context)
        clReleaseContext(be->context);
    free(be->scratch);
    free(be);
}

static const char *cl_description(const mlff_backend *be)
{
    return be->description;
}

static int cl_supports_dtype(const mlff_backend *be, mlff_dtype dtype)
{
    return mlff_kernels_support_dtype(be->has_fp64, dtype);
}

/* Both GEMM paths apply CELU and its derivative on the way out. */
static int cl_fuses(const mlff_backend *be, mlff_op op, mlff_epilogue epilogue, mlff_dtype dtype)
{
    (void)be;
    (void)dtype;
    return mlff_kernels_fuse(op, epilogue);
}

static int cl_is_gpu(const mlff_backend *be)
{
    return be->is_gpu;
}

static void cl_memory_limits(const mlff_backend *be, mlff_memory_limits *limits)
{
    /* OpenCL does not say what is free. */
    mlff_memory_limits_for(be->is_gpu, be->global_memory, 0, be->max_alloc, limits);
}

static mlff_status cl_buffer_alloc(mlff_backend *be, size_t bytes, void **buffer, mlff_error *err)
{
    cl_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    mlff_status s = cl_region_alloc(be, &b->region, bytes, "allocating a buffer", err);
    if (s != MLFF_OK) {
        free(b);
        return s;
    }
    b->host.size = bytes;
    *buffer = b;
    return MLFF_OK;
}

static void cl_buffer_free(mlff_backend *be, void *buffer)
{
    cl_buffer *b = buffer;
    if (!b)
        return;
    mlff_segments_forget(&be->segments, &b->host);
    cl_region_free(be, &b->region);
    cl_region_free(be, &b->transposed);
    free(b->host.data);
    free(b);
}

/* Through pinned memory (cl_pinned.c): it does not wait for the device. */
static mlff_status cl_buffer_write(mlff_backend *be, void *buffer, size_t offset, const void *src,
                                   size_t bytes, mlff_error *err)
{
    cl_buffer *b = buffer;
    /* An index rewritten with the same contents (a neighbour list kept
     * through the skin) costs neither a transfer nor a new sort. */
    if (!mlff_index_shadow_write(&b->host, offset, src, bytes))
        return MLFF_OK;
    return cl_pinned_write(be, cl_region_mem(be, &b->region), cl_region_offset(&b->region) + offset, src, bytes,
                           err);
}

/* Straight from src, waiting: through the pinned buffer, grown for every
 * weight in turn, the allocations cost a start 6-7 ms (bench/RESULTS.md). */
static mlff_status cl_buffer_upload(mlff_backend *be, void *buffer, const void *src, size_t bytes, mlff_error *err)
{
    cl_buffer *b = buffer;
    mlff_index_shadow_write(&b->host, 0, src, bytes);
    cl_int rc = clEnqueueWriteBuffer(be->queue, cl_region_mem(be, &b->region), CL_TRUE,
                                     cl_region_offset(&b->region), bytes, src, 0, NULL, NULL);
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "writing the parameters");
}

/* After a wait: the reads under way have arrived, and the sorts' flag with them. */
static mlff_status settle(mlff_backend *be, mlff_error *err)
{
    cl_pinned_settle(be);
    return cl_segments_check(be, err);
}

static mlff_status cl_buffer_read(mlff_backend *be, const void *buffer, size_t offset, void *dst,
                                  size_t bytes, mlff_error *err)
{
    const cl_buffer *b = buffer;
    /* In an in-order queue it waits for every command before it. */
    cl_int rc = clEnqueueReadBuffer(be->queue, cl_region_mem(be, &b->region), CL_TRUE,
                                    cl_region_offset(&b->region) + offset, bytes, dst, 0, NULL, NULL);
    return rc == CL_SUCCESS ? settle(be, err) : cl_fail(err, rc, "reading a buffer");
}

static mlff_status cl_buffer_read_async(mlff_backend *be, const void *buffer, size_t offset, void *dst,
                                        size_t bytes, mlff_error *err)
{
    const cl_region *r = &((const cl_buffer *)buffer)->region;
    return cl_pinned_read(be, cl_region_mem(be, r), cl_region_offset(r) + offset, dst, bytes, err);
}

static mlff_status cl_finish(mlff_backend *be, mlff_error *err)
{
    cl_int rc = clFinish(be->queue);
    return rc == CL_SUCCESS ? settle(be, err) : cl_fail(err, rc, "running the kernels");
}

static mlff_status cl_compute(mlff_backend *be, const mlff_exec_node *nodes, int n_nodes, mlff_error *err)
{
    const uint64_t sorts_before = be->segments.sorts;
    mlff_profile_begin(&be->profile);
    const double sort_start = be->profile.enabled ? mlff_seconds() : 0;
    mlff_status s = mlff_segments_prepare(&be->segments, nodes, n_nodes, be->pool, err);
    if (be->profile.enabled)
        mlff_profile_add(&be->profile, CL_ROW_SORTS, "host: segment sorts (threads)", mlff_seconds() - sort_start);
    cl_node_programs programs = {nodes, n_nodes, be->arena.most_one > 0, {NULL, NULL}};
    if (s == MLFF_OK)
        s = cl_prepare(be, nodes, n_nodes, programs.arena, &programs.form[programs.arena], err);
    for (int k = 0; s == MLFF_OK && k < n_nodes; k++)
        s = cl_enqueue_node(be, &programs, k, err);
    if (s == MLFF_OK)
        s = cl_segments_read_flag(be, sorts_before, err);
    if (!be->profile.enabled) /* the reads of the results wait (cl_finish) */
        return s;
    /* Profiling waits here, for the kernels' events and the host's share. */
    const double wait_start = mlff_seconds();
    mlff_status waited = cl_finish(be, err);
    if (!be->profile.events) { /* MLFF_LOG=phases: the host's side alone */
        mlff_profile_add(&be->profile, CL_ROW_ENQUEUE, "host: kernels enqueued", wait_start - sort_start);
        mlff_profile_add(&be->profile, CL_ROW_WAIT, "host: waits for the device", mlff_seconds() - wait_start);
    }
    cl_profile_collect(be);
    return s == MLFF_OK ? waited : s;
}

static void cl_get_stats(const mlff_backend *be, mlff_backend_stats *stats)
{
    stats->kernel_builds = be->builds;
    stats->cache_hits = be->cache.hits;
    stats->cache_misses = be->cache.misses;
    stats->cache_rejects = be->cache.rejects;
    stats->device_allocations = be->allocations;
    stats->segment_sorts = be->segments.sorts;
    stats->segments_in_order = be->segments.in_order;
}

const mlff_backend_iface mlff_backend_opencl = {
    .name = "opencl",
    .list_devices = cl_list_devices,
    .count_devices = cl_count_devices,
    .device_info = cl_device_info_at,
    .open = cl_open,
    .opened_device = cl_opened_device,
    .set_tuning = cl_set_tuning,
    .close = cl_close,
    .describe = cl_description,
    .supports_dtype = cl_supports_dtype,
    .fuses = cl_fuses,
    .is_gpu = cl_is_gpu,
    .launches_cost = 1,
    .second_order = 1,
    .memory_limits = cl_memory_limits,
    .buffer_alloc = cl_buffer_alloc,
    .buffer_free = cl_buffer_free,
    .buffer_write = cl_buffer_write,
    .buffer_upload = cl_buffer_upload,
    .buffer_read = cl_buffer_read,
    .buffer_read_async = cl_buffer_read_async,
    .finish = cl_finish,
    .compute = cl_compute,
    .cell_kernel = cl_cell_kernel,
    .get_stats = cl_get_stats,
};
