/*
 * The tangent pass (forward mode): T directions through the graph at once.
 * Walks the nodes present (a forward pass and its reverse pass) in order,
 * and appends for each node that reads a tensor with a tangent its
 * Jacobian-vector product, T-blocked (core/ops.h, "Tangents"). Over a
 * reverse pass this is forward mode over reverse mode: the tangent of a
 * gradient is a Hessian-vector product, T of them side by side, at the cost
 * of a few gradients and with memory that grows with T, never with the
 * Hessian's size.
 */
#include <stdlib.h>

#include "graph.h"

mlff_status mlff_graph_tangents(mlff_graph *g, int64_t n_tangents, const int *seeded, const int *seeds, int n_seeds,
                                const int *wanted, int n_wanted, int *result)
{
    for (int w = 0; w < n_wanted; w++)
        result[w] = -1;
    if (mlff_graph_status(g) != MLFF_OK)
        return mlff_graph_status(g);
    if (n_tangents < 1) {
        mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "a tangent pass of %lld directions", (long long)n_tangents);
        return mlff_graph_status(g);
    }
    int *tangent = malloc((size_t)g->n_tensors * sizeof *tangent);
    if (!tangent) {
        mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory in the tangent pass");
        return mlff_graph_status(g);
    }
    const int n_tensors = g->n_tensors, n_nodes = g->n_nodes;
    for (int t = 0; t < n_tensors; t++)
        tangent[t] = -1;
    for (int k = 0; k < n_seeds; k++) {
        const mlff_graph_tensor *x = &g->tensors[seeded[k]], *dx = &g->tensors[seeds[k]];
        if (dx->cols != n_tangents * x->cols || dx->dtype != x->dtype || !mlff_graph_same_rows(g, seeded[k], seeds[k])) {
            mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "a tangent seed of tensor %d is not T-blocked", seeded[k]);
            break;
        }
        tangent[seeded[k]] = seeds[k];
    }
    for (int k = 0; k < n_nodes && mlff_graph_status(g) == MLFF_OK; k++) {
        const mlff_graph_node n = g->nodes[k];
        int in[MLFF_MAX_OP_INPUTS], any = 0;
        for (int j = 0; j < n.n_inputs; j++) {
            in[j] = tangent[n.inputs[j]];
            any |= in[j] >= 0;
        }
        if (!any)
            continue;
        const mlff_op_info *info = mlff_op_get(n.op);
        if (!info->jvp) {
            mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "op %s has no tangent but lies on the tangent path", info->name);
            break;
        }
        tangent[n.output] = info->jvp(g, k, in, n_tangents);
    }
    for (int w = 0; w < n_wanted && mlff_graph_status(g) == MLFF_OK; w++) {
        const mlff_graph_tensor *y = &g->tensors[wanted[w]];
        result[w] = tangent[wanted[w]] >= 0
                        ? tangent[wanted[w]]
                        : mlff_op_fill(g, y->rows_symbol, y->rows, n_tangents * y->cols, y->dtype, 0.0);
    }
    free(tangent);
    return mlff_graph_status(g);
}
