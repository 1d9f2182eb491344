/* inputs (g [P, 3], pairs); one work-item per atom. The segments list the
 * entries 2p + side of the flattened pair array that name this atom: side 1
 * (the neighbour) adds g, side 0 (the center) subtracts it. PLUS_EPI: an
 * add folded in (lowering.c). */
kernel void KNAME(KARGS)
{
    ITEM();
    acc_t g[3] = {0, 0, 0};
    for (int q = seg_off[item]; q < seg_off[item + 1]; q++) {
        const int e = seg_items[q];
        const long p = e >> 1;
        const acc_t sign = (e & 1) ? 1 : -1;
        for (int d = 0; d < 3; d++)
            g[d] += sign * in0[3 * p + d];
    }
    for (int d = 0; d < 3; d++)
        out[3 * item + d] = PLUS_EPI(g[d], 3 * item + d);
}
