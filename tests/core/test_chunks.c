/*
 * Atom chunks (core/chunks.h): a batch evaluated chunk by chunk gives the
 * numbers of one pass.
 *  - a batch of a molecule and the triclinic water box, cut into chunks of
 *    at most 50 atoms (chunks cross systems, ghosts come through periodic
 *    images), against the same batch in one pass: energies,
 *    forces and virials, float64 and float32; and molecules cut into chunks
 *    of one atom;
 *  - the planner under a small memory budget and buffer limit: every atom is
 *    owned by exactly one chunk, and the tensors of every chunk fit the
 *    limits it was given; for a model of 3 interaction layers too, whose
 *    chunks hold every atom within 3 hops of the pair list and list the
 *    pairs of those within 2, and are more numerous.
 * Chunks of a batch whose lists the device makes are cut into slabs of
 * bins: the 2x2x2 box and a 1x1x4 box (slabs across its long axis) check
 * them, ghost slabs wrapping around and covering a whole axis included.
 * Usage: test_chunks REFERENCE_DIR [REPEATS]; with REPEATS, only the water
 * box repeated REPEATS times along each axis, in one pass against chunks
 * of a third of it (large boxes on a GPU).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

/* Systems of references concatenated into one batch. */
typedef struct test_batch {
    int64_t n_systems, n_atoms;
    int64_t offsets[8];
    int32_t *z;
    double *pos, cells[8 * 9];
    uint8_t pbc[8 * 3];
} test_batch;

static int build_batch(test_batch *tb, const char *dir, const char *const *names)
{
    memset(tb, 0, sizeof *tb);
    reference r[8];
    for (; names[tb->n_systems]; tb->n_systems++) {
        if (!reference_load(&r[tb->n_systems], dir, names[tb->n_systems]))
            return 0;
        tb->offsets[tb->n_systems + 1] = tb->offsets[tb->n_systems] + r[tb->n_systems].n_atoms;
    }
    tb->n_atoms = tb->offsets[tb->n_systems];
    tb->z = malloc((size_t)tb->n_atoms * sizeof *tb->z);
    tb->pos = malloc((size_t)tb->n_atoms * 3 * sizeof *tb->pos);
    for (int64_t s = 0; s < tb->n_systems; s++) {
        memcpy(tb->z + tb->offsets[s], r[s].species, (size_t)r[s].n_atoms * sizeof *tb->z);
        memcpy(tb->pos + 3 * tb->offsets[s], r[s].positions, (size_t)r[s].n_atoms * 3 * sizeof *tb->pos);
        memcpy(tb->cells + 9 * s, r[s].cell, sizeof r[s].cell);
        memcpy(tb->pbc + 3 * s, r[s].pbc, sizeof r[s].pbc);
        reference_free(&r[s]);
    }
    return 1;
}

/* The batch's last system (a periodic box) as its reps[0] x reps[1] x reps[2] supercell. */
static int replicate_last(test_batch *tb, const int reps[3])
{
    const int64_t s = tb->n_systems - 1, first = tb->offsets[s], n = tb->n_atoms - first;
    const int64_t total = first + n * reps[0] * reps[1] * reps[2];
    int32_t *z = realloc(tb->z, (size_t)total * sizeof *z);
    double *pos = z ? realloc(tb->pos, (size_t)total * 3 * sizeof *pos) : NULL;
    tb->z = z ? z : tb->z;
    tb->pos = pos ? pos : tb->pos;
    if (!pos)
        return 0;
    double *cell = tb->cells + 9 * s;
    int64_t a = tb->n_atoms;
    for (int i = 0; i < reps[0]; i++)
        for (int j = 0; j < reps[1]; j++)
            for (int k = 0; k < reps[2]; k++) {
                if (!i && !j && !k)
                    continue;
                for (int64_t b = first; b < first + n; b++, a++) {
                    z[a] = z[b];
                    for (int d = 0; d < 3; d++)
                        pos[3 * a + d] = pos[3 * b + d] + i * cell[d] + j * cell[3 + d] + k * cell[6 + d];
                }
            }
    for (int d = 0; d < 9; d++)
        cell[d] *= reps[d / 3];
    tb->n_atoms = tb->offsets[s + 1] = total;
    return 1;
}

