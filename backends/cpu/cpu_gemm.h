/*
 * Single-precision GEMM for the dense layers: C = A B (+ bias), where B is a
 * weight matrix packed once into column panels. The kernel is written with
 * GCC vector types and compiled for AVX-512, AVX2 and a portable baseline;
 * the best is picked at load time (target_clones).
 */
#ifndef MLFF_BACKENDS_CPU_GEMM_H
#define MLFF_BACKENDS_CPU_GEMM_H

#include <stdint.h>

#define CPU_GEMM_NR 32 /* columns per panel */

/* B [k, n] as ceil(n / NR) panels, each k rows of NR floats (zero padded). */
typedef struct cpu_packed_b {
    float *data;
    int64_t k, n, n_panels;
} cpu_packed_b;

/* From W [rows, cols] (row-major): transposed ? B = W^T : B = W. */
int cpu_pack_b(cpu_packed_b *p, const float *w, int64_t rows, int64_t cols, int64_t ldw,
               int transposed);
void cpu_packed_b_free(cpu_packed_b *p);

/* C[0..m)[col0 + (panel range)] for panels [p0, p1) of B: C = A B + bias
 * (bias may be NULL). A is m x k with row stride lda, C has row stride ldc. */
void cpu_sgemm_panels(int64_t m, const float *a, int64_t lda, const cpu_packed_b *b, int64_t p0,
                      int64_t p1, const float *bias, float *c, int64_t ldc);

#endif
