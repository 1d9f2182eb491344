#include "op_cases.h"

#include <math.h>
#include <stdlib.h>

double test_uniform(test_rng *rng, double lo, double hi)
{
    /* xorshift64*: deterministic across platforms. */
    rng->state ^= rng->state >> 12;
    rng->state ^= rng->state << 25;
    rng->state ^= rng->state >> 27;
    uint64_t r = rng->state * 2685821657736338717ULL;
    return lo + (hi - lo) * (double)(r >> 11) / 9007199254740992.0;
}

int op_case_weighted_sum(mlff_graph *g, test_rng *rng, int y)
{
    const mlff_graph_tensor *t = &g->tensors[y];
    double *r = malloc((size_t)(t->rows * t->cols) * sizeof *r);
    if (!r)
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "test: out of memory");
    for (int64_t k = 0; k < t->rows * t->cols; k++)
        r[k] = test_uniform(rng, -1, 1);
    int w = mlff_graph_param(g, "loss weights", MLFF_DTYPE_REAL, t->rows, t->cols, MLFF_DTYPE_F64, r);
    free(r);
    return mlff_op_sum_cols(g, mlff_op_mul(g, y, w), 1.0);
}

static int random_param(mlff_graph *g, test_rng *rng, int64_t rows, int64_t cols, double lo, double hi)
{
    double *v = malloc((size_t)(rows * cols) * sizeof *v);
    if (!v)
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "test: out of memory");
    for (int64_t k = 0; k < rows * cols; k++)
        v[k] = test_uniform(rng, lo, hi);
    int t = mlff_graph_param(g, "random", MLFF_DTYPE_REAL, rows, cols, MLFF_DTYPE_F64, v);
    free(v);
    return t;
}

static int index_param(mlff_graph *g, int64_t rows, int64_t cols, const int32_t *data)
{
    return mlff_graph_param(g, "index", MLFF_DTYPE_I32, rows, cols, MLFF_DTYPE_I32, data);
}

/* Vectors of random direction with lengths in [lo, hi]. */
static int random_vectors(mlff_graph *g, test_rng *rng, int64_t rows, double lo, double hi)
{
    double *v = malloc((size_t)rows * 3 * sizeof *v);
    if (!v)
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "test: out of memory");
    for (int64_t r = 0; r < rows; r++) {
        double len = 0;
        for (int d = 0; d < 3; d++) {
            v[3 * r + d] = test_uniform(rng, -1, 1);
            len += v[3 * r + d] * v[3 * r + d];
        }
        double want = test_uniform(rng, lo, hi) / sqrt(len);
        for (int d = 0; d < 3; d++)
            v[3 * r + d] *= want;
    }
    int t = mlff_graph_param(g, "vectors", MLFF_DTYPE_REAL, rows, 3, MLFF_DTYPE_F64, v);
    free(v);
    return t;
}

#define WRT1(a) (wrt[0] = (a), *n_wrt = 1)
#define WRT2(a, b) (wrt[0] = (a), wrt[1] = (b), *n_wrt = 2)
#define CASE(fn) static int fn(mlff_graph *g, test_rng *rng, int wrt[OP_CASE_MAX_WRT], int *n_wrt)

CASE(case_add)
{
    int x = random_param(g, rng, 4, 3, -1, 1), y = random_param(g, rng, 4, 3, -1, 1);
    WRT2(x, y);
    return mlff_op_add(g, x, y);
}

CASE(case_scale)
{
    int x = random_param(g, rng, 4, 3, -1, 1);
    WRT1(x);
    return mlff_op_scale(g, x, -1.7);
}

CASE(case_mul)
{
    int x = random_param(g, rng, 4, 3, -1, 1), y = random_param(g, rng, 4, 3, -1, 1);
    WRT2(x, y);
    return mlff_op_mul(g, x, y);
}

CASE(case_mul_broadcast)
{
    int x = random_param(g, rng, 4, 3, -1, 1), y = random_param(g, rng, 4, 1, -1, 1);
    WRT2(x, y);
    return mlff_op_mul(g, x, y);
}

/* [n, 3, k] times [n, 1, k] (a block applied to each of 3). */
CASE(case_mul_tiled)
{
    int x = random_param(g, rng, 4, 6, -1, 1), y = random_param(g, rng, 4, 2, -1, 1);
    WRT2(x, y);
    return mlff_op_mul(g, x, y);
}

CASE(case_concat_cols)
{
    int x = random_param(g, rng, 4, 2, -1, 1), y = random_param(g, rng, 4, 3, -1, 1);
    WRT2(x, y);
    return mlff_op_concat_cols(g, x, y);
}

CASE(case_gather_rows)
{
    static const int32_t idx[7] = {4, 0, 2, 2, 1, 4, 3};
    int x = random_param(g, rng, 5, 3, -1, 1);
    WRT1(x);
    return mlff_op_gather_rows(g, x, index_param(g, 7, 1, idx), MLFF_DTYPE_REAL);
}

CASE(case_scatter_add_rows)
{
    static const int32_t idx[7] = {4, 0, 2, 2, 1, 4, 0};
    int x = random_param(g, rng, 7, 3, -1, 1);
    WRT1(x);
    return mlff_op_scatter_add_rows(g, x, index_param(g, 7, 1, idx), MLFF_FIXED_ROWS, 5,
                                    MLFF_DTYPE_REAL);
}

/* Targets past 2^16, out of order, some twice: a device sort of three
 * 8-bit passes (one more than any other case needs). */
CASE(case_scatter_add_rows_wide)
{
    int32_t idx[600];
    for (int k = 0; k < 600; k++)
        idx[k] = (65000 + (k % 400) * 173) % 70000;
    int x = random_param(g, rng, 600, 2, -1, 1);
    WRT1(x);
    return mlff_op_scatter_add_rows(g, x, index_param(g, 600, 1, idx), MLFF_FIXED_ROWS, 70000,
                                    MLFF_DTYPE_REAL);
}

/* Sums per system: 2000 rows into 4, one of them empty, every segment
 * longer than a work-group on the GPUs (each entry reduced by one). */
CASE(case_scatter_add_few_rows)
{
    int32_t idx[2000];
    for (int k = 0; k < 2000; k++)
        idx[k] = k % 4 == 2 ? 3 : k % 4;
    int x = random_param(g, rng, 2000, 2, -1, 1);
    WRT1(x);
    return mlff_op_scatter_add_few_rows(g, x, index_param(g, 2000, 1, idx), MLFF_FIXED_ROWS, 4,
                                        MLFF_DTYPE_REAL);
}

/* The sums with an add after them (an energy and its constant part, two
 * gradients), which GPU backends fold into the sum (MLFF_EPILOGUE_ADD):
 * the scatter as the add's second term, then as its first. */
