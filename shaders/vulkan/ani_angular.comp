/* inputs (vec [P, 3], pairs, triples [T, 2], species, shift_theta [N_Z, 1],
 * shift_r [N_RA, 1]); F0 = zeta, F1 = eta, F2 = rc, I0 = species.
 * One work-item per atom and (radial shift, angle shift): it walks the atom's
 * triples (the segments: triples by center, in order) and keeps one sum per
 * unordered species pair. */
#define N_SLOTS (I0 * (I0 + 1) / 2)
/* Entry k of the triple's two vectors (at va and vb in in0). */
#define VA(k) TO(in0[va + (k)])
#define VB(k) TO(in0[vb + (k)])
void main()
{
    ITEM();
    const uint i = item / (N_RA * N_Z), s = (item % (N_RA * N_Z)) / N_Z, z = item % N_Z;
    const TO zeta = TO(F0), eta = TO(F1), rc = TO(F2), shift_z = TO(in4[z]), shift_r = TO(in5[s]);
    TO sum[N_SLOTS];
    for (int k = 0; k < N_SLOTS; k++)
        sum[k] = TO(0);
    for (int q = seg_off[i]; q < seg_off[i + 1]; q++) {
        const uint t = uint(seg_items[q]);
        const int a = in2[2 * t], b = in2[2 * t + 1];
        const uint va = 3 * uint(a), vb = 3 * uint(b);
        const TO da = TO(LENGTH3(in0, va)), db = TO(LENGTH3(in0, vb));
        const TO fca = CUTOFF_FN(TO, da, rc), fcb = CUTOFF_FN(TO, db, rc);
        if (fca == 0 || fcb == 0)
            continue;
        const TO cos_raw = (VA(0) * VB(0) + VA(1) * VB(1) + VA(2) * VB(2)) / (da * db);
        const TO theta = acos_(TO(ANI_COS_SCALE) * cos_raw);
        const TO angular = pow_((1 + cos_(theta - shift_z)) / 2, zeta);
        const TO u = (da + db) / 2 - shift_r;
        const TO radial = exp_(-eta * u * u) * (2 * fca * fcb);
        sum[species_pair(in3[in1[2 * a + 1]], in3[in1[2 * b + 1]], I0)] += angular * radial;
    }
    for (uint k = 0; k < N_SLOTS; k++)
        outp[i * OUT_COLS + (k * N_RA + s) * N_Z + z] = sum[k];
}
#undef N_SLOTS
#undef VA
#undef VB
