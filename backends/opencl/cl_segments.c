/* The OpenCL side of the segments (backends/common/segments.h): host copies
 * of index buffers, and the device copies of each sorted index. */
#include <stdlib.h>

#include "cl_internal.h"

static mlff_status read_shadow(void *backend, mlff_index_shadow *b, mlff_error *err)
{
    mlff_backend *be = backend;
    const cl_buffer *buffer = (const cl_buffer *)b;
    if (!(b->data = malloc(b->size)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    const double start = be->profile.enabled ? mlff_seconds() : 0;
    cl_int rc = clEnqueueReadBuffer(be->queue, buffer->mem, CL_TRUE, 0, b->size, b->data, 0, NULL, NULL);
    if (be->profile.enabled)
        mlff_profile_add(&be->profile, CL_ROW_READ_BACK, "host: index read-backs", mlff_seconds() - start);
    if (rc != CL_SUCCESS) {
        free(b->data);
        b->data = NULL;
        return cl_fail(err, rc, "reading an index buffer");
    }
    return MLFF_OK;
}

static mlff_status grow_device(mlff_backend *be, cl_mem *mem, size_t *capacity, size_t need, mlff_error *err)
{
    if (need <= *capacity && *mem)
        return MLFF_OK;
    const size_t cap = mlff_grown_capacity(*capacity, need);
    if (*mem)
        clReleaseMemObject(*mem);
    cl_int rc;
    *mem = clCreateBuffer(be->context, CL_MEM_READ_ONLY, cap * sizeof(int32_t), NULL, &rc);
    be->allocations++;
    *capacity = *mem ? cap : 0;
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "allocating segment buffers");
}

static mlff_status upload(void *backend, mlff_segments *g, mlff_error *err)
{
    mlff_backend *be = backend;
    cl_segment_buffers *d = g->device;
    if (!d && !(d = g->device = calloc(1, sizeof *d)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
    const size_t n_keys = (size_t)g->n_keys, n = (size_t)g->n_entries;
    mlff_status st = grow_device(be, &d->offsets, &d->capacity_offsets, n_keys + 1, err);
    if (st == MLFF_OK)
        st = grow_device(be, &d->items, &d->capacity_items, n ? n : 1, err);
    if (st != MLFF_OK)
        return st;
    /* Not blocking: the host arrays stay untouched until the next call, which
     * comes after this one finished. */
    cl_int rc = clEnqueueWriteBuffer(be->queue, d->offsets, CL_FALSE, 0, (n_keys + 1) * sizeof(int32_t),
                                     g->offsets, 0, NULL, NULL);
    if (rc == CL_SUCCESS && n)
        rc = clEnqueueWriteBuffer(be->queue, d->items, CL_FALSE, 0, n * sizeof(int32_t), g->items, 0, NULL, NULL);
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "uploading segments");
}

static void release(void *backend, mlff_segments *g)
{
    (void)backend;
    cl_segment_buffers *d = g->device;
    if (!d)
        return;
    if (d->offsets)
        clReleaseMemObject(d->offsets);
    if (d->items)
        clReleaseMemObject(d->items);
    free(d);
    g->device = NULL;
}

void cl_segments_init(mlff_backend *be)
{
    be->segments.backend = be;
    be->segments.read_shadow = read_shadow;
    be->segments.upload = upload;
    be->segments.release = release;
}
