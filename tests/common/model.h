/* The tests' way to get the default model on the CPU backend. */
#ifndef MLFF_TESTS_MODEL_H
#define MLFF_TESTS_MODEL_H

#include "mlff.h"

/* A context on the device MLFF_TEST_DEVICE names (default cpu) and the
 * default model. A missing device skips the test (see skip.h); else the test
 * exits with the library's
 * message if either cannot be had. Destroy *ctx when done. */
mlff_model *test_open_model(mlff_context **ctx, mlff_precision precision, mlff_neighbors neighbors,
                            double skin);

/* The same with any settings (their device is replaced by MLFF_TEST_DEVICE's). */
mlff_model *test_open_model_with(mlff_context **ctx, mlff_settings settings);

/* The device MLFF_TEST_DEVICE names (cpu when unset). */
mlff_device_kind test_device(void);

/* False when MLFF_DEVICE_FP64=off asks the device to act as one without
 * doubles (see backends/common/lowering.h). */
int test_device_fp64(void);

#endif
