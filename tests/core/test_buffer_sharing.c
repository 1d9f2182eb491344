/*
 * Buffers shared by tensors whose lives do not overlap (runtime/buffer_sharing.h):
 * a chain of pair-sized tensors takes two buffers, not one each; a tensor
 * read through an add (which the plan may elide, x + 0 read as x) lives
 * as long as the add's readers; no node reads and writes one buffer;
 * atoms' and pairs' tensors never share; an output read through an elided
 * add keeps its terms' buffers to the end of a run. The numbers every model gives with shared buffers are the
 * other tests' (every backend's, against references).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/graph.h"
#include "core/ops.h"
#include "runtime/buffer_sharing.h"
#include "runtime/plan.h"

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

enum { MOST = 64 };

typedef struct shared {
    int owner[MOST];
    size_t row_bytes[MOST];
} shared;

/* Every internal tensor shareable, written by its producer; none read after a run. */
static void share(const mlff_graph *g, shared *out)
{
    uint8_t shareable[MOST] = {0}, read_after[MOST] = {0};
    int written_at[MOST];
    for (int t = 0; t < g->n_tensors; t++) {
        written_at[t] = -1;
        out->row_bytes[t] = (size_t)g->tensors[t].cols * 8;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        written_at[g->nodes[k].output] = k;
        shareable[g->nodes[k].output] = 1;
    }
    mlff_error err = {0};
    check(mlff_share_buffers(g, shareable, read_after, written_at, out->row_bytes, out->owner, &err) == MLFF_OK, err.message);
}

/* x -> scale -> scale -> ...: each read only by the next. */
static void chain(void)
{
    mlff_graph *g = mlff_graph_create();
    const int pairs = mlff_graph_input_pairs(g, 5.0);
    const int vectors = mlff_graph_pair_vectors(g, mlff_graph_input_positions(g), pairs);
    int t[6];
    t[0] = mlff_op_scale(g, vectors, 2.0);
    for (int k = 1; k < 6; k++)
        t[k] = mlff_op_scale(g, t[k - 1], 2.0);
    check(mlff_graph_status(g) == MLFF_OK && g->n_tensors <= MOST, "the chain's graph");
    shared s;
    share(g, &s);
    for (int k = 1; k < 6; k++)
        check(s.owner[t[k]] != s.owner[t[k - 1]], "a node reads and writes one buffer");
    check(s.owner[t[2]] == s.owner[t[0]] && s.owner[t[4]] == s.owner[t[0]], "every other tensor of a chain shares");
    check(s.owner[t[3]] == s.owner[t[1]] && s.owner[t[5]] == s.owner[t[1]], "every other tensor of a chain shares");
    check(s.owner[t[1]] == s.owner[vectors], "the vectors, last read by t0's node, leave t1 their buffer");
    mlff_graph_destroy(g);
}

/* y = a + b, then z = y * 2 long after: a (or b) may be read in y's place. */
static void add_terms(void)
{
    mlff_graph *g = mlff_graph_create();
    const int pairs = mlff_graph_input_pairs(g, 5.0);
    const int vectors = mlff_graph_pair_vectors(g, mlff_graph_input_positions(g), pairs);
    const int a = mlff_op_scale(g, vectors, 2.0), b = mlff_op_scale(g, vectors, 3.0);
    const int y = mlff_op_add(g, a, b);
    const int c = mlff_op_scale(g, vectors, 4.0); /* after the add, before y's reader */
    const int d = mlff_op_scale(g, c, 5.0);
    const int z = mlff_op_mul(g, y, d);
    check(mlff_graph_status(g) == MLFF_OK && g->n_tensors <= MOST, "the add's graph");
    shared s;
    share(g, &s);
    const int during[2] = {c, d};
    for (int k = 0; k < 2; k++) {
        check(s.owner[during[k]] != s.owner[a], "an add's term lives as long as the add's readers");
        check(s.owner[during[k]] != s.owner[b], "an add's term lives as long as the add's readers");
    }
    check(s.owner[z] == s.owner[a] || s.owner[z] == s.owner[b] || s.owner[z] == s.owner[c],
          "the last product takes a buffer freed before it");
    mlff_graph_destroy(g);
}

