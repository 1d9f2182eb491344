/* inputs (gy, d). */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    out[item] = in0[item] * CUTOFF_GRAD(TO, in1[item], (TO)F0);
}
