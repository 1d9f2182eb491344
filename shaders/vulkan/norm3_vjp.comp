/* inputs (gy [P, 1], v [P, 3]). */
void main()
{
    ITEM();
    const TO len = TO(LENGTH3(in1, 3 * item));
    for (uint d = 0; d < 3; d++)
        outp[3 * item + d] = len > 0 ? TO(in0[item]) * TO(in1[3 * item + d]) / len : TO(0);
}