/* Pairs' and atoms' tensors. */
static void symbols(void)
{
    mlff_graph *g = mlff_graph_create();
    const int pairs = mlff_graph_input_pairs(g, 5.0);
    const int positions = mlff_graph_input_positions(g);
    const int vectors = mlff_graph_pair_vectors(g, positions, pairs); /* node 0, read at 1 and 3 */
    const int narrow = mlff_op_norm3(g, vectors);                     /* node 1, [P, 1] */
    const int on_atoms = mlff_op_scale(g, positions, 2.0);            /* node 2, [A, 3] */
    const int first = mlff_op_scale(g, vectors, 2.0);                 /* node 3 */
    const int second = mlff_op_scale(g, first, 3.0);                  /* node 4 */
    const int last = mlff_op_scale(g, narrow, 1.0);                   /* node 5 */
    check(mlff_graph_status(g) == MLFF_OK && g->n_tensors <= MOST, "the symbols' graph");
    shared s;
    share(g, &s);
    check(s.owner[on_atoms] == on_atoms, "an atoms' tensor shares with no pairs' tensor");
    check(s.owner[second] == s.owner[vectors], "a pairs' tensor takes the buffer freed before it");
    check(s.owner[last] == s.owner[vectors] || s.owner[last] == s.owner[first],
          "a narrower tensor takes a wider buffer freed before it");
    mlff_graph_destroy(g);
}

/* forces = a + (a scatter of no pairs): the plan elides the add and reads
 * a's buffer after the run, which a later node must not have taken. */
static void output_through_an_elided_add(mlff_backend *be)
{
    mlff_graph *g = mlff_graph_create();
    const int positions = mlff_graph_input_positions(g), pairs = mlff_graph_input_pairs(g, 5.0);
    const int centers = mlff_op_index_column(g, pairs, 0);
    const int a = mlff_op_scale(g, positions, 2.0);
    const int none = mlff_op_scatter_add_rows(g, mlff_op_gather_rows(g, positions, centers, MLFF_DTYPE_REAL), centers,
                                              MLFF_SYMBOL_ATOMS, 0, MLFF_DTYPE_REAL);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, mlff_op_add(g, a, none));
    const int after = mlff_op_scale(g, positions, 5.0); /* a's buffer were it free after the add */
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, mlff_op_scale(g, after, 1.0));
    mlff_error err = {0};
    mlff_plan *plan = NULL;
    const int64_t sizes[3] = {2, 1, 0}; /* atoms, systems, pairs */
    const double x[6] = {0.5, -1.0, 2.0, 3.0, 0.25, -4.0};
    double forces[6] = {0};
    const int ok = mlff_graph_status(g) == MLFF_OK && g->n_symbols == 3 &&
                   mlff_plan_create(g, &mlff_backend_cpu, be, MLFF_DTYPE_F64, &plan, &err) == MLFF_OK &&
                   mlff_plan_bind(plan, sizes, &err) == MLFF_OK &&
                   mlff_plan_write(plan, positions, MLFF_DTYPE_F64, x, &err) == MLFF_OK &&
                   mlff_plan_run(plan, 1u << MLFF_OUTPUT_ENERGY | 1u << MLFF_OUTPUT_FORCES, &err) == MLFF_OK &&
                   mlff_plan_read(plan, g->outputs[MLFF_OUTPUT_FORCES], forces, &err) == MLFF_OK;
    check(ok, err.message[0] ? err.message : g->error.message);
    for (int k = 0; ok && k < 6; k++)
        check(forces[k] == 2.0 * x[k], "an output read through an elided add holds its term's values");
    mlff_plan_destroy(plan);
    mlff_graph_destroy(g);
}

int main(void)
{
    chain();
    add_terms();
    symbols();
    mlff_backend_options opts = {.device_index = -1, .n_threads = 1};
    mlff_backend *be = NULL;
    mlff_error err = {0};
    check(mlff_backend_cpu.open(&opts, &be, &err) == MLFF_OK, err.message);
    if (be) {
        output_through_an_elided_add(be);
        mlff_backend_cpu.close(be);
    }
    if (failures)
        return 1;
    printf("buffer sharing: ok\n");
    return 0;
}
