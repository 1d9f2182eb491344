/*
 * The op set. Each op has one output; its exact semantics are written here
 * once, and every backend implements exactly this. Shapes are [rows, cols];
 * "REAL" is the plan's compute precision. Index tensors are I32 [n, 1] (or
 * [n, 2] for pairs) and hold valid row indices: the graph's inputs are
 * checked before they reach an op.
 *
 * Differentiable ops have a vector-Jacobian product (VJP) that the reverse
 * pass (core/autodiff.c) calls; it is expressed with other ops, often a
 * dedicated backward op (marked "backward" below, no VJP of its own).
 * Integer and parameter inputs get no gradient.
 *
 * Tangents (second order). Every op that is differentiable, backward ops
 * included, has a Jacobian-vector product that the tangent pass
 * (core/tangent.c) calls: with the reverse pass before it, forward mode
 * over reverse gives Hessian-vector products. A tangent of a tensor
 * [n, cols] holds T directions side by side, [n, T*cols], direction t in
 * columns t*cols .. t*cols + cols - 1 ("T-blocked"). Ops take tangents
 * through an attribute T (1 or 0: none) where said below ("T:"), or are the
 * second-order ops at the end of the list (marked "tangent").
 */
#ifndef MLFF_CORE_OPS_H
#define MLFF_CORE_OPS_H

#include <stdint.h>

#include "dtype.h"

/* The most inputs of a node (ANI_ANGULAR with the radial features). */
#define MLFF_MAX_OP_INPUTS 9

/* The ANI ops take at most this many shifts per array (kernels keep per-shift
 * tables on the stack). */
#define MLFF_ANI_MAX_SHIFTS 64
/* ... and produce at most this many features per atom (kernels sum rows on the stack). */
#define MLFF_ANI_MAX_FEATURES 8192

/* CELU_MLP: its layers (its inputs: x, each layer's W and b, and the starts
 * of stacks) and their widths. */
#define MLFF_MLP_MAX_LAYERS 3
_Static_assert(2 + 2 * MLFF_MLP_MAX_LAYERS <= MLFF_MAX_OP_INPUTS, "a CELU_MLP's inputs");
#define MLFF_MLP_MAX_WIDTH 1024

