/* Builders and VJPs of the dense-network ops: grouped linear layers and CELU. */
#include "op_internal.h"

int mlff_op_linear(mlff_graph *g, int x, int weight, int bias, int64_t groups)
{
    int in[3] = {x, weight, bias};
    if (!op_inputs_valid(g, in, 3))
        return -1;
    const mlff_graph_tensor *tx = op_tensor(g, x), *w = op_tensor(g, weight), *b = op_tensor(g, bias);
    int ok = groups > 0 && w->rows_symbol == MLFF_FIXED_ROWS && w->rows % groups == 0 &&
             tx->cols == groups * w->cols && b->rows_symbol == MLFF_FIXED_ROWS &&
             b->rows == w->rows && b->cols == 1 && tx->dtype == w->dtype && w->dtype == b->dtype;
    if (!op_require(g, ok, MLFF_OP_LINEAR, "shapes of x, W, b do not match"))
        return -1;
    mlff_op_attrs a = {.i = {groups}};
    return op_node_like(g, MLFF_OP_LINEAR, in, 3, &a, tx->dtype, x, w->rows);
}

OP_VJP(mlff_vjp_linear)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_linear_vjp(g, gy, n.inputs[1], n.attrs.i[0]);
}

int mlff_op_linear_vjp(mlff_graph *g, int gy, int weight, int64_t groups)
{
    int in[2] = {gy, weight};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor *t = op_tensor(g, gy), *w = op_tensor(g, weight);
    if (!op_require(g, groups > 0 && t->cols == w->rows && w->rows % groups == 0,
                    MLFF_OP_LINEAR_VJP, "shapes of gy and W do not match"))
        return -1;
    mlff_op_attrs a = {.i = {groups}};
    return op_node_like(g, MLFF_OP_LINEAR_VJP, in, 2, &a, t->dtype, gy, groups * w->cols);
}

int mlff_op_celu(mlff_graph *g, int x, double alpha)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    if (!op_require(g, alpha > 0.0, MLFF_OP_CELU, "alpha must be positive"))
        return -1;
    mlff_op_attrs a = {.f = {alpha}};
    return op_node_like(g, MLFF_OP_CELU, &x, 1, &a, op_tensor(g, x)->dtype, x, op_tensor(g, x)->cols);
}

OP_VJP(mlff_vjp_celu)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_celu_vjp(g, gy, n.output, n.attrs.f[0]);
}

int mlff_op_celu_vjp(mlff_graph *g, int gy, int y, double alpha)
{
    int in[2] = {gy, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    mlff_op_attrs a = {.f = {alpha}};
    return op_node_like(g, MLFF_OP_CELU_VJP, in, 2, &a, op_tensor(g, gy)->dtype, gy,
                        op_tensor(g, gy)->cols);
}
