/* inputs (g [P, 3], images, pairs, system); one work-item per system and
 * cell entry; the segments are the pairs of each system, in order. */
void main()
{
    ITEM();
    const uint s = item / 9, a = (item % 9) / 3, b = item % 3;
    acc_t sum = acc_t(0);
    for (int q = seg_off[s]; q < seg_off[s + 1]; q++) {
        const uint p = uint(seg_items[q]);
        sum += acc_t(in1[3 * p + a]) * acc_t(in0[3 * p + b]);
    }
    outp[item] = TO(sum);
}
