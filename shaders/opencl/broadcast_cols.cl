kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    out[item] = item % OUT_COLS < I0 ? (TO)F0 * in0[item / OUT_COLS] : (TO)0;
}
