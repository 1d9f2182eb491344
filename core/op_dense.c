/* Builders and VJPs of the dense-network ops: grouped linear layers and CELU. */
#include "op_internal.h"

/* The stacks that starts (-1: none) makes, into a->i[1]; 0 if starts is not
 * an I32 column of at least 3 rows (2 runs) or weight_rows (0: not checked
 * here) do not split into that many stacks. */
static int set_stacks(mlff_graph *g, int starts, int64_t weight_rows, mlff_op_attrs *a)
{
    if (starts < 0) {
        a->i[1] = 1;
        return 1;
    }
    const mlff_graph_tensor t = op_tensor(g, starts);
    if (t.dtype != MLFF_DTYPE_I32 || t.cols != 1 || t.rows_symbol != MLFF_FIXED_ROWS || t.rows < 3)
        return 0;
    a->i[1] = t.rows - 1;
    return weight_rows % a->i[1] == 0;
}

/* The inputs, with starts last when there is one; their count. */
static int with_starts(int *in, int n, int starts)
{
    if (starts >= 0)
        in[n++] = starts;
    return n;
}

int mlff_op_linear(mlff_graph *g, int x, int weight, int bias, int64_t groups)
{
    return mlff_op_linear_stacked(g, x, weight, bias, groups, -1);
}

int mlff_op_linear_stacked(mlff_graph *g, int x, int weight, int bias, int64_t groups, int starts)
{
    int in[4] = {x, weight, bias};
    const int n_in = with_starts(in, 3, starts);
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor tx = op_tensor(g, x), w = op_tensor(g, weight), b = op_tensor(g, bias);
    mlff_op_attrs a = {.i = {groups}};
    int ok = groups > 0 && set_stacks(g, starts, w.rows, &a) && w.rows_symbol == MLFF_FIXED_ROWS &&
             w.rows % (groups * a.i[1]) == 0 && tx.cols == groups * w.cols &&
             b.rows_symbol == MLFF_FIXED_ROWS && b.rows == w.rows && b.cols == 1 && tx.dtype == w.dtype &&
             w.dtype == b.dtype;
    if (!op_require(g, ok, MLFF_OP_LINEAR, "shapes of x, W, b (and the runs' starts) do not match"))
        return -1;
    return op_node_like(g, MLFF_OP_LINEAR, in, n_in, &a, tx.dtype, x, w.rows / a.i[1]);
}

/* A stacked node's starts, or -1. */
static int starts_of(const mlff_graph_node *n)
{
    return mlff_op_stacks(&n->attrs) > 1 ? n->inputs[n->n_inputs - 1] : -1;
}

OP_VJP(mlff_vjp_linear)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_linear_vjp(g, gy, n.inputs[1], n.attrs.i[0], starts_of(&n));
}

int mlff_op_linear_vjp(mlff_graph *g, int gy, int weight, int64_t groups, int starts)
{
    int in[3] = {gy, weight};
    const int n_in = with_starts(in, 2, starts);
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, gy), w = op_tensor(g, weight);
    mlff_op_attrs a = {.i = {groups}};
    if (!op_require(g, groups > 0 && set_stacks(g, starts, w.rows, &a) && t.cols * a.i[1] == w.rows &&
                           w.rows % (groups * a.i[1]) == 0,
                    MLFF_OP_LINEAR_VJP, "shapes of gy and W (and the runs' starts) do not match"))
        return -1;
    return op_node_like(g, MLFF_OP_LINEAR_VJP, in, n_in, &a, t.dtype, gy, groups * w.cols);
}

int mlff_op_celu(mlff_graph *g, int x, double alpha)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    if (!op_require(g, alpha > 0.0, MLFF_OP_CELU, "alpha must be positive"))
        return -1;
    mlff_op_attrs a = {.f = {alpha}};
    return op_node_like(g, MLFF_OP_CELU, &x, 1, &a, op_tensor(g, x).dtype, x, op_tensor(g, x).cols);
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
    return op_node_like(g, MLFF_OP_CELU_VJP, in, 2, &a, op_tensor(g, gy).dtype, gy,
                        op_tensor(g, gy).cols);
}

