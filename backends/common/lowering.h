/*
 * What the GPU backends share when they turn a node into a kernel: the
 * node's signature (everything that makes two nodes need different code),
 * and the #defines that make those values compile-time constants in a
 * kernel's source (shaders/: the same #defines for both APIs). Row counts
 * are not part of it: they stay run-time values, so one kernel serves every
 * system size.
 */
#ifndef MLFF_BACKENDS_LOWERING_H
#define MLFF_BACKENDS_LOWERING_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "core/tuning.h"

/* Zero-filled, so that it can be compared and hashed as bytes. */
typedef struct mlff_node_sig {
    int32_t op, epilogue, n_inputs;
    int32_t variant; /* a backend's second kernel for the same node (OpenCL: after CLBlast) */
    int32_t makes_vectors; /* mlff_exec_node.makes_vectors */
    int32_t out_dtype, in_dtype[MLFF_MAX_OP_INPUTS];
    int64_t out_cols, in_cols[MLFF_MAX_OP_INPUTS];
    int64_t fixed[3]; /* row counts of parameters the kernel specialises on */
    /* A GEMM's views (mlff_exec_tensor.ld, col) of A (in0), the output and
     * the epilogue's input, as A_LD, A_COL, C_LD, C_COL, EPI_LD, EPI_COL. */
    int64_t a_ld, a_col, c_ld, c_col, epi_ld, epi_col;
    mlff_op_attrs attrs;
    double alpha;
} mlff_node_sig;

void mlff_node_signature(const mlff_exec_node *n, mlff_node_sig *sig);

/* The kernel languages, each with its header of the kernel dialect
 * (shaders/opencl/dialect.cl, shaders/vulkan/dialect.glsl). Kernels are
 * written once for both; the dialect decides what differs where an API's
 * form was measured faster (MLP rows, the GEMMs' operands). */
typedef enum mlff_kernel_dialect { MLFF_DIALECT_OPENCL, MLFF_DIALECT_GLSL } mlff_kernel_dialect;

int mlff_op_is_gemm(mlff_op op);
/* What a kernel's n_items counts: rows of the output for the dense layers
 * (their kernels tile the columns themselves), for ops whose work-item
 * writes a whole row, and for the ANI gradients (one per pair); atoms times
 * shifts for the ANI radial features; the items of every group for ops
 * with fixed groups (below); else one per output entry. Ops that sum in
 * lanes (below) launch mlff_sum_lanes times as many items. */
int64_t mlff_node_work_items(const mlff_exec_node *n);

/* Ops whose kernels need work-groups of a fixed size (0: any), which they
 * see as GROUP_LANES:
 * - Outputs that sum very long segments (the cell gradient: every pair of a
 *   system; the per-system sums of SCATTER_ADD_ROWS with i[0] = 1: every
 *   atom) give each output entry a group of MLFF_REDUCE_LANES items, which
 *   add their partial sums in a fixed tree: reproducible, and not one item
 *   summing a million pairs alone. 256 keeps enough loads in flight (64 left
 *   the H100's 12288-atom box's cell gradient at 2.3 ms), and every GPU
 *   allows groups that large.
 * - ANI_ANGULAR gives each atom a group of MLFF_ANGULAR_LANES items, which
 *   share the factors of its triples in local memory (ani_angular.kernel), and
 *   split its radial features' sums between them. */
#define MLFF_REDUCE_LANES 256
#define MLFF_ANGULAR_LANES 64
int mlff_op_group_lanes(mlff_op op, const mlff_op_attrs *attrs);
/* How many indices (segments.h) a node sums many entries into one row
 * through: 0, 1, or 2 (a pair_vectors_vjp of two lists; an ani_angular's
 * triples and, with the radial features, its radial pairs). */
int mlff_node_segment_lists(mlff_op op, const mlff_op_attrs *attrs, int n_inputs);

