#include "lowering.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mlff_op_is_gemm(mlff_op op)
{
    return op == MLFF_OP_LINEAR || op == MLFF_OP_LINEAR_VJP;
}

int mlff_node_segment_lists(mlff_op op, const mlff_op_attrs *attrs, int n_inputs)
{
    if (op == MLFF_OP_PAIR_VECTORS_VJP)
        return mlff_pair_vjp_lists(n_inputs);
    if (op == MLFF_OP_ANI_ANGULAR)
        return mlff_angular_has_radial(n_inputs) ? 2 : 1;
    return op == MLFF_OP_SCATTER_ADD_ROWS || op == MLFF_OP_PAIR_SHIFTS_VJP || op == MLFF_OP_ANI_RADIAL ||
           (op == MLFF_OP_ANI_ANGULAR_VJP && !attrs->i[1]) || op == MLFF_OP_ANI_RADIAL_JVP ||
           op == MLFF_OP_ANI_ANGULAR_JVP || op == MLFF_OP_ANI_ANGULAR_VJP_JVP;
}

int mlff_op_group_lanes(mlff_op op, const mlff_op_attrs *attrs)
{
    if (op == MLFF_OP_SCATTER_ADD_ROWS && attrs->i[0])
        return MLFF_REDUCE_LANES;
    return op == MLFF_OP_ANI_ANGULAR ? MLFF_ANGULAR_LANES : 0;
}

int mlff_op_sums_in_lanes(mlff_op op)
{
    return op == MLFF_OP_ANI_RADIAL || op == MLFF_OP_ANI_ANGULAR_VJP || op == MLFF_OP_PAIR_VECTORS_VJP ||
           op == MLFF_OP_PAIR_SHIFTS_VJP;
}

/* The entries an output of a lanes op walks, on average; a triple's
 * derivative (ANI_ANGULAR_VJP) counts as two, for its work. */
static int64_t entries_per_output(const mlff_exec_node *n)
{
    const int64_t outputs = n->output.rows;
    if (outputs == 0)
        return 0;
    switch (n->op) {
    case MLFF_OP_ANI_RADIAL: /* an atom's pairs */
    case MLFF_OP_PAIR_SHIFTS_VJP:
        return n->inputs[0].rows / outputs;
    case MLFF_OP_PAIR_VECTORS_VJP: /* an atom's sides of pairs, of one list or two */
        return 2 * (n->inputs[1].rows + (n->n_inputs > 2 ? n->inputs[3].rows : 0)) / outputs;
    case MLFF_OP_ANI_ANGULAR_VJP: /* a pair's triples: each triple names two pairs */
        return 2 * (2 * n->inputs[3].rows / outputs);
    default:
        return 0;
    }
}

int mlff_sum_lanes_max(const mlff_tuning *t)
{
    return t->sum_lanes ? (int)t->sum_lanes : MLFF_SUM_MAX_LANES;
}

int mlff_sum_lanes(const mlff_exec_node *n, const mlff_tuning *t)
{
    if (!mlff_op_sums_in_lanes(n->op))
        return 1;
    if (t->sum_lanes)
        return (int)t->sum_lanes;
    const int64_t items = mlff_node_work_items(n), entries = entries_per_output(n);
    int lanes = 1;
    for (; lanes < MLFF_SUM_MAX_LANES && items * lanes * 2 <= t->sum_fill_items; lanes *= 2) {
        const int64_t per_lane = items * lanes * 2 <= t->sum_few_items ? 1 : t->sum_lane_entries;
        if (entries < per_lane * lanes * 2)
            break;
    }
    return lanes;
}