static void free_batch(test_batch *tb)
{
    free(tb->z);
    free(tb->pos);
}

typedef struct outcome {
    double *energies, *forces, *virials;
    uint64_t executions, device_pair_lists;
    int64_t most_ghosts; /* of a chunk, when the device listed them (-1: not) */
} outcome;

/* The most ghosts a chunk of the binned plan (the last one made) has. */
static int64_t most_ghosts(mlff_model *m)
{
    int64_t most = 0;
    for (int64_t k = 0; k < m->chunks.n_chunks; k++) {
        if (mlff_chunks_select_binned(&m->chunks, k, &m->work, &m->ctx->error) != MLFF_OK)
            return -1;
        const int64_t ghosts = m->chunks.view.n_atoms - m->chunks.view.n_owned;
        most = ghosts > most ? ghosts : most;
    }
    return most;
}

static outcome compute(mlff_precision precision, int64_t max_chunk_atoms, const test_batch *tb)
{
    mlff_settings s;
    mlff_default_settings(&s);
    s.precision = precision;
    s.neighbors = MLFF_NEIGHBORS_SPARSE;
    s.max_chunk_atoms = max_chunk_atoms;
    mlff_context *ctx;
    mlff_model *model = test_open_model_with(&ctx, s);
    outcome o = {calloc((size_t)tb->n_systems, sizeof(double)), calloc((size_t)tb->n_atoms * 3, sizeof(double)),
                 calloc((size_t)tb->n_systems * 9, sizeof(double)), 0, 0, -1};
    const mlff_batch b = {tb->n_systems, tb->offsets, tb->z, tb->pos, tb->cells, tb->pbc};
    const mlff_results r = {.energies = o.energies, .forces = o.forces, .virials = o.virials};
    mlff_status status = mlff_compute(model, &b, &r);
    CHECK(status == MLFF_OK, "compute with max_chunk_atoms %lld: %s", (long long)max_chunk_atoms,
          mlff_last_error(ctx));
    mlff_stats stats;
    mlff_get_stats(ctx, &stats);
    o.executions = stats.plan_executions;
    o.device_pair_lists = stats.device_pair_lists;
    o.most_ghosts = o.executions > 1 && o.device_pair_lists == o.executions ? most_ghosts(model) : -1;
    mlff_context_destroy(ctx);
    return o;
}

static void free_outcome(outcome *o)
{
    free(o->energies);
    free(o->forces);
    free(o->virials);
}

/* Whether the suite asks for the device's cell lists (the binned chunks). */
static int lists_on_device(void)
{
    const char *lists = getenv("MLFF_CELL_LISTS");
    return lists && !strcmp(lists, "device");
}

/* Chunked against one pass. Float32 tolerances: the pairs of an atom are
 * summed in another order when its neighbours are ghosts (ulps of the
 * features, far below the TorchANI tolerances). Returns the most ghosts of
 * a chunk listed on the device (-1: not listed there). */
