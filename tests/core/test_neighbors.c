/*
 * Cell-list neighbour lists against a brute-force search (all pairs of a
 * system, all image offsets that can reach the cutoff): non-periodic
 * clusters, cubic and strongly skewed triclinic boxes, cells thinner than
 * the cutoff (many images, self-images), slabs and wires, atoms outside the
 * cell, one batch mixing them with an empty system. Also: order, symmetry,
 * reuse of memory, errors, and timings of large water-density boxes.
 * With a backend name (opencl, vulkan), also the device's cell lists
 * (backends/common/device_cells.h) against the host's on every case.
 * Usage: test_neighbors [opencl|vulkan]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/device_cells.h"
#include "core/neighbors.h"
#include "tests/backends/device.h"

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

/* A fixed xorshift generator: the same systems on every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static int rand_int(int lo, int hi) /* inclusive */
{
    return lo + (int)(uniform() * (hi - lo + 1));
}

/* One system under construction. */
typedef struct sys {
    int n;
    double *pos;
    double cell[9];
    uint8_t pbc[3];
} sys;

static sys make_sys(int n, const double cell[9], int p0, int p1, int p2)
{
    sys s = {n, calloc((size_t)(n ? n : 1) * 3, sizeof(double)), {0}, {(uint8_t)p0, (uint8_t)p1, (uint8_t)p2}};
    if (cell)
        memcpy(s.cell, cell, sizeof s.cell);
    return s;
}

/* Random atoms inside the cell; along non-periodic axes spread over
 * [-extra, 1 + extra] of the lattice vector. */
static void fill_random(sys *s, double extra)
{
    for (int a = 0; a < s->n; a++) {
        double u[3];
        for (int k = 0; k < 3; k++)
            u[k] = s->pbc[k] ? uniform() : -extra + (1 + 2 * extra) * uniform();
        for (int d = 0; d < 3; d++)
            s->pos[3 * a + d] = u[0] * s->cell[d] + u[1] * s->cell[3 + d] + u[2] * s->cell[6 + d];
    }
}

/* Move atoms by random lattice vectors along periodic axes (outside the cell). */
static void scatter_images(sys *s, int range)
{
    for (int a = 0; a < s->n; a++)
        for (int k = 0; k < 3; k++) {
            if (!s->pbc[k])
                continue;
            const int m = rand_int(-range, range);
            for (int d = 0; d < 3; d++)
                s->pos[3 * a + d] += m * s->cell[3 * k + d];
        }
}

typedef struct batch_buf {
    int64_t n_systems;
    int64_t *offsets;
    int32_t *z;
    double *pos, *cells;
    uint8_t *pbc;
    mlff_batch b;
} batch_buf;

static batch_buf make_batch(const sys *systems, int n_systems, int with_cells)
{
    batch_buf bb = {0};
    bb.n_systems = n_systems;
    bb.offsets = calloc((size_t)n_systems + 1, sizeof *bb.offsets);
    int64_t n = 0;
    for (int s = 0; s < n_systems; s++) {
        n += systems[s].n;
        bb.offsets[s + 1] = n;
    }
    bb.z = calloc((size_t)(n ? n : 1), sizeof *bb.z);
    bb.pos = calloc((size_t)(n ? n : 1) * 3, sizeof *bb.pos);
    bb.cells = calloc((size_t)(n_systems ? n_systems : 1) * 9, sizeof *bb.cells);
    bb.pbc = calloc((size_t)(n_systems ? n_systems : 1) * 3, 1);
    for (int s = 0; s < n_systems; s++) {
        memcpy(bb.pos + 3 * bb.offsets[s], systems[s].pos, (size_t)systems[s].n * 3 * sizeof(double));
        memcpy(bb.cells + 9 * s, systems[s].cell, 9 * sizeof(double));
        memcpy(bb.pbc + 3 * s, systems[s].pbc, 3);
    }
    for (int64_t a = 0; a < n; a++)
        bb.z[a] = 8;
    bb.b = (mlff_batch){n_systems, bb.offsets, bb.z, bb.pos, with_cells ? bb.cells : NULL,
                        with_cells ? bb.pbc : NULL};
    return bb;
}

static void free_batch(batch_buf *bb)
{
    free(bb->offsets);
    free(bb->z);
    free(bb->pos);
    free(bb->cells);
    free(bb->pbc);
}

/* The pair vector exactly as the library's users compute it. */
static double pair_d2(const mlff_batch *b, int64_t s, int32_t i, int32_t j, const int32_t n[3])
{
    const double *c = b->cells ? b->cells + 9 * s : NULL;
    double d2 = 0;
    double v[3];
    for (int d = 0; d < 3; d++) {
        double shift = 0.0;
        if (c && (n[0] | n[1] | n[2]))
            shift = n[0] * c[d] + n[1] * c[3 + d] + n[2] * c[6 + d];
        v[d] = b->positions[3 * j + d] - b->positions[3 * i + d] + shift;
    }
    d2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    return d2;
}

typedef struct ref_list {
    int64_t n, cap;
    int32_t *t; /* [n][5]: i, j, n0, n1, n2 */
} ref_list;

static void ref_push(ref_list *r, int32_t i, int32_t j, const int32_t n[3])
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->t = realloc(r->t, (size_t)r->cap * 5 * sizeof *r->t);
    }
    int32_t *t = r->t + 5 * r->n++;
    t[0] = i;
    t[1] = j;
    t[2] = n[0];
    t[3] = n[1];
    t[4] = n[2];
}