/* X(ENUM, "name") in a fixed order: op ids are stable within a version. */
#define MLFF_OP_LIST(X)                                                                           \
    /* out = value everywhere. No inputs; attrs f[0] = value. */                                  \
    X(FILL, "fill")                                                                               \
    /* out = a + b (same shape and dtype). */                                                     \
    X(ADD, "add")                                                                                 \
    /* out = f[0] * x. */                                                                         \
    X(SCALE, "scale")                                                                             \
    /* out = a * b; b is [n, cols], [n, 1] (broadcast along the row) or [n, k], k dividing cols  \
     * (applied to each block of k: x[:, None, :] times [n, 3, k]). T: i[0], in a tangent pass   \
     * the count of a's blocks that b applies to (T directions, times a tiled product's). */      \
    X(MUL, "mul")                                                                                 \
    /* out [n, ka + kb] = [a | b]. T: i[0], each block of out [a's block | b's block]. */          \
    X(CONCAT_COLS, "concat_cols")                                                                 \
    /* backward. out [n, i[1]] = x[:, i[0] : i[0] + i[1]]. T: i[2], the columns of each block. */   \
    X(SLICE_COLS, "slice_cols")                                                                   \
    /* out [m, k] = x[idx[r], :]; out dtype may differ from x's (converted). */                   \
    X(GATHER_ROWS, "gather_rows")                                                                 \
    /* out [n, k] = sum over r with idx[r] = row of x[r, :]; n from the output shape;             \
     * out dtype may be wider than x's (F64 sums of REAL). Deterministic order. i[0] = 1: few     \
     * rows, each the sum of many (per-system sums; GPUs reduce each entry in a work-group).     \
     * i[1] > 0: inputs (x, idx [, w shaped like x]), each row first reduced to f[0] times the    \
     * sum of its first i[1] columns (times w); out [n, 1]. T (row sums): i[2], x T-blocked, w    \
     * one block, out [n, T]. */                                                                 \
    X(SCATTER_ADD_ROWS, "scatter_add_rows")                                                       \
    /* out [n, 1] = f[0] * sum of x[:, c] for c < i[0] (i[0] = cols: every column). T: i[1],       \
     * each block summed, out [n, T]. */                                                          \
    X(SUM_COLS, "sum_cols")                                                                       \
    /* backward. out [n, cols] = f[0] * x[:, 0] in columns c < i[0], 0 in the others. T: i[1],    \
     * x [n, T], out [n, T*cols] block t from x[:, t]. */                                          \
    X(BROADCAST_COLS, "broadcast_cols")                                                           \
    /* Grouped dense layer, i[0] = G groups: x [n, G*in], W [G*out, in], b [G*out, 1];           \
     * out[r, g*out + o] = b[g*out + o] + sum_c W[g*out + o, c] * x[r, g*in + c].                 \
     * G = 1 is an ordinary layer; G = ensemble members runs them side by side.                   \
     * Stacked (i[1] = E > 1 stacks; see "Stacks" below): W [E*G*out, in], b [E*G*out, 1], a    \
     * last input starts; the rows of run e use W's rows (e*G + g)*out + o and b's.               \
     * T: i[2], x T-blocked (n*T rows of one block each, as the plan hands it to a backend; with  \
     * stacks, run e's rows are starts[e]*T .. starts[e+1]*T - 1), b added to each. */            \
    X(LINEAR, "linear")                                                                           \
    /* backward. inputs (gy [n, G*out], W[, starts]); out [n, G*in] = gy times W per group         \
     * (and per run, as the forward op). T: i[2], as LINEAR's. */                                 \
    X(LINEAR_VJP, "linear_vjp")                                                                   \
    /* CELU, f[0] = alpha: x > 0 ? x : alpha * (exp(x / alpha) - 1). */                           \
    X(CELU, "celu")                                                                               \
    /* backward. inputs (gy, y) with y = celu(x), the forward OUTPUT: the derivative is       \
     * 1 where y > 0, else exp(x / alpha) = y / alpha + 1 as PyTorch takes it (in float64      \
     * k (y / alpha + 1)^k: mlff_celu_derivative_power); f[0] = alpha. (Taking y rather than  \
     * x leaves x with one reader, so a dense layer and its CELU can run as one.)               \
     * T: i[0], gy T-blocked and y one block. */                                                  \
    X(CELU_VJP, "celu_vjp")                                                                       \
    /* inputs (positions [A, 3], pairs [P, 2], shifts [P, 3]), or (positions, pairs, and        \
     * pair_shifts' images, cells and system); out [P, 3] = pos[j] - pos[i] + shift for pair   \
     * (i, j), the shift made in the same pass in the second form. The second form may take     \
     * (positions_low [A, 3], cells_low [S, 9]) after them: positions and cells are then the    \
     * sums pos + positions_low, cells + cells_low (graph.h), each cells entry with at most 15  \
     * significant bits (n . cells exact), and out is the vector of those sums rounded once.    \
     * Its VJP sends nothing to the low parts. */                                                \
    X(PAIR_VECTORS, "pair_vectors")                                                               \
    /* backward. inputs (g [P, k], pairs [P, 2]), or two such couples (two lists, summed: the     \
     * reverse pass merges them, mlff_op_sum_gradients); out [A, 3] rows: + g at j, - g at i.    \
     * Or (g, pairs, gy, pairs2, vec2, species, shifts2) with ANI_RADIAL_VJP's attributes: the   \
     * second list's g is ANI_RADIAL_VJP(gy, vec2, pairs2, species, shifts2), made here for    \
     * each side of a pair (the radial features' gradient costs no launch of its own).          \
     * k = 3, or any k (a T-blocked tangent) in the forms without the radial features.            \
     */                                                                                           \
    X(PAIR_VECTORS_VJP, "pair_vectors_vjp")                                                       \
    /* Periodic image shifts. inputs (images [P, 1] I32, cells [S, 9], pairs [P, 2],              \
     * system [A, 1]); images[p] packs the pair's integer image offsets n (mlff_image_pack);       \
     * out [P, 3] = n . cell of the system of pair p's first atom, i.e.                           \
     * out[p, b] = sum_a n_a * cells[s, 3a + b] (cell rows are lattice vectors). T: i[0], cells   \
     * [S, 9T] and out [P, 3T], the shifts of each block. */                                      \
    X(PAIR_SHIFTS, "pair_shifts")                                                                 \
    /* backward, per atom. inputs (g [P, 3], images, pairs); out [A, 9] (rows of the forward's   \
     * system input): out[i, 3a + b] = sum over the pairs centred on i of n_a * g[p, b]. Their  \
     * sums per system are the gradient with respect to the cells (the reverse pass adds a      \
     * few-rows scatter; a sum per system straight from the pairs left one work-group with a    \
     * million pairs). T: i[0], g [P, 3T], out [A, 9T]. */                                         \
    X(PAIR_SHIFTS_VJP, "pair_shifts_vjp")                                                         \
    /* out [P, 1] = |v| for v [P, 3]. */                                                          \
    X(NORM3, "norm3")                                                                             \
    /* backward. inputs (g [P, 1], v [P, 3]); out [P, 3] = g * v / |v|. */                        \
    X(NORM3_VJP, "norm3_vjp")                                                                     \
    /* Cosine cutoff, f[0] = rc: d < rc ? 0.5 cos(pi d / rc) + 0.5 : 0, elementwise. */           \
    X(COSINE_CUTOFF, "cosine_cutoff")                                                             \
    /* backward. inputs (gy, d): gy * d fc / dd. T: i[0], gy T-blocked, d one block. */           \
    X(COSINE_CUTOFF_VJP, "cosine_cutoff_vjp")                                                     \
    /* ANI radial AEV. inputs (vec [P, 3], pairs [P, 2], species [A, 1], shifts [R, 1]);          \
     * f[0] = eta, f[1] = rc, i[0] = S species. out [A, S*R], for each pair (i, j) with           \
     * d = |vec|: out[i, species[j]*R + r] += 0.25 exp(-eta (d - shift_r)^2) fc(d).               \
     * (Pair lists hold both orders, so both atoms receive a term.) */                           \
    X(ANI_RADIAL, "ani_radial")                                                                   \
    /* backward. inputs (g [A, >= S*R], vec, pairs, species, shifts); out [P, 3]; the radial     \
     * features' gradient is g's first S*R columns (g may be the whole AEV's). */                 \
    X(ANI_RADIAL_VJP, "ani_radial_vjp")                                                           \
    /* ANI angular AEV. inputs (vec [P, 3], pairs [P, 2], triples [T, 2], species [A, 1],         \
     * shift_theta [Z, 1], shift_r [Ra, 1][, radial_vec [Pr, 3], radial_pairs [Pr, 2],            \
     * radial_shifts [R, 1]]); f[0] = zeta, f[1] = eta, f[2] = rc, i[0] = S species.              \
     * out [A, H + S(S+1)/2 * Ra * Z] = [radial | angular]: with the radial inputs (f[3] = their  \
     * eta, f[4] = their rc) the first H = S*R columns are ani_radial of them, the whole AEV in   \
     * one launch; without, H = 0. Triple (a, b) has                                              \
     * center i, neighbours j = pairs[a, 1], k = pairs[b, 1]; with d_a, d_b,                      \
     * cos = va.vb / (d_a d_b), theta = acos(0.95 cos), slot p of the unordered species pair     \
     * (upper-triangle order), angular[i, (p*Ra + s)*Z + z] +=                                    \
     *     2 ((1 + cos(theta - shift_theta_z)) / 2)^zeta                                           \
     *     * exp(-eta ((d_a + d_b)/2 - shift_r_s)^2) fc(d_a) fc(d_b). */                           \
    X(ANI_ANGULAR, "ani_angular")                                                                 \
    /* backward. inputs (g [A, ...], vec, pairs, triples, species, shift_theta, shift_r),         \
     * attrs as the forward op; out [P, 3], the gradient with respect to vec, from g's last       \
     * S(S+1)/2 * Ra * Z columns (g may be the whole AEV's). i[1] = 1 when the                    \
     * triples are pair_triples(pairs, first) (mlff_graph_pair_triples_of): a GPU then finds a    \
     * pair's triples from the pairs around it instead of sorting the triples by pair. */         \
    X(ANI_ANGULAR_VJP, "ani_angular_vjp")                                                         \
    /* Angular triples of a pair list whose pairs of one center are consecutive. inputs          \
     * (pairs [P, 2], first [P, 1] I32); out [T, 2] I32 (T from the output shape): for pair a     \
     * and every later pair c of the same center, out[first[a] + c - a - 1] = (a, c). With        \
     * first[] the running count, that is every unordered pair of a center's pairs, centers in   \
     * order. On a GPU it replaces the upload of T rows by one of P. Integer: no VJP. */           \
    X(PAIR_TRIPLES, "pair_triples")                                                               \
    /* Grouped dense layers with CELU between them, run as one op (a GPU runs a row block of     \
     * one group through every layer in one work-group). inputs (x [n, G*w0], W1 [G*w1, w0],     \
     * b1 [G*w1, 1], ..., Wk, bk), k = (inputs - 1) / 2 layers, G = i[0], f[0] = alpha.           \
     * Per group: h0 = x, z_l = W_l h_{l-1} + b_l, h_l = celu(z_l) for l < k, h_k = z_k.         \
     * out [n, G*(wk + w1 + ... + w_{k-1})] = [h_k | h_1 | ... | h_{k-1}], each block group by   \
     * group: the result first, then the hidden outputs the reverse pass reads. Stacked          \
     * (i[1] = E > 1): each W_l [E*G*w_l, w_{l-1}] and b_l hold E stacks, starts is the last     \
     * input, and the rows of run e use stack e (group e*G + g of the weights). */               \
    X(CELU_MLP, "celu_mlp")                                                                       \
    /* backward. inputs (gy [n, out cols], y = the forward's output, W1, ..., Wk[, starts]),     \
     * attrs as the forward op; out [n, G*w0] = the gradient with respect to x (gy of every     \
     * block counts; CELU's derivative from y: 1 where h > 0, else h / alpha + 1). gy may be     \
     * the result block's alone, [n, G*wk], when the hidden blocks have none (the members'      \
     * mean above). */                                                                           \
    X(CELU_MLP_VJP, "celu_mlp_vjp")                                                               \
    /* Elementwise function, out = f[0] * u(x) with u chosen by i[0] (mlff_unary_kind below;    \
     * f[1] = p for POW: x^p). Its VJP is gy * (its derivative, a UNARY of x) and its tangent    \
     * dx * that, both MUL nodes: no backward op of its own. */                                  \
    X(UNARY, "unary")                                                                             \
    /* out [n, m] = x[:, map[c]] for c < m, map [m, 1] I32 a parameter with entries < x's        \
     * (block) columns: broadcasts, permutations, selections of columns. T: i[0], applied to    \
     * each block of x, out [n, T*m]. Its VJP is SCATTER_ADD_COLS by the same map. */            \
    X(GATHER_COLS, "gather_cols")                                                                 \
    /* out [n, i[1]] = the sums over c of x[:, c] into column map[c], c ascending (x [n, m],     \
     * map [m, 1] I32 parameter, entries < i[1]): sums over an axis of a flattened tensor. A      \
     * third input, the map's inverse (the builder makes it: for each target the columns mapped  \
     * to it, ascending, a CSR [i[1] + 1 offsets, then m columns]), lets each output entry read   \
     * its own columns. T: i[0], out [n, T*i[1]]. Its VJP is GATHER_COLS by the same map. */      \
    X(SCATTER_ADD_COLS, "scatter_add_cols")                                                       \
    /* out[r, c] = x[r, c] * s[c] (+ t[c]) with s, t [1, cols] parameters (inputs (x, s[, t])):  \
     * a per-column scale and offset (a basis' centres, a layer's constant). T: i[0], s applied  \
     * to each block of x, t not added (the tangent of a constant). */                           \
    X(AFFINE_COLS, "affine_cols")                                                                 \
    /* out [n, 1] I32 = x[:, i[0]] of an I32 tensor x: one side of a pair list as a row index.   \
     * Integer: no VJP. */                                                                       \
    X(INDEX_COLUMN, "index_column")                                                               \
    /* tangent. inputs (x [A, k], pairs [P, 2]); out [P, k] = x[j] - x[i] for pair (i, j): pair   \
     * vectors' tangent. Its VJP is PAIR_VECTORS_VJP. */                                          \
    X(ROW_DIFFERENCES, "row_differences")                                                         \
    /* tangent. inputs (gy [n, c], y [n, c], dy [n, T*c][, dgy [n, T*c]]), f[0] = alpha,          \
     * i[0] = T: the tangent of CELU_VJP(gy, y): dgy * celu' + gy * celu'' dx, where celu'' dx    \
     * is k dy / alpha where y < 0, else 0 (dy = celu' dx; k as CELU_VJP's). */                   \
    X(CELU_VJP_JVP, "celu_vjp_jvp")                                                               \
    /* tangent. inputs (dv [P, 3T], v [P, 3]); out [P, T] = v . dv_t / |v| (0 at v = 0). */       \
    X(NORM3_JVP, "norm3_jvp")                                                                     \
    /* tangent. inputs (gy [P, 1], v [P, 3], dv [P, 3T][, dgy [P, T]]); out [P, 3T], the tangent  \
     * of NORM3_VJP: dgy_t v / |v| + gy (dv_t / |v| - v (v . dv_t) / |v|^3). */                   \
    X(NORM3_VJP_JVP, "norm3_vjp_jvp")                                                             \
    /* tangent. inputs (gy, d, dd [n, T*c][, dgy [n, T*c]]), f[0] = rc, i[0] = T: the tangent of  \
     * COSINE_CUTOFF_VJP, dgy fc'(d) + gy fc''(d) dd. */                                          \
    X(COSINE_CUTOFF_VJP_JVP, "cosine_cutoff_vjp_jvp")                                             \
    /* tangent. inputs (dvec [P, 3T], vec, pairs, species, shifts), ANI_RADIAL's attributes and   \
     * i[1] = T; out [A, T*S*R]: the radial features' tangent. */                                 \
    X(ANI_RADIAL_JVP, "ani_radial_jvp")                                                           \
    /* tangent. inputs (g, vec, pairs, species, shifts, dvec [P, 3T][, dg [A, T*cols(g)]]),       \
     * ANI_RADIAL_VJP's attributes and i[1] = T; out [P, 3T]: the tangent of ANI_RADIAL_VJP       \
     * (the first S*R columns of each of dg's blocks, as of g). */                                \
    X(ANI_RADIAL_VJP_JVP, "ani_radial_vjp_jvp")                                                   \
    /* tangent. inputs (dvec [P, 3T], vec, pairs, triples, species, shift_theta, shift_r),        \
     * ANI_ANGULAR's attributes (without the radial features) and i[2] = T; out                   \
     * [A, T*S(S+1)/2*Ra*Z]: the angular features' tangent. */                                    \
    X(ANI_ANGULAR_JVP, "ani_angular_jvp")                                                         \
    /* tangent. inputs (g, vec, pairs, triples, species, shift_theta, shift_r, dvec [P, 3T]       \
     * [, dg [A, T*cols(g)]]), ANI_ANGULAR_VJP's attributes and i[2] = T; out [P, 3T]: the        \
     * tangent of ANI_ANGULAR_VJP (the last columns of each of dg's blocks, as of g). */          \
    X(ANI_ANGULAR_VJP_JVP, "ani_angular_vjp_jvp")

