#include "batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/counting_sort.h"
#include "core/elements.h"
#include "core/grow.h"

mlff_status mlff_batch_work_fit(mlff_batch_work *w, const mlff_graph *g, mlff_error *err)
{
    if (g->n_symbols > w->n_symbols) {
        int64_t *symbols = realloc(w->symbols, (size_t)g->n_symbols * sizeof *symbols);
        if (!symbols)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
        memset(symbols + w->n_symbols, 0, (size_t)(g->n_symbols - w->n_symbols) * sizeof *symbols);
        w->symbols = symbols;
        w->n_symbols = g->n_symbols;
    }
    if (g->n_tensors <= w->n_tensors)
        return MLFF_OK;
    mlff_host_array *inputs = realloc(w->inputs, (size_t)g->n_tensors * sizeof *inputs);
    if (inputs)
        w->inputs = inputs;
    mlff_dtype *dtypes = inputs ? realloc(w->input_dtypes, (size_t)g->n_tensors * sizeof *dtypes) : NULL;
    if (!dtypes)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    w->input_dtypes = dtypes;
    memset(inputs + w->n_tensors, 0, (size_t)(g->n_tensors - w->n_tensors) * sizeof *inputs);
    memset(dtypes + w->n_tensors, 0, (size_t)(g->n_tensors - w->n_tensors) * sizeof *dtypes);
    w->n_tensors = g->n_tensors;
    return MLFF_OK;
}

void mlff_batch_work_free(mlff_batch_work *w)
{
    mlff_pair_lists_free(&w->pairs);
    free(w->block_counts.data);
    free(w->positions_high.data);
    free(w->system);
    free(w->species);
    if (w->inputs)
        for (int t = 0; t < w->n_tensors; t++)
            free(w->inputs[t].data);
    free(w->inputs);
    free(w->input_dtypes);
    free(w->symbols);
    memset(w, 0, sizeof *w);
}

void *mlff_host_array_reserve(mlff_host_array *a, size_t bytes, mlff_error *err)
{
    if (bytes == 0)
        bytes = 1;
    if (bytes > a->capacity) {
        size_t size = bytes + bytes / 2;
        void *p = realloc(a->data, size);
        if (!p) {
            mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", size);
            return NULL;
        }
        a->data = p;
        a->capacity = size;
    }
    return a->data;
}

/* The host array of input t. */
static void *reserve(mlff_batch_work *w, int t, size_t bytes, mlff_error *err)
{
    return mlff_host_array_reserve(&w->inputs[t], bytes, err);
}

static mlff_status check_layout(const mlff_batch *b, mlff_error *err)
{
    if (b->n_systems < 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "n_systems is negative");
    if (!b->system_offsets)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "system_offsets is NULL");
    if (b->system_offsets[0] != 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "system_offsets[0] must be 0");
    for (int64_t s = 0; s < b->n_systems; s++)
        if (b->system_offsets[s + 1] < b->system_offsets[s])
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT,
                             "system_offsets decrease at system %lld", (long long)s);
    int64_t n_atoms = b->system_offsets[b->n_systems];
    if (n_atoms > INT32_MAX / 2)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "%lld atoms in one batch is too many",
                         (long long)n_atoms);
    if (n_atoms > 0 && (!b->atomic_numbers || !b->positions))
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "atomic_numbers or positions is NULL");
    return MLFF_OK;
}

