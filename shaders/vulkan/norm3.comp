void main()
{
    ITEM();
    outp[item] = TO(LENGTH3(in0, 3 * item));
}
