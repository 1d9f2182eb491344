/* The assertion of the C tests: reports the failed condition with its line
 * and counts it; the test returns failures ? 1 : 0 at the end. */
#ifndef MLFF_TESTS_CHECK_H
#define MLFF_TESTS_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "FAIL (line %d): ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);                  \
            fputc('\n', stderr);                           \
            failures++;                                    \
        }                                                  \
    } while (0)

/* The largest |a[k] - b[k]|. */
static inline double test_max_diff(const double *a, const double *b, int64_t n)
{
    double worst = 0;
    for (int64_t k = 0; k < n; k++)
        worst = fmax(worst, fabs(a[k] - b[k]));
    return worst;
}

/* The largest |got[k] - want[k]| (infinite where got is not finite)
 * relative to the largest |want[k]|, taken as at least 1. */
static inline double test_relative_diff(const double *got, const double *want, int64_t n)
{
    double scale = 1, worst = 0;
    for (int64_t k = 0; k < n; k++)
        scale = fmax(scale, fabs(want[k]));
    for (int64_t k = 0; k < n; k++)
        worst = fmax(worst, isfinite(got[k]) ? fabs(got[k] - want[k]) : INFINITY);
    return worst / scale;
}

#endif
