/*
 * Compute alone, for comparing `mlff energy` end to end against it: every
 * frame of FILE is read into memory first (not timed), packed into the
 * batches `mlff energy` would make (the same atoms a batch, in the same
 * order), and only the library calls are timed, one after the other.
 *
 *   build/bench/bench_stream FILE [--device cpu|opencl|vulkan|auto] [--batch-atoms N]
 *                            [--model PATH] [--no-forces] [--repeat R]
 *
 * Prints the compute time of each repeat and the best, with atoms/s.
 * Compare with `time build/tools/mlff energy --forces FILE -o /dev/null`
 * (bench/RESULTS.md, "Streaming").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batcher.h"
#include "mlff.h"
#include "xyz.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct packed {
    int64_t n_systems, n_atoms;
    int64_t *offsets;
    int32_t *numbers;
    double *positions, *cells, *energies, *forces;
    uint8_t *pbc;
    int any_cell;
} packed;

int main(int argc, char **argv)
{
    const char *path = NULL, *model_path = NULL;
    long long batch_atoms = 0;
    int forces = 1, repeat = 3;
    mlff_settings settings;
    mlff_default_settings(&settings);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            settings.device = strcmp(d, "cpu") == 0      ? MLFF_DEVICE_CPU
                              : strcmp(d, "opencl") == 0 ? MLFF_DEVICE_OPENCL
                              : strcmp(d, "vulkan") == 0 ? MLFF_DEVICE_VULKAN
                                                         : MLFF_DEVICE_AUTO;
        } else if (strcmp(argv[i], "--batch-atoms") == 0 && i + 1 < argc) {
            batch_atoms = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            model_path = argv[++i];
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--no-forces") == 0) {
            forces = 0;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: bench_stream FILE [--device D] [--batch-atoms N] [--model PATH] "
                        "[--no-forces] [--repeat R]\n");
        return 2;
    }
    char err[XYZ_ERROR_SIZE];
    xyz_file file;
    if (xyz_read_file(path, &file, err, sizeof err) != XYZ_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    mlff_context *ctx = NULL;
    mlff_model *model = NULL;
    if (mlff_open(&settings, model_path, &ctx, &model) != MLFF_OK) {
        fprintf(stderr, "bench_stream: %s\n", ctx ? mlff_last_error(ctx) : "cannot open");
        return 1;
    }
    const char *device = mlff_device_description(ctx);
    int64_t target = batch_atoms > 0 ? batch_atoms : batch_target_atoms(device);

    /* The batches mlff energy makes: frames gathered until they hold target atoms. */
    size_t n_batches = 0;
    packed *batches = calloc(file.n_frames + 1, sizeof *batches);
    int64_t total_atoms = 0;
    for (size_t k = 0; k < file.n_frames;) {
        size_t first = k;
        int64_t atoms = 0;
        while (k < file.n_frames && atoms < target)
            atoms += file.frames[k++].n_atoms;
        packed *p = &batches[n_batches++];
        p->n_systems = (int64_t)(k - first);
        p->n_atoms = atoms;
        p->offsets = malloc((size_t)(p->n_systems + 1) * sizeof *p->offsets);
        p->numbers = malloc((size_t)atoms * sizeof *p->numbers);
        p->positions = malloc((size_t)atoms * 3 * sizeof *p->positions);
        p->cells = calloc((size_t)p->n_systems * 9, sizeof *p->cells);
        p->pbc = calloc((size_t)p->n_systems * 3, 1);
        p->energies = malloc((size_t)p->n_systems * sizeof *p->energies);
        p->forces = forces ? malloc((size_t)atoms * 3 * sizeof *p->forces) : NULL;
        int64_t a = 0;
        p->offsets[0] = 0;
        for (size_t j = first; j < k; j++) {
            const xyz_frame *f = &file.frames[j];
            size_t s = j - first;
            memcpy(p->numbers + a, f->numbers, (size_t)f->n_atoms * sizeof *p->numbers);
            memcpy(p->positions + 3 * a, f->positions, 3 * (size_t)f->n_atoms * sizeof *p->positions);
            memcpy(p->cells + 9 * s, f->cell, sizeof f->cell);
            memcpy(p->pbc + 3 * s, f->pbc, 3);
            p->any_cell |= f->has_cell;
            a += f->n_atoms;
            p->offsets[s + 1] = a;
        }
        total_atoms += atoms;
    }
    printf("device: %s\n%zu frames, %lld atoms, %zu batches of about %lld atoms\n", device, file.n_frames,
           (long long)total_atoms, n_batches, (long long)target);
    double best = 1e300;
    for (int r = 0; r < repeat; r++) {
        double start = now();
        for (size_t b = 0; b < n_batches; b++) {
            packed *p = &batches[b];
            mlff_batch in = {p->n_systems, p->offsets, p->numbers, p->positions,
                             p->any_cell ? p->cells : NULL, p->pbc};
            mlff_results out = {.energies = p->energies, .forces = p->forces};
            if (mlff_compute(model, &in, &out) != MLFF_OK) {
                fprintf(stderr, "bench_stream: batch %zu: %s\n", b, mlff_last_error(ctx));
                return 1;
            }
        }
        double t = now() - start;
        printf("compute alone: %.3f s, %.0f atoms/s\n", t, (double)total_atoms / t);
        if (t < best)
            best = t;
    }
    printf("best: %.3f s, %.0f atoms/s, %.0f frames/s\n", best, (double)total_atoms / best,
           (double)file.n_frames / best);
    for (size_t b = 0; b < n_batches; b++) {
        free(batches[b].offsets);
        free(batches[b].numbers);
        free(batches[b].positions);
        free(batches[b].cells);
        free(batches[b].pbc);
        free(batches[b].energies);
        free(batches[b].forces);
    }
    free(batches);
    xyz_file_free(&file);
    mlff_context_destroy(ctx);
    return 0;
}
