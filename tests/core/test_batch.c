/*
 * One batch of different molecules (and an empty system) gives the same
 * numbers as each molecule alone, in one plan execution; repeating a batch
 * of the same shape allocates nothing new. Each molecule alone runs through
 * the plan of its own elements, nine sets, more than a model keeps: once
 * that stream fills the slots, plans of more elements serve (up to the plan
 * of every element) instead of a plan made at every call, with the same
 * numbers to rounding.
 * Usage: test_batch REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

static void run(mlff_precision precision, const char *dir)
{
    enum { N = 14 };
    reference refs[N] = {0};
    int n = 0;
    for (int k = 0; reference_molecules[k]; k++)
        check(reference_load(&refs[n++], dir, reference_molecules[k]), "load reference");
    /* An empty system in the middle must not disturb its neighbours. */
    int64_t offsets[N + 2] = {0};
    int64_t n_atoms = 0;
    for (int s = 0, k = 0; s <= n; s++) {
        if (s != 3)
            n_atoms += refs[k++].n_atoms;
        offsets[s + 1] = n_atoms;
    }
    int32_t *z = malloc((size_t)n_atoms * sizeof *z);
    double *pos = malloc((size_t)n_atoms * 3 * sizeof *pos);
    double *forces = malloc((size_t)n_atoms * 3 * sizeof *forces);
    double *alone_f = malloc((size_t)n_atoms * 3 * sizeof *alone_f);
    double energies[N + 1], alone_e[N + 1];
    for (int s = 0, k = 0; s <= n; s++) {
        if (s == 3)
            continue;
        memcpy(z + offsets[s], refs[k].species, (size_t)refs[k].n_atoms * sizeof *z);
        memcpy(pos + 3 * offsets[s], refs[k].positions, (size_t)refs[k].n_atoms * 3 * sizeof *pos);
        k++;
    }

    mlff_context *ctx;
    mlff_model *model = test_open_model(&ctx, precision, MLFF_NEIGHBORS_AUTO, 0.0);

    const double e_tol = precision == MLFF_PRECISION_FLOAT64 ? 1e-9 : 1e-5;
    const double f_tol = precision == MLFF_PRECISION_FLOAT64 ? 1e-10 : 1e-5;
    mlff_stats before, after;
    for (int round = 0; round < 2; round++) {
        double e;
        double *f = malloc((size_t)n_atoms * 3 * sizeof *f);
        for (int s = 0; f && s <= n; s++) {
            int64_t one[2] = {0, offsets[s + 1] - offsets[s]};
            mlff_batch b = {1, one, z + offsets[s], pos + 3 * offsets[s], NULL, NULL};
            double *mine = round == 0 ? alone_f : f;
            check(mlff_evaluate(model, &b, round == 0 ? &alone_e[s] : &e, mine + 3 * offsets[s]) == MLFF_OK,
                  "evaluate alone");
            double df = 0;
            for (int64_t k = 3 * offsets[s]; round == 1 && k < 3 * offsets[s + 1]; k++)
                df = fmax(df, fabs(f[k] - alone_f[k]));
            check(round == 0 || (fabs(e - alone_e[s]) <= e_tol && df <= f_tol),
                  "another plan of the same elements gives the same numbers");
        }
        free(f);
        mlff_get_stats(ctx, round == 0 ? &before : &after);
    }
    printf("plans for the elements of each molecule alone: %llu made in the first round, %llu in the second\n",
           (unsigned long long)before.element_plans, (unsigned long long)(after.element_plans - before.element_plans));
    check(before.element_plans >= 7, "a plan per set of elements while there are free slots");
    check(after.element_plans == before.element_plans,
          "in a stream of more sets than slots, plans that hold the sets serve: none made at every call");

    mlff_get_stats(ctx, &before);
    mlff_batch batch = {n + 1, offsets, z, pos, NULL, NULL};
    check(mlff_evaluate(model, &batch, energies, forces) == MLFF_OK, "evaluate the batch");
    mlff_get_stats(ctx, &after);
    check(after.plan_executions == before.plan_executions + 1, "the batch runs as one plan execution");

    double worst_e = 0, worst_f = 0;
    for (int s = 0; s <= n; s++)
        worst_e = fmax(worst_e, fabs(energies[s] - alone_e[s]));
    for (int64_t k = 0; k < 3 * n_atoms; k++)
        worst_f = fmax(worst_f, fabs(forces[k] - alone_f[k]));
    printf("%s: batch of %d systems vs one by one: energy %.2e eV, forces %.2e eV/A\n",
           precision == MLFF_PRECISION_FLOAT64 ? "float64" : "float32", n + 1, worst_e, worst_f);
    check(worst_e <= e_tol && worst_f <= f_tol, "batch equals one by one");
    check(energies[3] == 0.0, "an empty system has zero energy");

    /* Same shapes again with moved atoms, as in MD: no new buffers. */
    for (int64_t k = 0; k < 3 * n_atoms; k++)
        pos[k] += 1e-3 * sin((double)k);
    mlff_get_stats(ctx, &before);
    check(mlff_evaluate(model, &batch, energies, forces) == MLFF_OK, "evaluate moved batch");
    mlff_get_stats(ctx, &after);
    check(after.plan_builds == before.plan_builds, "a repeated shape allocates no new buffers");

    mlff_context_destroy(ctx);
    for (int k = 0; k < n; k++)
        reference_free(&refs[k]);
    free(z);
    free(pos);
    free(forces);
    free(alone_f);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    run(MLFF_PRECISION_FLOAT64, argv[1]);
    run(MLFF_PRECISION_FLOAT32, argv[1]);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