/* A pair's image offsets n, three integers in [-MLFF_IMAGE_MOST, MLFF_IMAGE_MOST],
 * packed 10 bits each into one int32: a third of the bytes of three reals,
 * and no conversion on the way to a device. Kernels unpack with the same
 * formula (IMAGE_OFFSET in shaders/). */
#define MLFF_IMAGE_MOST 511
static inline int32_t mlff_image_pack(const int32_t n[3])
{
    return (n[0] + 512) | (n[1] + 512) << 10 | (n[2] + 512) << 20;
}
static inline int32_t mlff_image_offset(int32_t packed, int axis)
{
    return (packed >> (10 * axis) & 1023) - 512;
}

typedef enum mlff_op {
#define MLFF_OP_ENUM(e, name) MLFF_OP_##e,
    MLFF_OP_LIST(MLFF_OP_ENUM)
#undef MLFF_OP_ENUM
    MLFF_OP_COUNT
} mlff_op;

typedef struct mlff_op_attrs {
    double f[5];
    int64_t i[4];
} mlff_op_attrs;

/* UNARY's functions u (core/ops.h); the _D1 and _D2 kinds are first and
 * second derivatives, which the reverse and tangent passes make (a D2 has
 * no derivative: nothing differentiates a second derivative again). */
typedef enum mlff_unary_kind {
    MLFF_UNARY_EXP = 0,
    MLFF_UNARY_SIN = 1,
    MLFF_UNARY_COS = 2,
    MLFF_UNARY_POW = 3,        /* x^p, p = f[1]; p x^(p-1) its derivative, also a POW */
    MLFF_UNARY_SIGMOID = 4,    /* s = 1 / (1 + exp(-x)) */
    MLFF_UNARY_SIGMOID_D1 = 5, /* s (1 - s) */
    MLFF_UNARY_SIGMOID_D2 = 6, /* s (1 - s) (1 - 2s) */
    MLFF_UNARY_SOFTPLUS = 7,   /* log(1 + exp(x)), derivative sigmoid */
    MLFF_UNARY_SHIFTED_SOFTPLUS = 8, /* softplus(x) - log 2 (SchNet's) */
    MLFF_UNARY_TANH = 9,
    MLFF_UNARY_TANH_D1 = 10,   /* 1 - tanh^2 */
    MLFF_UNARY_TANH_D2 = 11,   /* -2 tanh (1 - tanh^2) */
    MLFF_UNARY_SILU = 12,      /* x s */
    MLFF_UNARY_SILU_D1 = 13,   /* s (1 + x (1 - s)) */
    MLFF_UNARY_SILU_D2 = 14,   /* s (1 - s) (2 + x (1 - 2s)) */
    MLFF_UNARY_LOG = 15,       /* log x, derivative x^-1 (a POW) */
    MLFF_UNARY_LESS = 16,      /* x < p ? 1 : 0 (a mask), derivative 0 */
    MLFF_UNARY_LESS_EQUAL = 17, /* x <= p ? 1 : 0 */
    MLFF_UNARY_KINDS
} mlff_unary_kind;

