/*
 * Cell-list neighbour search: the four kernels of shaders/opencl/cell_lists.cl
 * (see there and backends/common/device_cells.c), one per CELL_KERNEL value
 * (0 bin, 1 place, 2 count, 3 pairs), which the host defines after
 * "#version 450". The distance test is `precise`: the counting and the
 * writing pass must find exactly the same pairs.
 */
layout(local_size_x = 64) in;

#define SYS_REALS 28 /* H[9], rec[9], origin[3], to_bin[3], radius^2, cutoff^2 of lists 0 and 1, closest^2 */
#define SYS_INTS 8   /* nb[3], reach[3], periodic axes (bits), first bin */

layout(std430, set = 0, binding = 0) buffer ParamsB { int params[]; };
layout(std430, set = 0, binding = 1) readonly buffer PosB { vec4 pos[]; };
layout(std430, set = 0, binding = 2) readonly buffer SysFB { float sys_f[]; };
layout(std430, set = 0, binding = 3) readonly buffer SysIB { int sys_i[]; };
layout(std430, set = 0, binding = 4) buffer AtomBinsB { ivec4 atom_bins[]; };
layout(std430, set = 0, binding = 5) buffer BinEndsB { int bin_ends[]; };
layout(std430, set = 0, binding = 6) buffer SlotPosB { vec4 slot_pos[]; };
layout(std430, set = 0, binding = 7) buffer SlotShiftB { ivec4 slot_shift[]; };
layout(std430, set = 0, binding = 8) buffer CountsB { int counts[]; };
layout(std430, set = 0, binding = 9) buffer PairsB { int pairs[]; };
layout(std430, set = 0, binding = 10) buffer ImagesB { int images[]; };
layout(std430, set = 0, binding = 11) buffer Pairs0B { int pairs0[]; };
layout(std430, set = 0, binding = 12) buffer Pairs1B { int pairs1[]; };
layout(std430, set = 0, binding = 13) buffer Images0B { int images0[]; };
layout(std430, set = 0, binding = 14) buffer Images1B { int images1[]; };
layout(std430, set = 0, binding = 15) buffer TripleStartsB { int triple_starts[]; };

layout(push_constant) uniform Push {
    uint n_items;
    uint base;
} pc;

vec3 lattice(int f, ivec3 m)
{
    return vec3(m.x * sys_f[f] + m.y * sys_f[f + 3] + m.z * sys_f[f + 6],
                m.x * sys_f[f + 1] + m.y * sys_f[f + 4] + m.z * sys_f[f + 7],
                m.x * sys_f[f + 2] + m.y * sys_f[f + 5] + m.z * sys_f[f + 8]);
}

/* floor(a / b) for b > 0, dividing only non-negative numbers: GLSL leaves
 * / and % of negative operands undefined (NVIDIA's driver differs). */
int floor_div(int a, int b)
{
    return a >= 0 ? a / b : -((-a - 1) / b) - 1;
}

#if CELL_KERNEL == 2 || CELL_KERNEL == 3
#define WRITE_NOTHING 0
#define WRITE_MASTER 1
#define WRITE_LISTS 2

/* The pairs of atom a within the search radius, in stencil order: the
 * master list written from start on (at most most), or list k's from at[k]
 * on (at most room[k]), as `write` says; returns how many there are in the
 * master list (x) and within each list's cutoff (y, z). Raises params[5]
 * for a pair closer than the closest allowed and params[6] for a listed
 * pair whose images do not pack. */
