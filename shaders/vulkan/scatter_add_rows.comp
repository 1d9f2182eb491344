/* One work-item per output entry sums the rows that target its row, in row
 * order (seg_items is a stable sort of the rows by target): deterministic,
 * no atomics, the same order as the CPU backend. The output type may be
 * wider than the input's. */
void main()
{
    ITEM();
    const uint t = item / OUT_COLS, c = item % OUT_COLS;
    TO sum = TO(0);
    for (int q = seg_off[t]; q < seg_off[t + 1]; q++)
        sum += TO(in0[uint(seg_items[q]) * OUT_COLS + c]);
    outp[item] = sum;
}