CASE(case_scatter_add_rows_plus)
{
    static const int32_t idx[7] = {4, 0, 2, 2, 1, 4, 0};
    int x = random_param(g, rng, 7, 3, -1, 1), z = random_param(g, rng, 5, 3, -1, 1);
    WRT2(x, z);
    return mlff_op_add(g, z, mlff_op_scatter_add_rows(g, x, index_param(g, 7, 1, idx), MLFF_FIXED_ROWS, 5,
                                                      MLFF_DTYPE_REAL));
}

CASE(case_scatter_add_few_rows_plus)
{
    int32_t idx[300];
    for (int k = 0; k < 300; k++)
        idx[k] = k % 3;
    int x = random_param(g, rng, 300, 2, -1, 1), z = random_param(g, rng, 3, 2, -1, 1);
    WRT2(x, z);
    return mlff_op_add(g, mlff_op_scatter_add_few_rows(g, x, index_param(g, 300, 1, idx), MLFF_FIXED_ROWS, 3,
                                                       MLFF_DTYPE_REAL),
                       z);
}

/* Rows reduced to sums of their first columns before they are scattered
 * (an ensemble's atomic energies summed per system): into many rows, then
 * into few through weights (ANI's mask of each atom's own networks), then
 * into few with an add folded in. */
CASE(case_scatter_add_row_sums)
{
    static const int32_t idx[7] = {4, 0, 2, 2, 1, 4, 0};
    int x = random_param(g, rng, 7, 5, -1, 1);
    WRT1(x);
    return mlff_op_scatter_add_row_sums(g, x, -1, 3, 0.3, index_param(g, 7, 1, idx), MLFF_FIXED_ROWS, 5,
                                        MLFF_DTYPE_REAL, 0);
}

CASE(case_scatter_add_few_row_sums_weighted)
{
    int32_t idx[1000];
    for (int k = 0; k < 1000; k++)
        idx[k] = k % 4 == 2 ? 3 : k % 4;
    int x = random_param(g, rng, 1000, 6, -1, 1), w = random_param(g, rng, 1000, 6, -1, 1);
    WRT2(x, w);
    return mlff_op_scatter_add_row_sums(g, x, w, 4, 0.7, index_param(g, 1000, 1, idx), MLFF_FIXED_ROWS, 4,
                                        MLFF_DTYPE_REAL, 1);
}

CASE(case_scatter_add_few_row_sums_plus)
{
    int32_t idx[300];
    for (int k = 0; k < 300; k++)
        idx[k] = k % 3;
    int x = random_param(g, rng, 300, 4, -1, 1), z = random_param(g, rng, 3, 1, -1, 1);
    WRT2(x, z);
    return mlff_op_add(g, mlff_op_scatter_add_row_sums(g, x, -1, 4, 0.125, index_param(g, 300, 1, idx),
                                                       MLFF_FIXED_ROWS, 3, MLFF_DTYPE_REAL, 1),
                       z);
}

/* An element the batch lacks (its atom list has no rows, as the tests bind
 * every size symbol to 0): its scatter is zeros, which the plan does not
 * launch; x + 0 is then x itself, and a zero read by another op (the mul)
 * is written after all. out = (x + 0) + x * (0 + 0). */
CASE(case_absent_element)
{
    int x = random_param(g, rng, 4, 3, -1, 1);
    int atoms = mlff_graph_input_element_atoms(g, 0);
    int none = mlff_op_scatter_add_rows(g, mlff_op_gather_rows(g, x, atoms, MLFF_DTYPE_REAL), atoms,
                                        MLFF_FIXED_ROWS, 4, MLFF_DTYPE_REAL);
    WRT1(x);
    return mlff_op_add(g, mlff_op_add(g, x, none), mlff_op_mul(g, x, mlff_op_add(g, none, none)));
}

CASE(case_sum_cols)
{
    int x = random_param(g, rng, 4, 5, -1, 1);
    WRT1(x);
    return mlff_op_sum_cols(g, x, 0.3);
}

CASE(case_sum_first_cols)
{
    int x = random_param(g, rng, 4, 5, -1, 1);
    WRT1(x);
    return mlff_op_sum_first_cols(g, x, 3, 0.3);
}

/* Stacks (core/ops.h): 37 rows in runs of 3, 0, 20 and 14 rows (none a
 * whole number of any kernel's row blocks, one shorter than a block of 8,
 * one empty), which leave the kernels' last row blocks past the last run
 * (mlff_row_blocks). */
#define STACKED_ROWS 37
#define STACKS 4
static int stack_starts(mlff_graph *g)
{
    static const int32_t starts[STACKS + 1] = {0, 3, 3, 23, STACKED_ROWS};
    return index_param(g, STACKS + 1, 1, starts);
}

/* A CELU_MLP of `layers` layers on random weights; widths[0..layers] per
 * group; with starts, `stacks` stacks of them. */
static int random_mlp_stacked(mlff_graph *g, test_rng *rng, int64_t rows, int64_t groups, const int64_t *widths,
                              int layers, int after_celu, int stacks, int starts, int wrt[OP_CASE_MAX_WRT],
                              int *n_wrt)
{
    int param = random_param(g, rng, rows, groups * widths[0], -1.5, 1.5);
    /* After a CELU the reverse pass has CELU_VJP after CELU_MLP_VJP, which the planner folds in. */
    int x = after_celu ? mlff_op_celu(g, param, 0.3) : param;
    int w[MLFF_MLP_MAX_LAYERS], b[MLFF_MLP_MAX_LAYERS];
    for (int l = 0; l < layers; l++) {
        const double scale = 1.5 / sqrt((double)widths[l]);
        w[l] = random_param(g, rng, stacks * groups * widths[l + 1], widths[l], -scale, scale);
        b[l] = random_param(g, rng, stacks * groups * widths[l + 1], 1, -0.5, 0.5);
    }
    WRT1(param);
    return mlff_op_celu_mlp_stacked(g, x, w, b, layers, groups, 0.3, starts);
}

static int random_mlp(mlff_graph *g, test_rng *rng, int64_t rows, int64_t groups, const int64_t *widths,
                      int layers, int after_celu, int wrt[OP_CASE_MAX_WRT], int *n_wrt)
{
    return random_mlp_stacked(g, rng, rows, groups, widths, layers, after_celu, 1, -1, wrt, n_wrt);
}

/* The loss weighs every block of the output, the hidden ones too. */
CASE(case_celu_mlp)
{
    static const int64_t widths[] = {9, 11, 6, 1};
    return random_mlp(g, rng, 7, 2, widths, 3, 0, wrt, n_wrt);
}

CASE(case_celu_mlp_one_layer)
{
    static const int64_t widths[] = {5, 4};
    return random_mlp(g, rng, 3, 3, widths, 1, 0, wrt, n_wrt);
}

/* The members' mean of the results, as in ANI: the reverse pass hands the
 * VJP the result block's gradient alone (no zeros for the hidden blocks). */
