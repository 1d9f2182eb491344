/* Dense layers through CLBlast: one strided-batched GEMM per grouped layer
 * (the 8 ensemble members side by side), with the bias and activation in a
 * kernel of ours after it (cl_launch.c). A region in the arena goes to
 * CLBlast as its sub-buffer, offset 0, not as the arena and an offset: so
 * PoCL's float32 GEMMs of the 5184-atom box's hydrogens came out near 1e27
 * (CLBlast 1.5.3; the same memory through sub-buffers, our GEMMs, float64
 * and the arena off were right), and offsets that are not zero make CLBlast
 * copy matrices it could read in place. */
#include "cl_internal.h"

#include <clblast_c.h>

mlff_status cl_blas_gemm(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const size_t groups = (size_t)n->attrs.i[0], rows = (size_t)n->output.rows;
    const mlff_exec_tensor *w = &n->inputs[1];
    cl_mem a, b, c;
    mlff_status s = cl_region_buffer(be, &((cl_buffer *)n->inputs[0].buffer)->region, &a, err);
    if (s == MLFF_OK)
        s = cl_region_buffer(be, &((cl_buffer *)w->buffer)->region, &b, err);
    if (s == MLFF_OK)
        s = cl_region_buffer(be, &((cl_buffer *)n->output.buffer)->region, &c, err);
    if (s != MLFF_OK)
        return s;
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
                                            a, 0, groups * k, k, b, 0,
                                            vjp ? cols : k, k * cols, 0.0, c, 0, groups * cols,
                                            cols, groups, &be->queue, event);
    else
        status = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, CLBlastTransposeNo, tb, rows, cols, k, 1.0f,
                                            a, 0, groups * k, k, b, 0,
                                            vjp ? cols : k, k * cols, 0.0f, c, 0,
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
