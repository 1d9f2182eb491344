void main()
{
    ITEM();
    const uint r = item / OUT_COLS, c = item % OUT_COLS;
    outp[item] = c < IN0_COLS ? TO(in0[r * IN0_COLS + c]) : TO(in1[r * IN1_COLS + (c - IN0_COLS)]);
}