int64_t mlff_node_work_items(const mlff_exec_node *n)
{
    const int lanes = mlff_op_group_lanes(n->op, &n->attrs);
    if (n->op == MLFF_OP_ANI_ANGULAR)
        return n->output.rows * lanes; /* a group per atom */
    if (lanes)
        return n->output.rows * n->output.cols * lanes; /* a group per output entry */
    switch (n->op) {
    case MLFF_OP_PAIR_VECTORS_VJP: /* an atom's 3 columns, or (a tangent's any width) each entry */
        return n->output.cols == 3 ? n->output.rows : n->output.rows * n->output.cols;
    case MLFF_OP_ANI_RADIAL_JVP: /* an atom, direction and species: its shifts */
        return n->output.rows * (n->output.cols / n->inputs[4].rows);
    case MLFF_OP_ANI_ANGULAR_JVP: /* an atom, direction, species pair and radial shift: its angles */
        return n->output.rows * (n->output.cols / n->inputs[5].rows);
    case MLFF_OP_ANI_RADIAL_VJP_JVP: /* a pair and direction */
    case MLFF_OP_ANI_ANGULAR_VJP_JVP:
        return n->output.rows * (n->output.cols / 3);
    case MLFF_OP_LINEAR:
    case MLFF_OP_LINEAR_VJP:
    case MLFF_OP_CELU_MLP:
    case MLFF_OP_CELU_MLP_VJP:
    case MLFF_OP_PAIR_VECTORS:
    case MLFF_OP_PAIR_SHIFTS:
    case MLFF_OP_NORM3:
    case MLFF_OP_NORM3_VJP:
    case MLFF_OP_ANI_RADIAL_VJP:
    case MLFF_OP_ANI_ANGULAR_VJP:
        return n->output.rows;
    case MLFF_OP_ANI_RADIAL:
        return n->output.rows * n->inputs[3].rows;
    case MLFF_OP_PAIR_TRIPLES:
        return n->inputs[0].rows;
    default:
        return n->output.rows * n->output.cols;
    }
}

void mlff_node_signature(const mlff_exec_node *n, mlff_node_sig *s)
{
    memset(s, 0, sizeof *s);
    s->op = n->op;
    s->epilogue = n->epilogue;
    s->alpha = n->epilogue ? n->epilogue_alpha : 0;
    s->n_inputs = n->n_inputs;
    s->makes_vectors = n->makes_vectors;
    s->out_dtype = n->output.dtype;
    s->out_cols = n->output.cols;
    for (int k = 0; k < n->n_inputs; k++) {
        s->in_dtype[k] = n->inputs[k].dtype;
        s->in_cols[k] = n->inputs[k].cols;
    }
    s->attrs = n->attrs;
    switch (n->op) {
    case MLFF_OP_LINEAR:
    case MLFF_OP_LINEAR_VJP:
        s->fixed[0] = n->inputs[1].rows; /* the weights */
        s->a_ld = n->inputs[0].ld;
        s->a_col = n->inputs[0].col;
        s->c_ld = n->output.ld;
        s->c_col = n->output.col;
        s->epi_ld = n->epilogue_input.ld;
        s->epi_col = n->epilogue_input.col;
        break;
    case MLFF_OP_ANI_RADIAL:
        s->fixed[0] = n->inputs[3].rows;
        break;
    case MLFF_OP_ANI_RADIAL_VJP:
    case MLFF_OP_ANI_RADIAL_JVP:
    case MLFF_OP_ANI_RADIAL_VJP_JVP:
        s->fixed[0] = n->inputs[4].rows;
        break;
    case MLFF_OP_PAIR_VECTORS_VJP:
        s->fixed[0] = mlff_pair_vjp_has_radial(n->n_inputs) ? n->inputs[6].rows : 0;
        break;
    case MLFF_OP_ANI_ANGULAR:
        s->fixed[0] = n->inputs[4].rows;
        s->fixed[1] = n->inputs[5].rows;
        s->fixed[2] = mlff_angular_has_radial(n->n_inputs) ? n->inputs[8].rows : 0;
        break;
    case MLFF_OP_ANI_ANGULAR_VJP:
    case MLFF_OP_ANI_ANGULAR_JVP:
    case MLFF_OP_ANI_ANGULAR_VJP_JVP:
        s->fixed[0] = n->inputs[5].rows;
        s->fixed[1] = n->inputs[6].rows;
        break;
    default:
        break;
    }
}

void mlff_text_put(mlff_text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? 2 * t->cap : 1 << 16) + (size_t)n;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

const char *const mlff_constant_names[] = {
    "TO", "T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "OUT_COLS", "IN0_COLS", "IN1_COLS", "IN2_COLS",
    "IN3_COLS", "IN4_COLS", "IN5_COLS", "IN6_COLS", "IN7_COLS", "IN8_COLS", "F0", "F1", "F2", "F3", "F4", "I0", "I1",
    "I2", "I3", "N_SHIFTS", "N_Z", "N_RA", "RADIAL_SPLIT", "GEMM_N", "GEMM_K", "GROUPS", "VJP", "EPILOGUE", "ALPHA",
    "GROUP_LANES", "ANGULAR_CHUNK", "ANGULAR_SUMS_LOCAL", "SUM_GROUP", "MLP_LAYERS", "MLP_W0", "MLP_W1", "MLP_W2",
    "MLP_W3", "MLP_WTOP", "MLP_B1", "MLP_B2", "MLP_B3", "MLP_COLS", "MLP_ROWS", "MLP_THREADS", "MLP_PARTS",
    "MLP_LANES1", "MLP_LANES2", "MLP_LANES3", "MLP_STRIDE", "TO4", "STACKS", "STARTS", "PLUS_EPI", "A_LD", "A_COL",
    "C_LD", "C_COL", "EPI_LD", "EPI_COL", "GY_HIDDEN", "MAKES_VECTORS", "TO2", "CELU_K", "ALPHA_K"};
