/*
 * Cell-list neighbour search: the six kernels of shaders/opencl/cell_lists.cl
 * (see there and backends/common/device_cells.c), one per CELL_KERNEL value
 * (0 bin, 1 place, 2 count, 3 pairs, 4 scan, 5 sort), which the host defines after
 * "#version 450". The distance test is `precise`: the counting and the
 * writing pass must find exactly the same pairs.
 */
#if CELL_KERNEL == 5
#define LANES 128 /* the work-group: MLFF_CELL_SORT_LANES */
#else
#define LANES 64 /* the work-group: VK_GROUP_1D */
#endif
layout(local_size_x = LANES) in;

#define SYS_REALS 28 /* H[9], rec[9], origin[3], to_bin[3], radius^2, cutoff^2 of lists 0, 1, closer^2 (pair_at) */
#define SYS_INTS 8   /* nb[3], reach[3], periodic axes (bits), first bin */

layout(std430, set = 0, binding = 0) buffer ParamsB { int params[]; };
layout(std430, set = 0, binding = 1) readonly buffer PosB { vec4 pos[]; };
layout(std430, set = 0, binding = 2) readonly buffer SysFB { float sys_f[]; };
layout(std430, set = 0, binding = 3) readonly buffer SysIB { int sys_i[]; };
layout(std430, set = 0, binding = 4) buffer AtomBinsB { ivec4 atom_bins[]; };
#if CELL_KERNEL == 5 /* its items read what the others wrote */
#define SHARED_BY_ITEMS coherent
#else
#define SHARED_BY_ITEMS
#endif
layout(std430, set = 0, binding = 5) SHARED_BY_ITEMS buffer BinEndsB { int bin_ends[]; };
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

struct Push { /* dispatch.glsl */
    uint n_items;
    uint base;
};
DISPATCH_VALUES(Push);

/* precise: the same bits wherever it is computed (pair_at relies on it). */
vec3 lattice(int f, ivec3 m)
{
    precise vec3 r = vec3(m.x * sys_f[f] + m.y * sys_f[f + 3] + m.z * sys_f[f + 6],
                          m.x * sys_f[f + 1] + m.y * sys_f[f + 4] + m.z * sys_f[f + 7],
                          m.x * sys_f[f + 2] + m.y * sys_f[f + 5] + m.z * sys_f[f + 8]);
    return r;
}

/* floor(a / b) for b > 0, dividing only non-negative numbers: GLSL leaves
 * / and % of negative operands undefined (NVIDIA's driver differs). */
int floor_div(int a, int b)
{
    return a >= 0 ? a / b : -((-a - 1) / b) - 1;
}

#if CELL_KERNEL == 2 || CELL_KERNEL == 3
/* Pairs a work-group collects in shared memory per list (GROUP_PAIRS of
 * cell_lists.cl). */
#define GROUP_PAIRS 256

/* One atom's view of the bins (atom_view of cell_lists.cl): the bins
 * within reach in stencil order, over extended coordinates. */
struct AtomView {
    int a, f, g; /* atom, its system's rows of sys_f and sys_i */
    ivec3 bi, stencil;
    ivec4 b;
    vec3 wi;
};

AtomView view_of(int a)
{
    AtomView v;
    const vec4 p = pos[a];
    v.a = a;
    v.f = SYS_REALS * int(p.w);
    v.g = SYS_INTS * int(p.w);
    v.b = atom_bins[a];
    const int nb1 = sys_i[v.g + 1], nb2 = sys_i[v.g + 2], own = v.b.x - sys_i[v.g + 7];
    v.bi = ivec3(own / (nb1 * nb2), (own / nb2) % nb1, own % nb2);
    v.stencil = 2 * ivec3(sys_i[v.g + 3], sys_i[v.g + 4], sys_i[v.g + 5]) + 1;
    precise vec3 wi = p.xyz - lattice(v.f, v.b.yzw); /* as cell_place's slot_pos */
    v.wi = wi;
    return v;
}

