/*
 * The host side of the device cell lists (device_cells.h). Per call:
 *  1. host: each system's lattice and bins (core/neighbors.c's rules, at a
 *     search radius a little above the cutoff, for float rounding), and the
 *     positions as float4 (x, y, z, system);
 *  2. cell_bin: each atom's bin and wrapping shift, atoms counted per bin;
 *     cell_scan: the counts become bin starts (a prefix sum in one
 *     work-group: nothing to wait for before the next kernels);
 *  3. cell_place: atoms into slots in bin order (bin starts become ends);
 *     for few atoms (the record's cells_sorted_in_one_group_most: core/
 *     tuning.h), cell_sort does 2 and 3 in one work-group, one launch; a
 *     batch of few atoms (cells_placed_on_host_most) in small systems
 *     without periodic axes, each one bin (cells_one_bin_most), is placed
 *     by the host instead, no launch;
 *  4. cell_count: each atom's pairs, counted (a placed batch's lists of
 *     few pairs to test are counted on the host instead, no launch and no
 *     wait: cells_counted_on_host_most); host: offsets (a prefix sum in 64
 *     bits),
 *     then ranges of atoms whose pairs fit one device buffer;
 *  5. cell_pairs, per range: each atom's pairs written and sorted, then
 *     read straight into the list (those of even fewer pairs to test are
 *     written by the host and uploaded: cells_listed_on_host_most).
 * A graph's cutoff lists (mlff_device_cells_count_lists and _write_lists)
 * take steps 1-4 with the lists' pairs counted too, their offsets and the
 * triple bases summed on the host, and one cell_pairs over all atoms that
 * writes the lists into the graph's buffers. A chunk of a batch
 * (mlff_cell_atoms) is searched the same way over its own atoms, in its
 * order: all of them binned, cell_count and cell_pairs run over its
 * centers only.
 *
 * The buffers, in mlff_cell_buffer order (int and float are 32 bits):
 *   PARAMS           int[10]: first atom of the range; a flag cell_pairs sets
 *                    when it finds another count than cell_count; n; what
 *                    cell_pairs writes (0 the master list, 1 the cutoff
 *                    lists); the list with triple starts (or -1); the
 *                    least r^2 of a pair closer than SYSTEM_REALS' closer^2
 *                    (a float's bits); a flag for images that do not pack;
 *                    the bins; the atoms cell_scan found in them
 *   POSITIONS        float4[n]: x, y, z, system index
 *   SYSTEM_REALS     float[S][28]: H[9], rec[9], origin[3], to_bin[3], radius^2,
 *                    the lists' cutoff^2 (-1: no list), closer^2: the
 *                    (distance limit + skin)^2 below which pairs are recorded
 *   SYSTEM_INTS      int[S][8]: nb[3], reach[3], periodic axes (bit k), first bin
 *   ATOM_BINS        int4[n]: bin (numbered across the batch), shift[3]
 *   BIN_ENDS         int[bins]: counts, then starts, then ends
 *   SLOT_POSITIONS   float4[n]: wrapped positions in bin order (a batch
 *                    placed on the host binds POSITIONS here)
 *   SLOT_SHIFTS      int4[n]: their shifts and atom index
 *   COUNTS           int[4][n + 1]: pairs per atom, then offsets within a
 *                    range; the same for lists 0 and 1 (offsets in the
 *                    list); each atom's first triple
 *   PAIRS, IMAGES    int[cap][2], int[cap][3]: one range's pairs
 *   LIST_PAIRS + k, LIST_IMAGES + k, TRIPLE_STARTS: the graph's buffers
 */
#include "device_cells.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "pair_lists.h"
#include "pair_count.h"
#include "backends/common/segments.h"

#define SYS_REALS 28
#define SYS_INTS MLFF_CELL_GRID_INTS
/* The device's rounding, relative to the lengths involved, is covered
 * about a hundred times over. */
#define FLOAT_SLACK 1e-5
/* The record's thresholds (core/tuning.h): up to cells_sorted_in_one_group_most
 * atoms, one work-group bins and places them (cell_sort), so a molecule's
 * search waits on fewer launches before its counts. A system without
 * periodic axes of up to cells_one_bin_most atoms is one bin: each atom's
 * pairs are found among all of its system's atoms, spread over its
 * work-group's 128 items (a stencil of bins at 5.2 A holds about 200
 * candidates in water: one bin costs no more up to some 256 atoms, a few
 * more loads an item up to 1024). Up to cells_placed_on_host_most atoms, a
 * batch of one-bin systems is placed in its bins on the host: they lie
 * there in batch order already, unshifted, and the upload costs less than
 * the launches that would sort them. Up to cells_counted_on_host_most pairs
 * to test (the sum over its systems of atoms squared), such a batch has
 * its lists' pairs counted on the host too (pair_count.h): fewer tests
 * than the device's count costs in waiting for it. Up to
 * cells_listed_on_host_most, the host writes the lists too, into the
 * graph's buffers: no launch, and a list as it was (a small molecule's,
 * call after call) costs neither a transfer nor a sort, nor its triples
 * built again. */
/* System indices travel as floats. */
#define MAX_SYSTEMS (1 << 24)
#define PARAMS 10
enum {
    PARAM_FIRST,
    PARAM_MISMATCH,
    PARAM_ATOMS,
    PARAM_WRITE_LISTS,
    PARAM_TRIPLES_OF,
    PARAM_CLOSER,
    PARAM_FAR,
    PARAM_BINS,
    PARAM_BINNED
};
/* Pairs the device sees closer than this make the host check them (its
 * limit in double, MLFF_MIN_DISTANCE, with room for float rounding). */
#define CLOSEST (MLFF_MIN_DISTANCE * 1.001)

/* PARAM_CLOSER holds a float r^2 >= 0 as an int's bits: atomic_min on
 * them is the min of the floats. */
