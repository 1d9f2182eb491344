/*
 * Cell-list neighbour search: six kernels of one program, run in turn by
 * backends/common/device_cells.c, which describes the buffers and does the
 * prefix sum of the pair counts on the host. Positions are floats: the host
 * asks for a search radius slightly above the cutoff, so rounding never
 * loses a pair of the master list (a few just beyond the cutoff may come
 * out; the host measures every pair in double anyway). The cutoff lists
 * (params[3] = 1) are decided in float at their own cutoffs. Contraction is
 * off so that the counting and the writing pass find exactly the same pairs.
 */
#pragma OPENCL FP_CONTRACT OFF

#define SYS_REALS 28 /* H[9], rec[9], origin[3], to_bin[3], radius^2, cutoff^2 of lists 0, 1, closer^2 (pair_at) */
#define SYS_INTS 8   /* nb[3], reach[3], periodic axes (bits), first bin */

/* Every kernel's buffers, in the order of mlff_cell_buffer (backend.h),
 * then n_items; CELL_POINTERS is each kernel's first line (arena.cl). */
#define CELL_BUFFERS(X)                                                                                  \
    X(global int *, params) X(global const float4 *, pos) X(global const float *, sys_f)                 \
    X(global const int *, sys_i) X(global int4 *, atom_bins) X(global int *, bin_ends)                    \
    X(global float4 *, slot_pos) X(global int4 *, slot_shift) X(global int *, counts) X(global int *, pairs) \
    X(global int *, images) X(global int *, pairs0) X(global int *, pairs1) X(global int *, images0)       \
    X(global int *, images1) X(global int *, triple_starts)
#define CELL_ARGS ARENA_FIRST CELL_BUFFERS(BUFFER_ARG) const int n_items
#define CELL_POINTERS CELL_BUFFERS(BUFFER_POINTER)

/* What walk writes: the master list (from out on, at most `most`) or the
 * cutoff lists (from at[k] on, at most room[k]); or nothing. */
typedef struct walk_out {
    int master, lists, out, most, at[2], room[2];
    global int *pairs, *images, *list_pairs[2], *list_images[2];
} walk_out;

/* Pairs a work-group collects in local memory per list, to sort and write
 * them side by side; an atom with more takes the serial path. */
#define GROUP_PAIRS 256

inline float3 lattice(global const float *h, const int3 m)
{
    return (float3)(m.x * h[0] + m.y * h[3] + m.z * h[6], m.x * h[1] + m.y * h[4] + m.z * h[7],
                    m.x * h[2] + m.y * h[5] + m.z * h[8]);
}

/* floor(a / b) for b > 0, as the GLSL version computes it. */
inline int floor_div(const int a, const int b)
{
    return a >= 0 ? a / b : -((-a - 1) / b) - 1;
}

/* Atom a: its bin (fractional coordinates, wrapped along periodic axes)
 * and the lattice vectors taken off; one more atom in that bin. */
inline void bin_atom(const int a, global const float4 *pos, global const float *sys_f, global const int *sys_i,
                     global int4 *atom_bins, global int *bin_ends)
{
    const float4 p = pos[a];
    const int s = (int)p.w;
    global const float *f = sys_f + SYS_REALS * s;
    global const int *g = sys_i + SYS_INTS * s;
    int c[3], sh[3];
    for (int k = 0; k < 3; k++) {
        float u = p.x * f[9 + 3 * k] + p.y * f[10 + 3 * k] + p.z * f[11 + 3 * k];
        sh[k] = 0;
        if ((g[6] >> k) & 1) {
            const float whole = floor(u);
            sh[k] = (int)whole;
            u -= whole;
        }
        const float x = (u - f[18 + k]) * f[21 + k];
        c[k] = x > 0.0f ? min((int)x, g[k] - 1) : 0;
    }
    const int bin = g[7] + (c[0] * g[1] + c[1]) * g[2] + c[2];
    atom_bins[a] = (int4)(bin, sh[0], sh[1], sh[2]);
    atomic_inc(&bin_ends[bin]);
}

kernel void cell_bin(CELL_ARGS)
{
    CELL_POINTERS
    const int a = (int)get_global_id(0);
    if (a < n_items)
        bin_atom(a, pos, sys_f, sys_i, atom_bins, bin_ends);
}

/* By one work-group (of at most 128): the atoms counted per bin (params[7]
 * bins) become each bin's first slot, and params[8] the atoms binned. Each
 * item sums a run of bins; one item scans the runs' sums. */
