/*
 * The backend's device memory: one buffer, the arena, holds every region
 * up to arena.most_one bytes (an eighth of the arena's largest size unless
 * MLFF_OPENCL_ARENA says otherwise); larger ones get buffers of their own.
 *
 * Why an arena: NVIDIA's OpenCL takes about 0.4 us of host time for each
 * buffer argument of a launch, on top of some 5 us a launch, whatever the
 * kernel does (bench/RESULTS.md, bench_cl_launch), and a small molecule's
 * evaluation is nothing but launches. Kernels built in the arena form take
 * the arena as their one buffer argument and each tensor as a byte offset
 * into it (cl_program.c); kernels built for buffers take a region of the
 * arena as a sub-buffer (cl_region_buffer).
 *
 * The arena grows by doubling up to CL_ARENA_MOST (the ranges in use copied
 * into the new buffer; regions keep their offsets). Free ranges below the
 * end are kept in order and merged with their neighbours.
 */
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"

#define CL_ARENA_FIRST ((size_t)4 << 20)
#define CL_ARENA_MOST ((size_t)1 << 30)

void cl_arena_init(mlff_backend *be, int enabled, size_t most_one)
{
    cl_arena *p = &be->arena;
    p->most = be->max_alloc < CL_ARENA_MOST ? (size_t)be->max_alloc : CL_ARENA_MOST;
    /* Sub-buffers start at multiples of the device's base address alignment. */
    p->align = be->base_align > 256 ? be->base_align : 256;
    p->most_one = !enabled ? 0 : most_one ? most_one : p->most / 8;
}

static size_t rounded(const cl_arena *p, size_t bytes)
{
    return (bytes + p->align - 1) / p->align * p->align;
}

/* Capacity for `end` bytes: a new buffer, the ranges in use copied over.
 * 0 when the arena may not grow that far or the device has no room. */
static int grow(mlff_backend *be, size_t end)
{
    cl_arena *p = &be->arena;
    size_t capacity = p->capacity ? p->capacity : CL_ARENA_FIRST;
    while (capacity < end)
        capacity *= 2;
    if (capacity > p->most)
        return 0;
    cl_int rc;
    cl_mem mem = clCreateBuffer(be->context, CL_MEM_READ_WRITE, capacity, NULL, &rc);
    if (rc != CL_SUCCESS)
        return 0;
    if (p->mem && p->end && clEnqueueCopyBuffer(be->queue, p->mem, mem, 0, 0, p->end, 0, NULL, NULL) != CL_SUCCESS) {
        clReleaseMemObject(mem);
        return 0;
    }
    if (p->mem)
        clReleaseMemObject(p->mem); /* commands enqueued keep it until they ran */
    p->mem = mem;
    p->capacity = capacity;
    p->generation++; /* the regions' sub-buffers are of the old one */
    be->allocations++;
    return 1;
}

static void remove_gap(cl_arena *p, int k)
{
    memmove(&p->gaps[k], &p->gaps[k + 1], (size_t)(p->n_gaps - k - 1) * sizeof *p->gaps);
    p->n_gaps--;
}

/* A range of `bytes` (rounded): the first free range that holds it, else at the end. */
static int take(mlff_backend *be, size_t bytes, size_t *offset)
{
    cl_arena *p = &be->arena;
    for (int k = 0; k < p->n_gaps; k++) {
        cl_arena_gap *g = &p->gaps[k];
        if (g->bytes < bytes)
            continue;
        *offset = g->offset;
        g->offset += bytes;
        g->bytes -= bytes;
        if (g->bytes == 0)
            remove_gap(p, k);
        return 1;
    }
    if (p->end + bytes > p->capacity && !grow(be, p->end + bytes))
        return 0;
    *offset = p->end;
    p->end += bytes;
    return 1;
}

/* Gives a range back; 0 when there is no memory to note it (it is then lost until the arena goes). */
static int give(cl_arena *p, size_t offset, size_t bytes)
{
    if (offset + bytes == p->end) {
        p->end = offset;
        if (p->n_gaps && p->gaps[p->n_gaps - 1].offset + p->gaps[p->n_gaps - 1].bytes == p->end)
            p->end = p->gaps[--p->n_gaps].offset;
        return 1;
    }
    int k = 0;
    while (k < p->n_gaps && p->gaps[k].offset < offset)
        k++;
    const int joins_before = k > 0 && p->gaps[k - 1].offset + p->gaps[k - 1].bytes == offset;
    const int joins_after = k < p->n_gaps && offset + bytes == p->gaps[k].offset;
    if (joins_before && joins_after) {
        p->gaps[k - 1].bytes += bytes + p->gaps[k].bytes;
        remove_gap(p, k);
    } else if (joins_before) {
        p->gaps[k - 1].bytes += bytes;
    } else if (joins_after) {
        p->gaps[k].offset = offset;
        p->gaps[k].bytes += bytes;
    } else {
        if (p->n_gaps == p->cap_gaps) {
            const int cap = p->cap_gaps ? 2 * p->cap_gaps : 16;
            cl_arena_gap *gaps = realloc(p->gaps, (size_t)cap * sizeof *gaps);
            if (!gaps)
                return 0;
            p->gaps = gaps;
            p->cap_gaps = cap;
        }
        memmove(&p->gaps[k + 1], &p->gaps[k], (size_t)(p->n_gaps - k) * sizeof *p->gaps);
        p->gaps[k] = (cl_arena_gap){offset, bytes};
        p->n_gaps++;
    }
    return 1;
}

mlff_status cl_region_alloc(mlff_backend *be, cl_region *r, size_t bytes, const char *what, mlff_error *err)
{
    cl_arena *p = &be->arena;
    memset(r, 0, sizeof *r);
    bytes = bytes ? bytes : 1;
    if (bytes > be->max_alloc)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY,
                         "opencl: %s: %zu bytes in one buffer, more than the device allows (%llu); split the batch",
                         what, bytes, (unsigned long long)be->max_alloc);
    be->allocations++;
    r->bytes = bytes;
    if (bytes <= p->most_one && take(be, rounded(p, bytes), &r->offset))
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
    const size_t grown = r->bytes + r->bytes / 2;
    cl_region_free(be, r);
    return cl_region_alloc(be, r, need > grown ? need : grown, what, err);
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
    cl_arena *p = &be->arena;
    if (p->mem)
        clReleaseMemObject(p->mem);
    free(p->gaps);
    memset(p, 0, sizeof *p);
}