static mlff_status check_atoms(const mlff_batch *b, const int32_t *system, const int *species_index,
                               const char *model_name, const char *element_list, mlff_error *err)
{
    int64_t n_atoms = b->system_offsets[b->n_systems];
    for (int64_t a = 0; a < n_atoms; a++) {
        int64_t s = system[a], local = a - b->system_offsets[s];
        int z = b->atomic_numbers[a];
        if (z < 1 || z > MLFF_MAX_ATOMIC_NUMBER)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "atomic number %d is not an element", z);
        if (species_index[z] < 0)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "element %s (Z=%d) is not in model %s (elements: %s)",
                                  mlff_element_symbol_internal(z), z, model_name, element_list);
        const double *r = b->positions + 3 * a;
        if (!isfinite(r[0]) || !isfinite(r[1]) || !isfinite(r[2]))
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "coordinates are not finite numbers (%g %g %g)", r[0], r[1], r[2]);
        if (!(fabs(r[0]) <= MLFF_MOST_COORDINATE && fabs(r[1]) <= MLFF_MOST_COORDINATE &&
              fabs(r[2]) <= MLFF_MOST_COORDINATE))
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "coordinates (%g %g %g) lie more than %g Angstrom from the origin", r[0], r[1], r[2],
                                  MLFF_MOST_COORDINATE);
    }
    return MLFF_OK;
}

/*
 * Pair lists and triple starts are filled in blocks of entries on the context's
 * threads: each block counts what it keeps, a prefix sum gives every block
 * its place, then each writes there. The result is the serial one.
 */
#define FILL_BLOCK 32768

typedef struct fill_job {
    const mlff_atom_view *v;
    double cutoff;
    const int32_t *pairs;  /* triple starts: the pair list */
    int64_t n_pairs;
    int32_t *out;          /* pairs [.][2], or each pair's first triple */
    int32_t *images;       /* pairs: packed image offsets (may be NULL) */
    int64_t *far;          /* pairs, per block: a pair whose images do not pack, or -1 */
    int64_t *counts;       /* per block: entries kept, then the first index */
} fill_job;

/* Block b of the view's pairs is [block_begin(b), block_begin(b + 1)). */
static int64_t block_begin(const mlff_atom_view *v, int64_t b)
{
    const int64_t p = b * FILL_BLOCK;
    return p < v->n_pairs ? p : v->n_pairs;
}

static void count_pairs(const void *task, void *extra, int64_t b0, int64_t b1)
{
    (void)extra;
    const fill_job *j = task;
    for (int64_t b = b0; b < b1; b++) {
        int64_t n = 0;
        for (int64_t p = block_begin(j->v, b); p < block_begin(j->v, b + 1); p++)
            n += j->v->distances[p] <= j->cutoff;
        j->counts[b] = n;
    }
}

static void write_pairs(const void *task, void *extra, int64_t b0, int64_t b1)
{
    (void)extra;
    const fill_job *j = task;
    const mlff_atom_view *v = j->v;
    for (int64_t b = b0; b < b1; b++) {
        int64_t k = j->counts[b];
        for (int64_t p = block_begin(v, b); p < block_begin(v, b + 1); p++) {
            if (v->distances[p] > j->cutoff)
                continue;
            j->out[2 * k] = v->pairs[2 * p];
            j->out[2 * k + 1] = v->pairs[2 * p + 1];
            if (j->images) {
                const int32_t *n = v->images + 3 * p;
                for (int d = 0; d < 3; d++)
                    if ((n[d] < -MLFF_IMAGE_MOST || n[d] > MLFF_IMAGE_MOST) && j->far[b] < 0)
                        j->far[b] = p;
                j->images[k] = mlff_image_pack(n);
            }
            k++;
        }
    }
}

/* counts[b] becomes the first index of block b; returns the total. */
static int64_t prefix_sum(int64_t *counts, int64_t n_blocks)
{
    int64_t total = 0;
    for (int64_t b = 0; b < n_blocks; b++) {
        const int64_t n = counts[b];
        counts[b] = total;
        total += n;
    }
    return total;
}

/* Two int64 per block (and one more): the counts, then the pairs' far[]. */
static int64_t *reserve_blocks(mlff_batch_work *w, int64_t n_entries, int64_t *n_blocks, mlff_error *err)
{
    *n_blocks = (n_entries + FILL_BLOCK - 1) / FILL_BLOCK;
    return mlff_host_array_reserve(&w->block_counts, 2 * (size_t)(*n_blocks + 1) * sizeof(int64_t), err);
}

