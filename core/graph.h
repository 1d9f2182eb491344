/*
 * The operator graph: the backend-neutral form of a model.
 *
 * A graph is a list of tensors and a list of nodes in execution order. Each
 * node applies one op (core/ops.h) to input tensors and defines one output
 * tensor. Tensors are 2-D [rows, cols]: cols are fixed when the graph is
 * built, rows are either fixed or a size symbol ("atoms", "pairs of list 0",
 * ...) bound per evaluation, so one graph serves every batch shape.
 *
 * Builders never fail loudly: once an allocation fails or a builder is given
 * an invalid tensor (-1), the graph is marked failed, every later builder
 * returns -1, and mlff_graph_status() reports the first problem. Model code
 * can therefore build a whole network and check once at the end.
 */
#ifndef MLFF_CORE_GRAPH_H
#define MLFF_CORE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ops.h"

typedef enum mlff_tensor_kind {
    MLFF_TENSOR_INTERNAL = 0, /* produced by a node */
    MLFF_TENSOR_INPUT = 1,    /* filled from the batch before each run */
    MLFF_TENSOR_PARAM = 2     /* constant data owned by the graph (weights) */
} mlff_tensor_kind;

/* What the batch preparation (core/batch.c) puts into an input tensor. */
typedef enum mlff_input_role {
    MLFF_INPUT_POSITIONS = 0,     /* [atoms, 3] REAL, Angstrom */
    MLFF_INPUT_SPECIES = 1,       /* [atoms, 1] I32, index in the graph's elements (a model builder
                                   * may serve a subset of the model's) */
    MLFF_INPUT_SYSTEM = 2,        /* [atoms, 1] I32, system of each atom */
    MLFF_INPUT_PAIRS = 3,         /* [pairs, 2] I32 (center i, neighbour j), every ordered pair
                                   * of one system with |r_ij| <= cutoff, sorted by i then j */
    MLFF_INPUT_PAIR_IMAGES = 4,   /* [pairs, 1] I32: image offsets n of each pair, packed
                                   * (mlff_image_pack); the pair vector is r_j - r_i + n . cell */
    MLFF_INPUT_TRIPLE_STARTS = 5, /* [pairs, 1] I32: where each pair of one PAIRS list starts
                                   * its angular triples (the `first` of pair_triples) */
    MLFF_INPUT_ELEMENT_ATOMS = 6, /* [n, 1] I32: ascending indices of the owned atoms of one element */
    MLFF_INPUT_CELLS = 7,         /* [systems, 9] REAL: cell rows a, b, c (zeros if none) */
    MLFF_INPUT_OWNED = 8,         /* [atoms, 1] F64 or REAL: 1 for owned atoms, 0 for ghosts */
    MLFF_INPUT_ELEMENT_ORDER = 9, /* [n, 1] I32: the owned atoms by element, ascending within one */
    MLFF_INPUT_ELEMENT_STARTS = 10, /* [elements + 1, 1] I32: where each element's atoms start in
                                     * ELEMENT_ORDER, then their count (the runs of a stacked op) */
    MLFF_INPUT_ELEMENT_SYSTEMS = 11, /* [n, 1] I32: the system of each atom of ELEMENT_ORDER */
    MLFF_INPUT_TANGENTS = 12,      /* [atoms, 3T] REAL: T directions of the positions, T-blocked
                                    * (core/ops.h, "Tangents"): the tangent pass's seed */
    MLFF_INPUT_POSITIONS_LOW = 13, /* [atoms, 3] REAL: what POSITIONS lost to rounding (below) */
    MLFF_INPUT_CELLS_LOW = 14      /* [systems, 9] REAL: what CELLS lost to rounding (below) */
} mlff_input_role;
#define MLFF_CELL_HIGH_BITS 15

/*
 * Positions and cells in float32. A coordinate near 50 Angstrom is a float
 * to 4e-6 Angstrom, where the pair vectors (at most the cutoff long) need
 * it to about 2e-7: force constants of ~50 eV/A^2 made that 2e-4 eV/A of
 * error on a 50 A box. So each is passed as the value rounded to REAL
 * (POSITIONS, CELLS) and what that left out (the LOW inputs), and the pair
 * vectors are formed from both error-free (core/ops.h, PAIR_VECTORS) and
 * rounded once. A cell's high part keeps 15 significant bits, so that n . cell
 * of image offsets up to 511 is exact in float. In float64 the low parts
 * are zero (split_real in runtime/batch.c).
 */

/*
 * Owned atoms and ghosts. A large batch is evaluated in chunks of atoms
 * (runtime/chunks.h). A chunk's graph sees its own atoms ("owned") and, after
 * them, the neighbours they need ("ghosts"). Pair lists hold only pairs
 * whose center is owned (with interaction_layers L > 1, also those of the
 * ghosts within L - 1 cutoffs), ELEMENT_ATOMS and ELEMENT_ORDER only owned atoms; a model must
 * count in the energy only what belongs to owned atoms (per-atom terms that
 * do not go through the element lists or the pairs are weighted by OWNED). The
 * forces on ghosts are their share of this chunk's energy, which the caller
 * adds to the atoms they stand for. Without chunking every atom is owned.
 */

