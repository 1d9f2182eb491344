/*
 * The backend's device memory: one buffer, the arena, holds every region
 * up to arena.most_one bytes (an eighth of the arena's largest size unless
 * the record's opencl_arena says otherwise); larger ones get buffers of
 * their own.
 *
 * Why an arena: NVIDIA's OpenCL takes about 0.4 us of host time for each
 * buffer argument of a launch, on top of some 5 us a launch, whatever the
 * kernel does (bench/RESULTS.md, bench_cl_launch), and a small molecule's
 * evaluation is nothing but launches. Kernels built in the arena form take
 * the arena as their one buffer argument and each tensor as a byte offset
 * into it (cl_program.c); kernels built for buffers take a region of the
 * arena as a sub-buffer (cl_region_buffer).
 *
 * The arena grows by doubling up to the record's opencl_arena_most (the
 * device's largest buffer at most; the ranges in use copied
 * into the new buffer; regions keep their offsets; a region's sub-buffer of
 * the old one is made again at its next use). Free ranges below the end
 * are kept in order and merged with their neighbours.
 */
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"
#include "core/ds.h"

#define CL_ARENA_FIRST ((size_t)4 << 20)

void cl_arena_init(mlff_backend *be)
{
    cl_arena *a = &be->arena;
    const int64_t region = be->tuning.opencl_arena;
    const size_t most = (size_t)be->tuning.opencl_arena_most;
    a->most = be->max_alloc < most ? (size_t)be->max_alloc : most;
    /* Sub-buffers start at multiples of the device's base address alignment. */
    a->align = be->base_align > 256 ? be->base_align : 256;
    a->most_one = region < 0 ? 0 : region ? (size_t)region : a->most / 8;
}

static size_t rounded(const cl_arena *a, size_t bytes)
{
    return (bytes + a->align - 1) / a->align * a->align;
}

/* Capacity for `end` bytes: a new buffer, the ranges in use copied over.
 * 0 when the arena may not grow that far or the device has no room. */
static int grow(mlff_backend *be, size_t end)
{
    cl_arena *a = &be->arena;
    size_t capacity = a->capacity ? a->capacity : CL_ARENA_FIRST;
    while (capacity < end)
        capacity *= 2;
    if (capacity > a->most)
        return 0;
    cl_int rc;
    cl_mem mem = clCreateBuffer(be->context, CL_MEM_READ_WRITE, capacity, NULL, &rc);
    if (rc != CL_SUCCESS)
        return 0;
    if (a->mem && a->end && clEnqueueCopyBuffer(be->queue, a->mem, mem, 0, 0, a->end, 0, NULL, NULL) != CL_SUCCESS) {
        clReleaseMemObject(mem);
        return 0;
    }
    if (a->mem)
        clReleaseMemObject(a->mem); /* commands enqueued keep it until they ran */
    a->mem = mem;
    a->capacity = capacity;
    a->generation++; /* the regions' sub-buffers are of the old one */
    be->allocations++;
    return 1;
}

/* A range of `bytes` (rounded): the first free range that holds it, else at the end. */
static int take(mlff_backend *be, size_t bytes, size_t *offset)
{
    cl_arena *a = &be->arena;
    for (int k = 0; k < (int)arrlen(a->gaps); k++) {
        cl_arena_gap *g = &a->gaps[k];
        if (g->bytes < bytes)
            continue;
        *offset = g->offset;
        g->offset += bytes;
        g->bytes -= bytes;
        if (g->bytes == 0)
            arrdel(a->gaps, k);
        return 1;
    }
    if (a->end + bytes > a->capacity && !grow(be, a->end + bytes))
        return 0;
    *offset = a->end;
    a->end += bytes;
    return 1;
}

/* Gives a range back. */
static void give(cl_arena *a, size_t offset, size_t bytes)
{
    const int n = (int)arrlen(a->gaps);
    if (offset + bytes == a->end) {
        a->end = offset;
        if (n && a->gaps[n - 1].offset + a->gaps[n - 1].bytes == a->end)
            a->end = arrpop(a->gaps).offset;
        return;
    }
    int k = 0;
    while (k < n && a->gaps[k].offset < offset)
        k++;
    const int joins_before = k > 0 && a->gaps[k - 1].offset + a->gaps[k - 1].bytes == offset;
    const int joins_after = k < n && offset + bytes == a->gaps[k].offset;
    if (joins_before && joins_after) {
        a->gaps[k - 1].bytes += bytes + a->gaps[k].bytes;
        arrdel(a->gaps, k);
    } else if (joins_before) {
        a->gaps[k - 1].bytes += bytes;
    } else if (joins_after) {
        a->gaps[k].offset = offset;
        a->gaps[k].bytes += bytes;
    } else {
        const cl_arena_gap gap = {offset, bytes};
        arrput(a->gaps, gap);
        memmove(&a->gaps[k + 1], &a->gaps[k], (size_t)(n - k) * sizeof *a->gaps);
        a->gaps[k] = gap;
    }
}