ivec3 walk(int a, int write, int start, int most, ivec2 at, ivec2 room)
{
    const vec4 p = pos[a];
    const int f = SYS_REALS * int(p.w), g = SYS_INTS * int(p.w);
    const ivec4 b = atom_bins[a];
    const int nb0 = sys_i[g], nb1 = sys_i[g + 1], nb2 = sys_i[g + 2], bits = sys_i[g + 6];
    const int own = b.x - sys_i[g + 7];
    const int bi0 = own / (nb1 * nb2), bi1 = (own / nb2) % nb1, bi2 = own % nb2;
    const bool per0 = (bits & 1) != 0, per1 = (bits & 2) != 0, per2 = (bits & 4) != 0;
    const vec3 wi = p.xyz - lattice(f, b.yzw);
    const float radius2 = sys_f[f + 24], closest2 = sys_f[f + 27];
    const vec2 cut2 = vec2(sys_f[f + 25], sys_f[f + 26]);
    int found = 0;
    ivec2 listed = ivec2(0);
    for (int d0 = -sys_i[g + 3]; d0 <= sys_i[g + 3]; d0++) {
        const int e0 = bi0 + d0;
        if (!per0 && (e0 < 0 || e0 >= nb0))
            continue;
        const int m0 = per0 ? floor_div(e0, nb0) : 0, c0 = e0 - m0 * nb0;
        for (int d1 = -sys_i[g + 4]; d1 <= sys_i[g + 4]; d1++) {
            const int e1 = bi1 + d1;
            if (!per1 && (e1 < 0 || e1 >= nb1))
                continue;
            const int m1 = per1 ? floor_div(e1, nb1) : 0, c1 = e1 - m1 * nb1;
            for (int d2 = -sys_i[g + 5]; d2 <= sys_i[g + 5]; d2++) {
                const int e2 = bi2 + d2;
                if (!per2 && (e2 < 0 || e2 >= nb2))
                    continue;
                const int m2 = per2 ? floor_div(e2, nb2) : 0, c2 = e2 - m2 * nb2;
                const int cell = sys_i[g + 7] + (c0 * nb1 + c1) * nb2 + c2;
                const int lo = cell > 0 ? bin_ends[cell - 1] : 0, hi = bin_ends[cell];
                const ivec3 m = ivec3(m0, m1, m2);
                const vec3 ci = wi - lattice(f, m);
                for (int slot = lo; slot < hi; slot++) {
                    precise vec3 d = slot_pos[slot].xyz - ci;
                    precise float r2 = d.x * d.x + d.y * d.y + d.z * d.z;
                    if (r2 > radius2)
                        continue;
                    const ivec4 sj = slot_shift[slot];
                    const ivec3 n = m + b.yzw - sj.xyz;
                    if (sj.w == a && n == ivec3(0))
                        continue;
                    if (r2 < closest2)
                        params[5] = 1;
                    if (write == WRITE_MASTER && found < most) {
                        const int q = start + found;
                        pairs[2 * q] = a;
                        pairs[2 * q + 1] = sj.w;
                        images[3 * q] = n.x;
                        images[3 * q + 1] = n.y;
                        images[3 * q + 2] = n.z;
                    }
                    found++;
                    for (int k = 0; k < 2; k++) {
                        if (r2 > cut2[k])
                            continue;
                        if (any(greaterThan(abs(n), ivec3(511))))
                            params[6] = 1;
                        if (write == WRITE_LISTS && listed[k] < room[k]) {
                            const int q = at[k] + listed[k];
                            const int packed = (n.x + 512) | (n.y + 512) << 10 | (n.z + 512) << 20;
                            if (k == 0) {
                                pairs0[2 * q] = a;
                                pairs0[2 * q + 1] = sj.w;
                                images0[q] = packed;
                            } else {
                                pairs1[2 * q] = a;
                                pairs1[2 * q + 1] = sj.w;
                                images1[q] = packed;
                            }
                        }
                        listed[k]++;
                    }
                }
            }
        }
    }
    return ivec3(found, listed);
}
#endif

#if CELL_KERNEL == 3
/* Insertion sorts by j, stable (for one j the stencil order is the order
 * of n), so that a list is ordered by i, j, n as on the host. GLSL has no
 * buffer pointers: one function per list. */
#define SORT_BY_NEIGHBOUR(name, P, I, INTS)                                   \
    void name(int first, int n)                                              \
    {                                                                        \
        for (int x = first + 1; x < first + n; x++) {                        \
            const int j = P[2 * x + 1];                                      \
            int img[3];                                                      \
            for (int d = 0; d < INTS; d++)                                   \
                img[d] = I[INTS * x + d];                                    \
            int y = x;                                                       \
            for (; y > first && P[2 * y - 1] > j; y--) {                     \
                P[2 * y + 1] = P[2 * y - 1];                                 \
                for (int d = 0; d < INTS; d++)                               \
                    I[INTS * y + d] = I[INTS * (y - 1) + d];                 \
            }                                                                \
            P[2 * y + 1] = j;                                                \
            for (int d = 0; d < INTS; d++)                                   \
                I[INTS * y + d] = img[d];                                    \
        }                                                                    \
    }
