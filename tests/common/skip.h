/* Skipping a test whose device is missing: exit 77 (meson's "skipped"),
 * except with CI=true, where it fails, so that CI cannot pass by skipping. */
#ifndef MLFF_TESTS_SKIP_H
#define MLFF_TESTS_SKIP_H

void test_skip(const char *why);

#endif