/* Where a graph result goes. */
#define MLFF_MAX_GRADIENT_LISTS 2
typedef enum mlff_output_role {
    MLFF_OUTPUT_ENERGY = 0, /* [systems, 1] F64, eV */
    MLFF_OUTPUT_FORCES = 1, /* [atoms, 3], eV/Angstrom */
    MLFF_OUTPUT_CELL_FORCES = 2, /* [systems, 9], -dE/d(cell) in eV/Angstrom, for the virial */
    /* [pairs, 3]: -dE/d(r_ij) of each pair of pair list k (the graph's
     * gradient_pairs[k]) at role PAIR_GRADIENTS + k, for per-atom virials;
     * only in graphs built for them */
    MLFF_OUTPUT_PAIR_GRADIENTS = 3,
    /* [atoms, 3T]: the forces' tangent along the T directions of the
     * positions' (MLFF_INPUT_TANGENTS), -H V: only in graphs built for it */
    MLFF_OUTPUT_FORCE_TANGENTS = 3 + MLFF_MAX_GRADIENT_LISTS,
    MLFF_OUTPUT_COUNT
} mlff_output_role;

/* Size symbols every graph has. */
enum { MLFF_SYMBOL_ATOMS = 0, MLFF_SYMBOL_SYSTEMS = 1 };

#define MLFF_FIXED_ROWS (-1)

typedef struct mlff_graph_tensor {
    mlff_tensor_kind kind;
    mlff_dtype dtype;
    int rows_symbol;      /* size symbol, or MLFF_FIXED_ROWS */
    int64_t rows;         /* when rows_symbol == MLFF_FIXED_ROWS */
    int64_t cols;
    /* inputs */
    mlff_input_role role;
    int role_link;        /* PAIR_IMAGES/TRIPLE_STARTS: the PAIRS tensor; ELEMENT_ATOMS: element */
    double cutoff;        /* PAIRS */
    /* params: host copy in host_dtype (F32, F64 or I32), rows x cols */
    mlff_dtype host_dtype;
    void *host_data;
    char name[64];
} mlff_graph_tensor;

typedef struct mlff_graph_node {
    mlff_op op;
    int n_inputs;
    int inputs[MLFF_MAX_OP_INPUTS];
    int output;
    mlff_op_attrs attrs;
} mlff_graph_node;

typedef struct mlff_graph {
    mlff_graph_tensor *tensors;
    int n_tensors, cap_tensors;
    mlff_graph_node *nodes;
    int n_nodes, cap_nodes;
    int n_forward_nodes;   /* nodes before the reverse pass; all of them if none */
    char (*symbols)[32];
    int n_symbols, cap_symbols;
    int outputs[MLFF_OUTPUT_COUNT]; /* tensor per output role, -1 if absent */
    int gradient_pairs[MLFF_MAX_GRADIENT_LISTS]; /* the PAIRS input of each PAIR_GRADIENTS output */
    mlff_error error;      /* first failure while building */
    /* The reverse pass keeps ANI's radial pair gradients a node of their
     * own, which a GPU runs beside the angular ones, rather than making
     * them twice over in the sum of the pair gradients, a launch fewer
     * (mlff_op_sum_gradients). */
    int radial_gradients_apart;
    /* How many cutoffs an atom's energy reaches: the message-passing layers
     * its features pass through (0 or 1: one cutoff, as ANI). Chunks, whose
     * ghosts lie within one cutoff of the owned atoms and whose pairs are
     * centred on owned atoms only, are exact only for one; a subdomain is
     * exact when its ghosts reach that many cutoffs and their pairs run too. */
    int interaction_layers;
    /* A plan keeps the PAIR_VECTORS of an ANI AEV's lists as nodes where
     * the AEV could make them (runtime/vectors_in_aev.h): the tuning
     * record's pair_vectors, set by the runtime before the plan is made. */
    int pair_vectors_apart;
} mlff_graph;

mlff_graph *mlff_graph_create(void);
void mlff_graph_destroy(mlff_graph *g);
mlff_status mlff_graph_status(const mlff_graph *g);

