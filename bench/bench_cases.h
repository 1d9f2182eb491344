/* The benchmarks' structures: a batch of reference molecules (bench_ani, bench_hessian). */
#ifndef MLFF_BENCH_CASES_H
#define MLFF_BENCH_CASES_H

#include <stdint.h>

typedef struct bench_case {
    const char *name;
    int n_systems; /* at most 64 */
    int64_t offsets[65];
    int32_t *z;
    double *positions;
    int64_t n_atoms;
} bench_case;

/* n systems cycling through the named reference molecules (NULL-terminated,
 * at most four) of tests/data/reference; 0 when they cannot be read. */
int bench_case_make(bench_case *c, const char *dir, const char *name, const char *const *molecules, int n);

void bench_case_free(bench_case *c);

#endif
