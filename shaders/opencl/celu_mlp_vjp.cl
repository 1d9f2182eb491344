/* CELU_MLP_VJP (core/ops.h): a work-group of MLP_THREADS items takes
 * MLP_ROWS rows (from group id 0) of one group (group id 1) back through
 * every layer, the gradients in local memory (rows MLP_STRIDE apart). Each
 * gradient of an input column is summed over the layer's outputs by the
 * layer's LANES items (MLP_SUMS, mlp_sums.cl: one in the narrow form, as
 * many as fit in the wide one), reading a column of the weights
 * (neighbouring items, neighbouring words); absent rows are skipped.
 * in0 = gy (GY_HIDDEN 0: the result block's alone), in1 = y, in2.. = W;
 * EPILOGUE 2: the planner folded the CELU before this op in (epi: its y). */
/* Loads in flight an item; fewer in the wide form, whose 1024 items a group
 * leave each 64 registers on NVIDIA's GPUs. */
#define CHUNK (MLP_THREADS > 256 ? 16 : 32)
#if EPILOGUE == 2
#define STORE_X_GRADIENT(at, v) ((v) * (epi[at] > 0 ? (TO)1 : epi[at] / (TO)ALPHA + (TO)1))
#else
#define STORE_X_GRADIENT(at, v) (v)
#endif

/* Gradient c of row r, summed: of the hidden layer below (through CELU,
 * plus gy's share), or of x, stored (`unused`: MLP_SUMS's bias forward). */
#define MLP_FINISH(r, c, sum, IN_W, unused, BLOCK, HIDDEN)                                            \
    if (HIDDEN) {                                                                                     \
        const long at = (r0 + (r)) * MLP_COLS + BLOCK + g * IN_W + (c);                               \
        const TO h = (r) < rows ? in1[at] : (TO)0;                                                    \
        grad[dst + (r)*MLP_STRIDE + (c)] =                                                            \
            ((sum) + (GY_HIDDEN && (r) < rows ? in0[at] : (TO)0)) * (h > 0 ? (TO)1 : h / (TO)F0 + (TO)1); \
    } else if ((r) < rows) {                                                                          \
        const long at = (r0 + (r)) * (GROUPS * MLP_W0) + g * MLP_W0 + (c);                            \
        outp[at] = STORE_X_GRADIENT(at, (sum));                                                        \
    }
/* One layer back: grad[src] (OUT_W wide, of the layer's output) -> grad[dst]
 * (IN_W wide); LANES items a gradient, each over a slice of the outputs. */
#define MLP_BACK(W, IN_W, OUT_W, LANES, BLOCK, HIDDEN)                                                \
    MLP_SUMS(W + (long)wg * OUT_W * IN_W, OUT_W, IN_W, LANES, grad + src, MLP_FINISH, 0, BLOCK, HIDDEN) \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
    {                                                                                                 \
        const int swap = src;                                                                         \
        src = dst;                                                                                    \
        dst = swap;                                                                                   \
    }

kernel __attribute__((reqd_work_group_size(MLP_THREADS, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local TO4 grad4[2 * MLP_ROWS * MLP_STRIDE / 4]; /* TO4: aligned for the 4-word reads */
    local TO part[MLP_PARTS ? MLP_ROWS * MLP_THREADS : 1];
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
    MLP_BACK(in4, MLP_W2, MLP_W3, MLP_LANES3, MLP_B2, 1)
#endif
#if MLP_LAYERS > 1
    MLP_BACK(in3, MLP_W1, MLP_W2, MLP_LANES2, MLP_B1, 1)
#endif
    MLP_BACK(in2, MLP_W0, MLP_W1, MLP_LANES1, 0, 0)
}
#undef MLP_BACK
#undef MLP_FINISH
#undef STORE_X_GRADIENT
#undef CHUNK
