/* inputs (g [A, S*R], vec, pairs, species, shifts [N_SHIFTS, 1]); one
 * work-item per pair: out [P, 3], the gradient with respect to vec. */
void main()
{
    ITEM();
    const TO eta = TO(F0), rc = TO(F1);
    const uint v = 3 * item;
    const TO d = TO(LENGTH3(in1, v));
    const TO fc = CUTOFF_FN(TO, d, rc), dfc = CUTOFF_GRAD(TO, d, rc);
    TO de_dd = TO(0);
    if (fc != 0 || dfc != 0) {
        const uint g = uint(in2[2 * item]) * IN0_COLS + uint(in3[in2[2 * item + 1]]) * N_SHIFTS;
        for (uint r = 0; r < N_SHIFTS; r++) {
            const TO t = d - TO(in4[r]);
            de_dd += TO(in0[g + r]) * TO(0.25) * exp_(-eta * t * t) * (dfc - 2 * eta * t * fc);
        }
    }
    for (uint k = 0; k < 3; k++)
        outp[v + k] = d > 0 ? de_dd * TO(in1[v + k]) / d : TO(0);
}