CASE(case_celu_mlp_mean)
{
    static const int64_t widths[] = {9, 11, 6, 1};
    return mlff_op_sum_first_cols(g, random_mlp(g, rng, 7, 3, widths, 3, 0, wrt, n_wrt), 3, 1.0 / 3);
}

/* The same through stacks, with layers wide enough for a GEMM's K split in
 * 3 (gemm_splits=3) when the backend runs them a layer at a time. */
CASE(case_celu_mlp_mean_stacked)
{
    static const int64_t widths[] = {64, 48, 40, 1};
    const int y = random_mlp_stacked(g, rng, STACKED_ROWS, 2, widths, 3, 1, STACKS, stack_starts(g), wrt, n_wrt);
    return mlff_op_sum_first_cols(g, y, 2, 0.5);
}

/* Wider than a GPU work-group (300), a row count that leaves a partial row
 * block, and after a CELU (as in ANI, whose first layer's CELU comes before). */
CASE(case_celu_mlp_wide)
{
    static const int64_t widths[] = {40, 300, 70, 3};
    return random_mlp(g, rng, 13, 2, widths, 3, 1, wrt, n_wrt);
}

/* Each run of rows through its own stack of weights, forward and back
 * (after a CELU, whose derivative the reverse pass folds in). */
CASE(case_celu_mlp_stacked)
{
    static const int64_t widths[] = {9, 11, 6, 1};
    return random_mlp_stacked(g, rng, STACKED_ROWS, 2, widths, 3, 1, STACKS, stack_starts(g), wrt, n_wrt);
}

CASE(case_linear)
{
    int x = random_param(g, rng, 4, 3, -1, 1);
    int w = random_param(g, rng, 5, 3, -1, 1), b = random_param(g, rng, 5, 1, -1, 1);
    WRT1(x);
    return mlff_op_linear(g, x, w, b, 1);
}

CASE(case_linear_grouped)
{
    int x = random_param(g, rng, 4, 6, -1, 1);
    int w = random_param(g, rng, 8, 3, -1, 1), b = random_param(g, rng, 8, 1, -1, 1);
    WRT1(x);
    return mlff_op_linear(g, x, w, b, 2);
}

/* Few rows and outputs with a long K (ANI's first-layer gradient for a
 * molecule): OpenCL's GEMM then spreads each output over up to 256 lanes. */
CASE(case_linear_long_k)
{
    int x = random_param(g, rng, 3, 600, -1, 1);
    int w = random_param(g, rng, 5, 600, -0.2, 0.2), b = random_param(g, rng, 5, 1, -1, 1);
    WRT1(x);
    return mlff_op_linear(g, x, w, b, 1);
}

/* Two dense layers, each with its CELU (which the GPU backends fuse into the
 * GEMM), at sizes that leave partial tiles, blocks and subgroup steps
 * everywhere: 37 rows, 45 and 150 inputs, 300 and 2 x 70 outputs. */
CASE(case_dense_layers)
{
    int x = random_param(g, rng, 37, 45, -1, 1);
    int w1 = random_param(g, rng, 300, 45, -0.3, 0.3), b1 = random_param(g, rng, 300, 1, -1, 1);
    int w2 = random_param(g, rng, 140, 150, -0.2, 0.2), b2 = random_param(g, rng, 140, 1, -1, 1);
    WRT1(x);
    int h = mlff_op_celu(g, mlff_op_linear(g, x, w1, b1, 1), 0.5);
    return mlff_op_celu(g, mlff_op_linear(g, h, w2, b2, 2), 0.5);
}

/* The same layers stacked, as ANI's first layer and a grouped one. */
CASE(case_dense_layers_stacked)
{
    int starts = stack_starts(g);
    int x = random_param(g, rng, STACKED_ROWS, 45, -1, 1);
    int w1 = random_param(g, rng, STACKS * 300, 45, -0.3, 0.3), b1 = random_param(g, rng, STACKS * 300, 1, -1, 1);
    int w2 = random_param(g, rng, STACKS * 140, 150, -0.2, 0.2), b2 = random_param(g, rng, STACKS * 140, 1, -1, 1);
    WRT1(x);
    int h = mlff_op_celu(g, mlff_op_linear_stacked(g, x, w1, b1, 1, starts), 0.5);
    return mlff_op_celu(g, mlff_op_linear_stacked(g, h, w2, b2, 2, starts), 0.5);
}

CASE(case_celu)
{
    int x = random_param(g, rng, 4, 5, -0.5, 0.5);
    WRT1(x);
    return mlff_op_celu(g, x, 0.1);
}

CASE(case_pair_vectors)
{
    static const int32_t pairs[6 * 2] = {0, 1, 1, 0, 0, 4, 2, 3, 3, 1, 4, 2};
    int pos = random_param(g, rng, 5, 3, -2, 2), shifts = random_param(g, rng, 6, 3, -1, 1);
    WRT1(pos);
    return mlff_op_pair_vectors(g, pos, index_param(g, 6, 2, pairs), shifts);
}

/* Differences of rows of any width by pairs: the tangent of pair vectors. */
CASE(case_row_differences)
{
    static const int32_t pairs[6 * 2] = {0, 1, 1, 0, 0, 4, 2, 3, 3, 1, 4, 2};
    int x = random_param(g, rng, 5, 7, -2, 2);
    WRT1(x);
    return mlff_op_row_differences(g, x, index_param(g, 6, 2, pairs));
}

/* Three pair lists on the same atoms (two are ANI's radial and angular
 * ones): the reverse pass walks the last two in one pair_vectors_vjp
 * (mlff_op_sum_gradients) and adds the first's, an add GPU backends fold. */
CASE(case_pair_vectors_three_lists)
{
    static const int32_t pairs_a[6 * 2] = {0, 1, 1, 0, 0, 4, 2, 3, 3, 1, 4, 2};
    static const int32_t pairs_b[6 * 2] = {1, 2, 2, 1, 3, 0, 4, 4, 0, 3, 2, 4};
    static const int32_t pairs_c[6 * 2] = {3, 4, 4, 3, 1, 1, 2, 0, 0, 2, 4, 1};
    int pos = random_param(g, rng, 5, 3, -2, 2);
    int a = mlff_op_pair_vectors(g, pos, index_param(g, 6, 2, pairs_a), random_param(g, rng, 6, 3, -1, 1));
    int b = mlff_op_pair_vectors(g, pos, index_param(g, 6, 2, pairs_b), random_param(g, rng, 6, 3, -1, 1));
    int c = mlff_op_pair_vectors(g, pos, index_param(g, 6, 2, pairs_c), random_param(g, rng, 6, 3, -1, 1));
    WRT1(pos);
    return mlff_op_add(g, mlff_op_add(g, a, b), c);
}

