/* inputs (g [P, 3], images, pairs); the segments are the pairs of each
 * center, in pair order. One output per atom and cell entry, its lanes
 * (lowering.h) walking the atom's pairs: deterministic. */
shared acc_t part[SUM_GROUP];
void main()
{
    LANES_ITEM();
    const uint i = item / 9, a = (item % 9) / 3, b = item % 3;
    acc_t sum[1] = acc_t[1](acc_t(0));
    const int first = live ? seg_off[i] : 0, last = live ? seg_off[i + 1] : 0;
    for (int q = first + int(lane); q < last; q += int(pc.lanes)) {
        const uint p = uint(seg_items[q]);
        sum[0] += acc_t(IMAGE_OFFSET(in1[p], a)) * acc_t(in0[3 * p + b]);
    }
    LANES_SUM(part, 1, sum);
    if (live && lane == 0)
        outp[item] = TO(sum[0]);
}
