/*
 * Full Hessians of ANI-2x (mlff_compute_hessians: energies, forces and
 * each system's (3N)^2 block in one call) for methane, benzene, ethanol,
 * 64 small molecules in one batch, the 100-water cluster (300 atoms) and a
 * drop of 333 waters (999 atoms, cut from the periodic reference box; the
 * repository holds no protein, and a drop of water has a globular
 * protein's density of neighbours, which sets the cost). Per case: the
 * median time of a few calls after one warm-up call, with freshly perturbed
 * positions, the host's peak resident memory so far against the Hessians'
 * own size, and the Hessian's asymmetry (a check that the numbers are real).
 * Not a test: numbers depend on the machine and its load.
 *
 *   bench_hessian REFERENCE_DIR [threads] [float32|float64] [cpu|opencl|vulkan] [CASE] [TUNING]
 * CASE: run only the cases whose name contains it ("": all); TUNING:
 * settings.tuning ("hessian_groups_from_atoms=never": every molecule whole).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_cases.h"
#include "bench_util.h"
#include "mlff.h"
#include "tests/common/reference.h"

/* The `waters` molecules of the periodic water box (O, H, H each, H
 * brought next to its O) repeated 2 x 2 x 2 whose oxygens lie nearest the
 * centre: a drop. */
static int make_drop(bench_case *c, const char *dir, int waters)
{
    memset(c, 0, sizeof *c);
    c->name = "water drop (999 atoms)";
    c->n_systems = 1;
    reference box;
    if (!reference_load(&box, dir, "water_box_64"))
        return 0;
    const double side = box.cell[0]; /* cubic */
    const int per_box = box.n_atoms / 3, n_all = 8 * per_box;
    double *mol = malloc((size_t)n_all * 9 * sizeof *mol), *dist = malloc((size_t)n_all * sizeof *dist);
    c->z = malloc((size_t)3 * waters * sizeof *c->z);
    c->positions = malloc((size_t)9 * waters * sizeof *c->positions);
    if (!mol || !dist || !c->z || !c->positions || waters > n_all)
        return 0;
    for (int copy = 0; copy < 8; copy++)
        for (int w = 0; w < per_box; w++) {
            double *m = mol + 9 * (copy * per_box + w);
            for (int a = 0; a < 3; a++)
                for (int k = 0; k < 3; k++) {
                    double x = box.positions[9 * w + 3 * a + k] + side * ((copy >> k) & 1);
                    if (a > 0) /* the image nearest the oxygen */
                        x -= side * round((x - m[k]) / side);
                    m[3 * a + k] = x;
                }
            double r2 = 0;
            for (int k = 0; k < 3; k++)
                r2 += (m[k] - side) * (m[k] - side);
            dist[copy * per_box + w] = r2;
        }
    /* The nearest `waters`: selection by repeated minimum (small n). */
    for (int taken = 0; taken < waters; taken++) {
        int best = 0;
        for (int w = 1; w < n_all; w++)
            if (dist[w] < dist[best])
                best = w;
        memcpy(c->positions + 9 * taken, mol + 9 * best, 9 * sizeof(double));
        c->z[3 * taken] = 8;
        c->z[3 * taken + 1] = c->z[3 * taken + 2] = 1;
        dist[best] = INFINITY;
    }
    c->n_atoms = c->offsets[1] = 3 * waters;
    free(mol);
    free(dist);
    reference_free(&box);
    return 1;
}

static double peak_resident_mb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;
}

/* The largest |H - H^T| over the blocks, against the largest |H|. */
static double asymmetry(const bench_case *c, const double *h)
{
    double worst = 0, largest = 0;
    for (int s = 0; s < c->n_systems; s++) {
        const int64_t n = 3 * (c->offsets[s + 1] - c->offsets[s]);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                worst = fmax(worst, fabs(h[i * n + j] - h[j * n + i]));
                largest = fmax(largest, fabs(h[i * n + j]));
            }
        h += n * n;
    }
    return largest > 0 ? worst / largest : INFINITY;
}

