/*
 * Segment sort on the device: the kernels of shaders/opencl/segment_sort.cl
 * (see there and backends/common/segments.c), one per SORT_KERNEL value
 * (0 keys, 1 count, 2 tile sums, 3 scan tiles, 4 scan, 5 scatter, 6 offsets,
 * 7 in order, 8 pairs, 9 pair entries: mlff_sort_kernel),
 * which the host defines after "#version 450". The arguments are the
 * dispatch's values (dispatch.glsl) after the usual n_items and base.
 */
#define SORT_GROUP 256
#define SORT_BITS 8
#define SORT_BINS (1 << SORT_BITS)
#define SCAN_TILE (4 * SORT_GROUP)

layout(local_size_x = SORT_GROUP) in;

layout(std430, set = 0, binding = 0) readonly buffer KeysB { int keys[]; };
layout(std430, set = 0, binding = 1) readonly buffer MapB { int map[]; };
layout(std430, set = 0, binding = 2) readonly buffer KeyInB { int key_in[]; };
layout(std430, set = 0, binding = 3) readonly buffer ValInB { int val_in[]; };
layout(std430, set = 0, binding = 4) buffer KeyOutB { int key_out[]; };
layout(std430, set = 0, binding = 5) buffer ValOutB { int val_out[]; };
layout(std430, set = 0, binding = 6) buffer CountsB { int counts[]; };
layout(std430, set = 0, binding = 7) buffer TilesB { int tiles[]; };
layout(std430, set = 0, binding = 8) buffer OffsetsB { int offsets[]; };
layout(std430, set = 0, binding = 9) buffer FlagB { int flag[]; };

struct Push { /* dispatch.glsl */
    uint n_items;
    uint base;
    int n, n_keys, stride, map_stride, map_entries, shift;
};
DISPATCH_VALUES(Push);

shared int part[SORT_GROUP];
#if SORT_KERNEL == 5
shared int local_key[SORT_GROUP], local_val[SORT_GROUP], first_of[SORT_BINS];
#endif

int digit_of(int key)
{
    return (key >> pc.shift) & (SORT_BINS - 1);
}

/* Inclusive prefix sum of part[] over the group (every item calls it). */
int group_scan(int t, int value)
{
    part[t] = value;
    barrier();
    for (int d = 1; d < SORT_GROUP; d <<= 1) {
        const int add = t >= d ? part[t - d] : 0;
        barrier();
        part[t] += add;
        barrier();
    }
    const int sum = part[t];
    barrier();
    return sum;
}

/* Entry e's key, through the map where there is one (-1 where the map has none). */
int key_of(int e)
{
    int k = keys[uint(e) * uint(pc.stride)];
    if (pc.map_entries > 0) {
        const uint m = uint(k) * uint(pc.map_stride);
        k = k >= 0 && m < uint(pc.map_entries) ? map[m] : -1;
    }
    return k;
}

/* For an entry at `at` whose key is `key` where the entry before has key
 * `before` (-1 for the first; n_keys after the last entry): `at` is where
 * keys before + 1 .. key begin (mark_starts of segment_sort.cl). */
void mark_starts(int before, int key, int at)
{
    for (int j = clamp(before, -1, pc.n_keys) + 1; j <= min(key, pc.n_keys); j++)
        offsets[j] = at;
}

/* Where each of the centers k[0..3] has its run of pairs begin, in a pair
 * list of n_pairs, in place: the four searches take the same steps side by
 * side, so their loads overlap instead of chaining. */
void run_starts(int n_pairs, inout int k[4])
{
    int base[4] = int[4](0, 0, 0, 0), len = n_pairs;
    while (len > 1) {
        const int step = len / 2;
        for (int t = 0; t < 4; t++)
            base[t] += keys[2 * (base[t] + step)] < k[t] ? step : 0;
        len -= step;
    }
    for (int t = 0; t < 4; t++)
        k[t] = base[t] + (len == 1 && keys[2 * base[t]] < k[t] ? 1 : 0);
}

