/* inputs (positions, pairs, shifts), or (positions, pairs, images, cells,
 * system) with the shift made here as pair_shifts does; one work-item per pair. */
void main()
{
    ITEM();
    const uint i = uint(in1[2 * item]), j = uint(in1[2 * item + 1]);
    for (uint d = 0; d < 3; d++) {
#ifdef IN4_COLS
        const TO shift = IMAGE_SHIFT(in2[item], in3, 9 * uint(in4[i]), d);
#else
        const TO shift = TO(in2[3 * item + d]);
#endif
        outp[3 * item + d] = TO(in0[3 * j + d] - in0[3 * i + d] + shift);
    }
}