/* Sums in lanes. ANI_RADIAL, ANI_ANGULAR_VJP, PAIR_VECTORS_VJP and
 * PAIR_SHIFTS_VJP walk a list for each output (an atom's pairs, the other
 * pairs of a pair's center), one work-item a list: where there are few
 * outputs (a molecule, a box of some thousand atoms on a GPU) each walk's
 * chain of dependent loads is the kernel's time. There each output takes
 * `lanes` consecutive items instead (a power of 2 up to MLFF_SUM_MAX_LANES,
 * in work-groups of MLFF_SUM_GROUP), each walking every lanes-th entry, and
 * the lanes' sums are added in a fixed tree in local memory (LANES_SUM in
 * shaders/prelude.kernel): the same bits run to run. Kernels get
 * `lanes` at run time (an argument, a push constant), so one kernel serves
 * every size. mlff_sum_lanes: the record's sum_lanes where forced, else
 * doubled while the launch stays within sum_fill_items items and each lane
 * keeps sum_lane_entries entries or more on average, one while the launch
 * stays within sum_few_items, where the device has threads to spare and
 * only the chain counts (core/tuning.h). mlff_node_work_items counts the
 * outputs; the launch has lanes times as many items. mlff_sum_lanes_max:
 * the most lanes a backend gives, the kernels' constant SUM_LANES_MAX. With
 * 1 the kernels leave the tree and its barriers out, which PoCL and
 * lavapipe compile for seconds. */
#define MLFF_SUM_GROUP 64
#define MLFF_SUM_MAX_LANES 16
int mlff_op_sums_in_lanes(mlff_op op);
int mlff_sum_lanes(const mlff_exec_node *n, const mlff_tuning *t);
int mlff_sum_lanes_max(const mlff_tuning *t);

/* CELU_MLP and its VJP: a work-group of MLFF_MLP_THREADS items takes
 * mlff_mlp_node_rows() rows of one group through every layer, its
 * activations in local memory (at most MLFF_MLP_LOCAL_BYTES, which every
 * GPU, PoCL and lavapipe have). Each sum of a layer (an output forward, the
 * gradient of an input back) is taken by the layer's lanes, items that each
 * sum a slice of its terms and add their partial sums in local memory in a
 * fixed order. The reverse pass, and the forward pass on OpenCL (which reads
 * the weights transposed per group), give each sum one lane, but OpenCL's
 * last layer as many as fit (ANI's single output had one item a row sum it
 * alone, while the others waited); Vulkan's forward pass MLFF_MLP_LANES,
 * which read its weight row side by side (the
 * transposed form, twice as fast through OpenCL on the H200, was slower
 * through NVIDIA's Vulkan driver except at the largest sizes: RESULTS.md).
 * The narrow form takes MLFF_MLP_ROWS rows a work-group on OpenCL (fewer
 * where local memory runs short) and MLFF_MLP_ROWS_GLSL on Vulkan: NVIDIA's
 * Vulkan driver ran both kernels faster so at every size measured (the
 * reverse pass 1.37 -> 0.89 ms at 12288 atoms), its OpenCL driver slower
 * (bench/RESULTS.md).
 * The wide form (sig variant MLFF_VARIANT_MLP_WIDE) is for launches of few
 * work-groups, where each sum's chain of loads is the time taken: groups of
 * MLFF_MLP_WIDE_THREADS items take MLFF_MLP_WIDE_ROWS rows, each layer as
 * many lanes as its sums leave room for (up to MLFF_MLP_WIDE_LANES).
 * The half form (MLFF_VARIANT_MLP_HALF) is the narrow one in half the rows,
 * for launches of a few hundred work-groups on OpenCL (the 100-water
 * cluster's: twice the groups to spread over the GPU).
 * Kernels see MLP_THREADS, MLP_ROWS, MLP_LANES1..MLP_LANES3 (layer l's
 * lanes) and MLP_PARTS (whether they keep partial sums), with the widths
 * MLP_W0..MLP_W3 (MLP_WTOP the last), where each layer's block starts in the
 * output (MLP_B1..MLP_B3), its width MLP_COLS and the words between rows in
 * local memory MLP_STRIDE. */