/* The widths w_0..w_k of a CELU_MLP's layers, from x's width per group and
 * the weights of `per_row` = groups x stacks networks (0 if they do not
 * chain or are not of dtype). */
static int mlp_widths(mlff_graph *g, int64_t w0, const int *weights, int layers, int64_t per_row, mlff_dtype dtype,
                      int64_t widths[MLFF_MLP_MAX_LAYERS + 1])
{
    widths[0] = w0;
    for (int l = 0; l < layers; l++) {
        const mlff_graph_tensor w = op_tensor(g, weights[l]);
        if (w.rows_symbol != MLFF_FIXED_ROWS || w.rows % per_row != 0 || w.cols != widths[l] ||
            w.dtype != dtype)
            return 0;
        widths[l + 1] = w.rows / per_row;
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
    return mlff_op_celu_mlp_stacked(g, x, weights, biases, layers, groups, alpha, -1);
}

int mlff_op_celu_mlp_stacked(mlff_graph *g, int x, const int *weights, const int *biases, int layers,
                             int64_t groups, double alpha, int starts)
{
    int in[MLFF_MAX_OP_INPUTS] = {x};
    if (!op_require(g, layers >= 1 && layers <= MLFF_MLP_MAX_LAYERS, MLFF_OP_CELU_MLP, "bad layer count"))
        return -1;
    for (int l = 0; l < layers; l++) {
        in[1 + 2 * l] = weights[l];
        in[2 + 2 * l] = biases[l];
    }
    const int n_in = with_starts(in, 1 + 2 * layers, starts);
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor tx = op_tensor(g, x);
    mlff_op_attrs a = {.f = {alpha}, .i = {groups}};
    int64_t widths[MLFF_MLP_MAX_LAYERS + 1];
    int ok = groups > 0 && tx.cols % groups == 0 && alpha > 0 && set_stacks(g, starts, 0, &a) &&
             mlp_widths(g, tx.cols / groups, weights, layers, groups * a.i[1], tx.dtype, widths);
    for (int l = 0; ok && l < layers; l++) {
        const mlff_graph_tensor b = op_tensor(g, biases[l]);
        ok = b.rows_symbol == MLFF_FIXED_ROWS && b.rows == groups * a.i[1] * widths[l + 1] && b.cols == 1 &&
             b.dtype == op_tensor(g, x).dtype;
    }
    if (!op_require(g, ok, MLFF_OP_CELU_MLP, "shapes of x, the weights and biases (and the runs' starts) do not chain"))
        return -1;
    return op_node_like(g, MLFF_OP_CELU_MLP, in, n_in, &a, op_tensor(g, x).dtype, x,
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
    const int layers = mlff_mlp_layers(n.op, n.n_inputs, &n.attrs);
    int weights[MLFF_MLP_MAX_LAYERS];
    for (int l = 0; l < layers; l++)
        weights[l] = n.inputs[1 + 2 * l];
    const int64_t result_cols = op_tensor(g, weights[layers - 1]).rows / mlff_op_stacks(&n.attrs);
    grads[0] = mlff_op_celu_mlp_vjp(g, result_gradient(g, gy, result_cols), n.output, weights, layers, n.attrs.i[0],
                                    n.attrs.f[0], starts_of(&n));
}

int mlff_op_celu_mlp_vjp(mlff_graph *g, int gy, int y, const int *weights, int layers, int64_t groups,
                         double alpha, int starts)
{
    int in[MLFF_MAX_OP_INPUTS] = {gy, y};
    if (!op_require(g, layers >= 1 && layers <= MLFF_MLP_MAX_LAYERS, MLFF_OP_CELU_MLP_VJP, "bad layer count"))
        return -1;
    for (int l = 0; l < layers; l++)
        in[2 + l] = weights[l];
    const int n_in = with_starts(in, 2 + layers, starts);
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    /* x's width is the first weights' columns. */
    mlff_op_attrs a = {.f = {alpha}, .i = {groups}};
    int64_t widths[MLFF_MLP_MAX_LAYERS + 1];
    int ok = groups > 0 && set_stacks(g, starts, 0, &a) &&
             mlp_widths(g, op_tensor(g, weights[0]).cols, weights, layers, groups * a.i[1], op_tensor(g, gy).dtype,
                        widths);
    const int64_t cols = ok ? mlp_out_cols(widths, layers, groups) : -1;
    const int64_t gy_cols = op_tensor(g, gy).cols;
    ok = ok && (gy_cols == cols || gy_cols == groups * widths[layers]) && op_tensor(g, y).cols == cols &&
         mlff_graph_same_rows(g, gy, y);
    if (!op_require(g, ok, MLFF_OP_CELU_MLP_VJP, "shapes of gy, y and the weights (and the runs' starts) do not match"))
        return -1;
    return op_node_like(g, MLFF_OP_CELU_MLP_VJP, in, n_in, &a, op_tensor(g, gy).dtype, gy, groups * widths[0]);
}

/* ---- T-blocked forms and tangents (core/ops.h, "Tangents") ---- */

int mlff_op_linear_blocks(mlff_graph *g, int x, int weight, int bias, int64_t groups, int starts, int64_t n_tangents)
{
    int in[4] = {x, weight, bias};
    const int n_in = with_starts(in, 3, starts);
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor tx = op_tensor(g, x), w = op_tensor(g, weight), b = op_tensor(g, bias);
    mlff_op_attrs a = {.i = {groups, 1, n_tangents}};
    const int ok = groups > 0 && n_tangents > 0 && set_stacks(g, starts, w.rows, &a) &&
                   w.rows_symbol == MLFF_FIXED_ROWS && w.rows % (groups * a.i[1]) == 0 &&
                   tx.cols == n_tangents * groups * w.cols && b.rows_symbol == MLFF_FIXED_ROWS &&
                   b.rows == w.rows && b.cols == 1 && tx.dtype == w.dtype && w.dtype == b.dtype;
    if (!op_require(g, ok, MLFF_OP_LINEAR, "shapes of a T-blocked x, W and b do not match"))
        return -1;
    return op_node_like(g, MLFF_OP_LINEAR, in, n_in, &a, tx.dtype, x, n_tangents * w.rows / a.i[1]);
}

int mlff_op_linear_vjp_blocks(mlff_graph *g, int gy, int weight, int64_t groups, int starts, int64_t n_tangents)
{
    int in[3] = {gy, weight};
    const int n_in = with_starts(in, 2, starts);
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, gy), w = op_tensor(g, weight);
    mlff_op_attrs a = {.i = {groups, 1, n_tangents}};
    if (!op_require(g, groups > 0 && n_tangents > 0 && set_stacks(g, starts, w.rows, &a) &&
                           t.cols * a.i[1] == n_tangents * w.rows && w.rows % (groups * a.i[1]) == 0,
                    MLFF_OP_LINEAR_VJP, "shapes of a T-blocked gy and W do not match"))
        return -1;
    return op_node_like(g, MLFF_OP_LINEAR_VJP, in, n_in, &a, t.dtype, gy, n_tangents * groups * w.cols);
}

/* Zeros for the bias of a layer's tangent: d(xW + b) = dx W. */
static int zero_bias(mlff_graph *g, int bias)
{
    const mlff_graph_tensor b = op_tensor(g, bias);
    return mlff_op_fill(g, MLFF_FIXED_ROWS, b.rows, 1, b.dtype, 0.0);
}

/* The weights and biases carry no tangent (they are the model's), nor the
 * stacks' starts. */
static int only_first(mlff_graph *g, const mlff_graph_node *n, const int *dx)
{
    for (int j = 1; j < n->n_inputs; j++)
        if (!op_require(g, dx[j] < 0, n->op, "tangents of weights are not supported"))
            return 0;
    return 1;
}

OP_JVP(mlff_jvp_linear)
{
    const mlff_graph_node n = op_node(g, node);
    if (!only_first(g, &n, dx))
        return -1;
    return mlff_op_linear_blocks(g, dx[0], n.inputs[1], zero_bias(g, n.inputs[2]), n.attrs.i[0], starts_of(&n),
                                 n_tangents);
}

OP_JVP(mlff_jvp_linear_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    if (!only_first(g, &n, dx))
        return -1;
    return mlff_op_linear_vjp_blocks(g, dx[0], n.inputs[1], n.attrs.i[0], starts_of(&n), n_tangents);
}

int mlff_op_celu_vjp_blocks(mlff_graph *g, int gy, int y, double alpha, int64_t n_tangents)
{
    int in[2] = {gy, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, gy), b = op_tensor(g, y);
    if (!op_require(g, a.cols == n_tangents * b.cols && a.dtype == b.dtype && mlff_graph_same_rows(g, gy, y),
                    MLFF_OP_CELU_VJP, "needs a T-blocked gy and y of one block"))
        return -1;
    const mlff_op_attrs attrs = {.f = {alpha}, .i = {n_tangents}};
    return op_node_like(g, MLFF_OP_CELU_VJP, in, 2, &attrs, a.dtype, gy, a.cols);
}

/* dy = celu'(x) dx, celu' read from y as CELU_VJP reads it. */
OP_JVP(mlff_jvp_celu)
{
    const mlff_graph_node n = op_node(g, node);
    return mlff_op_celu_vjp_blocks(g, dx[0], n.output, n.attrs.f[0], n_tangents);
}

/* The tangent of CELU_VJP(gy, y), from dgy (or none) and dy (or none). */
static int celu_vjp_tangent(mlff_graph *g, int gy, int y, int dgy, int dy, double alpha, int64_t n_tangents)
{
    if (dy < 0)
        return dgy < 0 ? -1 : mlff_op_celu_vjp_blocks(g, dgy, y, alpha, n_tangents);
    const int in[4] = {gy, y, dy, dgy};
    const int n_in = dgy >= 0 ? 4 : 3;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, gy), b = op_tensor(g, y), d = op_tensor(g, dy);
    const int ok = a.cols == b.cols && d.cols == n_tangents * b.cols && a.dtype == b.dtype &&
                   d.dtype == b.dtype && (n_in == 3 || op_tensor(g, dgy).cols == d.cols) &&
                   mlff_graph_same_rows(g, gy, y) && mlff_graph_same_rows(g, dy, y);
    if (!op_require(g, ok, MLFF_OP_CELU_VJP_JVP, "needs gy and y of one block, dy (and dgy) T-blocked"))
        return -1;
    const mlff_op_attrs attrs = {.f = {alpha}, .i = {n_tangents}};
    return op_node_like(g, MLFF_OP_CELU_VJP_JVP, in, n_in, &attrs, a.dtype, gy, d.cols);
}