/* The pairs of one cutoff and their image offsets: the view's pairs
 * filtered by distance (they stay sorted). */
static mlff_status fill_pairs(const mlff_graph *g, int t, int t_images, const mlff_batch *batch,
                              const mlff_atom_view *v, mlff_batch_work *w, mlff_error *err)
{
    for (int l = 0; v->device_lists && l < v->device_lists->lists.n_lists; l++)
        if (v->device_lists->pairs[l] == t) {
            w->symbols[g->tensors[t].rows_symbol] = v->device_lists->lists.n_pairs[l];
            return MLFF_OK;
        }
    int64_t n_blocks;
    fill_job j = {.v = v, .cutoff = g->tensors[t].cutoff, .counts = reserve_blocks(w, v->n_pairs, &n_blocks, err)};
    if (!j.counts)
        return err->status;
    mlff_thread_pool_for(w->pool, n_blocks, 2, count_pairs, &j, NULL);
    const int64_t n = prefix_sum(j.counts, n_blocks);
    j.out = reserve(w, t, (size_t)n * 2 * sizeof(int32_t), err);
    j.images = j.out && t_images >= 0 ? reserve(w, t_images, (size_t)n * sizeof(int32_t), err) : NULL;
    if (!j.out || (t_images >= 0 && !j.images))
        return err->status;
    j.far = j.counts + n_blocks + 1;
    for (int64_t b = 0; b < n_blocks; b++)
        j.far[b] = -1;
    mlff_thread_pool_for(w->pool, n_blocks, 2, write_pairs, &j, NULL);
    for (int64_t b = 0; b < n_blocks; b++)
        if (j.far[b] >= 0) {
            const int32_t *pair = v->pairs + 2 * j.far[b], *n = v->images + 3 * j.far[b];
            const int64_t i = v->batch_atom ? v->batch_atom[pair[0]] : pair[0];
            const int64_t k = v->batch_atom ? v->batch_atom[pair[1]] : pair[1], s = w->system[i];
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, i - batch->system_offsets[s],
                                  "atom %lld sees atom %lld through periodic image %d %d %d, more than %d cells "
                                  "away: wrap the positions into the cell",
                                  (long long)(i - batch->system_offsets[s]), (long long)(k - batch->system_offsets[s]),
                                  n[0], n[1], n[2], MLFF_IMAGE_MOST);
        }
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    if (t_images >= 0)
        w->input_dtypes[t_images] = MLFF_DTYPE_I32;
    w->symbols[g->tensors[t].rows_symbol] = n;
    return MLFF_OK;
}

/* The first pair of block b of a pair list, moved on to where a center's
 * pairs begin (a center's triples stay in one block). */
static int64_t center_begin(const fill_job *j, int64_t b)
{
    int64_t p = b * FILL_BLOCK;
    if (p >= j->n_pairs)
        return j->n_pairs;
    while (p > 0 && p < j->n_pairs && j->pairs[2 * p] == j->pairs[2 * (p - 1)])
        p++;
    return p;
}

/* The end of the pairs of the center whose pairs begin at start. */
static int64_t center_end(const fill_job *j, int64_t start, int64_t stop)
{
    int64_t end = start + 1;
    while (end < stop && j->pairs[2 * end] == j->pairs[2 * start])
        end++;
    return end;
}

static void count_triples(const void *task, void *extra, int64_t b0, int64_t b1)
{
    (void)extra;
    const fill_job *j = task;
    for (int64_t b = b0; b < b1; b++) {
        int64_t n = 0;
        for (int64_t start = center_begin(j, b), stop = center_begin(j, b + 1), end; start < stop; start = end) {
            end = center_end(j, start, stop);
            n += (end - start) * (end - start - 1) / 2;
        }
        j->counts[b] = n;
    }
}