#define MLFF_MLP_THREADS 256
#define MLFF_MLP_ROWS 16
#define MLFF_MLP_ROWS_GLSL 4
#define MLFF_MLP_LANES 8
#define MLFF_MLP_LOCAL_BYTES 32768
#define MLFF_MLP_WIDE_THREADS 1024
#define MLFF_MLP_WIDE_ROWS 4
#define MLFF_MLP_WIDE_LANES 32
#define MLFF_VARIANT_MLP_WIDE 3
#define MLFF_VARIANT_MLP_HALF 5
/* A CELU_MLP node's kernel forms, by their sig variants. */
typedef enum mlff_mlp_kernel {
    MLFF_MLP_KERNEL_NARROW = 0,
    MLFF_MLP_KERNEL_WIDE = MLFF_VARIANT_MLP_WIDE,
    MLFF_MLP_KERNEL_HALF = MLFF_VARIANT_MLP_HALF
} mlff_mlp_kernel;
/* Whether the kernel of op (CELU_MLP or its VJP) in dialect reads the
 * weights transposed per group (the OpenCL forward pass). */
int mlff_mlp_reads_transposed(mlff_op op, mlff_kernel_dialect dialect);
/* The rows and items of a work-group of a CELU_MLP node's kernel in dialect
 * and form (forms with partial sums to keep take fewer rows). */
int mlff_mlp_node_rows(const mlff_exec_node *n, mlff_kernel_dialect dialect, mlff_mlp_kernel form);
static inline int mlff_mlp_threads(mlff_mlp_kernel form)
{
    return form == MLFF_MLP_KERNEL_WIDE ? MLFF_MLP_WIDE_THREADS : MLFF_MLP_THREADS;
}
/* The form of a CELU_MLP node (the record's mlp: auto, narrow, half, wide,
 * or layers: Vulkan's GEMM a layer, vk_mlp_layers.c). mlff_mlp_kernel_for:
 * auto takes the wide form where the device runs it (`wide_fits`) and the
 * narrow one would launch fewer than mlp_wide_below_groups work-groups, the
 * half form where it would launch fewer than mlp_half_below_groups
 * (forward) or mlp_vjp_half_below_groups (reverse), else the narrow one.
 * mlff_mlp_kernel_possible: whether the record lets some node take `form`
 * (a backend then builds that kernel beside the narrow one). */
mlff_mlp_kernel mlff_mlp_kernel_for(const mlff_exec_node *n, const mlff_tuning *t, int wide_fits,
                                    mlff_kernel_dialect dialect);
int mlff_mlp_kernel_possible(const mlff_tuning *t, mlff_mlp_kernel form, int wide_fits);

/* The row blocks of block_rows rows a launch of a dense node (LINEAR,
 * LINEAR_VJP, CELU_MLP, its VJP) takes: with stacks, one more for each run
 * after the first (each run starts a block; the kernels map a block to its
 * run through the starts: ROW_BLOCK in shaders/row_block.kernel), the
 * blocks past the last run doing nothing. */
int64_t mlff_row_blocks(const mlff_exec_node *n, int64_t block_rows);

/* The GEMM for few rows (shaders/linear_rows.kernel): a work-group of
 * MLFF_ROWS_GEMM_GROUP items takes MLFF_ROWS_GEMM_ROWS rows of
 * MLFF_ROWS_GEMM_GROUP / lanes outputs. The lanes an output: 32, doubled
 * (up to the whole group) while the launch of `cols` outputs, `rows` rows
 * and `groups` groups would have fewer work-groups than few_groups. */
#define MLFF_ROWS_GEMM_GROUP 256
#define MLFF_ROWS_GEMM_ROWS 8
int mlff_rows_gemm_lanes(int64_t cols, int64_t rows, int64_t groups, int64_t few_groups);

/* The register-tiled GEMM (shaders/linear_tiled.kernel) computes
 * MLFF_TILED_GEMM_TS x MLFF_TILED_GEMM_TS outputs a work-group; a GPU gives
 * it a dense layer that makes enough of these work-groups (the record's
 * opencl_tiled_gemm_from_tiles and vulkan_tiled_gemm_from_tiles,
 * core/tuning.h: with fewer, each walking a long K, the GEMM for few rows
 * wins). */
#define MLFF_TILED_GEMM_TS 64
int64_t mlff_tiled_gemm_tiles(const mlff_exec_node *n, int64_t ts); /* tiles of ts x ts */