inline void scan_bins(global int *params, global int *bin_ends, local int *sums)
{
    const int t = (int)get_local_id(0), lanes = (int)get_local_size(0), bins = params[7];
    const int run = (bins + lanes - 1) / lanes, b0 = min(t * run, bins), b1 = min(b0 + run, bins);
    int sum = 0;
    for (int b = b0; b < b1; b++)
        sum += bin_ends[b];
    sums[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        int total = 0;
        for (int k = 0; k < lanes; k++) {
            const int count = sums[k];
            sums[k] = total;
            total += count;
        }
        params[8] = total;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int start = sums[t];
    for (int b = b0; b < b1; b++) {
        const int count = bin_ends[b];
        bin_ends[b] = start;
        start += count;
    }
}

kernel void cell_scan(CELL_ARGS)
{
    CELL_POINTERS
    local int sums[64];
    scan_bins(params, bin_ends, sums);
}

/* Atom a into the next free slot of its bin (bin_ends holds each bin's
 * start, and its end afterwards). The order within a bin does not matter:
 * each atom's pairs are sorted in the end. */
inline void place_atom(const int a, global const float4 *pos, global const float *sys_f,
                       global const int4 *atom_bins, global int *bin_ends, global float4 *slot_pos,
                       global int4 *slot_shift)
{
    const int4 b = atom_bins[a];
    const int slot = atomic_inc(&bin_ends[b.x]);
    const float4 p = pos[a];
    const float3 w = p.xyz - lattice(sys_f + SYS_REALS * (int)p.w, b.yzw);
    slot_pos[slot] = (float4)(w, 0.0f);
    slot_shift[slot] = (int4)(b.yzw, a);
}

kernel void cell_place(CELL_ARGS)
{
    CELL_POINTERS
    const int a = (int)get_global_id(0);
    if (a < n_items)
        place_atom(a, pos, sys_f, atom_bins, bin_ends, slot_pos, slot_shift);
}

/* For few atoms (params[2]): cell_bin, cell_scan and cell_place by one
 * work-group, in one launch instead of three. */
kernel void cell_sort(CELL_ARGS)
{
    CELL_POINTERS
    local int sums[128]; /* MLFF_CELL_SORT_LANES */
    const int t = (int)get_local_id(0), lanes = (int)get_local_size(0), n = params[2];
    for (int a = t; a < n; a += lanes)
        bin_atom(a, pos, sys_f, sys_i, atom_bins, bin_ends);
    barrier(CLK_GLOBAL_MEM_FENCE);
    scan_bins(params, bin_ends, sums);
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (int a = t; a < n; a += lanes)
        place_atom(a, pos, sys_f, atom_bins, bin_ends, slot_pos, slot_shift);
}

/* One atom's view of the bins: the bins within reach, visited in "stencil
 * order" (cell 0, 1, ... of the (2 reach + 1)^3 around its own), over
 * extended coordinates e = bin + m * nb along periodic axes (m the image). */
typedef struct atom_view {
    int a, bi[3], stencil[3]; /* stencil[k]: 2 reach + 1 */
    int4 b;                   /* bin, shift */
    float3 wi;                /* wrapped position */
    global const float *f;
    global const int *g;
} atom_view;

inline atom_view view_of(const int a, global const float4 *pos, global const float *sys_f,
                         global const int *sys_i, global const int4 *atom_bins)
{
    atom_view v;
    const float4 p = pos[a];
    v.a = a;
    v.f = sys_f + SYS_REALS * (int)p.w;
    v.g = sys_i + SYS_INTS * (int)p.w;
    v.b = atom_bins[a];
    const int own = v.b.x - v.g[7];
    v.bi[0] = own / (v.g[1] * v.g[2]);
    v.bi[1] = (own / v.g[2]) % v.g[1];
    v.bi[2] = own % v.g[2];
    for (int k = 0; k < 3; k++)
        v.stencil[k] = 2 * v.g[3 + k] + 1;
    v.wi = p.xyz - lattice(v.f, v.b.yzw);
    return v;
}

/* Stencil cell c: its bin, or -1 beyond a non-periodic edge; *m its image. */
inline int stencil_bin(const atom_view *v, const int c, int3 *m)
{
    const int d[3] = {c / (v->stencil[1] * v->stencil[2]) - v->g[3], (c / v->stencil[2]) % v->stencil[1] - v->g[4],
                      c % v->stencil[2] - v->g[5]};
    int bin[3], im[3];
    for (int k = 0; k < 3; k++) {
        const int e = v->bi[k] + d[k], periodic = (v->g[6] >> k) & 1;
        if (!periodic && (e < 0 || e >= v->g[k]))
            return -1;
        im[k] = periodic ? floor_div(e, v->g[k]) : 0;
        bin[k] = e - im[k] * v->g[k];
    }
    *m = (int3)(im[0], im[1], im[2]);
    return v->g[7] + (bin[0] * v->g[1] + bin[1]) * v->g[2] + bin[2];
}

/* The atom in `slot` seen through image m: its squared distance, or -1
 * when it is beyond the search radius or the atom itself; *n the image
 * offset of the pair. Lowers params[5] (a float's bits: for r^2 >= 0 the
 * order of ints is the order of floats) to the r^2 of a pair closer than
 * SYSTEM_REALS f[27].
 * The same bits for (i, j, n) and (j, i, -n): both wrapped positions come
 * from the same expression (cell_place, view_of), the reverse pair sees
 * image -m, and negation commutes with rounding, so each list holds a pair
 * and its reverse or neither (pair gradients rely on it: mlff_exec_tensor.symmetric). */
inline float pair_at(const atom_view *v, const int slot, const int3 m, global int *params,
                     global const float4 *slot_pos, global const int4 *slot_shift, int4 *sj, int3 *n)
{
    const float3 d = (slot_pos[slot].xyz - v->wi) + lattice(v->f, m);
    const float r2 = d.x * d.x + d.y * d.y + d.z * d.z;
    if (r2 > v->f[24])
        return -1.0f;
    *sj = slot_shift[slot];
    *n = m + v->b.yzw - sj->xyz;
    if (sj->w == v->a && n->x == 0 && n->y == 0 && n->z == 0)
        return -1.0f;
    if (r2 < v->f[27])
        atomic_min(&params[5], as_int(r2));
    return r2;
}

/* A listed pair: raises params[6] when its image offset does not pack. */
inline int packed_image(const int3 n, global int *params)
{
    if (abs(n.x) > 511 || abs(n.y) > 511 || abs(n.z) > 511)
        params[6] = 1;
    return (n.x + 512) | (n.y + 512) << 10 | (n.z + 512) << 20;
}

/* The pairs (a, j, n) within the search radius, in stencil order, one
 * work-item alone. Written as `w` says; returns how many there are in the
 * master list (x) and within each list's cutoff (y, z). */
inline int3 walk(const atom_view *v, const walk_out *w, global int *params, global const int *bin_ends,
                 global const float4 *slot_pos, global const int4 *slot_shift)
{
    int found = 0, listed[2] = {0, 0};
    const int cells = v->stencil[0] * v->stencil[1] * v->stencil[2];
    for (int c = 0; c < cells; c++) {
        int3 m;
        const int cell = stencil_bin(v, c, &m);
        if (cell < 0)
            continue;
        const int lo = cell > 0 ? bin_ends[cell - 1] : 0, hi = bin_ends[cell];
        for (int slot = lo; slot < hi; slot++) {
            int4 sj;
            int3 n;
            const float r2 = pair_at(v, slot, m, params, slot_pos, slot_shift, &sj, &n);
            if (r2 < 0.0f)
                continue;
            if (w->master && found < w->most) {
                const int q = w->out + found;
                w->pairs[2 * q] = v->a;
                w->pairs[2 * q + 1] = sj.w;
                w->images[3 * q] = n.x;
                w->images[3 * q + 1] = n.y;
                w->images[3 * q + 2] = n.z;
            }
            found++;
            for (int k = 0; k < 2; k++) {
                if (r2 > v->f[25 + k])
                    continue;
                const int packed = packed_image(n, params);
                if (w->lists && listed[k] < w->room[k]) {
                    const int q = w->at[k] + listed[k];
                    w->list_pairs[k][2 * q] = v->a;
                    w->list_pairs[k][2 * q + 1] = sj.w;
                    w->list_images[k][q] = packed;
                }
                listed[k]++;
            }
        }
    }
    return (int3)(found, listed[0], listed[1]);
}

/* A work-group's walk: lane `lane` of `lanes` takes its share of the
 * stencil's bins (several lanes per bin when there are fewer bins than
 * lanes), counts its pairs as walk does, and, when collect is set, appends
 * each pair of list k (the master list as list 0 when master is set) to
 * entries[k] as (j, stencil cell, slot), fill[k] counting them. */
inline int3 walk_share(const atom_view *v, const int lane, const int lanes, const int collect, const int master,
                       local int *fill, local int *entries, global int *params, global const int *bin_ends,
                       global const float4 *slot_pos, global const int4 *slot_shift)
{
    int found = 0, listed[2] = {0, 0};
    const int cells = v->stencil[0] * v->stencil[1] * v->stencil[2];
    const int share = max(lanes / cells, 1); /* lanes per bin */
    for (int x = lane; x < cells * share; x += lanes) {
        const int c = x / share;
        int3 m;
        const int cell = stencil_bin(v, c, &m);
        if (cell < 0)
            continue;
        const int lo = cell > 0 ? bin_ends[cell - 1] : 0, hi = bin_ends[cell];
        for (int slot = lo + x % share; slot < hi; slot += share) {
            int4 sj;
            int3 n;
            const float r2 = pair_at(v, slot, m, params, slot_pos, slot_shift, &sj, &n);
            if (r2 < 0.0f)
                continue;
            found++;
            int in_list[2];
            for (int k = 0; k < 2; k++) {
                in_list[k] = r2 <= v->f[25 + k];
                if (in_list[k])
                    packed_image(n, params);
                listed[k] += in_list[k];
            }
            for (int k = 0; collect && k < 2; k++) {
                if (!(master ? k == 0 : in_list[k]))
                    continue;
                const int e = atomic_inc(&fill[k]);
                if (e < GROUP_PAIRS) {
                    local int *entry = entries + 3 * (k * GROUP_PAIRS + e);
                    entry[0] = sj.w;
                    entry[1] = c;
                    entry[2] = slot;
                }
            }
        }
    }
    return (int3)(found, listed[0], listed[1]);
}

#define WALK_BUFFERS params, bin_ends, slot_pos, slot_shift
#define VIEW_BUFFERS pos, sys_f, sys_i, atom_bins

/* A work-group per atom: its pairs in the master list (counts[a]), and
 * within the cutoff of list k (counts[(k + 1) * (params[2] + 1) + a]). */
kernel void cell_count(CELL_ARGS)
{
    CELL_POINTERS
    local int totals[3];
    const int a = (int)get_group_id(0), lane = (int)get_local_id(0);
    if (a >= n_items)
        return;
    if (lane < 3)
        totals[lane] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const atom_view v = view_of(a, VIEW_BUFFERS);
    const int3 c = walk_share(&v, lane, (int)get_local_size(0), 0, 0, totals, totals, WALK_BUFFERS);
    atomic_add(&totals[0], c.x);
    atomic_add(&totals[1], c.y);
    atomic_add(&totals[2], c.z);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0) {
        const int stride = params[2] + 1;
        counts[a] = totals[0];
        counts[stride + a] = totals[1];
        counts[2 * stride + a] = totals[2];
    }
}

