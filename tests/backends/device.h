/* Opening the backend a device test is for. A missing device skips the test
 * (exit 77), except with CI=true, where it fails: CI must run them all. */
#ifndef MLFF_TESTS_DEVICE_H
#define MLFF_TESTS_DEVICE_H

#include "backends/registry.h"
#include "tests/common/skip.h"

/* Opens it, CPU implementations (PoCL, lavapipe) allowed, with the options
 * a context would give it (the kernel cache ...) and its tuning record:
 * the table's, the environment's keys over it, then `tuning` (keys as in
 * settings.tuning; may be NULL); exits 77 or 1 if it cannot. */
mlff_backend *test_open_backend(const mlff_backend_iface *iface, const char *tuning);

#endif