/* K split between work-groups, for a layer's input gradient (LINEAR_VJP)
 * in the tiled GEMMs: where it makes few tiles, each walking a long K
 * (ANI's first layer: 8 members x 256 terms a sum), `splits` work-groups
 * share a tile, each summing its share of K (whole steps of the kernels'
 * 16). They store their partial sums, interleaved (entry at * splits +
 * split), in a scratch buffer of the backend, and gemm_splits adds them in
 * order (reproducible) and applies the epilogue.
 * mlff_gemm_splits: the count for a node of `tiles` tiles: doubled, up to
 * the record's gemm_splits_most, while the tiles times the splits stay
 * within `fill` work-groups (the API's) and each split keeps
 * gemm_split_least_k terms; or the record's gemm_splits where forced, as
 * many as K has steps of 16. */
int mlff_gemm_splits(const mlff_exec_node *n, int64_t tiles, int64_t fill, const mlff_tuning *t);

/* CELU_MLP a layer at a time (mlp=layers; Vulkan on GPUs for many rows,
 * vk_mlp_layers.c). Forward, layer l (1..layers) of node n is a
 * LINEAR node over the same buffers, reading x (l = 1) or layer l-1's block
 * of n's output and storing into layer l's, CELU after every layer but the
 * last. Back (CELU_MLP_VJP, with the gradient of the result alone),
 * layer l is a LINEAR_VJP from the gradient of layer l's sums g_l (gy for
 * the last) to g_(l-1) (times celu' of layer l-1's block of y; for l = 1
 * n's output, x's gradient, with n's epilogue). The g_j of odd j go to a
 * scratch buffer (rows x groups x the widest of them), those of even j to
 * n's output, which is written last and holds them where
 * mlff_mlp_vjp_layers_fit. The blocks are views (mlff_exec_tensor.ld,
 * col). */
void mlff_mlp_layer(const mlff_exec_node *n, int l, mlff_exec_node *layer);
void mlff_mlp_layer_vjp(const mlff_exec_node *n, int l, void *scratch, mlff_exec_node *layer);
int mlff_mlp_vjp_layers_fit(const mlff_exec_node *n);
int64_t mlff_mlp_vjp_scratch_entries(const mlff_exec_node *n);

static inline int mlff_op_is_mlp(mlff_op op)
{
    return op == MLFF_OP_CELU_MLP || op == MLFF_OP_CELU_MLP_VJP;
}

/* A growing string; `failed` sticks after the first allocation failure. */
typedef struct mlff_text {
    char *s;
    size_t len, cap;
    int failed;
} mlff_text;

void mlff_text_put(mlff_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The #defines of a node's constants: TO, T<k>, OUT_COLS, IN<k>_COLS, F0-F3,
 * I0-I3, and GROUPS/GEMM_N/GEMM_K/VJP/EPILOGUE/ALPHA for dense layers,
 * N_SHIFTS/N_Z/N_RA for the ANI features; written in the kernel dialect,
 * the same for both APIs but real literals and the forms' sizes (MLP_ROWS:
 * `dialect`). `fp64`: the device has doubles (GLSL float literals then
 * carry the LF suffix, to keep their digits). */
void mlff_emit_constants(mlff_text *t, const mlff_node_sig *sig, mlff_kernel_dialect dialect, int fp64);

/* The names mlff_emit_constants may define (for #undef between kernels). */
extern const char *const mlff_constant_names[];
extern const int mlff_n_constant_names;

/* What the kernel templates of both GPU backends do: float32, int32, and
 * float64 where the device has it; CELU and its derivative folded into the
 * dense layers' GEMM. */
int mlff_kernels_support_dtype(int fp64, mlff_dtype dtype);

/* Whether the kernels may use doubles on a device that reports `has_fp64`.
 * The record's device_fp64=off makes any device act as one without them
 * (many consumer GPUs): float sums in the kernels, float64 refused. That is
 * how the tests cover the float-only kernels on PoCL and lavapipe. */
int mlff_device_fp64(int has_fp64, const mlff_tuning *t);
int mlff_kernels_fuse(mlff_op op, mlff_epilogue epilogue);

uint64_t mlff_hash(const void *data, size_t n);

#endif
