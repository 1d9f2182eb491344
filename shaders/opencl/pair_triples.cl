/* inputs (pairs [P, 2], first [P, 1]); one item per pair a writes (a, c)
 * for each later pair c of its center. first[] (core/batch.c) keeps every
 * write inside the output. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const int center = in0[2 * item];
    long t = in1[item];
    for (long c = item + 1; c < n_items && in0[2 * c] == center; c++, t++) {
        out[2 * t] = (int)item;
        out[2 * t + 1] = (int)c;
    }
}
