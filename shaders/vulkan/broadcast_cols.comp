void main()
{
    ITEM();
    outp[item] = item % OUT_COLS < I0 ? TO(F0) * TO(in0[item / OUT_COLS]) : TO(0);
}
