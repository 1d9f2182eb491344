/* inputs (gy, y) with y = celu(x). */
void main()
{
    ITEM();
    const TO gy = TO(in0[item]), y = TO(in1[item]);
    outp[item] = y > 0 ? gy : gy * (y / TO(F0) + 1);
}