const int mlff_n_constant_names = (int)(sizeof mlff_constant_names / sizeof *mlff_constant_names);

static const char *type_name(int32_t dtype)
{
    return dtype == MLFF_DTYPE_F64 ? "double" : dtype == MLFF_DTYPE_I32 ? "int" : "float";
}

/* A float constant with all its digits. GLSL needs the LF suffix to keep a
 * double's, and forbids it without fp64. */
static void put_real(mlff_text *t, const char *name, double value, mlff_kernel_dialect dialect, int fp64)
{
    if (dialect == MLFF_DIALECT_OPENCL)
        mlff_text_put(t, "#define %s (%.17g)\n", name, value);
    else
        mlff_text_put(t, "#define %s (%.17e%s)\n", name, value, fp64 ? "LF" : "");
}

/* A CELU_MLP node's layers from its signature (which has no weight rows):
 * the weights' columns give w_0..w_{k-1}, the output's (or y's) columns the
 * last width. */
static mlff_mlp_shape mlp_shape_of_sig(const mlff_node_sig *s)
{
    mlff_mlp_shape m = {0};
    m.layers = mlff_mlp_layers((mlff_op)s->op, s->n_inputs, &s->attrs);
    m.groups = s->attrs.i[0];
    m.stacks = mlff_op_stacks(&s->attrs);
    int64_t last = (s->op == MLFF_OP_CELU_MLP_VJP ? s->in_cols[1] : s->out_cols) / m.groups;
    for (int l = 1; l <= m.layers; l++)
        m.width[l - 1] = s->in_cols[mlff_mlp_weight_input((mlff_op)s->op, l)];
    for (int l = 1; l < m.layers; l++)
        last -= m.width[l];
    m.width[m.layers] = last;
    mlff_mlp_place_blocks(&m);
    return m;
}

/* Words between rows of activations in local memory: the widest layer,
 * rounded up to 4 for vector reads. */
static int64_t mlp_stride(const mlff_mlp_shape *m)
{
    int64_t widest = 0;
    for (int l = 0; l <= m->layers; l++)
        widest = m->width[l] > widest ? m->width[l] : widest;
    return (widest + 3) / 4 * 4;
}

int mlff_mlp_reads_transposed(mlff_op op, mlff_kernel_dialect dialect)
{
    return op == MLFF_OP_CELU_MLP && dialect == MLFF_DIALECT_OPENCL; /* lowering.h */
}

/* Lanes for `sums` sums of `terms` terms among `items` items: as many as
 * the sums leave room for, each at least 4 terms, up to MLFF_MLP_WIDE_LANES. */
static int lanes_within(int64_t sums, int64_t terms, int64_t items)
{
    int64_t lanes = items / sums;
    lanes = lanes < (terms + 3) / 4 ? lanes : (terms + 3) / 4;
    lanes = lanes < MLFF_MLP_WIDE_LANES ? lanes : MLFF_MLP_WIDE_LANES;
    return lanes > 1 ? (int)lanes : 1;
}

/* The lanes of layer l's sums (lowering.h): forward the outputs' (layer
 * l's width), back the gradients' of its inputs (layer l-1's), each sum over
 * the other width. The wide form gives a layer as many as fit. OpenCL's
 * forward pass gives them to its last layer alone (ANI's: one output, whose
 * sums one item a row took alone), whose partial sums then lie where its
 * input did (celu_mlp.cl): up to MLP_STRIDE a row. */
static int mlp_lanes(const mlff_mlp_shape *m, mlff_op op, mlff_kernel_dialect dialect, mlff_mlp_kernel form, int l)
{
    const int vjp = op == MLFF_OP_CELU_MLP_VJP;
    if (form == MLFF_MLP_KERNEL_WIDE)
        return lanes_within(vjp ? m->width[l - 1] : m->width[l], vjp ? m->width[l] : m->width[l - 1],
                            MLFF_MLP_WIDE_THREADS);
    if (mlff_mlp_reads_transposed(op, dialect)) {
        const int64_t stride = mlp_stride(m);
        return l == m->layers ? lanes_within(m->width[l], m->width[l - 1],
                                             stride < MLFF_MLP_THREADS ? stride : MLFF_MLP_THREADS)
                              : 1;
    }
    return vjp ? 1 : MLFF_MLP_LANES;
}

