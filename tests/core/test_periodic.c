/*
 * The sparse path and periodic boundaries:
 *  - the 64-water boxes (cubic and triclinic) against TorchANI, float64 and float32;
 *  - a 2x2x2 supercell has 8 times the energy and the same forces;
 *  - translating every atom changes nothing;
 *  - one water molecule in a 3.1 Angstrom cell (it sees its own images) and a
 *    slab periodic in two axes: forces and virials against finite differences;
 *  - virials against finite differences of the energy under strain;
 *  - dense and sparse searches agree on every non-periodic reference;
 *  - a Verlet skin changes no number along an MD-like trajectory, and saves searches
 *    (the device's lists hold the pairs within the skin too, which add zeros to sums
 *    in another order: a difference of the order of float64 rounding);
 *  - a batch mixing a molecule (with a NaN cell, which must be ignored) and a box
 *    gives what each gives alone;
 *  - with MLFF_CELL_LISTS=device, the pair lists are made on the device, skin or
 *    not, and these checks hold for them.
 * Usage: test_periodic REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

typedef struct system_data {
    int n;
    int32_t *z;
    double *pos;
    double cell[9];
    uint8_t pbc[3];
} system_data;

static mlff_status compute(mlff_model *m, const system_data *sys, double *e, double *f, double *virial)
{
    int64_t offsets[2] = {0, sys->n};
    mlff_batch b = {1, offsets, sys->z, sys->pos, sys->cell, sys->pbc};
    mlff_results r = {.energies = e, .forces = f, .virials = virial};
    return mlff_compute(m, &b, &r);
}

static system_data from_reference(const reference *r)
{
    system_data s = {r->n_atoms, malloc((size_t)r->n_atoms * sizeof(int32_t)),
                     malloc((size_t)r->n_atoms * 3 * sizeof(double)), {0}, {0}};
    memcpy(s.z, r->species, (size_t)r->n_atoms * sizeof(int32_t));
    memcpy(s.pos, r->positions, (size_t)r->n_atoms * 3 * sizeof(double));
    memcpy(s.cell, r->cell, sizeof s.cell);
    memcpy(s.pbc, r->pbc, sizeof s.pbc);
    return s;
}

static void free_system(system_data *s)
{
    free(s->z);
    free(s->pos);
}

/* The boxes against TorchANI. */
static void check_boxes(const char *dir)
{
    for (int p = 0; p < 2; p++) {
        mlff_context *ctx;
        mlff_model *model = test_open_model(&ctx, p ? MLFF_PRECISION_FLOAT32 : MLFF_PRECISION_FLOAT64,
                                       MLFF_NEIGHBORS_AUTO, 0.0);
        for (int k = 0; reference_boxes[k]; k++) {
            reference r;
            if (!reference_load(&r, dir, reference_boxes[k])) {
                failures++;
                continue;
            }
            system_data s = from_reference(&r);
            double e, *f = malloc((size_t)r.n_atoms * 3 * sizeof *f);
            CHECK(compute(model, &s, &e, f, NULL) == MLFF_OK, "%s: %s", r.name, mlff_last_error(ctx));
            double e_tol = p ? fmax(5e-6 * r.n_atoms, 1e-5) : 1e-8 * r.n_atoms;
            double f_tol = p ? 1e-4 : 1e-7, fe = test_max_diff(f, r.forces, 3 * r.n_atoms);
            printf("%-8s %-24s energy error %9.2e eV (tol %.0e), max force error %9.2e eV/A (tol %.0e)\n",
                   p ? "float32" : "float64", r.name, e - r.energy, e_tol, fe, f_tol);
            CHECK(fabs(e - r.energy) <= e_tol && fe <= f_tol, "%s against TorchANI", r.name);
            free(f);
            free_system(&s);
            reference_free(&r);
        }
        mlff_context_destroy(ctx);
    }
}

