/*
 * Single-precision GEMM for the dense layers: C = A B (+ bias), where B is a
 * weight matrix packed once into column panels. The kernel is written with
 * GCC vector types and compiled for AVX-512, AVX2 and a portable baseline;
 * the best is picked at run time (cpu_isa.h).
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

/* What happens to each result before it is stored. */
typedef struct cpu_gemm_epilogue {
    const float *bias;     /* added per column, or NULL */
    int celu;              /* apply CELU */
    const float *celu_y;   /* multiply by CELU'(from this output, laid out like C), or NULL */
    float alpha;
} cpu_gemm_epilogue;

/* The part of k a product needs: n ranges [bounds[2i], bounds[2i+1]). */
typedef struct cpu_k_ranges {
    const int64_t *bounds;
    int64_t n;
} cpu_k_ranges;

#define CPU_GEMM_K_BLOCK 8

/* The columns of A (m x k, row stride lda) that are non-zero in some row,
 * as ranges of whole blocks of CPU_GEMM_K_BLOCK columns; bounds needs room
 * for k / CPU_GEMM_K_BLOCK + 1 ranges. Features such as ANI's are zero in
 * whole blocks for the elements a batch lacks: skipping them changes no
 * bit of the result (the products are exact zeros) and saves their FLOPs. */
cpu_k_ranges cpu_nonzero_columns(int64_t m, const float *a, int64_t lda, int64_t k, int64_t *bounds);

/* Columns of panels [p0, p1) of C = epilogue(A B) over the k ranges
 * (NULL: all of k). A is m x k with row stride lda; C and the epilogue's
 * celu_y have row stride ldc. */
void cpu_sgemm_panels(int64_t m, const float *a, int64_t lda, const cpu_packed_b *b, int64_t p0,
                      int64_t p1, const cpu_k_ranges *ranges, const cpu_gemm_epilogue *epilogue, float *c,
                      int64_t ldc);

#endif
