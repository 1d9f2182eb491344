/*
 * Cell lists. Per system:
 *  1. every atom in "fractional" coordinates u (u = r . H^-1 with H the cell,
 *     or u = r for a system with no periodic axis), wrapped into [0, 1) along
 *     the periodic axes; the lattice vectors taken off are remembered (shift);
 *  2. bins along each axis at least (1 + BIN_MARGIN) cutoff wide measured
 *     perpendicular to the other two axes (the whole cell along periodic
 *     axes, the atoms' bounding range along the others), at most about one
 *     bin per atom; atoms counting-sorted into them;
 *  3. for every atom, the bins within reach (one bin each way, or more along
 *     periodic axes whose cell is thinner than the cutoff) are walked over
 *     "extended" bin coordinates E = bin + m * n_bins, m being the periodic
 *     image, so that a small cell is visited as often as the cutoff sphere
 *     needs, self-images included. The image offset reported is relative to
 *     the caller's positions: n = m + shift_i - shift_j.
 * An atom's pairs are sorted by (j, stencil position), which for one j is
 * the order of n, so the list comes out ordered by i, j, n without a global
 * sort.
 */
#include "neighbors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* Bins are this much (relatively) wider than the cutoff, against rounding. */
#define BIN_MARGIN 1e-8
/* Bins per axis before the cap on the total; keeps products in int64. */
#define MAX_BINS_AXIS 1048576
/* Search reach, in bins, along one axis (cells much thinner than the cutoff). */
#define MAX_REACH 1000000

typedef struct nl_work {
    int64_t atoms_capacity, bins_capacity;
    double *frac;       /* [n][3] u of each atom of the system (wrapped along periodic axes) */
    int32_t *shift;     /* [n][3] lattice vectors taken off to wrap */
    int32_t *bin;       /* [n] bin of each atom */
    int32_t *slot_atom; /* [n] atoms (system-local) in bin order */
    double *slot_pos;   /* [n][3] their wrapped Cartesian positions, in bin order */
    double *slot_orig;  /* [n][3] their positions as given, in bin order */
    int32_t *slot_shift; /* [n][3] their shifts, in bin order */
    int32_t *start;     /* [bins + 1] first slot of each bin */
    int64_t *bin_sums;  /* the bins' summed-area table (mlff_cell_grid_candidates) */
    int64_t sums_capacity;
    struct nl_block *blocks; /* the search's blocks of atoms, run in parallel */
    int n_blocks;
} nl_work;

/* The pairs of a block of consecutive atoms of one system, found by one
 * thread; kept (with their capacity) between calls. */
typedef struct nl_block {
    int32_t *pairs, *images; /* [n_pairs][2] batch atom indices, [n_pairs][3] n */
    int64_t n_pairs, capacity;
    uint64_t *keys;          /* one atom's pairs: j << 32 | q, in the order found; then as
                              * much room for sorting them */
    int32_t *found;          /* [q][3]: n of the q-th pair found */
    int64_t keys_capacity;
    mlff_status status;      /* MLFF_ERROR_OUT_OF_MEMORY or MLFF_ERROR_UNSUPPORTED (too many pairs) */
} nl_block;

/* Blocks of at least this many atoms, four per thread: the threads balance
 * uneven blocks, and small systems stay on one thread. */
#define BLOCK_ATOMS 256

static int64_t grown(int64_t capacity, int64_t need)
{
    int64_t cap = capacity + capacity / 2;
    return cap > need ? cap : need;
}

static void update_work_size(mlff_neighbor_list *list)
{
    const nl_work *w = list->work;
    list->work_size = sizeof *w +
                      (size_t)w->atoms_capacity * (9 * sizeof(double) + 8 * sizeof(int32_t)) +
                      (size_t)w->bins_capacity * sizeof(int32_t);
    for (int k = 0; k < w->n_blocks; k++)
        list->work_size += sizeof(nl_block) +
                           (size_t)w->blocks[k].keys_capacity * (2 * sizeof(uint64_t) + 3 * sizeof(int32_t)) +
                           (size_t)w->blocks[k].capacity * 5 * sizeof(int32_t);
}

static int reserve_atoms(nl_work *w, int64_t need)
{
    void **const arrays[] = {(void **)&w->frac, (void **)&w->shift, (void **)&w->bin, (void **)&w->slot_atom,
                             (void **)&w->slot_pos, (void **)&w->slot_orig, (void **)&w->slot_shift};
    const size_t elems[] = {3 * sizeof(double), 3 * sizeof(int32_t), sizeof(int32_t), sizeof(int32_t),
                            3 * sizeof(double), 3 * sizeof(double), 3 * sizeof(int32_t)};
    return mlff_grow_columns(arrays, elems, 7, &w->atoms_capacity, need);
}

