/* Opening the backend a device test is for. A missing device skips the test
 * (exit 77), except with CI=true, where it fails: CI must run them all. */
#ifndef MLFF_TESTS_DEVICE_H
#define MLFF_TESTS_DEVICE_H

#include "backends/registry.h"
#include "tests/common/skip.h"

/* Opens it, CPU implementations (PoCL, lavapipe) allowed; exits 77 or 1 if it cannot. */
mlff_backend *test_open_backend(const mlff_backend_iface *iface);

#endif
