/*
 * Dense (all pairs) against sparse (cell lists) pair search, to set the
 * size below which a device uses the dense path: ANI-2x energy + forces of
 * the first k molecules of the 100-water cluster, for growing k, median of
 * repeated calls with perturbed positions, both paths on the same device.
 *
 *   bench_neighbors REFERENCE_DIR [cpu|opencl|vulkan]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/reference.h"
#include "bench_util.h"
#include "mlff.h"

static double median_call(mlff_model *model, const reference *r, int atoms)
{
    double *pos = malloc((size_t)atoms * 3 * sizeof *pos), *forces = malloc((size_t)atoms * 3 * sizeof *forces);
    double times[101], energy;
    int64_t offsets[2] = {0, atoms};
    mlff_batch b = {1, offsets, r->species, pos, NULL, NULL};
    unsigned seed = 3;
    int runs = 0;
    for (int it = -5; it < 101; it++) {
        for (int k = 0; k < 3 * atoms; k++)
            pos[k] = r->positions[k] + 0.01 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
        double t0 = bench_now();
        if (mlff_evaluate(model, &b, &energy, forces) != MLFF_OK)
            return -1;
        if (it >= 0)
            times[runs++] = bench_now() - t0;
    }
    qsort(times, (size_t)runs, sizeof *times, bench_compare_doubles);
    free(pos);
    free(forces);
    return times[runs / 2];
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    reference cluster;
    if (!reference_load(&cluster, argv[1], "water_cluster_100"))
        return 1;
    mlff_model *models[2];
    mlff_context *ctxs[2];
    for (int k = 0; k < 2; k++) {
        mlff_settings s;
        mlff_default_settings(&s);
        s.device = bench_device(argc > 2 ? argv[2] : "cpu");
        s.neighbors = k == 0 ? MLFF_NEIGHBORS_DENSE : MLFF_NEIGHBORS_SPARSE;
        if (mlff_context_create(&s, &ctxs[k]) != MLFF_OK || mlff_model_load(ctxs[k], NULL, &models[k]) != MLFF_OK) {
            fprintf(stderr, "%s\n", mlff_last_error(ctxs[k]));
            return 1;
        }
    }
    printf("device: %s, float32, energy + forces\n\n", mlff_device_description(ctxs[0]));
    printf("| atoms | dense ms | sparse ms | faster |\n|---:|---:|---:|---|\n");
    static const int molecules[] = {2, 5, 10, 12, 14, 16, 18, 20, 30, 50, 100};
    for (size_t k = 0; k < sizeof molecules / sizeof *molecules; k++) {
        const int atoms = 3 * molecules[k];
        const double dense = median_call(models[0], &cluster, atoms), sparse = median_call(models[1], &cluster, atoms);
        if (dense < 0 || sparse < 0) {
            fprintf(stderr, "%s %s\n", mlff_last_error(ctxs[0]), mlff_last_error(ctxs[1]));
            return 1;
        }
        printf("| %d | %.3f | %.3f | %s |\n", atoms, 1e3 * dense, 1e3 * sparse, dense < sparse ? "dense" : "sparse");
        fflush(stdout);
    }
    for (int k = 0; k < 2; k++)
        mlff_context_destroy(ctxs[k]);
    reference_free(&cluster);
    return 0;
}
