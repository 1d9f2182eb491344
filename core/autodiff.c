/*
 * The reverse pass. Walks the forward nodes backwards once, asks each op for its
 * vector-Jacobian product, and sums the gradients of tensors used more than
 * once. Only tensors that depend on `wrt` get gradients; what else the VJPs
 * emit and nobody reads is dropped later by the plan's liveness pass.
 */
#include <stdlib.h>

#include "graph.h"

static int zeros_like(mlff_graph *g, int t)
{
    const mlff_graph_tensor *x = &g->tensors[t];
    return mlff_op_fill(g, x->rows_symbol, x->rows, x->cols, x->dtype, 0.0);
}

mlff_status mlff_graph_gradients(mlff_graph *g, int output, const int *wrt, int n_wrt, double seed,
                                 int *result)
{
    for (int w = 0; w < n_wrt; w++)
        result[w] = -1;
    if (mlff_graph_status(g) != MLFF_OK)
        return mlff_graph_status(g);
    const int n_forward = g->n_nodes;
    const int n_tensors = g->n_tensors;
    int valid = output >= 0 && output < n_tensors;
    for (int w = 0; w < n_wrt; w++)
        valid &= wrt[w] >= 0 && wrt[w] < n_tensors;
    if (!valid) {
        mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "gradient of an invalid tensor");
        return mlff_graph_status(g);
    }

    char *depends = calloc((size_t)n_tensors, 1);
    int *grad = malloc((size_t)n_tensors * sizeof *grad);
    if (!depends || !grad) {
        free(depends);
        free(grad);
        mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory in the reverse pass");
        return mlff_graph_status(g);
    }
    for (int t = 0; t < n_tensors; t++)
        grad[t] = -1;

    for (int w = 0; w < n_wrt; w++)
        depends[wrt[w]] = 1;
    for (int k = 0; k < n_forward; k++) {
        const mlff_graph_node *n = &g->nodes[k];
        for (int j = 0; j < n->n_inputs; j++)
            depends[n->output] |= depends[n->inputs[j]];
    }

    if (depends[output]) {
        const mlff_graph_tensor *y = &g->tensors[output];
        grad[output] = mlff_op_fill(g, y->rows_symbol, y->rows, y->cols, y->dtype, seed);
    }
    for (int k = n_forward - 1; k >= 0 && mlff_graph_status(g) == MLFF_OK; k--) {
        const mlff_graph_node n = g->nodes[k];
        if (grad[n.output] < 0)
            continue;
        const mlff_op_info *info = mlff_op_get(n.op);
        if (!info->vjp) {
            mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "op %s has no VJP but lies on the gradient path",
                            info->name);
            break;
        }
        int input_grads[MLFF_MAX_OP_INPUTS];
        for (int j = 0; j < MLFF_MAX_OP_INPUTS; j++)
            input_grads[j] = -1;
        info->vjp(g, k, grad[n.output], input_grads);
        for (int j = 0; j < n.n_inputs; j++) {
            int x = n.inputs[j];
            if (!depends[x] || input_grads[j] < 0)
                continue;
            grad[x] = grad[x] < 0 ? input_grads[j] : mlff_op_sum_gradients(g, grad[x], input_grads[j]);
        }
    }

    for (int w = 0; w < n_wrt && mlff_graph_status(g) == MLFF_OK; w++)
        result[w] = grad[wrt[w]] >= 0 ? grad[wrt[w]] : zeros_like(g, wrt[w]);
    free(depends);
    free(grad);
    g->n_forward_nodes = n_forward;
    return mlff_graph_status(g);
}

int mlff_graph_gradient(mlff_graph *g, int output, int wrt, double seed)
{
    int result;
    return mlff_graph_gradients(g, output, &wrt, 1, seed, &result) == MLFF_OK ? result : -1;
}
