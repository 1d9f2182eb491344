/* CELU_MLP_VJP (core/ops.h): a work-group of MLP_THREADS items takes
 * MLP_ROWS rows (from group id 0) of one group (group id 1) back through
 * every layer, the gradients in local memory (rows MLP_STRIDE apart). Each
 * item sums the gradient of one input column over the layer's outputs,
 * reading a column of the weights (neighbouring items, neighbouring words),
 * CHUNK loads issued before any is used, the gradients read four at a time;
 * absent rows are skipped.
 * in0 = gy (GY_HIDDEN 0: the result block's alone), in1 = y, in2.. = W;
 * EPILOGUE 2: the planner folded the CELU before this op in (epi: its y). */
#define CHUNK 32
#if EPILOGUE == 2
#define STORE_X_GRADIENT(at, v) ((v) * (epi[at] > 0 ? (TO)1 : epi[at] / (TO)ALPHA + (TO)1))
#else
#define STORE_X_GRADIENT(at, v) (v)
#endif

/* One layer back: grad[src] (OUT_W wide, of the layer's output) -> grad[dst]
 * (IN_W wide): of the hidden layer below (through CELU, plus gy's share), or
 * of x, stored. */
#define MLP_BACK(W, IN_W, OUT_W, BLOCK, HIDDEN)                                                       \
    for (int c = t; c < IN_W; c += MLP_THREADS) {                                                     \
        TO acc[MLP_ROWS];                                                                             \
        for (int r = 0; r < MLP_ROWS; r++)                                                            \
            acc[r] = 0;                                                                               \
        global const TO *w = W + (long)wg * OUT_W * IN_W + c;                                         \
        for (int o0 = 0; o0 < OUT_W; o0 += CHUNK) {                                                   \
            TO wv[CHUNK];                                                                             \
            _Pragma("unroll") for (int j = 0; j < CHUNK; j++)                                         \
                wv[j] = o0 + j < OUT_W ? w[(long)(o0 + j) * IN_W] : (TO)0;                            \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                if (r < rows)                                                                         \
                    _Pragma("unroll") for (int j = 0; j < CHUNK; j += 4)                              \
                        if (o0 + j < OUT_W) {                                                         \
                            const TO4 gv = *(local const TO4 *)(grad + src + r * MLP_STRIDE + o0 + j); \
                            acc[r] += wv[j] * gv.x + wv[j + 1] * gv.y + wv[j + 2] * gv.z + wv[j + 3] * gv.w; \
                        }                                                                             \
        }                                                                                             \
        for (int r = 0; r < MLP_ROWS; r++) {                                                          \
            if (HIDDEN) {                                                                             \
                const long at = (r0 + r) * MLP_COLS + BLOCK + g * IN_W + c;                           \
                const TO h = r < rows ? in1[at] : (TO)0;                                              \
                grad[dst + r * MLP_STRIDE + c] =                                                      \
                    (acc[r] + (GY_HIDDEN && r < rows ? in0[at] : (TO)0)) * (h > 0 ? (TO)1 : h / (TO)F0 + (TO)1); \
            } else if (r < rows) {                                                                    \
                const long at = (r0 + r) * (GROUPS * MLP_W0) + g * MLP_W0 + c;                        \
                out[at] = STORE_X_GRADIENT(at, acc[r]);                                               \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
    {                                                                                                 \
        const int swap = src;                                                                         \
        src = dst;                                                                                    \
        dst = swap;                                                                                   \
    }

kernel __attribute__((reqd_work_group_size(MLP_THREADS, 1, 1))) void KNAME(KARGS)
{
    local TO4 grad4[2 * MLP_ROWS * MLP_STRIDE / 4]; /* TO4: aligned for the 4-word reads */
    local TO *grad = (local TO *)grad4;
    const int t = (int)get_local_id(0), g = (int)get_group_id(1);
    ROW_BLOCK(get_group_id(0), MLP_ROWS);
    const long r0 = m0;
    const int rows = (int)(m_end - m0), wg = e * GROUPS + g; /* wg: the weights' group */
    int src = 0, dst = MLP_ROWS * MLP_STRIDE;
    /* Zeros past each layer's width: the 4-word reads take them times zero weights. */
    for (int k = t; k < 2 * MLP_ROWS * MLP_STRIDE / 4; k += MLP_THREADS)
        grad4[k] = (TO4)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = t; k < MLP_ROWS * MLP_WTOP; k += MLP_THREADS) {
        const int r = k / MLP_WTOP, o = k % MLP_WTOP;
        grad[r * MLP_STRIDE + o] = r < rows ? in0[(r0 + r) * IN0_COLS + g * MLP_WTOP + o] : (TO)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if MLP_LAYERS > 2
    MLP_BACK(in4, MLP_W2, MLP_W3, MLP_B2, 1)
#endif
#if MLP_LAYERS > 1
    MLP_BACK(in3, MLP_W1, MLP_W2, MLP_B1, 1)
#endif
    MLP_BACK(in2, MLP_W0, MLP_W1, 0, 0)
}
#undef MLP_BACK
#undef STORE_X_GRADIENT
#undef CHUNK