static int reserve_bins(nl_work *w, int64_t n_bins)
{
    return mlff_grow((void **)&w->start, &w->bins_capacity, n_bins + 1, sizeof(int32_t));
}

static int reserve_keys(nl_block *b, int64_t need)
{
    /* keys twice over: the second half is the merge sort's */
    void **const arrays[] = {(void **)&b->keys, (void **)&b->found};
    const size_t elems[] = {2 * sizeof(uint64_t), 3 * sizeof(int32_t)};
    return mlff_grow_columns(arrays, elems, 2, &b->keys_capacity, need < 256 ? 256 : need);
}

/* Room for `need` pairs in arrays of [capacity][2] pairs and [capacity][3]
 * images; 25% more from the start, as pair counts drift every MD step. */
static int reserve_pairs(int32_t **pairs, int32_t **images, int64_t *capacity, int64_t need)
{
    if (need <= *capacity)
        return 1;
    const int64_t cap = grown(*capacity, need < 1024 ? 1024 : need + need / 4);
    void *p = realloc(*pairs, (size_t)cap * 2 * sizeof(int32_t));
    if (!p)
        return 0;
    *pairs = p;
    if (!(p = realloc(*images, (size_t)cap * 3 * sizeof(int32_t))))
        return 0;
    *images = p;
    *capacity = cap;
    return 1;
}

static int reserve_blocks(nl_work *w, int n)
{
    if (n <= w->n_blocks)
        return 1;
    nl_block *b = realloc(w->blocks, (size_t)n * sizeof *b);
    if (!b)
        return 0;
    memset(b + w->n_blocks, 0, (size_t)(n - w->n_blocks) * sizeof *b);
    w->blocks = b;
    w->n_blocks = n;
    return 1;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && a < 0)
        q--;
    return q;
}

/* Sorts k[0..n) using tmp[0..n): insertion sort of blocks of 8, then
 * bottom-up merges without branches on the data (an atom has tens to a few
 * hundred pairs, found in an order the branch predictor cannot guess). */
static void sort_keys(uint64_t *k, uint64_t *tmp, int64_t n)
{
    enum { BLOCK = 8 };
    for (int64_t lo = 0; lo < n; lo += BLOCK) {
        const int64_t hi = lo + BLOCK < n ? lo + BLOCK : n;
        for (int64_t a = lo + 1; a < hi; a++) {
            const uint64_t v = k[a];
            int64_t b = a;
            for (; b > lo && k[b - 1] > v; b--)
                k[b] = k[b - 1];
            k[b] = v;
        }
    }
    uint64_t *src = k, *dst = tmp;
    for (int64_t width = BLOCK; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            const int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                const uint64_t x = src[i], y = src[j];
                const int64_t take_y = y < x;
                dst[o++] = take_y ? y : x;
                j += take_y;
                i += 1 - take_y;
            }
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != k)
        memcpy(k, src, (size_t)n * sizeof *k);
}

static double norm3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static mlff_status too_many_pairs(mlff_error *err)
{
    return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                     "more than %d neighbour pairs: too many for 32-bit pair indices "
                     "(split the batch, or use a smaller cutoff or skin)",
                     INT32_MAX);
}

/* What the search of one system reads: set up once, shared by the blocks. */
typedef struct nl_system {
    const nl_work *w;
    const double *pos;  /* the system's positions as given */
    int64_t first, n;   /* its first batch atom, its atom count */
    double H[9];
    int64_t nb[3], reach[3];
    int periodic[3];
    double rc2, pre2;   /* the cutoff squared; with the rounding tolerance */
} nl_system;

/* The pairs of atoms [a0, a1) into block b. The fast test uses the wrapped
 * positions; pairs that pass it are measured again exactly as a caller
 * would, from its own positions and n, so that the list agrees with
 * r_j - r_i + n . cell. */
