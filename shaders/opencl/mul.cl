/* b is [n, cols] or [n, 1] (broadcast along the row). */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
#if IN1_COLS == 1
    out[item] = in0[item] * in1[item / OUT_COLS];
#else
    out[item] = in0[item] * in1[item];
#endif
}