/* Stencil cell c: its bin, or -1 beyond a non-periodic edge; m its image. */
int stencil_bin(AtomView v, int c, out ivec3 m)
{
    const ivec3 d = ivec3(c / (v.stencil.y * v.stencil.z), (c / v.stencil.z) % v.stencil.y, c % v.stencil.z) -
                    ivec3(sys_i[v.g + 3], sys_i[v.g + 4], sys_i[v.g + 5]);
    ivec3 bin;
    m = ivec3(0);
    for (int k = 0; k < 3; k++) {
        const int e = v.bi[k] + d[k], nb = sys_i[v.g + k];
        const bool periodic = ((sys_i[v.g + 6] >> k) & 1) != 0;
        if (!periodic && (e < 0 || e >= nb))
            return -1;
        m[k] = periodic ? floor_div(e, nb) : 0;
        bin[k] = e - m[k] * nb;
    }
    return sys_i[v.g + 7] + (bin.x * sys_i[v.g + 1] + bin.y) * sys_i[v.g + 2] + bin.z;
}

/* The atom in `slot` seen through image m: its squared distance, or -1
 * when beyond the search radius or the atom itself; sj its slot, n the
 * pair's image offset. Lowers params[5] to the r^2 of a pair closer than
 * sys_f[27], as float bits (pair_at of cell_lists.cl).
 * The same bits for (i, j, n) and (j, i, -n) (pair_at of cell_lists.cl). */
float pair_at(AtomView v, int slot, ivec3 m, out ivec4 sj, out ivec3 n)
{
    precise vec3 d = (slot_pos[slot].xyz - v.wi) + lattice(v.f, m);
    precise float r2 = d.x * d.x + d.y * d.y + d.z * d.z;
    sj = ivec4(0);
    n = ivec3(0);
    if (r2 > sys_f[v.f + 24])
        return -1.0;
    sj = slot_shift[slot];
    n = m + v.b.yzw - sj.xyz;
    if (sj.w == v.a && n == ivec3(0))
        return -1.0;
    if (r2 < sys_f[v.f + 27])
        atomicMin(params[5], floatBitsToInt(r2));
    return r2;
}

/* A listed pair: raises params[6] when its image offset does not pack. */
int packed_image(ivec3 n)
{
    if (any(greaterThan(abs(n), ivec3(511))))
        params[6] = 1;
    return (n.x + 512) | (n.y + 512) << 10 | (n.z + 512) << 20;
}

/* Writes pair q of `target` (0 the master list, 1 and 2 lists 0 and 1). */
void put_pair(int target, int q, int a, int j, ivec3 n)
{
    if (target == 0) {
        pairs[2 * q] = a;
        pairs[2 * q + 1] = j;
        images[3 * q] = n.x;
        images[3 * q + 1] = n.y;
        images[3 * q + 2] = n.z;
    } else if (target == 1) {
        pairs0[2 * q] = a;
        pairs0[2 * q + 1] = j;
        images0[q] = packed_image(n);
    } else {
        pairs1[2 * q] = a;
        pairs1[2 * q + 1] = j;
        images1[q] = packed_image(n);
    }
}

#define WRITE_NOTHING 0
#define WRITE_MASTER 1
#define WRITE_LISTS 2

/* The pairs of atom a within the search radius, in stencil order, one
 * invocation alone: the master list written from start on (at most most),
 * or list k's from at[k] on (at most room[k]), as `write` says; returns how
 * many there are in the master list (x) and within each list's cutoff (y, z). */
ivec3 walk(AtomView v, int write, int start, int most, ivec2 at, ivec2 room)
{
    int found = 0;
    ivec2 listed = ivec2(0);
    const int cells = v.stencil.x * v.stencil.y * v.stencil.z;
    for (int c = 0; c < cells; c++) {
        ivec3 m;
        const int cell = stencil_bin(v, c, m);
        if (cell < 0)
            continue;
        const int lo = cell > 0 ? bin_ends[cell - 1] : 0, hi = bin_ends[cell];
        for (int slot = lo; slot < hi; slot++) {
            ivec4 sj;
            ivec3 n;
            const float r2 = pair_at(v, slot, m, sj, n);
            if (r2 < 0.0)
                continue;
            if (write == WRITE_MASTER && found < most)
                put_pair(0, start + found, v.a, sj.w, n);
            found++;
            for (int k = 0; k < 2; k++) {
                if (r2 > sys_f[v.f + 25 + k])
                    continue;
                packed_image(n);
                if (write == WRITE_LISTS && listed[k] < room[k])
                    put_pair(k + 1, at[k] + listed[k], v.a, sj.w, n);
                listed[k]++;
            }
        }
    }
    return ivec3(found, listed);
}

