/* Shared helpers of the op builders (core/op_*.c); not part of any interface. */
#ifndef MLFF_CORE_OP_INTERNAL_H
#define MLFF_CORE_OP_INTERNAL_H

#include "graph.h"

/* Tensor t copied out of the graph: every builder appends to the tensor
 * array, which then moves, so a pointer into it must never outlive the next
 * node or parameter (a VJP that kept one read freed memory). */
static inline mlff_graph_tensor op_tensor(const mlff_graph *g, int t)
{
    return g->tensors[t];
}

/* True when the graph is healthy and every tensor id is valid. */
int op_inputs_valid(mlff_graph *g, const int *inputs, int n);

/* Fails the graph with "op NAME: message" unless ok; returns ok. */
int op_require(mlff_graph *g, int ok, mlff_op op, const char *what);

/* Appends a node whose output has the row count of tensor `like`. */
int op_node_like(mlff_graph *g, mlff_op op, const int *inputs, int n_inputs,
                 const mlff_op_attrs *attrs, mlff_dtype dtype, int like, int64_t cols);

/* Node n copied out of the graph (the node array may move while VJPs append). */
static inline mlff_graph_node op_node(const mlff_graph *g, int n)
{
    return g->nodes[n];
}

#define OP_VJP(name) void name(mlff_graph *g, int node, int gy, int grads[MLFF_MAX_OP_INPUTS])
#define OP_JVP(name) int name(mlff_graph *g, int node, const int dx[MLFF_MAX_OP_INPUTS], int64_t n_tangents)

/* Zeros shaped like the T-blocked tangent of tensor t: where a JVP needs
 * the tangent of an input that has none. */
int op_zero_tangent(mlff_graph *g, int t, int64_t n_tangents);
/* Tangent dx or zeros: an operand that must be there. */
static inline int op_tangent_or_zero(mlff_graph *g, int dx, int t, int64_t n_tangents)
{
    return dx >= 0 ? dx : op_zero_tangent(g, t, n_tangents);
}
/* a + b of two optional tangents (-1: none); -1 when neither. */
int op_add_tangents(mlff_graph *g, int a, int b);
/* a + b where both are SCATTER_ADD_COLS into the same columns from
 * disjoint targets (the gradients of a split's pieces): one node of the two
 * side by side (*sum; no scatter where they fill every column in order).
 * Returns 0 where that does not apply. */
int op_sum_column_scatters(mlff_graph *g, int a, int b, int *sum);

OP_JVP(mlff_jvp_add);
OP_JVP(mlff_jvp_scale);
OP_JVP(mlff_jvp_mul);
OP_JVP(mlff_jvp_concat_cols);
OP_JVP(mlff_jvp_slice_cols);
OP_JVP(mlff_jvp_gather_rows);
OP_JVP(mlff_jvp_scatter_add_rows);
OP_JVP(mlff_jvp_sum_cols);
OP_JVP(mlff_jvp_broadcast_cols);
OP_JVP(mlff_jvp_linear);
OP_JVP(mlff_jvp_linear_vjp);
OP_JVP(mlff_jvp_celu);
OP_JVP(mlff_jvp_celu_vjp);
OP_JVP(mlff_jvp_celu_mlp);
OP_JVP(mlff_jvp_celu_mlp_vjp);
OP_JVP(mlff_jvp_pair_vectors);
OP_JVP(mlff_jvp_pair_vectors_vjp);
OP_JVP(mlff_jvp_pair_shifts);
OP_JVP(mlff_jvp_pair_shifts_vjp);
OP_JVP(mlff_jvp_norm3);
OP_JVP(mlff_jvp_norm3_vjp);
OP_JVP(mlff_jvp_cosine_cutoff);
OP_JVP(mlff_jvp_cosine_cutoff_vjp);
OP_JVP(mlff_jvp_ani_radial);
OP_JVP(mlff_jvp_ani_radial_vjp);
OP_JVP(mlff_jvp_ani_angular);
OP_JVP(mlff_jvp_ani_angular_vjp);
OP_JVP(mlff_jvp_row_differences);
OP_JVP(mlff_jvp_unary);
OP_JVP(mlff_jvp_gather_cols);
OP_JVP(mlff_jvp_scatter_add_cols);
OP_JVP(mlff_jvp_affine_cols);
OP_VJP(mlff_vjp_add);
OP_VJP(mlff_vjp_scale);
OP_VJP(mlff_vjp_mul);
OP_VJP(mlff_vjp_concat_cols);
OP_VJP(mlff_vjp_gather_rows);
OP_VJP(mlff_vjp_scatter_add_rows);
OP_VJP(mlff_vjp_sum_cols);
OP_VJP(mlff_vjp_linear);
OP_VJP(mlff_vjp_celu);
OP_VJP(mlff_vjp_celu_mlp);
OP_VJP(mlff_vjp_pair_vectors);
OP_VJP(mlff_vjp_pair_shifts);
OP_VJP(mlff_vjp_norm3);
OP_VJP(mlff_vjp_cosine_cutoff);
OP_VJP(mlff_vjp_ani_radial);
OP_VJP(mlff_vjp_ani_angular);
OP_VJP(mlff_vjp_row_differences);
OP_VJP(mlff_vjp_unary);
OP_VJP(mlff_vjp_gather_cols);
OP_VJP(mlff_vjp_scatter_add_cols);
OP_VJP(mlff_vjp_affine_cols);

#endif
