/* CELU_MLP (core/ops.h): a work-group of MLP_THREADS items takes MLP_ROWS
 * rows (from group id 0) of one group (group id 1) through every layer; the
 * activations stay in local memory (rows MLP_STRIDE apart, a multiple of 4),
 * each layer's output also goes to its block of `out`. The weights come
 * transposed per group (W^T [IN_W, OUT_W]: backends/opencl/cl_gemm.c), so
 * that the items summing neighbouring outputs read neighbouring words
 * (MLP_SUMS); a layer's LANES items an output each sum a slice
 * of the inputs (lowering.c: in the narrow and half forms one, but as
 * many as fit for the last layer, whose outputs are few; in the wide form,
 * for few rows, as many as fit). Absent rows are skipped. (Summing each
 * output with 4 items that read a row of W side by side took twice as long
 * at 12288 atoms on the H200, and no less for a molecule.) */
/* Loads in flight an item; fewer in the wide form, whose 1024 items a group
 * leave each 64 registers on NVIDIA's GPUs. */
#define CHUNK (MLP_THREADS > 256 ? 16 : 32)
/* MLP_SUM: acc[r] += the sum over this item's slice of c < K of M[c * N] *
 * V[r * MLP_STRIDE + c], for the rows r < rows. M points at this item's
 * column of a [K, N] matrix in global memory (neighbouring items,
 * neighbouring words; int offsets from it, which take fewer registers than
 * long ones), V at MLP_ROWS rows in local memory, read four words at a
 * time. Lane `lane` of LANES takes the slice from lane * MLP_SLICE(K, LANES)
 * (whole TO4 words); CHUNK loads are issued before any is used. Words past
 * the slice meet zero weights. A block without rows (past the last run:
 * row_block.kernel) takes no slice. */
#define MLP_SLICE(K, LANES) ((((K) + (LANES)-1) / (LANES) + 3) / 4 * 4)
#define MLP_SUM(M, K, N, LANES, V, lane, acc)                                                         \
    {                                                                                                 \
        const int c_begin = (lane)*MLP_SLICE(K, LANES),                                               \
                  c_end = rows > 0 ? min(c_begin + MLP_SLICE(K, LANES), (K)) : c_begin;               \
        for (int c0 = c_begin; c0 < c_end; c0 += CHUNK) {                                             \
            TO wv[CHUNK];                                                                             \
            _Pragma("unroll") for (int j = 0; j < CHUNK; j++)                                         \
                wv[j] = c0 + j < c_end ? (M)[(c0 + j) * (N)] : (TO)0;                                 \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                if (r < rows)                                                                         \
                    _Pragma("unroll") for (int j = 0; j < CHUNK; j += 4)                              \
                        if (c0 + j < c_end) {                                                         \
                            const TO4 v = *(local const TO4 *)((V) + r * MLP_STRIDE + c0 + j);        \
                            acc[r] += wv[j] * v.x + wv[j + 1] * v.y + wv[j + 2] * v.z + wv[j + 3] * v.w; \
                        }                                                                             \
        }                                                                                             \
    }
/* Partial sum i of row r: in part, or without it (MLP_PARTS 0: the last
 * layer of the forward pass in the narrow and half forms, lowering.c) in
 * the rows of the layer's input V, which nothing reads after that layer,
 * once every item is done with them (LANES * N <= MLP_STRIDE). */
#if MLP_PARTS
#define MLP_PART(V, r, i) part[(r)*MLP_THREADS + (i)]
#else
#define MLP_PART(V, r, i) (V)[(r)*MLP_STRIDE + (i)]
#endif
/* The N sums of a layer for every row: sum s over column s of M (K
 * terms), by LANES items each (items t = lane * N + s; LANES * N <= MLP_THREADS
 * where LANES > 1, whose partial sums are added in lane order), each total
 * handed to FINISH(r, s, total, N, P, BLOCK, HIDDEN) (no variadic macros:
 * OpenCL C 1.2 has none, and NVIDIA's compiler holds to it). */
