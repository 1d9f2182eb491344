/* Our own grouped GEMM for LINEAR and LINEAR_VJP (the other choice is
 * CLBlast; see backends/opencl/cl_blas.c). Per group g (third dimension):
 *   out[m, g*GEMM_N + n] = sum_k A[m, g*GEMM_K + k] B[g*GEMM_N + n, k],
 *   A = in0 (row stride GROUPS * GEMM_K),
 *   LINEAR:     B = W, plus bias in2[g*GEMM_N + n]
 *   LINEAR_VJP: B = W transposed per group (the copy cl_launch.c keeps),
 * then the epilogue (EPILOGUE 1: celu; 2: times celu'(y), y = epi), in
 * gemm_store.kernel.
 * Made for few rows (a molecule's atoms of one element): a work-group
 * computes OUTS outputs n for ROWS rows m (of one run: ROW_BLOCK), the
 * LANES work-items of an output striding along a row of B (neighbours read
 * neighbouring words) with a partial sum per row, which are then added in
 * a fixed order (reproducible). So even one row spreads over GEMM_N / OUTS groups.
 * LANES is 32, or up to 256 where the outputs and rows make few work-groups
 * (the host's choice, mlff_rows_gemm_lanes in backends/common/lowering.c:
 * methane's first-layer gradient, 128 outputs of K = 2048, had 16
 * work-groups of 32 lanes); the partial sums are then halved to 32 in a
 * fixed tree.
 * Dimensions: LANES x output blocks, OUTS x row blocks, groups. */
#define GROUP 256 /* LANES * OUTS: MLFF_ROWS_GEMM_GROUP of backends/common/lowering.h */
#define ROWS 8    /* MLFF_ROWS_GEMM_ROWS */
kernel void KNAME(KARGS)
{
    KTENSORS
    const int lanes = get_local_size(0), outs = get_local_size(1);
    const int lane = get_local_id(0), o = get_local_id(1), t = o * lanes + lane, g = get_group_id(2);
    const int n = get_group_id(0) * outs + o;
    ROW_BLOCK(get_group_id(1), ROWS);
    const int rows = (int)(m_end - m0);
    TO acc[ROWS];
    for (int r = 0; r < ROWS; r++)
        acc[r] = 0;
    if (n < GEMM_N && rows > 0) {
        global const T1 *b = in1 + (long)((e * GROUPS + g) * GEMM_N + n) * GEMM_K;
        global const T0 *a = in0 + m0 * (GROUPS * GEMM_K) + g * GEMM_K;
        /* Rows past the block's last read its last (their sums are not
         * stored): no branch in the loop, whose unrolled steps then issue
         * their loads together instead of waiting out each one's latency
         * in turn (few work-groups an SM hide none of it). */
#pragma unroll 4
        for (int k = lane; k < GEMM_K; k += lanes) {
            const TO w = b[k];
            for (int r = 0; r < ROWS; r++)
                acc[r] += a[(long)min(r, rows - 1) * (GROUPS * GEMM_K) + k] * w;
        }
    }
    /* [output][row][lane], a word of padding per lane row against bank conflicts */
    local TO part[ROWS * (GROUP + GROUP / 32)];
    const int stride = lanes + 1;
    for (int r = 0; r < ROWS; r++)
        part[(o * ROWS + r) * stride + lane] = acc[r];
    for (int width = lanes / 2; width >= 32; width /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = t; i < outs * ROWS * width; i += GROUP)
            part[i / width * stride + i % width] += part[i / width * stride + i % width + width];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t >= outs * ROWS)
        return;
    const int n_out = get_group_id(0) * outs + t / ROWS;
    const long m = m0 + t % ROWS;
    if (n_out >= GEMM_N || m >= m_end)
        return;
    TO sum = 0;
    for (int j = 0; j < 32; j++)
        sum += part[t * stride + j];
    GEMM_STORE(g, e * GROUPS + g, m, n_out, sum);
}
#undef GROUP
#undef ROWS
