/* Dense layers through CLBlast: one strided-batched GEMM per grouped layer
 * (the 8 ensemble members side by side), with the bias and activation in a
 * kernel of ours after it (cl_launch.c). */
#include "cl_internal.h"

#include <clblast_c.h>

mlff_status cl_blas_gemm(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const size_t groups = (size_t)n->attrs.i[0], rows = (size_t)n->output.rows;
    const mlff_exec_tensor *w = &n->inputs[1];
    const cl_region *a = &((const cl_buffer *)n->inputs[0].buffer)->region, *b = &((const cl_buffer *)w->buffer)->region,
                    *c = &((const cl_buffer *)n->output.buffer)->region;
    const size_t a_at = cl_region_offset(a) / mlff_dtype_size(n->output.dtype),
                 b_at = cl_region_offset(b) / mlff_dtype_size(n->output.dtype),
                 c_at = cl_region_offset(c) / mlff_dtype_size(n->output.dtype);
    /* Row-major; per group g: C_g = A_g W_g^T (LINEAR) or A_g W_g (LINEAR_VJP),
     * where A_g and C_g are column blocks of wider rows. */
    const int vjp = n->op == MLFF_OP_LINEAR_VJP;
    const size_t k = vjp ? (size_t)w->rows / groups : (size_t)w->cols;
    const size_t cols = vjp ? (size_t)w->cols : (size_t)w->rows / groups;
    const CLBlastTranspose tb = vjp ? CLBlastTransposeNo : CLBlastTransposeYes;
    cl_event *event = cl_profile_event(be, CL_ROW_CLBLAST);
    CLBlastStatusCode status;
    if (n->output.dtype == MLFF_DTYPE_F64)
        status = CLBlastDgemmStridedBatched(CLBlastLayoutRowMajor, CLBlastTransposeNo, tb, rows, cols, k, 1.0,
                                            cl_region_mem(be, a), a_at, groups * k, k, cl_region_mem(be, b), b_at,
                                            vjp ? cols : k, k * cols, 0.0, cl_region_mem(be, c), c_at, groups * cols,
                                            cols, groups, &be->queue, event);
    else
        status = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, CLBlastTransposeNo, tb, rows, cols, k, 1.0f,
                                            cl_region_mem(be, a), a_at, groups * k, k, cl_region_mem(be, b), b_at,
                                            vjp ? cols : k, k * cols, 0.0f, cl_region_mem(be, c), c_at,
                                            groups * cols, cols, groups, &be->queue, event);
    if (status != CLBlastSuccess)
        return mlff_fail(err, status == CLBlastTempBufferAllocFailure || status == CLBlastOpenCLOutOfResources ||
                                          status == CLBlastOpenCLOutOfHostMemory
                                  ? MLFF_ERROR_OUT_OF_MEMORY
                                  : MLFF_ERROR_DEVICE,
                         "opencl: CLBlast GEMM (%zu x %zu x %zu, %zu groups) failed with status %d", rows, cols,
                         k, groups, (int)status);
    return MLFF_OK;
}