mlff_status cl_region_alloc(mlff_backend *be, cl_region *r, size_t bytes, const char *what, mlff_error *err)
{
    cl_arena *a = &be->arena;
    memset(r, 0, sizeof *r);
    bytes = bytes ? bytes : 1;
    if (bytes > be->max_alloc)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY,
                         "opencl: %s: %zu bytes in one buffer, more than the device allows (%llu); split the batch",
                         what, bytes, (unsigned long long)be->max_alloc);
    be->allocations++;
    r->bytes = bytes;
    if (bytes <= a->most_one && take(be, rounded(a, bytes), &r->offset))
        return MLFF_OK;
    cl_int rc;
    r->own = clCreateBuffer(be->context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    if (rc == CL_SUCCESS)
        return MLFF_OK;
    r->own = NULL;
    r->bytes = 0;
    return cl_fail(err, rc, what);
}

void cl_region_free(mlff_backend *be, cl_region *r)
{
    if (r->sub)
        clReleaseMemObject(r->sub);
    if (r->own)
        clReleaseMemObject(r->own);
    else if (r->bytes)
        give(&be->arena, r->offset, rounded(&be->arena, r->bytes));
    memset(r, 0, sizeof *r);
}

mlff_status cl_region_reserve(mlff_backend *be, cl_region *r, size_t need, const char *what, mlff_error *err)
{
    if (need <= r->bytes)
        return MLFF_OK;
    const size_t bytes = mlff_grown_capacity_within(r->bytes, need, be->max_alloc);
    cl_region_free(be, r);
    return cl_region_alloc(be, r, bytes, what, err);
}

mlff_status cl_region_buffer(mlff_backend *be, cl_region *r, cl_mem *out, mlff_error *err)
{
    if (r->own || !r->bytes) {
        *out = r->own;
        return MLFF_OK;
    }
    if (!r->sub || r->sub_generation != be->arena.generation) {
        if (r->sub)
            clReleaseMemObject(r->sub);
        const cl_buffer_region range = {r->offset, r->bytes};
        cl_int rc;
        r->sub = clCreateSubBuffer(be->arena.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &range, &rc);
        if (rc != CL_SUCCESS) {
            r->sub = NULL;
            return cl_fail(err, rc, "a sub-buffer of the arena");
        }
        r->sub_generation = be->arena.generation;
    }
    *out = r->sub;
    return MLFF_OK;
}

int cl_regions_in_arena(const mlff_backend *be, cl_region *const *regions, int n)
{
    int all = be->arena.most_one > 0;
    for (int k = 0; k < n; k++)
        all &= cl_region_in_arena(regions[k]);
    return all;
}

mlff_status cl_set_region_args(mlff_backend *be, cl_kernel kernel, int arena_form, cl_region *const *regions, int n,
                               mlff_error *err)
{
    cl_int rc = arena_form ? clSetKernelArg(kernel, 0, sizeof be->arena.mem, &be->arena.mem) : CL_SUCCESS;
    for (int k = 0; k < n && rc == CL_SUCCESS; k++) {
        const cl_uint index = (cl_uint)(arena_form + k);
        if (arena_form) {
            const cl_long at = (cl_long)regions[k]->offset;
            rc = clSetKernelArg(kernel, index, sizeof at, &at);
        } else {
            cl_mem mem;
            mlff_status s = cl_region_buffer(be, regions[k], &mem, err);
            if (s != MLFF_OK)
                return s;
            rc = clSetKernelArg(kernel, index, sizeof mem, &mem);
        }
    }
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "clSetKernelArg");
}

void cl_arena_free(mlff_backend *be)
{
    cl_arena *a = &be->arena;
    if (a->mem)
        clReleaseMemObject(a->mem);
    arrfree(a->gaps);
    memset(a, 0, sizeof *a);
}
