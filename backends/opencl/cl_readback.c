/* Reads that do not wait: each lands in a pinned host buffer (created with
 * CL_MEM_ALLOC_HOST_PTR and mapped once), and is copied to where it was
 * asked for when the queue has finished. A read that does not wait into
 * ordinary (pageable) memory made NVIDIA's driver finish it on a thread of
 * its own: an evaluation took 70 us longer. */
#include <string.h>

#include "cl_internal.h"

/* Larger reads wait, straight into their destination. */
#define READBACK_MAX_BYTES ((size_t)64 << 20)

static void release(cl_readback *r, cl_command_queue queue)
{
    if (r->host)
        clEnqueueUnmapMemObject(queue, r->buffer, r->host, 0, NULL, NULL);
    if (r->buffer)
        clReleaseMemObject(r->buffer);
    r->buffer = NULL;
    r->host = NULL;
    r->capacity = 0;
}

/* Room for `bytes` more and one more read; when there is none, the reads
 * under way are finished first. */
static mlff_status reserve(mlff_backend *be, size_t bytes, mlff_error *err)
{
    cl_readback *r = &be->readback;
    if (r->used + bytes <= r->capacity && r->n_reads < CL_READBACK_READS)
        return MLFF_OK;
    if (r->n_reads) {
        cl_int rc = clFinish(be->queue);
        if (rc != CL_SUCCESS)
            return cl_fail(err, rc, "waiting for the reads");
        cl_readback_settle(be);
    }
    if (bytes <= r->capacity)
        return MLFF_OK;
    release(r, be->queue);
    const size_t size = bytes + bytes / 2 > 4096 ? bytes + bytes / 2 : 4096;
    cl_int rc;
    r->buffer = clCreateBuffer(be->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size, NULL, &rc);
    if (rc == CL_SUCCESS)
        r->host = clEnqueueMapBuffer(be->queue, r->buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL,
                                     NULL, &rc);
    if (rc != CL_SUCCESS) {
        release(r, be->queue);
        return cl_fail(err, rc, "creating the pinned read buffer");
    }
    r->capacity = size;
    return MLFF_OK;
}

mlff_status cl_readback_enqueue(mlff_backend *be, cl_mem mem, size_t offset, void *dst, size_t bytes,
                                mlff_error *err)
{
    if (bytes > READBACK_MAX_BYTES) {
        cl_int rc = clEnqueueReadBuffer(be->queue, mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
        return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "reading a buffer");
    }
    mlff_status s = reserve(be, bytes, err);
    if (s != MLFF_OK)
        return s;
    cl_readback *r = &be->readback;
    cl_int rc = clEnqueueReadBuffer(be->queue, mem, CL_FALSE, offset, bytes, (char *)r->host + r->used, 0, NULL,
                                    NULL);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "reading a buffer");
    r->reads[r->n_reads++] = (cl_pending_read){dst, r->used, bytes};
    r->used += (bytes + 63) & ~(size_t)63;
    return MLFF_OK;
}

void cl_readback_settle(mlff_backend *be)
{
    cl_readback *r = &be->readback;
    for (int k = 0; k < r->n_reads; k++)
        memcpy(r->reads[k].dst, (const char *)r->host + r->reads[k].offset, r->reads[k].bytes);
    r->n_reads = 0;
    r->used = 0;
}

void cl_readback_free(mlff_backend *be)
{
    release(&be->readback, be->queue);
}
