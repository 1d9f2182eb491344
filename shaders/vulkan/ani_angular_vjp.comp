/* inputs (g [A, ...], vec, pairs, triples, species, shift_theta [N_Z, 1],
 * shift_r [N_RA, 1]), attrs as the forward op; out [P, 3], the gradient with
 * respect to vec. One output per pair, its lanes (lowering.h) walking the
 * triples that name this pair: each adds its derivative with respect to
 * this side's vector. The segments list the entries 2t + side of the
 * flattened triples; with I1 (the triples are pair_triples of the pairs)
 * they follow from the run of pairs with this pair's center instead:
 * triples (b, p) for the pairs b before p, then (p, c) for the pairs c
 * after it. */
/* Entry k of the triple's two vectors (at va and vb in in1). */
#define VA(k) TO(in1[va + (k)])
#define VB(k) TO(in1[vb + (k)])
/* Moves `end` (run_first back, dir -1, or run_end on, dir 1) past the
 * pairs with this pair's center, RUN_WINDOW entries a step from `entry`:
 * a step's loads do not wait on each other, where a walk of one entry a
 * step waits on every load in turn. -1 (no center) marks entries out of
 * range. */
#define RUN_WINDOW 8
#define RUN_WALK(end, entry, dir)                                                     \
    for (int step = live ? RUN_WINDOW : 0; step == RUN_WINDOW; end += (dir)*step) {   \
        int centers[RUN_WINDOW];                                                      \
        [[unroll]] for (int k = 0; k < RUN_WINDOW; k++) {                             \
            const int e = int(entry) + (dir)*k;                                       \
            centers[k] = e >= 0 && uint(e) < n_outputs ? in2[2 * e] : -1;             \
        }                                                                             \
        bool same = true;                                                             \
        step = 0;                                                                     \
        [[unroll]] for (int k = 0; k < RUN_WINDOW; k++) {                             \
            same = same && centers[k] == center_of_item;                              \
            step += same ? 1 : 0;                                                     \
        }                                                                             \
    }
shared acc_t part[3 * SUM_GROUP];
void main()
{
    LANES_ITEM();
    const TO zeta = TO(F0), eta = TO(F1), rc = TO(F2);
    acc_t grad[3] = acc_t[3](acc_t(0), acc_t(0), acc_t(0));
#if I1
    /* The run of pairs with this pair's center. */
    const int center_of_item = live ? in2[2 * item] : -1;
    int run_first = int(item), run_end = live ? int(item) + 1 : int(item);
    RUN_WALK(run_first, run_first - 1, -1)
    RUN_WALK(run_end, run_end, 1)
    for (uint other = uint(run_first) + lane; other < uint(run_end); other += pc.lanes) {
        if (other == item)
            continue;
        const bool second = other < item; /* this pair is the triple's second */
        const uint a = second ? other : item, b = second ? item : other;
#else
    const int first = live ? seg_off[item] : 0, last = live ? seg_off[item + 1] : 0;
    for (int q = first + int(lane); q < last; q += int(pc.lanes)) {
        const bool second = (seg_items[q] & 1) != 0;
        const uint t = uint(seg_items[q] >> 1);
        const uint a = uint(in3[2 * t]), b = uint(in3[2 * t + 1]);
#endif
        const uint va = 3 * a, vb = 3 * b;
        const TO da = TO(LENGTH3(in1, va)), db = TO(LENGTH3(in1, vb));
        const TO fca = CUTOFF_FN(TO, da, rc), fcb = CUTOFF_FN(TO, db, rc);
        if (fca == 0 || fcb == 0)
            continue;
        const TO cos_raw = (VA(0) * VB(0) + VA(1) * VB(1) + VA(2) * VB(2)) / (da * db);
        const TO theta = acos_(TO(ANI_COS_SCALE) * cos_raw);
        const uint center = uint(in2[2 * a]);
        const int slot = species_pair(in4[in2[2 * a + 1]], in4[in2[2 * b + 1]], I0);
        /* The angular block is g's last columns (g may be the whole AEV's). */
        const uint g_block = center * IN0_COLS + (IN0_COLS - I0 * (I0 + 1) / 2 * N_RA * N_Z) + uint(slot) * N_RA * N_Z;
        /* Sums over the block of the gradient times the angular factor A_z,
         * its theta-derivative A'_z, the radial factor B_r and its derivative. */
        TO a_z[N_Z], da_z[N_Z];
        [[unroll]] for (uint z = 0; z < N_Z; z++) {
            const TO phase = theta - TO(in5[z]);
            const TO base = (1 + cos_(phase)) / 2;
            a_z[z] = pow_(base, zeta);
            /* zeta base^(zeta - 1) as zeta base^zeta / base: one pow a term, not two */
            da_z[z] = base > 0 ? zeta * (a_z[z] / base) * (-sin_(phase) / 2) : TO(0);
        }
        const TO mean_d = (da + db) / 2;
        TO s_ab = TO(0), s_dtheta = TO(0), s_dmean = TO(0);
        for (uint r = 0; r < N_RA; r++) {
            const TO u = mean_d - TO(in6[r]);
            const TO b_r = exp_(-eta * u * u), db_r = -2 * eta * u * b_r;
            const uint g = g_block + r * N_Z;
            TO g_a = TO(0), g_da = TO(0);
            [[unroll]] for (uint z = 0; z < N_Z; z++) {
                g_a += TO(in0[g + z]) * a_z[z];
                g_da += TO(in0[g + z]) * da_z[z];
            }
            s_ab += g_a * b_r;
            s_dtheta += g_da * b_r;
            s_dmean += g_a * db_r;
        }
        const TO fcc = 2 * fca * fcb;
        const TO c95 = TO(ANI_COS_SCALE) * cos_raw;
        const TO de_dcos = fcc * s_dtheta * (-TO(ANI_COS_SCALE) / sqrt(1 - c95 * c95));
        const TO inv_dadb = 1 / (da * db);
        if (!second) {
            const TO de_dda = fcc * s_dmean / 2 + 2 * CUTOFF_GRAD(TO, da, rc) * fcb * s_ab;
            for (uint k = 0; k < 3; k++)
                grad[k] += de_dda * (VA(k) / da) + de_dcos * (VB(k) * inv_dadb - cos_raw * VA(k) / (da * da));
        } else {
            const TO de_ddb = fcc * s_dmean / 2 + 2 * fca * CUTOFF_GRAD(TO, db, rc) * s_ab;
            for (uint k = 0; k < 3; k++)
                grad[k] += de_ddb * (VB(k) / db) + de_dcos * (VA(k) * inv_dadb - cos_raw * VB(k) / (db * db));
        }
    }
    LANES_SUM(part, 3, grad);
    if (live && lane == 0)
        for (uint k = 0; k < 3; k++)
            outp[3 * item + k] = TO(grad[k]);
}
#undef VA
#undef VB