static void search_atoms(const nl_system *sys, nl_block *b, int64_t a0, int64_t a1)
{
    const nl_work *w = sys->w;
    const double *H = sys->H;
    const int64_t *nb = sys->nb, *reach = sys->reach;
    const int *periodic = sys->periodic;
    const int32_t *start = w->start;
    b->n_pairs = 0;
    b->status = MLFF_OK;
    for (int64_t a = a0; a < a1; a++) {
        const int64_t id = w->bin[a];
        const int64_t bi[3] = {id / (nb[1] * nb[2]), (id / nb[2]) % nb[1], id % nb[2]};
        const int32_t *si = w->shift + 3 * a;
        const double *ri = sys->pos + 3 * a;
        double wi[3];
        for (int d = 0; d < 3; d++)
            wi[d] = ri[d] - (si[0] * H[d] + si[1] * H[3 + d] + si[2] * H[6 + d]);
        int64_t n_keys = 0;
        for (int64_t d0 = -reach[0]; d0 <= reach[0]; d0++) {
            const int64_t e0 = bi[0] + d0;
            if (!periodic[0] && (e0 < 0 || e0 >= nb[0]))
                continue;
            const int64_t m0 = periodic[0] ? floor_div(e0, nb[0]) : 0, c0 = e0 - m0 * nb[0];
            for (int64_t d1 = -reach[1]; d1 <= reach[1]; d1++) {
                const int64_t e1 = bi[1] + d1;
                if (!periodic[1] && (e1 < 0 || e1 >= nb[1]))
                    continue;
                const int64_t m1 = periodic[1] ? floor_div(e1, nb[1]) : 0, c1 = e1 - m1 * nb[1];
                for (int64_t d2 = -reach[2]; d2 <= reach[2]; d2++) {
                    const int64_t e2 = bi[2] + d2;
                    if (!periodic[2] && (e2 < 0 || e2 >= nb[2]))
                        continue;
                    const int64_t m2 = periodic[2] ? floor_div(e2, nb[2]) : 0, c2 = e2 - m2 * nb[2];
                    const int64_t cell_id = (c0 * nb[1] + c1) * nb[2] + c2;
                    const int32_t lo_slot = start[cell_id], hi_slot = start[cell_id + 1];
                    if (lo_slot == hi_slot)
                        continue;
                    /* Atom j's image m lies at slot_pos + m . H: compare with wi - m . H. */
                    double ci[3];
                    for (int d = 0; d < 3; d++)
                        ci[d] = wi[d] - ((double)m0 * H[d] + (double)m1 * H[3 + d] + (double)m2 * H[6 + d]);
                    for (int32_t slot = lo_slot; slot < hi_slot; slot++) {
                        const double *wj = w->slot_pos + 3 * slot;
                        const double x = wj[0] - ci[0], y = wj[1] - ci[1], z = wj[2] - ci[2];
                        if (x * x + y * y + z * z > sys->pre2)
                            continue;
                        const int32_t j = w->slot_atom[slot];
                        const int32_t *sj = w->slot_shift + 3 * slot;
                        const int32_t nn[3] = {(int32_t)(m0 + si[0] - sj[0]), (int32_t)(m1 + si[1] - sj[1]),
                                               (int32_t)(m2 + si[2] - sj[2])};
                        if (j == a && !(nn[0] | nn[1] | nn[2]))
                            continue;
                        const double nv[3] = {(double)nn[0], (double)nn[1], (double)nn[2]};
                        const double *rj = w->slot_orig + 3 * slot;
                        double v[3];
                        for (int d = 0; d < 3; d++)
                            v[d] = rj[d] - ri[d] + (nv[0] * H[d] + nv[1] * H[3 + d] + nv[2] * H[6 + d]);
                        if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] > sys->rc2)
                            continue;
                        if (n_keys == b->keys_capacity) {
                            if (b->n_pairs + n_keys >= INT32_MAX) {
                                b->status = MLFF_ERROR_UNSUPPORTED;
                                return;
                            }
                            if (!reserve_keys(b, n_keys + 1)) {
                                b->status = MLFF_ERROR_OUT_OF_MEMORY;
                                return;
                            }
                        }
                        /* Found in stencil order: for one j, in the order of n. */
                        memcpy(b->found + 3 * n_keys, nn, sizeof nn);
                        b->keys[n_keys] = (uint64_t)j << 32 | (uint64_t)n_keys;
                        n_keys++;
                    }
                }
            }
        }
        if (n_keys == 0)
            continue;
        sort_keys(b->keys, b->keys + b->keys_capacity, n_keys);
        const int64_t p0 = b->n_pairs;
        if (p0 + n_keys > INT32_MAX) {
            b->status = MLFF_ERROR_UNSUPPORTED;
            return;
        }
        if (!reserve_pairs(&b->pairs, &b->images, &b->capacity, p0 + n_keys)) {
            b->status = MLFF_ERROR_OUT_OF_MEMORY;
            return;
        }
        for (int64_t q = 0; q < n_keys; q++) {
            const int32_t j = (int32_t)(b->keys[q] >> 32);
            const int64_t found = (int64_t)(b->keys[q] & 0xffffffffu);
            int32_t *pair = b->pairs + 2 * (p0 + q);
            pair[0] = (int32_t)(sys->first + a);
            pair[1] = (int32_t)(sys->first + j);
            memcpy(b->images + 3 * (p0 + q), b->found + 3 * found, 3 * sizeof(int32_t));
        }
        b->n_pairs = p0 + n_keys;
    }
}

