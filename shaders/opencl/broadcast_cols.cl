kernel void KNAME(KARGS)
{
    ITEM();
    out[item] = (TO)F0 * in0[item / OUT_COLS];
}
