void main()
{
    ITEM();
    outp[item] = TO(F0) * TO(in0[item]);
}
