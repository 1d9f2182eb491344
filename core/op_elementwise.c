/* Builders and VJPs of the shape-preserving and column ops. */
#include <stdlib.h>

#include "op_internal.h"

int mlff_op_fill(mlff_graph *g, int rows_symbol, int64_t rows, int64_t cols, mlff_dtype dtype,
                 double value)
{
    mlff_op_attrs a = {.f = {value}};
    return mlff_graph_add_node(g, MLFF_OP_FILL, NULL, 0, &a, dtype, rows_symbol, rows, cols);
}

int mlff_op_add(mlff_graph *g, int x, int y)
{
    int in[2] = {x, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, x), b = op_tensor(g, y);
    if (!op_require(g, a.dtype == b.dtype && a.cols == b.cols && mlff_graph_same_rows(g, x, y),
                    MLFF_OP_ADD, "operands differ in shape or dtype"))
        return -1;
    return op_node_like(g, MLFF_OP_ADD, in, 2, NULL, a.dtype, x, a.cols);
}

OP_VJP(mlff_vjp_add)
{
    (void)g;
    (void)node;
    grads[0] = gy;
    grads[1] = gy;
}

int mlff_op_scale(mlff_graph *g, int x, double factor)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    mlff_op_attrs a = {.f = {factor}};
    return op_node_like(g, MLFF_OP_SCALE, &x, 1, &a, op_tensor(g, x).dtype, x, op_tensor(g, x).cols);
}

OP_VJP(mlff_vjp_scale)
{
    grads[0] = mlff_op_scale(g, gy, op_node(g, node).attrs.f[0]);
}

int mlff_op_mul(mlff_graph *g, int x, int y)
{
    int in[2] = {x, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, x), b = op_tensor(g, y);
    if (!op_require(g, a.dtype == b.dtype && b.cols > 0 && a.cols % b.cols == 0 && mlff_graph_same_rows(g, x, y),
                    MLFF_OP_MUL, "operands differ in rows or dtype, or b's columns do not divide a's"))
        return -1;
    return op_node_like(g, MLFF_OP_MUL, in, 2, NULL, a.dtype, x, a.cols);
}

/* The map of a's columns onto b's (column c of a block of k is c % k), or
 * NULL (out of memory). */
static int32_t *tile_map(int64_t cols, int64_t k)
{
    int32_t *map = malloc((size_t)cols * sizeof *map);
    for (int64_t c = 0; map && c < cols; c++)
        map[c] = (int32_t)(c % k);
    return map;
}

/* gb [n, cols] summed onto b's k columns (each the sum over the blocks it
 * was applied to). */
static int sum_onto_tile(mlff_graph *g, int gb, int64_t k)
{
    const int64_t cols = op_tensor(g, gb).cols;
    if (k == 1)
        return mlff_op_sum_cols(g, gb, 1.0);
    int32_t *map = tile_map(cols, k);
    if (!map)
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory differentiating a product");
    const int summed = mlff_op_scatter_add_cols_of(g, gb, map, k);
    free(map);
    return summed;
}

OP_VJP(mlff_vjp_mul)
{
    mlff_graph_node n = op_node(g, node);
    int a = n.inputs[0], b = n.inputs[1];
    grads[0] = mlff_op_mul(g, gy, b);
    int gb = mlff_op_mul(g, gy, a);
    /* A broadcast column, or a block applied to each of a's, receives the
     * sum over the columns it was applied to. */
    if (gb >= 0 && op_tensor(g, b).cols != op_tensor(g, a).cols)
        gb = sum_onto_tile(g, gb, op_tensor(g, b).cols);
    grads[1] = gb;
}

int mlff_op_concat_cols(mlff_graph *g, int x, int y)
{
    int in[2] = {x, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, x), b = op_tensor(g, y);
    if (!op_require(g, a.dtype == b.dtype && mlff_graph_same_rows(g, x, y), MLFF_OP_CONCAT_COLS,
                    "operands differ in rows or dtype"))
        return -1;
    return op_node_like(g, MLFF_OP_CONCAT_COLS, in, 2, NULL, a.dtype, x, a.cols + b.cols);
}

