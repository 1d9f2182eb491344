/*
 * ANI-2x against TorchANI 2.2.4: energies and forces of every public
 * non-periodic reference structure in float64 and float32 (compared with the
 * float64 references), and the per-atom AEVs that pin down the feature code.
 * Usage: test_ani_reference REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/context.h"
#include "../common/json_lite.h"
#include "../common/model.h"
#include "../common/reference.h"
#include "mlff.h"
#include "../common/check.h"


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
    double f_tol = f64 ? 1e-7 : 1e-4;
    double worst_f = 0;
    for (int k = 0; k < 3 * n; k++)
        worst_f = fmax(worst_f, fabs(forces[k] - r->forces[k]));
    printf("%-9s %-18s energy error %9.2e eV (tol %.0e), max force error %9.2e eV/A (tol %.0e)\n",
           f64 ? "float64" : "float32", r->name, energy - r->energy, e_tol, worst_f, f_tol);
    CHECK(fabs(energy - r->energy) <= e_tol, "%s: energy %.12f vs %.12f", r->name, energy, r->energy);
    CHECK(worst_f <= f_tol, "%s: force error %g", r->name, worst_f);
    free(forces);
}

/* Per-atom AEVs of the five structures in intermediates/, float64. */
static void check_aevs(mlff_model *model, const char *dir)
{
    static const char *const names[] = {"g2_CH4", "g2_HCF3", "g2_CH3Cl", "g2_CH3CONH2", "g2_C4H4S"};
    const int aev = mlff_graph_find(model->graph, "aev");
    CHECK(aev >= 0, "graph has no tensor named aev");
    for (size_t k = 0; aev >= 0 && k < sizeof names / sizeof *names; k++) {
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
        double energy;
        CHECK(mlff_evaluate(model, &b, &energy, NULL) == MLFF_OK, "%s: evaluate", names[k]);
        CHECK(mlff_plan_rows(model->plan, aev) == r.n_atoms &&
                  model->graph->tensors[aev].cols == 1008,
              "%s: AEV shape", names[k]);
        CHECK(mlff_plan_read(model->plan, aev, got, &model->ctx->error) == MLFF_OK, "read aev");
        double worst = 0;
        for (long i = 0; i < len; i++)
            worst = fmax(worst, fabs(got[i] - want[i]));
        printf("aev       %-18s max error %9.2e\n", names[k], worst);
        CHECK(worst <= 1e-10, "%s: AEV differs by %g", names[k], worst);
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR\n", argv[0]);
        return 2;
    }
    const mlff_precision precisions[] = {MLFF_PRECISION_FLOAT64, MLFF_PRECISION_FLOAT32};
    for (int p = 0; p < 2; p++) {
        mlff_context *ctx;
        if (precisions[p] == MLFF_PRECISION_FLOAT64 && !test_device_fp64()) {
            check_float64_refused();
            continue;
        }
        mlff_model *model = test_open_model(&ctx, precisions[p], MLFF_NEIGHBORS_AUTO, 0.0);
        for (int k = 0; reference_molecules[k]; k++) {
            reference r;
            if (!reference_load(&r, argv[1], reference_molecules[k])) {
                failures++;
                continue;
            }
            check_structure(model, &r, precisions[p]);
            reference_free(&r);
        }
        if (precisions[p] == MLFF_PRECISION_FLOAT64)
            check_aevs(model, argv[1]);
        mlff_context_destroy(ctx);
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
