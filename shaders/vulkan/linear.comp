/* Our grouped GEMM for LINEAR and LINEAR_VJP (no CLBlast on Vulkan). Per
 * group g:
 *   C[m, n] = sum_k A[m, k] B[k, n], A = in0 rows (A_LD words apart from
 *   column A_COL: GROUPS * GEMM_K and 0 but for a CELU_MLP's layers),
 *   LINEAR:     B[k, n] = W[g*GEMM_N + n, k], plus bias in2[g*GEMM_N + n]
 *   LINEAR_VJP: B[k, n] = W[g*GEMM_K + k, n]
 * then the bias and epilogue of gemm_store.kernel.
 * This one ("direct") reads straight from the buffers, one output per
 * invocation, neighbouring invocations on neighbouring rows: CPU
 * implementations such as lavapipe run them as SIMD lanes (which then all
 * read the same weight) and run barriers in loops slowly. GPUs take
 * linear_tiled.kernel, linear_rows.kernel or linear_subgroup.comp. Work
 * groups: x = row tiles (rows from pc.base + TS * x; pc.n_items = rows of
 * A, so that a long batch can take several dispatches), y = column tiles,
 * z = groups g. */
#define TS 16
layout(local_size_x = TS, local_size_y = TS, local_size_z = 1) in;

void main()
{
    const uint g = gl_WorkGroupID.z;
    ROW_BLOCK(pc.base / TS + gl_WorkGroupID.x, TS);
    const uint m = m0 + gl_LocalInvocationID.x, wg = e * GROUPS + g;
    const uint n = gl_WorkGroupID.y * TS + gl_LocalInvocationID.y;
    if (m >= m_end || n >= GEMM_N)
        return;
    TO sum = TO(0);
    for (uint k = 0; k < GEMM_K; k++)
#if VJP
        sum += TO(in0[m * A_LD + A_COL + g * GEMM_K + k]) * TO(in1[(wg * GEMM_K + k) * GEMM_N + n]);
#else
        sum += TO(in0[m * A_LD + A_COL + g * GEMM_K + k]) * TO(in1[(wg * GEMM_N + n) * GEMM_K + k]);
#endif
    GEMM_STORE(g, wg, m, n, sum);
}
#undef TS