OP_VJP(mlff_vjp_concat_cols)
{
    mlff_graph_node n = op_node(g, node);
    int64_t ka = op_tensor(g, n.inputs[0]).cols, kb = op_tensor(g, n.inputs[1]).cols;
    grads[0] = mlff_op_slice_cols(g, gy, 0, ka);
    grads[1] = mlff_op_slice_cols(g, gy, ka, kb);
}

int mlff_op_slice_cols(mlff_graph *g, int x, int64_t start, int64_t count)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, x);
    if (!op_require(g, start >= 0 && count > 0 && start + count <= t.cols, MLFF_OP_SLICE_COLS,
                    "columns out of range"))
        return -1;
    mlff_op_attrs a = {.i = {start, count}};
    return op_node_like(g, MLFF_OP_SLICE_COLS, &x, 1, &a, t.dtype, x, count);
}

int mlff_op_sum_cols(mlff_graph *g, int x, double factor)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    return mlff_op_sum_first_cols(g, x, op_tensor(g, x).cols, factor);
}

int mlff_op_sum_first_cols(mlff_graph *g, int x, int64_t count, double factor)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    if (!op_require(g, count > 0 && count <= op_tensor(g, x).cols, MLFF_OP_SUM_COLS, "bad column count"))
        return -1;
    mlff_op_attrs a = {.f = {factor}, .i = {count}};
    return op_node_like(g, MLFF_OP_SUM_COLS, &x, 1, &a, op_tensor(g, x).dtype, x, 1);
}

OP_VJP(mlff_vjp_sum_cols)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_broadcast_cols(g, gy, op_tensor(g, n.inputs[0]).cols, n.attrs.i[0], n.attrs.f[0]);
}

int mlff_op_broadcast_cols(mlff_graph *g, int x, int64_t cols, int64_t filled, double factor)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    if (!op_require(g, op_tensor(g, x).cols == 1 && cols > 0 && filled > 0 && filled <= cols,
                    MLFF_OP_BROADCAST_COLS, "needs one input column"))
        return -1;
    mlff_op_attrs a = {.f = {factor}, .i = {filled}};
    return op_node_like(g, MLFF_OP_BROADCAST_COLS, &x, 1, &a, op_tensor(g, x).dtype, x, cols);
}

/* ---- T-blocked forms and the tangents of the ops above (core/ops.h, "Tangents") ---- */

int op_zero_tangent(mlff_graph *g, int t, int64_t n_tangents)
{
    const mlff_graph_tensor x = op_tensor(g, t);
    return mlff_op_fill(g, x.rows_symbol, x.rows, n_tangents * x.cols, x.dtype, 0.0);
}

int op_add_tangents(mlff_graph *g, int a, int b)
{
    return a < 0 ? b : b < 0 ? a : mlff_op_add(g, a, b);
}

OP_JVP(mlff_jvp_add)
{
    (void)node;
    (void)n_tangents;
    return op_add_tangents(g, dx[0], dx[1]);
}

OP_JVP(mlff_jvp_scale)
{
    (void)n_tangents;
    return mlff_op_scale(g, dx[0], op_node(g, node).attrs.f[0]);
}

int mlff_op_mul_blocks(mlff_graph *g, int x, int y, int64_t n_tangents)
{
    int in[2] = {x, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, x), b = op_tensor(g, y);
    if (!op_require(g, a.dtype == b.dtype && (b.cols * n_tangents == a.cols || b.cols == 1) &&
                           mlff_graph_same_rows(g, x, y),
                    MLFF_OP_MUL, "needs a T-blocked operand and one block"))
        return -1;
    const mlff_op_attrs attrs = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_MUL, in, 2, &attrs, a.dtype, x, a.cols);
}