static int32_t float_bits(float x)
{
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static float bits_float(int32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* Local atoms [l0, l1) of one system: a system's atoms are one run in a
 * whole batch, two in a chunk (owned atoms, then ghosts). */
typedef struct system_run {
    int64_t system, l0, l1;
} system_run;

struct mlff_device_cells {
    const mlff_tuning *tuning; /* the context's */
    const mlff_backend_iface *iface;
    mlff_backend *be;
    mlff_thread_pool *pool;
    void *buffers[MLFF_CELL_BUFFERS];
    size_t sizes[MLFF_CELL_BUFFERS];
    size_t max_buffer, max_pairs, default_max_pairs;
    /* Host copies: per atom (n + 1 rows; counts has 4 columns, as COUNTS), per system, per bin. */
    float *positions;
    int32_t *counts;
    int64_t *offsets;
    int64_t atoms_capacity;
    float *sys_reals;
    int32_t *sys_ints;
    int64_t systems_capacity;
    int32_t *bins; /* zeros: the bins' counts before cell_bin */
    int64_t bins_capacity;
    /* The atoms searched: local atom l is batch atom atom_of[l] (NULL: the
     * whole batch); the first `centers` have their pairs listed. */
    const int32_t *atom_of, *system_of;
    int64_t n_atoms, centers, n_bins;
    double *local_positions; /* a chunk's, in its order */
    int64_t local_capacity;
    system_run *runs;
    int64_t n_runs, runs_capacity;
    int32_t *atom_bins; /* the census's bins (4 ints an atom as read) */
    int64_t atom_bins_capacity;
    int64_t one_bin_systems; /* of those described last */
    double most_candidates, most_candidates_per_atom; /* of the search under way (core/neighbors.h) */
    int too_many_images;     /* a system described last may test more: for the host's search to judge */
    int placed;              /* the last batch placed on the host (the positions serve as slot positions) */
    int counted;             /* ... and its lists' pairs counted there (count_on_host) */
    int listed;              /* ... and written there too (list_on_host) */
    int32_t *place;          /* ... its ATOM_BINS, then SLOT_SHIFTS (4 ints an atom each) */
    int64_t place_capacity;
    int64_t tests;           /* ... its pairs to test (each atom with each of its system's) */
    mlff_pair_count_scratch pair_count; /* ... for counting them */
    int32_t *found;          /* ... each list's neighbours found in them */
    int32_t *lists;          /* ... the lists made: pairs and images of each, triple starts */
    int64_t found_capacity, lists_capacity;
    int32_t params[PARAMS];      /* as last written by count_pairs */
    int32_t checked_params[PARAMS]; /* read back after the graph */
};

mlff_status mlff_device_cells_create(const mlff_backend_iface *iface, mlff_backend *be, mlff_thread_pool *pool,
                                     const mlff_tuning *tuning, mlff_device_cells **out, mlff_error *err)
{
    *out = NULL;
    if (!iface->cell_kernel)
        return MLFF_OK;
    mlff_device_cells *c = calloc(1, sizeof *c);
    if (!c)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the device cell lists");
    c->tuning = tuning;
    c->iface = iface;
    c->be = be;
    c->pool = pool;
    mlff_memory_limits limits;
    iface->memory_limits(be, &limits);
    c->max_buffer = limits.max_buffer;
    /* One range's pairs: a buffer's worth, and no more than a tenth of the budget. */
    c->max_pairs = limits.max_buffer / (3 * sizeof(int32_t));
    if (c->max_pairs > limits.budget / 10 / (5 * sizeof(int32_t)))
        c->max_pairs = limits.budget / 10 / (5 * sizeof(int32_t));
    c->default_max_pairs = c->max_pairs;
    *out = c;
    return MLFF_OK;
}

void mlff_device_cells_free(mlff_device_cells *c)
{
    if (!c)
        return;
    for (int k = 0; k < MLFF_CELL_BUFFERS; k++)
        if (c->buffers[k])
            c->iface->buffer_free(c->be, c->buffers[k]);
    free(c->positions);
    free(c->sys_reals);
    free(c->sys_ints);
    free(c->bins);
    free(c->counts);
    free(c->offsets);
    free(c->local_positions);
    free(c->runs);
    free(c->atom_bins);
    free(c->place);
    mlff_pair_count_scratch_free(&c->pair_count);
    free(c->found);
    free(c->lists);
    free(c);
}

void mlff_device_cells_limit_pairs(mlff_device_cells *c, size_t max_pairs)
{
    c->max_pairs = max_pairs && max_pairs < c->default_max_pairs ? max_pairs : c->default_max_pairs;
}

static mlff_status build(void *self, const mlff_batch *batch, double cutoff, mlff_neighbor_list *list,
                         mlff_error *err)
{
    return mlff_device_cells_build(self, batch, cutoff, list, err);
}

mlff_neighbor_search mlff_device_cells_search(mlff_device_cells *cells)
{
    return (mlff_neighbor_search){build, cells};
}

/* Pairs to test in a batch placed on the host: each atom with each of its system's. */
static int64_t tests_of(const mlff_batch *b)
{
    int64_t tests = 0;
    for (int64_t s = 0; s < b->n_systems; s++) {
        const int64_t n = b->system_offsets[s + 1] - b->system_offsets[s];
        tests += n * n;
    }
    return tests;
}

int mlff_device_cells_listed_on_host(const mlff_device_cells *c, const mlff_batch *batch)
{
    return tests_of(batch) <= c->tuning->cells_listed_on_host_most;
}

static int fits(const mlff_device_cells *c, size_t bytes)
{
    return bytes <= c->max_buffer;
}

/* Device buffer k of at least `bytes` (grown by 1.5x, contents not kept). */
static mlff_status reserve_buffer(mlff_device_cells *c, mlff_cell_buffer k, size_t bytes, mlff_error *err)
{
    if (bytes <= c->sizes[k] && c->buffers[k])
        return MLFF_OK;
    const size_t size = mlff_grown_capacity_within(c->sizes[k], bytes < 16 ? 16 : bytes, c->max_buffer);
    if (c->buffers[k])
        c->iface->buffer_free(c->be, c->buffers[k]);
    c->buffers[k] = NULL;
    c->sizes[k] = 0;
    mlff_status s = c->iface->buffer_alloc(c->be, size, &c->buffers[k], err);
    if (s != MLFF_OK)
        return s;
    c->sizes[k] = size;
    /* What changes little between calls (the systems' grids, a placement
     * made on the host) keeps a host copy: rewrites of the same bytes,
     * an MD step's, then transfer nothing (the buffer starts with its
     * copy, as segments.h says; a kernel that writes it drops the copy). */
    mlff_index_shadow *copy = c->buffers[k];
    copy->keep = k == MLFF_CELL_BUF_SYSTEM_REALS || k == MLFF_CELL_BUF_SYSTEM_INTS || k == MLFF_CELL_BUF_ATOM_BINS ||
                 k == MLFF_CELL_BUF_BIN_ENDS || k == MLFF_CELL_BUF_SLOT_SHIFTS;
    return MLFF_OK;
}

static mlff_status write(mlff_device_cells *c, mlff_cell_buffer k, size_t offset, const void *src, size_t bytes,
                         mlff_error *err)
{
    return bytes ? c->iface->buffer_write(c->be, c->buffers[k], offset, src, bytes, err) : MLFF_OK;
}

static mlff_status read(mlff_device_cells *c, mlff_cell_buffer k, size_t offset, void *dst, size_t bytes,
                        mlff_error *err)
{
    return bytes ? c->iface->buffer_read(c->be, c->buffers[k], offset, dst, bytes, err) : MLFF_OK;
}

/* A read that arrives by the next read, or the backend's next wait. */
static mlff_status read_later(mlff_device_cells *c, mlff_cell_buffer k, size_t offset, void *dst, size_t bytes,
                              mlff_error *err)
{
    if (!bytes || !c->iface->buffer_read_async)
        return read(c, k, offset, dst, bytes, err);
    return c->iface->buffer_read_async(c->be, c->buffers[k], offset, dst, bytes, err);
}

/* Runs kernel k with the cell buffers and, where lists is not NULL, its
 * buffers bound (the first buffer stands in for those not there). */
static mlff_status run_with(mlff_device_cells *c, mlff_cell_kernel k, int64_t items, const mlff_device_lists *lists,
                            mlff_error *err)
{
    if (!items)
        return MLFF_OK;
    void *bound[MLFF_CELL_BUFFERS];
    for (int b = 0; b < MLFF_CELL_BUFFERS; b++)
        bound[b] = b < MLFF_CELL_BUF_LIST_PAIRS ? c->buffers[b] : c->buffers[MLFF_CELL_BUF_PARAMS];
    if (c->placed)
        bound[MLFF_CELL_BUF_SLOT_POSITIONS] = c->buffers[MLFF_CELL_BUF_POSITIONS];
    for (int l = 0; lists && l < lists->n_lists; l++) {
        bound[MLFF_CELL_BUF_LIST_PAIRS + l] = lists->pairs[l];
        bound[MLFF_CELL_BUF_LIST_IMAGES + l] = lists->images[l];
    }
    if (lists && lists->triples_of >= 0)
        bound[MLFF_CELL_BUF_TRIPLE_STARTS] = lists->triple_starts;
    return c->iface->cell_kernel(c->be, k, bound, items, err);
}

static mlff_status run(mlff_device_cells *c, mlff_cell_kernel k, int64_t items, mlff_error *err)
{
    return run_with(c, k, items, NULL, err);
}

/* The atoms first + [k0, k1) of one system as float4 (x, y, z, system). */
typedef struct float_positions {
    float *out;
    const double *pos;
    int64_t first;
    float system;
} float_positions;

static void to_float4(const void *task, void *extra, int64_t k0, int64_t k1)
{
    (void)extra;
    const float_positions *t = task;
    for (int64_t l = t->first + k0; l < t->first + k1; l++) {
        for (int d = 0; d < 3; d++)
            t->out[4 * l + d] = (float)t->pos[3 * l + d];
        t->out[4 * l + 3] = t->system;
    }
}

/* Step 1's positions for a system that is one bin (no periodic axes, at
 * most cells_one_bin_most atoms): as float4, unwrapped, in one pass (the
 * general path's cost per system added up to 0.3 us a molecule in a batch
 * of small ones), and *magnitude, the largest coordinate's, as
 * mlff_cell_grid_wrap finds it; 0 for a coordinate that is not finite (the
 * general path then says which). */
static int one_bin_positions(mlff_device_cells *c, const double *pos, const system_run *runs, int64_t n_runs,
                             int64_t s, double *magnitude)
{
    double most = 0.0;
    int finite = 1;
    for (int64_t r = 0; r < n_runs; r++)
        for (int64_t l = runs[r].l0; l < runs[r].l1; l++) {
            for (int d = 0; d < 3; d++) {
                const double x = pos[3 * l + d];
                finite &= isfinite(x) != 0;
                most = fabs(x) > most ? fabs(x) : most;
                c->positions[4 * l + d] = (float)x;
            }
            c->positions[4 * l + 3] = (float)s;
        }
    if (finite)
        *magnitude = most;
    return finite;
}

/* The least power of two at or above x > 0, what exp2(ceil(log2(x)))
 * meant (which rounds down just above some powers of two), at less cost;
 * x itself when it is not finite. */
static double power_of_two_above(double x)
{
    if (!(x < INFINITY))
        return x;
    int e;
    const double m = frexp(x, &e); /* x = m 2^e, m in [0.5, 1) */
    return m == 0.5 ? x : ldexp(1.0, e);
}

/* Step 1 for the system of runs[0 .. n_runs) (positions at pos, by
 * local atom): its rows of SYSTEM_REALS and SYSTEM_INTS, and its atoms'
 * positions; *n_bins advances past its bins. */
static mlff_status describe_system(mlff_device_cells *c, const mlff_batch *b, const double *pos,
                                   const system_run *runs, int64_t n_runs, double cutoff,
                                   const mlff_device_lists *lists, int64_t *n_bins, mlff_error *err)
{
    const int64_t s = runs[0].system;
    float *reals = c->sys_reals + SYS_REALS * s;
    int32_t *ints = c->sys_ints + SYS_INTS * s;
    mlff_cell_grid g;
    mlff_status st = mlff_cell_grid_lattice(b, s, &g, err);
    if (st != MLFF_OK)
        return st;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, magnitude = 0.0;
    int64_t n = 0;
    for (int64_t r = 0; r < n_runs; r++)
        n += runs[r].l1 - runs[r].l0;
    const int one_bin = !g.periodic[0] && !g.periodic[1] && !g.periodic[2] && n <= c->tuning->cells_one_bin_most;
    const int unwrapped = one_bin && one_bin_positions(c, pos, runs, n_runs, s, &magnitude);
    for (int64_t r = 0; r < n_runs && !unwrapped; r++) {
        const int64_t l0 = runs[r].l0, count = runs[r].l1 - l0;
        double run_lo[3], run_hi[3], run_magnitude;
        if ((st = mlff_cell_grid_wrap(&g, pos + 3 * l0, count, s, NULL, NULL, run_lo, run_hi, &run_magnitude,
                                      c->pool, err)) != MLFF_OK)
            return st;
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], run_lo[k]);
            hi[k] = fmax(hi[k], run_hi[k]);
        }
        magnitude = fmax(magnitude, run_magnitude);
        const float_positions task = {c->positions, pos, l0, (float)s};
        mlff_thread_pool_for(c->pool, count, MLFF_POOL_ATOMS_SERIAL_BELOW, to_float4, &task, NULL);
    }
    /* |m . H| over the images within reach of the radius (a bound: the bins are not known yet). */
    double image_length = 0.0;
    for (int k = 0; k < 3; k++)
        if (g.periodic[k]) {
            const double *h = g.H + 3 * k;
            image_length += (2.0 * cutoff / g.width[k] + 3.0) * sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
        }
    /* The slack up to a power of two: a molecule's row stays the same
     * while it moves, and is not uploaded again (reserve_buffer). */
    const double radius = cutoff + power_of_two_above(FLOAT_SLACK * (cutoff + 4.0 * magnitude + 2.0 * image_length));
    if (one_bin) {
        for (int k = 0; k < 3; k++) {
            g.nb[k] = 1;
            g.reach[k] = 0;
            g.origin[k] = g.to_bin[k] = 0.0;
        }
        c->one_bin_systems++;
    } else if ((st = mlff_cell_grid_bins(&g, lo, hi, n, radius, s, err)) != MLFF_OK) {
        return st;
    } else if (mlff_cell_grid_most_candidates(&g, n) > (double)n * (double)n &&
               mlff_cell_grid_most_candidates(&g, n) >
                   fmax(c->most_candidates, c->most_candidates_per_atom * (double)n) &&
               (c->most_candidates > 0 || c->most_candidates_per_atom > 0)) {
        /* A cell thinner than the cutoff: its images could make the count
         * itself run for minutes. The host counts what its search would test
         * (from the atoms in each bin) before it searches. */
        c->too_many_images = 1;
    }
    for (int k = 0; k < 9; k++) {
        reals[k] = (float)g.H[k];
        reals[9 + k] = (float)g.rec[k / 3][k % 3];
    }
    for (int k = 0; k < 3; k++) {
        reals[18 + k] = (float)g.origin[k];
        reals[21 + k] = (float)g.to_bin[k];
        ints[k] = (int32_t)g.nb[k];
        ints[3 + k] = (int32_t)g.reach[k];
        ints[6] |= g.periodic[k] << k;
    }
    reals[24] = (float)(radius * radius);
    const double skin = lists ? lists->skin : 0.0;
    for (int l = 0; l < MLFF_DEVICE_LISTS; l++) {
        const double list_radius = lists && l < lists->n_lists ? lists->cutoff[l] + skin : -1.0;
        reals[25 + l] = list_radius < 0 ? -1.0f : (float)(list_radius * list_radius);
    }
    /* With a skin, the pairs that could come too close before the next search. */
    reals[27] = (float)((CLOSEST + skin) * (CLOSEST + skin));
    ints[7] = (int32_t)*n_bins;
    *n_bins += g.nb[0] * g.nb[1] * g.nb[2];
    return MLFF_OK;
}