OP_JVP(mlff_jvp_celu_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    return celu_vjp_tangent(g, n.inputs[0], n.inputs[1], dx[0], dx[1], n.attrs.f[0], n_tangents);
}

/* A CELU_MLP's layers: widths and where each block starts in its output. */
typedef struct mlp_layout {
    int layers;
    int64_t groups, width[MLFF_MLP_MAX_LAYERS + 1], start[MLFF_MLP_MAX_LAYERS + 1];
    int weights[MLFF_MLP_MAX_LAYERS + 1], biases[MLFF_MLP_MAX_LAYERS + 1];
} mlp_layout;

static mlp_layout layout_of(const mlff_graph *g, const mlff_graph_node *n)
{
    mlp_layout m = {.layers = mlff_mlp_layers(n->op, n->n_inputs, &n->attrs), .groups = n->attrs.i[0]};
    for (int l = 1; l <= m.layers; l++) {
        m.weights[l] = n->inputs[n->op == MLFF_OP_CELU_MLP ? 2 * l - 1 : 1 + l];
        m.biases[l] = n->op == MLFF_OP_CELU_MLP ? n->inputs[2 * l] : -1;
        m.width[l] = op_tensor(g, m.weights[l]).rows / (m.groups * mlff_op_stacks(&n->attrs));
    }
    m.width[0] = op_tensor(g, m.weights[1]).cols;
    m.start[m.layers] = 0;
    int64_t at = m.groups * m.width[m.layers];
    for (int l = 1; l < m.layers; l++) {
        m.start[l] = at;
        at += m.groups * m.width[l];
    }
    return m;
}

