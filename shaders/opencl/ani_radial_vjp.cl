/* inputs (g [A, S*R], vec, pairs, species, shifts [N_SHIFTS, 1]); one
 * work-item per pair: out [P, 3], the gradient with respect to vec. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    const TO eta = (TO)F0, rc = (TO)F1;
    const global T1 *v = in1 + 3 * item;
    const TO d = (TO)LENGTH3(v);
    const TO fc = CUTOFF_FN(TO, d, rc), dfc = CUTOFF_GRAD(TO, d, rc);
    TO de_dd = 0;
    if (fc != 0 || dfc != 0) {
        const global T0 *g = in0 + (long)in2[2 * item] * IN0_COLS + (long)in3[in2[2 * item + 1]] * N_SHIFTS;
        for (int r = 0; r < N_SHIFTS; r++) {
            const TO t = d - in4[r];
            de_dd += g[r] * (TO)0.25 * exp(-eta * t * t) * (dfc - 2 * eta * t * fc);
        }
    }
    for (int k = 0; k < 3; k++)
        out[3 * item + k] = d > 0 ? de_dd * v[k] / d : 0;
}
