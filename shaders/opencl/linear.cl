/* Our own grouped GEMM for LINEAR and LINEAR_VJP (the other choice is
 * CLBlast; see backends/opencl/cl_blas.c). Per group g (third dimension):
 *   C[m, n] = sum_k A[m, k] B[k, n], A = in0 rows (row stride GROUPS * GEMM_K),
 *   LINEAR:     B[k, n] = W[g*GEMM_N + n, k], plus bias in2[g*GEMM_N + n]
 *   LINEAR_VJP: B[k, n] = W[g*GEMM_K + k, n]
 * then the epilogue (EPILOGUE 1: celu; 2: times celu'(y), y = epi).
 * Tiles of TS x TS outputs, one per work-item, K in steps of TS through
 * local memory; n_items = rows of A. */
#define TS 16
kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void KNAME(KARGS)
{
    const int ln = get_local_id(0), lm = get_local_id(1), g = get_global_id(2);
    const int n0 = get_group_id(0) * TS;
    const long m0 = (long)get_group_id(1) * TS;
    const int n = n0 + ln;
    const long m = m0 + lm;
    local TO a_tile[TS][TS + 1], b_tile[TS][TS + 1]; /* [m][k], [k][n] */
    TO sum = 0;
    for (int k0 = 0; k0 < GEMM_K; k0 += TS) {
        a_tile[lm][ln] = m < n_items && k0 + ln < GEMM_K
                             ? in0[m * (GROUPS * GEMM_K) + g * GEMM_K + k0 + ln] : 0;
#if VJP
        b_tile[lm][ln] = k0 + lm < GEMM_K && n < GEMM_N ? in1[(long)(g * GEMM_K + k0 + lm) * GEMM_N + n] : 0;
#else
        /* Read W along its rows (k) so neighbouring work-items read neighbouring words. */
        b_tile[ln][lm] = n0 + lm < GEMM_N && k0 + ln < GEMM_K
                             ? in1[(long)(g * GEMM_N + n0 + lm) * GEMM_K + k0 + ln] : 0;
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++)
            sum += a_tile[lm][k] * b_tile[k][ln];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (m >= n_items || n >= GEMM_N)
        return;
    const long at = m * (GROUPS * GEMM_N) + g * GEMM_N + n;
#if !VJP
    sum += in2[g * GEMM_N + n];
#endif
#if EPILOGUE == 1
    sum = sum > 0 ? sum : (TO)ALPHA * expm1(sum / (TO)ALPHA);
#elif EPILOGUE == 2
    sum = epi[at] > 0 ? sum : sum * (epi[at] / (TO)ALPHA + 1);
#endif
    out[at] = sum;
}
#undef TS
