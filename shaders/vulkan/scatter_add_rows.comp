/* One work-item per output entry sums the rows that target its row, in row
 * order (seg_items is a stable sort of the rows by target): deterministic,
 * no atomics, the same order as the CPU backend. The output type may be
 * wider than the input's. Into few rows that each sum many (GROUP_LANES
 * defined: per-system sums of every atom), a work-group per output entry
 * instead: each item sums every GROUP_LANES-th row of the segment, then the
 * group adds the partial sums in a fixed tree, the same on every run.
 * PLUS_EPI: an add folded in (lowering.c). With row sums (I1 > 0) a row
 * adds F0 times the sum of its first I1 columns (times in2), summed as
 * sum_cols.comp sums them. */
#if I1 > 0
#ifdef IN2_COLS
#define ROW_TERM(r, k) acc_t(in0[(r) * IN0_COLS + (k)]) * acc_t(in2[(r) * IN0_COLS + (k)])
#else
#define ROW_TERM(r, k) acc_t(in0[(r) * IN0_COLS + (k)])
#endif
#define ADD_ROW(sum, r, c)                                                                                 \
    {                                                                                                      \
        acc_t s_ = acc_t(0);                                                                               \
        for (uint k_ = 0; k_ < I1; k_++)                                                                   \
            s_ += ROW_TERM(r, k_);                                                                         \
        sum += TO(acc_t(F0) * s_);                                                                         \
    }
#else
#define ADD_ROW(sum, r, c) sum += TO(in0[(r) * OUT_COLS + (c)])
#endif
#ifdef GROUP_LANES
shared TO part[GROUP_LANES];

void main()
{
    const uint item = pc.base + gl_GlobalInvocationID.x;
    const uint entry = item / GROUP_LANES, lane = gl_LocalInvocationID.x;
    const uint t = entry / OUT_COLS, c = entry % OUT_COLS;
    TO sum = TO(0);
    for (int q = seg_off[t] + int(lane); q < seg_off[t + 1]; q += GROUP_LANES)
        ADD_ROW(sum, uint(seg_items[q]), c);
    part[lane] = sum;
    barrier();
    for (uint width = GROUP_LANES / 2; width > 0; width /= 2) {
        if (lane < width)
            part[lane] += part[lane + width];
        barrier();
    }
    if (lane == 0)
        outp[entry] = PLUS_EPI(part[0], entry);
}
#else
void main()
{
    ITEM();
    const uint t = item / OUT_COLS, c = item % OUT_COLS;
    TO sum = TO(0);
    for (int q = seg_off[t]; q < seg_off[t + 1]; q++)
        ADD_ROW(sum, uint(seg_items[q]), c);
    outp[item] = PLUS_EPI(sum, item);
}
#endif
