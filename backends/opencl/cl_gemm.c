/* Our dense-layer kernels (shaders/opencl/linear.cl, linear_tiled.cl): their
 * launch, and for the reverse pass the weights transposed per group, so
 * that both passes read the weights along their rows (so does CELU_MLP's
 * forward kernel). The copy is made on the device the first time (weights
 * never change after that: their buffer's version stays) and kept with the
 * buffer. A tiled reverse pass may split K (lowering.h): its partial sums
 * go to the backend's split_sums, then gemm_splits.cl adds them
 * (cl_launch.c sets the arguments of both). */
#include "cl_internal.h"
#include "backends/common/lowering.h"

static mlff_status build_transpose(mlff_backend *be, mlff_error *err)
{
    static const char *const names[2] = {"transpose_words4", "transpose_words8"};
    mlff_status s = cl_build_kernels(be, "transpose", 0, &be->transpose_program, names, be->transpose_kernels, 2, err);
    if (s != MLFF_OK)
        cl_release_kernels(&be->transpose_program, be->transpose_kernels, 2);
    return s;
}

mlff_status cl_transposed_weights(mlff_backend *be, const mlff_exec_tensor *wt, int64_t groups, cl_region **out,
                                  mlff_error *err)
{
    cl_buffer *w = wt->buffer;
    const size_t word = mlff_dtype_size(wt->dtype), bytes = (size_t)(wt->rows * wt->cols) * word;
    *out = &w->transposed;
    if (w->transposed.bytes >= bytes && w->transposed_version == w->host.version && w->transposed_groups == groups)
        return MLFF_OK;
    mlff_status s = be->transpose_program ? MLFF_OK : build_transpose(be, err);
    if (s == MLFF_OK)
        s = cl_region_reserve(be, &w->transposed, bytes, "allocating transposed weights", err);
    cl_mem to, from;
    if (s == MLFF_OK)
        s = cl_region_buffer(be, &w->transposed, &to, err);
    if (s == MLFF_OK)
        s = cl_region_buffer(be, &w->region, &from, err);
    if (s != MLFF_OK)
        return s;
    cl_kernel k = be->transpose_kernels[word == 8];
    const cl_int k_rows = (cl_int)(wt->rows / groups), n_cols = (cl_int)wt->cols;
    const cl_long total = wt->rows * wt->cols;
    cl_int rc = clSetKernelArg(k, 0, sizeof to, &to);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, 1, sizeof from, &from);
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
    return MLFF_OK;
}

int cl_gemm_splits(mlff_backend *be, int tiled, int has_sums, const mlff_exec_node *n)
{
    if (!tiled || !has_sums)
        return 1;
    const int64_t fill = be->tuning.opencl_split_fill_per_cu * (int64_t)be->compute_units;
    const int splits = mlff_gemm_splits(n, mlff_tiled_gemm_tiles(n, MLFF_TILED_GEMM_TS), fill, &be->tuning);
    const size_t bytes = (size_t)(n->output.rows * n->output.cols) * splits * mlff_dtype_size(n->output.dtype);
    return bytes > be->max_alloc ? 1 : splits;
}

mlff_status cl_enqueue_gemm(mlff_backend *be, cl_kernel kernel, int tiled, int splits, const mlff_exec_node *n,
                            mlff_error *err)
{
    const int64_t groups = n->attrs.i[0];
    const size_t cols_n = (size_t)(n->output.cols / groups);
    /* linear.cl: more lanes an output than 32 where that leaves compute units idle. */
    const size_t row_blocks = (size_t)mlff_row_blocks(n, MLFF_ROWS_GEMM_ROWS);
    const size_t lanes = (size_t)mlff_rows_gemm_lanes((int64_t)cols_n, (int64_t)n->output.rows, groups,
                                                      be->tuning.opencl_rows_few_groups_per_cu *
                                                          (int64_t)be->compute_units);
    const size_t outs = MLFF_ROWS_GEMM_GROUP / lanes;
    const size_t few_local[3] = {lanes, outs, 1}, tiled_local[3] = {16, 16, 1};
    const size_t few[3] = {(cols_n + outs - 1) / outs * lanes, row_blocks * outs, (size_t)groups};
    const size_t tiles[3] = {(cols_n + MLFF_TILED_GEMM_TS - 1) / MLFF_TILED_GEMM_TS * 16,
                             (size_t)mlff_row_blocks(n, MLFF_TILED_GEMM_TS) * 16, (size_t)(groups * splits)};
    cl_int rc = clEnqueueNDRangeKernel(be->queue, kernel, 3, NULL, tiled ? tiles : few, tiled ? tiled_local : few_local,
                                       0, NULL, cl_profile_event(be, n->op));
    return rc == CL_SUCCESS ? MLFF_OK : cl_fail(err, rc, "clEnqueueNDRangeKernel (gemm)");
}

void cl_gemm_free(mlff_backend *be)
{
    cl_region_free(be, &be->split_sums);
    cl_release_kernels(&be->transpose_program, be->transpose_kernels, 2);
}
