/*
 * Pair vectors made by the AEV that reads them. Where launches cost the
 * host (OpenCL), a plan drops the PAIR_VECTORS nodes of an ANI AEV's two
 * lists and has the AEV's kernel write their outputs instead
 * (mlff_exec_node.makes_vectors): its work-group of an atom writes the
 * vectors of the pairs that atom is the center of, then reads them. Two
 * launches fewer an evaluation; the reverse pass reads the vectors as
 * before. The tuning record's pair_vectors=apart keeps the PAIR_VECTORS
 * nodes instead (mlff_graph.pair_vectors_apart), a work-item a pair.
 */
#ifndef MLFF_RUNTIME_VECTORS_IN_AEV_H
#define MLFF_RUNTIME_VECTORS_IN_AEV_H

#include "core/graph.h"

/* made_in[k] for every node k of g: the ANI_ANGULAR node that can make
 * node k's pair vectors, or -1. */
void mlff_vectors_made_in_aev(const mlff_graph *g, int *made_in);

/* The PAIR_VECTORS node of images (with the low parts of positions and
 * cells: graph.h) behind an AEV's input `input` (0, the angular list's
 * vectors; 6, the radial list's). */
const mlff_graph_node *mlff_aev_vectors_node(const mlff_graph *g, const mlff_graph_node *aev, int input);

#endif
