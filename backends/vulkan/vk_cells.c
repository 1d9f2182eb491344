/* The cell-list kernels (backends/common/device_cells.c drives them): one
 * pipeline per kernel from shaders/cell_lists.kernel, built or loaded
 * from the caches at the first search; dispatched through the same
 * recordings as the nodes (a repeated search replays them), and left
 * pending until something needs their results. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static mlff_status pipeline_for(mlff_backend *be, mlff_cell_kernel kernel, mlff_error *err)
{
    if (be->cell_pipelines[kernel])
        return MLFF_OK;
    const char *body = mlff_kernel_source(mlff_vulkan_shaders, "cell_lists");
    if (!body)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "vulkan: the cell-list kernels are missing");
    mlff_text src = {0};
    mlff_text_put(&src, "#version 450\n#define CELL_KERNEL %d\n%s%s%s", (int)kernel,
                  mlff_shader_find(mlff_vulkan_shaders, "dispatch"), mlff_shader_find(mlff_vulkan_shaders, "dialect"),
                  body);
    mlff_status s = src.failed ? mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory")
                               : vk_pipeline_from_source(be, src.s, &be->cell_pipelines[kernel], err);
    free(src.s);
    vk_pipeline_cache_save(be);
    return s;
}

mlff_status vk_cell_kernel(mlff_backend *be, mlff_cell_kernel kernel, void *const *buffers, int64_t n_items,
                           mlff_error *err)
{
    const uint64_t errors_before = be->validation_errors;
    mlff_status s = pipeline_for(be, kernel, err);
    if (s != MLFF_OK)
        return s;
    vk_dispatch d;
    memset(&d, 0, sizeof d); /* compared as bytes */
    d.pipeline = be->cell_pipelines[kernel];
    d.row = VK_ROW_CELLS + (int32_t)kernel;
    d.writes = mlff_cell_kernel_writes(kernel); /* binding k: cell buffer k */
    for (int k = 0; k < MLFF_CELL_BUFFERS; k++) {
        vk_buffer *b = buffers[k];
        if (d.writes >> k & 1u)
            mlff_index_shadow_invalidate(&b->host);
        d.bindings[k] = b->buffer;
    }
    d.groups[1] = d.groups[2] = 1;
    /* Counting and writing pairs take a work-group per atom. */
    const uint64_t group = kernel == MLFF_CELL_SORT ? MLFF_CELL_SORT_LANES : VK_GROUP_1D;
    const int64_t items = mlff_cell_kernel_per_group(kernel) ? n_items * (int64_t)group : n_items;
    /* Not run yet: the next read, write or node list submits it with the
     * dispatches pending before and after it, in one submission. */
    s = vk_add_dispatch(be, &d, items, group, err);
    if (s != MLFF_OK)
        be->n_pending = 0;
    return s == MLFF_OK ? vk_validation_status(be, errors_before, err) : s;
}

void vk_cells_free(mlff_backend *be)
{
    for (int k = 0; k < MLFF_CELL_KERNELS; k++) {
        if (be->cell_pipelines[k])
            vkDestroyPipeline(be->device, be->cell_pipelines[k], NULL);
        be->cell_pipelines[k] = VK_NULL_HANDLE;
    }
}
