/*
 * Builders, VJPs and tangents of the ops message-passing models are made of
 * (core/ops.h): elementwise functions, column maps (broadcasts and sums over
 * an axis of a flattened tensor), per-column constants, and a pair list's
 * side as a row index. Coarse models (ANI) have fused ops; these are the
 * fine, generic ones an exported PyTorch graph maps onto.
 */
#include <stdlib.h>

#include "counting_sort.h"
#include "op_internal.h"

static int is_real(const mlff_graph *g, int t)
{
    return op_tensor(g, t).dtype != MLFF_DTYPE_I32;
}

int mlff_op_unary(mlff_graph *g, int x, mlff_unary_kind kind, double factor, double p)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    if (!op_require(g, is_real(g, x) && kind >= 0 && kind < MLFF_UNARY_KINDS, MLFF_OP_UNARY,
                    "needs a real tensor and a known function"))
        return -1;
    const int with_p = kind == MLFF_UNARY_POW || kind == MLFF_UNARY_LESS || kind == MLFF_UNARY_LESS_EQUAL;
    const mlff_op_attrs a = {.f = {factor, with_p ? p : 0.0}, .i = {kind}};
    return op_node_like(g, MLFF_OP_UNARY, &x, 1, &a, op_tensor(g, x).dtype, x, op_tensor(g, x).cols);
}

/* The derivative of f * u(x) as a UNARY node of x, or -1 after failing the
 * graph; *zero where it is 0 everywhere (x^0). */
static int unary_derivative(mlff_graph *g, const mlff_graph_node *n, int *zero)
{
    const int x = n->inputs[0];
    const double f = n->attrs.f[0], p = n->attrs.f[1];
    *zero = 0;
    switch ((mlff_unary_kind)n->attrs.i[0]) {
    case MLFF_UNARY_EXP:
        return mlff_op_unary(g, x, MLFF_UNARY_EXP, f, 0);
    case MLFF_UNARY_SIN:
        return mlff_op_unary(g, x, MLFF_UNARY_COS, f, 0);
    case MLFF_UNARY_COS:
        return mlff_op_unary(g, x, MLFF_UNARY_SIN, -f, 0);
    case MLFF_UNARY_POW:
        *zero = p == 0.0;
        return *zero ? -1 : mlff_op_unary(g, x, MLFF_UNARY_POW, f * p, p - 1.0);
    case MLFF_UNARY_LOG:
        return mlff_op_unary(g, x, MLFF_UNARY_POW, f, -1.0);
    case MLFF_UNARY_LESS:
    case MLFF_UNARY_LESS_EQUAL:
        *zero = 1;
        return -1;
    case MLFF_UNARY_SIGMOID:
        return mlff_op_unary(g, x, MLFF_UNARY_SIGMOID_D1, f, 0);
    case MLFF_UNARY_SIGMOID_D1:
        return mlff_op_unary(g, x, MLFF_UNARY_SIGMOID_D2, f, 0);
    case MLFF_UNARY_SOFTPLUS:
    case MLFF_UNARY_SHIFTED_SOFTPLUS:
        return mlff_op_unary(g, x, MLFF_UNARY_SIGMOID, f, 0);
    case MLFF_UNARY_TANH:
        return mlff_op_unary(g, x, MLFF_UNARY_TANH_D1, f, 0);
    case MLFF_UNARY_TANH_D1:
        return mlff_op_unary(g, x, MLFF_UNARY_TANH_D2, f, 0);
    case MLFF_UNARY_SILU:
        return mlff_op_unary(g, x, MLFF_UNARY_SILU_D1, f, 0);
    case MLFF_UNARY_SILU_D1:
        return mlff_op_unary(g, x, MLFF_UNARY_SILU_D2, f, 0);
    default:
        return mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "op unary: function %lld is a second derivative, "
                               "differentiated again", (long long)n->attrs.i[0]);
    }
}

OP_VJP(mlff_vjp_unary)
{
    const mlff_graph_node n = op_node(g, node);
    int zero;
    const int d = unary_derivative(g, &n, &zero);
    grads[0] = zero ? -1 : mlff_op_mul(g, gy, d);
}

OP_JVP(mlff_jvp_unary)
{
    const mlff_graph_node n = op_node(g, node);
    int zero;
    const int d = unary_derivative(g, &n, &zero);
    if (zero)
        return op_zero_tangent(g, n.output, n_tangents);
    return mlff_op_mul_blocks(g, dx[0], d, n_tangents);
}

