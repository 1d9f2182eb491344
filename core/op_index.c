/* Builders and VJPs of the row gather and scatter ops (the two are each other's VJP). */
#include "op_internal.h"

static int is_index_column(const mlff_graph *g, int t)
{
    return op_tensor(g, t).dtype == MLFF_DTYPE_I32 && op_tensor(g, t).cols == 1;
}

int mlff_op_gather_rows(mlff_graph *g, int x, int index, mlff_dtype out_dtype)
{
    int in[2] = {x, index};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    if (!op_require(g, is_index_column(g, index) && op_tensor(g, x).dtype != MLFF_DTYPE_I32 &&
                           out_dtype != MLFF_DTYPE_I32,
                    MLFF_OP_GATHER_ROWS, "needs real rows and an I32 index column"))
        return -1;
    return op_node_like(g, MLFF_OP_GATHER_ROWS, in, 2, NULL, out_dtype, index,
                        op_tensor(g, x).cols);
}

OP_VJP(mlff_vjp_gather_rows)
{
    mlff_graph_node n = op_node(g, node);
    const mlff_graph_tensor x = op_tensor(g, n.inputs[0]);
    grads[0] = mlff_op_scatter_add_rows(g, gy, n.inputs[1], x.rows_symbol, x.rows, x.dtype);
}

static int scatter_add_rows(mlff_graph *g, const int *in, int n_in, const mlff_op_attrs *a, int rows_symbol,
                            int64_t rows, mlff_dtype out_dtype)
{
    const int x = in[0], index = in[1];
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    if (!op_require(g, is_index_column(g, index) && mlff_graph_same_rows(g, x, index) &&
                           op_tensor(g, x).dtype != MLFF_DTYPE_I32 && out_dtype != MLFF_DTYPE_I32,
                    MLFF_OP_SCATTER_ADD_ROWS, "needs real rows and an I32 index per row"))
        return -1;
    return mlff_graph_add_node(g, MLFF_OP_SCATTER_ADD_ROWS, in, n_in, a, out_dtype, rows_symbol, rows,
                               a->i[1] ? 1 : op_tensor(g, x).cols);
}

int mlff_op_scatter_add_rows(mlff_graph *g, int x, int index, int rows_symbol, int64_t rows,
                             mlff_dtype out_dtype)
{
    const int in[2] = {x, index};
    const mlff_op_attrs a = {0};
    return scatter_add_rows(g, in, 2, &a, rows_symbol, rows, out_dtype);
}

int mlff_op_scatter_add_few_rows(mlff_graph *g, int x, int index, int rows_symbol, int64_t rows,
                                 mlff_dtype out_dtype)
{
    const int in[2] = {x, index};
    const mlff_op_attrs a = {.i = {1}};
    return scatter_add_rows(g, in, 2, &a, rows_symbol, rows, out_dtype);
}

int mlff_op_scatter_add_row_sums(mlff_graph *g, int x, int w, int64_t count, double factor, int index,
                                 int rows_symbol, int64_t rows, mlff_dtype out_dtype, int few_rows)
{
    const int in[3] = {x, index, w};
    const int n_in = w >= 0 ? 3 : 2;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor tx = op_tensor(g, x);
    const int weights_fit = n_in == 2 || (mlff_graph_same_rows(g, x, w) && op_tensor(g, w).cols == tx.cols &&
                                          op_tensor(g, w).dtype == tx.dtype);
    if (!op_require(g, count > 0 && count <= tx.cols && weights_fit, MLFF_OP_SCATTER_ADD_ROWS,
                    "needs a column count within x, and weights shaped like x"))
        return -1;
    const mlff_op_attrs a = {.f = {factor}, .i = {few_rows != 0, count}};
    return scatter_add_rows(g, in, n_in, &a, rows_symbol, rows, out_dtype);
}

/* The rows gathered back; with row sums, spread over the summed columns
 * (and times the weights) as SUM_COLS's gradient is. */
OP_VJP(mlff_vjp_scatter_add_rows)
{
    mlff_graph_node n = op_node(g, node);
    const mlff_graph_tensor x = op_tensor(g, n.inputs[0]);
    const int rows = mlff_op_gather_rows(g, gy, n.inputs[1], x.dtype);
    if (!n.attrs.i[1]) {
        grads[0] = rows;
        return;
    }
    const int spread = mlff_op_broadcast_cols(g, rows, x.cols, n.attrs.i[1], n.attrs.f[0]);
    if (n.n_inputs == 2) {
        grads[0] = spread;
        return;
    }
    grads[0] = mlff_op_mul(g, spread, n.inputs[2]);
    grads[2] = mlff_op_mul(g, spread, n.inputs[0]);
}

/* ---- tangents (core/ops.h, "Tangents") ---- */

OP_JVP(mlff_jvp_gather_rows)
{
    const mlff_graph_node n = op_node(g, node);
    (void)n_tangents;
    return mlff_op_gather_rows(g, dx[0], n.inputs[1], op_tensor(g, n.output).dtype);
}

/* Row sums of a T-blocked x, each block reduced as the op reduces x: out [n, T]. */
static int row_sums_blocks(mlff_graph *g, const mlff_graph_node *n, int x, int w, int64_t n_tangents)
{
    const int in[3] = {x, n->inputs[1], w};
    const int n_in = w >= 0 ? 3 : 2;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor out = op_tensor(g, n->output);
    mlff_op_attrs a = n->attrs;
    a.i[2] = n_tangents;
    return mlff_graph_add_node(g, MLFF_OP_SCATTER_ADD_ROWS, in, n_in, &a, out.dtype, out.rows_symbol, out.rows,
                               n_tangents);
}

/* Linear in x; with row sums also in the weights: d(sum x w) = sum dx w + sum x dw. */
OP_JVP(mlff_jvp_scatter_add_rows)
{
    const mlff_graph_node n = op_node(g, node);
    const mlff_graph_tensor out = op_tensor(g, n.output);
    if (!n.attrs.i[1]) {
        const int in[2] = {dx[0], n.inputs[1]};
        if (!op_inputs_valid(g, in, 2))
            return -1;
        return mlff_graph_add_node(g, MLFF_OP_SCATTER_ADD_ROWS, in, 2, &n.attrs, out.dtype, out.rows_symbol,
                                   out.rows, op_tensor(g, dx[0]).cols);
    }
    const int w = n.n_inputs == 3 ? n.inputs[2] : -1;
    const int dw = n.n_inputs == 3 ? dx[2] : -1;
    return op_add_tangents(g, dx[0] >= 0 ? row_sums_blocks(g, &n, dx[0], w, n_tangents) : -1,
                           dw >= 0 ? row_sums_blocks(g, &n, dw, n.inputs[0], n_tangents) : -1);
}