static int64_t check_same(const char *names_label, const test_batch *tb, mlff_precision precision,
                       int64_t max_chunk_atoms)
{
    const int f64 = precision == MLFF_PRECISION_FLOAT64;
    outcome whole = compute(precision, 0, tb), chunked = compute(precision, max_chunk_atoms, tb);
    const double de = test_max_diff(whole.energies, chunked.energies, tb->n_systems);
    const double df = test_max_diff(whole.forces, chunked.forces, tb->n_atoms * 3);
    const double dw = test_max_diff(whole.virials, chunked.virials, tb->n_systems * 9);
    printf("%s, %s, chunks of %lld atoms: %llu passes (at most %lld ghosts); |dE| %.2e eV, |dF| %.2e eV/A, "
           "|dW| %.2e eV\n", names_label, f64 ? "float64" : "float32", (long long)max_chunk_atoms,
           (unsigned long long)chunked.executions, (long long)chunked.most_ghosts, de, df, dw);
    const int64_t least = (tb->n_atoms + max_chunk_atoms - 1) / max_chunk_atoms;
    CHECK(whole.executions == 1, "one pass without a cap (%llu)", (unsigned long long)whole.executions);
    CHECK((int64_t)chunked.executions >= least, "%llu passes, at least %lld expected",
          (unsigned long long)chunked.executions, (long long)least);
    /* Chunks of a batch the device lists are listed on the device too
     * (mlff_chunks_plan_binned). */
    if (lists_on_device())
        CHECK(chunked.device_pair_lists == chunked.executions, "%llu of %llu passes listed on the device",
              (unsigned long long)chunked.device_pair_lists, (unsigned long long)chunked.executions);
    /* A system's sums grow with its atoms (float32 sums of large boxes). */
    const double per_size = tb->n_atoms > 2000 ? tb->n_atoms / 2000.0 : 1.0;
    CHECK(de <= (f64 ? 1e-9 : 2e-3 * per_size), "energies differ by %g eV", de);
    CHECK(df <= (f64 ? 1e-9 : 2e-4), "forces differ by %g eV/A", df);
    CHECK(dw <= (f64 ? 1e-8 : 5e-3 * per_size), "virials differ by %g eV", dw);
    for (int64_t s = 0; s < tb->n_systems; s++)
        CHECK(whole.energies[s] < -100.0, "system %lld: implausible energy %g eV", (long long)s, whole.energies[s]);
    const int64_t most = chunked.most_ghosts;
    free_outcome(&whole);
    free_outcome(&chunked);
    return most;
}

/* Bytes of the model's working tensors as bound now, and the largest one. */
static void bound_bytes(const mlff_model *m, size_t real_size, size_t *total, size_t *largest)
{
    const mlff_graph *g = m->active->graph;
    *total = *largest = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const mlff_graph_tensor *gt = &g->tensors[t];
        if (gt->kind == MLFF_TENSOR_PARAM)
            continue;
        int64_t rows = gt->rows_symbol == MLFF_FIXED_ROWS ? gt->rows : m->work.symbols[gt->rows_symbol];
        size_t size = gt->dtype == MLFF_DTYPE_REAL ? real_size : mlff_dtype_size(gt->dtype);
        size_t bytes = (size_t)rows * (size_t)gt->cols * size;
        *total += bytes;
        if (bytes > *largest)
            *largest = bytes;
    }
}

/* A chunk of a model of `layers` layers holds every atom within layers
 * hops of the pair list from its owned atoms, and its first n_centers
 * atoms every one within layers - 1 hops (whose pairs it lists): a
 * breadth-first search of the master list from the owned atoms, in the
 * batch's numbers (hop: scratch per batch atom). */
static int chunk_reaches(const mlff_model *m, const mlff_chunks *c, int layers, int32_t *hop, int32_t *queue)
{
    const mlff_atom_view *v = &c->view;
    const mlff_neighbor_list *master = &m->work.pairs.master;
    const int64_t n_atoms = m->work.n_atoms;
    int64_t n = 0;
    for (int64_t a = 0; a < n_atoms; a++)
        hop[a] = -1;
    for (int64_t l = 0; l < v->n_owned; l++) {
        hop[v->batch_atom[l]] = 0;
        queue[n++] = v->batch_atom[l];
    }
    for (int64_t q = 0; q < n; q++) {
        const int32_t a = queue[q];
        if (hop[a] == layers)
            continue;
        int64_t lo = 0, hi = master->n_pairs; /* the list is sorted by center: a's run begins at lo */
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (master->pairs[2 * mid] < a)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int64_t r = lo; r < master->n_pairs && master->pairs[2 * r] == a; r++)
            if (hop[master->pairs[2 * r + 1]] < 0) {
                hop[master->pairs[2 * r + 1]] = hop[a] + 1;
                queue[n++] = master->pairs[2 * r + 1];
            }
    }
    int ok = 1;
    int64_t found = 0;
    for (int64_t l = 0; l < v->n_atoms; l++) {
        const int32_t h = hop[v->batch_atom[l]];
        found += h >= 0;
        if (h >= 0 && h < layers && l >= c->n_centers)
            ok = 0; /* within layers - 1 hops, and its pairs not listed */
    }
    return ok && found == n;
}

