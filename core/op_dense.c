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

/* The widths w_0..w_k of a CELU_MLP's layers, from x's width per group and
 * the weights (0 if they do not chain or are not of dtype). */
static int mlp_widths(mlff_graph *g, int64_t w0, const int *weights, int layers, int64_t groups, mlff_dtype dtype,
                      int64_t widths[MLFF_MLP_MAX_LAYERS + 1])
{
    widths[0] = w0;
    for (int l = 0; l < layers; l++) {
        const mlff_graph_tensor *w = op_tensor(g, weights[l]);
        if (w->rows_symbol != MLFF_FIXED_ROWS || w->rows % groups != 0 || w->cols != widths[l] ||
            w->dtype != dtype)
            return 0;
        widths[l + 1] = w->rows / groups;
    }
    for (int l = 0; l <= layers; l++)
        if (widths[l] < 1 || widths[l] > MLFF_MLP_MAX_WIDTH)
            return 0;
    return 1;
}

/* Columns of a CELU_MLP's output: the result, then every hidden layer's. */
static int64_t mlp_out_cols(const int64_t *widths, int layers, int64_t groups)
{
    int64_t cols = widths[layers];
    for (int l = 1; l < layers; l++)
        cols += widths[l];
    return groups * cols;
}

int mlff_op_celu_mlp(mlff_graph *g, int x, const int *weights, const int *biases, int layers,
                     int64_t groups, double alpha)
{
    int in[MLFF_MAX_OP_INPUTS] = {x};
    if (!op_require(g, layers >= 1 && layers <= MLFF_MLP_MAX_LAYERS, MLFF_OP_CELU_MLP, "bad layer count"))
        return -1;
    for (int l = 0; l < layers; l++) {
        in[1 + 2 * l] = weights[l];
        in[2 + 2 * l] = biases[l];
    }
    if (!op_inputs_valid(g, in, 1 + 2 * layers))
        return -1;
    const mlff_graph_tensor *tx = op_tensor(g, x);
    int64_t widths[MLFF_MLP_MAX_LAYERS + 1];
    int ok = groups > 0 && tx->cols % groups == 0 && alpha > 0 &&
             mlp_widths(g, tx->cols / groups, weights, layers, groups, tx->dtype, widths);
    for (int l = 0; ok && l < layers; l++) {
        const mlff_graph_tensor *b = op_tensor(g, biases[l]);
        ok = b->rows_symbol == MLFF_FIXED_ROWS && b->rows == groups * widths[l + 1] && b->cols == 1 &&
             b->dtype == op_tensor(g, x)->dtype;
    }
    if (!op_require(g, ok, MLFF_OP_CELU_MLP, "shapes of x, the weights and biases do not chain"))
        return -1;
    mlff_op_attrs a = {.f = {alpha}, .i = {groups}};
    return op_node_like(g, MLFF_OP_CELU_MLP, in, 1 + 2 * layers, &a, op_tensor(g, x)->dtype, x,
                        mlp_out_cols(widths, layers, groups));
}

/* gy of a CELU_MLP, or the gradient of its result block alone when gy is a
 * broadcast over that block and zeros after it (the VJP of the members'
 * mean): then the zeros of the hidden blocks are neither written nor read. */
static int result_gradient(mlff_graph *g, int gy, int64_t result_cols)
{
    const mlff_graph_node *n = mlff_graph_producer(g, gy);
    if (n && n->op == MLFF_OP_BROADCAST_COLS && n->attrs.i[0] == result_cols)
        return mlff_op_broadcast_cols(g, n->inputs[0], result_cols, result_cols, n->attrs.f[0]);
    return gy;
}

OP_VJP(mlff_vjp_celu_mlp)
{
    mlff_graph_node n = op_node(g, node);
    const int layers = (n.n_inputs - 1) / 2;
    int weights[MLFF_MLP_MAX_LAYERS];
    for (int l = 0; l < layers; l++)
        weights[l] = n.inputs[1 + 2 * l];
    grads[0] = mlff_op_celu_mlp_vjp(g, result_gradient(g, gy, op_tensor(g, weights[layers - 1])->rows), n.output,
                                    weights, layers, n.attrs.i[0], n.attrs.f[0]);
}

int mlff_op_celu_mlp_vjp(mlff_graph *g, int gy, int y, const int *weights, int layers, int64_t groups,
                         double alpha)
{
    int in[MLFF_MAX_OP_INPUTS] = {gy, y};
    if (!op_require(g, layers >= 1 && layers <= MLFF_MLP_MAX_LAYERS, MLFF_OP_CELU_MLP_VJP, "bad layer count"))
        return -1;
    for (int l = 0; l < layers; l++)
        in[2 + l] = weights[l];
    if (!op_inputs_valid(g, in, 2 + layers))
        return -1;
    /* x's width is the first weights' columns. */
    int64_t widths[MLFF_MLP_MAX_LAYERS + 1];
    int ok = groups > 0 && mlp_widths(g, op_tensor(g, weights[0])->cols, weights, layers, groups,
                                      op_tensor(g, gy)->dtype, widths);
    const int64_t cols = ok ? mlp_out_cols(widths, layers, groups) : -1;
    const int64_t gy_cols = op_tensor(g, gy)->cols;
    ok = ok && (gy_cols == cols || gy_cols == groups * widths[layers]) && op_tensor(g, y)->cols == cols &&
         mlff_graph_same_rows(g, gy, y);
    if (!op_require(g, ok, MLFF_OP_CELU_MLP_VJP, "shapes of gy, y and the weights do not match"))
        return -1;
    mlff_op_attrs a = {.f = {alpha}, .i = {groups}};
    return op_node_like(g, MLFF_OP_CELU_MLP_VJP, in, 2 + layers, &a, op_tensor(g, gy)->dtype, gy,
                        groups * widths[0]);
}
