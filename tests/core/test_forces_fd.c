/*
 * ANI-2x forces equal central finite differences of our own float64
 * energies (h = 1e-4 Angstrom, within 1e-6 eV/Angstrom), for molecules with
 * every element of the model among them.
 * Usage: test_forces_fd REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    static const char *const names[] = {"g2_CH3Cl", "g2_HCF3", "g2_C4H4S", "g2_CH3CONH2"};
    mlff_context *ctx;
    mlff_model *model = test_open_model(&ctx, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_AUTO, 0.0);
    int failures = 0;
    for (size_t m = 0; m < sizeof names / sizeof *names; m++) {
        reference r;
        if (!reference_load(&r, argv[1], names[m]))
            return 1;
        int64_t offsets[2] = {0, r.n_atoms};
        mlff_batch b = {1, offsets, r.species, r.positions, NULL, NULL};
        double e0, up, down, *forces = malloc((size_t)r.n_atoms * 3 * sizeof *forces);
        int ok = mlff_evaluate(model, &b, &e0, forces) == MLFF_OK;
        double worst = 0;
        const double h = 1e-4;
        for (int k = 0; ok && k < 3 * r.n_atoms; k++) {
            double keep = r.positions[k];
            r.positions[k] = keep + h;
            ok = mlff_evaluate(model, &b, &up, NULL) == MLFF_OK;
            r.positions[k] = keep - h;
            ok = ok && mlff_evaluate(model, &b, &down, NULL) == MLFF_OK;
            r.positions[k] = keep;
            worst = fmax(worst, fabs(-(up - down) / (2 * h) - forces[k]));
        }
        printf("%-12s forces vs finite differences: max error %.2e eV/A\n", names[m], worst);
        failures += !ok || worst > 1e-6;
        free(forces);
        reference_free(&r);
    }
    mlff_context_destroy(ctx);
    return failures ? 1 : 0;
}
