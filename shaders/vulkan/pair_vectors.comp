/* inputs (positions, pairs, shifts); one work-item per pair. */
void main()
{
    ITEM();
    const uint i = uint(in1[2 * item]), j = uint(in1[2 * item + 1]);
    for (uint d = 0; d < 3; d++)
        outp[3 * item + d] = TO(in0[3 * j + d] - in0[3 * i + d] + in2[3 * item + d]);
}