static int run_case(mlff_context *ctx, mlff_model *model, const bench_case *c)
{
    int64_t entries = 0;
    for (int s = 0; s < c->n_systems; s++)
        entries += 9 * (c->offsets[s + 1] - c->offsets[s]) * (c->offsets[s + 1] - c->offsets[s]);
    double *pos = malloc((size_t)c->n_atoms * 3 * sizeof *pos), *energies = malloc(64 * sizeof *energies),
           *forces = malloc((size_t)c->n_atoms * 3 * sizeof *forces),
           *hessians = malloc((size_t)entries * sizeof *hessians);
    if (!pos || !energies || !forces || !hessians)
        return 0;
    mlff_batch b = {c->n_systems, c->offsets, c->z, pos, NULL, NULL};
    mlff_hessian_results r = {.energies = energies, .forces = forces, .hessians = hessians};
    unsigned seed = 7;
    double times[16];
    int calls = 0, ok = 1;
    const double begun = bench_now();
    for (int k = 0; ok && k < 17; k++) {
        bench_perturb(pos, c->positions, c->n_atoms, 0.01, &seed);
        const double t0 = bench_now();
        ok = mlff_compute_hessians(model, &b, &r) == MLFF_OK;
        if (k > 0) /* the first call builds the plans and kernels */
            times[calls++] = 1e3 * (bench_now() - t0);
        if (calls >= 3 && bench_now() - begun > 3.0)
            break;
    }
    if (!ok) {
        printf("%-28s %6lld  %s\n", c->name, (long long)c->n_atoms, mlff_last_error(ctx));
    } else {
        qsort(times, (size_t)calls, sizeof *times, bench_compare_doubles);
        printf("%-28s %6lld %12.3f %7d %10.1f %10.1f %10.1e\n", c->name, (long long)c->n_atoms, times[calls / 2],
               calls, peak_resident_mb(), entries * 8.0 / (1 << 20), asymmetry(c, hessians));
    }
    free(pos);
    free(energies);
    free(forces);
    free(hessians);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR [threads] [float32|float64] [cpu|opencl|vulkan] [CASE] [TUNING]\n", argv[0]);
        return 2;
    }
    static const char *const methane[] = {"g2_CH4", NULL}, *const benzene[] = {"g2_C6H6", NULL},
                             *const ethanol[] = {"g2_CH3CH2OH", NULL}, *const water[] = {"water_cluster_100", NULL},
                             *const small[] = {"g2_CH3CH2OH", "g2_CH3COOH", "g2_CH3CONH2", "g2_C4H4S", NULL};
    bench_case cases[6];
    if (!bench_case_make(&cases[0], argv[1], "methane", methane, 1) ||
        !bench_case_make(&cases[1], argv[1], "benzene", benzene, 1) ||
        !bench_case_make(&cases[2], argv[1], "ethanol", ethanol, 1) ||
        !bench_case_make(&cases[3], argv[1], "64 molecules of 8-9 atoms", small, 64) ||
        !bench_case_make(&cases[4], argv[1], "water cluster (300 atoms)", water, 1) || !make_drop(&cases[5], argv[1], 333)) {
        fprintf(stderr, "cannot read the structures in %s\n", argv[1]);
        return 1;
    }
    mlff_settings s;
    mlff_default_settings(&s);
    s.n_threads = argc > 2 ? atoi(argv[2]) : 0;
    s.precision = argc > 3 && !strcmp(argv[3], "float64") ? MLFF_PRECISION_FLOAT64 : MLFF_PRECISION_FLOAT32;
    s.device = bench_device(argc > 4 ? argv[4] : "cpu");
    const char *only = argc > 5 ? argv[5] : "";
    s.tuning = argc > 6 ? argv[6] : NULL;
    mlff_context *ctx;
    mlff_model *model;
    if (mlff_context_create(&s, &ctx) != MLFF_OK) {
        fprintf(stderr, "no context: %s\n", mlff_last_error(ctx));
        return 1;
    }
    if (mlff_model_load(ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "no model: %s\n", mlff_last_error(ctx));
        return 1;
    }
    printf("ANI-2x Hessians, %s, %s\n", argc > 3 ? argv[3] : "float32", mlff_device_description(ctx));
    printf("%-28s %6s %12s %7s %10s %10s %10s\n", "case", "atoms", "median ms", "calls", "peak MB", "H MB",
           "asymmetry");
    int failures = 0;
    for (int k = 0; k < 6; k++)
        if (strstr(cases[k].name, only))
            failures += !run_case(ctx, model, &cases[k]);
    mlff_model_free(model);
    mlff_context_destroy(ctx);
    for (int k = 0; k < 6; k++)
        bench_case_free(&cases[k]);
    return failures ? 1 : 0;
}
