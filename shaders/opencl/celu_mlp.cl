/* CELU_MLP (core/ops.h): a work-group of MLP_THREADS items takes MLP_ROWS
 * rows (from group id 0) of one group (group id 1) through every layer; the
 * activations stay in local memory (rows MLP_STRIDE apart, a multiple of 4),
 * each layer's output also goes to its block of `out`. Each output is summed
 * by MLP_LANES items that read its weight row four words at a time side by
 * side; their partial sums are then added in a fixed order: reproducible.
 * With few rows (a small molecule) the work-groups are few and each is bound
 * by the latency of its own loads: an item issues CHUNK 4-word loads before
 * it uses any (no branch between them), and absent rows are skipped. */
#define OUTS_PER_PASS (MLP_THREADS / MLP_LANES)
#define STEP (4 * MLP_LANES)
#define CHUNK 16
#define LOAD4(p, width) ((width) % 4 == 0 ? *(global const TO4 *)(p) : vload4(0, p))

/* One layer: act[src] (IN_W wide) -> act[dst] (OUT_W wide). */
#define MLP_LAYER(W, B, IN_W, OUT_W, BLOCK, HIDDEN)                                                   \
    for (int o0 = 0; o0 < OUT_W; o0 += OUTS_PER_PASS) {                                               \
        const int o = o0 + t / MLP_LANES, lane = t % MLP_LANES;                                       \
        TO acc[MLP_ROWS];                                                                             \
        for (int r = 0; r < MLP_ROWS; r++)                                                            \
            acc[r] = 0;                                                                               \
        if (o < OUT_W) {                                                                              \
            global const TO *w = W + (long)(g * OUT_W + o) * IN_W;                                    \
            for (int j0 = 0; j0 < IN_W / STEP; j0 += CHUNK) {                                         \
                TO4 wv[CHUNK];                                                                        \
                _Pragma("unroll") for (int j = 0; j < CHUNK; j++)                                     \
                    wv[j] = j0 + j < IN_W / STEP ? LOAD4(w + 4 * lane + (j0 + j) * STEP, IN_W) : (TO4)0; \
                for (int r = 0; r < MLP_ROWS; r++)                                                    \
                    if (r < rows)                                                                     \
                        _Pragma("unroll") for (int j = 0; j < CHUNK; j++)                             \
                            if (j0 + j < IN_W / STEP) {                                               \
                                const int c = 4 * lane + (j0 + j) * STEP;                             \
                                const TO4 av = *(local const TO4 *)(act + src + r * MLP_STRIDE + c);  \
                                acc[r] += wv[j].x * av.x + wv[j].y * av.y + wv[j].z * av.z + wv[j].w * av.w; \
                            }                                                                         \
            }                                                                                         \
            for (int c = IN_W / STEP * STEP + lane; c < IN_W; c += MLP_LANES)                         \
                for (int r = 0; r < MLP_ROWS; r++)                                                    \
                    if (r < rows)                                                                     \
                        acc[r] += w[c] * act[src + r * MLP_STRIDE + c];                               \
        }                                                                                             \
        for (int r = 0; r < MLP_ROWS; r++)                                                            \
            part[r * MLP_THREADS + t] = acc[r];                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        for (int k = t; k < OUTS_PER_PASS * MLP_ROWS; k += MLP_THREADS) {                             \
            const int r = k / OUTS_PER_PASS, j = k % OUTS_PER_PASS, on = o0 + j;                      \
            if (on < OUT_W) {                                                                         \
                TO v = B[g * OUT_W + on];                                                             \
                for (int l = 0; l < MLP_LANES; l++)                                                   \
                    v += part[r * MLP_THREADS + j * MLP_LANES + l];                                   \
                if (HIDDEN)                                                                           \
                    v = v > 0 ? v : (TO)F0 * expm1(v / (TO)F0);                                       \
                act[dst + r * MLP_STRIDE + on] = v;                                                   \
                if (r < rows)                                                                         \
                    out[(r0 + r) * MLP_COLS + BLOCK + g * OUT_W + on] = v;                            \
            }                                                                                         \
        }                                                                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
    }                                                                                                 \
    {                                                                                                 \
        const int swap = src;                                                                         \
        src = dst;                                                                                    \
        dst = swap;                                                                                   \
    }

kernel __attribute__((reqd_work_group_size(MLP_THREADS, 1, 1))) void KNAME(KARGS)
{
    local TO4 act4[2 * MLP_ROWS * MLP_STRIDE / 4]; /* TO4: aligned for the 4-word reads */
    local TO part[MLP_ROWS * MLP_THREADS];
    local TO *act = (local TO *)act4;
    const int t = (int)get_local_id(0), g = (int)get_group_id(1);
    const long r0 = (long)get_group_id(0) * MLP_ROWS;
    const int rows = (int)min((long)MLP_ROWS, n_items - r0);
    int src = 0, dst = MLP_ROWS * MLP_STRIDE;
    for (int k = t; k < MLP_ROWS * MLP_W0; k += MLP_THREADS) {
        const int r = k / MLP_W0, c = k % MLP_W0;
        act[r * MLP_STRIDE + c] = r < rows ? in0[(r0 + r) * (GROUPS * MLP_W0) + g * MLP_W0 + c] : (TO)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    MLP_LAYER(in1, in2, MLP_W0, MLP_W1, MLP_B1, MLP_LAYERS > 1)
#if MLP_LAYERS > 1
    MLP_LAYER(in3, in4, MLP_W1, MLP_W2, MLP_B2, MLP_LAYERS > 2)
#endif
#if MLP_LAYERS > 2
    MLP_LAYER(in5, in6, MLP_W2, MLP_W3, MLP_B3, 0)
#endif
}
#undef OUTS_PER_PASS
#undef STEP
#undef CHUNK
#undef LOAD4
#undef MLP_LAYER
