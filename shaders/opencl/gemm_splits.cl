/* The sums of a GEMM whose K was split between work-groups (lowering.h):
 * in0 holds each output's `splits` partial sums side by side, added here in
 * order (reproducible), then stored as linear_tiled.cl would have
 * (gemm_store.cl). LINEAR_VJP only: no bias, so no weights' group. */
#if !VJP
#error "K is split for LINEAR_VJP only"
#endif
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long m = item / (GROUPS * GEMM_N);
    const int c = (int)(item % (GROUPS * GEMM_N)), g = c / GEMM_N, n = c % GEMM_N;
    global const TO *part = in0 + item * splits;
    TO sum = 0;
    for (int s = 0; s < splits; s++)
        sum += part[s];
    GEMM_STORE(g, m, n, sum);
}
