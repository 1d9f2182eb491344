/* Finite-difference check of a graph's reverse pass, float64 on the CPU backend. */
#ifndef MLFF_TESTS_FD_CHECK_H
#define MLFF_TESTS_FD_CHECK_H

#include "backends/backend.h"
#include "core/graph.h"

/*
 * g's ENERGY output is the scalar function (summed over its rows) and its
 * FORCES output is seed * d(ENERGY)/d(x), x being a float64 parameter of g.
 * Compares it with central differences of step h (relative to |x|, at least
 * h) and returns the largest error |fd - grad| / (1 + |fd|), or -1 if the
 * graph could not run. covered (may be NULL) gets 1 for every op of g.
 */
double fd_check_gradient(const mlff_graph *g, int x, double seed, double h, mlff_backend *be,
                         char covered[MLFF_OP_COUNT]);

#endif