static int by_system(const void *x, const void *y)
{
    const system_run *a = x, *b = y;
    return a->system != b->system ? (a->system > b->system) - (a->system < b->system)
                                  : (a->l0 > b->l0) - (a->l0 < b->l0);
}

/* c->runs: the runs of the atoms searched, by system; and their positions
 * in local order (*pos). */
static mlff_status find_runs(mlff_device_cells *c, const mlff_batch *b, const double **pos, mlff_error *err)
{
    const int64_t S = b->n_systems;
    c->n_runs = 0;
    if (!mlff_grow((void **)&c->runs, &c->runs_capacity, c->atom_of ? 2 * S : S, sizeof *c->runs))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    *pos = b->positions;
    if (!c->atom_of) {
        for (int64_t s = 0; s < S; s++)
            if (b->system_offsets[s + 1] > b->system_offsets[s])
                c->runs[c->n_runs++] = (system_run){s, b->system_offsets[s], b->system_offsets[s + 1]};
        return MLFF_OK;
    }
    if (!mlff_grow((void **)&c->local_positions, &c->local_capacity, 3 * c->n_atoms, sizeof *c->local_positions))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    mlff_thread_pool_gather(c->pool, c->local_positions, b->positions, c->atom_of, c->n_atoms, 3 * sizeof(double));
    for (int64_t l = 0; l < c->n_atoms; l++) {
        const int64_t s = c->system_of[c->atom_of[l]];
        system_run *last = c->n_runs ? &c->runs[c->n_runs - 1] : NULL;
        if (last && last->system == s && last->l1 == l) {
            last->l1++;
        } else {
            if (c->n_runs == 2 * S)
                return mlff_fail(err, MLFF_ERROR_INTERNAL, "device cell lists: a chunk's atoms out of order");
            c->runs[c->n_runs++] = (system_run){s, l, l + 1};
        }
    }
    qsort(c->runs, (size_t)c->n_runs, sizeof *c->runs, by_system);
    *pos = c->local_positions;
    return MLFF_OK;
}

