/* inputs (g [P, 3], images, pairs); the segments are the pairs of each
 * center, in pair order. One work-item per atom and cell entry sums the
 * atom's pairs in that order: deterministic. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long i = item / 9;
    const int a = (int)(item % 9) / 3, b = (int)(item % 3);
    acc_t sum = 0;
    for (int q = seg_off[i]; q < seg_off[i + 1]; q++) {
        const long p = seg_items[q];
        sum += (acc_t)IMAGE_OFFSET(in1[p], a) * in0[3 * p + b];
    }
    out[item] = (TO)sum;
}