SORT_BY_NEIGHBOUR(sort_master, pairs, images, 3)
SORT_BY_NEIGHBOUR(sort_list0, pairs0, images0, 1)
SORT_BY_NEIGHBOUR(sort_list1, pairs1, images1, 1)
#endif

void main()
{
    const uint item = pc.base + gl_GlobalInvocationID.x;
    if (item >= pc.n_items)
        return;
#if CELL_KERNEL == 0
    const int a = int(item);
    const vec4 p = pos[a];
    const int f = SYS_REALS * int(p.w), g = SYS_INTS * int(p.w);
    ivec3 c, sh;
    for (int k = 0; k < 3; k++) {
        float u = p.x * sys_f[f + 9 + 3 * k] + p.y * sys_f[f + 10 + 3 * k] + p.z * sys_f[f + 11 + 3 * k];
        sh[k] = 0;
        if (((sys_i[g + 6] >> k) & 1) != 0) {
            const float whole = floor(u);
            sh[k] = int(whole);
            u -= whole;
        }
        const float x = (u - sys_f[f + 18 + k]) * sys_f[f + 21 + k];
        c[k] = x > 0.0 ? min(int(x), sys_i[g + k] - 1) : 0;
    }
    const int bin = sys_i[g + 7] + (c[0] * sys_i[g + 1] + c[1]) * sys_i[g + 2] + c[2];
    atom_bins[a] = ivec4(bin, sh);
    atomicAdd(bin_ends[bin], 1);
#elif CELL_KERNEL == 1
    const int a = int(item);
    const ivec4 b = atom_bins[a];
    const int slot = atomicAdd(bin_ends[b.x], 1);
    const vec4 p = pos[a];
    slot_pos[slot] = vec4(p.xyz - lattice(SYS_REALS * int(p.w), b.yzw), 0.0);
    slot_shift[slot] = ivec4(b.yzw, a);
#elif CELL_KERNEL == 2
    /* Each atom's pairs: in the master list (counts[a]), and within the
     * cutoff of list k (counts[(k + 1) * (params[2] + 1) + a]). */
    const int stride = params[2] + 1, a = int(item);
    const ivec3 c = walk(a, WRITE_NOTHING, 0, 0, ivec2(0), ivec2(0));
    counts[a] = c.x;
    counts[stride + a] = c.y;
    counts[2 * stride + a] = c.z;
#else
    /* As cell_pairs of shaders/opencl/cell_lists.cl: params[3] == 0 the
     * master list of a range's atom, 1 the cutoff lists and triple starts. */
    const int stride = params[2] + 1;
    if (params[3] == 0) {
        const int a = params[0] + int(item);
        const int first = counts[a], most = counts[a + 1] - first;
        const int found = walk(a, WRITE_MASTER, first, most, ivec2(0), ivec2(0)).x;
        if (found != most)
            params[1] = 1;
        sort_master(first, min(found, most));
        return;
    }
    const int a = int(item);
    const ivec2 at = ivec2(counts[stride + a], counts[2 * stride + a]);
    const ivec2 room = ivec2(counts[stride + a + 1], counts[2 * stride + a + 1]) - at;
    const ivec3 found = walk(a, WRITE_LISTS, 0, 0, at, room);
    if (found.yz != room)
        params[1] = 1;
    sort_list0(at.x, min(found.y, room.x));
    sort_list1(at.y, min(found.z, room.y));
    const int t = params[4];
    if (t < 0)
        return;
    /* Pair x of the atom's c makes a triple with each later pair. */
    const int c = room[t], base = counts[3 * stride + a];
    for (int x = 0; x < c; x++)
        triple_starts[at[t] + x] = base + x * (c - 1) - x * (x - 1) / 2;
#endif
}
