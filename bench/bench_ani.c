/*
 * ANI-2x energy + forces on one device: methane, benzene, the 100-water
 * cluster, and a batch of 64 molecules of 8-9 atoms. Each case warms up
 * (5 calls and a second at least: bench_util.h), then runs repeatedly
 * with freshly perturbed positions (nothing can be cached between calls)
 * and reports the median time (each call returns after the forces are
 * back on the host: the device is synchronised), the GFLOP/s of its dense
 * layers, and on the CPU that as a fraction of the FMA peak measured in the
 * same run. Not a test: numbers depend on the machine and its load.
 *
 *   bench_ani REFERENCE_DIR [threads] [float32|float64] [cpu|opencl|vulkan] [CASE] [NEIGHBORS] [SKIN]
 * CASE: run only the cases whose name contains it (one case per process
 * gives a clean MLFF_LOG=profile table; "" runs all). NEIGHBORS: auto
 * (the default), dense or sparse. SKIN: a Verlet skin in Angstrom (0, the
 * default: a search every call). With a skin, the atoms vibrate instead of
 * jittering (vibrate()), so the lists are searched again whenever an atom
 * has moved half the skin, as in MD: the mean time of a call then counts
 * the searches too, and the table says how many calls searched.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/context.h"
#include "tests/common/reference.h"
#include "bench_cases.h"
#include "bench_util.h"
#include "mlff.h"
#include "peak.h"

/* FLOPs of the dense layers (forward and input gradient) in the last run:
 * LINEAR and LINEAR_VJP read their weights as input 1; CELU_MLP reads
 * inputs 1, 3, 5 and its VJP inputs 2, 3, 4. With stacks (core/ops.h) a
 * row meets one stack of the weights (padded to the widest network's). */
static double dense_flops(const mlff_model *m)
{
    const mlff_graph *g = m->active->graph;
    double flops = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const mlff_graph_node *n = &g->nodes[k];
        int first, step, count;
        if (n->op == MLFF_OP_LINEAR || n->op == MLFF_OP_LINEAR_VJP)
            first = 1, step = 1, count = 1;
        else if (n->op == MLFF_OP_CELU_MLP)
            first = 1, step = 2, count = mlff_mlp_layers(n->op, n->n_inputs, &n->attrs);
        else if (n->op == MLFF_OP_CELU_MLP_VJP)
            first = 2, step = 1, count = mlff_mlp_layers(n->op, n->n_inputs, &n->attrs);
        else
            continue;
        const double rows = (double)mlff_plan_rows(m->active->plan, n->output);
        for (int l = 0; l < count; l++) {
            const mlff_graph_tensor *w = &g->tensors[n->inputs[first + step * l]];
            flops += 2.0 * rows * (double)w->rows * (double)w->cols / (double)mlff_op_stacks(&n->attrs);
        }
    }
    return flops;
}

/* Every coordinate vibrates, 0.1 A sin(0.1 t + its phase) at call t: up
 * to 0.01 A a call, about what a hydrogen moves in a 0.5 fs MD step at 300 K. */
