/* Enqueueing one node: its kernel's buffers in the order of cl_program.c's
 * KARGS (out, inputs, vector sources, segments, epilogue input), each as an
 * offset into the arena or as a buffer (cl_arena.c), then its scalars, and
 * the launch size. */
#include <stdlib.h>

#include "cl_internal.h"
#include "backends/common/lowering.h"

/* A kernel's buffers in argument order, then its scalars: the items, and
 * an int where has_int says. */
typedef struct kernel_args {
    cl_region *regions[1 + MLFF_MAX_OP_INPUTS + MLFF_VECTOR_SOURCES + 2 * MLFF_NODE_SEGMENTS + 1];
    int n;
    cl_long items;
    int has_int;
    cl_int int_scalar;
} kernel_args;

static cl_region *region_of(const mlff_exec_tensor *t)
{
    return &((cl_buffer *)t->buffer)->region;
}

static void add(kernel_args *a, cl_region *r)
{
    a->regions[a->n++] = r;
}

/* The node list's program of that form (cl_node_programs). */
static mlff_status program(mlff_backend *be, cl_node_programs *programs, int arena, const cl_prepared **out,
                           mlff_error *err)
{
    mlff_status s = MLFF_OK;
    if (!programs->form[arena])
        s = cl_prepare(be, programs->nodes, programs->n_nodes, arena, &programs->form[arena], err);
    *out = programs->form[arena];
    return s;
}

static mlff_status set_args(mlff_backend *be, cl_kernel kernel, int arena, const kernel_args *a, mlff_error *err)
{
    mlff_status s = cl_set_region_args(be, kernel, arena, a->regions, a->n, err);
    if (s != MLFF_OK)
        return s;
    cl_uint arg = (cl_uint)(arena + a->n);
    cl_int rc = clSetKernelArg(kernel, arg++, sizeof a->items, &a->items);
    if (rc == CL_SUCCESS && a->has_int)
        rc = clSetKernelArg(kernel, arg, sizeof a->int_scalar, &a->int_scalar);
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "clSetKernelArg");
}

static mlff_status launch_1d(mlff_backend *be, cl_kernel kernel, size_t group, int64_t items, int row,
                             mlff_error *err)
{
    const size_t local = group, global = ((size_t)items + group - 1) / group * group;
    cl_int rc = clEnqueueNDRangeKernel(be->queue, kernel, 1, NULL, &global, &local, 0, NULL,
                                       cl_profile_event(be, row));
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "clEnqueueNDRangeKernel");
}

/* CELU_MLP and its VJP: a work-group per block of rows (x) and group (y). */
static cl_int launch_mlp(mlff_backend *be, cl_kernel kernel, mlff_mlp_kernel form, const mlff_exec_node *n)
{
    const size_t rows = (size_t)mlff_mlp_node_rows(n, MLFF_DIALECT_OPENCL, form), threads = mlff_mlp_threads(form);
    const size_t local[2] = {threads, 1};
    const size_t global[2] = {(size_t)mlff_row_blocks(n, (int64_t)rows) * threads, (size_t)n->attrs.i[0]};
    return clEnqueueNDRangeKernel(be->queue, kernel, 2, NULL, global, local, 0, NULL, cl_profile_event(be, n->op));
}

/* A CLBlast GEMM, then its bias and activation (gemm_epilogue.cl: out, and
 * the bias or y). */
static mlff_status enqueue_clblast(mlff_backend *be, cl_node_programs *programs, int k, mlff_error *err)
{
    const mlff_exec_node *n = &programs->nodes[k];
    if (n->output.rows == 0)
        return MLFF_OK;
    mlff_status s = cl_blas_gemm(be, n, err);
    const cl_prepared *prep = programs->form[programs->arena];
    if (s != MLFF_OK || !prep->epilogue[k])
        return s;
    kernel_args a = {.items = n->output.rows * n->output.cols};
    add(&a, region_of(&n->output));
    add(&a, region_of(n->op == MLFF_OP_LINEAR ? &n->inputs[2] : &n->epilogue_input));
    const int arena = cl_regions_in_arena(be, a.regions, a.n);
    if ((s = program(be, programs, arena, &prep, err)) != MLFF_OK ||
        (s = set_args(be, prep->epilogue[k], arena, &a, err)) != MLFF_OK)
        return s;
    return launch_1d(be, prep->epilogue[k], prep->epilogue_group[k], a.items, CL_ROW_EPILOGUE, err);
}

