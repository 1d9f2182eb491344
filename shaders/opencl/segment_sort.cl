/*
 * Segment sort on the device (backends/common/segments.c drives it): the
 * entries of an index sorted stably by key, as the host's counting sort
 * does, by a least-significant-digit radix sort of SORT_BITS bits per pass.
 * Stable passes keep equal keys in entry order, so the CSR (offsets, items)
 * is the host's exactly and a sum over a segment adds in the same order.
 *
 * Every kernel takes the same arguments; each pass reads (key_in, val_in)
 * and writes (key_out, val_out), which the host swaps between passes.
 * counts holds SORT_BINS counts per block of SORT_GROUP entries, digit-major,
 * so that its exclusive prefix sum is where each block's entries of each
 * digit go; tiles holds the sums of SCAN_TILE counts for that prefix sum.
 */
#define SORT_GROUP 256
#define SORT_BITS 8
#define SORT_BINS (1 << SORT_BITS)
#define SCAN_TILE (4 * SORT_GROUP)

/* Every kernel's buffers (the order of sort_launch in
 * backends/opencl/cl_segments.c), then its ints; SORT_POINTERS is each
 * kernel's first line (arena.cl). */
#define SORT_BUFFERS(X)                                                                                   \
    X(global const int *, keys) X(global const int *, map) X(global const int *, key_in)                   \
    X(global const int *, val_in) X(global int *, key_out) X(global int *, val_out) X(global int *, counts) \
    X(global int *, tiles) X(global int *, offsets) X(global int *, flag)
#define SORT_ARGS                                                                                          \
    ARENA_FIRST SORT_BUFFERS(BUFFER_ARG) const int n, const int n_keys, const int stride, const int map_stride, \
        const int map_entries, const int shift
#define SORT_POINTERS SORT_BUFFERS(BUFFER_POINTER)

#define GROUP __attribute__((reqd_work_group_size(SORT_GROUP, 1, 1)))

inline int digit_of(const int key, const int shift)
{
    return (key >> shift) & (SORT_BINS - 1);
}

