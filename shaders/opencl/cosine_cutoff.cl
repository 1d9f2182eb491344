kernel void KNAME(KARGS)
{
    ITEM();
    out[item] = CUTOFF_FN(TO, in0[item], (TO)F0);
}
