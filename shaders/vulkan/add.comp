void main()
{
    ITEM();
    outp[item] = TO(in0[item] + in1[item]);
}
