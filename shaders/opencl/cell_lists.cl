/*
 * Cell-list neighbour search: four kernels of one program, run in turn by
 * backends/common/device_cells.c, which describes the buffers and does the
 * two prefix sums between them on the host. Positions are floats: the host
 * asks for a search radius slightly above the cutoff, so rounding never
 * loses a pair of the master list (a few just beyond the cutoff may come
 * out; the host measures every pair in double anyway). The cutoff lists
 * (params[3] = 1) are decided in float at their own cutoffs. Contraction is
 * off so that the counting and the writing pass find exactly the same pairs.
 */
#pragma OPENCL FP_CONTRACT OFF

#define SYS_REALS 28 /* H[9], rec[9], origin[3], to_bin[3], radius^2, cutoff^2 of lists 0 and 1, closest^2 */
#define SYS_INTS 8   /* nb[3], reach[3], periodic axes (bits), first bin */

#define CELL_ARGS                                                                                          \
    global int *params, global const float4 *pos, global const float *sys_f, global const int *sys_i,  \
        global int4 *atom_bins, global int *bin_ends, global float4 *slot_pos, global int4 *slot_shift, \
        global int *counts, global int *pairs, global int *images, global int *pairs0, global int *pairs1, \
        global int *images0, global int *images1, global int *triple_starts, const int n_items

/* What walk writes: the master list (from out on, at most `most`) or the
 * cutoff lists (from at[k] on, at most most[k]); or nothing. */
