/* inputs (gy [P, 1], v [P, 3]). */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const global T1 *v = in1 + 3 * item;
    const TO len = (TO)LENGTH3(v);
    for (int d = 0; d < 3; d++)
        out[3 * item + d] = len > 0 ? in0[item] * v[d] / len : 0;
}
