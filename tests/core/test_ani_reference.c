/*
 * ANI-2x against TorchANI 2.2.4: energies and forces of every public
 * non-periodic reference structure in float64 and float32 (compared with the
 * float64 references), also with the element networks run each way, and the
 * per-atom AEVs that pin down the feature code.
 * Usage: test_ani_reference REFERENCE_DIR [TUNING]
 * TUNING: added to every context's record (settings.tuning), e.g.
 * element_plans=off: every structure through the graph of every element,
 * one set of kernels for all, for a run whose switch (a device without
 * doubles) changes every kernel alike, not which graphs run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tests/common/json_lite.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"
#include "tests/common/check.h"


static void check_structure(mlff_model *model, const reference *r, mlff_precision precision)
{
    const int n = r->n_atoms;
    int64_t offsets[2] = {0, n};
    mlff_batch b = {.n_systems = 1, .system_offsets = offsets, .atomic_numbers = r->species,
                    .positions = r->positions};
    double energy, *forces = malloc((size_t)n * 3 * sizeof *forces);
    mlff_status s = mlff_evaluate(model, &b, &energy, forces);
    CHECK(s == MLFF_OK, "%s: evaluate: %s", r->name, mlff_last_error(model->ctx));
    const int f64 = precision == MLFF_PRECISION_FLOAT64;
    double e_tol = f64 ? fmax(1e-8 * n, 1e-8) : fmax(5e-6 * n, 1e-5);
    /* float64: 1e-9 eV/A, which needs CELU's derivative as PyTorch takes it
     * (mlff_celu_derivative_power): with exp(x / alpha) exactly, the forces
     * of molecules with O, N or F were 1e-8 to 3e-8 eV/A from TorchANI's. */
    double f_tol = f64 ? 1e-9 : 1e-4;
    double worst_f = 0;
    for (int k = 0; k < 3 * n; k++)
        worst_f = fmax(worst_f, fabs(forces[k] - r->forces[k]));
    printf("%-9s %-18s energy error %9.2e eV (tol %.0e), max force error %9.2e eV/A (tol %.0e)\n",
           f64 ? "float64" : "float32", r->name, energy - r->energy, e_tol, worst_f, f_tol);
    CHECK(fabs(energy - r->energy) <= e_tol, "%s: energy %.12f vs %.12f", r->name, energy, r->energy);
    CHECK(worst_f <= f_tol, "%s: force error %g", r->name, worst_f);
    free(forces);
}

/* Which of TorchANI's 1008 AEV columns (ANI-2x: H C N O S F Cl; 16 radial
 * per element, 32 angular per pair) the graph of a set of elements keeps,
 * in its order. */
static int kept_columns(const mlff_element_set *set, int *columns)
{
    int kept[7], n = 0;
    for (int e = 0; e < 7; e++)
        if (mlff_element_set_has(set, e))
            kept[n++] = e;
    int k = 0;
    for (int a = 0; a < n; a++)
        for (int c = 0; c < 16; c++)
            columns[k++] = 16 * kept[a] + c;
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++) {
            int slot = 0; /* of the pair in the upper triangle of all 7 */
            for (int i = 0; i < kept[a]; i++)
                slot += 7 - i;
            slot += kept[b] - kept[a];
            for (int c = 0; c < 32; c++)
                columns[k++] = 7 * 16 + 32 * slot + c;
        }
    return k;
}

/* Per-atom AEVs of the five structures in intermediates/, float64: the
 * columns the graph that ran keeps (of the structure's elements, or of more
 * after a stream of other sets) match TorchANI's, and TorchANI's others are
 * zero (which is why leaving them out changes no number). */
