kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const global T0 *v = in0 + 3 * item;
    out[item] = (TO)LENGTH3(v);
}