/* Each pair's first triple: pair a of a center makes one with each later pair of that center. */
static void write_triple_starts(const void *task, void *extra, int64_t b0, int64_t b1)
{
    (void)extra;
    const fill_job *j = task;
    for (int64_t b = b0; b < b1; b++) {
        int64_t k = j->counts[b];
        for (int64_t start = center_begin(j, b), stop = center_begin(j, b + 1), end; start < stop; start = end) {
            end = center_end(j, start, stop);
            for (int64_t a = start; a < end; a++) {
                j->out[a] = (int32_t)k;
                k += end - a - 1;
            }
        }
    }
}

/* Where each pair's angular triples start (the device builds the triples,
 * op pair_triples); their count becomes the triples' size symbol. */
static mlff_status build_triple_starts(const mlff_graph *g, int t, const mlff_atom_view *v, mlff_batch_work *w,
                                       mlff_error *err)
{
    const int list = g->tensors[t].role_link;
    int triples_symbol = -1;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == MLFF_OP_PAIR_TRIPLES && g->nodes[k].inputs[1] == t)
            triples_symbol = g->tensors[g->nodes[k].output].rows_symbol;
    if (triples_symbol < 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "triple starts without their pair_triples");
    if (v->device_lists) {
        w->symbols[triples_symbol] = v->device_lists->lists.n_triples;
        return MLFF_OK;
    }
    int64_t n_blocks;
    fill_job j = {.pairs = w->inputs[list].data, .n_pairs = w->symbols[g->tensors[list].rows_symbol]};
    if (!(j.counts = reserve_blocks(w, j.n_pairs, &n_blocks, err)))
        return err->status;
    mlff_thread_pool_for(w->pool, n_blocks, 2, count_triples, &j, NULL);
    const int64_t n_triples = prefix_sum(j.counts, n_blocks);
    if (n_triples > INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "too many angular triples (%lld)",
                         (long long)n_triples);
    if (!(j.out = reserve(w, t, (size_t)j.n_pairs * sizeof(int32_t), err)))
        return err->status;
    mlff_thread_pool_for(w->pool, n_blocks, 2, write_triple_starts, &j, NULL);
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    w->symbols[triples_symbol] = n_triples;
    return MLFF_OK;
}

static mlff_status build_element_atoms(const mlff_graph *g, int t, const int32_t *species,
                                       const mlff_atom_view *v, mlff_batch_work *w, mlff_error *err)
{
    int32_t *atoms = reserve(w, t, (size_t)v->n_owned * sizeof(int32_t), err);
    if (!atoms)
        return err->status;
    int64_t n = 0;
    for (int64_t a = 0; a < v->n_owned; a++)
        if (species[a] == g->tensors[t].role_link)
            atoms[n++] = (int32_t)a;
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    w->symbols[g->tensors[t].rows_symbol] = n;
    return MLFF_OK;
}

/* The owned atoms by species (ascending within each) into t, and where each
 * species starts among them into t_starts (-1 for a graph of one element,
 * which has no starts: its atoms are all of them). */
static mlff_status build_element_order(const mlff_graph *g, int t, int t_starts, const int32_t *species,
                                       const mlff_atom_view *v, mlff_batch_work *w, mlff_error *err)
{
    const int64_t n_elements = t_starts >= 0 ? g->tensors[t_starts].rows - 1 : 1;
    int32_t one_element[2];
    int32_t *atoms = reserve(w, t, (size_t)v->n_owned * sizeof(int32_t), err);
    int32_t *starts = !atoms          ? NULL
                      : t_starts >= 0 ? reserve(w, t_starts, (size_t)(n_elements + 1) * sizeof(int32_t), err)
                                      : one_element;
    if (!starts)
        return err->status;
    const int64_t bad = mlff_counting_sort(species, 1, v->n_owned, n_elements, starts, atoms);
    if (bad >= 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "species %d beyond the graph's %lld elements", species[bad],
                         (long long)n_elements);
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    if (t_starts >= 0)
        w->input_dtypes[t_starts] = MLFF_DTYPE_I32;
    w->symbols[g->tensors[t].rows_symbol] = v->n_owned;
    return MLFF_OK;
}