/* Whether the kernel keeps partial sums apart (a `part` array): a layer has
 * more than one lane, or it is Vulkan's forward kernel, which always adds
 * its lanes' sums; not OpenCL's forward kernel in the narrow and half
 * forms (mlp_lanes). */
static int mlp_parts(const mlff_mlp_shape *m, mlff_op op, mlff_kernel_dialect dialect, mlff_mlp_kernel form)
{
    const int transposed = mlff_mlp_reads_transposed(op, dialect);
    if (transposed && form != MLFF_MLP_KERNEL_WIDE)
        return 0;
    int parts = op == MLFF_OP_CELU_MLP && !transposed;
    for (int l = 1; l <= m->layers; l++)
        parts |= mlp_lanes(m, op, dialect, form, l) > 1;
    return parts;
}

static int mlp_rows(const mlff_mlp_shape *m, mlff_op op, int32_t dtype, mlff_kernel_dialect dialect,
                    mlff_mlp_kernel form)
{
    /* Per row: two activation rows, and the partial sums. */
    const int parts = mlp_parts(m, op, dialect, form);
    const int64_t per_row = (2 * mlp_stride(m) + (parts ? mlff_mlp_threads(form) : 0)) *
                            (dtype == MLFF_DTYPE_F64 ? 8 : 4);
    int rows = form == MLFF_MLP_KERNEL_WIDE        ? MLFF_MLP_WIDE_ROWS
               : dialect == MLFF_DIALECT_GLSL ? MLFF_MLP_ROWS_GLSL
                                              : MLFF_MLP_ROWS;
    while (rows > 1 && rows * per_row > MLFF_MLP_LOCAL_BYTES)
        rows /= 2;
    return form == MLFF_MLP_KERNEL_HALF && rows > 1 ? rows / 2 : rows; /* the narrow form's, halved */
}

int mlff_mlp_node_rows(const mlff_exec_node *n, mlff_kernel_dialect dialect, mlff_mlp_kernel form)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    return mlp_rows(&m, n->op, n->output.dtype, dialect, form);
}

mlff_mlp_kernel mlff_mlp_kernel_for(const mlff_exec_node *n, const mlff_tuning *t, int wide_fits,
                                    mlff_kernel_dialect dialect)
{
    if (t->mlp == MLFF_MLP_WIDE && wide_fits)
        return MLFF_MLP_KERNEL_WIDE;
    if (t->mlp == MLFF_MLP_HALF)
        return MLFF_MLP_KERNEL_HALF;
    if (t->mlp != MLFF_MLP_AUTO)
        return MLFF_MLP_KERNEL_NARROW;
    const int64_t narrow_groups =
        mlff_row_blocks(n, mlff_mlp_node_rows(n, dialect, MLFF_MLP_KERNEL_NARROW)) * n->attrs.i[0];
    if (wide_fits && narrow_groups < t->mlp_wide_below_groups)
        return MLFF_MLP_KERNEL_WIDE;
    const int64_t half_below = n->op == MLFF_OP_CELU_MLP_VJP ? t->mlp_vjp_half_below_groups : t->mlp_half_below_groups;
    return narrow_groups < half_below ? MLFF_MLP_KERNEL_HALF : MLFF_MLP_KERNEL_NARROW;
}

int mlff_mlp_kernel_possible(const mlff_tuning *t, mlff_mlp_kernel form, int wide_fits)
{
    switch (form) {
    case MLFF_MLP_KERNEL_WIDE:
        return wide_fits && (t->mlp == MLFF_MLP_WIDE || (t->mlp == MLFF_MLP_AUTO && t->mlp_wide_below_groups > 0));
    case MLFF_MLP_KERNEL_HALF:
        return t->mlp == MLFF_MLP_HALF ||
               (t->mlp == MLFF_MLP_AUTO && (t->mlp_half_below_groups > 0 || t->mlp_vjp_half_below_groups > 0));
    default:
        return 1;
    }
}