/*
 * A CELU_MLP's tangent, layer by layer: dz_l = W_l dh_{l-1} (a dense layer
 * on T times the rows), dh_l = celu'(z_l) dz_l from the hidden block h_l of
 * its output; the blocks' tangents in the output's order. The fused
 * kernel's second order is these dense ops: a GPU runs them as GEMMs.
 */
OP_JVP(mlff_jvp_celu_mlp)
{
    const mlff_graph_node n = op_node(g, node);
    if (!only_first(g, &n, dx))
        return -1;
    const mlp_layout m = layout_of(g, &n);
    const int starts = starts_of(&n);
    int dh[MLFF_MLP_MAX_LAYERS + 1];
    dh[0] = dx[0];
    for (int l = 1; l <= m.layers; l++) {
        const int dz = mlff_op_linear_blocks(g, dh[l - 1], m.weights[l], zero_bias(g, m.biases[l]), m.groups, starts,
                                             n_tangents);
        dh[l] = l == m.layers ? dz
                              : mlff_op_celu_vjp_blocks(g, dz, mlff_op_slice_cols(g, n.output, m.start[l],
                                                                                  m.groups * m.width[l]),
                                                        n.attrs.f[0], n_tangents);
    }
    int dy = dh[m.layers];
    for (int l = 1; l < m.layers; l++)
        dy = mlff_op_concat_blocks(g, dy, dh[l], n_tangents);
    return dy;
}

