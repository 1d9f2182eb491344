/* The GEMM of linear.comp (same operands and groups; stored through
 * gemm_store.kernel) for few rows, on GPUs: a molecule's atoms of one element.
 * The tiled shader gives such a layer a handful of work groups, each
 * walking all of K through shared memory (the first layer's reverse pass,
 * 2048 deep, took 0.1 ms for methane on an H200). Here a work group
 * computes 256 / lanes outputs n for FR_ROWS rows m, its pc.lanes
 * invocations per output striding along K with a partial sum per row,
 * added at the end in a fixed order (reproducible), so that even one row
 * spreads over many work groups. The lanes are 32, or up to 256 where that
 * leaves few work groups (mlff_rows_gemm_lanes in backends/common/
 * lowering.c: methane's first-layer gradient, 128 outputs of K = 2048);
 * their partial sums are then halved to 32 in a fixed tree. Neighbouring
 * invocations read neighbouring words of W: along K for LINEAR (W[n, k]),
 * along N for LINEAR_VJP (W[k, n]). Work groups: x = row blocks, y =
 * column blocks, z = groups g. */
#define FR_GROUP 256 /* MLFF_ROWS_GEMM_GROUP of backends/common/lowering.h */
#define FR_ROWS 8    /* MLFF_ROWS_GEMM_ROWS */
layout(local_size_x = FR_GROUP, local_size_y = 1, local_size_z = 1) in;

/* [output][row][lane], a word of padding per lane row */
shared TO part[FR_ROWS * (FR_GROUP + FR_GROUP / 32)];

void main()
{
    const uint lanes = pc.lanes, outs = FR_GROUP / lanes, stride = lanes + 1;
    const uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.z;
#if VJP
    const uint o = t % outs, lane = t / outs;
#else
    const uint lane = t % lanes, o = t / lanes;
#endif
    const uint n = gl_WorkGroupID.y * outs + o;
    ROW_BLOCK(pc.base / FR_ROWS + gl_WorkGroupID.x, FR_ROWS);
    const uint rows = m_end - m0, wg = e * GROUPS + g;
    TO acc[FR_ROWS];
    [[unroll]] for (uint r = 0; r < FR_ROWS; r++)
        acc[r] = TO(0);
    if (n < GEMM_N && rows > 0)
        for (uint k = lane; k < GEMM_K; k += lanes) {
#if VJP
            const TO w = TO(in1[(wg * GEMM_K + k) * GEMM_N + n]);
#else
            const TO w = TO(in1[(wg * GEMM_N + n) * GEMM_K + k]);
#endif
            /* Rows past the block's last read its last (their sums are
             * not stored): no branch between a step's loads and the next's
             * (linear.cl). */
            [[unroll]] for (uint r = 0; r < FR_ROWS; r++)
                acc[r] += TO(in0[(m0 + min(r, rows - 1)) * A_LD + A_COL + g * GEMM_K + k]) * w;
        }
    [[unroll]] for (uint r = 0; r < FR_ROWS; r++)
        part[(o * FR_ROWS + r) * stride + lane] = acc[r];
    for (uint width = lanes / 2; width >= 32; width /= 2) {
        memoryBarrierShared();
        barrier();
        for (uint i = t; i < outs * FR_ROWS * width; i += FR_GROUP)
            part[i / width * stride + i % width] += part[i / width * stride + i % width + width];
    }
    memoryBarrierShared();
    barrier();
    if (t >= outs * FR_ROWS)
        return;
    const uint n_out = gl_WorkGroupID.y * outs + t / FR_ROWS, m = m0 + t % FR_ROWS;
    if (n_out >= GEMM_N || m >= m_end)
        return;
    TO sum = TO(0);
    for (uint j = 0; j < 32; j++)
        sum += part[t * stride + j];
    GEMM_STORE(g, wg, m, n_out, sum);
}
#undef FR_GROUP
#undef FR_ROWS
