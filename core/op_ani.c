/* Builders and VJPs of the ANI feature ops (atomic environment vectors). */
#include "op_internal.h"

static int is_real_column(const mlff_graph *g, int t, mlff_dtype dtype)
{
    const mlff_graph_tensor x = op_tensor(g, t);
    return x.kind == MLFF_TENSOR_PARAM && x.cols == 1 && x.dtype == dtype;
}

/* Pair vectors [P, 3] in dtype and their pairs [P, 2]. */
static int pairs_valid(mlff_graph *g, int vec, int pairs, mlff_dtype dtype)
{
    const mlff_graph_tensor v = op_tensor(g, vec);
    return v.cols == 3 && v.dtype == dtype && op_tensor(g, pairs).cols == 2 && mlff_graph_same_rows(g, vec, pairs);
}

/* A parameter column of at most MLFF_ANI_MAX_SHIFTS shifts in dtype. */
static int shifts_valid(mlff_graph *g, int shifts, mlff_dtype dtype)
{
    return is_real_column(g, shifts, dtype) && op_tensor(g, shifts).rows <= MLFF_ANI_MAX_SHIFTS;
}

int mlff_op_ani_radial(mlff_graph *g, int vec, int pairs, int species, int shifts, double eta,
                       double rc, int64_t n_species)
{
    int in[4] = {vec, pairs, species, shifts};
    if (!op_inputs_valid(g, in, 4))
        return -1;
    const mlff_graph_tensor v = op_tensor(g, vec);
    int ok = pairs_valid(g, vec, pairs, v.dtype) && op_tensor(g, species).dtype == MLFF_DTYPE_I32 &&
             shifts_valid(g, shifts, v.dtype) && n_species > 0 &&
             n_species * op_tensor(g, shifts).rows <= MLFF_ANI_MAX_FEATURES && rc > 0.0;
    if (!op_require(g, ok, MLFF_OP_ANI_RADIAL, "bad inputs"))
        return -1;
    mlff_op_attrs a = {.f = {eta, rc}, .i = {n_species}};
    return op_node_like(g, MLFF_OP_ANI_RADIAL, in, 4, &a, v.dtype, species,
                        n_species * op_tensor(g, shifts).rows);
}

OP_VJP(mlff_vjp_ani_radial)
{
    mlff_graph_node n = op_node(g, node);
    /* The first block of a wider gradient (a concatenation's) is read in place. */
    const mlff_graph_node *slice = mlff_graph_producer(g, gy);
    if (slice && slice->op == MLFF_OP_SLICE_COLS && slice->attrs.i[0] == 0)
        gy = slice->inputs[0];
    int in[5] = {gy, n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3]};
    grads[0] = op_node_like(g, MLFF_OP_ANI_RADIAL_VJP, in, 5, &n.attrs, op_tensor(g, gy).dtype,
                            n.inputs[0], 3);
}

static int angular_inputs_valid(mlff_graph *g, const int in[6])
{
    const mlff_dtype dtype = op_tensor(g, in[0]).dtype;
    return pairs_valid(g, in[0], in[1], dtype) && op_tensor(g, in[2]).cols == 2 &&
           op_tensor(g, in[2]).dtype == MLFF_DTYPE_I32 && op_tensor(g, in[3]).dtype == MLFF_DTYPE_I32 &&
           shifts_valid(g, in[4], dtype) && shifts_valid(g, in[5], dtype);
}

/* n_in 6, or 9 with the radial features' inputs (core/ops.h). */
static int angular_node(mlff_graph *g, const int *in, int n_in, const mlff_op_attrs *a)
{
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    const int64_t n_species = a->i[0];
    int ok = angular_inputs_valid(g, in) && n_species > 0 && a->f[2] > 0.0;
    int64_t radial_cols = 0;
    if (mlff_angular_has_radial(n_in)) {
        const mlff_dtype dtype = op_tensor(g, in[0]).dtype;
        ok = ok && pairs_valid(g, in[6], in[7], dtype) && shifts_valid(g, in[8], dtype) && a->f[4] > 0.0;
        radial_cols = n_species * op_tensor(g, in[8]).rows;
    }
    if (!op_require(g, ok, MLFF_OP_ANI_ANGULAR, "bad inputs"))
        return -1;
    const int64_t angular_cols =
        n_species * (n_species + 1) / 2 * op_tensor(g, in[5]).rows * op_tensor(g, in[4]).rows;
    if (!op_require(g, radial_cols + angular_cols <= MLFF_ANI_MAX_FEATURES, MLFF_OP_ANI_ANGULAR,
                    "too many features"))
        return -1;
    return op_node_like(g, MLFF_OP_ANI_ANGULAR, in, n_in, a, op_tensor(g, in[0]).dtype, in[3],
                        radial_cols + angular_cols);
}

