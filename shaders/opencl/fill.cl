kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    out[item] = (TO)F0;
}