/* Six pairs over five atoms in two systems; images small integers and the
 * packing's extremes: the index inputs of pair_shifts. */
typedef struct shift_indices {
    int images, pairs, system;
} shift_indices;

static shift_indices six_shifted_pairs(mlff_graph *g)
{
    static const int32_t pairs[6 * 2] = {0, 1, 1, 0, 0, 0, 2, 3, 3, 4, 4, 2};
    static const int32_t system[5] = {0, 0, 1, 1, 1};
    static const int32_t images[6][3] = {{0, 0, 0}, {1, 0, -1}, {0, 2, 1}, {-1, 1, 0}, {0, 0, 1}, {511, -511, 1}};
    int32_t packed[6];
    for (int p = 0; p < 6; p++)
        packed[p] = mlff_image_pack(images[p]);
    return (shift_indices){index_param(g, 6, 1, packed), index_param(g, 6, 2, pairs), index_param(g, 5, 1, system)};
}

CASE(case_pair_shifts)
{
    const shift_indices x = six_shifted_pairs(g);
    int cells = random_param(g, rng, 2, 9, -3, 3);
    WRT1(cells);
    return mlff_op_pair_shifts(g, x.images, cells, x.pairs, x.system);
}

/* A system's cell gradient sums all its pairs (millions in a large box: per
 * center, then per system, where GPU kernels split each sum over a
 * work-group): 611 pairs in one system and 289 in the other, more than a
 * group has items and not a multiple of it, their centers out of order. */
CASE(case_pair_shifts_long)
{
    enum { N_PAIRS = 900, IN_FIRST = 611 };
    static const int32_t system[5] = {0, 0, 1, 1, 1};
    int32_t pairs[N_PAIRS * 2], images[N_PAIRS];
    for (int p = 0; p < N_PAIRS; p++) {
        const int first = p < IN_FIRST ? 0 : 2, atoms = p < IN_FIRST ? 2 : 3;
        pairs[2 * p] = first + p % atoms;
        pairs[2 * p + 1] = first + (p / atoms) % atoms;
        int32_t n[3];
        for (int d = 0; d < 3; d++)
            n[d] = (int32_t)round(test_uniform(rng, -2.5, 2.5));
        images[p] = mlff_image_pack(n);
    }
    int cells = random_param(g, rng, 2, 9, -3, 3);
    WRT1(cells);
    return mlff_op_pair_shifts(g, index_param(g, N_PAIRS, 1, images), cells, index_param(g, N_PAIRS, 2, pairs),
                               index_param(g, 5, 1, system));
}

CASE(case_pair_vectors_shifts)
{
    static const int32_t pairs[4 * 2] = {0, 1, 1, 0, 2, 2, 3, 1};
    int pos = random_param(g, rng, 4, 3, -2, 2), shifts = random_param(g, rng, 4, 3, -1, 1);
    wrt[0] = shifts;
    *n_wrt = 1;
    return mlff_op_pair_vectors(g, pos, index_param(g, 4, 2, pairs), shifts);
}

CASE(case_pair_vectors_images)
{
    /* As case_pair_shifts, the shifts made by pair_vectors itself. */
    const shift_indices x = six_shifted_pairs(g);
    int pos = random_param(g, rng, 5, 3, -2, 2), cells = random_param(g, rng, 2, 9, -3, 3);
    WRT2(pos, cells);
    return mlff_op_pair_vectors_of_images(g, pos, x.pairs, x.images, cells, x.system, -1, -1);
}

/* Cell entries of MLFF_CELL_HIGH_BITS bits (core/graph.h) about `size`, and
 * their low parts: values a float32 kernel multiplies by image offsets
 * exactly. */
static void split_cells(test_rng *rng, int systems, double size, double *high, double *low)
{
    for (int k = 0; k < 9 * systems; k++) {
        const double x = (k % 9 % 4 == 0 ? size : 0) + test_uniform(rng, -0.1, 0.1) * size;
        int e;
        const double m = frexp(x, &e);
        high[k] = x == 0 ? 0 : ldexp(nearbyint(ldexp(m, MLFF_CELL_HIGH_BITS)), e - MLFF_CELL_HIGH_BITS);
        low[k] = x - high[k];
    }
}

/* The same with positions and cells as high and low parts, as a model
 * builds them (core/graph.h): positions far from the origin in a large
 * cell, where the pair vectors need the low parts in float32. */
CASE(case_pair_vectors_images_low)
{
    const shift_indices x = six_shifted_pairs(g);
    double high[2 * 9], low[2 * 9];
    split_cells(rng, 2, 48.0, high, low);
    const int cells = mlff_graph_param(g, "cells", MLFF_DTYPE_REAL, 2, 9, MLFF_DTYPE_F64, high);
    const int cells_low = mlff_graph_param(g, "cells_low", MLFF_DTYPE_REAL, 2, 9, MLFF_DTYPE_F64, low);
    const int pos = random_param(g, rng, 5, 3, 40, 50), pos_low = random_param(g, rng, 5, 3, -2e-6, 2e-6);
    WRT1(pos); /* the cells': case_pair_vectors_images (shifts this long defeat finite differences) */
    return mlff_op_pair_vectors_of_images(g, pos, x.pairs, x.images, cells, x.system, pos_low, cells_low);
}

CASE(case_norm3)
{
    int v = random_vectors(g, rng, 6, 0.5, 2.0);
    WRT1(v);
    return mlff_op_norm3(g, v);
}

CASE(case_cosine_cutoff)
{
    int d = random_param(g, rng, 6, 1, 0.5, 2.5);
    WRT1(d);
    return mlff_op_cosine_cutoff(g, d, 2.0);
}

/* Five atoms of three species, every ordered pair sorted by center. */
static const int32_t atom_species[5] = {0, 1, 1, 2, 0};

static int all_pairs(mlff_graph *g)
{
    int32_t pairs[20 * 2];
    int p = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            if (i != j) {
                pairs[2 * p] = i;
                pairs[2 * p + 1] = j;
                p++;
            }
    return index_param(g, 20, 2, pairs);
}

static int column(mlff_graph *g, int64_t n, const double *values)
{
    return mlff_graph_param(g, "column", MLFF_DTYPE_REAL, n, 1, MLFF_DTYPE_F64, values);
}

CASE(case_ani_radial)
{
    static const double shifts[4] = {0.9, 1.4, 1.9, 2.4};
    int vec = random_vectors(g, rng, 20, 0.9, 3.2); /* some beyond the 3.0 cutoff */
    WRT1(vec);
    return mlff_op_ani_radial(g, vec, all_pairs(g), index_param(g, 5, 1, atom_species),
                              column(g, 4, shifts), 4.0, 3.0, 3);
}

/* ANI angular features of the five atoms' 20 pairs (some beyond the 3.0
 * cutoff), behind the radial features of `radial` if not NULL. */
