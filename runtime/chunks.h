/*
 * Atom chunks: how a batch too large for one plan execution is evaluated.
 *
 * The plan's memory grows with the atoms, pairs and triples it is bound
 * to (about 150 KB per atom of water for ANI-2x). When the whole batch
 * would not fit the device's budget, or one of its tensors would exceed
 * the device's largest buffer, or the caller caps the atoms per pass, the
 * atoms are sorted along a space-filling curve (Morton order, per system)
 * and cut into chunks that fit. Each chunk is a set of owned atoms plus the
 * ghosts its pairs reach (see "Owned atoms and ghosts" in graph.h); the
 * energies, forces and cell forces of the chunks add up to the batch's.
 * The whole batch in one chunk is the common case and costs nothing extra.
 *
 * A model of L interaction layers (graph.h: interaction_layers) makes an
 * owned atom's energy from its neighbours' features of layer L - 1, each
 * made from their own neighbours, and so on: its chunk holds every atom
 * within L hops of the pair list from an owned atom, and lists the pairs
 * of every atom within L - 1 hops (the "centers"), as a subdomain with
 * ghost_pairs does (batch.h). Then the features of every atom within
 * L - k hops are exact at layer k, and the owned energies with them. With
 * one layer the centers are the owned atoms.
 */
#ifndef MLFF_RUNTIME_CHUNKS_H
#define MLFF_RUNTIME_CHUNKS_H

#include <stdint.h>

#include "backends/backend.h"
#include "device_cells.h"
#include "batch.h"
#include "core/graph.h"
#include "plan.h"

typedef struct mlff_chunks {
    struct mlff_symbol_cost *costs; /* per size symbol of the plan, found once (see forget) */
    int64_t *rows;           /* scratch: rows per symbol of an atom, and of a chunk */
    int64_t *block_rows, block_rows_capacity; /* scratch of the whole batch's sum, per block of atoms */
    int64_t n_chunks;
    int32_t *order;          /* atoms in chunk order: chunk c owns order[start[c] .. start[c + 1]) */
    int64_t *start;
    int64_t *first_pair;     /* the master list by center: pairs of atom a are [first[a], first[a+1]) */
    int32_t *local_of;       /* batch atom -> index in the current chunk, or -1 */
    int64_t *seen, generation; /* the cut's marks: seen[a] == generation when a is in the chunk being cut */
    int32_t *hops;           /* ... and then a's hops from the chunk's owned atoms (at most layers) */
    int32_t *log_atom, *log_hops; /* the atoms one owned atom brought in or nearer, and their hops before */
    int layers;              /* the graph's interaction layers (at least 1) */
    int64_t atoms_capacity, chunks_capacity;
    /* Chunks of binned atoms (mlff_chunks_plan_binned): */
    int32_t *slab_at;        /* per position of the order: its slab, numbered across the batch */
    int32_t *bin_key;        /* per atom: its bin numbered slab by slab */
    int64_t *slab_first;     /* where each slab begins in the order */
    int64_t slabs_capacity;
    int64_t *slab_rows;      /* with several layers: rows of the centers' pairs summed over slabs 0 .. k-1 */
    int64_t slab_rows_capacity;
    struct slab_system *slab_systems;
    int64_t slab_systems_capacity;
    mlff_atom_view view;     /* the current chunk */
    int64_t n_centers;       /* its atoms 0 .. n_centers - 1 (owned first) are the centers of its pairs */
    int32_t *local;          /* its local -> batch atoms */
    int32_t *pairs, *images; /* its pair list in local indices */
    double *distances;
    int64_t local_capacity, pairs_capacity;
} mlff_chunks;

typedef struct mlff_chunk_limits {
    size_t budget;          /* bytes the plan's working tensors may use */
    size_t max_buffer;      /* bytes one tensor may use */
    int64_t max_atoms;      /* owned atoms per chunk; 0: no cap */
} mlff_chunk_limits;

/*
 * Cuts the prepared batch (w: its master pair list) into chunks that fit;
 * one chunk when everything fits. A single atom that cannot fit is an
 * error naming the limit.
 */
mlff_status mlff_chunks_plan(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                             const mlff_chunk_limits *limits, const mlff_batch *b,
                             const mlff_batch_work *w, mlff_error *err);

/* Whether the whole batch, with these values of the size symbols, fits one
 * pass (the first test of mlff_chunks_plan, for pairs counted elsewhere). */
mlff_status mlff_chunks_whole_fits(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                                   const mlff_chunk_limits *limits, const mlff_batch *b, const int64_t *symbols,
                                   int *fits, mlff_error *err);

/* Makes c->view the atoms and pairs of chunk k (after mlff_chunks_plan with
 * more than one chunk). */
mlff_status mlff_chunks_select(mlff_chunks *c, int64_t k, const mlff_batch_work *w, mlff_error *err);

/*
 * The same for a batch whose pair lists the device makes: cut from what
 * the device's count of the whole batch found (census: each atom's bin and
 * its pairs in each of the graph's lists), without a pair list on the host.
 * A chunk owns a run of the atoms ordered by slab of bins (across each
 * system's lattice axis of most bins); its ghosts are the other atoms of
 * the slabs within layers x the search's reach, its centers those within
 * (layers - 1) x that reach (whose pairs the device lists again for the
 * chunk). No chunks (c->n_chunks 0) when one atom with those slabs does
 * not fit: the host's search, whose ghosts are only those the pairs reach,
 * must cut it.
 */
mlff_status mlff_chunks_plan_binned(mlff_chunks *c, const mlff_graph *g, const mlff_plan *plan,
                                    const mlff_chunk_limits *limits, const mlff_batch *b, const mlff_batch_work *w,
                                    const mlff_device_lists *lists, const mlff_cell_census *census, mlff_error *err);

/* Makes c->view the atoms of chunk k of mlff_chunks_plan_binned (without
 * pairs: the device lists those of its atoms 0 .. c->n_centers - 1). */
mlff_status mlff_chunks_select_binned(mlff_chunks *c, int64_t k, const mlff_batch_work *w, mlff_error *err);

/* Drops the costs found for one plan: the next call plans for another. */
void mlff_chunks_forget_plan(mlff_chunks *c);

void mlff_chunks_free(mlff_chunks *c);

#endif
