/* Timing helpers shared by the benchmark programs. */
#ifndef MLFF_BENCH_UTIL_H
#define MLFF_BENCH_UTIL_H

#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* For qsort of doubles (medians). */
static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
