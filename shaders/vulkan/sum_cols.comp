/* F0 times the sum of the first I0 columns of x. */
void main()
{
    ITEM();
    acc_t s = acc_t(0);
    for (uint c = 0; c < I0; c++)
        s += acc_t(in0[item * IN0_COLS + c]);
    outp[item] = TO(acc_t(F0) * s);
}
