/*
 * Harmonic analysis of a Hessian, for `mlff hessian`: the mass-weighted
 * Hessian, optionally with the rigid motions projected out, its
 * eigenvalues as wavenumbers and its eigenvectors as normal modes, and the
 * zero-point energy. Units: Angstrom, eV, amu, cm^-1.
 */
#ifndef MLFF_TOOLS_HARMONIC_H
#define MLFF_TOOLS_HARMONIC_H

#include <stddef.h>
#include <stdint.h>

/* The standard atomic weight of element z (1..118): IUPAC 2016, the values
 * ASE uses (ase.data.atomic_masses); 0 for anything else. */
double harmonic_standard_mass(int z);

typedef enum harmonic_projection {
    HARMONIC_PROJECT_NONE = 0,      /* the mass-weighted Hessian as it is */
    HARMONIC_PROJECT_TRANSLATIONS,  /* the 3 translations (a periodic system) */
    HARMONIC_PROJECT_RIGID          /* translations and rotations (a molecule: 6, or 5 if linear) */
} harmonic_projection;

typedef struct harmonic_result {
    int64_t n;          /* 3 N */
    double *wavenumbers; /* n, ascending; imaginary ones negative; the projected rigid motions 0 */
    double *modes;       /* n x n: row k, mode k's Cartesian displacements (its mass-weighted
                          * eigenvector, normalised, divided by the square root of each mass) */
    int rigid;           /* the rigid motions projected out (0, 3, 5 or 6) */
    double zero_point_energy; /* eV: half of h c nu over the real modes that are not rigid motions */
} harmonic_result;

/* The analysis of hessian ((3N)^2, eV/A^2) of n_atoms atoms of these masses
 * at these positions. 0 on success; else -1 and a message in error. */
int harmonic_analysis(int64_t n_atoms, const double *masses, const double *positions, const double *hessian,
                      harmonic_projection projection, harmonic_result *out, char *error, size_t error_size);

void harmonic_result_free(harmonic_result *r);

#endif
