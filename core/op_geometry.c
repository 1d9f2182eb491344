/* Builders and VJPs of the pair-geometry ops: vectors, lengths, cutoff envelope. */
#include "op_internal.h"

int mlff_op_pair_vectors(mlff_graph *g, int positions, int pairs, int shifts)
{
    int in[3] = {positions, pairs, shifts};
    if (!op_inputs_valid(g, in, 3))
        return -1;
    const mlff_graph_tensor p = op_tensor(g, positions), ij = op_tensor(g, pairs),
                            s = op_tensor(g, shifts);
    int ok = p.cols == 3 && ij.cols == 2 && ij.dtype == MLFF_DTYPE_I32 && s.cols == 3 &&
             s.dtype == p.dtype && mlff_graph_same_rows(g, pairs, shifts);
    if (!op_require(g, ok, MLFF_OP_PAIR_VECTORS, "needs positions [A,3], pairs [P,2], shifts [P,3]"))
        return -1;
    return op_node_like(g, MLFF_OP_PAIR_VECTORS, in, 3, NULL, p.dtype, pairs, 3);
}

static int shifts_inputs_valid(mlff_graph *g, mlff_op op, int images, int cells, int pairs, int system)
{
    const mlff_graph_tensor im = op_tensor(g, images), c = op_tensor(g, cells);
    int ok = im.cols == 1 && im.dtype == MLFF_DTYPE_I32 && c.cols == 9 && mlff_graph_same_rows(g, images, pairs) &&
             op_tensor(g, pairs).cols == 2 && op_tensor(g, system).dtype == MLFF_DTYPE_I32;
    return op_require(g, ok, op, "needs packed images [P,1], cells [S,9], pairs [P,2], system [A,1]");
}

int mlff_op_pair_vectors_of_images(mlff_graph *g, int positions, int pairs, int images, int cells, int system,
                                   int positions_low, int cells_low)
{
    int in[7] = {positions, pairs, images, cells, system, positions_low, cells_low};
    const int n_in = positions_low >= 0 || cells_low >= 0 ? 7 : 5;
    if (!op_inputs_valid(g, in, n_in) || !shifts_inputs_valid(g, MLFF_OP_PAIR_VECTORS, images, cells, pairs, system))
        return -1;
    const mlff_graph_tensor p = op_tensor(g, positions);
    int ok = p.cols == 3 && op_tensor(g, cells).dtype == p.dtype;
    if (n_in == 7) {
        const mlff_graph_tensor pl = op_tensor(g, positions_low), cl = op_tensor(g, cells_low);
        ok = ok && pl.cols == 3 && pl.dtype == p.dtype && mlff_graph_same_rows(g, positions, positions_low) &&
             cl.cols == 9 && cl.dtype == p.dtype && mlff_graph_same_rows(g, cells, cells_low);
    }
    if (!op_require(g, ok, MLFF_OP_PAIR_VECTORS, "needs positions [A,3] of the cells' type (and low parts like them)"))
        return -1;
    return op_node_like(g, MLFF_OP_PAIR_VECTORS, in, n_in, NULL, p.dtype, pairs, 3);
}

/* The gradient with respect to the cells of shifts n . cell whose gradient is gy. */
static int cells_gradient(mlff_graph *g, int gy, int images, int cells, int pairs, int system)
{
    const mlff_graph_tensor c = op_tensor(g, cells);
    int in[3] = {gy, images, pairs};
    int per_atom = op_node_like(g, MLFF_OP_PAIR_SHIFTS_VJP, in, 3, NULL, op_tensor(g, gy).dtype, system, 9);
    return mlff_op_scatter_add_few_rows(g, per_atom, system, c.rows_symbol, c.rows, c.dtype);
}

OP_VJP(mlff_vjp_pair_vectors)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_pair_vectors_vjp(g, gy, n.inputs[1], n.inputs[0]);
    if (n.n_inputs == 3)
        grads[2] = gy; /* the shift enters the vector as it is */
    else
        grads[3] = cells_gradient(g, gy, n.inputs[2], n.inputs[3], n.inputs[1], n.inputs[4]);
}

