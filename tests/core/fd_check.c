#include "fd_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"

static double run_sum(mlff_plan *plan, int out, mlff_error *err, int *ok)
{
    int64_t rows = mlff_plan_rows(plan, out);
    double *v = malloc((size_t)rows * sizeof *v), sum = 0;
    if (!v || mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, err) != MLFF_OK ||
        mlff_plan_read(plan, out, v, err) != MLFF_OK)
        *ok = 0;
    for (int64_t r = 0; *ok && r < rows; r++)
        sum += v[r];
    free(v);
    return sum;
}

double fd_check_gradient(const mlff_graph *g, int x, double seed, double h, mlff_backend *be,
                         char covered[MLFF_OP_COUNT])
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t *symbols = calloc((size_t)g->n_symbols, sizeof *symbols);
    if (mlff_graph_status(g) != MLFF_OK || !symbols ||
        mlff_plan_create(g, &mlff_backend_cpu, be, MLFF_DTYPE_F64, &plan, &err) != MLFF_OK ||
        mlff_plan_bind(plan, symbols, &err) != MLFF_OK) {
        fprintf(stderr, "cannot build the graph: %s %s\n", g->error.message, err.message);
        free(symbols);
        mlff_plan_destroy(plan);
        return -1;
    }
    free(symbols);
    for (int k = 0; covered && k < g->n_nodes; k++)
        covered[g->nodes[k].op] = 1;

    const mlff_graph_tensor *xt = &g->tensors[x];
    const int64_t n = xt->rows * xt->cols;
    const int out = g->outputs[MLFF_OUTPUT_ENERGY];
    double *x0 = malloc((size_t)n * sizeof *x0), *grad = malloc((size_t)n * sizeof *grad);
    int ok = x0 && grad && mlff_plan_run(plan, 3u, &err) == MLFF_OK &&
             mlff_plan_read(plan, g->outputs[MLFF_OUTPUT_FORCES], grad, &err) == MLFF_OK;
    double worst = 0;
    if (ok)
        memcpy(x0, xt->host_data, (size_t)n * sizeof *x0);
    for (int64_t k = 0; ok && k < n; k++) {
        const double step = h * fmax(1.0, fabs(x0[k])), keep = x0[k];
        x0[k] = keep + step;
        ok = mlff_plan_write(plan, x, MLFF_DTYPE_F64, x0, &err) == MLFF_OK;
        double up = run_sum(plan, out, &err, &ok);
        x0[k] = keep - step;
        ok = ok && mlff_plan_write(plan, x, MLFF_DTYPE_F64, x0, &err) == MLFF_OK;
        double down = run_sum(plan, out, &err, &ok);
        x0[k] = keep;
        double fd = seed * (up - down) / (2 * step);
        worst = fmax(worst, fabs(fd - grad[k]) / (1.0 + fabs(fd)));
    }
    if (!ok)
        fprintf(stderr, "running the graph failed: %s\n", err.message);
    free(x0);
    free(grad);
    mlff_plan_destroy(plan);
    return ok ? worst : -1;
}
