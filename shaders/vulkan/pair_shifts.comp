/* inputs (images [P, 1] packed, cells [S, 9], pairs, system); one work-item per pair. */
void main()
{
    ITEM();
    const uint s = uint(in3[in2[2 * item]]);
    const TO n0 = TO(IMAGE_OFFSET(in0[item], 0)), n1 = TO(IMAGE_OFFSET(in0[item], 1)),
             n2 = TO(IMAGE_OFFSET(in0[item], 2));
    for (uint b = 0; b < 3; b++)
        outp[3 * item + b] = TO(n0 * in1[9 * s + b] + n1 * in1[9 * s + 3 + b] + n2 * in1[9 * s + 6 + b]);
}