int mlff_op_pair_shifts(mlff_graph *g, int images, int cells, int pairs, int system)
{
    int in[4] = {images, cells, pairs, system};
    if (!op_inputs_valid(g, in, 4) || !shifts_inputs_valid(g, MLFF_OP_PAIR_SHIFTS, images, cells, pairs, system))
        return -1;
    return op_node_like(g, MLFF_OP_PAIR_SHIFTS, in, 4, NULL, op_tensor(g, cells).dtype, images, 3);
}

OP_VJP(mlff_vjp_pair_shifts)
{
    mlff_graph_node n = op_node(g, node);
    grads[1] = cells_gradient(g, gy, n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3]);
}

int mlff_op_pair_vectors_vjp(mlff_graph *g, int gvec, int pairs, int positions_like)
{
    int in[3] = {gvec, pairs, positions_like};
    if (!op_inputs_valid(g, in, 3))
        return -1;
    return op_node_like(g, MLFF_OP_PAIR_VECTORS_VJP, in, 2, NULL, op_tensor(g, gvec).dtype,
                        positions_like, op_tensor(g, gvec).cols);
}

/* The node of a pair_vectors_vjp of one list that made t, or NULL. */
static const mlff_graph_node *one_list_vjp(const mlff_graph *g, int t)
{
    const mlff_graph_node *n = mlff_graph_producer(g, t);
    return n && n->op == MLFF_OP_PAIR_VECTORS_VJP && n->n_inputs == 2 ? n : NULL;
}

/* The ANI_RADIAL_VJP node that made the pair gradients that vjp (of one
 * list) reads, where the sum may make them itself (mlff_graph), or NULL. */
static const mlff_graph_node *radial_gradients_of(const mlff_graph *g, const mlff_graph_node *vjp)
{
    if (g->radial_gradients_apart)
        return NULL;
    const mlff_graph_node *r = mlff_graph_producer(g, vjp->inputs[0]);
    return r && r->op == MLFF_OP_ANI_RADIAL_VJP && r->inputs[2] == vjp->inputs[1] ? r : NULL;
}

int mlff_op_sum_gradients(mlff_graph *g, int a, int b)
{
    int in[2] = {a, b};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    int columns;
    if (op_sum_column_scatters(g, a, b, &columns))
        return columns;
    const mlff_graph_node *x = one_list_vjp(g, a), *y = one_list_vjp(g, b);
    const mlff_graph_tensor ta = op_tensor(g, a), tb = op_tensor(g, b);
    if (!x || !y || ta.dtype != tb.dtype || !mlff_graph_same_rows(g, a, b))
        return mlff_op_add(g, a, b);
    if (radial_gradients_of(g, x) && !radial_gradients_of(g, y)) {
        const mlff_graph_node *t = x;
        x = y;
        y = t;
    }
    const mlff_graph_node *r = radial_gradients_of(g, y);
    if (r) { /* the radial features' gradients made in the sum: the radial VJP's node is left unread */
        const int with_radial[7] = {x->inputs[0], x->inputs[1], r->inputs[0], r->inputs[2],
                                    r->inputs[1], r->inputs[3], r->inputs[4]};
        const mlff_op_attrs attrs = r->attrs; /* the node array may move */
        return op_node_like(g, MLFF_OP_PAIR_VECTORS_VJP, with_radial, 7, &attrs, ta.dtype, a, 3);
    }
    int both[4] = {x->inputs[0], x->inputs[1], y->inputs[0], y->inputs[1]};
    return op_node_like(g, MLFF_OP_PAIR_VECTORS_VJP, both, 4, NULL, ta.dtype, a, 3);
}

int mlff_op_norm3(mlff_graph *g, int v)
{
    if (!op_inputs_valid(g, &v, 1))
        return -1;
    if (!op_require(g, op_tensor(g, v).cols == 3, MLFF_OP_NORM3, "needs 3 columns"))
        return -1;
    return op_node_like(g, MLFF_OP_NORM3, &v, 1, NULL, op_tensor(g, v).dtype, v, 1);
}

OP_VJP(mlff_vjp_norm3)
{
    grads[0] = mlff_op_norm3_vjp(g, gy, op_node(g, node).inputs[0]);
}

int mlff_op_norm3_vjp(mlff_graph *g, int gy, int v)
{
    int in[2] = {gy, v};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    return op_node_like(g, MLFF_OP_NORM3_VJP, in, 2, NULL, op_tensor(g, v).dtype, v, 3);
}

