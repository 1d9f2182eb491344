/*
 * An MD-like loop on a GPU backend (the periodic water box, atoms moving a
 * little every step, a Verlet skin) creates no device buffers once warm:
 * plan buffers and segment buffers are reused; and on Vulkan it records no
 * command buffer once warm, though the pair counts change (the sizes come
 * from the table of dispatches: backends/vulkan/vk_record.c). Counted
 * through the backend's statistics.
 * Usage: test_device_steady_state REFERENCE_DIR   (MLFF_TEST_DEVICE names the device)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

static mlff_backend_stats backend_stats(const mlff_context *ctx)
{
    mlff_backend_stats stats = {0};
    if (ctx->iface->get_stats)
        ctx->iface->get_stats(ctx->backend, &stats);
    return stats;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    reference r;
    if (!reference_load(&r, argv[1], "water_box_64"))
        return 1;
    mlff_context *ctx;
    mlff_model *model = test_open_model(&ctx, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_SPARSE, 1.0);
    int64_t offsets[2] = {0, r.n_atoms};
    double *pos = malloc((size_t)r.n_atoms * 3 * sizeof *pos);
    double *forces = malloc((size_t)r.n_atoms * 3 * sizeof *forces);
    mlff_batch b = {1, offsets, r.species, pos, r.cell, r.pbc};
    double energy;
    mlff_backend_stats warm = {0};
    unsigned seed = 11;
    for (int step = 0; step < 40; step++) {
        /* A random walk: pair counts drift, and the list is searched again
         * whenever some atom moved more than half the skin since the last search. */
        for (int k = 0; k < 3 * r.n_atoms; k++)
            pos[k] = (step ? pos[k] : r.positions[k]) + 0.12 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
        CHECK(mlff_evaluate(model, &b, &energy, forces) == MLFF_OK, "step %d: %s", step, mlff_last_error(ctx));
        if (step == 9)
            warm = backend_stats(ctx);
    }
    const mlff_backend_stats end = backend_stats(ctx);
    mlff_stats stats;
    mlff_get_stats(ctx, &stats);
    printf("%s: after 10 and 40 steps, device buffers created %llu and %llu, command buffers recorded %llu and "
           "%llu; neighbour searches %llu\n",
           mlff_device_description(ctx), (unsigned long long)warm.device_allocations,
           (unsigned long long)end.device_allocations, (unsigned long long)warm.recordings,
           (unsigned long long)end.recordings, (unsigned long long)stats.neighbor_builds);
    CHECK(warm.device_allocations > 0, "the backend counts no device buffers");
    CHECK(end.device_allocations == warm.device_allocations, "%llu device buffers created in the steady state",
          (unsigned long long)(end.device_allocations - warm.device_allocations));
    const int vulkan = !strcmp(ctx->iface->name, "vulkan");
    CHECK(!vulkan || warm.recordings > 0, "the Vulkan backend counts no recordings");
    CHECK(end.recordings == warm.recordings, "%llu command buffers recorded in the steady state",
          (unsigned long long)(end.recordings - warm.recordings));
    CHECK(stats.neighbor_builds > 1, "the jitter never triggered a new neighbour search");
    free(pos);
    free(forces);
    reference_free(&r);
    mlff_context_destroy(ctx);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