/* A column map: an I32 parameter [m, 1] with entries in [0, limit). */
static int map_valid(mlff_graph *g, mlff_op op, int map, int64_t limit)
{
    const mlff_graph_tensor t = op_tensor(g, map);
    if (!op_require(g, t.kind == MLFF_TENSOR_PARAM && t.dtype == MLFF_DTYPE_I32 && t.host_dtype == MLFF_DTYPE_I32 &&
                           t.cols == 1 && t.rows_symbol == MLFF_FIXED_ROWS && t.rows > 0 && t.host_data,
                    op, "needs a column map: an I32 parameter [m, 1]"))
        return 0;
    const int32_t *v = t.host_data;
    for (int64_t k = 0; k < t.rows; k++)
        if (!op_require(g, v[k] >= 0 && v[k] < limit, op, "a column map entry out of range"))
            return 0;
    return 1;
}

static int gather_cols(mlff_graph *g, int x, int map, int64_t n_tangents)
{
    const int in[2] = {x, map};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, x);
    if (!op_require(g, is_real(g, x) && t.cols % n_tangents == 0, MLFF_OP_GATHER_COLS, "needs real rows") ||
        !map_valid(g, MLFF_OP_GATHER_COLS, map, t.cols / n_tangents))
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_GATHER_COLS, in, 2, &a, t.dtype, x, n_tangents * op_tensor(g, map).rows);
}

/* A column map's inverse (SCATTER_ADD_COLS' third input): for each of the
 * cols targets, the columns mapped to it, ascending, as a CSR in one I32
 * parameter [cols + 1 + m, 1], the cols + 1 offsets first. A GPU's output
 * entry then reads its own columns instead of walking the whole map. */
static int inverse_map_param(mlff_graph *g, int map, int64_t cols)
{
    const mlff_graph_tensor t = op_tensor(g, map);
    const int64_t m = t.rows;
    int32_t *inverse = malloc((size_t)(cols + 1 + m) * sizeof *inverse);
    if (!inverse)
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory building a column map's inverse");
    mlff_counting_sort(t.host_data, 1, m, cols, inverse, inverse + cols + 1); /* entries checked: map_valid */
    return mlff_graph_param_take(g, "column map's inverse", MLFF_DTYPE_I32, cols + 1 + m, 1, MLFF_DTYPE_I32, inverse);
}

static int scatter_add_cols(mlff_graph *g, int x, int map, int64_t cols, int64_t n_tangents)
{
    int in[3] = {x, map, -1};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, x);
    if (!op_require(g, is_real(g, x) && cols > 0 && t.cols == n_tangents * op_tensor(g, map).rows,
                    MLFF_OP_SCATTER_ADD_COLS, "needs real rows of the map's length") ||
        !map_valid(g, MLFF_OP_SCATTER_ADD_COLS, map, cols) || (in[2] = inverse_map_param(g, map, cols)) < 0)
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents, cols}};
    return op_node_like(g, MLFF_OP_SCATTER_ADD_COLS, in, 3, &a, t.dtype, x, n_tangents * cols);
}

int mlff_op_gather_cols(mlff_graph *g, int x, int map)
{
    return gather_cols(g, x, map, 1);
}

int mlff_op_scatter_add_cols(mlff_graph *g, int x, int map, int64_t cols)
{
    return scatter_add_cols(g, x, map, cols, 1);
}

static int map_param(mlff_graph *g, const int32_t *map, int64_t m)
{
    return mlff_graph_param(g, "column map", MLFF_DTYPE_I32, m, 1, MLFF_DTYPE_I32, map);
}

int mlff_op_gather_cols_of(mlff_graph *g, int x, const int32_t *map, int64_t m)
{
    return mlff_op_gather_cols(g, x, map_param(g, map, m));
}

int mlff_op_gather_cols_blocks_of(mlff_graph *g, int x, const int32_t *map, int64_t m, int64_t n_tangents)
{
    return gather_cols(g, x, map_param(g, map, m), n_tangents);
}

int mlff_op_scatter_add_cols_of(mlff_graph *g, int x, const int32_t *map, int64_t cols)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    return mlff_op_scatter_add_cols(g, x, map_param(g, map, op_tensor(g, x).cols), cols);
}

/* The SCATTER_ADD_COLS node of one block that made t, or NULL. */
static const mlff_graph_node *column_scatter(const mlff_graph *g, int t)
{
    const mlff_graph_node *n = mlff_graph_producer(g, t);
    return n && n->op == MLFF_OP_SCATTER_ADD_COLS && n->attrs.i[0] <= 1 ? n : NULL;
}

