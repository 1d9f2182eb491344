/*
 * ANI models (ANI-1x, ANI-2x, ...) as operator graphs.
 *
 * What an ANI model file holds (written by the NeuroChem importer,
 * models/neurochem.c; read here; nothing else about ANI is hard-coded):
 *
 * metadata
 *   family          "ani"
 *   name            e.g. "ANI-2x"
 *   elements        element symbols in network order, space separated ("H C N O S F Cl")
 *   energy_unit     "hartree" (the networks' unit; the graph converts to eV)
 *   length_unit     "angstrom"
 *   ensemble_size   number of members, decimal
 *   source, license, provenance  free text
 * tensors (F64 unless said; [rows, cols])
 *   aev.radial.cutoff        [1, 1]  Rcr
 *   aev.radial.eta           [1, 1]  EtaR (the float32 value of the file, widened exactly)
 *   aev.radial.shift         [R, 1]  ShfR (float32 values, widened)
 *   aev.angular.cutoff       [1, 1]  Rca
 *   aev.angular.zeta         [1, 1]  Zeta (float32, widened)
 *   aev.angular.shift_theta  [Z, 1]  ShfZ (float32, widened)
 *   aev.angular.eta          [1, 1]  EtaA (float32, widened)
 *   aev.angular.shift_r      [Ra, 1] ShfA (float32, widened)
 *   self_energy              [n_elements, 1] Hartree, in element order
 *   network.<El>.<m>.<l>.weight      F32 [out, in]   member m, layer l (from 0)
 *   network.<El>.<m>.<l>.bias        F32 [out, 1]
 *   network.<El>.<m>.activation      I32 [layers, 1]  0 = identity, 1 = CELU
 *   network.<El>.<m>.activation_alpha F64 [layers, 1] CELU alpha (0 for identity)
 */
#ifndef MLFF_MODELS_ANI_H
#define MLFF_MODELS_ANI_H

#include "core/elements.h"
#include "core/graph.h"
#include "model_file.h"

enum { MLFF_ACTIVATION_IDENTITY = 0, MLFF_ACTIVATION_CELU = 1 };

/* How the element networks run (models/ani_networks.c): each element's on
 * the atoms of its element, every element in one op a layer (stacked), or
 * op by op, element after element (separate); or every element's on every
 * atom (merged: the fewest launches, n elements times the work). AUTO
 * leaves the choice to the caller's measurements (core/model_plans.c). */
typedef enum mlff_element_networks {
    MLFF_ELEMENT_NETWORKS_AUTO = 0,
    MLFF_ELEMENT_NETWORKS_STACKED,
    MLFF_ELEMENT_NETWORKS_MERGED,
    MLFF_ELEMENT_NETWORKS_SEPARATE
} mlff_element_networks;

/* Build the energy graph (eV per system) of an ANI model file for the
 * model's elements in `subset` (NULL: all of them). The graph's species
 * input and its element inputs number those elements from 0 in the model's
 * order (element e of the graph is the e-th element of the subset).
 * networks: how the element networks run. */
mlff_status mlff_ani_build_graph(const mlff_model_file *mf, const mlff_element_set *subset,
                                 mlff_element_networks networks, mlff_graph *g, mlff_error *err);

#endif
