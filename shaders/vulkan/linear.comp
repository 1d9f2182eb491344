/* Our grouped GEMM for LINEAR and LINEAR_VJP (no CLBlast on Vulkan). Per
 * group g:
 *   C[m, n] = sum_k A[m, k] B[k, n], A = in0 rows (row stride GROUPS * GEMM_K),
 *   LINEAR:     B[k, n] = W[g*GEMM_N + n, k], plus bias in2[g*GEMM_N + n]
 *   LINEAR_VJP: B[k, n] = W[g*GEMM_K + k, n]
 * then the bias and epilogue of gemm_store.glsl.
 * One output per invocation. GEMM_TILED 1 (GPUs): K in steps of TS through
 * shared memory; GEMM_TILED 0 (CPU implementations such as lavapipe, which
 * run barriers in loops slowly): straight from the buffers. (With subgroup
 * shuffles: linear_subgroup.comp.) Work groups: x = row tiles (rows from pc.base + TS * x;
 * pc.n_items = rows of A, so that a long batch can take several
 * dispatches), y = column tiles, z = groups g. */
#define TS 16
layout(local_size_x = TS, local_size_y = TS, local_size_z = 1) in;

#if GEMM_TILED
shared TO a_tile[TS][TS + 1], b_tile[TS][TS + 1]; /* [m][k], [k][n] */
#endif

void main()
{
    /* Neighbouring invocations (x) take neighbouring columns, so that the
     * output and the VJP's W are read and written along their rows. */
    const uint ln = gl_LocalInvocationID.x, lm = gl_LocalInvocationID.y, g = gl_WorkGroupID.z;
    const uint n0 = gl_WorkGroupID.y * TS;
    uint n = n0 + ln;
    uint m = pc.base + gl_WorkGroupID.x * TS + lm;
    TO sum = TO(0);
#if !GEMM_TILED
    /* Here neighbouring invocations take neighbouring rows: a CPU runs them
     * as SIMD lanes, which then all read the same weight. */
    m = pc.base + gl_WorkGroupID.x * TS + ln;
    n = n0 + lm;
    if (m >= pc.n_items || n >= GEMM_N)
        return;
    for (uint k = 0; k < GEMM_K; k++)
#if VJP
        sum += TO(in0[m * (GROUPS * GEMM_K) + g * GEMM_K + k]) * TO(in1[(g * GEMM_K + k) * GEMM_N + n]);
#else
        sum += TO(in0[m * (GROUPS * GEMM_K) + g * GEMM_K + k]) * TO(in1[(g * GEMM_N + n) * GEMM_K + k]);
#endif
#else
    /* Every invocation runs every step (no early return before a barrier). */
    for (uint k0 = 0; k0 < GEMM_K; k0 += TS) {
        a_tile[lm][ln] = m < pc.n_items && k0 + ln < GEMM_K
                             ? TO(in0[m * (GROUPS * GEMM_K) + g * GEMM_K + k0 + ln]) : TO(0);
#if VJP
        b_tile[lm][ln] = k0 + lm < GEMM_K && n < GEMM_N ? TO(in1[(g * GEMM_K + k0 + lm) * GEMM_N + n]) : TO(0);
#else
        /* Read W along its rows (k) so neighbouring invocations read neighbouring words. */
        b_tile[ln][lm] = n0 + lm < GEMM_N && k0 + ln < GEMM_K
                             ? TO(in1[(g * GEMM_N + n0 + lm) * GEMM_K + k0 + ln]) : TO(0);
#endif
        memoryBarrierShared();
        barrier();
        for (uint k = 0; k < TS; k++)
            sum += a_tile[lm][k] * b_tile[k][ln];
        memoryBarrierShared();
        barrier();
    }
    if (m >= pc.n_items || n >= GEMM_N)
        return;
#endif
    gemm_store(g, m, n, sum);
}
#undef TS
