/*
 * The pairs of a batch: one master list at the largest cutoff the model
 * needs (plus the Verlet skin), found by the dense all-pairs search or by
 * cell lists, kept across calls while no atom moved more than half the skin,
 * with the current length of every pair. The list of each cutoff is the
 * master filtered by distance, so dense and sparse, with or without skin,
 * give the same pairs in the same order and hence the same numbers.
 */
#ifndef MLFF_RUNTIME_PAIR_LISTS_H
#define MLFF_RUNTIME_PAIR_LISTS_H

#include <stdint.h>

#include "core/error.h"
#include "mlff.h"
#include "core/neighbors.h"
#include "verlet.h"

/* Atoms closer than this are rejected: no model is meaningful there. */
#define MLFF_MIN_DISTANCE 0.1
/* Coordinates and periodic cells' entries beyond this many Angstrom (a
 * metre) are rejected: float32 kernels square sums of hundreds of them
 * (pair vectors with their images), which then overflow. */
#define MLFF_MOST_COORDINATE 1e10

typedef struct mlff_pair_lists {
    mlff_neighbor_list master;
    double *distances;      /* |r_j - r_i + n . cell| of every master pair */
    int64_t distances_capacity;
    mlff_verlet searched;   /* what the master list was searched for */
    int dense;              /* by the dense search */
    uint64_t searches;      /* neighbour searches done (reuses not counted) */
} mlff_pair_lists;

/* How the pairs are found. */
typedef struct mlff_pair_options {
    int dense;    /* all-pairs search instead of cell lists */
    double skin;  /* Verlet skin, Angstrom */
    mlff_thread_pool *pool; /* threads for the search (may be NULL) */
    const mlff_neighbor_search *device; /* cell lists elsewhere (a GPU's), or NULL: on the host */
    /* The pairs a search may test (mlff_neighbor_list.most_candidates): what
     * the device's memory budget holds, or a real material's worth an atom
     * where that is more; 0: no limit. */
    double most_candidates, most_candidates_per_atom;
} mlff_pair_options;

/* A real material's atoms test a few thousand pairs each (bins a cutoff or
 * two wide, 0.1-0.2 atoms per cubic Angstrom, a 5-6 Angstrom cutoff): a
 * batch may always test this many an atom, whatever the budget, so that its
 * size, not its geometry, sets the memory. */
#define MLFF_CANDIDATES_PER_ATOM 16384.0
/* What each pair tested may cost on the host (the search's keys, the lists
 * of every cutoff, the graph's pair tensors): the budget's share. */
#define MLFF_BYTES_PER_CANDIDATE 256.0

/* The cells of the batch's periodic systems: present, within
 * MLFF_MOST_COORDINATE; no system absurdly dense (periodic or not). */
mlff_status mlff_pair_lists_check(const mlff_batch *b, mlff_error *err);

/*
 * Makes the master list valid for the batch's current positions (searching
 * again unless the skin allows reuse) and measures every pair; rejects
 * atoms closer than MLFF_MIN_DISTANCE (images included). system[a] is the
 * system of atom a.
 */
mlff_status mlff_pair_lists_update(mlff_pair_lists *pl, const mlff_batch *b, const int32_t *system,
                                   double cutoff, const mlff_pair_options *options, mlff_error *err);
void mlff_pair_lists_free(mlff_pair_lists *pl);

/* True when system s of the batch is periodic along some axis. */
int mlff_batch_is_periodic(const mlff_batch *b, int64_t s);

/* The shift n . cell of master pair p (zero for a non-periodic system). */
void mlff_pair_shift(const mlff_batch *b, const int32_t *system, const mlff_pair_lists *pl, int64_t p,
                     double shift[3]);

#endif