int64_t mlff_row_blocks(const mlff_exec_node *n, int64_t block_rows)
{
    /* Each run starts a block: at most one partial block a run. No rows, no
     * blocks: an empty node (a reused one, runtime/plan.c) must not write. */
    if (n->output.rows == 0)
        return 0;
    return (n->output.rows + block_rows - 1) / block_rows + mlff_op_stacks(&n->attrs) - 1;
}

int mlff_rows_gemm_lanes(int64_t cols, int64_t rows, int64_t groups, int64_t few_groups)
{
    const int64_t row_blocks = (rows + MLFF_ROWS_GEMM_ROWS - 1) / MLFF_ROWS_GEMM_ROWS;
    int lanes = 32;
    while (lanes < MLFF_ROWS_GEMM_GROUP) {
        const int64_t outs = MLFF_ROWS_GEMM_GROUP / lanes;
        if ((cols + outs - 1) / outs * row_blocks * groups >= few_groups)
            break;
        lanes *= 2;
    }
    return lanes;
}

int64_t mlff_tiled_gemm_tiles(const mlff_exec_node *n, int64_t ts)
{
    const int64_t groups = n->attrs.i[0];
    const int64_t cols = n->output.cols / groups;
    return mlff_row_blocks(n, ts) * ((cols + ts - 1) / ts) * groups;
}

int mlff_gemm_splits(const mlff_exec_node *n, int64_t tiles, int64_t fill, const mlff_tuning *t)
{
    if (n->op != MLFF_OP_LINEAR_VJP)
        return 1;
    const int64_t k = n->inputs[0].cols / n->attrs.i[0];
    if (t->gemm_splits) {
        const int64_t steps = (k + 15) / 16;
        return (int)(t->gemm_splits < steps ? t->gemm_splits : steps > 0 ? steps : 1);
    }
    int splits = 1;
    while (splits < t->gemm_splits_most && k / (2 * splits) >= t->gemm_split_least_k && tiles * 2 * splits <= fill)
        splits *= 2;
    return splits;
}

/* A block of columns of the CELU_MLP output y as a view (mlff_exec_tensor.ld, col). */
static mlff_exec_tensor block_of(const mlff_exec_tensor *y, const mlff_mlp_shape *m, int l)
{
    mlff_exec_tensor t = *y;
    t.cols = m->groups * m->width[l];
    t.ld = m->cols;
    t.col = m->block[l];
    return t;
}

void mlff_mlp_layer(const mlff_exec_node *n, int l, mlff_exec_node *layer)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    const int stacked = m.stacks > 1;
    memset(layer, 0, sizeof *layer);
    layer->op = MLFF_OP_LINEAR;
    layer->n_inputs = 3 + stacked;
    layer->inputs[0] = l == 1 ? n->inputs[0] : block_of(&n->output, &m, l - 1);
    layer->inputs[1] = n->inputs[2 * l - 1];
    layer->inputs[2] = n->inputs[2 * l];
    if (stacked)
        layer->inputs[3] = n->inputs[n->n_inputs - 1];
    layer->output = block_of(&n->output, &m, l);
    layer->attrs.i[0] = m.groups;
    layer->attrs.i[1] = m.stacks;
    if (l < m.layers) {
        layer->epilogue = MLFF_EPILOGUE_CELU;
        layer->epilogue_alpha = n->attrs.f[0];
    }
}

/* g_j of a layered CELU_MLP_VJP (lowering.h): in the scratch buffer for odd j, in n's output for even j. */
static mlff_exec_tensor layer_gradient(const mlff_exec_node *n, const mlff_mlp_shape *m, int j, void *scratch)
{
    const mlff_exec_tensor g = {.buffer = j % 2 ? scratch : n->output.buffer, .dtype = n->output.dtype,
                                .rows = n->output.rows, .cols = m->groups * m->width[j]};
    return g;
}

void mlff_mlp_layer_vjp(const mlff_exec_node *n, int l, void *scratch, mlff_exec_node *layer)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    const int stacked = m.stacks > 1;
    memset(layer, 0, sizeof *layer);
    layer->op = MLFF_OP_LINEAR_VJP;
    layer->n_inputs = 2 + stacked;
    layer->inputs[0] = l == m.layers ? n->inputs[0] : layer_gradient(n, &m, l, scratch);
    layer->inputs[1] = n->inputs[mlff_mlp_weight_input(n->op, l)];
    if (stacked)
        layer->inputs[2] = n->inputs[n->n_inputs - 1];
    if (l == 1) { /* x's gradient, with the node's epilogue (the celu' of a CELU before it) */
        layer->output = n->output;
        layer->epilogue = n->epilogue;
        layer->epilogue_alpha = n->epilogue_alpha;
        layer->epilogue_input = n->epilogue_input;
    } else {
        layer->output = layer_gradient(n, &m, l - 1, scratch);
        layer->epilogue = MLFF_EPILOGUE_CELU_GRAD;
        layer->epilogue_alpha = n->attrs.f[0];
        layer->epilogue_input = block_of(&n->inputs[1], &m, l - 1); /* of y */
    }
    layer->attrs.i[0] = m.groups;
    layer->attrs.i[1] = m.stacks;
}