/* Our GEMM (linear_rows.kernel or linear_tiled.kernel: out, inputs,
 * epilogue input), its K perhaps split, whose partial sums gemm_splits.kernel
 * then adds (out, the partial sums, epilogue input; splits). */
static mlff_status enqueue_gemm(mlff_backend *be, cl_node_programs *programs, int k, mlff_error *err)
{
    const mlff_exec_node *n = &programs->nodes[k];
    const cl_prepared *prep = programs->form[programs->arena];
    const int tiled = cl_gemm_tiled(be, n);
    const int splits = cl_gemm_splits(be, tiled, prep->splits[k] != NULL, n);
    const int epi = mlff_epilogue_reads_input(n->epilogue);
    mlff_status s = MLFF_OK;
    kernel_args a = {.items = n->output.rows};
    if (splits > 1)
        s = cl_region_reserve(be, &be->split_sums, (size_t)(n->output.rows * n->output.cols) * (size_t)splits *
                              mlff_dtype_size(n->output.dtype), "allocating a GEMM's partial sums", err);
    add(&a, splits > 1 ? &be->split_sums : region_of(&n->output));
    for (int j = 0; j < n->n_inputs && s == MLFF_OK; j++) {
        cl_region *r = region_of(&n->inputs[j]);
        if (j == 1 && n->op == MLFF_OP_LINEAR_VJP) /* W: read transposed */
            s = cl_transposed_weights(be, &n->inputs[1], n->attrs.i[0] * mlff_op_stacks(&n->attrs), &r, err);
        add(&a, r);
    }
    if (epi)
        add(&a, region_of(&n->epilogue_input));
    kernel_args sums = {.items = n->output.rows * n->output.cols, .has_int = 1, .int_scalar = splits};
    add(&sums, region_of(&n->output));
    add(&sums, &be->split_sums);
    if (epi)
        add(&sums, region_of(&n->epilogue_input));
    const int arena =
        cl_regions_in_arena(be, a.regions, a.n) && (splits == 1 || cl_regions_in_arena(be, sums.regions, sums.n));
    if (s != MLFF_OK || (s = program(be, programs, arena, &prep, err)) != MLFF_OK)
        return s;
    cl_kernel kernel = tiled ? prep->tiled[k] : prep->kernels[k];
    if ((s = set_args(be, kernel, arena, &a, err)) != MLFF_OK ||
        (s = cl_enqueue_gemm(be, kernel, tiled, splits, n, err)) != MLFF_OK || splits == 1)
        return s;
    if ((s = set_args(be, prep->splits[k], arena, &sums, err)) != MLFF_OK)
        return s;
    return launch_1d(be, prep->splits[k], cl_group_size(be, prep->splits[k]), sums.items, CL_ROW_SPLIT_SUMS, err);
}

/* CELU_MLP node k's kernel in the form its size takes (lowering.h), where
 * the program has it (the wide form where the device runs it: cl_program.c). */
static cl_kernel mlp_kernel(const mlff_backend *be, const cl_prepared *prep, int k, const mlff_exec_node *n,
                            mlff_mlp_kernel *form)
{
    *form = mlff_mlp_kernel_for(n, &be->tuning, be->mlp_wide_fits && prep->wide[k], MLFF_DIALECT_OPENCL);
    if (*form == MLFF_MLP_KERNEL_WIDE)
        return prep->wide[k];
    if (*form == MLFF_MLP_KERNEL_HALF && prep->half[k])
        return prep->half[k];
    *form = MLFF_MLP_KERNEL_NARROW;
    return prep->kernels[k];
}

