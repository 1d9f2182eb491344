/* Our own grouped GEMM for LINEAR and LINEAR_VJP (the other choice is
 * CLBlast; see backends/opencl/cl_blas.c). Per group g (third dimension):
 *   out[m, g*GEMM_N + n] = sum_k A[m, g*GEMM_K + k] B[g*GEMM_N + n, k],
 *   A = in0 (row stride GROUPS * GEMM_K),
 *   LINEAR:     B = W, plus bias in2[g*GEMM_N + n]
 *   LINEAR_VJP: B = W transposed per group (the copy cl_launch.c keeps),
 * then the epilogue (EPILOGUE 1: celu; 2: times celu'(y), y = epi), in
 * gemm_store.cl.
 * Made for few rows (a molecule's atoms of one element): a work-group
 * computes OUTS outputs n for ROWS rows m, the LANES work-items of an output
 * striding along a row of B (neighbours read neighbouring words) with a
 * partial sum per row, which are then added in a fixed order
 * (reproducible). So even one row spreads over GEMM_N / OUTS groups.
 * Dimensions: (LANES * OUTS) x output blocks, row blocks, groups. */
#define LANES 32
#define OUTS 8
#define ROWS 8
kernel __attribute__((reqd_work_group_size(LANES * OUTS, 1, 1))) void KNAME(KARGS)
{
    const int t = get_local_id(0), lane = t % LANES, o = t / LANES, g = get_group_id(2);
    const int n = get_group_id(0) * OUTS + o;
    const long m0 = (long)get_group_id(1) * ROWS;
    const int rows = (int)min((long)ROWS, n_items - m0);
    TO acc[ROWS];
    for (int r = 0; r < ROWS; r++)
        acc[r] = 0;
    if (n < GEMM_N) {
        global const T1 *b = in1 + (long)(g * GEMM_N + n) * GEMM_K;
        global const T0 *a = in0 + m0 * (GROUPS * GEMM_K) + g * GEMM_K;
        for (int k = lane; k < GEMM_K; k += LANES) {
            const TO w = b[k];
            for (int r = 0; r < ROWS; r++)
                if (r < rows)
                    acc[r] += a[(long)r * (GROUPS * GEMM_K) + k] * w;
        }
    }
    /* [output][row][lane], a word of padding per lane row against bank conflicts */
    local TO part[OUTS * ROWS * (LANES + 1)];
    for (int r = 0; r < ROWS; r++)
        part[(o * ROWS + r) * (LANES + 1) + lane] = acc[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t >= OUTS * ROWS)
        return;
    const int n_out = get_group_id(0) * OUTS + t / ROWS;
    const long m = m0 + t % ROWS;
    if (n_out >= GEMM_N || m >= n_items)
        return;
    TO sum = 0;
    for (int j = 0; j < LANES; j++)
        sum += part[t * (LANES + 1) + j];
    GEMM_STORE(g, m, n_out, sum);
}
#undef LANES
#undef OUTS
#undef ROWS
