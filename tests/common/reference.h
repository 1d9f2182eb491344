/* TorchANI reference structures (tests/data/reference) for the tests. */
#ifndef MLFF_TESTS_REFERENCE_H
#define MLFF_TESTS_REFERENCE_H

#include <stdint.h>

#define HARTREE_TO_EV 27.211386024367243

typedef struct reference {
    char name[64];
    int n_atoms;
    int32_t *species;   /* atomic numbers */
    double *positions;  /* n x 3 */
    double energy;      /* eV */
    double *forces;     /* n x 3, eV/Angstrom */
    double cell[9];     /* rows are lattice vectors; zeros if none */
    uint8_t pbc[3];
} reference;

/* The non-periodic public structures, NULL-terminated. */
extern const char *const reference_molecules[];
/* The periodic ones. */
extern const char *const reference_boxes[];

/* Loads dir/<name>.json; returns 0 on failure (message printed). */
int reference_load(reference *r, const char *dir, const char *name);
void reference_free(reference *r);

#endif
