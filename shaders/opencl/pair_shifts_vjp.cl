/* inputs (g [P, 3], images, pairs, system); one work-item per system and
 * cell entry; the segments are the pairs of each system, in order. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long s = item / 9;
    const int a = (int)(item % 9) / 3, b = (int)(item % 3);
    acc_t sum = 0;
    for (int q = seg_off[s]; q < seg_off[s + 1]; q++) {
        const long p = seg_items[q];
        sum += (acc_t)in1[3 * p + a] * in0[3 * p + b];
    }
    out[item] = (TO)sum;
}
