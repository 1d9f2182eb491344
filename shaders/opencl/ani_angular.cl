/* inputs (vec [P, 3], pairs, triples [T, 2], species, shift_theta [N_Z, 1],
 * shift_r [N_RA, 1][, radial_vec [Pr, 3], radial_pairs, radial_shifts
 * [N_SHIFTS, 1]]); F0 = zeta, F1 = eta, F2 = rc, I0 = species, with the
 * radial features F3 = their eta, F4 = their rc; out = [radial | angular].
 * A work-group of GROUP_LANES items per atom walks the atom's triples (the
 * segments: triples by center, in order), ANGULAR_CHUNK at a time. First
 * each item works out one triple: its species pair, its N_Z angular and
 * N_RA radial factors, into local memory, so that every factor is computed
 * once per triple rather than once per feature. Then each item adds the
 * chunk's products to the features it owns (columns c = lane, lane +
 * GROUP_LANES, ... of the radial-shift-major (s, z) block), one sum per
 * unordered species pair, in triple order.
 * The radial features come first: RADIAL_SPLIT items a shift, each taking
 * every RADIAL_SPLIT-th of the atom's radial pairs (seg2: pairs by center)
 * with one sum per neighbour species, added in local memory in split order.
 * The pairs come RADIAL_CHUNK at a time (a whole number of splits, so each
 * item meets its pairs in list order), each item loading one pair's
 * distance, cutoff and neighbour species into local memory: one round of
 * dependent loads a chunk, not one a pair.
 * MAKES_VECTORS: the group also makes the vectors of its atom's pairs (in0,
 * in6: vectors_in_aev.h) from positions, cells, system, images (the angular
 * list's) and images2 (the radial list's), as pair_vectors of images does:
 * each radial pair's as it loads it, the angular pairs' first. The atom's
 * angular pairs run from its first triple's first pair to its last
 * triple's second (the triples are pair_triples of the pairs, in order). */
