/* What the two model targets do with a model file they made. */
#ifndef MLFF_TESTS_FUZZ_MODEL_H
#define MLFF_TESTS_FUZZ_MODEL_H

#include "mlff.h"

/* Opens the context; "--verbose" among the target's arguments (libFuzzer
 * leaves arguments that start with "--" to the target) makes each load say
 * on standard error what it did (to see what a corpus loads). */
void fuzz_model_init(int argc, char **argv);

/* The context they load into: the CPU, float32, one thread, opened once. */
mlff_context *fuzz_model_context(void);

/*
 * Loads the model file at path. A file refused must say why (a known
 * status, a message); a model accepted must evaluate a molecule of its
 * elements (and a single atom of its first) or refuse it with a known
 * status and a message, and report its cutoff as a positive distance.
 * Returns the load's status.
 */
mlff_status fuzz_model_load_and_run(const char *path);

#endif