/* Pool job: blocks [begin, end) of *n_blocks equal blocks of the system's atoms. */
static void search_blocks(const void *task, void *extra, int64_t begin, int64_t end)
{
    const nl_system *sys = task;
    const int64_t n_blocks = *(const int64_t *)extra;
    for (int64_t k = begin; k < end; k++)
        search_atoms(sys, &sys->w->blocks[k], sys->n * k / n_blocks, sys->n * (k + 1) / n_blocks);
}

mlff_status mlff_cell_grid_lattice(const mlff_batch *b, int64_t s, mlff_cell_grid *g, mlff_error *err)
{
    memset(g, 0, sizeof *g);
    int any = 0;
    if (b->pbc)
        for (int k = 0; k < 3; k++)
            any |= g->periodic[k] = b->pbc[3 * s + k] != 0;
    for (int k = 0; k < 3; k++) {
        g->rec[k][k] = 1.0;
        g->width[k] = 1.0;
    }
    if (!any)
        return MLFF_OK;
    if (!b->cells)
        return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1, "system is periodic but has no cell");
    const double *H = b->cells + 9 * s;
    memcpy(g->H, H, sizeof g->H);
    for (int k = 0; k < 9; k++)
        if (!isfinite(H[k]))
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1, "cell is not finite");
    double cr[3][3];
    cross3(H + 3, H + 6, cr[0]);
    cross3(H + 6, H + 0, cr[1]);
    cross3(H + 0, H + 3, cr[2]);
    const double det = H[0] * cr[0][0] + H[1] * cr[0][1] + H[2] * cr[0][2];
    const double scale = norm3(H) * norm3(H + 3) * norm3(H + 6);
    if (!(fabs(det) > 1e-9 * scale) || !(scale > 0.0))
        return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1,
                              "cell is singular (determinant %g): a periodic axis needs three "
                              "linearly independent lattice vectors",
                              det);
    for (int k = 0; k < 3; k++) {
        for (int d = 0; d < 3; d++)
            g->rec[k][d] = cr[k][d] / det;
        g->width[k] = fabs(det) / norm3(cr[k]);
    }
    return MLFF_OK;
}

/* What one block of atoms of mlff_cell_grid_wrap found. */
typedef struct wrap_block {
    double lo[3], hi[3], magnitude;
    int64_t bad;     /* the first atom rejected, or -1 */
    int bad_axis;    /* -1: not finite; else the axis it lies too far along */
    double bad_cells;
} wrap_block;

typedef struct wrap_task {
    const mlff_cell_grid *g;
    const double *pos;
    int64_t n, block;
    double *frac;
    int32_t *shift;
    wrap_block *blocks;
} wrap_task;

static void wrap_blocks(const void *task, void *unused, int64_t begin, int64_t end)
{
    (void)unused;
    const wrap_task *t = task;
    const mlff_cell_grid *g = t->g;
    for (int64_t b = begin; b < end; b++) {
        wrap_block *out = &t->blocks[b];
        for (int k = 0; k < 3; k++) {
            out->lo[k] = INFINITY;
            out->hi[k] = -INFINITY;
        }
        out->magnitude = 0.0;
        out->bad = -1;
        const int64_t a1 = (b + 1) * t->block < t->n ? (b + 1) * t->block : t->n;
        for (int64_t a = b * t->block; a < a1 && out->bad < 0; a++) {
            const double *r = t->pos + 3 * a;
            if (!isfinite(r[0]) || !isfinite(r[1]) || !isfinite(r[2])) {
                out->bad = a;
                out->bad_axis = -1;
                break;
            }
            int32_t sh[3] = {0, 0, 0};
            for (int k = 0; k < 3; k++) {
                double u = r[0] * g->rec[k][0] + r[1] * g->rec[k][1] + r[2] * g->rec[k][2];
                if (g->periodic[k]) {
                    const double f = floor(u);
                    if (!(fabs(f) < MLFF_MAX_CELL_SHIFT)) {
                        out->bad = a;
                        out->bad_axis = k;
                        out->bad_cells = f;
                        break;
                    }
                    sh[k] = (int32_t)f;
                    u -= f;
                } else {
                    out->lo[k] = u < out->lo[k] ? u : out->lo[k];
                    out->hi[k] = u > out->hi[k] ? u : out->hi[k];
                }
                if (t->frac)
                    t->frac[3 * a + k] = u;
            }
            if (t->shift)
                memcpy(t->shift + 3 * a, sh, sizeof sh);
            for (int d = 0; d < 3; d++) {
                const double sd = sh[0] * g->H[d] + sh[1] * g->H[3 + d] + sh[2] * g->H[6 + d];
                const double m = fabs(r[d]) + fabs(sd);
                out->magnitude = m > out->magnitude ? m : out->magnitude;
            }
        }
    }
}

