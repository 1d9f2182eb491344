/* inputs (g [P, 3], images, pairs, system); the segments are the pairs of
 * each system, in order. One work-group of REDUCE_LANES items per system and
 * cell entry (a system may have millions of pairs):
 * each item sums every REDUCE_LANES-th pair, then the group adds the partial
 * sums in a fixed tree, so the result is the same on every run. */
shared acc_t part[REDUCE_LANES];

void main()
{
    const uint item = pc.base + gl_GlobalInvocationID.x;
    const uint entry = item / REDUCE_LANES, lane = gl_LocalInvocationID.x;
    const uint s = entry / 9, a = (entry % 9) / 3, b = entry % 3;
    acc_t sum = acc_t(0);
    for (int q = seg_off[s] + int(lane); q < seg_off[s + 1]; q += REDUCE_LANES) {
        const uint p = uint(seg_items[q]);
        sum += acc_t(IMAGE_OFFSET(in1[p], a)) * acc_t(in0[3 * p + b]);
    }
    part[lane] = sum;
    barrier();
    for (uint width = REDUCE_LANES / 2; width > 0; width /= 2) {
        if (lane < width)
            part[lane] += part[lane + width];
        barrier();
    }
    if (lane == 0)
        outp[entry] = TO(part[0]);
}
