/* Builders and VJPs of the row gather and scatter ops (the two are each other's VJP). */
#include "op_internal.h"

static int is_index_column(const mlff_graph *g, int t)
{
    return op_tensor(g, t)->dtype == MLFF_DTYPE_I32 && op_tensor(g, t)->cols == 1;
}

int mlff_op_gather_rows(mlff_graph *g, int x, int index, mlff_dtype out_dtype)
{
    int in[2] = {x, index};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    if (!op_require(g, is_index_column(g, index) && op_tensor(g, x)->dtype != MLFF_DTYPE_I32 &&
                           out_dtype != MLFF_DTYPE_I32,
                    MLFF_OP_GATHER_ROWS, "needs real rows and an I32 index column"))
        return -1;
    return op_node_like(g, MLFF_OP_GATHER_ROWS, in, 2, NULL, out_dtype, index,
                        op_tensor(g, x)->cols);
}

OP_VJP(mlff_vjp_gather_rows)
{
    mlff_graph_node n = op_node(g, node);
    const mlff_graph_tensor *x = op_tensor(g, n.inputs[0]);
    grads[0] = mlff_op_scatter_add_rows(g, gy, n.inputs[1], x->rows_symbol, x->rows, x->dtype);
}

static int scatter_add_rows(mlff_graph *g, int x, int index, int rows_symbol, int64_t rows, mlff_dtype out_dtype,
                            int few_rows)
{
    int in[2] = {x, index};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    if (!op_require(g, is_index_column(g, index) && mlff_graph_same_rows(g, x, index) &&
                           op_tensor(g, x)->dtype != MLFF_DTYPE_I32 && out_dtype != MLFF_DTYPE_I32,
                    MLFF_OP_SCATTER_ADD_ROWS, "needs real rows and an I32 index per row"))
        return -1;
    mlff_op_attrs a = {0};
    a.i[0] = few_rows;
    return mlff_graph_add_node(g, MLFF_OP_SCATTER_ADD_ROWS, in, 2, &a, out_dtype, rows_symbol,
                               rows, op_tensor(g, x)->cols);
}

int mlff_op_scatter_add_rows(mlff_graph *g, int x, int index, int rows_symbol, int64_t rows,
                             mlff_dtype out_dtype)
{
    return scatter_add_rows(g, x, index, rows_symbol, rows, out_dtype, 0);
}

int mlff_op_scatter_add_few_rows(mlff_graph *g, int x, int index, int rows_symbol, int64_t rows,
                                 mlff_dtype out_dtype)
{
    return scatter_add_rows(g, x, index, rows_symbol, rows, out_dtype, 1);
}

OP_VJP(mlff_vjp_scatter_add_rows)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_gather_rows(g, gy, n.inputs[1], op_tensor(g, n.inputs[0])->dtype);
}