int mlff_op_cosine_cutoff(mlff_graph *g, int d, double rc)
{
    if (!op_inputs_valid(g, &d, 1))
        return -1;
    if (!op_require(g, rc > 0.0, MLFF_OP_COSINE_CUTOFF, "cutoff must be positive"))
        return -1;
    mlff_op_attrs a = {.f = {rc}};
    return op_node_like(g, MLFF_OP_COSINE_CUTOFF, &d, 1, &a, op_tensor(g, d).dtype, d,
                        op_tensor(g, d).cols);
}

OP_VJP(mlff_vjp_cosine_cutoff)
{
    mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_cosine_cutoff_vjp(g, gy, n.inputs[0], n.attrs.f[0]);
}

int mlff_op_cosine_cutoff_vjp(mlff_graph *g, int gy, int d, double rc)
{
    int in[2] = {gy, d};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    mlff_op_attrs a = {.f = {rc}};
    return op_node_like(g, MLFF_OP_COSINE_CUTOFF_VJP, in, 2, &a, op_tensor(g, gy).dtype, gy,
                        op_tensor(g, gy).cols);
}

/* ---- tangents (core/ops.h, "Tangents") ---- */

int mlff_op_row_differences(mlff_graph *g, int x, int pairs)
{
    int in[2] = {x, pairs};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor p = op_tensor(g, pairs);
    if (!op_require(g, p.cols == 2 && p.dtype == MLFF_DTYPE_I32 && op_tensor(g, x).dtype != MLFF_DTYPE_I32,
                    MLFF_OP_ROW_DIFFERENCES, "needs real rows and pairs [P, 2]"))
        return -1;
    return op_node_like(g, MLFF_OP_ROW_DIFFERENCES, in, 2, NULL, op_tensor(g, x).dtype, pairs,
                        op_tensor(g, x).cols);
}

OP_VJP(mlff_vjp_row_differences)
{
    const mlff_graph_node n = op_node(g, node);
    grads[0] = mlff_op_pair_vectors_vjp(g, gy, n.inputs[1], n.inputs[0]);
}

OP_JVP(mlff_jvp_row_differences)
{
    (void)n_tangents;
    return mlff_op_row_differences(g, dx[0], op_node(g, node).inputs[1]);
}

/* The shifts n . cell of T-blocked cells: [P, 3T]. */
static int shifts_of_cells(mlff_graph *g, int images, int dcells, int pairs, int system, int64_t n_tangents)
{
    const int in[4] = {images, dcells, pairs, system};
    if (!op_inputs_valid(g, in, 4))
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_PAIR_SHIFTS, in, 4, &a, op_tensor(g, dcells).dtype, images, 3 * n_tangents);
}

/* The vectors move with the positions, and with the shifts: given as a
 * tensor, or made from the images and the cells (a strain's tangent). */
OP_JVP(mlff_jvp_pair_vectors)
{
    const mlff_graph_node n = op_node(g, node);
    const int moved = dx[0] >= 0 ? mlff_op_row_differences(g, dx[0], n.inputs[1]) : -1;
    if (n.n_inputs == 3)
        return op_add_tangents(g, moved, dx[2]);
    const int strained =
        dx[3] >= 0 ? shifts_of_cells(g, n.inputs[2], dx[3], n.inputs[1], n.inputs[4], n_tangents) : -1;
    return op_add_tangents(g, moved, strained);
}

/* Linear in the pair gradients; each list's tangent, zeros where it has
 * none. Where the sum makes the radial features' gradients of its second
 * list (inputs g, pairs, gy, pairs2, vec2, species, shifts2), their tangent
 * is ANI_RADIAL_VJP's. */
