/*
 * Hessians and Hessian-vector products: the forces' tangent (the tangent
 * pass over the reverse pass, core/tangent.c) along T directions of the
 * positions at once. A batch's full Hessians take each system's own 3N_s
 * directions side by side, T at a time: memory grows with T, never with
 * the Hessians' size, and a system of any size is a number of passes.
 * A large molecule (tuning record: hessian_groups_from_atoms) is instead a
 * sum over groups of its atoms (hessian_groups.h): a direction moves only
 * what lies within the model's reach of it, so that N atoms cost N times
 * their neighbours' directions instead of N times 3N, and a pass holds a
 * group's tangents instead of the whole molecule's.
 */
#include <stdlib.h>
#include <string.h>

#include "evaluate.h"
#include "hessian_groups.h"

/* The directions one pass takes at most: its tangents cost about a
 * gradient's memory each (T times the plan's per-atom rows), which the
 * chunks then bound like any batch's. */
#define HESSIAN_MOST_DIRECTIONS 96

static int64_t largest_system(const mlff_batch *b)
{
    int64_t most = 0;
    for (int64_t s = 0; s < b->n_systems; s++)
        if (b->system_offsets[s + 1] - b->system_offsets[s] > most)
            most = b->system_offsets[s + 1] - b->system_offsets[s];
    return most;
}

/* The evaluation prepared with a tangent pass of t_count directions (atoms
 * from n_owned on ghosts reaching ghost_depth, as mlff_evaluate_prepare
 * takes them), and its directions and products ([n_atoms, 3 t_count] each)
 * in the model's scratch. */
static mlff_status prepare_passes(mlff_model *m, const mlff_batch *batch, int64_t n_owned, double ghost_depth,
                                  int64_t t_count, double **directions, double **products)
{
    mlff_error *err = &m->ctx->error;
    const mlff_plan_extras extras = {.tangents = t_count};
    mlff_status s = mlff_evaluate_prepare(m, batch, n_owned, ghost_depth, &extras);
    if (s != MLFF_OK)
        return s;
    const size_t bytes = (size_t)m->work.n_atoms * 3 * (size_t)t_count * sizeof(double);
    double *scratch = mlff_host_array_reserve(&m->hessian_scratch, 2 * bytes, err);
    if (!scratch)
        return err->status;
    *directions = scratch;
    *products = scratch + bytes / sizeof(double);
    return MLFF_OK;
}

/* Directions first .. first + t_count - 1 of the pass: each moves one
 * coordinate, coordinate first + t of each system's own atoms. */
static void unit_directions(double *dir, const mlff_batch *batch, int64_t n_atoms, int64_t first, int64_t t_count)
{
    const int64_t cols = 3 * t_count;
    memset(dir, 0, (size_t)(n_atoms * cols) * sizeof *dir);
    for (int64_t y = 0; y < batch->n_systems; y++)
        for (int64_t a = batch->system_offsets[y]; a < batch->system_offsets[y + 1]; a++)
            for (int c = 0; c < 3; c++) {
                const int64_t t = 3 * (a - batch->system_offsets[y]) + c - first;
                if (t >= 0 && t < t_count)
                    dir[a * cols + 3 * t + c] = 1.0;
            }
}

/* Every system of the batch side by side: system y's block at
 * hessians + block_at[y]; energies and forces (may be NULL) from the first pass. */
