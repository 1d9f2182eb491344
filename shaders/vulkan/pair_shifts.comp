/* inputs (images [P, 3], cells [S, 9], pairs, system); one work-item per pair. */
void main()
{
    ITEM();
    const uint s = uint(in3[in2[2 * item]]);
    for (uint b = 0; b < 3; b++)
        outp[3 * item + b] = TO(in0[3 * item] * in1[9 * s + b] + in0[3 * item + 1] * in1[9 * s + 3 + b] +
                                in0[3 * item + 2] * in1[9 * s + 6 + b]);
}
