/* The GEMM of linear.comp (same operands and groups; stored through
 * gemm_store.kernel) for GPUs: a work group of 16 x 16 invocations computes
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
    ROW_BLOCK(pc.base / TS + gl_WorkGroupID.x, TS);
    const uint n0 = gl_WorkGroupID.y * TS, wg = e * GROUPS + g;
    TO acc[RB][RB];
    [[unroll]] for (uint i = 0; i < RB; i++)
        [[unroll]] for (uint j = 0; j < RB; j++)
            acc[i][j] = TO(0);
    /* A step's TS x TK values of each operand, 4 per invocation (entry at =
     * t + 256 q), read along their rows in memory (A and LINEAR's W along
     * k, the VJP's W along n) a step ahead, while the step before is
     * summed. Every invocation runs every step (no early return before a
     * barrier). */
    TO a_next[TS * TK / 256], b_next[TS * TK / 256];
#if VJP
#define READ_B(at, k0) (k0 + at / TS < k_end && n0 + at % TS < GEMM_N ? \
                            TO(in1[(wg * GEMM_K + k0 + at / TS) * GEMM_N + n0 + at % TS]) : TO(0))
#define STORE_B(at, v) TILE_STORE(b_words, at / TS, at % TS, v)
#else
#define READ_B(at, k0) (n0 + at / TK < GEMM_N && k0 + at % TK < k_end ? \
                            TO(in1[(wg * GEMM_N + n0 + at / TK) * GEMM_K + k0 + at % TK]) : TO(0))
#define STORE_B(at, v) TILE_STORE(b_words, at % TK, at / TK, v)
#endif
#define READ_STEP(k0)                                                                                   \
    [[unroll]] for (uint q = 0; q < TS * TK / 256; q++) {                                               \
        const uint at_ = t + 256 * q, m_ = m0 + at_ / TK, k_ = (k0) + at_ % TK;                          \
        a_next[q] = m_ < m_end && k_ < k_end ? TO(in0[m_ * A_LD + A_COL + g * GEMM_K + k_]) : TO(0);     \
        b_next[q] = READ_B(at_, (k0));                                                                  \
    }
    READ_STEP(k_begin);
    for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
        [[unroll]] for (uint q = 0; q < TS * TK / 256; q++) {
            const uint at = t + 256 * q;
            TILE_STORE(a_words, at % TK, at / TK, a_next[q]);
            STORE_B(at, b_next[q]);
        }
        memoryBarrierShared();
        barrier();
        if (k0 + TK < k_end)
            READ_STEP(k0 + TK);
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
                GEMM_STORE(g, wg, m, n, acc[i][j]);
        }
}
#undef TS
#undef TK
#undef RB
#undef PITCH
#undef TILE_STORE
#undef READ_B
#undef STORE_B
#undef READ_STEP