/* The system of each atom of the element order (input t_order, filled). */
static mlff_status fill_element_systems(int t, int t_order, const mlff_atom_view *v, mlff_batch_work *w,
                                        mlff_error *err)
{
    if (t_order < 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "the systems of the atoms by element without their order");
    int32_t *systems = reserve(w, t, (size_t)v->n_owned * sizeof(int32_t), err);
    if (!systems)
        return err->status;
    const int32_t *order = w->inputs[t_order].data;
    for (int64_t r = 0; r < v->n_owned; r++)
        systems[r] = v->atom_systems ? order[r] : w->system[v->batch_atom ? v->batch_atom[order[r]] : order[r]];
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    return MLFF_OK;
}

/* Finds the graph's input of a role (and link); -1 if the graph does not use it. */
static int input_of(const mlff_graph *g, mlff_input_role role, int link)
{
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == MLFF_TENSOR_INPUT && g->tensors[t].role == role &&
            (link < 0 || g->tensors[t].role_link == link))
            return t;
    return -1;
}

/* x as hi + lo (core/graph.h), hi rounded to `bits` significant bits in
 * float32 (24: the float itself), lo what is left; in float64, x and 0. */
static double split_real(double x, mlff_dtype real, int bits, double *lo)
{
    double hi = x;
    if (real != MLFF_DTYPE_F64 && x != 0 && isfinite(x)) {
        int e;
        const double m = frexp(x, &e);
        hi = bits >= 24 ? (double)(float)x : ldexp(nearbyint(ldexp(m, bits)), e - bits);
    }
    *lo = x - hi;
    return hi;
}

/* Cells of periodic systems, as hi (t) and lo (t_low, or -1) parts; zeros
 * for the others, whatever the caller put there (they are multiplied by
 * zero images, and 0 * NaN would be NaN). */
static mlff_status fill_cells(const mlff_batch *b, int t, int t_low, int64_t n_systems, mlff_batch_work *w,
                              mlff_error *err)
{
    const size_t bytes = (size_t)n_systems * 9 * sizeof(double);
    double *cells = reserve(w, t, bytes, err), *low = t_low >= 0 ? reserve(w, t_low, bytes, err) : NULL;
    if (!cells || (t_low >= 0 && !low))
        return err->status;
    memset(cells, 0, bytes);
    for (int64_t s = 0; b->cells && s < b->n_systems && s < n_systems; s++)
        if (mlff_batch_is_periodic(b, s))
            memcpy(cells + 9 * s, b->cells + 9 * s, 9 * sizeof(double));
    w->input_dtypes[t] = MLFF_DTYPE_F64;
    if (t_low >= 0) {
        for (size_t k = 0; k < 9 * (size_t)n_systems; k++)
            cells[k] = split_real(cells[k], w->real, MLFF_CELL_HIGH_BITS, &low[k]);
        w->input_dtypes[t_low] = MLFF_DTYPE_F64;
    }
    return MLFF_OK;
}

mlff_status mlff_batch_check(const mlff_batch *b, const int *species_index, const char *model_name,
                             const char *element_list, mlff_batch_work *w, mlff_error *err)
{
    mlff_status s = check_layout(b, err);
    if (s != MLFF_OK)
        return s;
    const int64_t n_atoms = w->n_atoms = w->n_owned = b->system_offsets[b->n_systems];
    w->ghost_pairs = 0;
    void **const columns[] = {(void **)&w->system, (void **)&w->species};
    const size_t elems[] = {sizeof *w->system, sizeof *w->species};
    if (!mlff_grow_columns(columns, elems, 2, &w->atoms_capacity, n_atoms))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory preparing %lld atoms", (long long)n_atoms);
    /* System and species of every atom come first: the checks and lists use them. */
    for (int64_t sys = 0; sys < b->n_systems; sys++)
        for (int64_t a = b->system_offsets[sys]; a < b->system_offsets[sys + 1]; a++)
            w->system[a] = (int32_t)sys;
    if ((s = check_atoms(b, w->system, species_index, model_name, element_list, err)) != MLFF_OK)
        return s;
    for (int64_t a = 0; a < n_atoms; a++)
        w->species[a] = species_index[b->atomic_numbers[a]];
    return mlff_pair_lists_check(b, err);
}

