#include "chunks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

/* What one row of each size symbol means, read from the graph's inputs. */
typedef enum symbol_kind {
    SYMBOL_OTHER,
    SYMBOL_ATOMS,
    SYMBOL_OWNED, /* one row per owned atom */
    SYMBOL_ELEMENT,
    SYMBOL_PAIRS,
    SYMBOL_TRIPLES
} symbol_kind;

typedef struct mlff_symbol_cost {
    symbol_kind kind;
    int element;        /* SYMBOL_ELEMENT */
    double cutoff;      /* SYMBOL_PAIRS, SYMBOL_TRIPLES: of the pair list */
    size_t total, widest; /* bytes per row */
} symbol_cost;

/* An atom's pairs: their distances (the host's list), or how many each
 * cutoff list holds (the device's counts). */
typedef struct atom_pairs {
    const double *distances;
    int64_t n_pairs;
    const double *cutoffs;
    const int64_t *counts;
    int n_lists;
} atom_pairs;

static int64_t pairs_within(const atom_pairs *p, double cutoff)
{
    int64_t within = 0;
    if (p->distances) {
        for (int64_t k = 0; k < p->n_pairs; k++)
            within += p->distances[k] <= cutoff;
        return within;
    }
    for (int l = 0; l < p->n_lists; l++)
        if (p->cutoffs[l] == cutoff)
            within = p->counts[l];
    return within;
}

/* Which rows of an atom: those it adds as an owned atom (a row of its
 * element and of the atoms by element), and as a center (its pairs and
 * triples). With one layer the owned atoms are the centers. */
enum { ROWS_OWNED = 1, ROWS_CENTER = 2, ROWS_ALL = 3 };

static int is_center_kind(symbol_kind kind)
{
    return kind == SYMBOL_PAIRS || kind == SYMBOL_TRIPLES;
}

/* Rows of every symbol but the atoms that one atom adds to a chunk. */
static void atom_rows(const symbol_cost *costs, int n_symbols, int32_t species, const atom_pairs *pairs,
                      int parts, int64_t *rows)
{
    for (int s = 0; s < n_symbols; s++) {
        const symbol_cost *c = &costs[s];
        if (!(parts & (is_center_kind(c->kind) ? ROWS_CENTER : ROWS_OWNED))) {
            rows[s] = 0;
            continue;
        }
        const int64_t within = is_center_kind(c->kind) ? pairs_within(pairs, c->cutoff) : 0;
        rows[s] = c->kind == SYMBOL_OWNED     ? 1
                  : c->kind == SYMBOL_ELEMENT ? species == c->element
                  : c->kind == SYMBOL_PAIRS   ? within
                  : c->kind == SYMBOL_TRIPLES ? within * (within - 1) / 2
                                              : 0;
    }
}

static uint32_t spread_bits(uint32_t v) /* 10 bits -> every third of 30 */
{
    v &= 0x3ff;
    v = (v | (v << 16)) & 0x030000ff;
    v = (v | (v << 8)) & 0x0300f00f;
    v = (v | (v << 4)) & 0x030c30c3;
    v = (v | (v << 2)) & 0x09249249;
    return v;
}

typedef struct keyed_atom {
    uint64_t key;
    int32_t atom;
} keyed_atom;

static int by_key(const void *a, const void *b)
{
    const keyed_atom *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->atom > y->atom) - (x->atom < y->atom);
}

/* Atoms by system, then along a Morton curve over the system's bounding
 * box: consecutive atoms are close in space, so chunks are compact and
 * bring in few ghosts. Only the owned ones (below n_owned) are ordered. */
static mlff_status spatial_order(const mlff_batch *b, int64_t n_owned, int32_t *order, mlff_error *err)
{
    const int64_t n_atoms = b->system_offsets[b->n_systems];
    keyed_atom *keys = malloc((size_t)(n_atoms ? n_atoms : 1) * sizeof *keys);
    if (!keys)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory ordering %lld atoms", (long long)n_atoms);
    for (int64_t s = 0; s < b->n_systems; s++) {
        const int64_t lo = b->system_offsets[s], hi = b->system_offsets[s + 1];
        double min[3] = {INFINITY, INFINITY, INFINITY}, max[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int64_t a = lo; a < hi; a++)
            for (int d = 0; d < 3; d++) {
                min[d] = fmin(min[d], b->positions[3 * a + d]);
                max[d] = fmax(max[d], b->positions[3 * a + d]);
            }
        for (int64_t a = lo; a < hi; a++) {
            uint32_t code = 0;
            for (int d = 0; d < 3; d++) {
                double extent = max[d] - min[d];
                uint32_t q = extent > 0 ? (uint32_t)((b->positions[3 * a + d] - min[d]) / extent * 1023.0) : 0;
                code |= spread_bits(q) << d;
            }
            keys[a] = (keyed_atom){((uint64_t)s << 32) | code, (int32_t)a};
        }
    }
    qsort(keys, (size_t)n_atoms, sizeof *keys, by_key);
    for (int64_t a = 0, k = 0; a < n_atoms; a++)
        if (keys[a].atom < n_owned)
            order[k++] = keys[a].atom;
    free(keys);
    return MLFF_OK;
}

