/* inputs (g [P, 3], images, pairs); the segments are the pairs of each
 * center, in pair order. One output per atom and cell entry, its lanes
 * (lowering.h) walking the atom's pairs: deterministic. */
kernel __attribute__((reqd_work_group_size(SUM_GROUP, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local acc_t part[SUM_GROUP];
    LANES_ITEM();
    const long i = item / 9;
    const int a = (int)(item % 9) / 3, b = (int)(item % 3);
    acc_t sum[1] = {0};
    const int first = live ? seg_off[i] : 0, last = live ? seg_off[i + 1] : 0;
    for (int q = first + lane; q < last; q += lanes) {
        const long p = seg_items[q];
        sum[0] += (acc_t)IMAGE_OFFSET(in1[p], a) * in0[3 * p + b];
    }
    LANES_SUM(part, 1, sum);
    if (live && lane == 0)
        out[item] = (TO)sum[0];
}