static int angular_features(mlff_graph *g, int vec, int pairs, int triples, const mlff_ani_radial_inputs *radial)
{
    static const double shift_theta[4] = {0.39, 1.18, 1.96, 2.75}, shift_r[2] = {1.0, 2.0};
    const int species = index_param(g, 5, 1, atom_species);
    if (radial)
        return mlff_op_ani_aev(g, radial, vec, pairs, triples, species, column(g, 4, shift_theta),
                               column(g, 2, shift_r), 8.0, 2.0, 3.0, 3);
    return mlff_op_ani_angular(g, vec, pairs, triples, species, column(g, 4, shift_theta), column(g, 2, shift_r), 8.0,
                               2.0, 3.0, 3);
}

/* Every unordered pair of each center's four pairs, listed explicitly. */
static int every_triple(mlff_graph *g)
{
    int32_t triples[5 * 6 * 2];
    int t = 0;
    for (int center = 0; center < 5; center++)
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) {
                triples[2 * t] = center * 4 + a;
                triples[2 * t + 1] = center * 4 + b;
                t++;
            }
    return index_param(g, t, 2, triples);
}

CASE(case_ani_angular)
{
    int vec = random_vectors(g, rng, 20, 0.9, 3.2);
    WRT1(vec);
    return angular_features(g, vec, all_pairs(g), every_triple(g), NULL);
}

/* The AEV as ANI builds it: the radial features (of their own pair
 * vectors, some beyond their 3.5 cutoff, 5 shifts) and the angular ones
 * behind them, in one node; each gradient reads its block of the AEV's. */
CASE(case_ani_aev)
{
    static const double shifts[5] = {0.9, 1.4, 1.9, 2.4, 2.9};
    int vec = random_vectors(g, rng, 20, 0.9, 3.2), radial_vec = random_vectors(g, rng, 20, 0.9, 3.7);
    WRT2(vec, radial_vec);
    const mlff_ani_radial_inputs radial = {radial_vec, all_pairs(g), column(g, 5, shifts), 4.0, 3.5};
    return angular_features(g, vec, all_pairs(g), every_triple(g), &radial);
}

/* The same with 40 radial shifts: an item a shift, no partial sums
 * (ani_angular.kernel's RADIAL_SPLIT 1). */
CASE(case_ani_aev_many_shifts)
{
    double shifts[40];
    for (int k = 0; k < 40; k++)
        shifts[k] = 0.8 + 0.07 * k;
    int vec = random_vectors(g, rng, 20, 0.9, 3.2), radial_vec = random_vectors(g, rng, 20, 0.9, 3.7);
    WRT2(vec, radial_vec);
    const mlff_ani_radial_inputs radial = {radial_vec, all_pairs(g), column(g, 40, shifts), 4.0, 3.5};
    return angular_features(g, vec, all_pairs(g), every_triple(g), &radial);
}

/* The same, its triples built by pair_triples from where each pair's triples start. */
CASE(case_ani_angular_pair_triples)
{
    static const int32_t start_in_center[4] = {0, 3, 5, 6}; /* pair a of 4 makes 3 - a */
    int32_t first[20];
    for (int p = 0; p < 20; p++)
        first[p] = 6 * (p / 4) + start_in_center[p % 4];
    int vec = random_vectors(g, rng, 20, 0.9, 3.2), pairs = all_pairs(g);
    WRT1(vec);
    return angular_features(g, vec, pairs,
                            mlff_op_pair_triples(g, pairs, index_param(g, 20, 1, first), MLFF_FIXED_ROWS, 30), NULL);
}

/* The AEV with 70 radial pairs a center (each neighbour listed again and
 * again, as the op allows): more than a GPU group takes at a time
 * (ani_angular.kernel's RADIAL_CHUNK), the last chunk partial. */
CASE(case_ani_aev_many_pairs)
{
    enum { PER_CENTER = 70, PAIRS = 5 * PER_CENTER };
    static const double shifts[5] = {0.9, 1.4, 1.9, 2.4, 2.9};
    int32_t pairs[2 * PAIRS];
    for (int p = 0; p < PAIRS; p++) {
        pairs[2 * p] = p / PER_CENTER;
        pairs[2 * p + 1] = (p / PER_CENTER + 1 + p % 4) % 5;
    }
    int vec = random_vectors(g, rng, 20, 0.9, 3.2), radial_vec = random_vectors(g, rng, PAIRS, 0.9, 3.7);
    WRT2(vec, radial_vec);
    const mlff_ani_radial_inputs radial = {radial_vec, index_param(g, PAIRS, 2, pairs), column(g, 5, shifts), 4.0,
                                           3.5};
    return angular_features(g, vec, all_pairs(g), every_triple(g), &radial);
}

/* The AEV of positions as ANI builds it: each list's pair vectors (of
 * random shifts), then the radial and angular features in one node. The
 * reverse pass makes the radial features' pair gradients in the sum of
 * both lists' gradients (a pair_vectors_vjp of seven inputs,
 * mlff_op_sum_gradients), with no ani_radial_vjp of their own. */
CASE(case_ani_aev_of_positions)
{
    static const double shifts[5] = {0.9, 1.4, 1.9, 2.4, 2.9};
    const int pos = random_param(g, rng, 5, 3, -1.6, 1.6), radial_pairs = all_pairs(g), pairs = all_pairs(g);
    WRT1(pos);
    const int radial_vec = mlff_op_pair_vectors(g, pos, radial_pairs, random_param(g, rng, 20, 3, -0.4, 0.4));
    const int vec = mlff_op_pair_vectors(g, pos, pairs, random_param(g, rng, 20, 3, -0.4, 0.4));
    const mlff_ani_radial_inputs radial = {radial_vec, radial_pairs, column(g, 5, shifts), 4.0, 3.5};
    return angular_features(g, vec, pairs, every_triple(g), &radial);
}

/* The AEV of positions as a model builds it, in two periodic systems: the
 * pair vectors of images of both lists, the angular triples pair_triples
 * of the angular pairs. Where launches cost, the AEV makes the vectors
 * (core/vectors_in_aev.h). Atom 1 is the center of one angular pair (no
 * triples), atom 2 of none; some pairs reach into the next cell. */