/*
 * Stacks. The dense ops can run several networks of one shape on the runs of
 * their rows, each run through its own weights: ANI's element networks on
 * the atoms of each element, in one op for every element. With i[1] = E > 1
 * stacks, the op's last input is starts [E + 1, 1] I32, non-decreasing from
 * starts[0] = 0 to starts[E] = n: run e is the rows starts[e] .. starts[e+1]
 * - 1 (a run may be empty), and every weight and bias holds E stacks one
 * after another, stack e for run e.
 */
/*
 * CELU's derivative as PyTorch computes it, which is how models with CELU
 * (ANI) were trained and how TorchANI's forces and Hessians come out:
 * alpha c exp(c x) where x <= 0, with c = 1 / (float)alpha (ATen's celu
 * backward takes its input scale from alpha in float32), while the forward
 * pass uses exp(x / alpha) exactly. From y = celu(x) that is
 * k (y / alpha + 1)^k, k = alpha c, and its derivative (PyTorch's double
 * backward) c times it. In float32 k rounds to 1 (for ANI's alpha 0.1):
 * the derivative is y / alpha + 1. In float64 it differs from
 * exp(x / alpha) by about 1e-8 of itself, which TorchANI's float64 forces
 * carry (tests/core/test_ani_reference.c).
 */
