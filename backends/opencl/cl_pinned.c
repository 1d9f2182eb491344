/* Transfers that do not wait, through one pinned host buffer (created with
 * CL_MEM_ALLOC_HOST_PTR and mapped once). A read lands there and is copied
 * to where it was asked for when the queue has finished; a write is copied
 * there first and goes to the device from there. Both directions through
 * ordinary (pageable) memory cost NVIDIA's driver more: a read that did not
 * wait made it finish the read on a thread of its own (an evaluation took
 * 70 us longer), a write that waited held the host some 10 us for a few
 * bytes. The buffer's bytes are reused only after a wait. */
#include <string.h>

#include "cl_internal.h"

/* Larger transfers wait, straight from or into the caller's memory. */
#define PINNED_MAX_BYTES ((size_t)64 << 20)

static void release(cl_pinned *r, cl_command_queue queue)
{
    if (r->host)
        clEnqueueUnmapMemObject(queue, r->buffer, r->host, 0, NULL, NULL);
    if (r->buffer)
        clReleaseMemObject(r->buffer);
    r->buffer = NULL;
    r->host = NULL;
    r->capacity = 0;
}

/* Finishes the transfers under way, and grows the buffer to half as much
 * again as they and `bytes` more took: an evaluation's transfers then fit
 * between its waits from the next one on. */
static mlff_status make_room(mlff_backend *be, size_t bytes, mlff_error *err)
{
    cl_pinned *r = &be->pinned;
    const size_t wanted = r->used + bytes;
    if (r->used || r->n_reads) {
        cl_int rc = clFinish(be->queue);
        if (rc != CL_SUCCESS)
            return cl_fail(err, rc, "waiting for the transfers");
        cl_pinned_settle(be);
    }
    if (wanted <= r->capacity)
        return MLFF_OK;
    release(r, be->queue);
    const size_t size = wanted + wanted / 2 > 4096 ? wanted + wanted / 2 : 4096;
    cl_int rc;
    r->buffer = clCreateBuffer(be->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size, NULL, &rc);
    if (rc == CL_SUCCESS)
        r->host = clEnqueueMapBuffer(be->queue, r->buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL,
                                     NULL, &rc);
    if (rc != CL_SUCCESS) {
        release(r, be->queue);
        return cl_fail(err, rc, "creating the pinned transfer buffer");
    }
    r->capacity = size;
    return MLFF_OK;
}

/* The next `bytes` of the pinned buffer (at *at), with room for one more
 * read; made where there is none. */
static mlff_status take(mlff_backend *be, size_t bytes, size_t *at, mlff_error *err)
{
    cl_pinned *r = &be->pinned;
    if (r->used + bytes > r->capacity || r->n_reads == CL_PINNED_READS) {
        mlff_status s = make_room(be, bytes, err);
        if (s != MLFF_OK)
            return s;
    }
    *at = r->used;
    r->used += (bytes + 63) & ~(size_t)63;
    return MLFF_OK;
}

mlff_status cl_pinned_read(mlff_backend *be, cl_mem mem, size_t offset, void *dst, size_t bytes, mlff_error *err)
{
    if (bytes == 0)
        return MLFF_OK;
    if (bytes > PINNED_MAX_BYTES) {
        cl_int rc = clEnqueueReadBuffer(be->queue, mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
        return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "reading a buffer");
    }
    size_t at;
    mlff_status s = take(be, bytes, &at, err);
    if (s != MLFF_OK)
        return s;
    cl_pinned *r = &be->pinned;
    cl_int rc = clEnqueueReadBuffer(be->queue, mem, CL_FALSE, offset, bytes, (char *)r->host + at, 0, NULL, NULL);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "reading a buffer");
    r->reads[r->n_reads++] = (cl_pending_read){dst, at, bytes};
    return MLFF_OK;
}

mlff_status cl_pinned_write(mlff_backend *be, cl_mem mem, size_t offset, const void *src, size_t bytes,
                            mlff_error *err)
{
    if (bytes == 0)
        return MLFF_OK;
    if (bytes > PINNED_MAX_BYTES) {
        cl_int rc = clEnqueueWriteBuffer(be->queue, mem, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
        return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "writing a buffer");
    }
    size_t at;
    mlff_status s = take(be, bytes, &at, err);
    if (s != MLFF_OK)
        return s;
    cl_pinned *r = &be->pinned;
    memcpy((char *)r->host + at, src, bytes);
    cl_int rc = clEnqueueWriteBuffer(be->queue, mem, CL_FALSE, offset, bytes, (char *)r->host + at, 0, NULL, NULL);
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "writing a buffer");
}

void cl_pinned_settle(mlff_backend *be)
{
    cl_pinned *r = &be->pinned;
    for (int k = 0; k < r->n_reads; k++)
        memcpy(r->reads[k].dst, (const char *)r->host + r->reads[k].offset, r->reads[k].bytes);
    r->n_reads = 0;
    r->used = 0;
}

void cl_pinned_free(mlff_backend *be)
{
    release(&be->pinned, be->queue);
}
