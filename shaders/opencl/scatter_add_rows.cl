/* One work-item per output entry sums the rows that target its row, in row
 * order (seg_items is a stable sort of the rows by target): deterministic,
 * no atomics, the same order as the CPU backend. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long t = item / OUT_COLS, c = item % OUT_COLS;
    TO sum = 0;
    for (int q = seg_off[t]; q < seg_off[t + 1]; q++)
        sum += (TO)in0[(long)seg_items[q] * OUT_COLS + c];
    out[item] = sum;
}