static mlff_status whole_systems(mlff_model *m, const mlff_batch *batch, double *energies, double *forces,
                                 double *hessians, const int64_t *block_at)
{
    const int64_t directions = 3 * largest_system(batch);
    const int64_t t_count = directions < HESSIAN_MOST_DIRECTIONS ? (directions > 0 ? directions : 1)
                                                                   : HESSIAN_MOST_DIRECTIONS;
    double *dir = NULL, *prod = NULL;
    mlff_status s = prepare_passes(m, batch, -1, 0, t_count, &dir, &prod);
    const int64_t cols = 3 * t_count;
    for (int64_t first = 0; s == MLFF_OK && first < (directions > 0 ? directions : 1); first += t_count) {
        unit_directions(dir, batch, m->work.n_atoms, first, t_count);
        m->work.tangents = dir;
        const mlff_run_out o = {
            .outputs = (1u << MLFF_OUTPUT_FORCE_TANGENTS) |
                       (first == 0 ? (energies ? 1u << MLFF_OUTPUT_ENERGY : 0) | (forces ? 1u << MLFF_OUTPUT_FORCES : 0)
                                   : 0),
            .energies = first == 0 ? energies : NULL,
            .forces = first == 0 ? forces : NULL,
            .force_tangents = prod,
        };
        s = mlff_evaluate_run(m, batch, &o, 0);
        /* H = -dF/dx: column first + t of a system's block from its atoms' rows. */
        for (int64_t y = 0; s == MLFF_OK && hessians && y < batch->n_systems; y++) {
            const int64_t a0 = batch->system_offsets[y], n = 3 * (batch->system_offsets[y + 1] - a0);
            double *h = hessians + block_at[y];
            for (int64_t t = 0; t < t_count && first + t < n; t++)
                for (int64_t row = 0; row < n; row++)
                    h[row * n + first + t] = -prod[(a0 + row / 3) * cols + 3 * t + row % 3];
        }
    }
    m->work.tangents = NULL;
    return s;
}

/* Whether system y is a molecule (no periodic axis) the tuning record
 * sends to groups. */
static int by_groups(const mlff_model *m, const mlff_batch *b, int64_t y)
{
    const int64_t from = m->ctx->tuning.hessian_groups_from_atoms;
    if (from == MLFF_TUNING_NEVER || b->system_offsets[y + 1] - b->system_offsets[y] < from)
        return 0;
    for (int c = 0; b->pbc && c < 3; c++)
        if (b->pbc[3 * y + c])
            return 0;
    return 1;
}

/* The atoms a group owns: set, or by the molecule's size, so that a
 * pass's tangents (owned atoms x directions x the plan's per-atom rows)
 * stay near the Hessian's own size, which grows as the atoms squared. */
static int64_t group_atoms(const mlff_model *m, int64_t n_atoms)
{
    if (m->ctx->tuning.hessian_group_atoms > 0)
        return m->ctx->tuning.hessian_group_atoms;
    const int64_t per = m->ctx->real == MLFF_DTYPE_F64 ? 192 : 96;
    return n_atoms / per > 8 ? n_atoms / per : 8;
}

/* One molecule's Hessian h ((3n)^2, overwritten) as the sum over groups of
 * its atoms (hessian_groups.h): each group a subdomain of its atoms as
 * owned and the atoms within the model's reach as ghosts, taken along
 * those atoms' coordinates alone. */
