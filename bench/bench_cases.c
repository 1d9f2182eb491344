/* The benchmarks' structures (bench_cases.h). */
#include "bench_cases.h"

#include <stdlib.h>
#include <string.h>

#include "tests/common/reference.h"

int bench_case_make(bench_case *c, const char *dir, const char *name, const char *const *molecules, int n)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->n_systems = n;
    reference refs[4];
    int n_refs = 0;
    for (; n_refs < 4 && molecules[n_refs]; n_refs++)
        if (!reference_load(&refs[n_refs], dir, molecules[n_refs]))
            return 0;
    for (int s = 0; s < n; s++)
        c->offsets[s + 1] = c->offsets[s] + refs[s % n_refs].n_atoms;
    c->n_atoms = c->offsets[n];
    c->z = malloc((size_t)c->n_atoms * sizeof *c->z);
    c->positions = malloc((size_t)c->n_atoms * 3 * sizeof *c->positions);
    const int ok = c->z && c->positions;
    for (int s = 0; ok && s < n; s++) {
        const reference *r = &refs[s % n_refs];
        memcpy(c->z + c->offsets[s], r->species, (size_t)r->n_atoms * sizeof *c->z);
        memcpy(c->positions + 3 * c->offsets[s], r->positions, (size_t)r->n_atoms * 3 * sizeof(double));
    }
    for (int k = 0; k < n_refs; k++)
        reference_free(&refs[k]);
    return ok;
}

void bench_case_free(bench_case *c)
{
    free(c->z);
    free(c->positions);
    c->z = NULL;
    c->positions = NULL;
}