/* Steps 2 and 3 on the host, for a whole batch whose systems are each one
 * bin: the atoms in batch order, unshifted, bin b ending where its system
 * does; the positions serve as slot positions (run_with binds them). */
static mlff_status place_on_host(mlff_device_cells *c, mlff_error *err)
{
    const int64_t n = c->n_atoms;
    if (!mlff_grow((void **)&c->place, &c->place_capacity, 8 * n, sizeof *c->place))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    int32_t *atom_bins = c->place, *slot_shifts = c->place + 4 * n;
    for (int64_t r = 0; r < c->n_runs; r++) {
        const int32_t bin = c->sys_ints[SYS_INTS * c->runs[r].system + 7];
        c->bins[bin] = (int32_t)c->runs[r].l1;
        for (int64_t a = c->runs[r].l0; a < c->runs[r].l1; a++) {
            memcpy(atom_bins + 4 * a, (const int32_t[4]){bin, 0, 0, 0}, 4 * sizeof(int32_t));
            memcpy(slot_shifts + 4 * a, (const int32_t[4]){0, 0, 0, (int32_t)a}, 4 * sizeof(int32_t));
        }
    }
    c->params[PARAM_BINNED] = (int32_t)n;
    return MLFF_OK;
}

/* The placement for the device's kernels. Only what changed is uploaded:
 * for an MD step, nothing. */