static mlff_status grouped_molecule(mlff_model *m, int64_t n, const int32_t *z, const double *pos, double *h)
{
    mlff_error *err = &m->ctx->error;
    const double reach = m->interaction_layers * m->cutoff;
    mlff_hessian_groups g;
    mlff_status s = mlff_hessian_groups_make(&g, n, pos, group_atoms(m, n), err);
    if (s != MLFF_OK)
        return s;
    int32_t *sub_z = malloc((size_t)n * sizeof *sub_z);
    double *sub_pos = malloc((size_t)n * 3 * sizeof *sub_pos);
    if (!sub_z || !sub_pos)
        s = mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "no memory for the Hessian's groups of %lld atoms", (long long)n);
    memset(h, 0, (size_t)(9 * n * n) * sizeof *h);
    const int64_t m3 = 3 * n, t_count = HESSIAN_MOST_DIRECTIONS, cols = 3 * t_count;
    for (int64_t k = 0; s == MLFF_OK && k < g.n_groups; k++) {
        const int64_t n_sub = mlff_hessian_group_atoms(&g, k, pos, reach);
        for (int64_t l = 0; l < n_sub; l++) {
            sub_z[l] = z[g.local[l]];
            memcpy(sub_pos + 3 * l, pos + 3 * g.local[l], 3 * sizeof *sub_pos);
        }
        const int64_t offsets[2] = {0, n_sub};
        const mlff_batch sub = {1, offsets, sub_z, sub_pos, NULL, NULL};
        double *dir = NULL, *prod = NULL;
        s = prepare_passes(m, &sub, g.start[k + 1] - g.start[k], reach, t_count, &dir, &prod);
        for (int64_t first = 0; s == MLFF_OK && first < 3 * n_sub; first += t_count) {
            unit_directions(dir, &sub, n_sub, first, t_count);
            m->work.tangents = dir;
            s = mlff_evaluate_run(m, &sub, &(mlff_run_out){.outputs = 1u << MLFF_OUTPUT_FORCE_TANGENTS, .force_tangents = prod}, 0);
            /* The group's energy's second derivatives add to the molecule's, H = -dF/dx. */
            for (int64_t t = 0; s == MLFF_OK && t < t_count && first + t < 3 * n_sub; t++) {
                const int64_t col = 3 * g.local[(first + t) / 3] + (first + t) % 3;
                for (int64_t row = 0; row < 3 * n_sub; row++)
                    h[(3 * g.local[row / 3] + row % 3) * m3 + col] -= prod[(row / 3) * cols + 3 * t + row % 3];
            }
        }
        m->work.tangents = NULL;
    }
    free(sub_z);
    free(sub_pos);
    mlff_hessian_groups_free(&g);
    return s;
}

/* The systems of b that take their Hessian whole, as a batch of their own
 * (arrays [n_atoms] each, offsets [n_systems + 1]); their block offsets in
 * block_at. */
typedef struct whole_batch {
    mlff_batch batch;
    int64_t *offsets, *block_at;
    int32_t *z;
    double *pos, *cells;
    uint8_t *pbc;
} whole_batch;

static void whole_batch_free(whole_batch *w)
{
    free(w->offsets);
    free(w->block_at);
    free(w->z);
    free(w->pos);
    free(w->cells);
    free(w->pbc);
}

static mlff_status whole_batch_make(const mlff_model *m, const mlff_batch *b, whole_batch *w, mlff_error *err)
{
    memset(w, 0, sizeof *w);
    const int64_t n_atoms = b->system_offsets[b->n_systems];
    w->offsets = malloc((size_t)(b->n_systems + 1) * sizeof *w->offsets);
    w->block_at = malloc((size_t)(b->n_systems + 1) * sizeof *w->block_at);
    w->z = malloc((size_t)(n_atoms + 1) * sizeof *w->z);
    w->pos = malloc((size_t)(3 * n_atoms + 1) * sizeof *w->pos);
    w->cells = b->cells ? malloc((size_t)b->n_systems * 9 * sizeof *w->cells) : NULL;
    w->pbc = b->pbc ? malloc((size_t)b->n_systems * 3) : NULL;
    if (!w->offsets || !w->block_at || !w->z || !w->pos || (b->cells && !w->cells) || (b->pbc && !w->pbc)) {
        whole_batch_free(w);
        memset(w, 0, sizeof *w);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "no memory for a batch of %lld atoms", (long long)n_atoms);
    }
    int64_t systems = 0, at = 0;
    w->offsets[0] = 0;
    for (int64_t y = 0; y < b->n_systems; y++) {
        const int64_t a0 = b->system_offsets[y], n = b->system_offsets[y + 1] - a0;
        if (!by_groups(m, b, y)) {
            const int64_t a = w->offsets[systems];
            memcpy(w->z + a, b->atomic_numbers + a0, (size_t)n * sizeof *w->z);
            memcpy(w->pos + 3 * a, b->positions + 3 * a0, (size_t)(3 * n) * sizeof *w->pos);
            if (b->cells)
                memcpy(w->cells + 9 * systems, b->cells + 9 * y, 9 * sizeof *w->cells);
            if (b->pbc)
                memcpy(w->pbc + 3 * systems, b->pbc + 3 * y, 3);
            w->block_at[systems] = at;
            w->offsets[++systems] = a + n;
        }
        at += 9 * n * n;
    }
    w->batch = (mlff_batch){systems, w->offsets, w->z, w->pos, w->cells, w->pbc};
    return MLFF_OK;
}

