/*
 * Every op, forward and reverse, on a backend against the CPU backend: the
 * random graphs of tests/core/op_cases.c, in float64 and float32, each with
 * its output and the gradient of a weighted sum of it with respect to every
 * differentiable input. The op list comes from the registry: an op that no
 * graph here runs fails the test.
 * Where the backend claims second order, also the tangents of every case's
 * output and gradient (the tangent ops and the ops' T-blocked forms).
 * Usage: test_conformance BACKEND [TUNING [CASE]]   (opencl, ...; TUNING:
 * the backend's forms as settings.tuning gives them, "mlp=wide
 * sum_lanes=16": tests/backends/meson.build runs the matrix of them; CASE:
 * only the cases whose name contains it, and no check of coverage; or
 * kinds=KINDS: only the cases whose graphs run an op of these kinds,
 * comma-separated: gemm (LINEAR and its VJP), mlp (CELU_MLP and its VJP),
 * lanes (the ops that sum in lanes), for a form that changes no other op's
 * kernels (the run with every case is another's), and every op of those
 * kinds must have run)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/lowering.h"
#include "runtime/plan.h"
#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/core/op_cases.h"
#include "device.h"

/* The kinds of ops a run is limited to (kinds=KINDS); none: every op. */
typedef struct op_kinds {
    int limited, gemm, mlp, lanes;
} op_kinds;

static int parse_kinds(const char *text, op_kinds *k)
{
    *k = (op_kinds){.limited = 1};
    while (*text) {
        const size_t len = strcspn(text, ",");
        if (len == 4 && !strncmp(text, "gemm", len))
            k->gemm = 1;
        else if (len == 3 && !strncmp(text, "mlp", len))
            k->mlp = 1;
        else if (len == 5 && !strncmp(text, "lanes", len))
            k->lanes = 1;
        else
            return 0;
        text += len + (text[len] == ',');
    }
    return k->gemm || k->mlp || k->lanes;
}

static int kind_of(const op_kinds *k, mlff_op op)
{
    return !k->limited || (k->gemm && mlff_op_is_gemm(op)) || (k->mlp && mlff_op_is_mlp(op)) ||
           (k->lanes && mlff_op_sums_in_lanes(op));
}

/* Runs g (outputs ENERGY and FORCES) and returns both, concatenated,
 * malloc'ed; pair list `symmetric` (or -1) declared symmetric; the nodes
 * run into *nodes where not NULL. */
static double *run_declared(const mlff_graph *g, const mlff_backend_iface *iface, mlff_backend *be, mlff_dtype real,
                            int symmetric, int64_t *n, int *nodes)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t symbols[8] = {0};
    double *out = NULL;
    const int y = g->outputs[MLFF_OUTPUT_ENERGY], gx = g->outputs[MLFF_OUTPUT_FORCES];
    const int64_t ny = g->tensors[y].rows * g->tensors[y].cols, ng = g->tensors[gx].rows * g->tensors[gx].cols;
    const mlff_status made = mlff_plan_create(g, iface, be, real, &plan, &err);
    if (made == MLFF_OK && symmetric >= 0)
        mlff_plan_set_symmetric(plan, symmetric, 1);
    if (made == MLFF_OK && mlff_plan_bind(plan, symbols, &err) == MLFF_OK && mlff_plan_run(plan, 3u, &err) == MLFF_OK &&
        (out = malloc((size_t)(ny + ng) * sizeof *out)) &&
        mlff_plan_read(plan, y, out, &err) == MLFF_OK && mlff_plan_read(plan, gx, out + ny, &err) == MLFF_OK) {
        *n = ny + ng;
        if (nodes)
            *nodes = mlff_plan_nodes(plan, 3u);
    } else {
        fprintf(stderr, "%s: %s\n", iface->name, err.message);
        free(out);
        out = NULL;
    }
    mlff_plan_destroy(plan);
    return out;
}

static double *run(const mlff_graph *g, const mlff_backend_iface *iface, mlff_backend *be, mlff_dtype real,
                   int64_t *n, int *nodes)
{
    return run_declared(g, iface, be, real, -1, n, nodes);
}

