/*
 * From a caller's batch to graph inputs: checks the systems (elements known
 * to the model, finite coordinates, no overlapping atoms, periodicity) and
 * finds the pairs; then, for the whole batch or one chunk of it at a time,
 * builds every input the graph asks for (positions, species, system index,
 * owned flags, pair lists per cutoff, angular triples, atoms per element)
 * and the size of every size symbol. Host arrays live in a work area that is
 * reused between calls.
 */
#ifndef MLFF_RUNTIME_BATCH_H
#define MLFF_RUNTIME_BATCH_H

#include "device_cells.h"
#include "core/graph.h"
#include "mlff.h"
#include "pair_lists.h"

typedef struct mlff_host_array {
    void *data;
    size_t capacity; /* bytes */
} mlff_host_array;

/* a->data, grown to hold `bytes` (by 1.5x, never shrunk); NULL on failure. */
void *mlff_host_array_reserve(mlff_host_array *a, size_t bytes, mlff_error *err);

typedef struct mlff_batch_work {
    int n_tensors;
    mlff_host_array *inputs; /* per graph tensor; used for inputs only */
    mlff_dtype *input_dtypes;
    int64_t *symbols;        /* value of each size symbol */
    int n_symbols;
    int64_t n_atoms;         /* of the batch */
    int64_t n_owned;         /* atoms 0 .. n_owned-1 count (a subdomain's owned atoms); the rest are
                              * ghosts, neighbours alone: n_atoms unless mlff_batch_own says so */
    int ghost_pairs;         /* the pairs of ghosts run too (mlff_batch_own) */
    int32_t *system, *species; /* of every atom of the batch; species as the model numbers its
                                * elements, then as the graph run does (mlff_model_use_elements) */
    int64_t atoms_capacity;
    const double *positions; /* the POSITIONS input last filled (the caller's array, or gathered) */
    const void *positions_upload; /* what the POSITIONS input is uploaded from: `positions`, or in
                                   * float32 their high parts (positions_high), made with the low ones */
    mlff_dtype positions_upload_dtype;
    mlff_host_array positions_high;
    const double *tangents;  /* the TANGENTS input's rows, per atom of the batch ([n_atoms, cols] of the
                              * graph's input; set before a Hessian's pass) */
    int64_t tangent_cols;    /* their columns (3T), 0 without */
    mlff_dtype real;         /* the plans' precision: what the LOW inputs hold (core/graph.h) */
    mlff_pair_lists pairs;   /* kept across calls for the Verlet skin */
    mlff_thread_pool *pool;  /* for the pair lists and triples (may be NULL) */
    mlff_host_array block_counts; /* their per-block counts */
} mlff_batch_work;

/* The graph's pair lists as the device makes them (device_cells.h), and
 * the inputs each fills. */
typedef struct mlff_batch_device_lists {
    mlff_device_lists lists;
    int pairs[MLFF_DEVICE_LISTS], images[MLFF_DEVICE_LISTS], triple_starts; /* graph inputs (-1: none) */
    int kept; /* the inputs hold these lists already (kept through the skin): nothing to write */
} mlff_batch_device_lists;

/* The atoms one plan execution sees: owned atoms first, then ghosts (see
 * graph.h), and the pairs of the owned atoms in these local indices, sorted
 * by center then neighbour; or, for the whole batch, the pair lists the
 * device made (then only their sizes are filled). */
typedef struct mlff_atom_view {
    int64_t n_owned, n_atoms;
    const int32_t *batch_atom;      /* local -> batch atom; NULL: the whole batch, all owned */
    const int32_t *pairs, *images;  /* [n_pairs][2], [n_pairs][3] */
    const double *distances;        /* [n_pairs] */
    int64_t n_pairs;
    const mlff_batch_device_lists *device_lists; /* NULL: the pairs above */
    int atom_systems; /* each owned atom is a system of its own (the energies come out per owned
                       * atom; no cells), the ghosts belong to the first */
} mlff_atom_view;

/* A work area (zeroed to begin with) made large enough for a graph's inputs
 * and symbols; one area may serve several graphs. */
mlff_status mlff_batch_work_fit(mlff_batch_work *w, const mlff_graph *g, mlff_error *err);
void mlff_batch_work_free(mlff_batch_work *w);

/* Checks the batch (elements, coordinates, cells) and sets the system and
 * species of every atom in w; the pair search is left to the caller.
 * species_index[z] is the model's element index of atomic number z, or -1;
 * model_name and element_list are for error messages. */
mlff_status mlff_batch_check(const mlff_batch *b, const int *species_index, const char *model_name,
                             const char *element_list, mlff_batch_work *w, mlff_error *err);

/* The master pair list of a checked batch (kept in w). */
mlff_status mlff_batch_find_pairs(const mlff_graph *g, const mlff_batch *b, const mlff_pair_options *options,
                                  mlff_batch_work *w, mlff_error *err);

/* 1 (and *d filled) when every pair input of the graph is a list the
 * device can make: at most MLFF_DEVICE_LISTS, each with its images. */
int mlff_batch_device_lists_of(const mlff_graph *g, mlff_batch_device_lists *d);

/* 1 for an input that the device makes when the view says so. */
int mlff_batch_made_on_device(const mlff_graph *g, const mlff_atom_view *v, int t);

/* Atoms n_owned .. of the checked batch are ghosts (mlff_batch_work.n_owned);
 * with ghost_pairs their pairs run too, for models whose ghosts' features
 * reach owned atoms' energies (several interaction layers). */
void mlff_batch_own(mlff_batch_work *w, int64_t n_owned, int ghost_pairs);

/* The prepared batch as one view: its owned atoms and ghosts, the master
 * pairs of the owned atoms (of every atom with ghost_pairs). */
mlff_atom_view mlff_batch_whole(const mlff_batch_work *w);

/* Fills every graph input and size symbol for the atoms of a view. */
mlff_status mlff_batch_fill(const mlff_graph *g, const mlff_batch *b, const mlff_atom_view *v,
                            mlff_batch_work *w, mlff_error *err);

#endif
