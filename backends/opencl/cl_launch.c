/* Enqueueing one node: arguments in the order of the kernel templates
 * (out, inputs, n_items, segments, epilogue input) and the launch size. */
#include <stdlib.h>

#include "cl_internal.h"
#include "../common/lowering.h"

static cl_mem mem_of(const mlff_exec_tensor *t)
{
    return ((const cl_buffer *)t->buffer)->mem;
}

static cl_int set_mem(cl_kernel k, cl_uint index, cl_mem m)
{
    return clSetKernelArg(k, index, sizeof m, &m);
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
static mlff_status launch_mlp(mlff_backend *be, cl_kernel kernel, int wide, const mlff_exec_node *n,
                              mlff_error *err)
{
    const size_t rows = (size_t)mlff_mlp_node_rows(n, MLFF_DIALECT_OPENCL, wide), threads = mlff_mlp_threads(wide);
    const size_t local[2] = {threads, 1};
    const size_t global[2] = {(size_t)mlff_row_blocks(n, (int64_t)rows) * threads, (size_t)n->attrs.i[0]};
    cl_int rc = clEnqueueNDRangeKernel(be->queue, kernel, 2, NULL, global, local, 0, NULL, cl_profile_event(be, n->op));
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "clEnqueueNDRangeKernel");
}

/* A CLBlast GEMM, then its bias and activation. */
static mlff_status enqueue_clblast(mlff_backend *be, cl_kernel epilogue, size_t group, const mlff_exec_node *n,
                                   mlff_error *err)
{
    if (n->output.rows == 0)
        return MLFF_OK;
    mlff_status s = cl_blas_gemm(be, n, err);
    if (s != MLFF_OK || !epilogue)
        return s;
    const cl_long items = n->output.rows * n->output.cols;
    cl_int rc = set_mem(epilogue, 0, mem_of(&n->output));
    if (rc == CL_SUCCESS)
        rc = set_mem(epilogue, 1, mem_of(n->op == MLFF_OP_LINEAR ? &n->inputs[2] : &n->epilogue_input));
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(epilogue, 2, sizeof items, &items);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "clSetKernelArg");
    return launch_1d(be, epilogue, group, items, CL_ROW_EPILOGUE, err);
}

mlff_status cl_enqueue_node(mlff_backend *be, const cl_prepared *prep, int k, const mlff_exec_node *n,
                            mlff_error *err)
{
    if (mlff_index_shadow_written_by(&((cl_buffer *)n->output.buffer)->host, n))
        return MLFF_OK;
    if (cl_node_uses_clblast(be, n))
        return enqueue_clblast(be, prep->epilogue[k], prep->epilogue_group[k], n, err);
    const int gemm = n->op == MLFF_OP_LINEAR || n->op == MLFF_OP_LINEAR_VJP;
    const int tiled = gemm && cl_gemm_tiled(be, n);
    const int wide = mlff_op_is_mlp(n->op) && prep->wide[k];
    cl_kernel kernel = tiled ? prep->tiled[k] : wide ? prep->wide[k] : prep->kernels[k];
    const int transposed = mlff_mlp_reads_transposed(n->op, MLFF_DIALECT_OPENCL); /* W^T: celu_mlp.cl */
    if (!kernel)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "opencl: no kernel for op %s", mlff_op_get(n->op)->name);
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
    cl_uint arg = 0;
    cl_int rc = set_mem(kernel, arg++, mem_of(&n->output));
    const int weights_end = 2 * mlff_mlp_layers(n->op, n->n_inputs, &n->attrs); /* the starts come after */
    for (int j = 0; j < n->n_inputs && rc == CL_SUCCESS; j++) {
        cl_mem mem = mem_of(&n->inputs[j]);
        if (transposed && j % 2 == 1 && j < weights_end) { /* W1, W2, ...: inputs 1, 3, ... */
            s = cl_transposed_weights(be, &n->inputs[j], n->attrs.i[0] * mlff_op_stacks(&n->attrs), &mem, err);
            if (s != MLFF_OK)
                return s;
        }
        rc = set_mem(kernel, arg++, mem);
    }
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(kernel, arg++, sizeof items, &items);
    const cl_int lanes = mlff_sum_lanes(n, be->sum_lanes, be->is_gpu);
    if (rc == CL_SUCCESS && mlff_op_sums_in_lanes(n->op))
        rc = clSetKernelArg(kernel, arg++, sizeof lanes, &lanes);
    for (int part = 0; part < MLFF_NODE_SEGMENTS && rc == CL_SUCCESS && seg[part]; part++) {
        const cl_segment_buffers *d = seg[part]->device;
        rc = set_mem(kernel, arg++, d->offsets);
        if (rc == CL_SUCCESS)
            rc = set_mem(kernel, arg++, d->items);
    }
    if (rc == CL_SUCCESS && mlff_epilogue_reads_input(n->epilogue))
        rc = set_mem(kernel, arg++, mem_of(&n->epilogue_input));
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "clSetKernelArg");
    if (gemm)
        return cl_enqueue_gemm(be, kernel, tiled, prep->splits[k], n, err);
    if (mlff_op_is_mlp(n->op))
        return launch_mlp(be, kernel, wide, n, err);
    return launch_1d(be, kernel, prep->group[k], items * lanes, n->op, err);
}
