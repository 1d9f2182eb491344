/* The GEMM of linear.comp (same operands and groups; stored through
 * gemm_store.glsl) for GPUs: a work group of 16 x 16 invocations computes
 * a tile of TS x TS outputs (TS set by the host: vk_gemm_tile),
 * each invocation RB x RB of them in registers (rows ly + 16 i, columns
 * lx + 16 j), K in steps of TK through shared memory. Each value read from
 * shared memory feeds RB multiply-adds (one output per invocation gave one,
 * and the shared memory bound the layer). An invocation reads its RB
 * values of each operand for a step of K as one TO4 word: a tile row keeps
 * rows (or columns) r, r + 16, r + 32, r + 48 in one word (TILE_STORE). The
 * outputs of neighbouring invocations stay neighbours in memory.
 * K split (lowering.h, LINEAR_VJP only): z counts groups x splits; a work
 * group walks its split's share of K and stores its raw sums in outp,
 * which is then the scratch buffer, for gemm_splits.comp.
 * Work groups: x = row tiles (rows from pc.base + TS * x), y = column
 * tiles, z = groups g x splits. */
#define TK 16
#define RB 4 /* TS / 16, the words of TO4 */
#define PITCH (TS + RB)
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

shared TO4 a_words[TK * PITCH / RB], b_words[TK * PITCH / RB]; /* [k][m], [k][n] */
#define TILE_STORE(words, k, r, v) words[(k) * (PITCH / RB) + (r) % 16][(r) / 16] = (v)

void main()
{
    const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y, t = ly * 16 + lx;
    const uint g = gl_WorkGroupID.z % GROUPS, splits = gl_NumWorkGroups.z / GROUPS, split = gl_WorkGroupID.z / GROUPS;
    const uint k_share = (GEMM_K + splits * TK - 1) / (splits * TK) * TK, k_begin = split * k_share;
    const uint k_end = min(uint(GEMM_K), k_begin + k_share);
    uint e, m0, m_end;
    if (!row_block(pc.base / TS + gl_WorkGroupID.x, TS, e, m0, m_end))
        return;
    const uint n0 = gl_WorkGroupID.y * TS, wg = e * GROUPS + g;
    TO acc[RB][RB];
    [[unroll]] for (uint i = 0; i < RB; i++)
        [[unroll]] for (uint j = 0; j < RB; j++)
            acc[i][j] = TO(0);
    /* Every invocation runs every step (no early return before a barrier). */
    for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
        /* TS x TK values of each operand, 4 per invocation, read along
         * their rows in memory: A and LINEAR's W along k, the VJP's W along n. */
        [[unroll]] for (uint q = 0; q < TS * TK / 256; q++) {
            const uint at = t + 256 * q, r = at / TK, c = at % TK;
            const uint m = m0 + r, k = k0 + c;
            TILE_STORE(a_words, c, r,
                       m < m_end && k < k_end ? TO(in0[m * (GROUPS * GEMM_K) + g * GEMM_K + k]) : TO(0));
#if VJP
            const uint kb = k0 + at / TS, nb = n0 + at % TS;
            TILE_STORE(b_words, at / TS, at % TS,
                       kb < k_end && nb < GEMM_N ? TO(in1[(wg * GEMM_K + kb) * GEMM_N + nb]) : TO(0));
#else
            const uint n = n0 + r;
            TILE_STORE(b_words, c, r, n < GEMM_N && k < k_end ? TO(in1[(wg * GEMM_N + n) * GEMM_K + k]) : TO(0));
#endif
        }
        memoryBarrierShared();
        barrier();
        [[unroll]] for (uint kk = 0; kk < TK; kk++) {
            const TO4 a = a_words[kk * (PITCH / RB) + ly], b = b_words[kk * (PITCH / RB) + lx];
            [[unroll]] for (uint i = 0; i < RB; i++)
                [[unroll]] for (uint j = 0; j < RB; j++)
                    acc[i][j] += a[i] * b[j];
        }
        memoryBarrierShared();
        barrier();
    }
    [[unroll]] for (uint i = 0; i < RB; i++)
        [[unroll]] for (uint j = 0; j < RB; j++) {
            const uint m = m0 + ly + 16 * i, n = n0 + lx + 16 * j;
            if (m >= m_end || n >= GEMM_N)
                continue;
            if (splits > 1)
                outp[(m * (GROUPS * GEMM_N) + g * GEMM_N + n) * splits + split] = acc[i][j];
            else
                gemm_store(g, wg, m, n, acc[i][j]);
        }
}
#undef TS
#undef TK
#undef RB
#undef PITCH
#undef TILE_STORE