int mlff_op_ani_angular(mlff_graph *g, int vec, int pairs, int triples, int species,
                        int shift_theta, int shift_r, double zeta, double eta, double rc,
                        int64_t n_species)
{
    const int in[6] = {vec, pairs, triples, species, shift_theta, shift_r};
    const mlff_op_attrs a = {.f = {zeta, eta, rc}, .i = {n_species}};
    return angular_node(g, in, 6, &a);
}

int mlff_op_ani_aev(mlff_graph *g, const mlff_ani_radial_inputs *radial, int vec, int pairs, int triples,
                    int species, int shift_theta, int shift_r, double zeta, double eta, double rc,
                    int64_t n_species)
{
    const int in[9] = {vec, pairs, triples, species, shift_theta, shift_r, radial->vec, radial->pairs,
                       radial->shifts};
    const mlff_op_attrs a = {.f = {zeta, eta, rc, radial->eta, radial->rc}, .i = {n_species}};
    return angular_node(g, in, 9, &a);
}

OP_VJP(mlff_vjp_ani_angular)
{
    mlff_graph_node n = op_node(g, node);
    int in[7] = {gy, n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3], n.inputs[4], n.inputs[5]};
    mlff_op_attrs a = n.attrs;
    a.i[1] = mlff_graph_pair_triples_of(g, n.inputs[2], n.inputs[1]);
    a.f[3] = a.f[4] = 0; /* the radial part's: one kernel for every radial eta and cutoff */
    grads[0] = op_node_like(g, MLFF_OP_ANI_ANGULAR_VJP, in, 7, &a, op_tensor(g, gy).dtype,
                            n.inputs[0], 3);
    if (mlff_angular_has_radial(n.n_inputs)) {
        /* The radial features' block, the first of gy, read in place. */
        int radial[5] = {gy};
        for (int k = 0; k < 4; k++)
            radial[1 + k] = n.inputs[mlff_angular_radial_input(k)];
        const mlff_op_attrs r = mlff_angular_radial_attrs(&n.attrs);
        grads[mlff_angular_radial_input(0)] =
            op_node_like(g, MLFF_OP_ANI_RADIAL_VJP, radial, 5, &r, op_tensor(g, gy).dtype, radial[1], 3);
    }
}

int mlff_op_pair_triples(mlff_graph *g, int pairs, int first, int rows_symbol, int64_t rows)
{
    int in[2] = {pairs, first};
    if (!op_inputs_valid(g, in, 2))
        return -1;
    const mlff_graph_tensor p = op_tensor(g, pairs), f = op_tensor(g, first);
    int ok = p.dtype == MLFF_DTYPE_I32 && p.cols == 2 && f.dtype == MLFF_DTYPE_I32 && f.cols == 1 &&
             mlff_graph_same_rows(g, pairs, first);
    if (!op_require(g, ok, MLFF_OP_PAIR_TRIPLES, "needs an I32 pair list and an I32 column beside it"))
        return -1;
    return mlff_graph_add_node(g, MLFF_OP_PAIR_TRIPLES, in, 2, NULL, MLFF_DTYPE_I32, rows_symbol, rows, 2);
}

/* ---- tangents (core/ops.h, "Tangents") ---- */

/* The tangent of the radial features of (vec, pairs, species, shifts). */
static int radial_jvp(mlff_graph *g, int dvec, const int in[4], const mlff_op_attrs *attrs, int64_t n_tangents)
{
    const int all[5] = {dvec, in[0], in[1], in[2], in[3]};
    if (!op_inputs_valid(g, all, 5))
        return -1;
    if (!op_require(g, op_tensor(g, dvec).cols == 3 * n_tangents, MLFF_OP_ANI_RADIAL_JVP, "needs dvec [P, 3T]"))
        return -1;
    mlff_op_attrs a = *attrs;
    a.i[1] = n_tangents;
    return op_node_like(g, MLFF_OP_ANI_RADIAL_JVP, all, 5, &a, op_tensor(g, in[0]).dtype, in[2],
                        n_tangents * a.i[0] * op_tensor(g, in[3]).rows);
}