CASE(case_ani_aev_of_images)
{
    enum { ATOMS = 6, RADIAL = 16, ANGULAR = 10 };
    static const int32_t system[ATOMS] = {0, 0, 0, 1, 1, 1}, species[ATOMS] = {0, 1, 2, 1, 0, 2};
    /* (i, j, image offsets), by center */
    static const int32_t radial[RADIAL][5] = {
        {0, 0, 1, 0, 0}, {0, 0, -1, 0, 0}, {0, 1, 0, 0, 0}, {0, 2, 0, 0, 0}, {1, 0, 0, 0, 0}, {1, 2, 0, 0, 0},
        {2, 0, 0, 0, 0}, {2, 1, 0, 0, 0}, {3, 4, 0, 0, 0}, {3, 4, 0, 1, 0}, {3, 5, 0, 0, 0}, {4, 3, 0, 0, 0},
        {4, 3, 0, -1, 0}, {4, 5, 0, 0, 0}, {5, 3, 0, 0, 0}, {5, 4, 0, 0, 0}};
    static const int32_t angular[ANGULAR][5] = {{0, 1, 0, 0, 0}, {0, 1, 1, 0, 0}, {0, 2, 0, 0, 0}, {1, 0, 0, 0, 0},
                                                {3, 4, 0, 0, 0}, {3, 4, 0, 1, 0}, {3, 5, 0, 0, 0}, {4, 3, 0, 0, 0},
                                                {4, 5, 0, 0, 0}, {5, 3, 0, 0, 0}};
    int32_t pairs_r[2 * RADIAL], images_r[RADIAL], pairs_a[2 * ANGULAR], images_a[ANGULAR], first[ANGULAR];
    for (int p = 0; p < RADIAL; p++) {
        pairs_r[2 * p] = radial[p][0];
        pairs_r[2 * p + 1] = radial[p][1];
        images_r[p] = mlff_image_pack(radial[p] + 2);
    }
    int32_t triples = 0;
    for (int p = 0; p < ANGULAR; p++) {
        pairs_a[2 * p] = angular[p][0];
        pairs_a[2 * p + 1] = angular[p][1];
        images_a[p] = mlff_image_pack(angular[p] + 2);
        first[p] = triples;
        for (int q = p + 1; q < ANGULAR && angular[q][0] == angular[p][0]; q++)
            triples++;
    }
    double cell_rows[2 * 9], cell_lows[2 * 9];
    split_cells(rng, 2, 2.9, cell_rows, cell_lows);
    const int pos = random_param(g, rng, ATOMS, 3, -0.7, 0.7), pos_low = random_param(g, rng, ATOMS, 3, -1e-8, 1e-8);
    const int cells = mlff_graph_param(g, "cells", MLFF_DTYPE_REAL, 2, 9, MLFF_DTYPE_F64, cell_rows);
    const int cells_low = mlff_graph_param(g, "cells_low", MLFF_DTYPE_REAL, 2, 9, MLFF_DTYPE_F64, cell_lows);
    WRT1(pos);
    const int sys = index_param(g, ATOMS, 1, system), radial_pairs = index_param(g, RADIAL, 2, pairs_r);
    const int pairs = index_param(g, ANGULAR, 2, pairs_a);
    static const double shifts[5] = {0.9, 1.4, 1.9, 2.4, 2.9}, shift_theta[4] = {0.39, 1.18, 1.96, 2.75},
                        shift_r[2] = {1.0, 2.0};
    const mlff_ani_radial_inputs radial_inputs = {
        mlff_op_pair_vectors_of_images(g, pos, radial_pairs, index_param(g, RADIAL, 1, images_r), cells, sys, pos_low,
                                       cells_low),
        radial_pairs, column(g, 5, shifts), 4.0, 3.5};
    const int vec = mlff_op_pair_vectors_of_images(g, pos, pairs, index_param(g, ANGULAR, 1, images_a), cells, sys,
                                                   pos_low, cells_low);
    const int triple_list =
        mlff_op_pair_triples(g, pairs, index_param(g, ANGULAR, 1, first), MLFF_FIXED_ROWS, triples);
    return mlff_op_ani_aev(g, &radial_inputs, vec, pairs, triple_list, index_param(g, ATOMS, 1, species),
                           column(g, 4, shift_theta), column(g, 2, shift_r), 8.0, 2.0, 3.0, 3);
}

/* Fourteen atoms, each the center of 13 pairs: 78 triples a center, more
 * than a GPU group works out at a time, built by pair_triples (the
 * gradient's walk along long runs of pairs). */
CASE(case_ani_angular_many_triples)
{
    enum { ATOMS = 14, PAIRS = ATOMS * (ATOMS - 1), PER_CENTER = (ATOMS - 1) * (ATOMS - 2) / 2 };
    int32_t pairs[2 * PAIRS], first[PAIRS], species[ATOMS];
    int p = 0;
    for (int i = 0; i < ATOMS; i++) {
        species[i] = i % 3;
        for (int j = 0, a = 0; j < ATOMS; j++)
            if (j != i) {
                pairs[2 * p] = i;
                pairs[2 * p + 1] = j;
                first[p] = i * PER_CENTER + a * (ATOMS - 2) - a * (a - 1) / 2; /* pair a makes ATOMS - 2 - a */
                p++, a++;
            }
    }
    static const double shift_theta[4] = {0.39, 1.18, 1.96, 2.75}, shift_r[2] = {1.0, 2.0};
    int vec = random_vectors(g, rng, PAIRS, 0.9, 3.2), pair_list = index_param(g, PAIRS, 2, pairs);
    WRT1(vec);
    int triples = mlff_op_pair_triples(g, pair_list, index_param(g, PAIRS, 1, first), MLFF_FIXED_ROWS,
                                       ATOMS * PER_CENTER);
    return mlff_op_ani_angular(g, vec, pair_list, triples, index_param(g, ATOMS, 1, species),
                               column(g, 4, shift_theta), column(g, 2, shift_r), 8.0, 2.0, 3.0, 3);
}

/* The same with 16 x 16 shifts: more features than a GPU group has items
 * and than fit its local memory (ani_angular.kernel's other paths). */
CASE(case_ani_angular_many_shifts)
{
    double shift_theta[16], shift_r[16];
    for (int k = 0; k < 16; k++) {
        shift_theta[k] = 0.1 + 0.19 * k;
        shift_r[k] = 0.8 + 0.15 * k;
    }
    int vec = random_vectors(g, rng, 20, 0.9, 3.2);
    WRT1(vec);
    return mlff_op_ani_angular(g, vec, all_pairs(g), every_triple(g), index_param(g, 5, 1, atom_species),
                               column(g, 16, shift_theta), column(g, 16, shift_r), 8.0, 2.0, 3.0, 3);
}

/* ---- the message-passing ops ---- */

static int unary_case(mlff_graph *g, test_rng *rng, int wrt[OP_CASE_MAX_WRT], int *n_wrt, mlff_unary_kind kind,
                      double p, double lo, double hi)
{
    int x = random_param(g, rng, 5, 3, lo, hi);
    WRT1(x);
    return mlff_op_unary(g, x, kind, -1.3, p);
}

#define UNARY_CASE(fn, kind, p, lo, hi)                                                                                \
    CASE(fn)                                                                                                           \
    {                                                                                                                  \
        return unary_case(g, rng, wrt, n_wrt, kind, p, lo, hi);                                                        \
    }