#define N_SLOTS (I0 * (I0 + 1) / 2)
#define N_COLS (N_RA * N_Z)
#define PER_LANE ((N_COLS + GROUP_LANES - 1) / GROUP_LANES)
#define HEAD_COLS (OUT_COLS - N_SLOTS * N_COLS) /* the radial features' */
#define RADIAL_CHUNK (GROUP_LANES / RADIAL_SPLIT * RADIAL_SPLIT)
#if ANGULAR_SUMS_LOCAL
#define SUM(k, slot) sums[(slot) * N_COLS + lane + (k) * GROUP_LANES]
#else
#define SUM(k, slot) sums[k][slot]
#endif
kernel __attribute__((reqd_work_group_size(GROUP_LANES, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local TO angular[ANGULAR_CHUNK][N_Z], radial[ANGULAR_CHUNK][N_RA];
    local int slot_of[ANGULAR_CHUNK];
#if HEAD_COLS > 0
    local TO pair_d[RADIAL_CHUNK], pair_fc[RADIAL_CHUNK];
    local int pair_species[RADIAL_CHUNK];
#if RADIAL_SPLIT > 1
    local TO radial_part[RADIAL_SPLIT * N_SHIFTS * I0];
#endif
#endif
#if ANGULAR_SUMS_LOCAL
    local TO sums[N_SLOTS * N_COLS];
#else
    TO sums[PER_LANE][N_SLOTS];
#endif
    const long i = get_group_id(0);
    const int lane = (int)get_local_id(0);
    const TO zeta = (TO)F0, eta = (TO)F1, rc = (TO)F2;
#if HEAD_COLS > 0
    {
        const int r = lane % N_SHIFTS, part = lane / N_SHIFTS;
        const TO shift = in8[r], eta_r = (TO)F3, rc_r = (TO)F4;
        TO sum[I0];
#pragma unroll
        for (int s = 0; s < I0; s++)
            sum[s] = 0;
        const int last_pair = seg2_off[i + 1];
        for (int q0 = seg2_off[i]; q0 < last_pair; q0 += RADIAL_CHUNK) {
            const int m = min(RADIAL_CHUNK, last_pair - q0);
            if (lane < m) {
                const long p = seg2_items[q0 + lane];
#if MAKES_VECTORS
                PAIR_VECTOR_OF_IMAGES(in6, positions, in7, images2, cells, system, p);
#endif
                const TO d = (TO)LENGTH3(in6 + 3 * p);
                pair_d[lane] = d;
                pair_fc[lane] = CUTOFF_FN(TO, d, rc_r);
                pair_species[lane] = in3[in7[2 * p + 1]];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int j = part < RADIAL_SPLIT ? part : m; j < m; j += RADIAL_SPLIT) {
                const TO fc = pair_fc[j];
                if (fc == 0)
                    continue;
                const TO t = pair_d[j] - shift, term = (TO)0.25 * exp(-eta_r * t * t) * fc;
                const int species = pair_species[j];
#pragma unroll
                for (int s = 0; s < I0; s++) /* unrolled: the sums stay in registers */
                    sum[s] += s == species ? term : (TO)0;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#if RADIAL_SPLIT > 1
        if (part < RADIAL_SPLIT)
#pragma unroll
            for (int s = 0; s < I0; s++)
                radial_part[(part * I0 + s) * N_SHIFTS + r] = sum[s];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int c = lane; c < HEAD_COLS; c += GROUP_LANES) {
            TO total = 0;
            for (int k = 0; k < RADIAL_SPLIT; k++)
                total += radial_part[k * HEAD_COLS + c];
            out[i * OUT_COLS + c] = total;
        }
#else
        if (part == 0)
#pragma unroll
            for (int s = 0; s < I0; s++)
                out[i * OUT_COLS + s * N_SHIFTS + r] = sum[s];
#endif
    }
#endif
    for (int k = 0; k < PER_LANE; k++)
        if (lane + k * GROUP_LANES < N_COLS)
            for (int slot = 0; slot < N_SLOTS; slot++)
                SUM(k, slot) = 0;
    const long first = seg_off[i], last = seg_off[i + 1];
#if MAKES_VECTORS
    if (last > first) {
        const long last_angular_pair = in2[2 * seg_items[last - 1] + 1];
        for (long p = in2[2 * seg_items[first]] + lane; p <= last_angular_pair; p += GROUP_LANES)
            PAIR_VECTOR_OF_IMAGES(in0, positions, in1, images, cells, system, p);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
#endif
    for (long q0 = first; q0 < last; q0 += ANGULAR_CHUNK) {
        const int m = (int)min((long)ANGULAR_CHUNK, last - q0);
        if (lane < m) {
            const long t = seg_items[q0 + lane], a = in2[2 * t], b = in2[2 * t + 1];
            const global T0 *va = in0 + 3 * a, *vb = in0 + 3 * b;
            const TO da = (TO)LENGTH3(va), db = (TO)LENGTH3(vb);
            const TO fca = CUTOFF_FN(TO, da, rc), fcb = CUTOFF_FN(TO, db, rc);
            const int inside = fca != 0 && fcb != 0;
            /* A triple beyond the cutoff adds nothing (zero factors, not NaN). */
            const TO cos_raw = inside ? (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2]) / (da * db) : 0;
            const TO theta = acos((TO)0.95 * cos_raw);
            for (int z = 0; z < N_Z; z++)
                angular[lane][z] = inside ? pow((1 + cos(theta - in4[z])) / 2, zeta) : 0;
            const TO mean_d = (da + db) / 2;
            for (int s = 0; s < N_RA; s++) {
                const TO u = mean_d - in5[s];
                radial[lane][s] = inside ? exp(-eta * u * u) * (2 * fca * fcb) : 0;
            }
            slot_of[lane] = species_pair(in3[in1[2 * a + 1]], in3[in1[2 * b + 1]], I0);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < PER_LANE; k++) {
            const int c = lane + k * GROUP_LANES;
            if (c >= N_COLS)
                break;
            const int s = c / N_Z, z = c % N_Z;
            for (int j = 0; j < m; j++)
                SUM(k, slot_of[j]) += angular[j][z] * radial[j][s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int k = 0; k < PER_LANE; k++) {
        const int c = lane + k * GROUP_LANES;
        if (c >= N_COLS)
            break;
        for (int slot = 0; slot < N_SLOTS; slot++)
            out[i * OUT_COLS + HEAD_COLS + slot * N_COLS + c] = SUM(k, slot);
    }
}
#undef N_SLOTS
#undef N_COLS
#undef PER_LANE
#undef HEAD_COLS
#undef RADIAL_CHUNK
#undef SUM
