#include "ops.h"

#include <stdarg.h>
#include <stdio.h>

#include "op_internal.h"

/* The registry: name, input count, VJP and JVP of every op, in enum order. */
static const mlff_op_info op_table[MLFF_OP_COUNT] = {
    [MLFF_OP_FILL] = {"fill", 0, NULL, NULL},
    [MLFF_OP_ADD] = {"add", 2, mlff_vjp_add, mlff_jvp_add},
    [MLFF_OP_SCALE] = {"scale", 1, mlff_vjp_scale, mlff_jvp_scale},
    [MLFF_OP_MUL] = {"mul", 2, mlff_vjp_mul, mlff_jvp_mul},
    [MLFF_OP_CONCAT_COLS] = {"concat_cols", 2, mlff_vjp_concat_cols, mlff_jvp_concat_cols},
    [MLFF_OP_SLICE_COLS] = {"slice_cols", 1, NULL, mlff_jvp_slice_cols},
    [MLFF_OP_GATHER_ROWS] = {"gather_rows", 2, mlff_vjp_gather_rows, mlff_jvp_gather_rows},
    [MLFF_OP_SCATTER_ADD_ROWS] = {"scatter_add_rows", -1, mlff_vjp_scatter_add_rows, mlff_jvp_scatter_add_rows},
    [MLFF_OP_SUM_COLS] = {"sum_cols", 1, mlff_vjp_sum_cols, mlff_jvp_sum_cols},
    [MLFF_OP_BROADCAST_COLS] = {"broadcast_cols", 1, NULL, mlff_jvp_broadcast_cols},
    [MLFF_OP_LINEAR] = {"linear", -1, mlff_vjp_linear, mlff_jvp_linear},
    [MLFF_OP_LINEAR_VJP] = {"linear_vjp", -1, NULL, mlff_jvp_linear_vjp},
    [MLFF_OP_CELU] = {"celu", 1, mlff_vjp_celu, mlff_jvp_celu},
    [MLFF_OP_CELU_VJP] = {"celu_vjp", 2, NULL, mlff_jvp_celu_vjp},
    [MLFF_OP_PAIR_VECTORS] = {"pair_vectors", -1, mlff_vjp_pair_vectors, mlff_jvp_pair_vectors},
    [MLFF_OP_PAIR_VECTORS_VJP] = {"pair_vectors_vjp", -1, NULL, mlff_jvp_pair_vectors_vjp},
    [MLFF_OP_PAIR_SHIFTS] = {"pair_shifts", 4, mlff_vjp_pair_shifts, mlff_jvp_pair_shifts},
    [MLFF_OP_PAIR_SHIFTS_VJP] = {"pair_shifts_vjp", 3, NULL, mlff_jvp_pair_shifts_vjp},
    [MLFF_OP_NORM3] = {"norm3", 1, mlff_vjp_norm3, mlff_jvp_norm3},
    [MLFF_OP_NORM3_VJP] = {"norm3_vjp", 2, NULL, mlff_jvp_norm3_vjp},
    [MLFF_OP_COSINE_CUTOFF] = {"cosine_cutoff", 1, mlff_vjp_cosine_cutoff, mlff_jvp_cosine_cutoff},
    [MLFF_OP_COSINE_CUTOFF_VJP] = {"cosine_cutoff_vjp", 2, NULL, mlff_jvp_cosine_cutoff_vjp},
    [MLFF_OP_ANI_RADIAL] = {"ani_radial", 4, mlff_vjp_ani_radial, mlff_jvp_ani_radial},
    [MLFF_OP_ANI_RADIAL_VJP] = {"ani_radial_vjp", 5, NULL, mlff_jvp_ani_radial_vjp},
    [MLFF_OP_ANI_ANGULAR] = {"ani_angular", -1, mlff_vjp_ani_angular, mlff_jvp_ani_angular},
    [MLFF_OP_ANI_ANGULAR_VJP] = {"ani_angular_vjp", 7, NULL, mlff_jvp_ani_angular_vjp},
    [MLFF_OP_PAIR_TRIPLES] = {"pair_triples", 2, NULL, NULL},
    /* n_inputs -1: as many as the node needs (the builders check them). */
    [MLFF_OP_CELU_MLP] = {"celu_mlp", -1, mlff_vjp_celu_mlp, mlff_jvp_celu_mlp},
    [MLFF_OP_CELU_MLP_VJP] = {"celu_mlp_vjp", -1, NULL, mlff_jvp_celu_mlp_vjp},
    [MLFF_OP_UNARY] = {"unary", 1, mlff_vjp_unary, mlff_jvp_unary},
    [MLFF_OP_GATHER_COLS] = {"gather_cols", 2, mlff_vjp_gather_cols, mlff_jvp_gather_cols},
    [MLFF_OP_SCATTER_ADD_COLS] = {"scatter_add_cols", 3, mlff_vjp_scatter_add_cols, mlff_jvp_scatter_add_cols},
    [MLFF_OP_AFFINE_COLS] = {"affine_cols", -1, mlff_vjp_affine_cols, mlff_jvp_affine_cols},
    [MLFF_OP_INDEX_COLUMN] = {"index_column", 1, NULL, NULL},
    [MLFF_OP_ROW_DIFFERENCES] = {"row_differences", 2, mlff_vjp_row_differences, mlff_jvp_row_differences},
    /* The second-order ops are the tangent pass's: nothing differentiates them again. */
    [MLFF_OP_CELU_VJP_JVP] = {"celu_vjp_jvp", -1, NULL, NULL},
    [MLFF_OP_NORM3_JVP] = {"norm3_jvp", 2, NULL, NULL},
    [MLFF_OP_NORM3_VJP_JVP] = {"norm3_vjp_jvp", -1, NULL, NULL},
    [MLFF_OP_COSINE_CUTOFF_VJP_JVP] = {"cosine_cutoff_vjp_jvp", -1, NULL, NULL},
    [MLFF_OP_ANI_RADIAL_JVP] = {"ani_radial_jvp", 5, NULL, NULL},
    [MLFF_OP_ANI_RADIAL_VJP_JVP] = {"ani_radial_vjp_jvp", -1, NULL, NULL},
    [MLFF_OP_ANI_ANGULAR_JVP] = {"ani_angular_jvp", 7, NULL, NULL},
    [MLFF_OP_ANI_ANGULAR_VJP_JVP] = {"ani_angular_vjp_jvp", -1, NULL, NULL},
};

