#include "pair_lists.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

int mlff_batch_is_periodic(const mlff_batch *b, int64_t s)
{
    return b->pbc && (b->pbc[3 * s] || b->pbc[3 * s + 1] || b->pbc[3 * s + 2]);
}

void mlff_pair_shift(const mlff_batch *b, const int32_t *system, const mlff_pair_lists *pl, int64_t p,
                     double shift[3])
{
    const int32_t *n = pl->master.images + 3 * p;
    shift[0] = shift[1] = shift[2] = 0.0;
    if (!(n[0] | n[1] | n[2]))
        return;
    const double *cell = b->cells + 9 * system[pl->master.pairs[2 * p]];
    for (int d = 0; d < 3; d++)
        shift[d] = n[0] * cell[d] + n[1] * cell[3 + d] + n[2] * cell[6 + d];
}

/* The dense search in blocks of atoms on the pool: each block counts its
 * pairs, then writes them where the counts before it end, so the list is
 * the same for any number of threads. */
#define DENSE_BLOCK 32

typedef struct dense_job {
    const mlff_batch *b;
    const int32_t *system;
    double rc2;
    int64_t *starts; /* per block: its pair count, then where its pairs begin */
    mlff_neighbor_list *list; /* NULL while counting */
} dense_job;

static void dense_blocks(const void *task, void *unused, int64_t begin, int64_t end)
{
    (void)unused;
    const dense_job *job = task;
    const mlff_batch *b = job->b;
    const int64_t n_atoms = b->system_offsets[b->n_systems];
    for (int64_t block = begin; block < end; block++) {
        int64_t p = job->list ? job->starts[block] : 0;
        const int64_t last = (block + 1) * DENSE_BLOCK < n_atoms ? (block + 1) * DENSE_BLOCK : n_atoms;
        for (int64_t i = block * DENSE_BLOCK; i < last; i++) {
            const double *ri = b->positions + 3 * i;
            for (int64_t j = b->system_offsets[job->system[i]]; j < b->system_offsets[job->system[i] + 1]; j++) {
                const double *rj = b->positions + 3 * j;
                const double dx = rj[0] - ri[0], dy = rj[1] - ri[1], dz = rj[2] - ri[2];
                if (j == i || dx * dx + dy * dy + dz * dz > job->rc2)
                    continue;
                if (job->list) {
                    job->list->pairs[2 * p] = (int32_t)i;
                    job->list->pairs[2 * p + 1] = (int32_t)j;
                    memset(job->list->images + 3 * p, 0, 3 * sizeof(int32_t));
                }
                p++;
            }
        }
        if (!job->list)
            job->starts[block] = p;
    }
}

/* All ordered pairs of each system within the cutoff, sorted by i then j:
 * O(N^2) per system, for small molecules (and as the reference). */
static mlff_status dense_search(const mlff_batch *b, const int32_t *system, double cutoff, mlff_thread_pool *pool,
                                mlff_neighbor_list *list, mlff_error *err)
{
    /* What the pairs counted may be, as the cell lists' candidates (core/neighbors.h). */
    const double most = fmax(list->most_candidates,
                             list->most_candidates_per_atom * (double)b->system_offsets[b->n_systems]);
    const int64_t n_atoms = b->system_offsets[b->n_systems];
    for (int64_t s = 0; s < b->n_systems; s++)
        if (mlff_batch_is_periodic(b, s))
            return mlff_fail_atom(err, MLFF_ERROR_UNSUPPORTED, s, -1,
                                  "the dense neighbour search does not handle periodic systems "
                                  "(use the sparse or automatic one)");
    const int64_t n_blocks = (n_atoms + DENSE_BLOCK - 1) / DENSE_BLOCK;
    dense_job job = {b, system, cutoff * cutoff, malloc((size_t)(n_blocks + 1) * sizeof(int64_t)), NULL};
    if (!job.starts)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for pairs");
    mlff_thread_pool_for(pool, n_blocks, 2, dense_blocks, &job, NULL);
    int64_t total = 0;
    for (int64_t block = 0; block < n_blocks; block++) {
        const int64_t count = job.starts[block];
        job.starts[block] = total;
        total += count;
    }
    mlff_status s = MLFF_OK;
    if (total >= INT32_MAX)
        s = mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "too many pairs for one batch");
    else if (most > 0 && (double)total > most)
        s = mlff_fail(err, MLFF_ERROR_BAD_INPUT,
                      "%lld pairs of atoms within %g Angstrom, more than the %.3g the device's memory budget allows: "
                      "atoms far denser than any material?",
                      (long long)total, cutoff, most);
    void **const arrays[2] = {(void **)&list->pairs, (void **)&list->images};
    const size_t elems[2] = {2 * sizeof(int32_t), 3 * sizeof(int32_t)};
    if (s == MLFF_OK && !mlff_grow_columns(arrays, elems, 2, &list->capacity, total))
        s = mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for pairs");
    if (s == MLFF_OK) {
        job.list = list;
        mlff_thread_pool_for(pool, n_blocks, 2, dense_blocks, &job, NULL);
        list->n_pairs = total;
    }
    free(job.starts);
    return s;
}

