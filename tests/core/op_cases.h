/*
 * One small random graph per differentiable op ("case"), shared by the op
 * tests: the finite-difference check of every VJP on the CPU backend now,
 * and the cross-backend comparison when more backends exist.
 */
#ifndef MLFF_TESTS_OP_CASES_H
#define MLFF_TESTS_OP_CASES_H

#include <stdint.h>

#include "core/graph.h"

typedef struct test_rng {
    uint64_t state;
} test_rng;

double test_uniform(test_rng *rng, double lo, double hi);

#define OP_CASE_MAX_WRT 4

typedef struct op_case {
    const char *name;
    mlff_op op; /* the op under test */
    /* Builds the op on random params; returns its output and lists the
     * params whose gradients are checked. */
    int (*build)(mlff_graph *g, test_rng *rng, int wrt[OP_CASE_MAX_WRT], int *n_wrt);
    int folded_adds; /* adds the GPU backends fold into the sums before them (MLFF_EPILOGUE_ADD) */
    int vectors_in_aev; /* pair_vectors made by the AEV where launches cost (core/vectors_in_aev.h) */
} op_case;

/* loss = sum(y * R) for a fixed random R: a scalar in which every entry of
 * y matters, to take gradients of. */
int op_case_weighted_sum(mlff_graph *g, test_rng *rng, int y);

extern const op_case op_cases[];
extern const int n_op_cases;

#endif
