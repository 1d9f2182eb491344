kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const TO x = in0[item], alpha = (TO)F0;
    out[item] = x > 0 ? x : alpha * expm1(x / alpha);
}
