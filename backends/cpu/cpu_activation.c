/* CELU and its derivative in float32, vectorised (see cpu_math.h). */
#include <stdint.h>

#include "cpu_internal.h"
#include "cpu_math.h"

/* -O2 only vectorises the cheapest loops; these are worth the full vectoriser. */
#define TARGETS __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default"), optimize("O3")))

TARGETS static void celu_f32(const float *restrict x, float *restrict y, int64_t n, float alpha)
{
    const float inv = 1.0f / alpha;
#pragma GCC ivdep
    for (int64_t k = 0; k < n; k++)
        y[k] = cpu_celu(x[k], alpha, inv);
}

TARGETS static void celu_vjp_f32(const float *restrict gy, const float *restrict y,
                                 float *restrict gx, int64_t n, float alpha)
{
    const float inv = 1.0f / alpha;
#pragma GCC ivdep
    for (int64_t k = 0; k < n; k++)
        gx[k] = gy[k] * cpu_celu_grad(y[k], inv);
}

TARGETS void cpu_celu_vjp_accumulate_f32(const float *restrict gy, const float *restrict y, float *restrict gx,
                                         int64_t n, float alpha)
{
    const float inv = 1.0f / alpha;
#pragma GCC ivdep
    for (int64_t k = 0; k < n; k++)
        gx[k] += gy[k] * cpu_celu_grad(y[k], inv);
}

static void celu_items(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    (void)extra;
    celu_f32((const float *)n->inputs[0].buffer + begin, (float *)n->output.buffer + begin,
             end - begin, (float)n->attrs.f[0]);
}

static void celu_vjp_items(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    (void)extra;
    celu_vjp_f32((const float *)n->inputs[0].buffer + begin, (const float *)n->inputs[1].buffer + begin,
                 (float *)n->output.buffer + begin, end - begin, (float)n->attrs.f[0]);
}

mlff_status cpu_celu_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows * n->output.cols, 1 << 14, celu_items, n, NULL);
    return MLFF_OK;
}

mlff_status cpu_celu_vjp_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows * n->output.cols, 1 << 14, celu_vjp_items, n, NULL);
    return MLFF_OK;
}