/* Whether case c's graph for input wrt_index (its output and gradient)
 * runs an op of the kinds. */
static int case_of_kinds(const op_case *c, int wrt_index, const op_kinds *kinds)
{
    if (!kinds->limited)
        return 1;
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    const int y = c->build(g, &rng, wrt, &n_wrt);
    int wanted = 0;
    if (wrt_index < n_wrt) {
        mlff_graph_gradient(g, op_case_weighted_sum(g, &rng, y), wrt[wrt_index], 1.0);
        for (int k = 0; k < g->n_nodes; k++)
            wanted |= kind_of(kinds, g->nodes[k].op);
    }
    mlff_graph_destroy(g);
    return wanted;
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
        int cpu_nodes = 0, nodes = 0;
        double *want = run(g, &mlff_backend_cpu, cpu, types[t], &n_want, &cpu_nodes);
        double *got = run(g, iface, be, types[t], &n_got, &nodes);
        const double tol = types[t] == MLFF_DTYPE_F64 ? 1e-12 : 2e-6;
        const double err = got && want && n_got == n_want ? test_relative_diff(got, want, n_got) : INFINITY;
        printf("%-4s %-8s %-24s input %d: %.2e (tol %.0e)\n", err <= tol ? "ok" : "FAIL",
               types[t] == MLFF_DTYPE_F64 ? "float64" : "float32", c->name, wrt_index, err, tol);
        CHECK(err <= tol, "%s input %d: %s differs from the CPU by %g", c->name, wrt_index, iface->name, err);
        /* The CPU backend runs the adds, the GPU backends fold them;
         * where launches cost, the AEV makes its pair vectors. */
        const int folded = c->folded_adds + (iface->launches_cost ? c->vectors_in_aev : 0);
        CHECK(!got || !folded || nodes == cpu_nodes - folded, "%s: %d nodes on %s, %d on the CPU (%d folded)",
              c->name, nodes, iface->name, cpu_nodes, folded);
        free(got);
        free(want);
    }
    mlff_graph_destroy(g);
}

/* Second order (where the backend claims it): the case's graph with the
 * tangents of its output and of its gradient along two random directions
 * (core/tangent.c: the T-blocked forms and the tangent ops), each
 * against the CPU backend's. The cases that between them take every
 * T-blocked form and tangent op (every kernel costs PoCL and lavapipe
 * seconds to build, and CI runs this test in eight forms). */
static const char *const tangent_cases[] = {
    "mul", "mul (broadcast column)", "concat_cols", "scatter_add_rows (row sums)",
    "scatter_add_rows (few rows, weighted row sums)", "sum_cols (first 3)",
    "celu_mlp (members' mean, 4 stacks, 64 wide)", "linear + celu (4 stacks: runs of 3, 0, 20, 14 rows)",
    "pair_vectors (three lists: two gradients in one pass, the third added, folded)", "row_differences",
    "pair_shifts", "norm3", "cosine_cutoff", "ani_radial", "ani_angular (pair_triples)",
    "ani_angular (the AEV of positions in cells)", NULL};

static int takes_tangents(const op_case *c)
{
    for (int k = 0; tangent_cases[k]; k++)
        if (!strcmp(c->name, tangent_cases[k]))
            return 1;
    return 0;
}

#define TANGENT_DIRECTIONS 2
static double *run_tangents(const mlff_graph *g, const int tensors[2], const mlff_backend_iface *iface,
                            mlff_backend *be, mlff_dtype real, int64_t *n)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t symbols[8] = {0};
    const int64_t n0 = g->tensors[tensors[0]].rows * g->tensors[tensors[0]].cols;
    const int64_t n1 = g->tensors[tensors[1]].rows * g->tensors[tensors[1]].cols;
    double *out = malloc((size_t)(n0 + n1 > 0 ? n0 + n1 : 1) * sizeof *out);
    const int ok = out && mlff_plan_create(g, iface, be, real, &plan, &err) == MLFF_OK &&
                   mlff_plan_bind(plan, symbols, &err) == MLFF_OK &&
                   mlff_plan_run(plan, (1u << MLFF_OUTPUT_COUNT) - 1, &err) == MLFF_OK &&
                   mlff_plan_read(plan, tensors[0], out, &err) == MLFF_OK &&
                   mlff_plan_read(plan, tensors[1], out + n0, &err) == MLFF_OK;
    mlff_plan_destroy(plan);
    if (!ok) {
        fprintf(stderr, "%s: %s\n", iface->name, err.message);
        free(out);
        return NULL;
    }
    *n = n0 + n1;
    return out;
}