/* Cost of each size symbol per row, and what its rows count. */
static symbol_cost *symbol_costs(const mlff_graph *g, const mlff_plan *plan)
{
    symbol_cost *costs = calloc((size_t)g->n_symbols, sizeof *costs);
    if (!costs)
        return NULL;
    costs[MLFF_SYMBOL_ATOMS].kind = SYMBOL_ATOMS;
    for (int t = 0; t < g->n_tensors; t++) {
        const mlff_graph_tensor *gt = &g->tensors[t];
        if (gt->kind != MLFF_TENSOR_INPUT || gt->rows_symbol < 0)
            continue;
        symbol_cost *c = &costs[gt->rows_symbol];
        if (gt->role == MLFF_INPUT_ELEMENT_ORDER) {
            c->kind = SYMBOL_OWNED;
        } else if (gt->role == MLFF_INPUT_ELEMENT_ATOMS) {
            c->kind = SYMBOL_ELEMENT;
            c->element = gt->role_link;
        } else if (gt->role == MLFF_INPUT_PAIRS) {
            c->kind = SYMBOL_PAIRS;
            c->cutoff = gt->cutoff;
        }
    }
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == MLFF_OP_PAIR_TRIPLES) {
            symbol_cost *c = &costs[g->tensors[g->nodes[k].output].rows_symbol];
            c->kind = SYMBOL_TRIPLES;
            c->cutoff = g->tensors[g->nodes[k].inputs[0]].cutoff;
        }
    for (int s = 0; s < g->n_symbols; s++)
        mlff_plan_row_bytes(plan, s, &costs[s].total, &costs[s].widest);
    return costs;
}

/* True when tensors of sum (+ rows, if given) rows per symbol fit the
 * budget and the largest buffer. */
static int rows_fit(const symbol_cost *costs, int n_symbols, const int64_t *sum, const int64_t *rows,
                    const mlff_chunk_limits *limits, double budget)
{
    double bytes = 0;
    for (int y = 0; y < n_symbols; y++) {
        const double n = (double)(sum[y] + (rows ? rows[y] : 0));
        if (n * (double)costs[y].widest > (double)limits->max_buffer)
            return 0;
        bytes += n * (double)costs[y].total;
    }
    return bytes <= budget;
}

/*
 * Rows summed over blocks of positions (atoms, or places in an order) on
 * the context's threads: c->block_rows holds per block one position's rows
 * (scratch), then the block's sums. The binned cut takes blocks whole where
 * they fit.
 */
#define ROWS_BLOCK 256

typedef void position_rows_fn(const void *source, int64_t p, int64_t *rows);

typedef struct block_sums {
    int64_t *block_rows;
    int n_symbols;
    int64_t n_positions;
    position_rows_fn *rows_at;
    const void *source;
} block_sums;

static void sum_blocks(const void *task, void *extra, int64_t b0, int64_t b1)
{
    (void)extra;
    const block_sums *j = task;
    const int n = j->n_symbols;
    for (int64_t b = b0; b < b1; b++) {
        int64_t *rows = j->block_rows + 2 * n * b, *sum = rows + n;
        memset(sum, 0, (size_t)n * sizeof *sum);
        const int64_t end = (b + 1) * ROWS_BLOCK < j->n_positions ? (b + 1) * ROWS_BLOCK : j->n_positions;
        for (int64_t p = b * ROWS_BLOCK; p < end; p++) {
            j->rows_at(j->source, p, rows);
            for (int y = 0; y < n; y++)
                sum[y] += rows[y];
        }
    }
}

static mlff_status sum_by_block(mlff_chunks *c, mlff_thread_pool *pool, int n_symbols, int64_t n_positions,
                                position_rows_fn *rows_at, const void *source, mlff_error *err)
{
    const int64_t n_blocks = (n_positions + ROWS_BLOCK - 1) / ROWS_BLOCK;
    if (!mlff_grow((void **)&c->block_rows, &c->block_rows_capacity, 2 * n_symbols * n_blocks, sizeof *c->block_rows))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning chunks");
    const block_sums j = {c->block_rows, n_symbols, n_positions, rows_at, source};
    mlff_thread_pool_for(pool, n_blocks, 2, sum_blocks, &j, NULL);
    return MLFF_OK;
}

typedef struct host_rows {
    const mlff_chunks *c;
    const mlff_batch_work *w;
    int n_symbols;
    int parts;  /* ROWS_*, of atoms below n_owned; ghosts' rows are their pairs' */
} host_rows;

/* Some rows of atom a, from the host's pair list. */
static void host_rows_of(const host_rows *h, int64_t a, int parts, int64_t *rows)
{
    const int64_t p0 = h->c->first_pair[a];
    const atom_pairs pairs = {.distances = h->w->pairs.distances + p0, .n_pairs = h->c->first_pair[a + 1] - p0};
    atom_rows(h->c->costs, h->n_symbols, h->w->species[a], &pairs, parts, rows);
}

/* The rows of atom a (a position_rows_fn). */
static void host_atom_rows(const void *source, int64_t a, int64_t *rows)
{
    const host_rows *h = source;
    host_rows_of(h, a, a < h->w->n_owned ? h->parts : ROWS_CENTER, rows);
}

/* The whole batch as one chunk (no ghosts but the batch's own): the
 * common case, checked without the cut's bookkeeping. The batch's ghosts
 * (a subdomain's) are centers too where their pairs run. */
static mlff_status whole_batch_fits(mlff_chunks *c, int n_symbols, const mlff_chunk_limits *limits, double budget,
                                    const mlff_batch_work *w, int *fits, mlff_error *err)
{
    *fits = 0;
    if (limits->max_atoms > 0 && w->n_owned > limits->max_atoms)
        return MLFF_OK;
    const host_rows h = {c, w, n_symbols, ROWS_ALL};
    const int64_t n_centers = w->ghost_pairs ? w->n_atoms : w->n_owned;
    mlff_status s = sum_by_block(c, w->pool, n_symbols, n_centers, host_atom_rows, &h, err);
    if (s != MLFF_OK)
        return s;
    const int64_t n_blocks = (n_centers + ROWS_BLOCK - 1) / ROWS_BLOCK;
    int64_t *sum = c->rows + n_symbols;
    memset(sum, 0, (size_t)n_symbols * sizeof *sum);
    for (int64_t b = 0; b < n_blocks; b++)
        for (int y = 0; y < n_symbols; y++)
            sum[y] += c->block_rows[(2 * b + 1) * n_symbols + y];
    sum[MLFF_SYMBOL_ATOMS] = w->n_atoms;
    *fits = rows_fit(c->costs, n_symbols, sum, NULL, limits, budget);
    return MLFF_OK;
}

