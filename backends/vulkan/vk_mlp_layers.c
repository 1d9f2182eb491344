/*
 * CELU_MLP's forward pass a layer at a time (lowering.h): where a node has
 * many rows, each layer runs as a GEMM of its own (the tiled one on GPUs),
 * whose tiles use each weight they load for 64 rows, where the fused
 * kernel (celu_mlp.comp) loads a weight row for every 4 rows. The layers
 * store into the node's output blocks, so its reverse pass (fused) reads
 * them as it would the fused kernel's.
 */
#include "vk_internal.h"

int vk_mlp_layered(const mlff_backend *be, const mlff_exec_node *n)
{
    if (n->op != MLFF_OP_CELU_MLP || (be->mlp != MLFF_MLP_AUTO && be->mlp != MLFF_MLP_LAYERS))
        return 0;
    if (be->mlp == MLFF_MLP_LAYERS)
        return 1;
    mlff_exec_node first;
    mlff_node_sig sig;
    mlff_mlp_layer(n, 1, &first, &sig);
    return be->is_gpu && mlff_tiled_gemm_tiles(&first, MLFF_TILED_GEMM_TS) >= VK_MLP_LAYERS_FROM_TILES;
}

mlff_status vk_add_mlp_layers(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const int layers = mlff_mlp_layers(n->op, n->n_inputs, &n->attrs);
    for (int l = 1; l <= layers; l++) {
        mlff_exec_node layer;
        mlff_node_sig sig;
        mlff_mlp_layer(n, l, &layer, &sig);
        sig.variant = (int32_t)vk_gemm_for(be, &layer);
        VkPipeline pipeline;
        const int first = be->n_pending;
        mlff_status s = vk_pipeline_for_sig(be, &sig, &pipeline, err);
        if (s == MLFF_OK)
            s = vk_add_node(be, &layer, pipeline, NULL, err);
        if (s != MLFF_OK)
            return s;
        for (int k = first; k < be->n_pending; k++)
            be->pending[k].row = (int32_t)n->op; /* profiled as the node they make up */
    }
    return MLFF_OK;
}