static void check_tangents(const op_case *c, int wrt_index, const mlff_backend_iface *iface, mlff_backend *be,
                           mlff_backend *cpu, char covered[MLFF_OP_COUNT])
{
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    const int y = c->build(g, &rng, wrt, &n_wrt);
    if (wrt_index >= n_wrt) {
        mlff_graph_destroy(g);
        return;
    }
    const int x = wrt[wrt_index];
    const int grad = mlff_graph_gradient(g, op_case_weighted_sum(g, &rng, y), x, 1.0);
    const int64_t rows = g->tensors[x].rows, cols = g->tensors[x].cols;
    double *v = malloc((size_t)(TANGENT_DIRECTIONS * rows * cols > 0 ? TANGENT_DIRECTIONS * rows * cols : 1) *
                       sizeof *v);
    for (int64_t k = 0; v && k < TANGENT_DIRECTIONS * rows * cols; k++)
        v[k] = test_uniform(&rng, -1, 1);
    const int dirs = v ? mlff_graph_param(g, "directions", MLFF_DTYPE_REAL, rows, TANGENT_DIRECTIONS * cols,
                                          MLFF_DTYPE_F64, v)
                       : -1;
    free(v);
    const int first = g->n_nodes, wanted[2] = {y, grad};
    int got[2] = {-1, -1};
    mlff_graph_tangents(g, TANGENT_DIRECTIONS, &x, &dirs, 1, wanted, 2, got);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, grad);
    mlff_graph_set_output(g, MLFF_OUTPUT_CELL_FORCES, got[0]);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCE_TANGENTS, got[1]);
    CHECK(mlff_graph_status(g) == MLFF_OK, "%s: tangent graph: %s", c->name, g->error.message);
    if (mlff_graph_status(g) != MLFF_OK) {
        mlff_graph_destroy(g);
        return;
    }
    for (int k = first; k < g->n_nodes; k++)
        covered[g->nodes[k].op] = 1;
    const mlff_dtype types[2] = {MLFF_DTYPE_F64, MLFF_DTYPE_F32};
    for (int t = 0; t < 2; t++) {
        if (!iface->supports_dtype(be, types[t]))
            continue;
        int64_t n_got = 0, n_want = 0;
        double *want = run_tangents(g, got, &mlff_backend_cpu, cpu, types[t], &n_want);
        double *mine = run_tangents(g, got, iface, be, types[t], &n_got);
        const double tol = types[t] == MLFF_DTYPE_F64 ? 1e-12 : 2e-6;
        const double err = mine && want && n_got == n_want ? test_relative_diff(mine, want, n_got) : INFINITY;
        printf("%-4s %-8s %-24s input %d tangents: %.2e (tol %.0e)\n", err <= tol ? "ok" : "FAIL",
               types[t] == MLFF_DTYPE_F64 ? "float64" : "float32", c->name, wrt_index, err, tol);
        CHECK(err <= tol, "%s input %d tangents: %s differs from the CPU by %g", c->name, wrt_index, iface->name, err);
        free(mine);
        free(want);
    }
    mlff_graph_destroy(g);
}

/* A constant sum with an add folded in (op case c, all parameters) is
 * not launched again while nothing changed: the second run reuses its
 * result, the same numbers. */
