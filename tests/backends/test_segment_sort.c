/*
 * The device's segment sort gives the host's CSR exactly (both are stable
 * sorts by key, so every segment sum adds in the same order): a batch of
 * periodic boxes, the water cluster and molecules has energies, forces and
 * virials equal to the last bit with MLFF_SEGMENT_SORT=host and =device.
 * And an unchanged index keeps its sort: repeating a call sorts nothing
 * (from the third call on: a device sort asks for the host copy that
 * recognises an unchanged index from the next write on). Then the atoms
 * move, the pair lists change, and the device finds most of its indices in
 * order already (offsets only, no radix passes): the same bits again. With
 * the device's pair lists (MLFF_CELL_LISTS=device), which are symmetric, the
 * pair gradients sort nothing by neighbour either, in one launch or (as
 * long lists take it; MLFF_SEGMENT_SORT=device_unfused) two.
 * Usage: test_segment_sort REFERENCE_DIR   (MLFF_TEST_DEVICE names the device)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

static const char *const systems[] = {"water_box_64_triclinic", "water_box_64", "water_cluster_100", "g2_CH4",
                                      "g2_C6H6", "g2_CH3Cl"};
#define N_SYSTEMS (int)(sizeof systems / sizeof *systems)

typedef struct batch_data {
    int64_t offsets[N_SYSTEMS + 1];
    int32_t *species;
    double *positions, cells[9 * N_SYSTEMS];
    uint8_t pbc[3 * N_SYSTEMS];
} batch_data;

static int load(batch_data *d, const char *dir)
{
    reference r[N_SYSTEMS];
    memset(d, 0, sizeof *d);
    for (int s = 0; s < N_SYSTEMS; s++) {
        if (!reference_load(&r[s], dir, systems[s]))
            return 0;
        d->offsets[s + 1] = d->offsets[s] + r[s].n_atoms;
    }
    const int64_t n = d->offsets[N_SYSTEMS];
    d->species = malloc((size_t)n * sizeof *d->species);
    d->positions = malloc((size_t)n * 3 * sizeof *d->positions);
    if (!d->species || !d->positions)
        return 0;
    for (int s = 0; s < N_SYSTEMS; s++) {
        memcpy(d->species + d->offsets[s], r[s].species, (size_t)r[s].n_atoms * sizeof *d->species);
        memcpy(d->positions + 3 * d->offsets[s], r[s].positions, (size_t)r[s].n_atoms * 3 * sizeof(double));
        memcpy(d->cells + 9 * s, r[s].cell, sizeof r[s].cell);
        memcpy(d->pbc + 3 * s, r[s].pbc, sizeof r[s].pbc);
        reference_free(&r[s]);
    }
    return 1;
}

static mlff_backend_stats backend_stats(const mlff_context *ctx)
{
    mlff_backend_stats stats = {0};
    ctx->iface->get_stats(ctx->backend, &stats);
    return stats;
}

/* Energies, forces, virials with the sort `where`, into out (10 per system,
 * 3 per atom): after two calls, the third call's, then with every atom
 * moved (moved_out). */
