/*
 * Hessians and Hessian-vector products: the forces' tangent (the tangent
 * pass over the reverse pass, core/tangent.c) along T directions of the
 * positions at once. A batch's full Hessians take each system's own 3N_s
 * directions side by side, T at a time: memory grows with T, never with
 * the Hessians' size, and a system of any size is a number of passes.
 */
#include <stdlib.h>
#include <string.h>

#include "evaluate.h"

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

/* Where system s's block starts among the batch's Hessians. */
static int64_t block_start(const mlff_batch *b, int64_t s)
{
    int64_t at = 0;
    for (int64_t y = 0; y < s; y++) {
        const int64_t n = 3 * (b->system_offsets[y + 1] - b->system_offsets[y]);
        at += n * n;
    }
    return at;
}

/* The host arrays of a pass: its directions and the forces' tangent, [n_atoms, 3T] each. */
/* The evaluation prepared with a tangent pass of t_count directions, and
 * its directions and products ([n_atoms, 3 t_count] each) in the model's
 * scratch. */
static mlff_status prepare_passes(mlff_model *m, const mlff_batch *batch, int64_t t_count, double **directions,
                                  double **products)
{
    mlff_error *err = &m->ctx->error;
    const mlff_plan_extras extras = {.tangents = t_count};
    mlff_status s = mlff_evaluate_prepare(m, batch, -1, 0, &extras);
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

mlff_status mlff_model_hessians(mlff_model *m, const mlff_batch *batch, const mlff_hessian_results *r)
{
    mlff_error *err = &m->ctx->error;
    mlff_profile_begin(&m->profile);
    if (batch->n_systems < 0 || !batch->system_offsets)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "a batch without systems");
    const int64_t directions = 3 * largest_system(batch);
    const int64_t t_count = directions < HESSIAN_MOST_DIRECTIONS ? (directions > 0 ? directions : 1)
                                                                   : HESSIAN_MOST_DIRECTIONS;
    double *dir = NULL, *prod = NULL;
    mlff_status s = prepare_passes(m, batch, t_count, &dir, &prod);
    const int64_t n_atoms = m->work.n_atoms, cols = 3 * t_count;
    for (int64_t first = 0; s == MLFF_OK && first < (directions > 0 ? directions : 1); first += t_count) {
        /* Direction first + t moves coordinate first + t of each system's own atoms. */
        memset(dir, 0, (size_t)(n_atoms * cols) * sizeof *dir);
        for (int64_t y = 0; y < batch->n_systems; y++)
            for (int64_t a = batch->system_offsets[y]; a < batch->system_offsets[y + 1]; a++)
                for (int c = 0; c < 3; c++) {
                    const int64_t t = 3 * (a - batch->system_offsets[y]) + c - first;
                    if (t >= 0 && t < t_count)
                        dir[a * cols + 3 * t + c] = 1.0;
                }
        m->work.tangents = dir;
        const mlff_run_out o = {
            .outputs = (1u << MLFF_OUTPUT_FORCE_TANGENTS) |
                       (first == 0 ? (r->energies ? 1u << MLFF_OUTPUT_ENERGY : 0) |
                                         (r->forces ? 1u << MLFF_OUTPUT_FORCES : 0)
                                   : 0),
            .energies = first == 0 ? r->energies : NULL,
            .forces = first == 0 ? r->forces : NULL,
            .force_tangents = prod,
        };
        s = mlff_evaluate_run(m, batch, &o, 0);
        /* H = -dF/dx: column first + t of a system's block from its atoms' rows. */
        for (int64_t y = 0; s == MLFF_OK && r->hessians && y < batch->n_systems; y++) {
            const int64_t a0 = batch->system_offsets[y], n = 3 * (batch->system_offsets[y + 1] - a0);
            double *h = r->hessians + block_start(batch, y);
            for (int64_t t = 0; t < t_count && first + t < n; t++)
                for (int64_t row = 0; row < n; row++)
                    h[row * n + first + t] = -prod[(a0 + row / 3) * cols + 3 * t + row % 3];
        }
    }
    m->work.tangents = NULL;
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
    mlff_status s = prepare_passes(m, batch, t_count, &dir, &prod);
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
