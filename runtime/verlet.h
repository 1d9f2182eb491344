/*
 * The Verlet criterion: a pair list searched at cutoff + skin still holds
 * every pair within the cutoff while no atom has moved more than half the
 * skin, and the systems, their cells and periodicity are as they were.
 * What a search was made for is remembered here; the host's lists
 * (pair_lists.h) and the lists a GPU keeps in its buffers (core/model.c)
 * both ask it before searching again.
 */
#ifndef MLFF_RUNTIME_VERLET_H
#define MLFF_RUNTIME_VERLET_H

#include <stdint.h>

#include "core/error.h"
#include "mlff.h"

typedef struct mlff_verlet {
    int valid;
    double radius, skin;   /* the search's radius (cutoff + skin) and skin */
    double *positions;     /* at the search */
    int64_t *offsets;
    double *cells;
    uint8_t *pbc;
    int64_t n_atoms, n_systems, atoms_capacity, systems_capacity;
} mlff_verlet;

/* True when the list of the last search remembered, at `radius`, still
 * holds for the batch's positions now (never without a skin). */
int mlff_verlet_holds(const mlff_verlet *v, const mlff_batch *b, double radius);

/* Remembers a search of the batch's current positions at `radius`, which
 * holds while no atom moves more than skin / 2. */
mlff_status mlff_verlet_remember(mlff_verlet *v, const mlff_batch *b, double radius, double skin, mlff_error *err);

void mlff_verlet_free(mlff_verlet *v);

#endif