/* A supercell of n x n x n copies: n^3 times the energy, the same forces. */
static void check_supercell(mlff_model *model, const system_data *s)
{
    const int n = 2, copies = n * n * n;
    system_data big = {s->n * copies, malloc((size_t)s->n * copies * sizeof(int32_t)),
                       malloc((size_t)s->n * copies * 3 * sizeof(double)), {0}, {1, 1, 1}};
    for (int c = 0; c < copies; c++)
        for (int a = 0; a < s->n; a++) {
            const int shift[3] = {c % n, (c / n) % n, c / (n * n)};
            big.z[c * s->n + a] = s->z[a];
            for (int d = 0; d < 3; d++)
                big.pos[3 * (c * s->n + a) + d] = s->pos[3 * a + d] + shift[0] * s->cell[d] +
                                                  shift[1] * s->cell[3 + d] + shift[2] * s->cell[6 + d];
        }
    for (int k = 0; k < 9; k++)
        big.cell[k] = n * s->cell[k];
    double e1, e8, *f1 = malloc((size_t)s->n * 3 * sizeof(double)),
                   *f8 = malloc((size_t)big.n * 3 * sizeof(double));
    CHECK(compute(model, s, &e1, f1, NULL) == MLFF_OK && compute(model, &big, &e8, f8, NULL) == MLFF_OK,
          "supercell evaluation");
    double worst = 0;
    for (int c = 0; c < copies; c++)
        worst = fmax(worst, test_max_diff(f1, f8 + 3 * c * s->n, 3 * s->n));
    printf("supercell 2x2x2: energy ratio %.12f, max force difference %.2e\n", e8 / e1, worst);
    CHECK(fabs(e8 - copies * e1) <= 1e-8 * big.n && worst <= 1e-9, "supercell");
    free(f1);
    free(f8);
    free_system(&big);
}

static void check_translation(mlff_model *model, const system_data *s)
{
    system_data moved = *s;
    moved.pos = malloc((size_t)s->n * 3 * sizeof(double));
    static const double t[3] = {3.7, -11.2, 25.9}; /* several cells away */
    for (int a = 0; a < s->n; a++)
        for (int d = 0; d < 3; d++)
            moved.pos[3 * a + d] = s->pos[3 * a + d] + t[d];
    double e0 = 0, e1 = 0, *f0 = malloc((size_t)s->n * 3 * sizeof(double)), *f1 = malloc((size_t)s->n * 3 * sizeof(double));
    CHECK(compute(model, s, &e0, f0, NULL) == MLFF_OK && compute(model, &moved, &e1, f1, NULL) == MLFF_OK,
          "translation evaluation");
    printf("translation: energy change %.2e eV, max force change %.2e\n", e1 - e0, test_max_diff(f0, f1, 3 * s->n));
    CHECK(fabs(e1 - e0) <= 1e-9 * s->n && test_max_diff(f0, f1, 3 * s->n) <= 1e-9, "translation invariance");
    free(moved.pos);
    free(f0);
    free(f1);
}

/* Forces (of the first `atoms` atoms) and the virial against central
 * differences of the energy, float64. h = 1e-5: these packed periodic
 * systems are stiff enough that h = 1e-4 leaves truncation errors of ~1e-5. */
static void check_finite_differences(mlff_model *model, system_data *s, int atoms, const char *name)
{
    const double h = 1e-5;
    double e, up, down, virial[9], *f = malloc((size_t)s->n * 3 * sizeof(double));
    CHECK(compute(model, s, &e, f, virial) == MLFF_OK, "%s: evaluate", name);
    double worst_f = 0;
    for (int k = 0; k < 3 * atoms; k++) {
        const double keep = s->pos[k];
        s->pos[k] = keep + h;
        compute(model, s, &up, NULL, NULL);
        s->pos[k] = keep - h;
        compute(model, s, &down, NULL, NULL);
        s->pos[k] = keep;
        worst_f = fmax(worst_f, fabs(-(up - down) / (2 * h) - f[k]));
    }
    /* W_ab = -dE/d(strain_ab): strain atoms and cell rows together by (1 + eps). */
    double worst_w = 0;
    const double eps = 1e-5;
    system_data strained = *s;
    strained.pos = malloc((size_t)s->n * 3 * sizeof(double));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double energies[2];
            for (int sign = 0; sign < 2; sign++) {
                const double d = sign ? -eps : eps;
                for (int i = 0; i < s->n; i++) {
                    memcpy(strained.pos + 3 * i, s->pos + 3 * i, 3 * sizeof(double));
                    strained.pos[3 * i + a] += d * s->pos[3 * i + b];
                }
                memcpy(strained.cell, s->cell, sizeof s->cell);
                for (int k = 0; k < 3; k++)
                    strained.cell[3 * k + a] += d * s->cell[3 * k + b];
                compute(model, &strained, &energies[sign], NULL, NULL);
            }
            worst_w = fmax(worst_w, fabs(-(energies[0] - energies[1]) / (2 * eps) - virial[3 * a + b]));
        }
    printf("%-28s forces vs finite differences %.2e eV/A, virial %.2e eV\n", name, worst_f, worst_w);
    CHECK(worst_f <= 1e-6, "%s: forces vs finite differences", name);
    CHECK(worst_w <= 1e-5, "%s: virial vs finite differences", name);
    free(strained.pos);
    free(f);
}