/* The first pair of [lo, hi) of a pair list whose j is >= v (above: > v). */
int run_bound(int lo, int hi, int v, bool above)
{
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        const int j = keys[2 * mid + 1];
        if (j < v || (above && j == v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Pair q = (a, b)'s two entries where the stable sort puts them, from the
 * runs of pairs of centers a and b. */
void place_pair(int q, int first_a, int end_a, int first_b, int end_b)
{
    const int a = keys[2 * q], b = keys[2 * q + 1];
    const int self_lo = run_bound(first_a, end_a, a, false), self_hi = run_bound(self_lo, end_a, a, true);
    const int center = 2 * first_a + (self_lo - first_a) + (q - first_a) + (clamp(q, self_lo, self_hi) - self_lo);
    val_out[center] = 2 * q;
    if (b == a) {
        val_out[center + 1] = 2 * q + 1;
        return;
    }
    const int rank = q - run_bound(first_a, q, b, false); /* among the atom's pairs with b */
    val_out[2 * first_b + (a > b ? end_b - first_b : 0) + (run_bound(first_b, end_b, a, false) - first_b) + rank] =
        2 * q + 1;
}

/* Whether pair q's atoms are in range; reported as sort_keys reports a key if not. */
bool pair_in_range(int q)
{
    const int a = keys[2 * q], b = keys[2 * q + 1];
    if (a >= 0 && a < pc.n_keys && b >= 0 && b < pc.n_keys)
        return true;
    atomicMax(flag[0], 2 * q + (a < 0 || a >= pc.n_keys ? 1 : 2));
    return false;
}

void main()
{
    const int n_blocks = (pc.n + SORT_GROUP - 1) / SORT_GROUP, total = SORT_BINS * n_blocks;
    const int t = int(gl_LocalInvocationID.x);
    const int group = int(pc.base / SORT_GROUP + gl_WorkGroupID.x);
    const int item = int(pc.base + gl_GlobalInvocationID.x);
#if SORT_KERNEL == 0
    /* keys */
    if (item >= pc.n)
        return;
    int k = key_of(item);
    if (k < 0 || k >= pc.n_keys) {
        atomicMax(flag[0], item + 1);
        k = pc.n_keys;
    }
    key_out[item] = k;
    val_out[item] = item;
#elif SORT_KERNEL == 1
    /* count */
    if (t < SORT_BINS)
        part[t] = 0;
    barrier();
    const int e = group * SORT_GROUP + t;
    if (e < pc.n)
        atomicAdd(part[digit_of(key_in[e])], 1);
    barrier();
    if (t < SORT_BINS)
        counts[t * n_blocks + group] = part[t];
#elif SORT_KERNEL == 2
    /* tile sums */
    int sum = 0;
    for (int i = group * SCAN_TILE + t; i < min(total, (group + 1) * SCAN_TILE); i += SORT_GROUP)
        sum += counts[i];
    sum = group_scan(t, sum);
    if (t == SORT_GROUP - 1)
        tiles[group] = sum;
#elif SORT_KERNEL == 3
    /* scan tiles (one group) */
    const int n_tiles = (total + SCAN_TILE - 1) / SCAN_TILE;
    int carry = 0;
    for (int first = 0; first < n_tiles; first += SORT_GROUP) {
        const int value = first + t < n_tiles ? tiles[first + t] : 0;
        const int inclusive = group_scan(t, value);
        if (first + t < n_tiles)
            tiles[first + t] = carry + inclusive - value;
        carry += part[SORT_GROUP - 1];
        barrier();
    }
#elif SORT_KERNEL == 4
    /* scan */
    const int per = SCAN_TILE / SORT_GROUP, first = group * SCAN_TILE + t * per;
    int mine[SCAN_TILE / SORT_GROUP], sum = 0;
    for (int i = 0; i < per; i++) {
        mine[i] = first + i < total ? counts[first + i] : 0;
        sum += mine[i];
    }
    int run = tiles[group] + group_scan(t, sum) - sum;
    for (int i = 0; i < per && first + i < total; i++) {
        counts[first + i] = run;
        run += mine[i];
    }
#elif SORT_KERNEL == 5
    /* scatter */
    const int e = group * SORT_GROUP + t;
    int key = e < pc.n ? key_in[e] : 0x7fffffff, val = e < pc.n ? val_in[e] : -1;
    for (int bit = 0; bit < SORT_BITS; bit++) {
        const int one = (digit_of(key) >> bit) & 1;
        const int zeros_through = group_scan(t, 1 - one);
        const int zeros = part[SORT_GROUP - 1];
        barrier();
        const int to = one != 0 ? zeros + t - zeros_through : zeros_through - 1;
        local_key[to] = key;
        local_val[to] = val;
        barrier();
        key = local_key[t];
        val = local_val[t];
        barrier();
    }
    const int d = digit_of(key);
    if (t == 0 || digit_of(local_key[t - 1]) != d)
        first_of[d] = t;
    barrier();
    if (val >= 0) {
        const int to = counts[d * n_blocks + group] + t - first_of[d];
        key_out[to] = key;
        val_out[to] = val;
    }
#elif SORT_KERNEL == 6
    /* offsets */
    if (item > pc.n_keys)
        return;
    int lo = 0, hi = pc.n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (key_in[mid] < item)
            lo = mid + 1;
        else
            hi = mid;
    }
    offsets[item] = lo;
#elif SORT_KERNEL == 7
    /* in order: keys and offsets at once, no search (sort_in_order of
     * segment_sort.cl) */
    if (item > pc.n)
        return;
    const int k = item < pc.n ? key_of(item) : pc.n_keys;
    if (item < pc.n) {
        if (k < 0 || k >= pc.n_keys)
            atomicMax(flag[0], item + 1);
        val_out[item] = item;
    }
    mark_starts(item > 0 ? key_of(item - 1) : -1, k, item);
#elif SORT_KERNEL == 8
    /* pairs: the offsets where the centers change, then, with pc.shift set
     * (a list of few pairs), pair `item`'s two entries from runs it finds
     * itself (sort_pairs of segment_sort.cl) */
    const int q = item, n_pairs = pc.n / 2;
    if (q > n_pairs)
        return;
    const int center = q < n_pairs ? keys[2 * q] : pc.n_keys;
    mark_starts(q > 0 ? keys[2 * q - 2] : -1, center, 2 * q);
    if (q == n_pairs || pc.shift == 0 || !pair_in_range(q))
        return;
    const int b = keys[2 * q + 1];
    int runs[4] = int[4](center, center + 1, b, b + 1);
    run_starts(n_pairs, runs); /* side by side */
    place_pair(q, runs[0], runs[1], runs[2], runs[3]);
#elif SORT_KERNEL == 9
    /* pair entries: pair `item`'s two entries from the offsets (a long list;
     * sort_pair_entries of segment_sort.cl) */
    const int q = item;
    if (q >= pc.n / 2 || !pair_in_range(q))
        return;
    const int a = keys[2 * q], b = keys[2 * q + 1];
    place_pair(q, offsets[a] / 2, offsets[a + 1] / 2, offsets[b] / 2, offsets[b + 1] / 2);
#endif
}
