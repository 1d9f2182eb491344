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

/* Source row r's block t reduced (row sums, attrs i[1] > 0): f[0] times
 * the sum of its first i[1] columns, times the weights (one block) where
 * there are some. */
static double row_sum(const mlff_exec_node *n, int64_t r, int64_t t)
{
    const mlff_exec_tensor *x = &n->inputs[0], *w = n->n_inputs > 2 ? &n->inputs[2] : NULL;
    const int64_t blocks = mlff_op_tangents(n->op, &n->attrs), cols = x->cols / blocks, at = r * x->cols + t * cols;
    double s = 0.0;
    for (int64_t c = 0; c < n->attrs.i[1]; c++)
        s += w ? cpu_load(x, at + c) * cpu_load(w, r * cols + c) : cpu_load(x, at + c);
    return n->attrs.f[0] * s;
}

/* Each target row is the sum of its source rows, accumulated in double a
 * block of columns at a time (rows are read contiguously; most targets have
 * one source or none: the gradient of a gather by element). */
#define SCATTER_BLOCK 256
static void scatter_targets(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    const cpu_csr by_target = *(const cpu_csr *)extra;
    const mlff_exec_tensor *x = &n->inputs[0], *y = &n->output;
    const int64_t cols = y->cols;
    double sum[SCATTER_BLOCK];
    if (n->attrs.i[1]) {
        for (int64_t t = begin; t < end; t++)
            for (int64_t b = 0; b < cols; b++) {
                double s = 0.0;
                for (int64_t q = by_target.offsets[t]; q < by_target.offsets[t + 1]; q++)
                    s += row_sum(n, by_target.items[q], b);
                cpu_store(y, t * cols + b, s);
            }
        return;
    }
    for (int64_t t = begin; t < end; t++)
        for (int64_t c0 = 0; c0 < cols; c0 += SCATTER_BLOCK) {
            const int64_t width = cols - c0 < SCATTER_BLOCK ? cols - c0 : SCATTER_BLOCK;
            for (int64_t c = 0; c < width; c++)
                sum[c] = 0.0;
            for (int64_t q = by_target.offsets[t]; q < by_target.offsets[t + 1]; q++) {
                const int64_t row = by_target.items[q] * cols + c0;
                if (x->dtype == MLFF_DTYPE_F32)
                    for (int64_t c = 0; c < width; c++)
                        sum[c] += ((const float *)x->buffer)[row + c];
                else
                    for (int64_t c = 0; c < width; c++)
                        sum[c] += ((const double *)x->buffer)[row + c];
            }
            for (int64_t c = 0; c < width; c++)
                cpu_store(y, t * cols + c0 + c, sum[c]);
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

/* Pair a's triples: (a, c) for each later pair c of its center (core/ops.h). */
static void triples_of_pairs(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    (void)extra;
    const int32_t *pairs = n->inputs[0].buffer, *first = n->inputs[1].buffer;
    int32_t *out = n->output.buffer;
    const int64_t n_pairs = n->inputs[0].rows, n_triples = n->output.rows;
    for (int64_t a = begin; a < end; a++)
        for (int64_t c = a + 1, t = first[a]; c < n_pairs && pairs[2 * c] == pairs[2 * a] && t < n_triples;
             c++, t++) {
            out[2 * t] = (int32_t)a;
            out[2 * t + 1] = (int32_t)c;
        }
}

mlff_status cpu_pair_triples(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    (void)err;
    cpu_pool_for(be->pool, n->inputs[0].rows, 4096, triples_of_pairs, n, NULL);
    return MLFF_OK;
}