static inline double mlff_celu_derivative_power(double alpha)
{
    return alpha * (1.0 / (double)(float)alpha);
}

static inline int64_t mlff_op_stacks(const mlff_op_attrs *a)
{
    return a->i[1] > 1 ? a->i[1] : 1;
}

/* The layers of a CELU_MLP or CELU_MLP_VJP node of n_inputs inputs. */
static inline int mlff_mlp_layers(mlff_op op, int n_inputs, const mlff_op_attrs *a)
{
    n_inputs -= mlff_op_stacks(a) > 1; /* the starts */
    return op == MLFF_OP_CELU_MLP_VJP ? n_inputs - 2 : (n_inputs - 1) / 2;
}

/* Whether an ANI_ANGULAR node of n_inputs inputs makes the radial features too. */
static inline int mlff_angular_has_radial(int n_inputs)
{
    return n_inputs == 9;
}

/* Such a node's radial part as ani_radial sees it: which of the node's
 * inputs is ani_radial's input k (vec, pairs, species, shifts), and its
 * attributes. */
static inline int mlff_angular_radial_input(int k)
{
    static const int inputs[4] = {6, 7, 3, 8};
    return inputs[k];
}
static inline mlff_op_attrs mlff_angular_radial_attrs(const mlff_op_attrs *a)
{
    return (mlff_op_attrs){.f = {a->f[3], a->f[4]}, .i = {a->i[0]}};
}