/* Blocks of atoms for the pool: at least WRAP_BLOCK atoms, at most WRAP_BLOCKS blocks. */
#define WRAP_BLOCK 2048
#define WRAP_BLOCKS 64

mlff_status mlff_cell_grid_wrap(const mlff_cell_grid *g, const double *pos, int64_t n, int64_t s, double *frac,
                                int32_t *shift, double lo[3], double hi[3], double *magnitude,
                                mlff_thread_pool *pool, mlff_error *err)
{
    wrap_block blocks[WRAP_BLOCKS];
    int64_t block = (n + WRAP_BLOCKS - 1) / WRAP_BLOCKS;
    block = block > WRAP_BLOCK ? block : WRAP_BLOCK;
    const int64_t n_blocks = (n + block - 1) / block;
    const wrap_task task = {g, pos, n, block, frac, shift, blocks};
    mlff_thread_pool_for(pool, n_blocks, 2, wrap_blocks, &task, NULL);
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    *magnitude = 0.0;
    for (int64_t b = 0; b < n_blocks; b++) {
        const wrap_block *w = &blocks[b];
        if (w->bad >= 0 && w->bad_axis < 0)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, w->bad, "position is not finite");
        if (w->bad >= 0)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, w->bad, "atom lies %g cells away along lattice vector %d",
                                  w->bad_cells, w->bad_axis + 1);
        for (int k = 0; k < 3; k++) {
            lo[k] = w->lo[k] < lo[k] ? w->lo[k] : lo[k];
            hi[k] = w->hi[k] > hi[k] ? w->hi[k] : hi[k];
        }
        *magnitude = w->magnitude > *magnitude ? w->magnitude : *magnitude;
    }
    return MLFF_OK;
}

mlff_status mlff_cell_grid_bins(mlff_cell_grid *g, const double lo[3], const double hi[3], int64_t n_atoms,
                                double wide, int64_t s, mlff_error *err)
{
    int64_t *nb = g->nb;
    for (int k = 0; k < 3; k++) {
        const double extent = g->periodic[k] ? g->width[k] : (hi[k] - lo[k]) * g->width[k];
        double count = floor(extent / wide);
        if (!(count >= 1.0))
            count = 1.0;
        if (count > MAX_BINS_AXIS)
            count = MAX_BINS_AXIS;
        nb[k] = (int64_t)count;
    }
    /* O(N) memory: at most about one bin per atom (coarser bins stay valid). */
    const int64_t max_bins = n_atoms > 27 ? n_atoms : 27;
    while (nb[0] * nb[1] * nb[2] > max_bins) {
        int k = nb[0] >= nb[1] ? 0 : 1;
        k = nb[k] >= nb[2] ? k : 2;
        nb[k] = (nb[k] + 1) / 2;
    }
    int64_t stencil = 1;
    g->max_reach_length = 0.0;
    for (int k = 0; k < 3; k++) {
        if (g->periodic[k]) {
            g->origin[k] = 0.0;
            g->to_bin[k] = (double)nb[k];
            const double r = ceil(wide * (double)nb[k] / g->width[k]);
            if (!(r <= MAX_REACH))
                return mlff_fail_atom(err, MLFF_ERROR_UNSUPPORTED, s, -1,
                                      "cell is %g times thinner than the cutoff along lattice vector %d: "
                                      "too many periodic images",
                                      wide / g->width[k], k + 1);
            g->reach[k] = r < 1.0 ? 1 : (int64_t)r;
            g->max_reach_length += (double)(g->reach[k] / nb[k] + 2) * norm3(g->H + 3 * k);
        } else {
            /* One bin takes every atom (to_bin 0): atoms a subnormal distance
             * apart would make nb / (hi - lo) infinite. */
            g->origin[k] = lo[k];
            g->to_bin[k] = nb[k] > 1 ? (double)nb[k] / (hi[k] - lo[k]) : 0.0;
            g->reach[k] = nb[k] > 1 ? 1 : 0;
        }
        stencil *= 2 * g->reach[k] + 1;
    }
    if (stencil > INT32_MAX)
        return mlff_fail_atom(err, MLFF_ERROR_UNSUPPORTED, s, -1,
                              "cell is too small for the cutoff: too many periodic images");
    return MLFF_OK;
}

static mlff_status too_many_candidates(int64_t s, double tested, double most, double cutoff, mlff_error *err)
{
    return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1,
                          "the neighbour search would test %.3g pairs of atoms (periodic images included), more "
                          "than the %.3g it may (what the memory budget holds, or a real material's worth an atom): "
                          "atoms far denser than any material, or a periodic cell far thinner than the cutoff "
                          "(%g Angstrom)?",
                          tested, most, cutoff);
}