/* The costs per row of every symbol (found at the first call) and the
 * budget the rows of a pass may use. */
static mlff_status find_budget(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                               const mlff_chunk_limits *limits, const mlff_batch *b, double *budget, mlff_error *err)
{
    if (!c->costs && (!(c->costs = symbol_costs(g, plan)) ||
                      !(c->rows = malloc((size_t)g->n_symbols * 4 * sizeof *c->rows))))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning chunks");
    *budget = ((double)limits->budget - (double)mlff_plan_param_bytes(plan)) / MLFF_PLAN_HEADROOM -
              (double)c->costs[MLFF_SYMBOL_SYSTEMS].total * (double)b->n_systems;
    return MLFF_OK;
}

mlff_status mlff_chunks_whole_fits(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                                   const mlff_chunk_limits *limits, const mlff_batch *b, const int64_t *symbols,
                                   int *fits, mlff_error *err)
{
    *fits = 0;
    double budget;
    mlff_status s = find_budget(c, g, plan, limits, b, &budget, err);
    if (s != MLFF_OK || (limits->max_atoms > 0 && symbols[MLFF_SYMBOL_ATOMS] > limits->max_atoms))
        return s;
    int64_t *sum = c->rows + g->n_symbols;
    for (int y = 0; y < g->n_symbols; y++)
        sum[y] = c->costs[y].kind != SYMBOL_OTHER ? symbols[y] : 0;
    *fits = rows_fit(c->costs, g->n_symbols, sum, NULL, limits, budget);
    return MLFF_OK;
}

/*
 * The chunk being cut takes owned atom a: every atom within layers hops of
 * it comes in, or nearer (c->hops, breadth first from a), logged with its
 * hops before (-1: not in the chunk) so that undo() can take it back.
 * delta: the rows this adds, its atoms' included. Returns the log's length.
 */
static int64_t bring_in(mlff_chunks *c, const host_rows *host, int32_t a, int64_t *delta, int64_t *scratch)
{
    const int n_symbols = host->n_symbols, layers = c->layers;
    const int32_t *neighbour = host->w->pairs.master.pairs;
    host_rows_of(host, a, ROWS_OWNED, delta);
    delta[MLFF_SYMBOL_ATOMS] = 0;
    int64_t n_log = 0;
    for (int64_t q = -1; q < n_log; q++) {
        const int32_t x = q < 0 ? a : c->log_atom[q];
        const int32_t hops = q < 0 ? 0 : c->hops[x] + 1;
        if (hops > layers)
            break; /* breadth first: all later ones are as far */
        const int64_t p0 = q < 0 ? 0 : c->first_pair[x], p1 = q < 0 ? 1 : c->first_pair[x + 1];
        for (int64_t p = p0; p < p1; p++) {
            const int32_t y = q < 0 ? a : neighbour[2 * p + 1];
            const int32_t before = c->seen[y] == c->generation ? c->hops[y] : -1;
            if (before >= 0 && before <= hops)
                continue;
            c->log_atom[n_log] = y;
            c->log_hops[n_log++] = before;
            c->seen[y] = c->generation;
            c->hops[y] = hops;
            delta[MLFF_SYMBOL_ATOMS] += before < 0;
            if (hops < layers && (before < 0 || before == layers)) { /* a new center */
                host_rows_of(host, y, ROWS_CENTER, scratch);
                for (int s = 0; s < n_symbols; s++)
                    delta[s] += s == MLFF_SYMBOL_ATOMS ? 0 : scratch[s];
            }
        }
    }
    return n_log;
}

/* Takes back what bring_in logged. */
static void undo(mlff_chunks *c, int64_t n_log)
{
    for (int64_t q = n_log - 1; q >= 0; q--) {
        const int32_t y = c->log_atom[q];
        if (c->log_hops[q] < 0)
            c->seen[y] = c->generation - 1;
        else
            c->hops[y] = c->log_hops[q];
    }
}

/* Greedy cut along c->order: a chunk grows while its tensors fit. The
 * atoms of a chunk are its owned atoms and the ghosts within layers hops,
 * found as it grows: c->seen[a] == c->generation marks the atoms already
 * in it. */
static mlff_status cut(mlff_chunks *c, const symbol_cost *costs, int n_symbols, const mlff_chunk_limits *limits,
                       double budget, const mlff_batch_work *w, mlff_error *err)
{
    const int64_t n_atoms = w->n_owned; /* c->order's */
    int64_t *delta = c->rows, *sum = delta + n_symbols, *scratch = sum + n_symbols;
    memset(sum, 0, (size_t)n_symbols * sizeof *sum);
    int64_t owned = 0;
    c->n_chunks = 0;
    c->start[0] = 0;
    c->generation++;
    const host_rows host = {c, w, n_symbols, ROWS_ALL};
    for (int64_t k = 0; k < n_atoms; k++) {
        const int32_t a = c->order[k];
        for (;;) { /* this chunk, or (closed) the next */
            const int64_t n_log = bring_in(c, &host, a, delta, scratch);
            if ((limits->max_atoms <= 0 || owned < limits->max_atoms) &&
                rows_fit(costs, n_symbols, sum, delta, limits, budget))
                break;
            undo(c, n_log);
            if (owned == 0)
                return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY,
                                 "one atom with its neighbours%s needs more than the device allows "
                                 "(budget %.0f MB, largest buffer %zu MB)",
                                 c->layers > 1 ? " (as far as the model's layers reach)" : "", budget / 1e6,
                                 limits->max_buffer >> 20);
            /* Close this chunk; the atom starts the next one. */
            c->start[++c->n_chunks] = k;
            memset(sum, 0, (size_t)n_symbols * sizeof *sum);
            owned = 0;
            c->generation++;
        }
        for (int y = 0; y < n_symbols; y++)
            sum[y] += delta[y];
        owned++;
    }
    c->start[++c->n_chunks] = n_atoms;
    return MLFF_OK;
}