shared int fill[2];
shared int entries[2 * 3 * GROUP_PAIRS]; /* per list: (j, stencil cell, slot) */

/* A work-group's walk (walk_share of cell_lists.cl): this invocation's
 * share of the stencil's bins, counted as walk does; with collect, each
 * pair of list k (the master list as list 0 with master) appended to
 * entries as (j, stencil cell, slot). */
ivec3 walk_share(AtomView v, int lane, bool collect, bool master)
{
    int found = 0;
    ivec2 listed = ivec2(0);
    const int cells = v.stencil.x * v.stencil.y * v.stencil.z;
    const int share = max(LANES / cells, 1); /* lanes per bin */
    for (int x = lane; x < cells * share; x += LANES) {
        const int c = x / share;
        ivec3 m;
        const int cell = stencil_bin(v, c, m);
        if (cell < 0)
            continue;
        const int lo = cell > 0 ? bin_ends[cell - 1] : 0, hi = bin_ends[cell];
        for (int slot = lo + x % share; slot < hi; slot += share) {
            ivec4 sj;
            ivec3 n;
            const float r2 = pair_at(v, slot, m, sj, n);
            if (r2 < 0.0)
                continue;
            found++;
            bvec2 in_list;
            for (int k = 0; k < 2; k++) {
                in_list[k] = r2 <= sys_f[v.f + 25 + k];
                if (in_list[k]) {
                    packed_image(n);
                    listed[k]++;
                }
            }
            for (int k = 0; collect && k < 2; k++) {
                if (!(master ? k == 0 : in_list[k]))
                    continue;
                const int e = atomicAdd(fill[k], 1);
                if (e < GROUP_PAIRS) {
                    const int o = 3 * (k * GROUP_PAIRS + e);
                    entries[o] = sj.w;
                    entries[o + 1] = c;
                    entries[o + 2] = slot;
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

/* List k's collected entries (n of them), written from `first` on in the
 * order of (j, stencil cell), at most `room` (write_sorted of cell_lists.cl). */
void write_sorted(AtomView v, int k, int n, int room, int lane, int target, int first)
{
    const int base = 3 * k * GROUP_PAIRS;
    for (int e = lane; e < n; e += LANES) {
        const int j = entries[base + 3 * e], c = entries[base + 3 * e + 1];
        int rank = 0;
        for (int y = 0; y < n; y++) {
            const int oj = entries[base + 3 * y], oc = entries[base + 3 * y + 1];
            rank += oj < j || (oj == j && oc < c) ? 1 : 0;
        }
        if (rank >= room)
            continue;
        ivec3 m;
        stencil_bin(v, c, m);
        put_pair(target, first + rank, v.a, j, m + v.b.yzw - slot_shift[entries[base + 3 * e + 2]].xyz);
    }
}
#endif

#if CELL_KERNEL == 0 || CELL_KERNEL == 5
/* Atom a into its bin (bin_atom of cell_lists.cl). */
void bin_atom(int a)
{
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
}
#endif

#if CELL_KERNEL == 1 || CELL_KERNEL == 5
/* Atom a into the next free slot of its bin (place_atom of cell_lists.cl). */
void place_atom(int a)
{
    const ivec4 b = atom_bins[a];
    const int slot = atomicAdd(bin_ends[b.x], 1);
    const vec4 p = pos[a];
    precise vec3 w = p.xyz - lattice(SYS_REALS * int(p.w), b.yzw); /* as view_of's wi */
    slot_pos[slot] = vec4(w, 0.0);
    slot_shift[slot] = ivec4(b.yzw, a);
}
#endif

#if CELL_KERNEL == 4 || CELL_KERNEL == 5
shared int run_sums[LANES];

/* By the work-group, as scan_bins of cell_lists.cl: bin counts (params[7]
 * bins) into bin starts, params[8] the atoms binned. */
void scan_bins()
{
    const int t = int(gl_LocalInvocationID.x), bins = params[7];
    const int run = (bins + LANES - 1) / LANES, b0 = min(t * run, bins), b1 = min(b0 + run, bins);
    int sum = 0;
    for (int b = b0; b < b1; b++)
        sum += bin_ends[b];
    run_sums[t] = sum;
    barrier();
    if (t == 0) {
        int total = 0;
        for (int k = 0; k < LANES; k++) {
            const int count = run_sums[k];
            run_sums[k] = total;
            total += count;
        }
        params[8] = total;
    }
    barrier();
    int start = run_sums[t];
    for (int b = b0; b < b1; b++) {
        const int count = bin_ends[b];
        bin_ends[b] = start;
        start += count;
    }
}
#endif

void main()
{
    const uint item = pc.base + gl_GlobalInvocationID.x;
    if (item >= pc.n_items)
        return;
#if CELL_KERNEL == 0
    bin_atom(int(item));
#elif CELL_KERNEL == 1
    place_atom(int(item));
#elif CELL_KERNEL == 2
    /* A work-group per atom: its pairs in the master list (counts[a]), and
     * within the cutoff of list k (counts[(k + 1) * (params[2] + 1) + a]). */
    const int a = int(item / LANES), lane = int(gl_LocalInvocationID.x);
    if (lane < 3)
        entries[lane] = 0;
    barrier();
    const ivec3 c = walk_share(view_of(a), lane, false, false);
    atomicAdd(entries[0], c.x);
    atomicAdd(entries[1], c.y);
    atomicAdd(entries[2], c.z);
    barrier();
    if (lane == 0) {
        const int stride = params[2] + 1;
        counts[a] = entries[0];
        counts[stride + a] = entries[1];
        counts[2 * stride + a] = entries[2];
    }
#elif CELL_KERNEL == 4
    scan_bins();
#elif CELL_KERNEL == 5
    /* For few atoms (params[2]): kernels 0, 4 and 1 by one work-group, as
     * cell_sort of cell_lists.cl. */
    const int t = int(gl_LocalInvocationID.x), n = params[2];
    for (int a = t; a < n; a += LANES)
        bin_atom(a);
    memoryBarrierBuffer();
    barrier();
    scan_bins();
    memoryBarrierBuffer();
    barrier();
    for (int a = t; a < n; a += LANES)
        place_atom(a);
#else
    /* A work-group per atom, as cell_pairs of shaders/opencl/cell_lists.cl:
     * params[3] == 0 the master list of a range's atom, 1 the cutoff lists
     * and triple starts. */
    const int stride = params[2] + 1, lane = int(gl_LocalInvocationID.x);
    const bool master = params[3] == 0;
    const int a = master ? params[0] + int(item / LANES) : int(item / LANES);
    int first = 0, most = 0;
    ivec2 at = ivec2(0), room = ivec2(0);
    if (master) {
        first = counts[a];
        most = counts[a + 1] - first;
    } else {
        at = ivec2(counts[stride + a], counts[2 * stride + a]);
        room = ivec2(counts[stride + a + 1], counts[2 * stride + a + 1]) - at;
    }
    const AtomView v = view_of(a);
    if (master ? most > GROUP_PAIRS : max(room.x, room.y) > GROUP_PAIRS) {
        if (lane == 0) {
            const ivec3 found = walk(v, master ? WRITE_MASTER : WRITE_LISTS, first, most, at, room);
            if (master ? found.x != most : found.yz != room)
                params[1] = 1;
            if (master) {
                sort_master(first, min(found.x, most));
            } else {
                sort_list0(at.x, min(found.y, room.x));
                sort_list1(at.y, min(found.z, room.y));
            }
        }
    } else {
        if (lane < 2)
            fill[lane] = 0;
        barrier();
        walk_share(v, lane, true, master);
        barrier();
        for (int k = 0; k < (master ? 1 : 2); k++) {
            const int n = min(fill[k], GROUP_PAIRS), want = master ? most : room[k];
            if (lane == 0 && fill[k] != want)
                params[1] = 1;
            write_sorted(v, k, n, want, lane, master ? 0 : k + 1, master ? first : at[k]);
        }
    }
    const int t = params[4];
    if (master || t < 0)
        return;
    /* Pair x of the atom's c makes a triple with each later pair. */
    const int c = room[t], base = counts[3 * stride + a];
    for (int x = lane; x < c; x += LANES)
        triple_starts[at[t] + x] = base + x * (c - 1) - x * (x - 1) / 2;
#endif
}