static void check_folded_reuse(const op_case *c, const mlff_backend_iface *iface, mlff_backend *be)
{
    test_rng rng = {0x9e3779b97f4a7c15ULL};
    mlff_graph *g = mlff_graph_create();
    int wrt[OP_CASE_MAX_WRT], n_wrt = 0;
    const int y = c->build(g, &rng, wrt, &n_wrt);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, y);
    const int64_t n = g->tensors[y].rows * g->tensors[y].cols;
    double first[64] = {0}, second[64] = {0};
    mlff_error err;
    mlff_error_clear(&err);
    mlff_plan *plan = NULL;
    int64_t symbols[8] = {0};
    int ok = n <= 64 && mlff_graph_status(g) == MLFF_OK &&
             mlff_plan_create(g, iface, be, MLFF_DTYPE_F32, &plan, &err) == MLFF_OK &&
             mlff_plan_bind(plan, symbols, &err) == MLFF_OK &&
             mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, &err) == MLFF_OK &&
             mlff_plan_read(plan, y, first, &err) == MLFF_OK;
    const uint64_t reused = ok ? mlff_plan_reused(plan) : 0;
    ok = ok && mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, &err) == MLFF_OK &&
         mlff_plan_read(plan, y, second, &err) == MLFF_OK;
    const int same = ok && memcmp(first, second, (size_t)n * sizeof *first) == 0 && first[0] != 0;
    const uint64_t saved = ok ? mlff_plan_reused(plan) - reused : 0;
    printf("%-4s %s, run again: %llu node(s) reused, %s\n", same && saved == 1 ? "ok" : "FAIL", c->name,
           (unsigned long long)saved, same ? "the same numbers" : "OTHER numbers");
    CHECK(ok, "%s: %s", c->name, err.message);
    CHECK(same && saved == 1, "%s on %s: run again, %llu nodes reused (want the folded one), same numbers: %d",
          c->name, iface->name, (unsigned long long)saved, same);
    mlff_plan_destroy(plan);
    mlff_graph_destroy(g);
}

/* A scatter whose index names a row past the output's: the evaluation
 * fails and says so (the device sort flags the key, and the flag is read
 * back with the results), and the next evaluation, with a good index, runs.
 * `bad` in order or not: the device sort takes another path for keys in
 * order already, which it knows from the copy it keeps of an index it
 * sorted (so a good index runs first). */
static void check_key_out_of_range(const mlff_backend_iface *iface, mlff_backend *be, const int32_t bad[3],
                                   const char *name)
{
    static const double x_values[6] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5};
    static const int32_t good[3] = {1, 3, 1};
    mlff_graph *g = mlff_graph_create();
    int x = mlff_graph_param(g, "x", MLFF_DTYPE_REAL, 3, 2, MLFF_DTYPE_F64, x_values);
    int index = mlff_graph_param(g, "index", MLFF_DTYPE_I32, 3, 1, MLFF_DTYPE_I32, good);
    int out = mlff_op_scatter_add_rows(g, x, index, MLFF_FIXED_ROWS, 4, MLFF_DTYPE_REAL);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, out);
    int64_t symbols[16] = {0};
    double got[8] = {0};
    mlff_plan *plan = NULL;
    mlff_error err;
    mlff_error_clear(&err);
    int ok = mlff_graph_status(g) == MLFF_OK &&
             mlff_plan_create(g, iface, be, MLFF_DTYPE_F32, &plan, &err) == MLFF_OK &&
             mlff_plan_bind(plan, symbols, &err) == MLFF_OK &&
             mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, &err) == MLFF_OK &&
             mlff_plan_read(plan, out, got, &err) == MLFF_OK &&
             mlff_plan_write(plan, index, MLFF_DTYPE_I32, bad, &err) == MLFF_OK;
    CHECK(ok, "key out of range on %s: %s%s", iface->name, g->error.message, err.message);
    mlff_status s = MLFF_OK;
    if (ok && (s = mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, &err)) == MLFF_OK)
        s = mlff_plan_read(plan, out, got, &err);
    printf("%-44s %s\n", name, err.message);
    CHECK(!ok || (s != MLFF_OK && strstr(err.message, "out of range")),
          "%s on %s: status %d, '%s'", name, iface->name, (int)s, err.message);
    mlff_error_clear(&err);
    ok = ok && mlff_plan_write(plan, index, MLFF_DTYPE_I32, good, &err) == MLFF_OK &&
         mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, &err) == MLFF_OK && mlff_plan_read(plan, out, got, &err) == MLFF_OK;
    CHECK(ok && got[3] == 0.25 && got[6] == 2.0 && got[0] == 0.0,
          "after %s on %s: %s, rows 1 and 3 %g %g", name, iface->name, err.message, got[3], got[6]);
    mlff_plan_destroy(plan);
    mlff_graph_destroy(g);
}

