/* The GEMM of linear.comp (same operands and groups; stored through
 * gemm_store.glsl) for few rows, on GPUs: a molecule's atoms of one element.
 * The tiled shader gives such a layer a handful of work groups, each
 * walking all of K through shared memory (the first layer's reverse pass,
 * 2048 deep, took 0.1 ms for methane on an H200). Here a work group
 * computes FR_OUTS outputs n for FR_ROWS rows m, its FR_LANES invocations
 * per output striding along K with a partial sum per row, added at the end
 * in a fixed order (reproducible), so that even one row spreads over
 * GEMM_N / FR_OUTS work groups. Neighbouring invocations read neighbouring
 * words of W: along K for LINEAR (W[n, k]), along N for LINEAR_VJP
 * (W[k, n]). Work groups: x = row blocks, y = column blocks, z = groups g. */
#define FR_GROUP 256
#define FR_OUTS 8
#define FR_ROWS 8
#define FR_LANES (FR_GROUP / FR_OUTS)
layout(local_size_x = FR_GROUP, local_size_y = 1, local_size_z = 1) in;

shared TO part[FR_OUTS * FR_ROWS * (FR_LANES + 1)]; /* [output][row][lane], a word of padding per lane row */

void main()
{
    const uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.z;
#if VJP
    const uint o = t % FR_OUTS, lane = t / FR_OUTS;
#else
    const uint lane = t % FR_LANES, o = t / FR_LANES;
#endif
    const uint n = gl_WorkGroupID.y * FR_OUTS + o;
    const uint m0 = pc.base + gl_WorkGroupID.x * FR_ROWS;
    const uint rows = min(FR_ROWS, pc.n_items - m0);
    TO acc[FR_ROWS];
    [[unroll]] for (uint r = 0; r < FR_ROWS; r++)
        acc[r] = TO(0);
    if (n < GEMM_N)
        for (uint k = lane; k < GEMM_K; k += FR_LANES) {
#if VJP
            const TO w = TO(in1[(g * GEMM_K + k) * GEMM_N + n]);
#else
            const TO w = TO(in1[(g * GEMM_N + n) * GEMM_K + k]);
#endif
            [[unroll]] for (uint r = 0; r < FR_ROWS; r++)
                if (r < rows)
                    acc[r] += TO(in0[(m0 + r) * (GROUPS * GEMM_K) + g * GEMM_K + k]) * w;
        }
    [[unroll]] for (uint r = 0; r < FR_ROWS; r++)
        part[(o * FR_ROWS + r) * (FR_LANES + 1) + lane] = acc[r];
    memoryBarrierShared();
    barrier();
    if (t >= FR_OUTS * FR_ROWS)
        return;
    const uint n_out = gl_WorkGroupID.y * FR_OUTS + t / FR_ROWS, m = m0 + t % FR_ROWS;
    if (n_out >= GEMM_N || m >= pc.n_items)
        return;
    TO sum = TO(0);
    for (uint j = 0; j < FR_LANES; j++)
        sum += part[t * (FR_LANES + 1) + j];
    gemm_store(g, m, n_out, sum);
}
#undef FR_GROUP
#undef FR_OUTS
#undef FR_ROWS
#undef FR_LANES