#define MLP_SUMS(M, K, N, LANES, V, FINISH, P, BLOCK, HIDDEN)                                         \
    if ((LANES) == 1) {                                                                               \
        for (int s = t; s < (N); s += MLP_THREADS) {                                                  \
            TO acc[MLP_ROWS];                                                                         \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                acc[r] = 0;                                                                           \
            MLP_SUM((M) + s, K, N, 1, V, 0, acc)                                                      \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                FINISH(r, s, acc[r], N, P, BLOCK, HIDDEN)                                             \
        }                                                                                             \
    } else {                                                                                          \
        const int lane = t / (N);                                                                     \
        TO acc[MLP_ROWS];                                                                             \
        for (int r = 0; r < MLP_ROWS; r++)                                                            \
            acc[r] = 0;                                                                               \
        if (lane < (LANES))                                                                           \
            MLP_SUM((M) + t % (N), K, N, LANES, V, lane, acc)                                         \
        if (!MLP_PARTS)                                                                               \
            barrier(CLK_LOCAL_MEM_FENCE); /* every item done with V, where the sums go */              \
        if (t < (LANES) * (N))                                                                        \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                MLP_PART(V, r, t) = acc[r];                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        for (int k = t; k < MLP_ROWS * (N); k += MLP_THREADS) {                                       \
            const int r = k / (N), s = k % (N);                                                       \
            TO total = 0;                                                                             \
            for (int l = 0; l < (LANES); l++)                                                         \
                total += MLP_PART(V, r, l * (N) + s);                                                 \
            FINISH(r, s, total, N, P, BLOCK, HIDDEN)                                                  \
        }                                                                                             \
    }
/* Output o of row r: the bias, the sum, CELU in hidden layers. */
#define MLP_STORE(r, o, sum, OUT_W, B, BLOCK, HIDDEN)                                                 \
    {                                                                                                 \
        TO v = B[wg * OUT_W + (o)] + (sum);                                                           \
        if (HIDDEN)                                                                                   \
            v = v > 0 ? v : (TO)F0 * expm1(v / (TO)F0);                                               \
        act[dst + (r)*MLP_STRIDE + (o)] = v;                                                          \
        if ((r) < rows)                                                                               \
            outp[(r0 + (r)) * MLP_COLS + BLOCK + g * OUT_W + (o)] = v;                                 \
    }
/* One layer: act[src] (IN_W wide) -> act[dst] (OUT_W wide), WT = W^T. */
#define MLP_LAYER(WT, B, IN_W, OUT_W, LANES, BLOCK, HIDDEN)                                           \
    MLP_SUMS(WT + (long)wg * IN_W * OUT_W, IN_W, OUT_W, LANES, act + src, MLP_STORE, B, BLOCK, HIDDEN) \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
    {                                                                                                 \
        const int swap = src;                                                                         \
        src = dst;                                                                                    \
        dst = swap;                                                                                   \
    }

kernel __attribute__((reqd_work_group_size(MLP_THREADS, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local TO4 act4[2 * MLP_ROWS * MLP_STRIDE / 4]; /* TO4: aligned for the 4-word reads */
    local TO part[MLP_PARTS ? MLP_ROWS * MLP_THREADS : 1];
    local TO *act = (local TO *)act4;
    const int t = (int)get_local_id(0), g = (int)get_group_id(1);
    ROW_BLOCK(get_group_id(0), MLP_ROWS);
    const long r0 = m0;
    const int rows = (int)(m_end - m0), wg = e * GROUPS + g; /* wg: the weights' group */
    int src = 0, dst = MLP_ROWS * MLP_STRIDE;
    /* Zeros past the input's width: the 4-word reads take what lies past a
     * layer's width (zeros, or finite activations of a wider layer before)
     * times zero weights. */
    for (int k = t; k < 2 * MLP_ROWS * MLP_STRIDE / 4; k += MLP_THREADS)
        act4[k] = (TO4)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = t; k < MLP_ROWS * MLP_W0; k += MLP_THREADS) {
        const int r = k / MLP_W0, c = k % MLP_W0;
        act[r * MLP_STRIDE + c] = r < rows ? in0[(r0 + r) * (GROUPS * MLP_W0) + g * MLP_W0 + c] : (TO)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    MLP_LAYER(in1, in2, MLP_W0, MLP_W1, MLP_LANES1, MLP_B1, MLP_LAYERS > 1)
#if MLP_LAYERS > 1
    MLP_LAYER(in3, in4, MLP_W1, MLP_W2, MLP_LANES2, MLP_B2, MLP_LAYERS > 2)
#endif
#if MLP_LAYERS > 2
    MLP_LAYER(in5, in6, MLP_W2, MLP_W3, MLP_LANES3, MLP_B3, 0)
#endif
}
#undef CHUNK
#undef MLP_STORE
#undef MLP_LAYER
#undef MLP_SLICE
#undef MLP_SUM
#undef MLP_SUMS
#undef MLP_PART
