/* The cell-list kernels (backends/common/device_cells.c drives them): one
 * program from shaders/opencl/cell_lists.cl, built or loaded from the disk
 * cache at the first search. */
#include "cl_internal.h"

static const char *const kernel_names[MLFF_CELL_KERNELS] = {"cell_bin", "cell_place", "cell_count", "cell_pairs",
                                                             "cell_scan", "cell_sort"};

static mlff_status build_cells(mlff_backend *be, mlff_error *err)
{
    mlff_status s = cl_build_kernels(be, "cell_lists", &be->cell_program, kernel_names, be->cell_kernels,
                                     MLFF_CELL_KERNELS, err);
    if (s != MLFF_OK)
        cl_cells_free(be);
    return s;
}

mlff_status cl_cell_kernel(mlff_backend *be, mlff_cell_kernel kernel, void *const *buffers, int64_t n_items,
                           mlff_error *err)
{
    if (!be->cell_program) {
        mlff_status s = build_cells(be, err);
        if (s != MLFF_OK)
            return s;
    }
    if (n_items > INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "opencl: %lld atoms in one cell-list search",
                         (long long)n_items);
    cl_kernel k = be->cell_kernels[kernel];
    cl_int rc = CL_SUCCESS;
    const uint32_t writes = mlff_cell_kernel_writes(kernel);
    for (cl_uint a = 0; a < MLFF_CELL_BUFFERS && rc == CL_SUCCESS; a++) {
        cl_buffer *b = buffers[a];
        if (writes >> a & 1u)
            mlff_index_shadow_invalidate(&b->host);
        rc = clSetKernelArg(k, a, sizeof b->mem, &b->mem);
    }
    const cl_int items = (cl_int)n_items;
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, MLFF_CELL_BUFFERS, sizeof items, &items);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "clSetKernelArg (cell lists)");
    /* Counting and writing pairs take a work-group per atom; the scan and
     * the sort one (the sort's up to MLFF_CELL_SORT_LANES items). */
    const size_t local =
        kernel == MLFF_CELL_SORT ? cl_group_size_within(be, k, MLFF_CELL_SORT_LANES) : cl_group_size(be, k);
    const size_t global = mlff_cell_kernel_per_group(kernel) ? (size_t)n_items * local
                                                             : ((size_t)n_items + local - 1) / local * local;
    /* No wait: the queue is in order, and the reads that need the results block. */
    rc = clEnqueueNDRangeKernel(be->queue, k, 1, NULL, &global, &local, 0, NULL,
                                cl_profile_event(be, CL_ROW_CELLS + kernel));
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "running the cell-list kernels");
}

void cl_cells_free(mlff_backend *be)
{
    for (int k = 0; k < MLFF_CELL_KERNELS; k++) {
        if (be->cell_kernels[k])
            clReleaseKernel(be->cell_kernels[k]);
        be->cell_kernels[k] = NULL;
    }
    if (be->cell_program)
        clReleaseProgram(be->cell_program);
    be->cell_program = NULL;
}
