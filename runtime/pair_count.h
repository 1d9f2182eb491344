/*
 * A molecule's pairs counted on the host for the device's cell lists
 * (device_cells.c: a batch of small molecules, or one of a few hundred
 * atoms, costs less counted here than waiting for the device's count).
 * Every pair is measured once for both of its atoms, 4 pairs at a time, in
 * the device's floats with its expression for r^2 (no contraction:
 * meson.build): (a, b) and (b, a) differ by the sign of each difference,
 * which leaves the squares' bits as they are, so cell_pairs then finds
 * exactly these counts.
 */
#ifndef MLFF_RUNTIME_PAIR_COUNT_H
#define MLFF_RUNTIME_PAIR_COUNT_H

#include <stdint.h>

/* Host arrays reused between calls. */
typedef struct mlff_pair_count_scratch {
    float *coords;   /* x, y, z of each atom, as three columns */
    int32_t *counts; /* two columns */
    int64_t capacity;
} mlff_pair_count_scratch;

/* For the n atoms at xyzw (x, y, z, w each) of one system: in counts[l][a]
 * the atoms within sqrt(cutoff2[l]) of atom a (l = 0, 1; a cutoff2 below
 * zero counts none), and *least2 lowered to the least r^2 of a pair below
 * it. 0 when out of memory. */
int mlff_count_pairs(const float *xyzw, int64_t n, const float cutoff2[2], int32_t *const counts[2], float *least2,
                     mlff_pair_count_scratch *scratch);

void mlff_pair_count_scratch_free(mlff_pair_count_scratch *scratch);

#endif
