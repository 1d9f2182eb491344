void main()
{
    ITEM();
    outp[item] = TO(F0);
}
