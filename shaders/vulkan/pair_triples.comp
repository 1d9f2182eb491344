/* inputs (pairs [P, 2], first [P, 1]); one item per pair a writes (a, c)
 * for each later pair c of its center. first[] (core/batch.c) keeps every
 * write inside the output. */
void main()
{
    ITEM();
    const int center = in0[2 * item];
    uint t = uint(in1[item]);
    for (uint c = item + 1; c < pc.n_items && in0[2 * c] == center; c++, t++) {
        outp[2 * t] = int(item);
        outp[2 * t + 1] = int(c);
    }
}
