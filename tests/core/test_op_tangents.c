/*
 * Second order: every op's tangent (forward mode), and the tangent of its
 * VJP (forward over reverse: Hessian-vector products), against central
 * finite differences in float64 on the CPU backend. Each case of
 * op_cases.c is a graph y = op(x, ...) with loss = sum(y * R) and its
 * gradient; the tangent pass along two random directions V of x must give
 * the derivatives of y and of the gradient along each. An op with a VJP or
 * a tangent that no case exercises fails the test, and so does a
 * second-order op that no tangent pass runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_check.h"
#include "op_cases.h"
#include "runtime/plan.h"

#define DIRECTIONS 2

static int failures;

typedef struct probe {
    mlff_graph *g;
    int x, v, y, grad, dy, dgrad;
    int64_t nx, ny;
} probe;

/* The case's graph with its loss, gradient and both tangents. */
static int build(const op_case *c, int wrt_index, probe *p, char covered[MLFF_OP_COUNT], char tangent_of[MLFF_OP_COUNT])
{
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = p->g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    p->y = c->build(g, &rng, wrt, &n_wrt);
    if (wrt_index >= n_wrt)
        return 0;
    p->x = wrt[wrt_index];
    const int loss = op_case_weighted_sum(g, &rng, p->y);
    p->grad = mlff_graph_gradient(g, loss, p->x, 1.0);
    const mlff_graph_tensor *xt = &g->tensors[p->x];
    p->nx = xt->rows * xt->cols;
    double *v = malloc((size_t)(DIRECTIONS * p->nx) * sizeof *v);
    for (int64_t k = 0; v && k < DIRECTIONS * p->nx; k++)
        v[k] = test_uniform(&rng, -1, 1);
    p->v = v ? mlff_graph_param(g, "directions", MLFF_DTYPE_REAL, xt->rows, DIRECTIONS * xt->cols, MLFF_DTYPE_F64, v)
             : -1;
    free(v);
    const int first_tangent_node = g->n_nodes;
    const int wanted[2] = {p->y, p->grad};
    int got[2];
    mlff_graph_tangents(g, DIRECTIONS, &p->x, &p->v, 1, wanted, 2, got);
    p->dy = got[0];
    p->dgrad = got[1];
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, p->y);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, p->grad);
    mlff_graph_set_output(g, MLFF_OUTPUT_CELL_FORCES, p->dy);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCE_TANGENTS, p->dgrad);
    if (mlff_graph_status(g) != MLFF_OK) {
        printf("FAIL %-24s input %d: %s\n", c->name, wrt_index, g->error.message);
        failures++;
        return 0;
    }
    p->ny = g->tensors[p->y].rows * g->tensors[p->y].cols;
    /* The ops the tangent pass went through, and the ones it made. */
    for (int k = 0; k < first_tangent_node; k++)
        tangent_of[g->nodes[k].op] = 1;
    for (int k = first_tangent_node; k < g->n_nodes; k++)
        covered[g->nodes[k].op] = 1;
    return 1;
}

static int run_read(mlff_plan *plan, unsigned outputs, const int *tensors, double **dst, int n, mlff_error *err)
{
    if (mlff_plan_run(plan, outputs, err) != MLFF_OK)
        return 0;
    for (int k = 0; k < n; k++)
        if (mlff_plan_read(plan, tensors[k], dst[k], err) != MLFF_OK)
            return 0;
    return 1;
}

