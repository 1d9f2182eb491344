/* inputs (positions, pairs, shifts), or (positions, pairs, images, cells,
 * system) with the shift made here as pair_shifts does; one work-item per pair. */
void main()
{
    ITEM();
    const uint i = uint(in1[2 * item]), j = uint(in1[2 * item + 1]);
#ifdef IN4_COLS
    const uint s = uint(in4[i]);
    const TO n0 = TO(IMAGE_OFFSET(in2[item], 0)), n1 = TO(IMAGE_OFFSET(in2[item], 1)),
             n2 = TO(IMAGE_OFFSET(in2[item], 2));
    for (uint d = 0; d < 3; d++)
        outp[3 * item + d] = TO(in0[3 * j + d] - in0[3 * i + d] +
                                (n0 * in3[9 * s + d] + n1 * in3[9 * s + 3 + d] + n2 * in3[9 * s + 6 + d]));
#else
    for (uint d = 0; d < 3; d++)
        outp[3 * item + d] = TO(in0[3 * j + d] - in0[3 * i + d] + in2[3 * item + d]);
#endif
}
