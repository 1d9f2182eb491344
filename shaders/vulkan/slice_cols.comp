/* I0 = first column, OUT_COLS = count. */
void main()
{
    ITEM();
    const uint r = item / OUT_COLS, c = item % OUT_COLS;
    outp[item] = TO(in0[r * IN0_COLS + I0 + c]);
}
