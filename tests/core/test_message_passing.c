/*
 * A small message-passing network (SchNet-like: embeddings, a radial filter
 * with a cosine envelope, messages gathered from neighbours and summed onto
 * atoms with scatter_add_rows) built from the generic ops, with its forces
 * from the reverse pass checked against finite differences: the IR is not
 * ANI-shaped.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fd_check.h"
#include "op_cases.h"

#define N_ATOMS 6
#define N_PAIRS 12
#define FEATURES 4

static int random_param(mlff_graph *g, test_rng *rng, int64_t rows, int64_t cols, double scale)
{
    double v[64];
    for (int64_t k = 0; k < rows * cols; k++)
        v[k] = test_uniform(rng, -scale, scale);
    return mlff_graph_param(g, "weights", MLFF_DTYPE_REAL, rows, cols, MLFF_DTYPE_F64, v);
}

static int index_param(mlff_graph *g, int64_t rows, int64_t cols, const int32_t *v)
{
    return mlff_graph_param(g, "index", MLFF_DTYPE_I32, rows, cols, MLFF_DTYPE_I32, v);
}

int main(void)
{
    /* Two systems of three atoms: a bent triatomic and a near-linear one. */
    static const double positions[N_ATOMS * 3] = {
        0.00, 0.00, 0.00, 0.96, 0.00, 0.00, -0.24, 0.93, 0.05,
        5.00, 5.00, 5.00, 6.10, 5.10, 5.00, 7.30, 5.00, 5.20,
    };
    static const int32_t species[N_ATOMS] = {0, 1, 1, 0, 0, 1};
    static const int32_t system[N_ATOMS] = {0, 0, 0, 1, 1, 1};
    int32_t pairs[N_PAIRS * 2], centers[N_PAIRS], neighbours[N_PAIRS];
    int p = 0;
    for (int i = 0; i < N_ATOMS; i++)
        for (int j = 0; j < N_ATOMS; j++)
            if (i != j && system[i] == system[j]) {
                pairs[2 * p] = centers[p] = i;
                pairs[2 * p + 1] = neighbours[p] = j;
                p++;
            }
    static const double zero_shifts[N_PAIRS * 3] = {0};

    test_rng rng = {12345};
    mlff_graph *g = mlff_graph_create();
    int pos = mlff_graph_param(g, "positions", MLFF_DTYPE_REAL, N_ATOMS, 3, MLFF_DTYPE_F64, positions);
    int pair_index = index_param(g, N_PAIRS, 2, pairs);
    int shifts = mlff_graph_param(g, "shifts", MLFF_DTYPE_REAL, N_PAIRS, 3, MLFF_DTYPE_F64, zero_shifts);

    /* Embeddings per species. */
    int h0 = mlff_op_gather_rows(g, random_param(g, &rng, 2, FEATURES, 1.0),
                                 index_param(g, N_ATOMS, 1, species), MLFF_DTYPE_REAL);
    /* Distance filter: a learned function of r_ij times a smooth cutoff. */
    int d = mlff_op_norm3(g, mlff_op_pair_vectors(g, pos, pair_index, shifts));
    int filter = mlff_op_celu(g, mlff_op_linear(g, d, random_param(g, &rng, FEATURES, 1, 1.0),
                                                random_param(g, &rng, FEATURES, 1, 0.5), 1),
                              0.5);
    filter = mlff_op_mul(g, filter, mlff_op_cosine_cutoff(g, d, 3.0));
    /* Messages from neighbour j, summed onto center i. */
    int messages = mlff_op_mul(g, mlff_op_gather_rows(g, h0, index_param(g, N_PAIRS, 1, neighbours),
                                                      MLFF_DTYPE_REAL),
                               filter);
    int h1 = mlff_op_add(g, h0, mlff_op_scatter_add_rows(g, messages, index_param(g, N_PAIRS, 1, centers),
                                                         MLFF_FIXED_ROWS, N_ATOMS, MLFF_DTYPE_REAL));
    /* Atomic energies, summed per system in double. */
    int hidden = mlff_op_celu(g, mlff_op_linear(g, h1, random_param(g, &rng, 8, FEATURES, 1.0),
                                                random_param(g, &rng, 8, 1, 0.5), 1),
                              1.0);
    int atomic = mlff_op_linear(g, hidden, random_param(g, &rng, 1, 8, 1.0),
                                random_param(g, &rng, 1, 1, 0.5), 1);
    int energy = mlff_op_scatter_add_rows(g, atomic, index_param(g, N_ATOMS, 1, system),
                                          MLFF_FIXED_ROWS, 2, MLFF_DTYPE_F64);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, energy);
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, mlff_graph_gradient(g, energy, pos, -1.0));

    mlff_backend_options opts = {.device_index = -1, .n_threads = 1};
    mlff_backend *be;
    mlff_error err;
    if (mlff_backend_cpu.open(&opts, &be, &err) != MLFF_OK)
        return 1;
    double worst = fd_check_gradient(g, pos, -1.0, 1e-4, be, NULL);
    printf("message passing forces vs finite differences: max error %.2e (tolerance 1e-6)\n", worst);
    mlff_backend_cpu.close(be);
    mlff_graph_destroy(g);
    return worst >= 0 && worst < 1e-6 ? 0 : 1;
}
