/* CELU and its derivative in float32, vectorised (see cpu_math.h). */
#include <stdint.h>

#include "cpu_internal.h"
#include "cpu_isa.h"
#include "cpu_math.h"

/* Each compiled for AVX-512, AVX2 and the baseline (cpu_isa.h). */
CPU_BODY void celu_f32_body(const float *restrict x, float *restrict y, int64_t n, float alpha)
{
    const float inv = 1.0f / alpha;
    CPU_IVDEP
    for (int64_t k = 0; k < n; k++)
        y[k] = cpu_celu(x[k], alpha, inv);
}
CPU_MULTIVERSION(static, celu_f32, (const float *restrict x, float *restrict y, int64_t n, float alpha),
                 (x, y, n, alpha))

CPU_BODY void celu_vjp_f32_body(const float *restrict gy, const float *restrict y, float *restrict gx, int64_t n,
                                float alpha)
{
    const float inv = 1.0f / alpha;
    CPU_IVDEP
    for (int64_t k = 0; k < n; k++)
        gx[k] = gy[k] * cpu_celu_grad(y[k], inv);
}
CPU_MULTIVERSION(static, celu_vjp_f32,
                 (const float *restrict gy, const float *restrict y, float *restrict gx, int64_t n, float alpha),
                 (gy, y, gx, n, alpha))

CPU_BODY void cpu_celu_vjp_accumulate_f32_body(const float *restrict gy, const float *restrict y,
                                               float *restrict gx, int64_t n, float alpha)
{
    const float inv = 1.0f / alpha;
    CPU_IVDEP
    for (int64_t k = 0; k < n; k++)
        gx[k] += gy[k] * cpu_celu_grad(y[k], inv);
}
CPU_MULTIVERSION(, cpu_celu_vjp_accumulate_f32,
                 (const float *restrict gy, const float *restrict y, float *restrict gx, int64_t n, float alpha),
                 (gy, y, gx, n, alpha))

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