UNARY_CASE(case_unary_exp, MLFF_UNARY_EXP, 0, -1, 1)
UNARY_CASE(case_unary_sin, MLFF_UNARY_SIN, 0, -3, 3)
UNARY_CASE(case_unary_cos, MLFF_UNARY_COS, 0, -3, 3)
UNARY_CASE(case_unary_sqrt, MLFF_UNARY_POW, 0.5, 0.5, 2)
UNARY_CASE(case_unary_pow, MLFF_UNARY_POW, -1.5, 0.5, 2)
UNARY_CASE(case_unary_cube, MLFF_UNARY_POW, 3, -2, 2)
UNARY_CASE(case_unary_constant, MLFF_UNARY_POW, 0, 0.5, 2)
UNARY_CASE(case_unary_log, MLFF_UNARY_LOG, 0, 0.5, 2)
UNARY_CASE(case_unary_sigmoid, MLFF_UNARY_SIGMOID, 0, -4, 4)
UNARY_CASE(case_unary_softplus, MLFF_UNARY_SOFTPLUS, 0, -4, 4)
UNARY_CASE(case_unary_shifted_softplus, MLFF_UNARY_SHIFTED_SOFTPLUS, 0, -4, 4)
UNARY_CASE(case_unary_tanh, MLFF_UNARY_TANH, 0, -2, 2)
UNARY_CASE(case_unary_silu, MLFF_UNARY_SILU, 0, -4, 4)
UNARY_CASE(case_unary_less, MLFF_UNARY_LESS, 0.1, -1, 1)

/* The product of two pieces of x (columns 2-3 and 0-1 of 4, or of 5 with
 * one left out): their gradients, column scatters into disjoint columns,
 * are summed side by side (mlff_op_sum_gradients), a concatenation where
 * they fill x's columns in order. */
static int split_product(mlff_graph *g, test_rng *rng, int64_t cols, int *wrt, int *n_wrt)
{
    static const int32_t low[2] = {0, 1}, high[2] = {2, 3};
    int x = random_param(g, rng, 4, cols, -1, 1);
    WRT1(x);
    return mlff_op_mul(g, mlff_op_gather_cols_of(g, x, high, 2), mlff_op_gather_cols_of(g, x, low, 2));
}

CASE(case_split_product)
{
    return split_product(g, rng, 4, wrt, n_wrt);
}

CASE(case_split_product_gap)
{
    return split_product(g, rng, 5, wrt, n_wrt);
}

/* A broadcast ([n, 1, F] to [n, 3, F]) and a permutation with repeats. */
CASE(case_gather_cols)
{
    static const int32_t map[9] = {0, 1, 2, 0, 1, 2, 2, 0, 0};
    int x = random_param(g, rng, 4, 3, -1, 1);
    WRT1(x);
    return mlff_op_gather_cols_of(g, x, map, 9);
}

/* The sum over the middle axis of [n, 3, F] (|v|^2 of PaiNN's vector
 * features), and a column no entry goes to. */
CASE(case_scatter_add_cols)
{
    static const int32_t map[6] = {0, 1, 0, 1, 0, 1};
    int x = random_param(g, rng, 4, 6, -1, 1);
    WRT1(x);
    return mlff_op_scatter_add_cols_of(g, x, map, 3);
}

CASE(case_affine_cols)
{
    int x = random_param(g, rng, 5, 4, -1, 1);
    int s = random_param(g, rng, 1, 4, -2, 2), t = random_param(g, rng, 1, 4, -2, 2);
    WRT1(x);
    return mlff_op_affine_cols(g, x, s, t);
}

CASE(case_affine_cols_scale)
{
    int x = random_param(g, rng, 5, 4, -1, 1);
    WRT1(x);
    return mlff_op_affine_cols(g, x, random_param(g, rng, 1, 4, -2, 2), -1);
}

/* Messages x[j] of each pair (i, j) summed onto i, the sides of the pair
 * list taken as row indices. */
CASE(case_messages)
{
    static const int32_t pairs[16] = {0, 1, 0, 3, 1, 0, 1, 2, 2, 1, 3, 0, 3, 2, 2, 3};
    int x = random_param(g, rng, 4, 3, -1, 1);
    WRT1(x);
    const int list = index_param(g, 8, 2, pairs);
    const int i = mlff_op_index_column(g, list, 0), j = mlff_op_index_column(g, list, 1);
    const int m = mlff_op_unary(g, mlff_op_gather_rows(g, x, j, MLFF_DTYPE_REAL), MLFF_UNARY_SILU, 1.0, 0);
    return mlff_op_scatter_add_rows(g, mlff_op_mul(g, m, mlff_op_gather_rows(g, x, i, MLFF_DTYPE_REAL)), i,
                                    MLFF_FIXED_ROWS, 4, MLFF_DTYPE_REAL);
}