static mlff_status upload_placement(mlff_device_cells *c, mlff_error *err)
{
    const int64_t n = c->n_atoms;
    mlff_status s = write(c, MLFF_CELL_BUF_ATOM_BINS, 0, c->place, (size_t)n * 16, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_SLOT_SHIFTS, 0, c->place + 4 * n, (size_t)n * 16, err);
    return s == MLFF_OK ? write(c, MLFF_CELL_BUF_BIN_ENDS, 0, c->bins, (size_t)c->n_bins * 4, err) : s;
}

/* For list_on_host, a listed batch's neighbours: atom a's of list l at
 * found[l][first_test(a)...], ascending, as count_on_host counted them
 * (the same r^2 for a pair either way round: pair_count.h). */
static void keep_neighbours(mlff_device_cells *c, int64_t l0, int64_t l1, const float cutoff2[2],
                            int64_t first_test)
{
    const int64_t n = l1 - l0;
    for (int64_t a = l0; a < l1; a++) {
        const float *pa = c->positions + 4 * a;
        int32_t listed[2] = {0, 0};
        for (int64_t b = l0; b < l1; b++) {
            if (b == a)
                continue;
            const float *pb = c->positions + 4 * b;
            const float dx = pb[0] - pa[0], dy = pb[1] - pa[1], dz = pb[2] - pa[2];
            const float r2 = dx * dx + dy * dy + dz * dz;
            for (int l = 0; l < 2; l++)
                if (r2 <= cutoff2[l])
                    c->found[l * c->tests + first_test + (a - l0) * n + listed[l]++] = (int32_t)b;
        }
    }
}

/* Step 4 on the host for a placed batch: each list's pairs counted into
 * c->counts' columns 1 and 2 (for a listed batch, their neighbours kept
 * too), and the closest pair under closer^2 recorded, as cell_count
 * would, in the device's floats and its squared radii (pair_count.h). */
static mlff_status count_on_host(mlff_device_cells *c, mlff_error *err)
{
    if (c->listed && !mlff_grow((void **)&c->found, &c->found_capacity, 2 * c->tests, sizeof *c->found))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the pair lists");
    const int64_t stride = c->n_atoms + 1;
    float closer2 = INFINITY;
    int64_t first_test = 0;
    for (int64_t r = 0; r < c->n_runs; r++) {
        const float *f = c->sys_reals + SYS_REALS * c->runs[r].system;
        const float cutoff2[2] = {f[25], f[26]};
        /* Recorded as cell_count has it: within the search radius too. */
        const float recorded2 = fminf(f[27], nextafterf(f[24], INFINITY));
        float least2 = recorded2;
        const int64_t l0 = c->runs[r].l0, l1 = c->runs[r].l1;
        int32_t *const counts[2] = {c->counts + stride + l0, c->counts + 2 * stride + l0};
        if (!mlff_count_pairs(c->positions + 4 * l0, l1 - l0, cutoff2, counts, &least2, &c->pair_count))
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the pair lists");
        if (c->listed)
            keep_neighbours(c, l0, l1, cutoff2, first_test);
        first_test += (l1 - l0) * (l1 - l0);
        if (least2 < recorded2)
            closer2 = fminf(closer2, least2);
    }
    c->params[PARAM_CLOSER] = float_bits(closer2);
    return MLFF_OK;
}

/* Step 5 for a listed batch: its lists written from what count_on_host
 * found, at the offsets c->counts holds by then (i, then j ascending;
 * images zero; the triple starts as cell_pairs writes them), into the
 * graph's buffers, which keep a host copy: a list as it was costs neither
 * a transfer nor a sort. */
static mlff_status list_on_host(mlff_device_cells *c, const mlff_device_lists *lists, mlff_error *err)
{
    const int t = lists->triples_of, n_lists = lists->n_lists;
    int64_t ints = t >= 0 ? lists->n_pairs[t] : 0;
    for (int l = 0; l < n_lists; l++)
        ints += 3 * lists->n_pairs[l];
    if (!mlff_grow((void **)&c->lists, &c->lists_capacity, ints + 1, sizeof *c->lists))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the pair lists");
    /* Pairs and images of each list, then the triple starts, one after the other in c->lists. */
    void *buffers[2 * MLFF_DEVICE_LISTS + 1];
    int32_t *written[2 * MLFF_DEVICE_LISTS + 2] = {c->lists};
    int n = 0;
    for (int l = 0; l < n_lists; l++) {
        buffers[n] = lists->pairs[l], written[n + 1] = written[n] + 2 * lists->n_pairs[l], n++;
        buffers[n] = lists->images[l], written[n + 1] = written[n] + lists->n_pairs[l], n++;
    }
    if (t >= 0)
        buffers[n] = lists->triple_starts, written[n + 1] = written[n] + lists->n_pairs[t], n++;
    const int64_t stride = c->n_atoms + 1;
    const int32_t no_image = mlff_image_pack((const int32_t[3]){0, 0, 0});
    int64_t first_test = 0;
    for (int64_t r = 0; r < c->n_runs; r++)
        for (int64_t a = c->runs[r].l0; a < c->runs[r].l1; a++, first_test += c->runs[r].l1 - c->runs[r].l0) {
            for (int l = 0; l < n_lists; l++) {
                const int32_t *near = c->found + l * c->tests + first_test, *at = c->counts + (l + 1) * stride + a;
                int32_t *pairs = written[2 * l] + 2 * at[0], *images = written[2 * l + 1] + at[0];
                for (int32_t x = 0; x < at[1] - at[0]; x++) {
                    pairs[2 * x] = (int32_t)a;
                    pairs[2 * x + 1] = near[x];
                    images[x] = no_image;
                }
            }
            if (t < 0)
                continue;
            /* Pair x of the atom's k makes a triple with each later pair. */
            const int32_t *at = c->counts + (t + 1) * stride + a, k = at[1] - at[0], base = c->counts[3 * stride + a];
            for (int32_t x = 0; x < k; x++)
                written[n - 1][at[0] + x] = base + x * (k - 1) - x * (x - 1) / 2;
        }
    mlff_status s = MLFF_OK;
    for (int k = 0; k < n && s == MLFF_OK; k++) {
        const size_t bytes = (size_t)(written[k + 1] - written[k]) * 4;
        if (bytes) {
            ((mlff_index_shadow *)buffers[k])->keep = 1;
            s = c->iface->buffer_write(c->be, buffers[k], 0, written[k], bytes, err);
        }
    }
    return s;
}