/*
 * The plan skips a scatter of no rows and x + 0 (core/plan.c). Run once with
 * the atom list filled, so that the scatter's buffer holds values, then
 * with it empty: out = (x + s) + x * 2s must then be x exactly, also where
 * the mul reads s and the plan has to write its zeros after all.
 */
static void check_elision(const mlff_backend_iface *iface, mlff_backend *be)
{
    static const double x_values[8] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5, -2.25, 1.0};
    static const int32_t atoms_values[2] = {1, 3};
    mlff_graph *g = mlff_graph_create();
    int x = mlff_graph_param(g, "x", MLFF_DTYPE_REAL, 4, 2, MLFF_DTYPE_F64, x_values);
    int atoms = mlff_graph_input_element_atoms(g, 0);
    int none = mlff_op_scatter_add_rows(g, mlff_op_gather_rows(g, x, atoms, MLFF_DTYPE_REAL), atoms,
                                        MLFF_FIXED_ROWS, 4, MLFF_DTYPE_REAL);
    int out = mlff_op_add(g, mlff_op_add(g, x, none), mlff_op_mul(g, x, mlff_op_add(g, none, none)));
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, out);
    int64_t symbols[16] = {0};
    double got[2][8];
    mlff_plan *plan = NULL;
    mlff_error err;
    mlff_error_clear(&err);
    int ok = mlff_graph_status(g) == MLFF_OK && g->n_symbols <= 16 &&
             mlff_plan_create(g, iface, be, MLFF_DTYPE_F32, &plan, &err) == MLFF_OK;
    for (int pass = 0; ok && pass < 2; pass++) {
        symbols[g->tensors[atoms].rows_symbol] = pass == 0 ? 2 : 0;
        ok = mlff_plan_bind(plan, symbols, &err) == MLFF_OK &&
             mlff_plan_write(plan, atoms, MLFF_DTYPE_I32, atoms_values, &err) == MLFF_OK &&
             mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY, &err) == MLFF_OK &&
             mlff_plan_read(plan, out, got[pass], &err) == MLFF_OK;
    }
    CHECK(ok, "elision on %s: %s%s", iface->name, g->error.message, err.message);
    double first = 0, second = 0;
    for (int k = 0; ok && k < 8; k++) {
        const double v = (float)x_values[k], s = k / 2 == 1 || k / 2 == 3 ? v : 0;
        first = fmax(first, fabs(got[0][k] - (v + s + 2 * v * s)));
        second = fmax(second, fabs(got[1][k] - v));
    }
    printf("%-4s elision: with atoms %.1e, without (skipped scatter and adds) %.1e\n",
           ok && first < 1e-5 && second == 0 ? "ok" : "FAIL", first, second);
    CHECK(ok && first < 1e-5, "elision on %s: %g with atoms", iface->name, first);
    CHECK(ok && second == 0, "elision on %s: %g without atoms (stale zeros read?)", iface->name, second);
    mlff_plan_destroy(plan);
    mlff_graph_destroy(g);
}

/*
 * Pair gradients over a pair list declared symmetric (each (i, j, n) with
 * its (j, i, -n), ordered by i, then j), whose entries by atom GPU backends
 * place without a sort (mlff_exec_tensor.symmetric): the same bits as with the sort, and the
 * CPU's numbers. The list has several images of one pair, self-images, an
 * atom without pairs, and runs long enough for the bisections.
 */
