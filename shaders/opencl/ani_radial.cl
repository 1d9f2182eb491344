/* inputs (vec [P, 3], pairs, species, shifts [N_SHIFTS, 1]); F0 = eta, F1 = rc,
 * I0 = species. One output per atom and shift, its lanes (lowering.h) walking
 * the atom's pairs (the segments: pairs by center, in pair order); each keeps
 * one sum per neighbour species (adding zero to the others: x + 0 is x). */
kernel __attribute__((reqd_work_group_size(SUM_GROUP, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local TO part[I0 * SUM_GROUP];
    LANES_ITEM();
    const long i = item / N_SHIFTS;
    const int r = (int)(item % N_SHIFTS);
    const TO eta = (TO)F0, rc = (TO)F1, shift = in3[r];
    TO sum[I0];
#pragma unroll
    for (int s = 0; s < I0; s++)
        sum[s] = 0;
    const int first = live ? seg_off[i] : 0, last = live ? seg_off[i + 1] : 0;
    for (int q = first + lane; q < last; q += lanes) {
        const long p = seg_items[q];
        const TO d = (TO)LENGTH3(in0 + 3 * p);
        const TO fc = CUTOFF_FN(TO, d, rc);
        if (fc == 0)
            continue;
        const TO t = d - shift, term = (TO)0.25 * exp(-eta * t * t) * fc;
        const int species = in2[in1[2 * p + 1]];
#pragma unroll
        for (int s = 0; s < I0; s++) /* unrolled: the sums stay in registers */
            sum[s] += s == species ? term : (TO)0;
    }
    LANES_SUM(part, I0, sum);
    if (live && lane == 0) {
#pragma unroll
        for (int s = 0; s < I0; s++)
            out[i * OUT_COLS + s * N_SHIFTS + r] = sum[s];
    }
}
