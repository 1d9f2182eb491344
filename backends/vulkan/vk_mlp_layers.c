/*
 * CELU_MLP and its reverse pass a layer at a time (lowering.h): where a node
 * has many rows, each layer runs as a GEMM of its own (the tiled one on
 * GPUs), whose tiles use each weight they load for 64 rows, where the fused
 * kernels (celu_mlp.comp, celu_mlp_vjp.kernel) load a weight row for every 4
 * rows. The forward layers store into the node's output blocks, which the
 * reverse pass reads as it would the fused kernel's; the reverse layers
 * hand their gradients on through a scratch buffer of the backend and the
 * node's output.
 */
#include "vk_internal.h"

/* A reverse pass with the gradient of the result alone (the members'
 * mean), not gy's hidden blocks too, whose output holds the gradients
 * lowering.h puts there. */
static int reverse_by_layers(const mlff_exec_node *n)
{
    return n->inputs[0].cols != mlff_mlp_shape_of(n).cols && mlff_mlp_vjp_layers_fit(n);
}

int vk_mlp_layered(const mlff_backend *be, const mlff_exec_node *n)
{
    const mlff_tuning *t = &be->tuning;
    if (!mlff_op_is_mlp(n->op) || (t->mlp != MLFF_MLP_AUTO && t->mlp != MLFF_MLP_LAYERS) ||
        (n->op == MLFF_OP_CELU_MLP_VJP && !reverse_by_layers(n)))
        return 0;
    if (t->mlp == MLFF_MLP_LAYERS)
        return 1;
    /* The forward pass's first layer's tiles, for either pass. */
    const int64_t ts = MLFF_TILED_GEMM_TS, width = mlff_mlp_shape_of(n).width[1];
    const int64_t tiles = mlff_row_blocks(n, ts) * ((width + ts - 1) / ts) * n->attrs.i[0];
    return t->vulkan_mlp_layers_from_tiles >= 0 && tiles >= t->vulkan_mlp_layers_from_tiles;
}

mlff_status vk_add_mlp_layers(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const int layers = mlff_mlp_layers(n->op, n->n_inputs, &n->attrs), vjp = n->op == MLFF_OP_CELU_MLP_VJP;
    mlff_status s = vjp && layers > 1 ? vk_buffer_grow(be, &be->mlp_grads, &be->mlp_grads_entries,
                                                       (size_t)mlff_mlp_vjp_scratch_entries(n),
                                                       mlff_dtype_size(n->output.dtype), VK_MEMORY_DEVICE, err)
                                      : MLFF_OK;
    for (int k = 0; k < layers && s == MLFF_OK; k++) {
        mlff_exec_node layer;
        if (vjp)
            mlff_mlp_layer_vjp(n, layers - k, &be->mlp_grads, &layer);
        else
            mlff_mlp_layer(n, k + 1, &layer);
        VkPipeline pipeline;
        const int first = be->n_pending;
        s = vk_kernel_for(be, &layer, &pipeline, err);
        if (s == MLFF_OK)
            s = vk_add_node(be, &layer, pipeline, NULL, err);
        for (int d = first; s == MLFF_OK && d < be->n_pending; d++)
            be->pending[d].row = (int32_t)n->op; /* profiled as the node they make up */
    }
    return s;
}