/* A PAIR_VECTORS_VJP node's pair lists, and whether its second list's
 * gradients are the radial features' (made in the node). */
static inline int mlff_pair_vjp_lists(int n_inputs)
{
    return n_inputs > 2 ? 2 : 1;
}
static inline int mlff_pair_vjp_has_radial(int n_inputs)
{
    return n_inputs == 7;
}

struct mlff_graph;

typedef struct mlff_op_info {
    const char *name;
    int n_inputs;
    /* Appends to g the nodes for the gradients of the node's inputs, given
     * gy, the gradient of its output; grads[k] = tensor or -1 (no gradient).
     * NULL for backward ops. */
    void (*vjp)(struct mlff_graph *g, int node, int gy, int grads[MLFF_MAX_OP_INPUTS]);
    /* Appends to g the nodes for the tangent of the node's output, given the
     * T-blocked tangents of its inputs (-1: none, a constant); returns it,
     * or -1 after failing the graph. NULL where no tangent can pass (integer
     * ops, the second-order ops themselves). */
    int (*jvp)(struct mlff_graph *g, int node, const int tangents[MLFF_MAX_OP_INPUTS], int64_t n_tangents);
} mlff_op_info;

/* The ops that tangent passes make, from ROW_DIFFERENCES on (a backend
 * runs them where it claims second order), and among them the
 * second-order ops proper, which nothing differentiates again. */
