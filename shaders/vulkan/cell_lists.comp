/*
 * Cell-list neighbour search: the four kernels of shaders/opencl/cell_lists.cl
 * (see there and backends/common/device_cells.c), one per CELL_KERNEL value
 * (0 bin, 1 place, 2 count, 3 pairs), which the host defines after
 * "#version 450". The distance test is `precise`: the counting and the
 * writing pass must find exactly the same pairs.
 */
layout(local_size_x = 64) in;

#define SYS_REALS 28 /* H[9], rec[9], origin[3], to_bin[3], radius^2 */
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
/* The pairs of atom a within the search radius, in stencil order, written
 * from first on (at most `most`) when `write`; returns how many. */
int walk(int a, bool write, int first, int most)
{
    const vec4 p = pos[a];
    const int f = SYS_REALS * int(p.w), g = SYS_INTS * int(p.w);
    const ivec4 b = atom_bins[a];
    const int nb0 = sys_i[g], nb1 = sys_i[g + 1], nb2 = sys_i[g + 2], bits = sys_i[g + 6];
    const int own = b.x - sys_i[g + 7];
    const int bi0 = own / (nb1 * nb2), bi1 = (own / nb2) % nb1, bi2 = own % nb2;
    const bool per0 = (bits & 1) != 0, per1 = (bits & 2) != 0, per2 = (bits & 4) != 0;
    const vec3 wi = p.xyz - lattice(f, b.yzw);
    const float radius2 = sys_f[f + 24];
    int found = 0;
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
                    precise float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
                    if (d2 > radius2)
                        continue;
                    const ivec4 sj = slot_shift[slot];
                    const ivec3 n = m + b.yzw - sj.xyz;
                    if (sj.w == a && n == ivec3(0))
                        continue;
                    if (write && found < most) {
                        const int q = first + found;
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
    counts[item] = walk(int(item), false, 0, 0);
#else
    const int a = params[0] + int(item);
    const int first = counts[a], most = counts[a + 1] - first;
    const int found = walk(a, true, first, most);
    if (found != most)
        params[1] = 1;
    const int end = first + min(found, most);
    for (int x = first + 1; x < end; x++) {
        const int j = pairs[2 * x + 1], n0 = images[3 * x], n1 = images[3 * x + 1], n2 = images[3 * x + 2];
        int y = x;
        for (; y > first && pairs[2 * y - 1] > j; y--) {
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
#endif
}