/* Steps 2 and 3; 1 in *on_host when the batch is too big for the device buffers. */
static mlff_status sort_into_bins(mlff_device_cells *c, const mlff_batch *b, double cutoff,
                                  const mlff_device_lists *lists, int *on_host, mlff_error *err)
{
    const int64_t S = b->n_systems, n = c->n_atoms;
    int64_t n_bins = 0;
    const double *pos = b->positions;
    mlff_status s = find_runs(c, b, &pos, err);
    c->one_bin_systems = 0;
    memset(c->sys_reals, 0, (size_t)S * SYS_REALS * sizeof *c->sys_reals);
    memset(c->sys_ints, 0, (size_t)S * SYS_INTS * sizeof *c->sys_ints);
    c->too_many_images = 0;
    for (int64_t r0 = 0, r1; r0 < c->n_runs && s == MLFF_OK; r0 = r1) {
        for (r1 = r0 + 1; r1 < c->n_runs && c->runs[r1].system == c->runs[r0].system; r1++)
            ;
        s = describe_system(c, b, pos, c->runs + r0, r1 - r0, cutoff, lists, &n_bins, err);
    }
    if (s != MLFF_OK)
        return s;
    if (c->too_many_images) {
        *on_host = 1;
        return MLFF_OK;
    }
    c->n_bins = n_bins;
    if (!fits(c, (size_t)n * 16) || !fits(c, (size_t)S * SYS_REALS * 4) || !fits(c, (size_t)n_bins * 4) ||
        !fits(c, (size_t)(n + 1) * 16) || n_bins > INT32_MAX) {
        *on_host = 1;
        return MLFF_OK;
    }
    if (!mlff_grow((void **)&c->bins, &c->bins_capacity, n_bins, sizeof *c->bins))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    const struct {
        mlff_cell_buffer k;
        size_t bytes;
    } sizes[] = {{MLFF_CELL_BUF_PARAMS, PARAMS * 4},
                 {MLFF_CELL_BUF_POSITIONS, (size_t)n * 16},
                 {MLFF_CELL_BUF_SYSTEM_REALS, (size_t)S * SYS_REALS * 4},
                 {MLFF_CELL_BUF_SYSTEM_INTS, (size_t)S * SYS_INTS * 4},
                 {MLFF_CELL_BUF_ATOM_BINS, (size_t)n * 16},
                 {MLFF_CELL_BUF_BIN_ENDS, (size_t)n_bins * 4},
                 {MLFF_CELL_BUF_SLOT_POSITIONS, (size_t)n * 16},
                 {MLFF_CELL_BUF_SLOT_SHIFTS, (size_t)n * 16},
                 {MLFF_CELL_BUF_COUNTS, (size_t)(n + 1) * 16},
                 {MLFF_CELL_BUF_PAIRS, 8},
                 {MLFF_CELL_BUF_IMAGES, 12}};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes && s == MLFF_OK; k++)
        s = reserve_buffer(c, sizes[k].k, sizes[k].bytes, err);
    memset(c->bins, 0, (size_t)n_bins * sizeof *c->bins);
    memset(c->params, 0, sizeof c->params);
    c->params[PARAM_CLOSER] = float_bits(INFINITY);
    c->params[PARAM_ATOMS] = (int32_t)n;
    c->params[PARAM_WRITE_LISTS] = lists != NULL; /* for cell_pairs, after the count */
    c->params[PARAM_TRIPLES_OF] = lists ? lists->triples_of : -1;
    c->params[PARAM_BINS] = (int32_t)n_bins;
    c->placed = !c->atom_of && c->one_bin_systems == c->n_runs && n <= c->tuning->cells_placed_on_host_most;
    c->tests = c->placed ? tests_of(b) : 0;
    c->counted = c->placed && lists && c->tests <= c->tuning->cells_counted_on_host_most;
    c->listed = c->counted && c->tests <= c->tuning->cells_listed_on_host_most;
    if (s == MLFF_OK && c->placed)
        s = place_on_host(c, err);
    if (s != MLFF_OK || c->listed) /* no kernel runs */
        return s;
    if (c->placed)
        s = upload_placement(c, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_PARAMS, 0, c->params, sizeof c->params, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_POSITIONS, 0, c->positions, (size_t)n * 16, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_SYSTEM_REALS, 0, c->sys_reals, (size_t)S * SYS_REALS * 4, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_SYSTEM_INTS, 0, c->sys_ints, (size_t)S * SYS_INTS * 4, err);
    if (s != MLFF_OK || c->placed)
        return s;
    s = write(c, MLFF_CELL_BUF_BIN_ENDS, 0, c->bins, (size_t)n_bins * 4, err);
    if (s == MLFF_OK && n <= c->tuning->cells_sorted_in_one_group_most)
        return run(c, MLFF_CELL_SORT, 1, err);
    if (s == MLFF_OK)
        s = run(c, MLFF_CELL_BIN, n, err);
    if (s == MLFF_OK)
        s = run(c, MLFF_CELL_SCAN, 1, err);
    return s == MLFF_OK ? run(c, MLFF_CELL_PLACE, n, err) : s;
}

