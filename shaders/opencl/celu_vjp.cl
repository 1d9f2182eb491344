/* inputs (gy, y) with y = celu(x). */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const TO gy = in0[item], y = in1[item];
    out[item] = y > 0 ? gy : gy * (y / (TO)F0 + 1);
}