mlff_status mlff_batch_find_pairs(const mlff_graph *g, const mlff_batch *b, const mlff_pair_options *options,
                                  mlff_batch_work *w, mlff_error *err)
{
    w->pool = options->pool;
    /* One search at the largest cutoff; it also rejects overlapping atoms. */
    double cutoff = MLFF_MIN_DISTANCE;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == MLFF_TENSOR_INPUT && g->tensors[t].role == MLFF_INPUT_PAIRS &&
            g->tensors[t].cutoff > cutoff)
            cutoff = g->tensors[t].cutoff;
    return mlff_pair_lists_update(&w->pairs, b, w->system, cutoff, options, err);
}

int mlff_batch_device_lists_of(const mlff_graph *g, mlff_batch_device_lists *d)
{
    memset(d, 0, sizeof *d);
    d->lists.triples_of = d->triple_starts = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        const mlff_graph_tensor *gt = &g->tensors[t];
        if (gt->kind != MLFF_TENSOR_INPUT)
            continue;
        if (gt->role == MLFF_INPUT_PAIRS) {
            const int l = d->lists.n_lists++;
            if (l == MLFF_DEVICE_LISTS || (d->images[l] = input_of(g, MLFF_INPUT_PAIR_IMAGES, t)) < 0)
                return 0;
            d->pairs[l] = t;
            d->lists.cutoff[l] = gt->cutoff;
        } else if (gt->role == MLFF_INPUT_TRIPLE_STARTS) {
            if (d->triple_starts >= 0)
                return 0; /* one list has triple starts */
            d->triple_starts = t;
        }
    }
    for (int l = 0; d->triple_starts >= 0 && l < d->lists.n_lists; l++)
        if (g->tensors[d->triple_starts].role_link == d->pairs[l])
            d->lists.triples_of = l;
    return d->lists.n_lists > 0 && (d->triple_starts < 0 || d->lists.triples_of >= 0);
}

int mlff_batch_made_on_device(const mlff_graph *g, const mlff_atom_view *v, int t)
{
    const mlff_input_role role = g->tensors[t].role;
    return v->device_lists && g->tensors[t].kind == MLFF_TENSOR_INPUT &&
           (role == MLFF_INPUT_PAIRS || role == MLFF_INPUT_PAIR_IMAGES || role == MLFF_INPUT_TRIPLE_STARTS);
}

void mlff_batch_own(mlff_batch_work *w, int64_t n_owned, int ghost_pairs)
{
    w->n_owned = n_owned;
    w->ghost_pairs = ghost_pairs;
}

/* The master pairs whose centres are owned (all with ghost_pairs): the list
 * is sorted by centre. */
