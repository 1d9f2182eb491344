/*
 * Periodic water boxes of growing size (the 64-water reference box repeated
 * n x n x n): ANI-2x energy + forces + virial through the sparse path. For
 * each size, after a warm-up of a second (bench_util.h): median time of a
 * few calls with perturbed positions, the passes (atom chunks) per call,
 * the process's peak resident memory so far (sizes grow, so it is this
 * size's), and how far the energy per copy of the box is from TorchANI's
 * energy of one box (first call, exact positions).
 *
 *   bench_periodic REFERENCE_DIR [REPEATS] [threads] [cpu|opencl|vulkan] [TUNING]
 * REPEATS: the largest n (every n from 2 up), or a list such as 2,4,8,17.
 * TUNING: settings.tuning, such as pair_vectors=apart (core/tuning.h).
 * (peak memory is the host's; a GPU's own memory is not counted)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tests/common/reference.h"
#include "bench_util.h"
#include "mlff.h"

static int compute(mlff_model *model, mlff_context *ctx, const mlff_batch *b, mlff_results *r)
{
    if (mlff_compute(model, b, r) == MLFF_OK)
        return 1;
    fprintf(stderr, "%lld atoms: %s\n", (long long)b->system_offsets[1], mlff_last_error(ctx));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int repeats[64], n_repeats = 0;
    const char *list = argc > 2 ? argv[2] : "6";
    if (!strchr(list, ','))
        for (int n = 2; n <= atoi(list) && n_repeats < 64; n++)
            repeats[n_repeats++] = n;
    for (const char *p = list; strchr(list, ',') && *p && n_repeats < 64; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        repeats[n_repeats++] = atoi(p);
    reference box;
    if (!reference_load(&box, argv[1], "water_box_64"))
        return 1;
    mlff_settings s;
    mlff_default_settings(&s);
    s.device = bench_device(argc > 4 ? argv[4] : "cpu");
    s.n_threads = argc > 3 ? atoi(argv[3]) : 0;
    s.tuning = argc > 5 ? argv[5] : NULL;
    mlff_context *ctx;
    mlff_model *model;
    if (mlff_context_create(&s, &ctx) != MLFF_OK || mlff_model_load(ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "%s\n", mlff_last_error(ctx));
        return 1;
    }
    printf("device: %s, float32, energy + forces + virial, sparse path%s%s\n\n", mlff_device_description(ctx),
           s.tuning ? ", tuning " : "", s.tuning ? s.tuning : "");
    printf("| atoms | median ms | min ms | runs | passes | peak memory MB | E/copy - E(TorchANI) meV |\n"
           "|---:|---:|---:|---:|---:|---:|---:|\n");
    unsigned seed = 7;
    for (int i = 0; i < n_repeats; i++) {
        const int n = repeats[i];
        const int copies = n * n * n, atoms = box.n_atoms * copies;
        int32_t *z = malloc((size_t)atoms * sizeof *z);
        double *ref = malloc((size_t)atoms * 3 * sizeof *ref), *pos = malloc((size_t)atoms * 3 * sizeof *pos);
        double *forces = malloc((size_t)atoms * 3 * sizeof *forces), cell[9], virial[9], energy, times[20];
        for (int c = 0; c < copies; c++)
            for (int a = 0; a < box.n_atoms; a++) {
                const int k = c * box.n_atoms + a, shift[3] = {c % n, (c / n) % n, c / (n * n)};
                z[k] = box.species[a];
                for (int d = 0; d < 3; d++)
                    ref[3 * k + d] = box.positions[3 * a + d] + shift[0] * box.cell[d] +
                                     shift[1] * box.cell[3 + d] + shift[2] * box.cell[6 + d];
            }
        for (int k = 0; k < 9; k++)
            cell[k] = n * box.cell[k];
        uint8_t pbc[3] = {1, 1, 1};
        int64_t offsets[2] = {0, atoms};
        mlff_batch b = {1, offsets, z, pos, cell, pbc};
        mlff_results r = {.energies = &energy, .forces = forces, .virials = virial};
        const int runs = atoms > 300000 ? 2 : atoms > 30000 ? 3 : atoms > 5000 ? 10 : 20;
        /* Warm-up: the first call at the exact positions (for the energy),
         * the others, and the timed calls, perturbed. */
        const double started = bench_now();
        double energy_error = 0;
        for (int calls = 0; bench_warming(started, calls, 1); calls++) {
            bench_perturb(pos, ref, atoms, calls ? 0.01 : 0.0, &seed);
            if (!compute(model, ctx, &b, &r))
                return 1;
            if (calls == 0)
                energy_error = (energy / copies - box.energy) * 1e3;
        }
        mlff_stats before, after;
        mlff_get_stats(ctx, &before);
        for (int it = 0; it < runs; it++) {
            bench_perturb(pos, ref, atoms, 0.01, &seed);
            double t0 = bench_now();
            if (!compute(model, ctx, &b, &r))
                return 1;
            times[it] = bench_now() - t0;
        }
        mlff_get_stats(ctx, &after);
        qsort(times, (size_t)runs, sizeof *times, bench_compare_doubles);
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        printf("| %d | %.2f | %.2f | %d | %.0f | %.0f | %.2f |\n", atoms, 1e3 * times[runs / 2], 1e3 * times[0], runs,
               (double)(after.plan_executions - before.plan_executions) / runs,
               (double)usage.ru_maxrss / 1024.0, energy_error);
        fflush(stdout);
        free(z);
        free(ref);
        free(pos);
        free(forces);
    }
    mlff_context_destroy(ctx);
    reference_free(&box);
    return 0;
}
