/* Our dense-layer kernels (shaders/opencl/linear.cl, linear_tiled.cl): their
 * launch, and for the reverse pass the weights transposed per group, so
 * that both passes read the weights along their rows (so does CELU_MLP's
 * forward kernel). The copy is made on the device the first time (weights
 * never change after that: their buffer's version stays) and kept with the
 * buffer. A tiled reverse pass may split K (lowering.h): its partial sums
 * go to the backend's split_sums, then gemm_splits.cl adds them. */
#include "cl_internal.h"
#include "../common/lowering.h"

static mlff_status build_transpose(mlff_backend *be, mlff_error *err)
{
    static const char *const names[2] = {"transpose_words4", "transpose_words8"};
    mlff_status s = cl_build_kernels(be, "transpose", &be->transpose_program, names, be->transpose_kernels, 2, err);
    if (s != MLFF_OK)
        cl_gemm_free(be);
    return s;
}

mlff_status cl_transposed_weights(mlff_backend *be, const mlff_exec_tensor *wt, int64_t groups, cl_mem *out,
                                  mlff_error *err)
{
    cl_buffer *w = wt->buffer;
    const size_t word = mlff_dtype_size(wt->dtype), bytes = (size_t)(wt->rows * wt->cols) * word;
    *out = w->transposed;
    if (w->transposed && w->transposed_version == w->host.version && w->transposed_groups == groups &&
        w->transposed_bytes >= bytes)
        return MLFF_OK;
    if (!be->transpose_program) {
        mlff_status s = build_transpose(be, err);
        if (s != MLFF_OK)
            return s;
    }
    cl_int rc = CL_SUCCESS;
    if (w->transposed_bytes < bytes) {
        if (w->transposed)
            clReleaseMemObject(w->transposed);
        w->transposed_bytes = 0;
        w->transposed = clCreateBuffer(be->context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
        if (rc != CL_SUCCESS)
            return cl_fail(err, rc, "allocating transposed weights");
        w->transposed_bytes = bytes;
        be->allocations++;
    }
    cl_kernel k = be->transpose_kernels[word == 8];
    const cl_int k_rows = (cl_int)(wt->rows / groups), n_cols = (cl_int)wt->cols;
    const cl_long total = wt->rows * wt->cols;
    rc = clSetKernelArg(k, 0, sizeof w->transposed, &w->transposed);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, 1, sizeof w->mem, &w->mem);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, 2, sizeof k_rows, &k_rows);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, 3, sizeof n_cols, &n_cols);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, 4, sizeof total, &total);
    const size_t local = cl_group_size(be, k), global = ((size_t)total + local - 1) / local * local;
    if (rc == CL_SUCCESS)
        rc = clEnqueueNDRangeKernel(be->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "transposing weights");
    w->transposed_version = w->host.version;
    w->transposed_groups = groups;
    *out = w->transposed;
    return MLFF_OK;
}

/* The sums of a split K into the node's output (gemm_splits.cl). */
static mlff_status enqueue_split_sums(mlff_backend *be, cl_kernel sums, cl_int splits, const mlff_exec_node *n,
                                      mlff_error *err)
{
    const cl_mem out = ((const cl_buffer *)n->output.buffer)->mem;
    const cl_long items = n->output.rows * n->output.cols;
    cl_int rc = clSetKernelArg(sums, 0, sizeof out, &out);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(sums, 1, sizeof be->split_sums, &be->split_sums);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(sums, 2, sizeof items, &items);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(sums, 3, sizeof splits, &splits);
    if (rc == CL_SUCCESS && mlff_epilogue_reads_input(n->epilogue)) {
        const cl_mem epi = ((const cl_buffer *)n->epilogue_input.buffer)->mem;
        rc = clSetKernelArg(sums, 4, sizeof epi, &epi);
    }
    const size_t local = cl_group_size(be, sums), global = ((size_t)items + local - 1) / local * local;
    if (rc == CL_SUCCESS)
        rc = clEnqueueNDRangeKernel(be->queue, sums, 1, NULL, &global, &local, 0, NULL,
                                    cl_profile_event(be, CL_ROW_SPLIT_SUMS));
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "enqueueing a GEMM's split sums");
}