typedef struct measure_job {
    mlff_pair_lists *pl;
    const mlff_batch *b;
    const int32_t *system;
} measure_job;

static void measure_pairs(const void *task, void *unused, int64_t begin, int64_t end)
{
    (void)unused;
    const measure_job *job = task;
    const mlff_neighbor_list *m = &job->pl->master;
    const double *r = job->b->positions;
    for (int64_t p = begin; p < end; p++) {
        const int32_t i = m->pairs[2 * p], j = m->pairs[2 * p + 1];
        double shift[3], d2 = 0;
        mlff_pair_shift(job->b, job->system, job->pl, p, shift);
        for (int d = 0; d < 3; d++) {
            const double v = r[3 * j + d] - r[3 * i + d] + shift[d];
            d2 += v * v;
        }
        job->pl->distances[p] = sqrt(d2);
    }
}

static mlff_status measure(mlff_pair_lists *pl, const mlff_batch *b, const int32_t *system, mlff_thread_pool *pool,
                           mlff_error *err)
{
    const mlff_neighbor_list *m = &pl->master;
    if (!mlff_grow((void **)&pl->distances, &pl->distances_capacity, m->n_pairs, sizeof(double)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for pair distances");
    const measure_job job = {pl, b, system};
    mlff_thread_pool_for(pool, m->n_pairs, 1 << 14, measure_pairs, &job, NULL);
    for (int64_t p = 0; p < m->n_pairs; p++) {
        const int32_t i = m->pairs[2 * p], j = m->pairs[2 * p + 1];
        /* Each close pair is seen from both atoms; report it once, at the later atom. */
        if (pl->distances[p] < MLFF_MIN_DISTANCE && i <= j) {
            const int64_t first = b->system_offsets[system[i]];
            if (i == j)
                return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, system[i], i - first,
                                      "atom is %.4g Angstrom from its own periodic image: the cell "
                                      "is too small", pl->distances[p]);
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, system[i], j - first,
                                  "atom is %.4g Angstrom from atom number %lld of the same system "
                                  "(counting from 1%s); atoms closer than %g Angstrom are rejected",
                                  pl->distances[p], (long long)(i - first + 1),
                                  m->images[3 * p] | m->images[3 * p + 1] | m->images[3 * p + 2]
                                      ? ", a periodic image of it"
                                      : "",
                                  MLFF_MIN_DISTANCE);
        }
    }
    return MLFF_OK;
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* How far the atoms [first, last) spread along the unit vector u. */
static double extent_along(const mlff_batch *b, int64_t first, int64_t last, const double *u)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t a = first; a < last; a++) {
        const double x = dot3(b->positions + 3 * a, u);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    return last > first ? hi - lo : 0.0;
}

/* v scaled to unit length; 0 when it has none. */
static int unit(double *v)
{
    const double n = sqrt(dot3(v, v));
    if (!(n > 0.0) || !isfinite(n))
        return 0;
    for (int d = 0; d < 3; d++)
        v[d] /= n;
    return 1;
}

/* Added to each extent of the atoms (a flat layer, a line of atoms, a
 * diatomic molecule) when their volume is taken. */
#define DENSITY_PADDING 2.0

/*
 * Rejects systems so dense that the search itself would explode: no
 * material has more than about 0.2 atoms per cubic Angstrom, and above 1
 * atoms must overlap (or overlap their images). Without this, a cell given
 * in the wrong unit costs gigabytes before the overlap check can say so.
 * Periodic images grow with the cube, square or first power of cutoff /
 * cell size along the periodic axes: a slab's volume is its periodic area
 * times the thickness of its atoms, a wire's its period times the
 * cross-section of its atoms, a system without periodic axes the box around
 * its atoms, each extent plus DENSITY_PADDING.
 */