typedef struct walk_out {
    int master, lists, out, most, at[2], room[2];
    global int *pairs, *images, *list_pairs[2], *list_images[2];
} walk_out;

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
kernel void cell_bin(CELL_ARGS)
{
    const int a = (int)get_global_id(0);
    if (a >= n_items)
        return;
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

/* Atom a into the next free slot of its bin (bin_ends holds each bin's
 * start, and its end afterwards). The order within a bin does not matter:
 * each atom's pairs are sorted in the end. */
kernel void cell_place(CELL_ARGS)
{
    const int a = (int)get_global_id(0);
    if (a >= n_items)
        return;
    const int4 b = atom_bins[a];
    const int slot = atomic_inc(&bin_ends[b.x]);
    const float4 p = pos[a];
    const float3 w = p.xyz - lattice(sys_f + SYS_REALS * (int)p.w, b.yzw);
    slot_pos[slot] = (float4)(w, 0.0f);
    slot_shift[slot] = (int4)(b.yzw, a);
}

/* The pairs (a, j, n) within the search radius, in stencil order: bins
 * within reach, walked over "extended" coordinates e = bin + m * nb along
 * periodic axes (m the image); n = m + shift_a - shift_j. Written as `w`
 * says; returns how many there are in the master list (x) and within each
 * list's cutoff (y, z). Raises params[5] for a pair closer than the closest
 * allowed and params[6] for a listed pair whose images do not pack. */
inline int3 walk(const int a, const walk_out *w, global int *params, global const float4 *pos,
                 global const float *sys_f, global const int *sys_i, global const int4 *atom_bins,
                 global const int *bin_ends, global const float4 *slot_pos, global const int4 *slot_shift)
{
    const float4 p = pos[a];
    global const float *f = sys_f + SYS_REALS * (int)p.w;
    global const int *g = sys_i + SYS_INTS * (int)p.w;
    const int4 b = atom_bins[a];
    const int own = b.x - g[7];
    const int bi[3] = {own / (g[1] * g[2]), (own / g[2]) % g[1], own % g[2]};
    const int per[3] = {g[6] & 1, (g[6] >> 1) & 1, (g[6] >> 2) & 1};
    const float3 wi = p.xyz - lattice(f, b.yzw);
    const float radius2 = f[24], cut2[2] = {f[25], f[26]}, closest2 = f[27];
    int found = 0, listed[2] = {0, 0};
    for (int d0 = -g[3]; d0 <= g[3]; d0++) {
        const int e0 = bi[0] + d0;
        if (!per[0] && (e0 < 0 || e0 >= g[0]))
            continue;
        const int m0 = per[0] ? floor_div(e0, g[0]) : 0, c0 = e0 - m0 * g[0];
        for (int d1 = -g[4]; d1 <= g[4]; d1++) {
            const int e1 = bi[1] + d1;
            if (!per[1] && (e1 < 0 || e1 >= g[1]))
                continue;
            const int m1 = per[1] ? floor_div(e1, g[1]) : 0, c1 = e1 - m1 * g[1];
            for (int d2 = -g[5]; d2 <= g[5]; d2++) {
                const int e2 = bi[2] + d2;
                if (!per[2] && (e2 < 0 || e2 >= g[2]))
                    continue;
                const int m2 = per[2] ? floor_div(e2, g[2]) : 0, c2 = e2 - m2 * g[2];
                const int cell = g[7] + (c0 * g[1] + c1) * g[2] + c2;
                const int lo = cell > 0 ? bin_ends[cell - 1] : 0, hi = bin_ends[cell];
                const int3 m = (int3)(m0, m1, m2);
                const float3 ci = wi - lattice(f, m);
                for (int slot = lo; slot < hi; slot++) {
                    const float3 d = slot_pos[slot].xyz - ci;
                    const float r2 = d.x * d.x + d.y * d.y + d.z * d.z;
                    if (r2 > radius2)
                        continue;
                    const int4 sj = slot_shift[slot];
                    const int3 n = m + b.yzw - sj.xyz;
                    if (sj.w == a && n.x == 0 && n.y == 0 && n.z == 0)
                        continue;
                    if (r2 < closest2)
                        params[5] = 1;
                    if (w->master && found < w->most) {
                        const int q = w->out + found;
                        w->pairs[2 * q] = a;
                        w->pairs[2 * q + 1] = sj.w;
                        w->images[3 * q] = n.x;
                        w->images[3 * q + 1] = n.y;
                        w->images[3 * q + 2] = n.z;
                    }
                    found++;
                    for (int k = 0; k < 2; k++) {
                        if (r2 > cut2[k])
                            continue;
                        if (abs(n.x) > 511 || abs(n.y) > 511 || abs(n.z) > 511)
                            params[6] = 1;
                        if (w->lists && listed[k] < w->room[k]) {
                            const int q = w->at[k] + listed[k];
                            w->list_pairs[k][2 * q] = a;
                            w->list_pairs[k][2 * q + 1] = sj.w;
                            w->list_images[k][q] = (n.x + 512) | (n.y + 512) << 10 | (n.z + 512) << 20;
                        }
                        listed[k]++;
                    }
                }
            }
        }
    }
    return (int3)(found, listed[0], listed[1]);
}

#define WALK_BUFFERS params, pos, sys_f, sys_i, atom_bins, bin_ends, slot_pos, slot_shift

/* Each atom's pairs: in the master list (counts[a]), and within the cutoff
 * of list k (counts[(k + 1) * (params[2] + 1) + a]). */
kernel void cell_count(CELL_ARGS)
{
    const int a = (int)get_global_id(0);
    if (a >= n_items)
        return;
    const walk_out none = {0};
    const int3 c = walk(a, &none, WALK_BUFFERS);
    const int stride = params[2] + 1;
    counts[a] = c.x;
    counts[stride + a] = c.y;
    counts[2 * stride + a] = c.z;
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

/* params[3] == 0: the master list of atom params[0] + item, at counts[a]
 * (relative to the range's first pair). params[3] == 1: atom item's pairs
 * of each cutoff list, at that list's offsets in counts, and for list
 * params[4] where each pair's angular triples start (the atom's first at
 * counts[3 * (params[2] + 1) + a]). Sorted by i, j, n as on the host. A
 * count that differs from cell_count's sets params[1]. */
kernel void cell_pairs(CELL_ARGS)
{
    const int item = (int)get_global_id(0);
    if (item >= n_items)
        return;
    const int stride = params[2] + 1;
    walk_out w = {0};
    w.pairs = pairs;
    w.images = images;
    w.list_pairs[0] = pairs0;
    w.list_pairs[1] = pairs1;
    w.list_images[0] = images0;
    w.list_images[1] = images1;
    if (params[3] == 0) {
        const int a = params[0] + item;
        w.master = 1;
        w.out = counts[a];
        w.most = counts[a + 1] - w.out;
        const int found = walk(a, &w, WALK_BUFFERS).x;
        if (found != w.most)
            params[1] = 1;
        sort_by_neighbour(pairs, images, 3, w.out, min(found, w.most));
        return;
    }
    const int a = item;
    w.lists = 1;
    for (int k = 0; k < 2; k++) {
        w.at[k] = counts[(k + 1) * stride + a];
        w.room[k] = counts[(k + 1) * stride + a + 1] - w.at[k];
    }
    const int3 found = walk(a, &w, WALK_BUFFERS);
    if (found.y != w.room[0] || found.z != w.room[1])
        params[1] = 1;
    for (int k = 0; k < 2; k++)
        sort_by_neighbour(w.list_pairs[k], w.list_images[k], 1, w.at[k], min(k ? found.z : found.y, w.room[k]));
    const int t = params[4];
    if (t < 0)
        return;
    /* Pair x of the atom's c makes a triple with each later pair. */
    const int c = w.room[t], base = counts[3 * stride + a];
    for (int x = 0; x < c; x++)
        triple_starts[w.at[t] + x] = base + x * (c - 1) - x * (x - 1) / 2;
}
