/* inputs (g [P, 3], pairs); one work-item per atom. The segments list the
 * entries 2p + side of the flattened pair array that name this atom: side 1
 * (the neighbour) adds g, side 0 (the center) subtracts it. PLUS_EPI: an
 * add folded in (lowering.c). */
void main()
{
    ITEM();
    acc_t g[3] = acc_t[3](acc_t(0), acc_t(0), acc_t(0));
    for (int q = seg_off[item]; q < seg_off[item + 1]; q++) {
        const int e = seg_items[q];
        const uint p = uint(e >> 1);
        const acc_t sign = (e & 1) != 0 ? acc_t(1) : acc_t(-1);
        for (uint d = 0; d < 3; d++)
            g[d] += sign * acc_t(in0[3 * p + d]);
    }
    for (uint d = 0; d < 3; d++)
        outp[3 * item + d] = PLUS_EPI(g[d], 3 * item + d);
}
