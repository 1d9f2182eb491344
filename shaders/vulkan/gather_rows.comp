/* The output type may differ from the input's (converted). */
void main()
{
    ITEM();
    const uint r = item / OUT_COLS, c = item % OUT_COLS;
    outp[item] = TO(in0[uint(in1[r]) * OUT_COLS + c]);
}
