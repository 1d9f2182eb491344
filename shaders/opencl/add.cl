kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    out[item] = in0[item] + in1[item];
}
