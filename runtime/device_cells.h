/*
 * Cell lists on a GPU backend: the neighbour search of core/neighbors.h
 * with the per-atom work on the device (binning, the counting sort of atoms
 * into bins, the search and the per-atom sort of its pairs), and the same
 * list as the host search (ordered by i, j, n), except that it may hold a
 * few pairs just beyond the cutoff (the device measures in float; every
 * pair is measured again in double on the host, and each cutoff's list
 * drops them). Device buffers are kept and grown by 1.5x between calls.
 */
#ifndef MLFF_RUNTIME_DEVICE_CELLS_H
#define MLFF_RUNTIME_DEVICE_CELLS_H

#include "core/neighbors.h"
#include "backends/backend.h"

typedef struct mlff_device_cells mlff_device_cells;

/* *out stays NULL when the backend has no cell-list kernels. Its
 * thresholds are the record's (which it reads, and must outlive it). */
mlff_status mlff_device_cells_create(const mlff_backend_iface *iface, mlff_backend *be, mlff_thread_pool *pool,
                                     const mlff_tuning *tuning, mlff_device_cells **out, mlff_error *err);
void mlff_device_cells_free(mlff_device_cells *cells);

/* As mlff_neighbors_build. Batches the device cannot hold in its buffers
 * (or with 2^24 systems or more) are searched on the host. */
mlff_status mlff_device_cells_build(mlff_device_cells *cells, const mlff_batch *batch, double cutoff,
                                    mlff_neighbor_list *list, mlff_error *err);

/* At most this many pairs per device pass (atoms in ranges): 0 restores the
 * default (a buffer's worth); small values test the ranges. */
void mlff_device_cells_limit_pairs(mlff_device_cells *cells, size_t max_pairs);

/* The search for mlff_pair_options. */
mlff_neighbor_search mlff_device_cells_search(mlff_device_cells *cells);

/* Whether the lists of a batch without periodic axes are written by the
 * host (a few small molecules: mlff_device_cells_write_lists uploads them,
 * and an unchanged list costs no transfer or sort). */
int mlff_device_cells_listed_on_host(const mlff_device_cells *cells, const mlff_batch *batch);

/*
 * A graph's pair lists made on the device, straight into its input
 * buffers: nothing per pair crosses the bus. Each list holds the pairs
 * within its cutoff (decided in float), ordered by i, j, n like the host's,
 * with packed image offsets (mlff_image_pack); one of them may come with
 * where each pair's angular triples start (the pair_triples op's `first`).
 */
#define MLFF_DEVICE_LISTS 2
typedef struct mlff_device_lists {
    int n_lists;                     /* 1 or 2 */
    double cutoff[MLFF_DEVICE_LISTS];
    double skin;                     /* each list holds the pairs within its cutoff + skin */
    double most_candidates, most_candidates_per_atom; /* as mlff_neighbor_list's (core/neighbors.h) */
    int triples_of;                  /* the list whose triple starts are wanted, or -1 */
    /* Counted by mlff_device_cells_count_lists: */
    int64_t n_pairs[MLFF_DEVICE_LISTS], n_triples;
    double kept_skin; /* the lists may be kept while no atom moves more than half of it: the skin,
                       * or less where a pair is within the skin of the distance limit */
    /* The buffers mlff_device_cells_write_lists fills (triple_starts only with triples_of >= 0). */
    void *pairs[MLFF_DEVICE_LISTS], *images[MLFF_DEVICE_LISTS], *triple_starts;
} mlff_device_lists;

/* The atoms of one chunk of a batch (runtime/chunks.h), in the chunk's own
 * order: the centers, the only ones whose pairs are listed (the owned
 * atoms, and with several interaction layers the ghosts near them), then
 * the ghosts their pairs reach. */
typedef struct mlff_cell_atoms {
    int64_t n_atoms, n_centers;
    const int32_t *batch_atom;  /* local -> batch atom */
    const int32_t *system;      /* batch atom -> system */
} mlff_cell_atoms;

/* Bins the batch's atoms (or, with `atoms`, a chunk's) and counts each
 * list's pairs (within cutoff + skin), and sets lists->kept_skin. *usable
 * is 0 when the host search must take over: atoms that may be too close,
 * images too far to pack, more pairs or triples than int32 indices or one
 * pass hold, or than lists->most_candidates allows (or may, where a cell is
 * thinner than the cutoff: the count itself would take long); the host's
 * search then says what, if anything, is wrong. */
mlff_status mlff_device_cells_count_lists(mlff_device_cells *cells, const mlff_batch *batch,
                                          const mlff_cell_atoms *atoms, mlff_device_lists *lists, int *usable,
                                          mlff_error *err);

/* What the last count of a whole batch found, for cutting it into chunks:
 * each atom's bin (bins numbered across the batch), each system's grid,
 * and where each atom's pairs of each list begin. Valid until the next
 * count. */
#define MLFF_CELL_GRID_INTS 8
typedef struct mlff_cell_census {
    int64_t n_bins;
    const int32_t *bins;
    /* Per system: bins along each lattice axis [3] (axis 0 varies slowest
     * in the bins' numbers), bins the search reaches each way [3], the
     * periodic axes (bit k), the first bin. */
    const int32_t *grids;
    const int32_t *list_offsets[MLFF_DEVICE_LISTS]; /* [n_atoms + 1] */
} mlff_cell_census;
mlff_status mlff_device_cells_census(mlff_device_cells *cells, mlff_cell_census *census, mlff_error *err);

/* Writes the lists counted last (the same batch) into their buffers,
 * without waiting: the graph's nodes may follow at once. */
mlff_status mlff_device_cells_write_lists(mlff_device_cells *cells, const mlff_device_lists *lists,
                                          mlff_error *err);
/* After the nodes that read them: reads back whether the lists were written
 * as counted (it arrives by the backend's next wait, with the graph's
 * results), then, after that wait, says so with an error if not. */
mlff_status mlff_device_cells_read_check(mlff_device_cells *cells, mlff_error *err);
mlff_status mlff_device_cells_check_lists(mlff_device_cells *cells, mlff_error *err);

#endif
