/*
 * Harmonic analysis of a Hessian, for `mlff hessian`: the mass-weighted
 * Hessian, optionally with the rigid motions projected out, its
 * eigenvalues as wavenumbers and its eigenvectors as normal modes, and the
 * zero-point energy. Units: Angstrom, eV, amu, cm^-1.
 *
 * Conventions are ASE's (ase.vibrations.VibrationsData), so that its users
 * get the same numbers: the eigenvalues of M^-1/2 H M^-1/2, converted with
 * ase.units' constants (CODATA 2014 in the ASE of Debian 12, which TorchANI
 * uses too), and modes that are the eigenvectors divided by the square root
 * of each atom's mass.
 */
#ifndef MLFF_TOOLS_HARMONIC_H
#define MLFF_TOOLS_HARMONIC_H

#include <stddef.h>
#include <stdint.h>

/* The standard atomic weight of element z (1..118): IUPAC 2016, the values
 * ASE uses (ase.data.atomic_masses); 0 for anything else. */
double harmonic_standard_mass(int z);

/* The wavenumber (cm^-1) of an eigenvalue of 1 eV / (Angstrom^2 amu) of the
 * mass-weighted Hessian, and a wavenumber's energy h c (eV cm). */
double harmonic_wavenumber_unit(void);
double harmonic_ev_per_wavenumber(void);

typedef enum harmonic_projection {
    HARMONIC_PROJECT_NONE = 0,      /* the mass-weighted Hessian as it is */
    HARMONIC_PROJECT_TRANSLATIONS,  /* the 3 translations (a periodic system) */
    HARMONIC_PROJECT_RIGID          /* translations and rotations (a molecule: 6, or 5 if linear) */
} harmonic_projection;

/* A molecule whose atoms lie within this rms distance (Angstrom, mass
 * weighted) of a line through its centre of mass is linear: 5 rigid motions.
 * A wider tolerance than rounding, because a rotation about a nearly linear
 * molecule's axis is one of its bending modes, not a rigid motion. */
#define HARMONIC_LINEAR_TOLERANCE 1e-3

typedef struct harmonic_result {
    int64_t n;           /* 3 N */
    double *wavenumbers; /* n, ascending; imaginary ones negative; the projected rigid motions exactly 0 */
    double *modes;       /* n x n: row k, mode k's Cartesian displacements, atom after atom (its
                          * normalised mass-weighted eigenvector divided by the square root of each
                          * atom's mass, as ASE's VibrationsData.get_modes) */
    int rigid;           /* the rigid motions projected out (0, 3, 5 or 6; fewer for 1 or 2 atoms) */
    double zero_point_energy; /* eV: half of h c nu summed over the real, non-rigid modes */
} harmonic_result;

/* The analysis of hessian ((3N)^2, eV/A^2, symmetrised here) of n_atoms
 * atoms of these masses (amu) at these positions (Angstrom). 0 on success;
 * else -1 and a message in error. */
int harmonic_analysis(int64_t n_atoms, const double *masses, const double *positions, const double *hessian,
                      harmonic_projection projection, harmonic_result *out, char *error, size_t error_size);

void harmonic_result_free(harmonic_result *r);

#endif