/* After a read of PARAMS: every atom was binned. */
static mlff_status check_binned(const int32_t *params, mlff_error *err)
{
    if (params[PARAM_BINNED] != params[PARAM_ATOMS])
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "device cell lists: %d of %d atoms binned", params[PARAM_BINNED],
                         params[PARAM_ATOMS]);
    return MLFF_OK;
}

/* Step 5 for atoms [a0, a1): their pairs, into the list at offsets[a0]. */
static mlff_status write_range(mlff_device_cells *c, int64_t a0, int64_t a1, mlff_neighbor_list *list,
                               mlff_error *err)
{
    const int64_t base = c->offsets[a0], n_pairs = c->offsets[a1] - base;
    if (n_pairs == 0)
        return MLFF_OK;
    for (int64_t a = a0; a <= a1; a++)
        c->counts[a] = (int32_t)(c->offsets[a] - base);
    const int32_t first = (int32_t)a0;
    mlff_status s = reserve_buffer(c, MLFF_CELL_BUF_PAIRS, (size_t)n_pairs * 8, err);
    if (s == MLFF_OK)
        s = reserve_buffer(c, MLFF_CELL_BUF_IMAGES, (size_t)n_pairs * 12, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_COUNTS, (size_t)a0 * 4, c->counts + a0, (size_t)(a1 - a0 + 1) * 4, err);
    if (s == MLFF_OK)
        s = write(c, MLFF_CELL_BUF_PARAMS, 0, &first, sizeof first, err);
    if (s == MLFF_OK)
        s = run(c, MLFF_CELL_PAIRS, a1 - a0, err);
    if (s == MLFF_OK)
        s = read(c, MLFF_CELL_BUF_PAIRS, 0, list->pairs + 2 * base, (size_t)n_pairs * 8, err);
    if (s == MLFF_OK)
        s = read(c, MLFF_CELL_BUF_IMAGES, 0, list->images + 3 * base, (size_t)n_pairs * 12, err);
    return s;
}

/* Steps 1-4: the atoms binned (the batch's, or the chunk's `atoms`) and
 * their pairs counted (the lists' too where lists is not NULL). *on_host:
 * they are not for the device. */
static mlff_status count_pairs(mlff_device_cells *c, const mlff_batch *b, const mlff_cell_atoms *atoms,
                               double cutoff, const mlff_device_lists *lists, int *on_host, mlff_error *err)
{
    *on_host = 1;
    c->most_candidates = lists ? lists->most_candidates : c->most_candidates;
    c->most_candidates_per_atom = lists ? lists->most_candidates_per_atom : c->most_candidates_per_atom;
    c->placed = c->counted = c->listed = 0;
    int64_t largest;
    mlff_status s = mlff_neighbors_check(b, cutoff, &largest, err);
    const int64_t S = b->n_systems, n = atoms ? atoms->n_atoms : S > 0 ? b->system_offsets[S] : 0;
    if (s != MLFF_OK || n == 0 || S >= MAX_SYSTEMS || n >= INT32_MAX)
        return s;
    c->atom_of = atoms ? atoms->batch_atom : NULL;
    c->system_of = atoms ? atoms->system : NULL;
    c->n_atoms = n;
    c->centers = atoms ? atoms->n_centers : n;
    void **const atom_columns[] = {(void **)&c->positions, (void **)&c->counts, (void **)&c->offsets};
    const size_t atom_sizes[] = {4 * sizeof(float), 4 * sizeof(int32_t), sizeof(int64_t)};
    void **const system_columns[] = {(void **)&c->sys_reals, (void **)&c->sys_ints};
    const size_t system_sizes[] = {SYS_REALS * sizeof(float), SYS_INTS * sizeof(int32_t)};
    if (!mlff_grow_columns(atom_columns, atom_sizes, 3, &c->atoms_capacity, n + 1) ||
        !mlff_grow_columns(system_columns, system_sizes, 2, &c->systems_capacity, S))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    *on_host = 0;
    if ((s = sort_into_bins(c, b, cutoff, lists, on_host, err)) != MLFF_OK || *on_host)
        return s;
    if (c->counted)
        return count_on_host(c, err);
    return run(c, MLFF_CELL_COUNT, c->centers, err);
}

mlff_status mlff_device_cells_build(mlff_device_cells *c, const mlff_batch *b, double cutoff,
                                    mlff_neighbor_list *list, mlff_error *err)
{
    if (!list)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "neighbour list is NULL");
    list->n_pairs = 0;
    int on_host;
    c->most_candidates = list->most_candidates;
    c->most_candidates_per_atom = list->most_candidates_per_atom;
    mlff_status s = count_pairs(c, b, NULL, cutoff, NULL, &on_host, err);
    if (s != MLFF_OK || on_host)
        return s != MLFF_OK ? s : mlff_neighbors_build(b, cutoff, c->pool, list, err);
    const int64_t n = b->system_offsets[b->n_systems];
    if ((s = read(c, MLFF_CELL_BUF_COUNTS, 0, c->counts, (size_t)n * 4, err)) != MLFF_OK)
        return s;
    c->offsets[0] = 0;
    for (int64_t a = 0; a < n; a++)
        c->offsets[a + 1] = c->offsets[a] + c->counts[a];
    /* More pairs than the search may hold: the host's search, which counts
     * what it would test, says where. */
    if ((list->most_candidates > 0 || list->most_candidates_per_atom > 0) &&
        (double)c->offsets[n] > fmax(list->most_candidates, list->most_candidates_per_atom * (double)n))
        return mlff_neighbors_build(b, cutoff, c->pool, list, err);
    if ((s = mlff_neighbor_list_reserve(list, c->offsets[n], err)) != MLFF_OK)
        return s;

    /* Step 5, in ranges of atoms whose pairs fit one buffer. */
    for (int64_t a0 = 0, a1; a0 < n && s == MLFF_OK; a0 = a1) {
        for (a1 = a0; a1 < n && c->offsets[a1 + 1] - c->offsets[a0] <= (int64_t)c->max_pairs; a1++)
            ;
        if (a1 == a0)
            return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                             "atom %lld has %lld neighbour pairs: more than one device buffer holds",
                             (long long)a0, (long long)(c->offsets[a0 + 1] - c->offsets[a0]));
        s = write_range(c, a0, a1, list, err);
    }
    int32_t params[PARAMS];
    if (s == MLFF_OK)
        s = read(c, MLFF_CELL_BUF_PARAMS, 0, params, sizeof params, err);
    if (s == MLFF_OK && params[PARAM_MISMATCH])
        s = mlff_fail(err, MLFF_ERROR_INTERNAL, "device cell lists: the two passes found different pairs");
    if (s == MLFF_OK)
        s = check_binned(params, err);
    if (s == MLFF_OK)
        list->n_pairs = c->offsets[n];
    return s;
}