/* The bins [lo, hi) along one axis that a window of 2 reach + 1 bins
 * around bin b covers, each `times` times (a periodic axis wraps, and its
 * window may go round it several times). */
typedef struct axis_piece {
    int64_t lo, hi;
    double times;
} axis_piece;

static int axis_pieces(int periodic, int64_t nb, int64_t b, int64_t reach, axis_piece piece[3])
{
    if (!periodic) {
        piece[0] = (axis_piece){b - reach > 0 ? b - reach : 0, b + reach + 1 < nb ? b + reach + 1 : nb, 1.0};
        return 1;
    }
    const int64_t len = 2 * reach + 1, full = len / nb, rest = len % nb;
    int n = 0;
    if (full > 0)
        piece[n++] = (axis_piece){0, nb, (double)full};
    if (rest > 0) {
        const int64_t first = b - reach - floor_div(b - reach, nb) * nb, end = first + rest;
        piece[n++] = (axis_piece){first, end < nb ? end : nb, 1.0};
        if (end > nb)
            piece[n++] = (axis_piece){0, end - nb, 1.0};
    }
    return n;
}

double mlff_cell_grid_candidates(const mlff_cell_grid *g, const int32_t *start, int64_t **sums, int64_t *capacity)
{
    const int64_t *nb = g->nb, m0 = nb[0] + 1, m1 = nb[1] + 1, m2 = nb[2] + 1;
    /* Sums of the bins' atoms over [0, i) x [0, j) x [0, k). */
    if (!mlff_grow((void **)sums, capacity, m0 * m1 * m2, sizeof **sums))
        return -1.0;
    int64_t *sum = *sums;
    memset(sum, 0, (size_t)(m0 * m1 * m2) * sizeof *sum);
#define SUM(i, j, k) sum[((i) * m1 + (j)) * m2 + (k)]
    for (int64_t i = 1; i < m0; i++)
        for (int64_t j = 1; j < m1; j++)
            for (int64_t k = 1; k < m2; k++) {
                const int64_t bin = ((i - 1) * nb[1] + (j - 1)) * nb[2] + (k - 1);
                SUM(i, j, k) = start[bin + 1] - start[bin] + SUM(i - 1, j, k) + SUM(i, j - 1, k) + SUM(i, j, k - 1) -
                               SUM(i - 1, j - 1, k) - SUM(i - 1, j, k - 1) - SUM(i, j - 1, k - 1) +
                               SUM(i - 1, j - 1, k - 1);
            }
    double total = 0.0;
    for (int64_t b0 = 0; b0 < nb[0]; b0++)
        for (int64_t b1 = 0; b1 < nb[1]; b1++)
            for (int64_t b2 = 0; b2 < nb[2]; b2++) {
                const int64_t bin = (b0 * nb[1] + b1) * nb[2] + b2, atoms = start[bin + 1] - start[bin];
                if (atoms == 0)
                    continue;
                axis_piece p0[3], p1[3], p2[3];
                const int n0 = axis_pieces(g->periodic[0], nb[0], b0, g->reach[0], p0);
                const int n1 = axis_pieces(g->periodic[1], nb[1], b1, g->reach[1], p1);
                const int n2 = axis_pieces(g->periodic[2], nb[2], b2, g->reach[2], p2);
                double seen = 0.0;
                for (int x = 0; x < n0; x++)
                    for (int y = 0; y < n1; y++)
                        for (int z = 0; z < n2; z++) {
                            const axis_piece *a = &p0[x], *c = &p1[y], *d = &p2[z];
                            const int64_t box = SUM(a->hi, c->hi, d->hi) - SUM(a->lo, c->hi, d->hi) -
                                                SUM(a->hi, c->lo, d->hi) - SUM(a->hi, c->hi, d->lo) +
                                                SUM(a->lo, c->lo, d->hi) + SUM(a->lo, c->hi, d->lo) +
                                                SUM(a->hi, c->lo, d->lo) - SUM(a->lo, c->lo, d->lo);
                            seen += a->times * c->times * d->times * (double)box;
                        }
                total += (double)atoms * seen;
            }
#undef SUM
    return total;
}

double mlff_cell_grid_most_candidates(const mlff_cell_grid *g, int64_t n)
{
    double images = 1.0;
    for (int k = 0; k < 3; k++)
        if (g->periodic[k])
            images *= ceil((2.0 * (double)g->reach[k] + 1.0) / (double)g->nb[k]);
    return (double)n * (double)n * images;
}