int mlff_mlp_vjp_layers_fit(const mlff_exec_node *n)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    for (int j = 2; j < m.layers; j += 2)
        if (m.width[j] > m.width[0])
            return 0;
    return 1;
}

int64_t mlff_mlp_vjp_scratch_entries(const mlff_exec_node *n)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    int64_t widest = 0;
    for (int j = 1; j < m.layers; j += 2)
        widest = m.width[j] > widest ? m.width[j] : widest;
    return n->output.rows * m.groups * widest;
}

static void emit_mlp_constants(mlff_text *t, const mlff_node_sig *s, mlff_kernel_dialect dialect, int fp64)
{
    const mlff_mlp_shape m = mlp_shape_of_sig(s);
    const mlff_mlp_kernel form = (mlff_mlp_kernel)s->variant;
    for (int l = 0; l <= MLFF_MLP_MAX_LAYERS; l++)
        mlff_text_put(t, "#define MLP_W%d %lld\n", l, (long long)m.width[l]);
    for (int l = 1; l <= MLFF_MLP_MAX_LAYERS; l++)
        mlff_text_put(t, "#define MLP_B%d %lld\n#define MLP_LANES%d %d\n", l, (long long)m.block[l], l,
                      l <= m.layers ? mlp_lanes(&m, (mlff_op)s->op, dialect, form, l) : 1);
    mlff_text_put(t, "#define MLP_LAYERS %d\n#define MLP_WTOP %lld\n#define MLP_COLS %lld\n#define MLP_STRIDE %lld\n"
                     "#define GROUPS %lld\n#define MLP_ROWS %d\n#define MLP_THREADS %d\n#define MLP_PARTS %d\n",
                  m.layers, (long long)m.width[m.layers], (long long)m.cols, (long long)mlp_stride(&m),
                  (long long)m.groups, mlp_rows(&m, (mlff_op)s->op, s->out_dtype, dialect, form),
                  mlff_mlp_threads(form), mlp_parts(&m, (mlff_op)s->op, dialect, form));
    mlff_text_put(t, "#define EPILOGUE %d\n", s->epilogue);
    /* CELU_MLP_VJP: whether gy has the hidden blocks too (core/ops.h). */
    mlff_text_put(t, "#define GY_HIDDEN %d\n", s->op == MLFF_OP_CELU_MLP_VJP && s->in_cols[0] == m.cols);
    put_real(t, "ALPHA", s->alpha, dialect, fp64);
}

/* ANI_ANGULAR (ani_angular.kernel): how many triples a group works out at a time
 * (ANGULAR_CHUNK: their factors in local memory, at most
 * MLFF_ANGULAR_LOCAL_BYTES), and whether its sums fit there too
 * (ANGULAR_SUMS_LOCAL; else each item keeps its own in private memory).
 * Both together stay within 16 KiB, the least shared memory Vulkan allows. */
#define MLFF_ANGULAR_LOCAL_BYTES 8192
/* With the radial features (N_SHIFTS), RADIAL_SPLIT items share each radial
 * shift, each over a part of the atom's pairs; their partial sums (one per
 * neighbour species) take at most this much of the triples' local memory,
 * and a chunk of the pairs (RADIAL_CHUNK) some more. */
