/* The GEMM of linear.comp (same operands and groups; stored through
 * gemm_store.kernel) without shared memory or barriers, for devices with
 * subgroup shuffles. Each invocation keeps SG_ROWS x SG_COLS outputs in registers: rows
 * pc.base + SG_ROWS * x + r, columns of its work group's block of
 * SG_WG * SG_COLS, its own every SG_WG. K goes in steps of the subgroup
 * size: each lane loads one A value per row, and the subgroup passes them
 * around with subgroupShuffle while every lane reads its own B values.
 * Work groups: x = row blocks, y = column blocks, z = groups g. The host
 * picks this shader only where the subgroup size divides SG_WG. */
layout(local_size_x = SG_WG, local_size_y = 1, local_size_z = 1) in;

TO b_value(uint wg, uint k, uint n)
{
#if VJP
    return TO(in1[(wg * GEMM_K + k) * GEMM_N + n]);
#else
    return TO(in1[(wg * GEMM_N + n) * GEMM_K + k]);
#endif
}

void main()
{
    const uint lane = gl_SubgroupInvocationID, size = gl_SubgroupSize, g = gl_WorkGroupID.z;
    ROW_BLOCK(pc.base / SG_ROWS + gl_WorkGroupID.x, SG_ROWS);
    if (m_end == m0) /* past the last run (row_block.kernel); no barrier follows */
        return;
    const uint wg = e * GROUPS + g;
    const uint n0 = gl_WorkGroupID.y * (SG_WG * SG_COLS) + gl_LocalInvocationID.x;
    TO acc[SG_ROWS][SG_COLS];
    for (uint r = 0; r < SG_ROWS; r++)
        for (uint c = 0; c < SG_COLS; c++)
            acc[r][c] = TO(0);
    /* Every lane runs every step: shuffles need the whole subgroup. */
    for (uint k0 = 0; k0 < GEMM_K; k0 += size) {
        TO a[SG_ROWS];
        for (uint r = 0; r < SG_ROWS; r++)
            a[r] = m0 + r < m_end && k0 + lane < GEMM_K
                       ? TO(in0[(m0 + r) * A_LD + A_COL + g * GEMM_K + k0 + lane]) : TO(0);
        const uint steps = min(size, GEMM_K - k0);
        for (uint j = 0; j < steps; j++) {
            TO b[SG_COLS];
            for (uint c = 0; c < SG_COLS; c++)
                b[c] = n0 + c * SG_WG < GEMM_N ? b_value(wg, k0 + j, n0 + c * SG_WG) : TO(0);
            for (uint r = 0; r < SG_ROWS; r++) {
                const TO ar = subgroupShuffle(a[r], j);
                for (uint c = 0; c < SG_COLS; c++)
                    acc[r][c] += ar * b[c];
            }
        }
    }
    for (uint r = 0; r < SG_ROWS; r++)
        for (uint c = 0; c < SG_COLS; c++) {
            const uint m = m0 + r, n = n0 + c * SG_WG;
            if (m < m_end && n < GEMM_N)
                GEMM_STORE(g, wg, m, n, acc[r][c]);
        }
}