/* Brute force: every i, j of each system and, per pair, every image offset
 * whose fractional separation can be within the cutoff (plus one). Loops
 * in (i, j, n0, n1, n2) order, so the result comes out sorted. */
static void brute_force(const mlff_batch *b, double cutoff, ref_list *r)
{
    r->n = 0;
    const double rc2 = cutoff * cutoff;
    for (int64_t s = 0; s < b->n_systems; s++) {
        int per[3] = {0, 0, 0}, any = 0;
        for (int k = 0; k < 3 && b->pbc; k++)
            any |= per[k] = b->pbc[3 * s + k] != 0;
        double rec[3][3] = {{0}}, width[3] = {0};
        const double *c = b->cells ? b->cells + 9 * s : NULL;
        if (any) {
            const double *A = c, *B = c + 3, *C = c + 6;
            double cr[3][3] = {{B[1] * C[2] - B[2] * C[1], B[2] * C[0] - B[0] * C[2], B[0] * C[1] - B[1] * C[0]},
                               {C[1] * A[2] - C[2] * A[1], C[2] * A[0] - C[0] * A[2], C[0] * A[1] - C[1] * A[0]},
                               {A[1] * B[2] - A[2] * B[1], A[2] * B[0] - A[0] * B[2], A[0] * B[1] - A[1] * B[0]}};
            const double det = A[0] * cr[0][0] + A[1] * cr[0][1] + A[2] * cr[0][2];
            for (int k = 0; k < 3; k++) {
                for (int d = 0; d < 3; d++)
                    rec[k][d] = cr[k][d] / det;
                width[k] = fabs(det) / sqrt(cr[k][0] * cr[k][0] + cr[k][1] * cr[k][1] + cr[k][2] * cr[k][2]);
            }
        }
        for (int64_t i = b->system_offsets[s]; i < b->system_offsets[s + 1]; i++)
            for (int64_t j = b->system_offsets[s]; j < b->system_offsets[s + 1]; j++) {
                int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
                for (int k = 0; k < 3; k++) {
                    if (!per[k])
                        continue;
                    double du = 0;
                    for (int d = 0; d < 3; d++)
                        du += (b->positions[3 * j + d] - b->positions[3 * i + d]) * rec[k][d];
                    const double reach = cutoff / width[k];
                    lo[k] = (int)floor(-du - reach) - 1;
                    hi[k] = (int)ceil(-du + reach) + 1;
                }
                int32_t n[3];
                for (n[0] = lo[0]; n[0] <= hi[0]; n[0]++)
                    for (n[1] = lo[1]; n[1] <= hi[1]; n[1]++)
                        for (n[2] = lo[2]; n[2] <= hi[2]; n[2]++) {
                            if (i == j && !(n[0] | n[1] | n[2]))
                                continue;
                            if (pair_d2(b, s, (int32_t)i, (int32_t)j, n) <= rc2)
                                ref_push(r, (int32_t)i, (int32_t)j, n);
                        }
            }
    }
}

static int system_of(const mlff_batch *b, int32_t a)
{
    int s = 0;
    while (b->system_offsets[s + 1] <= a)
        s++;
    return s;
}

