/* inputs (images [P, 1] packed, cells [S, 9], pairs, system); one work-item per pair. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const long s = in3[in2[2 * item]];
    for (int b = 0; b < 3; b++)
        out[3 * item + b] = IMAGE_SHIFT(in0[item], in1, 9 * s, b);
}
