/* inputs (vec [P, 3], pairs, triples [T, 2], species, shift_theta [N_Z, 1],
 * shift_r [N_RA, 1][, radial_vec [Pr, 3], radial_pairs, radial_shifts
 * [N_SHIFTS, 1]]); F0 = zeta, F1 = eta, F2 = rc, I0 = species, with the
 * radial features F3 = their eta, F4 = their rc; out = [radial | angular].
 * A work-group of GROUP_LANES items per atom walks the atom's triples (the
 * segments: triples by center, in order), ANGULAR_CHUNK at a time. First
 * each item works out one triple: its species pair, its N_Z angular and
 * N_RA radial factors, into shared memory, so that every factor is computed
 * once per triple rather than once per feature. Then each item adds the
 * chunk's products to the features it owns (columns c = lane, lane +
 * GROUP_LANES, ... of the radial-shift-major (s, z) block), one sum per
 * unordered species pair, in triple order.
 * The radial features come first: RADIAL_SPLIT items a shift, each taking
 * every RADIAL_SPLIT-th of the atom's radial pairs (seg2: pairs by center)
 * with one sum per neighbour species, added in shared memory in split order.
 * The pairs come RADIAL_CHUNK at a time (a whole number of splits, so each
 * item meets its pairs in list order), each item loading one pair's
 * distance, cutoff and neighbour species into shared memory: one round of
 * dependent loads a chunk, not one a pair. */