/* Pairs [first, first + n) of one atom by j, stably (for one j the stencil
 * order is the order of n), so that a list is ordered by i, j, n as on the
 * host; images of three ints (the master list) or packed in one. */
inline void sort_by_neighbour(global int *pairs, global int *images, const int image_ints, const int first,
                              const int n)
{
    for (int x = first + 1; x < first + n; x++) {
        const int j = pairs[2 * x + 1];
        int img[3];
        for (int d = 0; d < image_ints; d++)
            img[d] = images[image_ints * x + d];
        int y = x;
        for (; y > first && pairs[2 * y - 1] > j; y--) {
            pairs[2 * y + 1] = pairs[2 * y - 1];
            for (int d = 0; d < image_ints; d++)
                images[image_ints * y + d] = images[image_ints * (y - 1) + d];
        }
        pairs[2 * y + 1] = j;
        for (int d = 0; d < image_ints; d++)
            images[image_ints * y + d] = img[d];
    }
}

/* The entries a work-group collected for one list, written from `first`
 * on in the order of (j, stencil cell): the order of the serial walk
 * sorted stably by j (one atom j appears once per stencil cell). Writes at
 * most `room`; images as three ints (image_ints 3) or packed. */
inline void write_sorted(const atom_view *v, local const int *entries, const int n, const int room, const int lane,
                         const int lanes, global int *pairs, global int *images, const int image_ints,
                         const int first, global int *params, global const int4 *slot_shift)
{
    for (int e = lane; e < n; e += lanes) {
        local const int *x = entries + 3 * e;
        int rank = 0;
        for (int y = 0; y < n; y++) {
            local const int *o = entries + 3 * y;
            rank += o[0] < x[0] || (o[0] == x[0] && o[1] < x[1]);
        }
        if (rank >= room)
            continue;
        int3 m;
        stencil_bin(v, x[1], &m);
        const int3 nn = m + v->b.yzw - slot_shift[x[2]].xyz;
        const int q = first + rank;
        pairs[2 * q] = v->a;
        pairs[2 * q + 1] = x[0];
        if (image_ints == 3) {
            images[3 * q] = nn.x;
            images[3 * q + 1] = nn.y;
            images[3 * q + 2] = nn.z;
        } else {
            images[q] = packed_image(nn, params);
        }
    }
}

