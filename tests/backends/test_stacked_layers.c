/*
 * Stacked dense layers (core/ops.h: runs of rows, each through its own
 * weights) on a backend, evaluated again and again, each time by a plan of
 * its own (a plan reuses the results of constant nodes), against the CPU
 * backend: the stacked cases of tests/core/op_cases.c, float32, their output
 * and their input's gradient. For kernels that come out wrong now and then,
 * as ours did on PoCL's pthread device, whose work-groups run on several
 * threads at once (shaders/row_block.kernel): there some evaluations in
 * every 20 were wrong.
 * Usage: test_stacked_layers BACKEND TUNING CASE TIMES   (CASE: the cases
 * whose name contains it)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"
#include "tests/common/check.h"
#include "tests/core/op_cases.h"
#include "device.h"

/* g's outputs ENERGY (the case's) and FORCES (its input's gradient), by
 * a plan of its own, into out (n entries, both). */
static int evaluate(const mlff_graph *g, const mlff_backend_iface *iface, mlff_backend *be, double *out, int64_t n)
{
    const int y = g->outputs[MLFF_OUTPUT_ENERGY], gx = g->outputs[MLFF_OUTPUT_FORCES];
    const int64_t ny = g->tensors[y].rows * g->tensors[y].cols;
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t symbols[8] = {0};
    const int ok = ny + g->tensors[gx].rows * g->tensors[gx].cols == n &&
                   mlff_plan_create(g, iface, be, MLFF_DTYPE_F32, &plan, &err) == MLFF_OK &&
                   mlff_plan_bind(plan, symbols, &err) == MLFF_OK && mlff_plan_run(plan, 3u, &err) == MLFF_OK &&
                   mlff_plan_read(plan, y, out, &err) == MLFF_OK && mlff_plan_read(plan, gx, out + ny, &err) == MLFF_OK;
    if (!ok)
        fprintf(stderr, "%s: %s\n", iface->name, err.message);
    mlff_plan_destroy(plan);
    return ok;
}

static void check_case(const op_case *c, const mlff_backend_iface *iface, mlff_backend *be, mlff_backend *cpu,
                       int times)
{
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    const int y = c->build(g, &rng, wrt, &n_wrt);
    const int loss = op_case_weighted_sum(g, &rng, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, mlff_graph_gradient(g, loss, wrt[0], 1.0));
    CHECK(mlff_graph_status(g) == MLFF_OK, "%s: graph: %s", c->name, g->error.message);
    if (mlff_graph_status(g) != MLFF_OK) {
        mlff_graph_destroy(g);
        return;
    }
    const int gx = g->outputs[MLFF_OUTPUT_FORCES];
    const int64_t n = g->tensors[y].rows * g->tensors[y].cols + g->tensors[gx].rows * g->tensors[gx].cols;
    double *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    CHECK(want && got, "out of memory");
    if (want && got && evaluate(g, &mlff_backend_cpu, cpu, want, n)) {
        int wrong = 0;
        double worst = 0;
        for (int k = 0; k < times; k++) {
            const double err = evaluate(g, iface, be, got, n) ? test_relative_diff(got, want, n) : INFINITY;
            wrong += !(err <= 2e-6);
            worst = fmax(worst, err);
        }
        printf("%-4s %s: %d of %d evaluations wrong, worst %.2e (tol 2e-06)\n", wrong ? "FAIL" : "ok", c->name,
               wrong, times, worst);
        CHECK(!wrong, "%s: %d of %d evaluations on %s differ from the CPU's, by up to %g", c->name, wrong, times,
              iface->name, worst);
    } else {
        failures++;
    }
    free(want);
    free(got);
    mlff_graph_destroy(g);
}

int main(int argc, char **argv)
{
    const int times = argc == 5 ? atoi(argv[4]) : 0;
    if (times < 1) {
        fprintf(stderr, "usage: %s BACKEND TUNING CASE TIMES\n", argv[0]);
        return 2;
    }
    const mlff_backend_iface *iface = mlff_backend_named(argv[1]);
    if (!iface)
        test_skip("this build has no such backend");
    mlff_backend *be = test_open_backend(iface, argv[2]);
    mlff_backend_options cpu_opts = {.device_index = -1, .n_threads = 1};
    mlff_backend *cpu;
    mlff_error err;
    if (mlff_backend_cpu.open(&cpu_opts, &cpu, &err) != MLFF_OK)
        return 1;
    int cases = 0;
    for (int c = 0; c < n_op_cases; c++)
        if (strstr(op_cases[c].name, argv[3])) {
            check_case(&op_cases[c], iface, be, cpu, times);
            cases++;
        }
    CHECK(cases > 0, "no case's name contains '%s'", argv[3]);
    mlff_backend_cpu.close(cpu);
    iface->close(be);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
