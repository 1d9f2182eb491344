/* inputs (g [P, 3], pairs), or two such couples (two lists, with their
 * segments seg_ and seg2_), or (g, pairs, gy, pairs2, vec2, species,
 * shifts2): the second list's g the radial features' gradient, made here
 * for each side of a pair (core/ops.h). One output per atom, its lanes
 * (lowering.h) walking the segments: the entries 2p + side of the
 * flattened pair array that name this atom. Side 1 (the neighbour) adds g,
 * side 0 (the center) subtracts it. PLUS_EPI: an add folded in (lowering.c). */
#define WALK_SIDES(PAIR_GRADIENT, OFF, ITEMS)                                                     \
    for (int q = (live ? OFF[item] : 0) + lane, last = live ? OFF[item + 1] : 0; q < last;        \
         q += lanes) {                                                                            \
        const int e = ITEMS[q];                                                                   \
        const long p = e >> 1;                                                                    \
        const acc_t sign = (e & 1) ? 1 : -1;                                                      \
        TO gp[3];                                                                                 \
        PAIR_GRADIENT(p, gp);                                                                     \
        for (int d = 0; d < 3; d++)                                                               \
            g[d] += sign * gp[d];                                                                 \
    }
#define LISTED(G, p, gp)                                                                          \
    for (int d_ = 0; d_ < 3; d_++)                                                                \
        (gp)[d_] = (G)[3 * (p) + d_]
#define FIRST(p, gp) LISTED(in0, p, gp)
#ifdef N_SHIFTS
#define SECOND(p, gp) RADIAL_PAIR_GRADIENT(in2, IN2_COLS, in4, in3, in5, in6, p, gp)
#else
#define SECOND(p, gp) LISTED(in2, p, gp)
#endif

kernel __attribute__((reqd_work_group_size(SUM_GROUP, 1, 1))) void KNAME(KARGS)
{
    KTENSORS
    local acc_t part[3 * SUM_GROUP];
    LANES_ITEM();
    acc_t g[3] = {0, 0, 0};
    WALK_SIDES(FIRST, seg_off, seg_items)
#ifdef IN2_COLS
    WALK_SIDES(SECOND, seg2_off, seg2_items)
#endif
    LANES_SUM(part, 3, g);
    if (live && lane == 0)
        for (int d = 0; d < 3; d++)
            out[3 * item + d] = PLUS_EPI(g[d], 3 * item + d);
}
#undef WALK_SIDES
#undef LISTED
#undef FIRST
#undef SECOND
