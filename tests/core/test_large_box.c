/*
 * float32 on a large periodic box: the 64-water box replicated N x N x N
 * (N = 3: 5184 atoms in a 37.3 Angstrom cube; N = 4: 12288 atoms, 49.7
 * Angstrom), its forces in float32 on the device
 * MLFF_TEST_DEVICE names against the same box in float64 on the CPU
 * backend, the reference for boxes of any size. Positions of that size are
 * far coarser in float32 (spacing 4e-6 Angstrom near 50) than the pair
 * vectors the features need; the pair vectors are formed from the
 * positions' and cells' low parts too (core/ops.h, PAIR_VECTORS), which
 * keeps the forces as close to float64 as on a small box.
 * Usage: test_large_box REFERENCE_DIR [N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

/* The float32 forces' largest difference allowed, eV/Angstrom. */
#define FORCE_TOL 1e-4

static mlff_status compute(mlff_model *m, int n, const int32_t *z, const double *pos, const double cell[9],
                           double *e, double *f)
{
    static const uint8_t pbc[3] = {1, 1, 1};
    int64_t offsets[2] = {0, n};
    mlff_batch b = {1, offsets, z, pos, cell, pbc};
    mlff_results r = {.energies = e, .forces = f};
    return mlff_compute(m, &b, &r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR [N]\n", argv[0]);
        return 2;
    }
    const int copies = argc > 2 ? atoi(argv[2]) : 3;
    reference r;
    if (copies < 1 || !reference_load(&r, argv[1], "water_box_64"))
        return 1;
    const int per = copies * copies * copies, n = r.n_atoms * per;
    int32_t *z = malloc((size_t)n * sizeof *z);
    double *pos = malloc((size_t)n * 3 * sizeof *pos), cell[9];
    double *f64 = malloc((size_t)n * 3 * sizeof *f64), *f32 = malloc((size_t)n * 3 * sizeof *f32);
    if (!z || !pos || !f64 || !f32)
        return 1;
    for (int c = 0; c < per; c++)
        for (int a = 0; a < r.n_atoms; a++) {
            const int shift[3] = {c % copies, c / copies % copies, c / (copies * copies)}, at = c * r.n_atoms + a;
            z[at] = r.species[a];
            for (int d = 0; d < 3; d++)
                pos[3 * at + d] = r.positions[3 * a + d] + shift[0] * r.cell[d] + shift[1] * r.cell[3 + d] +
                                  shift[2] * r.cell[6 + d];
        }
    for (int k = 0; k < 9; k++)
        cell[k] = copies * r.cell[k];

    /* The reference: float64 on the CPU backend, whatever the device tested. */
    mlff_settings s;
    mlff_default_settings(&s);
    s.device = MLFF_DEVICE_CPU;
    s.precision = MLFF_PRECISION_FLOAT64;
    mlff_context *ref_ctx;
    mlff_model *ref_model;
    if (mlff_context_create(&s, &ref_ctx) != MLFF_OK || mlff_model_load(ref_ctx, NULL, &ref_model) != MLFF_OK) {
        fprintf(stderr, "cannot load the default model on the CPU: %s\n", mlff_last_error(ref_ctx));
        return 1;
    }
    double e64, e32;
    CHECK(compute(ref_model, n, z, pos, cell, &e64, f64) == MLFF_OK, "float64: %s", mlff_last_error(ref_ctx));
    mlff_context_destroy(ref_ctx);

    mlff_context *ctx;
    mlff_model *model = test_open_model(&ctx, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_AUTO, 0.0);
    CHECK(compute(model, n, z, pos, cell, &e32, f32) == MLFF_OK, "float32: %s", mlff_last_error(ctx));
    const double fe = test_max_diff(f32, f64, 3 * n);
    printf("%s: %d atoms, %.1f A box: float32 energy %+.2e eV, max force error %.2e eV/A (tol %.0e) "
           "against float64 on the CPU\n",
           mlff_device_description(ctx), n, cell[0], e32 - e64, fe, FORCE_TOL);
    CHECK(fe <= FORCE_TOL, "float32 forces on the %.1f A box", cell[0]);
    CHECK(fabs(e32 - e64) <= 5e-6 * n, "float32 energy on the %.1f A box", cell[0]);
    mlff_context_destroy(ctx);
    free(z);
    free(pos);
    free(f64);
    free(f32);
    reference_free(&r);
    return failures ? 1 : 0;
}
