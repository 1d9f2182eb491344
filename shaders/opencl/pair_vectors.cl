/* inputs (positions, pairs, shifts), or (positions, pairs, images, cells,
 * system) with the shift made here as pair_shifts does; one work-item per pair. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
#ifdef IN4_COLS
    PAIR_VECTOR_OF_IMAGES(out, in0, in1, in2, in3, in4, item);
#else
    const long i = in1[2 * item], j = in1[2 * item + 1];
    for (int d = 0; d < 3; d++)
        out[3 * item + d] = in0[3 * j + d] - in0[3 * i + d] + in2[3 * item + d];
#endif
}
