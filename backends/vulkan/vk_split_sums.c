/* A layer's input gradient with its K split between work groups
 * (lowering.h): the tiled shader's dispatch writes its partial sums into
 * the backend's split_sums buffer, then gemm_splits.kernel adds them into the
 * node's output. */
#include <string.h>

#include "vk_internal.h"

mlff_status vk_gemm_splits(mlff_backend *be, const mlff_exec_node *n, int tile, int *splits, mlff_error *err)
{
    *splits = 1;
    if (!tile)
        return MLFF_OK;
    const int want = mlff_gemm_splits(n, mlff_tiled_gemm_tiles(n, tile), be->tuning.vulkan_split_fill, &be->tuning);
    const size_t bytes = (size_t)(n->output.rows * n->output.cols) * (size_t)want * mlff_dtype_size(n->output.dtype);
    if (want == 1 || bytes > vk_largest_buffer(be))
        return MLFF_OK; /* one pass along K: slower, not wrong */
    mlff_status s = vk_buffer_grow(be, &be->split_sums, &be->split_sums_bytes, bytes, 1, VK_MEMORY_DEVICE, err);
    if (s == MLFF_OK)
        *splits = want;
    return s;
}

mlff_status vk_add_split_sums(mlff_backend *be, const mlff_exec_node *n, int splits, mlff_error *err)
{
    vk_dispatch d;
    memset(&d, 0, sizeof d); /* compared as bytes */
    d.row = VK_ROW_SPLIT_SUMS;
    d.groups[1] = d.groups[2] = 1;
    d.writes = 1u << VK_BIND_OUT;
    mlff_status s = vk_split_sums_kernel(be, n, &d.pipeline, err);
    if (s != MLFF_OK)
        return s;
    d.bindings[VK_BIND_OUT] = ((const vk_buffer *)n->output.buffer)->buffer;
    d.bindings[VK_BIND_IN0] = be->split_sums.buffer;
    if (mlff_epilogue_reads_input(n->epilogue))
        d.bindings[VK_BIND_EPI] = ((const vk_buffer *)n->epilogue_input.buffer)->buffer;
    d.push[2] = (uint32_t)splits;
    return vk_add_dispatch(be, &d, n->output.rows * n->output.cols, VK_GROUP_1D, err);
}
