/* inputs (g [P, 3], images, pairs); the segments are the pairs of each
 * center, in pair order. One work-item per atom and cell entry sums the
 * atom's pairs in that order: deterministic. */
void main()
{
    ITEM();
    const uint i = item / 9, a = (item % 9) / 3, b = item % 3;
    acc_t sum = acc_t(0);
    for (int q = seg_off[i]; q < seg_off[i + 1]; q++) {
        const uint p = uint(seg_items[q]);
        sum += acc_t(IMAGE_OFFSET(in1[p], a)) * acc_t(in0[3 * p + b]);
    }
    outp[item] = TO(sum);
}