static int triple_cmp(const int32_t *x, const int32_t *y)
{
    for (int k = 0; k < 5; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

static void get_triple(const mlff_neighbor_list *l, int64_t p, int32_t t[5])
{
    t[0] = l->pairs[2 * p];
    t[1] = l->pairs[2 * p + 1];
    memcpy(t + 2, l->images + 3 * p, 3 * sizeof(int32_t));
}

/* Order, distances, same system, and (j, i, -n) present for every (i, j, n). */
static void check_invariants(const mlff_batch *b, double cutoff, const mlff_neighbor_list *l, const char *name)
{
    char what[256];
    int ordered = 1, within = 1, same_system = 1, symmetric = 1;
    for (int64_t p = 0; p < l->n_pairs; p++) {
        int32_t t[5], u[5];
        get_triple(l, p, t);
        if (p > 0) {
            get_triple(l, p - 1, u);
            ordered &= triple_cmp(u, t) < 0;
        }
        const int s = system_of(b, t[0]);
        same_system &= s == system_of(b, t[1]);
        within &= pair_d2(b, s, t[0], t[1], t + 2) <= cutoff * cutoff;
        /* The reverse pair, by binary search (the list is sorted). */
        const int32_t rev[5] = {t[1], t[0], -t[2], -t[3], -t[4]};
        int64_t lo = 0, hi = l->n_pairs;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            get_triple(l, mid, u);
            if (triple_cmp(u, rev) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < l->n_pairs)
            get_triple(l, lo, u);
        symmetric &= lo < l->n_pairs && triple_cmp(u, rev) == 0;
    }
    snprintf(what, sizeof what, "%s: sorted by i, j, n", name);
    check(ordered, what);
    snprintf(what, sizeof what, "%s: every pair within the cutoff", name);
    check(within, what);
    snprintf(what, sizeof what, "%s: pairs within one system", name);
    check(same_system, what);
    snprintf(what, sizeof what, "%s: both directions of every pair", name);
    check(symmetric, what);
}

/* Threads for the parallel search (3: blocks of uneven sizes per thread). */
static mlff_thread_pool *threads;

static double now(void);

/* The search on the pool gives exactly the serial list; returns the time of
 * a second build (memory already there). */
static double check_threaded(const mlff_batch *b, double cutoff, const mlff_neighbor_list *serial, const char *name)
{
    mlff_neighbor_list l = {0};
    mlff_error err;
    mlff_error_clear(&err);
    mlff_status st = mlff_neighbors_build(b, cutoff, threads, &l, &err);
    const double t0 = now();
    st |= mlff_neighbors_build(b, cutoff, threads, &l, &err);
    const double seconds = now() - t0;
    char what[1024];
    snprintf(what, sizeof what, "%s: on 3 threads the same list as on one", name);
    check(st == MLFF_OK && l.n_pairs == serial->n_pairs &&
              !memcmp(l.pairs, serial->pairs, (size_t)l.n_pairs * 2 * sizeof(int32_t)) &&
              !memcmp(l.images, serial->images, (size_t)l.n_pairs * 3 * sizeof(int32_t)),
          what);
    mlff_neighbor_list_free(&l);
    return seconds;
}

/* The device search, when a backend was named. */
static const mlff_backend_iface *device_iface;
static mlff_backend *device;
static mlff_device_cells *device_cells;

/* The device's list is the host's, in the same order, once the pairs just
 * beyond the cutoff (float rounding) are dropped; returns its time. */
static double check_device(const mlff_batch *b, double cutoff, const mlff_neighbor_list *host, const char *name)
{
    if (!device_cells)
        return 0.0;
    mlff_neighbor_list l = {0};
    mlff_error err;
    mlff_error_clear(&err);
    mlff_backend_stats before = {0}, after = {0};
    mlff_status st = mlff_device_cells_build(device_cells, b, cutoff, &l, &err);
    device_iface->get_stats(device, &before);
    const double t0 = now();
    st |= mlff_device_cells_build(device_cells, b, cutoff, &l, &err);
    const double seconds = now() - t0;
    device_iface->get_stats(device, &after);
    char what[1024];
    snprintf(what, sizeof what, "%s: device search succeeds (%s)", name, err.message);
    check(st == MLFF_OK, what);
    int64_t kept = 0, extra = 0;
    int same = 1;
    double farthest = 0.0;
    for (int64_t p = 0; p < l.n_pairs && same; p++) {
        int32_t t[5], u[5] = {0};
        get_triple(&l, p, t);
        const double d = sqrt(pair_d2(b, system_of(b, t[0]), t[0], t[1], t + 2));
        if (d > cutoff) {
            extra++;
            farthest = d > farthest ? d : farthest;
            continue;
        }
        if (kept < host->n_pairs)
            get_triple(host, kept, u);
        same = kept < host->n_pairs && triple_cmp(t, u) == 0;
        if (!same)
            fprintf(stderr, "  %s: device pair %lld is (%d %d | %d %d %d) at %.9f, host pair %lld (%d %d | %d %d %d)\n",
                    name, (long long)p, t[0], t[1], t[2], t[3], t[4], d, (long long)kept, u[0], u[1], u[2], u[3],
                    u[4]);
        kept++;
    }
    snprintf(what, sizeof what, "%s: device list is the host's (%lld of %lld pairs, %lld beyond the cutoff, "
             "farthest %.6f)", name, (long long)kept, (long long)host->n_pairs, (long long)extra, farthest);
    check(same && kept == host->n_pairs, what);
    snprintf(what, sizeof what, "%s: a second device search allocates nothing", name);
    check(after.device_allocations == before.device_allocations, what);
    /* In ranges of atoms (as a device too small for all pairs at once). */
    if (l.n_pairs > 1000) {
        mlff_neighbor_list ranges = {0};
        mlff_device_cells_limit_pairs(device_cells, (size_t)l.n_pairs / 7);
        st = mlff_device_cells_build(device_cells, b, cutoff, &ranges, &err);
        mlff_device_cells_limit_pairs(device_cells, 0);
        snprintf(what, sizeof what, "%s: the device list in 7 or more passes is the same", name);
        check(st == MLFF_OK && ranges.n_pairs == l.n_pairs &&
                  !memcmp(ranges.pairs, l.pairs, (size_t)l.n_pairs * 2 * sizeof(int32_t)) &&
                  !memcmp(ranges.images, l.images, (size_t)l.n_pairs * 3 * sizeof(int32_t)),
              what);
        mlff_neighbor_list_free(&ranges);
    }
    mlff_neighbor_list_free(&l);
    return seconds;
}

/* Whether pair (i, j, n) of a list at `cutoff` is too near the cutoff for
 * float and double to agree on it: left out of the comparison. */
static int near_cutoff(const mlff_batch *b, int32_t i, int32_t j, const int32_t n[3], double cutoff)
{
    return fabs(sqrt(pair_d2(b, system_of(b, i), i, j, n)) - cutoff) < 1e-4 * cutoff;
}

static int device_list_runs;

/*
 * A graph's pair lists made on the device (mlff_device_cells_count_lists,
 * _write_lists) into buffers of their own: two lists (the cutoff, and 0.6 of
 * it with the triple starts), then the cutoff's alone, as a model with one
 * cutoff has it. Each is the host's list at its cutoff (pairs within float
 * rounding of the cutoff aside), images packed; the triple starts follow
 * from each atom's run of pairs.
 */
static void check_device_lists(const mlff_batch *b, double cutoff, const mlff_neighbor_list *host, const char *name)
{
    if (!device_cells)
        return;
    for (int n_lists = 2; n_lists >= 1; n_lists--) {
        mlff_device_lists lists = {.n_lists = n_lists, .cutoff = {cutoff, 0.6 * cutoff}, .triples_of = n_lists - 1};
        mlff_error err;
        mlff_error_clear(&err);
        int usable = 0;
        char what[1024];
        mlff_status st = mlff_device_cells_count_lists(device_cells, b, NULL, &lists, &usable, &err);
        snprintf(what, sizeof what, "%s, %d device list(s): counted (%s)", name, n_lists, err.message);
        check(st == MLFF_OK, what);
        if (st != MLFF_OK || !usable)
            continue;
        device_list_runs++;
        void *buffers[2 * MLFF_DEVICE_LISTS + 1] = {0};
        for (int l = 0; l < n_lists && st == MLFF_OK; l++) {
            st = device_iface->buffer_alloc(device, (size_t)(lists.n_pairs[l] + 1) * 8, &buffers[2 * l], &err);
            if (st == MLFF_OK)
                st = device_iface->buffer_alloc(device, (size_t)(lists.n_pairs[l] + 1) * 4, &buffers[2 * l + 1], &err);
            lists.pairs[l] = buffers[2 * l];
            lists.images[l] = buffers[2 * l + 1];
        }
        const int t = lists.triples_of;
        if (st == MLFF_OK)
            st = device_iface->buffer_alloc(device, (size_t)(lists.n_pairs[t] + 1) * 4, &buffers[4], &err);
        lists.triple_starts = buffers[4];
        if (st == MLFF_OK)
            st = mlff_device_cells_write_lists(device_cells, &lists, &err);
        if (st == MLFF_OK)
            st = mlff_device_cells_read_check(device_cells, &err);
        if (st == MLFF_OK && device_iface->finish) /* the check's read arrives */
            st = device_iface->finish(device, &err);
        if (st == MLFF_OK)
            st = mlff_device_cells_check_lists(device_cells, &err);
        snprintf(what, sizeof what, "%s, %d device list(s): written as counted (%s)", name, n_lists, err.message);
        check(st == MLFF_OK, what);
        for (int l = 0; l < n_lists && st == MLFF_OK; l++) {
            const int64_t np = lists.n_pairs[l];
            int32_t *pairs = malloc((size_t)(np + 1) * 8), *images = malloc((size_t)(np + 1) * 4);
            int32_t *starts = malloc((size_t)(np + 1) * 4);
            st = pairs && images && starts ? MLFF_OK : MLFF_ERROR_OUT_OF_MEMORY;
            if (st == MLFF_OK)
                st = device_iface->buffer_read(device, lists.pairs[l], 0, pairs, (size_t)np * 8, &err);
            if (st == MLFF_OK)
                st = device_iface->buffer_read(device, lists.images[l], 0, images, (size_t)np * 4, &err);
            if (st == MLFF_OK && l == t)
                st = device_iface->buffer_read(device, lists.triple_starts, 0, starts, (size_t)np * 4, &err);
            /* Both lists walked side by side, the pairs near the cutoff skipped. */
            const double rc = lists.cutoff[l];
            int64_t p = 0, q = 0;
            int same = st == MLFF_OK;
            while (same) {
                int32_t hn[3], dn[3];
                while (q < host->n_pairs) {
                    memcpy(hn, host->images + 3 * q, sizeof hn);
                    const int32_t i = host->pairs[2 * q], j = host->pairs[2 * q + 1];
                    if (pair_d2(b, system_of(b, i), i, j, hn) <= rc * rc && !near_cutoff(b, i, j, hn, rc))
                        break;
                    q++;
                }
                for (; p < np; p++) {
                    for (int d = 0; d < 3; d++)
                        dn[d] = mlff_image_offset(images[p], d);
                    if (!near_cutoff(b, pairs[2 * p], pairs[2 * p + 1], dn, rc))
                        break;
                }
                if (p == np || q == host->n_pairs) {
                    same = p == np && q == host->n_pairs;
                    break;
                }
                same = pairs[2 * p] == host->pairs[2 * q] && pairs[2 * p + 1] == host->pairs[2 * q + 1] &&
                       images[p] == mlff_image_pack(hn);
                p++;
                q++;
            }
            snprintf(what, sizeof what, "%s, %d device list(s): list %d (cutoff %.3f, %lld pairs) is the host's",
                     name, n_lists, l, rc, (long long)np);
            check(same, what);
            /* Pair x of an atom's run of c starts its triples at base + x (c - 1) - x (x - 1) / 2. */
            int64_t base = 0, bad = 0;
            for (int64_t first = 0, last; l == t && same && first < np; first = last) {
                for (last = first; last < np && pairs[2 * last] == pairs[2 * first]; last++)
                    ;
                const int64_t c = last - first;
                for (int64_t x = 0; x < c; x++)
                    bad += starts[first + x] != base + x * (c - 1) - x * (x - 1) / 2;
                base += c * (c - 1) / 2;
            }
            if (l == t && same) {
                snprintf(what, sizeof what, "%s, %d device list(s): triple starts (%lld triples)", name, n_lists,
                         (long long)lists.n_triples);
                check(bad == 0 && base == lists.n_triples, what);
            }
            free(pairs);
            free(images);
            free(starts);
        }
        for (int k = 0; k < 5; k++)
            if (buffers[k])
                device_iface->buffer_free(device, buffers[k]);
    }
}

static void compare(const mlff_batch *b, double cutoff, const char *name)
{
    mlff_neighbor_list l = {0};
    mlff_error err;
    mlff_error_clear(&err);
    ref_list r = {0};
    char what[1024];
    const mlff_status st = mlff_neighbors_build(b, cutoff, NULL, &l, &err);
    snprintf(what, sizeof what, "%s: build succeeds (%s)", name, err.message);
    check(st == MLFF_OK, what);
    brute_force(b, cutoff, &r);
    int same = l.n_pairs == r.n;
    for (int64_t p = 0; same && p < r.n; p++) {
        int32_t t[5];
        get_triple(&l, p, t);
        if (triple_cmp(t, r.t + 5 * p) != 0) {
            fprintf(stderr, "  %s: pair %lld is (%d %d | %d %d %d), reference (%d %d | %d %d %d)\n", name,
                    (long long)p, t[0], t[1], t[2], t[3], t[4], r.t[5 * p], r.t[5 * p + 1], r.t[5 * p + 2],
                    r.t[5 * p + 3], r.t[5 * p + 4]);
            same = 0;
        }
    }
    snprintf(what, sizeof what, "%s: same pairs as brute force (%lld vs %lld)", name, (long long)l.n_pairs,
             (long long)r.n);
    check(same, what);
    check_invariants(b, cutoff, &l, name);
    check_threaded(b, cutoff, &l, name);
    check_device(b, cutoff, &l, name);
    check_device_lists(b, cutoff, &l, name);
    int self_images = 0;
    for (int64_t p = 0; p < l.n_pairs; p++)
        self_images += l.pairs[2 * p] == l.pairs[2 * p + 1];
    printf("%-34s %6lld atoms %8lld pairs (%d self-image)\n", name, (long long)b->system_offsets[b->n_systems],
           (long long)l.n_pairs, self_images);

    /* Building again reuses everything. */
    int32_t *pairs = l.pairs, *images = l.images;
    void *work = l.work;
    const int64_t cap = l.capacity, n_pairs = l.n_pairs;
    const size_t work_size = l.work_size;
    mlff_neighbors_build(b, cutoff, NULL, &l, &err);
    snprintf(what, sizeof what, "%s: second build reuses memory", name);
    check(l.pairs == pairs && l.images == images && l.work == work && l.capacity == cap &&
              l.work_size == work_size && l.n_pairs == n_pairs,
          what);
    mlff_neighbor_list_free(&l);
    free(r.t);
}

/* compare() on one system, with its cell. */
static void compare_system(const sys *s, double cutoff, const char *name)
{
    batch_buf bb = make_batch(s, 1, 1);
    compare(&bb.b, cutoff, name);
    free_batch(&bb);
}

/* `molecules` molecules of 2 to 10 atoms and a cubic lattice of side^3 atoms, 2.5 A apart, compared at 5 A. */
static void molecules_and_lattice(int molecules, int side, const char *name)
{
    sys *parts = calloc((size_t)molecules + 1, sizeof *parts);
    if (!parts) {
        check(0, "out of memory");
        return;
    }
    for (int k = 0; k < molecules; k++) {
        parts[k] = make_sys(2 + k % 9, NULL, 0, 0, 0);
        for (int a = 0; a < parts[k].n; a++)
            for (int d = 0; d < 3; d++)
                parts[k].pos[3 * a + d] = 2.0 * (d < 2 ? a >> d & 1 : a >> 2) + 0.6 * uniform();
    }
    const int n = side * side * side;
    parts[molecules] = make_sys(n, NULL, 0, 0, 0);
    for (int a = 0; a < n; a++) {
        parts[molecules].pos[3 * a] = 2.5 * (a % side);
        parts[molecules].pos[3 * a + 1] = 2.5 * (a / side % side);
        parts[molecules].pos[3 * a + 2] = 2.5 * (a / (side * side));
    }
    batch_buf bb = make_batch(parts, molecules + 1, 0);
    const int runs = device_list_runs;
    compare(&bb.b, 5.0, name);
    char what[256];
    snprintf(what, sizeof what, "%s: listed through the device's cell lists", name);
    check(!device_cells || device_list_runs == runs + 2, what);
    free_batch(&bb);
    for (int k = 0; k <= molecules; k++)
        free(parts[k].pos);
    free(parts);
}

static void cubic(double cell[9], double a)
{
    memset(cell, 0, 9 * sizeof(double));
    cell[0] = cell[4] = cell[8] = a;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void timing(int n_atoms, double cutoff)
{
    const double side = cbrt(n_atoms / 0.1); /* water: ~0.1 atoms per cubic Angstrom */
    double cell[9];
    cubic(cell, side);
    sys s = make_sys(n_atoms, cell, 1, 1, 1);
    fill_random(&s, 0);
    batch_buf bb = make_batch(&s, 1, 1);
    mlff_neighbor_list l = {0};
    mlff_error err;
    mlff_error_clear(&err);
    double t0 = now();
    mlff_status st = mlff_neighbors_build(&bb.b, cutoff, NULL, &l, &err);
    double t1 = now();
    st |= mlff_neighbors_build(&bb.b, cutoff, NULL, &l, &err);
    double t2 = now();
    check(st == MLFF_OK, "timing: build succeeds");
    printf("timing: %d atoms (%.1f A box, cutoff %.1f): %lld pairs (%.1f per atom), first build %.3f s, "
           "again %.3f s; scratch %.1f MB, pairs %.1f MB\n",
           n_atoms, side, cutoff, (long long)l.n_pairs, (double)l.n_pairs / n_atoms, t1 - t0, t2 - t1,
           l.work_size / 1e6, l.capacity * 5 * 4 / 1e6);
    printf("timing: again on 3 threads (%d CPUs here) %.3f s\n", mlff_available_threads(),
           check_threaded(&bb.b, cutoff, &l, "timing box"));
    if (device_cells)
        printf("timing: again on the device %.3f s\n", check_device(&bb.b, cutoff, &l, "timing box"));
    /* Too big for brute force: check the invariants instead (cheap ones on the big box). */
    if (n_atoms <= 20000)
        check_invariants(&bb.b, cutoff, &l, "timing box");
    mlff_neighbor_list_free(&l);
    free_batch(&bb);
    free(s.pos);
}

int main(int argc, char **argv)
{
    threads = mlff_thread_pool_create(3);
    check(threads != NULL, "3 threads start");
    if (argc > 1) {
        if (!(device_iface = mlff_backend_named(argv[1]))) {
            fprintf(stderr, "unknown backend %s\n", argv[1]);
            return 1;
        }
        device = test_open_backend(device_iface, NULL);
        mlff_error err;
        mlff_error_clear(&err);
        static mlff_tuning tuning; /* the device cell lists' thresholds: the defaults */
        mlff_tuning_defaults(&tuning);
        check(mlff_device_cells_create(device_iface, device, threads, &tuning, &device_cells, &err) == MLFF_OK &&
                  device_cells,
              "the backend has device cell lists");
    }
    const double rc = 5.2;
    double cell[9];

    /* Non-periodic cluster, with and without cells/pbc arrays. */
    {
        double box[9];
        cubic(box, 14.0);
        sys s = make_sys(150, box, 0, 0, 0);
        fill_random(&s, 0);
        memset(s.cell, 0, sizeof s.cell); /* a non-periodic system needs no cell */
        batch_buf bb = make_batch(&s, 1, 0);
        compare(&bb.b, rc, "cluster (no cells, no pbc)");
        free_batch(&bb);
        compare_system(&s, rc, "cluster (zero cell, pbc F F F)");
        /* A flat, sparse one: bins capped at about one per atom. */
        for (int a = 0; a < s.n; a++) {
            s.pos[3 * a] *= 30;
            s.pos[3 * a + 1] *= 20;
            s.pos[3 * a + 2] = 0.01 * a;
        }
        bb = make_batch(&s, 1, 0);
        compare(&bb.b, rc, "sparse flat cluster");
        free_batch(&bb);
        free(s.pos);
    }
    /* Cubic box. */
    {
        cubic(cell, 15.0);
        sys s = make_sys(340, cell, 1, 1, 1);
        fill_random(&s, 0);
        compare_system(&s, rc, "cubic box 15 A");
        scatter_images(&s, 3);
        compare_system(&s, rc, "cubic box, atoms outside");
        /* About 300 pairs an atom: more than a device work-group sorts in local memory. */
        compare_system(&s, 9.0, "cubic box, 9 A cutoff");
        free(s.pos);
    }
    /* Strongly skewed triclinic boxes (one with width < 2 cutoff). */
    {
        const double tri[9] = {14.0, 0.0, 0.0, 11.0, 9.0, 0.0, -8.0, 6.5, 10.0};
        sys s = make_sys(250, tri, 1, 1, 1);
        fill_random(&s, 0);
        compare_system(&s, rc, "triclinic skewed");
        scatter_images(&s, 4);
        compare_system(&s, rc, "triclinic skewed, atoms outside");
        free(s.pos);
        const double lean[9] = {20.0, 0.0, 0.0, 19.0, 6.0, 0.0, 18.5, 5.5, 7.0};
        s = make_sys(120, lean, 1, 1, 1);
        fill_random(&s, 0);
        scatter_images(&s, 2);
        compare_system(&s, rc, "triclinic leaning (thin)");
        free(s.pos);
    }
    /* Cells smaller than the cutoff: many images, self-images. */
    {
        cubic(cell, 3.1);
        sys s = make_sys(3, cell, 1, 1, 1);
        fill_random(&s, 0);
        compare_system(&s, 5.1, "3.1 A cubic cell, 3 atoms");
        scatter_images(&s, 5);
        compare_system(&s, 5.1, "3.1 A cell, atoms outside");
        free(s.pos);
        const double small_tri[9] = {4.0, 0.0, 0.0, 3.5, 3.0, 0.0, 1.0, 1.0, 3.5};
        s = make_sys(5, small_tri, 1, 1, 1);
        fill_random(&s, 0);
        scatter_images(&s, 2);
        compare_system(&s, rc, "small triclinic cell");
        free(s.pos);
        cubic(cell, 1.7);
        s = make_sys(1, cell, 1, 1, 1);
        fill_random(&s, 0);
        compare_system(&s, rc, "one atom, 1.7 A cell");
        free(s.pos);
        /* Between cutoff and twice the cutoff. */
        cubic(cell, 8.0);
        s = make_sys(40, cell, 1, 1, 1);
        fill_random(&s, 0);
        compare_system(&s, rc, "8 A cubic cell");
        free(s.pos);
    }
    /* Slabs (T T F) and wires (T F F), atoms spilling past the cell along
     * the open axes. */
    {
        const double slab_cell[9] = {12.0, 0.0, 0.0, 3.0, 11.0, 0.0, 1.0, -2.0, 25.0};
        sys s = make_sys(200, slab_cell, 1, 1, 0);
        fill_random(&s, 0.3);
        scatter_images(&s, 2);
        compare_system(&s, rc, "slab T T F");
        free(s.pos);
        const double thin_slab[9] = {4.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 10.0};
        s = make_sys(6, thin_slab, 1, 0, 1);
        fill_random(&s, 0.5);
        compare_system(&s, rc, "thin slab T F T");
        free(s.pos);
        const double wire[9] = {6.0, 0.0, 0.0, 1.0, 20.0, 0.0, 0.5, 2.0, 18.0};
        s = make_sys(120, wire, 1, 0, 0);
        fill_random(&s, 0.2);
        scatter_images(&s, 3);
        compare_system(&s, rc, "wire T F F");
        free(s.pos);
        const double thin_wire[9] = {0.0, 0.0, 2.5, 12.0, 0.0, 0.0, 0.0, 12.0, 0.0};
        s = make_sys(8, thin_wire, 1, 0, 0);
        fill_random(&s, 0);
        compare_system(&s, rc, "thin wire along z");
        free(s.pos);
    }
    /* Exact geometry: a simple cubic lattice whose spacing divides the
     * cutoff, so that many pairs lie exactly at the cutoff (kept: <=), with
     * atoms exactly on the cell faces and just below zero. */
    {
        cubic(cell, 20.0);
        sys s = make_sys(512, cell, 1, 1, 1);
        for (int a = 0; a < 512; a++) {
            s.pos[3 * a] = 2.5 * (a % 8);
            s.pos[3 * a + 1] = 2.5 * (a / 8 % 8);
            s.pos[3 * a + 2] = 2.5 * (a / 64);
        }
        compare_system(&s, 5.0, "lattice, pairs at the cutoff");
        for (int a = 0; a < 512; a += 3) {
            const int k = a % 3;
            if (s.pos[3 * a + k] == 0.0)
                s.pos[3 * a + k] = a % 2 ? 20.0 : -1e-13;
        }
        compare_system(&s, 5.0, "lattice, atoms on the faces");
        free(s.pos);
    }
    /* A flat slab (every atom at the same height along the open axis) and
     * a cluster far from the origin. */
    {
        const double slab_cell[9] = {9.0, 0.0, 0.0, 4.5, 7.8, 0.0, 0.0, 0.0, 15.0};
        sys s = make_sys(60, slab_cell, 1, 1, 0);
        fill_random(&s, 0);
        for (int a = 0; a < s.n; a++)
            s.pos[3 * a + 2] = 3.0;
        compare_system(&s, rc, "flat slab T T F");
        free(s.pos);
        double box[9];
        cubic(box, 13.0);
        s = make_sys(100, box, 0, 0, 0);
        fill_random(&s, 0);
        for (int a = 0; a < 3 * s.n; a++)
            s.pos[a] += 1e5;
        batch_buf bb = make_batch(&s, 1, 0);
        compare(&bb.b, rc, "cluster far from the origin");
        free_batch(&bb);
        free(s.pos);
        /* One bin of more pairs to test than the host counts
         * (COUNTED_ON_HOST_MOST): placed by the host, counted on the device. */
        cubic(box, 20.0);
        s = make_sys(400, box, 0, 0, 0);
        fill_random(&s, 0);
        bb = make_batch(&s, 1, 0);
        compare(&bb.b, rc, "cluster of 400 atoms");
        free_batch(&bb);
        free(s.pos);
    }
    /* Batches of small molecules, as in MD, each with a lattice whose pairs
     * lie exactly at both cutoffs (2.5 A apart, at 5 A and 3 A). Atoms on
     * a jittered grid keep apart. Many molecules: the host counts their
     * lists' pairs (COUNTED_ON_HOST_MOST in device_cells.c), and cell_pairs
     * must find exactly those counts ("written as counted"); a few: the
     * host writes their lists too (LISTED_ON_HOST_MOST). */
    molecules_and_lattice(40, 4, "40 molecules and a lattice (counted on the host)");
    molecules_and_lattice(6, 3, "6 molecules and a lattice (listed on the host)");
    /* One batch mixing all kinds, with empty systems among them. */
    {
        sys parts[8];
        double box[9];
        cubic(box, 12.0);
        parts[0] = make_sys(80, box, 0, 0, 0);
        fill_random(&parts[0], 0);
        parts[1] = make_sys(0, box, 1, 1, 1);
        cubic(box, 3.1);
        parts[2] = make_sys(3, box, 1, 1, 1);
        fill_random(&parts[2], 0);
        scatter_images(&parts[2], 2);
        const double tri[9] = {11.0, 0.0, 0.0, 7.0, 9.0, 0.0, -5.0, 4.0, 10.0};
        parts[3] = make_sys(120, tri, 1, 1, 1);
        fill_random(&parts[3], 0);
        scatter_images(&parts[3], 2);
        const double slab_cell[9] = {9.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 30.0};
        parts[4] = make_sys(90, slab_cell, 1, 1, 0);
        fill_random(&parts[4], 0.1);
        parts[5] = make_sys(0, NULL, 0, 0, 0);
        const double wire[9] = {5.0, 0.0, 0.0, 0.0, 15.0, 0.0, 0.0, 0.0, 15.0};
        parts[6] = make_sys(50, wire, 1, 0, 0);
        fill_random(&parts[6], 0);
        cubic(box, 10.0);
        parts[7] = make_sys(100, box, 1, 1, 1);
        fill_random(&parts[7], 0);
        batch_buf bb = make_batch(parts, 8, 1);
        compare(&bb.b, rc, "mixed batch (2 empty systems)");
        free_batch(&bb);
        for (int k = 0; k < 8; k++)
            free(parts[k].pos);
    }
    /* Nothing at all. */
    {
        mlff_neighbor_list l = {0};
        mlff_error err;
        mlff_error_clear(&err);
        const int64_t off0[1] = {0}, off2[3] = {0, 0, 0};
        mlff_batch none = {0, off0, NULL, NULL, NULL, NULL};
        check(mlff_neighbors_build(&none, rc, NULL, &l, &err) == MLFF_OK && l.n_pairs == 0, "no systems");
        mlff_batch empty = {2, off2, NULL, NULL, NULL, NULL};
        check(mlff_neighbors_build(&empty, rc, NULL, &l, &err) == MLFF_OK && l.n_pairs == 0, "empty systems");
        mlff_neighbor_list_free(&l);
        mlff_neighbor_list_free(&l); /* twice is harmless */
        /* No pair within the cutoff on a fresh list: no pair arrays yet, so
         * nothing is copied into them (UBSan: NULL + 0; a model_file fuzz
         * finding, tests/fuzz/regressions/model_file/no_pairs_first_build). */
        const int64_t off_far[2] = {0, 2};
        const int32_t z_far[2] = {1, 1};
        const double pos_far[6] = {0, 0, 0, 0, 0, 10.0 * rc};
        mlff_batch far = {1, off_far, z_far, pos_far, NULL, NULL};
        check(mlff_neighbors_build(&far, rc, NULL, &l, &err) == MLFF_OK && l.n_pairs == 0,
              "atoms beyond the cutoff, first build");
        mlff_neighbor_list_free(&l);
    }
    /* Errors. */
    {
        mlff_neighbor_list l = {0};
        mlff_error err;
        mlff_error_clear(&err);
        cubic(cell, 10.0);
        sys parts[2] = {make_sys(10, cell, 1, 1, 1), make_sys(10, cell, 1, 1, 0)};
        fill_random(&parts[0], 0);
        fill_random(&parts[1], 0);
        memset(parts[1].cell + 6, 0, 3 * sizeof(double)); /* c = 0: singular */
        batch_buf bb = make_batch(parts, 2, 1);
        mlff_status st = mlff_neighbors_build(&bb.b, rc, NULL, &l, &err);
        check(st == MLFF_ERROR_BAD_INPUT && err.system == 1 && err.atom == -1 && strstr(err.message, "singular"),
              "zero lattice vector: bad input, system 1");
        printf("singular cell: %s\n", err.message);
        for (int d = 0; d < 3; d++) /* c = a + b: coplanar */
            bb.cells[9 + 6 + d] = bb.cells[9 + d] + bb.cells[9 + 3 + d];
        mlff_error_clear(&err);
        st = mlff_neighbors_build(&bb.b, rc, NULL, &l, &err);
        check(st == MLFF_ERROR_BAD_INPUT && err.system == 1 && err.atom == -1, "coplanar cell: bad input");
        check(l.n_pairs == 0, "no pairs after an error");
        if (device_cells) {
            mlff_error_clear(&err);
            st = mlff_device_cells_build(device_cells, &bb.b, rc, &l, &err);
            check(st == MLFF_ERROR_BAD_INPUT && err.system == 1 && err.atom == -1 && l.n_pairs == 0,
                  "device: coplanar cell: bad input");
        }
        mlff_error_clear(&err);
        check(mlff_neighbors_build(&bb.b, 0.0, NULL, &l, &err) == MLFF_ERROR_INVALID_ARGUMENT, "cutoff 0");
        check(mlff_neighbors_build(&bb.b, -1.0, NULL, &l, &err) == MLFF_ERROR_INVALID_ARGUMENT, "negative cutoff");
        check(mlff_neighbors_build(&bb.b, NAN, NULL, &l, &err) == MLFF_ERROR_INVALID_ARGUMENT, "NaN cutoff");
        bb.pbc[5] = 0; /* system 1 no longer periodic: its cell does not matter */
        bb.pbc[3] = bb.pbc[4] = 0;
        check(mlff_neighbors_build(&bb.b, rc, NULL, &l, &err) == MLFF_OK, "singular cell of a non-periodic system");
        bb.pos[3 * 13 + 1] = NAN;
        mlff_error_clear(&err);
        st = mlff_neighbors_build(&bb.b, rc, NULL, &l, &err);
        check(st == MLFF_ERROR_BAD_INPUT && err.system == 1 && err.atom == 3, "NaN position: bad input, atom 3");
        if (device_cells) {
            mlff_error_clear(&err);
            st = mlff_device_cells_build(device_cells, &bb.b, rc, &l, &err);
            check(st == MLFF_ERROR_BAD_INPUT && err.system == 1 && err.atom == 3,
                  "device: NaN position: bad input, atom 3");
        }
        mlff_neighbor_list_free(&l);
        free_batch(&bb);
        free(parts[0].pos);
        free(parts[1].pos);
    }

    if (device_cells) {
        printf("device pair lists (one and two cutoffs) made for %d cases\n", device_list_runs);
        check(device_list_runs >= 20, "the device made the graph lists for most cases");
    }
    timing(12288, rc);
    timing(100000, rc);
    mlff_device_cells_free(device_cells);
    if (device)
        device_iface->close(device);
    mlff_thread_pool_destroy(threads);

    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("all neighbour-list tests passed\n");
    return 0;
}