mlff_status cl_enqueue_gemm(mlff_backend *be, cl_kernel kernel, int tiled, cl_kernel sums, const mlff_exec_node *n,
                            mlff_error *err)
{
    const int64_t groups = n->attrs.i[0];
    const int vjp = n->op == MLFF_OP_LINEAR_VJP;
    if (vjp) {
        cl_mem transposed;
        mlff_status s = cl_transposed_weights(be, &n->inputs[1], groups * mlff_op_stacks(&n->attrs), &transposed, err);
        if (s != MLFF_OK)
            return s;
        cl_int rc = clSetKernelArg(kernel, 2, sizeof transposed, &transposed); /* in1: after out, in0 */
        if (rc != CL_SUCCESS)
            return cl_fail(err, rc, "clSetKernelArg (gemm)");
    }
    const size_t cols_n = (size_t)(n->output.cols / groups), rows = (size_t)n->output.rows;
    /* linear.cl: more lanes an output than 32 where that leaves compute units idle. */
    const size_t row_blocks = (size_t)mlff_row_blocks(n, MLFF_ROWS_GEMM_ROWS);
    const size_t lanes = (size_t)mlff_rows_gemm_lanes((int64_t)cols_n, (int64_t)rows, groups, 2 * (int64_t)be->compute_units);
    const size_t outs = MLFF_ROWS_GEMM_GROUP / lanes;
    const size_t few_local[3] = {lanes, outs, 1}, tiled_local[3] = {16, 16, 1};
    const size_t few[3] = {(cols_n + outs - 1) / outs * lanes, row_blocks * outs, (size_t)groups};
    const int fill = be->is_gpu ? CL_SPLIT_FILL_PER_CU * (int)be->compute_units : 0;
    const int64_t n_tiles = mlff_tiled_gemm_tiles(n, MLFF_TILED_GEMM_TS);
    cl_int splits = tiled && sums ? mlff_gemm_splits(n, n_tiles, fill, be->gemm_splits) : 1;
    const size_t split_bytes = (size_t)(n->output.rows * n->output.cols) * splits * mlff_dtype_size(n->output.dtype);
    if (splits > 1 && split_bytes > be->max_alloc)
        splits = 1;
    cl_int rc = CL_SUCCESS;
    if (splits > 1) {
        mlff_status s = cl_grow_buffer(be, &be->split_sums, &be->split_sums_bytes, split_bytes, 1,
                                       "allocating a GEMM's partial sums", err);
        if (s != MLFF_OK)
            return s;
        rc = clSetKernelArg(kernel, 0, sizeof be->split_sums, &be->split_sums);
    }
    const size_t tiles[3] = {(cols_n + MLFF_TILED_GEMM_TS - 1) / MLFF_TILED_GEMM_TS * 16,
                             (size_t)mlff_row_blocks(n, MLFF_TILED_GEMM_TS) * 16,
                             (size_t)(groups * splits)};
    if (rc == CL_SUCCESS)
        rc = clEnqueueNDRangeKernel(be->queue, kernel, 3, NULL, tiled ? tiles : few, tiled ? tiled_local : few_local,
                                    0, NULL, cl_profile_event(be, n->op));
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "clEnqueueNDRangeKernel (gemm)");
    return splits > 1 ? enqueue_split_sums(be, sums, splits, n, err) : MLFF_OK;
}

void cl_gemm_free(mlff_backend *be)
{
    if (be->split_sums)
        clReleaseMemObject(be->split_sums);
    be->split_sums = NULL;
    be->split_sums_bytes = 0;
    for (int k = 0; k < 2; k++) {
        if (be->transpose_kernels[k])
            clReleaseKernel(be->transpose_kernels[k]);
        be->transpose_kernels[k] = NULL;
    }
    if (be->transpose_program)
        clReleaseProgram(be->transpose_program);
    be->transpose_program = NULL;
}
