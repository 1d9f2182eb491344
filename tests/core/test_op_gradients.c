/*
 * Every op's VJP against central finite differences, float64 on the CPU
 * backend. The op list comes from the registry: an op with a VJP but no case
 * in op_cases.c fails the test, and so does any op (backward ops included)
 * that no tested graph executes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_check.h"
#include "op_cases.h"

static int failures;

static void check_case(const op_case *c, mlff_backend *be, int wrt_index, char *covered)
{
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    int y = c->build(g, &rng, wrt, &n_wrt);
    if (wrt_index >= n_wrt) {
        mlff_graph_destroy(g);
        return;
    }
    int x = wrt[wrt_index];
    int loss = op_case_weighted_sum(g, &rng, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, loss);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, mlff_graph_gradient(g, loss, x, 1.0));
    double worst = fd_check_gradient(g, x, 1.0, 1e-6, be, covered);
    int ok = worst >= 0 && worst < 1e-6;
    printf("%-4s %-24s input %d: max relative error %.2e\n", ok ? "ok" : "FAIL", c->name, wrt_index,
           worst);
    failures += !ok;
    mlff_graph_destroy(g);
}

int main(void)
{
    mlff_backend_options opts = {.device_index = -1, .n_threads = 2};
    mlff_backend *be;
    mlff_error err;
    if (mlff_backend_cpu.open(&opts, &be, &err) != MLFF_OK)
        return 1;
    char covered[MLFF_OP_COUNT] = {0};
    for (int c = 0; c < n_op_cases; c++)
        for (int w = 0; w < OP_CASE_MAX_WRT; w++)
            check_case(&op_cases[c], be, w, covered);

    for (int op = 0; op < MLFF_OP_COUNT; op++) {
        const mlff_op_info *info = mlff_op_get((mlff_op)op);
        int has_case = 0;
        for (int c = 0; c < n_op_cases; c++)
            has_case |= op_cases[c].op == (mlff_op)op;
        if (info->vjp && !has_case) {
            printf("FAIL op %s has a VJP but no test case\n", info->name);
            failures++;
        }
        if (!covered[op] && !mlff_op_second_order((mlff_op)op)) { /* those: test_op_tangents */
            printf("FAIL op %s is never executed by a tested graph\n", info->name);
            failures++;
        }
    }
    mlff_backend_cpu.close(be);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
