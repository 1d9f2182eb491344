/* inputs (positions, pairs, shifts), or (positions, pairs, images, cells,
 * system) with the shift made here as pair_shifts does; one work-item per pair. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long i = in1[2 * item], j = in1[2 * item + 1];
#ifdef IN4_COLS
    const long s = in4[i];
    const TO n0 = (TO)IMAGE_OFFSET(in2[item], 0), n1 = (TO)IMAGE_OFFSET(in2[item], 1),
             n2 = (TO)IMAGE_OFFSET(in2[item], 2);
    for (int d = 0; d < 3; d++)
        out[3 * item + d] =
            in0[3 * j + d] - in0[3 * i + d] + (n0 * in3[9 * s + d] + n1 * in3[9 * s + 3 + d] + n2 * in3[9 * s + 6 + d]);
#else
    for (int d = 0; d < 3; d++)
        out[3 * item + d] = in0[3 * j + d] - in0[3 * i + d] + in2[3 * item + d];
#endif
}
