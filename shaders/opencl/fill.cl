kernel void KNAME(KARGS)
{
    ITEM();
    out[item] = (TO)F0;
}
