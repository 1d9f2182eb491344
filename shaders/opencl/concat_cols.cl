kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long r = item / OUT_COLS, c = item % OUT_COLS;
    out[item] = c < IN0_COLS ? in0[r * IN0_COLS + c] : in1[r * IN1_COLS + (c - IN0_COLS)];
}