static inline int mlff_op_of_tangents(mlff_op op)
{
    return op >= MLFF_OP_ROW_DIFFERENCES;
}
static inline int mlff_op_second_order(mlff_op op)
{
    return op > MLFF_OP_ROW_DIFFERENCES;
}

/* The directions T of a node of op with these attributes that takes
 * tangents (1 for every other node). */
int64_t mlff_op_tangents(mlff_op op, const mlff_op_attrs *a);

const mlff_op_info *mlff_op_get(mlff_op op);

/* Builders: check shapes, append the node, return the output tensor or -1. */
struct mlff_graph;
int mlff_op_fill(struct mlff_graph *g, int rows_symbol, int64_t rows, int64_t cols, mlff_dtype dtype,
                 double value);
int mlff_op_add(struct mlff_graph *g, int a, int b);
int mlff_op_scale(struct mlff_graph *g, int x, double factor);
int mlff_op_mul(struct mlff_graph *g, int a, int b);
int mlff_op_concat_cols(struct mlff_graph *g, int a, int b);
int mlff_op_slice_cols(struct mlff_graph *g, int x, int64_t start, int64_t count);
int mlff_op_gather_rows(struct mlff_graph *g, int x, int index, mlff_dtype out_dtype);
int mlff_op_scatter_add_rows(struct mlff_graph *g, int x, int index, int rows_symbol, int64_t rows,
                             mlff_dtype out_dtype);
/* The same into few rows that each sum many (a row per system). */
int mlff_op_scatter_add_few_rows(struct mlff_graph *g, int x, int index, int rows_symbol, int64_t rows,
                                 mlff_dtype out_dtype);
/* Each row of x reduced to factor times the sum of its first `count`
 * columns (times w, shaped like x, where w >= 0), then scattered as above
 * (few_rows: as the few-rows form): out [n, 1]. A sum and its scatter in
 * one launch (an ensemble's atomic energies summed per system). */
int mlff_op_scatter_add_row_sums(struct mlff_graph *g, int x, int w, int64_t count, double factor, int index,
                                 int rows_symbol, int64_t rows, mlff_dtype out_dtype, int few_rows);
int mlff_op_sum_cols(struct mlff_graph *g, int x, double factor);
int mlff_op_sum_first_cols(struct mlff_graph *g, int x, int64_t count, double factor);
int mlff_op_broadcast_cols(struct mlff_graph *g, int x, int64_t cols, int64_t filled, double factor);
int mlff_op_linear(struct mlff_graph *g, int x, int weight, int bias, int64_t groups);
/* starts: -1, or the runs of x's rows for stacked weights ("Stacks" above). */
int mlff_op_linear_stacked(struct mlff_graph *g, int x, int weight, int bias, int64_t groups, int starts);
int mlff_op_linear_vjp(struct mlff_graph *g, int gy, int weight, int64_t groups, int starts);
int mlff_op_celu(struct mlff_graph *g, int x, double alpha);
int mlff_op_celu_vjp(struct mlff_graph *g, int gy, int y, double alpha);
/* layers: k (1..MLFF_MLP_MAX_LAYERS) weights and biases, weights[l] [G*w_l, w_{l-1}]. */
int mlff_op_celu_mlp(struct mlff_graph *g, int x, const int *weights, const int *biases, int layers,
                     int64_t groups, double alpha);
int mlff_op_celu_mlp_stacked(struct mlff_graph *g, int x, const int *weights, const int *biases, int layers,
                             int64_t groups, double alpha, int starts);
int mlff_op_celu_mlp_vjp(struct mlff_graph *g, int gy, int y, const int *weights, int layers,
                         int64_t groups, double alpha, int starts);
int mlff_op_pair_vectors(struct mlff_graph *g, int positions, int pairs, int shifts);
/* pair_vectors with pair_shifts(images, cells, pairs, system) in the same pass: one launch, not two;
 * positions_low and cells_low -1, or both given (core/ops.h, graph.h). */
int mlff_op_pair_vectors_of_images(struct mlff_graph *g, int positions, int pairs, int images, int cells,
                                   int system, int positions_low, int cells_low);
