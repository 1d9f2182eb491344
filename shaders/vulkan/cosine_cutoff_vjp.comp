/* inputs (gy, d). */
void main()
{
    ITEM();
    const TO d = TO(in1[item]), rc = TO(F0);
    outp[item] = TO(in0[item]) * CUTOFF_GRAD(TO, d, rc);
}
