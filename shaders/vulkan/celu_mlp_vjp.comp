/* CELU_MLP_VJP (core/ops.h), as shaders/opencl/celu_mlp_vjp.cl: a work
 * group of MLP_THREADS invocations takes MLP_ROWS rows of group
 * gl_WorkGroupID.y back through every layer, the gradients in shared memory
 * as TO4 (rows MLP_STRIDE words apart). The gradient of an input column is
 * summed over the layer's outputs by the layer's LANES invocations, each a
 * slice of them (lowering.h: one in the narrow form, as many as fit in the
 * wide one), CHUNK weight loads issued before any is used, the gradients
 * read four at a time; the lanes' partial sums are added in a fixed order.
 * Absent rows are skipped. in0 = gy, in1 = y, in2.. = the weights. */
layout(local_size_x = MLP_THREADS) in;

#define CHUNK 32
shared TO4 grad[2 * MLP_ROWS * MLP_STRIDE / 4];
shared TO part[MLP_PARTS != 0 ? MLP_ROWS * MLP_THREADS : 1];
#define GRAD(i) grad[(i) >> 2][(i) & 3]

/* The gradient of x, through CELU where the planner folded the activation
 * before this op in (EPI: y of that CELU). */
#ifdef EPI
#define STORE_X_GRADIENT(at, v) ((v) * (epi[at] > TO(0) ? TO(1) : epi[at] / TO(ALPHA) + TO(1)))
#else
#define STORE_X_GRADIENT(at, v) (v)
#endif

/* acc[r] += the sum over lane's slice of o < OUT_W of W[w0 + o * IN_W] *
 * grad[src + r * MLP_STRIDE + o], the slice whole TO4 words (past it, zero
 * weights). */
#define MLP_SLICE(K, LANES) ((((K) + (LANES)-1) / (LANES) + 3) / 4 * 4)
#define MLP_SUM(W, w0, IN_W, OUT_W, LANES, lane, acc)                                                 \
    {                                                                                                 \
        const uint o_begin = (lane)*MLP_SLICE(OUT_W, LANES), o_end = min(o_begin + MLP_SLICE(OUT_W, LANES), uint(OUT_W)); \
        for (uint o0 = o_begin; o0 < o_end; o0 += CHUNK) {                                            \
            TO wv[CHUNK];                                                                             \
            [[unroll]] for (uint j = 0; j < CHUNK; j++)                                               \
                wv[j] = o0 + j < o_end ? TO(W[(w0) + (o0 + j) * IN_W]) : TO(0);                       \
            [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                            \
                if (r < rows)                                                                         \
                    [[unroll]] for (uint j = 0; j < CHUNK; j += 4)                                    \
                        if (o0 + j < o_end)                                                           \
                            acc[r] += dot(TO4(wv[j], wv[j + 1], wv[j + 2], wv[j + 3]),                \
                                          grad[(src + r * MLP_STRIDE + o0 + j) >> 2]);                \
        }                                                                                             \
    }

/* Gradient c of row r, summed: of the hidden layer below (through CELU,
 * plus gy's share), or of x, stored. */
#define MLP_FINISH(r, c, sum, IN_W, BLOCK, HIDDEN)                                                    \
    if (HIDDEN) {                                                                                     \
        const uint at = (r0 + (r)) * MLP_COLS + BLOCK + g * IN_W + (c);                               \
        const TO h = (r) < rows ? TO(in1[at]) : TO(0);                                                \
        GRAD(dst + (r)*MLP_STRIDE + (c)) =                                                            \
            ((sum) + (GY_HIDDEN != 0 && (r) < rows ? TO(in0[at]) : TO(0))) * (h > TO(0) ? TO(1) : h / TO(F0) + TO(1)); \
    } else if ((r) < rows) {                                                                          \
        const uint at = (r0 + (r)) * (GROUPS * MLP_W0) + g * MLP_W0 + (c);                            \
        outp[at] = STORE_X_GRADIENT(at, (sum));                                                       \
    }

/* One layer back: grad[src] (OUT_W wide) -> grad[dst] (IN_W wide); LANES
 * invocations a gradient. */
#define MLP_BACK(W, IN_W, OUT_W, LANES, BLOCK, HIDDEN)                                                \
    if (LANES == 1) {                                                                                 \
        for (uint c = t; c < IN_W; c += MLP_THREADS) {                                                \
            TO acc[MLP_ROWS];                                                                         \
            [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                            \
                acc[r] = TO(0);                                                                       \
            MLP_SUM(W, wg * OUT_W * IN_W + c, IN_W, OUT_W, 1, 0, acc)                                 \
            [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                            \
                MLP_FINISH(r, c, acc[r], IN_W, BLOCK, HIDDEN)                                         \
        }                                                                                             \
    } else {                                                                                          \
        const uint c = t % IN_W, lane = t / IN_W; /* IN_W * LANES <= MLP_THREADS */                   \
        TO acc[MLP_ROWS];                                                                             \
        [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                                \
            acc[r] = TO(0);                                                                           \
        if (lane < LANES)                                                                             \
            MLP_SUM(W, wg * OUT_W * IN_W + c, IN_W, OUT_W, LANES, lane, acc)                          \
        [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                                \
            part[r * MLP_THREADS + t] = acc[r];                                                       \
        barrier();                                                                                    \
        for (uint k = t; k < MLP_ROWS * IN_W; k += MLP_THREADS) {                                     \
            const uint r = k / IN_W, c = k % IN_W;                                                    \
            TO sum = TO(0);                                                                           \
            for (uint l = 0; l < LANES; l++)                                                          \
                sum += part[r * MLP_THREADS + l * IN_W + c];                                          \
            MLP_FINISH(r, c, sum, IN_W, BLOCK, HIDDEN)                                                \
        }                                                                                             \
    }                                                                                                 \
    barrier();                                                                                        \
    {                                                                                                 \
        const uint swap = src;                                                                        \
        src = dst;                                                                                    \
        dst = swap;                                                                                   \
    }

void main()
{
    const uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.y;
    ROW_BLOCK(pc.base / MLP_ROWS + gl_WorkGroupID.x, MLP_ROWS);
    const uint r0 = m0, rows = m_end - m0, wg = e * GROUPS + g; /* wg: the weights' group */
    uint src = 0, dst = MLP_ROWS * MLP_STRIDE;
    /* Zeros past each layer's width: the 4-word reads take them times zero weights. */
    for (uint k = t; k < 2 * MLP_ROWS * MLP_STRIDE / 4; k += MLP_THREADS)
        grad[k] = TO4(0);
    barrier();
    for (uint k = t; k < MLP_ROWS * MLP_WTOP; k += MLP_THREADS) {
        const uint r = k / MLP_WTOP, o = k % MLP_WTOP;
        GRAD(r * MLP_STRIDE + o) = r < rows ? TO(in0[(r0 + r) * IN0_COLS + g * MLP_WTOP + o]) : TO(0);
    }
    barrier();
#if MLP_LAYERS > 2
    MLP_BACK(in4, MLP_W2, MLP_W3, MLP_LANES3, MLP_B2, true)
#endif
#if MLP_LAYERS > 1
    MLP_BACK(in3, MLP_W1, MLP_W2, MLP_LANES2, MLP_B1, true)
#endif
    MLP_BACK(in2, MLP_W0, MLP_W1, MLP_LANES1, 0, false)
}
