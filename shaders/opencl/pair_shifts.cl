/* inputs (images [P, 1] packed, cells [S, 9], pairs, system); one work-item per pair. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long s = in3[in2[2 * item]];
    const TO n0 = (TO)IMAGE_OFFSET(in0[item], 0), n1 = (TO)IMAGE_OFFSET(in0[item], 1),
             n2 = (TO)IMAGE_OFFSET(in0[item], 2);
    for (int b = 0; b < 3; b++)
        out[3 * item + b] = n0 * in1[9 * s + b] + n1 * in1[9 * s + 3 + b] + n2 * in1[9 * s + 6 + b];
}
