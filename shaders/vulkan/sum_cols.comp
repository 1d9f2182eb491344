/* inputs (x [, w shaped like x]): F0 times the sum of the first I0 columns of x (times w). */
void main()
{
    ITEM();
    acc_t s = acc_t(0);
    for (uint c = 0; c < I0; c++)
#ifdef IN1_COLS
        s += acc_t(in0[item * IN0_COLS + c]) * acc_t(in1[item * IN0_COLS + c]);
#else
        s += acc_t(in0[item * IN0_COLS + c]);
#endif
    outp[item] = TO(acc_t(F0) * s);
}
