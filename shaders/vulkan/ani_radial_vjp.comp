/* inputs (g [A, S*R], vec, pairs, species, shifts [N_SHIFTS, 1]); one
 * work-item per pair: out [P, 3], the gradient with respect to vec. */
void main()
{
    ITEM();
    TO grad[3];
    RADIAL_PAIR_GRADIENT(in0, IN0_COLS, in1, in2, in3, in4, item, grad)
    for (uint k = 0; k < 3; k++)
        outp[3 * item + k] = grad[k];
}