/* A work-group per atom. params[3] == 0: the master list of atom
 * params[0] + group, at counts[a] (relative to the range's first pair).
 * params[3] == 1: the atom's pairs of each cutoff list, at that list's
 * offsets in counts, and for list params[4] where each pair's angular
 * triples start (the atom's first at counts[3 * (params[2] + 1) + a]).
 * Sorted by i, j, n as on the host: in local memory, side by side, or by
 * one work-item (walk, then sort_by_neighbour) for an atom with more than
 * GROUP_PAIRS pairs in a list. A count that differs from cell_count's sets
 * params[1]. */
kernel void cell_pairs(CELL_ARGS)
{
    CELL_POINTERS
    local int fill[2], entries[2 * 3 * GROUP_PAIRS];
    const int item = (int)get_group_id(0), lane = (int)get_local_id(0), lanes = (int)get_local_size(0);
    if (item >= n_items)
        return;
    const int stride = params[2] + 1, master = params[3] == 0;
    const int a = master ? params[0] + item : item;
    walk_out w = {0};
    w.pairs = pairs;
    w.images = images;
    w.list_pairs[0] = pairs0;
    w.list_pairs[1] = pairs1;
    w.list_images[0] = images0;
    w.list_images[1] = images1;
    if (master) {
        w.master = 1;
        w.out = counts[a];
        w.most = counts[a + 1] - w.out;
    } else {
        w.lists = 1;
        for (int k = 0; k < 2; k++) {
            w.at[k] = counts[(k + 1) * stride + a];
            w.room[k] = counts[(k + 1) * stride + a + 1] - w.at[k];
        }
    }
    const atom_view v = view_of(a, VIEW_BUFFERS);
    if (master ? w.most > GROUP_PAIRS : max(w.room[0], w.room[1]) > GROUP_PAIRS) {
        if (lane == 0) {
            const int3 found = walk(&v, &w, WALK_BUFFERS);
            if (master ? found.x != w.most : found.y != w.room[0] || found.z != w.room[1])
                params[1] = 1;
            if (master)
                sort_by_neighbour(pairs, images, 3, w.out, min(found.x, w.most));
            for (int k = 0; !master && k < 2; k++)
                sort_by_neighbour(w.list_pairs[k], w.list_images[k], 1, w.at[k],
                                  min(k ? found.z : found.y, w.room[k]));
        }
    } else {
        if (lane < 2)
            fill[lane] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        walk_share(&v, lane, lanes, 1, master, fill, entries, WALK_BUFFERS);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < (master ? 1 : 2); k++) {
            const int n = min(fill[k], GROUP_PAIRS), room = master ? w.most : w.room[k];
            if (lane == 0 && fill[k] != room)
                params[1] = 1;
            if (master)
                write_sorted(&v, entries, n, room, lane, lanes, pairs, images, 3, w.out, params, slot_shift);
            else
                write_sorted(&v, entries + 3 * k * GROUP_PAIRS, n, room, lane, lanes, w.list_pairs[k],
                             w.list_images[k], 1, w.at[k], params, slot_shift);
        }
    }
    const int t = params[4];
    if (master || t < 0)
        return;
    /* Pair x of the atom's c makes a triple with each later pair. */
    const int c = w.room[t], base = counts[3 * stride + a];
    for (int x = lane; x < c; x += lanes)
        triple_starts[w.at[t] + x] = base + x * (c - 1) - x * (x - 1) / 2;
}
