/* I0 = first column, OUT_COLS = count. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long r = item / OUT_COLS, c = item % OUT_COLS;
    out[item] = in0[r * IN0_COLS + I0 + c];
}