int op_sum_column_scatters(mlff_graph *g, int a, int b, int *sum)
{
    const mlff_graph_node *na = column_scatter(g, a), *nb = column_scatter(g, b);
    if (!na || !nb || op_tensor(g, a).cols != op_tensor(g, b).cols || op_tensor(g, a).dtype != op_tensor(g, b).dtype ||
        !mlff_graph_same_rows(g, a, b))
        return 0;
    const int64_t cols = op_tensor(g, a).cols;
    const mlff_graph_tensor ma = op_tensor(g, na->inputs[1]), mb = op_tensor(g, nb->inputs[1]);
    const int32_t *va = ma.host_data, *vb = mb.host_data;
    if (vb[0] < va[0]) /* the lower targets first: a split's pieces then fill the columns in order */
        return op_sum_column_scatters(g, b, a, sum);
    uint8_t *taken = calloc((size_t)cols, 1);
    int32_t *map = malloc((size_t)(ma.rows + mb.rows) * sizeof *map);
    int disjoint = taken && map;
    for (int64_t c = 0; disjoint && c < ma.rows; c++)
        taken[va[c]] = 1;
    for (int64_t c = 0; disjoint && c < mb.rows; c++)
        disjoint = !taken[vb[c]];
    int identity = disjoint && ma.rows + mb.rows == cols;
    for (int64_t c = 0; disjoint && c < ma.rows + mb.rows; c++) {
        map[c] = c < ma.rows ? va[c] : vb[c - ma.rows];
        identity = identity && map[c] == c;
    }
    if (disjoint) {
        const int both = mlff_op_concat_cols(g, na->inputs[0], nb->inputs[0]);
        *sum = identity ? both : mlff_op_scatter_add_cols_of(g, both, map, cols);
    }
    free(taken);
    free(map);
    return disjoint;
}

OP_VJP(mlff_vjp_gather_cols)
{
    const mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_scatter_add_cols(g, gy, n.inputs[1], op_tensor(g, n.inputs[0]).cols);
}

OP_VJP(mlff_vjp_scatter_add_cols)
{
    grads[0] = mlff_op_gather_cols(g, gy, op_node(g, node).inputs[1]);
}

OP_JVP(mlff_jvp_gather_cols)
{
    return gather_cols(g, dx[0], op_node(g, node).inputs[1], n_tangents);
}

OP_JVP(mlff_jvp_scatter_add_cols)
{
    const mlff_graph_node n = op_node(g, node);
    return scatter_add_cols(g, dx[0], n.inputs[1], n.attrs.i[1], n_tangents);
}

static int affine_cols(mlff_graph *g, int x, int s, int t, int64_t n_tangents)
{
    const int in[3] = {x, s, t};
    const int n_in = t >= 0 ? 3 : 2;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_graph_tensor tx = op_tensor(g, x);
    int ok = is_real(g, x) && tx.cols % n_tangents == 0;
    for (int k = 1; k < n_in; k++) {
        const mlff_graph_tensor p = op_tensor(g, in[k]);
        ok = ok && p.kind == MLFF_TENSOR_PARAM && p.dtype == tx.dtype && p.rows_symbol == MLFF_FIXED_ROWS &&
             p.rows == 1 && p.cols * n_tangents == tx.cols;
    }
    if (!op_require(g, ok, MLFF_OP_AFFINE_COLS, "needs real rows and parameters [1, cols] of their type"))
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_AFFINE_COLS, in, n_in, &a, tx.dtype, x, tx.cols);
}

int mlff_op_affine_cols(mlff_graph *g, int x, int s, int t)
{
    return affine_cols(g, x, s, t, 1);
}

OP_VJP(mlff_vjp_affine_cols)
{
    grads[0] = mlff_op_affine_cols(g, gy, op_node(g, node).inputs[1], -1);
}

OP_JVP(mlff_jvp_affine_cols)
{
    return affine_cols(g, dx[0], op_node(g, node).inputs[1], -1, n_tangents);
}

int mlff_op_index_column(mlff_graph *g, int x, int64_t column)
{
    if (!op_inputs_valid(g, &x, 1))
        return -1;
    const mlff_graph_tensor t = op_tensor(g, x);
    if (!op_require(g, t.dtype == MLFF_DTYPE_I32 && column >= 0 && column < t.cols, MLFF_OP_INDEX_COLUMN,
                    "needs an I32 tensor and one of its columns"))
        return -1;
    const mlff_op_attrs a = {.i = {column}};
    return op_node_like(g, MLFF_OP_INDEX_COLUMN, &x, 1, &a, MLFF_DTYPE_I32, x, 1);
}