static void check_case(const op_case *c, int wrt_index, mlff_backend *be, char covered[MLFF_OP_COUNT],
                       char tangent_of[MLFF_OP_COUNT])
{
    probe p = {0};
    if (!build(c, wrt_index, &p, covered, tangent_of)) {
        mlff_graph_destroy(p.g);
        return;
    }
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t symbols[8] = {0};
    const int64_t nx = p.nx, ny = p.ny;
    double *x0 = malloc((size_t)nx * sizeof *x0), *dir = malloc((size_t)(DIRECTIONS * nx) * sizeof *dir);
    double *y[2], *grad[2], *dy = malloc((size_t)(DIRECTIONS * ny) * sizeof *dy);
    double *dgrad = malloc((size_t)(DIRECTIONS * nx) * sizeof *dgrad);
    for (int s = 0; s < 2; s++) {
        y[s] = malloc((size_t)ny * sizeof **y);
        grad[s] = malloc((size_t)nx * sizeof **grad);
    }
    int ok = mlff_plan_create(p.g, &mlff_backend_cpu, be, MLFF_DTYPE_F64, &plan, &err) == MLFF_OK &&
             mlff_plan_bind(plan, symbols, &err) == MLFF_OK;
    const int analytic[2] = {p.dy, p.dgrad};
    double *analytic_dst[2] = {dy, dgrad};
    ok = ok && run_read(plan, (1u << MLFF_OUTPUT_COUNT) - 1, analytic, analytic_dst, 2, &err);
    if (ok) {
        memcpy(x0, p.g->tensors[p.x].host_data, (size_t)nx * sizeof *x0);
        memcpy(dir, p.g->tensors[p.v].host_data, (size_t)(DIRECTIONS * nx) * sizeof *dir);
    }
    /* Central differences along each direction, the step relative to x. */
    double scale = 1;
    for (int64_t k = 0; ok && k < nx; k++)
        scale = fmax(scale, fabs(x0[k]));
    const double h = 1e-6 * scale;
    double worst_y = 0, worst_grad = 0;
    const int primal[2] = {p.y, p.grad};
    double *x = malloc((size_t)nx * sizeof *x);
    for (int t = 0; ok && t < DIRECTIONS; t++) {
        for (int s = 0; ok && s < 2; s++) {
            for (int64_t k = 0; k < nx; k++) {
                const int64_t row = k / (nx / p.g->tensors[p.x].rows), col = k % (nx / p.g->tensors[p.x].rows);
                const int64_t cols = nx / p.g->tensors[p.x].rows;
                x[k] = x0[k] + (s ? -h : h) * dir[(row * DIRECTIONS + t) * cols + col];
            }
            double *dst[2] = {y[s], grad[s]};
            ok = mlff_plan_write(plan, p.x, MLFF_DTYPE_F64, x, &err) == MLFF_OK &&
                 run_read(plan, (1u << MLFF_OUTPUT_ENERGY) | (1u << MLFF_OUTPUT_FORCES), primal, dst, 2, &err);
        }
        const int64_t rows_y = p.g->tensors[p.y].rows, cols_y = ny / (rows_y ? rows_y : 1);
        for (int64_t k = 0; ok && k < ny; k++) {
            const double fd = (y[0][k] - y[1][k]) / (2 * h);
            const double an = dy[(k / cols_y * DIRECTIONS + t) * cols_y + k % cols_y];
            worst_y = fmax(worst_y, fabs(fd - an) / (1 + fabs(fd)));
        }
        const int64_t cols_x = nx / p.g->tensors[p.x].rows;
        for (int64_t k = 0; ok && k < nx; k++) {
            const double fd = (grad[0][k] - grad[1][k]) / (2 * h);
            const double an = dgrad[(k / cols_x * DIRECTIONS + t) * cols_x + k % cols_x];
            worst_grad = fmax(worst_grad, fabs(fd - an) / (1 + fabs(fd)));
        }
    }
    /* Finite differences of float64 over a step of 1e-6: about 1e-9 of
     * rounding; a wrong term is off by its size. */
    const int good = ok && worst_y < 1e-6 && worst_grad < 1e-6;
    printf("%-4s %-24s input %d: tangent %.2e, tangent of the gradient %.2e%s%s\n", good ? "ok" : "FAIL", c->name,
           wrt_index, worst_y, worst_grad, ok ? "" : ": ", ok ? "" : err.message);
    failures += !good;
    mlff_plan_destroy(plan);
    for (int s = 0; s < 2; s++) {
        free(y[s]);
        free(grad[s]);
    }
    free(x);
    free(x0);
    free(dir);
    free(dy);
    free(dgrad);
    mlff_graph_destroy(p.g);
}

int main(void)
{
    mlff_backend_options opts = {.device_index = -1, .n_threads = 2};
    mlff_backend *be;
    mlff_error err;
    if (mlff_backend_cpu.open(&opts, &be, &err) != MLFF_OK)
        return 1;
    char covered[MLFF_OP_COUNT] = {0}, tangent_of[MLFF_OP_COUNT] = {0};
    for (int c = 0; c < n_op_cases; c++)
        for (int w = 0; w < OP_CASE_MAX_WRT; w++)
            check_case(&op_cases[c], w, be, covered, tangent_of);
    for (int op = 0; op < MLFF_OP_COUNT; op++) {
        const mlff_op_info *info = mlff_op_get((mlff_op)op);
        if (info->jvp && !tangent_of[op]) {
            printf("FAIL op %s has a tangent that no case takes\n", info->name);
            failures++;
        }
        if (mlff_op_second_order((mlff_op)op) && !covered[op]) {
            printf("FAIL second-order op %s is never run by a tangent pass\n", info->name);
            failures++;
        }
    }
    mlff_backend_cpu.close(be);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
