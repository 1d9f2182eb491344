kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    out[item] = CUTOFF_FN(TO, in0[item], (TO)F0);
}
