/* inputs (x [, w shaped like x]): F0 times the sum of the first I0 columns of x (times w). */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    acc_t s = 0;
    for (int c = 0; c < I0; c++)
#ifdef IN1_COLS
        s += (acc_t)in0[item * IN0_COLS + c] * in1[item * IN0_COLS + c];
#else
        s += in0[item * IN0_COLS + c];
#endif
    out[item] = (TO)((acc_t)F0 * s);
}
