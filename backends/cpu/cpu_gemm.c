#include "cpu_gemm.h"

#include "cpu_isa.h"
#include "cpu_math.h"

#include <stdlib.h>
#include <string.h>

#define MR 6 /* rows of A per micro-tile: 2 x 6 accumulators fit any of the ISAs' registers */

typedef float vfloat __attribute__((vector_size(64), aligned(64))); /* 16 floats */

int cpu_pack_b(cpu_packed_b *p, const float *w, int64_t rows, int64_t cols, int64_t ldw,
               int transposed)
{
    p->k = transposed ? cols : rows;
    p->n = transposed ? rows : cols;
    p->n_panels = (p->n + CPU_GEMM_NR - 1) / CPU_GEMM_NR;
    size_t bytes = (size_t)(p->n_panels * p->k * CPU_GEMM_NR) * sizeof(float);
    p->data = aligned_alloc(64, bytes ? bytes : 64);
    if (!p->data)
        return 0;
    for (int64_t panel = 0; panel < p->n_panels; panel++) {
        float *dst = p->data + panel * p->k * CPU_GEMM_NR;
        const int64_t col0 = panel * CPU_GEMM_NR;
        const int64_t width = p->n - col0 < CPU_GEMM_NR ? p->n - col0 : CPU_GEMM_NR;
        /* Column j of the panel, row by row: w[kk, col0 + j], or w[col0 + j, kk]
         * transposed; each read walks its own row of w forward. */
        const float *column[CPU_GEMM_NR];
        const int64_t step = transposed ? 1 : ldw;
        for (int64_t j = 0; j < width; j++)
            column[j] = transposed ? w + (col0 + j) * ldw : w + col0 + j;
        for (int64_t kk = 0; kk < p->k; kk++)
            for (int64_t j = 0; j < CPU_GEMM_NR; j++)
                dst[kk * CPU_GEMM_NR + j] = j < width ? column[j][kk * step] : 0.0f;
    }
    return 1;
}

void cpu_packed_b_free(cpu_packed_b *p)
{
    free(p->data);
    memset(p, 0, sizeof *p);
}

cpu_k_ranges cpu_nonzero_columns(int64_t m, const float *a, int64_t lda, int64_t k, int64_t *bounds)
{
    cpu_k_ranges ranges = {bounds, 0};
    for (int64_t k0 = 0; k0 < k; k0 += CPU_GEMM_K_BLOCK) {
        const int64_t k1 = k0 + CPU_GEMM_K_BLOCK < k ? k0 + CPU_GEMM_K_BLOCK : k;
        int nonzero = 0;
        for (int64_t r = 0; r < m && !nonzero; r++)
            for (int64_t kk = k0; kk < k1; kk++)
                nonzero |= a[r * lda + kk] != 0.0f;
        if (!nonzero)
            continue;
        if (ranges.n > 0 && bounds[2 * ranges.n - 1] == k0)
            bounds[2 * ranges.n - 1] = k1;
        else {
            bounds[2 * ranges.n] = k0;
            bounds[2 * ranges.n + 1] = k1;
            ranges.n++;
        }
    }
    return ranges;
}

/* One micro-tile: mr (<= MR, a constant after inlining) rows by NR columns. */
static inline __attribute__((always_inline)) void tile(int mr, const cpu_k_ranges *ranges, const float *a,
                                                       int64_t lda, const float *bp, const cpu_gemm_epilogue *e,
                                                       int64_t col0, float *c, int64_t ldc, int64_t cols)
{
    /* Fully unrolled row loops let the compiler keep acc in registers. */
    vfloat acc[MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        acc[r][0] = acc[r][1] = (vfloat){0};
    for (int64_t q = 0; q < ranges->n; q++)
        for (int64_t kk = ranges->bounds[2 * q]; kk < ranges->bounds[2 * q + 1]; kk++) {
            const vfloat b0 = *(const vfloat *)(bp + kk * CPU_GEMM_NR);
            const vfloat b1 = *(const vfloat *)(bp + kk * CPU_GEMM_NR + 16);
#pragma GCC unroll 8
            for (int r = 0; r < mr; r++) {
                const float s = a[r * lda + kk];
                acc[r][0] += s * b0;
                acc[r][1] += s * b1;
            }
        }
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
        float out[CPU_GEMM_NR] __attribute__((aligned(64)));
        *(vfloat *)out = acc[r][0];
        *(vfloat *)(out + 16) = acc[r][1];
        const float inv_alpha = 1.0f / e->alpha;
        float *cr = c + r * ldc + col0;
        for (int64_t j = 0; j < cols; j++) {
            float v = out[j] + (e->bias ? e->bias[col0 + j] : 0.0f);
            if (e->celu)
                v = cpu_celu(v, e->alpha, inv_alpha);
            if (e->celu_y)
                v *= cpu_celu_grad(e->celu_y[r * ldc + col0 + j], inv_alpha);
            cr[j] = v;
        }
    }
}

/* Compiled per ISA (cpu_isa.h): with GCC, the epilogue loop (CELU, its
 * derivative) vectorises only with the full vectoriser. */
CPU_BODY void cpu_sgemm_panels_body(int64_t m, const float *a, int64_t lda, const cpu_packed_b *b, int64_t p0,
                                    int64_t p1, const cpu_k_ranges *ranges, const cpu_gemm_epilogue *epilogue,
                                    float *c, int64_t ldc)
{
    const int64_t whole[2] = {0, b->k};
    const cpu_k_ranges all = {whole, 1};
    if (!ranges)
        ranges = &all;
    for (int64_t panel = p0; panel < p1; panel++) {
        const float *bp = b->data + panel * b->k * CPU_GEMM_NR;
        const int64_t col0 = panel * CPU_GEMM_NR;
        const int64_t cols = b->n - col0 < CPU_GEMM_NR ? b->n - col0 : CPU_GEMM_NR;
        /* The panel stays in cache while every row block of A streams past it. */
        for (int64_t r = 0; r < m; r += MR) {
            const float *ar = a + r * lda;
            float *cr = c + r * ldc;
            cpu_gemm_epilogue e = *epilogue;
            if (e.celu_y)
                e.celu_y += r * ldc;
            switch (m - r < MR ? m - r : MR) {
            case 1: tile(1, ranges, ar, lda, bp, &e, col0, cr, ldc, cols); break;
            case 2: tile(2, ranges, ar, lda, bp, &e, col0, cr, ldc, cols); break;
            case 3: tile(3, ranges, ar, lda, bp, &e, col0, cr, ldc, cols); break;
            case 4: tile(4, ranges, ar, lda, bp, &e, col0, cr, ldc, cols); break;
            case 5: tile(5, ranges, ar, lda, bp, &e, col0, cr, ldc, cols); break;
            default: tile(MR, ranges, ar, lda, bp, &e, col0, cr, ldc, cols); break;
            }
        }
    }
}
CPU_MULTIVERSION(, cpu_sgemm_panels,
                 (int64_t m, const float *a, int64_t lda, const cpu_packed_b *b, int64_t p0, int64_t p1,
                  const cpu_k_ranges *ranges, const cpu_gemm_epilogue *epilogue, float *c, int64_t ldc),
                 (m, a, lda, b, p0, p1, ranges, epilogue, c, ldc))