static void evaluate(batch_data *d, const char *where, double *out, double *moved_out)
{
    setenv("MLFF_SEGMENT_SORT", where, 1);
    mlff_context *ctx;
    mlff_model *model = test_open_model(&ctx, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_SPARSE, 0.0);
    const mlff_batch b = {N_SYSTEMS, d->offsets, d->species, d->positions, d->cells, d->pbc};
    const mlff_results results = {out, out + 10 * N_SYSTEMS, out + N_SYSTEMS, {0}};
    for (int call = 0; call < 2; call++)
        CHECK(mlff_compute(model, &b, &results) == MLFF_OK, "%s sort: %s", where, mlff_last_error(ctx));
    const mlff_backend_stats first = backend_stats(ctx);
    const uint64_t sorts = first.segment_sorts;
    CHECK(sorts > 0, "%s sort: the backend reports no sort", where);
    CHECK(mlff_compute(model, &b, &results) == MLFF_OK, "%s sort again: %s", where, mlff_last_error(ctx));
    /* The device writes its pair lists anew at every call: what is sorted by
     * them is sorted again (on the device: found in order, offsets only);
     * nothing else is. */
    mlff_stats lists;
    mlff_get_stats(ctx, &lists);
    const mlff_backend_stats again = backend_stats(ctx);
    const uint64_t sorted_again = again.segment_sorts - sorts;
    const uint64_t found_again = again.segments_in_order - first.segments_in_order;
    if (!lists.device_pair_lists)
        CHECK(sorted_again == 0, "%s sort: the same call sorted %llu indices again", where,
              (unsigned long long)sorted_again);
    else if (strncmp(where, "device", 6) == 0)
        CHECK(sorted_again == found_again, "device sort, device pair lists: %llu indices sorted again, %llu in order",
              (unsigned long long)sorted_again, (unsigned long long)found_again);
    printf("%s: %s sorts, %llu indices sorted\n", mlff_device_description(ctx), where, (unsigned long long)sorts);

    /* An MD step's worth of motion: 0.01-0.03 Angstrom, pairs near the cutoffs come and go. */
    double *saved = malloc((size_t)d->offsets[N_SYSTEMS] * 3 * sizeof *saved);
    CHECK(saved != NULL, "out of memory");
    if (!saved)
        return;
    memcpy(saved, d->positions, (size_t)d->offsets[N_SYSTEMS] * 3 * sizeof *saved);
    for (int64_t k = 0; k < 3 * d->offsets[N_SYSTEMS]; k++)
        d->positions[k] += 0.01 * (double)(k % 7 - 3);
    const mlff_backend_stats before = backend_stats(ctx);
    mlff_stats lists_before, lists_after;
    mlff_get_stats(ctx, &lists_before);
    const mlff_results moved = {moved_out, moved_out + 10 * N_SYSTEMS, moved_out + N_SYSTEMS, {0}};
    CHECK(mlff_compute(model, &b, &moved) == MLFF_OK, "%s sort, atoms moved: %s", where, mlff_last_error(ctx));
    const mlff_backend_stats after = backend_stats(ctx);
    mlff_get_stats(ctx, &lists_after);
    const int device_lists = lists_after.device_pair_lists > lists_before.device_pair_lists;
    memcpy(d->positions, saved, (size_t)d->offsets[N_SYSTEMS] * 3 * sizeof *saved);
    free(saved);
    const uint64_t resorted = after.segment_sorts - before.segment_sorts;
    const uint64_t in_order = after.segments_in_order - before.segments_in_order;
    CHECK(resorted > 0, "%s sort: moved atoms sorted nothing", where);
    if (strncmp(where, "device", 6) == 0)
        /* Pairs by center and triples by center of both lists, at least, are
         * in order; only the pair gradients by neighbour (of the two lists)
         * need a sort (the angular gradient walks its triples unsorted), and
         * not even they with the device's pair lists, which are symmetric. */
        CHECK(in_order >= 3 && resorted - in_order == (device_lists ? 0 : 2),
              "device sort, atoms moved: %llu of %llu indices in order (%s pair lists)",
              (unsigned long long)in_order, (unsigned long long)resorted, device_lists ? "device" : "host");
    printf("%s sorts, atoms moved (%s pair lists): %llu indices sorted, %llu of them found in order\n", where,
           device_lists ? "device" : "host", (unsigned long long)resorted, (unsigned long long)in_order);
    mlff_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    batch_data d;
    if (!load(&d, argv[1]))
        return 1;
    const size_t n = (size_t)(10 * N_SYSTEMS + 3 * d.offsets[N_SYSTEMS]);
    double *host = calloc(2 * n, sizeof *host), *device = calloc(2 * n, sizeof *device);
    if (!host || !device)
        return 1;
    evaluate(&d, "host", host, host + n);
    /* With the device's pair lists (symmetric), also the two-launch form
     * that long lists take (segments.h). */
    const char *lists = getenv("MLFF_CELL_LISTS");
    const int forms = lists && strcmp(lists, "device") == 0 ? 2 : 1;
    for (int form = 0; form < forms; form++) {
        const char *where = form ? "device_unfused" : "device";
        evaluate(&d, where, device, device + n);
        for (int moved = 0; moved < 2; moved++) {
            size_t differ = 0, first = 0;
            for (size_t k = n; k-- > 0;)
                if (memcmp(&host[moved * n + k], &device[moved * n + k], sizeof *host) != 0) {
                    differ++;
                    first = k;
                }
            CHECK(differ == 0, "%s: %zu of %zu results differ between host and %s sorts (first: value %zu, "
                  "%.17g vs %.17g)", moved ? "atoms moved" : "first positions", differ, n, where, first,
                  host[moved * n + first], device[moved * n + first]);
        }
    }
    free(host);
    free(device);
    free(d.species);
    free(d.positions);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