/* The planner under a small budget for a model of `layers` interaction
 * layers (ANI-2x's graph said to have them: its energies are the owned
 * atoms' whatever the ghosts' pairs give). Returns the chunks. */
static int64_t check_planner(const test_batch *tb, int layers)
{
    mlff_context *ctx;
    mlff_model *m = test_open_model(&ctx, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_SPARSE, 0.0);
    const mlff_batch b = {tb->n_systems, tb->offsets, tb->z, tb->pos, tb->cells, tb->pbc};
    const mlff_pair_options pairs = {.dense = 0};
    mlff_status s = mlff_batch_check(&b, m->species_index, m->name, m->element_list, &m->work, &ctx->error);
    if (s == MLFF_OK)
        s = mlff_model_use_elements(m, &(mlff_plan_extras){0}, &ctx->error);
    if (s == MLFF_OK)
        s = mlff_batch_find_pairs(m->active->graph, &b, &pairs, &m->work, &ctx->error);
    const mlff_graph *g = s == MLFF_OK ? m->active->graph : NULL;
    mlff_graph deep = g ? *g : (mlff_graph){0};
    deep.interaction_layers = layers;
    const mlff_plan *plan = s == MLFF_OK ? m->active->plan : NULL;
    const mlff_chunk_limits limits = {(plan ? mlff_plan_param_bytes(plan) : 0) + (6u << 20), 1u << 18, 0};
    if (s == MLFF_OK)
        s = mlff_chunks_plan(&m->chunks, &deep, plan, &limits, &b, &m->work, &ctx->error);
    CHECK(s == MLFF_OK, "planning: %s", mlff_last_error(ctx));
    const int64_t n_chunks = s == MLFF_OK ? m->chunks.n_chunks : 0;
    printf("planner: %lld atoms in %lld chunks under 6 MB and 256 kB buffers, %d layer(s)\n", (long long)tb->n_atoms,
           (long long)n_chunks, layers);
    CHECK(n_chunks > 2, "%lld chunks under a small budget", (long long)n_chunks);
    int *owner = calloc((size_t)tb->n_atoms, sizeof *owner);
    int32_t *hop = malloc((size_t)tb->n_atoms * sizeof *hop), *queue = malloc((size_t)tb->n_atoms * sizeof *queue);
    CHECK(owner && hop && queue, "out of memory");
    for (int64_t k = 0; k < n_chunks && owner && hop && queue; k++) {
        s = mlff_chunks_select(&m->chunks, k, &m->work, &ctx->error);
        if (s == MLFF_OK)
            s = mlff_batch_fill(g, &b, &m->chunks.view, &m->work, &ctx->error);
        CHECK(s == MLFF_OK, "chunk %lld: %s", (long long)k, mlff_last_error(ctx));
        if (s != MLFF_OK)
            break;
        const mlff_atom_view *v = &m->chunks.view;
        for (int64_t l = 0; l < v->n_owned; l++)
            owner[v->batch_atom[l]]++;
        for (int64_t l = 1; l < v->n_atoms; l++)
            CHECK(l == v->n_owned || l == m->chunks.n_centers || v->batch_atom[l] > v->batch_atom[l - 1],
                  "chunk %lld: local atoms out of order", (long long)k);
        CHECK(layers > 1 || m->chunks.n_centers == v->n_owned, "chunk %lld: ghosts' pairs listed for one layer",
              (long long)k);
        CHECK(chunk_reaches(m, &m->chunks, layers, hop, queue),
              "chunk %lld: atoms within %d hops missing, or the pairs of those within %d", (long long)k, layers,
              layers - 1);
        size_t total, largest;
        bound_bytes(m, sizeof(float), &total, &largest);
        CHECK(largest <= limits.max_buffer, "chunk %lld: a tensor of %zu bytes", (long long)k, largest);
        CHECK(total <= limits.budget - mlff_plan_param_bytes(plan), "chunk %lld: %zu bytes of tensors", (long long)k, total);
    }
    for (int64_t a = 0; a < tb->n_atoms && n_chunks; a++)
        CHECK(owner[a] == 1, "atom %lld owned by %d chunks", (long long)a, owner[a]);
    free(owner);
    free(hop);
    free(queue);
    mlff_context_destroy(ctx);
    return n_chunks;
}