int64_t mlff_op_tangents(mlff_op op, const mlff_op_attrs *a)
{
    int k = -1;
    switch (op) {
    case MLFF_OP_MUL:
    case MLFF_OP_CONCAT_COLS:
    case MLFF_OP_CELU_VJP:
    case MLFF_OP_COSINE_CUTOFF_VJP:
    case MLFF_OP_PAIR_SHIFTS:
    case MLFF_OP_PAIR_SHIFTS_VJP:
    case MLFF_OP_CELU_VJP_JVP:
    case MLFF_OP_COSINE_CUTOFF_VJP_JVP:
    case MLFF_OP_NORM3_JVP:
    case MLFF_OP_NORM3_VJP_JVP:
    case MLFF_OP_GATHER_COLS:
    case MLFF_OP_SCATTER_ADD_COLS:
    case MLFF_OP_AFFINE_COLS:
        k = 0;
        break;
    case MLFF_OP_SUM_COLS:
    case MLFF_OP_BROADCAST_COLS:
    case MLFF_OP_ANI_RADIAL_JVP:
    case MLFF_OP_ANI_RADIAL_VJP_JVP:
        k = 1;
        break;
    case MLFF_OP_SLICE_COLS:
    case MLFF_OP_SCATTER_ADD_ROWS:
    case MLFF_OP_LINEAR:
    case MLFF_OP_LINEAR_VJP:
    case MLFF_OP_ANI_ANGULAR_JVP:
    case MLFF_OP_ANI_ANGULAR_VJP_JVP:
        k = 2;
        break;
    default:
        break;
    }
    return k >= 0 && a->i[k] > 1 ? a->i[k] : 1;
}

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
