/* inputs (images [P, 3], cells [S, 9], pairs, system); one work-item per pair. */
kernel void KNAME(KARGS)
{
    ITEM();
    const long s = in3[in2[2 * item]];
    for (int b = 0; b < 3; b++)
        out[3 * item + b] = in0[3 * item] * in1[9 * s + b] + in0[3 * item + 1] * in1[9 * s + 3 + b] +
                            in0[3 * item + 2] * in1[9 * s + 6 + b];
}