static mlff_status build_system(const mlff_batch *b, int64_t s, double cutoff, mlff_thread_pool *pool,
                                mlff_neighbor_list *list, double *tested, mlff_error *err)
{
    nl_work *w = list->work;
    const int64_t first = b->system_offsets[s];
    const int64_t n = b->system_offsets[s + 1] - first;
    if (n == 0)
        return MLFF_OK;
    const double *pos = b->positions + 3 * first;
    mlff_cell_grid g;
    mlff_status st = mlff_cell_grid_lattice(b, s, &g, err);
    if (st != MLFF_OK)
        return st;
    const double *H = g.H;

    /* 1. Fractional coordinates, wrapped along periodic axes. */
    double lo[3], hi[3], magnitude;
    if ((st = mlff_cell_grid_wrap(&g, pos, n, s, w->frac, w->shift, lo, hi, &magnitude, pool, err)) != MLFF_OK)
        return st;

    /* 2. Bins. */
    if ((st = mlff_cell_grid_bins(&g, lo, hi, n, cutoff * (1.0 + BIN_MARGIN), s, err)) != MLFF_OK)
        return st;
    const int64_t *nb = g.nb;
    const double *origin = g.origin, *to_bin = g.to_bin;
    const int64_t n_bins = nb[0] * nb[1] * nb[2];
    if (!reserve_bins(w, n_bins))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    update_work_size(list);

    /* Counting sort of the atoms into the bins. */
    int32_t *start = w->start;
    memset(start, 0, (size_t)(n_bins + 1) * sizeof *start);
    for (int64_t a = 0; a < n; a++) {
        int64_t c[3];
        for (int k = 0; k < 3; k++) {
            /* Clamped before the conversion, which an infinite x would make undefined. */
            const double x = (w->frac[3 * a + k] - origin[k]) * to_bin[k];
            c[k] = x > 0.0 ? (x < (double)nb[k] ? (int64_t)x : nb[k] - 1) : 0;
        }
        const int64_t id = (c[0] * nb[1] + c[1]) * nb[2] + c[2];
        w->bin[a] = (int32_t)id;
        start[id + 1]++;
    }
    for (int64_t c = 0; c < n_bins; c++)
        start[c + 1] += start[c];
    for (int64_t a = 0; a < n; a++) {
        const int32_t slot = start[w->bin[a]]++;
        const int32_t *sh = w->shift + 3 * a;
        w->slot_atom[slot] = (int32_t)a;
        for (int d = 0; d < 3; d++) {
            w->slot_pos[3 * slot + d] = pos[3 * a + d] - (sh[0] * H[d] + sh[1] * H[3 + d] + sh[2] * H[6 + d]);
            w->slot_orig[3 * slot + d] = pos[3 * a + d];
            w->slot_shift[3 * slot + d] = sh[d];
        }
    }
    memmove(start + 1, start, (size_t)n_bins * sizeof *start);
    start[0] = 0;

    /* What the search would test, before it allocates for it: a cell far
     * thinner than the cutoff along a periodic axis, or atoms piled far more
     * densely than in any material, are refused here, not gigabytes later. */
    if (list->most_candidates > 0 || list->most_candidates_per_atom > 0) {
        const double candidates = mlff_cell_grid_candidates(&g, start, &w->bin_sums, &w->sums_capacity);
        if (candidates < 0)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
        const double most = fmax(list->most_candidates, list->most_candidates_per_atom * (double)n);
        const double batch_most = fmax(list->most_candidates, list->most_candidates_per_atom *
                                                                   (double)b->system_offsets[b->n_systems]);
        *tested += candidates;
        if (candidates > most || *tested > batch_most)
            return too_many_candidates(s, candidates > most ? candidates : *tested,
                                       candidates > most ? most : batch_most, cutoff, err);
    }

    /* 3. The search, in blocks of atoms on the pool's threads; the blocks'
     * pairs are then joined in atom order. */
    const double tol = 1e-12 * (cutoff + 4.0 * magnitude + 2.0 * g.max_reach_length);
    nl_system sys = {
        .w = w, .pos = pos, .first = first, .n = n,
        .nb = {nb[0], nb[1], nb[2]}, .reach = {g.reach[0], g.reach[1], g.reach[2]},
        .periodic = {g.periodic[0], g.periodic[1], g.periodic[2]},
        .rc2 = cutoff * cutoff, .pre2 = (cutoff + tol) * (cutoff + tol),
    };
    memcpy(sys.H, H, sizeof sys.H);
    const int64_t threads = mlff_thread_pool_size(pool);
    int64_t n_blocks = (n + BLOCK_ATOMS - 1) / BLOCK_ATOMS;
    n_blocks = n_blocks < 4 * threads ? n_blocks : 4 * threads;
    if (!reserve_blocks(w, (int)n_blocks))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    for (int64_t k = 0; k < n_blocks; k++)
        w->blocks[k].n_pairs = 0;
    mlff_thread_pool_for(pool, n_blocks, 2, search_blocks, &sys, &n_blocks);
    update_work_size(list);
    int64_t total = list->n_pairs;
    for (int64_t k = 0; k < n_blocks; k++) {
        if (w->blocks[k].status == MLFF_ERROR_OUT_OF_MEMORY)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for neighbour pairs");
        if (w->blocks[k].status != MLFF_OK || (total += w->blocks[k].n_pairs) > INT32_MAX)
            return too_many_pairs(err);
    }
    if (!reserve_pairs(&list->pairs, &list->images, &list->capacity, total))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for %lld neighbour pairs", (long long)total);
    for (int64_t k = 0; k < n_blocks; k++) {
        const nl_block *b = &w->blocks[k];
        /* A block without pairs may have no arrays, and the list none either
         * when no block found any (no pair within the cutoff, on the first
         * build): NULL + 0 and memcpy from NULL are undefined (fuzz finding,
         * regressions/model_file/no_pairs_first_build). */
        if (b->n_pairs == 0)
            continue;
        memcpy(list->pairs + 2 * list->n_pairs, b->pairs, (size_t)b->n_pairs * 2 * sizeof(int32_t));
        memcpy(list->images + 3 * list->n_pairs, b->images, (size_t)b->n_pairs * 3 * sizeof(int32_t));
        list->n_pairs += b->n_pairs;
    }
    return MLFF_OK;
}