static void vibrate(double *pos, const double *ref, int64_t n, int t)
{
    for (int64_t k = 0; k < 3 * n; k++)
        pos[k] = ref[k] + 0.1 * sin(0.1 * t + 2.4 * (double)k);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR [threads] [float32|float64] [cpu|opencl|vulkan] [CASE] "
                "[auto|dense|sparse] [SKIN]\n",
                argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    int f64 = argc > 3 && strcmp(argv[3], "float64") == 0;
    static const char *const methane[] = {"g2_CH4", NULL}, *const benzene[] = {"g2_C6H6", NULL},
                             *const water[] = {"water_cluster_100", NULL},
                             *const small[] = {"g2_CH3CH2OH", "g2_CH3COOH", "g2_CH3CONH2", "g2_C4H4S", NULL};
    bench_case cases[4];
    if (!bench_case_make(&cases[0], argv[1], "methane", methane, 1) ||
        !bench_case_make(&cases[1], argv[1], "benzene", benzene, 1) ||
        !bench_case_make(&cases[2], argv[1], "water cluster (300 atoms)", water, 1) ||
        !bench_case_make(&cases[3], argv[1], "64 molecules of 8-9 atoms", small, 64))
        return 1;

    mlff_settings s;
    mlff_default_settings(&s);
    const char *device = argc > 4 ? argv[4] : "cpu";
    s.device = bench_device(device);
    s.n_threads = threads;
    /* The pair search (CASE "" runs every case). */
    const char *neighbors = argc > 6 ? argv[6] : "auto";
    s.neighbors = !strcmp(neighbors, "dense")    ? MLFF_NEIGHBORS_DENSE
                  : !strcmp(neighbors, "sparse") ? MLFF_NEIGHBORS_SPARSE
                                                 : MLFF_NEIGHBORS_AUTO;
    s.precision = f64 ? MLFF_PRECISION_FLOAT64 : MLFF_PRECISION_FLOAT32;
    s.skin = argc > 7 ? atof(argv[7]) : 0.0;
    mlff_context *ctx;
    mlff_model *model;
    if (mlff_context_create(&s, &ctx) != MLFF_OK || mlff_model_load(ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "%s\n", mlff_last_error(ctx));
        return 1;
    }
    const char *isa = "";
    const int on_cpu = s.device == MLFF_DEVICE_CPU;
    double peak = on_cpu ? bench_peak_gflops(threads > 0 ? threads : 2, &isa) : 0;
    printf("device: %s, %s, energy + forces, neighbors %s, skin %g A\n", mlff_device_description(ctx),
           f64 ? "float64" : "float32", neighbors, s.skin);
    if (on_cpu)
        printf("measured FMA peak: %.0f GFLOP/s (%s)\n", peak, isa);
    printf("\n");
    printf("| case | atoms | median ms | mean ms | min ms | runs | searched | dense GFLOP | GFLOP/s | of peak |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");

    unsigned seed = 1;
    for (int k = 0; k < 4; k++) {
        bench_case *c = &cases[k];
        if (argc > 5 && !strstr(c->name, argv[5])) {
            bench_case_free(c);
            continue;
        }
        double *pos = malloc((size_t)c->n_atoms * 3 * sizeof *pos);
        double *forces = malloc((size_t)c->n_atoms * 3 * sizeof *forces);
        double energies[64], times[400];
        mlff_batch b = {c->n_systems, c->offsets, c->z, pos, NULL, NULL};
        int runs = 0, calls = 0;
        uint64_t searched = 0;
        double spent = 0;
        const double started = bench_now();
        while (runs < 400 && (runs < 10 || spent < 2.0)) {
            if (s.skin > 0)
                vibrate(pos, c->positions, c->n_atoms, calls);
            else
                bench_perturb(pos, c->positions, c->n_atoms, 0.01, &seed);
            mlff_stats before, after;
            mlff_get_stats(ctx, &before);
            double t0 = bench_now();
            if (mlff_evaluate(model, &b, energies, forces) != MLFF_OK) {
                fprintf(stderr, "%s\n", mlff_last_error(ctx));
                return 1;
            }
            double t = bench_now() - t0;
            mlff_get_stats(ctx, &after);
            if (bench_warming(started, calls++, 5))
                continue;
            times[runs++] = t;
            spent += t;
            searched += after.neighbor_builds - before.neighbor_builds;
        }
        qsort(times, (size_t)runs, sizeof *times, bench_compare_doubles);
        double median = times[runs / 2], gflop = dense_flops(model) / 1e9;
        printf("| %s | %lld | %.3f | %.3f | %.3f | %d | %llu | %.3f | %.1f | %.0f%% |\n", c->name,
               (long long)c->n_atoms, 1e3 * median, 1e3 * spent / runs, 1e3 * times[0], runs,
               (unsigned long long)searched, gflop, gflop / median,
               peak > 0 ? 100 * gflop / median / peak : 0);
        free(pos);
        free(forces);
        bench_case_free(c);
    }
    mlff_context_destroy(ctx);
    return 0;
}
