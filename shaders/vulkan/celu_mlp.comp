/* CELU_MLP (core/ops.h), as shaders/opencl/celu_mlp.cl: a work group of
 * MLP_THREADS invocations takes MLP_ROWS rows (from pc.base + MLP_ROWS *
 * gl_WorkGroupID.x; pc.n_items = rows) of group gl_WorkGroupID.y through
 * every layer, the activations in shared memory as TO4 (rows MLP_STRIDE
 * words apart), each layer's output also stored in its block of the output.
 * A layer's LANES invocations sum each output (lowering.h: MLFF_MLP_LANES
 * in the narrow form, as many as fit in the wide one), reading its weight
 * row four words at a time side by side (CHUNK loads issued before any is
 * used); their partial sums are added in a fixed order. Absent rows are
 * skipped. */
layout(local_size_x = MLP_THREADS) in;
#define CHUNK 16
/* With LANES invocations an output: the outputs of a pass, the words between
 * an invocation's reads. */
#define OUTS(LANES) (MLP_THREADS / (LANES))
#define STEP(LANES) (4 * (LANES))

shared TO4 act[2 * MLP_ROWS * MLP_STRIDE / 4];
shared TO part[MLP_ROWS * MLP_THREADS];
#define ACT(i) act[(i) >> 2][(i) & 3]

/* The weights again as TO4, for 4-word loads where their rows allow them
 * (another view of the same descriptors, which Vulkan permits). */
layout(std430, set = 0, binding = 2) readonly buffer In1V { TO4 in1v[]; };
#if MLP_LAYERS > 1
layout(std430, set = 0, binding = 4) readonly buffer In3V { TO4 in3v[]; };
#endif
#if MLP_LAYERS > 2
layout(std430, set = 0, binding = 6) readonly buffer In5V { TO4 in5v[]; };
#endif

/* One layer: act[src] (IN_W wide) -> act[dst] (OUT_W wide), LANES invocations
 * an output; src, dst in words. */
#define MLP_LAYER(W, WV, B, IN_W, OUT_W, LANES, BLOCK, HIDDEN)                                        \
    for (uint o0 = 0; o0 < OUT_W; o0 += OUTS(LANES)) {                                                \
        const uint o = o0 + t / LANES, lane = t % LANES;                                              \
        TO acc[MLP_ROWS];                                                                             \
        [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                                \
            acc[r] = TO(0);                                                                           \
        if (o < OUT_W && rows > 0) { /* none past the last run (row_block.kernel) */                  \
            const uint w0 = (wg * OUT_W + o) * IN_W;                                                  \
            for (uint j0 = 0; j0 < IN_W / STEP(LANES); j0 += CHUNK) {                                 \
                TO4 wv[CHUNK];                                                                        \
                [[unroll]] for (uint j = 0; j < CHUNK; j++) {                                         \
                    const uint c = w0 + 4 * lane + (j0 + j) * STEP(LANES);                            \
                    wv[j] = j0 + j >= IN_W / STEP(LANES) ? TO4(0)                                     \
                            : IN_W % 4 == 0 ? WV[c >> 2] : TO4(W[c], W[c + 1], W[c + 2], W[c + 3]);   \
                }                                                                                     \
                [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                        \
                    if (r < rows)                                                                     \
                        [[unroll]] for (uint j = 0; j < CHUNK; j++)                                   \
                            if (j0 + j < IN_W / STEP(LANES))                                          \
                                acc[r] += dot(wv[j], act[(src + r * MLP_STRIDE + 4 * lane + (j0 + j) * STEP(LANES)) >> 2]); \
            }                                                                                         \
            for (uint c = IN_W / STEP(LANES) * STEP(LANES) + lane; c < IN_W; c += LANES)              \
                [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                        \
                    if (r < rows)                                                                     \
                        acc[r] += TO(W[w0 + c]) * ACT(src + r * MLP_STRIDE + c);                      \
        }                                                                                             \
        [[unroll]] for (uint r = 0; r < MLP_ROWS; r++)                                                \
            part[r * MLP_THREADS + t] = acc[r];                                                       \
        barrier();                                                                                    \
        for (uint k = t; k < OUTS(LANES) * MLP_ROWS; k += MLP_THREADS) {                              \
            const uint r = k / OUTS(LANES), j = k % OUTS(LANES), on = o0 + j;                         \
            if (on < OUT_W) {                                                                         \
                TO v = TO(B[wg * OUT_W + on]);                                                        \
                for (uint l = 0; l < LANES; l++)                                                      \
                    v += part[r * MLP_THREADS + j * LANES + l];                                       \
                if (HIDDEN)                                                                           \
                    v = v > TO(0) ? v : TO(F0) * expm1_(v / TO(F0));                                  \
                ACT(dst + r * MLP_STRIDE + on) = v;                                                   \
                if (r < rows)                                                                         \
                    outp[(r0 + r) * MLP_COLS + BLOCK + g * OUT_W + on] = v;                           \
            }                                                                                         \
        }                                                                                             \
        barrier();                                                                                    \
    }                                                                                                 \
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
    for (uint k = t; k < MLP_ROWS * MLP_W0; k += MLP_THREADS) {
        const uint r = k / MLP_W0, c = k % MLP_W0;
        ACT(r * MLP_STRIDE + c) = r < rows ? TO(in0[(r0 + r) * (GROUPS * MLP_W0) + g * MLP_W0 + c]) : TO(0);
    }
    barrier();
    MLP_LAYER(in1, in1v, in2, MLP_W0, MLP_W1, MLP_LANES1, MLP_B1, MLP_LAYERS > 1)
#if MLP_LAYERS > 1
    MLP_LAYER(in3, in3v, in4, MLP_W1, MLP_W2, MLP_LANES2, MLP_B2, MLP_LAYERS > 2)
#endif
#if MLP_LAYERS > 2
    MLP_LAYER(in5, in5v, in6, MLP_W2, MLP_W3, MLP_LANES3, MLP_B3, false)
#endif
}
