#include "ops.h"

#include <stdarg.h>
#include <stdio.h>

#include "op_internal.h"

/* The registry: name, input count and VJP of every op, in enum order. */
static const mlff_op_info op_table[MLFF_OP_COUNT] = {
    [MLFF_OP_FILL] = {"fill", 0, NULL},
    [MLFF_OP_ADD] = {"add", 2, mlff_vjp_add},
    [MLFF_OP_SCALE] = {"scale", 1, mlff_vjp_scale},
    [MLFF_OP_MUL] = {"mul", 2, mlff_vjp_mul},
    [MLFF_OP_CONCAT_COLS] = {"concat_cols", 2, mlff_vjp_concat_cols},
    [MLFF_OP_SLICE_COLS] = {"slice_cols", 1, NULL},
    [MLFF_OP_GATHER_ROWS] = {"gather_rows", 2, mlff_vjp_gather_rows},
    [MLFF_OP_SCATTER_ADD_ROWS] = {"scatter_add_rows", -1, mlff_vjp_scatter_add_rows},
    [MLFF_OP_SUM_COLS] = {"sum_cols", 1, mlff_vjp_sum_cols},
    [MLFF_OP_BROADCAST_COLS] = {"broadcast_cols", 1, NULL},
    [MLFF_OP_LINEAR] = {"linear", -1, mlff_vjp_linear},
    [MLFF_OP_LINEAR_VJP] = {"linear_vjp", -1, NULL},
    [MLFF_OP_CELU] = {"celu", 1, mlff_vjp_celu},
    [MLFF_OP_CELU_VJP] = {"celu_vjp", 2, NULL},
    [MLFF_OP_PAIR_VECTORS] = {"pair_vectors", -1, mlff_vjp_pair_vectors},
    [MLFF_OP_PAIR_VECTORS_VJP] = {"pair_vectors_vjp", -1, NULL},
    [MLFF_OP_PAIR_SHIFTS] = {"pair_shifts", 4, mlff_vjp_pair_shifts},
    [MLFF_OP_PAIR_SHIFTS_VJP] = {"pair_shifts_vjp", 3, NULL},
    [MLFF_OP_NORM3] = {"norm3", 1, mlff_vjp_norm3},
    [MLFF_OP_NORM3_VJP] = {"norm3_vjp", 2, NULL},
    [MLFF_OP_COSINE_CUTOFF] = {"cosine_cutoff", 1, mlff_vjp_cosine_cutoff},
    [MLFF_OP_COSINE_CUTOFF_VJP] = {"cosine_cutoff_vjp", 2, NULL},
    [MLFF_OP_ANI_RADIAL] = {"ani_radial", 4, mlff_vjp_ani_radial},
    [MLFF_OP_ANI_RADIAL_VJP] = {"ani_radial_vjp", 5, NULL},
    [MLFF_OP_ANI_ANGULAR] = {"ani_angular", -1, mlff_vjp_ani_angular},
    [MLFF_OP_ANI_ANGULAR_VJP] = {"ani_angular_vjp", 7, NULL},
    [MLFF_OP_PAIR_TRIPLES] = {"pair_triples", 2, NULL},
    /* n_inputs -1: as many as the node needs (the builders check them). */
    [MLFF_OP_CELU_MLP] = {"celu_mlp", -1, mlff_vjp_celu_mlp},
    [MLFF_OP_CELU_MLP_VJP] = {"celu_mlp_vjp", -1, NULL},
};

const mlff_op_info *mlff_op_get(mlff_op op)
{
    return &op_table[op];
}

int op_inputs_valid(mlff_graph *g, const int *inputs, int n)
{
    if (g->error.status != MLFF_OK)
        return 0;
    for (int k = 0; k < n; k++)
        if (inputs[k] < 0 || inputs[k] >= g->n_tensors) {
            mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "an op was given an invalid tensor");
            return 0;
        }
    return 1;
}

int op_require(mlff_graph *g, int ok, mlff_op op, const char *what)
{
    if (!ok)
        mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "op %s: %s", op_table[op].name, what);
    return ok;
}

int op_node_like(mlff_graph *g, mlff_op op, const int *inputs, int n_inputs,
                 const mlff_op_attrs *attrs, mlff_dtype dtype, int like, int64_t cols)
{
    const mlff_graph_tensor t = op_tensor(g, like);
    return mlff_graph_add_node(g, op, inputs, n_inputs, attrs, dtype, t.rows_symbol, t.rows,
                               cols);
}