/* Mark the graph failed (first failure wins) and return -1. */
int mlff_graph_fail(mlff_graph *g, mlff_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int mlff_graph_new_symbol(mlff_graph *g, const char *name);

/* Inputs. Each returns the tensor id, or -1 once the graph has failed. */
int mlff_graph_input_positions(mlff_graph *g);
int mlff_graph_input_species(mlff_graph *g);
int mlff_graph_input_system(mlff_graph *g);
int mlff_graph_input_owned(mlff_graph *g, mlff_dtype dtype);
int mlff_graph_input_tangents(mlff_graph *g, int64_t n_tangents);
int mlff_graph_input_pairs(mlff_graph *g, double cutoff);
int mlff_graph_input_cells(mlff_graph *g);
int mlff_graph_input_positions_low(mlff_graph *g);
int mlff_graph_input_cells_low(mlff_graph *g);
/* The vectors r_j - r_i + n . cell of a pair list, from its images and the cells. */
int mlff_graph_pair_vectors(mlff_graph *g, int positions, int pairs);
/* The shifts n . cell of a pair list's pairs, [pairs, 3], from its images and the cells. */
int mlff_graph_pair_shifts(mlff_graph *g, int pairs);
/* The angular triples of a pair list: pair_triples of its TRIPLE_STARTS. */
int mlff_graph_triples(mlff_graph *g, int pairs);
int mlff_graph_input_element_atoms(mlff_graph *g, int element);
/* The owned atoms ordered by element and where each element starts among
 * them: the rows and runs of stacked ops (core/ops.h) over n_elements. */
int mlff_graph_input_element_order(mlff_graph *g);
int mlff_graph_input_element_starts(mlff_graph *g, int n_elements);
int mlff_graph_input_element_systems(mlff_graph *g);

/* A constant tensor; data (rows x cols of host_dtype) is copied. dtype is how
 * the plan stores it (REAL for weights, F64 for exact constants, I32). */
int mlff_graph_param(mlff_graph *g, const char *name, mlff_dtype dtype, int64_t rows, int64_t cols,
                     mlff_dtype host_dtype, const void *data);
/* The same, taking data (from malloc) instead of copying it: freed with the
 * graph, or at once if the parameter cannot be added. */
int mlff_graph_param_take(mlff_graph *g, const char *name, mlff_dtype dtype, int64_t rows, int64_t cols,
                          mlff_dtype host_dtype, void *data);

/* Names make tensors findable by tests and tools ("aev"); params are named at creation. */
void mlff_graph_set_name(mlff_graph *g, int tensor, const char *name);
int mlff_graph_find(const mlff_graph *g, const char *name); /* -1 if none */

void mlff_graph_set_output(mlff_graph *g, mlff_output_role role, int tensor);

/* Appends a node and its output tensor [rows, cols] (rows given by
 * rows_symbol, or fixed to `rows` when that is MLFF_FIXED_ROWS); used by the
 * op builders in core/op_*.c, which check their inputs first. */
int mlff_graph_add_node(mlff_graph *g, mlff_op op, const int *inputs, int n_inputs,
                        const mlff_op_attrs *attrs, mlff_dtype out_dtype, int rows_symbol,
                        int64_t rows, int64_t cols);

/* True when tensors a and b have the same row count by construction. */
int mlff_graph_same_rows(const mlff_graph *g, int a, int b);

/* Whether g has a tangent pass: second-order ops or T-blocked forms
 * (core/ops.h, "Tangents"). */
int mlff_graph_second_order(const mlff_graph *g);

/* The node whose output is tensor t, or NULL (inputs, parameters). */
const mlff_graph_node *mlff_graph_producer(const mlff_graph *g, int t);

/* True when column 0 of index tensor t never decreases from row to row, by
 * how it is made: pair lists (sorted by center), element atom lists, and
 * the triples pair_triples builds from a pair list and its TRIPLE_STARTS
 * (in order of their first pair). A GPU backend then finds the segments of
 * such an index without sorting it (backends/common/segments.h). */
int mlff_graph_ascending(const mlff_graph *g, int t);

/* True when tensor triples is pair_triples(pairs, first) with first[] the
 * running count of each center's triples (a TRIPLE_STARTS input, or a
 * parameter that holds it): every unordered pair of each run of a center's
 * consecutive pairs, in order. A pair's triples then follow from the pairs
 * around it (the ANI angular gradient on a GPU, core/ops.h). */
int mlff_graph_pair_triples_of(const mlff_graph *g, int triples, int pairs);

/*
 * The reverse pass: appends to g the nodes computing seed * d(output)/d(wrt),
 * where output is summed over all its entries, by walking the nodes backwards
 * and applying each op's vector-Jacobian product. Returns the gradient tensor
 * (same shape as wrt), or -1. Nodes present before the call become the
 * forward part (n_forward_nodes).
 */
int mlff_graph_gradient(mlff_graph *g, int output, int wrt, double seed);

/* The same for several tensors in one pass: grads[k] for wrt[k]. */
mlff_status mlff_graph_gradients(mlff_graph *g, int output, const int *wrt, int n_wrt, double seed,
                                 int *grads);

/*
 * The tangent pass (core/tangent.c): appends to g, for n_tangents
 * directions, the tangent (T-blocked: core/ops.h, "Tangents") of every
 * tensor that depends on the seeded ones, given seeds[k], the tangent of
 * tensor seeded[k] ([rows, T*cols]). result[w] is the tangent of wanted[w]
 * (zeros where it depends on no seed). Over a reverse pass, the tangent of
 * a gradient is T Hessian-vector products.
 */
mlff_status mlff_graph_tangents(mlff_graph *g, int64_t n_tangents, const int *seeded, const int *seeds, int n_seeds,
                                const int *wanted, int n_wanted, int *result);

#endif
