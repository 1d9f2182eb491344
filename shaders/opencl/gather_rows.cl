kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long r = item / OUT_COLS, c = item % OUT_COLS;
    out[item] = (TO)in0[(long)in1[r] * OUT_COLS + c];
}
