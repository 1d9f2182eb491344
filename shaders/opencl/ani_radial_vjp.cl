/* inputs (g [A, S*R], vec, pairs, species, shifts [N_SHIFTS, 1]); one
 * work-item per pair: out [P, 3], the gradient with respect to vec. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    TO grad[3];
    RADIAL_PAIR_GRADIENT(in0, IN0_COLS, in1, in2, in3, in4, item, grad);
    for (int k = 0; k < 3; k++)
        out[3 * item + k] = grad[k];
}
