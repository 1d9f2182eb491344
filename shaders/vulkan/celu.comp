void main()
{
    ITEM();
    const TO x = TO(in0[item]), alpha = TO(F0);
    outp[item] = x > 0 ? x : alpha * expm1_(x / alpha);
}