static void check_symmetric_pairs(const mlff_backend_iface *iface, mlff_backend *be, mlff_backend *cpu)
{
    enum { ATOMS = 9, MOST = 128 };
    int32_t pairs[2 * MOST];
    int n_pairs = 0;
    for (int i = 0; i < ATOMS; i++)
        for (int j = 0; j < ATOMS; j++) {
            const int lo = i < j ? i : j, hi = i < j ? j : i;
            int images = lo == hi ? (lo == 2 || lo == 5 ? 2 : 0) : (lo * 3 + hi * 5) % 4 ? 1 + (lo + hi) % 3 : 0;
            if (lo == 6 || hi == 6)
                images = 0; /* atom 6 has no pairs */
            for (int k = 0; k < images && n_pairs < MOST; k++, n_pairs++) {
                pairs[2 * n_pairs] = i;
                pairs[2 * n_pairs + 1] = j;
            }
        }
    test_rng rng = {0x2545f4914f6cdd1dULL};
    mlff_graph *g = mlff_graph_create();
    const int list = mlff_graph_param(g, "pairs", MLFF_DTYPE_I32, n_pairs, 2, MLFF_DTYPE_I32, pairs);
    double pos[3 * ATOMS], shifts[3 * MOST];
    for (int k = 0; k < 3 * ATOMS; k++)
        pos[k] = test_uniform(&rng, -2, 2);
    for (int k = 0; k < 3 * n_pairs; k++)
        shifts[k] = test_uniform(&rng, -1, 1);
    const int x = mlff_graph_param(g, "positions", MLFF_DTYPE_REAL, ATOMS, 3, MLFF_DTYPE_F64, pos);
    const int y = mlff_op_pair_vectors(g, x, list,
                                       mlff_graph_param(g, "shifts", MLFF_DTYPE_REAL, n_pairs, 3, MLFF_DTYPE_F64, shifts));
    const int loss = op_case_weighted_sum(g, &rng, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, y);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, mlff_graph_gradient(g, loss, x, 1.0));
    CHECK(mlff_graph_status(g) == MLFF_OK, "symmetric pairs: graph: %s", g->error.message);
    const mlff_dtype types[2] = {MLFF_DTYPE_F64, MLFF_DTYPE_F32};
    for (int t = 0; t < 2 && mlff_graph_status(g) == MLFF_OK; t++) {
        if (!iface->supports_dtype(be, types[t]))
            continue;
        int64_t n_want = 0, n_sorted = 0, n_declared = 0;
        double *want = run(g, &mlff_backend_cpu, cpu, types[t], &n_want, NULL);
        double *sorted = run(g, iface, be, types[t], &n_sorted, NULL);
        double *declared = run_declared(g, iface, be, types[t], list, &n_declared, NULL);
        const int ok = want && sorted && declared && n_sorted == n_want && n_declared == n_want;
        const double err = ok ? test_relative_diff(declared, want, n_want) : INFINITY, tol = t == 0 ? 1e-12 : 2e-6;
        const int same = ok && memcmp(declared, sorted, (size_t)n_want * sizeof *want) == 0;
        printf("%-4s %-8s pair_vectors (%d pairs declared symmetric): %.2e (tol %.0e), %s\n",
               err <= tol && same ? "ok" : "FAIL", t == 0 ? "float64" : "float32", n_pairs, err, tol,
               same ? "the bits of the sorted sums" : "NOT the bits of the sorted sums");
        CHECK(err <= tol, "symmetric pairs: %s differs from the CPU by %g", iface->name, err);
        CHECK(same, "symmetric pairs: %s sums differ from those of the sorted entries", iface->name);
        free(want);
        free(sorted);
        free(declared);
    }
    mlff_graph_destroy(g);
}