/* d(a b) = da b + a db; a broadcast column's tangent is spread first. */
OP_JVP(mlff_jvp_mul)
{
    const mlff_graph_node n = op_node(g, node);
    const int a = n.inputs[0], b = n.inputs[1];
    const int64_t cols = op_tensor(g, a).cols, k = op_tensor(g, b).cols;
    int db = dx[1];
    if (db >= 0 && k == 1) {
        db = mlff_op_broadcast_blocks(g, db, cols, cols, 1.0, n_tangents);
    } else if (db >= 0 && k != cols) {
        int32_t *map = tile_map(cols, k);
        db = map ? mlff_op_gather_cols_blocks_of(g, db, map, cols, n_tangents)
                 : mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory differentiating a product");
        free(map);
    }
    /* dx's T blocks of a's columns are T x cols / k blocks of b's. */
    const int64_t b_blocks = k == 1 ? n_tangents : n_tangents * (cols / k);
    return op_add_tangents(g, dx[0] >= 0 ? mlff_op_mul_blocks(g, dx[0], b, b_blocks) : -1,
                           db >= 0 ? mlff_op_mul_blocks(g, db, a, n_tangents) : -1);
}

int mlff_op_concat_blocks(mlff_graph *g, int x, int y, int64_t n_tangents)
{
    int in[2] = {x, y};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor a = op_tensor(g, x), b = op_tensor(g, y);
    if (!op_require(g, a.dtype == b.dtype && mlff_graph_same_rows(g, x, y) && a.cols % n_tangents == 0 &&
                           b.cols % n_tangents == 0,
                    MLFF_OP_CONCAT_COLS, "operands differ in rows or dtype, or are not T-blocked"))
        return -1;
    const mlff_op_attrs attrs = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_CONCAT_COLS, in, 2, &attrs, a.dtype, x, a.cols + b.cols);
}

OP_JVP(mlff_jvp_concat_cols)
{
    const mlff_graph_node n = op_node(g, node);
    return mlff_op_concat_blocks(g, op_tangent_or_zero(g, dx[0], n.inputs[0], n_tangents),
                                 op_tangent_or_zero(g, dx[1], n.inputs[1], n_tangents), n_tangents);
}

int mlff_op_slice_blocks(mlff_graph *g, int x, int64_t start, int64_t count, int64_t n_tangents)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, x);
    const int64_t cols = t.cols / n_tangents;
    if (!op_require(g, t.cols % n_tangents == 0 && start >= 0 && count > 0 && start + count <= cols,
                    MLFF_OP_SLICE_COLS, "columns out of range"))
        return -1;
    const mlff_op_attrs a = {.i = {start, count, n_tangents}};
    return op_node_like(g, MLFF_OP_SLICE_COLS, &x, 1, &a, t.dtype, x, n_tangents * count);
}

OP_JVP(mlff_jvp_slice_cols)
{
    const mlff_graph_node n = op_node(g, node);
    return mlff_op_slice_blocks(g, dx[0], n.attrs.i[0], n.attrs.i[1], n_tangents);
}

int mlff_op_sum_first_cols_blocks(mlff_graph *g, int x, int64_t count, double factor, int64_t n_tangents)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, x);
    if (!op_require(g, t.cols % n_tangents == 0 && count > 0 && count <= t.cols / n_tangents, MLFF_OP_SUM_COLS,
                    "bad column count"))
        return -1;
    const mlff_op_attrs a = {.f = {factor}, .i = {count, n_tangents}};
    return op_node_like(g, MLFF_OP_SUM_COLS, &x, 1, &a, t.dtype, x, n_tangents);
}

OP_JVP(mlff_jvp_sum_cols)
{
    const mlff_graph_node n = op_node(g, node);
    return mlff_op_sum_first_cols_blocks(g, dx[0], n.attrs.i[0], n.attrs.f[0], n_tangents);
}

int mlff_op_broadcast_blocks(mlff_graph *g, int x, int64_t cols, int64_t filled, double factor, int64_t n_tangents)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    if (!op_require(g, op_tensor(g, x).cols == n_tangents && cols > 0 && filled > 0 && filled <= cols,
                    MLFF_OP_BROADCAST_COLS, "needs one input column a direction"))
        return -1;
    const mlff_op_attrs a = {.f = {factor}, .i = {filled, n_tangents}};
    return op_node_like(g, MLFF_OP_BROADCAST_COLS, &x, 1, &a, op_tensor(g, x).dtype, x, n_tangents * cols);
}

OP_JVP(mlff_jvp_broadcast_cols)
{
    const mlff_graph_node n = op_node(g, node);
    return mlff_op_broadcast_blocks(g, dx[0], op_tensor(g, n.output).cols, n.attrs.i[0], n.attrs.f[0], n_tangents);
}
