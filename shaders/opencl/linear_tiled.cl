/* Our GEMM of linear.cl (same operands, groups and epilogue) for more rows:
 * a work-group of 16 x 16 computes a tile of TS x TS outputs, each item
 * RB x RB of them in registers (rows ly + 16 i, columns lx + 16 j), K in
 * steps of TK through local memory, so that each value read there feeds RB
 * multiply-adds. B is read along its rows (W, or for LINEAR_VJP the
 * transposed copy cl_gemm.c keeps), as A.
 * Dimensions: 16 x column tiles, 16 x row tiles, groups. */
#define TS 64
#define TK 16
#define RB 4
kernel __attribute__((reqd_work_group_size(16, 16, 1))) void KNAME(KARGS)
{
    const int lx = get_local_id(0), ly = get_local_id(1), t = ly * 16 + lx, g = get_group_id(2);
    ROW_BLOCK(get_group_id(1), TS);
    const int n0 = get_group_id(0) * TS;
    global const T0 *a = in0 + g * GEMM_K;                                /* row m at m * GROUPS * GEMM_K */
    global const T1 *b = in1 + (long)(e * GROUPS + g) * GEMM_N * GEMM_K; /* row n at n * GEMM_K */
    local TO a_tile[TK][TS + 1], b_tile[TK][TS + 1];          /* [k][m], [k][n]; odd rows against bank conflicts */
    TO acc[RB][RB];
    for (int i = 0; i < RB; i++)
        for (int j = 0; j < RB; j++)
            acc[i][j] = 0;
    /* Every item runs every step (no early return before a barrier). */
    for (int k0 = 0; k0 < GEMM_K; k0 += TK) {
        for (int q = 0; q < TS * TK / 256; q++) {
            const int at = t + 256 * q, r = at / TK, c = at % TK, k = k0 + c, n = n0 + r;
            const long m = m0 + r;
            a_tile[c][r] = m < m_end && k < GEMM_K ? (TO)a[m * (GROUPS * GEMM_K) + k] : (TO)0;
            b_tile[c][r] = n < GEMM_N && k < GEMM_K ? (TO)b[(long)n * GEMM_K + k] : (TO)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TK; kk++) {
            TO av[RB], bv[RB];
            for (int i = 0; i < RB; i++) {
                av[i] = a_tile[kk][ly + 16 * i];
                bv[i] = b_tile[kk][lx + 16 * i];
            }
            for (int i = 0; i < RB; i++)
                for (int j = 0; j < RB; j++)
                    acc[i][j] += av[i] * bv[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < RB; i++)
        for (int j = 0; j < RB; j++) {
            const long m = m0 + ly + 16 * i;
            const int n = n0 + lx + 16 * j;
            if (m < m_end && n < GEMM_N)
                GEMM_STORE(g, m, n, acc[i][j]);
        }
}
#undef TS
#undef TK
#undef RB
