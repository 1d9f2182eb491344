/* inputs (positions, pairs, shifts); one work-item per pair. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long i = in1[2 * item], j = in1[2 * item + 1];
    for (int d = 0; d < 3; d++)
        out[3 * item + d] = in0[3 * j + d] - in0[3 * i + d] + in2[3 * item + d];
}