mlff_status mlff_device_cells_count_lists(mlff_device_cells *c, const mlff_batch *b, const mlff_cell_atoms *atoms,
                                          mlff_device_lists *lists, int *usable, mlff_error *err)
{
    *usable = 0;
    double cutoff = 0.0;
    for (int l = 0; l < lists->n_lists; l++)
        cutoff = lists->cutoff[l] > cutoff ? lists->cutoff[l] : cutoff;
    int on_host;
    mlff_status s = count_pairs(c, b, atoms, cutoff + lists->skin, lists, &on_host, err);
    if (s != MLFF_OK || on_host)
        return s;
    const int64_t n = c->n_atoms, stride = n + 1;
    int32_t params[PARAMS];
    memcpy(params, c->params, sizeof params);
    if (!c->counted &&
        ((s = read_later(c, MLFF_CELL_BUF_PARAMS, 0, params, sizeof params, err)) != MLFF_OK ||
         (s = read(c, MLFF_CELL_BUF_COUNTS, (size_t)stride * 4, c->counts + stride, (size_t)(2 * stride) * 4, err)) !=
             MLFF_OK))
        return s;
    const float closer2 = bits_float(params[PARAM_CLOSER]);
    if ((s = check_binned(params, err)) != MLFF_OK || closer2 < (float)(CLOSEST * CLOSEST) || params[PARAM_FAR])
        return s;
    /* Each pair may shrink by twice what an atom moves: by no more than
     * the skin, nor than takes it within the limit. */
    lists->kept_skin = fmin(lists->skin, sqrt(closer2) - CLOSEST);
    /* Ghosts have no pairs (cell_count left their rows as they were). */
    for (int l = 0; l < lists->n_lists; l++)
        memset(c->counts + (l + 1) * stride + c->centers, 0, (size_t)(n - c->centers) * sizeof *c->counts);
    /* Counts become offsets, and the triple list's atoms get their first triple. */
    for (int l = 0; l < lists->n_lists; l++) {
        int32_t *counts = c->counts + (l + 1) * stride, *first_triple = c->counts + 3 * stride;
        int64_t total = 0, triples = 0;
        for (int64_t a = 0; a < n; a++) {
            const int64_t k = counts[a];
            counts[a] = (int32_t)total;
            if (l == lists->triples_of)
                first_triple[a] = (int32_t)triples;
            total += k;
            triples += k * (k - 1) / 2;
            if (total > INT32_MAX || (l == lists->triples_of && triples > INT32_MAX))
                return MLFF_OK;
        }
        if ((lists->most_candidates > 0 || lists->most_candidates_per_atom > 0) &&
            (double)total > fmax(lists->most_candidates, lists->most_candidates_per_atom * (double)n))
            return MLFF_OK;
        counts[n] = (int32_t)total;
        lists->n_pairs[l] = total;
        if (l == lists->triples_of)
            lists->n_triples = triples;
    }
    /* cell_pairs reads every list's offsets: a list not asked for has none
     * (its column's last row was never written by cell_count). */
    for (int l = lists->n_lists; l < MLFF_DEVICE_LISTS; l++)
        memset(c->counts + (l + 1) * stride, 0, (size_t)stride * sizeof *c->counts);
    const int64_t columns = lists->triples_of >= 0 ? 3 : 2;
    if (!c->listed) /* for cell_pairs */
        s = write(c, MLFF_CELL_BUF_COUNTS, (size_t)stride * 4, c->counts + stride, (size_t)(columns * stride) * 4,
                  err);
    if (s == MLFF_OK)
        *usable = 1;
    return s;
}

mlff_status mlff_device_cells_write_lists(mlff_device_cells *c, const mlff_device_lists *lists, mlff_error *err)
{
    if (c->listed)
        return list_on_host(c, lists, err);
    /* PARAMS as the count left them (which flags nothing, or the lists
     * would not be written) say so already: no upload. */
    return run_with(c, MLFF_CELL_PAIRS, c->centers, lists, err);
}

mlff_status mlff_device_cells_census(mlff_device_cells *c, mlff_cell_census *census, mlff_error *err)
{
    const int64_t n = c->n_atoms;
    if (c->atom_of)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "device cell lists: a census of a chunk");
    if (!mlff_grow((void **)&c->atom_bins, &c->atom_bins_capacity, 4 * n, sizeof *c->atom_bins))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the cell lists");
    if (c->placed)
        memcpy(c->atom_bins, c->place, (size_t)n * 16);
    else {
        mlff_status s = read(c, MLFF_CELL_BUF_ATOM_BINS, 0, c->atom_bins, (size_t)n * 16, err);
        if (s != MLFF_OK)
            return s;
    }
    for (int64_t a = 0; a < n; a++) /* bin, shift[3] -> bin */
        c->atom_bins[a] = c->atom_bins[4 * a];
    *census = (mlff_cell_census){.n_bins = c->n_bins, .bins = c->atom_bins, .grids = c->sys_ints};
    for (int l = 0; l < MLFF_DEVICE_LISTS; l++)
        census->list_offsets[l] = c->counts + (l + 1) * (n + 1);
    return MLFF_OK;
}

mlff_status mlff_device_cells_read_check(mlff_device_cells *c, mlff_error *err)
{
    if (c->listed) {
        memset(c->checked_params, 0, sizeof c->checked_params);
        return MLFF_OK;
    }
    return read_later(c, MLFF_CELL_BUF_PARAMS, 0, c->checked_params, sizeof c->checked_params, err);
}

mlff_status mlff_device_cells_check_lists(mlff_device_cells *c, mlff_error *err)
{
    return c->checked_params[PARAM_MISMATCH]
               ? mlff_fail(err, MLFF_ERROR_INTERNAL, "device cell lists: the two passes found different pairs")
               : MLFF_OK;
}