/* Clears local_of of the current chunk's atoms (it stays -1 elsewhere). */
static void forget_view(mlff_chunks *c)
{
    for (int64_t l = 0; c->view.batch_atom && l < c->view.n_atoms; l++)
        c->local_of[c->local[l]] = -1;
    memset(&c->view, 0, sizeof c->view);
}

/* The per-atom arrays, for n atoms (grown, never shrunk). */
static mlff_status reserve_atoms(mlff_chunks *c, int64_t n, mlff_error *err)
{
    const int64_t old = c->atoms_capacity;
    void **const arrays[] = {(void **)&c->first_pair, (void **)&c->start,    (void **)&c->order,
                             (void **)&c->seen,       (void **)&c->local_of, (void **)&c->slab_at,
                             (void **)&c->bin_key,    (void **)&c->hops,     (void **)&c->log_atom,
                             (void **)&c->log_hops};
    const size_t elems[] = {sizeof *c->first_pair, sizeof *c->start,    sizeof *c->order,   sizeof *c->seen,
                            sizeof *c->local_of,   sizeof *c->slab_at,  sizeof *c->bin_key, sizeof *c->hops,
                            sizeof *c->log_atom,   sizeof *c->log_hops};
    if (!mlff_grow_columns(arrays, elems, 10, &c->atoms_capacity, n + 2))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning chunks of %lld atoms",
                         (long long)n);
    for (int64_t a = old; a < c->atoms_capacity; a++) {
        c->local_of[a] = -1;
        c->seen[a] = 0;
    }
    return MLFF_OK;
}

/* first[a]: the first pair of the master list (sorted by center) whose center is a or later. */
static void find_first_pairs(const void *task, void *extra, int64_t a0, int64_t a1)
{
    const mlff_neighbor_list *master = task;
    int64_t *first = extra;
    for (int64_t a = a0; a < a1; a++) {
        int64_t lo = 0, hi = master->n_pairs;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (master->pairs[2 * mid] < a)
                lo = mid + 1;
            else
                hi = mid;
        }
        first[a] = lo;
    }
}

mlff_status mlff_chunks_plan(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                             const mlff_chunk_limits *limits, const mlff_batch *b,
                             const mlff_batch_work *w, mlff_error *err)
{
    const int64_t n_atoms = w->n_atoms;
    const mlff_neighbor_list *master = &w->pairs.master;
    forget_view(c);
    c->n_chunks = 1;
    c->layers = g->interaction_layers > 1 ? g->interaction_layers : 1;
    mlff_status s = reserve_atoms(c, n_atoms, err);
    if (s != MLFF_OK)
        return s;
    mlff_thread_pool_for(w->pool, n_atoms + 1, 4096, find_first_pairs, master, c->first_pair);
    double budget;
    if ((s = find_budget(c, g, plan, limits, b, &budget, err)) != MLFF_OK)
        return s;
    const symbol_cost *costs = c->costs;
    /* The whole batch in one pass where it fits; else chunks in spatial order. */
    int fits;
    if ((s = whole_batch_fits(c, g->n_symbols, limits, budget, w, &fits, err)) != MLFF_OK)
        return s;
    if (fits) {
        for (int64_t a = 0; a < w->n_owned; a++)
            c->order[a] = (int32_t)a;
        c->start[0] = 0;
        c->start[1] = w->n_owned;
        return MLFF_OK;
    }
    if ((s = spatial_order(b, w->n_owned, c->order, err)) == MLFF_OK)
        s = cut(c, costs, g->n_symbols, limits, budget, w, err);
    return s;
}