static mlff_status check_density(const mlff_batch *b, int64_t s, mlff_error *err)
{
    const int64_t first = b->system_offsets[s], last = b->system_offsets[s + 1], atoms = last - first;
    const uint8_t none[3] = {0, 0, 0}, *pbc = mlff_batch_is_periodic(b, s) ? b->pbc + 3 * s : none;
    const int n_periodic = (pbc[0] != 0) + (pbc[1] != 0) + (pbc[2] != 0);
    const double *c = b->cells ? b->cells + 9 * s : NULL;
    double volume;
    const char *what;
    if (atoms < 2 && n_periodic < 3) {
        return MLFF_OK;
    } else if (n_periodic == 3) {
        double bc[3];
        cross3(c + 3, c + 6, bc);
        volume = fabs(dot3(c, bc));
        what = "cell";
    } else if (n_periodic == 2) {
        const int k = !pbc[0] ? 0 : !pbc[1] ? 1 : 2; /* the open axis */
        double normal[3];
        cross3(c + 3 * ((k + 1) % 3), c + 3 * ((k + 2) % 3), normal);
        const double area = sqrt(dot3(normal, normal));
        volume = unit(normal) ? area * (extent_along(b, first, last, normal) + DENSITY_PADDING) : 0.0;
        what = "slab (its periodic area times the thickness of its atoms plus 2 A)";
    } else if (n_periodic == 1) {
        const int k = pbc[0] ? 0 : pbc[1] ? 1 : 2; /* the periodic axis */
        double axis[3] = {c[3 * k], c[3 * k + 1], c[3 * k + 2]}, u[3], v[3];
        const double period = sqrt(dot3(axis, axis));
        if (!unit(axis))
            return MLFF_OK; /* the lattice check says what is wrong */
        /* Two unit vectors across the wire. */
        const double e[3] = {fabs(axis[0]) < 0.9 ? 1.0 : 0.0, fabs(axis[0]) < 0.9 ? 0.0 : 1.0, 0.0};
        cross3(axis, e, u);
        unit(u);
        cross3(axis, u, v);
        volume = period * (extent_along(b, first, last, u) + DENSITY_PADDING) *
                 (extent_along(b, first, last, v) + DENSITY_PADDING);
        what = "wire (its period times the cross-section of its atoms, each side plus 2 A)";
    } else {
        volume = 1.0;
        for (int k = 0; k < 3; k++) {
            const double axis[3] = {k == 0, k == 1, k == 2};
            volume *= extent_along(b, first, last, axis) + DENSITY_PADDING;
        }
        what = "box (around its atoms, each side plus 2 A)";
    }
    if (volume > 0 && (double)atoms > volume)
        return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1,
                              "%lld atoms in a %s of %.4g cubic Angstrom is denser than any material "
                              "(%s in Angstrom?)",
                              (long long)atoms, what, volume, n_periodic ? "is the cell" : "are the positions");
    return MLFF_OK;
}

mlff_status mlff_pair_lists_check(const mlff_batch *b, mlff_error *err)
{
    for (int64_t s = 0; s < b->n_systems; s++) {
        if (mlff_batch_is_periodic(b, s) && !b->cells)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1, "system is periodic but has no cell");
        for (int k = 0; k < 9 && mlff_batch_is_periodic(b, s); k++)
            if (!(fabs(b->cells[9 * s + k]) <= MLFF_MOST_COORDINATE))
                return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, -1,
                                      "cell entry %d is %g: not a finite number within %g Angstrom", k + 1,
                                      b->cells[9 * s + k], MLFF_MOST_COORDINATE);
        mlff_status status = check_density(b, s, err);
        if (status != MLFF_OK)
            return status;
    }
    return MLFF_OK;
}

mlff_status mlff_pair_lists_update(mlff_pair_lists *pl, const mlff_batch *b, const int32_t *system,
                                   double cutoff, const mlff_pair_options *options, mlff_error *err)
{
    const double skin = options->skin;
    const int dense = options->dense;
    if (pl->dense != dense || !mlff_verlet_holds(&pl->searched, b, cutoff + skin)) {
        pl->searched.valid = 0;
        pl->master.most_candidates = options->most_candidates;
        pl->master.most_candidates_per_atom = options->most_candidates_per_atom;
        const mlff_neighbor_search *device = options->device;
        mlff_status s = dense    ? dense_search(b, system, cutoff + skin, options->pool, &pl->master, err)
                        : device ? device->build(device->self, b, cutoff + skin, &pl->master, err)
                                 : mlff_neighbors_build(b, cutoff + skin, options->pool, &pl->master, err);
        if (s == MLFF_OK)
            s = mlff_verlet_remember(&pl->searched, b, cutoff + skin, skin, err);
        if (s != MLFF_OK)
            return s;
        pl->dense = dense;
        pl->searches++;
    }
    return measure(pl, b, system, options->pool, err);
}

void mlff_pair_lists_free(mlff_pair_lists *pl)
{
    mlff_neighbor_list_free(&pl->master);
    mlff_verlet_free(&pl->searched);
    free(pl->distances);
    memset(pl, 0, sizeof *pl);
}