/* Dense and sparse searches give the same numbers. */
static void check_dense_sparse(const char *dir)
{
    mlff_context *cd, *cs;
    mlff_model *dense = test_open_model(&cd, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_DENSE, 0.0);
    mlff_model *sparse = test_open_model(&cs, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_SPARSE, 0.0);
    double worst = 0;
    for (int k = 0; reference_molecules[k]; k++) {
        reference r;
        if (!reference_load(&r, dir, reference_molecules[k]))
            continue;
        system_data s = from_reference(&r);
        double e1, e2, *f1 = malloc((size_t)r.n_atoms * 3 * sizeof(double)),
                       *f2 = malloc((size_t)r.n_atoms * 3 * sizeof(double));
        /* The cluster also squeezed to 0.45 of its size: 40 atoms with more
         * pairs (up to 300) than a device work-group sorts in local memory. */
        for (int squeezed = 0; squeezed < (strcmp(r.name, "water_cluster_100") == 0 ? 2 : 1); squeezed++) {
            for (int a = 0; squeezed && a < 3 * s.n; a++)
                s.pos[a] *= 0.45;
            CHECK(compute(dense, &s, &e1, f1, NULL) == MLFF_OK && compute(sparse, &s, &e2, f2, NULL) == MLFF_OK,
                  "%s%s: dense and sparse", r.name, squeezed ? " (squeezed)" : "");
            worst = fmax(worst, fmax(fabs(e1 - e2), test_max_diff(f1, f2, 3 * r.n_atoms)));
        }
        free(f1);
        free(f2);
        free_system(&s);
        reference_free(&r);
    }
    printf("dense vs sparse on every molecule: max difference %.2e\n", worst);
    CHECK(worst == 0.0, "dense and sparse give the same numbers");
    mlff_context_destroy(cd);
    mlff_context_destroy(cs);
}

static void check_mixed_batch(mlff_model *model, const system_data *box, const char *dir)
{
    reference r;
    if (!reference_load(&r, dir, "g2_CH4")) {
        failures++;
        return;
    }
    system_data mol = from_reference(&r);
    const int n = mol.n + box->n;
    int64_t offsets[3] = {0, mol.n, n};
    int32_t *z = malloc((size_t)n * sizeof *z);
    double *pos = malloc((size_t)n * 3 * sizeof *pos), *f = malloc((size_t)n * 3 * sizeof *f);
    double *alone_f = malloc((size_t)n * 3 * sizeof *alone_f), cells[18], e[2], w[18], alone_e[2], alone_w[18];
    uint8_t pbc[6] = {0, 0, 0, 1, 1, 1};
    memcpy(z, mol.z, (size_t)mol.n * sizeof *z);
    memcpy(z + mol.n, box->z, (size_t)box->n * sizeof *z);
    memcpy(pos, mol.pos, (size_t)mol.n * 3 * sizeof *pos);
    memcpy(pos + 3 * mol.n, box->pos, (size_t)box->n * 3 * sizeof *pos);
    for (int k = 0; k < 9; k++) {
        cells[k] = NAN;
        cells[9 + k] = box->cell[k];
    }
    mlff_batch b = {2, offsets, z, pos, cells, pbc};
    mlff_results results = {.energies = e, .forces = f, .virials = w};
    CHECK(mlff_compute(model, &b, &results) == MLFF_OK, "mixed batch");
    CHECK(compute(model, &mol, &alone_e[0], alone_f, alone_w) == MLFF_OK &&
              compute(model, box, &alone_e[1], alone_f + 3 * mol.n, alone_w + 9) == MLFF_OK,
          "alone");
    double worst = fmax(test_max_diff(e, alone_e, 2),
                        fmax(test_max_diff(f, alone_f, 3 * n), test_max_diff(w, alone_w, 18)));
    printf("molecule + box in one batch vs alone: max difference %.2e\n", worst);
    CHECK(worst <= 1e-9, "a mixed batch equals its systems alone");
    free(z);
    free(pos);
    free(f);
    free(alone_f);
    free_system(&mol);
    reference_free(&r);
}

/* Along a short MD-like trajectory, a skin reuses the list and changes nothing
 * (the trajectory brings atoms within the skin of the distance limit, where
 * the device's lists are kept for less). */
