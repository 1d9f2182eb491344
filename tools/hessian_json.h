/*
 * One frame of `mlff hessian` as one line of JSON (JSON Lines):
 *
 *   {"input_frame": N, "energy": E, "forces": [[fx, fy, fz], ...],
 *    "hessian": [[...3N...], ...3N rows], "masses": [...],
 *    "projection": "none|translations|rigid", "rigid_modes": K,
 *    "wavenumbers": [...3N...], "modes": [[...3N...], ...3N rows],
 *    "zero_point_energy": Z}
 *
 * Units: eV, eV/Angstrom, eV/Angstrom^2, amu, cm^-1 (imaginary ones
 * negative). Mode k is row k, its Cartesian displacements atom after atom
 * (harmonic.h). Numbers are printed with %.17g: doubles read back exactly.
 */
#ifndef MLFF_TOOLS_HESSIAN_JSON_H
#define MLFF_TOOLS_HESSIAN_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "harmonic.h"
#include "output.h"
#include "xyz.h"

typedef struct hessian_frame {
    int64_t input_frame;    /* from 1, across the inputs */
    int64_t n_atoms;
    double energy;
    const double *forces;   /* n_atoms x 3 */
    const double *hessian;  /* (3 n_atoms)^2 */
    const double *masses;   /* n_atoms */
    const char *projection; /* "none", "translations" or "rigid" */
    const harmonic_result *analysis;
} hessian_frame;

/*
 * Formats the frame's line into buffer (emptied first) and writes it to out,
 * in pieces of a few MiB for a large frame, so that the text of a Hessian
 * never needs more memory than that. 0, or -1 with err.
 */
int hessian_json_write(output *out, xyz_buffer *buffer, const hessian_frame *f, char *err, size_t err_size);

#endif
