kernel void KNAME(KARGS)
{
    ITEM();
    out[item] = in0[item] + in1[item];
}