#define MLFF_ANGULAR_RADIAL_BYTES 2048
_Static_assert(MLFF_ANI_MAX_SHIFTS <= MLFF_ANGULAR_LANES, "an item for each radial shift");
static void emit_angular_constants(mlff_text *t, const mlff_node_sig *s)
{
    const int64_t real = s->out_dtype == MLFF_DTYPE_F64 ? 8 : 4, n_z = s->fixed[0], n_ra = s->fixed[1];
    const int64_t slots = s->attrs.i[0] * (s->attrs.i[0] + 1) / 2, n_shifts = s->fixed[2];
    int64_t split = n_shifts ? MLFF_ANGULAR_LANES / n_shifts : 1;
    while (split > 1 && split * n_shifts * s->attrs.i[0] * real > MLFF_ANGULAR_RADIAL_BYTES)
        split--;
    /* Their partial sums, and a chunk of pairs (ani_angular.kernel). */
    const int64_t radial_bytes = (split > 1 ? split * n_shifts * s->attrs.i[0] * real : 0) +
                                 (n_shifts ? MLFF_ANGULAR_LANES / split * split * (2 * real + 4) : 0);
    mlff_text_put(t, "#define RADIAL_SPLIT %lld\n", (long long)split);
    int64_t chunk = (MLFF_ANGULAR_LOCAL_BYTES - radial_bytes) / ((n_z + n_ra) * real + 4);
    chunk = chunk > MLFF_ANGULAR_LANES ? MLFF_ANGULAR_LANES : chunk < 1 ? 1 : chunk;
    mlff_text_put(t, "#define ANGULAR_CHUNK %lld\n#define ANGULAR_SUMS_LOCAL %d\n", (long long)chunk,
                  slots * n_z * n_ra * real <= MLFF_ANGULAR_LOCAL_BYTES);
}

void mlff_emit_constants(mlff_text *t, const mlff_node_sig *s, mlff_kernel_dialect dialect, int fp64)
{
    mlff_text_put(t, "#define TO %s\n", type_name(s->out_dtype));
    for (int k = 0; k < s->n_inputs; k++)
        mlff_text_put(t, "#define T%d %s\n", k, type_name(s->in_dtype[k]));
    mlff_text_put(t, "#define OUT_COLS %lld\n", (long long)s->out_cols);
    for (int k = 0; k < s->n_inputs; k++)
        mlff_text_put(t, "#define IN%d_COLS %lld\n", k, (long long)s->in_cols[k]);
    for (int k = 0; k < (int)(sizeof s->attrs.f / sizeof *s->attrs.f); k++) {
        char name[8];
        snprintf(name, sizeof name, "F%d", k);
        put_real(t, name, s->attrs.f[k], dialect, fp64);
    }
    for (int k = 0; k < (int)(sizeof s->attrs.i / sizeof *s->attrs.i); k++)
        mlff_text_put(t, "#define I%d (%lld)\n", k, (long long)s->attrs.i[k]);
    if (mlff_op_is_gemm((mlff_op)s->op)) {
        const int vjp = s->op == MLFF_OP_LINEAR_VJP;
        const long long groups = s->attrs.i[0], w_rows = s->fixed[0], w_cols = s->in_cols[1];
        const long long per_row = groups * mlff_op_stacks(&s->attrs);
        const long long n = vjp ? w_cols : w_rows / per_row, k = vjp ? w_rows / per_row : w_cols;
        mlff_text_put(t, "#define GROUPS %lld\n#define GEMM_N %lld\n#define GEMM_K %lld\n", groups, n, k);
        mlff_text_put(t, "#define VJP %d\n#define EPILOGUE %d\n", vjp, s->epilogue);
        put_real(t, "ALPHA", s->alpha, dialect, fp64);
        mlff_text_put(t, "#define A_LD %lld\n#define A_COL %lld\n#define C_LD %lld\n#define C_COL %lld\n",
                      s->a_ld ? (long long)s->a_ld : groups * k, (long long)s->a_col,
                      s->c_ld ? (long long)s->c_ld : groups * n, (long long)s->c_col);
        mlff_text_put(t, "#define EPI_LD %lld\n#define EPI_COL %lld\n", s->epi_ld ? (long long)s->epi_ld : groups * n,
                      (long long)s->epi_col);
    }
    if (mlff_op_is_gemm((mlff_op)s->op) || mlff_op_is_mlp((mlff_op)s->op)) {
        /* Stacks (core/ops.h): the kernels find a row block's run in STARTS. */
        mlff_text_put(t, "#define STACKS %lld\n", (long long)mlff_op_stacks(&s->attrs));
        if (mlff_op_stacks(&s->attrs) > 1)
            mlff_text_put(t, "#define STARTS in%d\n", s->n_inputs - 1);
        /* Their words of shared memory are read 4 at a time (the dialect's vector types). */
        mlff_text_put(t, "#define TO4 %s4\n", type_name(s->out_dtype));
    }
    if (s->op == MLFF_OP_ANI_RADIAL || s->op == MLFF_OP_ANI_RADIAL_VJP || s->op == MLFF_OP_ANI_RADIAL_JVP ||
        s->op == MLFF_OP_ANI_RADIAL_VJP_JVP ||
        (s->op == MLFF_OP_PAIR_VECTORS_VJP && mlff_pair_vjp_has_radial(s->n_inputs)))
        mlff_text_put(t, "#define N_SHIFTS %lld\n", (long long)s->fixed[0]);
    if (s->op == MLFF_OP_ANI_ANGULAR && s->fixed[2])
        mlff_text_put(t, "#define N_SHIFTS %lld\n", (long long)s->fixed[2]);
    if (s->op == MLFF_OP_ANI_ANGULAR || s->op == MLFF_OP_ANI_ANGULAR_VJP || s->op == MLFF_OP_ANI_ANGULAR_JVP ||
        s->op == MLFF_OP_ANI_ANGULAR_VJP_JVP)
        mlff_text_put(t, "#define N_Z %lld\n#define N_RA %lld\n", (long long)s->fixed[0], (long long)s->fixed[1]);
    /* CELU's derivative (CELU_DERIVATIVE, prelude.kernel): its power in float64, for F0 and an epilogue's ALPHA. */
    const int f64 = s->out_dtype == MLFF_DTYPE_F64;
    if (s->op == MLFF_OP_CELU_VJP || s->op == MLFF_OP_CELU_VJP_JVP || s->op == MLFF_OP_CELU_MLP_VJP)
        put_real(t, "CELU_K", f64 ? mlff_celu_derivative_power(s->attrs.f[0]) : 1.0, dialect, fp64);
    if (s->epilogue == MLFF_EPILOGUE_CELU_GRAD)
        put_real(t, "ALPHA_K", f64 ? mlff_celu_derivative_power(s->alpha) : 1.0, dialect, fp64);
    /* The second-order ops' dual numbers (prelude.kernel). */
    if (mlff_op_second_order((mlff_op)s->op))
        mlff_text_put(t, "#define TO2 %s2\n", type_name(s->out_dtype));
    const int lanes = mlff_op_group_lanes((mlff_op)s->op, &s->attrs);
    if (lanes)
        mlff_text_put(t, "#define GROUP_LANES %d\n", lanes);
    if (mlff_op_sums_in_lanes((mlff_op)s->op))
        mlff_text_put(t, "#define SUM_GROUP %d\n", MLFF_SUM_GROUP);
    if (s->op == MLFF_OP_ANI_ANGULAR) {
        emit_angular_constants(t, s);
        mlff_text_put(t, "#define MAKES_VECTORS %d\n", s->makes_vectors);
    }
    if (mlff_op_is_mlp((mlff_op)s->op))
        emit_mlp_constants(t, s, dialect, fp64);
    /* A result as stored: rounded to TO, then the folded add's other term
     * added, as the add would have (the same bits). */
    if (s->epilogue == MLFF_EPILOGUE_ADD)
        mlff_text_put(t, "#define PLUS_EPI(v, at) (CAST(TO, v) + epi[at])\n");
    else
        mlff_text_put(t, "#define PLUS_EPI(v, at) CAST(TO, v)\n");
}

