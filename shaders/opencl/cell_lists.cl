/*
 * Cell-list neighbour search: four kernels of one program, run in turn by
 * backends/common/device_cells.c, which describes the buffers and does the
 * two prefix sums between them on the host. Positions are floats: the host
 * asks for a search radius slightly above the cutoff, so rounding never
 * loses a pair (a few just beyond the cutoff may come out; the caller
 * measures every pair in double anyway). Contraction is off so that the
 * counting and the writing pass find exactly the same pairs.
 */
#pragma OPENCL FP_CONTRACT OFF

#define SYS_REALS 28 /* H[9], rec[9], origin[3], to_bin[3], radius^2 */
#define SYS_INTS 8   /* nb[3], reach[3], periodic axes (bits), first bin */

#define CELL_ARGS                                                                                          \
    global int *params, global const float4 *pos, global const float *sys_f, global const int *sys_i,  \
        global int4 *atom_bins, global int *bin_ends, global float4 *slot_pos, global int4 *slot_shift, \
        global int *counts, global int *pairs, global int *images, const int n_items

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
 * periodic axes (m the image); n = m + shift_a - shift_j. Written from
 * out on when `write`; returns how many. */
inline int walk(const int a, const int write, const int out, const int most, global const float4 *pos,
                global const float *sys_f, global const int *sys_i, global const int4 *atom_bins,
                global const int *bin_ends, global const float4 *slot_pos, global const int4 *slot_shift,
                global int *pairs, global int *images)
{
    const float4 p = pos[a];
    global const float *f = sys_f + SYS_REALS * (int)p.w;
    global const int *g = sys_i + SYS_INTS * (int)p.w;
    const int4 b = atom_bins[a];
    const int own = b.x - g[7];
    const int bi[3] = {own / (g[1] * g[2]), (own / g[2]) % g[1], own % g[2]};
    const int per[3] = {g[6] & 1, (g[6] >> 1) & 1, (g[6] >> 2) & 1};
    const float3 wi = p.xyz - lattice(f, b.yzw);
    const float radius2 = f[24];
    int found = 0;
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
                    if (d.x * d.x + d.y * d.y + d.z * d.z > radius2)
                        continue;
                    const int4 sj = slot_shift[slot];
                    const int3 n = m + b.yzw - sj.xyz;
                    if (sj.w == a && n.x == 0 && n.y == 0 && n.z == 0)
                        continue;
                    if (write && found < most) {
                        const int q = out + found;
                        pairs[2 * q] = a;
                        pairs[2 * q + 1] = sj.w;
                        images[3 * q] = n.x;
                        images[3 * q + 1] = n.y;
                        images[3 * q + 2] = n.z;
                    }
                    found++;
                }
            }
        }
    }
    return found;
}

kernel void cell_count(CELL_ARGS)
{
    const int a = (int)get_global_id(0);
    if (a >= n_items)
        return;
    counts[a] = walk(a, 0, 0, 0, pos, sys_f, sys_i, atom_bins, bin_ends, slot_pos, slot_shift, pairs, images);
}

/* Atom params[0] + item: its pairs at counts[a] (relative to the range's
 * first pair), then sorted by j (stably: for one j the stencil order is the
 * order of n), so that the list is ordered by i, j, n as on the host. A
 * count that differs from cell_count's sets params[1]. */
kernel void cell_pairs(CELL_ARGS)
{
    const int item = (int)get_global_id(0);
    if (item >= n_items)
        return;
    const int a = params[0] + item;
    const int out = counts[a], most = counts[a + 1] - out;
    const int found =
        walk(a, 1, out, most, pos, sys_f, sys_i, atom_bins, bin_ends, slot_pos, slot_shift, pairs, images);
    if (found != most)
        params[1] = 1;
    const int end = out + (found < most ? found : most);
    for (int x = out + 1; x < end; x++) {
        const int j = pairs[2 * x + 1], n0 = images[3 * x], n1 = images[3 * x + 1], n2 = images[3 * x + 2];
        int y = x;
        for (; y > out && pairs[2 * y - 1] > j; y--) {
            pairs[2 * y + 1] = pairs[2 * y - 1];
            images[3 * y] = images[3 * y - 3];
            images[3 * y + 1] = images[3 * y - 2];
            images[3 * y + 2] = images[3 * y - 1];
        }
        pairs[2 * y + 1] = j;
        images[3 * y] = n0;
        images[3 * y + 1] = n1;
        images[3 * y + 2] = n2;
    }
}
