/* Timing helpers shared by the benchmark programs. */
#ifndef MLFF_BENCH_UTIL_H
#define MLFF_BENCH_UTIL_H

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

/* For qsort of doubles (medians). */
static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
