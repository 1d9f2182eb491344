/* inputs (g [P, 3], pairs); one output per atom, its lanes (lowering.h)
 * walking the segments: the entries 2p + side of the flattened pair array
 * that name this atom. Side 1 (the neighbour) adds g, side 0 (the center)
 * subtracts it. PLUS_EPI: an add folded in (lowering.c). */
shared acc_t part[3 * SUM_GROUP];
void main()
{
    LANES_ITEM();
    acc_t g[3] = acc_t[3](acc_t(0), acc_t(0), acc_t(0));
    const int first = live ? seg_off[item] : 0, last = live ? seg_off[item + 1] : 0;
    for (int q = first + int(lane); q < last; q += int(pc.lanes)) {
        const int e = seg_items[q];
        const uint p = uint(e >> 1);
        const acc_t sign = (e & 1) != 0 ? acc_t(1) : acc_t(-1);
        for (uint d = 0; d < 3; d++)
            g[d] += sign * acc_t(in0[3 * p + d]);
    }
    LANES_SUM(part, 3, g);
    if (live && lane == 0)
        for (uint d = 0; d < 3; d++)
            outp[3 * item + d] = PLUS_EPI(g[d], 3 * item + d);
}
