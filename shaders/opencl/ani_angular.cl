/* inputs (vec [P, 3], pairs, triples [T, 2], species, shift_theta [N_Z, 1],
 * shift_r [N_RA, 1]); F0 = zeta, F1 = eta, F2 = rc, I0 = species.
 * One work-item per atom and (radial shift, angle shift): it walks the atom's
 * triples (the segments: triples by center, in order) and keeps one sum per
 * unordered species pair. */
#define N_SLOTS (I0 * (I0 + 1) / 2)
kernel void KNAME(KARGS)
{
    ITEM();
    const long i = item / (N_RA * N_Z);
    const int s = (int)(item % (N_RA * N_Z)) / N_Z, z = (int)(item % N_Z);
    const TO zeta = (TO)F0, eta = (TO)F1, rc = (TO)F2, shift_z = in4[z], shift_r = in5[s];
    TO sum[N_SLOTS];
    for (int k = 0; k < N_SLOTS; k++)
        sum[k] = 0;
    for (int q = seg_off[i]; q < seg_off[i + 1]; q++) {
        const long t = seg_items[q], a = in2[2 * t], b = in2[2 * t + 1];
        const global T0 *va = in0 + 3 * a, *vb = in0 + 3 * b;
        const TO da = (TO)LENGTH3(va), db = (TO)LENGTH3(vb);
        const TO fca = CUTOFF_FN(TO, da, rc), fcb = CUTOFF_FN(TO, db, rc);
        if (fca == 0 || fcb == 0)
            continue;
        const TO cos_raw = (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2]) / (da * db);
        const TO theta = acos((TO)0.95 * cos_raw);
        const TO angular = pow((1 + cos(theta - shift_z)) / 2, zeta);
        const TO u = (da + db) / 2 - shift_r;
        const TO radial = exp(-eta * u * u) * (2 * fca * fcb);
        sum[species_pair(in3[in1[2 * a + 1]], in3[in1[2 * b + 1]], I0)] += angular * radial;
    }
    for (int k = 0; k < N_SLOTS; k++)
        out[i * OUT_COLS + (k * N_RA + s) * N_Z + z] = sum[k];
}
#undef N_SLOTS
