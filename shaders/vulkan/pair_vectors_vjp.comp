/* inputs (g [P, 3], pairs), or two such couples (two lists, with their
 * segments seg_ and seg2_), or (g, pairs, gy, pairs2, vec2, species,
 * shifts2): the second list's g the radial features' gradient, made here
 * for each side of a pair (core/ops.h). One output per atom, its lanes
 * (lowering.h) walking the segments: the entries 2p + side of the
 * flattened pair array that name this atom. Side 1 (the neighbour) adds g,
 * side 0 (the center) subtracts it. PLUS_EPI: an add folded in (lowering.c). */
#define WALK_SIDES(PAIR_GRADIENT, OFF, ITEMS)                                                           \
    for (int q = (live ? OFF[item] : 0) + int(lane), last = live ? OFF[item + 1] : 0; q < last;         \
         q += int(pc.lanes)) {                                                                          \
        const int e = ITEMS[q];                                                                         \
        const uint p = uint(e >> 1);                                                                    \
        const acc_t sign = (e & 1) != 0 ? acc_t(1) : acc_t(-1);                                         \
        TO gp[3];                                                                                       \
        PAIR_GRADIENT(p, gp)                                                                            \
        for (uint d = 0; d < 3; d++)                                                                    \
            g[d] += sign * acc_t(gp[d]);                                                                \
    }
#define LISTED(G, p, gp)                                                                                \
    for (uint d_ = 0; d_ < 3; d_++)                                                                     \
        gp[d_] = TO(G[3 * (p) + d_]);
#define FIRST(p, gp) LISTED(in0, p, gp)
#ifdef N_SHIFTS
#define SECOND(p, gp) RADIAL_PAIR_GRADIENT(in2, IN2_COLS, in4, in3, in5, in6, p, gp)
#else
#define SECOND(p, gp) LISTED(in2, p, gp)
#endif

shared acc_t part[3 * SUM_GROUP];
void main()
{
    LANES_ITEM();
    acc_t g[3] = acc_t[3](acc_t(0), acc_t(0), acc_t(0));
    WALK_SIDES(FIRST, seg_off, seg_items)
#ifdef IN2_COLS
    WALK_SIDES(SECOND, seg2_off, seg2_items)
#endif
    LANES_SUM(part, 3, g);
    if (live && lane == 0)
        for (uint d = 0; d < 3; d++)
            outp[3 * item + d] = PLUS_EPI(g[d], 3 * item + d);
}
