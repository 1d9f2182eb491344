/* The sums of a GEMM whose K was split between work groups (lowering.h):
 * in0 holds each output's pc.lanes partial sums side by side, added here
 * in order (reproducible), then stored as linear_tiled.comp would have
 * (gemm_store.glsl). LINEAR_VJP only: no bias, so no weights' group. */
#if !VJP
#error "K is split for LINEAR_VJP only"
#endif
layout(local_size_x = 64) in;

void main()
{
    const uint item = pc.base + gl_GlobalInvocationID.x, splits = pc.lanes;
    if (item >= pc.n_items)
        return;
    const uint m = item / (GROUPS * GEMM_N), c = item % (GROUPS * GEMM_N);
    TO sum = TO(0);
    for (uint s = 0; s < splits; s++)
        sum += TO(in0[item * splits + s]);
    gemm_store(c / GEMM_N, 0, m, c % GEMM_N, sum);
}
