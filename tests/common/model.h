/* The tests' way to get the default model on the CPU backend. */
#ifndef MLFF_TESTS_MODEL_H
#define MLFF_TESTS_MODEL_H

#include "mlff.h"

/* A CPU context and the default model; the test exits with the library's
 * message if either cannot be had. Destroy *ctx when done. */
mlff_model *test_open_model(mlff_context **ctx, mlff_precision precision, mlff_neighbors neighbors,
                            double skin);

#endif