mlff_status mlff_model_hessians(mlff_model *m, const mlff_batch *batch, const mlff_hessian_results *r)
{
    mlff_error *err = &m->ctx->error;
    mlff_profile_begin(&m->profile);
    if (batch->n_systems < 0 || !batch->system_offsets)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "a batch without systems");
    int64_t grouped = 0;
    for (int64_t y = 0; y < batch->n_systems; y++)
        grouped += by_groups(m, batch, y);
    /* The systems taken whole side by side, their first pass giving the
     * energies and forces when all are; else these in a pass of their own,
     * then each large molecule by groups. */
    mlff_status s = MLFF_OK;
    if (grouped && (r->energies || r->forces))
        s = mlff_model_run(m, batch, &(mlff_results){.energies = r->energies, .forces = r->forces});
    if (s != MLFF_OK || (grouped && !r->hessians))
        return s;
    whole_batch whole;
    s = whole_batch_make(m, batch, &whole, err);
    if (s == MLFF_OK && (whole.batch.n_systems > 0 || !grouped))
        s = whole_systems(m, &whole.batch, grouped ? NULL : r->energies, grouped ? NULL : r->forces, r->hessians,
                          whole.block_at);
    for (int64_t y = 0, at = 0; s == MLFF_OK && y < batch->n_systems; y++) {
        const int64_t a0 = batch->system_offsets[y], n = batch->system_offsets[y + 1] - a0;
        if (by_groups(m, batch, y))
            s = grouped_molecule(m, n, batch->atomic_numbers + a0, batch->positions + 3 * a0, r->hessians + at);
        at += 9 * n * n;
    }
    whole_batch_free(&whole);
    return s;
}

mlff_status mlff_model_hessian_products(mlff_model *m, const mlff_batch *batch, int64_t n_vectors,
                                        const double *vectors, double *products)
{
    mlff_error *err = &m->ctx->error;
    mlff_profile_begin(&m->profile);
    if (n_vectors < 1 || !vectors || !products)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "Hessian-vector products need n_vectors >= 1 and both arrays");
    const int64_t t_count = n_vectors < HESSIAN_MOST_DIRECTIONS ? n_vectors : HESSIAN_MOST_DIRECTIONS;
    double *dir = NULL, *prod = NULL;
    mlff_status s = prepare_passes(m, batch, -1, 0, t_count, &dir, &prod);
    const int64_t n_atoms = m->work.n_atoms, cols = 3 * t_count;
    for (int64_t first = 0; s == MLFF_OK && first < n_vectors; first += t_count) {
        memset(dir, 0, (size_t)(n_atoms * cols) * sizeof *dir);
        for (int64_t t = 0; t < t_count && first + t < n_vectors; t++)
            for (int64_t a = 0; a < n_atoms; a++)
                for (int c = 0; c < 3; c++)
                    dir[a * cols + 3 * t + c] = vectors[(first + t) * n_atoms * 3 + 3 * a + c];
        m->work.tangents = dir;
        const mlff_run_out o = {.outputs = 1u << MLFF_OUTPUT_FORCE_TANGENTS, .force_tangents = prod};
        s = mlff_evaluate_run(m, batch, &o, 0);
        for (int64_t t = 0; s == MLFF_OK && t < t_count && first + t < n_vectors; t++)
            for (int64_t a = 0; a < n_atoms; a++)
                for (int c = 0; c < 3; c++)
                    products[(first + t) * n_atoms * 3 + 3 * a + c] = -prod[a * cols + 3 * t + c];
    }
    m->work.tangents = NULL;
    return s;
}