int mlff_kernels_support_dtype(int fp64, mlff_dtype dtype)
{
    return dtype == MLFF_DTYPE_F32 || dtype == MLFF_DTYPE_I32 || (dtype == MLFF_DTYPE_F64 && fp64);
}

int mlff_device_fp64(int has_fp64, const mlff_tuning *t)
{
    return has_fp64 && t->device_fp64;
}

int mlff_kernels_fuse(mlff_op op, mlff_epilogue epilogue)
{
    return (op == MLFF_OP_LINEAR && epilogue == MLFF_EPILOGUE_CELU) ||
           ((op == MLFF_OP_LINEAR_VJP || op == MLFF_OP_CELU_MLP_VJP) && epilogue == MLFF_EPILOGUE_CELU_GRAD) ||
           ((op == MLFF_OP_SCATTER_ADD_ROWS || op == MLFF_OP_PAIR_VECTORS_VJP) && epilogue == MLFF_EPILOGUE_ADD);
}

/* Word by word (a signature is hundreds of bytes, hashed per node and
 * call); for lookups in memory only: never stored. */
uint64_t mlff_hash(const void *data, size_t n)
{
    const unsigned char *b = data;
    uint64_t h = 1469598103934665603ULL;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, b + k, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    for (; k < n; k++)
        h = (h ^ b[k]) * 1099511628211ULL;
    return h;
}