#define AEV_STRUCTURES 5
static void check_aevs(mlff_model *model, const char *dir, double *energies)
{
    static const char *const names[AEV_STRUCTURES] = {"g2_CH4", "g2_HCF3", "g2_CH3Cl", "g2_CH3CONH2",
                                                      "g2_C4H4S"};
    for (size_t k = 0; k < AEV_STRUCTURES; k++) {
        reference r;
        if (!reference_load(&r, dir, names[k])) {
            failures++;
            continue;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/intermediates/%s_aev.json", dir, names[k]);
        char *json = json_read_file(path);
        const long len = 1008L * r.n_atoms;
        double *want = malloc((size_t)len * sizeof *want), *got = malloc((size_t)len * sizeof *got);
        CHECK(json && json_numbers(json, "aev", want, len) == len, "%s: cannot read", path);
        int64_t offsets[2] = {0, r.n_atoms};
        mlff_batch b = {.n_systems = 1, .system_offsets = offsets, .atomic_numbers = r.species,
                        .positions = r.positions};
        CHECK(mlff_evaluate(model, &b, &energies[k], NULL) == MLFF_OK, "%s: evaluate", names[k]);
        const mlff_graph *g = model->active->graph;
        const int aev = mlff_graph_find(g, "aev");
        int columns[1008];
        const int n_columns = kept_columns(&model->active->elements, columns);
        CHECK(aev >= 0 && mlff_plan_rows(model->active->plan, aev) == r.n_atoms &&
                  g->tensors[aev].cols == n_columns,
              "%s: AEV shape", names[k]);
        if (aev < 0 || g->tensors[aev].cols != n_columns)
            continue;
        CHECK(mlff_plan_read(model->active->plan, aev, got, &model->ctx->error) == MLFF_OK, "read aev");
        char kept[1008] = {0};
        for (int c = 0; c < n_columns; c++)
            kept[columns[c]] = 1;
        double worst = 0, left_out = 0;
        for (long i = 0; i < r.n_atoms; i++) {
            for (int c = 0; c < n_columns; c++)
                worst = fmax(worst, fabs(got[i * n_columns + c] - want[i * 1008 + columns[c]]));
            for (int c = 0; c < 1008; c++)
                left_out = kept[c] ? left_out : fmax(left_out, fabs(want[i * 1008 + c]));
        }
        printf("aev       %-18s %4d columns, max error %9.2e\n", names[k], n_columns, worst);
        CHECK(worst <= 1e-10, "%s: AEV differs by %g", names[k], worst);
        CHECK(left_out == 0.0, "%s: a column left out holds %g", names[k], left_out);
        free(want);
        free(got);
        free(json);
        reference_free(&r);
    }
}

/* A device without doubles refuses float64 with a message saying so. */
static void check_float64_refused(void)
{
    mlff_settings s;
    mlff_default_settings(&s);
    s.device = test_device();
    s.precision = MLFF_PRECISION_FLOAT64;
    mlff_context *ctx = NULL;
    const mlff_status status = mlff_context_create(&s, &ctx);
    const char *message = ctx ? mlff_last_error(ctx) : "";
    printf("float64   refused: %s\n", message);
    CHECK(status == MLFF_ERROR_UNSUPPORTED && strstr(message, "float64"),
          "float64 on a device without doubles: status %d, '%s'", (int)status, message);
    mlff_context_destroy(ctx);
}

/* The forces' launches as the device runs them best: where launches cost
 * (OpenCL), the radial features' pair gradients are made in the sum of the
 * pair gradients, with no ani_radial_vjp of their own
 * (mlff_graph.radial_gradients_apart), and the AEV makes the pair vectors
 * of both lists, with no pair_vectors (core/vectors_in_aev.h). */
static void check_launches(const mlff_model *model)
{
    const int apart = !model->ctx->iface->launches_cost;
    const mlff_plan *plan = model->active->plan;
    const int radial = mlff_plan_nodes_of(plan, 3u, MLFF_OP_ANI_RADIAL_VJP);
    CHECK(radial == apart, "%s: %d ani_radial_vjp nodes run for the forces, %d expected", model->ctx->iface->name,
          radial, apart);
    const int vectors = mlff_plan_nodes_of(plan, 3u, MLFF_OP_PAIR_VECTORS);
    CHECK(vectors == 2 * apart, "%s: %d pair_vectors nodes run for the forces, %d expected",
          model->ctx->iface->name, vectors, 2 * apart);
}

/* pair_vectors=apart (core/tuning.h): pair_vectors nodes make both lists'
 * vectors on every backend, the AEV none, and the numbers hold. */
static void check_pair_vectors_apart(const char *dir)
{
    reference r;
    if (!reference_load(&r, dir, "g2_CH3CONH2")) {
        failures++;
        return;
    }
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.precision = MLFF_PRECISION_FLOAT32;
    settings.tuning = "pair_vectors=apart";
    mlff_context *ctx;
    mlff_model *model = test_open_model_with(&ctx, settings);
    printf("pair_vectors=apart: ");
    check_structure(model, &r, MLFF_PRECISION_FLOAT32);
    const int vectors = mlff_plan_nodes_of(model->active->plan, 3u, MLFF_OP_PAIR_VECTORS);
    CHECK(vectors == 2, "%s, pair_vectors=apart: %d pair_vectors nodes run for the forces, 2 expected",
          ctx->iface->name, vectors);
    mlff_context_destroy(ctx);
    reference_free(&r);
}

/* The graph of a structure's elements (the default) and the graph of every
 * element (element_plans=off): the AEVs as TorchANI's, the energies
 * equal to rounding; and methane's forces through the graph of every
 * element, which is read before the device is known. */
static void check_every_element(mlff_model *model, const char *dir, const char *extra)
{
    double kept[AEV_STRUCTURES], every[AEV_STRUCTURES];
    check_aevs(model, dir, kept);
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.precision = MLFF_PRECISION_FLOAT64;
    char tuning[512];
    snprintf(tuning, sizeof tuning, "%s element_plans=off", extra);
    settings.tuning = tuning;
    mlff_context *ctx;
    mlff_model *all = test_open_model_with(&ctx, settings);
    check_aevs(all, dir, every);
    CHECK(mlff_element_set_size(&all->active->elements) == 7, "element_plans=off: every element's graph");
    for (int k = 0; k < AEV_STRUCTURES; k++)
        CHECK(fabs(kept[k] - every[k]) <= 1e-9, "structure %d: %.12f eV with its elements' graph, %.12f "
              "with every element's", k, kept[k], every[k]);
    reference methane;
    if (reference_load(&methane, dir, "g2_CH4")) {
        check_structure(all, &methane, MLFF_PRECISION_FLOAT64);
        check_launches(all);
        reference_free(&methane);
    } else {
        failures++;
    }
    mlff_context_destroy(ctx);
}

/* Each way of running the element networks (element_networks, the
 * others than the one the device picks for a batch; models/ani.h): stacked,
 * merged (every element's networks on every atom, each atom's own picked by
 * its species) and separate. TorchANI's numbers, also with the batch cut
 * into chunks of 4 atoms, whose ghost atoms the element lists and the pick
 * must leave out. A batch of one element (benzene's carbons: its graph has
 * no element starts) gives the separate networks' numbers each way. */
static void one_element(const reference *benzene, reference *carbons)
{
    memset(carbons, 0, sizeof *carbons);
    snprintf(carbons->name, sizeof carbons->name, "benzene's carbons");
    carbons->species = malloc((size_t)benzene->n_atoms * sizeof *carbons->species);
    carbons->positions = malloc((size_t)benzene->n_atoms * 3 * sizeof *carbons->positions);
    carbons->forces = malloc((size_t)benzene->n_atoms * 3 * sizeof *carbons->forces);
    for (int a = 0; a < benzene->n_atoms; a++)
        if (benzene->species[a] == 6) {
            memcpy(carbons->positions + 3 * carbons->n_atoms, benzene->positions + 3 * a, 3 * sizeof(double));
            carbons->species[carbons->n_atoms++] = 6;
        }
}

static void check_network_forms(const char *dir, mlff_precision precision, const char *extra)
{
    reference benzene, carbons;
    if (!reference_load(&benzene, dir, "g2_C6H6")) {
        failures++;
        return;
    }
    one_element(&benzene, &carbons);
    reference_free(&benzene);
    {
        mlff_settings settings;
        mlff_default_settings(&settings);
        settings.precision = precision;
        char tuning[512];
        snprintf(tuning, sizeof tuning, "%s element_networks=separate", extra);
        settings.tuning = tuning;
        mlff_context *ctx;
        mlff_model *model = test_open_model_with(&ctx, settings);
        int64_t offsets[2] = {0, carbons.n_atoms};
        mlff_batch b = {1, offsets, carbons.species, carbons.positions, NULL, NULL};
        CHECK(mlff_evaluate(model, &b, &carbons.energy, carbons.forces) == MLFF_OK, "%s: %s", carbons.name,
              mlff_last_error(ctx));
        mlff_context_destroy(ctx);
    }
    static const char *const names[] = {"g2_CH4", "g2_CH3CONH2"};
    static const char *const forms[] = {"auto", "stacked", "merged", "separate"}; /* mlff_element_networks */
    for (int form = 1; form < 4; form++)
    for (int chunked = 0; chunked < 2; chunked++) {
        char tuning[512];
        snprintf(tuning, sizeof tuning, "%s element_networks=%s", extra, forms[form]);
        mlff_settings settings;
        mlff_default_settings(&settings);
        settings.precision = precision;
        settings.max_chunk_atoms = chunked ? 4 : 0;
        settings.tuning = tuning;
        mlff_context *ctx;
        mlff_model *model = test_open_model_with(&ctx, settings);
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            reference r;
            if (!reference_load(&r, dir, names[k])) {
                failures++;
                continue;
            }
            printf("%s networks%s: ", forms[form], chunked ? ", chunks of 4 atoms" : "");
            check_structure(model, &r, precision);
            CHECK(model->active->form == form, "%s: the %s networks ran", r.name,
                  forms[form]);
            reference_free(&r);
        }
        check_structure(model, &carbons, precision);
        mlff_context_destroy(ctx);
    }
    reference_free(&carbons);
    /* An unknown form, from the environment (the variables keep working)
     * and from settings.tuning: the error names it. */
    for (int from_settings = 0; from_settings < 2; from_settings++) {
        if (!from_settings)
            setenv("MLFF_ELEMENT_NETWORKS", "fused", 1);
        mlff_settings settings;
        mlff_default_settings(&settings);
        settings.device = test_device();
        settings.tuning = from_settings ? "element_networks=fused" : NULL;
        mlff_context *ctx;
        mlff_model *model = NULL;
        mlff_status status = mlff_context_create(&settings, &ctx);
        if (status == MLFF_OK)
            status = mlff_model_load(ctx, NULL, &model);
        const char *want = from_settings ? "element_networks=fused" : "MLFF_ELEMENT_NETWORKS=fused";
        CHECK(status == MLFF_ERROR_INVALID_ARGUMENT && strstr(mlff_last_error(ctx), want),
              "an unknown element_networks: status %d, '%s'", (int)status, mlff_last_error(ctx));
        mlff_context_destroy(ctx);
        unsetenv("MLFF_ELEMENT_NETWORKS");
    }
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s REFERENCE_DIR [TUNING]\n", argv[0]);
        return 2;
    }
    const char *extra = argc > 2 ? argv[2] : "";
    const mlff_precision precisions[] = {MLFF_PRECISION_FLOAT64, MLFF_PRECISION_FLOAT32};
    for (int p = 0; p < 2; p++) {
        mlff_context *ctx;
        if (precisions[p] == MLFF_PRECISION_FLOAT64 && !test_device_fp64()) {
            check_float64_refused();
            continue;
        }
        mlff_settings settings;
        mlff_default_settings(&settings);
        settings.precision = precisions[p];
        settings.tuning = *extra ? extra : NULL;
        mlff_model *model = test_open_model_with(&ctx, settings);
        for (int k = 0; reference_molecules[k]; k++) {
            reference r;
            if (!reference_load(&r, argv[1], reference_molecules[k])) {
                failures++;
                continue;
            }
            check_structure(model, &r, precisions[p]);
            reference_free(&r);
        }
        check_launches(model);
        if (precisions[p] == MLFF_PRECISION_FLOAT64)
            check_every_element(model, argv[1], extra);
        mlff_context_destroy(ctx);
        /* On OpenCL and Vulkan in float32 alone, as GPUs run it: each
         * precision compiles its own kernels (minutes of CI on PoCL and lavapipe). */
        if (precisions[p] == MLFF_PRECISION_FLOAT32 || test_device() == MLFF_DEVICE_CPU)
            check_network_forms(argv[1], precisions[p], extra);
        if (precisions[p] == MLFF_PRECISION_FLOAT32)
            check_pair_vectors_apart(argv[1]);
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