static int by_atom(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Pairs of one center by neighbour (local index), stable: images keep their order. */
static void sort_run(int32_t *pairs, int32_t *images, double *distances, int64_t n)
{
    for (int64_t k = 1; k < n; k++) {
        int32_t p[2] = {pairs[2 * k], pairs[2 * k + 1]}, im[3] = {images[3 * k], images[3 * k + 1], images[3 * k + 2]};
        double d = distances[k];
        int64_t m = k;
        for (; m > 0 && pairs[2 * (m - 1) + 1] > p[1]; m--) {
            memcpy(pairs + 2 * m, pairs + 2 * (m - 1), 2 * sizeof *pairs);
            memcpy(images + 3 * m, images + 3 * (m - 1), 3 * sizeof *images);
            distances[m] = distances[m - 1];
        }
        memcpy(pairs + 2 * m, p, sizeof p);
        memcpy(images + 3 * m, im, sizeof im);
        distances[m] = d;
    }
}

static int reserve_pairs(mlff_chunks *c, int64_t n)
{
    void **const arrays[] = {(void **)&c->pairs, (void **)&c->images, (void **)&c->distances};
    const size_t elems[] = {2 * sizeof *c->pairs, 3 * sizeof *c->images, sizeof *c->distances};
    return mlff_grow_columns(arrays, elems, 3, &c->pairs_capacity, n);
}

/* Sorts local[l0, l1) by batch atom and sets their local_of. */
static void sort_local(mlff_chunks *c, int64_t l0, int64_t l1)
{
    qsort(c->local + l0, (size_t)(l1 - l0), sizeof *c->local, by_atom);
    for (int64_t l = l0; l < l1; l++)
        c->local_of[c->local[l]] = (int32_t)l;
}

mlff_status mlff_chunks_select(mlff_chunks *c, int64_t k, const mlff_batch_work *w, mlff_error *err)
{
    const mlff_neighbor_list *master = &w->pairs.master;
    forget_view(c);
    const int32_t *owned = c->order + c->start[k];
    const int64_t n_owned = c->start[k + 1] - c->start[k];
    if (!mlff_grow((void **)&c->local, &c->local_capacity, n_owned, sizeof *c->local))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory selecting a chunk");
    /* Owned atoms, then the ghosts breadth first, hop by hop: those the pairs
     * of the atoms before them reach. */
    memcpy(c->local, owned, (size_t)n_owned * sizeof *c->local);
    for (int64_t l = 0; l < n_owned; l++)
        c->local_of[c->local[l]] = (int32_t)l;
    int64_t n_local = n_owned, n_centers = n_owned, n_pairs = 0;
    for (int64_t hop = 0, l0 = 0; hop < c->layers; hop++) {
        const int64_t l1 = n_local;
        int64_t reach = 0; /* ghosts are at most one per pair */
        for (int64_t l = l0; l < l1; l++)
            reach += c->first_pair[c->local[l] + 1] - c->first_pair[c->local[l]];
        n_pairs += reach;
        if (!mlff_grow((void **)&c->local, &c->local_capacity, n_local + reach, sizeof *c->local)) {
            c->view = (mlff_atom_view){.n_atoms = n_local, .batch_atom = c->local}; /* forget_view's */
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory selecting a chunk");
        }
        for (int64_t l = l0; l < l1; l++)
            for (int64_t p = c->first_pair[c->local[l]]; p < c->first_pair[c->local[l] + 1]; p++) {
                const int32_t j = master->pairs[2 * p + 1];
                if (c->local_of[j] < 0) {
                    c->local_of[j] = (int32_t)n_local;
                    c->local[n_local++] = j;
                }
            }
        n_centers = l1;
        l0 = l1;
    }
    /* Owned atoms in batch order, then the centers among the ghosts, then
     * the rest, each in batch order. */
    sort_local(c, 0, n_owned);
    sort_local(c, n_owned, n_centers);
    sort_local(c, n_centers, n_local);
    if (!reserve_pairs(c, n_pairs)) {
        c->view = (mlff_atom_view){.n_atoms = n_local, .batch_atom = c->local};
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory selecting a chunk");
    }
    /* The centers' pairs in local indices, sorted by center, then neighbour. */
    int64_t q = 0;
    for (int64_t l = 0; l < n_centers; l++) {
        const int64_t run = q;
        for (int64_t p = c->first_pair[c->local[l]]; p < c->first_pair[c->local[l] + 1]; p++, q++) {
            c->pairs[2 * q] = (int32_t)l;
            c->pairs[2 * q + 1] = c->local_of[master->pairs[2 * p + 1]];
            memcpy(c->images + 3 * q, master->images + 3 * p, 3 * sizeof *c->images);
            c->distances[q] = w->pairs.distances[p];
        }
        sort_run(c->pairs + 2 * run, c->images + 3 * run, c->distances + run, q - run);
    }
    c->n_centers = n_centers;
    c->view = (mlff_atom_view){
        .n_owned = n_owned,
        .n_atoms = n_local,
        .batch_atom = c->local,
        .pairs = c->pairs,
        .images = c->images,
        .distances = c->distances,
        .n_pairs = q,
    };
    return MLFF_OK;
}

/*
 * Chunks of binned atoms (mlff_chunks_plan_binned). The atoms are ordered
 * by slab (the bins with one coordinate along a system's lattice axis of
 * most bins: a thin system is cut along its long axis), then by bin; a
 * chunk owns a run of that order, and its ghosts are every other atom of
 * the slabs within the search's reach of the slabs it owns atoms in (a
 * superset of the atoms its pairs reach), in the systems it owns only in
 * part.
 */
typedef struct slab_system {
    int64_t first, n_slabs, reach; /* its slabs are first .. first + n_slabs - 1 */
    int axis;                      /* the lattice axis across its slabs */
    int periodic;                  /* along that axis */
} slab_system;

/* A system a chunk owns in part: the first and last of its slabs the chunk
 * owns atoms in (numbered within the system), and how many atoms. */
typedef struct partial_system {
    int64_t system, xa, xb, owned;
} partial_system;

/* The systems the chunk owning positions [p0, p1) of the order owns in
 * part: at most its first and its last. */
static int partial_systems(const mlff_chunks *c, const int32_t *system, int64_t p0, int64_t p1,
                           partial_system out[2])
{
    int n = 0;
    const int64_t s0 = system[c->order[p0]], s1 = system[c->order[p1 - 1]];
    for (int64_t s = s0;; s = s1) {
        const slab_system *y = &c->slab_systems[s];
        const int64_t begin = c->slab_first[y->first], end = c->slab_first[y->first + y->n_slabs];
        const int64_t q0 = p0 > begin ? p0 : begin, q1 = p1 < end ? p1 : end;
        if (q1 - q0 < end - begin)
            out[n++] = (partial_system){s, c->slab_at[q0] - y->first, c->slab_at[q1 - 1] - y->first, q1 - q0};
        if (s == s1)
            return n;
    }
}

/* The slabs (numbered across the batch) within reach of a system's slabs
 * [xa, xb]: one interval, or two where the reach wraps around a periodic
 * axis; returns how many. */
static int slabs_within_reach(const slab_system *y, int64_t xa, int64_t xb, int64_t reach, int64_t interval[2][2])
{
    const int64_t n = y->n_slabs;
    int64_t lo = xa - reach, hi = xb + reach;
    if (y->periodic && hi - lo + 1 >= n) {
        lo = 0;
        hi = n - 1;
    } else if (!y->periodic) {
        lo = lo > 0 ? lo : 0;
        hi = hi < n - 1 ? hi : n - 1;
    } else if (lo < 0 || hi >= n) { /* [0, the part past the end] and [the part before 0, n) */
        const int64_t low_end = lo < 0 ? hi : hi - n, high_start = lo < 0 ? lo + n : lo;
        interval[0][0] = y->first;
        interval[0][1] = y->first + low_end;
        interval[1][0] = y->first + high_start;
        interval[1][1] = y->first + n - 1;
        return 2;
    }
    interval[0][0] = y->first + lo;
    interval[0][1] = y->first + hi;
    return 1;
}

/* The ghosts of the chunk owning positions [p0, p1) within `hops` times
 * the search's reach; written to local when it is not NULL. Returns how
 * many. */
static int64_t chunk_ghosts(const mlff_chunks *c, const int32_t *system, int64_t p0, int64_t p1, int hops,
                            int32_t *local)
{
    partial_system part[2];
    const int n_parts = partial_systems(c, system, p0, p1, part);
    int64_t ghosts = 0;
    for (int k = 0; k < n_parts; k++) {
        const slab_system *y = &c->slab_systems[part[k].system];
        int64_t interval[2][2];
        const int n = slabs_within_reach(y, part[k].xa, part[k].xb, hops * y->reach, interval);
        for (int i = 0; i < n; i++) {
            const int64_t q0 = c->slab_first[interval[i][0]], q1 = c->slab_first[interval[i][1] + 1];
            if (!local) {
                ghosts += q1 - q0;
                continue;
            }
            for (int64_t q = q0; q < q1; q++)
                if (q < p0 || q >= p1)
                    local[ghosts++] = c->order[q];
        }
        if (!local)
            ghosts -= part[k].owned;
    }
    return ghosts;
}

/* The lattice axis of a system's grid with the most bins (the first of equals). */
static int slab_axis(const int32_t *grid)
{
    int axis = 0;
    for (int k = 1; k < 3; k++)
        axis = grid[k] > grid[axis] ? k : axis;
    return axis;
}

/* A bin (numbered across the batch, the system's axis 0 slowest) numbered
 * with the slab axis slowest instead; bins of a slab are then a run. */
static int32_t slab_major_bin(const int32_t *grid, int axis, int32_t bin)
{
    const int32_t rel = bin - grid[7];
    const int32_t at[3] = {rel / (grid[1] * grid[2]), rel / grid[2] % grid[1], rel % grid[2]};
    const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
    return grid[7] + (at[axis] * grid[u] + at[u]) * grid[v] + at[v];
}

typedef struct slab_task {
    mlff_chunks *c;
    const mlff_batch_work *w;
    const mlff_cell_census *census;
} slab_task;

/* c->bin_key of atoms [a0, a1). */
static void key_atoms(const void *task, void *extra, int64_t a0, int64_t a1)
{
    (void)extra;
    const slab_task *t = task;
    for (int64_t a = a0; a < a1; a++) {
        const int32_t *grid = t->census->grids + MLFF_CELL_GRID_INTS * t->w->system[a];
        t->c->bin_key[a] = slab_major_bin(grid, t->c->slab_systems[t->w->system[a]].axis, t->census->bins[a]);
    }
}

/* c->slab_at of positions [p0, p1) of the order. */
static void find_slabs(const void *task, void *extra, int64_t p0, int64_t p1)
{
    (void)extra;
    const slab_task *t = task;
    for (int64_t p = p0; p < p1; p++) {
        const int32_t a = t->c->order[p];
        const int32_t *grid = t->census->grids + MLFF_CELL_GRID_INTS * t->w->system[a];
        const slab_system *y = &t->c->slab_systems[t->w->system[a]];
        const int32_t slab_bins = grid[0] * grid[1] * grid[2] / grid[y->axis];
        t->c->slab_at[p] = (int32_t)(y->first + (t->c->bin_key[a] - grid[7]) / slab_bins);
    }
}

/* c->order: the atoms by slab, then bin (stably); their slabs, and where
 * each slab begins in the order. */
static mlff_status order_by_bin(mlff_chunks *c, const mlff_batch *b, const mlff_batch_work *w,
                                const mlff_cell_census *census, mlff_error *err)
{
    const int64_t n_atoms = w->n_atoms, S = b->n_systems;
    if (!mlff_grow((void **)&c->slab_systems, &c->slab_systems_capacity, S, sizeof *c->slab_systems))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning chunks");
    int64_t n_slabs = 0;
    for (int64_t s = 0; s < S; s++) {
        const int32_t *grid = census->grids + MLFF_CELL_GRID_INTS * s;
        const int axis = slab_axis(grid);
        c->slab_systems[s] = (slab_system){n_slabs, grid[axis], grid[3 + axis], axis, (grid[6] >> axis) & 1};
        n_slabs += grid[axis];
    }
    const int64_t counters = (census->n_bins > n_slabs ? census->n_bins : n_slabs) + 1;
    if (!mlff_grow((void **)&c->slab_first, &c->slabs_capacity, counters, sizeof *c->slab_first))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning chunks");
    const slab_task task = {c, w, census};
    mlff_thread_pool_for(w->pool, n_atoms, MLFF_POOL_ATOMS_SERIAL_BELOW, key_atoms, &task, NULL);
    /* A counting sort by those bins (slab_first counting bins for now). */
    int64_t *first = c->slab_first;
    memset(first, 0, (size_t)(census->n_bins + 1) * sizeof *first);
    for (int64_t a = 0; a < n_atoms; a++)
        first[c->bin_key[a] + 1]++;
    for (int64_t k = 0; k < census->n_bins; k++)
        first[k + 1] += first[k];
    for (int64_t a = 0; a < n_atoms; a++)
        c->order[first[c->bin_key[a]]++] = (int32_t)a;
    /* Bins are now numbered slab by slab, system after system. */
    mlff_thread_pool_for(w->pool, n_atoms, MLFF_POOL_ATOMS_SERIAL_BELOW, find_slabs, &task, NULL);
    memset(first, 0, (size_t)(n_slabs + 1) * sizeof *first);
    for (int64_t p = 0; p < n_atoms; p++)
        first[c->slab_at[p] + 1]++;
    for (int64_t k = 0; k < n_slabs; k++)
        first[k + 1] += first[k];
    return MLFF_OK;
}

typedef struct binned_cut {
    mlff_chunks *c;
    const mlff_batch_work *w;
    const mlff_device_lists *lists;
    const mlff_cell_census *census;
    const mlff_chunk_limits *limits;
    double budget;
    int n_symbols;
    int64_t n_systems;
    int parts; /* of an owned atom's rows (ROWS_*): with several layers the centers' come from c->slab_rows */
} binned_cut;

/* Some rows of the atom at position p of the order. */
static void binned_rows_of(const binned_cut *j, int64_t p, int parts, int64_t *rows)
{
    const int32_t a = j->c->order[p];
    int64_t counts[MLFF_DEVICE_LISTS];
    for (int l = 0; l < j->lists->n_lists; l++)
        counts[l] = j->census->list_offsets[l][a + 1] - j->census->list_offsets[l][a];
    const atom_pairs pairs = {.cutoffs = j->lists->cutoff, .counts = counts, .n_lists = j->lists->n_lists};
    atom_rows(j->c->costs, j->n_symbols, j->w->species[a], &pairs, parts, rows);
}

/* The rows an owned atom at position p adds (a position_rows_fn). */
static void binned_atom_rows(const void *source, int64_t p, int64_t *rows)
{
    const binned_cut *j = source;
    binned_rows_of(j, p, j->parts, rows);
}

/* c->slab_rows: the centers' rows of the slabs before each slab, for
 * models of several layers, whose centers are whole slabs (and owned
 * atoms of systems owned whole). */
static mlff_status sum_slab_rows(const binned_cut *j, mlff_error *err)
{
    mlff_chunks *c = j->c;
    const int n = j->n_symbols;
    const int64_t n_atoms = j->w->n_atoms;
    const slab_system *last = &c->slab_systems[j->n_systems - 1];
    const int64_t n_slabs = last->first + last->n_slabs;
    if (!mlff_grow((void **)&c->slab_rows, &c->slab_rows_capacity, (n_slabs + 1) * n, sizeof *c->slab_rows))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning chunks");
    int64_t *rows = c->rows + 2 * n;
    memset(c->slab_rows, 0, (size_t)((n_slabs + 1) * n) * sizeof *c->slab_rows);
    for (int64_t p = 0; p < n_atoms; p++) {
        binned_rows_of(j, p, ROWS_CENTER, rows);
        int64_t *slab = c->slab_rows + (c->slab_at[p] + 1) * n;
        for (int y = 0; y < n; y++)
            slab[y] += rows[y];
    }
    for (int64_t k = 0; k < n_slabs; k++)
        for (int y = 0; y < n; y++)
            c->slab_rows[(k + 1) * n + y] += c->slab_rows[k * n + y];
    return MLFF_OK;
}

/* Adds the centers' rows of slabs [k0, k1] (numbered across the batch). */
static void add_slab_rows(const mlff_chunks *c, int n, int64_t k0, int64_t k1, int64_t *rows)
{
    for (int y = 0; y < n; y++)
        rows[y] += c->slab_rows[(k1 + 1) * n + y] - c->slab_rows[k0 * n + y];
}

/* The centers' rows of the chunk owning positions [p0, p1), for a model
 * of several layers: the slabs within (layers - 1) x the search's reach
 * in the systems it owns in part, and the slabs of those it owns whole
 * (between the first and the last it owns atoms of). */
static void center_rows(const binned_cut *j, int64_t p0, int64_t p1, int64_t *rows)
{
    const mlff_chunks *c = j->c;
    const int n = j->n_symbols;
    memset(rows, 0, (size_t)n * sizeof *rows);
    partial_system part[2];
    const int n_parts = partial_systems(c, j->w->system, p0, p1, part);
    for (int k = 0; k < n_parts; k++) {
        const slab_system *y = &c->slab_systems[part[k].system];
        int64_t interval[2][2];
        const int m = slabs_within_reach(y, part[k].xa, part[k].xb, (c->layers - 1) * y->reach, interval);
        for (int i = 0; i < m; i++)
            add_slab_rows(c, n, interval[i][0], interval[i][1], rows);
    }
    const int64_t s0 = j->w->system[c->order[p0]], s1 = j->w->system[c->order[p1 - 1]];
    const int partial0 = n_parts > 0 && part[0].system == s0;
    const int partial1 = n_parts > 0 && part[n_parts - 1].system == s1;
    const slab_system *y0 = &c->slab_systems[s0], *y1 = &c->slab_systems[s1];
    const int64_t k0 = partial0 ? y0->first + y0->n_slabs : y0->first;
    const int64_t k1 = partial1 ? y1->first : y1->first + y1->n_slabs;
    if (k0 < k1)
        add_slab_rows(c, n, k0, k1 - 1, rows);
}

/* Adds positions [p, end) to the chunk that began at p0 (c->rows' sums)
 * if it still fits: a whole block of the order, or one atom. */
static int take(const binned_cut *j, int64_t p0, int64_t p, int64_t end)
{
    mlff_chunks *c = j->c;
    const int n = j->n_symbols;
    int64_t *rows = c->rows, *sum = rows + n, *total = sum + n, *centers = total + n;
    if (j->limits->max_atoms > 0 && end - p0 > j->limits->max_atoms)
        return 0;
    if (end - p == 1)
        binned_atom_rows(j, p, rows);
    else
        memcpy(rows, c->block_rows + (2 * (p / ROWS_BLOCK) + 1) * n, (size_t)n * sizeof *rows);
    for (int y = 0; y < n; y++)
        total[y] = sum[y] + rows[y];
    if (c->layers > 1) {
        center_rows(j, p0, end, centers);
        for (int y = 0; y < n; y++)
            total[y] += centers[y];
    }
    /* The chunk's atoms (sum[ATOMS] stays 0). */
    total[MLFF_SYMBOL_ATOMS] = end - p0 + chunk_ghosts(c, j->w->system, p0, end, c->layers, NULL);
    if (!rows_fit(c->costs, n, total, NULL, j->limits, j->budget))
        return 0;
    for (int y = 0; y < n; y++)
        sum[y] += y == MLFF_SYMBOL_ATOMS ? 0 : rows[y];
    return 1;
}

/* Greedy cut along the order, as cut() does, with the ghosts the chunk's
 * slabs bring; no chunks (n_chunks 0) where one atom with the slabs it
 * needs does not fit. Every row count, the atoms' included, only grows as a
 * chunk takes more of the order, so a block that fits whole may be taken
 * at once. */
static mlff_status cut_binned(const binned_cut *j, mlff_error *err)
{
    mlff_chunks *c = j->c;
    const int64_t n_atoms = j->w->n_atoms;
    mlff_status s = sum_by_block(c, j->w->pool, j->n_symbols, n_atoms, binned_atom_rows, j, err);
    if (s != MLFF_OK)
        return s;
    memset(c->rows + j->n_symbols, 0, (size_t)j->n_symbols * sizeof *c->rows);
    c->n_chunks = 0;
    c->start[0] = 0;
    for (int64_t p = 0, p0 = 0; p < n_atoms;) {
        const int block = p % ROWS_BLOCK == 0 && p + ROWS_BLOCK <= n_atoms;
        if (block && take(j, p0, p, p + ROWS_BLOCK)) {
            p += ROWS_BLOCK;
        } else if (take(j, p0, p, p + 1)) {
            p++;
        } else if (p == p0) { /* whole slabs are too much: the host's search cuts finer */
            c->n_chunks = 0;
            return MLFF_OK;
        } else { /* the atom at p begins the next chunk */
            c->start[++c->n_chunks] = p0 = p;
            memset(c->rows + j->n_symbols, 0, (size_t)j->n_symbols * sizeof *c->rows);
        }
    }
    c->start[++c->n_chunks] = n_atoms;
    return MLFF_OK;
}

mlff_status mlff_chunks_plan_binned(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                                    const mlff_chunk_limits *limits, const mlff_batch *b, const mlff_batch_work *w,
                                    const mlff_device_lists *lists, const mlff_cell_census *census, mlff_error *err)
{
    forget_view(c);
    double budget = 0;
    mlff_status s = reserve_atoms(c, w->n_atoms, err);
    if (s == MLFF_OK)
        s = find_budget(c, g, plan, limits, b, &budget, err);
    if (s == MLFF_OK)
        s = order_by_bin(c, b, w, census, err);
    c->layers = g->interaction_layers > 1 ? g->interaction_layers : 1;
    const binned_cut j = {c, w, lists, census, limits, budget, g->n_symbols, b->n_systems,
                          c->layers > 1 ? ROWS_OWNED : ROWS_ALL};
    if (s == MLFF_OK && c->layers > 1)
        s = sum_slab_rows(&j, err);
    return s == MLFF_OK ? cut_binned(&j, err) : s;
}

mlff_status mlff_chunks_select_binned(mlff_chunks *c, int64_t k, const mlff_batch_work *w, mlff_error *err)
{
    forget_view(c);
    const int64_t p0 = c->start[k], p1 = c->start[k + 1], n_owned = p1 - p0;
    /* With several layers the ghosts within (layers - 1) x the reach come
     * first: they are centers. */
    const int inner = c->layers - 1;
    const int64_t n_inner = inner > 0 ? chunk_ghosts(c, w->system, p0, p1, inner, NULL) : 0;
    const int64_t n_ghosts = chunk_ghosts(c, w->system, p0, p1, c->layers, NULL);
    if (!mlff_grow((void **)&c->local, &c->local_capacity, n_owned + n_inner + n_ghosts, sizeof *c->local))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory selecting a chunk");
    memcpy(c->local, c->order + p0, (size_t)n_owned * sizeof *c->local);
    int64_t n_atoms = n_owned;
    if (inner > 0) {
        n_atoms += chunk_ghosts(c, w->system, p0, p1, inner, c->local + n_owned);
        for (int64_t l = 0; l < n_atoms; l++)
            c->local_of[c->local[l]] = (int32_t)l;
        /* The rest after them, written past them first (n_ghosts counts the inner ones too). */
        int32_t *outer = c->local + n_atoms;
        const int64_t n_outer = chunk_ghosts(c, w->system, p0, p1, c->layers, outer);
        const int64_t n_inner_atoms = n_atoms;
        for (int64_t g = 0; g < n_outer; g++)
            if (c->local_of[outer[g]] < 0)
                c->local[n_atoms++] = outer[g];
        for (int64_t l = n_inner_atoms; l < n_atoms; l++)
            c->local_of[c->local[l]] = (int32_t)l;
    } else {
        n_atoms += chunk_ghosts(c, w->system, p0, p1, c->layers, c->local + n_owned);
    }
    c->n_centers = n_owned + n_inner;
    c->view = (mlff_atom_view){.n_owned = n_owned, .n_atoms = n_atoms, .batch_atom = c->local};
    return MLFF_OK;
}

void mlff_chunks_forget_plan(mlff_chunks *c)
{
    free(c->costs);
    free(c->rows);
    c->costs = NULL;
    c->rows = NULL;
}

void mlff_chunks_free(mlff_chunks *c)
{
    mlff_chunks_forget_plan(c);
    free(c->block_rows);
    free(c->order);
    free(c->start);
    free(c->first_pair);
    free(c->local_of);
    free(c->seen);
    free(c->hops);
    free(c->log_atom);
    free(c->log_hops);
    free(c->slab_rows);
    free(c->slab_at);
    free(c->bin_key);
    free(c->slab_first);
    free(c->slab_systems);
    free(c->local);
    free(c->pairs);
    free(c->images);
    free(c->distances);
    memset(c, 0, sizeof *c);
}
