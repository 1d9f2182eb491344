/*
 * Neighbour lists by cell lists: every ordered pair (i, j, n) of atoms of
 * one system with |r_j - r_i + n . cell| <= cutoff, where n is an integer
 * image offset (non-zero only along periodic axes) and n . cell =
 * n0 a + n1 b + n2 c with a, b, c the rows of the cell. i == j is allowed
 * for n != 0 (an atom sees its own images in small cells). O(N) time and
 * memory per system; works for orthorhombic and triclinic cells, any mix of
 * periodic axes, cells smaller than twice the cutoff, and atoms outside the
 * cell. The order is deterministic: by i, then j, then n (lexicographic).
 */
#ifndef MLFF_CORE_NEIGHBORS_H
#define MLFF_CORE_NEIGHBORS_H

#include <stdint.h>

#include "error.h"
#include "mlff.h"
#include "thread_pool.h"

typedef struct mlff_neighbor_list {
    int32_t *pairs;    /* [n_pairs][2]: i, j as atom indices of the whole batch */
    int32_t *images;   /* [n_pairs][3]: n */
    int64_t n_pairs;
    int64_t capacity;  /* pairs the arrays can hold; grown by 1.5x, never shrunk */
    void *work;        /* the builder's reusable scratch (cell lists), owned by the list */
    size_t work_size;
    /* Set by the caller: a search refuses, before it allocates for them, a
     * system whose atoms would test more pairs (images of small cells
     * included; each costs the search memory, kept or not) than the larger of
     * most_candidates and most_candidates_per_atom times its atoms, or a
     * batch whose systems together would. 0 and 0: no limit. */
    double most_candidates, most_candidates_per_atom;
} mlff_neighbor_list;

/* All systems of the batch (cells/pbc may be NULL: nothing periodic). A
 * periodic axis needs a cell whose three rows are linearly independent.
 * Large systems are searched in blocks of atoms on the pool's threads (pool
 * may be NULL); the list is the same for any number of threads. */
mlff_status mlff_neighbors_build(const mlff_batch *batch, double cutoff, mlff_thread_pool *pool,
                                 mlff_neighbor_list *list, mlff_error *err);

void mlff_neighbor_list_free(mlff_neighbor_list *list);

/* A search that runs elsewhere (a GPU backend's: backends/common/device_cells.h). */
typedef struct mlff_neighbor_search {
    mlff_status (*build)(void *self, const mlff_batch *batch, double cutoff, mlff_neighbor_list *list,
                         mlff_error *err);
    void *self;
} mlff_neighbor_search;

/* The argument checks of mlff_neighbors_build; *largest: atoms of the largest system. */
mlff_status mlff_neighbors_check(const mlff_batch *batch, double cutoff, int64_t *largest, mlff_error *err);
/* Room for n_pairs pairs in list->pairs and list->images. */
mlff_status mlff_neighbor_list_reserve(mlff_neighbor_list *list, int64_t n_pairs, mlff_error *err);

/*
 * The bins of one system, shared by the host search and the device search
 * (backends/common/device_cells.c). Fractional coordinates u_k = r . rec[k]
 * (u = r without periodic axes) are wrapped into [0, 1) along periodic
 * axes; bin k of an atom is floor((u_k - origin[k]) * to_bin[k]), clamped
 * to [0, nb[k]); the search looks reach[k] bins each way.
 */
typedef struct mlff_cell_grid {
    int periodic[3];
    double H[9];       /* the cell; zero without periodic axes (image offsets are then zero) */
    double rec[3][3];
    double width[3];   /* the distance between the lattice planes of each axis */
    int64_t nb[3], reach[3];
    double origin[3], to_bin[3];
    double max_reach_length; /* bounds |m . H| over the images the search visits */
} mlff_cell_grid;

/* How far (in lattice vectors) an atom may lie outside its cell. */
#define MLFF_MAX_CELL_SHIFT 536870912.0 /* 2^29 */

/* The lattice of system s (H, rec, width, periodic): checks its cell. */
mlff_status mlff_cell_grid_lattice(const mlff_batch *b, int64_t s, mlff_cell_grid *g, mlff_error *err);
/* The n atoms at pos (system s) in fractional coordinates, wrapped along
 * periodic axes into frac, the lattice vectors taken off into shift (each
 * [n][3], may be NULL); the extent [lo, hi] of u along the other axes, and
 * the largest |r| + |shift . H| (for rounding allowances). Rejects
 * positions that are not finite or lie too many cells away (the first such
 * atom). Blocks of atoms run on the pool (may be NULL). */
mlff_status mlff_cell_grid_wrap(const mlff_cell_grid *g, const double *pos, int64_t n, int64_t s, double *frac,
                                int32_t *shift, double lo[3], double hi[3], double *magnitude,
                                mlff_thread_pool *pool, mlff_error *err);
/* The bins, at least `wide` across, for n_atoms atoms whose u spans
 * [lo, hi] along the non-periodic axes. An extent too small to divide
 * (a subnormal one) is one bin. */
mlff_status mlff_cell_grid_bins(mlff_cell_grid *g, const double lo[3], const double hi[3], int64_t n_atoms,
                                double wide, int64_t s, mlff_error *err);

/* The pairs the search of a system tests: the atoms of the bins within
 * reach of each atom's bin, a bin counted once for each periodic image
 * visited; bin b of the grid's nb[0] x nb[1] x nb[2] holds the atoms
 * start[b] .. start[b + 1] - 1. A bound on the pairs found, O(bins) to compute, in a summed-area
 * table kept in *sums (grown; the caller frees it): -1 when out of memory. */
double mlff_cell_grid_candidates(const mlff_cell_grid *g, const int32_t *start, int64_t **sums, int64_t *capacity);

/* What the search of a system of n atoms may test at most with this grid,
 * without knowing where its atoms lie: each atom every atom in each of the
 * periodic images visited. Enough to see a cell far smaller than the cutoff. */
double mlff_cell_grid_most_candidates(const mlff_cell_grid *g, int64_t n);

#endif
