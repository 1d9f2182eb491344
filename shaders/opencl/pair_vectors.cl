/* inputs (positions, pairs, shifts), or (positions, pairs, images, cells,
 * system) with the shift made here as pair_shifts does; one work-item per pair. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long i = in1[2 * item], j = in1[2 * item + 1];
    for (int d = 0; d < 3; d++) {
#ifdef IN4_COLS
        const TO shift = IMAGE_SHIFT(in2[item], in3, 9 * (long)in4[i], d);
#else
        const TO shift = in2[3 * item + d];
#endif
        out[3 * item + d] = in0[3 * j + d] - in0[3 * i + d] + shift;
    }
}
