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
} mlff_neighbor_list;

/* All systems of the batch (cells/pbc may be NULL: nothing periodic). A
 * periodic axis needs a cell whose three rows are linearly independent.
 * Large systems are searched in blocks of atoms on the pool's threads (pool
 * may be NULL); the list is the same for any number of threads. */
mlff_status mlff_neighbors_build(const mlff_batch *batch, double cutoff, mlff_thread_pool *pool,
                                 mlff_neighbor_list *list, mlff_error *err);

void mlff_neighbor_list_free(mlff_neighbor_list *list);

#endif
