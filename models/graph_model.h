/*
 * The generic family ("graph"): a model file that holds an op graph with
 * its weights, as python/mlff/export.py writes it from a PyTorch module.
 *
 * Metadata: family "graph", elements (symbols, in the order of the model's
 * species), cutoff (Angstrom, of the one pair list), energy_unit "eV",
 * length_unit "Angstrom", interaction_layers (how many times messages pass
 * a cutoff: the range of an atom's energy is that many cutoffs).
 *
 * Tensors: "graph.nodes" I32 [n, 8], a row per node in execution order,
 * (code, input 0, input 1, input 2, i0, i1, i2, 0), inputs naming earlier
 * rows (-1: none); "graph.attrs" F64 [n, 2] (f0, f1); "param.K" F64 (or
 * I32 for column maps) the constants. A node's value is its row. The codes
 * (mlff_graph_code) are the file's and stable; each maps to one op of
 * core/ops.h, whose semantics it has:
 *   INPUT i0 = role (mlff_graph_input_code), PARAM i0 = K,
 *   ADD (a, b), MUL (a, b), SCALE (x) f0, UNARY (x) i0 kind f0 f1,
 *   GATHER_COLS (x, map), SCATTER_ADD_COLS (x, map) i0 = cols,
 *   AFFINE_COLS (x, s[, t]), CONCAT_COLS (a, b), SLICE_COLS (x) i0 i1,
 *   SUM_COLS (x) f0, LINEAR (x, W, b) i0 groups, GATHER_ROWS (x, index),
 *   SCATTER_ADD_ROWS (x, index) into atoms (by a pair side) or systems (by
 *   system), NORM3 (x), COSINE_CUTOFF (x) f0 = rc, ENERGY (x): the
 *   energies [systems, 1] in eV, the last row and the sum to systems of its
 *   input (made in float64), FILL i0 = rows (0 atoms, 1 pairs, 2 systems)
 *   i1 = cols f0 = value, CELU (x) f0 = alpha.
 * Row indices come only from the inputs, each gathering from rows it is an
 * index of (pair sides: atoms; system: systems; species: a PARAM with a row
 * per element), so that a file cannot make an op read outside a tensor.
 */
#ifndef MLFF_MODELS_GRAPH_MODEL_H
#define MLFF_MODELS_GRAPH_MODEL_H

#include "family.h"

typedef enum mlff_graph_code {
    MLFF_GRAPH_INPUT = 0,
    MLFF_GRAPH_PARAM = 1,
    MLFF_GRAPH_ADD = 2,
    MLFF_GRAPH_MUL = 3,
    MLFF_GRAPH_SCALE = 4,
    MLFF_GRAPH_UNARY = 5,
    MLFF_GRAPH_GATHER_COLS = 6,
    MLFF_GRAPH_SCATTER_ADD_COLS = 7,
    MLFF_GRAPH_AFFINE_COLS = 8,
    MLFF_GRAPH_CONCAT_COLS = 9,
    MLFF_GRAPH_SLICE_COLS = 10,
    MLFF_GRAPH_SUM_COLS = 11,
    MLFF_GRAPH_LINEAR = 12,
    MLFF_GRAPH_GATHER_ROWS = 13,
    MLFF_GRAPH_SCATTER_ADD_ROWS = 14,
    MLFF_GRAPH_NORM3 = 15,
    MLFF_GRAPH_COSINE_CUTOFF = 16,
    MLFF_GRAPH_ENERGY = 17,
    MLFF_GRAPH_FILL = 18,
    MLFF_GRAPH_CELU = 19,
    MLFF_GRAPH_CODES
} mlff_graph_code;

typedef enum mlff_graph_input_code {
    MLFF_GRAPH_IN_POSITIONS = 0, /* [atoms, 3] */
    MLFF_GRAPH_IN_SPECIES = 1,   /* [atoms, 1] index of the element in the model's list */
    MLFF_GRAPH_IN_PAIR_I = 2,    /* [pairs, 1] the first atom of each pair */
    MLFF_GRAPH_IN_PAIR_J = 3,    /* [pairs, 1] the second */
    MLFF_GRAPH_IN_SHIFTS = 4,    /* [pairs, 3] r_ij = positions[j] - positions[i] + shift */
    MLFF_GRAPH_IN_SYSTEM = 5,    /* [atoms, 1] */
    MLFF_GRAPH_INPUTS
} mlff_graph_input_code;

#define MLFF_GRAPH_NODE_COLS 8
#define MLFF_GRAPH_MOST_NODES 100000
#define MLFF_GRAPH_MOST_CUTOFF 30.0
#define MLFF_GRAPH_MOST_COLS 65536 /* columns of any value: 3 x 512 features are 1536 */

extern const mlff_model_family mlff_family_graph;

#endif
