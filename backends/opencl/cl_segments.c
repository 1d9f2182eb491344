/* The OpenCL side of the segments (backends/common/segments.h): host copies
 * of index buffers, the device copies of each sorted index, and the device
 * sort (shaders/segment_sort.kernel, built at the first sort). */
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"

static mlff_status read_shadow(void *backend, mlff_index_shadow *b, mlff_error *err)
{
    mlff_backend *be = backend;
    const cl_buffer *buffer = (const cl_buffer *)b;
    if (!(b->data = malloc(b->size)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    const double start = be->profile.enabled ? mlff_seconds() : 0;
    cl_int rc = clEnqueueReadBuffer(be->queue, cl_region_mem(be, &buffer->region), CL_TRUE,
                                    cl_region_offset(&buffer->region), b->size, b->data, 0, NULL, NULL);
    if (be->profile.enabled)
        mlff_profile_add(&be->profile, CL_ROW_READ_BACK, "host: index read-backs", mlff_seconds() - start);
    if (rc != CL_SUCCESS) {
        free(b->data);
        b->data = NULL;
        return cl_fail(err, rc, "reading an index buffer");
    }
    b->known = b->size;
    return MLFF_OK;
}

static mlff_status grow_device(mlff_backend *be, cl_region *r, size_t entries, mlff_error *err)
{
    return cl_region_reserve(be, r, entries * sizeof(int32_t), "allocating segment buffers", err);
}

/* g's device arrays for its sizes. */
static mlff_status reserve_slot(mlff_backend *be, mlff_segments *g, mlff_error *err)
{
    cl_segment_buffers *d = g->device;
    if (!d && !(d = g->device = calloc(1, sizeof *d)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    const size_t n_keys = (size_t)g->n_keys, n = (size_t)g->n_entries;
    mlff_status st = grow_device(be, &d->offsets, n_keys + 1, err);
    return st == MLFF_OK ? grow_device(be, &d->items, n ? n : 1, err) : st;
}

static mlff_status upload(void *backend, mlff_segments *g, mlff_error *err)
{
    mlff_backend *be = backend;
    mlff_status st = reserve_slot(be, g, err);
    if (st != MLFF_OK)
        return st;
    const cl_segment_buffers *d = g->device;
    const size_t n_keys = (size_t)g->n_keys, n = (size_t)g->n_entries;
    /* Not blocking: the host arrays stay untouched until the next call, which
     * comes after this one finished. */
    cl_int rc = clEnqueueWriteBuffer(be->queue, cl_region_mem(be, &d->offsets), CL_FALSE,
                                     cl_region_offset(&d->offsets), (n_keys + 1) * sizeof(int32_t), g->offsets, 0,
                                     NULL, NULL);
    if (rc == CL_SUCCESS && n)
        rc = clEnqueueWriteBuffer(be->queue, cl_region_mem(be, &d->items), CL_FALSE, cl_region_offset(&d->items),
                                  n * sizeof(int32_t), g->items, 0, NULL, NULL);
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "uploading segments");
}

static void release(void *backend, mlff_segments *g)
{
    cl_segment_buffers *d = g->device;
    if (!d)
        return;
    cl_region_free(backend, &d->offsets);
    cl_region_free(backend, &d->items);
    free(d);
    g->device = NULL;
}

static const char *const sort_names[MLFF_SORT_KERNELS] = {
    "sort_keys", "sort_count", "sort_tile_sums", "sort_scan_tiles", "sort_scan", "sort_scatter", "sort_offsets",
    "sort_in_order", "sort_pairs", "sort_pair_entries"};

static mlff_status sort_reserve(void *backend, mlff_segments *g, const size_t entries[MLFF_SORT_SCRATCH],
                                mlff_error *err)
{
    mlff_backend *be = backend;
    cl_sort_scratch *x = &be->sort;
    mlff_status s = MLFF_OK;
    if (!x->flag.bytes) {
        s = cl_region_alloc(be, &x->flag, sizeof(cl_int), "allocating the sort flag", err);
        const cl_int zero = 0;
        cl_int rc = s != MLFF_OK ? CL_SUCCESS
                                 : clEnqueueWriteBuffer(be->queue, cl_region_mem(be, &x->flag), CL_TRUE,
                                                        cl_region_offset(&x->flag), sizeof zero, &zero, 0, NULL, NULL);
        if (rc != CL_SUCCESS)
            s = cl_fail(err, rc, "clearing the sort flag");
    }
    for (int k = 0; k < MLFF_SORT_SCRATCH && s == MLFF_OK; k++)
        s = grow_device(be, &x->scratch[k], entries[k] ? entries[k] : 1, err);
    return s == MLFF_OK ? reserve_slot(be, g, err) : s;
}

static mlff_status sort_launch(void *backend, mlff_segments *g, const mlff_sort_launch *l, mlff_error *err)
{
    mlff_backend *be = backend;
    cl_sort_scratch *x = &be->sort;
    cl_segment_buffers *d = g->device;
    cl_region *const regions[] = {&((cl_buffer *)l->keys)->region,
                                  &((cl_buffer *)l->map)->region,
                                  &x->scratch[MLFF_SCRATCH_KEYS + l->from],
                                  &x->scratch[MLFF_SCRATCH_VALUES + l->from],
                                  &x->scratch[MLFF_SCRATCH_KEYS + 1 - l->from],
                                  l->to_items ? &d->items : &x->scratch[MLFF_SCRATCH_VALUES + 1 - l->from],
                                  &x->scratch[MLFF_SCRATCH_COUNTS],
                                  &x->scratch[MLFF_SCRATCH_TILES],
                                  &d->offsets,
                                  &x->flag};
    const int n_regions = sizeof regions / sizeof *regions;
    const int arena = cl_regions_in_arena(be, regions, n_regions);
    mlff_status s = cl_build_kernels(be, "segment_sort", arena, &x->program[arena], sort_names, x->kernels[arena],
                                     MLFF_SORT_KERNELS, err);
    cl_kernel k = x->kernels[arena][l->kernel];
    if (s != MLFF_OK || (s = cl_set_region_args(be, k, arena, regions, n_regions, err)) != MLFF_OK)
        return s;
    cl_int rc = CL_SUCCESS;
    for (int a = 0; a < (int)(sizeof l->args / sizeof *l->args) && rc == CL_SUCCESS; a++)
        rc = clSetKernelArg(k, (cl_uint)(arena + n_regions + a), sizeof(cl_int), &l->args[a]);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "clSetKernelArg (segment sort)");
    const size_t local = MLFF_SORT_GROUP, global = ((size_t)l->items + local - 1) / local * local;
    rc = clEnqueueNDRangeKernel(be->queue, k, 1, NULL, &global, &local, 0, NULL,
                                cl_profile_event(be, CL_ROW_DEVICE_SORTS));
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "running the segment sort");
}

mlff_status cl_segments_read_flag(mlff_backend *be, uint64_t sorts_before, mlff_error *err)
{
    cl_sort_scratch *x = &be->sort;
    if (!be->segments.on_device || be->segments.sorts == sorts_before)
        return MLFF_OK;
    mlff_status s = cl_pinned_read(be, cl_region_mem(be, &x->flag), cl_region_offset(&x->flag), &x->flag_read,
                                        sizeof x->flag_read, err);
    x->flag_pending = s == MLFF_OK;
    return s;
}

mlff_status cl_segments_check(mlff_backend *be, mlff_error *err)
{
    cl_sort_scratch *x = &be->sort;
    if (!x->flag_pending)
        return MLFF_OK;
    x->flag_pending = 0;
    if (x->flag_read == 0)
        return MLFF_OK;
    const cl_int zero = 0;
    clEnqueueWriteBuffer(be->queue, cl_region_mem(be, &x->flag), CL_TRUE, cl_region_offset(&x->flag), sizeof zero,
                         &zero, 0, NULL, NULL);
    return mlff_fail(err, MLFF_ERROR_INTERNAL, "opencl: entry %d of an index is out of range", x->flag_read - 1);
}

void cl_segments_free(mlff_backend *be)
{
    mlff_segments_free_all(&be->segments);
    cl_sort_scratch *x = &be->sort;
    for (int form = 0; form < 2; form++)
        cl_release_kernels(&x->program[form], x->kernels[form], MLFF_SORT_KERNELS);
    for (int k = 0; k < MLFF_SORT_SCRATCH; k++)
        cl_region_free(be, &x->scratch[k]);
    cl_region_free(be, &x->flag);
    memset(x, 0, sizeof *x);
}

mlff_status cl_segments_init(mlff_backend *be, mlff_error *err)
{
    static const mlff_segment_ops ops = {read_shadow, upload, release, sort_reserve, sort_launch};
    (void)err;
    mlff_segments_init(&be->segments, be, &ops, &be->tuning);
    return MLFF_OK;
}