static int64_t owned_pairs(const mlff_batch_work *w)
{
    const mlff_neighbor_list *m = &w->pairs.master;
    int64_t lo = 0, hi = m->n_pairs;
    while (!w->ghost_pairs && w->n_owned < w->n_atoms && lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (m->pairs[2 * mid] < w->n_owned)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !w->ghost_pairs && w->n_owned < w->n_atoms ? lo : m->n_pairs;
}

mlff_atom_view mlff_batch_whole(const mlff_batch_work *w)
{
    return (mlff_atom_view){
        .n_owned = w->n_owned,
        .n_atoms = w->n_atoms,
        .pairs = w->pairs.master.pairs,
        .images = w->pairs.master.images,
        .distances = w->pairs.distances,
        .n_pairs = owned_pairs(w),
    };
}

/* A view's rows of a per-atom batch array (rows of `bytes`). */
static void gather_atom_rows(const mlff_batch_work *w, const mlff_atom_view *v, void *dst, const void *src,
                             size_t bytes)
{
    if (v->batch_atom)
        mlff_thread_pool_gather(w->pool, dst, src, v->batch_atom, v->n_atoms, bytes);
    else
        memcpy(dst, src, (size_t)v->n_atoms * bytes);
}

/* A per-atom input of the view: the batch's values of its atoms. */
static mlff_status fill_atoms(int t, const int32_t *batch_values, const mlff_atom_view *v,
                              mlff_batch_work *w, mlff_error *err)
{
    int32_t *values = reserve(w, t, (size_t)v->n_atoms * sizeof(int32_t), err);
    if (!values)
        return err->status;
    gather_atom_rows(w, v, values, batch_values, sizeof *values);
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    return MLFF_OK;
}

/* The system of each atom of a view whose owned atoms are systems of their own. */
static mlff_status fill_atom_systems(int t, const mlff_atom_view *v, mlff_batch_work *w, mlff_error *err)
{
    int32_t *values = reserve(w, t, (size_t)v->n_atoms * sizeof(int32_t), err);
    if (!values)
        return err->status;
    for (int64_t l = 0; l < v->n_atoms; l++)
        values[l] = l < v->n_owned ? (int32_t)l : 0;
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    return MLFF_OK;
}

static mlff_status fill_owned(int t, const mlff_atom_view *v, mlff_batch_work *w, mlff_error *err)
{
    double *owned = reserve(w, t, (size_t)v->n_atoms * sizeof(double), err);
    if (!owned)
        return err->status;
    for (int64_t l = 0; l < v->n_atoms; l++)
        owned[l] = l < v->n_owned;
    w->input_dtypes[t] = MLFF_DTYPE_F64;
    return MLFF_OK;
}

static mlff_status fill_positions(const mlff_batch *b, int t, const mlff_atom_view *v, mlff_batch_work *w,
                                  mlff_error *err)
{
    w->input_dtypes[t] = MLFF_DTYPE_F64;
    w->positions_upload_dtype = MLFF_DTYPE_F64;
    if (!v->batch_atom) {
        w->positions = w->positions_upload = b->positions; /* read straight from the caller */
        return MLFF_OK;
    }
    double *r = reserve(w, t, (size_t)v->n_atoms * 3 * sizeof(double), err);
    if (!r)
        return err->status;
    gather_atom_rows(w, v, r, b->positions, 3 * sizeof *r);
    w->positions = w->positions_upload = r;
    return MLFF_OK;
}

/* The directions of the tangent pass, per atom of the view. */
static mlff_status fill_tangents(const mlff_graph *g, int t, const mlff_atom_view *v, mlff_batch_work *w,
                                 mlff_error *err)
{
    if (!w->tangents)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "a tangent pass without its directions");
    const size_t row = (size_t)g->tensors[t].cols * sizeof(double);
    double *values = reserve(w, t, (size_t)v->n_atoms * row, err);
    if (!values)
        return err->status;
    gather_atom_rows(w, v, values, w->tangents, row);
    w->input_dtypes[t] = MLFF_DTYPE_F64;
    return MLFF_OK;
}

typedef struct split_job {
    const double *x;
    float *high, *low;
} split_job;

/* Coordinates [begin, end) of a split_job as float + what it left out
 * (split_real's value at 24 bits, without its frexp). */
static void split_positions(const void *task, void *extra, int64_t begin, int64_t end)
{
    const split_job *j = task;
    (void)extra;
    for (int64_t k = begin; k < end; k++) {
        const float high = (float)j->x[k];
        j->high[k] = high;
        j->low[k] = (float)(j->x[k] - (double)high);
    }
}

/* What the positions lose when they are rounded to REAL (core/graph.h);
 * after fill_positions. In float32 both parts are made here, in the
 * dtype the device holds, on the pool's threads: a frexp a coordinate and
 * two conversions at upload cost a large box's evaluation more host time
 * than its kernels spend on the low parts. */
