/* Our GEMM of linear.cl (same operands, groups and epilogue) for more rows:
 * a work-group of 16 x 16 computes a tile of TS x TS outputs, each item
 * RB x RB of them in registers (rows ly + 16 i, columns lx + 16 j), K in
 * steps of TK through local memory, so that each value read there feeds RB
 * multiply-adds. An item reads its RB values of A and of B for a step of K
 * as one word of TO4 each: a tile row keeps rows (or columns) r, r + 16,
 * r + 32, r + 48 side by side (SLOT), its rows TS + RB words apart
 * (aligned). The outputs of neighbouring items stay neighbours in memory.
 * B is read along its rows (W, or for LINEAR_VJP the transposed copy
 * cl_gemm.c keeps), as A.
 * K split (lowering.h, LINEAR_VJP only): the third dimension counts groups
 * x splits; a work-group walks its split's share of K and stores its raw
 * sums in out, which is then the scratch buffer, for gemm_splits.cl.
 * Dimensions: 16 x column tiles, 16 x row tiles, groups x splits. */
#define TS 64
#define TK 16
#define RB 4 /* the words of TO4 */
#define PITCH (TS + RB)
#define SLOT(r) ((r) % 16 * RB + (r) / 16)
kernel __attribute__((reqd_work_group_size(16, 16, 1))) void KNAME(KARGS)
{
    KTENSORS
    const int lx = get_local_id(0), ly = get_local_id(1), t = ly * 16 + lx, g = get_group_id(2) % GROUPS;
    const int splits = get_num_groups(2) / GROUPS, split = get_group_id(2) / GROUPS;
    const int k_share = (GEMM_K + splits * TK - 1) / (splits * TK) * TK, k_begin = split * k_share;
    const int k_end = min(GEMM_K, k_begin + k_share);
    ROW_BLOCK(get_group_id(1), TS);
    const int n0 = get_group_id(0) * TS;
    global const T0 *a = in0 + g * GEMM_K;                                /* row m at m * GROUPS * GEMM_K */
    global const T1 *b = in1 + (long)(e * GROUPS + g) * GEMM_N * GEMM_K; /* row n at n * GEMM_K */
    local TO4 a_words[TK * PITCH / RB], b_words[TK * PITCH / RB];
    local TO *a_tile = (local TO *)a_words, *b_tile = (local TO *)b_words; /* [k][m], [k][n] */
    TO acc[RB][RB];
    for (int i = 0; i < RB; i++)
        for (int j = 0; j < RB; j++)
            acc[i][j] = 0;
    /* Every item runs every step (no early return before a barrier). */
    for (int k0 = k_begin; k0 < k_end; k0 += TK) {
        for (int q = 0; q < TS * TK / 256; q++) {
            const int at = t + 256 * q, r = at / TK, c = at % TK, k = k0 + c, n = n0 + r;
            const long m = m0 + r;
            a_tile[c * PITCH + SLOT(r)] = m < m_end && k < k_end ? (TO)a[m * (GROUPS * GEMM_K) + k] : (TO)0;
            b_tile[c * PITCH + SLOT(r)] = n < GEMM_N && k < k_end ? (TO)b[(long)n * GEMM_K + k] : (TO)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TK; kk++) {
            const TO4 a4 = a_words[kk * (PITCH / RB) + ly], b4 = b_words[kk * (PITCH / RB) + lx];
            const TO av[RB] = {a4.x, a4.y, a4.z, a4.w}, bv[RB] = {b4.x, b4.y, b4.z, b4.w};
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
            if (m >= m_end || n >= GEMM_N)
                continue;
            if (splits > 1)
                outp[(m * (GROUPS * GEMM_N) + g * GEMM_N + n) * splits + split] = acc[i][j];
            else
                GEMM_STORE(g, e * GROUPS + g, m, n, acc[i][j]);
        }
}
#undef TS
#undef TK
#undef RB
#undef PITCH
#undef SLOT
