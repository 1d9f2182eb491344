/*
 * Two contexts in one process with different settings.tuning (on the CPU,
 * or MLFF_TEST_DEVICE's device): each runs its own forms (the element
 * networks merged or separate, all pairs or cell lists; on GPU backends also
 * the fused layers' forms, the lanes of sums, the GEMMs), calls of one
 * between calls of the other change nothing, and both give the same
 * numbers, to rounding.
 * Usage: test_two_contexts REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"

static const char *const forms[2] = {
    "element_networks=merged merged_networks_most_extra=100000 dense_most_atoms=100000 mlp=wide sum_lanes=16 "
    "gemm_splits=3 opencl_gemm=tiled vulkan_gemm=tiled",
    "element_networks=separate dense_most_atoms=never mlp=narrow sum_lanes=1 opencl_gemm=own vulkan_gemm=direct",
};

typedef struct side {
    mlff_context *ctx;
    mlff_model *model;
    double energy[2], forces[2][3 * 400];
} side;

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR\n", argv[0]);
        return 2;
    }
    static const char *const names[] = {"g2_C6H6", "water_cluster_100"};
    reference refs[2];
    for (int k = 0; k < 2; k++)
        if (!reference_load(&refs[k], argv[1], names[k]))
            return 1;
    side sides[2];
    mlff_precision precision = MLFF_PRECISION_FLOAT64;
    for (int k = 0; k < 2; k++) {
        mlff_settings s;
        mlff_default_settings(&s);
        s.precision = precision;
        s.tuning = forms[k];
        if (k == 0) { /* float64 where the device has it */
            mlff_context *probe = NULL;
            s.device = test_device();
            if (mlff_context_create(&s, &probe) == MLFF_ERROR_UNSUPPORTED)
                precision = s.precision = MLFF_PRECISION_FLOAT32;
            mlff_context_destroy(probe);
        }
        sides[k].model = test_open_model_with(&sides[k].ctx, s);
        printf("context %d: %s\n  tuning: %s\n", k, mlff_device_description(sides[k].ctx), forms[k]);
    }
    CHECK(sides[0].ctx->tuning.element_networks == MLFF_ELEMENT_NETWORKS_MERGED &&
              sides[1].ctx->tuning.element_networks == MLFF_ELEMENT_NETWORKS_SEPARATE,
          "each context has its record");
    const double tol = precision == MLFF_PRECISION_FLOAT64 ? 1e-7 : 3e-3;
    for (int r = 0; r < 2; r++) {
        const reference *ref = &refs[r];
        const int64_t offsets[2] = {0, ref->n_atoms};
        const mlff_batch b = {1, offsets, ref->species, ref->positions, NULL, NULL};
        /* A, B, then A again: the other context's call between changes nothing. */
        for (int call = 0; call < 3; call++) {
            side *sd = &sides[call % 2];
            const int again = call == 2;
            CHECK(mlff_evaluate(sd->model, &b, &sd->energy[again], sd->forces[again]) == MLFF_OK, "%s: %s",
                  ref->name, mlff_last_error(sd->ctx));
        }
        CHECK(sides[0].model->active->form == MLFF_ELEMENT_NETWORKS_MERGED &&
                  sides[1].model->active->form == MLFF_ELEMENT_NETWORKS_SEPARATE,
              "%s: the networks ran merged (%d) and separate (%d)", ref->name, sides[0].model->active->form,
              sides[1].model->active->form);
        mlff_stats a, b_stats;
        mlff_get_stats(sides[0].ctx, &a);
        mlff_get_stats(sides[1].ctx, &b_stats);
        const int64_t n = 3 * ref->n_atoms;
        const double de = fabs(sides[0].energy[0] - sides[1].energy[0]);
        const double df = test_max_diff(sides[0].forces[0], sides[1].forces[0], n);
        const int same = sides[0].energy[0] == sides[0].energy[1] &&
                         !memcmp(sides[0].forces[0], sides[0].forces[1], (size_t)n * sizeof(double));
        printf("%-4s %s: energies differ by %.2e eV, forces by %.2e eV/A; the first context's call again: %s\n",
               de <= tol * ref->n_atoms && df <= tol && same ? "ok" : "FAIL", ref->name, de, df,
               same ? "the same bits" : "OTHER bits");
        CHECK(de <= tol * ref->n_atoms && df <= tol, "%s: the two forms differ: %g eV, %g eV/A", ref->name, de, df);
        CHECK(same, "%s: the other context's call changed the first one's numbers", ref->name);
        CHECK(fabs(sides[0].energy[0] - ref->energy) < 1e-3 * ref->n_atoms, "%s: %.6f eV, TorchANI %.6f", ref->name,
              sides[0].energy[0], ref->energy);
    }
    for (int k = 0; k < 2; k++) {
        mlff_context_destroy(sides[k].ctx);
        reference_free(&refs[k]);
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
