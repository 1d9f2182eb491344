/* The cell-list kernels (backends/common/device_cells.c drives them): one
 * program from shaders/cell_lists.kernel, in the arena form where every
 * buffer lies in the arena, else for buffers (cl_arena.c), built or loaded
 * from the disk cache at the first search that needs it. */
#include "cl_internal.h"

static const char *const kernel_names[MLFF_CELL_KERNELS] = {"cell_bin", "cell_place", "cell_count", "cell_pairs",
                                                             "cell_scan", "cell_sort"};

mlff_status cl_cell_kernel(mlff_backend *be, mlff_cell_kernel kernel, void *const *buffers, int64_t n_items,
                           mlff_error *err)
{
    if (n_items > INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "opencl: %lld atoms in one cell-list search",
                         (long long)n_items);
    cl_region *regions[MLFF_CELL_BUFFERS];
    const uint32_t writes = mlff_cell_kernel_writes(kernel);
    for (int a = 0; a < MLFF_CELL_BUFFERS; a++) {
        cl_buffer *b = buffers[a];
        if (writes >> a & 1u)
            mlff_index_shadow_invalidate(&b->host);
        regions[a] = &b->region;
    }
    const int arena = cl_regions_in_arena(be, regions, MLFF_CELL_BUFFERS);
    mlff_status s = cl_build_kernels(be, "cell_lists", arena, &be->cell_program[arena], kernel_names,
                                     be->cell_kernels[arena], MLFF_CELL_KERNELS, err);
    cl_kernel k = be->cell_kernels[arena][kernel];
    if (s != MLFF_OK || (s = cl_set_region_args(be, k, arena, regions, MLFF_CELL_BUFFERS, err)) != MLFF_OK)
        return s;
    const cl_int items = (cl_int)n_items;
    cl_int rc = clSetKernelArg(k, (cl_uint)(arena + MLFF_CELL_BUFFERS), sizeof items, &items);
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
    for (int form = 0; form < 2; form++)
        cl_release_kernels(&be->cell_program[form], be->cell_kernels[form], MLFF_CELL_KERNELS);
}
