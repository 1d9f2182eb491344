/* inputs (images [P, 1] packed, cells [S, 9], pairs, system); one work-item per pair. */
void main()
{
    ITEM();
    const uint s = uint(in3[in2[2 * item]]);
    for (uint b = 0; b < 3; b++)
        outp[3 * item + b] = IMAGE_SHIFT(in0[item], in1, 9 * s, b);
}