const op_case op_cases[] = {
    {"add", MLFF_OP_ADD, case_add, 0, 0},
    {"scale", MLFF_OP_SCALE, case_scale, 0, 0},
    {"mul", MLFF_OP_MUL, case_mul, 0, 0},
    {"mul (broadcast column)", MLFF_OP_MUL, case_mul_broadcast, 0, 0},
    {"mul (a block applied to each)", MLFF_OP_MUL, case_mul_tiled, 0, 0},
    {"concat_cols", MLFF_OP_CONCAT_COLS, case_concat_cols, 0, 0},
    {"gather_rows", MLFF_OP_GATHER_ROWS, case_gather_rows, 0, 0},
    {"scatter_add_rows", MLFF_OP_SCATTER_ADD_ROWS, case_scatter_add_rows, 0, 0},
    {"scatter_add_rows (70000 targets)", MLFF_OP_SCATTER_ADD_ROWS, case_scatter_add_rows_wide, 0, 0},
    {"scatter_add_rows (no rows, elided)", MLFF_OP_SCATTER_ADD_ROWS, case_absent_element, 0, 0},
    {"scatter_add_rows (few rows, long segments)", MLFF_OP_SCATTER_ADD_ROWS, case_scatter_add_few_rows, 0, 0},
    {"scatter_add_rows + add (folded)", MLFF_OP_SCATTER_ADD_ROWS, case_scatter_add_rows_plus, 1, 0},
    {"scatter_add_rows (few rows) + add (folded)", MLFF_OP_SCATTER_ADD_ROWS, case_scatter_add_few_rows_plus, 1, 0},
    {"scatter_add_rows (row sums)", MLFF_OP_SCATTER_ADD_ROWS, case_scatter_add_row_sums, 0, 0},
    {"scatter_add_rows (few rows, weighted row sums)", MLFF_OP_SCATTER_ADD_ROWS,
     case_scatter_add_few_row_sums_weighted, 0, 0},
    {"scatter_add_rows (few rows, row sums) + add (folded)", MLFF_OP_SCATTER_ADD_ROWS,
     case_scatter_add_few_row_sums_plus, 1, 0},
    {"sum_cols", MLFF_OP_SUM_COLS, case_sum_cols, 0, 0},
    {"sum_cols (first 3)", MLFF_OP_SUM_COLS, case_sum_first_cols, 0, 0},
    {"celu_mlp (3 layers, 2 groups)", MLFF_OP_CELU_MLP, case_celu_mlp, 0, 0},
    {"celu_mlp (1 layer, 3 groups)", MLFF_OP_CELU_MLP, case_celu_mlp_one_layer, 0, 0},
    {"celu_mlp (members' mean: gy of the results alone)", MLFF_OP_CELU_MLP, case_celu_mlp_mean, 0, 0},
    {"celu_mlp (members' mean, 4 stacks, 64 wide)", MLFF_OP_CELU_MLP, case_celu_mlp_mean_stacked, 0, 0},
    {"celu_mlp (after celu, 300 wide, 13 rows)", MLFF_OP_CELU_MLP, case_celu_mlp_wide, 0, 0},
    {"celu_mlp (4 stacks: runs of 3, 0, 20, 14 rows)", MLFF_OP_CELU_MLP, case_celu_mlp_stacked, 0, 0},
    {"linear", MLFF_OP_LINEAR, case_linear, 0, 0},
    {"linear (2 groups)", MLFF_OP_LINEAR, case_linear_grouped, 0, 0},
    {"linear (long K, few outputs)", MLFF_OP_LINEAR, case_linear_long_k, 0, 0},
    {"linear + celu (2 layers, partial tiles)", MLFF_OP_LINEAR, case_dense_layers, 0, 0},
    {"linear + celu (4 stacks: runs of 3, 0, 20, 14 rows)", MLFF_OP_LINEAR, case_dense_layers_stacked, 0, 0},
    {"celu", MLFF_OP_CELU, case_celu, 0, 0},
    {"pair_vectors", MLFF_OP_PAIR_VECTORS, case_pair_vectors, 0, 0},
    {"pair_vectors (shifts)", MLFF_OP_PAIR_VECTORS, case_pair_vectors_shifts, 0, 0},
    {"pair_vectors (images: shifts made in the same pass)", MLFF_OP_PAIR_VECTORS, case_pair_vectors_images, 0, 0},
    {"pair_vectors (images, positions and cells with low parts)", MLFF_OP_PAIR_VECTORS, case_pair_vectors_images_low,
     0, 0},
    {"pair_vectors (three lists: two gradients in one pass, the third added, folded)", MLFF_OP_PAIR_VECTORS,
     case_pair_vectors_three_lists, 1, 0},
    {"row_differences", MLFF_OP_ROW_DIFFERENCES, case_row_differences, 0, 0},
    {"pair_shifts", MLFF_OP_PAIR_SHIFTS, case_pair_shifts, 0, 0},
    {"pair_shifts (long segments)", MLFF_OP_PAIR_SHIFTS, case_pair_shifts_long, 0, 0},
    {"norm3", MLFF_OP_NORM3, case_norm3, 0, 0},
    {"cosine_cutoff", MLFF_OP_COSINE_CUTOFF, case_cosine_cutoff, 0, 0},
    {"ani_radial", MLFF_OP_ANI_RADIAL, case_ani_radial, 0, 0},
    {"ani_angular", MLFF_OP_ANI_ANGULAR, case_ani_angular, 0, 0},
    {"ani_angular (pair_triples)", MLFF_OP_ANI_ANGULAR, case_ani_angular_pair_triples, 0, 0},
    {"ani_angular (16 x 16 shifts)", MLFF_OP_ANI_ANGULAR, case_ani_angular_many_shifts, 0, 0},
    {"ani_angular (78 triples a center)", MLFF_OP_ANI_ANGULAR, case_ani_angular_many_triples, 0, 0},
    {"ani_angular (with the radial features: the AEV)", MLFF_OP_ANI_ANGULAR, case_ani_aev, 0, 0},
    {"ani_angular (the AEV, 40 radial shifts)", MLFF_OP_ANI_ANGULAR, case_ani_aev_many_shifts, 0, 0},
    {"ani_angular (the AEV, 70 radial pairs a center)", MLFF_OP_ANI_ANGULAR, case_ani_aev_many_pairs, 0, 0},
    {"ani_angular (the AEV of positions)", MLFF_OP_ANI_ANGULAR, case_ani_aev_of_positions, 0, 0},
    {"unary (exp)", MLFF_OP_UNARY, case_unary_exp, 0, 0},
    {"unary (sin)", MLFF_OP_UNARY, case_unary_sin, 0, 0},
    {"unary (cos)", MLFF_OP_UNARY, case_unary_cos, 0, 0},
    {"unary (sqrt)", MLFF_OP_UNARY, case_unary_sqrt, 0, 0},
    {"unary (x^-1.5)", MLFF_OP_UNARY, case_unary_pow, 0, 0},
    {"unary (x^3)", MLFF_OP_UNARY, case_unary_cube, 0, 0},
    {"unary (x^0)", MLFF_OP_UNARY, case_unary_constant, 0, 0},
    {"unary (log)", MLFF_OP_UNARY, case_unary_log, 0, 0},
    {"unary (sigmoid)", MLFF_OP_UNARY, case_unary_sigmoid, 0, 0},
    {"unary (softplus)", MLFF_OP_UNARY, case_unary_softplus, 0, 0},
    {"unary (shifted softplus)", MLFF_OP_UNARY, case_unary_shifted_softplus, 0, 0},
    {"unary (tanh)", MLFF_OP_UNARY, case_unary_tanh, 0, 0},
    {"unary (silu)", MLFF_OP_UNARY, case_unary_silu, 0, 0},
    {"unary (x < 0.1, a mask)", MLFF_OP_UNARY, case_unary_less, 0, 0},
    {"gather_cols", MLFF_OP_GATHER_COLS, case_gather_cols, 0, 0},
    {"gather_cols (a split's pieces' gradients side by side)", MLFF_OP_GATHER_COLS, case_split_product, 0, 0},
    {"gather_cols (a split's pieces' gradients, a column left out)", MLFF_OP_GATHER_COLS, case_split_product_gap, 0, 0},
    {"scatter_add_cols", MLFF_OP_SCATTER_ADD_COLS, case_scatter_add_cols, 0, 0},
    {"affine_cols", MLFF_OP_AFFINE_COLS, case_affine_cols, 0, 0},
    {"affine_cols (no offset)", MLFF_OP_AFFINE_COLS, case_affine_cols_scale, 0, 0},
    {"index_column (messages along a pair list)", MLFF_OP_INDEX_COLUMN, case_messages, 0, 0},
    {"ani_angular (the AEV of positions in cells)", MLFF_OP_ANI_ANGULAR, case_ani_aev_of_images, 0, 2},
};
const int n_op_cases = sizeof op_cases / sizeof *op_cases;