mlff_status mlff_neighbors_check(const mlff_batch *batch, double cutoff, int64_t *largest, mlff_error *err)
{
    *largest = 0;
    if (!batch)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "batch is NULL");
    if (!(cutoff > 0.0) || !isfinite(cutoff))
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "neighbour cutoff must be positive and finite, not %g",
                         cutoff);
    if (batch->n_systems < 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "negative number of systems");
    if (batch->n_systems == 0)
        return MLFF_OK;
    const int64_t *off = batch->system_offsets;
    if (!off)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "system offsets are NULL");
    if (off[0] != 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "system offsets must start at 0");
    for (int64_t s = 0; s < batch->n_systems; s++) {
        if (off[s + 1] < off[s])
            return mlff_fail_atom(err, MLFF_ERROR_INVALID_ARGUMENT, s, -1, "system offsets decrease");
        *largest = off[s + 1] - off[s] > *largest ? off[s + 1] - off[s] : *largest;
    }
    const int64_t n_atoms = off[batch->n_systems];
    if (n_atoms > INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "%lld atoms: neighbour lists hold 32-bit atom indices",
                         (long long)n_atoms);
    if (n_atoms > 0 && !batch->positions)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "positions are NULL");
    return MLFF_OK;
}

mlff_status mlff_neighbor_list_reserve(mlff_neighbor_list *list, int64_t n_pairs, mlff_error *err)
{
    if (n_pairs > INT32_MAX)
        return too_many_pairs(err);
    if (!reserve_pairs(&list->pairs, &list->images, &list->capacity, n_pairs))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for %lld neighbour pairs",
                         (long long)n_pairs);
    return MLFF_OK;
}

mlff_status mlff_neighbors_build(const mlff_batch *batch, double cutoff, mlff_thread_pool *pool,
                                 mlff_neighbor_list *list, mlff_error *err)
{
    if (!list)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "neighbour list is NULL");
    list->n_pairs = 0;
    int64_t largest;
    const mlff_status checked = mlff_neighbors_check(batch, cutoff, &largest, err);
    if (checked != MLFF_OK || batch->n_systems == 0)
        return checked;
    if (!list->work) {
        list->work = calloc(1, sizeof(nl_work));
        if (!list->work)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    }
    if (!reserve_atoms(list->work, largest))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    update_work_size(list);

    double tested = 0.0; /* pairs the systems so far tested */
    for (int64_t s = 0; s < batch->n_systems; s++) {
        const mlff_status st = build_system(batch, s, cutoff, pool, list, &tested, err);
        if (st != MLFF_OK) {
            list->n_pairs = 0;
            return st;
        }
    }
    return MLFF_OK;
}

void mlff_neighbor_list_free(mlff_neighbor_list *list)
{
    if (!list)
        return;
    nl_work *w = list->work;
    if (w) {
        free(w->frac);
        free(w->shift);
        free(w->bin);
        free(w->slot_atom);
        free(w->slot_pos);
        free(w->slot_orig);
        free(w->slot_shift);
        free(w->start);
        free(w->bin_sums);
        for (int k = 0; k < w->n_blocks; k++) {
            free(w->blocks[k].pairs);
            free(w->blocks[k].images);
            free(w->blocks[k].keys);
            free(w->blocks[k].found);
        }
        free(w->blocks);
        free(w);
    }
    free(list->pairs);
    free(list->images);
    memset(list, 0, sizeof *list);
}
