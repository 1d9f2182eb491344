/* inputs (g [P, 3], images, pairs, system); the segments are the pairs of
 * each system, in order. One work-group of REDUCE_LANES items per system and
 * cell entry (a system may have millions of pairs): each item sums every
 * REDUCE_LANES-th pair, then the group adds the partial sums in a fixed
 * tree, so the result is the same on every run. */
kernel __attribute__((reqd_work_group_size(REDUCE_LANES, 1, 1))) void KNAME(KARGS)
{
    local acc_t part[REDUCE_LANES];
    const long entry = get_group_id(0);
    const int lane = (int)get_local_id(0);
    const long s = entry / 9;
    const int a = (int)(entry % 9) / 3, b = (int)(entry % 3);
    acc_t sum = 0;
    for (int q = seg_off[s] + lane; q < seg_off[s + 1]; q += REDUCE_LANES) {
        const long p = seg_items[q];
        sum += (acc_t)IMAGE_OFFSET(in1[p], a) * in0[3 * p + b];
    }
    part[lane] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int width = REDUCE_LANES / 2; width > 0; width /= 2) {
        if (lane < width)
            part[lane] += part[lane + width];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0)
        out[entry] = (TO)part[0];
}