/* Inclusive prefix sum of part[] over the group (every item calls it). */
inline int group_scan(local int *part, const int t, const int value)
{
    part[t] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < SORT_GROUP; d <<= 1) {
        const int add = t >= d ? part[t - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[t] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int sum = part[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}

/* Entry e's key, through the map where there is one (-1 where the map has none). */
inline int key_of(global const int *keys, global const int *map, const int e, const int stride, const int map_stride,
                  const int map_entries)
{
    long k = keys[(long)e * stride];
    if (map_entries > 0) {
        const long m = k * map_stride;
        k = m >= 0 && m < map_entries ? map[m] : -1;
    }
    return (int)k;
}

/* For an entry at `at` whose key is `key` where the entry before has key
 * `before` (-1 for the first; n_keys after the last entry): `at` is where
 * keys before + 1 .. key begin. Each offset is written once, by the entry
 * where the keys change: offsets of keys in order without a search. */
inline void mark_starts(global int *offsets, const int before, const int key, const int n_keys, const int at)
{
    for (int j = clamp(before, -1, n_keys) + 1; j <= min(key, n_keys); j++)
        offsets[j] = at;
}

/* Entry e's key (through the map where there is one) and e itself. A key
 * out of range becomes n_keys: sorted last, in no segment, and reported
 * (flag: the last such entry + 1). */
kernel void sort_keys(SORT_ARGS)
{
    SORT_POINTERS
    const int e = (int)get_global_id(0);
    if (e >= n)
        return;
    int k = key_of(keys, map, e, stride, map_stride, map_entries);
    if (k < 0 || k >= n_keys) {
        atomic_max(flag, e + 1);
        k = n_keys;
    }
    key_out[e] = k;
    val_out[e] = e;
}

/* Per block: how many of its entries have each digit. */
kernel GROUP void sort_count(SORT_ARGS)
{
    SORT_POINTERS
    local int hist[SORT_BINS];
    const int t = (int)get_local_id(0), block = (int)get_group_id(0), e = block * SORT_GROUP + t;
    const int n_blocks = (n + SORT_GROUP - 1) / SORT_GROUP;
    if (t < SORT_BINS)
        hist[t] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (e < n)
        atomic_inc(&hist[digit_of(key_in[e], shift)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < SORT_BINS)
        counts[t * n_blocks + block] = hist[t];
}

/* The prefix sum of counts in three steps: the sum of each tile ... */
kernel GROUP void sort_tile_sums(SORT_ARGS)
{
    SORT_POINTERS
    local int part[SORT_GROUP];
    const int t = (int)get_local_id(0), tile = (int)get_group_id(0);
    const int total = SORT_BINS * ((n + SORT_GROUP - 1) / SORT_GROUP);
    int sum = 0;
    for (int i = tile * SCAN_TILE + t; i < min(total, (tile + 1) * SCAN_TILE); i += SORT_GROUP)
        sum += counts[i];
    sum = group_scan(part, t, sum);
    if (t == SORT_GROUP - 1)
        tiles[tile] = sum;
}

/* ... the tiles' exclusive prefix sum (one group) ... */
kernel GROUP void sort_scan_tiles(SORT_ARGS)
{
    SORT_POINTERS
    local int part[SORT_GROUP];
    const int t = (int)get_local_id(0);
    const int total = SORT_BINS * ((n + SORT_GROUP - 1) / SORT_GROUP);
    const int n_tiles = (total + SCAN_TILE - 1) / SCAN_TILE;
    int carry = 0;
    for (int first = 0; first < n_tiles; first += SORT_GROUP) {
        const int value = first + t < n_tiles ? tiles[first + t] : 0;
        const int inclusive = group_scan(part, t, value);
        if (first + t < n_tiles)
            tiles[first + t] = carry + inclusive - value;
        carry += part[SORT_GROUP - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* ... and each tile's counts replaced by their exclusive prefix sum. */
kernel GROUP void sort_scan(SORT_ARGS)
{
    SORT_POINTERS
    local int part[SORT_GROUP];
    const int t = (int)get_local_id(0), tile = (int)get_group_id(0);
    const int total = SORT_BINS * ((n + SORT_GROUP - 1) / SORT_GROUP);
    const int first = tile * SCAN_TILE + t * (SCAN_TILE / SORT_GROUP);
    int mine[SCAN_TILE / SORT_GROUP], sum = 0;
    for (int i = 0; i < SCAN_TILE / SORT_GROUP; i++) {
        mine[i] = first + i < total ? counts[first + i] : 0;
        sum += mine[i];
    }
    int run = tiles[tile] + group_scan(part, t, sum) - sum;
    for (int i = 0; i < SCAN_TILE / SORT_GROUP && first + i < total; i++) {
        counts[first + i] = run;
        run += mine[i];
    }
}

/* Per block: its entries sorted by digit in local memory (SORT_BITS stable
 * one-bit splits), then each written at its digit's place for this block
 * plus its rank among the block's entries of that digit. */
kernel GROUP void sort_scatter(SORT_ARGS)
{
    SORT_POINTERS
    local int part[SORT_GROUP], local_key[SORT_GROUP], local_val[SORT_GROUP];
    local int first_of[SORT_BINS];
    const int t = (int)get_local_id(0), block = (int)get_group_id(0), e = block * SORT_GROUP + t;
    const int n_blocks = (n + SORT_GROUP - 1) / SORT_GROUP;
    /* Past the end (val -1): not written; the stable splits keep them
     * behind the block's own entries, so they change no rank. */
    int key = e < n ? key_in[e] : INT_MAX, val = e < n ? val_in[e] : -1;
    for (int bit = 0; bit < SORT_BITS; bit++) {
        const int one = (digit_of(key, shift) >> bit) & 1;
        const int zeros_through = group_scan(part, t, 1 - one);
        const int zeros = part[SORT_GROUP - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        const int to = one ? zeros + t - zeros_through : zeros_through - 1;
        local_key[to] = key;
        local_val[to] = val;
        barrier(CLK_LOCAL_MEM_FENCE);
        key = local_key[t];
        val = local_val[t];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int d = digit_of(key, shift);
    if (t == 0 || digit_of(local_key[t - 1], shift) != d)
        first_of[d] = t;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (val >= 0) {
        const int to = counts[d * n_blocks + block] + t - first_of[d];
        key_out[to] = key;
        val_out[to] = val;
    }
}

/* offsets[k] for k in [0, n_keys]: where key k begins in the sorted keys. */
kernel void sort_offsets(SORT_ARGS)
{
    SORT_POINTERS
    const int k = (int)get_global_id(0);
    if (k > n_keys)
        return;
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (key_in[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    offsets[k] = lo;
}

/* Keys in order already (no radix pass): sort_keys and sort_offsets in
 * one launch. Entry e is item e; item n marks the keys after the last
 * entry's (mark_starts). */
kernel void sort_in_order(SORT_ARGS)
{
    SORT_POINTERS
    const int e = (int)get_global_id(0);
    if (e > n)
        return;
    const int k = e < n ? key_of(keys, map, e, stride, map_stride, map_entries) : n_keys;
    if (e < n) {
        if (k < 0 || k >= n_keys)
            atomic_max(flag, e + 1);
        val_out[e] = e;
    }
    mark_starts(offsets, e > 0 ? key_of(keys, map, e - 1, stride, map_stride, map_entries) : -1, k, n_keys, e);
}

/* A pair list declared symmetric (mlff_exec_tensor.symmetric: each (i, j, n) with its
 * (j, i, -n), ordered by i, then j); keys: the pairs [n / 2, 2]. The stable
 * sort's CSR of the entries 2p + side by atom, without sorting: an atom's
 * segment holds twice its run of pairs by center (by symmetry, it is the
 * neighbour of as many pairs as it is the center of), and in sorted order
 * it is: the entries of pairs of centers before it (their blocks (b, a), b
 * ascending), its own run (each pair's center entry, followed by its
 * neighbour entry for the atom's own images), the blocks of centers after
 * it. Each block (b, a) lines up with the atom's pairs (a, b). */
inline int run_bound(global const int *keys, int lo, int hi, const int v, const int above)
{
    while (lo < hi) { /* the first pair of [lo, hi) whose j is >= v (above: > v) */
        const int mid = lo + (hi - lo) / 2;
        const int j = keys[2 * (long)mid + 1];
        if (j < v || (above && j == v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Where each of the centers k[0..3] has its run of pairs begin, in place:
 * the four searches take the same steps side by side, so their loads
 * overlap instead of chaining. */
inline void run_starts(global const int *keys, const int n_pairs, int k[4])
{
    int base[4] = {0, 0, 0, 0}, len = n_pairs;
    while (len > 1) {
        const int step = len / 2;
        for (int t = 0; t < 4; t++)
            base[t] += keys[2 * (long)(base[t] + step)] < k[t] ? step : 0;
        len -= step;
    }
    for (int t = 0; t < 4; t++)
        k[t] = base[t] + (len == 1 && keys[2 * (long)base[t]] < k[t]);
}

/* Pair q = (a, b)'s two entries where the stable sort puts them, from the
 * runs of pairs of centers a and b. */
inline void place_pair(global const int *keys, global int *val_out, const int q, const int a, const int b,
                       const int first_a, const int end_a, const int first_b, const int end_b)
{
    const int self_lo = run_bound(keys, first_a, end_a, a, 0), self_hi = run_bound(keys, self_lo, end_a, a, 1);
    const int center = 2 * first_a + (self_lo - first_a) + (q - first_a) + (clamp(q, self_lo, self_hi) - self_lo);
    val_out[center] = 2 * q;
    if (b == a) {
        val_out[center + 1] = 2 * q + 1;
        return;
    }
    const int rank = q - run_bound(keys, first_a, q, b, 0); /* among the atom's pairs with b */
    val_out[2 * first_b + (a > b ? end_b - first_b : 0) + (run_bound(keys, first_b, end_b, a, 0) - first_b) + rank] =
        2 * q + 1;
}

/* Pair q's centers, checked: 0 (and reported as sort_keys reports a key) for an atom out of range. */
inline int pair_in_range(global const int *keys, global int *flag, const int q, const int n_keys, int *a, int *b)
{
    *a = keys[2 * (long)q];
    *b = keys[2 * (long)q + 1];
    if (*a >= 0 && *a < n_keys && *b >= 0 && *b < n_keys)
        return 1;
    atomic_max(flag, 2 * q + (*a < 0 || *a >= n_keys ? 1 : 2));
    return 0;
}

/* Item q: twice where the centers begin, as sort_in_order finds them
 * (mark_starts; item n / 2 the centers after the last). With `shift`
 * set (a list of few pairs: one launch), each item then places its pair's
 * entries from runs it finds itself; else sort_pair_entries does, from the
 * offsets. */
kernel void sort_pairs(SORT_ARGS)
{
    SORT_POINTERS
    const int q = (int)get_global_id(0), n_pairs = n / 2;
    if (q > n_pairs)
        return;
    mark_starts(offsets, q > 0 ? keys[2 * (long)q - 2] : -1, q < n_pairs ? keys[2 * (long)q] : n_keys, n_keys, 2 * q);
    int a, b;
    if (q == n_pairs || !shift || !pair_in_range(keys, flag, q, n_keys, &a, &b))
        return;
    int runs[4] = {a, a + 1, b, b + 1}; /* their starts, searched side by side */
    run_starts(keys, n_pairs, runs);
    place_pair(keys, val_out, q, a, b, runs[0], runs[1], runs[2], runs[3]);
}

/* Pair q's two entries, from the offsets sort_pairs wrote (a long list). */
kernel void sort_pair_entries(SORT_ARGS)
{
    SORT_POINTERS
    const int q = (int)get_global_id(0);
    int a, b;
    if (q >= n / 2 || !pair_in_range(keys, flag, q, n_keys, &a, &b))
        return;
    place_pair(keys, val_out, q, a, b, offsets[a] / 2, offsets[a + 1] / 2, offsets[b] / 2, offsets[b + 1] / 2);
}
