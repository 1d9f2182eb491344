/* F0 times the sum of the first I0 columns of x. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    acc_t s = 0;
    for (int c = 0; c < I0; c++)
        s += in0[item * IN0_COLS + c];
    out[item] = (TO)((acc_t)F0 * s);
}
