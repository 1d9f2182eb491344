/* Row gather and scatter on the CPU. They may change dtype (REAL rows summed
 * into F64 energies and back), so they read and write through cpu_load/store. */
#include <string.h>

#include "cpu_internal.h"

mlff_status cpu_gather_rows(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    (void)err;
    const mlff_exec_tensor *x = &n->inputs[0], *y = &n->output;
    const int32_t *idx = n->inputs[1].buffer;
    const int64_t rows = y->rows, cols = y->cols;
    (void)be;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            cpu_store(y, r * cols + c, cpu_load(x, (int64_t)idx[r] * cols + c));
    return MLFF_OK;
}

static void scatter_targets(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    const cpu_csr by_target = *(const cpu_csr *)extra;
    const mlff_exec_tensor *x = &n->inputs[0], *y = &n->output;
    const int64_t cols = y->cols;
    for (int64_t t = begin; t < end; t++)
        for (int64_t c = 0; c < cols; c++) {
            double sum = 0.0;
            for (int64_t q = by_target.offsets[t]; q < by_target.offsets[t + 1]; q++)
                sum += cpu_load(x, by_target.items[q] * cols + c);
            cpu_store(y, t * cols + c, sum);
        }
}

mlff_status cpu_scatter_add_rows(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    cpu_csr by_target;
    mlff_status s = cpu_csr_build(be, n->inputs[1].buffer, 1, n->inputs[0].rows, n->output.rows,
                                  &by_target, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, 256, scatter_targets, n, &by_target);
    return s;
}
