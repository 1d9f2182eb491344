/* One work-item per output entry sums the rows that target its row, in row
 * order (seg_items is a stable sort of the rows by target): deterministic,
 * no atomics, the same order as the CPU backend. Into few rows that each
 * sum many (GROUP_LANES defined: per-system sums of every atom), a
 * work-group per output entry instead: each item sums every GROUP_LANES-th
 * row of the segment, then the group adds the partial sums in a fixed tree,
 * the same on every run. PLUS_EPI: an add folded in (lowering.c).
 * With row sums (I1 > 0) a row adds F0 times the sum of its first I1
 * columns (times in2), summed as sum_cols.cl sums them. */
#if I1 > 0
#ifdef IN2_COLS
#define ROW_TERM(r, k) (acc_t)in0[(r) * IN0_COLS + (k)] * in2[(r) * IN0_COLS + (k)]
#else
#define ROW_TERM(r, k) (acc_t)in0[(r) * IN0_COLS + (k)]
#endif
#define ADD_ROW(sum, r, c)                                                                                 \
    {                                                                                                      \
        acc_t s_ = 0;                                                                                      \
        for (int k_ = 0; k_ < I1; k_++)                                                                    \
            s_ += ROW_TERM(r, k_);                                                                         \
        sum += (TO)((acc_t)F0 * s_);                                                                       \
    }
#else
#define ADD_ROW(sum, r, c) sum += (TO)in0[(r) * OUT_COLS + (c)]
#endif
#ifdef GROUP_LANES
kernel __attribute__((reqd_work_group_size(GROUP_LANES, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local TO part[GROUP_LANES];
    const long entry = get_group_id(0);
    const int lane = (int)get_local_id(0);
    const long t = entry / OUT_COLS, c = entry % OUT_COLS;
    TO sum = 0;
    for (int q = seg_off[t] + lane; q < seg_off[t + 1]; q += GROUP_LANES)
        ADD_ROW(sum, (long)seg_items[q], c);
    part[lane] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int width = GROUP_LANES / 2; width > 0; width /= 2) {
        if (lane < width)
            part[lane] += part[lane + width];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0)
        out[entry] = PLUS_EPI(part[0], entry);
}
#else
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long t = item / OUT_COLS, c = item % OUT_COLS;
    TO sum = 0;
    for (int q = seg_off[t]; q < seg_off[t + 1]; q++)
        ADD_ROW(sum, (long)seg_items[q], c);
    out[item] = PLUS_EPI(sum, item);
}
#endif
#undef ADD_ROW
#undef ROW_TERM