OP_JVP(mlff_jvp_pair_vectors_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    int in[4] = {op_tangent_or_zero(g, dx[0], n.inputs[0], n_tangents), n.inputs[1]};
    if (mlff_pair_vjp_has_radial(n.n_inputs)) {
        const int radial[7] = {n.inputs[2], n.inputs[4], n.inputs[3], n.inputs[5], n.inputs[6],
                               op_tangent_or_zero(g, dx[4], n.inputs[4], n_tangents), dx[2]};
        const int n_radial = dx[2] >= 0 ? 7 : 6;
        if (!op_inputs_valid(g, radial, n_radial))
            return -1;
        mlff_op_attrs a = n.attrs;
        a.i[1] = n_tangents;
        in[2] = op_node_like(g, MLFF_OP_ANI_RADIAL_VJP_JVP, radial, n_radial, &a, op_tensor(g, n.inputs[4]).dtype,
                             n.inputs[4], 3 * n_tangents);
        in[3] = n.inputs[3];
        if (!op_inputs_valid(g, in, 4))
            return -1;
        return op_node_like(g, MLFF_OP_PAIR_VECTORS_VJP, in, 4, NULL, op_tensor(g, in[0]).dtype, n.output,
                            n_tangents * 3);
    }
    if (n.n_inputs == 4) {
        in[2] = op_tangent_or_zero(g, dx[2], n.inputs[2], n_tangents);
        in[3] = n.inputs[3];
    }
    if (!op_inputs_valid(g, in, n.n_inputs))
        return -1;
    return op_node_like(g, MLFF_OP_PAIR_VECTORS_VJP, in, n.n_inputs, NULL, op_tensor(g, in[0]).dtype, n.output,
                        n_tangents * 3);
}

/* Linear in the cells. */
OP_JVP(mlff_jvp_pair_shifts)
{
    const mlff_graph_node n = op_node(g, node);
    return shifts_of_cells(g, n.inputs[0], dx[1], n.inputs[2], n.inputs[3], n_tangents);
}

OP_JVP(mlff_jvp_pair_shifts_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    const int in[3] = {dx[0], n.inputs[1], n.inputs[2]};
    if (!op_inputs_valid(g, in, 3))
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_PAIR_SHIFTS_VJP, in, 3, &a, op_tensor(g, dx[0]).dtype, n.output, 9 * n_tangents);
}

OP_JVP(mlff_jvp_norm3)
{
    const mlff_graph_node n = op_node(g, node);
    const int in[2] = {dx[0], n.inputs[0]};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_NORM3_JVP, in, 2, &a, op_tensor(g, n.inputs[0]).dtype, n.inputs[0], n_tangents);
}

OP_JVP(mlff_jvp_norm3_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    const int in[4] = {n.inputs[0], n.inputs[1], op_tangent_or_zero(g, dx[1], n.inputs[1], n_tangents), dx[0]};
    const int n_in = dx[0] >= 0 ? 4 : 3;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_op_attrs a = {.i = {n_tangents}};
    return op_node_like(g, MLFF_OP_NORM3_VJP_JVP, in, n_in, &a, op_tensor(g, n.inputs[1]).dtype, n.inputs[1],
                        3 * n_tangents);
}

int mlff_op_cosine_cutoff_vjp_blocks(mlff_graph *g, int gy, int d, double rc, int64_t n_tangents)
{
    int in[2] = {gy, d};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    if (!op_require(g, op_tensor(g, gy).cols == n_tangents * op_tensor(g, d).cols, MLFF_OP_COSINE_CUTOFF_VJP,
                    "needs a T-blocked gy and d of one block"))
        return -1;
    const mlff_op_attrs a = {.f = {rc}, .i = {n_tangents}};
    return op_node_like(g, MLFF_OP_COSINE_CUTOFF_VJP, in, 2, &a, op_tensor(g, gy).dtype, gy, op_tensor(g, gy).cols);
}

OP_JVP(mlff_jvp_cosine_cutoff)
{
    const mlff_graph_node n = op_node(g, node);
    return mlff_op_cosine_cutoff_vjp_blocks(g, dx[0], n.inputs[0], n.attrs.f[0], n_tangents);
}

OP_JVP(mlff_jvp_cosine_cutoff_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    if (dx[1] < 0)
        return mlff_op_cosine_cutoff_vjp_blocks(g, dx[0], n.inputs[1], n.attrs.f[0], n_tangents);
    const int in[4] = {n.inputs[0], n.inputs[1], dx[1], dx[0]};
    const int n_in = dx[0] >= 0 ? 4 : 3;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const mlff_op_attrs a = {.f = {n.attrs.f[0]}, .i = {n_tangents}};
    return op_node_like(g, MLFF_OP_COSINE_CUTOFF_VJP_JVP, in, n_in, &a, op_tensor(g, n.inputs[0]).dtype, n.inputs[0],
                        op_tensor(g, dx[1]).cols);
}
