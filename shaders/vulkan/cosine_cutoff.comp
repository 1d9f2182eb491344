void main()
{
    ITEM();
    const TO d = TO(in0[item]), rc = TO(F0);
    outp[item] = CUTOFF_FN(TO, d, rc);
}