/* A box long along its third axis (two bins across the others): chunks
 * the device lists are cut across that axis. */
static void check_long_box(const char *dir)
{
    const char *box[] = {"water_box_64", NULL};
    test_batch tb;
    if (!build_batch(&tb, dir, box) || !replicate_last(&tb, (const int[3]){1, 1, 4})) {
        CHECK(0, "the 1x1x4 box could not be built");
        return;
    }
    const int64_t ghosts = check_same("a 1x1x4 box", &tb, MLFF_PRECISION_FLOAT32, 200);
    /* Slabs across the first axis would each hold half the box: every
     * other atom a ghost of every chunk. */
    CHECK(ghosts >= 0 && ghosts < tb.n_atoms / 2, "a chunk of the 1x1x4 box with %lld ghosts of %lld atoms",
          (long long)ghosts, (long long)tb.n_atoms);
    free_batch(&tb);
}

/* The water box repeated n x n x n in one pass against chunks of a
 * third of it (for a GPU, where large boxes fit one pass). */
static int check_large_box(const char *dir, int n)
{
    const char *box[] = {"water_box_64", NULL};
    test_batch tb;
    if (n < 1 || !build_batch(&tb, dir, box) || !replicate_last(&tb, (const int[3]){n, n, n}))
        return 1;
    check_same("a large box", &tb, MLFF_PRECISION_FLOAT32, tb.n_atoms / 3 + 1);
    free_batch(&tb);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s REFERENCE_DIR [REPEATS: only the box repeated so, one pass against chunks]\n",
                argv[0]);
        return 2;
    }
    if (argc == 3)
        return check_large_box(argv[1], atoi(argv[2]));
    const char *mixed[] = {"g2_CH3CONH2", "water_box_64_triclinic", NULL};
    const char *molecules[] = {"g2_CH4", "g2_C4H4S", NULL};
    test_batch tb;
    if (!build_batch(&tb, argv[1], mixed))
        return 1;
    check_same("a molecule and a box", &tb, MLFF_PRECISION_FLOAT64, 50);
    check_same("a molecule and a box", &tb, MLFF_PRECISION_FLOAT32, 50);
    check_planner(&tb, 1);
    free_batch(&tb);
    if (!build_batch(&tb, argv[1], molecules))
        return 1;
    check_same("molecules", &tb, MLFF_PRECISION_FLOAT64, 1);
    free_batch(&tb);
    /* Boxes wide enough for chunks of slabs that do not reach around. */
    const char *large[] = {"water_cluster_100", "water_box_64", NULL};
    if (!build_batch(&tb, argv[1], large) || !replicate_last(&tb, (const int[3]){2, 2, 2}))
        return 1;
    check_same("a cluster and a 2x2x2 box", &tb, MLFF_PRECISION_FLOAT32, 400);
    /* Deeper ghosts, and the pairs of the nearer ones, take more of the
     * budget: smaller chunks. */
    const int64_t one_layer = check_planner(&tb, 1), two_layers = check_planner(&tb, 2);
    CHECK(two_layers > one_layer, "%lld chunks for 2 layers, %lld for 1", (long long)two_layers,
          (long long)one_layer);
    free_batch(&tb);
    if (lists_on_device())
        check_long_box(argv[1]);
    return failures ? 1 : 0;
}
