/* Helpers shared by the benchmark programs: timing, warm-up, perturbed positions, medians. */
#ifndef MLFF_BENCH_UTIL_H
#define MLFF_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlff.h"

/* "opencl", "vulkan" or anything else (the CPU). */
static inline mlff_device_kind bench_device(const char *name)
{
    return !strcmp(name, "opencl") ? MLFF_DEVICE_OPENCL : !strcmp(name, "vulkan") ? MLFF_DEVICE_VULKAN : MLFF_DEVICE_CPU;
}

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether a case still warms up: for its first `min_calls` calls and its
 * first second. A GPU left idle for a few seconds (while a process compiles
 * its kernels) clocks down, and takes some hundred milliseconds of work to
 * clock up again (bench/RESULTS.md, "The first run on a fresh machine"). */
#define BENCH_WARM_UP_SECONDS 1.0
static inline int bench_warming(double started, int calls, int min_calls)
{
    return calls < min_calls || bench_now() - started < BENCH_WARM_UP_SECONDS;
}

/* Positions of n atoms: the reference's, each coordinate moved by up to
 * +-amplitude / 2 (nothing can be cached between calls). */
static inline void bench_perturb(double *pos, const double *ref, int64_t n, double amplitude, unsigned *seed)
{
    for (int64_t k = 0; k < 3 * n; k++)
        pos[k] = ref[k] + amplitude * ((double)rand_r(seed) / RAND_MAX - 0.5);
}

/* For qsort of doubles (medians). */
static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