static void check_skin(const system_data *start)
{
    mlff_context *c0, *c1;
    mlff_model *plain = test_open_model(&c0, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_SPARSE, 0.0);
    mlff_model *skin = test_open_model(&c1, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_SPARSE, 1.0);
    system_data s = *start;
    s.pos = malloc((size_t)s.n * 3 * sizeof(double));
    memcpy(s.pos, start->pos, (size_t)s.n * 3 * sizeof(double));
    double *f0 = malloc((size_t)s.n * 3 * sizeof(double)), *f1 = malloc((size_t)s.n * 3 * sizeof(double));
    double worst = 0;
    const int steps = 20;
    for (int step = 0; step < steps; step++) {
        /* A steady drift of up to 0.035 sqrt(3) A per step: past skin / 2 every ~9 steps. */
        for (int k = 0; k < 3 * s.n; k++)
            s.pos[k] += 0.035 * cos(0.7 * k);
        double e0 = 0, e1 = 0;
        CHECK(compute(plain, &s, &e0, f0, NULL) == MLFF_OK && compute(skin, &s, &e1, f1, NULL) == MLFF_OK,
              "skin step %d", step);
        worst = fmax(worst, fmax(fabs(e0 - e1), test_max_diff(f0, f1, 3 * s.n)));
    }
    mlff_stats st0, st1;
    mlff_get_stats(c0, &st0);
    mlff_get_stats(c1, &st1);
    printf("skin 1.0 A over %d steps: max difference %.2e, searches %llu (without skin %llu)\n", steps, worst,
           (unsigned long long)st1.neighbor_builds, (unsigned long long)st0.neighbor_builds);
    const int on_device = st0.device_pair_lists > 0;
    CHECK(worst <= (on_device ? 1e-12 : 0.0), "the skin changes no number");
    CHECK(st1.neighbor_builds < st0.neighbor_builds && st1.neighbor_builds >= 2, "the skin saves searches");
    CHECK(st1.device_pair_lists == (on_device ? (uint64_t)steps : 0), "%llu of %d calls with the device's lists",
          (unsigned long long)st1.device_pair_lists, steps);
    free(s.pos);
    free(f0);
    free(f1);
    mlff_context_destroy(c0);
    mlff_context_destroy(c1);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    check_boxes(argv[1]);

    reference box;
    if (!reference_load(&box, argv[1], "water_box_64_triclinic"))
        return 1;
    system_data s = from_reference(&box);
    mlff_context *ctx;
    mlff_model *model = test_open_model(&ctx, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_SPARSE, 0.0);
    check_supercell(model, &s);
    check_mixed_batch(model, &s, argv[1]);
    check_translation(model, &s);

    /* One water molecule in a 3.1 Angstrom cubic cell: every atom sees its own images. */
    int32_t wz[3] = {8, 1, 1};
    double wpos[9] = {0.2, 0.1, 0.15, 0.95, 0.2, 0.3, -0.05, 0.85, 0.5};
    system_data water = {3, wz, wpos, {3.1, 0, 0, 0, 3.1, 0, 0, 0, 3.1}, {1, 1, 1}};
    check_finite_differences(model, &water, 3, "water in a 3.1 A cell");
    /* A slab: the first 24 atoms of the triclinic box, periodic along a and b only. */
    system_data slab = {24, s.z, s.pos, {0}, {1, 1, 0}};
    memcpy(slab.cell, s.cell, sizeof s.cell);
    check_finite_differences(model, &slab, 8, "slab (periodic in a, b)");
    system_data small_box = {48, s.z, s.pos, {0}, {1, 1, 1}};
    memcpy(small_box.cell, s.cell, sizeof s.cell);
    check_finite_differences(model, &small_box, 6, "triclinic box, 48 atoms");
    mlff_stats stats;
    mlff_get_stats(ctx, &stats);
    const char *cells = getenv("MLFF_CELL_LISTS");
    printf("evaluations with pair lists made on the device: %llu of %llu\n",
           (unsigned long long)stats.device_pair_lists, (unsigned long long)stats.evaluations);
    if (cells && !strcmp(cells, "device"))
        CHECK(stats.device_pair_lists == stats.evaluations, "the device makes the pair lists it searches for");
    if (test_device() == MLFF_DEVICE_CPU || (cells && !strcmp(cells, "host")))
        CHECK(stats.device_pair_lists == 0, "the host makes the pair lists it searches for");
    mlff_context_destroy(ctx);

    check_dense_sparse(argv[1]);
    check_skin(&s);
    free_system(&s);
    reference_free(&box);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