#define N_SLOTS (I0 * (I0 + 1) / 2)
#define N_COLS (N_RA * N_Z)
#define PER_LANE ((N_COLS + GROUP_LANES - 1) / GROUP_LANES)
#define HEAD_COLS (OUT_COLS - N_SLOTS * N_COLS) /* the radial features' */
#define RADIAL_CHUNK (GROUP_LANES / RADIAL_SPLIT * RADIAL_SPLIT)
/* Entry k of the triple's two vectors (at va and vb in in0). */
#define VA(k) TO(in0[va + (k)])
#define VB(k) TO(in0[vb + (k)])
shared TO angular[ANGULAR_CHUNK][N_Z];
shared TO radial[ANGULAR_CHUNK][N_RA];
shared int slot_of[ANGULAR_CHUNK];
#if HEAD_COLS > 0
shared TO pair_d[RADIAL_CHUNK], pair_fc[RADIAL_CHUNK];
shared int pair_species[RADIAL_CHUNK];
#if RADIAL_SPLIT > 1
shared TO radial_part[RADIAL_SPLIT * N_SHIFTS * I0];
#endif
#endif
#if ANGULAR_SUMS_LOCAL
shared TO sums[N_SLOTS * N_COLS];
#define SUM(k, slot) sums[(slot) * N_COLS + lane + (k) * GROUP_LANES]
#else
#define SUM(k, slot) sums[k][slot]
#endif
void main()
{
#if !ANGULAR_SUMS_LOCAL
    TO sums[PER_LANE][N_SLOTS];
#endif
    const uint i = (pc.base + gl_GlobalInvocationID.x) / GROUP_LANES, lane = gl_LocalInvocationID.x;
    const TO zeta = TO(F0), eta = TO(F1), rc = TO(F2);
#if HEAD_COLS > 0
    {
        const uint r = lane % N_SHIFTS, part = lane / N_SHIFTS;
        const TO shift = TO(in8[r]), eta_r = TO(F3), rc_r = TO(F4);
        TO sum[I0];
        [[unroll]] for (int s = 0; s < I0; s++)
            sum[s] = TO(0);
        const int last_pair = seg2_off[i + 1];
        for (int q0 = seg2_off[i]; q0 < last_pair; q0 += RADIAL_CHUNK) {
            const int m = min(RADIAL_CHUNK, last_pair - q0);
            if (int(lane) < m) {
                const uint p = uint(seg2_items[q0 + int(lane)]);
                const TO d = TO(LENGTH3(in6, 3 * p));
                pair_d[lane] = d;
                pair_fc[lane] = CUTOFF_FN(TO, d, rc_r);
                pair_species[lane] = in3[in7[2 * p + 1]];
            }
            barrier();
            for (int j = part < RADIAL_SPLIT ? int(part) : m; j < m; j += RADIAL_SPLIT) {
                const TO fc = pair_fc[j];
                if (fc == 0)
                    continue;
                const TO t = pair_d[j] - shift, term = TO(0.25) * exp_(-eta_r * t * t) * fc;
                const int species = pair_species[j];
                [[unroll]] for (int s = 0; s < I0; s++) /* the sums stay in registers */
                    sum[s] += s == species ? term : TO(0);
            }
            barrier();
        }
#if RADIAL_SPLIT > 1
        if (part < RADIAL_SPLIT)
            [[unroll]] for (uint s = 0; s < I0; s++)
                radial_part[(part * I0 + s) * N_SHIFTS + r] = sum[s];
        barrier();
        for (uint c = lane; c < HEAD_COLS; c += GROUP_LANES) {
            TO total = TO(0);
            for (uint k = 0; k < RADIAL_SPLIT; k++)
                total += radial_part[k * HEAD_COLS + c];
            outp[i * OUT_COLS + c] = total;
        }
#else
        if (part == 0)
            [[unroll]] for (uint s = 0; s < I0; s++)
                outp[i * OUT_COLS + s * N_SHIFTS + r] = sum[s];
#endif
    }
#endif
    for (uint k = 0; k < PER_LANE; k++)
        if (lane + k * GROUP_LANES < N_COLS)
            for (int slot = 0; slot < N_SLOTS; slot++)
                SUM(k, slot) = TO(0);
    const uint first = uint(seg_off[i]), last = uint(seg_off[i + 1]);
    for (uint q0 = first; q0 < last; q0 += ANGULAR_CHUNK) {
        const uint m = min(uint(ANGULAR_CHUNK), last - q0);
        if (lane < m) {
            const uint t = uint(seg_items[q0 + lane]);
            const int a = in2[2 * t], b = in2[2 * t + 1];
            const uint va = 3 * uint(a), vb = 3 * uint(b);
            const TO da = TO(LENGTH3(in0, va)), db = TO(LENGTH3(in0, vb));
            const TO fca = CUTOFF_FN(TO, da, rc), fcb = CUTOFF_FN(TO, db, rc);
            const bool inside = fca != 0 && fcb != 0;
            /* A triple beyond the cutoff adds nothing (zero factors, not NaN). */
            const TO cos_raw = inside ? (VA(0) * VB(0) + VA(1) * VB(1) + VA(2) * VB(2)) / (da * db) : TO(0);
            const TO theta = acos_(TO(ANI_COS_SCALE) * cos_raw);
            for (uint z = 0; z < N_Z; z++)
                angular[lane][z] = inside ? pow_((1 + cos_(theta - TO(in4[z]))) / 2, zeta) : TO(0);
            const TO mean_d = (da + db) / 2;
            for (uint s = 0; s < N_RA; s++) {
                const TO u = mean_d - TO(in5[s]);
                radial[lane][s] = inside ? exp_(-eta * u * u) * (2 * fca * fcb) : TO(0);
            }
            slot_of[lane] = species_pair(in3[in1[2 * a + 1]], in3[in1[2 * b + 1]], I0);
        }
        barrier();
        for (uint k = 0; k < PER_LANE; k++) {
            const uint c = lane + k * GROUP_LANES;
            if (c >= N_COLS)
                break;
            const uint s = c / N_Z, z = c % N_Z;
            for (uint j = 0; j < m; j++)
                SUM(k, slot_of[j]) += angular[j][z] * radial[j][s];
        }
        barrier();
    }
    for (uint k = 0; k < PER_LANE; k++) {
        const uint c = lane + k * GROUP_LANES;
        if (c >= N_COLS)
            break;
        for (int slot = 0; slot < N_SLOTS; slot++)
            outp[i * OUT_COLS + HEAD_COLS + slot * N_COLS + c] = SUM(k, slot);
    }
}
#undef N_SLOTS
#undef N_COLS
#undef PER_LANE
#undef HEAD_COLS
#undef SUM
#undef VA
#undef VB