int main(int argc, char **argv)
{
    op_kinds kinds = {0};
    const char *only = argc > 3 && strncmp(argv[3], "kinds=", 6) ? argv[3] : NULL;
    if (argc < 2 || argc > 4 || (argc == 4 && !only && !parse_kinds(argv[3] + 6, &kinds))) {
        fprintf(stderr, "usage: %s BACKEND [TUNING [CASE | kinds=KINDS]] (KINDS: gemm, mlp, lanes, "
                "comma-separated)\n", argv[0]);
        return 2;
    }
    const mlff_backend_iface *iface = mlff_backend_named(argv[1]);
    if (!iface)
        test_skip("this build has no such backend");
    const char *tuning = argc > 2 ? argv[2] : NULL;
    mlff_backend *be = test_open_backend(iface, tuning);
    mlff_tuning asked;
    mlff_tuning_defaults(&asked);
    mlff_error asked_err;
    CHECK(mlff_tuning_set(&asked, tuning, "TUNING", NULL, &asked_err) == MLFF_OK, "%s", asked_err.message);
    mlff_backend_options cpu_opts = {.device_index = -1, .n_threads = 1};
    mlff_backend *cpu;
    mlff_error err;
    if (mlff_backend_cpu.open(&cpu_opts, &cpu, &err) != MLFF_OK)
        return 1;
    /* device_fp64=off: the float-only kernels, float64 refused. */
    CHECK(asked.device_fp64 || !iface->supports_dtype(be, MLFF_DTYPE_F64),
          "%s: float64 supported although device_fp64=off", iface->name);
    char covered[MLFF_OP_COUNT] = {0};
    for (int c = 0; c < n_op_cases; c++)
        for (int w = 0; w < OP_CASE_MAX_WRT && (iface->second_order || !mlff_op_of_tangents(op_cases[c].op)) &&
                        (!only || strstr(op_cases[c].name, only));
             w++)
            if (case_of_kinds(&op_cases[c], w, &kinds))
                check_case(&op_cases[c], w, iface, be, cpu, covered);
    for (int c = 0; c < n_op_cases && iface->second_order; c++)
        for (int w = 0; w < OP_CASE_MAX_WRT && (only ? strstr(op_cases[c].name, only) != NULL : takes_tangents(&op_cases[c]));
             w++)
            if (case_of_kinds(&op_cases[c], w, &kinds))
                check_tangents(&op_cases[c], w, iface, be, cpu, covered);
    int names = 0, named = 0;
    for (; tangent_cases[names]; names++)
        ;
    for (int c = 0; c < n_op_cases; c++)
        named += takes_tangents(&op_cases[c]);
    CHECK(named == names, "%d of the %d tangent cases named are op cases", named, names);
    if (only) {
        mlff_backend_cpu.close(cpu);
        iface->close(be);
        printf("%s\n", failures ? "FAILED" : "all passed");
        return failures ? 1 : 0;
    }
    /* These run scatters, gathers and adds (no op of any kind), and pair
     * vectors and their VJP (which sums in lanes). */
    if (!kinds.limited) {
        check_elision(iface, be);
        for (int c = 0; c < n_op_cases; c++)
            if (op_cases[c].folded_adds && op_cases[c].op == MLFF_OP_SCATTER_ADD_ROWS)
                check_folded_reuse(&op_cases[c], iface, be);
        static const int32_t unsorted[3] = {1, 7, 0}, in_order[3] = {0, 1, 7};
        check_key_out_of_range(iface, be, unsorted, "scatter_add_rows (key out of range)");
        check_key_out_of_range(iface, be, in_order, "scatter_add_rows (in order, key out of range)");
    }
    if (kind_of(&kinds, MLFF_OP_PAIR_VECTORS_VJP))
        check_symmetric_pairs(iface, be, cpu);
    /* The ops of tangent passes run where a backend claims second order
     * (backend.h), and are checked there by their own cases. Limited to
     * some kinds, every op of those kinds. */
    for (int op = 0; op < MLFF_OP_COUNT; op++)
        CHECK(covered[op] || !kind_of(&kinds, (mlff_op)op) ||
                  (mlff_op_of_tangents((mlff_op)op) && !iface->second_order),
              "op %s is never run on %s", mlff_op_get((mlff_op)op)->name, iface->name);
    mlff_backend_cpu.close(cpu);
    iface->close(be);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