/* Only the vectors carry tangents (the rest are integers and the model's). */
static int only_vectors(mlff_graph *g, const mlff_graph_node *n, const int *dx, int first, int second)
{
    for (int j = 0; j < n->n_inputs; j++)
        if (dx[j] >= 0 && j != first && j != second)
            return op_require(g, 0, n->op, "tangents of the features' constants are not supported");
    return 1;
}

OP_JVP(mlff_jvp_ani_radial)
{
    const mlff_graph_node n = op_node(g, node);
    if (!only_vectors(g, &n, dx, 0, -1))
        return -1;
    return radial_jvp(g, dx[0], n.inputs, &n.attrs, n_tangents);
}

OP_JVP(mlff_jvp_ani_radial_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    if (!only_vectors(g, &n, dx, 0, 1))
        return -1;
    const int in[7] = {n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3], n.inputs[4],
                       op_tangent_or_zero(g, dx[1], n.inputs[1], n_tangents), dx[0]};
    const int n_in = dx[0] >= 0 ? 7 : 6;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    mlff_op_attrs a = n.attrs;
    a.i[1] = n_tangents;
    return op_node_like(g, MLFF_OP_ANI_RADIAL_VJP_JVP, in, n_in, &a, op_tensor(g, n.inputs[0]).dtype, n.inputs[1],
                        3 * n_tangents);
}

/* The AEV's tangent: the angular features' (and the radial features', before them in each block). */
OP_JVP(mlff_jvp_ani_angular)
{
    const mlff_graph_node n = op_node(g, node);
    const int radial_vec = mlff_angular_has_radial(n.n_inputs) ? mlff_angular_radial_input(0) : -1;
    if (!only_vectors(g, &n, dx, 0, radial_vec))
        return -1;
    const int in[7] = {op_tangent_or_zero(g, dx[0], n.inputs[0], n_tangents), n.inputs[0], n.inputs[1], n.inputs[2],
                       n.inputs[3], n.inputs[4], n.inputs[5]};
    if (!op_inputs_valid(g, in, 7))
        return -1;
    mlff_op_attrs a = n.attrs;
    a.f[3] = a.f[4] = 0;
    a.i[2] = n_tangents;
    const int64_t angular_cols = a.i[0] * (a.i[0] + 1) / 2 * op_tensor(g, n.inputs[4]).rows *
                                 op_tensor(g, n.inputs[5]).rows;
    const int angular = op_node_like(g, MLFF_OP_ANI_ANGULAR_JVP, in, 7, &a, op_tensor(g, n.inputs[0]).dtype,
                                     n.inputs[3], n_tangents * angular_cols);
    if (radial_vec < 0)
        return angular;
    int radial_in[4];
    for (int k = 0; k < 4; k++)
        radial_in[k] = n.inputs[mlff_angular_radial_input(k)];
    const mlff_op_attrs r = mlff_angular_radial_attrs(&n.attrs);
    const int radial = radial_jvp(g, op_tangent_or_zero(g, dx[radial_vec], radial_in[0], n_tangents), radial_in, &r,
                                  n_tangents);
    return mlff_op_concat_blocks(g, radial, angular, n_tangents);
}

OP_JVP(mlff_jvp_ani_angular_vjp)
{
    const mlff_graph_node n = op_node(g, node);
    if (!only_vectors(g, &n, dx, 0, 1))
        return -1;
    const int in[9] = {n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3], n.inputs[4], n.inputs[5], n.inputs[6],
                       op_tangent_or_zero(g, dx[1], n.inputs[1], n_tangents), dx[0]};
    const int n_in = dx[0] >= 0 ? 9 : 8;
    if (!op_inputs_valid(g, in, n_in))
        return -1;
    mlff_op_attrs a = n.attrs;
    a.i[2] = n_tangents;
    return op_node_like(g, MLFF_OP_ANI_ANGULAR_VJP_JVP, in, n_in, &a, op_tensor(g, n.inputs[0]).dtype, n.inputs[1],
                        3 * n_tangents);
}
