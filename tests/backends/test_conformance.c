/*
 * Every op, forward and reverse, on a backend against the CPU backend: the
 * random graphs of tests/core/op_cases.c, in float64 and float32, each with
 * its output and the gradient of a weighted sum of it with respect to every
 * differentiable input. The op list comes from the registry: an op that no
 * graph here runs fails the test.
 * Usage: test_conformance BACKEND   (opencl, ...)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/plan.h"
#include "../common/check.h"
#include "../common/model.h"
#include "../core/op_cases.h"
#include "device.h"

/* Runs g (outputs ENERGY and FORCES) and returns both, concatenated, malloc'ed. */
static double *run(const mlff_graph *g, const mlff_backend_iface *iface, mlff_backend *be, mlff_dtype real,
                   int64_t *n)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t symbols[8] = {0};
    double *out = NULL;
    const int y = g->outputs[MLFF_OUTPUT_ENERGY], gx = g->outputs[MLFF_OUTPUT_FORCES];
    const int64_t ny = g->tensors[y].rows * g->tensors[y].cols, ng = g->tensors[gx].rows * g->tensors[gx].cols;
    if (mlff_plan_create(g, iface, be, real, &plan, &err) == MLFF_OK &&
        mlff_plan_bind(plan, symbols, &err) == MLFF_OK && mlff_plan_run(plan, 3u, &err) == MLFF_OK &&
        (out = malloc((size_t)(ny + ng) * sizeof *out)) &&
        mlff_plan_read(plan, y, out, &err) == MLFF_OK && mlff_plan_read(plan, gx, out + ny, &err) == MLFF_OK) {
        *n = ny + ng;
    } else {
        fprintf(stderr, "%s: %s\n", iface->name, err.message);
        free(out);
        out = NULL;
    }
    mlff_plan_destroy(plan);
    return out;
}

/* Largest difference relative to the largest reference value (at least 1). */
static double compare(const double *got, const double *want, int64_t n)
{
    double scale = 1, worst = 0;
    for (int64_t k = 0; k < n; k++)
        scale = fmax(scale, fabs(want[k]));
    for (int64_t k = 0; k < n; k++)
        worst = fmax(worst, isfinite(got[k]) ? fabs(got[k] - want[k]) : INFINITY);
    return worst / scale;
}

static void check_case(const op_case *c, int wrt_index, const mlff_backend_iface *iface, mlff_backend *be,
                       mlff_backend *cpu, char covered[MLFF_OP_COUNT])
{
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    int y = c->build(g, &rng, wrt, &n_wrt);
    if (wrt_index >= n_wrt) {
        mlff_graph_destroy(g);
        return;
    }
    int loss = op_case_weighted_sum(g, &rng, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, mlff_graph_gradient(g, loss, wrt[wrt_index], 1.0));
    CHECK(mlff_graph_status(g) == MLFF_OK, "%s: graph: %s", c->name, g->error.message);
    for (int k = 0; k < g->n_nodes; k++)
        covered[g->nodes[k].op] = 1;
    const mlff_dtype types[2] = {MLFF_DTYPE_F64, MLFF_DTYPE_F32};
    for (int t = 0; t < 2; t++) {
        if (!iface->supports_dtype(be, types[t]))
            continue;
        int64_t n_got = 0, n_want = 0;
        double *want = run(g, &mlff_backend_cpu, cpu, types[t], &n_want);
        double *got = run(g, iface, be, types[t], &n_got);
        const double tol = types[t] == MLFF_DTYPE_F64 ? 1e-12 : 2e-6;
        const double err = got && want && n_got == n_want ? compare(got, want, n_got) : INFINITY;
        printf("%-4s %-8s %-24s input %d: %.2e (tol %.0e)\n", err <= tol ? "ok" : "FAIL",
               types[t] == MLFF_DTYPE_F64 ? "float64" : "float32", c->name, wrt_index, err, tol);
        CHECK(err <= tol, "%s input %d: %s differs from the CPU by %g", c->name, wrt_index, iface->name, err);
        free(got);
        free(want);
    }
    mlff_graph_destroy(g);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
        return 2;
    }
    const mlff_backend_iface *iface = test_backend_named(argv[1]);
    if (!iface)
        test_skip("this build has no such backend");
    mlff_backend *be = test_open_backend(iface);
    mlff_backend_options cpu_opts = {.device_index = -1, .n_threads = 1};
    mlff_backend *cpu;
    mlff_error err;
    if (mlff_backend_cpu.open(&cpu_opts, &cpu, &err) != MLFF_OK)
        return 1;
    /* MLFF_DEVICE_FP64=off: the float-only kernels, float64 refused. */
    CHECK(test_device_fp64() || !iface->supports_dtype(be, MLFF_DTYPE_F64),
          "%s: float64 supported although MLFF_DEVICE_FP64=off", iface->name);
    char covered[MLFF_OP_COUNT] = {0};
    for (int c = 0; c < n_op_cases; c++)
        for (int w = 0; w < OP_CASE_MAX_WRT; w++)
            check_case(&op_cases[c], w, iface, be, cpu, covered);
    for (int op = 0; op < MLFF_OP_COUNT; op++)
        CHECK(covered[op], "op %s is never run on %s", mlff_op_get((mlff_op)op)->name, iface->name);
    mlff_backend_cpu.close(cpu);
    iface->close(be);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
