/* b is [n, cols] or [n, 1] (broadcast along the row). */
void main()
{
    ITEM();
#if IN1_COLS == 1
    outp[item] = TO(in0[item] * in1[item / OUT_COLS]);
#else
    outp[item] = TO(in0[item] * in1[item]);
#endif
}
