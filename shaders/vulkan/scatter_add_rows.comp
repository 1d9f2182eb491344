/* One work-item per output entry sums the rows that target its row, in row
 * order (seg_items is a stable sort of the rows by target): deterministic,
 * no atomics, the same order as the CPU backend. The output type may be
 * wider than the input's. Into few rows that each sum many (GROUP_LANES
 * defined: per-system sums of every atom), a work-group per output entry
 * instead: each item sums every GROUP_LANES-th row of the segment, then the
 * group adds the partial sums in a fixed tree, the same on every run.
 * PLUS_EPI: an add folded in (lowering.c). */
#ifdef GROUP_LANES
shared TO part[GROUP_LANES];

void main()
{
    const uint item = pc.base + gl_GlobalInvocationID.x;
    const uint entry = item / GROUP_LANES, lane = gl_LocalInvocationID.x;
    const uint t = entry / OUT_COLS, c = entry % OUT_COLS;
    TO sum = TO(0);
    for (int q = seg_off[t] + int(lane); q < seg_off[t + 1]; q += GROUP_LANES)
        sum += TO(in0[uint(seg_items[q]) * OUT_COLS + c]);
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
        sum += TO(in0[uint(seg_items[q]) * OUT_COLS + c]);
    outp[item] = PLUS_EPI(sum, item);
}
#endif