int mlff_op_pair_vectors_vjp(struct mlff_graph *g, int gvec, int pairs, int positions_like);
/* a + b for two partial gradients of one tensor, read by nothing else (the
 * reverse pass's): where both are pair_vectors_vjp of one list, one node
 * that walks both lists (a model with two cutoffs gets its positions'
 * gradient in one launch, not two and an add); where both are column
 * scatters into disjoint columns (the pieces of a split), the two side by
 * side (a split's gradient is its pieces' concatenated, not a scatter of
 * each into zeros and their sum). */
int mlff_op_sum_gradients(struct mlff_graph *g, int a, int b);
int mlff_op_pair_shifts(struct mlff_graph *g, int images, int cells, int pairs, int system);
int mlff_op_norm3(struct mlff_graph *g, int v);
int mlff_op_norm3_vjp(struct mlff_graph *g, int gy, int v);
int mlff_op_cosine_cutoff(struct mlff_graph *g, int d, double rc);
int mlff_op_cosine_cutoff_vjp(struct mlff_graph *g, int gy, int d, double rc);
int mlff_op_ani_radial(struct mlff_graph *g, int vec, int pairs, int species, int shifts,
                       double eta, double rc, int64_t n_species);
int mlff_op_ani_angular(struct mlff_graph *g, int vec, int pairs, int triples, int species,
                        int shift_theta, int shift_r, double zeta, double eta, double rc,
                        int64_t n_species);
/* The radial features' part of an AEV: ani_radial's inputs but the species. */
typedef struct mlff_ani_radial_inputs {
    int vec, pairs, shifts;
    double eta, rc;
} mlff_ani_radial_inputs;
/* The AEV, [radial | angular], as one ANI_ANGULAR node (core/ops.h). */
int mlff_op_ani_aev(struct mlff_graph *g, const mlff_ani_radial_inputs *radial, int vec, int pairs, int triples,
                    int species, int shift_theta, int shift_r, double zeta, double eta, double rc,
                    int64_t n_species);
int mlff_op_pair_triples(struct mlff_graph *g, int pairs, int first, int rows_symbol, int64_t rows);
/* The message-passing ops (core/op_message.c). map: an I32 parameter [m, 1]. */
int mlff_op_unary(struct mlff_graph *g, int x, mlff_unary_kind kind, double factor, double p);
int mlff_op_gather_cols(struct mlff_graph *g, int x, int map);
int mlff_op_scatter_add_cols(struct mlff_graph *g, int x, int map, int64_t cols);
/* s, t: parameters [1, cols] (t -1: none). */
int mlff_op_affine_cols(struct mlff_graph *g, int x, int s, int t);
int mlff_op_index_column(struct mlff_graph *g, int x, int64_t column);
/* The ops of a map given as numbers (made a parameter named `name`). */
int mlff_op_gather_cols_of(struct mlff_graph *g, int x, const int32_t *map, int64_t m);
int mlff_op_scatter_add_cols_of(struct mlff_graph *g, int x, const int32_t *map, int64_t cols);

/* Builders of the ops' T-blocked forms (see "Tangents" above), for the
 * tangent pass. */
int mlff_op_mul_blocks(struct mlff_graph *g, int a, int b, int64_t n_tangents);
int mlff_op_gather_cols_blocks_of(struct mlff_graph *g, int x, const int32_t *map, int64_t m, int64_t n_tangents);
int mlff_op_concat_blocks(struct mlff_graph *g, int a, int b, int64_t n_tangents);
int mlff_op_slice_blocks(struct mlff_graph *g, int x, int64_t start, int64_t count, int64_t n_tangents);
int mlff_op_sum_first_cols_blocks(struct mlff_graph *g, int x, int64_t count, double factor, int64_t n_tangents);
int mlff_op_broadcast_blocks(struct mlff_graph *g, int x, int64_t cols, int64_t filled, double factor,
                             int64_t n_tangents);
int mlff_op_linear_blocks(struct mlff_graph *g, int x, int weight, int bias, int64_t groups, int starts,
                          int64_t n_tangents);
int mlff_op_linear_vjp_blocks(struct mlff_graph *g, int gy, int weight, int64_t groups, int starts, int64_t n_tangents);
int mlff_op_celu_vjp_blocks(struct mlff_graph *g, int gy, int y, double alpha, int64_t n_tangents);
int mlff_op_cosine_cutoff_vjp_blocks(struct mlff_graph *g, int gy, int d, double rc, int64_t n_tangents);
int mlff_op_row_differences(struct mlff_graph *g, int x, int pairs);

#endif