mlff_status cl_enqueue_node(mlff_backend *be, cl_node_programs *programs, int k, mlff_error *err)
{
    const mlff_exec_node *n = &programs->nodes[k];
    if (mlff_index_shadow_written_by(&((cl_buffer *)n->output.buffer)->host, n))
        return MLFF_OK;
    /* An empty node launches nothing (runtime/plan.c): a reused node's
     * output holds its result from an earlier call. */
    if (n->output.rows == 0)
        return MLFF_OK;
    if (cl_node_uses_clblast(be, n))
        return enqueue_clblast(be, programs, k, err);
    if (n->op == MLFF_OP_LINEAR || n->op == MLFF_OP_LINEAR_VJP)
        return enqueue_gemm(be, programs, k, err);
    const cl_prepared *prep = programs->form[programs->arena];
    const cl_long items = mlff_node_work_items(n);
    const mlff_segments *seg[MLFF_NODE_SEGMENTS];
    const double sort_start = be->profile.enabled ? mlff_seconds() : 0;
    mlff_status s = mlff_segments_for(&be->segments, n, seg, err);
    if (s != MLFF_OK)
        return s;
    if (be->profile.enabled && seg[0])
        mlff_profile_add(&be->profile, CL_ROW_SEGMENTS, "host: segments left to nodes", mlff_seconds() - sort_start);
    if (items == 0)
        return MLFF_OK;
    const int lanes = mlff_op_sums_in_lanes(n->op);
    kernel_args a = {.items = items, .has_int = lanes, .int_scalar = mlff_sum_lanes(n, &be->tuning)};
    add(&a, region_of(&n->output));
    /* CELU_MLP reads W1, W2, ... (inputs 1, 3, ...) transposed (celu_mlp.cl). */
    const int transposed = mlff_mlp_reads_transposed(n->op, MLFF_DIALECT_OPENCL);
    const int weights_end = 2 * mlff_mlp_layers(n->op, n->n_inputs, &n->attrs); /* the starts come after */
    for (int j = 0; j < n->n_inputs && s == MLFF_OK; j++) {
        cl_region *r = region_of(&n->inputs[j]);
        if (transposed && j % 2 == 1 && j < weights_end)
            s = cl_transposed_weights(be, &n->inputs[j], n->attrs.i[0] * mlff_op_stacks(&n->attrs), &r, err);
        add(&a, r);
    }
    for (int j = 0; n->makes_vectors && j < MLFF_VECTOR_SOURCES; j++)
        add(&a, region_of(&n->vector_sources[j]));
    for (int part = 0; part < MLFF_NODE_SEGMENTS && seg[part]; part++) {
        cl_segment_buffers *d = seg[part]->device;
        add(&a, &d->offsets);
        add(&a, &d->items);
    }
    if (mlff_epilogue_reads_input(n->epilogue))
        add(&a, region_of(&n->epilogue_input));
    const int arena = cl_regions_in_arena(be, a.regions, a.n);
    if (s != MLFF_OK || (s = program(be, programs, arena, &prep, err)) != MLFF_OK)
        return s;
    const int mlp = mlff_op_is_mlp(n->op);
    mlff_mlp_kernel form = MLFF_MLP_KERNEL_NARROW;
    cl_kernel kernel = mlp ? mlp_kernel(be, prep, k, n, &form) : prep->kernels[k];
    if (!kernel)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "opencl: no kernel for op %s", mlff_op_get(n->op)->name);
    if ((s = set_args(be, kernel, arena, &a, err)) != MLFF_OK)
        return s;
    if (!mlp)
        return launch_1d(be, kernel, prep->group[k], items * a.int_scalar, n->op, err);
    cl_int rc = launch_mlp(be, kernel, form, n);
    if (form == MLFF_MLP_KERNEL_WIDE && be->tuning.mlp == MLFF_MLP_AUTO &&
        (rc == CL_INVALID_WORK_GROUP_SIZE || rc == CL_OUT_OF_RESOURCES)) {
        /* A driver that holds to the limit it reports after all (runs_wide,
         * cl_program.c): the other forms from now on. */
        be->mlp_wide_fits = 0;
        kernel = mlp_kernel(be, prep, k, n, &form);
        if ((s = set_args(be, kernel, arena, &a, err)) != MLFF_OK)
            return s;
        rc = launch_mlp(be, kernel, form, n);
    }
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "clEnqueueNDRangeKernel");
}