/*
 * A CELU_MLP_VJP's tangent: its backward chain again, primal (a_l, the
 * gradient of h_l; G_l = celu'(z_l) a_l, of z_l) and tangent side by side:
 * dG_l = CELU_VJP's tangent from da_l and dh_l, da_l = W_{l+1}^T dG_{l+1}.
 */
OP_JVP(mlff_jvp_celu_mlp_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    const int starts = starts_of(&n);
    for (int j = 2; j < n.n_inputs; j++)
        if (!op_require(g, dx[j] < 0, n.op, "tangents of weights are not supported"))
            return -1;
    const mlp_layout m = layout_of(g, &n);
    const int gy = n.inputs[0], y = n.inputs[1], dgy = dx[0], dy = dx[1];
    const double alpha = n.attrs.f[0];
    const int whole = op_tensor(g, gy).cols == op_tensor(g, y).cols; /* gy has the hidden blocks too */
    const int64_t top = m.groups * m.width[m.layers];
    int grad = whole ? mlff_op_slice_cols(g, gy, 0, top) : gy;
    int dgrad = dgy < 0 ? -1 : whole ? mlff_op_slice_blocks(g, dgy, 0, top, n_tangents) : dgy;
    for (int l = m.layers - 1; l >= 1; l--) {
        const int64_t cols = m.groups * m.width[l];
        int a = mlff_op_linear_vjp(g, grad, m.weights[l + 1], m.groups, starts);
        int da = dgrad >= 0 ? mlff_op_linear_vjp_blocks(g, dgrad, m.weights[l + 1], m.groups, starts, n_tangents) : -1;
        if (whole) {
            a = mlff_op_add(g, a, mlff_op_slice_cols(g, gy, m.start[l], cols));
            if (dgy >= 0)
                da = op_add_tangents(g, da, mlff_op_slice_blocks(g, dgy, m.start[l], cols, n_tangents));
        }
        const int h = mlff_op_slice_cols(g, y, m.start[l], cols);
        const int dh = dy >= 0 ? mlff_op_slice_blocks(g, dy, m.start[l], cols, n_tangents) : -1;
        dgrad = celu_vjp_tangent(g, a, h, da, dh, alpha, n_tangents);
        grad = mlff_op_celu_vjp(g, a, h, alpha);
    }
    return dgrad >= 0 ? mlff_op_linear_vjp_blocks(g, dgrad, m.weights[1], m.groups, starts, n_tangents)
                      : op_zero_tangent(g, n.output, n_tangents);
}