static mlff_status fill_positions_low(int t, const mlff_atom_view *v, mlff_batch_work *w, mlff_error *err)
{
    const size_t n = (size_t)v->n_atoms * 3;
    if (w->real == MLFF_DTYPE_F64) {
        double *low = reserve(w, t, n * sizeof(double), err);
        if (!low)
            return err->status;
        memset(low, 0, n * sizeof(double));
        w->input_dtypes[t] = MLFF_DTYPE_F64;
        return MLFF_OK;
    }
    split_job j = {.x = w->positions,
                   .high = mlff_host_array_reserve(&w->positions_high, n * sizeof(float), err),
                   .low = reserve(w, t, n * sizeof(float), err)};
    if (!j.high || !j.low)
        return err->status;
    mlff_thread_pool_for(w->pool, (int64_t)n, 3 * MLFF_POOL_ATOMS_SERIAL_BELOW, split_positions, &j, NULL);
    w->input_dtypes[t] = MLFF_DTYPE_F32;
    w->positions_upload = j.high;
    w->positions_upload_dtype = MLFF_DTYPE_F32;
    return MLFF_OK;
}

mlff_status mlff_batch_fill(const mlff_graph *g, const mlff_batch *b, const mlff_atom_view *v,
                            mlff_batch_work *w, mlff_error *err)
{
    w->symbols[MLFF_SYMBOL_ATOMS] = v->n_atoms;
    const int64_t n_systems = v->atom_systems ? v->n_owned : b->n_systems;
    w->symbols[MLFF_SYMBOL_SYSTEMS] = n_systems;
    const int t_species = input_of(g, MLFF_INPUT_SPECIES, -1);
    mlff_status s = t_species >= 0 ? fill_atoms(t_species, w->species, v, w, err)
                                   : mlff_fail(err, MLFF_ERROR_INTERNAL, "graph lacks the species input");
    const int32_t *species = s == MLFF_OK ? w->inputs[t_species].data : NULL;
    /* Pair lists (and their images) before the triple starts built on them,
     * the element order before the systems in that order. */
    for (int pass = 0; pass < 2; pass++)
        for (int t = 0; t < g->n_tensors && s == MLFF_OK; t++) {
            const mlff_graph_tensor *gt = &g->tensors[t];
            if (gt->kind != MLFF_TENSOR_INPUT)
                continue;
            if (pass == 0 && gt->role == MLFF_INPUT_PAIRS)
                s = fill_pairs(g, t, input_of(g, MLFF_INPUT_PAIR_IMAGES, t), b, v, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_SYSTEM)
                s = v->atom_systems ? fill_atom_systems(t, v, w, err) : fill_atoms(t, w->system, v, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_OWNED)
                s = fill_owned(t, v, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_CELLS)
                s = fill_cells(b, t, input_of(g, MLFF_INPUT_CELLS_LOW, -1), n_systems, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_ELEMENT_ATOMS)
                s = build_element_atoms(g, t, species, v, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_ELEMENT_ORDER)
                s = build_element_order(g, t, input_of(g, MLFF_INPUT_ELEMENT_STARTS, -1), species, v, w, err);
            else if (pass == 1 && gt->role == MLFF_INPUT_ELEMENT_SYSTEMS)
                s = fill_element_systems(t, input_of(g, MLFF_INPUT_ELEMENT_ORDER, -1), v, w, err);
            else if (pass == 1 && gt->role == MLFF_INPUT_TRIPLE_STARTS)
                s = build_triple_starts(g, t, v, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_POSITIONS)
                s = fill_positions(b, t, v, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_TANGENTS)
                s = fill_tangents(g, t, v, w, err);
            else if (pass == 1 && gt->role == MLFF_INPUT_POSITIONS_LOW)
                s = fill_positions_low(t, v, w, err);
        }
    return s;
}
