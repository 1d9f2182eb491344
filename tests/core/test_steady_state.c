/*
 * An MD-like loop (same shapes, moved atoms) allocates nothing once warm:
 * the allocator functions are wrapped at link time (--wrap) and counted.
 * Usage: test_steady_state REFERENCE_DIR
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

static long allocations;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);

void *__wrap_malloc(size_t size)
{
    allocations++;
    return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    allocations++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    allocations++;
    return __real_realloc(p, size);
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    allocations++;
    return __real_aligned_alloc(alignment, size);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    reference r;
    if (!reference_load(&r, argv[1], "water_cluster_100"))
        return 1;
    int failures = 0;
    for (int precision = 0; precision < 2; precision++) {
        mlff_context *ctx;
        mlff_model *model = test_open_model(&ctx, precision ? MLFF_PRECISION_FLOAT64 : MLFF_PRECISION_FLOAT32,
                                            MLFF_NEIGHBORS_AUTO, 0.0);
        int64_t offsets[2] = {0, r.n_atoms};
        mlff_batch b = {1, offsets, r.species, r.positions, NULL, NULL};
        double energy, *forces = malloc((size_t)r.n_atoms * 3 * sizeof *forces);
        long before = 0;
        for (int step = 0; step < 5; step++) {
            if (step == 2)
                before = allocations; /* two warm-up steps */
            for (int k = 0; k < 3 * r.n_atoms; k++)
                r.positions[k] += 1e-3 * (double)((k * 7 + step) % 5 - 2);
            if (mlff_evaluate(model, &b, &energy, forces) != MLFF_OK)
                return 1;
        }
        long steady = allocations - before;
        printf("%s: %ld allocations in 3 steady-state evaluations\n", precision ? "float64" : "float32",
               steady);
        failures += steady != 0;
        free(forces);
        mlff_context_destroy(ctx);
    }
    reference_free(&r);
    return failures ? 1 : 0;
}
